"""Unary pointwise operators beyond the core set of ``pointwise.py``.

Transcendental functions and their inverses, rounding, special functions (``erf``, ``erfc``, ``erfinv``,
computed with NumPy to float64 accuracy), predicates (``isnan``...) and the ``clamp`` family.
Each op has PyTorch's dtype behaviour (integers promote to the default float dtype where PyTorch does,
rounding keeps integer dtypes, predicates return bool), PyTorch's backward node names and PyTorch's
gradient conventions (``abs'(0) = 0``, rounding ops have zero gradient, ``clamp`` passes the gradient on
the closed interval ``[min, max]``). Backward rules only use dispatched operators.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from ..backend import dtypes as _dt
from ..backend.dtypes import cpp_type_name, kind_of, scalar_type_name
from . import bfloat16_in_float
from . import pointwise as _pw
from ._util import as_array, float_arg, number_arg, reject_complex, result_dtype, to_floating, unsupported
from .aten_loops import float_kernel, loop_block, vector_and_scalar
from .aten_vec import has_nan
from .clip_values import clip_by_tensors, clip_values
from .creation import zeros_like
from .pointwise import (
    add,
    div,
    exp,
    ge,
    gt,
    inplace_kernel,
    le,
    logical_and,
    logical_or,
    lt,
    mul,
    neg,
    sub,
    where,
)
from .registry import defop, not_implemented
from .scalar_fill import check_scalar_parameter, integral_scalar, scalar_for
from .scalar_overloads import scalar_minus

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI = math.sqrt(math.pi)


# ---- helpers -----------------------------------------------------------------------------------------------


def type_name(np_dtype) -> str:
    """PyTorch's scalar type name of a NumPy dtype (``Float``, ``Long``, ``Bool``...)."""
    return scalar_type_name(np_dtype)


def call(op, out, *args, **kwargs):
    """Call ``op``, forwarding ``out=`` only when given (the derived out= variant then runs)."""
    if out is None:
        return op(*args, **kwargs)
    return op(*args, out=out, **kwargs)


def _pair(name: str, kernel, vjp=None, saves=(), node_name=None, params: str = "", attrs=(),
          no_inplace_grad: bool = False, inplace_check=None):
    """The functional op ``name`` and its in-place twin ``name_``, which records the same node class.

    ``no_inplace_grad``: PyTorch has no derivative for the in-place form (``asinh_``...); its node is
    ``<Name>Backward1`` and raises at backward time. ``inplace_check(self_array)`` runs before the in-place
    kernel (e.g. ``abs_`` refuses complex self, whose result would be real).
    """
    op = defop(f"{name}(Tensor self{params}) -> Tensor", kernel, vjp=vjp, saves=saves, attrs=attrs,
               node_name=node_name, fast=None if params else "unary")
    inplace_node = op.node_class._name
    if no_inplace_grad:
        vjp, saves, inplace_node = not_implemented(f"inplace version of {name}"), (), inplace_node[:-1] + "1"
    write = inplace_kernel(kernel)
    if inplace_check is not None:
        @_pw.writes_last
        def write(a, *rest, _write=write):
            inplace_check(a)
            return _write(a, *rest)
    inplace = defop(f"{name}_(Tensor(a!) self{params}) -> Tensor(a!)", write, vjp=vjp,
                    saves=saves, attrs=attrs, node_name=inplace_node)
    op.elementwise_jvp = True
    inplace.elementwise_jvp = not no_inplace_grad
    return op, inplace


def _floating(np_fn):
    """Kernel of an op that maps integers and bools to the default float dtype."""

    def kernel(a):
        with np.errstate(all="ignore"):  # PyTorch never warns about overflow, NaN or division by zero
            return np_fn(to_floating(a))

    return kernel


def _in_float64(fn):
    """Kernel computing ``fn`` in float64 (our special functions) and returning the input's float dtype."""

    def kernel(a):
        x = to_floating(a)
        with np.errstate(all="ignore"):
            return np.asarray(fn(x.astype(np.float64, copy=False))).astype(x.dtype, copy=False)

    return kernel


def _zero_grad(ctx, g):
    return zeros_like(g)


def _saved_input(ctx):
    return ctx.saved_tensors[0]


# ---- special functions in NumPy (float64) ------------------------------------------------------------------


# erf(x) / x = 2/sqrt(pi) sum_n (-x^2)^n / (n! (2n + 1)), highest power first: below |x| = 1 its 20 terms
# decrease past 2^-60 and the alternating sum stays above 0.84, so Horner's rule loses nothing.
_ERF_TAYLOR = tuple((-1) ** n * _TWO_OVER_SQRT_PI / (math.factorial(n) * (2 * n + 1)) for n in range(19, -1, -1))


def _erf_near_zero(x: np.ndarray) -> np.ndarray:
    """erf for |x| < 1, from its Maclaurin series."""
    z = x * x
    total = np.zeros_like(x)
    for c in _ERF_TAYLOR:
        total *= z
        total += c
    return x * total


def _exp_neg_square(x):
    # exp(-x^2) without the rounding error of x*x (which is amplified by up to x^2 in the result):
    # split x = h + l with h on a 1/16 grid, so h*h is exact. (In place: fresh arrays cost more than the math.)
    h = x * 16.0
    np.round(h, out=h)
    h /= 16.0
    rest = x - h
    rest *= x + h
    np.negative(rest, out=rest)
    np.exp(rest, out=rest)
    np.multiply(h, h, out=h)
    np.negative(h, out=h)
    np.exp(h, out=h)
    h *= rest
    return h


def _erfc_nonnegative(ax: np.ndarray) -> np.ndarray:
    """erfc for ax >= 0 (or NaN) as exp(-x^2) erfcx(x): erfcx by S. G. Johnson's piecewise Chebyshev fits (the
    table of PyTorch's calc_erfcx), accurate to about 1e-16; exp(-x^2) underflows past 27.3 (hence the cap)."""
    from .special_fns import erfcx_nonnegative  # (that module imports this one)

    return _exp_neg_square(np.minimum(ax, 30.0)) * erfcx_nonnegative(ax)


# Below this many elements the vectorized kernels' fixed cost (a few dozen NumPy calls) exceeds one libm
# call per element, so small arrays use Python's math.erf / math.erfc (also accurate to ~1 ulp).
_SMALL = 64


def _per_element(fn, x: np.ndarray) -> np.ndarray:
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, x.size).reshape(x.shape)


def np_erf(x: np.ndarray) -> np.ndarray:
    """The error function of a float64 array, to about 1e-16 relative accuracy."""
    x = np.asarray(x, dtype=np.float64)
    if x.size <= _SMALL:
        return _per_element(math.erf, x)
    with np.errstate(all="ignore"):
        out = _erfc_nonnegative(np.abs(x))
        np.subtract(1.0, out, out=out)
        np.copysign(out, x, out=out)
        near = np.flatnonzero(np.abs(x) < 1.0)  # (by index: boolean masks cost more than the series)
        out.flat[near] = _erf_near_zero(x.take(near))
    return out


