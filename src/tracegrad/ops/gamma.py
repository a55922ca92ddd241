"""The gamma family: ``lgamma``, ``digamma`` and ``polygamma`` (each the previous one's derivative), without SciPy.

- lgamma in float64 over whole arrays, rounded to the input's float dtype (integers give the default float
  dtype): the Taylor series of lgamma around 2 on [1.5, 2.5) (reached by Gamma's recurrence from (0, 8)),
  Stirling's series from 8, the reflection formula below 0 -- a few ulps in float64, and in float32 the
  correctly rounded value as before (PyTorch's vector library differs from it on about 1.4% of inputs by 1 ulp);
- digamma as PyTorch's CPU kernel in the input's own dtype (float32 stays float32): reflection below 0, the
  recurrence up to 10, then the asymptotic series (its polynomial with PyTorch's fused multiply-adds);
- polygamma(1) (trigamma) as PyTorch's own short series;
- polygamma(n >= 2) as (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta function summed directly up to x + 10
  and finished by its Euler-Maclaurin expansion (what Cephes' zeta does, which PyTorch calls).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math

import numpy as np

from .._tensor import Tensor
from ._util import reject_complex, to_floating, unsupported
from .aten_vec import fma
from .registry import defop
from .special_bessel import _horner, _libm
from .unary import _HALF_LOG_2PI, _STIRLING

_PSI_10 = 2.25175258906672110764  # digamma(10)
_DIGAMMA_SERIES = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
                   -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
                   8.33333333333333333333e-2)
# (2j)! / B_2j for the Euler-Maclaurin tail of the Hurwitz zeta function, as Cephes writes them
_ZETA_TAIL_DENOMINATORS = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
                           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
                           1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042e-16  # Cephes' machine epsilon (2^-53)


def _as_float64(a: np.ndarray) -> tuple[np.ndarray, np.dtype]:
    x = to_floating(a)
    return x.astype(np.float64), x.dtype


# lgamma(2 + z) = (1 - euler_gamma) z + sum_{k>=2} (-1)^k (zeta(k) - 1) / k z^k, lowest power first: for
# |z| <= 1/2 thirty terms reach 1e-20, and the zero at z = 0 (and the one at z = -1, through lgamma(1 + z) =
# lgamma(2 + z) - log1p(z)) keeps its relative accuracy.
_LGAMMA_AT_2 = (0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
                -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261, 0.0005096695247430425,
                -0.00022315475845357939, 9.945751278180853e-05, -4.492623673813314e-05, 2.050721277567069e-05,
                -9.439488275268397e-06, 4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07,
                -4.492469198764566e-07, 2.1207184805554665e-07, -1.0043224823968099e-07, 4.7698101693639804e-08,
                -2.2711094608943164e-08, 1.0838659214896955e-08, -5.183475041970047e-09, 2.4836745438024785e-09,
                -1.1921401405860912e-09, 5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10,
                -6.4229645638381e-11, 3.1044247747322276e-11)


def _lgamma(x: np.ndarray) -> np.ndarray:
    """log |Gamma(x)| of a float64 array, to a few ulps (vectorised; PyTorch calls its vector math library)."""
    x = np.asarray(x, dtype=np.float64)
    flat = x.reshape(-1)
    out = np.full(flat.shape, np.inf)  # poles (0 and the negative integers) and +-inf
    with np.errstate(all="ignore"):
        positive = np.flatnonzero((flat > 0) & (flat < np.inf))
        negative = np.flatnonzero((flat < 0) & (flat != np.floor(flat)))
        reflected = flat.take(negative)
        # one pass over the positive arguments: x > 0 itself, and the 1 - x that x < 0 reflects to
        values = _lgamma_positive(np.concatenate([flat.take(positive), 1.0 - reflected]))
        out[positive] = values[:positive.size]
        out[negative] = _lgamma_reflected(reflected, values[positive.size:])
    out[np.isnan(flat)] = np.nan
    return out.reshape(x.shape)


def _lgamma_near_2(z: np.ndarray) -> np.ndarray:
    total = np.zeros_like(z)
    for coefficient in reversed(_LGAMMA_AT_2):
        total += coefficient
        total *= z
    return total


def _lgamma_stirling(x: np.ndarray) -> np.ndarray:
    inverse = 1.0 / x
    inverse_square = inverse * inverse
    series = np.zeros_like(x)
    for coefficient in reversed(_STIRLING):
        series *= inverse_square
        series += coefficient
    # (Stirling's 8 terms are below 1e-16 relative from x = 8 on; (x - 1/2) log x overflows first, past
    # 2.556e305, where PyTorch's lgamma turns inf too, slightly before the true value does)
    return (x - 0.5) * np.log(x) - x + _HALF_LOG_2PI + series * inverse


def _lgamma_positive(x: np.ndarray) -> np.ndarray:
    """x > 0: tiny x as -log x; below 1.5 up to [1.5, 2.5) and, from 2.5 to 8, down to it by Gamma(x + 1) =
    x Gamma(x) (every x - j is exact); the series around 2 there; Stirling's series from 8 on."""
    out = np.empty_like(x)
    large = np.flatnonzero(x >= 8.0)
    out[large] = _lgamma_stirling(x.take(large))
    small = np.flatnonzero(~(x >= 8.0))
    xs = x.take(small)
    steps_down = np.clip(np.floor(xs - 1.5), 0, None)  # 0 below 2.5, at most 6
    # the argument of the series around 2, exact: x + 2 - 2 below 0.5, x + 1 - 2 below 1.5, x - steps - 2 above
    z = np.where(xs < 0.5, xs, np.where(xs < 1.5, xs - 1.0, xs - steps_down - 2.0))
    factor = np.ones_like(xs)  # going down: (x - 1)(x - 2)...(x - steps), each factor exact
    for j in range(1, int(steps_down.max(initial=0)) + 1):  # (a factor 1 changes nothing: stop at the most)
        factor *= np.where(steps_down >= j, xs - j, 1.0)
    # going up: Gamma(x) = Gamma(x + 1) / x = Gamma(x + 2) / (x (x + 1)), the logs kept apart for accuracy
    up = np.where(xs < 1.5, np.log(xs), 0.0) + np.where(xs < 0.5, np.log1p(xs), 0.0)
    near = _lgamma_near_2(z) + np.log(factor) - up
    out[small] = np.where(xs < 2.0**-60, -np.log(xs), near)
    return out


