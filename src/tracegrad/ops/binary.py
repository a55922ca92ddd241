"""Binary (and ternary) pointwise operators beyond the core set of ``pointwise.py``.

Division with rounding modes, remainders, extrema, ``atan2``/``hypot``/``copysign``, ``lerp``, ``addcmul``/
``addcdiv``, ``xlogy``, bitwise operators and shifts, closeness tests, ``float_power``, the incomplete gamma
functions, comparison aliases and in-place comparisons. ``pow``, ``div``, ``sub`` and ``where`` are
re-exported with the overloads and checks PyTorch has (scalar-base and scalar-exponent ``pow``,
``rounding_mode``, bool subtraction errors, a boolean ``where`` condition).

Where PyTorch has separate Scalar and Tensor overloads with different backward nodes
(``RemainderBackward0``/``RemainderBackward1``, ``PowBackward0/1/2``...), they are separate operators here
too and the public function picks one, as PyTorch's argument parser does.
"""

from __future__ import annotations

import cmath
import functools
import math

import numpy as np

from .._operands import is_operand as _is_operand
from .._tensor import Tensor
from .._warnings import warn_once_at_caller
from ..autograd.forward_ad import unformulated_refusal
from ..backend.dtypes import cpp_type_name, from_numpy_dtype, kind_of
from . import incomplete_gamma
from . import pointwise as _pw
from ._jvp import minus, or_zero, plus, recording, scaled, scaled_zero, zero_over, zero_times
from ._util import (
    binary_dtype,
    default_float,
    in_float_to_half,
    log_add_exp_complex,
    number_arg,
    number_read_in_float,
    opmath_dtype,
    reject_complex,
    result_dtype,
)
from .aten_loops import loop_block, takes_basic_loop, vector_and_scalar
from .aten_vec import aten_float_lanes, fma
from .complex_ops import imag, real, real_for_real_input
from .creation import empty_like, fill_, to_dtype, zeros_like
from .pointwise import (
    add,
    check_broadcast_into,
    eq,
    exp,
    ge,
    gt,
    le,
    log,
    logical_and,
    logical_or,
    lt,
    mul,
    neg,
    write_into,
    writes_last,
)
from .pointwise import where as _where
from .registry import defop, defop_without_derivative, not_implemented
from .scalar_fill import check_scalar_parameter, integral_scalar, scalar_for
from .scalar_overloads import mul_scalar, scalar_minus
from .select import select
from .unary import call, conj, isnan, type_name, unsupported

# ---- helpers -----------------------------------------------------------------------------------------------


def _cast(x, dt: np.dtype) -> np.ndarray:
    """A kernel operand as an array of ``dt``; Python ints wrap like C casts (``uint8 & -1`` keeps 255s)."""
    if x.__class__ is np.ndarray:
        return x if x.dtype == dt else x.astype(dt)
    if dt.kind in "iu" and isinstance(x, int) and not isinstance(x, bool):
        return np.array(x).astype(dt)
    return np.asarray(x, dtype=dt)


def _operands(a, b):
    dt = binary_dtype(a, b)
    return dt, _cast(a, dt), _cast(b, dt)


def _check_output_shape(dst: np.ndarray, result) -> None:
    shape = np.shape(result)
    if shape != dst.shape:
        full = np.broadcast_shapes(shape, dst.shape)
        if full != dst.shape:
            raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                               f"{list(full)}")


def _inplace(kernel):
    """In-place kernel: compute functionally, check the broadcast shape and the cast, write into self."""

    @writes_last
    def run(a, *rest):
        check_broadcast_into(a, rest)  # (before computing: an integer division by zero must not come first)
        result = kernel(a, *rest)
        _check_output_shape(a, result)
        write_into(a, result)
        return a

    return run


def _cast_checked_first(kernel, check_options=None, promoted=None):
    """An in-place kernel that, as PyTorch's TensorIterator, checks that the operands' promoted dtype can be
    written into self before computing (so ``int_t |= 2.5`` is a cast error, not the kernel's dtype error).
    ``check_options(*options)``: the checks of the arguments after ``other`` that PyTorch's meta function makes
    before it builds the iterator (div's rounding mode); ``promoted(a, b, *options)``: the result dtype, where it
    is not ``binary_dtype``'s (true division's float)."""
    inplace = _inplace(kernel)

    @writes_last
    def run(a, b, *options):
        if check_options is not None:
            check_options(*options)
        check_broadcast_into(a, (b,))  # (the shape first, then the cast, as TensorIterator)
        dt = binary_dtype(a, b) if promoted is None else promoted(a, b, *options)
        if dt != a.dtype and not _pw._can_cast_like_torch(dt, a.dtype):
            raise RuntimeError(f"result type {type_name(dt)} can't be cast to the desired output type "
                               f"{type_name(a.dtype)}")
        return inplace(a, b, *options)

    return run


def _pair(schema: str, kernel, cast_checked_first: bool = False, check_options=None, promoted=None, **rules):
    """``name.overload(Tensor self, ...)`` and its in-place ``name_.overload(Tensor(a!) self, ...)``.

    ``fast="binary"`` (for ``(Tensor self, Tensor other)`` schemas only) gives the functional op the
    registry's straight-line eager path; in-place ops always take the general path. ``cast_checked_first`` and
    ``check_options``: see ``_cast_checked_first``.
    """
    head, _, rest = schema.partition("(")
    name, dot, overload = head.partition(".")
    op = defop(schema, kernel, **rules)
    rules.pop("fast", None)
    rules = {**rules, "node_name": op.node_class._name}
    inplace_schema = (f"{name}_{dot}{overload}(" + rest.replace("Tensor self", "Tensor(a!) self", 1)
                      .replace("-> Tensor", "-> Tensor(a!)"))
    inplace_kernel = _cast_checked_first(kernel, check_options, promoted) if cast_checked_first else _inplace(kernel)
    return op, defop(inplace_schema, inplace_kernel, **rules)


def _check_int_divisor(b: np.ndarray) -> None:
    if (b == 0).any():
        raise RuntimeError("ZeroDivisionError")


def _float_dtype(a, b) -> np.dtype:
    """Promoted dtype of a floating op: integer and bool promote to the default float dtype."""
    dt = binary_dtype(a, b)
    return default_float() if dt.kind in "biu" else dt


def _need_tensor(fn: str, value, arg: str, position: int) -> None:
    # Ops that PyTorch declares with Tensor arguments only reject Python numbers in its argument parser.
    if not isinstance(value, Tensor):
        from .._arg_parser import tp_name

        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be Tensor, not {tp_name(value)}")


def _is_bool(x) -> bool:
    if isinstance(x, Tensor):
        return x._data.dtype.kind == "b"
    return x.__class__ is bool  # (torch's parser reads a NumPy bool as a double)


def _zero_grads(ctx, g):
    need = ctx.needs_input_grad
    return tuple(zeros_like(g) if n else None for n in need)


# ---- subtraction checks ------------------------------------------------------------------------------------


def _check_sub(a, b) -> None:
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def sub(input: Tensor, other, *, alpha=1, out: Tensor | None = None) -> Tensor:
    """``input - alpha * other``; bool operands are rejected with PyTorch's message."""
    _check_sub(input, other)
    if alpha.__class__ is int and alpha == 1 and out is None:  # (not True or 1.0: torch checks them)
        return _pw.sub(input, other)  # positional: the registry's fast path
    return call(_pw.sub, out, input, other, alpha=alpha)


def sub_(self: Tensor, other, *, alpha=1) -> Tensor:
    _check_sub(self, other)
    return _pw.sub_(self, other, alpha=alpha)


def _number_overload_alpha(name: str, other, rest: tuple, alpha):
    """``alpha`` of ``subtract``/``rsub(input, Number other, Number alpha)``, the Scalar overload torch binds for
    them (not for ``sub``, whose third positional argument the argument guard reads in torch's deprecated order),
    which takes alpha positionally. Any other third positional argument raises a TypeError that the guard words."""
    if len(rest) != 1 or alpha != 1 or isinstance(other, Tensor):
        raise TypeError(f"{name}() takes a third positional argument only after a Number")
    return number_arg(rest[0])


def _with_number_overload(name: str, fn):
    """``fn`` (``sub`` or ``sub_``) as ``subtract``/``subtract_``, which also take alpha positionally."""
    @functools.wraps(fn)
    def subtract(input: Tensor, other, *rest, alpha=1, **kwargs) -> Tensor:
        if rest:
            alpha = _number_overload_alpha(name, other, rest, alpha)
        return fn(input, other, alpha=alpha, **kwargs)
    return subtract


def rsub(input: Tensor, other, *rest, alpha=1) -> Tensor:
    """``other - alpha * input``."""
    if rest:
        alpha = _number_overload_alpha("rsub", other, rest, alpha)
    _check_sub(input, other)
    return (_pw.rsub if isinstance(other, Tensor) else _pw.rsub_scalar)(input, other, alpha=alpha)


# ---- division with rounding modes --------------------------------------------------------------------------


def _check_rounding_mode(mode) -> None:
    if mode is not None and mode != "trunc" and mode != "floor":
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{mode}'")


def _div_rounded(a, b, mode: str):
    dt, x, y = _operands(a, b)
    if dt.kind in "bc":
        raise unsupported(f"div_{mode}_cpu", dt)
    if dt.kind in "iu":
        _check_int_divisor(y)
        with np.errstate(all="ignore"):
            q = np.floor_divide(x, y)
            if mode == "trunc":  # floor rounds down; truncation rounds inexact negative quotients up
                q = q + ((np.remainder(x, y) != 0) & ((x < 0) != (y < 0))).astype(dt)
        return q
    if number_read_in_float(b, dt):  # (a half tensor and a number: computed in float, as PyTorch does)
        return in_float_to_half(functools.partial(_div_rounded, mode=mode), a, b)
    with np.errstate(all="ignore"):
        if mode == "trunc":
            return np.trunc(x / y)
        # NumPy's float floor division is Python's (fmod-based, exact), which is PyTorch's div_floor too
        return np.floor_divide(x, y)


