"""Sleef's double-precision exp and log (``Sleef_expd8_u10`` / ``Sleef_logd8_u10``, the AVX-512 variants that
ATen's ``Vectorized<double>::exp`` / ``::log`` call; ``expd4_u10`` / ``logd4_u10`` under AVX2), in NumPy, bit for bit.

Sleef's ``xexp`` (src/libm/sleefsimddp.c): q = rint(d / ln 2), s = d - q ln 2 in two fused steps (Cody-Waite),
a degree-10 polynomial by Estrin's scheme, three fused Horner steps, then u * 2^q as two power-of-two
products (``vldexp2``); inf above ln(DBL_MAX), +0 below -1000. Its ``xlog_u1`` writes d = m * 2^e with m in
[0.75, 1.5) (AVX-512: ``getexp(d * 4/3)`` and ``getmant(d)``, taken apart) and sums e ln 2 + 2 atanh((m - 1) /
(m + 1)) in double-double (dd.h, FMA build).

Every fused multiply-add of Sleef's FMA builds is reproduced exactly: the product's rounding error from Dekker's
split product, the sum's from a two-sum (as ``aten_vec.fma``, which is correctly rounded but for rare
double-rounding ties of the final correction). The fast versions order the arithmetic for the magnitudes each
step is known to have (see below); ``sleef_exp_reference`` and ``sleef_log_reference`` transcribe Sleef's steps
one by one through ``aten_vec.fma`` and the tests check one against the other.

Verified against torch 2.13 (float64 softmax, log_softmax and cross_entropy, forward and backward, which reach
these functions through ``Vectorized<double>``) on an AVX-512 machine, and with ``ATEN_CPU_CAPABILITY=avx2``:
some 50 million elements, normal, large, tiny, infinite and NaN inputs, not one differing bit
(tests/nn/test_softmax_float64_bits_vs_torch.py keeps a fast subset). Note that torch's stand-alone
``torch.exp`` / ``torch.log`` are not these functions (they differ from them in the last bit).
"""

from __future__ import annotations

import numpy as np

from ..aten_vec import fma, fma64_finite, product_error, two_sum, veltkamp_split

