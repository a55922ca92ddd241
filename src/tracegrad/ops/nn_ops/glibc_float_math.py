"""glibc's float ``erff``, ``expm1f``, ``tanhf``, ``log1pf`` and ``expf`` on float32 arrays, for the scalar loops
of PyTorch's CPU kernels.

Up to glibc 2.40 ``erff``, ``expm1f``, ``tanhf`` and ``log1pf`` are Sun's fdlibm routines in float arithmetic
(``tanhf`` an ulp or two from the correctly rounded value in some 8% of cases); later releases took CORE-MATH's
correctly rounded ones (taken here as from 2.41: tanh / erf in double precision rounded to float). ``expf`` has been
ARM's table-driven routine in double precision (within 0.502 ulp) since 2.28.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from ..aten_vec import cpu_has_fma, fma, offset_from_midpoint
from ._basic import erf_array

_F32 = np.float32
_F64 = np.float64
_ONE, _TWO, _HALF = _F32(1), _F32(2), _F32(0.5)


@lru_cache(maxsize=1)
def fdlibm_float_math() -> bool:
    """Whether the C library's erff / tanhf are the fdlibm ones (glibc before 2.41)."""
    try:
        name, _, version = os.confstr("CS_GNU_LIBC_VERSION").partition(" ")
        major, minor = (int(part) for part in version.split(".")[:2])
    except (AttributeError, OSError, ValueError):
        return False
    return name == "glibc" and (major, minor) < (2, 41)


def _f32(*values: float) -> tuple:
    return tuple(_F32(v) for v in values)


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint32) & np.uint32(0x7FFFFFFF)


def _horner(z: np.ndarray, coefficients: tuple) -> np.ndarray:
    """c0 + z*(c1 + z*(c2 + ...)) in float32, each product and sum rounded."""
    total = np.full_like(z, coefficients[-1])
    for c in coefficients[-2::-1]:
        total *= z
        total += c
    return total


# 2^(i/32) in double as glibc's table holds them (stored less i << 47, which its index arithmetic adds back)
EXP2_TABLE = (np.array([
    0x3FF0000000000000, 0x3FEFD9B0D3158574, 0x3FEFB5586CF9890F, 0x3FEF9301D0125B51, 0x3FEF72B83C7D517B,
    0x3FEF54873168B9AA, 0x3FEF387A6E756238, 0x3FEF1E9DF51FDEE1, 0x3FEF06FE0A31B715, 0x3FEEF1A7373AA9CB,
    0x3FEEDEA64C123422, 0x3FEECE086061892D, 0x3FEEBFDAD5362A27, 0x3FEEB42B569D4F82, 0x3FEEAB07DD485429,
    0x3FEEA47EB03A5585, 0x3FEEA09E667F3BCD, 0x3FEE9F75E8EC5F74, 0x3FEEA11473EB0187, 0x3FEEA589994CCE13,
    0x3FEEACE5422AA0DB, 0x3FEEB737B0CDC5E5, 0x3FEEC49182A3F090, 0x3FEED503B23E255D, 0x3FEEE89F995AD3AD,
    0x3FEEFF76F2FB5E47, 0x3FEF199BDD85529C, 0x3FEF3720DCEF9069, 0x3FEF5818DCFBA487, 0x3FEF7C97337B9B5F,
    0x3FEFA4AFA2A490DA, 0x3FEFD0765B6E4540], np.uint64) + (np.arange(32, dtype=np.uint64) << np.uint64(47))
).view(_F64)

# ---- expf ------------------------------------------------------------------------------------------------------
# glibc's expf is ARM's routine of the same shape (2^(k/32) from the table times a cubic, in double) on x / ln 2;
# its FMA build fuses x * 32/ln2 into both the rounding to k (+ 0x1.8p52) and r = x 32/ln2 - k, besides the cubic.
# (Unfused throughout, it would differ at two floats: 32.564632 and -63.09946.)

