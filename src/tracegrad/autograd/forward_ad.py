"""``torch.autograd.forward_ad``: dual tensors and forward-mode AD (PyTorch's single dual level).

A tangent lives in ``Tensor._fw_grads`` (a dict ``level -> tangent``). While a level is active,
``STATE.fw_grad_levels`` is non-empty and every operator call goes through :func:`eager_with_tangents`,
which runs the operator and then computes its outputs' tangents:

* an operator with a ``jvp`` rule uses it: ``jvp(args, outs, tangents) -> tangent or tuple``, where
  ``args`` is the full bound argument tuple, ``outs`` the output tensors and ``tangents`` has one entry per
  differentiable input (flattened like the backward edges, None where the input has no tangent). The
  rule returns one tangent per output tensor (None: the output gets no tangent), written in dispatched
  tracegrad ops so that it records a graph when the primals or tangents require grad. A returned tangent
  may alias an input tangent (``add``'s ``t_self``), have a broadcastable shape (it is expanded and
  materialised) or another float dtype (it is cast). For an in-place operator ``args[0]`` is ``self``'s
  value *before* the write (another argument that is the same tensor: its value after, as PyTorch's formulas
  read it) and ``outs[0]`` its value after, so one rule serves ``op`` and ``op_``. Rules run with tangent
  propagation switched off.
  Common operators have one (no double backward per call), and so do operators whose VJP is
  deliberately not the adjoint of their derivative (``embedding`` zeroes the padding row's gradient,
  but its forward tangent is the looked-up tangent rows) or where PyTorch has no formula
  (``scatter_reduce`` with ``reduce="prod"`` gives no tangent);
* a view operator applies itself to the tangent of its input (so the tangent of a view is a view);
* any other operator derives its JVP from its VJP by the double-vjp trick: the VJP is linear in the
  cotangent ``u``, so ``d/du <vjp(u), t>`` is ``J t``. This is right for every operator whose VJP is the
  adjoint of its derivative, because VJP rules are written in dispatched (differentiable) operators.

Outside a level nothing is installed: the eager fast path pays nothing. Until ``ops/registry.py`` calls
:func:`eager_with_tangents` itself (see ``_REGISTRY_HOOK``), entering a level swaps ``OpDef._eager`` for a
wrapper and leaving it restores the original.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any, NamedTuple

import numpy as np

from .._state import STATE
from .._strides import element_strides, offset_in, storage_extent
from .._tensor import Tensor, _new
from ..backend.dtypes import is_differentiable_np
from ..ops._jvp import recording
from . import tangent_dtypes, tangent_formulas
from .grad_mode import _DecoratorContextManager
from .node import Node

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "dual_level"]

_current_level = -1

# Tensors that received a tangent at the active level, so that leaving the level can drop them.
_owners: list = []

_NOT_IMPLEMENTED = (
    "Trying to use forward AD with {} that does not support it because it has not been implemented yet.\n"
    "Please file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
    "its implementation or submit a PR adding the implementation to derivatives.yaml"
)

# The words of PyTorch's generated check for an in-place operator (or set_) with no forward formula: shorter.
_NO_INPLACE_FORMULA = (
    "Trying to use forward AD with {} that does not support it because it has not been implemented yet.\n"
    "Please file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
    "its implementation."
)
# In-place operators whose functional form has a forward formula while they have none: their generated code writes,
# then refuses an input with a tangent.
_INPLACE_WITHOUT_FORMULA = frozenset({"acosh_", "asinh_", "atanh_", "igamma_", "igammac_", "index_reduce_",
                                      "rrelu_with_noise_"})


def not_implemented_jvp(name: str):
    """The ``jvp`` of an operator PyTorch has no forward-mode formula for: PyTorch's error (instead of the
    double-vjp fallback, which would fail further in with another message). A functional operator declared with it
    refuses before its kernel runs, as PyTorch's generated check does (its ``refusal``, which ``defop`` reads)."""

    def jvp(args, outs, tangents):
        raise NotImplementedError(_NOT_IMPLEMENTED.format(name))

    jvp.refusal = unformulated_refusal(name)
    return jvp


# ---- levels -----------------------------------------------------------------------------------------------


def enter_dual_level() -> int:
    """Enter a new forward grad level (only one may exist at a time) and make it the current one."""
    global _current_level
    if STATE.fw_grad_levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    new_level = 0
    if new_level != _current_level + 1:
        raise RuntimeError("Entering a new forward AD level but the current level is not valid. Make sure "
                           "you did not modify it directly.")
    STATE.fw_grad_levels.append(new_level)
    STATE.refresh()
    _install()
    _current_level = new_level
    return new_level


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the current level, dropping every tangent made in it."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    if level < 0:  # (PyTorch's _exit_dual_level binding; the current level stays as it was)
        raise RuntimeError("Dual level must be a positive number.")
    _drop_tangents(level)
    if STATE.fw_grad_levels and STATE.fw_grad_levels[-1] == level:
        STATE.fw_grad_levels.pop()
        STATE.refresh()
    _uninstall()
    _current_level = level - 1


