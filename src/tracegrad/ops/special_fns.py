"""``torch.special``'s own functions (the namespace itself, with its aliases, is ``tracegrad/special.py``).

Without SciPy, each is computed in float64 from series and expansions whose error is below 1e-15 and rounded
to the input's floating dtype:

- ``ndtr`` as PyTorch's (1 + erf(x / sqrt 2)) / 2, ``log_ndtr`` through ``erfcx`` in the lower tail, as
  PyTorch's kernel, so it stays finite far below -38;
- ``ndtri`` by Newton's method on ``log_ndtr`` started from ``erfinv`` (exact in both tails);
- ``erfcx`` as exp(x^2) erfc(x) up to 25 and its asymptotic series beyond;
- the modified Bessel functions ``i0``/``i1`` (and the scaled ``i0e``/``i1e``) by their power series up to 30
  and by Hankel's asymptotic expansion beyond (both converge fast there: no cancellation, no overflow);
- the Hurwitz ``zeta(x, q)`` by the Euler-Maclaurin sum of the gamma family.

Every rule is PyTorch's (derivatives.yaml), written in dispatched operators so it is differentiable again.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ._util import reject_complex, to_floating, unsupported
from .binary import pow
from .gamma import _hurwitz_zeta, _lgamma, digamma
from .pointwise import add, exp, gt, log, mul, neg, sub, where
from .registry import defop, not_implemented
from .scalar_overloads import add_scalar, div_scalar, mul_scalar, sub_scalar
from .unary import _pair, abs, call, erf, np_erfc, np_erfinv, reciprocal, sgn

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _in_float64(fn):
    """A kernel evaluating ``fn`` on a float64 copy and returning the input's floating dtype."""

    def kernel(a):
        x = to_floating(a)
        with np.errstate(all="ignore"):
            return np.asarray(fn(x.astype(np.float64))).astype(x.dtype)

    return kernel


# ---- error-function family ---------------------------------------------------------------------------------


def _erfcx(x: np.ndarray) -> np.ndarray:
    """exp(x^2) erfc(x)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    big = x >= 25.0  # erfc underflows past ~26.5: 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k
    inv2x2 = 1.0 / (2.0 * x[big] ** 2)
    term, series = np.ones_like(inv2x2), np.ones_like(inv2x2)
    for k in range(1, 12):
        term = -term * (2 * k - 1) * inv2x2
        series += term
    out[big] = series / (x[big] * math.sqrt(math.pi))
    rest = ~big
    xr = x[rest]
    # for negative x, erfc(x) = 2 - erfc(-x) is exact in double: exp(x^2) erfc(x) overflows to inf below -26.6
    out[rest] = np.exp(xr * xr) * np_erfc(xr)
    return out


def _log_ndtr(x: np.ndarray) -> np.ndarray:
    """PyTorch's split: log(erfcx(-x/sqrt2) / 2) - x^2/2 below -1 (no underflow), log1p(-erfc(x/sqrt2)/2) above."""
    t = x * _SQRT_HALF
    low = x < -1.0
    out = np.empty_like(x)
    out[low] = np.log(_erfcx(-t[low]) / 2.0) - t[low] * t[low]
    out[~low] = np.log1p(-np_erfc(t[~low]) / 2.0)
    return out


def _ndtri(p: np.ndarray) -> np.ndarray:
    """The standard normal quantile: solve log_ndtr(x) = log(min(p, 1 - p)) by Newton steps in log space."""
    p = np.asarray(p, dtype=np.float64)
    lower = np.minimum(p, 1.0 - p)  # the lower-tail probability, x <= 0 solved, then mirrored for p > 1/2
    inside = (lower > 0) & (p < 1)
    target = np.log(np.where(inside, lower, 0.5))
    # start: erfinv where 2p - 1 is representable, else the tail asymptote sqrt(-2 log p)
    x = np.where(lower > 1e-10, np.sqrt(2.0) * np_erfinv(2.0 * np.where(inside, lower, 0.5) - 1.0),
                 -np.sqrt(-2.0 * target - np.log(-2.0 * target) - math.log(2.0 * math.pi)))
    for _ in range(8):  # quadratic convergence from a start within a few percent
        log_cdf = _log_ndtr(x)
        slope = np.exp(-0.5 * x * x - log_cdf) / _SQRT_2PI  # d log_ndtr / dx
        x = x - (log_cdf - target) / slope
    x = np.where(p > 0.5, -x, x)
    x = np.where(p == 0, -np.inf, np.where(p == 1, np.inf, x))
    return np.where((p < 0) | (p > 1) | np.isnan(p), np.nan, x)