def np_erfc(x: np.ndarray) -> np.ndarray:
    """The complementary error function of a float64 array, accurate in its tail (relative 1e-16)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size <= _SMALL:
        return _per_element(math.erfc, x)
    with np.errstate(all="ignore"):
        out = _erfc_nonnegative(np.abs(x))
        negative = np.flatnonzero(x < 0)
        out.flat[negative] = 2.0 - out.take(negative)
        near = np.flatnonzero(np.abs(x) < 0.5)  # 1 - erf: no cancellation while erfc stays within [0.47, 1.53]
        out.flat[near] = 1.0 - _erf_near_zero(x.take(near))
    return out


# M. Giles' single-precision erfinv ("Approximating the erfinv function", GPU Computing Gems, 2011), in
# w = -log(1 - y^2): relative error about 4e-7, so two Halley steps reach double precision
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                   -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                0.00943887047, 1.00167406, 2.83297682)


def _erfinv_estimate(ay: np.ndarray) -> np.ndarray:
    w = -np.log((1.0 - ay) * (1.0 + ay))
    central = w < 5.0
    u = np.where(central, w - 2.5, np.sqrt(w) - 3.0)
    p = np.zeros_like(ay)
    for c, t in zip(_ERFINV_CENTRAL, _ERFINV_TAIL, strict=True):
        p *= u
        p += np.where(central, c, t)
    # past float32's range (1 - |y| < 1e-7) Giles' fit no longer holds: Winitzki's closed form (relative
    # error below 2e-3 everywhere) instead
    b = 2.0 / (math.pi * 0.147) - 0.5 * w
    winitzki = np.sqrt(np.sqrt(b * b + w / 0.147) - b)
    return np.where(w < 16.0, p * ay, winitzki)


def _erfinv_halley_step(x: np.ndarray, ay: np.ndarray) -> np.ndarray:
    """One Halley step towards erf(x) = ay (flat arrays), using f'' = -2x f' for f = erf; from |y| = 1/2 on,
    erf(x) - |y| is formed as (1 - |y|) - erfc(x): 1 - |y| is exact there."""
    tail = np.flatnonzero(ay >= 0.5)
    body = np.flatnonzero(~(ay >= 0.5))
    r = np.empty_like(x)
    r[tail] = (1.0 - ay.take(tail)) - np_erfc(x.take(tail))
    r[body] = np_erf(x.take(body)) - ay.take(body)
    step = r / (_TWO_OVER_SQRT_PI * np.exp(-x * x))
    return x - step / (1.0 + x * step)


def np_erfinv(y: np.ndarray) -> np.ndarray:
    """Inverse error function: Giles' estimate refined by two Halley steps (4e-7 -> 1e-19), three where
    Winitzki's coarser estimate starts (within 1e-7 of +-1)."""
    y = np.asarray(y, dtype=np.float64)
    ay = np.abs(y).reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = _erfinv_halley_step(_erfinv_halley_step(_erfinv_estimate(ay), ay), ay)
        far = np.flatnonzero(ay > 1.0 - 1e-7)
        if far.size:
            x[far] = _erfinv_halley_step(x.take(far), ay.take(far))
        x = np.where(ay == 1.0, np.inf, x)
        x = np.where(ay > 1.0, np.nan, x)
    return np.copysign(x.reshape(y.shape), y)


# B_2k / (2k (2k-1)), k = 1..8: the coefficients of Stirling's series for log Gamma
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def np_lgamma_positive(a: np.ndarray) -> np.ndarray:
    """log Gamma(a) for a > 0: raise a to >= 12 with Gamma(z+1) = z Gamma(z), then Stirling's series."""
    z = np.array(a, dtype=np.float64, copy=True)
    prod = np.ones_like(z)  # at most 12 factors below 13: no overflow
    low = z < 12.0
    while low.any():
        prod = np.where(low, prod * z, prod)
        z = np.where(low, z + 1.0, z)
        low = z < 12.0
    shift = np.log(prod)
    inv = 1.0 / z
    inv2 = inv * inv
    series = np.zeros_like(z)
    for c in reversed(_STIRLING):
        series = series * inv2 + c
    return (z - 0.5) * np.log(z) - z + _HALF_LOG_2PI + series * inv - shift


# ---- transcendental ----------------------------------------------------------------------------------------


# Complex inputs: the gradient of a holomorphic f is grad * conj(f'(x)) (PyTorch's convention, whose formulas
# place the ``.conj()`` calls copied here). ``conj`` of a real tensor is the tensor itself and records nothing,
# so real inputs keep their graphs.


def _exp2_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    return mul(mul(g, conj(y)), _LN2)  # PyTorch: grad * result.conj() * M_LN2


def _expm1_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    return mul(g, add(conj(y), 1))  # PyTorch: grad * (result.conj() + 1)


def _log1p_vjp(ctx, g):
    return div(g, conj(add(_saved_input(ctx), 1)))  # PyTorch's log1p_backward: grad / (self + 1).conj()


def _log2_vjp(ctx, g):
    return div(g, mul(conj(_saved_input(ctx)), _LN2))


def _log10_vjp(ctx, g):
    return div(g, mul(conj(_saved_input(ctx)), _LN10))


def _rsqrt_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    return mul(mul(g, -0.5), conj(y ** 3))  # PyTorch: -0.5 * grad * result.pow(3).conj()


def _tan_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    return mul(g, conj(add(y ** 2, 1)))  # PyTorch: grad * (1 + result.pow(2)).conj()


def _one_minus_square(x):
    return add(mul(neg(x), x), 1)  # PyTorch's asin/acos formulas: -self * self + 1


def _asin_vjp(ctx, g):
    return mul(g, conj(rsqrt(_one_minus_square(_saved_input(ctx)))))


def _acos_vjp(ctx, g):
    return mul(g, conj(neg(rsqrt(_one_minus_square(_saved_input(ctx))))))


def _atan_vjp(ctx, g):
    x = _saved_input(ctx)
    return div(g, conj(add(mul(x, x), 1)))


def _sinh_vjp(ctx, g):
    return mul(g, conj(cosh(_saved_input(ctx))))


def _cosh_vjp(ctx, g):
    return mul(g, conj(sinh(_saved_input(ctx))))


def _asinh_vjp(ctx, g):
    return mul(g, conj(rsqrt(add(_saved_input(ctx) ** 2, 1))))  # PyTorch: grad * (self.pow(2) + 1).rsqrt().conj()