_EXPF_INV_LN2_N = float.fromhex("0x1.71547652b82fep+0") * 32
# the cubic of exp2's remainder r (2^r - 1, 1 + C2 r + ...), and expf's, whose remainder is 32 times larger
EXP2_POLY = tuple(float.fromhex(c) for c in ("0x1.c6af84b912394p-5", "0x1.ebfce50fac4f3p-3", "0x1.62e42ff0c52d6p-1"))
_EXPF_POLY = (EXP2_POLY[0] / 32**3, EXP2_POLY[1] / 32**2, EXP2_POLY[2] / 32)
_EXPF_SHIFT = float.fromhex("0x1.8p52")
_EXPF_OVERFLOW, _EXPF_UNDERFLOW = _F32(float.fromhex("0x1.62e42ep6")), _F32(float.fromhex("-0x1.9fe368p6"))
# The fused and unfused r differ by an ulp of x 32/ln2 (up to 2^-41), which moves the result by some 2^-46: 2^12
# units of the last float64 bit is 2^-41 of it, far enough from a midpoint to round alike.
_EXPF_BAND = 2**12


def _expf_fused(xd: np.ndarray) -> np.ndarray:
    """expf's double result (before its rounding to float) of x (as double) within its finite range, as glibc's
    FMA build computes it."""
    factor = np.full_like(xd, _EXPF_INV_LN2_N)
    k = fma(factor, xd, np.full_like(xd, _EXPF_SHIFT)) - _EXPF_SHIFT
    r = fma(factor, xd, -k)
    y = fma(np.full_like(r, _EXPF_POLY[2]), r, np.ones_like(r))
    y = fma(fma(np.full_like(r, _EXPF_POLY[0]), r, np.full_like(r, _EXPF_POLY[1])), r * r, y)
    return y * _exp2_scale(k)


def _exp2_scale(k: np.ndarray) -> np.ndarray:
    """2^(k/32) for integral k (as double), from the table."""
    ki = k.astype(np.int64)
    return np.ldexp(EXP2_TABLE[ki & 31], (ki >> 5).astype(np.int32))


def exp_float(x: np.ndarray) -> np.ndarray:
    """The C library's expf of a float32 array (glibc's, fused where the CPU has FMA): inf above 88.72, +0 below
    -103.97, NaN at NaN."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        inside = (x <= _EXPF_OVERFLOW) & (x >= _EXPF_UNDERFLOW)
        everywhere = bool(inside.all())  # (NaN is outside)
        xd = x.astype(_F64) if everywhere else np.where(inside, x, _F32(0)).astype(_F64)
        z = xd * _EXPF_INV_LN2_N
        k = np.rint(z)
        r = z - k
        wide = (_EXPF_POLY[0] * r + _EXPF_POLY[1]) * (r * r) + (_EXPF_POLY[2] * r + 1.0)
        wide *= _exp2_scale(k)
        out = np.asarray(wide.astype(_F32))
        if cpu_has_fma():  # (where the fused build could round otherwise: near a midpoint, or subnormal)
            doubtful = offset_from_midpoint(wide, _EXPF_BAND) < 2 * _EXPF_BAND
            doubtful |= xd < -87
            doubtful |= np.abs(r) > 0.5 - 2.0**-30  # (k itself may round the other way)
            where = np.flatnonzero(doubtful)
            if where.size:
                out.flat[where] = _expf_fused(xd.flat[where]).astype(_F32)
    if not everywhere:
        out[~inside] = np.where(x[~inside] > 0, _F32(np.inf), _F32(0))
        np.copyto(out, x, where=np.isnan(x))
    return out


# ---- expm1f --------------------------------------------------------------------------------------------------

_LN2_HI, _LN2_LO, _INV_LN2 = _f32(6.9313812256e-01, 9.0580006145e-06, 1.4426950216e00)
_EXPM1_Q = _f32(1.0, -3.3333335072e-02, 1.5873016091e-03, -7.9365076090e-05, 4.0082177293e-06, -2.0109921195e-07)


def _add_exponent(y: np.ndarray, k: np.ndarray) -> np.ndarray:
    return (y.view(np.int32) + (k << 23)).view(_F32)


def _expm1f_reduced(x: np.ndarray) -> np.ndarray:
    """fdlibm's expm1f for finite x with -27 ln 2 < x < 88.7 (all tanhf needs)."""
    magnitude = _bits(x)
    negative = np.signbit(x)
    k = np.zeros(x.shape, np.int32)
    c = np.zeros_like(x)
    reduce = magnitude > 0x3EB17218  # |x| > ln2 / 2
    near = reduce & (magnitude < 0x3F851592)  # |x| < 3 ln2 / 2: k = +-1
    k[near] = np.where(negative[near], -1, 1)
    far = reduce & ~near
    k[far] = (_INV_LN2 * x[far] + np.where(negative[far], -_HALF, _HALF)).astype(np.int32)  # (truncates)
    t = k[reduce].astype(_F32)
    hi = x[reduce] - t * _LN2_HI
    lo = t * _LN2_LO
    xr = x.copy()
    xr[reduce] = hi - lo
    c[reduce] = (hi - xr[reduce]) - lo
    out = _expm1f_kernel(xr, c, k)
    tiny = magnitude < 0x33000000  # (|x| < 2^-25: x itself)
    out[tiny] = x[tiny]
    return out