def _entr(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        inner = np.where(x > 0, -x * np.log(x), np.where(x == 0, 0.0, -np.inf))
    return np.where(np.isnan(x), x, inner)


# (the rules below use PyTorch's operators, numbers through the Scalar overloads, so that a gradient's graph
# under create_graph has PyTorch's nodes)


def _entr_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    return mul(g, neg(add_scalar(log(x), 1)))  # grad * -(1 + log(self))


def _log_ndtr_vjp(ctx, g):
    x, result = ctx.saved_tensors
    # grad / sqrt(2 pi) * exp(-(result + x^2 / 2))
    return mul(div_scalar(g, _SQRT_2PI), exp(neg(add(result, div_scalar(pow(x, 2), 2)))))


def _ndtri_vjp(ctx, g):
    (result,) = ctx.saved_tensors
    return mul(mul_scalar(g, _SQRT_2PI), exp(div_scalar(pow(result, 2), 2)))  # (square() is pow(2) in torch)


def _erfcx_vjp(ctx, g):
    x, result = ctx.saved_tensors
    return mul(sub_scalar(mul(mul_scalar(x, 2.0), result), _TWO_OVER_SQRT_PI), g)


def _special_unary(name: str, fn, vjp, saves: tuple[str, ...], node_name: str | None = None):
    op = defop(f"special_{name}(Tensor self) -> Tensor", reject_complex(_in_float64(fn), f"{name}_cpu"), vjp=vjp,
               saves=saves, node_name=node_name)
    op.elementwise_jvp = True
    return op


def ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``torch.special.ndtr``, composed as PyTorch's: (1 + erf(x / sqrt 2)) / 2 (so 0 below about -8.3)."""
    if out is None:
        return mul_scalar(add_scalar(erf(mul_scalar(input, _SQRT_HALF)), 1), 0.5)
    from .variants import copy_out

    copy_out((ndtr(input),), (out,))
    return out


entr = _special_unary("entr", _entr, _entr_vjp, ("self",))
log_ndtr = _special_unary("log_ndtr", _log_ndtr, _log_ndtr_vjp, ("self", "result"))
ndtri = _special_unary("ndtri", _ndtri, _ndtri_vjp, ("result",))
erfcx = _special_unary("erfcx", _erfcx, _erfcx_vjp, ("self", "result"))


# ---- modified Bessel functions of the first kind -----------------------------------------------------------

_SERIES_LIMIT = 30.0  # |x| below: power series (about 90 terms); above: Hankel's expansion (about 20 terms)


def _bessel_i_scaled(order: int, x: np.ndarray) -> np.ndarray:
    """exp(-|x|) I_order(|x|) for order 0 or 1 (the sign of odd orders is applied by the caller)."""
    ax = np.abs(np.asarray(x, dtype=np.float64))
    out = np.empty_like(ax)
    small = ax < _SERIES_LIMIT
    a = ax[small]
    q = a * a / 4.0  # I_n(a) = (a/2)^n sum_k q^k / (k! (k+n)!)
    term = np.full_like(a, 1.0 / math.factorial(order))
    total = term.copy()
    for k in range(1, 120):
        term = term * q / (k * (k + order))
        total += term
    out[small] = total * (a / 2.0) ** order * np.exp(-a)
    b = ax[~small]  # I_n(b) e^-b ~ 1/sqrt(2 pi b) sum_k (-1)^k prod_{j<=k} (4n^2 - (2j-1)^2) / (k! (8b)^k)
    mu = 4.0 * order * order
    term = np.ones_like(b)
    total = term.copy()
    for k in range(1, 30):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * b)
        total += term
    out[~small] = total / np.sqrt(2.0 * math.pi * b)
    return np.where(np.isnan(x), np.nan, out)


def _i0e(x):
    return _bessel_i_scaled(0, x)


def _i1e(x):
    return np.sign(x) * _bessel_i_scaled(1, x)


def _i0(x):
    return _bessel_i_scaled(0, x) * np.exp(np.abs(x))  # (at ±inf 0 * inf: NaN, as PyTorch's)


def _i1(x):
    return _i1e(x) * np.exp(np.abs(x))


def _i0_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    return mul(g, i1(x))


def _i0e_vjp(ctx, g):
    x, result = ctx.saved_tensors
    return mul(g, sub(i1e(x), mul(sgn(x), result)))


def _i1_like_vjp(scaled: bool):
    """PyTorch's i1_backward / i1e_backward: i0(x) - i1(x) / x (minus sgn(x) i1e(x) when scaled), with its
    limit 1/2 where |x| is below the dtype's epsilon (the quotient would be 0 / 0)."""

    def vjp(ctx, g):
        x, result = ctx.saved_tensors
        eps = float(np.finfo(x._data.dtype).eps)
        not_tiny = gt(abs(x), eps)
        safe = where(not_tiny, x, eps)
        if scaled:
            slope = sub(i0e(safe), mul(result, add(sgn(safe), reciprocal(safe))))
        else:
            slope = sub(i0(safe), mul(result, reciprocal(safe)))
        return mul(g, where(not_tiny, slope, 0.5))

    return vjp


