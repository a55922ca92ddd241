"""``sinh``, ``cosh``, ``exp2``, ``atan2``, ``logaddexp`` and ``logaddexp2`` on float32 and half as PyTorch's x86 CPU
kernels compute them, bit for bit.

All are ``cpu_kernel_vec`` kernels built for AVX-512 too: whole blocks of two vectors take Sleef's
``sinhf_u10`` / ``coshf_u10`` / ``exp2f_u10`` / ``atan2f_u10`` (``sleef_exp2_hyperbolic_atan2``), the leftover
elements of each run glibc's ``sinhf`` / ``coshf`` / ``exp2f`` / ``atan2f`` (``glibc_exp2_hyperbolic_atan2``); see
``aten_loops``. NumPy's functions agree with neither for some 10% to 40% of float32 inputs. Half is computed in
float and rounded once (its vector code widens each ``Vectorized<Half>`` to two float vectors, its scalar code casts
to float), in blocks of twice as many elements.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..aten_loops import float_kernel
from ..aten_vec import fma32
from .glibc_exp2_hyperbolic_atan2 import atan2_float, cosh_float, exp2_float, sinh_float
from .glibc_float_math import exp_float, log1p_float
from .sleef_exp2_hyperbolic_atan2 import sleef_atan2f, sleef_coshf, sleef_exp2f, sleef_sinhf
from .sleef_float import sleef_expf, sleef_log1pf

_F32 = np.float32


def _unary(x: np.ndarray, vector_fn: Callable, scalar_fn: Callable) -> np.ndarray:
    return float_kernel(lambda a, vector: (vector_fn if vector else scalar_fn)(a), (x,))


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
    return float_kernel(lambda a, b, vector: (sleef_atan2f if vector else atan2_float)(a, b), (y, x))


_INV_LN2 = _F32(1 / np.log(2.0))


def _log_add(a: np.ndarray, b: np.ndarray, vector: bool, base_two: bool) -> np.ndarray:
    """``max(a, b) + log1p(exp(-|a - b|))`` (base two: ``exp2`` and the log1p times 1/ln 2, fused into the sum),
    with Sleef's functions in the vector code and glibc's in the scalar loop; ``a`` where both are one infinity."""
    m = np.maximum(a, b) if vector else np.where(a < b, b, a)  # (std::max: NaN from the log1p term anyway)
    t = np.negative(np.abs(a - b))
    if base_two:
        e = sleef_exp2f(t) if vector else exp2_float(t)
        out = fma32(sleef_log1pf(e) if vector else log1p_float(e), _INV_LN2, m)
    else:
        e = sleef_expf(t) if vector else exp_float(t)
        out = m + (sleef_log1pf(e) if vector else log1p_float(e))
    return np.where((a == b) & (np.abs(a) == np.inf), a, out)


def _log_add_cpu(a: np.ndarray, b: np.ndarray, base_two: bool) -> np.ndarray:
    return float_kernel(lambda x, y, vector: _log_add(x, y, vector, base_two), (a, b))


def logaddexp_cpu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's ``logaddexp`` of float32 or float16 arrays of one dtype (broadcast together)."""
    return _log_add_cpu(a, b, base_two=False)


def logaddexp2_cpu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's ``logaddexp2`` of float32 or float16 arrays of one dtype (broadcast together)."""
    return _log_add_cpu(a, b, base_two=True)
