"""Reparameterised gamma sampling: ``_standard_gamma`` (records ``StandardGammaBackward0``), its pathwise
derivative ``_standard_gamma_grad`` and ``_sample_dirichlet``, the samplers under ``tracegrad.distributions``.

The draws come from tracegrad's generator (NumPy's gamma sampler; PyTorch's stream differs). The gradient
d sample / d alpha at fixed uniform noise is ATen's ``standard_gamma_grad_one``: a Taylor series of the
incomplete gamma function for small x, Rice's saddle-point expansion for large alpha, and otherwise the same
bivariate rational approximation, evaluated in float64 and rounded to the input's dtype.
"""

from __future__ import annotations

import numpy as np

from .._factories import _rng
from .gamma import _digamma
from .random_ops import _require_float
from .registry import defop, not_implemented

# coefficients of ATen's rational approximation in (u, v) = (log(x / alpha), log(alpha))
_COEF_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
     -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07],
])


def _gamma_sample(alpha: np.ndarray, generator) -> np.ndarray:
    # PyTorch clamps draws to the dtype's smallest normal number, so log(sample) stays finite
    tiny = np.finfo(alpha.dtype).tiny
    draws = _rng(generator).standard_gamma(np.maximum(alpha.astype(np.float64), 0.0))
    return np.maximum(draws, tiny).astype(alpha.dtype)


def _standard_gamma_kernel(a, generator=None):
    _require_float(a, "gamma_cpu")
    return _gamma_sample(a, generator)


def _grad_small_x(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    numer, denom = np.ones_like(x), alpha.copy()
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x ** alpha
    gamma_pdf = x ** (alpha - 1) * np.exp(-x)
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (np.log(x) - _digamma(alpha)) * gamma_cdf - pow_x_alpha * series2
    result = -gamma_cdf_alpha / gamma_pdf
    return np.where(np.isnan(result), 0.0, result)


def _grad_large_alpha(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    near = (0.9 * alpha <= x) & (x <= 1.1 * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = 1440 * alpha * alpha + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
    near_value = numer_1 * numer_2 / (1244160 * alpha ** 4)
    denom = np.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = (x - alpha - alpha * np.log(x / alpha)) ** -1.5
    term23 = np.where(x < alpha, term2 - term3, term2 + term3)
    term1 = np.log(x / alpha) * term23 - np.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    return np.where(near, near_value, -stirling * x * term1 / denom)


def _grad_rational(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    u, v = np.log(x / alpha)[..., None], np.log(alpha)
    c = _COEF_UV[0] + u * (_COEF_UV[1] + u * _COEF_UV[2])
    p = c[..., 0] + v * (c[..., 1] + v * (c[..., 2] + v * c[..., 3]))
    q = c[..., 4] + v * (c[..., 5] + v * (c[..., 6] + v * c[..., 7]))
    return np.exp(p / q)


def _standard_gamma_grad_kernel(self, output):
    out_dtype = np.result_type(self.dtype, output.dtype)
    alpha, x = np.broadcast_arrays(self.astype(np.float64), output.astype(np.float64))
    with np.errstate(all="ignore"):  # each branch is evaluated everywhere, then selected
        result = np.where(x < 0.8, _grad_small_x(alpha, x),
                          np.where(alpha > 8.0, _grad_large_alpha(alpha, x), _grad_rational(alpha, x)))
    return result.astype(out_dtype)


_standard_gamma_grad = defop("_standard_gamma_grad(Tensor self, Tensor output) -> Tensor",
                             _standard_gamma_grad_kernel, vjp=not_implemented("_standard_gamma_grad"))


def _standard_gamma_vjp(ctx, g):
    alpha, result = ctx.saved_tensors
    return g * _standard_gamma_grad(alpha, result)


_standard_gamma = defop("_standard_gamma(Tensor self, Generator? generator=None) -> Tensor",
                        _standard_gamma_kernel, vjp=_standard_gamma_vjp, saves=("self", "result"))


def _sample_dirichlet_kernel(a, generator=None):
    _require_float(a, "_sample_dirichlet")
    gammas = _gamma_sample(a, generator).astype(np.float64)
    total = gammas.sum(axis=-1, keepdims=True)
    tiny = np.finfo(a.dtype).tiny
    return np.clip(gammas / total, tiny, 1 - np.finfo(a.dtype).eps).astype(a.dtype)


_sample_dirichlet = defop("_sample_dirichlet(Tensor self, Generator? generator=None) -> Tensor",
                          _sample_dirichlet_kernel, vjp=not_implemented("_sample_dirichlet"))

PUBLIC = {"_standard_gamma": _standard_gamma, "_standard_gamma_grad": _standard_gamma_grad,
          "_sample_dirichlet": _sample_dirichlet}
METHODS: dict = {}