def _expm1f_kernel(x: np.ndarray, c: np.ndarray, k: np.ndarray) -> np.ndarray:
    hfx = _HALF * x
    hxs = x * hfx
    r1 = _horner(hxs, _EXPM1_Q)
    t = _F32(3) - r1 * hfx
    e = hxs * ((r1 - t) / (_F32(6) - x * t))
    out = x - (x * e - hxs)  # (k == 0)
    e = (x * (e - c) - c) - hxs
    rules = (
        (k == -1, lambda: _HALF * (x - e) - _HALF),
        ((k == 1) & (x < _F32(-0.25)), lambda: -_TWO * (e - (x + _HALF))),
        ((k == 1) & (x >= _F32(-0.25)), lambda: _ONE + _TWO * (x - e)),
        ((k <= -2) | (k > 56), lambda: _add_exponent(_ONE - (e - x), k) - _ONE),
        ((k >= 2) & (k < 23), lambda: _add_exponent(
            (np.int32(0x3F800000) - (np.int32(0x1000000) >> np.clip(k, 0, 31))).view(_F32) - (e - x), k)),
        ((k >= 23) & (k <= 56), lambda: _add_exponent(
            (x - (e + ((0x7F - np.clip(k, 0, 0x7F)) << 23).astype(np.int32).view(_F32))) + _ONE, k)),
    )
    with np.errstate(all="ignore"):
        for where, value in rules:
            if where.any():
                out[where] = value()[where]
    return out


# ---- tanhf ---------------------------------------------------------------------------------------------------


def fdlibm_tanhf(x: np.ndarray) -> np.ndarray:
    """fdlibm's tanhf: 1 - 2 / (expm1(2|x|) + 2) from |x| = 1, -t / (t + 2), t = expm1(-2|x|), below."""
    magnitude = _bits(x)
    a = np.abs(x)
    out = np.ones_like(x)  # (|x| >= 22, and inf)
    big = (magnitude >= 0x3F800000) & (magnitude < 0x41B00000)
    t = _expm1f_reduced(_TWO * a[big])
    out[big] = _ONE - _TWO / (t + _TWO)
    small = (magnitude >= 0x24000000) & (magnitude < 0x3F800000)
    t = _expm1f_reduced(-_TWO * a[small])
    out[small] = -t / (t + _TWO)
    tiny = magnitude < 0x24000000  # (|x| < 2^-55: x (1 + x) is x)
    out[tiny] = a[tiny]
    out = np.copysign(out, x)
    out[np.isnan(x)] = np.nan
    return out


# ---- erff ----------------------------------------------------------------------------------------------------

_EFX = _F32(1.2837916613e-01)
_ERX = _F32(8.4506291151e-01)
_PP = _f32(1.2837916613e-01, -3.2504209876e-01, -2.8481749818e-02, -5.7702702470e-03, -2.3763017452e-05)
_QQ = _f32(1.0, 3.9791721106e-01, 6.5022252500e-02, 5.0813062117e-03, 1.3249473704e-04, -3.9602282413e-06)
_PA = _f32(-2.3621185683e-03, 4.1485610604e-01, -3.7220788002e-01, 3.1834661961e-01, -1.1089469492e-01,
           3.5478305072e-02, -2.1663755178e-03)
_QA = _f32(1.0, 1.0642088205e-01, 5.4039794207e-01, 7.1828655899e-02, 1.2617121637e-01, 1.3637083583e-02,
           1.1984500103e-02)
_RA = _f32(-9.8649440333e-03, -6.9385856390e-01, -1.0558626175e01, -6.2375331879e01, -1.6239666748e02,
           -1.8460508728e02, -8.1287437439e01, -9.8143291473e00)
_SA = _f32(1.0, 1.9651271820e01, 1.3765776062e02, 4.3456588745e02, 6.4538726807e02, 4.2900814819e02,
           1.0863500214e02, 6.5702495575e00, -6.0424413532e-02)
