"""Pointwise operators: unary math and broadcasting binary arithmetic, with their in-place forms.

Every operator is declared once with :func:`defop`. Backward rules are written in dispatched tracegrad
operators, so they are differentiable again. Gradients may keep the broadcast shape: the engine reduces
them to each input's shape (``sum_to_size``) and casts them to its dtype, as PyTorch's engine does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._state import STATE
from .._tensor import Tensor, _wrap
from ..backend.dtypes import kind_of, scalar_type_name, through_float_for_half
from ._jvp import add_zero_term, or_zero, plus, recording, scaled, zero_times
from ._util import (
    as_array,
    binary_dtype,
    broadcast_mismatch,
    half_in_float,
    in_float_to_half,
    number_read_in_float,
    reject_complex,
    to_floating,
)
from .aten_loops import loop_block, vector_and_scalar
from .aten_vec import FP_SIGNALS, FUSED_DTYPES, fma, quietly
from .complex_ops import real_for_real_input
from .registry import defop
from .scalar_fill import check_scalar_parameter, integral_scalar, scalar_for

# ---- families ---------------------------------------------------------------------------------------------


def inplace_kernel(functional):
    """In-place kernel from a functional one: compute, check the cast PyTorch allows, write into self."""

    @writes_last
    def kernel(a, *rest):
        check_broadcast_into(a, rest)
        result = functional(a, *rest)
        write_into(a, result)
        return a

    return kernel


def check_broadcast_into(dst: np.ndarray, operands) -> None:
    """An in-place result must keep ``dst``'s shape: checked before computing, as PyTorch does (an integer
    division by zero elsewhere must not be what the user is told)."""
    shapes = [x.shape for x in operands if x.__class__ is np.ndarray and x.shape != dst.shape]
    if shapes:
        broadcast = np.broadcast_shapes(dst.shape, *shapes)
        if broadcast != dst.shape:
            raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                               f"{list(broadcast)}")


def check_fits_into(dst: np.ndarray, operand) -> None:
    """An in-place operation writing into ``dst`` with ``operand``, checked as PyTorch's TensorIterator: shapes that
    do not broadcast at all first ("The size of tensor a ..." at torch's dim, which NumPy's ValueError would not
    give), then a broadcast shape larger than ``dst``'s ("output with shape ...")."""
    if operand.__class__ is not np.ndarray:  # (a NumPy scalar: a product of 0-d operands fits any destination)
        return
    mismatch = broadcast_mismatch([dst.shape, operand.shape])
    if mismatch is not None:
        raise mismatch
    check_broadcast_into(dst, (operand,))


def writes_last(kernel: Callable) -> Callable:
    """Mark an in-place kernel that computes its whole result before writing it into self, last, with
    ``copy_into`` (``write_into``), or that writes a value not read from self (``fill_``), which it may write again.

    A floating-point warning that a strict filter (``simplefilter("error")``) makes an exception then comes
    before anything is written, so the registry runs such a kernel again with NumPy's warnings off, as it does a
    pure one, rather than quietly from the start (``OpDef.impure_kernel``), which costs a small in-place op some
    5 to 10%; the try costs nothing."""
    kernel.writes_last = True
    return kernel


_NP_FLOAT16 = np.dtype(np.float16)


def copy_into(dst: np.ndarray, src) -> None:
    """``np.copyto(dst, src, casting="unsafe")``, as a ``writes_last`` kernel writes. A strict filter's warning of
    a cast beyond ``dst``'s range comes once NumPy has written the whole copy, with the infs PyTorch writes
    silently: it is no exception here."""
    if dst.dtype is _NP_FLOAT16:
        src = through_float_for_half(src, dst.dtype)
    try:
        np.copyto(dst, src, casting="unsafe")
    except FP_SIGNALS as signal:
        if isinstance(signal, np.exceptions.ComplexWarning):  # (a strict filter's, before NumPy copies anything)
            from .._warnings import complex_to_real

            quietly(np.copyto, dst, np.real(src), casting="unsafe")
            complex_to_real()  # (PyTorch's UserWarning, which the strict filter raises after the copy, as torch's)


def write_into(dst: np.ndarray, src) -> None:
    src = np.asarray(src)
    if src.shape != dst.shape and np.broadcast_shapes(src.shape, dst.shape) != dst.shape:
        broadcast = list(np.broadcast_shapes(src.shape, dst.shape))
        raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape {broadcast}")
    check_cast_into(src.dtype, dst.dtype)
    copy_into(dst, src)


