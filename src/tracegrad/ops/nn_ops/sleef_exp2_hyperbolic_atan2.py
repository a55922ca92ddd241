"""Sleef's ``exp2f_u10``, ``sinhf_u10``, ``coshf_u10`` and ``atan2f_u10`` (``xatan2f_u1``) as PyTorch's x86 builds
call them (``Sleef_exp2f16_u10``... in AVX-512, ``...f8_u10`` in AVX2: the same FMA code), on float32 NumPy arrays.

exp2f is float arithmetic throughout and is followed step by step, each fused multiply-add rounded once
(``aten_vec.fma32``). sinhf, coshf and atan2f carry their result in double-float and round it once at the end: that
rounds as the exact function does unless the function lies within a hair of a midpoint between two floats, so the
rest take NumPy's float64 function rounded to float, and only the doubtful elements the step-by-step emulation
(the pattern of ``sleef_float.sleef_tanhf``).
"""

from __future__ import annotations

import numpy as np

from ..aten_vec import FLOAT_MIDPOINT, FLOAT_MIDPOINT_BITS, fma32, offset_from_midpoint
from .sleef_float import _df_add, _df_divide, _df_mul, _df_reciprocal, _df_square, _pow2i, _sleef_expk2, xor_sign

_F32, _F64 = np.float32, np.float64
_ONE, _HALF = _F32(1), _F32(0.5)


def fused_horner(z: np.ndarray, coefficients: tuple) -> np.ndarray:
    """((c0 z + c1) z + c2) z + ... in float32, each step one fused multiply-add (as ``aten_vec.fma32`` rounds it).

    Each step's product is exact in float64 and its sum rounds there and then to float: one rounding unless the
    float64 sum fell on a midpoint between floats, where ``aten_vec.fma32`` settles those few elements."""
    z_wide = z.astype(_F64)
    u, new = np.full_like(z, coefficients[0]), np.empty_like(z)
    wide = np.multiply(z_wide, _F64(coefficients[0]))
    scratch, tie = np.empty(z.shape, np.int64), np.empty(z.shape, np.bool_)
    for step, c in enumerate(coefficients[1:], 1):
        wide += _F64(c)
        np.bitwise_and(wide.view(np.int64), FLOAT_MIDPOINT_BITS, out=scratch)
        np.equal(scratch, FLOAT_MIDPOINT, out=tie)
        np.copyto(new, wide, casting="same_kind")
        if tie.any():
            ties = np.flatnonzero(tie)
            new.flat[ties] = fma32(u.flat[ties], z.flat[ties], c)
        u, new = new, u
        if step < len(coefficients) - 1:
            np.copyto(wide, u)
            wide *= z_wide
    return u


# ---- exp2f_u10 -----------------------------------------------------------------------------------------------

_EXP2_POLY = tuple(_F32(c) for c in (0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1,
                                     0.2402264476e+0, 0.6931471825e+0, 1.0))


_EXP2_BLOCK = 32768  # (elements per pass: the float64 temporaries stay in cache)


def sleef_exp2f(d: np.ndarray) -> np.ndarray:
    """Sleef's exp2f_u10: 2^d = 2^q 2^s with q = rint(d), s = d - q in [-1/2, 1/2], a degree-7 polynomial in s
    by fused multiply-adds, scaled by 2^q in two halves; inf from 128, +0 below -150, NaN at NaN."""
    d = np.asarray(d, _F32)
    flat = d.reshape(-1)
    out = np.empty_like(flat)
    with np.errstate(all="ignore"):
        for start in range(0, flat.size, _EXP2_BLOCK):
            xs = flat[start : start + _EXP2_BLOCK]
            out[start : start + xs.size] = _exp2f_block(xs)
    return out.reshape(d.shape)


def _exp2f_block(d: np.ndarray) -> np.ndarray:
    plain = d.size and np.minimum.reduce(d) >= -150 and np.maximum.reduce(d) < 128  # (False with a NaN)
    x = d if plain else np.clip(np.nan_to_num(d), _F32(-151), _F32(129))  # (the lanes outside are set below)
    r = np.rint(x)
    s = np.subtract(x, r)  # (exact)
    u = fused_horner(s, _EXP2_POLY)
    q = r.astype(np.int32)
    half = q >> 1
    u *= _pow2i(half)
    u *= _pow2i(q - half)
    if not plain:
        u[d >= 128] = np.inf
        u[d < -150] = 0
        np.copyto(u, d, where=np.isnan(d))
    return u


# ---- sinhf_u10, coshf_u10 ------------------------------------------------------------------------------------


