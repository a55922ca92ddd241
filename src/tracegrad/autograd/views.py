"""Views and in-place operations in eager autograd (PyTorch's view tracking and CopySlices).

A view remembers its root ``_base``, shares the base's version counter, and keeps the chain of view
operators that produced it (``_view_replay``). As in PyTorch, the view's place in the base is read in storage
coordinates (its sizes, strides and storage offset), which stay right when the base itself is reshaped in
place (``t_``, ``as_strided_``...) after the view was made:

* ``CopySlices``: an in-place op on a view rewrites the base's history; the gradient for the base is the
  incoming gradient laid out as the base, with an as_strided slice of it replaced by the in-place node's
  gradient;
* regenerating a stale view's ``grad_fn`` after its base changed: the node of an as_strided of the base
  (``AsStridedBackward0``), or the view's ops replayed on the base for a view made under
  ``_force_original_view_tracking`` or one that reinterprets the dtype.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .._state import STATE, next_sequence_nr
from .._strides import element_strides, empty_strided, storage_offset_of
from .._tensor import Tensor, _wrap
from .edges import gradient_edge
from .node import Node, forward_name, set_retains_grad_hook
from .saved import FREED_MESSAGE

_ndarray = np.ndarray


_OPS: SimpleNamespace | None = None


def _ops() -> SimpleNamespace:
    """The operators CopySlices and the regenerated views run (``ops`` is a layer above: bound at first use)."""
    global _OPS
    if _OPS is None:
        from ..ops import creation, pointwise
        from ..ops.views import as_strided

        _OPS = SimpleNamespace(copy_=creation.copy_, clone=creation.clone, zero_=creation.zero_,
                               as_strided=as_strided, copy_into=pointwise.copy_into)
    return _OPS

# Creation metadata of views, as in PyTorch: where the view came from decides whether an in-place
# operation on it is allowed.
# IN_CUSTOM_FUNCTION: returned by a custom Function (in-place would bypass its backward).
DEFAULT, NO_GRAD_MODE, MULTI_OUTPUT_NODE, INFERENCE_MODE, IN_CUSTOM_FUNCTION = 0, 1, 2, 3, 4


def make_view(out: Tensor, src: Tensor, op, args: tuple, index: int) -> None:
    """Mark ``out`` as the ``index``-th output of view op ``op`` applied to ``src``."""
    if src._inference:
        out._inference = True  # as PyTorch: a view of an inference tensor is a plain inference tensor
        return
    base = src._base if src._base is not None else src
    vc = src._vc
    if vc is None:
        vc = src._vc = [0]
    out._vc = vc
    out._base = base
    out._view_replay = (src._view_replay or ()) + ((op, args[1:], index),)
    out._view_version = vc[0]
    if _ViewReplay.enabled or src._view_fn:
        out._view_fn = True  # PyTorch keeps a view_fn only for views made under view replay (or views of them)
    fw_base = src._fw_base
    if fw_base is not None:  # (forward AD: the view's tangent is a view of its forward root's, not its base's)
        out._fw_base = src if fw_base is True else fw_base
        # (counted when the view is made: the root's own chain changes when it is reshaped in place)
        out._fw_chain_start = len(src._view_replay or ()) if fw_base is True else src._fw_chain_start
    # PyTorch's creation meta, propagated from a view's view: a special mode of the new view wins, except
    # over an inference-mode one.
    meta = src._creation_meta
    if STATE.inference:
        out.__dict__.pop("_inference", None)  # a view of a normal tensor is not an inference tensor
        meta = INFERENCE_MODE
    elif not STATE.grad_enabled:
        if meta != INFERENCE_MODE:
            meta = NO_GRAD_MODE
    elif op.multi_output_view and meta != INFERENCE_MODE:
        meta = MULTI_OUTPUT_NODE
    if meta:
        out._creation_meta = meta


# ---- checks --------------------------------------------------------------------------------------------

LEAF_INPLACE_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."


def refuse_inference_update(t: Tensor) -> None:
    """PyTorch's refusal of an in-place write (``resize_`` and ``set_`` too, even to the same size) into an inference
    tensor outside inference mode."""
    if t._inference and not STATE.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                           "clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")


def bump_after_write(t: Tensor) -> None:
    """The version bump after a write into ``t`` (an ``out=`` tensor's): torch's bump refuses an inference tensor
    outside inference mode, so the values are written before the refusal."""
    if t._inference:
        refuse_inference_update(t)
    t._bump_version()


def autograd_kernel_runs(args, tensor_idx: tuple) -> bool:
    """Whether torch's autograd kernel (its leaf and view checks, its recording) runs for an op on ``args``: an
    inference tensor has no Autograd dispatch key, so the kernel runs only where another tensor argument (a list's
    included) is a normal tensor, a number at a ``Tensor`` parameter among them (Python's binding wraps it in a
    normal tensor: ``inference.add_(1)`` is checked, ``inference.fill_(1)`` goes straight to the write, whose
    version bump refuses)."""
    for i, a in enumerate(args):
        if a.__class__ is list or a.__class__ is tuple:
            if any(isinstance(t, Tensor) and not t._inference for t in a):
                return True
        elif isinstance(a, Tensor):
            if not a._inference:
                return True
        elif a is not None and i in tensor_idx:
            return True
    return False


def refuse_unrecorded_inplace_on_leaf(t: Tensor) -> None:
    """PyTorch's refusal of an in-place write autograd records nothing for (``set_``, ``embedding_renorm_``) into a
    leaf that requires grad, while grad mode is on."""
    if STATE.grad_enabled and t._rg and t._gfn is None and t._base is None:
        raise RuntimeError(LEAF_INPLACE_ERROR)


def check_inplace(t: Tensor, will_record: bool) -> bool:
    """PyTorch's check_inplace (called with grad mode on), in PyTorch's order: leaf errors, then (for views)
    creation-meta errors, then the view-of-leaf error. Only an in-place op that will be recorded can break
    autograd. Returns whether it is recorded: a view requires grad through its base, as in PyTorch, even
    when it was made in no_grad mode or before its base required grad."""
    base = t._base
    if base is None:
        if t._rg and t._gfn is None:
            raise RuntimeError(LEAF_INPLACE_ERROR)
        return will_record
    if not (will_record or base._rg):
        return False
    refresh_view_grad_fn(t)
    check_view_rebase(t)
    return True


_REBASE_SUFFIX = {
    MULTI_OUTPUT_NODE: (
        " This view is the output of a function that returns multiple views. Such functions do not allow "
        "the output views to be modified inplace. You should replace the inplace operation by an "
        "out-of-place one."),
    NO_GRAD_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
        "by moving both the view and the inplace either both inside the no_grad block (if you don't want "
        "the inplace to be tracked) or both outside (if you want the inplace to be tracked)."),
    INFERENCE_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
        "by moving both the view and the inplace either both inside the inference_mode block (if you don't "
        "want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."),
    IN_CUSTOM_FUNCTION: (
        " This view was created inside a custom Function (or because an input was returned as-is) and the "
        "autograd logic to handle view+inplace would override the custom backward associated with the "
        "custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
        "cloning the output of the custom Function."),
}


def view_rebase_error(var: Tensor, indirect: bool = False) -> str | None:
    """PyTorch's ``handle_view_on_rebase``: why an in-place op may not rewrite this view's history, or None.

    The first sentence depends on the view's ``grad_fn`` (without one, the view reads as made in no_grad
    mode) and on whether the view itself (or its base or another view, ``indirect``) is modified; the rest
    on its creation meta."""
    meta = var._creation_meta
    if meta == DEFAULT or (meta == INFERENCE_MODE and STATE.inference):
        return None
    modified = "its base or another view of its base has been" if indirect else "is being"
    fn = var._gfn
    name = forward_name(fn) if fn is not None else None
    if meta in (INFERENCE_MODE, NO_GRAD_MODE) or fn is None:
        # A view of a view made in a special mode, or a view without grad_fn (so made in no_grad mode).
        prefix = ("A view was created in" if fn is None
                  else f"Output {var._output_nr} of {name} is a view of a view which was created in")
        if meta == INFERENCE_MODE:
            msg = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"Output {var._output_nr} of {name} is a view and {modified} modified inplace."
    return msg + _REBASE_SUFFIX.get(meta, "")


def check_view_rebase(var: Tensor) -> None:
    """PyTorch's checks before rewriting a view's history: creation-meta errors, then view-of-leaf."""
    message = view_rebase_error(var)
    if message is not None:
        raise RuntimeError(message)
    if (var._rg or var._base._rg) and var._base._gfn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                           "operation.")



# ---- rebasing history ------------------------------------------------------------------------------------

def _move_retains_grad_hook(t: Tensor, old_fn, old_nr: int, new_fn: Node, new_nr: int = 0) -> None:
    if not t._retains_grad or old_fn is None or new_fn is old_fn:
        return
    hooks = old_fn._retains_grad_hooks
    fn = hooks.pop(old_nr, None) if hooks else None
    if fn is not None:
        set_retains_grad_hook(new_fn, new_nr, fn)


def rebase_history(target: Tensor, node: Node) -> None:
    """After an in-place op on a non-view: the tensor's history is now ``node``."""
    old_fn, old_nr = target._gfn, target._output_nr
    target._gfn = node
    target._output_nr = 0
    target._rg = True
    _move_retains_grad_hook(target, old_fn, old_nr, node)


