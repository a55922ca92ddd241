"""AccumulateGrad: the node that writes a leaf's ``.grad``, with post-accumulate-grad hooks."""

from __future__ import annotations

import sys

import numpy as np

from .._events import emit as _emit_event
from .._state import STATE
from .._strides import contiguous_strides, offset_in, storage_root, zero_strides_meant
from .._tensor import Tensor
from .._warnings import warn_once
from ..ops.aten_vec import as_caller
from .grad_layout import is_non_overlapping_and_dense, obeys_layout_contract
from .node import UINT64_MAX, Node, collect_hook_fns
from .node_meta import ONLY, meta_forms


class AccumulateGrad(Node):
    __slots__ = ("variable",)
    _name = "torch::autograd::AccumulateGrad"
    # Not Node's per-instance values: no next edges, and no sequence number of its own (PyTorch's AccumulateGrad
    # leaves it to the next operator's node; UINT64_MAX also makes the ready queue run it as soon as it is
    # ready). As class attributes they cost nothing to set on each of these nodes, which are made anew for
    # every graph that reaches a leaf (see edges.py).
    _edges = ()
    _seq = UINT64_MAX

    def __init__(self, variable) -> None:
        self.variable = variable
        self._in_meta = meta_forms(variable._data.shape, variable._data.dtype)[ONLY]

    @property
    def _tensor_pre_hooks(self):
        hooks = self.variable._hooks
        return {0: hooks} if hooks else None

    @property
    def _hooked(self) -> bool:
        # A leaf's tensor hooks live on the tensor, not in a dict of this node.
        return (bool(self.variable._hooks) or self._pre_hooks is not None or self._post_hooks is not None
                or self._retains_grad_hooks is not None)

    @_hooked.setter
    def _hooked(self, value: bool) -> None:
        pass  # derived from the hook dicts themselves

    def apply(self, grads):
        grad = grads[0]
        if grad is not None:
            accumulate_into(self.variable, grad)
            hooks = self.variable._post_acc_hooks
            if hooks:
                as_caller(self._run_post_acc_hooks, hooks)  # (the caller's NumPy state, set once for them all)
        return []

    def _run_post_acc_hooks(self, hooks) -> None:
        for fn in collect_hook_fns(hooks):
            if STATE.observed:
                _emit_event("hook", kind="post_accumulate", node=self, hook=fn, output_nr=None,
                            tensor=self.variable)
            result = fn(self.variable)
            if result is not None and result is not self.variable:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def runs_on_arrival(node) -> bool:
    """Whether the engine may run ``node`` as soon as its only gradient arrives, instead of queueing it: an
    AccumulateGrad with no hooks of any kind whose leaf has no ``.grad`` yet. That is exactly when the queue
    would run it (AccumulateGrad comes first in the ready queue), and running it calls no user code."""
    if node.__class__ is not AccumulateGrad:
        return False
    v = node.variable
    return (v._grad is None and not v._hooks and not v._post_acc_hooks and node._pre_hooks is None
            and node._post_hooks is None and node._retains_grad_hooks is None)


def adds_on_arrival(node, gd: np.ndarray) -> bool:
    """Whether the engine may run ``node`` as soon as its only gradient (array ``gd``) arrives where its leaf has a
    ``.grad`` already: an AccumulateGrad with no hooks of any kind, which adds ``gd`` in place by ``_add_plainly``
    (no cast, no operator, no layout warning: the ``.grad`` has the leaf's strides). As ``runs_on_arrival``, the
    queue would run it next, and running it calls no user code."""
    if node.__class__ is not AccumulateGrad:
        return False
    v = node.variable
    current = v._grad
    return (current is not None and not v._hooks and not v._post_acc_hooks and node._pre_hooks is None
            and node._post_hooks is None and node._retains_grad_hooks is None and "_grad_dtype" not in v.__dict__
            and gd.dtype is v._data.dtype and current._data.strides == v._data.strides
            and _adds_plainly(current, gd))