_RB = _f32(-9.8649431020e-03, -7.9928326607e-01, -1.7757955551e01, -1.6063638306e02, -6.3756646729e02,
           -1.0250950928e03, -4.8351919556e02)
_SB = _f32(1.0, 3.0338060379e01, 3.2579251099e02, 1.5367296143e03, 3.1998581543e03, 2.5530502930e03,
           4.7452853394e02, -2.2440952301e01)


def _erf_small(x: np.ndarray) -> np.ndarray:  # |x| < 0.84375
    z = x * x
    y = _horner(z, _PP) / _horner(z, _QQ)
    out = x + x * y
    tiny = _bits(x) < 0x31800000  # |x| < 2^-28
    out[tiny] = (x + _EFX * x)[tiny]
    subnormal_range = _bits(x) < 0x04000000  # (scaled by 16 so as not to lose bits to underflow)
    out[subnormal_range] = (_F32(0.0625) * (_F32(16) * x + (_F32(16) * _EFX) * x))[subnormal_range]
    return out


def _erf_middle(x: np.ndarray) -> np.ndarray:  # 0.84375 <= |x| < 1.25
    s = np.abs(x) - _ONE
    value = _ERX + _horner(s, _PA) / _horner(s, _QA)
    return np.copysign(value, x)


def _erf_large(x: np.ndarray) -> np.ndarray:  # 1.25 <= |x| < 6
    a = np.abs(x)
    s = _ONE / (a * a)
    near = _bits(a) < 0x4036DB6E  # |x| < 1 / 0.35
    ratio = np.where(near, _horner(s, _RA) / _horner(s, _SA), _horner(s, _RB) / _horner(s, _SB))
    z = (a.view(np.uint32) & np.uint32(0xFFFFF000)).view(_F32)
    r = exp_float(-z * z - _F32(0.5625)) * exp_float((z - a) * (z + a) + ratio)
    return np.copysign(_ONE - r / a, x)


def fdlibm_erff(x: np.ndarray) -> np.ndarray:
    """fdlibm's erff: rational fits on [0, 0.84375) and [0.84375, 1.25), exp-scaled fits up to 6, 1 beyond."""
    magnitude = _bits(x)
    out = np.copysign(np.ones_like(x), x)
    with np.errstate(all="ignore"):
        for where, part in ((magnitude < 0x3F580000, _erf_small),
                            ((magnitude >= 0x3F580000) & (magnitude < 0x3FA00000), _erf_middle),
                            ((magnitude >= 0x3FA00000) & (magnitude < 0x40C00000), _erf_large)):
            if where.any():
                out[where] = part(x[where])
    out[np.isnan(x)] = np.nan
    return out


# ---- log1pf --------------------------------------------------------------------------------------------------

_LOG1P_LN2_HI, _LOG1P_LN2_LO = _f32(6.9313812256e-01, 9.0580006145e-06)
_LP = _f32(6.6666668653e-01, 4.0000000596e-01, 2.8571429849e-01, 2.2222198546e-01, 1.8183572590e-01,
           1.5313838422e-01, 1.4798198640e-01)
_LOG1P_TWO_THIRDS = _F32(0.66666666666666666)


def _log1pf_reduced(x: np.ndarray) -> tuple:
    """fdlibm's reduction of 1 + x (x >= 0.41422 or x <= -0.2929): 1 + x = 2^k (1 + f) with 1 + f in
    [sqrt(2)/2, sqrt(2)), c the rounding error of 1 + x over it; ``tiny``: the mantissa bits that tell |f| < 2^-20."""
    hx = x.view(np.int32)
    sum_fits = hx < 0x5A000000  # (below 2^53: 1 + x rounds, and c corrects it)
    u = np.where(sum_fits, _ONE + x, x)
    k = (u.view(np.int32) >> 23) - 127
    c = np.where(k > 0, _ONE - (u - x), x - (u - _ONE))
    c /= u
    c[~sum_fits] = 0
    hu = u.view(np.int32) & 0x007FFFFF
    halve = hu >= 0x3504F7  # (1 + f would pass sqrt(2): normalise u / 2 instead)
    u = (hu | np.where(halve, np.int32(0x3F000000), np.int32(0x3F800000))).view(_F32)
    k[halve] += 1
    tiny = np.where(halve, (0x00800000 - hu) >> 2, hu) == 0
    return k.astype(_F32), u - _ONE, c, tiny