def _div_mode_kernel(a, b, rounding_mode=None):
    _check_rounding_mode(rounding_mode)
    if rounding_mode is None:
        return _pw._div_kernel(a, b)
    return _div_rounded(a, b, rounding_mode)


def _div_mode_vjp(ctx, g):
    (mode,) = ctx.attrs
    if mode is None:
        return _pw._div_vjp(ctx, g)
    # PyTorch's DivBackward2 reads its saved values back whatever the mode (unpack hooks see that); the gradient is
    # piecewise constant: zero, even where g is NaN (PyTorch's zeros_like)
    _ = ctx.saved_tensors
    return _zero_grads(ctx, g)


def _div_mode_jvp(args, outs, tangents):
    if args[2] is None:
        return _pw._div_jvp(args, outs, tangents)
    return zeros_like(outs[0])  # piecewise constant (PyTorch: result.new_zeros)


_div_mode, _div_mode_ = _pair("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
                              _div_mode_kernel, cast_checked_first=True, check_options=_check_rounding_mode,
                              promoted=lambda a, b, mode=None: binary_dtype(a, b) if mode else _float_dtype(a, b),
                              vjp=_div_mode_vjp, saves=("self", "other"),
                              save_if={"self": "other"}, attrs=("rounding_mode",), node_name="DivBackward2",
                              jvp=_div_mode_jvp)


# PyTorch picks the ``div.Tensor_mode`` overload (DivBackward2) whenever rounding_mode is passed, even as None.
_NOT_GIVEN = object()


def div(input: Tensor, other, *, rounding_mode=_NOT_GIVEN, out: Tensor | None = None) -> Tensor:
    """True division, or rounded toward zero (``'trunc'``) or down (``'floor'``)."""
    if rounding_mode is _NOT_GIVEN:
        return call(_pw.div, out, input, other)
    return call(_div_mode, out, input, other, rounding_mode=rounding_mode)


def div_(self: Tensor, other, *, rounding_mode=_NOT_GIVEN) -> Tensor:
    if rounding_mode is _NOT_GIVEN:
        return _pw.div_(self, other)
    return _div_mode_(self, other, rounding_mode=rounding_mode)


def true_divide(input: Tensor, other, *, out: Tensor | None = None) -> Tensor:
    return call(_pw.div, out, input, other)


def true_divide_(self: Tensor, other) -> Tensor:
    return _pw.div_(self, other)


floor_divide = defop_without_derivative(
    "floor_divide(Tensor self, Tensor other) -> Tensor", lambda a, b: _div_rounded(a, b, "floor"))