class CopySlices(Node):
    """Gradient of an in-place op applied to a view, seen from the view's base.

    Written as PyTorch's ``CopySlices::apply`` with dispatched ops, so that under ``create_graph`` the
    gradient's own graph has PyTorch's shape: a copy of the incoming gradient laid out as the base, whose
    view's slice (an as_strided of it, in storage coordinates) is replaced (in place, hence a CopySlices
    again) by the in-place node's gradient of a clone of that slice.
    """

    __slots__ = ("fn", "_geometry", "_replay", "_base_geometry")
    _name = "torch::autograd::CopySlices"

    def __init__(self, base: Tensor, view: Tensor, fn: Node, geometry: tuple, replay: bool) -> None:
        """``geometry``: the view's ``view_geometry``; ``replay``: its ``replays_views`` (both read once, by the
        caller, for this node and the view's regenerated one)."""
        self._seq = next_sequence_nr()  # (Node.__init__'s one other field; the edges and metadata are set below)
        self.fn = fn
        # PyTorch uses as_strided when it can, else replays the view ops (its view_fn).
        self._replay = view._view_replay if replay else None
        # Storage coordinates, as PyTorch's: they stay right after the base itself was reshaped in place
        # (``t_``, ``as_strided_``...), which the view's recorded ops know nothing about.
        sizes, strides, offset = geometry
        base_data = base._data
        self._geometry = (sizes, strides, offset - storage_offset_of(base_data))
        self._base_geometry = (tuple(base_data.shape), element_strides(base_data))
        self._edges = (gradient_edge(base),) + tuple(fn._edges[1:])
        self._in_meta = ((base_data.shape, base_data.dtype),) + tuple(fn._in_meta[1:])

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return [None] * len(self._edges)
        if self.fn is None:
            raise RuntimeError(FREED_MESSAGE)
        if not (STATE.grad_enabled or STATE.special) and STATE.before_write is None:
            arrays = self._result_arrays(grad._data)
            if arrays is not None:
                return self._apply_on_arrays(*arrays)
        return self._apply_dispatched(grad)

    def _apply_dispatched(self, grad: Tensor) -> list:
        ops = _ops()
        # grad.new_empty_strided(base.sizes(), base.strides()).copy_(grad)
        result = ops.copy_(_wrap(empty_strided(*self._base_geometry, grad._data.dtype)), grad)
        if self._replay is not None:
            grad_slice = replay_views(result, self._replay)
        else:
            grad_slice = ops.as_strided(result, *self._geometry)
        res = list(self.fn.apply([ops.clone(grad_slice)]))
        inner = res[0]
        if inner is None:
            ops.zero_(grad_slice)
        else:
            ops.copy_(grad_slice, inner)
        return [result] + res[1:]

    # A plain backward (no graph of the gradient, nothing special, no write hook) runs the same steps on the
    # arrays, with the same kernels: the dispatched copy_/as_strided/clone/copy_ cost some 5 us each, most of a
    # small CopySlices' backward (and without a graph they tell an observer of nodes nothing). What the
    # operators would refuse or do otherwise (a replayed view, a written-to slice some of whose elements share
    # memory, an in-place node's gradient of another shape or dtype) takes the operators, which word it.

    def _result_arrays(self, gd) -> tuple | None:
        """The gradient copied into the base's layout and the view's slice of that copy, as arrays; None where
        the dispatched path must run (decided before any user code, the in-place node's backward, runs)."""
        shape, strides = self._base_geometry
        sizes, slice_strides, offset = self._geometry
        if self._replay is not None or gd.__class__ is not _ndarray or gd.shape != shape or 0 in sizes:
            return None
        for st, n in zip(slice_strides, sizes):
            if st < 0 or st == 0 and n > 1:
                return None  # (as_strided refuses a negative stride, copy_ to write where elements share memory)
        out = empty_strided(shape, strides, gd.dtype)
        item = gd.itemsize
        try:  # (as_strided's kernel on ``out``, whose base is a storage of its own: its bounds checked by NumPy)
            piece = _ndarray(sizes, gd.dtype, out.base, offset * item, tuple([st * item for st in slice_strides]))
        except (TypeError, ValueError):
            return None
        _ops().copy_into(out, gd)
        return out, piece

    def _apply_on_arrays(self, out, piece) -> list:
        result = _wrap(out)
        result._bump_version()  # (the gradient copied in, as copy_ counts it; the slice would share the counter)
        ops = _ops()
        res = list(self.fn.apply([_wrap(ops.clone.kernel(piece))]))
        inner = res[0]
        if inner is None:
            piece[...] = 0  # (zero_'s kernel)
            result._bump_version()
        elif inner.__class__ is Tensor and inner._data.__class__ is _ndarray and inner._data.shape == piece.shape \
                and inner._data.dtype == piece.dtype:
            ops.copy_into(piece, inner._data)
            result._bump_version()
        else:  # (its broadcast, cast or refusal, as the operator does them; it counts the write itself)
            ops.copy_(ops.as_strided(result, *self._geometry), inner)
        return [result] + res[1:]

    def release_variables(self) -> None:
        # As PyTorch, drop the in-place node rather than its saved values: a double-backward graph built
        # through this node's gradient may still run that node directly.
        self.fn = None

    @property
    def next_functions(self) -> tuple:
        return self._edges


