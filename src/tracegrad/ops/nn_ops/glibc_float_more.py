"""glibc's float ``exp2f``, ``sinhf``, ``coshf`` and ``atan2f`` on float32 arrays, for the scalar loops of PyTorch's
CPU kernels.

``exp2f`` is ARM's table-driven routine in double (since 2.27); on x86-64 CPUs with FMA glibc runs its build
compiled with -mfma, whose multiply-adds are fused. ``sinhf``, ``coshf`` (built on ``expm1f`` and ``expf``) and
``atan2f`` (on ``atanf``) are Sun's fdlibm routines in float arithmetic up to glibc 2.40; later releases took
CORE-MATH's correctly rounded ones (taken here as from 2.41: the float64 function rounded to float).
"""

from __future__ import annotations

import numpy as np

from ..aten_vec import cpu_has_fma, fma
from .glibc_float_math import expm1_float, fdlibm_float_math

_F32, _F64 = np.float32, np.float64
_ONE, _TWO, _HALF = _F32(1), _F32(2), _F32(0.5)

# ---- exp2f ----------------------------------------------------------------------------------------------------

# 2^(i/32) in double as glibc's table holds them (stored less i << 47, which its index arithmetic adds back)
_EXP2F_TABLE = (np.array([
    0x3FF0000000000000, 0x3FEFD9B0D3158574, 0x3FEFB5586CF9890F, 0x3FEF9301D0125B51, 0x3FEF72B83C7D517B,
    0x3FEF54873168B9AA, 0x3FEF387A6E756238, 0x3FEF1E9DF51FDEE1, 0x3FEF06FE0A31B715, 0x3FEEF1A7373AA9CB,
    0x3FEEDEA64C123422, 0x3FEECE086061892D, 0x3FEEBFDAD5362A27, 0x3FEEB42B569D4F82, 0x3FEEAB07DD485429,
    0x3FEEA47EB03A5585, 0x3FEEA09E667F3BCD, 0x3FEE9F75E8EC5F74, 0x3FEEA11473EB0187, 0x3FEEA589994CCE13,
    0x3FEEACE5422AA0DB, 0x3FEEB737B0CDC5E5, 0x3FEEC49182A3F090, 0x3FEED503B23E255D, 0x3FEEE89F995AD3AD,
    0x3FEEFF76F2FB5E47, 0x3FEF199BDD85529C, 0x3FEF3720DCEF9069, 0x3FEF5818DCFBA487, 0x3FEF7C97337B9B5F,
    0x3FEFA4AFA2A490DA, 0x3FEFD0765B6E4540], np.uint64) + (np.arange(32, dtype=np.uint64) << np.uint64(47))
).view(_F64)
_EXP2F_POLY = tuple(float.fromhex(c) for c in ("0x1.c6af84b912394p-5", "0x1.ebfce50fac4f3p-3", "0x1.62e42ff0c52d6p-1"))
# Unfused and fused multiply-adds give float64 results a few units apart: beyond this many units of the last
# float64 bit from a midpoint between floats, both round to the same float.
_EXP2F_BAND = 64


def _exp2f_core(x: np.ndarray, fused: bool) -> np.ndarray:
    """exp2f's double result (before its rounding to float) for -150 < x < 128: 2^(k/32) 2^r, r = x - k/32 in
    [-1/64, 1/64], a cubic in r."""
    xd = x.astype(_F64)
    k = np.rint(xd * 32)  # (x + 0x1.8p47 rounds to a multiple of 1/32, ties to even: the same)
    r = xd - k / 32
    ki = k.astype(np.int64)
    scale = np.ldexp(_EXP2F_TABLE[ki & 31], (ki >> 5).astype(np.int32))
    if fused:
        y = fma(_EXP2F_POLY[2], r, np.ones_like(r))
        y = fma(fma(_EXP2F_POLY[0], r, np.full_like(r, _EXP2F_POLY[1])), r * r, y)
    else:
        y = (_EXP2F_POLY[0] * r + _EXP2F_POLY[1]) * (r * r) + (_EXP2F_POLY[2] * r + 1.0)
    y *= scale
    return y