class dual_level(_DecoratorContextManager):
    """Context manager (and decorator) in which dual tensors can be made and tangents propagate."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def _drop_tangents(level: int) -> None:
    for ref in _owners:
        t = ref()
        if t is None:
            continue
        grads = t.__dict__.get("_fw_grads")
        if grads is not None:
            grads.pop(level, None)
            if not grads:
                del t.__dict__["_fw_grads"]
    _owners.clear()


# ---- tangent storage --------------------------------------------------------------------------------------


def forward_base(t: Tensor) -> tuple:
    """``(base, view ops)`` whose tangent ``t``'s tangent is a view of, or ``(None, ())``. PyTorch keeps a forward
    view base apart from the backward one: unpack_dual's primal and make_dual's result are views of their input
    for backward but forward roots (``_fw_base`` True), and a view of one takes its tangent from it."""
    fw_base = t._fw_base
    if fw_base is True:
        return None, ()
    if fw_base is not None:
        return fw_base, t._view_replay[t._fw_chain_start:]
    if t._base is not None and t._view_replay:
        return t._base, t._view_replay
    return None, ()


def get_tangent(t: Tensor, level: int) -> Tensor | None:
    grads = t._fw_grads
    tangent = grads.get(level) if grads else None
    if tangent is None and t._base is not None:
        # As in PyTorch, a view's tangent is the same view of its base's tangent (the base may have gained one
        # after the view was made, e.g. by an in-place operation on another view)
        base, chain = forward_base(t)
        base_grads = base._fw_grads if base is not None else None
        base_tangent = base_grads.get(level) if base_grads else None
        if base_tangent is not None:
            tangent = _view_of(base_tangent, t, chain)
            set_tangent(t, tangent, level)
    return tangent


def _view_of(base_tangent: Tensor, view: Tensor, chain: tuple) -> Tensor:
    """``view``'s tangent as PyTorch's ``fw_grad`` makes it: the view's own sizes, strides and storage offset over
    the base tangent's storage (which has the base's layout, see :func:`conformed`), so it stays right after the
    base was reshaped in place (``t_``, ``as_strided_``...); the view ops replayed only for a view that keeps its
    view_fn (made under view replay, or reinterpreting the dtype)."""
    from ..ops.views import as_strided
    from .grad_mode import no_grad
    from .views import changes_dtype, replay_views

    with fw_disabled(), no_grad():
        if view._view_fn or changes_dtype(view):
            return replay_views(base_tangent, chain)
        return as_strided(base_tangent, tuple(view._data.shape), view.stride(), view.storage_offset())


def set_tangent(t: Tensor, tangent: Tensor | None, level: int) -> None:
    grads = t.__dict__.get("_fw_grads")
    if tangent is None:
        if grads:
            grads.pop(level, None)
        return
    if grads is None:
        grads = t.__dict__["_fw_grads"] = {}
        _owners.append(weakref.ref(t))
    grads[level] = tangent


def _storage_place(a: np.ndarray) -> tuple:
    """``(storage offset, storage size)`` of an array, in elements of its dtype, as a tensor's storage reads them."""
    owner = a
    # (through every owner that exposes an array interface: as_strided's results hang off a DummyArray)
    while hasattr(getattr(owner, "base", None), "__array_interface__"):
        owner = owner.base
    item = max(a.itemsize, 1)
    return offset_in(owner, a) // item, np.asarray(owner).nbytes // item


def same_meta(a: np.ndarray, b: np.ndarray) -> bool:
    """PyTorch's ``has_same_meta``: same sizes, strides (of dims longer than 1), storage offset and storage size."""
    if a.shape != b.shape:
        return False
    sa, sb = element_strides(a), element_strides(b)
    if any(x != y and n > 1 for x, y, n in zip(sa, sb, a.shape)):
        return False
    return _storage_place(a) == _storage_place(b)


def conformed(tangent: Tensor, primal: Tensor) -> Tensor:
    """The tangent PyTorch's ``set_fw_grad`` stores: ``tangent`` itself where it has the primal's layout, else a
    copy of it into zeros laid out as the primal over a storage as large as the primal's
    (``_new_zeros_with_same_feature_meta``), so that a view's tangent can be read at the view's storage place."""
    if same_meta(tangent._data, primal._data):
        return tangent
    from .._tensor import _wrap
    from ..ops import creation

    zeros = _wrap(zeros_with_layout_of(primal._data, tangent._data.dtype))
    with fw_disabled():
        return creation.copy_(zeros, tangent)