floor_divide_ = defop_without_derivative(
    "floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    _cast_checked_first(lambda a, b: _div_rounded(a, b, "floor")))


# ---- remainder and fmod ------------------------------------------------------------------------------------


def _remainder_kernel(a, b):
    dt, x, y = _operands(a, b)
    if dt.kind in "bc":
        raise unsupported("remainder_cpu", dt)
    if dt.kind in "iu":
        _check_int_divisor(y)
        return np.remainder(x, y)
    with np.errstate(all="ignore"):
        # PyTorch: fmod, then shift into the divisor's sign; an exact zero keeps fmod's sign (NumPy's differs)
        m = np.fmod(x, y)
        return select((m != 0) & ((y < 0) != (m < 0)), m + y, m)


def _fmod_kernel(a, b):
    dt, x, y = _operands(a, b)
    if dt.kind in "bc":
        raise unsupported("fmod_cpu", dt)
    if dt.kind in "iu":
        _check_int_divisor(y)
    with np.errstate(all="ignore"):
        return np.fmod(x, y)


def _self_grad_only(ctx, g):
    return g


def _remainder_vjp(ctx, g):
    x, y = ctx.saved_tensors
    need = ctx.needs_input_grad
    return (g if need[0] else None,
            mul(neg(g), _div_mode(x, y, rounding_mode="floor")) if need[1] else None)


def _fmod_vjp(ctx, g):
    x, y = ctx.saved_tensors
    need = ctx.needs_input_grad
    return (g if need[0] else None,
            mul(neg(g), _div_mode(x, y, rounding_mode="trunc")) if need[1] else None)


def _modulus_jvp(rounding_mode: str):
    """remainder/fmod's forward formula: self_t - other_t * self.div(other, rounding_mode); where a graph records, a
    missing tangent is PyTorch's zero tensor, its terms in the graph (SubBackward0, the zero product's node)."""

    def jvp(args, outs, tangents):
        t_self, t_other = tangents
        if recording(args, tangents):
            quotient = _div_mode(args[0], args[1], rounding_mode=rounding_mode)
            # (-0. - x is -x and y - +0. is y: the zero tensor's exact difference)
            term = mul(t_other, quotient) if t_other is not None else \
                zero_times(or_zero(None, args[1], tangents, negative=False), quotient)
            return _pw.sub(or_zero(t_self, args[0], tangents), term)
        if t_other is None:
            return t_self
        return minus(t_self, mul(t_other, _div_mode(args[0], args[1], rounding_mode=rounding_mode)))

    return jvp


# Both values are read only by other's gradient: kept only when other requires grad, as in PyTorch
_FOR_OTHER = {"self": "other", "other": "other"}
_remainder_s, _remainder_s_ = _pair("remainder.Scalar(Tensor self, Scalar other) -> Tensor",
                                    _remainder_kernel, vjp=_self_grad_only, node_name="RemainderBackward0",
                                    cast_checked_first=True)
_remainder_t, _remainder_t_ = _pair("remainder.Tensor(Tensor self, Tensor other) -> Tensor",
                                    _remainder_kernel, vjp=_remainder_vjp, saves=("self", "other"),
                                    save_if=_FOR_OTHER, node_name="RemainderBackward1", fast="binary",
                                    cast_checked_first=True, jvp=_modulus_jvp("floor"))
_remainder_st = defop_without_derivative("remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
                                         _remainder_kernel)
_remainder_st.without_autograd_kernel = _pw.through_wrapped_number(_remainder_t)
_fmod_s, _fmod_s_ = _pair("fmod.Scalar(Tensor self, Scalar other) -> Tensor", _fmod_kernel,
                          vjp=_self_grad_only, node_name="FmodBackward0", cast_checked_first=True)
_fmod_t, _fmod_t_ = _pair("fmod.Tensor(Tensor self, Tensor other) -> Tensor", _fmod_kernel, vjp=_fmod_vjp,
                          saves=("self", "other"), save_if=_FOR_OTHER, node_name="FmodBackward1", fast="binary",
                          cast_checked_first=True, jvp=_modulus_jvp("trunc"))


def remainder(input, other, *, out: Tensor | None = None) -> Tensor:
    """Python's modulus: the result has the divisor's sign."""
    if not isinstance(input, Tensor):
        return call(_remainder_st, out, input, other)
    return call(_remainder_t if isinstance(other, Tensor) else _remainder_s, out, input, other)


def remainder_(self: Tensor, other) -> Tensor:
    return (_remainder_t_ if isinstance(other, Tensor) else _remainder_s_)(self, other)


def fmod(input: Tensor, other, *, out: Tensor | None = None) -> Tensor:
    """C's fmod: the result has the dividend's sign."""
    return call(_fmod_t if isinstance(other, Tensor) else _fmod_s, out, input, other)


def fmod_(self: Tensor, other) -> Tensor:
    return (_fmod_t_ if isinstance(other, Tensor) else _fmod_s_)(self, other)


# ---- extrema -----------------------------------------------------------------------------------------------


def _promoted(np_fn):
    def kernel(a, b):
        dt, x, y = _operands(a, b)
        with np.errstate(all="ignore"):
            return np_fn(x, y)

    return kernel


def _extremum_vjp(loses_self, loses_other):
    """maximum/minimum: the gradient goes to the winner; ties split it in half (PyTorch's convention, written
    as its ``where(...).masked_fill_(loses, 0)``, which names a double-backward graph's nodes)."""

    def vjp(ctx, g):
        x, y = ctx.saved_tensors
        need = ctx.needs_input_grad

        def share(loses):  # (a new where per operand, written in place: its layout is where's)
            return _where(eq(x, y), _pw.div(g, 2), g).masked_fill_(loses(x, y), 0.0)

        return share(loses_self) if need[0] else None, share(loses_other) if need[1] else None

    return vjp


def _fextremum_vjp(self_wins):
    """fmax/fmin: no splitting on ties; a NaN operand loses to a number (PyTorch's ``grad.masked_fill(...)``)."""

    def vjp(ctx, g):
        from .pointwise import logical_not
        from .shape_extra import masked_fill

        x, y = ctx.saved_tensors
        need = ctx.needs_input_grad
        wins = logical_or(self_wins(x, y), isnan(y))
        return (masked_fill(g, logical_not(wins), 0.0) if need[0] else None,
                masked_fill(g, wins, 0.0) if need[1] else None)

    return vjp


def _selecting_jvp(self_weight):
    """PyTorch's tangent of maximum/minimum/fmax/fmin: ``other_t + w * (self_t - other_t)``, with w the weight
    of self in the result (1, 0, or 0.5 for a maximum/minimum tie). A missing tangent is PyTorch's zero tensor, whose
    sum and difference give the other term as it is: without ``other_t``, ``w * self_t`` (-0. where ``self_t`` < 0)."""

    def jvp(args, outs, tangents):
        x, y = args[0], args[1]
        t_self, t_other = tangents
        if t_other is None:
            return mul(self_weight(x, y), t_self)
        t_self = zeros_like(outs[0]) if t_self is None else t_self
        return add(t_other, mul(self_weight(x, y), _pw.sub(t_self, t_other)))

    return jvp


def _tie_halved(wins):
    return lambda x, y: _where(eq(x, y), 0.5, to_dtype(wins(x, y), x.dtype))


_saves2 = ("self", "other")
def _ordered(np_fn, name: str):
    """An extremum's kernel: complex numbers have no order (PyTorch's own message)."""
    return reject_complex(_promoted(np_fn), error=(RuntimeError, f"{name} not implemented for complex tensors."))


_maximum = defop("maximum(Tensor self, Tensor other) -> Tensor", _ordered(np.maximum, "maximum"),
                 vjp=_extremum_vjp(lt, gt), saves=_saves2, fast="binary", jvp=_selecting_jvp(_tie_halved(gt)))
_minimum = defop("minimum(Tensor self, Tensor other) -> Tensor", _ordered(np.minimum, "minimum"),
                 vjp=_extremum_vjp(gt, lt), saves=_saves2, fast="binary", jvp=_selecting_jvp(_tie_halved(lt)))
# (PyTorch's fmax formula tests self > other, so a tie takes other's tangent while the backward gives self the
# gradient; its fmin formula tests self <= other)
_fmax = defop("fmax(Tensor self, Tensor other) -> Tensor", _ordered(np.fmax, "fmax"), vjp=_fextremum_vjp(ge),
              saves=_saves2, fast="binary", jvp=_selecting_jvp(lambda x, y: logical_or(gt(x, y), isnan(y))))
_fmin = defop("fmin(Tensor self, Tensor other) -> Tensor", _ordered(np.fmin, "fmin"), vjp=_fextremum_vjp(le),
              saves=_saves2, fast="binary", jvp=_selecting_jvp(lambda x, y: logical_or(le(x, y), isnan(y))))


def _tensor_only(op, name: str):
    """Function and method of an op that PyTorch declares for two tensors only (no Python numbers)."""

    def fn(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
        _need_tensor(name, other, "other", 2)
        return call(op, out, input, other)

    def method(self: Tensor, other: Tensor) -> Tensor:
        _need_tensor(name, other, "other", 1)  # the method's argument positions exclude self
        return op(self, other)

    fn.__name__ = fn.__qualname__ = method.__name__ = method.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input, other, *, out=None)"
    return fn, method


maximum, _maximum_method = _tensor_only(_maximum, "maximum")
minimum, _minimum_method = _tensor_only(_minimum, "minimum")
fmax, _fmax_method = _tensor_only(_fmax, "fmax")
fmin, _fmin_method = _tensor_only(_fmin, "fmin")


# ---- atan2, hypot, copysign --------------------------------------------------------------------------------


def _atan2_kernel(a, b):
    dt = _float_dtype(a, b)
    if dt == np.float32 or dt == np.float16:  # (PyTorch's CPU kernel's bits: Sleef's and glibc's atan2f)
        from .nn_ops.transcendental_cpu import atan2_cpu  # (nn_ops imports this module)

        return atan2_cpu(_cast(a, dt), _cast(b, dt))
    with np.errstate(all="ignore"):
        return np.arctan2(_cast(a, dt), _cast(b, dt))


def _atan2_vjp(ctx, g):
    from .reductions_extra import zero_fill
    from .unary import reciprocal

    # PyTorch's atan2_backward: recip = 1 / (self² + other²), 0 where that sum is 0; grad * other * recip and
    # grad * -self * recip
    x, y = ctx.saved_tensors
    need = ctx.needs_input_grad
    squares = add(mul(x, x), mul(y, y))
    recip = zero_fill(eq(squares, 0), reciprocal(squares))
    return (mul(mul(g, y), recip) if need[0] else None, mul(mul(g, neg(x)), recip) if need[1] else None)


def _hypot_kernel(a, b):
    dt, x, y = _operands(a, b)
    if dt.kind not in "f":
        raise unsupported("hypot_cpu", dt)
    with np.errstate(all="ignore"):
        return np.hypot(x, y)


def _hypot_vjp(ctx, g):
    x, y, r = ctx.saved_tensors
    need = ctx.needs_input_grad
    # PyTorch: grad * self / result (the inputs last to first, as its generated backward)
    gy = _pw.div(mul(g, y), r) if need[1] else None
    return (_pw.div(mul(g, x), r) if need[0] else None, gy)


def _copysign_kernel(a, b):
    dt = _float_dtype(a, b)
    return np.copysign(_cast(a, dt), _cast(b, dt))


_copysign_cpu = reject_complex(_copysign_kernel, "copysign_cpu")


def _copysign_vjp(ctx, g):
    x, y = ctx.saved_tensors[:2]
    need = ctx.needs_input_grad
    gx = None
    if need[0]:
        from .reductions_extra import zero_fill

        ratio = zero_fill(eq(x, 0), _pw.div(y, x))  # result / self, masked_fill_ 0 at self == 0 (PyTorch)
        gx = mul(g, ratio)
    return gx if len(need) == 1 else (gx, zeros_like(g) if need[1] else None)


def _copysign_jvp(args, outs, tangents):
    """self's tangent times result / self (0 where self == 0); other's tangent is ignored, so with only other
    dual the result has no tangent, as in PyTorch."""
    from .reductions_extra import zero_fill

    if tangents[0] is None:
        return None
    return mul(tangents[0], zero_fill(eq(args[0], 0), _pw.div(outs[0], args[0])))


def _logaddexp_kernel(name: str, np_fn, complex_fn=None):
    """``complex_fn``: the op's complex kernel; without one, complex has none (logaddexp2's in PyTorch). float32
    and half take PyTorch's own kernel's bits (Sleef's and glibc's functions: nn_ops/transcendental_cpu)."""

    def kernel(a, b):
        dt, x, y = _operands(a, b)
        if dt.kind not in "fc" or (dt.kind == "c" and complex_fn is None):
            raise unsupported(f"{name}_cpu", dt)
        if dt == np.float32 or dt == np.float16:
            from .nn_ops import transcendental_cpu  # (nn_ops imports this module)

            return getattr(transcendental_cpu, f"{name}_cpu")(_cast(x, dt), _cast(y, dt))
        with np.errstate(all="ignore"):
            return (complex_fn if dt.kind == "c" else np_fn)(x, y)

    return kernel


def _logaddexp_vjp(ctx, g):
    # PyTorch: grad / (1 + exp(other - self)).conj() for self, grad / (1 + exp(self - other)).conj() for other
    x, y = ctx.saved_tensors
    need = ctx.needs_input_grad
    gy = _pw.div(g, conj(_pw.add(exp(_pw.sub(x, y)), 1))) if need[1] else None  # (inputs last to first)
    return (_pw.div(g, conj(_pw.add(exp(_pw.sub(y, x)), 1))) if need[0] else None, gy)


def _logaddexp2_vjp(ctx, g):
    # PyTorch: grad / (1 + pow(2, other - self)) for self, grad / (1 + pow(2, self - other)) for other
    x, y = ctx.saved_tensors
    need = ctx.needs_input_grad
    gy = _pw.div(g, _pw.add(pow(2, _pw.sub(x, y)), 1)) if need[1] else None  # (inputs last to first)
    return (_pw.div(g, _pw.add(pow(2, _pw.sub(y, x)), 1)) if need[0] else None, gy)


_logaddexp = defop("logaddexp(Tensor self, Tensor other) -> Tensor",
                   _logaddexp_kernel("logaddexp", np.logaddexp, log_add_exp_complex), vjp=_logaddexp_vjp,
                   saves=("self", "other"))
_logaddexp2 = defop("logaddexp2(Tensor self, Tensor other) -> Tensor",
                    _logaddexp_kernel("logaddexp2", np.logaddexp2), vjp=_logaddexp2_vjp, saves=("self", "other"))
logaddexp, _logaddexp_method = _tensor_only(_logaddexp, "logaddexp")
logaddexp2, _logaddexp2_method = _tensor_only(_logaddexp2, "logaddexp2")

def _atan2_jvp(args, outs, tangents):
    """PyTorch's forward formula, unmasked (0 / 0 at self = other = 0 is NaN there, unlike the backward's):
    (-self * other_t + other * self_t) / (self.pow(2) + other.pow(2))."""
    x, y = args[0], args[1]
    tx, ty = tangents
    if recording(args, tangents):  # (a missing tangent as PyTorch's zero tensor, its product in the graph)
        first = zero_times(or_zero(None, y, tangents), neg(x), zero_first=False) if ty is None else mul(neg(x), ty)
        second = zero_times(or_zero(None, x, tangents), y, zero_first=False) if tx is None else mul(y, tx)
        numerator = add(first, second)
    else:
        numerator = plus(None if ty is None else mul(neg(x), ty), None if tx is None else mul(y, tx))
    return _pw.div(numerator, add(_pow_ts(x, 2), _pow_ts(y, 2)))


def _hypot_jvp(args, outs, tangents):
    """PyTorch's forward formula: self_t * self / result + other_t * other / result (a missing tangent's term, where
    a graph records, PyTorch's zero tensor's: zeros with the product's and quotient's nodes)."""
    r = outs[0]
    if recording(args, tangents):
        return add(*(_pw.div(mul(t, v), r) if t is not None else zero_over(zero_times(or_zero(None, v, tangents), v), r)
                     for t, v in zip(tangents, args[:2])))
    return plus(*(None if t is None else _pw.div(mul(t, v), r) for t, v in zip(tangents, args[:2])))


_atan2, atan2_ = _pair("atan2(Tensor self, Tensor other) -> Tensor", reject_complex(_atan2_kernel, "atan2_cpu"),
                       vjp=_atan2_vjp, saves=_saves2, fast="binary", jvp=_atan2_jvp)
_hypot, hypot_ = _pair("hypot(Tensor self, Tensor other) -> Tensor", _hypot_kernel, vjp=_hypot_vjp,
                       saves=("self", "other", "result"), save_if={"self": "self", "other": "other"}, fast="binary",
                       jvp=_hypot_jvp)
atan2, _atan2_method = _tensor_only(_atan2, "atan2")
hypot, _hypot_method = _tensor_only(_hypot, "hypot")
_copysign_t, _copysign_t_ = _pair("copysign.Tensor(Tensor self, Tensor other) -> Tensor", _copysign_cpu,
                                  vjp=_copysign_vjp, saves=("self", "result"), save_if={"self": "self"},
                                  node_name="CopysignBackward0",
                                  fast="binary", jvp=_copysign_jvp)
_copysign_s, _copysign_s_ = _pair("copysign.Scalar(Tensor self, Scalar other) -> Tensor", _copysign_cpu,
                                  vjp=_copysign_vjp, saves=("self", "result"), node_name="CopysignBackward1",
                                  jvp=_copysign_jvp)


def copysign(input: Tensor, other, *, out: Tensor | None = None) -> Tensor:
    """``|input|`` with the sign of ``other`` (integers promote to the default float dtype)."""
    return call(_copysign_t if isinstance(other, Tensor) else _copysign_s, out, input, other)


def copysign_(self: Tensor, other) -> Tensor:
    return (_copysign_t_ if isinstance(other, Tensor) else _copysign_s_)(self, other)


# ---- lerp --------------------------------------------------------------------------------------------------



def _lerp_kernel(a, end, weight):
    if end.dtype != a.dtype:
        raise RuntimeError(f"expected dtype {cpp_type_name(a.dtype)} for `end` but got dtype "
                           f"{cpp_type_name(end.dtype)}")
    weight_is_tensor = isinstance(weight, np.ndarray)
    if weight_is_tensor and weight.ndim and weight.dtype != a.dtype:
        raise RuntimeError(f"expected dtype {cpp_type_name(a.dtype)} for `weight` but got dtype "
                           f"{cpp_type_name(weight.dtype)}")
    if a.dtype.kind not in "fc":
        raise unsupported("lerp_kernel_tensor" if weight_is_tensor else "lerp_kernel_scalar", a.dtype)
    check_scalar_parameter(weight, a.dtype, opmath=True)
    work = opmath_dtype(a.dtype)
    if work.kind != "c" and isinstance(weight, (complex, np.complexfloating)):
        weight = scalar_for(complex(weight), work)  # (2+0j is 2.0 for real tensors; 1j is refused)
    w = _cast(weight, work)
    start, end = _cast(a, work), _cast(end, work)
    with np.errstate(all="ignore"):
        diff = end - start
        # PyTorch's two-sided formula, exact at both ends (weight 0 gives self, weight 1 gives end):
        # fma(weight, diff, self) for |weight| < 0.5, else fma(weight - 1, diff, end)
        small = np.abs(w) < 0.5
        if work.kind == "f":
            if np.ndim(small) == 0:  # (a number weight picks one side for all: no where() copying the operands)
                factor, addend = (w, start) if small else (w - 1, end)
            else:
                factor, addend = select(small, w, w - 1), select(small, start, end)
            return fma(factor, diff, addend).astype(a.dtype, copy=False)
        return np.where(small, start + w * diff, end - diff * (1 - w)).astype(a.dtype, copy=False)


def _lerp_scalar_vjp(ctx, g):
    (w,) = ctx.attrs
    need = ctx.needs_input_grad
    # PyTorch: grad * (1 - weight.conj()) and grad * weight.conj() (conjugates of the derivatives)
    w = _pw._conj(w)
    return (mul(g, 1 - w) if need[0] else None, mul(g, w) if need[1] else None)


def _lerp_tensor_vjp(ctx, g):
    x, end, w = ctx.saved_tensors
    need = ctx.needs_input_grad
    return (mul(g, conj(scalar_minus(1, w))) if need[0] else None,
            mul(g, conj(w)) if need[1] else None,
            mul(g, conj(_pw.sub(end, x))) if need[2] else None)


def _lerped_tangents(args, tangents, weight) -> Tensor:
    """``at::lerp(self_t, end_t, weight)``, PyTorch's tangent of lerp for a fixed weight (a missing tangent read as
    zeros): the lerp kernel's rounding, not that of the two products of the derivatives."""
    start, end = (or_zero(t, a, tangents, negative=False) for t, a in zip(tangents[:2], args[:2]))
    return (_lerp_t if isinstance(weight, Tensor) else _lerp_s)(start, end, weight)


def _lerp_scalar_jvp(args, outs, tangents):
    return _lerped_tangents(args, tangents, args[2])


def _lerp_tensor_jvp(args, outs, tangents):
    # PyTorch: at::lerp(self_t, end_t, weight_p) + weight_t * (end_p - self_p)
    fixed = _lerped_tangents(args, tangents, args[2])
    return fixed if tangents[2] is None else add(fixed, mul(tangents[2], _pw.sub(args[1], args[0])))


_lerp_s, _lerp_s_ = _pair("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", _lerp_kernel,
                          vjp=_lerp_scalar_vjp, attrs=("weight",), node_name="LerpBackward0", jvp=_lerp_scalar_jvp)
_lerp_t, _lerp_t_ = _pair("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", _lerp_kernel,
                          vjp=_lerp_tensor_vjp, saves=("self", "end", "weight"),
                          save_if={"self": "weight", "end": "weight"}, node_name="LerpBackward1", jvp=_lerp_tensor_jvp)


def lerp(input: Tensor, end: Tensor, weight, *, out: Tensor | None = None) -> Tensor:
    """``input + weight * (end - input)``; ``weight`` is a number or a broadcasting tensor."""
    if not isinstance(end, Tensor) or not isinstance(weight, (Tensor, int, float, complex, np.number, np.bool_)):
        got = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in (input, end, weight))
        raise TypeError(f"lerp() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)\n"
                        " * (Tensor input, Tensor end, Number weight, *, Tensor out = None)\n")
    return call(_lerp_t if isinstance(weight, Tensor) else _lerp_s, out, input, end, weight)


