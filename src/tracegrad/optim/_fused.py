"""The in-place updates PyTorch's optimizers make, with the roundings of its CPU kernels.

``p.add_(g, alpha=a)``, ``m.lerp_(g, w)`` and ``v.addcmul_(g, g, value=c)`` are single fused multiply-adds per
element in PyTorch (its AVX2 kernels), with the scalar rounded to the tensor's dtype first. Written as
``p += a * g`` in NumPy they round twice and drift from PyTorch's parameters in the last bit, step after step.

The operands have the updated tensor's dtype: a parameter whose ``.grad`` has another dtype (``grad_dtype = None``,
``.grad.data``) steps in tensor operations instead (``optimizer.updates_need_tensor_ops``).

Where an operand has another shape (a ``.grad`` whose ``.data`` was replaced, a parameter resized through ``.data``),
each helper raises what PyTorch's op raises at that point (``refuse_unfit``), not NumPy's ValueError.
"""

from __future__ import annotations

import numpy as np

from ..backend.dtypes import cpp_type_name
from ..ops._util import broadcast_mismatch
from ..ops.aten_vec import FUSED_DTYPES, fma, fma_into, fma_into_blocks


def add_scaled_(dst: np.ndarray, src: np.ndarray, alpha: float) -> np.ndarray:
    """``dst.add_(src, alpha=alpha)`` in place (in float64 blocks for large float32 arrays: ``aten_vec.
    fma_into_blocks``). Like ``fma_into``, it leaves float64 sums on a float midpoint to the cast: the check would
    make SGD's update a third slower (see ``fma_into``)."""
    if src.shape != dst.shape:
        refuse_unfit(dst, src)
    if alpha == 1 or dst.dtype not in FUSED_DTYPES:
        dst += src if alpha == 1 else dst.dtype.type(alpha) * src
        return dst
    if fma_into_blocks(src, alpha, dst, dst, check_ties=False) is not None:
        return dst
    return fma_into(src, dst.dtype.type(alpha), dst, dst)


def added_scaled(a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    """``a.add(b, alpha=alpha)``: a new array."""
    if a.shape != b.shape:
        refuse_unfit(None, a, b)
    if alpha == 1 or a.dtype not in FUSED_DTYPES:
        return a + (b if alpha == 1 else a.dtype.type(alpha) * b)
    return fma(b, a.dtype.type(alpha), a)


def lerp_(dst: np.ndarray, end: np.ndarray, weight: float) -> np.ndarray:
    """``dst.lerp_(end, weight)`` for a number weight: ``fma(weight, end - dst, dst)`` below 0.5, else
    ``fma(weight - 1, end - dst, end)``."""
    if end.shape != dst.shape:
        refuse_unfit(dst, end)
    if end.dtype is not dst.dtype and end.dtype != dst.dtype:  # (torch's lerp takes no mixed dtypes)
        raise RuntimeError(f"expected dtype {cpp_type_name(dst.dtype)} for `end` but got dtype "
                           f"{cpp_type_name(end.dtype)}")
    w = dst.dtype.type(weight)
    diff = end - dst
    if dst.dtype not in FUSED_DTYPES:
        dst[...] = dst + w * diff if abs(w) < 0.5 else end - diff * (1 - w)
        return dst
    factor, addend = (w, dst) if abs(w) < 0.5 else (w - dst.dtype.type(1), end)
    if fma_into_blocks(diff, factor, addend, dst) is None:
        dst[...] = fma(factor, diff, addend)
    return dst


def addcmul_(dst: np.ndarray, t1: np.ndarray, t2: np.ndarray, value: float) -> np.ndarray:
    """``dst.addcmul_(t1, t2, value=value)``: ``fma(value * t1, t2, dst)``."""
    if t1.shape != dst.shape or t2.shape != dst.shape:
        refuse_unfit(dst, t1, t2)
    v = dst.dtype.type(value)
    if dst.dtype not in FUSED_DTYPES:
        dst[...] = dst + v * t1 * t2
        return dst
    scaled = t1 if v == 1 else v * t1  # (times one: the same floats, NaN signs included)
    if fma_into_blocks(scaled, t2, dst, dst) is None:
        dst[...] = fma(scaled, t2, dst)
    return dst


def refuse_unfit(dst: np.ndarray | None, *operands: np.ndarray) -> None:
    """PyTorch's error for an op on operands whose shapes do not fit: "The size of tensor a ..." where they do not
    broadcast (tensor a is ``dst`` for an in-place op, else the first operand), then, for an in-place op,
    "output with shape ..." where their broadcast shape is not ``dst``'s. Returns where PyTorch's op runs."""
    shapes = [np.shape(x) for x in (operands if dst is None else (dst, *operands))]
    error = broadcast_mismatch(shapes)
    if error is not None:
        raise error
    if dst is not None:
        broadcast = np.broadcast_shapes(*shapes)
        if broadcast != dst.shape:
            raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                               f"{list(broadcast)}")