# Whether any leaf was ever given a ``grad_dtype`` (``Tensor.grad_dtype``'s setter says so): until then the engine
# need not look for leaves whose gradients it must cast.
grad_dtype_set = False


def note_grad_dtype() -> None:
    """Called when a leaf's ``grad_dtype`` is set: from now on the engine casts gradients into leaves as it hands
    them on (see engine.py)."""
    global grad_dtype_set
    grad_dtype_set = True


# References to the incoming gradient that the engine itself holds when AccumulateGrad runs: the
# engine's input buffer, ``apply``'s local, ``accumulate_into``'s argument and getrefcount's own argument.
_ENGINE_REFS = 4


def _functional_core():
    # Imported on first use (it imports the operator library, which imports autograd); a function-level
    # ``from .. import`` would cost about a microsecond on every accumulation.
    global _F
    if _F is None:
        from .. import _functional_core as F

        _F = F
    return _F


_F = None


def accumulate_into(variable, grad) -> None:
    """PyTorch's accumulateGrad: adopt the first gradient without copying when nobody else can see it,
    then add in place (or out of place when building a graph, so higher-order gradients see the sum)."""
    # (the operator library is looked up only off the common path: adopting a first gradient needs none of it)
    d = variable.__dict__
    if "_grad_dtype" in d:
        target = d["_grad_dtype"]
        if target is not None and grad._data.dtype != target.np:
            grad = _functional_core().to_dtype(grad, target)
    elif grad._data.dtype != variable._data.dtype:  # the tensor's own dtype, without building its torch.dtype
        grad = _functional_core().to_dtype(grad, variable.dtype)
    current = variable._grad
    if current is None:
        gd, vd = grad._data, variable._data
        # Like PyTorch, adopt the buffer when no user-visible reference to it exists, grad mode is off, and it is
        # laid out as the leaf is (the gradient layout contract). (Equal NumPy strides prove nothing for empty
        # arrays: an expanded gradient's zero strides read as the leaf's, and for an expanded leaf they are its own,
        # which a dense gradient must not share; ``_obeys`` tells them apart.)
        if (((gd.strides == vd.strides and gd.size and 0 not in gd.strides) or _obeys(gd, vd))
                and not STATE.grad_enabled
                and sys.getrefcount(grad) <= _ENGINE_REFS):
            variable._grad = _adopted(grad)
        else:
            variable._grad = _clone_obey_contract(grad, vd)
    elif not STATE.grad_enabled:
        if not _add_plainly(current, grad):
            _functional_core().add_inplace(current, grad)
        _check_layout(current, variable, "grad_layout_contract")
    else:
        variable._grad = current = _functional_core().add(current, grad)
        _check_layout(current, variable, "grad_layout_contract_of_sum")


def _adopted(grad: Tensor) -> Tensor:
    """What ``.grad`` becomes when AccumulateGrad adopts ``grad``: the tensor itself when it owns its memory; PyTorch's
    ``grad.detach()`` for a view or a tensor with a history (sharing its storage and version counter, as the view's
    base does). A bare NumPy alias of memory that others hold (an array a kernel passed through, where PyTorch's
    formula makes a fresh tensor) is copied, keeping its strides."""
    if grad._gfn is not None or grad._base is not None:
        alias = _functional_core().detach(grad)
        data = alias._data
        if data.__class__ is np.ndarray and not data.flags.writeable:
            alias._data = _writeable(data)
        return alias
    gd = grad._data
    if gd.base is None or _spans_private_buffer(gd):
        return grad
    return _functional_core().detach_copy(grad)


def _writeable(d: np.ndarray) -> np.ndarray:
    """A writeable alias of read-only ``d`` where its memory is writeable (else ``d``): an expand that broadcast
    nothing (a 0-d gradient's ``sum()`` backward), which NumPy leaves read-only and PyTorch writes like any view."""
    root = storage_root(d)
    if not (root.flags.writeable and root.flags.c_contiguous):
        return d
    return np.ndarray(d.shape, d.dtype, root, offset_in(root, d), d.strides)