def changes_dtype(view: Tensor) -> bool:
    """Whether a view's chain has an op that reinterprets the dtype (``view_as_real``...): no strides over
    the base's elements describe it."""
    return any(getattr(op, "view_changes_dtype", False) for op, _, _ in view._view_replay or ())


def replays_views(view: Tensor) -> bool:
    """Whether the view's history is rebuilt by replaying its view ops (PyTorch's view_fn: a view made under
    ``_force_original_view_tracking``, or one reinterpreting the dtype), rather than as an as_strided of its base."""
    return bool(view._view_fn) or changes_dtype(view)


def view_geometry(view: Tensor) -> tuple:
    """The view's place in its storage, as PyTorch's TensorGeometry: (sizes, strides, storage offset). Read once
    per in-place write, for both its CopySlices and the view's regenerated node (the offset is the costly part)."""
    data = view._data
    return tuple(data.shape), element_strides(data), storage_offset_of(data)


def replay_views(base: Tensor, chain: tuple) -> Tensor:
    """Apply a view chain (``Tensor._view_replay``) to another tensor of the base's shape."""
    out = base
    for op, rest, k in chain:
        res = op(out, *rest)
        out = res[k] if isinstance(res, (tuple, list)) else res
    return out


def _as_strided_node(base: Tensor, view: Tensor, geometry: tuple | None = None) -> Node:
    """PyTorch's regenerated ``grad_fn`` of a view whose base changed: the node of ``base.as_strided(view's
    sizes, strides, storage offset)`` (AsStridedBackward0, whose backward works in storage coordinates), made
    without running the op. ``geometry``: the view's ``view_geometry``, where the caller has it."""
    node = _ops().as_strided._new_node((base, *(geometry if geometry is not None else view_geometry(view))))
    node._out_meta = ((view._data.shape, view._data.dtype),)
    return node