def _lgamma_reflected(x: np.ndarray, lgamma_one_minus_x: np.ndarray) -> np.ndarray:
    """x < 0, not an integer: the reflection log(pi / |sin(pi x)|) - lgamma(1 - x), sin(pi x) from the exact
    distance to the nearest integer; tiny |x| as -log|x|."""
    distance = x - np.round(x)
    reflected = np.log(math.pi / np.abs(np.sin(math.pi * distance))) - lgamma_one_minus_x
    return np.where(x > -(2.0**-60), -np.log(-x), reflected)


def _digamma(x: np.ndarray) -> np.ndarray:
    """digamma in float64 (for the gradients of the gamma samplers, which PyTorch computes in double)."""
    return _digamma_in(np.array(x, dtype=np.float64).reshape(-1)).reshape(np.shape(x))


def _digamma_in(x: np.ndarray) -> np.ndarray:
    """PyTorch's calc_digamma in x's own dtype (float32 or float64, a 1-d array): reflection below 0 (its
    pi / tan(pi r) in double, r the fractional part), the recurrence up to 10, then the asymptotic series."""
    dt = x.dtype.type
    negative = np.flatnonzero(x < 0)
    reflected = x.copy()
    reflected[negative] = dt(1) - x.take(negative)
    out = _digamma_positive(reflected)
    if negative.size:
        fraction = np.modf(x.take(negative).astype(np.float64))[0]
        out[negative] -= (math.pi / np.tan(math.pi * fraction)).astype(x.dtype)
    zeros = np.flatnonzero(x == 0)
    out[zeros] = np.copysign(dt(np.inf), -x.take(zeros))
    out[negative[x.take(negative) == np.trunc(x.take(negative))]] = dt(np.nan)
    return out


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    x = x.copy()
    shift, step, below = np.zeros_like(x), np.empty_like(x), (x < dt(10)).astype(x.dtype)
    while below.any():  # at most 11 rounds; an element at or past 10 takes steps of exactly 0 (mask 0.0)
        np.divide(dt(1), x, out=step)
        step *= below
        shift -= step
        x += below
        np.less(x, dt(10), out=below)
    z = dt(1) / (x * x)
    asymptotic = z * _horner(_DIGAMMA_SERIES, z, fused=True)
    asymptotic *= x < dt(1e17)  # (beyond, the series is left out: z is 0 or below, and inf stays inf)
    out = shift + _libm(np.log, x) - dt(0.5) / x - asymptotic
    tens = np.flatnonzero(x == dt(10))
    out[tens] = shift.take(tens) + dt(_PSI_10)
    return out


