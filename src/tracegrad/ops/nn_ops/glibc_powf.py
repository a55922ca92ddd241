"""The C library's ``powf`` and ``pow`` as PyTorch's scalar loops call them, on NumPy arrays.

``glibc_powf``: glibc's single-precision pow (ARM's optimized routine since 2.27, within 0.82 ulp, so not
correctly rounded): log2 x from a 16-entry table and a degree-5 polynomial, exp2(y log2 x) from a 32-entry table
and a cubic, all in double, rounded once to float. Its double steps are followed here in float64. Of the
multiply-adds that the x86-64 build (``__powf_fma``) fuses, only the first, r = z * (1/c) - 1, is taken fused:
unfused, its product would round at 2**-53 of 1, a large part of r. The others move the double result by some
2**-58 and reach the float's bits only in astronomically rare cases. glibc 2.36's order of the overflow and
underflow checks differs from later releases', not their results in the default rounding mode.

``pow_to_float``: ``std::pow(float, double)``, the double power rounded to float. NumPy's float64 power is
within an ulp of glibc's (nearly correctly rounded) pow; where the two could round to different floats (within
a few double ulps of a midpoint between floats, exact halfway cases included) or the power is subnormal in
float, glibc's pow itself is called.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache

import numpy as np

from ..aten_vec import offset_from_midpoint
from .glibc_float_math import _LOGF_INVC, EXP2_POLY, EXP2_TABLE

_F32, _F64 = np.float32, np.float64
_U32, _U64 = np.uint32, np.uint64

# log2 x = k + log2 c + log1p(z / c - 1) / ln 2, c near the middle of z's sixteenth of [0x1.66p-1, 0x1.66p0): the
# same c as logf's table (1 / c from there), with log2 c
_LOGC = np.array([float.fromhex(v) for v in (
    "-0x1.efec65b963019p-2", "-0x1.b0b6832d4fca4p-2", "-0x1.7418b0a1fb77bp-2", "-0x1.39de91a6dcf7bp-2",
    "-0x1.01d9bf3f2b631p-2", "-0x1.97c1d1b3b7afp-3", "-0x1.2f9e393af3c9fp-3", "-0x1.960cbbf788d5cp-4",
    "-0x1.a6f9db6475fcep-5", "0x0p+0", "0x1.338ca9f24f53dp-4", "0x1.476a9543891bap-3", "0x1.e840b4ac4e4d2p-3",
    "0x1.40645f0c6651cp-2", "0x1.88e9c2c1b9ff8p-2", "0x1.ce0a44eb17bccp-2")])
_LOG2_POLY = tuple(float.fromhex(a) for a in (
    "0x1.27616c9496e0bp-2", "-0x1.71969a075c67ap-2", "0x1.ec70a6ca7baddp-2", "-0x1.7154748bef6c8p-1",
    "0x1.71547652ab82bp0"))
_OFF = 0x3F330000


def _split26(v: np.ndarray) -> tuple:
    """v as a 26-bit head and an exact tail: a float times the head is exact in double, and times the tail."""
    head = (v.view(_U64) & _U64(0xFFFFFFFFF8000000)).view(_F64)
    return head, v - head


_INVC_HEAD, _INVC_TAIL = _split26(_LOGF_INVC)

# exp2: 2^(k/32) from the table of 2^(i/32) and a cubic
_EXP2_BITS = 5
_SHIFT = float.fromhex("0x1.8p+52") / 32


# (glibc's table, as its powf indexes it: the stored bits, less i << 47)
_EXP2_TABLE = EXP2_TABLE.view(_U64) - (np.arange(32, dtype=_U64) << _U64(52 - _EXP2_BITS))
_SIGN_BIAS = _U64(1) << _U64(63)
_OVERFLOW = float.fromhex("0x1.fffffffd1d571p+6")  # (above, |x^y| rounds to inf)


def _log2(ix: np.ndarray) -> np.ndarray:
    """glibc's log2_inline of the bits ix of positive x (a subnormal's normalized, with a negative exponent)."""
    tmp = ix - _U32(_OFF)
    i = ((tmp >> _U32(23 - 4)) & _U32(15)).astype(np.intp)
    top = tmp & _U32(0xFF800000)
    z = (ix - top).view(_F32).astype(_F64)
    k = (top.view(np.int32) >> 23).astype(_F64)
    # r = z * invc - 1 fused: z times the head of invc is exact, less 1 exact too, the tail's product exact
    r = z * np.take(_INVC_HEAD, i)
    r -= 1.0
    z *= np.take(_INVC_TAIL, i)
    r += z
    k += np.take(_LOGC, i)  # (y0 = log2 c + k)
    a = _LOG2_POLY
    r2 = r * r
    y = r * a[0]
    y += a[1]
    p = r * a[2]
    p += a[3]
    q = r * a[4]
    q += k
    p *= r2
    q += p
    r2 *= r2
    y *= r2
    y += q
    return y


def _exp2(xd: np.ndarray, sign: np.ndarray | None) -> np.ndarray:
    """glibc's exp2_inline: 2^xd, negated where ``sign``."""
    kd = xd + _SHIFT
    ki = kd.view(_U64)
    t = np.take(_EXP2_TABLE, (ki & _U64(31)).astype(np.intp))
    t += ki << _U64(52 - _EXP2_BITS)
    if sign is not None:
        t |= np.where(sign, _SIGN_BIAS, _U64(0))
    kd -= _SHIFT
    r = np.subtract(xd, kd, out=kd)
    c = EXP2_POLY
    z = r * c[0]
    z += c[1]
    y = r * c[2]
    y += 1.0
    r *= r
    z *= r
    y += z
    y *= t.view(_F64)
    return y
