"""``sinh``, ``cosh``, ``exp2`` and ``atan2`` on float32 and half as PyTorch's x86 CPU kernels compute them, bit for
bit.

All four are ``cpu_kernel_vec`` kernels built for AVX-512 too: whole blocks of two vectors take Sleef's
``sinhf_u10`` / ``coshf_u10`` / ``exp2f_u10`` / ``atan2f_u10`` (``sleef_exp2_hyperbolic_atan2``), the leftover
elements of each run glibc's ``sinhf`` / ``coshf`` / ``exp2f`` / ``atan2f`` (``glibc_exp2_hyperbolic_atan2``); see
``aten_loops``. NumPy's functions agree with neither for some 10% to 40% of float32 inputs. Half is computed in
float and rounded once (its vector code widens each ``Vectorized<Half>`` to two float vectors, its scalar code casts
to float), in blocks of twice as many elements.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..aten_loops import loop_block, vector_and_scalar
from .glibc_exp2_hyperbolic_atan2 import atan2_float, cosh_float, exp2_float, sinh_float
from .sleef_exp2_hyperbolic_atan2 import sleef_atan2f, sleef_coshf, sleef_exp2f, sleef_sinhf

_F32 = np.float32


def _unary(x: np.ndarray, vector_fn: Callable, scalar_fn: Callable) -> np.ndarray:
    def formula(a: np.ndarray, vector: bool) -> np.ndarray:
        a32 = a.astype(_F32, copy=False)
        return (vector_fn if vector else scalar_fn)(a32).astype(x.dtype, copy=False)

    with np.errstate(all="ignore"):  # (inf and NaN come out as in the C kernels, silently)
        return vector_and_scalar(formula, (x,), loop_block(x.dtype, also_avx512=True))


def sinh_cpu(x: np.ndarray) -> np.ndarray:
    """PyTorch's ``sinh`` of a float32 or float16 array."""
    return _unary(x, sleef_sinhf, sinh_float)


def cosh_cpu(x: np.ndarray) -> np.ndarray:
    """PyTorch's ``cosh`` of a float32 or float16 array."""
    return _unary(x, sleef_coshf, cosh_float)


def exp2_cpu(x: np.ndarray) -> np.ndarray:
    """PyTorch's ``exp2`` of a float32 or float16 array."""
    return _unary(x, sleef_exp2f, exp2_float)


def atan2_cpu(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PyTorch's ``atan2(y, x)`` of float32 or float16 arrays of one dtype (broadcast together)."""

    def formula(a: np.ndarray, b: np.ndarray, vector: bool) -> np.ndarray:
        a32, b32 = a.astype(_F32, copy=False), b.astype(_F32, copy=False)
        return (sleef_atan2f if vector else atan2_float)(a32, b32).astype(y.dtype, copy=False)

    with np.errstate(all="ignore"):
        return vector_and_scalar(formula, (y, x), loop_block(y.dtype, also_avx512=True))
