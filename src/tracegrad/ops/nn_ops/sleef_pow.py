"""Sleef's ``powf_u10`` as PyTorch's vector ``pow`` calls it here (``Sleef_powf16_u10``, the AVX-512 build), on
float32 NumPy arrays, bit for bit.

Sleef takes ``exp(y * log|x|)`` with the logarithm (logkf) and the exponential (expkf) in double-float arithmetic
(a float pair hi + lo, some 48 bits) and rounds once to float at the end; selects give C's special values. Its
float-only steps (both polynomials are evaluated in float, at the pairs' high halves; the integer
q = rint(y log|x| / ln 2) is taken in float) put its result up to some 0.3 ulp from the correctly rounded power:
it differed from that for about 2% of random inputs. ``sleef_powf_emulated`` follows Sleef step by step (some 180
ns an element). ``sleef_powf`` takes the float steps exactly and the double-float ones in float64 (``_powf_model``,
within 2**-12.5 ulp of Sleef's pair), and hands to the emulation only the elements whose power lies within 2**-10
ulp of a midpoint between floats, where a float step may have gone otherwise, where an operand is special, or
where the power is subnormal or overflows (some 0.3% of them). Checked against the emulation on many millions of
random pairs, and against PyTorch for every float32 base of several exponents.

The AVX2 build (``Sleef_powf8_u10``, on CPUs without AVX-512) splits x into exponent and mantissa otherwise, to
the same values for every float: its results are the same.
"""

from __future__ import annotations

import numpy as np

from ..aten_vec import offset_from_midpoint, two_sum
from .sleef_float import (
    _FOUR_THIRDS,
    _LN2_DF,
    _df_add,
    _df_add2,
    _df_divide,
    _df_mul,
    _df_square,
    _fma,
)

_F32, _F64 = np.float32, np.float64
_I32 = np.int32
_ONE = _F32(1)

# logkf: log d as a double-float
_LOGK_POLY = tuple(_F32(c) for c in (0.240320354700088500976562, 0.285112679004669189453125,
                                     0.400007992982864379882812))
_LOGK_C = (_F32(0.66666662693023681640625), _F32(3.69183861259614332084311e-09))

# expkf: e^d of a double-float
_R_LN2, _L2U, _L2L = _F32(1.442695040888963407359924681), _F32(0.693145751953125), _F32(1.428606765330187045e-06)
_EXPK_POLY = tuple(_F32(c) for c in (0.00136324646882712841033936, 0.00836596917361021041870117,
                                     0.0416710823774337768554688, 0.166665524244308471679688,
                                     0.499999850988388061523438))
_TWO_POW_24 = _F32(2.0**24)
_SIGN = np.uint32(0x80000000)


def _exponent_and_mantissa(d: np.ndarray) -> tuple:
    """logkf's split of positive d into 2^e (e as a float) and m in [0.75, 1.5): the AVX-512 build's ``vgetexp(d *
    4/3)`` and ``vgetmant(d)``. (The AVX2 build scales d by 2^-e instead, subnormal d by 2^64 first: the same e
    and m for every positive float.)"""
    scaled = d * _FOUR_THIRDS
    e = (np.frexp(scaled)[1] - 1).astype(_F32)
    e[np.isposinf(scaled)] = 128  # (the product overflows from 1.5 * 2**127 on)
    fraction, _ = np.frexp(d)  # [0.5, 1)
    m = fraction * _F32(2)
    np.copyto(m, fraction, where=m >= _F32(1.5))
    return e, m


def _logkf(d: np.ndarray) -> tuple:
    """Sleef's logkf of positive finite d (other lanes give garbage that the callers' selects replace)."""
    e, m = _exponent_and_mantissa(d)
    x = _df_divide(two_sum(-_ONE, m), two_sum(_ONE, m))
    x2 = _df_square(x)
    t = _fma(_fma(_LOGK_POLY[0], x2[0], _LOGK_POLY[1]), x2[0], _LOGK_POLY[2])
    s = _df_mul(_LN2_DF, e)
    s = _df_add(s, (x[0] * _F32(2), x[1] * _F32(2)))
    return _df_add(s, _df_mul(_df_mul(x2, x), _df_add2(_df_mul(x2, t), _LOGK_C)))


def _rint_to_int32(u: np.ndarray) -> np.ndarray:
    """``cvtps2dq``: to nearest even; NaN and values out of range give INT_MIN."""
    out = np.full(u.shape, np.iinfo(_I32).min, _I32)
    inside = np.abs(u) < _F32(2.0**31)
    out[inside] = np.rint(u[inside]).astype(_I32)
    return out


