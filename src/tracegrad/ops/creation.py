"""Copies, casts and ``*_like`` factories that take a tensor: clone, detach, copy_, to, fill_, zero_."""

from __future__ import annotations

import numpy as np

from .._state import STATE
from .._strides import like_self, with_strides
from .._tensor import Tensor, _wrap
from ..backend.dtypes import bfloat16, from_numpy_dtype, is_differentiable_np
from ..memory_format import copy_in_format, like_strides, preserve_format, suggested_format
from ._util import broadcast_mismatch, check_differentiable_grad
from .bfloat16_in_float import computes_bfloat16
from .complex_ops import real_for_real_input
from .pointwise import copy_into, writes_last
from .registry import defop
from .scalar_fill import scalar_for, written_value


def _clone_kernel(a, memory_format=None):
    return copy_in_format(a, memory_format)  # preserve_format by default: see memory_format.py


clone = defop("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", _clone_kernel,
              vjp=lambda ctx, g: g, jvp=lambda args, outs, ts: clone(ts[0], *args[1:]))


def detach(t: Tensor) -> Tensor:
    """A new leaf sharing storage and version counter with ``t`` (not a differentiable view)."""
    if STATE.stack:
        from ..dispatch import dispatch

        return dispatch(_detach_op, (t,), {})
    out = _wrap(t._data)
    out._vc = t._version_counter()
    if t._inference:  # (an alias of an inference tensor is one, as its views are)
        out._inference = True
        out._tracks_version = not STATE.inference
    elif STATE.inference:  # (and an alias of a normal tensor is normal, made in inference mode or not)
        out.__dict__.pop("_inference", None)
    return out


_detach_op = defop("detach(Tensor(a) self) -> Tensor(a)", lambda a: a)


def detach_(t: Tensor) -> Tensor:
    if t._base is not None:
        raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                           "DistributedDataParallel "
                           "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of "
                           "DDP buckets, and hence detach_() cannot be called on these gradients. To fix this error, "
                           "please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
                           "solution.")
    t._gfn = None
    t._output_nr = 0
    t._rg = False
    return t


def _to_copy_kernel(a, dtype=None, memory_format=None):
    return copy_in_format(a, memory_format, dtype)  # (laid out as empty_like(a, memory_format=...))


def _to_copy_vjp(ctx, g):
    """PyTorch's ``_to_copy_backward``: the gradient cast back to the input's dtype by the node itself (the
    engine's cast does not run for a leaf whose ``grad_dtype`` is None), a complex one to a real input's real
    part first (a cast would warn of the imaginary part discarded)."""
    return cast_back_to_input(ctx, 0, g)


def cast_back_to_input(ctx, i: int, g: Tensor) -> Tensor:
    """A gradient cast by the node itself to the dtype of its differentiable input ``i`` (the real part of a
    complex one for a real input, without the cast's warning), as PyTorch's ``_to_copy_backward`` and
    CopyBackwards do."""
    input_dtype = ctx._in_meta[i][1]
    if g._data.dtype == input_dtype:
        return g
    check_differentiable_grad(input_dtype)  # (an integer input that requires grad: the engine's assert on it)
    return to_dtype(real_for_real_input(ctx, i, g), from_numpy_dtype(input_dtype))


def _to_copy_jvp(args, outs, tangents):
    """PyTorch's ``_to_copy(self_t, dtype)``: the tangent cast to the result's dtype, a complex tangent of a real input
    keeping its imaginary part where the result is complex."""
    return to_dtype(tangents[0], from_numpy_dtype(outs[0]._data.dtype))


_to_copy = defop("_to_copy(Tensor self, *, ScalarType? dtype=None, MemoryFormat? memory_format=None) -> Tensor",
                 _to_copy_kernel, vjp=_to_copy_vjp, jvp=_to_copy_jvp, node_name="ToCopyBackward0")
# PyTorch's condition for a node: no dtype asked for, or one that can carry a gradient (x.long() has no node)
_to_copy.records_if = lambda args: args[1] is None or is_differentiable_np(np.dtype(args[1]))