def exp2_float(x: np.ndarray) -> np.ndarray:
    """The C library's exp2f of a float32 array (glibc's, fused where the CPU has FMA): inf from 128, +0 from
    -150 down, NaN at NaN."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        inside = (x > -150) & (x < 128)
        core = np.where(inside, x, _F32(0))
        wide = _exp2f_core(core, fused=False)
        out = np.asarray(wide.astype(_F32))
        if cpu_has_fma():  # (where the fused build could round otherwise: near a midpoint, or subnormal)
            offset = (wide.view(np.int64) & np.int64(2**29 - 1)) - np.int64(2**28)
            doubtful = np.flatnonzero((np.abs(offset) < _EXP2F_BAND) | (core < -126))
            if doubtful.size:
                out.flat[doubtful] = _exp2f_core(core.flat[doubtful], fused=True).astype(_F32)
    out[~inside] = np.where(x[~inside] > 0, _F32(np.inf), _F32(0))
    np.copyto(out, x, where=np.isnan(x))
    return out


# ---- expf ------------------------------------------------------------------------------------------------------
# glibc's expf is ARM's routine of the same shape (2^(k/32) from the table times a cubic, in double) on x / ln 2;
# its FMA build fuses x * 32/ln2 into both the rounding to k (+ 0x1.8p52) and r = x 32/ln2 - k, besides the cubic.
# (glibc_float_math.exp_float, unfused, differs from it at two floats: 32.564632 and -63.09946.)

_EXPF_INV_LN2_N = float.fromhex("0x1.71547652b82fep+0") * 32
_EXPF_POLY = (float.fromhex("0x1.c6af84b912394p-5") / 32**3, float.fromhex("0x1.ebfce50fac4f3p-3") / 32**2,
              float.fromhex("0x1.62e42ff0c52d6p-1") / 32)
_EXPF_SHIFT = float.fromhex("0x1.8p52")
_EXPF_OVERFLOW, _EXPF_UNDERFLOW = _F32(float.fromhex("0x1.62e42ep6")), _F32(float.fromhex("-0x1.9fe368p6"))
# The fused and unfused r differ by an ulp of x 32/ln2 (up to 2^-41), which moves the result by some 2^-46: 2^12
# units of the last float64 bit is 2^-41 of it, far enough from a midpoint to round alike.
_EXPF_BAND = 2**12


def _expf_core(xd: np.ndarray, fused: bool) -> np.ndarray:
    """expf's double result (before its rounding to float) of x (as double) within its finite range."""
    if fused:
        factor = np.full_like(xd, _EXPF_INV_LN2_N)
        k = fma(factor, xd, np.full_like(xd, _EXPF_SHIFT)) - _EXPF_SHIFT
        r = fma(factor, xd, -k)
    else:
        z = xd * _EXPF_INV_LN2_N
        k = np.rint(z)
        r = z - k
    ki = k.astype(np.int64)
    scale = np.ldexp(_EXP2F_TABLE[ki & 31], (ki >> 5).astype(np.int32))
    if fused:
        y = fma(np.full_like(r, _EXPF_POLY[2]), r, np.ones_like(r))
        y = fma(fma(np.full_like(r, _EXPF_POLY[0]), r, np.full_like(r, _EXPF_POLY[1])), r * r, y)
    else:
        y = (_EXPF_POLY[0] * r + _EXPF_POLY[1]) * (r * r) + (_EXPF_POLY[2] * r + 1.0)
    y *= scale
    return y