def _acosh_vjp(ctx, g):
    x = _saved_input(ctx)
    if x._data.dtype.kind == "c":
        # sqrt(x*x - 1) != sqrt(x+1) sqrt(x-1) off the real axis: PyTorch's complex formula takes the latter
        return mul(g, conj(mul(rsqrt(add(x, 1)), rsqrt(sub(x, 1)))))
    return mul(g, rsqrt(sub(mul(x, x), 1)))


def _atanh_vjp(ctx, g):
    return div(mul(g, 1), conj(scalar_minus(1, _saved_input(ctx) ** 2)))  # PyTorch: grad * 1 / (1 - self.pow(2)).conj()


def _rsqrt_kernel(a):
    x = to_floating(a)
    if x.dtype == np.float16:
        return float_kernel(functools.partial(_reduced_rsqrt_in_float, storage=x.dtype), (x,), also_avx512=False)
    with np.errstate(all="ignore"):
        if bfloat16_in_float.stands_for_bfloat16(x.dtype):  # (a float32 copy: blocks of two-byte elements)
            formula = functools.partial(_reduced_rsqrt_in_float, storage=_dt.bfloat16.np)
            return vector_and_scalar(formula, (x,), loop_block(np.float16, also_avx512=False))
        return np.reciprocal(np.sqrt(x))


def _reduced_rsqrt_in_float(x: np.ndarray, vector: bool, storage: np.dtype) -> np.ndarray:
    """PyTorch's half and bfloat16 ``rsqrt`` (from float values): its vector code divides 1 by the float square
    root; its scalar loop (``1 / std::sqrt(a)`` on a ``c10::Half``/``c10::BFloat16``, whose ``sqrt`` returns the
    reduced type) by the square root rounded to ``storage`` first."""
    root = np.sqrt(x)
    return np.reciprocal(root if vector else root.astype(storage).astype(np.float32))


_SELF = ("self",)
_RESULT = ("result",)


def _sleef_everywhere(sleef_name: str, np_fn):
    """``np_fn``, but for float32 (and half, in float) Sleef's function ``sleef_name`` on every element: PyTorch's
    ``vec::map`` kernels (expm1, log1p) load the last partial vector too, and copy a strided input into a
    contiguous buffer first."""

    def array_fn(a: np.ndarray) -> np.ndarray:
        if a.dtype == np.float32 or a.dtype == np.float16:
            from .nn_ops import sleef_float  # (nn_ops imports this module)

            return getattr(sleef_float, sleef_name)(a.astype(np.float32, copy=False)).astype(a.dtype, copy=False)
        return np_fn(a)

    return _floating(array_fn)


def _arccos(a: np.ndarray, dtype: type | None = None) -> np.ndarray:
    """``np.arccos``, but a NaN input returned as it is, as MKL's acos (PyTorch's) returns it: NumPy's float64 loop
    (glibc's acos) returns it negated."""
    result = np.arccos(a, dtype=dtype)
    if a.dtype.kind != "f" or not has_nan(a):
        return result
    return np.where(np.isnan(a), -result, result)