def check_cast_into(src_dtype: np.dtype, dst_dtype: np.dtype) -> None:
    if src_dtype != dst_dtype and not _can_cast_like_torch(src_dtype, dst_dtype):
        raise RuntimeError(f"result type {scalar_type_name(src_dtype)} can't be cast to the "
                           f"desired output type {scalar_type_name(dst_dtype)}")


def _can_cast_like_torch(src, dst) -> bool:
    # PyTorch allows any cast within or down a category for in-place results except across categories
    # upward (float result into an integer tensor, complex into real, anything but bool into bool).
    order = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
    return order[kind_of(src)] <= order[kind_of(dst)]  # (bfloat16 a float)



def unary_float(name: str, np_fn, vjp, saves=("self",), jvp=None, inplace: bool = True, ufunc=None):
    """A unary op that maps integers to the default float dtype (``sin``, ``exp``, ...)."""

    def kernel(a):
        return np_fn(to_floating(a))

    op = defop(f"{name}(Tensor self) -> Tensor", kernel, vjp=vjp, saves=saves, jvp=jvp, fast="unary",
               ufunc=ufunc if ufunc is not None else (np_fn if isinstance(np_fn, np.ufunc) else None))
    inplace_op = None
    if inplace:
        inplace_op = defop(f"{name}_(Tensor(a!) self) -> Tensor(a!)", inplace_kernel(kernel), vjp=vjp,
                           saves=tuple("result" if s == "result" else s for s in saves), jvp=jvp,
                           node_name=op.node_class._name)
    return op, inplace_op


MUL_SAVES = {"self": "other", "other": "self"}


def _check_alpha(alpha, dt: np.dtype) -> None:
    """torch refuses an alpha of a higher category than the result (0.5 for integers, 1j for reals) instead of
    rounding it away."""
    if alpha.__class__ is bool and dt.kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dt.kind in "biu" and isinstance(alpha, (float, complex, np.inexact)):  # (a complex one too, first)
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if dt.kind != "c" and isinstance(alpha, (complex, np.complexfloating)):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    check_scalar_parameter(alpha, dt)  # (in the tensors' own dtype, half included)


def _integer_alpha(alpha, dt: np.dtype):
    """An integer tensor's alpha in its own type, as PyTorch converts it (-2 is 254 for uint8, where NumPy's
    product with the Python int would refuse it); other alphas as they are."""
    if dt.kind not in "iu" or (alpha.__class__ is int and 0 <= alpha < 128):  # (fits any integer type)
        return alpha
    return scalar_for(alpha, dt)


_INT64_MIN = -(2**63)


def _negated_alpha(alpha):
    """``-alpha`` as ATen's ``Scalar::operator-`` gives it: torch's ``sub(a, b, alpha)`` is ``add(a, b, -alpha)``,
    so the add kernel checks the negated number against the dtype's range (int8 takes alpha=128, refuses -128),
    and an int64 wraps (-(-2**63) stays -2**63)."""
    if isinstance(alpha, (int, np.integer)) and alpha == _INT64_MIN:
        return alpha
    return -alpha


def _plus_alpha_times(a, b, alpha, dt: np.dtype) -> np.ndarray:
    """``a + alpha * b`` as PyTorch's add kernel computes it in the common dtype ``dt`` (alpha != 1)."""
    if dt in FUSED_DTYPES:
        return _fused_alpha(a, b, alpha, dt)
    if dt == np.float16:
        return _half_alpha(np.add, a, b, alpha, dt)
    # (in the common dtype, as TensorIterator casts b first: int8 * 3 does not wrap in int8)
    scaled = np.multiply(as_array(b, dt), _integer_alpha(alpha, dt))
    # (operands cast first: a 0-d int64 tensor added to a uint8 one computes in uint8, which NumPy's same-kind
    # casting of a ufunc's inputs refuses)
    return np.add(as_array(a, dt), as_array(scaled, dt))


def _fused_alpha(a, b, alpha, dt: np.dtype) -> np.ndarray:
    """``a + alpha * b`` for float and double as PyTorch's CPU kernels give it: one fused multiply-add, with
    alpha rounded to the tensors' dtype first. (With a scalar ``b``, a few elements of PyTorch's leftover loop
    after its last whole vector block are added unfused instead, depending on the compiler's vectorisation of
    that loop; elsewhere this is exact.)"""
    return fma(as_array(b, dt), dt.type(alpha), as_array(a, dt))