def record_inplace_on_view(op, args: tuple, target: Tensor, node: Node) -> None:
    """``target`` is a view that ``node`` (op's backward, first edge = the view's old history) just wrote."""
    base = target._base
    replay = replays_views(target)
    geometry = view_geometry(target)
    copy_slices = CopySlices(base, target, node, geometry, replay)
    old_fn, old_nr = base._gfn, base._output_nr
    base._gfn = copy_slices
    base._output_nr = 0
    base._rg = True
    _move_retains_grad_hook(base, old_fn, old_nr, copy_slices)
    old_view_fn, old_view_nr = target._gfn, target._output_nr
    target._rg = True
    # The view's own grad_fn is regenerated from the base at once, as PyTorch's ``self.grad_fn()`` there.
    regenerate_view_grad_fn(target, geometry, replay)
    _move_retains_grad_hook(target, old_view_fn, old_view_nr, target._gfn)


class _ViewReplay:
    """``autograd._force_original_view_tracking``: regenerate views by replaying their view ops."""

    enabled = False


def is_view_replay_enabled() -> bool:
    return _ViewReplay.enabled


class _force_original_view_tracking:
    def __init__(self, mode: bool) -> None:
        self.prev = _ViewReplay.enabled
        _ViewReplay.enabled = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _ViewReplay.enabled = self.prev