def expf_float(x: np.ndarray) -> np.ndarray:
    """The C library's expf of a float32 array (glibc's, fused where the CPU has FMA): inf above 88.72, +0 below
    -103.97, NaN at NaN."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        inside = (x <= _EXPF_OVERFLOW) & (x >= _EXPF_UNDERFLOW)
        xd = np.where(inside, x, _F32(0)).astype(_F64)
        wide = _expf_core(xd, fused=False)
        out = np.asarray(wide.astype(_F32))
        if cpu_has_fma():  # (where the fused build could round otherwise: near a midpoint, or subnormal)
            offset = (wide.view(np.int64) & np.int64(2**29 - 1)) - np.int64(2**28)
            z = xd * _EXPF_INV_LN2_N
            tie = np.abs(z - np.rint(z)) > 0.5 - 2.0**-30  # (k itself may round the other way)
            doubtful = np.flatnonzero((np.abs(offset) < _EXPF_BAND) | (xd < -87) | tie)
            if doubtful.size:
                out.flat[doubtful] = _expf_core(xd.flat[doubtful], fused=True).astype(_F32)
    out[~inside] = np.where(x[~inside] > 0, _F32(np.inf), _F32(0))
    np.copyto(out, x, where=np.isnan(x))
    return out


# ---- sinhf, coshf --------------------------------------------------------------------------------------------

_BITS_22, _BITS_LN_MAX, _BITS_OVERFLOW = 0x41B00000, 0x42B17180, 0x42B2D4FC  # (22, ln FLT_MAX, overflow threshold)


def _magnitude_bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.int32) & np.int32(0x7FFFFFFF)


def _near_overflow(a: np.ndarray, h) -> np.ndarray:
    """h exp(a) for a past ln FLT_MAX: (h exp(a/2)) exp(a/2), so that it stays finite as long as it can."""
    w = expf_float(_HALF * a)
    return (h * w) * w


def _sinh_below_one(a: np.ndarray, h: np.ndarray) -> np.ndarray:
    t = expm1_float(a)
    return h * (_TWO * t - t * t / (t + _ONE))


def _sinh_below_22(a: np.ndarray, h: np.ndarray) -> np.ndarray:
    t = expm1_float(a)
    return h * (t + t / (t + _ONE))


def _sinh_below_ln_max(a: np.ndarray, h: np.ndarray) -> np.ndarray:
    return h * expf_float(a)


def fdlibm_sinhf(x: np.ndarray) -> np.ndarray:
    """fdlibm's sinhf in float arithmetic: from t = expm1|x|, (2t - t^2 / (t + 1)) / 2 below 1 and
    (t + t / (t + 1)) / 2 below 22; exp|x| / 2 beyond; x itself below 2^-28; inf past 89.4."""
    x = np.asarray(x, _F32)
    ix = _magnitude_bits(x)
    a = np.abs(x)
    h = np.copysign(_HALF, x)
    with np.errstate(all="ignore"):
        out = np.asarray(x * _F32(1e37))  # (|x| past the overflow threshold: +-inf; NaN: NaN)
        for where, part in (((ix >= 0x31800000) & (ix < 0x3F800000), _sinh_below_one),
                            ((ix >= 0x3F800000) & (ix < _BITS_22), _sinh_below_22),
                            ((ix >= _BITS_22) & (ix < _BITS_LN_MAX), _sinh_below_ln_max),
                            ((ix >= _BITS_LN_MAX) & (ix <= _BITS_OVERFLOW), _near_overflow)):
            if where.any():
                out[where] = part(a[where], h[where])
    tiny = ix < 0x31800000
    out[tiny] = x[tiny]
    return out


def _cosh_below_half_ln2(a: np.ndarray) -> np.ndarray:
    t = expm1_float(a)
    w = _ONE + t
    return _ONE + (t * t) / (w + w)


def _cosh_below_22(a: np.ndarray) -> np.ndarray:
    t = expf_float(a)
    return _HALF * t + _HALF / t


def _cosh_below_ln_max(a: np.ndarray) -> np.ndarray:
    return _HALF * expf_float(a)


def _cosh_near_overflow(a: np.ndarray) -> np.ndarray:
    return _near_overflow(a, _HALF)


def fdlibm_coshf(x: np.ndarray) -> np.ndarray:
    """fdlibm's coshf in float arithmetic: 1 + t^2 / (2 (1 + t)), t = expm1|x|, below ln2 / 2;
    exp|x| / 2 + 1 / (2 exp|x|) below 22; exp|x| / 2 beyond; 1 below 2^-55; inf past 89.4."""
    x = np.asarray(x, _F32)
    ix = _magnitude_bits(x)
    a = np.abs(x)
    with np.errstate(all="ignore"):
        out = np.asarray(a * _F32(1e30) * _F32(1e30))  # (past the overflow threshold: inf; NaN: NaN)
        for where, part in (((ix >= 0x24000000) & (ix < 0x3EB17218), _cosh_below_half_ln2),
                            ((ix >= 0x3EB17218) & (ix < _BITS_22), _cosh_below_22),
                            ((ix >= _BITS_22) & (ix < _BITS_LN_MAX), _cosh_below_ln_max),
                            ((ix >= _BITS_LN_MAX) & (ix <= _BITS_OVERFLOW), _cosh_near_overflow)):
            if where.any():
                out[where] = part(a[where])
    out[ix < 0x24000000] = _ONE
    return out


def sinh_float(x: np.ndarray) -> np.ndarray:
    """The C library's sinhf of a float32 array: fdlibm's or, from glibc 2.41, the correctly rounded value."""
    if fdlibm_float_math():
        return fdlibm_sinhf(x)
    with np.errstate(over="ignore"):
        return np.sinh(np.asarray(x, _F64)).astype(_F32)


def cosh_float(x: np.ndarray) -> np.ndarray:
    """The C library's coshf of a float32 array: fdlibm's or, from glibc 2.41, the correctly rounded value."""
    if fdlibm_float_math():
        return fdlibm_coshf(x)
    with np.errstate(over="ignore"):
        return np.cosh(np.asarray(x, _F64)).astype(_F32)


# ---- atanf, atan2f -------------------------------------------------------------------------------------------

_ATAN_HI = tuple(_F32(v) for v in (4.6364760399e-01, 7.8539812565e-01, 9.8279368877e-01, 1.5707962513e+00))
_ATAN_LO = tuple(_F32(v) for v in (5.0121582440e-09, 3.7748947079e-08, 3.4473217170e-08, 7.5497894159e-08))
_AT_ODD = tuple(_F32(v) for v in (3.3333334327e-01, 1.4285714924e-01, 9.0908870101e-02, 6.6610731184e-02,
                                  4.9768779427e-02, 1.6285819933e-02))  # (aT[0], aT[2], ... aT[10])
_AT_EVEN = tuple(_F32(v) for v in (-2.0000000298e-01, -1.1111110449e-01, -7.6918758452e-02, -5.8335702866e-02,
                                   -3.6531571299e-02))  # (aT[1], aT[3], ... aT[9])
_ONE_AND_HALF = _F32(1.5)


def _horner(w: np.ndarray, coefficients: tuple) -> np.ndarray:
    """c0 + w (c1 + w (c2 + ...)) in float32, each product and sum rounded."""
    total = np.full_like(w, coefficients[-1])
    for c in coefficients[-2::-1]:
        total *= w
        total += c
    return total


def fdlibm_atanf(x: np.ndarray) -> np.ndarray:
    """fdlibm's atanf in float arithmetic: |x| reduced to below 7/16 around 1/2, 1, 3/2 or infinity, then
    atan(reduced) by an odd polynomial split into even and odd parts; x itself below 2^-29, +-pi/2 from 2^25."""
    x = np.asarray(x, _F32)
    ix = _magnitude_bits(x)
    a = np.abs(x)
    with np.errstate(all="ignore"):
        band = np.select([ix < 0x3EE00000, ix < 0x3F300000, ix < 0x3F980000, ix < 0x401C0000], [-1, 0, 1, 2], 3)
        reduced = np.select(
            [band < 0, band == 0, band == 1, band == 2],
            [x, (_TWO * a - _ONE) / (_TWO + a), (a - _ONE) / (a + _ONE),
             (a - _ONE_AND_HALF) / (_ONE + _ONE_AND_HALF * a)],
            -_ONE / a)
        z = reduced * reduced
        w = z * z
        s1 = z * _horner(w, _AT_ODD)
        s2 = w * _horner(w, _AT_EVEN)
        series = reduced * (s1 + s2)
        index = np.maximum(band, 0)
        hi, lo = np.take(_ATAN_HI, index), np.take(_ATAN_LO, index)
        shifted = hi - ((series - lo) - reduced)
        out = np.where(band < 0, reduced - series, np.copysign(shifted, x))
    out = np.where(ix < 0x31000000, x, out)
    out = np.where(ix >= 0x4C000000, np.copysign(_ATAN_HI[3] + _ATAN_LO[3], x), out)
    return np.where(np.isnan(x), x, out).astype(_F32, copy=False)


_PI_O_4, _PI_O_2, _PI, _PI_LO = (_F32(v) for v in (7.8539818525e-01, 1.5707963705e+00, 3.1415927410e+00,
                                                  -8.7422776573e-08))


def fdlibm_atan2f(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """fdlibm's atan2f in float arithmetic: atanf(|y / x|) moved to x and y's quadrant with pi split in two
    floats; pi/2 where |y / x| passes 2^60, 0 or pi where it falls below 2^-60 with x < 0, atanf(y) at x = 1; C's
    special values."""
    y, x = np.broadcast_arrays(np.asarray(y, _F32), np.asarray(x, _F32))
    hx, hy = x.view(np.int32), y.view(np.int32)
    ix, iy = hx & np.int32(0x7FFFFFFF), hy & np.int32(0x7FFFFFFF)
    x_negative, y_negative = hx < 0, hy < 0
    with np.errstate(all="ignore"):
        k = (iy - ix) >> 23
        z = fdlibm_atanf(np.abs(y / x))
        z = np.where(k > 60, _PI_O_2 + _HALF * _PI_LO, z)
        z = np.where(x_negative & (k < -60), _F32(0), z)
        out = np.where(x_negative, np.where(y_negative, (z - _PI_LO) - _PI, _PI - (z - _PI_LO)),
                       np.where(y_negative, -z, z))
        # the special cases, latest first in fdlibm's order of tests
        signed = np.where(y_negative, -_PI_O_2, _PI_O_2)
        out = np.where(iy == 0x7F800000, signed, out)
        both_inf = np.where(x_negative, _F32(3) * _PI_O_4, _PI_O_4)
        x_inf = np.where(iy == 0x7F800000, both_inf, np.where(x_negative, _PI, _F32(0)))
        out = np.where(ix == 0x7F800000, np.where(y_negative, -x_inf, x_inf), out)
        out = np.where(ix == 0, signed, out)
        y_zero = np.where(x_negative, np.where(y_negative, -_PI, _PI), y)
        out = np.where(iy == 0, y_zero, out)
        out = np.where(hx == 0x3F800000, fdlibm_atanf(y), out)
        out = np.where((ix > 0x7F800000) | (iy > 0x7F800000), x + y, out)
    return np.asarray(out, _F32)


def atan2_float(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The C library's atan2f of float32 arrays: fdlibm's or, from glibc 2.41, the correctly rounded value."""
    if fdlibm_float_math():
        return fdlibm_atan2f(y, x)
    return np.arctan2(np.asarray(y, _F64), np.asarray(x, _F64)).astype(_F32)