def lerp_(self: Tensor, end: Tensor, weight) -> Tensor:
    return (_lerp_t_ if isinstance(weight, Tensor) else _lerp_s_)(self, end, weight)


# ---- addcmul / addcdiv -------------------------------------------------------------------------------------


def _value_as(value, dt: np.dtype):
    # PyTorch converts ``value`` to the computation dtype first: 2.5 becomes 2 for integer tensors
    check_scalar_parameter(value, dt, opmath=True)
    value = integral_scalar(value, dt)
    if value.__class__ is complex and dt.kind != "c":
        value = value.real  # (Scalar::to takes the real part, once it has refused a nonzero imaginary one)
    if dt.kind in "iu":
        return dt.type(int(value))
    if dt.kind == "b":
        return bool(value)
    return dt.type(value)


def _in_opmath(x, dt: np.dtype, work: np.dtype) -> np.ndarray:
    """An operand as the kernel computes with it: cast to the result dtype first, as TensorIterator casts every
    operand to the common dtype (a float 0-d operand of a half result is rounded to half), then to the opmath one."""
    if work is not dt and x.dtype != dt:
        x = x.astype(dt)
    return _cast(x, work)


def _addcmul_kernel(a, t1, t2, value=1):
    dt = result_dtype(a, t1, t2)
    if dt.kind == "b":  # (PyTorch's kernel is not dispatched over bool)
        raise unsupported("addcmul_cpu_out", dt)
    work = opmath_dtype(dt)
    v = _value_as(value, work)
    with np.errstate(all="ignore"):
        if work.kind == "f":  # (PyTorch's kernel: fma(value * tensor1, tensor2, self))
            return fma(v * _in_opmath(t1, dt, work), _in_opmath(t2, dt, work), _in_opmath(a, dt, work)).astype(
                dt, copy=False)
        return (_cast(a, work) + v * _cast(t1, work) * _cast(t2, work)).astype(dt, copy=False)


def _addcdiv_kernel(a, t1, t2, value=1):
    if np.asarray(t1).dtype.kind in "biu" and np.asarray(t2).dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
            "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
            "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
            "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior "
            "is just the "
            "latter implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    dt = result_dtype(a, t1, t2)
    work = opmath_dtype(dt)
    v = _value_as(value, work)
    with np.errstate(all="ignore"):
        return (_in_opmath(a, dt, work) + v * _in_opmath(t1, dt, work) / _in_opmath(t2, dt, work)).astype(
            dt, copy=False)


def _scalar_over(value, t: Tensor) -> Tensor:
    """PyTorch's C++ ``Scalar / Tensor``, ``empty_like(t).fill_(value).div_(t)``: of ``t``'s dtype (a complex value
    with no imaginary part is written as a real one, and an integer ``t`` refuses the float quotient)."""
    return _pw.div_(fill_(empty_like(t), value), t)


def _addcmul_vjp(ctx, g):
    t1, t2 = ctx.saved_tensors
    (value,) = ctx.attrs
    need = ctx.needs_input_grad
    # (PyTorch: grad * (tensor2 * value).conj() and its mirror, each through handle_r_to_c)
    return (real_for_real_input(ctx, 0, g) if need[0] else None,
            real_for_real_input(ctx, 1, mul(g, conj(mul(t2, value)))) if need[1] else None,
            real_for_real_input(ctx, 2, mul(g, conj(mul(t1, value)))) if need[2] else None)


def _addcdiv_vjp(ctx, g):
    t1, t2 = ctx.saved_tensors
    (value,) = ctx.attrs
    need = ctx.needs_input_grad
    # (PyTorch: grad * (value / tensor2).conj() and -grad * (value * tensor1 / (tensor2 * tensor2)).conj(), each
    # through handle_r_to_c)
    return (real_for_real_input(ctx, 0, g) if need[0] else None,
            real_for_real_input(ctx, 1, mul(g, conj(_scalar_over(value, t2)))) if need[1] else None,
            real_for_real_input(ctx, 2, mul(neg(g), conj(_pw.div(mul(t1, value), mul(t2, t2))))) if need[2] else None)