def zeros_with_layout_of(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Zeros of ``dtype`` with ``a``'s sizes, strides and storage offset, over a zero storage of ``a``'s size."""
    offset, size = _storage_place(a)
    dtype = np.dtype(dtype)
    storage = np.zeros(max(size, storage_extent(a.shape, element_strides(a), offset)), dtype)
    strides = tuple(st * dtype.itemsize for st in element_strides(a))
    return np.ndarray(a.shape, dtype, buffer=storage, offset=offset * dtype.itemsize, strides=strides)


def _size_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def check_tangent_size(t: Tensor, tangent: Tensor) -> None:
    if tangent._data.shape != t._data.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                           "original Tensor, this is not supported. Tensor is of size "
                           f"{_size_str(t._data.shape)} while the given forward gradient is of size "
                           f"{_size_str(tangent._data.shape)}.")


@contextlib.contextmanager
def fw_disabled():
    """Run the body without tangent propagation (custom Function forward/jvp, internal JVP computations)."""
    levels = STATE.fw_grad_levels
    STATE.fw_grad_levels = []
    try:
        yield
    finally:
        STATE.fw_grad_levels = levels


def current_level() -> int | None:
    """The active level, or None when no level exists (or tangents are switched off)."""
    levels = STATE.fw_grad_levels
    return levels[-1] if levels else None


# ---- public API -------------------------------------------------------------------------------------------


class UnpackedDualTensor(NamedTuple):
    """``(primal, tangent)`` as returned by :func:`unpack_dual`."""

    primal: Tensor
    tangent: Tensor | None


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A new tensor aliasing ``tensor`` (differentiable for backward) that carries ``tangent`` as-is."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    dual = _alias(tensor)
    if not (_reaches_autograd_of(tensor) or _reaches_autograd_of(tangent)):
        return dual  # (no autograd kernel: PyTorch's _make_dual only aliases, with no tangent and no check)
    if get_tangent(tensor, level) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {level} is not supported.")
    _check_level(level, "_make_dual")
    if get_tangent(tangent, level) is not None:
        raise _nested_tangent_error(level)
    check_tangent_size(tensor, tangent)
    set_tangent(dual, conformed(tangent, dual), level)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``: the primal is a view of ``tensor`` without tangent; the tangent is as stored."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        from .._arg_parser import tp_name

        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not {tp_name(tensor)}")
    if STATE.inference:  # (forward grad mode is off: no tangent reads, and _fw_primal runs below autograd)
        return UnpackedDualTensor(_alias(tensor), None)
    if not tensor._inference:
        _check_level(level, "_fw_primal")
    tangent = get_tangent(tensor, level)
    primal = _alias(tensor)
    if primal._gfn is not None and primal._base is not None:
        primal._gfn = _identity_of(primal._gfn)
    return UnpackedDualTensor(primal, tangent)


def has_tangent(t: Tensor) -> bool:
    """PyTorch's ``isFwGradDefined`` of an autograd kernel's argument: ``t`` has a tangent at the level (read as a
    view's from its base), outside inference mode, where forward grad mode is off."""
    if not STATE.fw_grad_levels or STATE.inference or not isinstance(t, Tensor):
        return False
    return get_tangent(t, STATE.fw_grad_levels[-1]) is not None


def refuse_dual_argument(name: str, t) -> None:
    """Inside a forward rule (tangents switched off): PyTorch's refusal where its formula passes the tensor ``t``
    itself, not its primal, to the operator ``name``, which has no forward formula, and ``t`` has a tangent."""
    if _current_level >= 0 and isinstance(t, Tensor) and get_tangent(t, _current_level) is not None:
        raise NotImplementedError(_NOT_IMPLEMENTED.format(name))


def _nested_tangent_error(level: int) -> RuntimeError:
    return RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same level{level} is "
                        "not supported.")


def refuse_dual_operands(tensors) -> None:
    """Inside a forward rule (tangents switched off): where PyTorch's formula reads an operand itself, not its primal
    (binary_cross_entropy's ``weight``), and that operand has a tangent, the tangent PyTorch computes has one of its
    own, and setting it is refused."""
    if _current_level >= 0 and any(isinstance(t, Tensor) and get_tangent(t, _current_level) is not None
                                   for t in tensors):
        raise _nested_tangent_error(_current_level)


def refuse_unformulated(name: str, tensors) -> None:
    """Before the kernel of an operator PyTorch has no forward formula for, reached through a wrapper whose inner
    operator has one (legacy ``torch.cholesky`` over ``linalg_cholesky``): its refusal where one of ``tensors`` has
    a tangent."""
    if any(has_tangent(t) for t in tensors):
        raise NotImplementedError(_NOT_IMPLEMENTED.format(name))


def unformulated_refusal(name: str) -> str:
    """The words of PyTorch's generated refusal for an operator ``name`` that has no forward formula."""
    return _NOT_IMPLEMENTED.format(name)


def fallback_refusal(name: str) -> str:
    """The words of PyTorch's autograd-not-implemented fallback refusing a tangent for the operator ``aten::name``."""
    return f"Trying to use forward AD with aten::{name} that does not support it."


def refuse_fallback_tangents(name: str, tensors) -> None:
    """Before an operator that PyTorch leaves to its autograd-not-implemented fallback (``aten::name``): the
    fallback's refusal where one of ``tensors`` has a tangent, which comes before any check of the kernel's."""
    if any(has_tangent(t) for t in tensors):
        raise NotImplementedError(fallback_refusal(name))


def refuse_written_tangents(name: str, tensors) -> None:
    """After an in-place write PyTorch has no forward formula for (``set_``, ``embedding_renorm_``): its refusal where
    one of ``tensors`` has a tangent."""
    if any(has_tangent(t) for t in tensors):
        raise NotImplementedError(_NO_INPLACE_FORMULA.format(name))


def refuse_out_tangents(name: str, tensors) -> None:
    """After an ``out=`` call wrote its result: PyTorch's refusal where an input or ``out`` has a tangent (its out=
    functions have no forward formulas; one without an autograd kernel of its own is refused before, by
    :func:`refuse_fallback_tangents`)."""
    if any(has_tangent(t) for t in tensors):
        raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not support it because it is "
                                  "an out= function")


def refuse_resize(t: Tensor) -> None:
    """After ``resize_``/``resize_as_`` resized ``t``: PyTorch's refusal where ``t`` has a tangent."""
    if has_tangent(t):
        raise RuntimeError("cannot resize variables that has a forward grad")


def _check_level(level: int, op_name: str) -> None:
    if level != 0:  # (PyTorch has one level, numbered 0)
        raise RuntimeError(f"Invalid level given to {op_name}")


class Identity(Node):
    """PyTorch's ``Identity`` node, the backward of ``_fw_primal`` (unpack_dual's primal): the gradient passes
    as-is. PyTorch binds no Python class of its own to it: it shows as a ``CppFunction``, which is no
    ``torch.autograd.graph.Node``."""

    __slots__ = ()
    _name = "torch::autograd::Identity"
    _python_bound = False

    def apply(self, grads):
        return list(grads)

    def __repr__(self) -> str:
        return f"<CppFunction object at {hex(id(self))}>"