def _df_subtract(x: tuple, y: tuple) -> tuple:  # dfsub(df, df), |x| >= |y|
    s = x[0] - y[0]
    return s, (((x[0] - s) - y[0]) + x[1]) - y[1]


_SLEEF_HYPERBOLIC_INF = _F32(89)  # (beyond, Sleef's sinhf and coshf are inf)


def _sleef_hyperbolic_emulated(x: np.ndarray, odd: bool) -> np.ndarray:
    """Sleef's sinhf (odd) or coshf step by step: (e -+ 1/e) / 2 in double-float, e = exp|x| (expk2f), the sum
    rounded to float and halved; inf past 89 or where e overflows, NaN at NaN."""
    with np.errstate(all="ignore"):
        y = np.minimum(np.nan_to_num(np.abs(x)), _F32(90))  # (the rest is replaced below)
        d = _sleef_expk2(y)
        e = _df_reciprocal(d)
        d = _df_subtract(d, e) if odd else _df_add(d, e)
        out = np.asarray((d[0] + d[1]) * _HALF)
    out[(np.abs(x) > _SLEEF_HYPERBOLIC_INF) | np.isnan(out)] = np.inf
    if odd:
        out = np.copysign(out, x)
    np.copyto(out, x, where=np.isnan(x))
    return out


def _band_table(worst: dict, floor: float, doubtful: tuple | None = None) -> np.ndarray:
    """Doubt bands by the biased exponent of |x|, in ``offset_from_midpoint``'s units (2**29 an ulp): twice the
    largest distance found between Sleef's double-float value and the function in each binade (``worst``: ulps by
    unbiased exponent; the first and last entries hold for all smaller and larger ones), at least ``floor`` ulps.
    ``doubtful`` (e0, e1): every element from 2^e0 to 2^e1 is doubtful, and none below 2^e0."""
    ulps = np.empty(256)
    exponents = sorted(worst)
    for e in range(-127, 129):
        nearest = min(max(e, exponents[0]), exponents[-1])
        ulps[e + 127] = 2 * worst.get(e, worst[nearest]) + floor
    if doubtful is not None:
        ulps[: doubtful[0] + 127] = 0.0
        ulps[doubtful[0] + 127 : doubtful[1] + 127] = 1.0  # (wider than any offset)
    return np.ceil(ulps * 2**29).astype(np.int64)


# Sleef's double-float sinh and cosh (before the final rounding) against the float64 functions, the largest
# distance in float ulps seen among two million inputs per binade. sinh loses bits to cancellation near 0, down to
# 2^-25, below which its e - 1/e is exactly 2x (so sinh is x, as the float64 sinh rounds).
_SINH_BANDS = _band_table({-14: 0.0015, -13: 0.00078, -12: 0.00042, -11: 0.00021, -10: 0.0001, -9: 5e-05,
                           -8: 2.5e-05, -7: 6.5e-05, -6: 0.0003, -5: 0.0016, -4: 0.0081, -3: 0.016, -2: 0.0079,
                           -1: 0.0041, 0: 0.0031, 1: 0.0028}, floor=1e-4, doubtful=(-26, -14))
_COSH_BANDS = _band_table({-7: 1.1e-07, -6: 2.4e-07, -5: 3.3e-06, -4: 6.4e-05, -3: 0.00047, -2: 0.00085,
                           -1: 0.002, 0: 0.0027, 1: 0.0028}, floor=1e-5)
_HYPERBOLIC_LARGE_BITS = np.uint32(np.array(_F32(88)).view(np.uint32))  # (above |x| = 88, and NaN: emulated)
_ABS_BITS = np.uint32(0x7FFFFFFF)
_BLOCK = 65536  # (elements per pass: the float64 temporaries stay in cache)


def _sleef_hyperbolic(x: np.ndarray, odd: bool) -> np.ndarray:
    x = np.ascontiguousarray(x, _F32)
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    function, bands = (np.sinh, _SINH_BANDS) if odd else (np.cosh, _COSH_BANDS)
    doubtful = []
    with np.errstate(all="ignore"):
        for start in range(0, flat.size, _BLOCK):
            xs = flat[start : start + _BLOCK]
            wide = xs.astype(_F64)
            function(wide, out=wide)
            out[start : start + xs.size] = wide
            offset = wide.view(np.int64)
            offset &= FLOAT_MIDPOINT_BITS
            offset -= FLOAT_MIDPOINT
            np.abs(offset, out=offset)
            magnitude = xs.view(np.uint32) & _ABS_BITS
            near = offset < np.take(bands, magnitude >> 23)
            near |= magnitude > _HYPERBOLIC_LARGE_BITS
            doubtful.append(np.flatnonzero(near) + start)
    where = np.concatenate(doubtful) if doubtful else np.zeros(0, np.int64)
    if where.size:
        out[where] = _sleef_hyperbolic_emulated(flat[where], odd)
    return out.reshape(x.shape)