i0, i0_ = _pair("i0", reject_complex(_in_float64(_i0), "i0_vml_cpu"), _i0_vjp, ("self",))
i0e = _special_unary("i0e", _i0e, _i0e_vjp, ("self", "result"), node_name="SpecialI0EBackward0")
i1 = _special_unary("i1", _i1, _i1_like_vjp(False), ("self", "result"))
i1e = _special_unary("i1e", _i1e, _i1_like_vjp(True), ("self", "result"), node_name="SpecialI1EBackward0")


# ---- Hurwitz zeta and the multivariate log-gamma -----------------------------------------------------------


def _zeta_kernel(s, q):
    from ._util import binary_dtype, default_float

    dt = binary_dtype(s, q)
    if dt.kind not in "f":
        dt = default_float()
    s64, q64 = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(q, dtype=np.float64))
    with np.errstate(all="ignore"):
        out = _hurwitz_zeta(s64, q64)
        # Cephes' domain, as PyTorch's kernel: s == 1 a pole, s < 1 undefined; q <= 0 non-integer needs an
        # integer s (q^-s is not real otherwise)
        out = np.where(s64 == 1, np.inf, np.where(s64 < 1, np.nan, out))
        out = np.where((q64 <= 0) & (q64 != np.floor(q64)) & (s64 != np.floor(s64)), np.nan, out)
    return np.asarray(out, dtype=dt)


def _zeta_vjp(ctx, g):
    s, q = ctx.saved_tensors
    if ctx.needs_input_grad[0]:
        not_implemented("zeta")(ctx, g)
    return None, mul(g, mul(neg(s), zeta(add_scalar(s, 1.0), q)))  # grad * -self * zeta(self + 1, other)


def _zeta_number_s_vjp(ctx, g):
    (q,) = ctx.saved_tensors
    (s,) = ctx.attrs
    return mul(mul_scalar(g, -s), zeta(s + 1.0, q))


_zeta_cpu = reject_complex(_zeta_kernel, "zeta_cpu")
_zeta = defop("special_zeta(Tensor self, Tensor other) -> Tensor", _zeta_cpu, vjp=_zeta_vjp,
              saves=("self", "other"))
_zeta_number_s = defop("special_zeta.self_scalar(Scalar self, Tensor other) -> Tensor", _zeta_cpu,
                       vjp=_zeta_number_s_vjp, saves=("other",), attrs=("self",), node_name="SpecialZetaBackward1")
_zeta_number_q = defop("special_zeta.other_scalar(Tensor self, Scalar other) -> Tensor", _zeta_cpu,
                       vjp=not_implemented("zeta"), node_name="SpecialZetaBackward2")


def zeta(input, other, *, out: Tensor | None = None) -> Tensor:
    """``torch.special.zeta``: the Hurwitz zeta function sum_k (other + k)^-input (a number may take either
    place, as a wrapped number that does not promote)."""
    if not isinstance(input, Tensor):
        return call(_zeta_number_s, out, input, other)
    return call(_zeta if isinstance(other, Tensor) else _zeta_number_q, out, input, other)


def _mvlgamma_check(x: np.ndarray, p: int) -> None:
    # (PyTorch 2.13 no longer refuses elements <= (p - 1) / 2: lgamma's poles make them inf)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def _mvlgamma_offsets(p: int) -> np.ndarray:
    return np.arange(-p * 0.5 + 0.5, 0.5, 0.5)  # (1 - p)/2, ..., 0


def _mvlgamma_kernel(a, p):
    x = to_floating(a)
    _mvlgamma_check(x, p)
    if x.dtype.kind == "c":  # (PyTorch's composite fails building its offsets, arange in the input's dtype)
        raise unsupported("arange_cpu", x.dtype)
    args = x.astype(np.float64)[..., None] + _mvlgamma_offsets(p)
    total = _lgamma(args).sum(-1) + p * (p - 1) * math.log(math.pi) / 4
    return np.asarray(total, dtype=x.dtype)


def _mvlgamma_vjp(ctx, g):
    """PyTorch's mvlgamma_backward: grad * sum_j digamma(self + offset_j)."""
    from .reductions_extra import _const
    from .reductions_extra import sum as sum_dims
    from .views import unsqueeze

    (x,) = ctx.saved_tensors
    (p,) = ctx.attrs
    args = add(_const(_mvlgamma_offsets(p).astype(x._data.dtype)), unsqueeze(x, -1))
    return mul(g, sum_dims(digamma(args), -1))


mvlgamma = defop("mvlgamma(Tensor self, int p) -> Tensor", _mvlgamma_kernel, vjp=_mvlgamma_vjp, saves=("self",),
                 attrs=("p",))


def multigammaln(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    return call(mvlgamma, out, input, p)


PUBLIC = {"i0": i0, "mvlgamma": mvlgamma}
METHODS = {"i0": i0, "i0_": i0_, "mvlgamma": mvlgamma}