Identity.__name__ = Identity.__qualname__ = "CppFunction"
Identity.__module__ = "builtins"


def _identity_of(view_node: Node) -> Identity:
    """An Identity node in place of the view node just recorded (same edges and sequence number)."""
    node = _new(Identity)
    node._edges, node._in_meta, node._seq = view_node._edges, view_node._in_meta, view_node._seq
    out_meta = getattr(view_node, "_out_meta", None)
    if out_meta is not None:
        node._out_meta = out_meta
    return node


def _formula_args(args: tuple, inputs: list, tangents) -> tuple:
    """The arguments a jvp rule reads, as PyTorch's formulas read them (``toNonOptPrimal``): each tensor input that
    has a tangent or requires grad as its ``_fw_primal``, so that the tangent's graph saves no tangent of it."""
    duals = {id(a) for a, t in zip(inputs, tangents) if t is not None}
    grad_on = STATE.grad_enabled
    return tuple(_fw_primal(a) if isinstance(a, Tensor) and (id(a) in duals or (grad_on and a._rg)) else a
                 for a in args)


def _fw_primal(t: Tensor) -> Tensor:
    """PyTorch's ``_fw_primal`` of ``t``: the same values without a tangent, behind an Identity node where ``t``
    requires grad (sharing ``t``'s version counter, as the view it is there)."""
    from .._tensor import _wrap
    from .edges import gradient_edge

    out = _wrap(t._data)
    vc = t._vc
    if vc is None:
        vc = t._vc = [0]
    out._vc = vc
    if t._rg and STATE.grad_enabled:
        node = _new(Identity)
        Node.__init__(node)
        node._edges = (gradient_edge(t),)
        node._in_meta = ((t._data.shape, t._data.dtype),)
        out._gfn, out._rg = node, True
    return out


def _alias(t: Tensor) -> Tensor:
    from ..ops import views

    with fw_disabled():
        out = views.view(t, tuple(t._data.shape))
    # (an alias, as PyTorch's: the strides of size-1 dims kept, which a view of the same shape recomputes)
    out._data = t._data.view()
    # PyTorch's _fw_primal and _make_dual are views for backward only (is_fw_differentiable=false): a forward root,
    # which takes no tangent from the tensor it aliases (its views take theirs from it)
    out._fw_base = True
    if type(t) is not Tensor and not t._is_param:  # (a Parameter's views are plain tensors, as in torch)
        out.__class__ = type(t)
    return out


# ---- tangent propagation through operators ----------------------------------------------------------------

# OpDef class attribute the registry sets once OpDef._eager calls eager_with_tangents itself.
_REGISTRY_HOOK = "_fw_hook"
_patched: list = []  # (class, attribute, original) swapped in while a level is active


def _install() -> None:
    """Route every operator call through :func:`eager_with_tangents` while a level is active.

    ``OpDef._eager`` gets a wrapper; subclasses with a straight-line ``__call__`` (pointwise fast paths) are
    sent back to ``OpDef.__call__`` so that they reach ``_eager`` too."""
    from ..ops.registry import OpDef

    if getattr(OpDef, _REGISTRY_HOOK, False) or _patched:
        return
    original_eager = OpDef._eager

    def _eager(self, args):
        if STATE.fw_grad_levels:
            return eager_with_tangents(self, args)
        return original_eager(self, args)

    _patched.append((OpDef, "_eager", original_eager))
    OpDef._eager = _eager
    for cls in _subclasses(OpDef):
        fast_call = cls.__dict__.get("__call__")
        if fast_call is None:
            continue

        def __call__(self, *args, _fast=fast_call, **kwargs):
            if STATE.fw_grad_levels:
                return OpDef.__call__(self, *args, **kwargs)
            return _fast(self, *args, **kwargs)

        _patched.append((cls, "__call__", fast_call))
        cls.__call__ = __call__
    _patch_tensor_dunders()


def _patch_tensor_dunders() -> None:
    """Python operators bound straight to an operator's fast closure (``op.dunder``) go through the op."""
    from ..ops.registry import REGISTRY, OpDef

    by_closure = {id(op.dunder): op for op in REGISTRY.values() if getattr(op, "dunder", None) is not None}
    for name, value in list(vars(Tensor).items()):
        op = by_closure.get(id(value))
        if op is None:
            continue

        def dunder(self, other, _op=op, _fast=value):
            if STATE.fw_grad_levels and isinstance(other, (Tensor, int, float, complex, bool)):
                return OpDef.__call__(_op, self, other)
            return _fast(self, other)

        _patched.append((Tensor, name, value))
        setattr(Tensor, name, dunder)


def _subclasses(cls) -> list:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


def _uninstall() -> None:
    while _patched:
        cls, name, original = _patched.pop()
        setattr(cls, name, original)


def _diff_inputs(op, args: tuple) -> list:
    """The differentiable inputs of ``op`` in edge order (Tensor[] arguments flattened)."""
    flat = []
    for i in op.diff_idx:
        a = args[i]
        if a.__class__ is list or a.__class__ is tuple:
            flat.extend(a)
        else:
            flat.append(a)
    return flat


def _out_tensors(result) -> tuple:
    if isinstance(result, Tensor):
        return (result,)
    if isinstance(result, (tuple, list)):
        return tuple(r for r in result if isinstance(r, Tensor))
    return ()