def _ldexp(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Sleef's ``vldexp_vf_vf_vi2``: x times 2^q as four equal powers of two and one more, each product rounded
    (int32 arithmetic, wrapping as the vector lanes do)."""
    m = q >> 31
    m = (((m + q) >> 6) - m) << 4
    q = q - (m << 2)
    m = m + 127
    m = np.where(m > 0, m, 0)
    m = np.where(m > 255, 255, m).astype(_I32)
    u = (m << 23).view(_F32)
    x = x * u * u * u * u
    return x * ((q + 127) << 23).astype(_I32).view(_F32)


def _expkf(d: tuple) -> np.ndarray:
    """Sleef's expkf: e^(hi + lo) of a double-float, rounded once to float; 0 where hi < -104."""
    q = _rint_to_int32((d[0] + d[1]) * _R_LN2)
    qf = q.astype(_F32)
    s = _df_add2(d, qf * -_L2U)
    s = _df_add2(s, qf * -_L2L)
    hi = s[0] + s[1]
    s = (hi, (s[0] - hi) + s[1])  # (dfnormalize)
    u = np.full_like(hi, _EXPK_POLY[0])
    for c in _EXPK_POLY[1:]:
        u = _fma(u, s[0], c)
    t = _df_add(s, _df_mul(_df_square(s), u))
    hi = _ONE + t[0]  # (dfadd of 1 and a double-float)
    lo = ((_ONE - hi) + t[0]) + t[1]
    u = _ldexp(hi + lo, q)
    u[d[0] < _F32(-104)] = 0
    return u


def _mulsign(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x with its sign bit flipped where y's is set."""
    return (x.view(np.uint32) ^ (y.view(np.uint32) & _SIGN)).view(_F32)


def sleef_powf_emulated(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Sleef's xpowf step by step on float32 arrays of one shape."""
    x, y = np.asarray(x, _F32), np.asarray(y, _F32)
    with np.errstate(all="ignore"):
        ay = np.abs(y)
        y_is_int = (np.trunc(y) == y) | (ay > _TWO_POW_24)
        truncated = np.where(ay < _F32(2.0**31), y, 0).astype(_I32)  # (cvttps2dq, in range where it counts)
        y_is_odd = ((truncated & 1) == 1) & y_is_int & (ay < _TWO_POW_24)
        ax = np.abs(x)
        result = _expkf(_df_mul(_logkf(ax), y))
        result[np.isnan(result)] = np.inf
        factor = np.where(y_is_int, np.where(y_is_odd, _F32(-1), _ONE), _F32(np.nan))
        result *= np.where(x > 0, _ONE, factor)
        efx = _mulsign(ax - _ONE, y)
        by_inf = np.where(efx < 0, _F32(0), np.where(efx == 0, _ONE, _F32(np.inf)))
        result = np.where(np.isinf(y), by_inf, result)
        x_zero = x == 0
        edge = np.where(np.signbit(y) ^ x_zero, _F32(0), _F32(np.inf))
        edge = _mulsign(edge, np.where(y_is_odd, x, _ONE))
        result = np.where(np.isinf(x) | x_zero, edge, result)
        result[np.isnan(x) | np.isnan(y)] = np.nan
        result[(y == 0) | (x == 1)] = _ONE
    return result


# ---- the fast route: Sleef's steps with float64 in place of its double-float pairs ---------------------------

_LN2_WIDE = _F64(_LN2_DF[0]) + _F64(_LN2_DF[1])  # (exact: the pairs' 48 bits fit a double)
_LOGK_C_WIDE = _F64(_LOGK_C[0]) + _F64(_LOGK_C[1])
_L2U_WIDE, _L2L_WIDE = _F64(_L2U), _F64(_L2L)
_FLT_MIN_BITS = np.uint32(0x00800000)
_INF_BITS = np.uint32(0x7F800000)


class _Scratch:
    """Work arrays for the model's blocks, reused from block to block (no allocation; all in cache)."""

    def __init__(self, n: int) -> None:
        self.arrays = ([np.empty(n, _F32) for _ in range(5)] + [np.empty(n, _F64) for _ in range(4)]
                       + [np.empty(n, np.bool_) for _ in range(3)])

    def first(self, n: int) -> tuple:
        return tuple(a[:n] for a in self.arrays)


def _fma_chain(z: np.ndarray, coefficients: tuple, out: np.ndarray, z_wide: np.ndarray,
               wide: np.ndarray) -> None:
    """Horner's rule in float (z float32) with each step a fused multiply-add: product and sum in float64
    (``z_wide``, ``wide``: float64 scratch), one rounding, into ``out``."""
    np.copyto(z_wide, z)
    np.multiply(z_wide, coefficients[0], out=wide)
    wide += coefficients[1]
    np.copyto(out, wide, casting="same_kind")
    for c in coefficients[2:]:
        np.multiply(out, z_wide, out=wide)
        wide += c
        np.copyto(out, wide, casting="same_kind")


def _powf_model(ax: np.ndarray, y, work: tuple) -> tuple:
    """Sleef's ``exp(y * log ax)`` for positive normal finite ax, each double-float sum taken as float64 and each
    float-only step (the quotient's and the reduced argument's high halves, the two polynomials in float, the
    rounding of y log ax / ln 2 to an integer) as Sleef takes it. Returns the float64 power (before its
    rounding to float) and where it may round otherwise than Sleef's (a step gone another way, or the power
    subnormal or overflowing, where Sleef scales otherwise). ``work``: a block's scratch."""
    a, b, c, d, _, wa, wb, wc, wd, doubtful, flag, _ = work
    ints = a.view(np.int32)
    # vgetexp(ax * 4/3) (inf: 128), times ln 2 into wa; vgetmant(ax) in [0.75, 1.5) into a
    np.multiply(ax, _FOUR_THIRDS, out=a)
    np.right_shift(ints, 23, out=ints)
    ints -= 127
    np.multiply(ints, _LN2_WIDE, out=wa)
    ints <<= 23
    np.subtract(ax.view(np.int32), ints, out=ints)
    m = a
    # logkf's float parts: the quotient's high half (m - 1) * (1 / (m + 1)), its square c, the polynomial t
    np.subtract(m, _ONE, out=b)
    np.add(m, _ONE, out=c)
    np.divide(_ONE, c, out=c)
    c *= b
    c *= c
    _fma_chain(c, _LOGK_POLY, d, wd, wb)
    # the double-float rest: y (e ln 2 + 2 X + X^3 (X^2 t + c)), X = (m - 1) / (m + 1)
    np.add(m, _F64(1), out=wb)
    np.divide(b, wb, out=wc)
    np.multiply(wc, wc, out=wb)
    np.multiply(wb, d, out=wd)
    wd += _LOGK_C_WIDE
    wd *= wb
    wd *= wc
    wd += wc
    wd += wc
    wd += wa
    wd *= y
    # expkf: q = rint(y log ax / ln 2) in float as Sleef has it (in doubt near a half); |q| > 125: the power
    # may be subnormal or overflow
    np.copyto(a, wd, casting="same_kind")
    a *= _R_LN2
    np.rint(a, out=b)  # (far out, q and the power below are garbage: taken by the emulation)
    a -= b
    np.abs(a, out=a)
    np.greater(a, _F32(0.5 - 2.0**-12), out=doubtful)
    np.greater(np.abs(b, out=a), _F32(125), out=flag)
    doubtful |= flag
    # the reduced argument s = y log ax - q ln 2 (wd) and its high half (c)
    np.copyto(wa, b)
    np.multiply(wa, _L2U_WIDE, out=wb)
    wd -= wb
    np.multiply(wa, _L2L_WIDE, out=wb)
    wd -= wb
    np.copyto(c, wd, casting="same_kind")
    _near_float_midpoint(wd, _S_ERROR_BITS, flag, wa.view(np.int64), wb.view(np.int64))
    q = d.view(np.int32)
    np.copyto(q, b, casting="unsafe")
    wide = _expk_tail(wd, c, q, a, wa, wb)
    # Sleef's polynomial takes the float nearest its own s, which lies within 2**-34 of this s: where a
    # midpoint between floats lies as near, the other float may be the one (a flip of the polynomial's last
    # bit moves the power by up to s^2 ulp)
    near = np.flatnonzero(flag)
    if near.size:
        s, sx = wd[near], c[near]
        other = np.nextafter(sx, np.where(s > sx, _F32(np.inf), _F32(-np.inf)))
        n = near.size
        alternative = _expk_tail(s, other, q[near], np.empty(n, _F32), np.empty(n, _F64), np.empty(n, _F64))
        differ = alternative.astype(_F32) != wide[near].astype(_F32)
        differ |= offset_from_midpoint(alternative, _BAND) < 2 * _BAND
        doubtful[near[differ]] = True
    return wide, doubtful


def _expk_tail(s: np.ndarray, sx: np.ndarray, q: np.ndarray, u: np.ndarray, z_wide: np.ndarray,
               wide: np.ndarray) -> np.ndarray:
    """(1 + s + s^2 u) 2^q, u Sleef's float polynomial at the high half sx of s (``u``, ``z_wide``: scratch;
    the result in ``wide``)."""
    _fma_chain(sx, _EXPK_POLY, u, z_wide, wide)
    np.multiply(s, s, out=wide)
    wide *= u
    wide += s
    wide += 1.0
    return np.ldexp(wide, q, out=wide)


def _near_float_midpoint(wide: np.ndarray, error_bits: int, out: np.ndarray, band: np.ndarray,
                         offset: np.ndarray) -> None:
    """Where a midpoint between two floats lies within 2**-error_bits of ``wide`` (float64, of normal floats'
    magnitudes: the band, in its low 29 bits, grows as its exponent falls, up to a quarter of an ulp) into
    ``out``; ``band``, ``offset``: int64 scratch."""
    bits = wide.view(np.int64)
    np.right_shift(bits, 52, out=band)
    band &= 0x7FF
    np.subtract(52 - error_bits + 1023, band, out=band)
    np.clip(band, 0, 27, out=band)
    np.left_shift(1, band, out=band)
    np.subtract(bits, 2**28, out=offset)
    offset += band
    offset &= 2**29 - 1
    band <<= 1
    np.less(offset, band, out=out)


# The model's reduced argument s lies within 2**-36.5 of Sleef's double-float one (|y log x| <= 88 here): 2**-34
# leaves a margin. The model's power lies within 2**-12.5 ulp of Sleef's double-float one (random powers of
# every binade): a band of 2**-10 ulp (in the low 29 bits of a float64, 2**29 a float ulp) either side of a
# midpoint.
_S_ERROR_BITS = 34
_BAND = 2**19
_BLOCK = 32768  # (elements per pass: the work arrays stay in cache)


def sleef_powf(x: np.ndarray, y) -> np.ndarray:
    """Sleef's powf_u10 of float32 arrays of one shape (or y one float32 number): the float64 model where it
    settles the rounding, the step-by-step emulation elsewhere."""
    x = np.asarray(x, _F32)
    scalar_y = np.ndim(y) == 0
    y = _F32(y) if scalar_y else np.asarray(y, _F32)
    flat_x = x.reshape(-1)
    flat_y = y if scalar_y else np.broadcast_to(y, x.shape).reshape(-1)
    out = np.empty(flat_x.size, _F32)
    work = _Scratch(min(flat_x.size, _BLOCK))
    doubtful = []
    with np.errstate(all="ignore"):
        for start in range(0, flat_x.size, _BLOCK):
            part = slice(start, start + _BLOCK)
            xs = flat_x[part]
            where = _sleef_powf_block(xs, flat_y if scalar_y else flat_y[part], out[part], work.first(xs.size))
            doubtful.append(where + start)
        where = np.concatenate(doubtful) if doubtful else np.zeros(0, np.intp)
        if where.size:  # (one emulation for all: its fixed cost is that of some thousand elements)
            out[where] = sleef_powf_emulated(flat_x[where], flat_y if scalar_y else flat_y[where])
    return out.reshape(x.shape)


def _sleef_powf_block(x: np.ndarray, y, out: np.ndarray, work: tuple) -> np.ndarray:
    """The model's powers of a block into ``out``; returns where they may differ from Sleef's."""
    ax, irregular = work[4], work[11]
    np.abs(x, out=ax)
    # positive normal finite |x| and finite y take the model; the rest, the emulation
    np.subtract(ax.view(np.uint32), _FLT_MIN_BITS, out=work[0].view(np.uint32))
    np.greater_equal(work[0].view(np.uint32), _INF_BITS - _FLT_MIN_BITS, out=irregular)
    if not isinstance(y, np.floating):
        irregular |= ~np.isfinite(y)
    elif not np.isfinite(y):
        irregular[:] = True
    if irregular.any():
        ax[irregular] = _ONE
    wide, doubtful = _powf_model(ax, y, work)
    np.copyto(out, wide, casting="same_kind")
    offset, flag, q = work[5].view(np.int64), work[10], work[1]
    np.less(offset_from_midpoint(wide, _BAND, out=offset), 2 * _BAND, out=flag)
    doubtful |= flag
    np.abs(q, out=work[2])
    np.greater(work[2], _F32(150), out=flag)
    if flag.any():  # (2^q beyond 2^150: Sleef's power is inf, or 0 where y log|x| < -104)
        out[flag] = np.where(q[flag] > 0, _F32(np.inf), _F32(0))
        doubtful &= ~flag
    doubtful |= irregular
    np.less(x, 0, out=flag)
    if flag.any():  # (Sleef's power of |x|, times -1 for odd integer y, times NaN for y not an integer)
        negative = flag
        ys = np.broadcast_to(y, x.shape)[negative]
        integer = np.trunc(ys) == ys
        odd = integer & (np.fmod(ys, _F32(2)) != 0)
        out[negative] = np.where(odd, -out[negative], np.where(integer, out[negative], _F32(np.nan)))
        doubtful[negative] &= integer | irregular[negative]
    return np.flatnonzero(doubtful)
