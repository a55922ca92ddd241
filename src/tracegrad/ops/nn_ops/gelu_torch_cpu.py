"""GELU and its gradient in float32 and float16 as PyTorch's x86 CPU build computes them, bit for bit.

PyTorch takes one of two routes (aten/src/ATen/native/Activation.cpp):

* ``approximate='none'`` on a contiguous tensor of two or more elements, float32 (or float16 where the CPU
  converts it natively), goes to oneDNN's JIT eltwise ``gelu_erf`` in float: on AVX-512 machines the forward
  is a piecewise degree-5 minimax polynomial for erf, elsewhere (and always for the backward)
  Abramowitz-Stegun 7.1.26 over oneDNN's own exp. Purely elementwise.
* everything else (``'tanh'``, non-contiguous input, other float16) runs ATen's ``GeluKernelImpl`` /
  ``GeluBackwardKernelImpl`` in float through ``cpu_kernel_vec``: blocks of ``2 * Vectorized::size()``
  elements take the vectorised formula (an Abramowitz-Stegun erf over Sleef's ``expf_u10``, Sleef's
  ``tanhf_u10``), what is left of each contiguous run takes the scalar one (glibc's ``erff`` / ``expf`` /
  ``tanhf``, glibc_float_math).

Fused multiply-adds (every ``fmadd`` of the x86 builds, Sleef's double-float arithmetic) are emulated in
float64: the product of two float32 is exact there and the sum is rounded once more to float32 (a double
rounding that differs from a true FMA in a vanishing fraction of cases).
"""

from __future__ import annotations

import functools
import math
import os

import numpy as np

from ..._runtime import get_num_threads
from ..._strides import empty_strided, torch_strides
from ..aten_loops import GRAIN_SIZE, iteration_order, loop_block, scalar_mask
from ..aten_vec import AVX512_FLAGS, cpu_flags
from .glibc_float_math import erf_float, exp_float, tanh_float
from .sleef_float import sleef_expf, sleef_tanhf, xor_sign

_F32 = np.float32
_F64 = np.float64


def _from_bits(*bits: int) -> np.ndarray:
    return np.array(bits, np.uint32).view(_F32)


# ---- the machine: which vector width ATen dispatches to, which ISA oneDNN JITs for -------------------------


def _onednn_isa() -> str:
    """'avx512' (minimax erf), 'avx2' (Abramowitz-Stegun with FMA) or 'sse41' (the same without FMA);
    ``ONEDNN_MAX_CPU_ISA`` caps it as it caps oneDNN."""
    flags = cpu_flags()
    isa = "avx512" if flags >= AVX512_FLAGS else "avx2" if {"avx2", "fma"} <= flags else "sse41"
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", os.environ.get("DNNL_MAX_CPU_ISA", "")).upper()
    if not cap or cap.startswith(("AVX512", "AVX10", "ALL")):
        return isa
    return "avx2" if cap.startswith("AVX2") and isa != "sse41" else "sse41"


# ---- float32 arithmetic helpers ------------------------------------------------------------------------------
#
# An emulated fmadd keeps its operands in float64 (each holding a float32 value exactly): the product is exact
# there, the sum rounds once in float64, and one casting copy rounds it to float32. Conversions, scalar
# operands and mixed-dtype ufuncs are the expensive parts in NumPy, so values that feed several steps are
# widened once, scalars are float64 up front, and intermediates are updated in place.
#
# Which NaN an operation on two different NaNs returns depends on NumPy's loops (the vector body returns the
# first operand's, the remainder after it the second's, a one-element sum in place the second's; see also
# _ATEN_PASS), so such operations keep the call they always had: operand order, output (fresh or the first
# operand) and dtypes. The steps reworked here meet at most one NaN, or two equal ones.


def _mla(fused: bool, a, b, c) -> np.ndarray:
    """``a * b + c`` in float32: one fmadd (fused) or a product and a sum rounded apart."""
    if not fused:
        return np.add(np.multiply(a, b, dtype=_F32), c, dtype=_F32)
    wide = np.multiply(_widened(a), _widened(b), dtype=_F64)  # (exact)
    np.add(wide, _widened(c), out=wide, dtype=_F64)
    return _round_to_float(wide)