def fdlibm_log1pf(x: np.ndarray) -> np.ndarray:
    """fdlibm's log1pf in float arithmetic, as glibc before 2.41 runs it (checked against it for every float32):
    log1p x = k ln 2 + log(1 + f) with 2 atanh(s), s = f / (2 + f), as a polynomial in s^2; x itself below 2^-54.

    The usual inputs take one formula in blocks (``_log1pf_usual``); the rest (tiny, huge, -1 and below, inf,
    NaN, 1 + x within 2^-20 of a power of two) follow every branch (``_fdlibm_log1pf_by_cases``)."""
    x = np.asarray(x, _F32)
    flat = x.reshape(-1)
    out = np.empty(flat.size, _F32)
    rest = []
    with np.errstate(all="ignore"):  # (the lanes left to the branches are computed and dropped)
        for start in range(0, flat.size, _LOG1P_BLOCK):
            part = flat[start:start + _LOG1P_BLOCK]
            rest.append(np.flatnonzero(_log1pf_usual(part, out[start:start + _LOG1P_BLOCK])) + start)
    where = np.concatenate(rest) if rest else np.zeros(0, np.intp)
    if where.size:
        out[where] = _fdlibm_log1pf_by_cases(flat[where])
    return out.reshape(x.shape)


_LOG1P_BLOCK = 32768  # (elements per pass: the temporaries stay in cache)
_LOG1P_MINUS_ONE_BITS = np.int32(-0x40800000)  # (-1.0's bits: the int32 from there to -1 are x <= -1 and -NaN)