def sleef_sinhf(x: np.ndarray) -> np.ndarray:
    """Sleef's sinhf_u10: (e - 1/e) / 2 in double-float (e = exp|x|), rounded once, with x's sign; inf past
    |x| = 89 or where e overflows (from about 88.72), NaN at NaN. Checked against PyTorch for every float32 from
    2^-14 to 128 (below, every element takes the emulation)."""
    return _sleef_hyperbolic(x, odd=True)


def sleef_coshf(x: np.ndarray) -> np.ndarray:
    """Sleef's coshf_u10: (e + 1/e) / 2 in double-float (e = exp|x|), rounded once; inf past |x| = 89 or where e
    overflows, NaN at NaN. Checked against PyTorch for every float32 from 2^-13 to 128."""
    return _sleef_hyperbolic(x, odd=False)


# ---- atan2f_u10 (Sleef's xatan2f_u1) ------------------------------------------------------------------------

_ATAN_POLY = tuple(_F32(c) for c in (
    -0.00176397908944636583328247, 0.0107900900766253471374512, -0.0309564601629972457885742,
    0.0577365085482597351074219, -0.0838950723409652709960938, 0.109463557600975036621094,
    -0.142626821994781494140625, 0.199983194470405578613281))
_ATAN_THIRD = _F32(-0.333332866430282592773438)
_HALF_PI_DF = (_F32(1.5707963705062866211), _F32(-4.3711388286737928865e-08))
_PI_2, _PI_4, _PI = _F32(np.pi / 2), _F32(np.pi / 4), _F32(np.pi)
_ATAN2_TINY = _F32(2.9387372783541830947e-39)  # (|x| below: x and y scaled by 2^24 first)


def _atan2k(y: np.ndarray, x: np.ndarray) -> tuple:
    """Sleef's atan2kf_u1 of y >= 0 and x (floats): atan(y / |x|) or its complement by a quadrant, q pi/2 plus
    s (1 + s^2 P(s^2)), s the ratio of the smaller to the larger in double-float."""
    q = np.where(x < 0, np.int32(-2), np.int32(0))
    x = np.abs(x)
    swap = x < y
    q += swap
    zero = np.zeros_like(x)
    n = (np.where(swap, -x, y), zero)
    d = (np.where(swap, y, x), zero)
    s = _df_divide(n, d)
    t = _df_square(s)
    hi = t[0] + t[1]
    t = (hi, (t[0] - hi) + t[1])  # (dfnormalize)
    u = np.full_like(x, _ATAN_POLY[0])
    for c in _ATAN_POLY[1:]:
        u = fma32(u, t[0], c)
    v = u * t[0]
    w = _ATAN_THIRD + v
    t = _df_mul(t, (w, (_ATAN_THIRD - w) + v))
    one_plus = _ONE + t[0]
    t = _df_mul(s, (one_plus, ((_ONE - one_plus) + t[0]) + t[1]))
    return _df_add(_df_mul(_HALF_PI_DF, q.astype(_F32)), t)


