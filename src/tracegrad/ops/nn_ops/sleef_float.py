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

from ..aten_vec import binade_addend, offset_from_midpoint, two_sum
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
    if not d.ndim:
        return sleef_logf(d.reshape(1))[0]  # (a float32 scalar, as ufuncs give it)
    if d.size and _all_normal(d):  # (no special value: nothing to mask, nothing to warn about)
        if d.size <= _LOG_BLOCK or not d.flags.c_contiguous:
            return _logf_normal(d, d, None)
        flat = d.reshape(-1)
        out = np.empty_like(flat)
        for start in range(0, flat.size, _LOG_BLOCK):  # (the float64 temporaries stay in cache)
            np.copyto(out[start : start + _LOG_BLOCK], _logf_normal(flat[start : start + _LOG_BLOCK], None, None))
        return out.reshape(d.shape)
    tiny = d < _FLT_MIN
    with np.errstate(all="ignore"):  # (negative, zero, NaN and inf lanes are replaced at the end)
        r = _logf_normal(np.where(tiny, d * _TWO_POW_64, d), d, tiny)
    r[np.isposinf(d)] = np.inf
    r[d < 0] = np.nan
    r[np.isnan(d)] = d[np.isnan(d)]  # (a NaN comes out as it went in, its sign kept)
    r[d == 0] = -np.inf
    return r


_HUGE = _F32(2.0**127)  # (below it d * 4/3 stays finite)
_LOG_BLOCK = 32768
_FLT_MIN_BITS = np.uint32(np.array(_FLT_MIN).view(np.uint32))
_NORMAL_SPAN = int(np.array(_HUGE).view(np.uint32) - _FLT_MIN_BITS) - 1


def _all_normal(d: np.ndarray) -> bool:
    """Whether every element of d lies in [FLT_MIN, 2**127): one unsigned range test on the bits (negative ones
    and NaN wrap above it), by argmax (cheaper than two reductions on small arrays)."""
    offsets = np.subtract(d.view(np.uint32), _FLT_MIN_BITS)
    if not offsets.flags.c_contiguous:
        offsets = offsets.ravel("K")
    return offsets.item(offsets.argmax()) <= _NORMAL_SPAN


def _logf_normal(scaled: np.ndarray, d: np.ndarray, tiny: np.ndarray | None) -> np.ndarray:
    """``sleef_logf`` of positive normal floats (tiny ones scaled by 2^64 first, as Sleef does). Other lanes come
    out as garbage, which the caller replaces. Steps in place with 0-d constants (see ``_expf_clamped``)."""
    add, multiply, subtract, divide = np.add, np.multiply, np.subtract, np.divide
    # vilogb2k(d * 4/3): the exponent bits (no sign bit to mask in the lanes that count)
    e = np.right_shift(multiply(scaled, _FOUR_THIRDS_ARRAY).view(np.int32), _SHIFT_23)
    subtract(e, _BIAS, e)
    m = np.left_shift(e, _SHIFT_23)
    m = subtract(scaled.view(np.int32), m, m).view(_F32)  # vldexp3(d, -e): in [0.75, 1.5)
    if tiny is not None:
        e[tiny] -= 64
    numerator = subtract(m, _ONE_ARRAY)  # (exact: m is within a factor 2 of 1)
    # the double-float part's denominator m + 1, before m is reused
    denominator = add(m, _ONE_WIDE, dtype=_F64)
    # Sleef's float part: the quotient's high half, its square, the polynomial, the cubic term
    x = add(m, _ONE_ARRAY, m)
    divide(_ONE_ARRAY, x, x)
    multiply(x, numerator, x)
    x2 = multiply(x, x)
    term = multiply(x2, x, x)
    multiply(term, log_polynomial(x2), term)
    # the double-float part: e (ln 2 as Sleef's pair) + 2 (m - 1) / (m + 1), then the term
    wide = divide(numerator, denominator, denominator)
    multiply(wide, _TWO_WIDE, wide)
    add(multiply(e, _LN2_WIDE_ARRAY), wide, wide)
    add(wide, term.astype(_F64), wide)
    return wide.astype(_F32)


# The fused steps of Sleef's log polynomial in x2 = x * x, |x| <= 0.2 (m in [0.75, 1.5)): they end in the
# binades of their addends, [1/4, 1/2) and [1/2, 1), which lets fused_in_binade round them.
_LOG_POLY_STEPS = (binade_addend(_LOG_POLY[1], -2), binade_addend(_LOG_POLY[2], -1))


_LOG_FIRST = np.array(_LOG_POLY_WIDE[0])
_LOG_STEP_ARRAYS = tuple((np.array(shifted), np.array(shift)) for shifted, shift in _LOG_POLY_STEPS)