def _addcmul_jvp(args, outs, tangents):
    """PyTorch's forward formula, summed left to right: self_t + value t1_t t2 + value t2_t t1."""
    t1, t2, value = args[1], args[2], args[3]
    t_self, t_t1, t_t2 = tangents
    if recording(args, tangents):  # (a missing tangent as PyTorch's zero tensor, in the graph)
        return add(add(or_zero(t_self, args[0], tangents), _product_term(t_t1, t1, t2, value, tangents)),
                   _product_term(t_t2, t2, t1, value, tangents))
    term1 = None if t_t1 is None else scaled(mul(t_t1, t2), value)
    term2 = None if t_t2 is None else scaled(mul(t_t2, t1), value)
    return plus(plus(t_self, term1), term2)


def _product_term(t, own, other, value, tangents) -> Tensor:
    """``maybe_multiply(t * other, value)`` for the tangent ``t`` of ``own``, PyTorch's zero tensor where missing."""
    if t is not None:
        return scaled(mul(t, other), value)
    return scaled_zero(zero_times(or_zero(None, own, tangents), other), value)


def _addcdiv_jvp(args, outs, tangents):
    """PyTorch's forward formula, which divides by tensor2 twice where the backward divides by its square once
    (so a tiny tensor2 gives a finite tangent where the gradient is 0 / 0)."""
    t1, t2, value = args[1], args[2], args[3]
    t_self, t_t1, t_t2 = tangents
    if recording(args, tangents):  # (a missing tangent as PyTorch's zero tensor, its terms in the graph)
        term1 = scaled(_pw.div(t_t1, t2), value) if t_t1 is not None else \
            scaled_zero(zero_over(or_zero(None, t1, tangents), t2), value)
        quotient = _pw.div(t1, t2)
        # (y - +0. is y: the zero tensor's exact difference)
        term2 = scaled(_pw.div(mul(t_t2, quotient), t2), value) if t_t2 is not None else \
            scaled_zero(zero_over(zero_times(or_zero(None, t2, tangents, negative=False), quotient), t2), value)
        return _pw.sub(add(or_zero(t_self, args[0], tangents), term1), term2)
    term1 = None if t_t1 is None else scaled(_pw.div(t_t1, t2), value)
    term2 = None if t_t2 is None else scaled(_pw.div(mul(t_t2, _pw.div(t1, t2)), t2), value)
    return minus(plus(t_self, term1), term2)


_ADDC = "(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor"
addcmul, addcmul_ = _pair("addcmul" + _ADDC, _addcmul_kernel, vjp=_addcmul_vjp, saves=("tensor1", "tensor2"),
                          save_if={"tensor1": "tensor2", "tensor2": "tensor1"}, attrs=("value",), jvp=_addcmul_jvp)
addcdiv, addcdiv_ = _pair("addcdiv" + _ADDC, _addcdiv_kernel, vjp=_addcdiv_vjp, saves=("tensor1", "tensor2"),
                          save_if={"tensor1": "tensor2"}, attrs=("value",), jvp=_addcdiv_jvp)


def _addc_public(op, name: str):
    """``torch.addcmul``/``addcdiv`` (and the in-place method): ``tensor1`` and ``tensor2`` must be tensors."""

    def fn(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out: Tensor | None = None) -> Tensor:
        _need_tensor(name, tensor1, "tensor1", 2)
        _need_tensor(name, tensor2, "tensor2", 3)
        return op(input, tensor1, tensor2, value=value) if out is None else op(input, tensor1, tensor2, value=value,
                                                                                out=out)

    fn.__name__ = fn.__qualname__ = name
    return fn


_addcmul_public, _addcdiv_public = _addc_public(addcmul, "addcmul"), _addc_public(addcdiv, "addcdiv")
_addcmul_public_, _addcdiv_public_ = _addc_public(addcmul_, "addcmul_"), _addc_public(addcdiv_, "addcdiv_")


# ---- xlogy and special.xlog1py ----------------------------------------------------------------------------


class _XLogFamily:
    """``x * log(y)`` (xlogy) or ``x * log1p(y)`` (special.xlog1py), 0 where x == 0 unless y is NaN, with
    PyTorch's three overloads (tensor/tensor, number self, number other) and rules. ``pole`` is where the log
    is not finite (0 for log, -1 for log1p): the self gradient is log(y) times the gradient, also at x == 0,
    except there."""

    def __init__(self, name: str, np_log, pole: float, node_prefix: str, inplace: bool) -> None:
        self.np_log, self.pole = np_log, pole
        tail = {"Tensor": f"{name}.Tensor", "self": f"{name}.Scalar_Self", "other": f"{name}.Scalar_Other"} \
            if name == "xlogy" else {"Tensor": name, "self": f"{name}.self_scalar", "other": f"{name}.other_scalar"}
        pair = _pair if inplace else (lambda schema, kernel, **rules: (defop(schema, kernel, **rules), None))
        kernel = reject_complex(self.kernel, f"{name.removeprefix('special_')}_cpu")
        self.tensor, self.tensor_ = pair(
            f"{tail['Tensor']}(Tensor self, Tensor other) -> Tensor", kernel, vjp=self._vjp,
            saves=_saves2, node_name=f"{node_prefix}0", jvp=self._jvp, **({"fast": "binary"} if inplace else {}))
        self.scalar_self = defop(f"{tail['self']}(Scalar self, Tensor other) -> Tensor", kernel,
                                 vjp=self._scalar_self_vjp, saves=("other",), attrs=("self",),
                                 node_name=f"{node_prefix}1", jvp=self._jvp)
        self.scalar_other, self.scalar_other_ = pair(
            f"{tail['other']}(Tensor self, Scalar other) -> Tensor", kernel, vjp=self._scalar_other_vjp,
            saves=("self",), attrs=("other",), node_name=f"{node_prefix}2", jvp=self._jvp)
        self.scalar_self.without_autograd_kernel = _pw.through_wrapped_number(self.tensor)

    def __call__(self, input, other, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor):
            return call(self.scalar_self, out, input, other)
        return call(self.tensor if isinstance(other, Tensor) else self.scalar_other, out, input, other)

    def kernel(self, a, b):
        dt = _float_dtype(a, b)
        x, y = _cast(a, dt), _cast(b, dt)
        with np.errstate(all="ignore"):
            if self.np_log is np.log and dt.itemsize <= 4:  # (PyTorch's scalar loop: the C library's logf)
                from .nn_ops.glibc_float_math import log_float  # (nn_ops imports this module)

                out = x * log_float(y.astype(np.float32)).astype(dt)  # (half: the log rounded to half first)
            else:
                out = x * self.np_log(y)
        # 0 * log(y) is 0 for every y but NaN (PyTorch), also where the log is infinite
        return np.where((x == 0) & ~np.isnan(y), dt.type(0), out)

    def _self_grad(self, g, x, y):
        """PyTorch's ``xlogy(grad, other).masked_fill((self == 0) & (other <= pole), 0)`` (out of place: a
        contiguous result)."""
        from .shape_extra import masked_fill_scalar

        at_pole = le(y, self.pole) if isinstance(y, Tensor) else y <= self.pole
        return masked_fill_scalar(self(g, y), logical_and(eq(x, 0), at_pole), 0)

    def _other_grad(self, g, x, y):
        """grad * self / other for xlogy, grad * self / (other + 1) for xlog1py."""
        return _pw.div(mul(g, x), y if self.pole == 0 else add(y, 1))

    def _vjp(self, ctx, g):
        x, y = ctx.saved_tensors
        need = ctx.needs_input_grad
        if self.pole == 0:
            return (self._self_grad(g, x, y) if need[0] else None, self._other_grad(g, x, y) if need[1] else None)
        # (PyTorch's generated special_xlog1py backward computes other's gradient first)
        other = self._other_grad(g, x, y) if need[1] else None
        return (self._self_grad(g, x, y) if need[0] else None), other

    def _scalar_self_vjp(self, ctx, g):
        (y,) = ctx.saved_tensors
        (x,) = ctx.attrs
        return self._other_grad(g, x, y)

    def _scalar_other_vjp(self, ctx, g):
        (x,) = ctx.saved_tensors
        (y,) = ctx.attrs
        return self._self_grad(g, x, y)

    def _jvp(self, args, outs, tangents):
        """PyTorch's forward formula; explicit, because differentiating the rule would test the cotangent, not
        ``self``, for zero."""
        x, y = args[0], args[1]
        if not isinstance(x, Tensor):  # a number self: only other has a tangent
            return self._other_grad(tangents[0], x, y)
        t_self = self._self_grad(tangents[0], x, y) if tangents[0] is not None else None
        t_other = tangents[1] if len(tangents) > 1 else None
        return plus(t_self, None if t_other is None else self._other_grad(t_other, x, y))


_XLOGY = _XLogFamily("xlogy", np.log, 0.0, "XlogyBackward", inplace=True)
_XLOG1PY = _XLogFamily("special_xlog1py", np.log1p, -1.0, "SpecialXlog1PyBackward", inplace=False)


def xlogy(input, other, *, out: Tensor | None = None) -> Tensor:
    """``input * log(other)``, with ``0 * log(y) = 0`` unless ``y`` is NaN."""
    return _XLOGY(input, other, out)


def xlogy_(self: Tensor, other) -> Tensor:
    return (_XLOGY.tensor_ if isinstance(other, Tensor) else _XLOGY.scalar_other_)(self, other)


def xlog1py(input, other, *, out: Tensor | None = None) -> Tensor:
    """``torch.special.xlog1py``: ``input * log1p(other)``, with ``0 * log1p(y) = 0`` unless ``y`` is NaN."""
    return _XLOG1PY(input, other, out)


# ---- bitwise operators and shifts --------------------------------------------------------------------------


