"""glibc's float ``exp2f``, ``sinhf``, ``coshf`` and ``atan2f`` on float32 arrays, for the scalar loops of PyTorch's
CPU kernels.

``exp2f`` is ARM's table-driven routine in double (since 2.27); on x86-64 CPUs with FMA glibc runs its build
compiled with -mfma, whose multiply-adds are fused. ``sinhf``, ``coshf`` (built on ``expm1f`` and ``expf``) and
``atan2f`` (on ``atanf``) are Sun's fdlibm routines in float arithmetic up to glibc 2.40; later releases took
CORE-MATH's correctly rounded ones (taken here as from 2.41: the float64 function rounded to float).
"""

from __future__ import annotations

import numpy as np

from ..aten_vec import cpu_has_fma, fma, offset_from_midpoint
from .glibc_float_math import EXP2_POLY, EXP2_TABLE, _horner, exp_float, expm1_float, fdlibm_float_math

_F32, _F64 = np.float32, np.float64
_ONE, _TWO, _HALF = _F32(1), _F32(2), _F32(0.5)

# ---- exp2f ----------------------------------------------------------------------------------------------------

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
    scale = np.ldexp(EXP2_TABLE[ki & 31], (ki >> 5).astype(np.int32))
    if fused:
        y = fma(EXP2_POLY[2], r, np.ones_like(r))
        y = fma(fma(EXP2_POLY[0], r, np.full_like(r, EXP2_POLY[1])), r * r, y)
    else:
        y = (EXP2_POLY[0] * r + EXP2_POLY[1]) * (r * r) + (EXP2_POLY[2] * r + 1.0)
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
            near = offset_from_midpoint(wide, _EXP2F_BAND) < 2 * _EXP2F_BAND
            doubtful = np.flatnonzero(near | (core < -126))
            if doubtful.size:
                out.flat[doubtful] = _exp2f_core(core.flat[doubtful], fused=True).astype(_F32)
    out[~inside] = np.where(x[~inside] > 0, _F32(np.inf), _F32(0))
    np.copyto(out, x, where=np.isnan(x))
    return out


# ---- sinhf, coshf --------------------------------------------------------------------------------------------

_BITS_22, _BITS_LN_MAX, _BITS_OVERFLOW = 0x41B00000, 0x42B17180, 0x42B2D4FC  # (22, ln FLT_MAX, overflow threshold)


def _magnitude_bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.int32) & np.int32(0x7FFFFFFF)


def _near_overflow(a: np.ndarray, h) -> np.ndarray:
    """h exp(a) for a past ln FLT_MAX: (h exp(a/2)) exp(a/2), so that it stays finite as long as it can."""
    w = exp_float(_HALF * a)
    return (h * w) * w


def _sinh_below_one(a: np.ndarray, h: np.ndarray) -> np.ndarray:
    t = expm1_float(a)
    return h * (_TWO * t - t * t / (t + _ONE))


def _sinh_below_22(a: np.ndarray, h: np.ndarray) -> np.ndarray:
    t = expm1_float(a)
    return h * (t + t / (t + _ONE))


def _sinh_below_ln_max(a: np.ndarray, h: np.ndarray) -> np.ndarray:
    return h * exp_float(a)


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
    t = exp_float(a)
    return _HALF * t + _HALF / t


def _cosh_below_ln_max(a: np.ndarray) -> np.ndarray:
    return _HALF * exp_float(a)


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