_F64 = np.float64
_R_LN2 = _F64(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U = _F64(0.69314718055966295651160180568695068359375)
_L2L = _F64(0.28235290563031577122588448175013436025525412068e-12)
_LOG_DBL_MAX = _F64(float.fromhex("0x1.62e42fefa39efp+9"))
_EXP_POLY = tuple(_F64(c) for c in (  # c9 .. c0 of POLY10
    0.2081276378237164457e-8, 0.2511210703042288022e-7, 0.2755762628169491192e-6, 0.2755723402025388239e-5,
    0.2480158687479686264e-4, 0.1984126989855865850e-3, 0.1388888888914497797e-2, 0.8333333333314938210e-2,
    0.4166666666666602598e-1, 0.1666666666666669072e+0))


# ---- exp_u10 (Sleef's xexp) ----------------------------------------------------------------------------------
#
# Every fused step of xexp is a multiply-add whose addend outweighs the product (|s| <= ln 2 / 2 bounds them all:
# 0.167 against 0.015, 1 against 0.4...), so the sum's rounding error comes from Dekker's fast two-sum, three
# operations; the product's error from Veltkamp halves, split once per operand (s, the constants) and reused.
# This is ``aten_vec.fma``'s arithmetic, reordered: the same roundings in some 150 ufunc calls instead of 330.
# It still costs some 40 ns an element (NumPy has no fused multiply-add): about 25 times NumPy's exp.


def _fused(a: np.ndarray, a_parts: tuple, b, b_parts: tuple, c) -> np.ndarray:
    """``fma(a, b, c)`` where ``|c| >= |a * b|`` (exponent-wise), given both factors' Veltkamp halves."""
    p = a * b
    (a_hi, a_lo), (b_hi, b_lo) = a_parts, b_parts
    error = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo  # (a * b - p, exactly)
    t = c + p
    return t + (((c - t) + p) + error)  # (c + p - t, exactly: fast two-sum)


def _constant(c: float) -> tuple:
    value = _F64(c)
    return value, veltkamp_split(value)


# POLY10's five first steps fma(s, c_odd, c_even) as one broadcast call (rows Q9, PC, PD, PB, PA: c9 and c8,
# c7 and c6, ..., c1 and c0), which saves ufunc calls on small arrays
_EXP_FACTORS = np.array(_EXP_POLY[0::2])[:, None]
_EXP_FACTOR_HALVES = veltkamp_split(_EXP_FACTORS)
_EXP_ADDENDS = np.array(_EXP_POLY[1::2])[:, None]
_L2L_HI = _F64(np.float32(_L2L))  # (24 bits: u * _L2L_HI is exact for |u| < 2**29)
_L2L_LO = _L2L - _L2L_HI  # (29 bits: u * _L2L_LO exact for |u| < 2**24)
_EXP_BLOCK = 8192  # (elements per pass: the temporaries stay in cache)
_EXP_PLAIN = 700.0  # (|d| below: no overflow, no flush to zero, q a plain integer)


def sleef_exp(d: np.ndarray) -> np.ndarray:
    """Sleef's ``xexp`` (exp_u10, FMA builds) of float64 ``d``, elementwise: inf above ln(DBL_MAX), +0 below
    -1000, NaN at NaN."""
    d = np.asarray(d, _F64)
    if not d.ndim:
        return sleef_exp(d.reshape(1))[0]
    flat = d.reshape(-1)
    out = np.empty_like(flat)
    with np.errstate(all="ignore"):
        for start in range(0, flat.size, _EXP_BLOCK):
            block = flat[start : start + _EXP_BLOCK]
            out[start : start + _EXP_BLOCK] = _exp_block(block)
    return out.reshape(d.shape)


def _exp_block(d: np.ndarray) -> np.ndarray:
    largest = np.abs(d).max(initial=0.0)
    if not largest <= _EXP_PLAIN:  # (NaN fails the test too)
        return _exp_special(d)
    u = np.rint(d * _R_LN2)
    s = d - u * _L2U  # (fma: u * L2U is exact, 41 bits times 11)
    s = _minus_exact(s, u * _L2L_HI, u * _L2L_LO)  # (fma(u, -L2L, s): the product in two exact parts)
    s2 = s * s
    s4 = s2 * s2
    s8 = s4 * s4
    halves = veltkamp_split(s)
    q9, pc, pd, pb, pa = _fused(s, halves, _EXP_FACTORS, _EXP_FACTOR_HALVES, _EXP_ADDENDS)
    # high4 = fma(s2, PC, PD) and low4 = fma(s2, PB, PA), one call
    pairs = np.stack([pc, pb])
    high4, low4 = _fused(s2, veltkamp_split(s2), pairs, veltkamp_split(pairs), np.stack([pd, pa]))
    poly = _fused_by(s8, q9, _fused_by(s4, high4, low4))
    for addend in (0.5, 1.0, 1.0):
        poly = _fused(poly, veltkamp_split(poly), s, halves, addend)
    q = u.astype(np.int64)
    half = q >> 1
    return poly * _pow2i(half) * _pow2i(q - half)


def _fused_by(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return _fused(a, veltkamp_split(a), b, veltkamp_split(b), c)


def _minus_exact(s: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``s - (hi + lo)`` rounded once (hi, lo exact products, |lo| tiny): two-sum of s and -hi, then lo."""
    t = s - hi
    back = t - s
    error = (s - (t - back)) - (hi + back)
    return t + (error - lo)


def _exp_special(d: np.ndarray) -> np.ndarray:
    """The block holds |d| > 700, inf or NaN: those lanes by Sleef's masks, the rest as usual."""
    plain = np.abs(d) <= _EXP_PLAIN
    out = np.where(d > _LOG_DBL_MAX, np.inf, 0.0)
    out[plain] = _exp_block(d[plain]) if plain.any() else out[plain]
    middle = ~plain & (d >= -1000) & (d <= _LOG_DBL_MAX)  # (the power of two splits in two: no overflow early)
    if middle.any():
        out[middle] = sleef_exp_reference(d[middle])
    out[np.isnan(d)] = d[np.isnan(d)]
    return out


def _estrin10(s: np.ndarray, s2: np.ndarray, s4: np.ndarray, s8: np.ndarray, c: tuple) -> np.ndarray:
    """Sleef's POLY10 (estrin.h), each MLA fused."""
    def poly2(c1, c0):
        return fma(s, np.full_like(s, c1), c0)

    def poly4(c3, c2, c1, c0):
        return fma(s2, poly2(c3, c2), poly2(c1, c0))

    poly8 = fma(s4, poly4(*c[2:6]), poly4(*c[6:10]))
    return fma(s8, poly2(c[0], c[1]), poly8)


def _pow2i(q: np.ndarray) -> np.ndarray:
    """2^q for integer q in the normal range, from the exponent bits."""
    return ((q.astype(np.int64) + 1023) << 52).view(_F64)


def sleef_exp_reference(d: np.ndarray) -> np.ndarray:
    """``sleef_exp`` transcribed step by step with ``aten_vec.fma`` (slower: the reference for it)."""
    d = np.asarray(d, _F64)
    with np.errstate(all="ignore"):
        u = np.rint(d * _R_LN2)
        q = np.nan_to_num(u, nan=0.0, posinf=0.0, neginf=0.0).clip(-2**30, 2**30).astype(np.int64)
        s = fma(u, np.full_like(u, -_L2U), d)
        s = fma(u, np.full_like(u, -_L2L), s)
        s2 = s * s
        s4 = s2 * s2
        s8 = s4 * s4
        u = _estrin10(s, s2, s4, s8, _EXP_POLY)
        u = fma(u, s, _F64(0.5))
        u = fma(u, s, _F64(1.0))
        u = fma(u, s, _F64(1.0))
        half = q >> 1
        u = u * _pow2i(np.clip(half, -1100, 1100)) * _pow2i(np.clip(q - half, -1100, 1100))
        u = np.where(d > _LOG_DBL_MAX, np.inf, u)
        u = np.where(d < -1000, 0.0, u)
        u = np.where(np.isnan(d), d, u)
    return u


# ---- log_u10 (Sleef's xlog_u1, its AVX-512 path) ------------------------------------------------------------

_LN2_DD = (_F64(0.693147180559945286226764), _F64(2.319046813846299558417771e-17))
_LOG_POLY = tuple(_F64(c) for c in (  # c6 .. c0 of POLY7
    0.1532076988502701353e+0, 0.1525629051003428716e+0, 0.1818605932937785996e+0, 0.2222214519839380009e+0,
    0.2857142932794299317e+0, 0.3999999999635251990e+0, 0.6666666666667333541e+0))
_FOUR_THIRDS = _F64(1.0 / 0.75)


def _getexp(d: np.ndarray) -> np.ndarray:
    """``vgetexp``: floor(log2 |d|) as a double (subnormals normalised; +inf for inf)."""
    _, ex = np.frexp(d)
    return np.where(np.isinf(d), np.inf, ex - 1.0)


def _getmant(d: np.ndarray) -> np.ndarray:
    """``vgetmant(d, [0.75, 1.5))``: |d|'s significand, halved where it is 1.5 or more."""
    f, _ = np.frexp(np.abs(d))
    f = f + f  # (in [1, 2), exact)
    return np.where(f >= 1.5, f * 0.5, f)


def _dd_div(n0: np.ndarray, d: tuple) -> tuple:
    """dddiv (FMA build) of the double-double (n0, 0) by d."""
    t = 1.0 / d[0]
    s = n0 * t
    u = product_error(t, n0, s) + 0.0  # (fma(t, n0, -s) is that error exactly; + 0: fma(0, t, u)'s zero sign)
    v = fma64_finite(-d[1], t, fma64_finite(-d[0], t, 1.0))
    return s, fma64_finite(s, v, u)


def _poly7(x: np.ndarray, x2: np.ndarray, x4: np.ndarray) -> np.ndarray:
    """Sleef's POLY7 (estrin.h) of the log, each MLA fused; x = m's x^2 <= 0.04, so every addend outweighs its
    product."""
    halves = veltkamp_split(x)
    (c6, c6h), (c5, c5h), (c4, _), (c3, c3h), (c2, _), (c1, c1h), (c0, _) = _LOG_C
    poly3 = _fused(x2, veltkamp_split(x2), c6, c6h, _fused(x, halves, c5, c5h, c4))
    poly4 = _fused_by(x2, _fused(x, halves, c3, c3h, c2), _fused(x, halves, c1, c1h, c0))
    return _fused_by(x4, poly3, poly4)


_LOG_C = tuple(_constant(c) for c in _LOG_POLY)
_LN2_HI_PARTS = (_F64(np.float32(_LN2_DD[0])), _LN2_DD[0] - _F64(np.float32(_LN2_DD[0])))  # (24 + 29 bits)
_LN2_LO_PARTS = (_F64(np.float32(_LN2_DD[1])), _LN2_DD[1] - _F64(np.float32(_LN2_DD[1])))


def _ln2_times(e: np.ndarray) -> tuple:
    """ddmul((ln 2 hi, lo), e) (FMA build) for an integral e, |e| <= 1100: each constant in two parts whose
    products with e are exact, so both fused steps are exact sums."""
    hi = _LN2_DD[0] * e
    error = (_LN2_HI_PARTS[0] * e - hi) + _LN2_HI_PARTS[1] * e  # (fma(ln2 hi, e, -hi): exact, representable)
    return hi, _minus_exact(error, -(_LN2_LO_PARTS[0] * e), -(_LN2_LO_PARTS[1] * e))  # (fma(ln2 lo, e, error))


def sleef_log(d: np.ndarray) -> np.ndarray:
    """Sleef's ``xlog_u1`` (log_u10, AVX-512 path) of float64 ``d``, elementwise: -inf at 0, NaN below 0 or at NaN,
    inf at inf. (AVX2's path takes e and m apart by ilogb and ldexp instead: the same e and m for normal d.)"""
    d = np.asarray(d, _F64)
    if not d.ndim:
        return sleef_log(d.reshape(1))[0]
    with np.errstate(all="ignore"):
        special = ~(np.abs(d) <= _F64(np.finfo(np.float64).max))
        special |= d <= 0
        plain = np.where(special, 1.0, d) if special.any() else d
        r = _log_finite(plain)
        if special.any():
            r[np.isposinf(d)] = np.inf
            r[d < 0] = np.nan
            r[np.isnan(d)] = d[np.isnan(d)]  # (a NaN comes out as it went in, its sign kept)
            r[d == 0] = -np.inf
    return r


def _log_finite(d: np.ndarray) -> np.ndarray:
    """``sleef_log`` of positive finite d."""
    e = _getexp(d * _FOUR_THIRDS)
    e[np.isposinf(e)] = 1024.0
    m = _getmant(d)
    den = two_sum(1.0, m)
    x_hi, x_lo = _dd_div(m - 1.0, den)  # (m - 1 is exact for m in [0.75, 1.5): the numerator's low part is 0)
    x2 = x_hi * x_hi
    x4 = x2 * x2
    t = _poly7(x2, x4, x4 * x4)
    s_hi, s_lo = _ln2_times(e)
    # ddadd(s, 2x), |s| >= |2x| assumed as Sleef assumes it
    y_hi, y_lo = x_hi * 2.0, x_lo * 2.0
    hi = s_hi + y_hi
    s_lo = (((s_hi - hi) + y_hi) + s_lo) + y_lo
    # ddadd(s, x2 * x * t)
    y = (x2 * x_hi) * t
    s_hi = hi + y
    return s_hi + (((hi - s_hi) + y) + s_lo)


# ---- references: Sleef's steps transcribed with aten_vec.fma (slower; the tests check the above against them) --


def _dd_div_reference(n: tuple, d: tuple) -> tuple:  # dddiv, FMA build
    t = 1.0 / d[0]
    s = n[0] * t
    u = fma(t, n[0], -s)
    v = fma(-d[1], t, fma(-d[0], t, np.ones_like(t)))
    return s, fma(s, v, fma(n[1], t, u))


def _poly7_reference(x: np.ndarray, x2: np.ndarray, x4: np.ndarray, c: tuple) -> np.ndarray:
    """Sleef's POLY7 (estrin.h), each MLA fused."""
    def poly2(c1, c0):
        return fma(x, np.full_like(x, c1), c0)

    poly3 = fma(x2, np.full_like(x, c[0]), poly2(c[1], c[2]))
    poly4 = fma(x2, poly2(c[3], c[4]), poly2(c[5], c[6]))
    return fma(x4, poly3, poly4)


def sleef_log_reference(d: np.ndarray) -> np.ndarray:
    """``sleef_log`` transcribed step by step."""
    d = np.asarray(d, _F64)
    with np.errstate(all="ignore"):
        e = _getexp(d * _FOUR_THIRDS)
        e = np.where(np.isposinf(e), 1024.0, e)
        m = _getmant(d)
        x = _dd_div_reference(two_sum(np.full_like(m, -1.0), m), two_sum(np.ones_like(m), m))
        x2 = x[0] * x[0]
        x4 = x2 * x2
        x8 = x4 * x4
        t = _poly7_reference(x2, x4, x8, _LOG_POLY)
        # ddmul(ln 2, e), FMA build
        hi = _LN2_DD[0] * e
        s = (hi, fma(np.full_like(e, _LN2_DD[1]), e, fma(np.full_like(e, _LN2_DD[0]), e, -hi)))
        # ddadd(s, 2x), |s| >= |2x| assumed as Sleef assumes it
        y = (x[0] * 2.0, x[1] * 2.0)
        hi = s[0] + y[0]
        s = (hi, (((s[0] - hi) + y[0]) + s[1]) + y[1])
        # ddadd(s, x2 * x * t)
        y = (x2 * x[0]) * t
        hi = s[0] + y
        r = hi + (((s[0] - hi) + y) + s[1])
        r = np.where(np.isposinf(d), np.inf, r)
        r = np.where(d < 0, np.nan, r)
        r = np.where(np.isnan(d), d, r)
        r = np.where(d == 0, -np.inf, r)
    return r
