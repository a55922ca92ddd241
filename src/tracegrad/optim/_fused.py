"""The in-place updates PyTorch's optimizers make, with the roundings of its CPU kernels.

``p.add_(g, alpha=a)``, ``m.lerp_(g, w)`` and ``v.addcmul_(g, g, value=c)`` are single fused multiply-adds per
element in PyTorch (its AVX2 kernels), with the scalar rounded to the tensor's dtype first. Written as
``p += a * g`` in NumPy they round twice and drift from PyTorch's parameters in the last bit, step after step.
"""

from __future__ import annotations

import numpy as np

from ..ops.aten_vec import FUSED_DTYPES, fma, fma_into


def add_scaled_(dst: np.ndarray, src: np.ndarray, alpha: float, wide: np.ndarray | None = None) -> np.ndarray:
    """``dst.add_(src, alpha=alpha)`` in place. ``wide`` is an optional float64 scratch array of dst's shape
    for float32 (its product and sum are exact or rounded once there)."""
    if alpha == 1 or dst.dtype not in FUSED_DTYPES:
        dst += src if alpha == 1 else dst.dtype.type(alpha) * src
        return dst
    return fma_into(src, dst.dtype.type(alpha), dst, dst, wide)


def added_scaled(a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    """``a.add(b, alpha=alpha)``: a new array."""
    if alpha == 1 or a.dtype not in FUSED_DTYPES:
        return a + (b if alpha == 1 else a.dtype.type(alpha) * b)
    return fma(b, a.dtype.type(alpha), a)


def lerp_(dst: np.ndarray, end: np.ndarray, weight: float) -> np.ndarray:
    """``dst.lerp_(end, weight)`` for a number weight: ``fma(weight, end - dst, dst)`` below 0.5, else
    ``fma(weight - 1, end - dst, end)``."""
    w = dst.dtype.type(weight)
    diff = end - dst
    if dst.dtype not in FUSED_DTYPES:
        dst[...] = dst + w * diff if abs(w) < 0.5 else end - diff * (1 - w)
    elif abs(w) < 0.5:
        dst[...] = fma(w, diff, dst)
    else:
        dst[...] = fma(w - dst.dtype.type(1), diff, end)
    return dst


def addcmul_(dst: np.ndarray, t1: np.ndarray, t2: np.ndarray, value: float) -> np.ndarray:
    """``dst.addcmul_(t1, t2, value=value)``: ``fma(value * t1, t2, dst)``."""
    v = dst.dtype.type(value)
    dst[...] = fma(v * t1, t2, dst) if dst.dtype in FUSED_DTYPES else dst + v * t1 * t2
    return dst
