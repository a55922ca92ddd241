"""Sleef's float functions as PyTorch's x86 builds call them (``Sleef_expf8_u10`` / ``expf16``,
``Sleef_logf8_u10`` / ``logf16``, ``Sleef_tanhf8_u10``, ``Sleef_log1pf8_u10`` / ``log1pf16``: the FMA builds,
AVX2 and AVX-512 alike), reproduced on float32 NumPy arrays.

Fused multiply-adds go through float64: the product of two floats is exact there, and the sum is rounded once
more to float (a double rounding that differs from a true FMA in a vanishing fraction of cases). expf is
followed step by step; logf's double-float part is taken in float64 (see ``sleef_logf``: 2 results in 38
million differ from ``sleef_logf_exact``), as is log1pf's (with a check near midpoints: exact for every
float32). Shared by GELU (gelu_torch_cpu), the softmax family (softmax_cpu), softplus, Mish and log_sigmoid
(log1p_cpu).
"""

from __future__ import annotations

import numpy as np

from ..aten_vec import binade_addend, fused_in_binade, offset_from_midpoint
from ..aten_vec import fma32 as _fma

_F32 = np.float32
_ONE, _HALF = _F32(1), _F32(0.5)

_R_LN2, _L2U, _L2L = _F32(1.442695040888963407359924681), _F32(0.693145751953125), _F32(1.428606765330187045e-06)
_SLEEF_EXP_POLY = tuple(_F32(c) for c in (
    0.000198527617612853646278381, 0.00139304355252534151077271, 0.00833336077630519866943359,
    0.0416664853692054748535156, 0.166666671633720397949219, 0.5))


def _pow2i(q: np.ndarray) -> np.ndarray:
    return ((q + 127) << 23).view(_F32)


_F64 = np.float64
_NEG_L2 = -(_F64(_L2U) + _F64(_L2L))  # (exact: the two parts span 43 bits)
_EXP_POLY_WIDE = tuple(_F64(c) for c in _SLEEF_EXP_POLY)
# The first four steps of Horner's rule end in the binades of their addends, for every |s| <= 0.35 (Cody-Waite's
# reduction by ln 2 leaves |s| <= 0.347): [2^-10, 2^-9), [2^-7, 2^-6), [2^-5, 2^-4), [2^-3, 2^-2).
_EXP_POLY_STEPS = tuple(binade_addend(_SLEEF_EXP_POLY[k], exponent) for k, exponent in ((1, -10), (2, -7), (3, -5),
                                                                                       (4, -3)))
_EXP_BLOCK = 32768  # (elements per pass: the float64 temporaries stay in cache)
# Constants as 0-d arrays, each in the dtype of the array it meets: a ufunc takes one for about half of what a
# NumPy scalar costs it (no scalar conversion or promotion), some 0.25 us a call on small arrays.
_R_LN2_ARRAY, _NEG_L2_ARRAY, _ONE_ARRAY = np.array(_R_LN2), np.array(_NEG_L2), np.array(_ONE)
_EXP_FIRST, _EXP_LAST = np.array(_EXP_POLY_WIDE[0]), np.array(_EXP_POLY_WIDE[5])
_EXP_STEP_ARRAYS = tuple((np.array(shifted), np.array(shift)) for shifted, shift in _EXP_POLY_STEPS)
_EXP_CLAMP = (np.array(_F32(-110)), np.array(_F32(110)))
_EXP_PLAIN = 87  # (|d| <= 87: |q| <= 126, 2^q a normal float: no clamp, no overflow, no flush to zero)


def sleef_expf(d: np.ndarray) -> np.ndarray:
    """Sleef's expf_u10 with FMA (its AVX2 / AVX-512 builds): Cody-Waite reduction by ln 2, degree-6
    polynomial, scaling by 2^q; 0 below -104, inf above 100."""
    d = np.asarray(d, _F32)
    if d.size <= _EXP_BLOCK:  # (in d's own layout, as ufuncs give it)
        if d.ndim and d.size:
            return _expf(d, None)
        return _expf(d.reshape(1), None).reshape(()) if d.size else np.empty_like(d)  # (0-d: ufuncs give scalars)
    flat = d.reshape(-1)
    out = np.empty_like(flat)
    for start in range(0, flat.size, _EXP_BLOCK):
        _expf(flat[start : start + _EXP_BLOCK], out[start : start + _EXP_BLOCK])
    return out.reshape(d.shape)