def _reaches_autograd_of(t: Tensor) -> bool:
    """Whether PyTorch's dispatch of a call on ``t`` reaches its autograd kernel, which computes tangents: not in
    inference mode (forward grad mode is off there), nor for an inference tensor (it has no autograd keys)."""
    return not STATE.inference and not t._inference


def _reaches_autograd(op, args: tuple) -> bool:
    """:func:`_reaches_autograd_of` for a call of ``op``: some tensor argument is no inference tensor, or a number
    stands for a Tensor of the schema (PyTorch wraps it in a plain tensor, which has the autograd keys)."""
    if STATE.inference:
        return False
    params = op.schema.params
    for i in op.tensor_idx:
        a = args[i]
        if isinstance(a, Tensor):
            if not a._inference:
                return True
        elif a is not None and params[i].type.rstrip("?") == "Tensor":
            return True
    return any(isinstance(t, Tensor) and not t._inference for i in op.list_idx for t in args[i] or ())


def eager_with_tangents(op, args: tuple):
    """Run ``op`` eagerly, then give its outputs the tangents implied by its inputs' tangents."""
    levels = STATE.fw_grad_levels
    level = levels[-1]
    inputs = _diff_inputs(op, args)
    tangents = [get_tangent(a, level) if isinstance(a, Tensor) else None for a in inputs]
    STATE.fw_grad_levels = []
    try:
        if all(t is None for t in tangents) or op.name == "detach" or not _reaches_autograd(op, args):
            return op._eager(args)
        if op.forward_ad_refusal is not None:  # (PyTorch refuses before its kernel runs)
            raise NotImplementedError(op.forward_ad_refusal)
        if op.name in _INPLACE_WITHOUT_FORMULA:
            op._eager(args)
            raise NotImplementedError(_NO_INPLACE_FORMULA.format(op.name))
        original = None
        if op.is_inplace:
            original = _old_value(args[0])
        result = op._eager(args)
        outs = _out_tensors(result)
        new_tangents = _compute_tangents(op, args, outs, inputs, tangents, original)
    finally:
        STATE.fw_grad_levels = levels
    for o, t in zip(outs, new_tangents):
        give_tangent(o, t, level, op.is_inplace)
    return result


def give_tangent(out: Tensor, tangent: Tensor | None, level: int, inplace: bool) -> None:
    """``out`` takes its new tangent (None: none), as PyTorch's ``_set_fw_grad``; an in-place operator's is written
    into the tangent ``out`` has (a view's: into its base's, which gets a zero tangent first where it has none)."""
    if tangent is None:
        if inplace:
            set_tangent(out, None, level)  # the new value has no tangent: drop the old value's
        return
    if inplace:
        old = get_tangent(out, level)
        if old is tangent:  # (written in place by its rule)
            _attach_to_saved(out, level, old)
            return
        base = forward_base(out)[0] if old is None else None
        if base is not None:
            # the first tangent of a view: its (forward) base gets a zero tangent, of which the view's is a view
            from .._tensor import _wrap

            set_tangent(base, _wrap(zeros_with_layout_of(base._data, base._data.dtype)), level)
            old = get_tangent(out, level)
        # (a view replaying its ops on a base reshaped in place since may get another shape: copy_ refuses it)
        if old is not None and (base is not None or old._data.shape == tangent._data.shape):
            _copy_into(old, tangent)
            _attach_to_saved(out, level, old)
            return
    tangent = conformed(tangent, out)
    set_tangent(out, tangent, level)
    _attach_to_saved(out, level, tangent)


def _attach_to_saved(out: Tensor, level: int, tangent: Tensor) -> None:
    """The op saved ``out`` before its tangent existed: let the saved value carry it, as PyTorch's
    SavedVariable does (forward-over-reverse reads tangents of saved outputs)."""
    saved = getattr(out._gfn, "_saved", None)
    if saved:
        from .saved import attach_tangent

        for s in saved:
            attach_tangent(s, out, level, tangent)


def _old_value(self: Tensor) -> Tensor:
    """The saved ``self`` of an in-place rule, its value before the write: PyTorch's ``original_self = self.clone()``,
    with its graph where grad mode records one (a tangent formula reading it then depends on the old ``self``)."""
    if STATE.grad_enabled and self._rg:
        from ..ops import creation

        return creation.clone(self)
    from .._tensor import _wrap

    return _wrap(self._data.copy())


def _old_tangent(op, args: tuple, tangents: list) -> list:
    """An in-place rule reads ``self``'s old tangent as PyTorch's ``original_self_t = self_t.clone()`` where a graph is
    recorded (the tangent itself is then overwritten by the new one, which the graph may have saved)."""
    first = tangents[0] if op.diff_idx and op.diff_idx[0] == 0 else None
    if first is None or not recording(args, tangents):
        return tangents
    from ..ops import creation

    return [creation.clone(first)] + list(tangents[1:])


def _copy_into(dst: Tensor, src: Tensor) -> None:
    """An in-place op's new tangent written into the old one, as PyTorch's ``self_t.copy_(new)``: recorded in grad
    mode (CopyBackwards; a leaf tangent requiring grad is refused, as there)."""
    from ..ops import creation

    with fw_disabled():
        creation.copy_(dst, src)