def _bitwise(np_fn, kernel_name: str):
    def kernel(a, b):
        dt, x, y = _operands(a, b)
        if dt.kind not in "biu":
            raise unsupported(kernel_name, dt)
        return np_fn(x, y)

    return kernel


def _shift_kernel(left: bool):
    kernel_name = "lshift_cpu" if left else "rshift_cpu"

    def kernel(a, b):
        dt, x, y = _operands(a, b)
        if dt.kind not in "iu":
            raise unsupported(kernel_name, dt)
        bits = dt.itemsize * 8
        # PyTorch defines shifts by a negative amount or by >= the bit width (undefined in C)
        outside = (y < 0) | (y >= bits)
        amount = np.where(outside, 0, y).astype(np.dtype(f"u{dt.itemsize}"))
        if left:
            unsigned = x.astype(np.dtype(f"u{dt.itemsize}"))  # shift bits, wrapping like PyTorch
            return np.where(outside, dt.type(0), np.left_shift(unsigned, amount).astype(dt))
        shifted = np.right_shift(x, amount.astype(dt))
        fill = np.right_shift(x, dt.type(bits - 1)) if dt.kind == "i" else dt.type(0)  # sign fill
        return np.where(outside, fill, shifted).astype(dt, copy=False)

    return kernel


_OTHER2 = "(Tensor self, Tensor other) -> Tensor"
bitwise_and, bitwise_and_ = _pair("bitwise_and.Tensor" + _OTHER2, _bitwise(np.bitwise_and, "bitwise_and_cpu"),
                                  fast="binary", cast_checked_first=True)
bitwise_or, bitwise_or_ = _pair("bitwise_or.Tensor" + _OTHER2, _bitwise(np.bitwise_or, "bitwise_or_cpu"),
                                fast="binary", cast_checked_first=True)
bitwise_xor, bitwise_xor_ = _pair("bitwise_xor.Tensor" + _OTHER2, _bitwise(np.bitwise_xor, "bitwise_xor_cpu"),
                                  fast="binary", cast_checked_first=True)
bitwise_left_shift, bitwise_left_shift_ = _pair("bitwise_left_shift.Tensor" + _OTHER2, _shift_kernel(True),
                                                cast_checked_first=True)
bitwise_right_shift, bitwise_right_shift_ = _pair("bitwise_right_shift.Tensor" + _OTHER2,
                                                  _shift_kernel(False), cast_checked_first=True)


# ---- closeness and equality --------------------------------------------------------------------------------


def _number(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _isclose_kernel(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if a.dtype != b.dtype:
        raise RuntimeError(f"{type_name(a.dtype)} did not match {type_name(b.dtype)}")
    if not rtol >= 0:  # (NaN refused too)
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {_number(rtol)}")
    if not atol >= 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {_number(atol)}")
    close = a == b
    if equal_nan and a.dtype.kind in "fc":
        close = close | (np.isnan(a) & np.isnan(b))
    if rtol == 0 and atol == 0:
        return close
    if a.dtype.kind == "b":
        a, b = a.astype(default_float()), b.astype(default_float())
    # as PyTorch: allowed = atol + |rtol * other| in the promoted float dtype, actual = |self - other|
    fdt = result_dtype(b, float(rtol))
    allowed = fdt.type(atol) + np.abs(fdt.type(rtol) * b.astype(fdt))
    with np.errstate(all="ignore"):
        actual = np.abs(a - b)
    cmp = np.promote_types(actual.dtype, allowed.dtype)
    return close | (np.isfinite(actual) & (actual.astype(cmp) <= allowed.astype(cmp)))


_isclose = defop("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
                 "bool equal_nan=False) -> Tensor", _isclose_kernel)


def _isclose_writes(input: Tensor, rtol: float, atol: float, equal_nan: bool) -> int:
    """The version of isclose's result: ATen's composite writes ``self == other`` in place with ``|=`` once for
    equal NaNs (of a float or complex input), once more unless both tolerances are 0."""
    return int(equal_nan and kind_of(input._data.dtype) in "fc") + int(rtol != 0 or atol != 0)


def _closeness(name: str, position: int):
    """``isclose``/``allclose``/``equal`` as a function (``other`` is argument 2) or method (argument 1)."""

    def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> Tensor:
        """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal infinities are close)."""
        _need_tensor("isclose", other, "other", position)
        close = _isclose(input, other, rtol, atol, equal_nan)
        close._vc = [_isclose_writes(input, rtol, atol, equal_nan)]
        return close

    def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        """``isclose(...).all()`` as a Python bool."""
        _need_tensor("allclose", other, "other", position)
        return bool(np.all(_isclose(input, other, rtol, atol, equal_nan)._data))

    def equal(input: Tensor, other: Tensor) -> bool:
        """True if both have the same shape and elements (dtypes may differ; NaN is never equal)."""
        _need_tensor("equal", other, "other", position)
        a, b = input._data, other._data
        return a.shape == b.shape and bool(np.array_equal(a, b))

    return {"isclose": isclose, "allclose": allclose, "equal": equal}[name]


isclose, allclose, equal = (_closeness(n, 2) for n in ("isclose", "allclose", "equal"))


# ---- pow and float_power -----------------------------------------------------------------------------------


def _integer_pow(base, exponent, dt: np.dtype):
    """Integer powers; PyTorch gives 1, +/-1 or 0 for negative exponents instead of NumPy's error."""
    x, e = _cast(base, dt), _cast(exponent, dt)
    if dt.kind == "b":
        return np.power(x.astype(np.int64), e.astype(np.int64)).astype(dt)
    negative = e < 0
    with np.errstate(all="ignore"):
        if not negative.any():
            return np.power(x, e)
        positive = np.power(x, np.where(negative, 0, e).astype(dt))
    odd = np.remainder(e, 2) != 0
    inverse = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0)).astype(dt)
    return np.where(negative, inverse, positive).astype(dt, copy=False)


def _pow_kernel(a, b):
    if isinstance(b, np.generic):  # (a NumPy number is the Python number it holds, as torch reads it)
        b = b.item()
    dt = binary_dtype(a, b)
    if dt.kind == "b" and isinstance(b, np.ndarray):
        raise unsupported("pow", dt)
    if dt.kind in "biu":
        if not isinstance(b, np.ndarray) and isinstance(a, np.ndarray):
            if b < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            b = integral_scalar(b, dt)  # (the kernel reads the exponent as the base's type: int8 ** 300 refused)
        return _integer_pow(a, b, dt)
    special = _pw.special_scalar_power(a, b, dt)
    if special is not None:
        return special
    with np.errstate(all="ignore"):
        if dt.itemsize < 8 and dt.kind == "f" and not (b.__class__ in (int, float) and b in _EXACT_EXPONENTS):
            if b.__class__ in (int, float) and dt != np.float32:  # (half: the number converts to half, or is refused)
                scalar_for(b, dt)
            if dt in _SLEEF_POW_DTYPES and (b.__class__ in (int, float) or isinstance(b, np.ndarray)):
                from .nn_ops import pow_cpu  # (nn_ops imports this module)

                if isinstance(b, np.ndarray):
                    return pow_cpu.pow_tensor_tensor(_cast(a, dt), _cast(b, dt))
                return pow_cpu.pow_tensor_scalar(_cast(a, dt), b)
            # NumPy's single-precision power is off by an ulp about one time in five; PyTorch's is (nearly)
            # correctly rounded, as a double-precision power rounded to the dtype is.
            return np.power(_cast(a, _FLOAT64), _cast(_cast(b, dt), _FLOAT64)).astype(dt)
        return np.power(_cast(a, dt), _cast(b, dt))


_SLEEF_POW_DTYPES = (np.dtype(np.float32), np.dtype(np.float16))  # (PyTorch's bits: pow_cpu)
# Exponents that NumPy (like PyTorch) computes exactly in any precision (x*x, sqrt, 1/x, ...).
_EXACT_EXPONENTS = (0, 0.5, 1, 2, -1)
_FLOAT64 = np.dtype(np.float64)


def _pow_scalar_vjp(ctx, g):
    (e,) = ctx.attrs
    if e == 0:
        return real_for_real_input(ctx, 0, zeros_like(g))  # (PyTorch's zeros_like(self))
    # PyTorch's pow_backward: handle_r_to_c(self, grad * (exponent * self.pow(exponent - 1)).conj())
    x = ctx.saved_tensors[0]
    return _handle_r_to_c(x, mul(g, conj(mul(_pow_ts(x, e - 1), e))))


def _pow_exponent_factor(x: Tensor, e: Tensor, y: Tensor) -> Tensor:
    """d(x ** e)/de = x ** e * log(x), taken as 0 where x == 0 and e is real and >= 0 (PyTorch's
    pow_backward_exponent before its ``.conj()``). The base is promoted to the operands' result type first, as
    PyTorch's ``self.to(promoted_dtype)``: a real base of a complex exponent has the complex log (log(-2) =
    log 2 + i pi, not NaN), and a complex64 base of a float64 exponent its log in double precision (also where an
    in-place power keeps complex64)."""
    if e._data.dtype.kind == "c":
        nonnegative = logical_and(eq(imag(e), 0), ge(real(e), 0))  # (complex numbers are not ordered)
    else:
        nonnegative = ge(e, 0)
    promoted = binary_dtype(x._data, e._data)
    if x._data.dtype != promoted:
        x = to_dtype(x, from_numpy_dtype(promoted))
    return _where(logical_and(eq(x, 0), nonnegative), 0.0, mul(y, log(x)))


def _pow_self_factor(x: Tensor, e: Tensor) -> Tensor:
    """d(x ** e)/dx = e * x ** (e - 1) (PyTorch's pow_backward_self before its mask and ``.conj()``)."""
    return mul(e, _pow_tt(x, _pw.sub(e, 1)))