def _log1pf_usual(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """fdlibm's log1pf of a flat block into ``out`` by its main formula, k ln2_hi - ((hfsq - (s (hfsq + R) +
    (k ln2_lo + c))) - f), which with k = c = 0 is -((hfsq - s (hfsq + R)) - f), the same bits as the k = 0
    branch's f - (hfsq - s (hfsq + R)). Returns where it does not apply."""
    hx = x.view(np.int32)
    magnitude = hx & 0x7FFFFFFF
    # |x| < 2^-29, x >= 2^53 (1 + x is x), inf, NaN; then x <= -1
    rest = (magnitude - 0x31000000).view(np.uint32) >= np.uint32(0x5A000000 - 0x31000000)
    rest |= (hx >= _LOG1P_MINUS_ONE_BITS) & (hx < 0)
    u = x + _ONE
    bits = u.view(np.int32)
    k = (bits >> 23) - 127
    # c: the rounding error of 1 + x, relative to it
    c = np.where(k > 0, _ONE - (u - x), x - (u - _ONE))
    c /= u
    hu = bits & 0x007FFFFF
    halve = hu >= 0x3504F7  # (1 + f would pass sqrt(2): normalise u / 2 instead)
    rest |= (hu == 0) | (hu >= 0x7FFFFD)  # (then |f| < 2^-20: a shorter series, in the branches)
    hu |= 0x3F800000
    np.subtract(hu, 0x00800000, out=hu, where=halve)
    np.add(k, halve, out=k, casting="unsafe")
    f = hu.view(_F32)
    f -= _ONE
    kf = k.astype(_F32)
    direct = (hx < 0x3ED413D7) & ((hx > 0) | (hx <= np.int32(-0x416A09E1)))  # -0.2929 < x < 0.41422: k = 0
    np.copyto(f, x, where=direct)
    kf[direct] = 0
    c[kf == 0] = 0  # (the k = 0 branch has no correction term, reduced or not)
    rest &= ~direct | (magnitude < 0x31000000)  # (the short series is for k != 0 only)
    hfsq = f * f
    hfsq *= _HALF
    s = f + _TWO
    np.divide(f, s, out=s)
    z = s * s
    r = _horner(z, _LP)
    r *= z
    r += hfsq
    r *= s  # s (hfsq + R)
    np.multiply(kf, _LOG1P_LN2_LO, out=z)
    z += c
    r += z
    np.subtract(hfsq, r, out=r)
    r -= f
    np.multiply(kf, _LOG1P_LN2_HI, out=out)
    out -= r
    return rest


def _fdlibm_log1pf_by_cases(x: np.ndarray) -> np.ndarray:
    """``fdlibm_log1pf`` branch by branch, for any input."""
    x = np.asarray(x, _F32)
    hx = x.view(np.int32)
    magnitude = hx & 0x7FFFFFFF
    with np.errstate(all="ignore"):  # (the lanes a rule does not cover are computed and dropped)
        direct = (hx < 0x3ED413D7) & ((hx > 0) | (hx <= np.int32(-0x416A09E1)))  # -0.2929 < x < 0.41422: k = 0
        k, f, c, tiny = _log1pf_reduced(x)
        f[direct], k[direct], tiny[direct] = x[direct], 0, False
        hfsq = _HALF * f * f
        s = f / (_TWO + f)
        z = s * s
        r = z * _horner(z, _LP)
        r += hfsq
        r *= s  # s (hfsq + R)
        out = np.where(k == 0, f - (hfsq - r), k * _LOG1P_LN2_HI - ((hfsq - (r + (k * _LOG1P_LN2_LO + c))) - f))
        if tiny.any():  # (|f| < 2^-20: a shorter series)
            r = hfsq * (_ONE - _LOG1P_TWO_THIRDS * f)
            near = np.where(k == 0, f - r, k * _LOG1P_LN2_HI - ((r - (k * _LOG1P_LN2_LO + c)) - f))
            exact = np.where(k == 0, _F32(0), k * _LOG1P_LN2_HI + (c + k * _LOG1P_LN2_LO))
            out[tiny] = np.where(f == 0, exact, near)[tiny]
        small = magnitude < 0x31000000  # (|x| < 2^-29)
        out[small] = np.where(magnitude < 0x24800000, x, x - x * x * _HALF)[small]
        out[hx >= 0x7F800000] = np.inf  # (+inf; NaN below)
        out[(x < -1) | np.isnan(x)] = np.nan
        out[x == -1] = -np.inf
    return out


def log1p_float(x: np.ndarray) -> np.ndarray:
    """The C library's log1pf of a float32 array: fdlibm's or, from glibc 2.41, the correctly rounded value."""
    x = np.asarray(x, _F32)
    if fdlibm_float_math():
        return fdlibm_log1pf(x)
    with np.errstate(all="ignore"):
        return np.log1p(x.astype(_F64)).astype(_F32)


# ---- what the running C library computes ---------------------------------------------------------------------


def erf_float(x: np.ndarray) -> np.ndarray:
    """The C library's erff of a float32 array."""
    return fdlibm_erff(x) if fdlibm_float_math() else erf_array(x.astype(_F64)).astype(_F32)


def tanh_float(x: np.ndarray) -> np.ndarray:
    """The C library's tanhf of a float32 array."""
    return fdlibm_tanhf(x) if fdlibm_float_math() else np.tanh(x.astype(_F64)).astype(_F32)


def expm1_float(x: np.ndarray) -> np.ndarray:
    """The C library's expm1f of a float32 array: fdlibm's (inf above 88.72168, -1 below -27 ln 2) or, from
    glibc 2.41, the correctly rounded value."""
    x = np.asarray(x, _F32)
    if not fdlibm_float_math():
        with np.errstate(over="ignore"):
            return np.expm1(x.astype(_F64)).astype(_F32)
    inside = (x > _F32(-18.714973875)) & (x <= _F32(88.7216796875))  # (-27 ln 2 < x <= fdlibm's o_threshold)
    out = np.where(x > 0, _F32(np.inf), _F32(-1))  # (NaN is neither inside nor > 0: set below)
    if inside.any():
        out[inside] = _expm1f_reduced(x[inside])
    out[np.isnan(x)] = np.nan
    return out


# ---- logf ------------------------------------------------------------------------------------------------------
# glibc's logf since 2.28 (Szabolcs Nagy's, from ARM's optimized routines): x = 2^k z with z within [0.7, 1.4],
# log x = log1p(z / c - 1) + log c + k ln 2 for the table's c nearest z, a cubic for log1p, all in double. On
# x86-64 machines with FMA glibc runs the build compiled with -mfma, whose every multiply-add is fused.

_LOGF_TABLE = np.array([float.fromhex(v) for v in (
    "0x1.661ec79f8f3bep+0", "-0x1.57bf7808caadep-2", "0x1.571ed4aaf883dp+0", "-0x1.2bef0a7c06ddbp-2",
    "0x1.49539f0f010bp+0", "-0x1.01eae7f513a67p-2", "0x1.3c995b0b80385p+0", "-0x1.b31d8a68224e9p-3",
    "0x1.30d190c8864a5p+0", "-0x1.6574f0ac07758p-3", "0x1.25e227b0b8eap+0", "-0x1.1aa2bc79c81p-3",
    "0x1.1bb4a4a1a343fp+0", "-0x1.a4e76ce8c0e5ep-4", "0x1.12358f08ae5bap+0", "-0x1.1973c5a611cccp-4",
    "0x1.0953f419900a7p+0", "-0x1.252f438e10c1ep-5", "0x1p+0", "0x0p+0",
    "0x1.e608cfd9a47acp-1", "0x1.aa5aa5df25984p-5", "0x1.ca4b31f026aap-1", "0x1.c5e53aa362eb4p-4",
    "0x1.b2036576afce6p-1", "0x1.526e57720db08p-3", "0x1.9c2d163a1aa2dp-1", "0x1.bc2860d22477p-3",
    "0x1.886e6037841edp-1", "0x1.1058bc8a07ee1p-2", "0x1.767dcf5534862p-1", "0x1.4043057b6ee09p-2")]).reshape(16, 2)
_LOGF_INVC, _LOGF_LOGC = np.ascontiguousarray(_LOGF_TABLE[:, 0]), np.ascontiguousarray(_LOGF_TABLE[:, 1])
_LOGF_LN2 = float.fromhex("0x1.62e42fefa39efp-1")
_LOGF_POLY = tuple(float.fromhex(v) for v in ("-0x1.00ea348b88334p-2", "0x1.5575b0be00b6ap-2",
                                              "-0x1.ffffef20a4123p-2"))
_LOGF_OFF = np.uint32(0x3F330000)


def _unfused(a, b, c) -> np.ndarray:
    return a * b + c


# The unfused steps differ from the fused ones by a few float64 ulps of the result: r = z * invc - 1 loses at
# most one float64 ulp of 1 where the table's c is not 1 (and is exact where it is, invc = 1), and there
# |log x| > 0.03, so the difference stays within some 2**6 ulps of the result. 2**12 leaves a wide margin; about
# one result in 2**16 falls within it.
_LOGF_BAND = 1 << 12


def _logf_steps(z, invc, logc, k, multiply_add) -> np.ndarray:
    """glibc's logf in double, its multiply-adds done by ``multiply_add`` (fused or not)."""
    r = multiply_add(z, invc, -1.0)
    y0 = multiply_add(k, _LOGF_LN2, logc)
    r2 = r * r
    y = multiply_add(_LOGF_POLY[1], r, _LOGF_POLY[2])
    y = multiply_add(_LOGF_POLY[0], r2, y)
    return multiply_add(y, r2, y0 + r)


def log_float(x: np.ndarray) -> np.ndarray:
    """The C library's logf of a float32 array (glibc's table-driven routine in double; the correctly rounded
    value to within 0.82 ulp): -inf at zero, NaN below it and at NaN, inf at inf, +0 at 1."""
    x = np.asarray(x, _F32)
    ix = x.view(np.uint32).copy()
    subnormal = (ix > 0) & (ix < 0x00800000)
    if subnormal.any():  # (normalised by 2^23, the exponent taken back)
        ix[subnormal] = (x[subnormal] * _F32(2.0**23)).view(np.uint32) - np.uint32(23 << 23)
    tmp = ix - _LOGF_OFF
    row = (tmp >> 19) & np.uint32(15)  # (a mask: NumPy's unsigned modulo is ten times slower)
    k = tmp.view(np.int32) >> 23
    z = (ix - (tmp & np.uint32(0x1FF << 23))).view(_F32).astype(_F64)
    invc, logc = np.take(_LOGF_INVC, row), np.take(_LOGF_LOGC, row)
    k = k.astype(_F64)
    with np.errstate(all="ignore"):
        # Unfused multiply-adds first (one pass each); only results that fall within _LOGF_BAND of a midpoint
        # between floats can round otherwise than glibc's fused ones, and take the fused (emulated) steps
        y = _logf_steps(z, invc, logc, k, _unfused)
        out = np.asarray(y.astype(_F32))
        if cpu_has_fma():
            near = offset_from_midpoint(y, _LOGF_BAND) < 2 * _LOGF_BAND
            if near.any():
                out[near] = _logf_steps(z[near], invc[near], logc[near], k[near], fma).astype(_F32)
    out[ix == 0x3F800000] = 0
    out[x == 0] = -np.inf
    out[np.isposinf(x)] = np.inf
    out[(x < 0) | np.isnan(x)] = np.nan
    return out
