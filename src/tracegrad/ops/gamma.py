"""The gamma family: ``lgamma``, ``digamma`` and ``polygamma`` (each the previous one's derivative), without SciPy.

Computed in float64 and rounded to the input's float dtype (integers give the default float dtype):

- lgamma by Python's ``math.lgamma`` element by element;
- digamma as PyTorch's CPU kernel: reflection below 0, the recurrence up to 10, then the asymptotic series;
- polygamma(1) (trigamma) as PyTorch's own short series;
- polygamma(n >= 2) as (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta function summed directly up to x + 10
  and finished by its Euler-Maclaurin expansion (what Cephes' zeta does, which PyTorch calls).
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ._util import reject_complex, to_floating, unsupported
from .registry import defop

_lgamma_scalar = np.vectorize(math.lgamma, otypes=[np.float64])
_PSI_10 = 2.25175258906672110764  # digamma(10)
_DIGAMMA_SERIES = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
                   -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
                   8.33333333333333333333e-2)
# Bernoulli numbers B_2j / (2j)! for the Euler-Maclaurin tail of the Hurwitz zeta function
_ZETA_TAIL = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000,
              1 / 74724249600)


def _as_float64(a: np.ndarray) -> tuple[np.ndarray, np.dtype]:
    x = to_floating(a)
    return x.astype(np.float64), x.dtype


def _lgamma(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    poles = (x <= 0) & (x == np.floor(x))  # (math.lgamma refuses them: lgamma is +inf there)
    regular = np.isfinite(x) & ~poles
    out = np.where(np.isnan(x), np.nan, np.inf)  # lgamma(+-inf) = inf
    if regular.any():
        out[regular] = _lgamma_scalar(x[regular])
    return out


def _digamma(x: np.ndarray) -> np.ndarray:
    x = np.array(x, dtype=np.float64)
    out = np.empty_like(x)
    zero = x == 0
    out[zero] = np.copysign(np.inf, -x[zero])
    negative = (x < 0) & ~zero
    pole = negative & (x == np.trunc(x))
    out[pole] = np.nan
    reflect = negative & ~pole
    if reflect.any():
        xr = x[reflect]
        fraction = np.modf(xr)[0]  # tan(pi r) of the fractional part is the more accurate
        out[reflect] = _digamma(1 - xr) - math.pi / np.tan(math.pi * fraction)
    rest = ~zero & ~negative
    if rest.any():
        out[rest] = _digamma_positive(x[rest])
    return out


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    shift = np.zeros_like(x)
    x = x.copy()
    small = x < 10
    while small.any():
        shift[small] -= 1 / x[small]
        x[small] += 1
        small = x < 10
    z = 1.0 / (x * x)
    series = np.zeros_like(x)
    for coefficient in _DIGAMMA_SERIES:
        series = series * z + coefficient
    asymptotic = np.where(x < 1e17, z * series, 0.0)
    with np.errstate(invalid="ignore"):
        out = shift + np.log(x) - 0.5 / x - asymptotic
    return np.where(x == 10, shift + _PSI_10, out)


def _hurwitz_zeta(s, q: np.ndarray, terms: int = 10) -> np.ndarray:
    """sum_{k>=0} (q + k)^-s for s > 1 (a number or an array broadcasting against q; q a non-positive
    integer: a pole, inf), by Euler-Maclaurin: direct terms until q + k >= ``terms``, then the tail."""
    q = np.asarray(q, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    s, q = np.broadcast_arrays(s, q)
    finite = np.isfinite(q)
    pole = finite & (q <= 0) & (q == np.floor(q))
    special = np.where(q == -np.inf, np.inf, np.nan)  # torch's values at +-inf: NaN and an infinity
    q = np.where(finite, q, 1.0)
    start = np.where(q < terms, terms - np.floor(q), 0)  # direct terms until q + k >= terms
    total = np.zeros_like(q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for k in range(int(start.max()) if start.size else 0):
            active = k < start
            total = total + np.where(active, np.power(q + k, -s), 0.0)
        a = q + start
        total = total + np.power(a, 1.0 - s) / (s - 1) + 0.5 * np.power(a, -s)
        rising = s.copy()  # s (s + 1) ... (s + 2j - 2), times a^-(s + 2j - 1)
        power = np.power(a, -s - 1)
        for j, coefficient in enumerate(_ZETA_TAIL):
            total = total + coefficient * rising * power
            rising = rising * (s + 2 * j + 1) * (s + 2 * j + 2)
            power = power / (a * a)
    return np.where(pole, np.inf, np.where(finite, total, special))


def _trigamma(x: np.ndarray, dtype) -> np.ndarray:
    """PyTorch's trigamma, in the result's own precision as its kernel: reflection below 1/2, six recurrence
    steps, then a short asymptotic series (the Hurwitz route below is more accurate, but this is torch's)."""
    x = np.array(x, dtype=dtype)
    one, pi = dtype.type(1), dtype.type(math.pi)
    result = np.zeros_like(x)
    with np.errstate(all="ignore"):
        low = x < 0.5
        sin_pi_x = np.sin(pi * x)
        result = np.where(low, result - (pi * pi) / (sin_pi_x * sin_pi_x), result)
        sign = np.where(low, -one, one)
        x = np.where(low, one - x, x)
        for _ in range(6):
            result = result + one / (x * x)
            x = x + one
        ixx = one / (x * x)
        tail = ixx * (dtype.type(1 / 6) - ixx * (dtype.type(1 / 30) - ixx * dtype.type(1 / 42)))
        result = result + (one + one / (dtype.type(2) * x) + tail) / x
    return sign * result


def _polygamma(n: int, x: np.ndarray, dtype=np.dtype(np.float64)) -> np.ndarray:
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x, dtype)
    sign = 1.0 if n % 2 else -1.0
    return sign * math.factorial(n) * _hurwitz_zeta(n + 1, x)