def _hurwitz_zeta(s, q, dtype=np.dtype(np.float64)) -> np.ndarray:
    """sum_{k>=0} (q + k)^-s as Cephes' ``zeta`` that PyTorch's kernels call with arguments in ``dtype``: the
    same steps and early exits, which decide the value where a term over- or underflows (``zeta(1e300, 1)`` is
    1, ``zeta(inf, 2)`` NaN), in its accumulation type (float64; float32 for half). Returned in float64."""
    s, q = np.broadcast_arrays(np.asarray(s), np.asarray(q))
    shape = s.shape
    s, q = s.astype(dtype).ravel(), q.astype(dtype).ravel()
    out = np.full(s.shape, np.nan)
    undecided = np.ones(s.shape, dtype=bool)

    def settle(where: np.ndarray, value) -> None:
        """Fix the result where ``where`` (a mask, or the indices of undecided elements) holds."""
        chosen = where & undecided if where.dtype == bool else where
        out[chosen] = value[chosen] if isinstance(value, np.ndarray) else value
        undecided[chosen] = False

    with np.errstate(all="ignore"):
        settle(s == 1, np.inf)
        settle(s < 1, np.nan)
        non_positive = q <= 0
        settle(non_positive & (q == np.floor(q)), np.inf)  # a pole
        settle(non_positive & (s != np.floor(s)), np.nan)  # (q + k)^-s is not real
        work = np.dtype(np.float32) if np.dtype(dtype).itemsize < 4 else np.dtype(np.float64)
        total = _c_pow(q, -s, work)  # (the first power in the arguments' own precision)
        s, q = s.astype(work), q.astype(work)
        w, b = _zeta_direct_terms(s, q, total, settle, undecided)
        _zeta_tail(s, w, b, total, settle)
        out[undecided] = total[undecided]
    return out.reshape(shape)


def _c_pow(x: np.ndarray, y: np.ndarray, work: np.dtype) -> np.ndarray:
    """The C library's pow (powf for float32 or half arguments), as Cephes' code calls it, in ``work``."""
    from .nn_ops.glibc_powf import glibc_powf

    if x.dtype.itemsize <= 4:
        return glibc_powf(x, y).astype(work)
    return _glibc_pow(x, y)


def _glibc_pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """glibc's double pow of two arrays of one shape. NumPy's own (a SIMD build) differs from it in some 5% of
    cases, so each element goes through Python's math.pow, which calls the C library's pow; where the power may
    be inf or NaN (math.pow raises there) through ctypes instead."""
    from .nn_ops.glibc_powf import _libm_pow

    out = np.power(x, y)
    safe = np.abs(out) < 1e300
    if safe.all():
        return np.fromiter(map(math.pow, x.tolist(), y.tolist()), np.float64, x.size)
    out[safe] = np.fromiter(map(math.pow, x[safe].tolist(), y[safe].tolist()), np.float64, int(safe.sum()))
    rest = ~safe
    out[rest] = _libm_pow()(x[rest], y[rest]).astype(np.float64)
    return out


def _zeta_direct_terms(s, q, total, settle, undecided) -> tuple[np.ndarray, np.ndarray]:
    """Cephes' zeta after its first term: more terms until q + k > 9 (at least nine), stopping where they no
    longer move the sum (``total`` and ``undecided`` are updated in place). The terms are worked a chunk of
    steps at a time, all their powers in one call. Returns the last base and term of each element."""
    a, b, done = q.copy(), np.zeros_like(q), 0
    while True:
        going = np.flatnonzero(undecided & ((done < 9) | (a <= 9.0)))
        if not going.size:
            return a, b
        steps = 9 - done if done < 9 else _steps_to_nine(a[going])
        bases, powers, active = _zeta_chunk(a[going], -s[going], done, steps)
        # running sums as the C loop adds (accumulate adds in order); the loop runs a prefix of the chunk's steps
        sums = np.add.accumulate(np.concatenate([total[going][None], np.where(active, powers, 0.0)]), axis=0)[1:]
        stops = active & (-_MACHEP * sums < powers) & (powers < _MACHEP * sums)
        stopped = stops.any(axis=0)
        last = np.where(stopped, stops.argmax(axis=0), active.sum(axis=0) - 1)  # the step each one ends at
        moved = np.flatnonzero(last >= 0)
        rows = last[moved]
        a[going[moved]], b[going[moved]] = bases[rows, moved], powers[rows, moved]
        total[going[moved]] = sums[rows, moved]
        settle(going[stopped], total)
        done += steps