def _half_alpha(np_fn, a, b, alpha, dt: np.dtype) -> np.ndarray:
    """``a + alpha * b`` (or minus) for half, alpha rounded to half, as PyTorch's CPU kernel computes it: its
    vector code in float (where the product of two halves is exact) rounded once, its scalar code (the leftover
    elements of each run) with the product rounded to half first."""
    scale = np.float32(dt.type(alpha))

    def formula(x, y, vector: bool):
        product = y.astype(np.float32) * scale
        return np_fn(x.astype(np.float32), product if vector else product.astype(dt)).astype(dt)

    # (beyond half's range the casts round to inf, silently as in PyTorch)
    return quietly(vector_and_scalar, formula, (as_array(a, dt), as_array(b, dt)), loop_block(dt, also_avx512=False))


def binary(name: str, np_fn, vjp, saves=("self", "other"), alpha: bool = False, jvp=None,
           attrs: tuple = (), extra: str = "", save_if: dict | None = None, number_in_float: bool = False):
    """A broadcasting binary op with PyTorch type promotion, plus ``name_`` in place. ``number_in_float``: a
    half tensor's number operand is read in float (``number_read_in_float``)."""
    if alpha:
        def kernel(a, b, alpha):
            if np_fn is np.subtract:
                _check_bool_subtraction(a, b)
            dt = binary_dtype(a, b)
            _check_alpha(alpha, dt)
            if alpha != 1:
                return _plus_alpha_times(a, b, alpha if np_fn is np.add else _negated_alpha(alpha), dt)
            # (operands cast first: a 0-d int64 tensor added to a uint8 one computes in uint8, which NumPy's
            # same-kind casting of a ufunc's inputs refuses)
            return np_fn(as_array(a, dt), as_array(b, dt))

        signature = "(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
        attrs = ("alpha",)
    else:
        def kernel(a, b, *rest):
            dt = binary_dtype(a, b)
            if number_in_float and number_read_in_float(b, dt):
                return in_float_to_half(np_fn, a, b)
            return np_fn(as_array(a, dt), as_array(b, dt), *rest)

        signature = f"(Tensor self, Tensor other{extra}) -> Tensor"
    op = defop(name + signature, kernel, vjp=vjp, saves=saves, attrs=attrs, jvp=jvp, save_if=save_if,
               fast="binary" if not extra else None,
               ufunc=np_fn if isinstance(np_fn, np.ufunc) and np_fn is not np.subtract else None)
    inplace_sig = signature.replace("(Tensor self", "(Tensor(a!) self").replace("-> Tensor", "-> Tensor(a!)")

    @writes_last
    def inplace(a, b, *rest):
        check_broadcast_into(a, (b,))
        try:
            result = kernel(a, b, *rest)
        except RuntimeError:
            refuse_cast_first(a, b)
            raise
        write_into(a, result)
        return a

    def refuse_cast_first(a, b) -> None:
        """PyTorch's iterator refuses a result type that cannot be written into self before the kernel checks its
        arguments (alpha's included); only sub's bool check comes before it."""
        if np_fn is np.subtract:
            _check_bool_subtraction(a, b)
        check_cast_into(binary_dtype(a, b), a.dtype)

    inplace_op = defop(name + "_" + inplace_sig, inplace, vjp=vjp, saves=saves, attrs=attrs, jvp=jvp,
                       node_name=op.node_class._name, save_if=save_if)
    return op, inplace_op


# ---- arithmetic -----------------------------------------------------------------------------------------


# (a complex alpha enters the gradient conjugated: PyTorch's maybe_multiply(grad, alpha.conj()); a real input of
# a complex result takes the real part of its gradient, handle_r_to_c; gradients last to first, as _mul_vjp's)
def _add_vjp(ctx, g):
    (alpha,) = ctx.attrs
    need = ctx.needs_input_grad
    gb = real_for_real_input(ctx, 1, g if alpha == 1 else mul(g, _conj(alpha))) if need[1] else None
    return (real_for_real_input(ctx, 0, g) if need[0] else None, gb)


def _sub_vjp(ctx, g):
    (alpha,) = ctx.attrs
    need = ctx.needs_input_grad
    gb = real_for_real_input(ctx, 1, _negated_times_alpha(g, alpha)) if need[1] else None
    return (real_for_real_input(ctx, 0, g) if need[0] else None, gb)