def _checkint(iy: np.ndarray) -> np.ndarray:
    """0: y not an integer, 1: odd, 2: even (y nonzero finite)."""
    e = (iy >> _U32(23)) & _U32(0xFF)
    shift = np.clip(0x7F + 23 - e.astype(np.int64), 0, 31).astype(_U32)
    low = iy & ((_U32(1) << shift) - _U32(1))
    unit = iy & (_U32(1) << shift)
    out = np.where(low != 0, 0, np.where(unit != 0, 1, 2))
    out[e < 0x7F] = 0
    out[e > 0x7F + 23] = 2
    return out


def _is_signaling(bits: np.ndarray) -> np.ndarray:
    return ((bits & _U32(0x7FFFFFFF)) > _U32(0x7F800000)) & ((bits & _U32(0x00400000)) == 0)


_BLOCK = 32768  # (elements per pass: the float64 temporaries stay in cache)


def glibc_powf(x: np.ndarray, y) -> np.ndarray:
    """glibc's powf of float32 arrays (broadcast together; y may be one number)."""
    x, y = np.broadcast_arrays(np.asarray(x, _F32), np.asarray(y, _F32))
    if x.size <= _BLOCK:
        return _glibc_powf(x.reshape(-1), y.reshape(-1)).reshape(x.shape)
    flat_x, flat_y = x.reshape(-1), y.reshape(-1)
    out = np.empty(flat_x.size, _F32)
    for start in range(0, flat_x.size, _BLOCK):
        part = slice(start, start + _BLOCK)
        out[part] = _glibc_powf(flat_x[part], flat_y[part])
    return out.reshape(x.shape)


def _glibc_powf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """powf of one block: the general path for all elements, then the special cases over it."""
    ix, iy = x.view(_U32), y.view(_U32)
    with np.errstate(all="ignore"):
        y_special = (iy << _U32(1)) - _U32(1) >= _U32(2 * 0x7F800000 - 1)  # (y zero, inf or NaN)
        x_special = ((ix << _U32(1)) - _U32(1) >= _U32(2 * 0x7F800000 - 1)) & ~y_special  # (x zero, inf, NaN)
        negative = np.signbit(x)
        sign = yint = None
        if negative.any():  # (odd integer y: the result negated; y not an integer: NaN)
            yint = _checkint(iy)
            sign = negative & (yint == 1)
        magnitude = ix & _U32(0x7FFFFFFF)
        subnormal = magnitude < _U32(0x00800000)
        if subnormal.any():  # (normalized, the exponent field going negative)
            scaled = (np.abs(x[subnormal]) * _F32(2.0**23)).view(_U32)
            magnitude[subnormal] = scaled - _U32(23 << 23)
        out = _powf_general(magnitude, y, sign)
        if yint is not None:
            out[negative & (yint == 0)] = np.nan
        if x_special.any():
            xs = x[x_special]
            x2 = xs * xs
            if sign is not None:
                x2 = np.where(sign[x_special], -x2, x2)
            out[x_special] = np.where(y[x_special] < 0, _F32(1) / x2, x2)
        if y_special.any():
            out[y_special] = _y_special(x[y_special], y[y_special])
    return out