def log_polynomial(x2: np.ndarray) -> np.ndarray:
    """``fma(fma(c0, x2, c1), x2, c2)`` of Sleef's logf and log1pf, in float, for float32 ``x2`` in [0, 0.04]
    (lanes outside give garbage). fused_in_binade's two shifts inlined, with 0-d constants."""
    if not x2.ndim:  # (0-d: a float32 scalar, as ufuncs give it)
        return log_polynomial(x2.reshape(1))[0]
    multiply, add, subtract = np.multiply, np.add, np.subtract
    x2_wide = x2.astype(_F64)
    t = multiply(x2_wide, _LOG_FIRST)  # (exact: a product of two floats)
    (shifted, shift), (last_shifted, last_shift) = _LOG_STEP_ARRAYS
    add(t, shifted, t)
    subtract(t, shift, t)
    multiply(t, x2_wide, t)
    add(t, last_shifted, t)
    return subtract(t, last_shift, t).astype(_F32)


_LN2_WIDE = _F64(_LN2_DF[0]) + _F64(_LN2_DF[1])  # (exact: the pair's 48 bits fit a double)
_FOUR_THIRDS_ARRAY, _TWO_ARRAY = np.array(_FOUR_THIRDS), np.array(_F32(2))
_ONE_WIDE, _TWO_WIDE, _LN2_WIDE_ARRAY = np.array(1.0), np.array(2.0), np.array(_LN2_WIDE)
_SHIFT_23, _BIAS, _ONE_BITS = np.array(23, np.int32), np.array(0x7F, np.int32), np.array(0x3F800000, np.int32)


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
        x = _df_divide(two_sum(-_ONE, m), two_sum(_ONE, m))
        x2 = x[0] * x[0]
        t = np.full_like(x2, _LOG_POLY[0])
        for c in _LOG_POLY[1:]:
            t = _fma(t, x2, c)
        s = _df_add(s, (x[0] * _F32(2), x[1] * _F32(2)))
        s = _df_add_float(s, (x2 * x[0]) * t)
        r = s[0] + s[1]
    r[np.isposinf(d)] = np.inf
    r[d < 0] = np.nan
    r[np.isnan(d)] = d[np.isnan(d)]  # (a NaN comes out as it went in, its sign kept)
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
    tiny, or near the ends of the range) take the emulation (``_expm1f_doubtful``, the same steps as
    ``_sleef_expm1f_emulated`` in fewer NumPy calls). Checked against it for every float32."""
    a = np.asarray(a, _F32)
    if not a.flags.c_contiguous:  # (the result in a's layout, as NumPy's casts lay it out)
        out = np.empty_like(a)
        out[...] = sleef_expm1f(np.ascontiguousarray(a))
        return out
    flat = a.reshape(-1)
    with np.errstate(all="ignore"):
        wide = np.expm1(flat.astype(_F64))
        out = wide.astype(_F32)
        doubtful = offset_from_midpoint(wide, _EXPM1_BAND, wide.view(np.int64)) < 2 * _EXPM1_BAND
        # |a| outside [2**-7, 16] (NaN and inf too) in one unsigned comparison on the bits of |a|
        bits = np.bitwise_and(flat.view(np.uint32), _ABS_BITS)
        np.subtract(bits, _EXPM1_TINY_BITS, bits)
        doubtful |= bits > _EXPM1_OUTSIDE
        where = np.flatnonzero(doubtful)
        if where.size:
            values = flat[where]
            keep = values == values  # (NaN comes through from the float64 expm1)
            out[where[keep]] = _expm1f_doubtful(values[keep])
    return out.reshape(a.shape)


_EXPM1_BAND = int(0.05 * 2**29)  # (0.05 ulp either side of a midpoint)
_EXPM1_TINY, _EXPM1_LARGE = _F32(2.0**-7), _F32(16)  # (cancellation below; the clamped ends above)
_EXPM1_TINY_BITS = np.uint32(np.array(_EXPM1_TINY).view(np.uint32))
_EXPM1_OUTSIDE = np.uint32(np.array(_EXPM1_LARGE).view(np.uint32)) - _EXPM1_TINY_BITS


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
# (the same as 0-d arrays, for the passes over whole blocks)
_ABS_BITS, _TANH_TINY_ARRAY = np.array(_TANH_ABS_BITS), np.array(_TANH_TINY_BITS)
_TANH_SPAN, _TANH_DOUBLE_BAND = np.array(_TANH_ONE_BITS - _TANH_TINY_BITS), np.array(2 * _TANH_BAND)


def sleef_tanhf(x: np.ndarray) -> np.ndarray:
    """Sleef's tanhf_u10. Its double-float result rounds as tanh does unless tanh lies within a hair of a
    midpoint between two floats (or |x| is tiny): only those take the full emulation (``_tanhf_doubtful``, the
    steps of ``_sleef_tanhf_emulated`` in fewer NumPy calls). Checked against the emulation for every float32 in
    [0, 9]."""
    if not (isinstance(x, np.ndarray) and x.dtype == _F32 and x.flags.c_contiguous):
        return _sleef_tanhf_by_elements(x)
    flat = x.reshape(-1)
    if flat.size <= _TANH_BLOCK:
        out, doubtful, ones = _tanhf_block(flat, None)
    else:
        out = np.empty(flat.size, _F32)
        parts = [_tanhf_block(flat[start : start + _TANH_BLOCK], out[start : start + _TANH_BLOCK])[1:]
                 for start in range(0, flat.size, _TANH_BLOCK)]
        doubtful, ones = (np.concatenate([where + k * _TANH_BLOCK for k, where in enumerate(column)])
                          for column in zip(*parts))
    if doubtful.size:
        out[doubtful] = _tanhf_doubtful(flat[doubtful])
    if ones.size:
        out[ones] = np.copysign(_ONE, flat[ones])
    return out.reshape(x.shape)


def _tanhf_block(xs: np.ndarray, out: np.ndarray | None) -> tuple:
    """The float64 tanh of a flat block rounded to float into out (a new array for None): (out, where it is
    doubtful, where Sleef's is +-1 and the rounded tanh may not be), positions within the block."""
    wide = xs.astype(_F64)
    np.tanh(wide, wide)
    if out is None:
        out = wide.astype(_F32)
    else:
        np.copyto(out, wide, casting="same_kind")
    key = offset_from_midpoint(wide, _TANH_BAND, wide.view(np.int64))  # (in place: wide is no longer needed)
    candidates = np.less(key, _TANH_DOUBLE_BAND)
    bits = np.bitwise_and(xs.view(np.uint32), _ABS_BITS)
    np.subtract(bits, _TANH_TINY_ARRAY, bits)
    candidates |= np.greater(bits, _TANH_SPAN)
    where = np.flatnonzero(candidates)
    if not where.size:
        return out, where, where
    magnitude = xs.view(np.uint32)[where] & _TANH_ABS_BITS
    beyond = magnitude > _TANH_ONE_BITS  # (NaN too)
    keep = magnitude < _TANH_ONE_INPUT_BITS  # (|x| < 1: the wide band; |x| < 2**-9 always)
    keep |= (key[where] - (_TANH_BAND - _TANH_NARROW_BAND)).view(np.uint64) < 2 * _TANH_NARROW_BAND
    keep &= ~beyond
    beyond &= magnitude <= _TANH_INF_BITS  # (+-1 set below: rounded tanh is 1 - 2**-24 up to 9.0109)
    return out, where[keep], where[beyond]


# ---- the doubtful lanes of tanhf and expm1f, in fewer NumPy calls ---------------------------------------------
#
# The operations of _sleef_expk2, _df_reciprocal, _df_divide and the double-float sums above, one for one: float
# steps on float32 arrays with 0-d float32 constants (half a NumPy scalar's cost a call), and each fused
# multiply-add as the exact float64 product plus one float64 sum, cast to float. That skips fma32's check for a
# sum landing exactly on a midpoint between floats; the products' rounding errors (fms of a product and its
# rounding) are exact float64 differences. Checked against the step-by-step emulation on every float32 input
# of sleef_tanhf and sleef_expm1f.


def _const(value) -> np.ndarray:
    return np.array(_F32(value))


_ZERO_ARRAY, _MINUS_ONE_ARRAY, _HALF_ARRAY = _const(0), _const(-1), _const(0.5)
_NEG_L2U_ARRAY, _NEG_L2L_ARRAY, _R_LN2_F32 = _const(-_L2U), _const(-_L2L), _const(_R_LN2)
_EXPK_POLY_ARRAYS = tuple(_const(c) for c in _EXPK_POLY)
_EXPK_SIXTH = _const(0.166666659414234244790680580464)


def _fused(a: np.ndarray, b: np.ndarray, c) -> np.ndarray:
    """fma(a, b, c) of floats: the exact product plus c in float64 (c float32 or float64), cast once."""
    wide = np.multiply(a, b, dtype=_F64)
    np.add(wide, c, wide)
    return wide.astype(_F32)


def _product(a: np.ndarray, b: np.ndarray) -> tuple:
    """(a * b rounded to float, its exact rounding error in float64)."""
    wide = np.multiply(a, b, dtype=_F64)
    hi = wide.astype(_F32)
    return hi, np.subtract(wide, hi, wide)


def _fast_df_add2(x: tuple, y: np.ndarray) -> tuple:  # _df_add2 of a df and a float
    s, t = two_sum(x[0], y)
    return s, np.add(t, x[1], t)


def _fast_df_mul(x: tuple, y) -> tuple:  # _df_mul of a df and a float or a df
    if not isinstance(y, tuple):
        hi, error = _product(x[0], y)
        return hi, _fused(x[1], y, error)
    hi, error = _product(x[0], y[0])
    return hi, _fused(x[0], y[1], _fused(x[1], y[0], error))


def _fast_expk2(y: np.ndarray) -> tuple:
    """``_sleef_expk2`` of floats y in [-17, 89]."""
    multiply, add = np.multiply, np.add
    qf = np.rint(multiply(y, _R_LN2_F32))
    q = qf.astype(np.int32)
    s = _fast_df_add2((y, _ZERO_ARRAY), multiply(qf, _NEG_L2U_ARRAY))
    s = _fast_df_add2(s, multiply(qf, _NEG_L2L_ARRAY))
    u = _fused(s[0], _EXPK_POLY_ARRAYS[0], _EXPK_POLY_ARRAYS[1])
    for c in _EXPK_POLY_ARRAYS[2:]:
        u = _fused(u, s[0], c)
    t = _fast_df_add2(_fast_df_mul(s, u), _EXPK_SIXTH)
    t = _fast_df_add2(_fast_df_mul(s, t), _HALF_ARRAY)
    hi, error = _product(s[0], s[0])
    square = (hi, _fused(add(s[0], s[0]), s[1], error))
    product = _fast_df_mul(square, t)
    t = two_sum(s[0], product[0])
    t = (t[0], add(t[1], add(s[1], product[1])))
    hi = add(t[0], _ONE_ARRAY)
    lo = add(add(np.subtract(_ONE_ARRAY, hi), t[0]), t[1])
    return np.ldexp(hi, q), np.ldexp(lo, q)  # (exact scalings, as _ldexp2's two halves: the results are normal)


def _tanhf_doubtful(x: np.ndarray) -> np.ndarray:
    """``_sleef_tanhf_emulated`` of a flat float32 x with |x| <= 8.664339742."""
    subtract, add = np.subtract, np.add
    d = _fast_expk2(np.abs(x))
    # e = 1 / d in double-float (_df_reciprocal)
    e_hi = np.divide(_ONE_ARRAY, d[0])
    e_lo = np.multiply(e_hi, _fused(np.negative(d[1]), e_hi, _fused(np.negative(d[0]), e_hi, _ONE_ARRAY)))
    # (d - e) / (d + e) (_df_add twice, _df_divide)
    n_hi = subtract(d[0], e_hi)
    n_lo = subtract(add(subtract(subtract(d[0], n_hi), e_hi), d[1]), e_lo)
    m_hi = add(d[0], e_hi)
    m_lo = add(add(add(subtract(d[0], m_hi), e_hi), d[1]), e_lo)
    t = np.divide(_ONE_ARRAY, m_hi)
    s, u = _product(t, n_hi)
    v = _fused(np.negative(m_lo), t, _fused(np.negative(m_hi), t, _ONE_ARRAY))
    out = add(s, _fused(s, v, _fused(n_lo, t, u)))
    return xor_sign(out, x)


_EXPM1_CLAMP = (_const(-17), _const(89))
_EXPM1_INF_ABOVE, _EXPM1_MINUS_ONE_BELOW = _F32(88.72283172607421875), _F32(-16.635532333438687426013570)


def _expm1f_doubtful(a: np.ndarray) -> np.ndarray:
    """``_sleef_expm1f_emulated`` of a flat float32 a without NaN."""
    with np.errstate(all="ignore"):  # (e^89 overflows: replaced by inf below)
        hi, lo = _fast_df_add2(_fast_expk2(np.clip(a, *_EXPM1_CLAMP)), _MINUS_ONE_ARRAY)
    out = np.add(hi, lo, hi)
    out[a > _EXPM1_INF_ABOVE] = np.inf
    out[a < _EXPM1_MINUS_ONE_BELOW] = -_ONE
    np.copyto(out, a, where=a == 0)  # (-0 and +0 kept)
    return out


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
    if not x.ndim:  # (0-d: a float32 scalar, as ufuncs give it)
        return _log1pf_cubic(x.reshape(1))[0]
    x2 = np.multiply(x, x)
    t = log_polynomial(x2)
    np.multiply(x2, x, x2)
    return np.multiply(x2, t, x2)


_LOG1P_BLOCK = 32768  # (elements per pass: the temporaries stay in cache)


def _log1pf_core(d: np.ndarray, out: np.ndarray | None) -> tuple:
    """Sleef's log1pf of a flat block d (within (-1, 1e38]) into ``out`` (a new array for None), the double-float
    sum taken in float64; returns out and the offsets of the float64 sums from the nearest midpoint between
    floats (``offset_from_midpoint``). Steps in place with 0-d constants (see ``_expf_clamped``)."""
    add, multiply, subtract, divide = np.add, np.multiply, np.subtract, np.divide
    m = add(d, _ONE_ARRAY)
    multiply(m, _FOUR_THIRDS_ARRAY, m)
    e = np.right_shift(m.view(np.int32), _SHIFT_23)  # (positive: no sign bit to mask)
    subtract(e, _BIAS, e)
    t = np.left_shift(e, _SHIFT_23)
    t = subtract(_ONE_BITS, t, t).view(_F32)  # 2^-e
    multiply(d, t, m)
    subtract(t, _ONE_ARRAY, t)
    add(m, t, m)
    wide = m.astype(_F64)
    x = add(m, _TWO_ARRAY, t)
    divide(_ONE_ARRAY, x, x)
    multiply(x, m, x)  # (the high half of Sleef's double-float quotient m / (2 + m))
    m = add(wide, _TWO_WIDE)
    divide(wide, m, wide)
    multiply(wide, _TWO_WIDE, wide)
    multiply(e, _LN2_WIDE_ARRAY, m)
    add(wide, m, wide)
    add(wide, _log1pf_cubic(x).astype(_F64), wide)  # (the cubic term in float)
    if out is None:
        out = wide.astype(_F32)
    else:
        np.copyto(out, wide, casting="same_kind")
    return out, offset_from_midpoint(wide, _LOG1P_BAND, out=wide.view(np.int64))


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
    with np.errstate(all="ignore"):
        # (the usual case, log1p of an exponential: every d in [2**-100, 1e38], NaN not; one unsigned range test on
        # the bits, negative ones wrapping above it)
        offsets = np.subtract(flat.view(np.uint32), _LOG1P_TINY_BITS)
        plain = offsets.item(offsets.argmax()) <= _LOG1P_PLAIN_SPAN
        core = flat if plain else np.where((flat > -_ONE) & (flat <= _LOG1P_BOUND), flat, _F32(0.5))
        out, where = _log1pf_blocks(core)
        if not plain:
            where = np.union1d(where, np.flatnonzero(np.abs(flat) < _LOG1P_TINY))
    if where.size:
        out[where] = _sleef_log1pf_emulated(flat[where])
    if not plain:
        _log1pf_special_values(flat, out)
    return out.reshape(d.shape)


_LOG1P_TINY_BITS = np.uint32(np.array(_LOG1P_TINY).view(np.uint32))
_LOG1P_PLAIN_SPAN = int(np.array(_LOG1P_BOUND).view(np.uint32) - _LOG1P_TINY_BITS)


def _log1pf_blocks(core: np.ndarray) -> tuple:
    """``_log1pf_core`` over a flat array, a block at a time: the results and where they are doubtful."""
    if core.size <= _LOG1P_BLOCK:
        out, offset = _log1pf_core(core, None)
        return out, np.flatnonzero(offset < 2 * _LOG1P_BAND)
    out = np.empty(core.size, _F32)
    doubtful = []
    for start in range(0, core.size, _LOG1P_BLOCK):
        stop = min(start + _LOG1P_BLOCK, core.size)
        _, offset = _log1pf_core(core[start:stop], out[start:stop])
        doubtful.append(np.flatnonzero(offset < 2 * _LOG1P_BAND) + start)
    return out, np.concatenate(doubtful)


_ALL_BITS_NAN = np.array(0xFFFFFFFF, np.uint32).view(_F32)


def _log1pf_special_values(d: np.ndarray, out: np.ndarray) -> None:
    big = d > _LOG1P_BOUND
    if big.any():  # (rare: the step-by-step logf, which sleef_logf misses by an ulp for 1 float in 15 million here)
        out[big] = sleef_logf_exact(d[big])
    # (Sleef sets every bit of the result below -1, -inf included: a NaN of bits 0xffffffff; a NaN input comes
    # through its arithmetic as it is, quieted)
    out[d < -_ONE] = _ALL_BITS_NAN
    nan = np.isnan(d)
    out[nan] = d[nan] + _F32(0)
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
