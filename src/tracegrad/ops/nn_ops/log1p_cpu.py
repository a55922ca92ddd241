"""softplus, Mish and log_sigmoid on float32 and half as PyTorch's x86 CPU kernels compute them, bit for bit.

softplus and Mish are ``cpu_kernel_vec`` kernels built for AVX-512 too: whole blocks of two vectors take Sleef's
expf / log1pf / tanhf (u10), the leftover elements of each run glibc's ``expf`` / ``log1pf`` / ``tanhf``
(``aten_loops``). log_sigmoid's forward is a loop of its own over the contiguous input whose last, partial vector
is loaded partially: every element takes Sleef's functions, and it keeps ``exp(-|x|)`` as the buffer its
backward reads. Half is computed in float and rounded once (its buffer too). NumPy's log1p and exp agreed with
PyTorch's softplus for 71% to 83% of float32 inputs, and with log_sigmoid for 77% to 83%.
"""

from __future__ import annotations

import numpy as np

from ..aten_loops import float_kernel
from ..aten_vec import fma32
from ..select import select
from .glibc_float_math import exp_float, log1p_float, tanh_float
from .sleef_float import sleef_expf, sleef_log1pf, sleef_tanhf

_F32 = np.float32
_ONE = _F32(1)


def _log1p_exp(z: np.ndarray, vector: bool) -> np.ndarray:
    """log1p(exp(z)) in float: Sleef's pair in the vector code, glibc's in the scalar loop."""
    return sleef_log1pf(sleef_expf(z)) if vector else log1p_float(exp_float(z))


def softplus_float(x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    """PyTorch's ``softplus``: x where x * beta > threshold, else log1p(exp(x * beta)) / beta (beta and threshold
    rounded to float)."""
    beta32, threshold32 = _F32(beta), _F32(threshold)

    def formula(a: np.ndarray, vector: bool) -> np.ndarray:
        z = a * beta32
        smooth = _log1p_exp(z, vector)
        smooth /= beta32
        return select(z > threshold32, a, smooth)  # (NaN: the smooth branch, NaN too)

    return float_kernel(formula, (x,))


def softplus_backward_float(g: np.ndarray, x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    """PyTorch's ``softplus_backward``: g where x * beta > threshold, else g * e / (e + 1), e = exp(x * beta),
    left to right."""
    beta32, threshold32 = _F32(beta), _F32(threshold)

    def formula(grad: np.ndarray, a: np.ndarray, vector: bool) -> np.ndarray:
        z = a * beta32
        e = sleef_expf(z) if vector else exp_float(z)
        smooth = grad * e
        e += _ONE
        smooth /= e
        return select(z > threshold32, grad, smooth)

    return float_kernel(formula, (g, x))


def _tanh_softplus(x: np.ndarray, vector: bool) -> np.ndarray:
    e = _log1p_exp(x, vector)
    return sleef_tanhf(e) if vector else tanh_float(e)


def mish_float(x: np.ndarray) -> np.ndarray:
    """PyTorch's ``mish``: x * tanh(log1p(exp(x)))."""
    return float_kernel(lambda a, vector: a * _tanh_softplus(a, vector), (x,))


def _mish_backward(dy: np.ndarray, x: np.ndarray, vector: bool) -> np.ndarray:
    """``dy * (t + x * s * (1 - t * t))`` with t = tanh(softplus(x)), s = 1 / (1 + exp(-x)); the compiler fuses
    ``1 - t * t`` and the sum with ``x * s`` times it into multiply-adds."""
    t = _tanh_softplus(x, vector)
    e = sleef_expf(np.negative(x)) if vector else exp_float(np.negative(x))
    e += _ONE
    s = np.divide(_ONE, e, out=e)
    s *= x
    out = fma32(s, fma32(np.negative(t), t, _ONE), t)
    out *= dy
    return out


def mish_backward_float(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PyTorch's fused ``mish_backward`` of float32 or half arrays, which a plain backward runs."""
    return float_kernel(_mish_backward, (g, x))


def log_sigmoid_float(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's ``log_sigmoid_forward`` of a float32 or half array: ``min(x, 0) - log1p(b)`` and the buffer
    ``b = exp(-|x|)``, all with Sleef's functions (both C-contiguous, x's dtype)."""
    a = np.ascontiguousarray(x, dtype=_F32).reshape(-1)  # (flat: 0-d too, shaped back below)
    with np.errstate(all="ignore"):
        buffer = sleef_expf(np.negative(np.abs(a)))
        out = np.minimum(a, _F32(0))  # (vminps: NaN comes through from x)
        out -= sleef_log1pf(buffer)
    out, buffer = (v.astype(x.dtype, copy=False).reshape(x.shape) for v in (out, buffer))
    return out, buffer


def log_sigmoid_backward_float(g: np.ndarray, x: np.ndarray, buffer: np.ndarray) -> np.ndarray:
    """PyTorch's ``log_sigmoid_backward``: ``(m - s * (b / (1 + b))) * g`` in float with m, s = 1, 1 where x < 0
    and 0, -1 elsewhere (half rounded once at the end). No transcendental: vector and scalar code agree."""
    b = buffer.astype(_F32)
    with np.errstate(all="ignore"):
        ratio = np.divide(b, np.add(b, _ONE), out=b)
        negative = np.asarray(x < 0)
        out = select(negative, _ONE - ratio, ratio)  # (+-1 times the ratio is exact)
        out = np.multiply(out, g, dtype=_F32)
    return np.asarray(out).astype(np.result_type(g, x), copy=False)  # (an array for 0-d operands too)