def _y_special(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """powf where y is 0, inf or NaN."""
    ix, iy = x.view(_U32), y.view(_U32)
    ax2, ay2 = ix << _U32(1), iy << _U32(1)
    out = np.where((ax2 < _U32(2 * 0x3F800000)) == ((iy >> _U32(31)) == 0), _F32(0), y * y)
    out[ax2 == _U32(2 * 0x3F800000)] = 1  # (x = -1; +1 below)
    out[(ax2 > _U32(2 * 0x7F800000)) | (ay2 > _U32(2 * 0x7F800000))] = np.nan
    out[(ix == _U32(0x3F800000)) & ~_is_signaling(iy)] = 1
    out[(ay2 == 0) & ~_is_signaling(ix)] = 1
    return out


def _powf_general(ix: np.ndarray, y: np.ndarray, sign: np.ndarray | None) -> np.ndarray:
    """powf of nonzero finite |x| (its bits ix, a subnormal's normalized) and y, negated where ``sign``."""
    ylogx = y.astype(_F64) * _log2(ix)
    out = _exp2(ylogx, sign).astype(_F32)
    far = np.abs(ylogx) >= 126
    if far.any():  # (glibc's overflow, its may-underflow value 0x1.4p-75f squared, its underflow)
        edge = np.full(ylogx.shape, np.nan, _F32)
        edge[ylogx > _OVERFLOW] = np.inf
        edge[ylogx < -149] = _F32(2.0**-149)
        edge[ylogx <= -150] = 0
        if sign is not None:
            edge = np.where(sign, -edge, edge)
        np.copyto(out, edge, where=~np.isnan(edge))
    return out


# ---- std::pow(float, double) -------------------------------------------------------------------------------

_POW_BAND = 16  # (double ulps either side of a midpoint between floats: NumPy's pow is within one of glibc's)
_FLT_MIN = 2.0**-126


@lru_cache(maxsize=1)
def _libm_pow():
    libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    libm.pow.restype = ctypes.c_double
    libm.pow.argtypes = (ctypes.c_double, ctypes.c_double)
    return np.frompyfunc(libm.pow, 2, 1)


def pow_to_float(x: np.ndarray, exponent: float) -> np.ndarray:
    """``std::pow`` of float32 x and a double exponent, rounded to float."""
    x = np.asarray(x, _F32)
    flat = x.reshape(-1)
    out = np.empty(flat.size, _F32)
    doubtful = []
    with np.errstate(all="ignore"):
        for start in range(0, flat.size, _BLOCK):  # (blocks: the float64 temporaries stay in cache)
            part = slice(start, start + _BLOCK)
            doubtful.append(_pow_to_float_block(flat[part], exponent, out[part]) + start)
    where = np.concatenate(doubtful) if doubtful else np.zeros(0, np.intp)
    if where.size:
        out[where] = _libm_pow()(flat[where].astype(_F64), exponent).astype(_F64).astype(_F32)
    return out.reshape(x.shape)


def _pow_to_float_block(x: np.ndarray, exponent: float, out: np.ndarray) -> np.ndarray:
    """NumPy's double power of a block rounded to float into ``out``; returns where glibc's may round otherwise."""
    wide = np.power(x.astype(_F64), exponent)
    np.copyto(out, wide, casting="same_kind")
    doubtful = offset_from_midpoint(wide, _POW_BAND) < 2 * _POW_BAND
    magnitude = np.abs(wide, out=wide)
    doubtful &= magnitude < np.inf
    subnormal = np.flatnonzero(magnitude < _FLT_MIN)
    if subnormal.size:  # (a float's last place is 2**-149 there: the midpoints, where halves of it are)
        steps = magnitude[subnormal] * 2.0**149
        doubtful[subnormal] = np.abs(steps - np.floor(steps) - 0.5) < 2.0**-25
    return np.flatnonzero(doubtful)