def _widened(value):
    """A scalar operand in float64 (a float32 scalar would have NumPy cast the array operand too)."""
    return _F64(value) if np.ndim(value) == 0 else value


def _negative(value: np.ndarray) -> np.ndarray:
    return np.negative(value, out=value)


def _round_to_float(wide: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """wide (float64) rounded to float32, into out if given."""
    if out is None:
        return wide.astype(_F32)
    np.copyto(out, wide, casting="same_kind")
    return out


def _horner(x: np.ndarray, coefficients: tuple, fused: bool) -> np.ndarray:
    """``c[0] x^k + c[1] x^(k-1) + ... + c[k]`` of a float32 array by Horner's rule, each step one float32
    multiply-add (fused: one rounding; else the product and the sum rounded apart)."""
    if not fused:
        acc = np.full_like(x, coefficients[0])
        for c in coefficients[1:]:
            acc = _mla(False, acc, x, c)
        return acc
    wide_x = x.astype(_F64)
    acc = np.multiply(wide_x, _F64(coefficients[0]))
    rounded = np.empty_like(x)
    for c in coefficients[1:-1]:
        acc += _F64(c)
        np.copyto(acc, _round_to_float(acc, rounded))  # (the step's rounding to float)
        acc *= wide_x
    acc += _F64(coefficients[-1])
    return _round_to_float(acc, rounded)


# ---- oneDNN ----------------------------------------------------------------------------------------------------

_ONE, _HALF_F, _TWO = _F32(1), _F32(0.5), _F32(2)
_DNNL_LOG2E, _DNNL_LN2, _DNNL_LN_MAX, _DNNL_LN_MIN = _from_bits(0x3FB8AA3B, 0x3F317218, 0x42B17218, 0xC2AEAC50)
_DNNL_EXP_POLY = _from_bits(0x3F7FFFFB, 0x3EFFFEE3, 0x3E2AAD40, 0x3D2B9D0D, 0x3C07CFCE)  # p1 .. p5
_AS_P, _AS_INV_SQRT2, _AS_INV_SQRTPI = _from_bits(0x3EA7BA05, 0x3F3504F3, 0x3F106EBA)
_AS_POLY = _from_bits(0x3E827906, 0xBE91A98E, 0x3FB5F0E3, 0xBFBA00E3, 0x3F87DC22)  # p1 .. p5 of A&S 7.1.26

# oneDNN's AVX-512 erf(x / sqrt 2): 25 polynomials of degree 5 in |x|, chosen by the exponent and two leading
# mantissa bits of |x| (rows: coefficients of degree 0 .. 5; column 0 is never selected).
_MINIMAX = _from_bits(
    0xA6F2CB94, 0x32827792, 0x3381CC0C, 0x34523D4A, 0x351AC44D, 0x35F36D88, 0x36EE8229, 0x37B8A3BB, 0x3867A213,
    0x3940033B, 0x3A2A5A1D, 0x3AE35863, 0x3B7828F2, 0x3C08B14B, 0x3C515ED3, 0xBB503236, 0xBD8D8E5E, 0xBE8ABCD9,
    0xBF0C19A2, 0xBECCB328, 0x3E176CED, 0x3F470D99, 0x3F7ABB28, 0x3F800000, 0x00000000,
    0x3F4C422A, 0x3F4C421F, 0x3F4C4207, 0x3F4C41CB, 0x3F4C413B, 0x3F4C3FAD, 0x3F4C3A2F, 0x3F4C2D40, 0x3F4C146A,
    0x3F4BC341, 0x3F4AD08C, 0x3F48F8CF, 0x3F45FAC7, 0x3F404E07, 0x3F3B980F, 0x3F48DFF3, 0x3F78B21B, 0x3FBB0704,
    0x40019C32, 0x3FE536D6, 0x3F81331E, 0x3E6C8684, 0x3C98F936, 0x00000000, 0x3F800000,
    0xB62173F4, 0x3735E4CF, 0x37F2FF89, 0x388C23BE, 0x3917535C, 0x39AB2AB0, 0x3A60FADB, 0x3AF9B960, 0x3B6E5491,
    0x3C0A4EC5, 0x3CA5AA8C, 0x3D2138D9, 0x3D8737D4, 0x3DDFB660, 0x3E0F27AB, 0x3D94004B, 0xBE0EFDEB, 0xBF1D96C3,
    0xBF89DB58, 0xBF6D9897, 0xBEF69FB8, 0xBDC4F8A8, 0xBBDE6422, 0x00000000, 0x00000000,
    0xBE081A19, 0xBE084570, 0xBE08639B, 0xBE089837, 0xBE08F409, 0xBE09AB95, 0xBE0B66D0, 0xBE0E400A, 0xBE124DF8,
    0xBE1BDE02, 0xBE2F19C9, 0xBE4931BF, 0xBE685FBC, 0xBE89C95F, 0xBE96CBCA, 0xBE8044AA, 0xBE0550F2, 0x3DCFD6A1,
    0x3E94C826, 0x3E79345F, 0x3DECEC91, 0x3CA46568, 0x3AA1E00A, 0x00000000, 0x00000000,
    0xBA3D61DB, 0x39F097A3, 0x3A5845DC, 0x3AB1FA35, 0x3B0CEFB8, 0x3B653AB6, 0x3BCAE527, 0x3C221712, 0x3C6C5840,
    0x3CC0A703, 0x3D1DCC19, 0x3D63656D, 0x3D955907, 0x3DBF9910, 0x3DD53F69, 0x3DB7DCEF, 0x3D639EBE, 0xBA6EDE48,
    0xBD22BE69, 0xBD041CF1, 0xBC64F5AB, 0xBB097A32, 0xB8EBF380, 0x00000000, 0x00000000,
    0x3CB7D80C, 0x3C9B6050, 0x3C978D11, 0x3C92E850, 0x3C8D058B, 0x3C848454, 0x3C6CD623, 0x3C4C824B, 0x3C2A7935,
    0x3BE0B390, 0x3B0651AC, 0xBB232F53, 0xBBD42FA0, 0xBC2C5366, 0xBC492C9E, 0xBC2A7AA6, 0xBBD55D04, 0xBA823A76,
    0x3B102AA8, 0x3AE25A7E, 0x3A31F792, 0x38B84375, 0x3689BB5A, 0x00000000, 0x00000000,
).reshape(6, 25).astype(_F64)
_MINIMAX_BIAS = np.uint32(0xC21FFFFF)  # added to the bits of |x|, then >> 21: the polynomial's number
_MINIMAX_RBOUND = _from_bits(0x40B15CEE)[0]  # beyond it erf(x / sqrt 2) is 1 (polynomial 23)
_MINIMAX_RBOUND_BITS = _MINIMAX_RBOUND.view(np.int32)
_MINIMAX_WRAP = np.int32(2**32 - int(_MINIMAX_BIAS))  # (adding the bias wraps as subtracting this)


def _minimax_index(magnitude: np.ndarray) -> np.ndarray:
    """The polynomial's number for each |x|: clip((bits + bias) >> 21, 1, 24) in int32 as the kernel wraps and
    shifts it, and 23 beyond the bound (NaN included: it comes out NaN whatever the number)."""
    bits = magnitude.view(np.int32)
    index = np.minimum(bits, _MINIMAX_RBOUND_BITS)  # (the bound itself takes polynomial 22: below 24 always)
    index -= _MINIMAX_WRAP
    index >>= 21
    np.maximum(index, 1, out=index)
    beyond = np.subtract(_MINIMAX_RBOUND_BITS, bits)
    beyond >>= 31  # (-1 beyond the bound, 0 up to it)
    index -= beyond
    return index


# The polynomial's number depends on ceil(bits / 2^21) alone but in the bucket the bound falls in: so the
# coefficients are tabled by key = ((bits - 1) >> 21) + (1 beyond the bound, else 0) in uint32, two shifts in
# place of the clip and the bound's fix. The key is 2047 for +0 and at most 1024 otherwise; every key past the
# bound's bucket takes polynomial 23. (Checked against _minimax_index on all 2^31 magnitudes.)
_MINIMAX_EDGE_KEY = int((_MINIMAX_RBOUND_BITS - 1) >> 21)
_MINIMAX_RBOUND_UBITS = _MINIMAX_RBOUND_BITS.view(np.uint32)


def _minimax_key_table() -> np.ndarray:
    keys = np.arange(2048, dtype=np.uint32)
    lowest = np.where(keys <= _MINIMAX_EDGE_KEY, (keys << 21) + 1, 0).astype(np.uint32)  # (0 for 2047)
    index = _minimax_index(lowest.view(_F32))
    index[_MINIMAX_EDGE_KEY + 1:2047] = 23
    assert index[_MINIMAX_EDGE_KEY] == 22
    return np.ascontiguousarray(_MINIMAX[:, index])


_MINIMAX_KEYED = _minimax_key_table()  # (6, 2048): degree, key


def _minimax_pairs() -> np.ndarray:
    """The coefficients of degrees (5, 4), (3, 2), (1, 0) as the parts of complex128 items: one np.take (as
    fast as one of float64) gathers two."""
    pairs = np.empty((3, 2048), np.complex128)
    pairs.real = _MINIMAX_KEYED[5::-2]
    pairs.imag = _MINIMAX_KEYED[4::-2]
    return pairs


_MINIMAX_PAIRS = _minimax_pairs()


def _minimax_key(magnitude: np.ndarray) -> np.ndarray:
    """Each |x|'s key into _MINIMAX_KEYED (for np.take)."""
    bits = magnitude.view(np.uint32)
    beyond = np.subtract(_MINIMAX_RBOUND_UBITS, bits)
    beyond >>= 31  # (1 beyond the bound, 0 up to it: bits < 2^31)
    key = np.subtract(bits, np.uint32(1))  # (wraps for +0)
    key >>= 21
    key += beyond
    return key.astype(np.intp)  # (np.take converts other index types on every call)


def _minimax_erf_sqrt1_2(x: np.ndarray) -> np.ndarray:
    """oneDNN's AVX-512 erf(x / sqrt 2)."""
    magnitude = np.abs(x)
    key = _minimax_key(magnitude)
    wide = magnitude.astype(_F64)
    pair = np.empty(x.shape, np.complex128)
    acc = np.empty_like(wide)
    poly = np.empty_like(x)
    for step, coefficients in enumerate(_MINIMAX_PAIRS):  # (each degree one float32 fmadd)
        # (mode="wrap" on indices already in range: NumPy's default mode buffers and bounds-checks them)
        np.take(coefficients, key, out=pair, mode="wrap")
        if step:
            acc *= wide
            acc += pair.real
            _round_to_float(acc, poly)
            np.copyto(acc, poly)
            acc *= wide
        else:
            np.multiply(pair.real, wide, out=acc)
        acc += pair.imag
        _round_to_float(acc, poly)
        if step < 2:
            np.copyto(acc, poly)
    return xor_sign(poly, x)


_DNNL_EXP_COEFFICIENTS = (*_DNNL_EXP_POLY[::-1], _ONE)  # p5 .. p1, 1


def _dnnl_exp(x: np.ndarray, fused: bool) -> np.ndarray:
    """oneDNN's exp: 2 * 2^(n-1) * p(r), n = floor(x log2 e + 1/2); NaN read as ln FLT_MAX; 0 below ln FLT_MIN
    (oneDNN zeroes those lanes; their n is -126 already, so the scale's bits are 0 without it)."""
    clamped = np.fmin(x, _DNNL_LN_MAX)  # (minps returns its second operand for NaN, as fmin does)
    np.maximum(clamped, _DNNL_LN_MIN, out=clamped)
    n = np.multiply(clamped, _DNNL_LOG2E)
    n += _HALF_F
    np.floor(n, out=n)
    r = _mla(fused, n, -_DNNL_LN2, clamped)  # (-n ln 2 + x: the product's sign moved, exactly)
    n += _F32(126)  # (n - 1 + 127: exact, n is a small integer)
    scale = n.astype(np.int32)
    scale <<= 23
    poly = _horner(r, _DNNL_EXP_COEFFICIENTS, fused)
    poly *= scale.view(_F32)
    poly *= _TWO
    return poly


_AS_COEFFICIENTS = tuple(_AS_POLY[::-1])  # p5 .. p1


def _dnnl_as_parts(z: np.ndarray, fused: bool) -> tuple[np.ndarray, np.ndarray]:
    """(erf(z), exp(-z^2)) as oneDNN's Abramowitz-Stegun kernels compute them."""
    q = _dnnl_exp(_negative(z * z), fused)
    t = _mla(fused, _AS_P, np.abs(z), _ONE)
    np.divide(_ONE, t, out=t)
    poly = _horner(t, _AS_COEFFICIENTS, fused)
    erf = _mla(fused, _negative(q * t), poly, _ONE)  # (two NaNs meet here: see the helpers' comment)
    return xor_sign(erf, z), q


def onednn_gelu(x: np.ndarray, isa: str | None = None) -> np.ndarray:
    """oneDNN's eltwise_gelu_erf forward of a float32 array (on ``isa``, by default this machine's)."""
    isa = _onednn_isa() if isa is None else isa
    if isa == "avx512":
        erf = _minimax_erf_sqrt1_2(x)
        erf += _ONE
        erf *= x
        erf *= _HALF_F
        return erf
    fused = isa == "avx2"
    erf, _ = _dnnl_as_parts(x * _AS_INV_SQRT2, fused)
    half_x = x * _HALF_F
    return _mla(fused, erf, half_x, half_x)


def onednn_gelu_backward(grad: np.ndarray, x: np.ndarray, isa: str | None = None) -> np.ndarray:
    """oneDNN's eltwise_gelu_erf backward: dy * (1/2 + erf(z)/2 + z exp(-z^2) / sqrt pi), z = x / sqrt 2."""
    fused = (_onednn_isa() if isa is None else isa) != "sse41"
    z = x * _AS_INV_SQRT2
    erf, q = _dnnl_as_parts(z, fused)
    density = z * _AS_INV_SQRTPI
    density *= q
    density += _HALF_F
    out = _mla(fused, erf, _HALF_F, density)
    return np.multiply(out, grad, dtype=_F32)


# ---- ATen: Sleef's expf_u10 and tanhf_u10, Vectorized<float>::erf -----------------------------------------

_ERF_P = _F32(0.3275911)
_ERF_POLY = tuple(_F32(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))


def aten_erf(x: np.ndarray) -> np.ndarray:
    """ATen's Vectorized<float>::erf: Abramowitz-Stegun 7.1.26 over Sleef's expf, FMA throughout."""
    t = _mla(True, _ERF_P, np.abs(x), _ONE)
    np.divide(_ONE, t, out=t)
    r = _horner(t, _ERF_POLY, True)
    e = sleef_expf(_negative(x * x))
    e = _negative(e)
    e *= t
    return xor_sign(_mla(True, e, r, _ONE), x)


# ---- ATen's GELU formulas: vectorised (vector functions) and scalar (glibc's) ------------------------------

_K_ALPHA = _F32(math.sqrt(0.5))
_K_BETA_TANH = _F32(math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5)
_K_KAPPA = _F32(0.044715)
_K_THREE_KAPPA = _F32(3) * _K_KAPPA
_K_BETA_ERF = _F32((2 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5)
_K_BETA_ERF_HALF = _F32(2 / math.sqrt(math.pi)) * _F32(math.sqrt(0.5)) * _HALF_F  # (the float16 scalar path)


class _Functions:
    """erf, exp and tanh of float32 arrays: the vector ones (Sleef and ATen) or the scalar ones (glibc)."""

    def __init__(self, vector: bool) -> None:
        self.erf = aten_erf if vector else erf_float
        self.exp = sleef_expf if vector else exp_float
        self.tanh = sleef_tanhf if vector else tanh_float


_VECTOR, _SCALAR = _Functions(True), _Functions(False)


# The kernels are built with FMA and GCC's default -ffp-contract=fast, so some products feeding a sum are
# fused: which ones was read off PyTorch's results (``fused`` is False for the DEFAULT build without FMA).
# (Operations that can meet two different NaNs keep their original form: see the helpers' comment.)


def _gelu_formula(x: np.ndarray, approximate: str, f: _Functions, fused: bool) -> np.ndarray:
    if approximate == "tanh":
        inner = _mla(fused, _K_KAPPA, x * x * x, x)
        inner *= _K_BETA_TANH
        return (_HALF_F * x) * (_ONE + f.tanh(inner))
    return (x * _HALF_F) * (_ONE + f.erf(x * _K_ALPHA))


def _gelu_backward_formula(dy: np.ndarray, x: np.ndarray, approximate: str, f: _Functions, fused: bool,
                           half: bool = False) -> np.ndarray:
    if approximate == "tanh":
        x_sq = x * x
        inner = _mla(fused, _K_KAPPA, x_sq * x, x)
        inner *= _K_BETA_TANH
        t = f.tanh(inner)
        left_derivative = _HALF_F * (_ONE + t)
        inner_derivative = _K_BETA_TANH * _mla(fused, _K_THREE_KAPPA, x_sq, _ONE)
        scaled = (_HALF_F * x) * _mla(fused, -t, t, _ONE)
        return dy * (scaled * inner_derivative + left_derivative)
    cdf = _HALF_F * (_ONE + f.erf(x * _K_ALPHA))
    beta = _K_BETA_ERF_HALF if half and f is _SCALAR else _K_BETA_ERF
    pdf = beta * f.exp((x * x) * _F32(-0.5))
    return dy * _mla(fused and f is _VECTOR and not half, x, pdf, cdf)  # (only float's vector code fuses)


# ---- ATen's iteration: which elements fall to the scalar formula -------------------------------------------

_GELU_MIN_ELEMENTS_FOR_MULTI_THREADING = 16384


def _aten_apply(formula, operands: tuple, block: int, grain: int) -> np.ndarray:
    """formula over the operands (x last) taken to float32, as cpu_kernel_vec runs it: vector functions on
    whole blocks, scalar ones on the rest. Returns float32 in x's shape."""
    x = operands[-1]
    # (iterated as the output is laid out: an expanded input's stride-0 dims are a broadcast to the vector code)
    layout = x if x.flags.c_contiguous else empty_strided(x.shape, torch_strides(x.shape, operands), x.dtype)
    order, run = iteration_order(layout, operands)
    flat = tuple(np.ascontiguousarray(np.broadcast_to(o, x.shape).transpose(order), _F32).reshape(-1)
                 for o in operands)
    mask = scalar_mask(x.size, run, block, grain)
    fused = block > 0
    vector = lambda *arrays: formula(*arrays, _VECTOR, fused)
    out = _blockwise(vector, flat, _ATEN_PASS) if mask is None or not mask.all() else np.empty(x.size, _F32)
    if mask is not None:
        out[mask] = formula(*(f[mask] for f in flat), _SCALAR, fused)
    return out.reshape([x.shape[d] for d in order]).transpose(np.argsort(order))


def _forward_grain(n: int) -> int:
    return n // get_num_threads() if n > _GELU_MIN_ELEMENTS_FOR_MULTI_THREADING else GRAIN_SIZE


# ---- entry points ------------------------------------------------------------------------------------------

_BLOCK = 1 << 15  # (elements per pass: the float64 temporaries stay in cache)
# ATen's passes run longer (Sleef's tanhf emulates its few doubtful lanes in many small NumPy calls, whose cost
# longer passes share). Which NaN an operation on two NaNs returns depends on how NumPy splits the arrays
# (vector body or remainder, 8192-element casting buffers) and on its reuse of temporaries from 256 KiB (which
# swaps the operands of a product or sum): so a longer pass stays below that size, holds whole buffers, and
# the last block is kept as it was.
_ATEN_PASS = 7 << 13  # (57344 elements: 224 KiB of float32, seven casting buffers)


def _pass_bounds(n: int, longest: int) -> list[int]:
    """Where the passes over n elements start, and n: the last block of _BLOCK elements on its own, the whole
    blocks before it in passes of up to ``longest`` (a multiple of 8192) elements."""
    last = (n - 1) // _BLOCK * _BLOCK
    return [*range(0, last, longest), last, n]


def _blockwise(function, flat: tuple, longest: int = _BLOCK) -> np.ndarray:
    """function (elementwise, float32 in and out) over 1-d arrays, a pass at a time."""
    n = flat[0].size
    if n <= _BLOCK:
        return function(*flat)
    out = np.empty(n, _F32)
    bounds = _pass_bounds(n, longest)
    for start, end in zip(bounds, bounds[1:]):
        out[start:end] = function(*(a[start:end] for a in flat))
    return out


def _fp16_onednn() -> bool:
    """oneDNN takes float16 where the CPU converts it natively (ideep's has_fp16_type_support)."""
    flags = cpu_flags()
    return _onednn_isa() == "avx512" and "avx512_fp16" in flags or {"avx_vnni_int8", "avx_ne_convert"} <= flags


def uses_onednn(x: np.ndarray, approximate: str) -> bool:
    """Whether PyTorch hands this GELU (forward or backward) to oneDNN: exact GELU of a contiguous float32
    (or natively supported float16) tensor of more than one element."""
    return (approximate == "none" and x.size > 1 and x.flags.c_contiguous
            and (x.dtype == _F32 or x.dtype == np.float16 and _fp16_onednn()))


def torch_gelu(x: np.ndarray, approximate: str = "none", onednn: bool | None = None) -> np.ndarray:
    """PyTorch's CPU GELU of a float32 or float16 array (``onednn`` forces or forbids oneDNN's route)."""
    with np.errstate(all="ignore"):  # (inf and NaN propagate as in the C kernels)
        return _torch_gelu(x, approximate, onednn)


def _torch_gelu(x: np.ndarray, approximate: str, onednn: bool | None) -> np.ndarray:
    if uses_onednn(x, approximate) if onednn is None else onednn:
        kernel = functools.partial(onednn_gelu, isa=_onednn_isa())
        out = _blockwise(kernel, (np.ascontiguousarray(x, _F32).reshape(-1),)).reshape(x.shape)
    else:
        out = _aten_apply(lambda a, f, fused: _gelu_formula(a, approximate, f, fused), (x,),
                          loop_block(x.dtype, also_avx512=True), _forward_grain(x.size))
    return out.astype(x.dtype, copy=False)


def torch_gelu_backward(grad: np.ndarray, x: np.ndarray, approximate: str = "none",
                        onednn: bool | None = None) -> np.ndarray:
    """PyTorch's CPU gelu_backward of float32 or float16 arrays of one dtype."""
    with np.errstate(all="ignore"):
        return _torch_gelu_backward(grad, x, approximate, onednn)


def _torch_gelu_backward(grad: np.ndarray, x: np.ndarray, approximate: str, onednn: bool | None) -> np.ndarray:
    if uses_onednn(x, approximate) if onednn is None else onednn:
        flat = tuple(np.ascontiguousarray(np.broadcast_to(a, x.shape), _F32).reshape(-1) for a in (grad, x))
        kernel = functools.partial(onednn_gelu_backward, isa=_onednn_isa())
        out = _blockwise(kernel, flat).reshape(x.shape)
    else:
        half = x.dtype == np.float16
        out = _aten_apply(lambda g, a, f, fused: _gelu_backward_formula(g, a, approximate, f, fused, half),
                          (grad, x), loop_block(x.dtype, also_avx512=True), GRAIN_SIZE)
    return out.astype(x.dtype, copy=False)