def _negated_times_alpha(g: Tensor, alpha) -> Tensor:
    """The gradient of the operand sub/rsub subtract: PyTorch's maybe_multiply(-grad, alpha.conj()), the negation
    first (NegBackward0 under MulBackward1 in a double backward's graph), no product where alpha is 1."""
    return neg(g) if alpha == 1 else mul(neg(g), _conj(alpha))


def _conj(v):
    """Complex conjugate of a saved operand (tensor or Python number); real values are returned as is."""
    c = v.__class__
    if c is Tensor or isinstance(v, Tensor):
        if v._data.dtype.kind != "c":
            return v
        from .unary import conj

        return conj(v)
    return v.conjugate() if c is complex else v


def _wrapped_number(v):
    """A real number saved for a Tensor operand (``x * 3``) as the 0-dim tensor PyTorch saved ("wrapped
    number"), while a formula records (create_graph): its formula then records the Tensor overload
    (MulBackward0), as torch's does, not the Scalar one that a number in a C++ formula gives. In a plain
    backward the number itself gives the same values at less cost."""
    if STATE.grad_enabled and (v.__class__ is float or v.__class__ is int):
        return _wrap(np.asarray(v))
    return v


def _mul_vjp(ctx, g):
    # PyTorch's conjugate Wirtinger convention: grad * conj(other), its real part for a real input
    # (mul_tensor_backward's handle_r_to_c)
    a, b = ctx.saved_tensors
    need = ctx.needs_input_grad
    # (other's gradient first: PyTorch's generated backward computes its inputs' gradients last to first, which
    # decides the sequence numbers, and so the order, of the nodes a double backward records)
    gb = real_for_real_input(ctx, 1, g * _conj(_wrapped_number(a))) if need[1] else None
    return (real_for_real_input(ctx, 0, g * _conj(_wrapped_number(b))) if need[0] else None, gb)


def _div_vjp(ctx, g):
    a, b = ctx.saved_tensors
    need = ctx.needs_input_grad
    # PyTorch's -grad * ((self / other) / other).conj() and grad / other.conj(), each through handle_r_to_c
    gb = real_for_real_input(ctx, 1, -g * _conj(a / b / b)) if need[1] else None
    ga = real_for_real_input(ctx, 0, g / _conj(_wrapped_number(b))) if need[0] else None  # (last to first)
    return ga, gb


# Forward-mode rules ``jvp(args, outs, tangents)`` (see autograd/forward_ad.py): a missing tangent is None,
# a tangent may keep its input's (broadcastable) shape, and ``args[0]`` of an in-place op is self's old value.


def _add_jvp(args, outs, tangents):
    # PyTorch: self_t + maybe_multiply(other_t, alpha)
    ta, tb = tangents[0], scaled(tangents[1], args[2])
    if recording(args, tangents):
        ta, tb = _zero_filled(args, (ta, tb), (True, True))
    return plus(ta, tb)


def _sub_jvp(args, outs, tangents):
    # PyTorch: self_t - maybe_multiply(other_t, alpha)
    ta, tb = tangents[0], scaled(tangents[1], args[2])
    if recording(args, tangents):
        ta, tb = _zero_filled(args, (ta, tb), (True, False))
    if ta is None:
        return neg(tb)
    return ta if tb is None else sub(ta, tb)


def _zero_filled(args, tangents, negative) -> tuple:
    """The two tangents of a binary rule, a missing one as PyTorch's zero tensor (signed as ``negative`` says)."""
    return tuple(or_zero(t, a, tangents, neg_zero) for a, t, neg_zero in zip(args[:2], tangents, negative))


def _mul_jvp(args, outs, tangents):
    # PyTorch: other_t * self_p + self_t * other_p
    a, b = args[0], args[1]
    ta, tb = tangents
    if not recording(args, tangents):
        return plus(None if tb is None else mul(tb, a), None if ta is None else mul(ta, b))
    za, zb = _zero_filled(args, tangents, (True, True))
    a, b = _wrapped_number(a), _wrapped_number(b)  # (torch's formula reads a number operand as a Tensor)
    first = zero_times(zb, a) if tb is None else mul(tb, a)
    second = zero_times(za, b) if ta is None else mul(ta, b)
    return add(first, second) if ta is not None and tb is not None else add_zero_term(first, second, tb is None)