def _compute_tangents(op, args, outs, inputs, tangents, original) -> list:
    """One tangent (or None) per output tensor."""
    diff_out = [is_differentiable_np(o._data.dtype) for o in outs]
    if not any(diff_out):
        return [None] * len(outs)
    if op.is_view and not op.is_inplace and op.jvp is None:
        view_args = (tangents[0],) + tuple(args[1:])
        res = _out_tensors(op._eager(view_args)) if tangents[0] is not None else [None] * len(outs)
        return [t if d else None for t, d in zip(res, diff_out)]
    kind = None  # (where tangents have other dtypes than their inputs: the dtype PyTorch's formula gives them)
    if not _same_dtypes(inputs, tangents):
        tangent_dtypes.check_formula_runs(op.schema, args, [inp._data.dtype if isinstance(inp, Tensor) else None
                                                            for inp in inputs],
                                          [None if t is None else t._data.dtype for t in tangents], op.is_inplace)
        kind = tangent_dtypes.formula_kind(op.schema, op.is_inplace)
    # PyTorch's forward formulas are C++, where a number is a Scalar: ``2 * result`` is mul.Scalar (MulBackward1
    # in a recorded tangent's graph), ``x + 1`` add.Scalar (AddBackward1); fastpath.SCALAR_OVERLOADS picks them
    formula, STATE.in_formula = STATE.in_formula, True
    try:
        if kind == tangent_dtypes.LINEAR:
            res = _linear_tangents(_functional_op(op), args, inputs, tangents)
        elif kind == tangent_dtypes.SELECTED and not op.is_inplace:
            res = _selected_tangents(op, args, outs, tangents)
        elif kind == tangent_dtypes.FORMULA and not op.is_inplace:
            res = tangent_formulas.FORMULAS[op.schema.name](args, outs, tangents)
        else:
            res = _rule_tangents(op, args, outs, inputs, tangents, original)
        if _writes_self_tangent(op, tangents):
            kind = None  # (PyTorch's in-place formula ends with self_t.copy_(...): self's tangent keeps its dtype)
        dtypes = [None if t is None or not d else _tangent_dtype(op, kind, i, t, o, inputs, tangents)
                  for i, (o, t, d) in enumerate(zip(outs, res, diff_out))]
        if _drops_imaginary_part(op, res, dtypes, tangents, original):
            res = _with_imaginary_part(op, args, outs, inputs, tangents, original, res)
    finally:
        STATE.in_formula = formula
    result = []
    for o, t, d, dtype in zip(outs, res, diff_out, dtypes):
        if not d or t is None:
            result.append(None)
        elif _kept_as_is(op, t, o, tangents):
            result.append(t)
        else:
            result.append(_fresh(t, o, tangents, dtype))
    return result


def _drops_imaginary_part(op, res: list, dtypes: list, tangents, original) -> bool:
    """Whether the rule of a real operator gave a real tangent from a complex one where PyTorch's formula keeps its
    imaginary part: an in-place one's ``self_t.copy_(formula)`` writes the complex value into ``self``'s tangent
    (abs's formula takes the real part itself, ``handle_r_to_c``); a functional one's where its formula's type
    promotion gives a complex tangent (``dtypes``: frac's ``self_t``, logaddexp's ``self_t / (1 + exp(...))``),
    not one copied into the real output's dtype."""
    if not any(t is not None and t._data.dtype.kind == "c" for t in tangents):
        return False
    if original is not None:
        return (op.schema.name[:-1] not in tangent_dtypes.REAL_PART_FORMULAS
                and any(t is not None and t._data.dtype.kind == "f" for t in res))
    return any(t is not None and t._data.dtype.kind == "f" and dtype is not None and dtype.kind == "c"
               for t, dtype in zip(res, dtypes))


def _with_imaginary_part(op, args, outs, inputs, tangents, original, res: list) -> list:
    """The rule's tangents ``res`` of the real parts of ``tangents`` plus ``1j`` times its tangents of their
    imaginary parts: the formula of a real operator is linear in the tangent with real coefficients."""
    from ..ops.complex_ops import imag

    imaginary = [imag(t) if t is not None and t._data.dtype.kind == "c" else None for t in tangents]
    res_imag = _rule_tangents(op, args, outs, inputs, imaginary, original)
    return [r if r is None or i is None else r + i * 1j for r, i in zip(res, res_imag)]


def _writes_self_tangent(op, tangents) -> bool:
    """Whether ``op`` is in place and its ``self`` has a tangent, which its new tangent is copied into."""
    return op.is_inplace and bool(op.diff_idx) and op.diff_idx[0] == 0 and tangents[0] is not None


def _functional_op(op):
    """``op``, or the functional form of an in-place operator (``index_add`` of ``index_add_``), which PyTorch's
    in-place formula runs on the tangents before copying the result into ``self``'s tangent."""
    if not op.is_inplace:
        return op
    from ..ops.registry import REGISTRY

    return REGISTRY[op.schema.name[:-1]]


def _same_dtypes(inputs: list, tangents) -> bool:
    """Whether every input's tangent has its input's dtype (PyTorch's formulas then give the output's dtype)."""
    return all(tan is None or tan._data.dtype == inp._data.dtype for inp, tan in zip(inputs, tangents))


def _linear_tangents(op, args: tuple, inputs: list, tangents) -> list:
    """PyTorch's ``auto_linear`` formula: ``op`` applied to the inputs' tangents (zeros of an input's dtype where it
    has none), in the dtype their promotion gives."""
    from .. import _functional_core as F

    fill = iter(t if t is not None else (F.zeros_like(a) if isinstance(a, Tensor) else type(a)(0))
                for a, t in zip(inputs, tangents))
    linear_args = list(args)
    for i in op.diff_idx:
        a = args[i]
        linear_args[i] = [next(fill) for _ in a] if a.__class__ in (list, tuple) else next(fill)
    for i, value in tangent_dtypes.LINEAR_FIXED_ARGS.get(op.name, {}).items():
        linear_args[i] = value
    return list(_out_tensors(op._eager(tuple(linear_args))))