def positive_nan_of_negatives(ufunc: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """``ufunc`` (a logarithm), but for float32 and float64 the NaN of a negative input (or -inf) positive, as
    MKL's (PyTorch's) is: NumPy's loops give it negative. A NaN input comes back as it is (quieted), as from MKL:
    NumPy's float32 log makes it positive. PyTorch's half and bfloat16 kernels give negative NaNs."""

    def fn(a: np.ndarray, dtype: type | None = None) -> np.ndarray:
        result = ufunc(a) if dtype is None else ufunc(a, dtype=dtype)
        if result.dtype.char in "fd" and has_nan(result):  # (the common case: no NaN, one dot product tells)
            return _with_mkl_log_nans(a, result)
        return result

    return fn


def _with_mkl_log_nans(a: np.ndarray, result: np.ndarray) -> np.ndarray:
    """A float32/float64 logarithm's ``result`` of ``a`` with MKL's NaNs: a negative input's positive, a NaN input
    itself (quieted by ``+ 0``). Half and bfloat16 inputs (computed on float32 copies) keep NumPy's."""
    if a.dtype.itemsize < 4 or bfloat16_in_float.stands_for_bfloat16(a.dtype):
        return result
    return np.where(np.isnan(a), a + a.dtype.type(0), np.where(a < 0, np.nan, result))


def _double_log1p(a: np.ndarray) -> np.ndarray:
    """``np.log1p``, but a float64 NaN result the positive quiet NaN, as PyTorch's double log1p gives every one
    (of a NaN input too, whatever its sign and payload), where NumPy's passes a NaN through and makes the NaN
    of a number below -1 negative."""
    result = np.log1p(a)
    if result.dtype.char != "d" or not has_nan(result):  # (the common case)
        return result
    return np.where(np.isnan(result), np.nan, result)


def _rounded_from_float64(ufunc: Callable[..., np.ndarray]):
    """``ufunc`` of integers and floats, float32 and half computed in float64 and rounded to float once (then half, as
    PyTorch computes half in float). PyTorch's kernels of log2, log10, asin, acos and atan call MKL's vector math,
    whose float results are almost always the correctly rounded values; NumPy's float32 ones are an ulp off for 5% to
    40% of inputs (``log10(1000.0)`` gave 3.0000002). Not used for exp, tanh, sin, cos, tan or log: their float64
    forms cost 0.6 us a call more on small tensors (the chain benchmark's ops) and up to twenty times more on large
    ones, or leave many of MKL's own misroundings unmatched."""

    def array_fn(a: np.ndarray) -> np.ndarray:
        if a.dtype == np.float32 or a.dtype == np.float16:
            rounded = ufunc(a, dtype=np.float64).astype(np.float32)  # (the ufunc widens as it loads)
            return rounded.astype(a.dtype, copy=False)
        return ufunc(a)

    return _floating(array_fn)


def _cpu_kernel(name: str, np_fn):
    """``np_fn``, but for float32 and half the bits of PyTorch's CPU kernel ``name`` (Sleef's function in its vector
    blocks, glibc's in the scalar loop: nn_ops/transcendental_cpu)."""

    def array_fn(a: np.ndarray) -> np.ndarray:
        if a.dtype == np.float32 or a.dtype == np.float16:
            from .nn_ops import transcendental_cpu  # (nn_ops imports this module)

            return getattr(transcendental_cpu, f"{name}_cpu")(a)
        return np_fn(a)

    return _floating(array_fn)


exp2, exp2_ = _pair("exp2", _cpu_kernel("exp2", np.exp2), _exp2_vjp, _RESULT)
expm1, expm1_ = _pair("expm1", _sleef_everywhere("sleef_expm1f", np.expm1), _expm1_vjp, _RESULT)
log1p, log1p_ = _pair("log1p", _sleef_everywhere("sleef_log1pf", _double_log1p), _log1p_vjp, _SELF,
                      node_name="Log1PBackward0")
log2, log2_ = _pair("log2", _rounded_from_float64(positive_nan_of_negatives(np.log2)), _log2_vjp, _SELF)
log10, log10_ = _pair("log10", _rounded_from_float64(positive_nan_of_negatives(np.log10)), _log10_vjp, _SELF)
rsqrt, rsqrt_ = _pair("rsqrt", _rsqrt_kernel, _rsqrt_vjp, _RESULT)
tan, tan_ = _pair("tan", _floating(np.tan), _tan_vjp, _RESULT)
asin, asin_ = _pair("asin", _rounded_from_float64(np.arcsin), _asin_vjp, _SELF)
acos, acos_ = _pair("acos", _rounded_from_float64(_arccos), _acos_vjp, _SELF)
atan, atan_ = _pair("atan", _rounded_from_float64(np.arctan), _atan_vjp, _SELF)
sinh, sinh_ = _pair("sinh", _cpu_kernel("sinh", np.sinh), _sinh_vjp, _SELF)
cosh, cosh_ = _pair("cosh", _cpu_kernel("cosh", np.cosh), _cosh_vjp, _SELF)
asinh, asinh_ = _pair("asinh", _floating(np.arcsinh), _asinh_vjp, _SELF, no_inplace_grad=True)
acosh, acosh_ = _pair("acosh", _floating(np.arccosh), _acosh_vjp, _SELF, no_inplace_grad=True)
atanh, atanh_ = _pair("atanh", _floating(np.arctanh), _atanh_vjp, _SELF, no_inplace_grad=True)


# ---- logit -------------------------------------------------------------------------------------------------


def _logit_clamped(x: np.ndarray, eps: float) -> np.ndarray:
    """``x`` clamped as ATen's logit kernel clamps it: ``x < lo ? lo : (x > hi ? hi : x)`` with ``lo = eps`` and
    ``hi = 1 - lo`` in x's type (eps refused beyond its range). A negative or NaN eps clamps nothing; an eps above
    0.5 gives ``lo`` below ``lo`` and ``hi`` above it."""
    dt = bfloat16_in_float.as_seen(x.dtype)  # (bfloat16's bounds for a float32 copy of a bfloat16 operand)
    lo = scalar_for(float(eps), dt)
    if not lo >= 0:
        return x
    hi = x.dtype.type(dt.type(1) - lo)
    lo = x.dtype.type(lo)
    if lo <= hi:
        return np.clip(x, lo, hi)
    return np.where(x < lo, lo, np.where(x > hi, hi, x))  # (every x but NaN lands on a bound)


def _logit_kernel(a, eps=None):
    x = to_floating(a)
    if eps is not None:
        x = _logit_clamped(x, eps)
    with np.errstate(all="ignore"):
        if bfloat16_in_float.stands_for_bfloat16(x.dtype):
            # (ATen's BFloat16 kernel rounds each step to bfloat16: 1 - x, then x / (1 - x), before the log)
            return np.log(_bfloat16_values(x / _bfloat16_values(1.0 - x)))
        return np.log(x / (1.0 - x))


def _bfloat16_values(x: np.ndarray) -> np.ndarray:
    """A float32 array rounded to the nearest bfloat16 values, kept in float32."""
    return x.astype(_dt.bfloat16.np).astype(x.dtype)


def _logit_vjp(ctx, g):
    (eps,) = ctx.attrs
    x = _saved_input(ctx)
    grad = div(g, mul(x, scalar_minus(1.0, x)))
    # Without eps the gradient is NaN outside [0, 1]; with eps 0 outside [eps, 1 - eps]. For a NaN input
    # PyTorch's two formulas differ: its kernel (no graph) gives NaN, its differentiable formula, used under
    # grad mode (create_graph, forward AD), tests the inside and gives 0 with eps.
    # ATen's backward kernel, like the forward one, takes a negative eps for none.
    if eps is None or (eps < 0 and not is_grad_enabled()):
        return where(logical_and(ge(x, 0.0), le(x, 1.0)), grad, math.nan)
    if is_grad_enabled():
        return where(logical_and(ge(x, eps), le(x, 1.0 - eps)), grad, 0.0)
    return where(logical_or(lt(x, eps), gt(x, 1.0 - eps)), 0.0, grad)


logit, logit_ = _pair("logit", reject_complex(_logit_kernel, "logit_cpu"), _logit_vjp, _SELF,
                      params=", float? eps=None", attrs=("eps",))


def _sinc_kernel(a):
    # PyTorch's: 1 at 0, else sin(pi x) / (pi x) in the result's own precision (not NumPy's float64 sinc)
    x = to_floating(a)
    product = x * x.dtype.type(math.pi)
    with np.errstate(all="ignore"):
        return np.where(x == 0, x.dtype.type(1), np.sin(product) / product).astype(x.dtype, copy=False)


def _sinc_vjp(ctx, g):
    """PyTorch's sinc_backward: grad * ((pi x cos(pi x) - sin(pi x)) / (pi x^2)).conj(), 0 where x == 0."""
    from .pointwise import cos, div, eq, mul, sin, sub, where

    (x,) = ctx.saved_tensors
    x_pi = mul(x, math.pi)
    x_squared_pi = mul(mul(x, x), math.pi)
    out = mul(g, conj(div(sub(mul(x_pi, cos(x_pi)), sin(x_pi)), x_squared_pi)))
    return where(eq(x_squared_pi, 0.0), 0.0, out)


sinc, sinc_ = _pair("sinc", _sinc_kernel, _sinc_vjp, _SELF)


# ---- error function family ---------------------------------------------------------------------------------


def _erf_vjp(ctx, g):
    x = _saved_input(ctx)
    return mul(mul(exp(neg(x ** 2)), _TWO_OVER_SQRT_PI), g)  # PyTorch: 2 / sqrt(pi) * exp(-(self.pow(2))) * grad


def _erfc_vjp(ctx, g):
    x = _saved_input(ctx)
    return mul(mul(exp(neg(x ** 2)), -_TWO_OVER_SQRT_PI), g)


def _erfinv_vjp(ctx, g):
    # PyTorch: 0.5 * sqrt(M_PI) * exp(self.erfinv().pow(2)) * grad
    return mul(mul(exp(erfinv(_saved_input(ctx)) ** 2), _SQRT_PI / 2), g)


erf, erf_ = _pair("erf", reject_complex(_in_float64(np_erf), "erf_vml_cpu"), _erf_vjp, _SELF)
erfc, erfc_ = _pair("erfc", reject_complex(_in_float64(np_erfc), "erfc_vml_cpu"), _erfc_vjp, _SELF)
erfinv, erfinv_ = _pair("erfinv", reject_complex(_in_float64(np_erfinv), "erfinv_vml_cpu"), _erfinv_vjp, _SELF)


# ---- absolute value and sign -------------------------------------------------------------------------------


def _abs_kernel(a):
    if a.dtype.kind == "b":
        raise unsupported("abs_cpu", a.dtype)
    return np.abs(a)


def _abs_vjp(ctx, g):
    return mul(g, sgn(_saved_input(ctx)))  # sgn(0) = 0: PyTorch's subgradient at the kink


def _sign_kernel(a):
    kind = a.dtype.kind
    if kind == "b":
        return a.copy()
    if kind == "f":
        # (x > 0) - (x < 0): NaN and -0.0 map to 0, as in PyTorch (np.sign keeps NaN)
        return np.subtract(a > 0, a < 0, dtype=a.dtype)
    if kind == "c":
        mag = np.abs(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(mag == 0, 0, a / mag).astype(a.dtype)
    return np.sign(a)


def _sign_real_kernel(a):
    if a.dtype.kind == "c":  # (a NotImplementedError in PyTorch, from every overload)
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. "
                                  "Please use torch.sgn instead.")
    return _sign_kernel(a)


def _abs_inplace_check(a):
    if a.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.")


abs, abs_ = _pair("abs", _abs_kernel, _abs_vjp, _SELF, inplace_check=_abs_inplace_check)
sign, sign_ = _pair("sign", _sign_real_kernel, _zero_grad)
def _sgn_vjp(ctx, g):
    """PyTorch's sgn_backward: zero for real input; for complex, (g - sgn^2 conj(g)) / (2 |x|), 0 where x = 0."""
    x, s = ctx.saved_tensors
    if not x.is_complex():
        return zeros_like(g)
    from .pointwise import div, eq, sub
    from .shape_extra import masked_fill

    a = abs(x)
    return masked_fill(div(sub(g, mul(mul(s, s), g.conj())), mul(a, 2.0)), eq(a, 0.0), 0.0)


sgn, sgn_ = _pair("sgn", _sign_kernel, _sgn_vjp, ("self", "result"))


# ---- rounding ----------------------------------------------------------------------------------------------


def _rounding(np_fn, kernel_name: str, complex_message: str | None = None):
    """Integers round to themselves (dtype kept); bool has no kernel in PyTorch, nor has complex (floor, ceil
    and trunc refuse it with their own ``complex_message``)."""

    def kernel(a):
        kind = a.dtype.kind
        if kind == "b":
            raise unsupported(kernel_name, a.dtype)
        if kind in "iu":
            return a.copy()
        return np_fn(a)

    return reject_complex(kernel, kernel_name,
                          error=None if complex_message is None else (NotImplementedError, complex_message))


def _round_decimals_kernel(a, decimals):
    if a.dtype.kind not in "f":
        raise unsupported("round_cpu", a.dtype)
    # computed in the input's dtype, like PyTorch: scale, round half to even, unscale
    scale = a.dtype.type(10.0 ** (decimals if decimals >= 0 else -decimals))
    with np.errstate(all="ignore"):
        if decimals > 0:
            return np.rint(a * scale) / scale
        if decimals < 0:
            return np.rint(a / scale) * scale
        return np.rint(a)


def _frac_kernel(a):
    if a.dtype.kind != "f":
        raise unsupported("frac_cpu", a.dtype)
    with np.errstate(all="ignore"):
        return a - np.trunc(a)


floor, floor_ = _pair("floor", _rounding(np.floor, "floor_vml_cpu", "floor is not supported for complex inputs"),
                      _zero_grad)
ceil, ceil_ = _pair("ceil", _rounding(np.ceil, "ceil_vml_cpu", "ceil is not supported for complex inputs"),
                    _zero_grad)
trunc, trunc_ = _pair("trunc", _rounding(np.trunc, "trunc_vml_cpu", "trunc is not supported for complex inputs"),
                      _zero_grad)
_round, _round_ = _pair("round", _rounding(np.rint, "round_vml_cpu"), _zero_grad)
_round_dec = defop("round.decimals(Tensor self, *, int decimals) -> Tensor", _round_decimals_kernel,
                   vjp=_zero_grad, node_name="RoundBackward1")
_round_dec_ = defop("round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)",
                    inplace_kernel(_round_decimals_kernel), vjp=_zero_grad, node_name="RoundBackward1")
frac, frac_ = _pair("frac", _frac_kernel, lambda ctx, g: g)


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:
    """Round half to even; ``decimals`` rounds to that many decimal places (negative: left of the point)."""
    if decimals == 0:
        return call(_round, out, input)
    return call(_round_dec, out, input, decimals=decimals)


def _round_inplace(self: Tensor, *, decimals: int = 0) -> Tensor:
    if decimals == 0:
        return _round_(self)
    return _round_dec_(self, decimals=decimals)


# ---- reciprocal, square, nan_to_num ------------------------------------------------------------------------


def _reciprocal_kernel(a):
    x = to_floating(a)
    with np.errstate(all="ignore"):
        return np.reciprocal(x)


def _reciprocal_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    return mul(neg(g), conj(mul(y, y)))  # PyTorch: -grad * (result * result).conj()


reciprocal, reciprocal_ = _pair("reciprocal", _reciprocal_kernel, _reciprocal_vjp, _RESULT)


def square(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input ** 2`` (PyTorch implements it as ``pow(input, 2)``: bool becomes int64)."""
    from .binary import pow as _pow

    return _pow(input, 2, out=out)


def square_(self: Tensor) -> Tensor:
    from .binary import _pow_scalar_

    return _pow_scalar_(self, 2)


def _nan_to_num_kernel(a, nan=None, posinf=None, neginf=None):
    nan, posinf, neginf = float_arg(nan), float_arg(posinf), float_arg(neginf)
    if a.dtype.kind not in "fc":
        return a.copy()
    info = bfloat16_in_float.finfo(a.dtype)
    return np.nan_to_num(a, copy=True, nan=0.0 if nan is None else nan,
                         posinf=float(info.max) if posinf is None else posinf,
                         neginf=float(info.min) if neginf is None else neginf)


def _nan_to_num_vjp(ctx, g):
    return mul(g, isfinite(_saved_input(ctx)))


_nan_to_num, _nan_to_num_ = _pair("nan_to_num", _nan_to_num_kernel, _nan_to_num_vjp, _SELF,
                                  params=", float? nan=None, float? posinf=None, float? neginf=None")
_nan_to_num.complex_grad = False  # PyTorch's gradient mask is real-only; its in-place twin does not check


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None, *,
               out: Tensor | None = None) -> Tensor:
    """Replace NaN with ``nan`` and +/-inf with ``posinf``/``neginf`` (default: the dtype's extremes)."""
    return call(_nan_to_num, out, input, nan, posinf, neginf)


def _nan_to_num_inplace(self: Tensor, nan: float = 0.0, posinf: float | None = None,
                        neginf: float | None = None) -> Tensor:
    return _nan_to_num_(self, nan, posinf, neginf)


# ---- angle conversions, positive ---------------------------------------------------------------------------


def _scale_kernel(name: str, factor: float):
    def kernel(a):
        if a.dtype.kind == "c":  # (an angle in degrees is real: torch refuses what NumPy would scale)
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        x = to_floating(a)
        with np.errstate(all="ignore"):
            return x * x.dtype.type(factor)

    return kernel


_DEG2RAD = math.pi / 180.0
_RAD2DEG = 180.0 / math.pi
deg2rad, deg2rad_ = _pair("deg2rad", _scale_kernel("deg2rad", _DEG2RAD), lambda ctx, g: mul(g, _DEG2RAD),
                          node_name="Deg2RadBackward0")
rad2deg, rad2deg_ = _pair("rad2deg", _scale_kernel("rad2deg", _RAD2DEG), lambda ctx, g: mul(g, _RAD2DEG),
                          node_name="Rad2DegBackward0")


def positive(input: Tensor) -> Tensor:
    """Returns ``input`` itself (not a copy), as PyTorch does."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ---- bitwise not -------------------------------------------------------------------------------------------


def _bitwise_not_kernel(a):
    kind = a.dtype.kind
    if kind == "b":
        return np.logical_not(a)
    if kind in "iu":
        return np.invert(a)
    raise unsupported("bitwise_not_cpu", a.dtype)


bitwise_not, bitwise_not_ = _pair("bitwise_not", _bitwise_not_kernel)


def invert(self: Tensor) -> Tensor:
    """``~tensor``."""
    if self._data.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


# ---- predicates (bool results, never differentiable) -------------------------------------------------------


def _float_only_predicate(np_fn, default: bool):
    def kernel(a):
        if a.dtype.kind in "fc":
            return np_fn(a)
        return np.full(a.shape, default, dtype=bool)

    return kernel


def _signbit_kernel(a):
    kind = a.dtype.kind
    if kind == "f":
        return np.signbit(a)
    if kind == "i":
        return a < 0
    if kind == "c":
        raise RuntimeError("signbit is not implemented for complex tensors.")
    return np.zeros(a.shape, dtype=bool)


isnan = defop("isnan(Tensor self) -> Tensor", _float_only_predicate(np.isnan, False))
isinf = defop("isinf(Tensor self) -> Tensor", _float_only_predicate(np.isinf, False))
isfinite = defop("isfinite(Tensor self) -> Tensor", _float_only_predicate(np.isfinite, True))
isposinf = defop("isposinf(Tensor self) -> Tensor", _float_only_predicate(np.isposinf, False))
isneginf = defop("isneginf(Tensor self) -> Tensor", _float_only_predicate(np.isneginf, False))
signbit = defop("signbit(Tensor self) -> Tensor", _signbit_kernel)


def isreal(input: Tensor) -> Tensor:
    """True where the imaginary part is zero (everywhere for real tensors)."""
    from .creation import ones_like

    if input._data.dtype.kind != "c":
        from ..backend.dtypes import bool_

        return ones_like(input, dtype=bool_)
    return _isreal(input)


_isreal = defop("isreal(Tensor self) -> Tensor", lambda a: np.imag(a) == 0)


# ---- complex helpers on real tensors -----------------------------------------------------------------------


def _angle_kernel(a):
    if a.dtype.kind == "c":
        return np.angle(a)
    x = to_floating(a)
    out = np.where(x < 0, x.dtype.type(math.pi), x.dtype.type(0)).astype(x.dtype, copy=False)
    return np.where(np.isnan(x), x, out)


def _angle_vjp(ctx, g):
    """PyTorch's angle_backward: grad * z / |z|^2 * i for complex z (0 at z = 0); 0 for real input."""
    (z,) = ctx.saved_tensors
    if z._data.dtype.kind != "c":
        return zeros_like(g)
    from .pointwise import eq, mul, where

    magnitude = abs(z)  # (this module's abs operator)
    return where(eq(z, 0.0), 0.0, mul(div(mul(g, z), mul(magnitude, magnitude)), 1j))


angle = defop("angle(Tensor self) -> Tensor", _angle_kernel, vjp=_angle_vjp, saves=("self",))


def _conj_physical_vjp(ctx, g):
    return conj_physical(g)


_conj_physical = defop("conj_physical(Tensor self) -> Tensor", lambda a: np.conj(a), vjp=_conj_physical_vjp,
                       node_name="ConjPhysicalBackward0")
# (derivatives.yaml has an entry of its own for the in-place form: ConjPhysicalBackward1)
def _conj_physical_inplace_kernel(a):
    if a.dtype.kind == "c":  # (ATen returns any other tensor untouched, a bool one included)
        np.conjugate(a, out=a)
    return a


_conj_physical_ = defop("conj_physical_(Tensor(a!) self) -> Tensor(a!)", _conj_physical_inplace_kernel,
                        vjp=_conj_physical_vjp, node_name="ConjPhysicalBackward1")


# PyTorch's ``conj`` is a lazy view (``_conj``, node ConjBackward0); here it copies, under the same node.
_conj = defop("_conj(Tensor self) -> Tensor", lambda a: np.conj(a), vjp=lambda ctx, g: conj(g),
              jvp=lambda args, outs, tangents: None if tangents[0] is None else conj(tangents[0]),
              node_name="ConjBackward0")


def conj(input: Tensor) -> Tensor:
    """Complex conjugate; a real tensor is returned as is (PyTorch returns ``input`` itself)."""
    if input._data.dtype.kind != "c":
        return input
    return _conj(input)


def conj_physical(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    if input._data.dtype.kind != "c" and out is None:
        return input
    return call(_conj_physical, out, input)


def conj_physical_(self: Tensor) -> Tensor:
    # A real tensor goes through the operator too: its kernel leaves the values, but PyTorch's autograd and
    # version counter see an in-place write (a leaf requiring grad refused, ConjPhysicalBackward1, a new version).
    return _conj_physical_(self)


def resolve_conj(input: Tensor) -> Tensor:
    """Conjugation is never lazy here, so there is nothing to resolve."""
    return input


def resolve_neg(input: Tensor) -> Tensor:
    return input


# ---- clamp -------------------------------------------------------------------------------------------------


# clamp's refusal of complex input (type, message), also that of the activations PyTorch builds on clamp (relu,
# hardtanh, relu6)
CLAMP_COMPLEX = (NotImplementedError, "clamp is not supported for complex types")


def _clamp_kernel(a, min=None, max=None, clip=clip_values):
    """clamp with Scalar bounds; ``clip`` is ``clip_by_tensors`` for the Tensor overloads (whose ATen kernel breaks
    ties between zeros differently in its vector code)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if a.dtype.kind == "c":
        raise CLAMP_COMPLEX[0](CLAMP_COMPLEX[1])
    dt = result_dtype(a, min, max)
    if dt.kind == "c":  # (a complex bound of a real tensor: a complex result)
        raise CLAMP_COMPLEX[0](CLAMP_COMPLEX[1])
    if dt.kind == "b":
        _refuse_bool_clamp(clip, min is not None, max is not None)
    for bound in (min, max):  # (a number converts to the result's dtype, half included)
        check_scalar_parameter(bound, dt)
        integral_scalar(bound, dt)  # (Scalar::to refuses an int the dtype cannot hold)
    return clip(as_array(a, dt), None if min is None else as_array(min, dt), None if max is None else as_array(max, dt))


def _refuse_bool_clamp(clip, has_min: bool, has_max: bool) -> None:
    """A bool clamp: the Scalar kernels' dispatch has no Bool, nor the Tensor overload's with both bounds
    (``clamp_cpu``); with one tensor bound it runs as clamp_min/clamp_max, which take bool."""
    if clip is clip_values:
        raise unsupported("clamp_scalar_cpu" if has_min and has_max
                          else "clamp_min_scalar_cpu" if has_min else "clamp_max_scalar_cpu", np.dtype(bool))
    if has_min and has_max:
        raise unsupported("clamp_cpu", np.dtype(bool))


@_pw.writes_last
def _clamp_inplace_kernel(a, min=None, max=None, clip=clip_values):
    dt = result_dtype(a, min, max)
    if dt != a.dtype and not _pw._can_cast_like_torch(dt, a.dtype):
        # (checked before the kernel's own checks): the Scalar overloads' meta function prints self's TypeMeta, a C
        # type name ("long int"), the Tensor overloads' TensorIterator its scalar type ("Long")
        output_type = type_name(a.dtype) if clip is clip_by_tensors else cpp_type_name(a.dtype)
        raise RuntimeError(f"result type {type_name(dt)} can't be cast to the desired output type {output_type}")
    _pw.copy_into(a, _clamp_kernel(a, min, max, clip))
    return a


def _bounds_read_as_double(input, min, max) -> tuple:
    """clamp's number bounds for a floating tensor as PyTorch's Python binding reads them, as doubles: 2+0j is
    2.0 and 1j is refused (for other tensors a complex bound makes a complex result, which clamp refuses)."""
    if not (isinstance(min, complex) or isinstance(max, complex)):
        return min, max  # (the usual case)
    if not isinstance(input, Tensor) or kind_of(input._data.dtype) != "f":
        return min, max
    return _as_double(min), _as_double(max)


def _as_double(bound):
    if not isinstance(bound, complex):
        return bound
    if bound.imag != 0:
        raise RuntimeError("value cannot be converted to type double without overflow")
    return bound.real


def _clamp_tensor_kernel(a, min=None, max=None):
    return _clamp_kernel(a, min, max, clip_by_tensors)


@_pw.writes_last
def _clamp_tensor_inplace_kernel(a, min=None, max=None):
    return _clamp_inplace_kernel(a, min, max, clip_by_tensors)


def _inside(x, lo, hi):
    """Bool mask of ``lo <= x <= hi`` where bounds may be None."""
    if lo is None:
        return le(x, hi)
    if hi is None:
        return ge(x, lo)
    return logical_and(ge(x, lo), le(x, hi))


def _clamp_scalar_vjp(ctx, g):
    lo, hi = ctx.attrs
    return where(_inside(_saved_input(ctx), lo, hi), g, 0.0)


def _clamp_tensor_vjp(ctx, g):
    x, lo, hi = ctx.saved_tensors
    need = ctx.needs_input_grad
    gx = where(_inside(x, lo, hi), g, 0.0) if need[0] else None
    glo = ghi = None
    if need[1]:
        below = lt(x, lo)
        glo = where(below if hi is None else logical_and(below, lt(lo, hi)), g, 0.0)
    if need[2]:
        above = gt(x, hi)
        ghi = where(above if lo is None else logical_or(above, lt(hi, lo)), g, 0.0)
    return gx, glo, ghi


def _clamp_tensor_jvp(args, outs, tangents):
    """PyTorch's clamp_jvp: the tangent of whichever operand the result is (max's where min > max). Unlike the
    backward rule, a NaN input passes its own tangent."""
    x, lo, hi = args[0], args[1], args[2]
    t_x, t_lo, t_hi = (tangent if tangent is not None else zeros_like(outs[0])
                       for tangent in (tuple(tangents) + (None, None, None))[:3])
    if lo is not None and hi is not None:
        return where(gt(lo, hi), t_hi, where(lt(x, lo), t_lo, where(gt(x, hi), t_hi, t_x)))
    if lo is not None:
        return where(gt(x, lo), t_x, t_lo)
    return where(lt(x, hi), t_x, t_hi)


_CLAMP_S = "(Tensor{} self, Scalar? min=None, Scalar? max=None) -> Tensor{}"
_CLAMP_T = ".Tensor(Tensor{} self, Tensor? min=None, Tensor? max=None) -> Tensor{}"
_clamp = defop("clamp" + _CLAMP_S.format("", ""), _clamp_kernel, vjp=_clamp_scalar_vjp, saves=_SELF,
               attrs=("min", "max"), node_name="ClampBackward1")
_clamp_ = defop("clamp_" + _CLAMP_S.format("(a!)", "(a!)"), _clamp_inplace_kernel, vjp=_clamp_scalar_vjp,
                saves=_SELF, attrs=("min", "max"), node_name="ClampBackward1")
_clamp_t = defop("clamp" + _CLAMP_T.format("", ""), _clamp_tensor_kernel, vjp=_clamp_tensor_vjp,
                 saves=("self", "min", "max"), node_name="ClampBackward0", jvp=_clamp_tensor_jvp)
_clamp_t_ = defop("clamp_" + _CLAMP_T.format("(a!)", "(a!)"), _clamp_tensor_inplace_kernel, vjp=_clamp_tensor_vjp,
                  saves=("self", "min", "max"), node_name="ClampBackward0", jvp=_clamp_tensor_jvp)
_clamp.elementwise_jvp = _clamp_.elementwise_jvp = True


def _clamp_op(min, max, scalar_op, tensor_op):
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if min is None or max is None or (isinstance(min, Tensor) and isinstance(max, Tensor)):
            return tensor_op
        return _as_numbers(scalar_op)
    return scalar_op


def _as_numbers(scalar_op):
    """A Tensor bound beside a Number one: only torch's Number overload can take that, reading a 0-d tensor as
    its number (``number_arg`` refuses any other tensor)."""
    def call_with_numbers(input, min, max, **kwargs):
        return scalar_op(input, number_arg(min), number_arg(max), **kwargs)
    return call_with_numbers


def clamp(input: Tensor, min=None, max=None, *, out: Tensor | None = None) -> Tensor:
    """Clamp into ``[min, max]``; bounds are numbers or (broadcasting) tensors; NaN propagates."""
    min, max = _bounds_read_as_double(input, min, max)
    return call(_clamp_op(min, max, _clamp, _clamp_t), out, input, min, max)


def clamp_(self: Tensor, min=None, max=None) -> Tensor:
    min, max = _bounds_read_as_double(self, min, max)
    return _clamp_op(min, max, _clamp_, _clamp_t_)(self, min, max)


def _one_sided_vjp(compare):
    def scalar_vjp(ctx, g):
        (bound,) = ctx.attrs
        return where(compare(_saved_input(ctx), bound), g, 0.0)

    def tensor_vjp(ctx, g):
        x, bound = ctx.saved_tensors
        need = ctx.needs_input_grad
        inside = compare(x, bound)
        return (where(inside, g, 0.0) if need[0] else None,
                where(inside, 0.0, g) if need[1] else None)

    return scalar_vjp, tensor_vjp


def _one_sided(name: str, bound: str, compare, node: str):
    """``clamp_min``/``clamp_max``: Scalar and Tensor overloads, each with its in-place form."""
    scalar_vjp, tensor_vjp = _one_sided_vjp(compare)
    lower = bound == "min"

    def kernel(a, b, clip=clip_values):
        return _clamp_kernel(a, b, None, clip) if lower else _clamp_kernel(a, None, b, clip)

    @_pw.writes_last
    def inplace(a, b, clip=clip_values):
        return _clamp_inplace_kernel(a, b, None, clip) if lower else _clamp_inplace_kernel(a, None, b, clip)

    def tensor_kernel(a, b):
        return kernel(a, b, clip_by_tensors)

    @_pw.writes_last
    def tensor_inplace(a, b):
        return inplace(a, b, clip_by_tensors)

    return (
        defop(f"{name}(Tensor self, Scalar {bound}) -> Tensor", kernel, vjp=scalar_vjp, saves=_SELF,
              attrs=(bound,), node_name=f"{node}Backward0"),
        defop(f"{name}_(Tensor(a!) self, Scalar {bound}) -> Tensor(a!)", inplace, vjp=scalar_vjp, saves=_SELF,
              attrs=(bound,), node_name=f"{node}Backward0"),
        defop(f"{name}.Tensor(Tensor self, Tensor {bound}) -> Tensor", tensor_kernel, vjp=tensor_vjp,
              saves=("self", bound), node_name=f"{node}Backward1"),
        defop(f"{name}_.Tensor(Tensor(a!) self, Tensor {bound}) -> Tensor(a!)", tensor_inplace, vjp=tensor_vjp,
              saves=("self", bound), node_name=f"{node}Backward1"),
    )


_clamp_min, _clamp_min_, _clamp_min_t, _clamp_min_t_ = _one_sided("clamp_min", "min", ge, "ClampMin")
_clamp_max, _clamp_max_, _clamp_max_t, _clamp_max_t_ = _one_sided("clamp_max", "max", le, "ClampMax")


def clamp_min(input: Tensor, min, *, out: Tensor | None = None) -> Tensor:
    return call(_clamp_min_t if isinstance(min, Tensor) else _clamp_min, out, input, min)


def clamp_min_(self: Tensor, min) -> Tensor:
    return (_clamp_min_t_ if isinstance(min, Tensor) else _clamp_min_)(self, min)


def clamp_max(input: Tensor, max, *, out: Tensor | None = None) -> Tensor:
    return call(_clamp_max_t if isinstance(max, Tensor) else _clamp_max, out, input, max)


def clamp_max_(self: Tensor, max) -> Tensor:
    return (_clamp_max_t_ if isinstance(max, Tensor) else _clamp_max_)(self, max)


# ---- exports -----------------------------------------------------------------------------------------------

_WITH_INPLACE = {
    "abs": (abs, abs_), "absolute": (abs, abs_), "exp2": (exp2, exp2_), "expm1": (expm1, expm1_),
    "log1p": (log1p, log1p_), "log2": (log2, log2_), "log10": (log10, log10_), "rsqrt": (rsqrt, rsqrt_),
    "tan": (tan, tan_), "asin": (asin, asin_), "acos": (acos, acos_), "atan": (atan, atan_),
    "sinh": (sinh, sinh_), "cosh": (cosh, cosh_), "asinh": (asinh, asinh_), "acosh": (acosh, acosh_),
    "atanh": (atanh, atanh_), "arcsin": (asin, asin_), "arccos": (acos, acos_), "arctan": (atan, atan_),
    "arcsinh": (asinh, asinh_), "arccosh": (acosh, acosh_), "arctanh": (atanh, atanh_),
    "logit": (logit, logit_), "sinc": (sinc, sinc_), "erf": (erf, erf_), "erfc": (erfc, erfc_),
    "erfinv": (erfinv, erfinv_),
    "sign": (sign, sign_), "sgn": (sgn, sgn_), "floor": (floor, floor_), "ceil": (ceil, ceil_),
    "round": (round, _round_inplace), "trunc": (trunc, trunc_), "fix": (trunc, trunc_), "frac": (frac, frac_),
    "reciprocal": (reciprocal, reciprocal_), "square": (square, square_),
    "nan_to_num": (nan_to_num, _nan_to_num_inplace), "deg2rad": (deg2rad, deg2rad_),
    "rad2deg": (rad2deg, rad2deg_), "bitwise_not": (bitwise_not, bitwise_not_),
    "conj_physical": (conj_physical, conj_physical_), "clamp": (clamp, clamp_), "clip": (clamp, clamp_),
    "clamp_min": (clamp_min, clamp_min_), "clamp_max": (clamp_max, clamp_max_),
    "negative": (_pw.neg, _pw.neg_),
}
_PLAIN = {
    "positive": positive, "isnan": isnan, "isinf": isinf, "isfinite": isfinite, "isposinf": isposinf,
    "isneginf": isneginf, "signbit": signbit, "isreal": isreal, "angle": angle, "conj": conj,
    "resolve_conj": resolve_conj, "resolve_neg": resolve_neg,
}
# torch-level in-place functions that PyTorch has (``torch.abs_``); the others exist only as methods
_NO_TORCH_INPLACE = {"absolute", "erfinv", "sign", "sgn", "bitwise_not"}

PUBLIC = {**_PLAIN}
METHODS = {**_PLAIN, "__invert__": invert, "__pos__": positive, "is_conj": lambda self: False,
           "is_neg": lambda self: False}
for _name, (_fn, _fn_) in _WITH_INPLACE.items():
    PUBLIC[_name] = _fn
    METHODS[_name] = _fn
    METHODS[_name + "_"] = _fn_
    if _name not in _NO_TORCH_INPLACE:
        PUBLIC[_name + "_"] = _fn_