def _pow_tensor_vjp(ctx, g):
    x, e, y = ctx.saved_tensors
    need = ctx.needs_input_grad
    gx = gexp = None
    # (the inputs last to first, as PyTorch's generated backward; each through handle_r_to_c)
    if need[1]:
        gexp = _handle_r_to_c(e, mul(g, conj(_pow_exponent_factor(x, e, y))))
    if need[0]:
        gx = _handle_r_to_c(x, _where(eq(e, 0), 0.0, mul(g, conj(_pow_self_factor(x, e)))))
    return gx, gexp


def _handle_r_to_c(like: Tensor, v: Tensor) -> Tensor:
    """PyTorch's handle_r_to_c: the real part of a complex term belonging to a real operand."""
    return real(v) if like._data.dtype.kind != "c" and v._data.dtype.kind == "c" else v


def _pow_tensor_jvp(args, outs, tangents):
    # PyTorch: (pow_backward_self(self_t.conj(), ...) + pow_backward_exponent(exponent_t.conj(), ...)).conj():
    # the derivatives themselves (no conjugation), but each term cut to its real part for a real operand
    # (handle_r_to_c), also in forward mode
    # A missing tangent takes part as PyTorch's zero tensor: the exponent's term of one is the zero tensor (which
    # adds nothing), the base's term of one is a where() over it, which materialises +0. zeros.
    x, e = args[0], args[1]
    tx, te = tangents
    record = recording(args, tangents)
    if tx is None and not record:
        return add(_handle_r_to_c(e, mul(te, _pow_exponent_factor(x, e, outs[0]))), 0.0)
    factor = _pow_self_factor(x, e)
    t = _where(eq(e, 0), 0.0, _handle_r_to_c(x, mul(tx, factor) if tx is not None else zero_times(
        or_zero(None, x, tangents, False), factor)))
    if te is not None:
        return add(t, _handle_r_to_c(e, mul(te, _pow_exponent_factor(x, e, outs[0]))))
    if record:
        return add(t, _handle_r_to_c(e, zero_times(or_zero(None, e, tangents), _pow_exponent_factor(x, e, outs[0]))))
    return t


def _log_of_base(base, exponent: Tensor):
    """PyTorch's ``Scalar::log()`` of a scalar base: complex when the base or the exponent is complex (then a
    negative base has a finite log), else real and NaN for a negative base."""
    if isinstance(base, complex) or exponent._data.dtype.kind == "c":
        return cmath.log(base) if base != 0 else complex(-math.inf, 0.0)
    return math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)


def _scalar_base_factor(base, e: Tensor, y: Tensor) -> Tensor:
    """d(base ** e)/de = base ** e * log(base), taken as 0 where base == 0 and e is real and >= 0."""
    if base == 0:
        nonnegative = logical_and(eq(imag(e), 0), ge(real(e), 0)) if e._data.dtype.kind == "c" else ge(e, 0)
        return _where(nonnegative, 0.0, mul(y, _log_of_base(base, e)))
    return mul(y, _log_of_base(base, e))


def _pow_scalar_base_vjp(ctx, g):
    (base,) = ctx.attrs
    e, y = ctx.saved_tensors
    # PyTorch: handle_r_to_c(exponent, grad * (result * base.log()).conj())
    return _handle_r_to_c(e, mul(g, conj(_scalar_base_factor(base, e, y))))


def _pow_scalar_jvp(args, outs, tangents):
    e = args[1]
    if e == 0:
        return zeros_like(outs[0])
    # PyTorch's pow_backward: grad * (exponent * self.pow(exponent - 1)), its product with a Scalar (MulBackward1)
    return _handle_r_to_c(args[0], mul(tangents[0], mul_scalar(_pow_ts(args[0], e - 1), e)))


def _pow_scalar_base_jvp(args, outs, tangents):
    return _handle_r_to_c(args[1], mul(tangents[0], _scalar_base_factor(args[0], args[1], outs[0])))


_pow_ts, _pow_ts_ = _pair("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", _pow_kernel,
                          vjp=_pow_scalar_vjp, saves=("self",), attrs=("exponent",), node_name="PowBackward0",
                          fast="binary", jvp=_pow_scalar_jvp)
_pow_tt, _pow_tt_ = _pair("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", _pow_kernel,
                          vjp=_pow_tensor_vjp, saves=("self", "exponent", "result"), node_name="PowBackward1",
                          fast="binary", jvp=_pow_tensor_jvp)
_pow_st = defop("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", _pow_kernel, vjp=_pow_scalar_base_vjp,
                saves=("exponent", "result"), attrs=("self",), node_name="PowBackward2",
                jvp=_pow_scalar_base_jvp)
_pow_scalar_ = _pow_ts_


def pow(input, exponent, *, out: Tensor | None = None) -> Tensor:
    """``input ** exponent``; either may be a Python number (not both)."""
    if not isinstance(input, Tensor):
        return call(_pow_st, out, input, exponent)
    return call(_pow_tt if isinstance(exponent, Tensor) else _pow_ts, out, input, exponent)


def pow_(self: Tensor, exponent) -> Tensor:
    return (_pow_tt_ if isinstance(exponent, Tensor) else _pow_ts_)(self, exponent)


def _is_complex(x) -> bool:
    return x._data.dtype.kind == "c" if isinstance(x, Tensor) else isinstance(x, complex)


def _float_power_dtype(input, exponent):
    from ..backend.dtypes import complex128, float64

    return complex128 if _is_complex(input) or _is_complex(exponent) else float64


def _as_double(x, dtype):
    if isinstance(x, Tensor):
        return x if x.dtype is dtype else to_dtype(x, dtype)
    return complex(x) if dtype.is_complex else float(x)


def float_power(input, exponent, *, out: Tensor | None = None) -> Tensor:
    """``pow`` computed in double precision (float64, or complex128 for complex operands)."""
    dtype = _float_power_dtype(input, exponent)
    return pow(_as_double(input, dtype), _as_double(exponent, dtype), out=out)


def float_power_(self: Tensor, exponent) -> Tensor:
    dtype = _float_power_dtype(self, exponent)
    if self.dtype is not dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype {type_name(self._data.dtype)} but the "
                           f"operation's result requires dtype {type_name(dtype.np)}")
    return pow_(self, _as_double(exponent, dtype))


# ---- incomplete gamma --------------------------------------------------------------------------------------


def _igamma_kernel(upper: bool):
    name = "igammac_cpu" if upper else "igamma_cpu"

    def kernel(a, x):
        dt = binary_dtype(a, x)
        if dt.kind != "f":
            raise unsupported(name, dt)
        work = np.float32 if dt.itemsize <= 4 else np.float64  # (half and bfloat16 through float, as ATen's)
        a, x = np.asarray(a, dt), np.asarray(x, dt)
        lanes = aten_float_lanes()  # (the build ATen dispatches to: its FMAs, see incomplete_gamma's docstring)
        with np.errstate(all="ignore"):
            if upper:
                wide = np.broadcast_arrays(a.astype(work), x.astype(work))
                return incomplete_gamma.igammac(*wide, fused=lanes > 0).astype(dt)

            def formula(a: np.ndarray, x: np.ndarray, vector: bool) -> np.ndarray:
                a, x = np.broadcast_arrays(a.astype(work), x.astype(work))
                return incomplete_gamma.igamma(a, x, fused=vector).astype(dt)

            if lanes and takes_basic_loop((a, x)):  # (the vector builds' outer scalar loop: fused)
                return formula(a, x, vector=True)
            if lanes < 16:  # (AVX2's vector loop and the DEFAULT build: unfused throughout)
                return formula(a, x, vector=False)
            # (AVX-512's vector code's multiply-adds are fused, its scalar tail's not)
            return vector_and_scalar(formula, (a, x), loop_block(dt, also_avx512=True))

    return kernel


def _lgamma_as_torch(a: np.ndarray) -> np.ndarray:
    """torch.lgamma's values (the density's log Gamma(a) is exactly 0 at a = 1 and 2, as in PyTorch's formula)."""
    from .gamma import _lgamma_kernel

    return _lgamma_kernel(a)


# log Gamma of the shape parameter, needed by the gradient w.r.t. ``other``; not differentiable here
_lgamma = defop("_igamma_lgamma(Tensor self) -> Tensor", _lgamma_as_torch, vjp=not_implemented("lgamma"))


def _igamma_vjp(sign: float, name: str):
    self_grad = not_implemented(f"{name}: input")

    def vjp(ctx, g):
        a, x = ctx.saved_tensors
        need = ctx.needs_input_grad
        if need[0]:
            self_grad(ctx, g)  # raises PyTorch's NotImplementedError
        # d/dx P(a, x) = x^(a - 1) e^-x / Gamma(a)
        density = exp(_pw.sub(_pw.sub(mul(_pw.sub(a, 1), log(x)), x), _lgamma(a)))
        return None, mul(g, density if sign > 0 else neg(density))

    return vjp


_igamma, _igamma_ = _pair("igamma(Tensor self, Tensor other) -> Tensor", _igamma_kernel(False),
                          vjp=_igamma_vjp(1.0, "igamma"), saves=_saves2)
_igammac, _igammac_ = _pair("igammac(Tensor self, Tensor other) -> Tensor", _igamma_kernel(True),
                            vjp=_igamma_vjp(-1.0, "igammac"), saves=_saves2)
# (PyTorch has no forward formula for either: a tangent of self or other is refused before the kernel)
_igamma.forward_ad_refusal = unformulated_refusal("igamma")
_igammac.forward_ad_refusal = unformulated_refusal("igammac")
igamma, _igamma_method = _tensor_only(_igamma, "igamma")
igammac, _igammac_method = _tensor_only(_igammac, "igammac")


# ---- comparisons: aliases and in-place forms ---------------------------------------------------------------