def _selected_tangents(op, args: tuple, outs: tuple, tangents) -> list:
    """PyTorch's formula of a value-selecting operator: the values' tangent is ``self``'s gathered at the indices
    (unsqueezed along ``dim`` where the operator drops it)."""
    from ..ops.shape_extra import gather
    from ..ops.views import squeeze, unsqueeze

    tangent, indices = tangents[0], outs[1]
    if tangent._data.ndim == 0:
        return [tangent, None]
    names = [p.name for p in op.schema.params]
    dim = args[names.index("dim")] % tangent._data.ndim
    keepdim = args[names.index("keepdim")] if "keepdim" in names else True
    if not keepdim:
        return [squeeze(gather(tangent, dim, unsqueeze(indices, dim)), dim), None]
    return [gather(tangent, dim, indices), None]


def _tangent_dtype(op, kind: str | tuple | None, index: int, t: Tensor, out: Tensor, inputs: list,
                   tangents) -> np.dtype | None:
    """The dtype the rule's tangent ``t`` of output ``index``, ``out``, takes (None: its own). PyTorch casts no
    tangent: its formula's type promotion decides (see :mod:`.tangent_dtypes`; ``kind``: the formula's kind, or one
    per output). Where every input's tangent has its input's dtype, the rule's own dtype (a number's promotion, a
    wider step) is no part of PyTorch's: the output's dtype is the formula's."""
    if op.jvp_keeps_dtype:
        return None
    if isinstance(kind, tuple):
        kind = kind[index]
    if kind is None and _same_dtypes(inputs, tangents):
        return out._data.dtype
    if kind is not None:
        present = [tan._data.dtype for tan in tangents if tan is not None]
        zeros = [inp._data.dtype if isinstance(inp, Tensor) else inp
                 for inp, tan in zip(inputs, tangents) if tan is None]
        return tangent_dtypes.tangent_dtype(kind, np.result_type(*present), out._data.dtype, zeros)
    if t._data.dtype == out._data.dtype:
        return None
    # (an element-wise formula ends with ``.conj()``: a complex tangent, lazily conjugated, no longer has the output's
    # layout and is copied into a tensor like the output; a real rule's tangent of a complex input tangent too)
    if out._data.dtype.kind != "c" and _element_wise(op) and any(
            tan is not None and tan._data.dtype.kind == "c" for tan in tangents):
        return out._data.dtype
    return None


def _element_wise(op) -> bool:
    """Whether PyTorch's forward formula of ``op`` is (like) its ``auto_element_wise`` one: a functional operator of
    one differentiable tensor, element by element."""
    from ..ops.registry import BinaryPointwiseOp, UnaryPointwiseOp

    if op.is_inplace or len(op.diff_idx) != 1:
        return False
    return op.elementwise_jvp or isinstance(op, (UnaryPointwiseOp, BinaryPointwiseOp)) or op.name == "angle"


def _rule_tangents(op, args, outs, inputs, tangents, original) -> list:
    """The outputs' tangents by the operator's forward rule, or one derived from its backward rule."""
    if original is not None:
        if not op.jvp_writes_self_tangent:  # (other in-place formulas read self_t cloned, a rule's or a derived one)
            tangents = _old_tangent(op, args, tangents)
        outs = _written_results(outs)
    if op.jvp is not None:
        if original is not None:
            # (only ``self`` is read as it was: another argument that is the same tensor is read as written, as
            # PyTorch's formulas read ``original_self_p`` and ``other_p``)
            args = (original,) + tuple(args[1:])
        res = op.jvp(_formula_args(args, inputs, tangents), outs, tuple(tangents))
        return list(res) if isinstance(res, (tuple, list)) else [res]
    if op.elementwise_jvp and all(o._data.dtype.kind == "f" for o in outs) and all(
            t is None or t._data.dtype.kind == "f" for t in tangents):
        return _vjp_of_tangent(op, args, outs, inputs, tangents, original)
    return _double_vjp(op, args, outs, inputs, tangents, original)


def _kept_as_is(op, t: Tensor, out: Tensor, tangents) -> bool:
    """Whether the rule's tangent ``t`` is ``self``'s own, written in place or shared by the output as PyTorch's."""
    if t is not tangents[0]:
        return False
    if op.jvp_writes_self_tangent:
        return True
    return op.jvp_shares_tangent and t._data.dtype == out._data.dtype and t._data.shape == out._data.shape


def _written_results(outs: tuple) -> tuple:
    """An in-place formula's ``result`` is PyTorch's ``self_p``, ``toNonOptPrimal(self)`` after the write: behind
    an Identity node where ``self`` requires grad."""
    if not STATE.grad_enabled:
        return outs
    return tuple(_fw_primal(o) if o._rg else o for o in outs)


def _fresh(t: Tensor, out: Tensor, in_tangents, dtype: np.dtype | None) -> Tensor:
    """A tangent that does not alias an input tangent, of ``dtype`` (None: its own)."""
    from .. import _functional_core as F
    from ..ops import creation

    if t._data.shape != out._data.shape and t._data.size != out._data.size:
        from ..ops.views import expand

        # a jvp rule's tangent of a broadcast input (``add``'s ``t_self``): materialise it
        t = creation.clone(expand(t, out._data.shape))
    else:
        base = t._base
        for it in in_tangents:
            if it is not None and (t is it or (base is not None and (base is it or base is it._base))):
                t = creation.clone(t)
                break
        if t._data.shape != out._data.shape:
            t = F.reshape(t, out._data.shape)  # e.g. a (1,)-shaped reduction of a 0-d output's cotangent
    if dtype is not None and t._data.dtype != dtype:
        t = F.to_numpy_dtype(t, dtype)
    return t


