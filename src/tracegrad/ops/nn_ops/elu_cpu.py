"""ELU, SELU and CELU on float32 and half as PyTorch's x86 CPU kernel (``elu_kernel``) computes them, bit for bit.

Positive inputs give ``x * scale``, the others ``expm1(x * input_scale) * (alpha * scale)``: Sleef's expm1f in
the vector blocks, glibc's in the scalar loop that finishes each run (``aten_loops``); ``alpha * scale`` is
rounded to float first. Half is computed in float and rounded once, in blocks of twice as many elements.
"""

from __future__ import annotations

import numpy as np

from ..aten_loops import float_kernel
from ..select import select
from .glibc_float_math import exp_float, expm1_float
from .sleef_float import sleef_expf, sleef_expm1f

_F32 = np.float32
_MINUS_ONE = _F32(-1)


def elu_float(x: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    """PyTorch's ``elu(x, alpha, scale, input_scale)`` of a float32 or float16 array, in x's dtype."""
    negative_coef = _F32(alpha) * _F32(scale)
    positive_coef, input_coef = _F32(scale), _F32(input_scale)

    def formula(a: np.ndarray, vector: bool) -> np.ndarray:
        positive = a > 0  # (a <= 0 takes the exponential: NaN too, which comes out NaN either way)
        scaled = a * input_coef
        if vector:  # (the positive lanes' exponential is dropped: -1 spares them Sleef's slow doubtful lanes)
            exp_minus_one = sleef_expm1f(np.where(positive, _MINUS_ONE, scaled))
        else:
            exp_minus_one = expm1_float(scaled)
        return select(positive, a * positive_coef, exp_minus_one * negative_coef)

    return float_kernel(formula, (x,))


def elu_backward_float(g: np.ndarray, x: np.ndarray, alpha: float, scale: float, input_scale: float,
                       is_result: bool) -> np.ndarray:
    """PyTorch's ``elu_backward`` of float32 or float16 arrays (``x``: the input, or the result where
    ``is_result``), left to right: ``g * input_scale * (y + alpha * scale)`` from the result,
    ``g * input_scale * (alpha * scale) * exp(x * input_scale)`` from the input, ``g * scale`` where positive.
    The vector code sends NaN to the first branch, the scalar loop to the last."""
    negative_coef = _F32(alpha) * _F32(scale)
    positive_coef, input_coef = _F32(scale), _F32(input_scale)

    def formula(grad: np.ndarray, b: np.ndarray, vector: bool) -> np.ndarray:
        if is_result:
            negative = grad * input_coef * (b + negative_coef)
        else:
            scaled = b * input_coef
            negative = grad * input_coef * negative_coef * (sleef_expf(scaled) if vector else exp_float(scaled))
        positive = (b > 0) if vector else ~(b <= 0)
        return select(positive, grad * positive_coef, negative)

    return float_kernel(formula, (g, x))