def _sleef_atan2f_emulated(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Sleef's atan2f_u10 step by step, special values included."""
    with np.errstate(all="ignore"):
        tiny = np.abs(x) < _ATAN2_TINY
        x = np.where(tiny, x * _F32(2**24), x)
        y = np.where(tiny, y * _F32(2**24), y)
        d = _atan2k(np.abs(y), x)
        r = np.asarray(d[0] + d[1])
        r = xor_sign(r, x)
        x_inf = np.isinf(x)
        r = np.where(x_inf | (x == 0), _PI_2 - np.where(x_inf, np.copysign(_PI_2, x), _F32(0)), r)
        r = np.where(np.isinf(y), _PI_2 - np.where(x_inf, np.copysign(_PI_4, x), _F32(0)), r)
        r = np.where(y == 0, np.where(np.signbit(x), _PI, _F32(0)), r)
        r = xor_sign(np.asarray(r, _F32), y)
    r[np.isnan(x) | np.isnan(y)] = np.nan
    return r


def _atan2_model(y: np.ndarray, x: np.ndarray) -> tuple:
    """``_atan2k``'s value in float64 where its double-float steps are taken as exact: q pi/2 + s (1 + s^2 w),
    w = -1/3 + u s^2 with u = P(s^2) and the product u s^2 rounded to float as Sleef rounds them (their only
    float roundings that reach the result). Also the float64 s^2, whose rounding to float Sleef's polynomial
    takes: where that lies near a midpoint, Sleef's double-float square may round otherwise."""
    ax = np.abs(x)
    swap = ax < y
    s = np.divide(np.minimum(ax, y), np.maximum(ax, y), dtype=_F64)
    np.negative(s, out=s, where=swap)
    square = s * s
    t = square.astype(_F32)
    u = fused_horner(t, _ATAN_POLY)
    u *= t
    v = u.astype(_F64)
    v += _F64(_ATAN_THIRD)
    v *= square
    v += 1.0
    v *= s
    quadrant = np.signbit(x).astype(_F64)  # (q pi/2: q = -2 where x < 0, plus 1 where |x| < y)
    quadrant *= -2 * _HALF_PI_WIDE
    quadrant += swap * _HALF_PI_WIDE
    v += quadrant
    return v, square


_HALF_PI_WIDE = _F64(_HALF_PI_DF[0]) + _F64(_HALF_PI_DF[1])  # (exact: the pair's bits fit a double)
# The model was within 3e-7 float ulps of Sleef's double-float value, and the float64 s^2 within 6e-7 ulps of
# Sleef's (where s^2 > 2^-60; below, its rounding cannot reach the result), among 16 million random pairs of all
# magnitudes, near the diagonal too: the bands, 1e-5 ulps, leave a margin of 16.
_ATAN2_BAND = _ATAN2_SQUARE_BAND = int(1e-5 * 2**29)
_ATAN2_RANGE = (_F32(2.0**-103), _F32(2.0**123))  # (|x| and |y| outside: emulated, as are NaN, inf and 0)
_ATAN2_SPREAD = _F32(2.0**100)  # (|x| and |y| further apart: the ratio nears float's underflow: emulated)


_ATAN2_BLOCK = 32768  # (a smaller block than sinh's: atan2 has more float64 temporaries)


def _atan2_plain(ay: np.ndarray, ax: np.ndarray) -> np.ndarray:
    """Where both magnitudes are finite and within float's range with room to spare, and within 2^100 of each
    other (Sleef's double-float steps neither overflow nor underflow there)."""
    low, high = _ATAN2_RANGE
    plain = (ax >= low) & (ax <= high) & (ay >= low) & (ay <= high)  # (False at NaN)
    plain &= ay <= ax * _ATAN2_SPREAD
    plain &= ax <= ay * _ATAN2_SPREAD
    return plain


def sleef_atan2f(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Sleef's atan2f_u10 (xatan2f_u1) of float32 arrays of one shape: atan2 in double-float from the ratio of the
    smaller magnitude to the larger, with a float polynomial, rounded once; the special values as C's atan2.

    Its value is modelled in float64 (``_atan2_model``); the elements near a midpoint between floats, and those
    of extreme or special magnitudes, take the step-by-step emulation. Checked against PyTorch on 20 million
    random pairs of all magnitudes and 270 thousand whose atan2 lies within 0.002 ulp of a midpoint."""
    y, x = np.asarray(y, _F32), np.asarray(x, _F32)
    flat_y, flat_x = y.reshape(-1), x.reshape(-1)
    out = np.empty_like(flat_y)
    doubtful = []
    with np.errstate(all="ignore"):
        for start in range(0, flat_y.size, _ATAN2_BLOCK):
            ys, xs = flat_y[start : start + _ATAN2_BLOCK], flat_x[start : start + _ATAN2_BLOCK]
            ay = np.abs(ys)
            plain = _atan2_plain(ay, np.abs(xs))
            xp = xs
            if not plain.all():
                ay, xp = np.where(plain, ay, _ONE), np.where(plain, xs, _ONE)
            value, square = _atan2_model(ay, xp)
            r = value.astype(_F32)
            r = xor_sign(xor_sign(r, xs), ys)  # (the signs as Sleef gives them: by x's, then by y's)
            out[start : start + ys.size] = r
            near = offset_from_midpoint(value, _ATAN2_BAND) < 2 * _ATAN2_BAND
            near |= offset_from_midpoint(square, _ATAN2_SQUARE_BAND) < 2 * _ATAN2_SQUARE_BAND
            near |= ~plain
            doubtful.append(np.flatnonzero(near) + start)
    where = np.concatenate(doubtful) if doubtful else np.zeros(0, np.int64)
    if where.size:
        out[where] = _sleef_atan2f_emulated(flat_y[where], flat_x[where])
    return out.reshape(y.shape)