def _rule_node(op, args, outs, inputs, tangents, original):
    """A detached node of ``op`` holding what its VJP rule reads (saved values, attributes, input metadata)."""
    from ..ops.registry import _attr_value
    from .edges import NO_EDGE

    if op.vjp is None:
        raise NotImplementedError(_NOT_IMPLEMENTED.format(op.name))
    node = object.__new__(op.node_class)  # (its class refuses to be called, as torch's)
    Node.__init__(node)
    node._edges = tuple(NO_EDGE for _ in inputs)
    node._in_meta = tuple((a._data.shape, a._data.dtype) if isinstance(a, Tensor) else None for a in inputs)
    node._needs = tuple(t is not None for t in tangents)
    node._attrs = tuple(_attr_value(args, i) for i in op.attr_idx) if op.attr_idx else ()
    # (the inputs the rule reads as PyTorch's formulas read them: through _fw_primal, an Identity node in a graph)
    primals = _formula_args(args, inputs, tangents)
    node._saved = tuple(_saved_value(primals, outs, kind, idx, original) for kind, idx in op.save_spec)
    if len(outs) != 1:
        node._n_out = len(outs)
        node._out_meta = tuple((o._data.shape, o._data.dtype) for o in outs)
    return node


def _vjp_of_tangent(op, args, outs, inputs, tangents, original) -> list:
    """The tangent of a real element-wise operator: its VJP rule applied to the input's tangent.

    Its Jacobian is diagonal, so J t is the rule's J^T t; this is PyTorch's ``auto_element_wise``. Unlike
    differentiating the rule (``_double_vjp``), it keeps the rule's masks exact: where the rule writes 0 over a
    non-finite factor (sinc at 0, a logit outside its eps range) the tangent is 0, not 0 * inf = NaN."""
    node = _rule_node(op, args, outs, inputs, tangents, original)
    hooks, observed = STATE.saved_hooks, (STATE.observed, STATE.observed_ops)
    STATE.saved_hooks = []
    STATE.set_observation(False, False)  # the rule's operators are no part of what users observe
    try:
        res = op.vjp(node, *(t for t in tangents if t is not None))
    finally:
        STATE.saved_hooks = hooks
        STATE.set_observation(*observed)
    return list(res) if isinstance(res, (tuple, list)) else [res]


def _double_vjp(op, args, outs, inputs, tangents, original) -> list:
    """``J t`` as ``d/du <vjp(u), t>``: run the VJP rule on fresh cotangents ``u`` and differentiate it."""
    from .. import _functional_core as F
    from . import api

    node = _rule_node(op, args, outs, inputs, tangents, original)
    grad_on = STATE.grad_enabled
    create_graph = grad_on and (any(isinstance(a, Tensor) and a._rg for a in inputs)
                                or any(t is not None and t._rg for t in tangents))
    hooks, observed = STATE.saved_hooks, (STATE.observed, STATE.observed_ops)
    STATE.saved_hooks = []
    STATE.set_observation(False, False)  # the double-vjp's helper graph is no part of what users observe
    STATE.grad_enabled = True
    try:
        # Integer outputs (indices) get a constant zero cotangent: the rule may read it but it has no tangent.
        us = [F.zeros_like(o, requires_grad=is_differentiable_np(o._data.dtype)) for o in outs]
        try:
            vjps = op.vjp(node, *us)
        except NotImplementedError:
            raise NotImplementedError(_NOT_IMPLEMENTED.format(op.name)) from None
        if vjps.__class__ is not tuple and vjps.__class__ is not list:
            vjps = (vjps,)
        roots, seeds = [], []
        for inp, g, t in zip(inputs, vjps, tangents):
            if t is None or g is None or not g._rg:
                continue
            if g._data.shape != t._data.shape:
                g = F.sum_to_size(g, inp._data.shape)
            if g._data.dtype.kind != t._data.dtype.kind and "c" in (g._data.dtype.kind, t._data.dtype.kind):
                # A complex vjp of a real input (or the reverse) is cast like the engine casts gradients;
                # the seed takes the vjp's complex-ness instead, which gives the same product.
                t = F.to_numpy_dtype(t, g._data.dtype) if g._data.dtype.kind == "c" else _real_part(t)
            roots.append(g)
            seeds.append(t)
        wrt = [u for u in us if u._rg]
        if not roots:
            return [F.zeros_like(o) for o in outs]
        found = iter(api.grad(roots, wrt, seeds, create_graph=create_graph, allow_unused=True))
        grads = [next(found) if u._rg else None for u in us]
    finally:
        STATE.grad_enabled = grad_on
        STATE.saved_hooks = hooks
        STATE.set_observation(*observed)
    return [g if g is not None else F.zeros_like(o) for g, o in zip(grads, outs)]


def _real_part(t: Tensor) -> Tensor:
    from .._tensor import _wrap

    return _wrap(t._data.real.copy())


def _saved_value(args, outs, kind: str, idx: int, original):
    if kind == "out":
        return outs[idx]
    if idx == 0 and original is not None:
        return original
    value = args[idx]
    # (a Tensor[] as a list, as a recorded node unpacks it: a tuple in a node's _saved is a record, autograd/saved.py)
    return list(value) if value.__class__ is tuple else value