def _replayed_node(base: Tensor, view: Tensor) -> tuple:
    """The view's history rebuilt by re-running its view ops on the base (recording their nodes), as
    ``(node, output_nr)``."""
    prev = STATE.grad_enabled
    STATE.grad_enabled = True
    try:
        out = replay_views(base, view._view_replay)
    finally:
        STATE.grad_enabled = prev
    return out._gfn, out._output_nr


def regenerate_view_grad_fn(view: Tensor, geometry: tuple | None = None, replay: bool | None = None) -> None:
    """``geometry`` and ``replay``: the view's ``view_geometry`` and ``replays_views``, where the caller has them."""
    base = view._base
    view._view_version = view._vc[0]
    if not (base._rg or view._rg):
        return
    old_fn, old_nr = view._gfn, view._output_nr
    if replay is None:
        replay = replays_views(view)
    node, nr = _replayed_node(base, view) if replay else (_as_strided_node(base, view, geometry), 0)
    view._gfn = node
    view._output_nr = nr
    view._rg = True
    _move_retains_grad_hook(view, old_fn, old_nr, node, nr)


def refresh_view_grad_fn(view: Tensor) -> None:
    """Regenerate a view's ``grad_fn`` if its base was modified in place since it was made (PyTorch's
    ``VariableHooks::grad_fn``); a view with a special creation meta may not be regenerated."""
    vc = view._vc
    stale = vc is not None and vc[0] != view._view_version
    # A view made before its base required grad (``requires_grad_()`` on the base) requires grad through it.
    orphan = not view._rg and view._base._rg and view._creation_meta == DEFAULT
    if not stale and not orphan:
        return
    if view._gfn is None and not view._base._rg:
        return
    message = view_rebase_error(view, indirect=True)
    if message is not None:
        raise RuntimeError(message)
    regenerate_view_grad_fn(view)