def _div_jvp(args, outs, tangents):
    # PyTorch: (self_t - other_t * result) / other, a missing tangent dropping its term (at other == 0 this
    # gives ±inf where two separate quotients would give inf - inf = NaN)
    ta, tb = tangents
    if recording(args, tangents):
        za, zb = _zero_filled(args, tangents, (True, False))
        moved = zero_times(zb, outs[0]) if tb is None else mul(tb, outs[0])
        return div(sub(za if ta is None else ta, moved), _wrapped_number(args[1]))
    if tb is None:
        return div(ta, args[1])
    moved = mul(tb, outs[0])
    return div(neg(moved) if ta is None else sub(ta, moved), args[1])


add, add_ = binary("add", np.add, _add_vjp, saves=(), alpha=True, jvp=_add_jvp)
sub, sub_ = binary("sub", np.subtract, _sub_vjp, saves=(), alpha=True, jvp=_sub_jvp)
mul, mul_ = binary("mul", np.multiply, _mul_vjp, save_if=MUL_SAVES, jvp=_mul_jvp, number_in_float=True)


def _true_divide(a, b):
    return np.true_divide(a, b)


def _div_kernel(a, b):
    dt = binary_dtype(a, b)
    if dt.kind in "biu":
        from ._util import default_float

        dt = default_float()
    with np.errstate(all="ignore"):  # (x / 0 is inf or nan without a word, as in torch)
        if number_read_in_float(b, dt):
            return in_float_to_half(np.true_divide, a, b)
        return np.true_divide(as_array(a, dt), as_array(b, dt))


DIV_SAVES = {"self": "other"}
div = defop("div.Tensor(Tensor self, Tensor other) -> Tensor", _div_kernel, vjp=_div_vjp,
            saves=("self", "other"), save_if=DIV_SAVES, fast="binary", ufunc=np.true_divide, jvp=_div_jvp)


@writes_last
def _div_inplace(a, b):
    write_into(a, _div_kernel(a, b))
    return a


div_ = defop("div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", _div_inplace, vjp=_div_vjp,
             saves=("self", "other"), node_name="DivBackward0", save_if=DIV_SAVES, jvp=_div_jvp)


def _neg_kernel(a):
    if a.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return np.negative(a)


def _neg_jvp(args, outs, tangents):
    return neg(tangents[0])


neg = defop("neg(Tensor self) -> Tensor", _neg_kernel, vjp=lambda ctx, g: neg(g), fast="unary",
            ufunc=np.negative, jvp=_neg_jvp)
neg_ = defop("neg_(Tensor(a!) self) -> Tensor(a!)", inplace_kernel(_neg_kernel), vjp=lambda ctx, g: neg(g),
             node_name="NegBackward0", jvp=_neg_jvp)


# ---- unary math (the core set; more live in unary.py) ----------------------------------------------------

# Complex inputs: a holomorphic function's gradient is grad * conj(f'(x)) (PyTorch's convention).

def _exp_vjp(ctx, g):
    (result,) = ctx.saved_tensors
    return g * (result if result._data.dtype.kind != "c" else _conj(result))


exp, exp_ = unary_float("exp", np.exp, _exp_vjp, saves=("result",),
                        jvp=lambda args, outs, ts: mul(ts[0], outs[0]))


def _log_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    return g / (x if x._data.dtype.kind != "c" else _conj(x))


# (NumPy's float32/float64 log, not ``unary.positive_nan_of_negatives(np.log)``: MKL's positive NaN for a negative input
# would double the cost of a small tensor's log, 0.7 to 1.4 us a call, for a NaN's sign bit)
log, log_ = unary_float("log", np.log, _log_vjp, jvp=lambda args, outs, ts: div(ts[0], args[0]))


def _sin_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    d = cos(x)
    return g * (d if d._data.dtype.kind != "c" else _conj(d))


def _cos_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    d = neg(sin(x))  # PyTorch: grad * -self.sin().conj()
    return mul(g, d if d._data.dtype.kind != "c" else _conj(d))


sin, sin_ = unary_float("sin", np.sin, _sin_vjp, jvp=lambda args, outs, ts: mul(ts[0], cos(args[0])))
cos, cos_ = unary_float("cos", np.cos, _cos_vjp, jvp=lambda args, outs, ts: mul(ts[0], neg(sin(args[0]))))


def _tanh_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    return tanh_backward(g, y)


def _tanh_backward_kernel(g, y):
    d = 1 - y * y
    return g * (d if d.dtype.kind != "c" else np.conj(d))