def _inplace_compare(name: str, np_fn):
    """``eq_`` and friends: the ``.Scalar`` overload (``{Name}Backward0``, no edge for the number) or the
    ``.Tensor`` one (``{Name}Backward1``), as PyTorch records them."""
    kernel = _inplace(_pw._compare(np_fn, None if name in ("eq", "ne") else name))
    camel = name.capitalize()
    with_tensor = defop(f"{name}_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", kernel,
                        vjp=_zero_grads, node_name=f"{camel}Backward1")
    with_scalar = defop(f"{name}_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", kernel,
                        vjp=_zero_grads, node_name=f"{camel}Backward0")

    def inplace(self: Tensor, other) -> Tensor:
        return (with_tensor if isinstance(other, Tensor) else with_scalar)(self, other)

    inplace.__name__ = f"{name}_"
    return inplace


eq_ = _inplace_compare("eq", np.equal)
ne_ = _inplace_compare("ne", np.not_equal)
lt_ = _inplace_compare("lt", np.less)
le_ = _inplace_compare("le", np.less_equal)
gt_ = _inplace_compare("gt", np.greater)
ge_ = _inplace_compare("ge", np.greater_equal)


def _inplace_logical(name: str, np_fn):
    return defop(f"{name}_(Tensor(a!) self, Tensor other) -> Tensor(a!)", _inplace(_pw._logical(np_fn)),
                 vjp=_zero_grads)


logical_and_ = _inplace_logical("logical_and", np.logical_and)
logical_or_ = _inplace_logical("logical_or", np.logical_or)
logical_xor_ = _inplace_logical("logical_xor", np.logical_xor)
logical_not_ = defop("logical_not_(Tensor(a!) self) -> Tensor(a!)", _inplace(lambda a: np.logical_not(a)),
                     vjp=_zero_grads)
# PyTorch's logical in-place ops are ``logical_<op>_out(self, self, ...)`` of a non-differentiable operator: no node,
# no leaf check, the target keeps its history (``w.logical_not_()`` writes into a leaf requiring grad)
for _logical_inplace in (logical_and_, logical_or_, logical_xor_, logical_not_):
    _logical_inplace.records_if = lambda args: False
    _logical_inplace.writes_outside_autograd = True


# ---- where -------------------------------------------------------------------------------------------------


_BOOL = np.dtype(bool)  # (NumPy's builtin dtypes are singletons: an identity test is the cheapest check)


def _non_bool_condition(kind: np.dtype) -> None:
    """torch's where takes a uint8 condition with a deprecation warning and refuses every other non-bool one."""
    if kind != np.uint8:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{type_name(kind)}")
    warn_once_at_caller("where uint8", "where received a uint8 condition tensor. This behavior is deprecated and "
                        "will be removed in a future version of PyTorch. Use a boolean condition instead.")


def _promoted_beside_number(value, beside):
    """torch's where.ScalarSelf/ScalarOther convert the tensor to the result's dtype first (``self.to(result_type)``):
    a real tensor beside a complex number gets a ToCopyBackward0 node, whose backward takes the real part. (A
    Python number: the parser reads NumPy's complex64 as a double.)"""
    if isinstance(value, Tensor) and isinstance(beside, (int, float, complex)):
        dt = binary_dtype(value._data, beside)
        if dt != value._data.dtype:
            return to_dtype(value, from_numpy_dtype(dt))
    return value


def where_method(self: Tensor, condition: Tensor, other) -> Tensor:
    """``Tensor.where(condition, other)``: ``where(condition, self, other)``."""
    if isinstance(condition, Tensor) and condition._data.dtype is not _BOOL:
        _non_bool_condition(condition._data.dtype)
    return _where(condition, _promoted_beside_number(self, other), other)


def where(condition: Tensor, input=None, other=None, *, out: Tensor | None = None):
    """``input`` where ``condition`` else ``other``; ``where(condition)`` is ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        from .shape_extra import nonzero

        return nonzero(condition, as_tuple=True)
    if isinstance(condition, Tensor) and condition._data.dtype is not _BOOL:
        _non_bool_condition(condition._data.dtype)
    if out is not None:  # only where.self_out takes out=: both values must be tensors (torch's parser says so)
        for position, (name, value) in enumerate((("input", input), ("other", other)), start=2):
            if not isinstance(value, Tensor):
                from .._arg_parser import tp_name

                raise TypeError(f"where(): argument '{name}' (position {position}) must be Tensor, not "
                                f"{tp_name(value)}")
    input, other = _promoted_beside_number(input, other), _promoted_beside_number(other, input)
    return call(_where, out, condition, input, other)


# ---- Python operators --------------------------------------------------------------------------------------


def _dunder(fn, reflected: bool = False):
    """A Python operator method: NotImplemented for foreign types and NumPy arrays (see
    _operands.is_operand), operands swapped when reflected."""
    if reflected:
        def method(self, other):
            if not _is_operand(other):
                return NotImplemented
            return fn(other, self)
    else:
        def method(self, other):
            if not _is_operand(other):
                return NotImplemented
            return fn(self, other)
    return method


# ---- exports -----------------------------------------------------------------------------------------------

# name -> (functional, in-place); the in-place form is also a torch-level function where PyTorch has one
_WITH_INPLACE = {
    "sub": (sub, sub_),
    "subtract": (_with_number_overload("subtract", sub), _with_number_overload("subtract_", sub_)),
    "div": (div, div_), "divide": (div, div_),
    "true_divide": (true_divide, true_divide_), "floor_divide": (floor_divide, floor_divide_),
    "remainder": (remainder, remainder_), "fmod": (fmod, fmod_), "copysign": (copysign, copysign_),
    "lerp": (lerp, lerp_), "addcmul": (_addcmul_public, _addcmul_public_),
    "addcdiv": (_addcdiv_public, _addcdiv_public_),
    "xlogy": (xlogy, xlogy_), "bitwise_and": (bitwise_and, bitwise_and_),
    "bitwise_or": (bitwise_or, bitwise_or_), "bitwise_xor": (bitwise_xor, bitwise_xor_),
    "bitwise_left_shift": (bitwise_left_shift, bitwise_left_shift_),
    "bitwise_right_shift": (bitwise_right_shift, bitwise_right_shift_),
    "float_power": (float_power, float_power_),
    "pow": (pow, pow_),
    "multiply": (_pw.mul, _pw.mul_), "eq": (_pw.eq, eq_), "ne": (_pw.ne, ne_), "lt": (_pw.lt, lt_),
    "le": (_pw.le, le_), "gt": (_pw.gt, gt_), "ge": (_pw.ge, ge_), "greater": (_pw.gt, gt_),
    "greater_equal": (_pw.ge, ge_), "less": (_pw.lt, lt_), "less_equal": (_pw.le, le_),
    "not_equal": (_pw.ne, ne_), "logical_not": (_pw.logical_not, logical_not_),
}
_TORCH_INPLACE = {"xlogy"}
# name -> (function, method): ops taking tensors only, whose TypeError names argument 2 resp. 1
_TENSOR_ONLY = {
    "maximum": (maximum, _maximum_method), "minimum": (minimum, _minimum_method),
    "fmax": (fmax, _fmax_method), "fmin": (fmin, _fmin_method), "atan2": (atan2, _atan2_method),
    "arctan2": (atan2, _atan2_method), "hypot": (hypot, _hypot_method), "logaddexp": (logaddexp, _logaddexp_method),
    "logaddexp2": (logaddexp2, _logaddexp2_method), "igamma": (igamma, _igamma_method),
    "igammac": (igammac, _igammac_method),
    "isclose": (isclose, _closeness("isclose", 1)), "allclose": (allclose, _closeness("allclose", 1)),
    "equal": (equal, _closeness("equal", 1)),
    **{name: _tensor_only(getattr(_pw, name), name) for name in ("logical_and", "logical_or", "logical_xor")},
}
_INPLACE_OF = {"atan2": atan2_, "arctan2": atan2_, "hypot": hypot_, "igamma": _igamma_, "igammac": _igammac_,
               "logical_and": logical_and_, "logical_or": logical_or_, "logical_xor": logical_xor_}

PUBLIC = {"where": where, "rsub": rsub}
METHODS = {}
for _name, (_fn, _method) in _TENSOR_ONLY.items():
    PUBLIC[_name] = _fn
    METHODS[_name] = _method
    if _name in _INPLACE_OF:
        METHODS[_name + "_"] = _INPLACE_OF[_name]
for _name, (_fn, _fn_) in _WITH_INPLACE.items():
    PUBLIC[_name] = _fn
    METHODS[_name] = _fn
    METHODS[_name + "_"] = _fn_
    if _name in _TORCH_INPLACE:
        PUBLIC[_name + "_"] = _fn_

METHODS.update({
    "__floordiv__": _dunder(floor_divide), "__rfloordiv__": _dunder(floor_divide, True),
    "__ifloordiv__": _dunder(floor_divide_), "__mod__": _dunder(remainder),
    "__rmod__": _dunder(remainder, True),
    "__imod__": _dunder(remainder_), "__and__": _dunder(bitwise_and), "__rand__": _dunder(bitwise_and, True),
    "__iand__": _dunder(bitwise_and_), "__or__": _dunder(bitwise_or), "__ror__": _dunder(bitwise_or, True),
    "__ior__": _dunder(bitwise_or_), "__xor__": _dunder(bitwise_xor), "__rxor__": _dunder(bitwise_xor, True),
    "__ixor__": _dunder(bitwise_xor_), "__lshift__": _dunder(bitwise_left_shift),
    "__rlshift__": _dunder(bitwise_left_shift, True), "__ilshift__": _dunder(bitwise_left_shift_),
    "__rshift__": _dunder(bitwise_right_shift), "__rrshift__": _dunder(bitwise_right_shift, True),
    "__irshift__": _dunder(bitwise_right_shift_),
    # ``2 ** t`` is pow.Scalar (PowBackward2); ``t ** x`` and ``t - x`` stay on the core fast paths
    "__rpow__": _dunder(pow, True), "__ipow__": _dunder(pow_),
})
