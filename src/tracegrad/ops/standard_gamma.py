"""Reparameterised gamma sampling: ``_standard_gamma`` (records ``StandardGammaBackward0``), its pathwise
derivative ``_standard_gamma_grad``, ``_sample_dirichlet`` and its pathwise derivative ``_dirichlet_grad``, the
samplers under ``tracegrad.distributions``.

The draws are torch's: ATen's ``sample_gamma`` on torch's CPU stream (``_torch_rng``). The gradient
d sample / d alpha at fixed uniform noise is ATen's ``standard_gamma_grad_one``: a Taylor series of the
incomplete gamma function for small x, Rice's saddle-point expansion for large alpha, and otherwise the same
bivariate rational approximation, evaluated in float64 and rounded to the input's dtype. ``_dirichlet_grad``
is ATen's ``dirichlet_grad_one`` (the Beta marginal's -(d cdf / d alpha) / pdf / (1 - x)) with the same
branches: Taylor series near x = 0 and x = 1, a saddle-point expansion when alpha and beta are both large and
otherwise a rational correction of an analytic approximation (all in float64; ATen keeps the Taylor branches
in the input dtype, so float32 results may differ in the last bits).
"""

from __future__ import annotations

import numpy as np

from .._factories import _rng
from .gamma import _digamma
from .random_ops import _require_float
from .registry import defop, defop_without_derivative, not_implemented

# coefficients of ATen's rational approximation in (u, v) = (log(x / alpha), log(alpha))
_COEF_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
     -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07],
])


def _gamma_sample(alpha: np.ndarray, generator) -> np.ndarray:
    """torch's ``_s_gamma_cpu`` draws (float arithmetic on alpha for float32), clamped to the smallest normal."""
    single = alpha.dtype == np.float32
    return _rng(generator).standard_gamma(alpha, single).astype(alpha.dtype)


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
    # ATen draws the gammas in double whatever the dtype, then normalises and clamps in the input's dtype
    gammas = _rng(generator).standard_gamma(a.astype(np.float64), single=False)
    ratios = (gammas / _last_dim_sum(gammas)).astype(a.dtype)
    low, high = np.finfo(a.dtype).tiny, np.nextafter(a.dtype.type(1), a.dtype.type(0))
    return np.minimum(high, np.where(ratios > low, ratios, low))  # std::max(tiny, NaN) is tiny


def _last_dim_sum(x: np.ndarray, lanes: int = 4) -> np.ndarray:
    """torch's CPU sum over a contiguous last dim, in SumKernel's ``vectorized_inner_sum`` order: vectors of
    ``lanes`` doubles (4 in torch 2.13 here, measured) summed in 4 interleaved accumulators, then the tail, then
    the lanes. Rows of 256 or more enter its multi-level cascade; NumPy's sum stands in (last bit may differ)."""
    if x.ndim == 0:  # a 0-d tensor's dim -1 is itself
        return x
    size = x.shape[-1]
    vectors = size // lanes
    if vectors >= 64:
        return x.sum(axis=-1, keepdims=True)
    blocks = x[..., :vectors * lanes].reshape(*x.shape[:-1], vectors, lanes)
    partial = [np.zeros(x.shape[:-1] + (lanes,)) for _ in range(4)]
    for i in range(vectors // 4 * 4):
        partial[i % 4] = partial[i % 4] + blocks[..., i, :]
    for i in range(vectors // 4 * 4, vectors):
        partial[0] = partial[0] + blocks[..., i, :]
    total = partial[0] + partial[1] + partial[2] + partial[3]
    result = np.zeros(x.shape[:-1])
    for column in [x[..., j] for j in range(vectors * lanes, size)] + [total[..., k] for k in range(lanes)]:
        result = result + column
    return result[..., None]


_sample_dirichlet = defop("_sample_dirichlet(Tensor self, Generator? generator=None) -> Tensor",
                          _sample_dirichlet_kernel, vjp=not_implemented("_sample_dirichlet"))

# ATen's c[2][3][3][4]: numerator (0) and denominator (1) coefficients in (u, a, b) = (log x, log(alpha / x),
# log(total) - a), indexed [num/den][power of u][power of a][power of b]
_COEF_DIRICHLET = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]],
])


def _beta_grad_alpha_small(x: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    # Taylor expansion of d/d alpha of the Beta(alpha, beta) cdf around x = 0
    factor = _digamma(alpha) - _digamma(alpha + beta) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_beta_small(x: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    # Taylor expansion of d/d beta of the Beta(alpha, beta) cdf around x = 0
    factor = _digamma(alpha + beta) - _digamma(beta)
    numer, betas, dbetas = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    # Rice saddle-point expansion for large alpha and beta, with a polynomial near the mean (a singularity)
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    near_value = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (np.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx)
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * np.log(beta / (total * (1 - x))) + alpha * np.log(alpha / (total * x))) ** -1.5
    term1234 = term1 + term2 * (term3 + np.where(x < mean, term4, -term4))
    return np.where(near, near_value, stirling * prefactor * term1234)


def _beta_grad_rational(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    u = np.log(x)
    a = np.log(alpha) - u
    b = (np.log(total) - a)[..., None, None, None]  # against the (num/den, u power, a power) coefficient axes
    c = _COEF_DIRICHLET
    by_b = c[..., 0] + b * (c[..., 1] + b * (c[..., 2] + b * c[..., 3]))
    pow_u = np.stack([np.ones_like(u), u, u * u], -1)
    pow_a = np.stack([np.ones_like(a), a, a * a], -1)
    pq = (by_b * (pow_u[..., :, None] * pow_a[..., None, :])[..., None, :, :]).sum((-2, -1))
    approx = x * (_digamma(total) - _digamma(alpha)) / (total - alpha)
    return pq[..., 0] / pq[..., 1] * approx


def _dirichlet_grad_kernel(x, alpha, total):
    out_dtype = np.result_type(x.dtype, alpha.dtype, total.dtype)
    if not (x.shape == alpha.shape == total.shape):
        raise RuntimeError(f"_dirichlet_grad: expected x, alpha and total to have the same shape, but got "
                           f"{list(x.shape)}, {list(alpha.shape)} and {list(total.shape)}")
    x64, alpha64, total64 = (t.astype(np.float64) for t in (x, alpha, total))
    beta = total64 - alpha64
    boundary = total64 * x64 * (1 - x64)
    with np.errstate(all="ignore"):  # each branch is evaluated everywhere, then selected in ATen's order
        result = np.where(
            (x64 <= 0.5) & (boundary < 2.5), _beta_grad_alpha_small(x64, alpha64, beta),
            np.where((x64 >= 0.5) & (boundary < 0.75), -_beta_grad_beta_small(1 - x64, beta, alpha64),
                     np.where((alpha64 > 6) & (beta > 6), _beta_grad_alpha_mid(x64, alpha64, beta),
                              _beta_grad_rational(x64, alpha64, total64))))
    return result.astype(out_dtype)


# PyTorch declares no derivative at all for it (a torch::autograd::NotImplemented node)
_dirichlet_grad = defop_without_derivative("_dirichlet_grad(Tensor x, Tensor alpha, Tensor total) -> Tensor",
                                           _dirichlet_grad_kernel)

PUBLIC = {"_standard_gamma": _standard_gamma, "_standard_gamma_grad": _standard_gamma_grad,
          "_sample_dirichlet": _sample_dirichlet, "_dirichlet_grad": _dirichlet_grad}
METHODS: dict = {}