def _tanh_backward_vjp(ctx, gg):
    g, y = ctx.saved_tensors
    need = ctx.needs_input_grad
    if y._data.dtype.kind == "c":
        # PyTorch: tanh_backward(grad, output.conj()) and grad.conj() * (-2 * output.conj() * grad_output)
        yc = _conj(y)
        return (tanh_backward(gg, yc) if need[0] else None, _conj(gg) * (yc * -2.0 * g) if need[1] else None)
    return (tanh_backward(gg, y) if need[0] else None, gg * g * y * -2.0 if need[1] else None)


def _elementwise_jvp_of(backward):
    """PyTorch's ``auto_element_wise`` forward rule of an op whose gradient is ``backward(grad, result)``:
    ``backward(t.conj(), result).conj()``, which for complex values drops the backward's conjugation of the
    derivative (forward mode multiplies by f'(x) itself)."""

    def jvp(args, outs, tangents):
        t, y = tangents[0], outs[0]
        if y._data.dtype.kind != "c":
            return backward(t, y)
        return _conj(backward(_conj(t), y))

    return jvp


tanh_backward = defop("tanh_backward(Tensor grad_output, Tensor output) -> Tensor", _tanh_backward_kernel,
                      vjp=_tanh_backward_vjp, saves=("grad_output", "output"), fast="binary")


tanh, tanh_ = unary_float("tanh", np.tanh, _tanh_vjp, saves=("result",), jvp=_elementwise_jvp_of(tanh_backward))


def _sqrt_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    return g / ((y if y._data.dtype.kind != "c" else _conj(y)) * 2)


sqrt, sqrt_ = unary_float("sqrt", np.sqrt, _sqrt_vjp, saves=("result",),
                          jvp=lambda args, outs, ts: div(ts[0], mul(outs[0], 2)))


@half_in_float
def _sigmoid_kernel(a):
    a = to_floating(a)
    if a.dtype.kind == "c":
        return 1 / (1 + np.exp(-a))
    return sigmoid_array(a)


def one_plus_exp_neg(a: np.ndarray) -> np.ndarray:
    """1 + exp(-a), the denominator of PyTorch's sigmoid and silu, in one fresh array (a 0-d one too): exp
    overflows to inf far below zero, which makes sigmoid 0 there, as PyTorch's."""
    e = np.negative(a, out=np.empty(a.shape, a.dtype))
    with np.errstate(over="ignore"):
        np.exp(e, out=e)
    e += 1
    return e


def sigmoid_array(a: np.ndarray) -> np.ndarray:
    """PyTorch's 1 / (1 + exp(-a)) for a real float array (float32's with its CPU kernel's exp)."""
    if a.dtype == np.float32:
        from .nn_ops.sigmoid_cpu import sigmoid_float  # (nn_ops imports this module)

        return sigmoid_float(a)
    e = one_plus_exp_neg(a)
    return np.reciprocal(e, out=e)


def _sigmoid_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    return sigmoid_backward(g, y)


def _sigmoid_backward_kernel(g, y):
    if np.result_type(g, y).kind == "c":
        return g * np.conj(y * (1 - y))
    return g * (1 - y) * y  # (PyTorch's order, each step rounded, half included: grad * (1 - y), then times y)


def _sigmoid_backward_vjp(ctx, gg):
    g, y = ctx.saved_tensors
    need = ctx.needs_input_grad
    if y._data.dtype.kind == "c":
        # PyTorch: sigmoid_backward(grad, output.conj()) and grad.conj() * grad_output * (-2 * output.conj() + 1)
        yc = _conj(y)
        return (sigmoid_backward(gg, yc) if need[0] else None, _conj(gg) * g * (yc * -2 + 1) if need[1] else None)
    return (sigmoid_backward(gg, y) if need[0] else None, gg * g * (1 - y * 2) if need[1] else None)


sigmoid_backward = defop("sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor", _sigmoid_backward_kernel,
                         vjp=_sigmoid_backward_vjp, saves=("grad_output", "output"), fast="binary")


_sigmoid_jvp = _elementwise_jvp_of(sigmoid_backward)


sigmoid = defop("sigmoid(Tensor self) -> Tensor", _sigmoid_kernel, vjp=_sigmoid_vjp, saves=("result",),
                fast="unary", jvp=_sigmoid_jvp)