def _copied_into_new_tensor(op):
    """``op``'s result for inference tensors alone, one requiring grad: torch's autograd kernel does not run, but its
    CPU kernel (``empty_like(self, ...).copy_(self)``) copies into a normal tensor, and that copy_ records a
    CopyBackwards (into a dtype that can carry a gradient)."""
    def run(args: tuple) -> Tensor:
        enabled, STATE.grad_enabled = STATE.grad_enabled, False
        try:
            new = op._eager(args)  # (the layout and dtype of the empty_like)
        finally:
            STATE.grad_enabled = enabled
        new._vc = None  # (the empty_like: its copy_ below is the one write counted)
        return copy_(new, args[0])

    return run


def to_dtype(t: Tensor, dtype, copy: bool = False, memory_format=None) -> Tensor:
    """``t.to(dtype, memory_format=...)`` (``dtype`` None: keep it): the same tensor when nothing changes (the
    dtype, and the format where one is asked for: ``suggest_memory_format()``'s), else a differentiable copy."""
    same_dtype = dtype is None or t._data.dtype == dtype.np
    if not copy and same_dtype and (memory_format is None or memory_format is preserve_format
                                    or suggested_format(t._data) is memory_format):
        return t
    if not STATE.special:  # (what the call does once its arguments are bound: there are none to check)
        return _to_copy._eager((t, None if dtype is None else dtype.np, memory_format))
    return _to_copy(t, dtype=None if dtype is None else dtype.np, memory_format=memory_format)


@writes_last
def _copy_kernel(dst, src, non_blocking=False):
    if isinstance(src, np.ndarray) and src.shape != dst.shape:
        mismatch = broadcast_mismatch([dst.shape, src.shape])
        if mismatch is not None:
            raise mismatch
        full = np.broadcast_shapes(dst.shape, src.shape)
        if full != dst.shape:  # broadcastable, but to more dims or larger sizes than self has
            raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape {list(full)}")
        src = np.broadcast_to(src, dst.shape)
    copy_into(dst, src)
    return dst


def _copy_vjp(ctx, g):
    need = ctx.needs_input_grad
    # (PyTorch's CopyBackwards: zeros for the overwritten self, not g * 0, which turns an inf or NaN gradient into
    # NaN and records a node under create_graph; the source's gradient cast to its dtype by the node)
    return (zeros_like(g) if need[0] else None, cast_back_to_input(ctx, 1, g) if need[1] else None)


def _copy_jvp(args, outs, tangents):
    """PyTorch's hand-written copy_ tangent: ``src``'s, in its own dtype (written into ``self``'s tangent where there
    is one, zeros where ``src`` has none)."""
    src_t = tangents[1]
    return zeros_like(outs[0]) if src_t is None else src_t


copy_ = defop("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", _copy_kernel,
              vjp=_copy_vjp, jvp=_copy_jvp, node_name="CopyBackwards")
copy_.jvp_keeps_dtype = True
copy_.node_class._name = "torch::autograd::CopyBackwards"  # PyTorch's name() for it (a hand-written node)
# PyTorch's hand-written copy_ records only into a self of a dtype that can carry a gradient (``long_t.copy_(x)``,
# ``long_t[0] = x`` for an ``x`` that requires grad leave it without history), unlike fill_ or index_put_
copy_.records_if = lambda args: is_differentiable_np(args[0]._data.dtype)
clone.without_autograd_kernel = _copied_into_new_tensor(clone)
_to_copy.without_autograd_kernel = _copied_into_new_tensor(_to_copy)


clone.inference_writes = 1
_to_copy.inference_writes = 1


@writes_last  # (a value that does not depend on self: written again alike)
def _fill_kernel(a, value):
    a[...] = written_value(value, a.dtype, a.size)
    return a


@writes_last
def _fill_tensor_kernel(a, value):
    if value.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                           f"dimensions.")
    return _fill_kernel(a, value)


def _fill_tensor_vjp(ctx, g):
    from .reductions_extra import sum

    need = ctx.needs_input_grad
    return (zeros_like(g) if need[0] else None, sum(g) if need[1] else None)


# One operator per PyTorch overload, for its node class: a number fills through fill_.Scalar (FillBackward2,
# one edge), a 0-d tensor through fill_.Tensor (FillBackward3, an edge for the value too).
_fill_scalar = defop("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", _fill_kernel,
                     vjp=lambda ctx, g: (zeros_like(g),), differentiable=("self",), node_name="FillBackward2")
_fill_tensor = defop("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", _fill_tensor_kernel,
                     vjp=_fill_tensor_vjp, node_name="FillBackward3")