def _lgamma_kernel(a):
    x, dt = _as_float64(a)
    with np.errstate(over="ignore"):
        return _lgamma(x).astype(dt)


def _digamma_kernel(a):
    x, dt = _as_float64(a)
    with np.errstate(over="ignore"):
        return _digamma(x).astype(dt)


def _polygamma_kernel(n, a):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if a.dtype.kind == "c":  # (PyTorch dispatches n = 0 and 1 to its digamma and trigamma kernels)
        raise unsupported({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), a.dtype)
    x, dt = _as_float64(a)
    compute = np.dtype(np.float32) if dt.itemsize < 4 else dt  # (half precision is computed in float32)
    with np.errstate(over="ignore"):
        return _polygamma(n, x, compute).astype(dt)


def _lgamma_vjp(ctx, g):
    from .pointwise import mul

    (x,) = ctx.saved_tensors
    return mul(g, digamma(x))


def _digamma_vjp(ctx, g):
    from .pointwise import mul

    (x,) = ctx.saved_tensors
    return mul(g, polygamma(1, x))


def _polygamma_vjp(ctx, g):
    from .pointwise import mul

    (x,) = ctx.saved_tensors
    (n,) = ctx.attrs
    return mul(g, polygamma(n + 1, x))


lgamma = defop("lgamma(Tensor self) -> Tensor", reject_complex(_lgamma_kernel, "lgamma_vml_cpu"), vjp=_lgamma_vjp,
               saves=("self",))
digamma = defop("digamma(Tensor self) -> Tensor", reject_complex(_digamma_kernel, "digamma"), vjp=_digamma_vjp,
                saves=("self",))
polygamma = defop("polygamma(int n, Tensor self) -> Tensor", _polygamma_kernel, vjp=_polygamma_vjp,
                  saves=("self",), attrs=("n",))


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


PUBLIC = {"lgamma": lgamma, "digamma": digamma, "polygamma": polygamma}
METHODS = {"lgamma": lgamma, "digamma": digamma, "polygamma": _polygamma_method}