sigmoid_ = defop("sigmoid_(Tensor(a!) self) -> Tensor(a!)", inplace_kernel(_sigmoid_kernel), vjp=_sigmoid_vjp,
                 saves=("result",), node_name="SigmoidBackward0", jvp=_sigmoid_jvp)


def _check_bool_subtraction(a, b) -> None:
    # (an array's dtype, a memory-mapped one's too, or a Python bool: torch's parser reads a NumPy bool as a double)
    a_bool = a.__class__ is bool or (isinstance(a, np.ndarray) and a.dtype.kind == "b")
    b_bool = b.__class__ is bool or (isinstance(b, np.ndarray) and b.dtype.kind == "b")
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")


def _rsub_kernel(a, b, alpha):
    _check_bool_subtraction(a, b)
    dt = binary_dtype(a, b)
    _check_alpha(alpha, dt)
    if alpha != 1:  # (torch's rsub is sub(other, self, alpha))
        return _plus_alpha_times(b, a, _negated_alpha(alpha), dt)
    return np.subtract(as_array(b, dt), as_array(a, dt))


def _rsub_vjp(ctx, g):
    (alpha,) = ctx.attrs
    need = ctx.needs_input_grad
    gb = real_for_real_input(ctx, 1, g) if need[1] else None  # (last to first; handle_r_to_c, as _sub_vjp)
    return (real_for_real_input(ctx, 0, _negated_times_alpha(g, alpha)) if need[0] else None, gb)


def _rsub_jvp(args, outs, tangents):  # other - alpha * self
    ta, tb = tangents[0], tangents[1] if len(tangents) > 1 else None
    alpha = args[2]
    if ta is not None:
        ta = neg(ta) if alpha == 1 else mul(ta, -alpha)
    return plus(tb, ta)


rsub = defop("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", _rsub_kernel, vjp=_rsub_vjp,
             attrs=("alpha",), fast="binary", jvp=_rsub_jvp)


def _rsub_scalar_vjp(ctx, g):
    (alpha,) = ctx.attrs
    return real_for_real_input(ctx, 0, _negated_times_alpha(g, alpha))


rsub_scalar = defop("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", _rsub_kernel,
                    vjp=_rsub_scalar_vjp, attrs=("alpha",), fast="binary", node_name="RsubBackward1",
                    jvp=_rsub_jvp)


def _rsub_scalar_as_sub(args: tuple) -> Tensor:
    """rsub.Scalar on inference tensors alone, whose autograd kernel does not run: torch's CPU kernel then calls
    ``sub(wrapped_scalar_tensor(other), self, alpha)``, a normal tensor first, so sub's autograd kernel runs and
    records a SubBackward0 (the number as a 0-dim tensor of the result's dtype, what the wrapped number gives)."""
    self, other, alpha = args
    return sub(_wrap(np.asarray(other, dtype=binary_dtype(self._data, other))), self, alpha=alpha)


rsub_scalar.without_autograd_kernel = _rsub_scalar_as_sub


def through_wrapped_number(tensor_op: Callable) -> Callable[[tuple], Tensor]:
    """The ``without_autograd_kernel`` hook of a ``(Scalar self, Tensor other)`` overload whose CPU kernel calls
    ``tensor_op(wrapped_scalar_tensor(self), other)``: on inference tensors alone its own autograd kernel does not
    run, but ``tensor_op``'s does (the wrapped number is a normal tensor) and saves ``other``, which torch refuses
    (``2 % w``). The number goes in as a 0-dim tensor of the result's dtype, what the wrapped number gives."""

    def call_tensor_op(args: tuple) -> Tensor:
        number, other = args[0], args[1]
        return tensor_op(_wrap(np.asarray(number, dtype=binary_dtype(other._data, number))), other)

    return call_tensor_op


def _pow_kernel(a, b):
    dt = binary_dtype(a, b)
    if dt.kind in "iu" and isinstance(b, np.ndarray) and (b < 0).any():
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if dt.kind in "iu" and isinstance(b, int) and b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    special = special_scalar_power(a, b, dt)
    if special is not None:
        return special
    return np.power(as_array(a, dt), as_array(b, dt))