def _obeys(g: np.ndarray, v: np.ndarray) -> bool:
    """obeys_layout_contract, in elements: a gradient cast to the leaf's ``grad_dtype`` has other byte strides. An
    empty array with no strides that a NumPy kernel wrote reads as contiguous, as ``Tensor.stride()`` reads it (a
    read-only one, or one marked so, an expanded gradient, keeps its zero strides, as PyTorch's expand gives them)."""
    if g.size == 0 and g.flags.writeable and not any(g.strides) and not zero_strides_meant(g):
        g = _contiguous_empty(g)
    if v.size == 0 and v.flags.writeable and not any(v.strides) and not zero_strides_meant(v):
        v = _contiguous_empty(v)
    if g.itemsize != v.itemsize:
        # (the leaf's layout over a one-element buffer of the gradient's dtype: only its strides and flags are read)
        strides = [st // v.itemsize * g.itemsize for st in v.strides]
        v = np.lib.stride_tricks.as_strided(np.empty(1, g.dtype), v.shape, strides, writeable=False)
    return obeys_layout_contract(g, v)


def _contiguous_empty(a: np.ndarray) -> np.ndarray:
    """Empty ``a`` with C-contiguous strides (NumPy gives its empty arrays zero strides)."""
    strides = [st * a.itemsize for st in contiguous_strides(a.shape)]
    return np.lib.stride_tricks.as_strided(np.empty(1, a.dtype), a.shape, strides, writeable=False)


def _clone_obey_contract(grad: Tensor, vd: np.ndarray) -> Tensor:
    """PyTorch's clone_obey_contract: for a dense leaf, ``new_empty_strided`` with the leaf's strides, then ``copy_``
    (version 1; CopyBackwards under grad mode); for any other, ``clone`` contiguous (version 0; CloneBackward0)."""
    F = _functional_core()
    if not is_non_overlapping_and_dense(vd):
        return F.clone(grad, memory_format=_contiguous()) if STATE.grad_enabled else F.detach_copy(grad, False)
    if STATE.grad_enabled:
        return F.copy_to_new(grad, vd)
    copy = F.detach_copy(grad, vd)
    copy._bump_version()  # (copy_'s)
    return copy


def _contiguous():
    from ..memory_format import contiguous_format

    return contiguous_format


def _check_layout(result: Tensor, variable: Tensor, site: str) -> None:
    """PyTorch's CHECK_RESULT after adding into an existing ``.grad``: a warning when the sum does not obey the
    gradient layout contract (a ``.grad`` the user set transposed, say), once per ``site`` (TORCH_WARN_ONCE: the
    in-place and the out-of-place sums each warn once)."""
    rd, vd = result._data, variable._data
    if rd.strides != vd.strides and rd.__class__ is np.ndarray and not _obeys(rd, vd):
        warn_once(site,
                  "grad and param do not obey the gradient layout contract. This is not an error, but may impair "
                  f"performance.\ngrad.sizes() = {list(rd.shape)}, strides() = {list(result.stride())}\n"
                  f"param.sizes() = {list(vd.shape)}, strides() = {list(variable.stride())}", UserWarning, stacklevel=2)


# Dtypes whose in-place NumPy add has ``add_``'s bits for certain: one correctly rounded IEEE addition per element,
# in NumPy as in PyTorch. (Half-precision and complex ones are left to the operator.)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _add_plainly(current: Tensor, grad: Tensor) -> bool:
    """``current.add_(grad)`` without the operator dispatch, where the operator would do nothing but add the arrays
    and bump the version: nothing special active (transform, forward AD, anomaly, inference mode, profiler,
    interceptor), no observer, no mutation-on-saved hook; a plain dense ``.grad`` (not a view, not requiring
    grad, not an inference tensor) and a gradient of the same float dtype and shape, not sharing its memory.
    Returns whether it added; otherwise the caller runs the operator (with its checks, errors and events)."""
    if not _adds_plainly(current, grad._data):
        return False
    cd = current._data
    np.add(cd, grad._data, out=cd)
    current._bump_version()
    return True


def _adds_plainly(current: Tensor, gd: np.ndarray) -> bool:
    """Whether ``_add_plainly`` adds gradient array ``gd`` into ``current`` (see there)."""
    if STATE.special or STATE.observed or STATE.before_write is not None:
        return False
    cd = current._data
    dt = cd.dtype
    if ((dt is not _F32 and dt is not _F64) or gd.dtype is not dt or gd.shape != cd.shape
            or current.__class__ is not Tensor or current._base is not None or current._rg or current._inference):
        return False
    flags = cd.flags
    if not (flags.forc and flags.writeable):
        return False  # (an expanded or otherwise overlapping .grad: the operator refuses it as PyTorch does)
    # Two arrays that own their memory cannot overlap; anything else is asked (conservatively) of NumPy.
    return gd is not cd and not ((cd.base is not None or gd.base is not None) and np.may_share_memory(cd, gd))


# ---- the engine's input buffer ----------------------------------------------------------------------------

# References to the buffered gradient while ``add_to_buffer`` decides: the buffer's slot, ``add_to_buffer``'s
# local, ``_sole_owner``'s argument and getrefcount's own; to its array: the tensor's and getrefcount's.
_BUFFER_REFS = 4
_ARRAY_REFS = 2


def add_to_buffer(buf: list, nr: int, grad: Tensor, view: bool = False) -> Tensor:
    """PyTorch's InputBuffer::accumulate for a second (third...) gradient of one input: ``old.add_(grad)`` when grad
    mode is off and the buffer holds the last reference to a plain dense ``old`` and to its storage, else
    ``old + grad``. (The engine has already dropped its other references, as PyTorch moves gradients on.) ``view``:
    ``old`` stands for a view in PyTorch (see the engine), never added into."""
    old = buf[nr]
    if STATE.grad_enabled or view or grad.__class__ is not Tensor or grad is old or not _sole_owner(old):
        return _functional_core().add(old, grad)
    if not _add_plainly(old, grad):
        _functional_core().add_inplace(old, grad)
    return old


def _sole_owner(t: Tensor) -> bool:
    """PyTorch's can_accumulate_inplace: a vanilla tensor (no transform's wrapper, no dispatch mode) that is not a
    view, whose elements fill its memory exactly once, held by nobody but the buffer (use_count 1), and whose
    storage nobody else holds: no view or detached alias shares its version counter or its array. A NumPy view
    spanning the whole of a buffer nobody else holds (``empty_strided``'s permuted layout, a kernel's reinterpreted
    bits) owns it too: where PyTorch would hold a view there (TBackward0, sum_to), the engine says so itself."""
    # (an active op interceptor stands for PyTorch's dispatch modes, under which every tensor is "subclass-like")
    if (t.__class__ is not Tensor or t._base is not None or STATE.stack or STATE.op_interceptors
            or sys.getrefcount(t) > _BUFFER_REFS):
        return False
    vc = t._vc
    if vc is not None and sys.getrefcount(vc) > _ARRAY_REFS + 1:  # (+1: the local ``vc``)
        return False
    d = t._data
    if d.__class__ is not np.ndarray or sys.getrefcount(d) > _ARRAY_REFS + 1:  # (+1: the local ``d``)
        return False
    return (d.base is None or _spans_private_buffer(d)) and is_non_overlapping_and_dense(d)


def _spans_private_buffer(d: np.ndarray) -> bool:
    """Whether NumPy view ``d`` spans the whole of a buffer that nothing but ``d`` holds (``empty_strided``'s
    permuted layout, a kernel's reinterpreted bits): as good as an array owning its memory."""
    root = d.base
    return (root.__class__ is np.ndarray and root.base is None and root.nbytes == d.nbytes
            and sys.getrefcount(root) <= _ARRAY_REFS + 1)  # (+1: the local ``root``)


AccumulateGrad.__module__ = "builtins"  # (torch's C++ node: <class 'AccumulateGrad'>)