def _expf(d: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """``sleef_expf`` of a non-empty d into out (a new array for None), which is its float32 scratch too."""
    out = np.abs(d, out)
    if _largest(out) <= _EXP_PLAIN:  # (NaN fails the test: an array with one is clamped)
        return _expf_clamped(d, out)
    # Clamped to [-110, 110]: below -104 the scaling by 2^q (q <= -150, and u < 1 at q = -150) flushes to +0, and
    # above 100 it overflows to inf, as Sleef's masks have it; NaN goes through (its q casts to INT_MIN).
    with np.errstate(over="ignore", invalid="ignore"):
        return _expf_clamped(np.clip(d, *_EXP_CLAMP, out), out)


def _largest(a: np.ndarray) -> float:
    """a's largest element, or its first NaN: argmax costs a fraction of a max reduction's call overhead (and its
    flat index reads back cheaply from a contiguous array)."""
    if not a.flags.c_contiguous:
        a = a.ravel("K")  # (a view where a is contiguous in some order)
    return a.item(a.argmax())


def _expf_clamped(d: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``sleef_expf`` of d in [-110, 110] (or NaN) into out, which may be d itself.

    Steps work in place (positional arguments, out as the float32 scratch), casts are astype (np.copyto costs
    more per call), and every call has one dtype: NumPy's mixed-dtype loops and the casts inside a ufunc cost
    about twice as much, small arrays or large."""
    multiply, add = np.multiply, np.add
    q = multiply(d, _R_LN2_ARRAY)
    np.rint(q, q)  # (cvtps2dq: to nearest even)
    scale = q.astype(np.int32)
    # s = d - q ln 2, ln 2 in Sleef's two parts L2U + L2L. Its first fused step, d - q L2U, is exact (q L2U fits a
    # float); the second rounds once: s is d - q (L2U + L2L) rounded to float. That is exact in float64: L2U + L2L
    # spans 43 bits, q at most 8, and the difference lies below 1/2 with no bit below 2**-43 (q = 0: s = d).
    s_wide = q.astype(_F64)
    multiply(s_wide, _NEG_L2_ARRAY, s_wide)
    add(s_wide, d.astype(_F64), s_wide)  # (d read before out is written)
    s = s_wide.astype(_F32)
    s_wide = s.astype(_F64)
    u = _exp_polynomial(s_wide)
    # then fma(s * s, u, s) + 1, the fused step summed in float64 and cast (its result ranges widely)
    multiply(u, multiply(s, s, out).astype(_F64), u)
    add(u, s_wide, u)
    u = u.astype(_F32)
    add(u, _ONE_ARRAY, u)
    # (one exact scaling by 2^q rounds as Sleef's two halves do)
    return np.ldexp(u, scale, out)


def _exp_polynomial(s_wide: np.ndarray) -> np.ndarray:
    """Horner's rule, each step one fused multiply-add, as float64 holding floats. The first four end in fixed
    binades (below), where fused_in_binade's two shifts round them (inlined here); the fifth straddles 1/2: it is
    summed in float64 and cast."""
    multiply, add, subtract = np.multiply, np.add, np.subtract
    u = multiply(s_wide, _EXP_FIRST)  # (exact: a product of two floats)
    for shifted, shift in _EXP_STEP_ARRAYS:
        add(u, shifted, u)
        subtract(u, shift, u)  # (exact: both on float's grid of the binade)
        multiply(u, s_wide, u)  # (exact again)
    add(u, _EXP_LAST, u)
    return u.astype(_F32).astype(_F64)


# Double-float ("df") arithmetic as Sleef's FMA builds do it: a value is an unevaluated sum hi + lo of floats.


def _fms(a, b, c) -> np.ndarray:  # fused a * b - c
    return _fma(a, b, -c)


def _df_add2(x: tuple, y) -> tuple:  # df + float or df + df, no ordering of magnitudes assumed
    y_hi, y_lo = y if isinstance(y, tuple) else (y, None)
    s = x[0] + y_hi
    v = s - x[0]
    t = (x[0] - (s - v)) + (y_hi - v)
    return s, t + (x[1] if y_lo is None else x[1] + y_lo)


def _df_add(x: tuple, y: tuple) -> tuple:  # |x| >= |y|
    s = x[0] + y[0]
    return s, (((x[0] - s) + y[0]) + x[1]) + y[1]


def _df_mul(x: tuple, y) -> tuple:  # df * float or df * df
    if not isinstance(y, tuple):
        s = x[0] * y
        return s, _fma(x[1], y, _fms(x[0], y, s))
    s = x[0] * y[0]
    return s, _fma(x[0], y[1], _fma(x[1], y[0], _fms(x[0], y[0], s)))


def _df_square(x: tuple) -> tuple:
    s = x[0] * x[0]
    return s, _fma(x[0] + x[0], x[1], _fms(x[0], x[0], s))


def _df_reciprocal(d: tuple) -> tuple:
    s = np.divide(_ONE, d[0], dtype=_F32)
    return s, s * _fma(-d[1], s, _fma(-d[0], s, _ONE))


def _df_divide(n: tuple, d: tuple) -> tuple:
    t = np.divide(_ONE, d[0], dtype=_F32)
    s = n[0] * t
    u = _fms(t, n[0], s)
    v = _fma(-d[1], t, _fma(-d[0], t, _ONE))
    return s, _fma(s, v, _fma(n[1], t, u))


def _df_sum_of_floats(a, b: np.ndarray) -> tuple:  # dfadd2(float, float): a + b exactly, any magnitudes
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


def _df_add_float(x: tuple, y: np.ndarray) -> tuple:  # dfadd(df, float), |x| >= |y|
    s = x[0] + y
    return s, ((x[0] - s) + y) + x[1]


def _ldexp2(value: np.ndarray, q: np.ndarray) -> np.ndarray:
    half = q >> 1
    return value * _pow2i(half) * _pow2i(q - half)


# ---- logf_u10 (Sleef's xlogf_u1, the non-AVX-512 path that the 8-lane AVX2 build compiles) ----------------

_LN2_DF = (_F32(0.69314718246459960938), _F32(-1.904654323148236017e-09))  # ln 2 as a double-float
_LOG_POLY = tuple(_F32(c) for c in (0.3027294874, 0.3996108174, 0.6666694880))
_LOG_POLY_WIDE = tuple(_F64(c) for c in _LOG_POLY)
_TWO_POW_64 = _F32(2.0**64)
_FLT_MIN = _F32(np.finfo(np.float32).tiny)
_FOUR_THIRDS = _F32(1.0 / 0.75)


def _exponent_field(d: np.ndarray) -> np.ndarray:
    """``vilogb2k``: the biased exponent bits of d, unbiased (d positive and normal)."""
    return ((d.view(np.int32) >> 23) & 0xFF) - 0x7F


def _scale_exponent(d: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``vldexp3``: d * 2^e by adding e to the exponent bits."""
    return (d.view(np.int32) + (e << 23)).view(_F32)


def sleef_logf(d: np.ndarray) -> np.ndarray:
    """Sleef's logf_u10: d = m * 2^e with m in [0.75, 1.5), log d = e ln 2 + 2 atanh((m - 1) / (m + 1)); inf at
    inf, NaN below zero or at NaN, -inf at zero.

    Sleef carries the sum in double-float (some 48 bits) and rounds it to float once at the end. Only its
    cubic term is float arithmetic that reaches the result's bits: that is reproduced exactly, the
    double-float rest is taken in float64 (which differs from Sleef's by some 2**-47 of the result, so the
    final rounding could tell them apart only within that distance of a midpoint between floats;
    ``sleef_logf_exact`` follows Sleef step by step)."""
    d = np.asarray(d, _F32)
    if d.size and np.minimum.reduce(d, axis=None) >= _FLT_MIN and np.maximum.reduce(d, axis=None) < _HUGE:
        return _logf_normal(d, d, None)  # (no special value: nothing to mask, nothing to warn about)
    tiny = d < _FLT_MIN
    with np.errstate(all="ignore"):  # (negative, zero, NaN and inf lanes are replaced at the end)
        r = _logf_normal(np.where(tiny, d * _TWO_POW_64, d), d, tiny)
    r[np.isposinf(d)] = np.inf
    r[(d < 0) | np.isnan(d)] = np.nan
    r[d == 0] = -np.inf
    return r


_HUGE = _F32(2.0**127)  # (below it d * 4/3 stays finite)


def _logf_normal(scaled: np.ndarray, d: np.ndarray, tiny: np.ndarray | None) -> np.ndarray:
    """``sleef_logf`` of positive normal floats (tiny ones scaled by 2^64 first, as Sleef does). Other lanes come
    out as garbage, which the caller replaces."""
    # vilogb2k(d * 4/3): the exponent bits (no sign bit to mask in the lanes that count)
    e = np.right_shift((scaled * _FOUR_THIRDS).view(np.int32), 23)
    e -= 0x7F
    m = np.subtract(scaled.view(np.int32), np.left_shift(e, 23)).view(_F32)  # vldexp3(d, -e): in [0.75, 1.5)
    if tiny is not None:
        e[tiny] -= 64
    numerator = m - _ONE  # (exact: m is within a factor 2 of 1)
    # Sleef's float part: the quotient's high half, its square, the polynomial, the cubic term
    x = numerator * np.divide(_ONE, m + _ONE)
    x2 = x * x
    term = x2 * x
    term *= log_polynomial(x2)
    # the double-float part: e (ln 2 as Sleef's pair) + 2 (m - 1) / (m + 1), then the term
    wide = np.multiply(e, _LN2_WIDE)
    wide += np.divide(numerator, np.add(m, 1.0, dtype=_F64)) * 2.0
    wide += term
    return wide.astype(_F32)


# The fused steps of Sleef's log polynomial in x2 = x * x, |x| <= 0.2 (m in [0.75, 1.5)): they end in the
# binades of their addends, [1/4, 1/2) and [1/2, 1), which lets fused_in_binade round them.
_LOG_POLY_STEPS = (binade_addend(_LOG_POLY[1], -2), binade_addend(_LOG_POLY[2], -1))


def log_polynomial(x2: np.ndarray) -> np.ndarray:
    """``fma(fma(c0, x2, c1), x2, c2)`` of Sleef's logf and log1pf, in float, for float32 ``x2`` in [0, 0.04]
    (lanes outside give garbage)."""
    x2_wide = x2.astype(_F64)
    t = np.multiply(x2_wide, _LOG_POLY_WIDE[0])  # (exact: a product of two floats)
    fused_in_binade(t, _LOG_POLY_STEPS[0])
    t *= x2_wide
    return fused_in_binade(t, _LOG_POLY_STEPS[1]).astype(_F32)


_LN2_WIDE = _F64(_LN2_DF[0]) + _F64(_LN2_DF[1])  # (exact: the pair's 48 bits fit a double)


def sleef_logf_exact(d: np.ndarray) -> np.ndarray:
    """``sleef_logf`` step by step in Sleef's double-float arithmetic (slower; the reference for it)."""
    d = np.asarray(d, _F32)
    with np.errstate(all="ignore"):
        tiny = d < _FLT_MIN
        scaled = np.where(tiny, d * _TWO_POW_64, d)
        e = _exponent_field(scaled * _FOUR_THIRDS)
        m = _scale_exponent(scaled, -e)
        e = np.where(tiny, e - 64, e)
        s = _df_mul(_LN2_DF, e.astype(_F32))
        x = _df_divide(_df_sum_of_floats(-_ONE, m), _df_sum_of_floats(_ONE, m))
        x2 = x[0] * x[0]
        t = np.full_like(x2, _LOG_POLY[0])
        for c in _LOG_POLY[1:]:
            t = _fma(t, x2, c)
        s = _df_add(s, (x[0] * _F32(2), x[1] * _F32(2)))
        s = _df_add_float(s, (x2 * x[0]) * t)
        r = s[0] + s[1]
    r[np.isposinf(d)] = np.inf
    r[(d < 0) | np.isnan(d)] = np.nan
    r[d == 0] = -np.inf
    return r


# ---- tanhf -------------------------------------------------------------------------------------------------


def xor_sign(value: np.ndarray, like: np.ndarray) -> np.ndarray:
    """value with its sign bit flipped where ``like``'s is set (an ``xorps`` with the sign mask)."""
    bits = value.view(np.uint32)
    bits ^= like.view(np.uint32) & np.uint32(0x80000000)
    return value


_EXPK_POLY = tuple(_F32(c) for c in (0.1980960224e-3, 0.1394256484e-2, 0.8333456703e-2, 0.4166637361e-1))


def _sleef_expk2(y: np.ndarray) -> tuple:
    """Sleef's expk2f of (y, 0): e^y as a double-float."""
    q = np.rint(y * _R_LN2).astype(np.int32)
    qf = q.astype(_F32)
    s = _df_add2((y, np.zeros_like(y)), qf * -_L2U)
    s = _df_add2(s, qf * -_L2L)
    u = np.full_like(y, _EXPK_POLY[0])
    for c in _EXPK_POLY[1:]:
        u = _fma(u, s[0], c)
    t = _df_add2(_df_mul(s, u), _F32(0.166666659414234244790680580464))
    t = _df_add2(_df_mul(s, t), _HALF)
    t = _df_add2(s, _df_mul(_df_square(s), t))
    hi = _ONE + t[0]
    lo = ((_ONE - hi) + t[0]) + t[1]
    return _ldexp2(hi, q), _ldexp2(lo, q)


def sleef_expm1f(a: np.ndarray) -> np.ndarray:
    """Sleef's expm1f_u10: e^a in double-float (expk2f) plus -1 in double-float, rounded once; inf above
    88.72283, -1 below -16.63553, -0 at -0.

    That double-float result rounds as expm1 does unless expm1 lies within a hair of a midpoint between two
    floats: the rest is NumPy's float64 expm1 rounded to float, and only the doubtful elements (near a midpoint,
    tiny, or near the ends of the range) take the step-by-step emulation. Checked against it for every float32."""
    a = np.asarray(a, _F32)
    with np.errstate(all="ignore"):
        wide = np.expm1(a.astype(_F64))
        out = np.asarray(wide.astype(_F32))
        magnitude = np.abs(a)
        doubtful = (offset_from_midpoint(wide, _EXPM1_BAND) < 2 * _EXPM1_BAND) | (magnitude < _EXPM1_TINY) | (
            magnitude > _EXPM1_LARGE)
    doubtful &= ~np.isnan(a)
    if doubtful.any():
        out[doubtful] = _sleef_expm1f_emulated(a[doubtful])
    return out


_EXPM1_BAND = int(0.05 * 2**29)  # (0.05 ulp either side of a midpoint)
_EXPM1_TINY, _EXPM1_LARGE = _F32(2.0**-7), _F32(16)  # (cancellation below; the clamped ends above)


def _sleef_expm1f_emulated(a: np.ndarray) -> np.ndarray:
    """``sleef_expm1f`` step by step in Sleef's double-float arithmetic."""
    with np.errstate(all="ignore"):
        inside = np.clip(np.nan_to_num(a), _F32(-17), _F32(89))  # (the lanes outside are replaced below)
        hi, lo = _df_add2(_sleef_expk2(inside), -_ONE)
        out = np.asarray(hi + lo)  # (an array for a 0-d input too)
    out[a > _F32(88.72283172607421875)] = np.inf
    out[a < _F32(-16.635532333438687426013570)] = -_ONE
    np.copyto(out, a, where=np.isnan(a) | (a == 0))  # (NaN through, and -0 and +0 kept)
    return out


_SLEEF_TANH_ONE = _F32(8.664339742)  # (beyond, Sleef's tanhf is +-1 exactly)


def _sleef_tanhf_emulated(x: np.ndarray) -> np.ndarray:
    """Sleef's tanhf_u10: (e - 1/e) / (e + 1/e) in double-float, e = exp|x|."""
    with np.errstate(all="ignore"):
        y = np.minimum(np.nan_to_num(np.abs(x)), _F32(9))  # (the rest is replaced below)
        d = _sleef_expk2(y)
        e = _df_reciprocal(d)
        ratio = _df_divide(_df_add(d, (-e[0], -e[1])), _df_add(d, e))
        out = ratio[0] + ratio[1]
    out[np.abs(x) > _SLEEF_TANH_ONE] = _ONE
    out = xor_sign(out, x)
    out[np.isnan(x)] = np.nan
    return out


_TANH_EXACT_BELOW = _F32(2.0**-9)  # (below, Sleef's cancellation in e - 1/e costs it up to 0.03 ulp)
# How far from a midpoint between floats tanh must be for Sleef's double-float result (before its last rounding)
# to round as tanh does, in ulps: it is within 0.015 ulp of tanh below |x| = 1, within 0.0015 above.
_MIDPOINT_MARGIN_BELOW_ONE, _MIDPOINT_MARGIN = _F32(0.5 - 0.03), _F32(0.5 - 0.004)


def _sleef_tanhf_by_elements(x: np.ndarray) -> np.ndarray:  # (the route for other dtypes and layouts)
    wide = np.tanh(x.astype(_F64))
    out = wide.astype(_F32)
    magnitude = np.abs(out)
    below = (magnitude.view(np.int32) - 1).view(_F32)  # (the next float down: its spacing is the ulp below)
    threshold = np.spacing(below, out=below)
    threshold *= np.where(np.abs(x) < _ONE, _MIDPOINT_MARGIN_BELOW_ONE, _MIDPOINT_MARGIN)
    np.subtract(wide, out, out=wide)
    doubtful = np.abs(wide, out=wide) > threshold
    magnitude = np.abs(x, out=magnitude)
    doubtful |= magnitude < _TANH_EXACT_BELOW
    if doubtful.any():
        out[doubtful] = _sleef_tanhf_emulated(x[doubtful])
    np.copyto(out, np.copysign(_ONE, x), where=magnitude > _SLEEF_TANH_ONE)
    return out


# The doubt test on the bits of the float64 tanh (offset_from_midpoint): a band of half-width _TANH_BAND
# (_TANH_NARROW_BAND for |x| >= 1) around the midpoint covers the margins above, with two units of slack,
# whatever the sign. (Where tanh is a power of two or just above, the ulp below is half its binade's: the old
# test doubted more there, but the distance to the midpoints in the binade's own ulps is what the margins bound.)
_TANH_BAND = int(np.ceil((0.5 - float(_MIDPOINT_MARGIN_BELOW_ONE)) * 2.0**29)) + 2
_TANH_NARROW_BAND = int(np.ceil((0.5 - float(_MIDPOINT_MARGIN)) * 2.0**29)) + 2
# |x| outside [2**-9, 8.664339742] (NaN and inf included) in one unsigned comparison on the bits of |x|.
_TANH_ABS_BITS = np.uint32(0x7FFFFFFF)
_TANH_TINY_BITS = np.uint32(np.array(_TANH_EXACT_BELOW).view(np.uint32))
_TANH_ONE_BITS = np.uint32(np.array(_SLEEF_TANH_ONE).view(np.uint32))
_TANH_INF_BITS = np.uint32(0x7F800000)
_TANH_ONE_INPUT_BITS = np.uint32(0x3F800000)  # (the bits of 1.0: |x| < 1 below them)
_TANH_BLOCK = 65536  # (elements per pass: the float64 temporaries stay in cache)


def sleef_tanhf(x: np.ndarray) -> np.ndarray:
    """Sleef's tanhf_u10. Its double-float result rounds as tanh does unless tanh lies within a hair of a
    midpoint between two floats (or |x| is tiny): only those take the full (slow) emulation. Checked
    against the emulation for every float32 in [0, 9]."""
    if not (isinstance(x, np.ndarray) and x.dtype == _F32 and x.flags.c_contiguous):
        return _sleef_tanhf_by_elements(x)
    flat = x.reshape(-1)
    size = flat.size
    out = np.empty(size, _F32)
    block = max(1, min(size, _TANH_BLOCK))
    wide = np.empty(block, _F64)
    key = wide.view(np.int64)
    bits = np.empty(block, np.uint32)
    candidates, outside = np.empty(block, np.bool_), np.empty(block, np.bool_)
    doubtful, ones = [], []
    for start in range(0, size, block):
        stop = min(start + block, size)
        n = stop - start
        w, k, b, c, e = wide[:n], key[:n], bits[:n], candidates[:n], outside[:n]
        xs = flat[start:stop]
        np.copyto(w, xs)
        np.tanh(w, out=w)
        np.copyto(out[start:stop], w, casting="same_kind")
        offset_from_midpoint(w, _TANH_BAND, out=k)  # (in place: w is no longer needed)
        np.less(k, 2 * _TANH_BAND, out=c)
        np.bitwise_and(xs.view(np.uint32), _TANH_ABS_BITS, out=b)
        np.subtract(b, _TANH_TINY_BITS, out=b)
        np.greater(b, _TANH_ONE_BITS - _TANH_TINY_BITS, out=e)
        c |= e
        where = np.flatnonzero(c)
        if where.size:
            magnitude = xs.view(np.uint32)[where] & _TANH_ABS_BITS
            beyond = magnitude > _TANH_ONE_BITS  # (NaN too)
            keep = magnitude < _TANH_ONE_INPUT_BITS  # (|x| < 1: the wide band; |x| < 2**-9 always)
            keep |= (k[where] - (_TANH_BAND - _TANH_NARROW_BAND)).view(np.uint64) < 2 * _TANH_NARROW_BAND
            keep &= ~beyond
            doubtful.append(where[keep] + start)
            beyond &= magnitude <= _TANH_INF_BITS  # (+-1 set below: rounded tanh is 1 - 2**-24 up to 9.0109)
            ones.append(where[beyond] + start)
    if doubtful:
        where = np.concatenate(doubtful)
        if where.size:
            out[where] = _sleef_tanhf_emulated(flat[where])
        where = np.concatenate(ones)
        out[where] = np.copysign(_ONE, flat[where])
    return out.reshape(x.shape)


# ---- log1pf_u10 ----------------------------------------------------------------------------------------------

_LOG1P_BOUND = _F32(float.fromhex("0x1.2ced32p+126"))  # (above, Sleef takes logf_u1: its core would overflow)
_LOG1P_TINY = _F32(2.0**-100)  # (below, Sleef's double-float parts go subnormal and lose bits)
# Sleef's double-float sum lies within 4e-7 ulp of the float64 one (random inputs of every binade): a band of
# 2**-16 ulp either side of a midpoint keeps a margin of 40 (in offset_from_midpoint's units, 2**29 an ulp).
_LOG1P_BAND = 2**13


def _log1pf_reduce(d: np.ndarray) -> tuple:
    """Sleef's reduction: 1 + d = 2^e (1 + m) with 1 + m in [0.75, 1.5), m = fma(d, 2^-e, 2^-e - 1). (d 2^-e is
    exact in float, so the fused multiply-add is a float sum.)"""
    e = _exponent_field((d + _ONE) * _FOUR_THIRDS)
    t = (np.int32(0x3F800000) - (e << 23)).view(_F32)  # 2^-e
    m = d * t
    m += t - _ONE
    return e, m


def _log1pf_cubic(x: np.ndarray) -> np.ndarray:
    """The polynomial term x^3 P(x^2) in float, as Sleef rounds it."""
    x2 = x * x
    t = log_polynomial(x2)
    x2 *= x
    x2 *= t
    return x2


_LOG1P_BLOCK = 32768  # (elements per pass: the temporaries stay in cache)


def _log1pf_core(d: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Sleef's log1pf of a flat block d (within (-1, 1e38]) into ``out``, the double-float sum taken in float64;
    returns the offsets of the float64 sums from the nearest midpoint between floats (``offset_from_midpoint``)."""
    m = d + _ONE
    m *= _FOUR_THIRDS
    e = np.right_shift(m.view(np.int32), 23)  # (positive: no sign bit to mask)
    e -= 0x7F
    t = (np.int32(0x3F800000) - (e << 23)).view(_F32)  # 2^-e
    np.multiply(d, t, out=m)
    t -= _ONE
    m += t
    wide = m.astype(_F64)
    x = np.add(m, _F32(2), out=t)
    np.divide(_ONE, x, out=x)
    x *= m  # (the high half of Sleef's double-float quotient m / (2 + m))
    m = np.add(wide, 2.0)
    np.divide(wide, m, out=wide)
    wide *= 2.0
    np.multiply(e, _LN2_WIDE, out=m)
    wide += m
    np.copyto(m, _log1pf_cubic(x))  # (the cubic term in float)
    wide += m
    np.copyto(out, wide, casting="same_kind")
    return offset_from_midpoint(wide, _LOG1P_BAND, out=wide.view(np.int64))


def sleef_log1pf(d: np.ndarray) -> np.ndarray:
    """Sleef's log1pf_u10 (its AVX2 and AVX-512 builds): log1p d = e ln 2 + 2 atanh(m / (2 + m)) in double-float,
    rounded once; logf_u1 above 1e38, -inf at -1, NaN below, -0 at -0.

    The double-float sum is taken in float64 here (the float cubic term exactly as Sleef rounds it): only the
    elements whose sum lies within a hair of a midpoint between floats, or that are tiny, take the step-by-step
    emulation. Checked against PyTorch's ``log1p`` for every float32."""
    d = np.asarray(d, _F32)
    if not d.size:
        return d.copy()
    flat = d.reshape(-1)
    out = np.empty(flat.size, _F32)
    with np.errstate(all="ignore"):
        lo, hi = np.minimum.reduce(flat), np.maximum.reduce(flat)
        plain = lo >= _LOG1P_TINY and hi <= _LOG1P_BOUND  # (the usual case: log1p of an exponential)
        core = flat if plain else np.where((flat > -_ONE) & (flat <= _LOG1P_BOUND), flat, _F32(0.5))
        doubtful = []
        for start in range(0, flat.size, _LOG1P_BLOCK):
            stop = min(start + _LOG1P_BLOCK, flat.size)
            offset = _log1pf_core(core[start:stop], out[start:stop])
            doubtful.append(np.flatnonzero(offset < 2 * _LOG1P_BAND) + start)
        where = np.concatenate(doubtful)
        if not plain:
            where = np.union1d(where, np.flatnonzero(np.abs(flat) < _LOG1P_TINY))
    if where.size:
        out[where] = _sleef_log1pf_emulated(flat[where])
    if not plain:
        _log1pf_special_values(flat, out)
    return out.reshape(d.shape)


def _log1pf_special_values(d: np.ndarray, out: np.ndarray) -> None:
    big = d > _LOG1P_BOUND
    if big.any():  # (rare: the step-by-step logf, which sleef_logf misses by an ulp for 1 float in 15 million here)
        out[big] = sleef_logf_exact(d[big])
    out[(d < -_ONE) | np.isnan(d)] = np.nan
    out[d == -_ONE] = -np.inf
    np.copyto(out, d, where=d == 0)  # (-0 kept)


def _sleef_log1pf_emulated(d: np.ndarray) -> np.ndarray:
    """``sleef_log1pf`` step by step in Sleef's double-float arithmetic (the reference for it)."""
    d = np.asarray(d, _F32)
    with np.errstate(all="ignore"):
        e, m = _log1pf_reduce(np.where((d > -_ONE) & (d <= _LOG1P_BOUND), d, _F32(0.5)))
        s = _df_mul(_LN2_DF, e.astype(_F32))
        two = np.full_like(m, _F32(2))
        x = _df_divide((m, np.zeros_like(m)), _df_add_float((two, np.zeros_like(m)), m))
        s = _df_add(s, (x[0] * _F32(2), x[1] * _F32(2)))
        s = _df_add_float(s, _log1pf_cubic(x[0]))
        out = np.asarray(s[0] + s[1])
    _log1pf_special_values(d, out)
    return out