def special_scalar_power(a, exponent, dt: np.dtype):
    """``a ** exponent`` the way PyTorch computes a real floating tensor to the power of a number, or None.

    PyTorch replaces pow by sqrt, rsqrt, reciprocal and products for the exponents below. Those differ
    from a true power at -0 and -inf (``sqrt(-0.) == -0.``, ``(-inf) ** 0.5 == nan``), and x*x*x rounds
    twice, so the same replacements give the same bits."""
    if dt.kind != "f" or exponent.__class__ not in (int, float) or exponent not in _REPLACED_EXPONENTS:
        return None
    x = as_array(a, dt)
    if dt.itemsize == 2:  # half precision: a true power for square roots, else float32 rounded once
        if exponent in (0.5, -0.5):
            return None
        return special_scalar_power(x.astype(np.float32), exponent, np.dtype(np.float32)).astype(dt)
    with np.errstate(all="ignore"):
        if exponent == 0.5:
            return np.sqrt(x)
        if exponent == -0.5:
            return np.reciprocal(np.sqrt(x))
        if exponent == 2:
            return np.multiply(x, x)
        if exponent == 3:
            return np.multiply(np.multiply(x, x), x)
        if exponent == -1:
            return np.reciprocal(x)
        if exponent == -2:
            return np.reciprocal(np.multiply(x, x))
        if exponent == 0:
            return np.ones(x.shape, dt)
        return np.array(x, dt, copy=True)  # exponent 1


_REPLACED_EXPONENTS = (0, 1, 0.5, -0.5, 2, 3, -1, -2)


def pow(input, exponent):
    """``input ** exponent`` for the formulas here. The operators (pow.Tensor_Tensor, .Tensor_Scalar, .Scalar and
    their in-place forms) are declared once, in binary.py, which imports this module: so, imported late."""
    from .binary import pow as pow_op

    return pow_op(input, exponent)


# ---- comparisons and logic (never differentiable) -------------------------------------------------------------

def _compare(np_fn, ordering: str | None = None):
    """The kernel of a comparison; an ``ordering`` one (``lt``...) has no complex kernel in PyTorch."""

    def kernel(a, b):
        dt = binary_dtype(a, b)
        return np_fn(as_array(a, dt), as_array(b, dt))

    return kernel if ordering is None else reject_complex(kernel, f"{ordering}_cpu")


eq = defop("eq.Tensor(Tensor self, Tensor other) -> Tensor", _compare(np.equal))
ne = defop("ne.Tensor(Tensor self, Tensor other) -> Tensor", _compare(np.not_equal))
lt = defop("lt.Tensor(Tensor self, Tensor other) -> Tensor", _compare(np.less, "lt"))
le = defop("le.Tensor(Tensor self, Tensor other) -> Tensor", _compare(np.less_equal, "le"))
gt = defop("gt.Tensor(Tensor self, Tensor other) -> Tensor", _compare(np.greater, "gt"))
ge = defop("ge.Tensor(Tensor self, Tensor other) -> Tensor", _compare(np.greater_equal, "ge"))


def _logical(np_fn):
    def kernel(a, b):
        return np_fn(np.asarray(a).astype(bool), np.asarray(b).astype(bool))

    return kernel


logical_and = defop("logical_and(Tensor self, Tensor other) -> Tensor", _logical(np.logical_and))
logical_or = defop("logical_or(Tensor self, Tensor other) -> Tensor", _logical(np.logical_or))
logical_xor = defop("logical_xor(Tensor self, Tensor other) -> Tensor", _logical(np.logical_xor))
logical_not = defop("logical_not(Tensor self) -> Tensor", lambda a: np.logical_not(a))


# ---- selection ----------------------------------------------------------------------------------------------

def _where_kernel(cond, a, b):
    dt = binary_dtype(a, b)
    if dt != np.float16:  # (a number converts to the result's dtype; half converts unchecked)
        for value in (a, b):
            check_scalar_parameter(value, dt)
        a, b = integral_scalar(a, dt), integral_scalar(b, dt)
    return np.where(np.asarray(cond, dtype=bool), as_array(a, dt), as_array(b, dt))


def _where_vjp(ctx, g):
    (cond,) = ctx.saved_tensors
    need = ctx.needs_input_grad
    # PyTorch's ``where(condition, grad, 0)``: the 0 is a 0-d operand, so the condition's layout decides the
    # gradient's where it differs from grad's
    zero = _wrap(np.zeros((), g._data.dtype))
    return (where(cond, g, zero) if need[0] else None,
            where(cond, zero, g) if need[1] else None)


# The bool condition gets no edge: PyTorch's WhereBackward0 has next_functions for self and other only.
where = defop("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", _where_kernel,
              vjp=_where_vjp, saves=("condition",), differentiable=("self", "other"))