def fill_(self: Tensor, value) -> Tensor:
    """``self.fill_(value)``: the overload PyTorch picks for ``value`` (a tensor or a number)."""
    return (_fill_tensor if isinstance(value, Tensor) else _fill_scalar)(self, value)


@writes_last
def _zero_kernel(a):
    a[...] = 0
    return a


zero_ = defop("zero_(Tensor(a!) self) -> Tensor(a!)", _zero_kernel, vjp=lambda ctx, g: zeros_like(g),
              node_name="ZeroBackward0")


@computes_bfloat16  # (scalar_for converts to bfloat16 as c10 does; the like tensor gives only its layout)
def _full_like_kernel(a, fill_value, dtype=None, memory_format=None):
    dtype = a.dtype if dtype is None else np.dtype(dtype)
    values = np.full(a.shape, scalar_for(fill_value, dtype, a.size), dtype=dtype)
    # (laid out as empty_like(a, memory_format); preserve_format's test of the common C order is the cheaper)
    if memory_format is None or memory_format is preserve_format:
        return like_self(values, a)
    return with_strides(values, like_strides(a, memory_format))


_full_like = defop("full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, "
                   "MemoryFormat? memory_format=None) -> Tensor", _full_like_kernel, differentiable=())


def _np_dtype(dtype):
    if dtype is None:
        return None
    from ..backend.dtypes import to_dtype

    return to_dtype(dtype).np


def full_like(t: Tensor, fill_value, *, dtype=None, requires_grad: bool = False, device=None, layout=None,
              memory_format=None, pin_memory=False) -> Tensor:
    # (a 0-d tensor's value read as its number, as torch's parser reads it: NumPy has no bfloat16 to convert it
    # from, and into bfloat16 c10 converts that number, its NaN as 0x7fc0, refused beyond bfloat16's range)
    if isinstance(fill_value, Tensor) and bfloat16 in (fill_value.dtype, t.dtype if dtype is None else dtype):
        fill_value = fill_value.item()
    out = _full_like(t, fill_value, dtype=_np_dtype(dtype), memory_format=memory_format)
    if device is not None or pin_memory:
        out = _placed(out, device, pin_memory)
    return _requiring_grad(out) if requires_grad else out


def _requiring_grad(out: Tensor) -> Tensor:
    from .._factories import requiring_grad

    return requiring_grad(out)


def _placed(out: Tensor, device, pin_memory) -> Tensor:
    from .._factories import placed_tensor

    return placed_tensor(out, device, pin_memory)


def zeros_like(t: Tensor, *, dtype=None, requires_grad: bool = False, device=None, pin_memory=False,
               memory_format=None, **kwargs) -> Tensor:
    if (t.__class__ is Tensor and dtype is None and memory_format is None and device is None and not requires_grad
            and not pin_memory and not STATE.special):
        # (the call below once its keywords are bound, which costs more than the operator itself: backward
        # formulas ask for zeros of the gradient's kind this way, CopySlices' in-place nodes among them)
        return _full_like._eager((t, 0, None, None))
    return full_like(t, 0, dtype=dtype, requires_grad=requires_grad, device=device, pin_memory=pin_memory,
                     memory_format=memory_format)


def ones_like(t: Tensor, *, dtype=None, requires_grad: bool = False, device=None, pin_memory=False,
              memory_format=None, **kwargs) -> Tensor:
    return full_like(t, 1, dtype=dtype, requires_grad=requires_grad, device=device, pin_memory=pin_memory,
                     memory_format=memory_format)


def empty_like(t: Tensor, *, dtype=None, requires_grad: bool = False, device=None, pin_memory=False,
               memory_format=None, **kwargs) -> Tensor:
    from .._runtime import fill_uninitialized

    out = full_like(t, 0, dtype=dtype, requires_grad=requires_grad, device=device, pin_memory=pin_memory,
                    memory_format=memory_format)
    fill_uninitialized(out._data)
    return out


def new_zeros(t: Tensor, *size, dtype=None, requires_grad: bool = False, device=None, pin_memory=False,
              **kwargs) -> Tensor:
    from .views import normalize_shape

    if not size and "size" in kwargs:  # (``new_zeros(size=(2,))``: the keyword names the whole shape)
        size = (kwargs["size"],)
    out = _wrap(np.zeros(normalize_shape(size), dtype=_np_dtype(dtype) or t._data.dtype))
    if device is not None or pin_memory:
        out = _placed(out, device, pin_memory)
    return _requiring_grad(out) if requires_grad else out