def _steps_to_nine(a: np.ndarray) -> int:
    """How many more steps of 1 the furthest of ``a`` (all <= 9) needs to pass 9, as many in one chunk as keep
    it near a million terms (at least 64): a large negative q takes one step per unit."""
    return int(np.clip(np.floor(9.0 - a.min()) + 1, 1, max(64, (1 << 20) // a.size)))


def _zeta_chunk(a, neg_s, done: int, steps: int):
    """The next ``steps`` bases a + 1, a + 2, ... (added one at a time, as the C loop rounds them), their powers
    and where Cephes' loop would still run (``done`` steps taken)."""
    ones = np.ones((steps, a.size), a.dtype)
    bases = np.add.accumulate(np.concatenate([a[None], ones]), axis=0)
    active = (done + np.arange(steps)[:, None] < 9) | (bases[:-1] <= 9.0)
    bases = bases[1:]
    powers = np.zeros_like(bases)
    exponents = np.broadcast_to(neg_s, bases.shape)
    powers[active] = _c_pow(bases[active], exponents[active], a.dtype)
    return bases, powers, active


def _zeta_tail(s, w, b, total, settle) -> None:
    """Cephes' Euler-Maclaurin tail after the direct terms (last base ``w``, last term ``b``), stopping where its
    terms no longer move the sum."""
    total += b * w / (s - 1.0)
    total -= 0.5 * b
    rising, k = np.ones_like(s), 0.0
    for denominator in _ZETA_TAIL_DENOMINATORS:
        rising = rising * (s + k)
        b = b / w
        term = rising * b / denominator
        total += term
        settle(np.abs(term / total) < _MACHEP, total)
        rising = rising * (s + k + 1.0)
        b = b / w
        k += 2.0


def _trigamma(x: np.ndarray, dtype) -> np.ndarray:
    """PyTorch's trigamma, in the result's own precision as its kernel: reflection below 1/2, six recurrence
    steps, then a short asymptotic series (the Hurwitz route below is more accurate, but this is torch's)."""
    x = np.array(x, dtype=dtype)
    one, pi = dtype.type(1), dtype.type(math.pi)
    result = np.zeros_like(x)
    with np.errstate(all="ignore"):
        low = x < 0.5
        sin_pi_x = np.ones_like(x)
        sin_pi_x[low] = _c_sin(pi * x[low])
        result = np.where(low, result - (pi * pi) / (sin_pi_x * sin_pi_x), result)
        sign = np.where(low, -one, one)
        x = np.where(low, one - x, x)
        for _ in range(6):
            result = result + one / (x * x)
            x = x + one
        ixx = one / (x * x)
        # (the multiply-adds fused, as the compiler fuses them in PyTorch's -mfma build)
        series = fma(-ixx, fma(-ixx, dtype.type(1 / 42), dtype.type(1 / 30)), dtype.type(1 / 6))
        result = result + fma(ixx, series, one + one / (dtype.type(2) * x)) / x
    return sign * result


def _c_sin(x: np.ndarray) -> np.ndarray:
    """The C library's sin (sinf for float32: not the correctly rounded value NumPy's float64 sin rounds to)."""
    from .glibc_scalar import call_each

    return call_each("sin", x.reshape(-1)).reshape(x.shape)


def _polygamma(n: int, x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """polygamma(n, x) for x of ``dtype``, in its arithmetic (float32 for half)."""
    arithmetic = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    if n == 0:
        return _digamma_in(np.array(x, dtype=arithmetic).reshape(-1)).reshape(np.shape(x))
    if n == 1:
        return _trigamma(x, arithmetic)
    signed_factorial = arithmetic.type(1.0 if n % 2 else -1.0) * _exp_lgamma(n + 1, arithmetic)
    return signed_factorial * _hurwitz_zeta(n + 1, x, dtype).astype(dtype).astype(arithmetic)


def _exp_lgamma(x: int, dtype: np.dtype) -> np.floating:
    """exp(lgamma(x)) as PyTorch's polygamma writes n!, with the C library's functions in ``dtype`` (not always
    n! exactly; Python's math.lgamma is CPython's own, not the C library's)."""
    if dtype == np.float32:
        from .nn_ops.glibc_float_math import exp_float

        return exp_float(np.array([_libm_lgamma(x, "lgammaf", ctypes.c_float)], np.float32))[0]
    try:
        return dtype.type(math.exp(_libm_lgamma(x, "lgamma", ctypes.c_double)))
    except OverflowError:  # (n > 170: C's exp gives inf, which math.exp raises on)
        return dtype.type(math.inf)


@functools.cache
def _libm_lgamma(x: int, name: str, c_type: type) -> float:
    function = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
    function.restype = c_type
    function.argtypes = (c_type,)
    return function(x)


def _lgamma_kernel(a):
    x, dt = _as_float64(a)
    with np.errstate(over="ignore"):
        return _lgamma(x).astype(dt)


def _digamma_kernel(a):
    x = to_floating(a)
    work = x.astype(np.float64 if x.dtype == np.float64 else np.float32).reshape(-1)  # (half: in float32)
    with np.errstate(all="ignore"):
        return _digamma_in(work).astype(x.dtype).reshape(x.shape)


def _polygamma_kernel(n, a):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if a.dtype.kind == "c":  # (PyTorch dispatches n = 0 and 1 to its digamma and trigamma kernels)
        raise unsupported({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), a.dtype)
    x, dt = _as_float64(a)
    with np.errstate(over="ignore"):
        return _polygamma(n, x, dt).astype(dt)


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
