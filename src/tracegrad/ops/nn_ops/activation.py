"""Activation functions and softmax, with PyTorch's node names and saved values.

The hot one, ``relu``, saves its result and its backward is one ``threshold_backward`` kernel. The others
write their backward in dispatched pointwise operators (or a ``*_backward`` op whose own rule is composed
of dispatched operators), so every activation is differentiable to any order.
"""

from __future__ import annotations

import math

import numpy as np

from ..._events import emit as _emit_event
from ..._state import STATE, next_sequence_nr
from ..._strides import pointwise_result
from ..._tensor import Tensor, _new, _wrap
from ...autograd.edges import gradient_edge
from ...autograd.node_meta import ONLY, meta_forms
from ...autograd.saved import save_fresh_output
from ...backend import dtypes as _dtypes
from ...backend.dtypes import scalar_type_name
from ...memory_format import contiguous_format
from .. import bfloat16_in_float
from .._jvp import or_zero, plus, recording, zero_product, zero_times
from .._util import half_in_float, number_arg, reject_complex, unsupported, wrap_dim
from ..aten_loops import loop_block, vector_and_scalar
from ..aten_vec import fma
from ..bfloat16_in_float import as_seen
from ..clip_values import clip_values, relu_values
from ..creation import to_dtype, zeros_like
from ..pointwise import (
    add,
    div,
    exp,
    ge,
    gt,
    inplace_kernel,
    logical_and,
    lt,
    mul,
    neg,
    one_plus_exp_neg,
    sigmoid,
    sigmoid_array,
    sub,
    tanh,
    where,
)
from ..reductions import sum as sum_op
from ..registry import defop
from ..scalar_fill import check_scalar_parameter, integral_scalar, scalar_for
from ..scalar_overloads import scalar_minus
from ..select import UNSIGNED_OF_SIZE, select
from ..unary import CLAMP_COMPLEX, log1p
from ._basic import erf_array
from ._common import check_float, run_op, type_name
from .elu_cpu import elu_backward_float, elu_float
from .gelu_torch_cpu import torch_gelu, torch_gelu_backward, uses_onednn
from .log1p_cpu import mish_backward_float, mish_float, softplus_backward_float, softplus_float
from .pool import constant_in_self
from .sigmoid_cpu import glu_float, sigmoid_float, silu_backward_float, silu_float
from .softmax_cpu import (
    exact_dtype,
    exact_half,
    reduced_log_softmax,
    reduced_log_softmax_backward,
    reduced_softmax,
    reduced_softmax_backward,
    softmax_backward,
    softmax_forward,
)


def _with_inplace(schema: str, kernel, inplace_rules: dict | None = None, **rules) -> tuple:
    """``name(Tensor self, ...)`` and its in-place ``name_(Tensor(a!) self, ...)`` over the same kernel.

    The in-place op shares the functional op's rules and node name; ``inplace_rules`` overrides them (a rule
    reading the result instead of the input, PyTorch's ``*Backward1`` node names).
    """
    name, _, rest = schema.partition("(")
    op = defop(schema, kernel, **rules)
    inplace_rest = rest.replace("Tensor self", "Tensor(a!) self", 1).replace("-> Tensor", "-> Tensor(a!)")
    rules = {**rules, "node_name": op.node_class._name, **(inplace_rules or {})}
    return op, defop(f"{name}_({inplace_rest}", inplace_kernel(kernel), **rules)


def _split_at_nan(formula, g: np.ndarray, x: np.ndarray, block: int) -> np.ndarray:
    """``vector_and_scalar(formula, (g, x), block)`` for a backward kernel whose vector and scalar versions differ
    only where ``x`` is NaN: without a NaN, C-ordered operands of one shape take one pass of the scalar version
    (the split's set-up costs more than the kernel on small tensors)."""
    # (a gradient expanded from a scalar, as sum() and mean() give, lays nothing out: the result follows x)
    if x.dtype.kind != "f" or (g.__class__ is np.ndarray and g.shape == x.shape and x.flags.c_contiguous
                               and (g.flags.c_contiguous or not any(g.strides)) and not np.isnan(x).any()):
        return formula(g, x, vector=False)
    return vector_and_scalar(formula, (g, x), block)


# ---- threshold / relu --------------------------------------------------------------------------------------


def _threshold_backward_kernel(g, x, threshold):
    drop = x <= threshold  # PyTorch zeroes where x <= threshold, so a NaN input passes its gradient
    if g.__class__ is np.ndarray and g.ndim and g.shape == drop.shape and g.dtype.kind == "f":
        return _zeroed_where(drop, g)
    return select(drop, np.zeros((), dtype=np.result_type(g)), g)


def _zeroed_where(drop: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``np.where(drop, 0, g)`` for float ``g`` of ``drop``'s shape, in C order: ``g``'s bits and-ed with a mask of
    ones where kept, so +0.0 where dropped (``g * ~drop`` would give -0.0 under a negative gradient) and inf or
    NaN kept as they are. Three passes, where ``np.where`` runs a branch per element (20x slower on random masks)."""
    bits = UNSIGNED_OF_SIZE[g.dtype.itemsize]
    mask = drop.view(np.uint8).astype(bits, order="C")
    mask -= bits.type(1)  # (dropped: 1 -> 0; kept: 0 -> all ones)
    return np.bitwise_and(g.view(bits), mask, out=mask).view(g.dtype)


def _zero_for_self(ctx, gg):
    """The gradient of a piecewise-linear activation's backward op with respect to its ``self``: PyTorch's formula
    is ``zeros_like(grad)`` (threshold, hardtanh, leaky_relu, hard- and softshrink), a zero, not a missing one."""
    return zeros_like(gg) if ctx.needs_input_grad[1] else None


def _threshold_backward_vjp(ctx, gg):
    (x,) = ctx.saved_tensors
    (th,) = ctx.attrs
    return (threshold_backward(gg, x, th) if ctx.needs_input_grad[0] else None), _zero_for_self(ctx, gg)


threshold_backward = defop(
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
    _threshold_backward_kernel,
    vjp=_threshold_backward_vjp,
    saves=("self",),
    attrs=("threshold",),
)


def _relu_kernel(a):
    if a.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return clip_values(a, np.zeros((), dtype=a.dtype), None)


def _relu_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    return run_op(threshold_backward, g, y, 0)


def _relu_jvp(args, outs, tangents):
    return threshold_backward(tangents[0], outs[0], 0)


relu, relu_ = _with_inplace(  # (relu is clamp_min in PyTorch: clamp's refusal of complex input)
    "relu(Tensor self) -> Tensor", reject_complex(_relu_kernel, error=CLAMP_COMPLEX), vjp=_relu_vjp,
    saves=("result",), jvp=_relu_jvp
)


def relu_fast(input: Tensor) -> Tensor:
    """``relu`` with its ReluBackward0 node built inline (the registered op's eager path, minus dispatch)."""
    a = input._data
    if STATE.special or a.dtype.kind != "f":
        return relu(input)
    out = _new(Tensor)
    out._data = pointwise_result(relu_values(a), a)
    out._rg = False
    out._gfn = None
    out._vc = None
    if ((input._rg or (input._base is not None and input._base._rg)) and STATE.grad_enabled
            # (no autograd kernel for an inference tensor)
            and not (STATE.inference_seen and input._gfn is None and input._inference)):
        node = _new(relu.node_class)
        node._seq = next_sequence_nr()
        node._edges = (gradient_edge(input),)
        meta = meta_forms(a.shape, a.dtype)[ONLY]  # (shared records: autograd/node_meta.py)
        node._in_meta = meta
        node._attrs = ()
        out._gfn = node
        out._rg = True
        node._saved = (save_fresh_output(out),)
        node._out_meta = meta
        if STATE.observed:
            _emit_event("node_created", node=node, op="relu")
    return out


def _scalar(value, dtype) -> np.ndarray:
    """A Scalar argument as a 0-d array of ``dtype``; None fails (NumPy would read it as NaN, and torch's parser
    refuses it), for the operator's guard to answer in torch's words."""
    if value is None:
        raise TypeError("a Scalar argument must be a number, not None")
    check_scalar_parameter(value, dtype, opmath=True)
    return np.asarray(value, dtype=dtype)


def _replacement(value, dtype: np.dtype) -> np.ndarray:
    """threshold's ``value`` as its kernel converts it, to the input's own type (checked: half refuses 70000,
    as an integer type refuses what it cannot hold)."""
    if value is None:
        return _scalar(value, dtype)  # (refused there)
    return np.asarray(scalar_for(value, as_seen(dtype)), dtype=dtype)  # (bfloat16 for its float32 copy)


def _threshold_kernel(a, threshold, value):
    threshold, value = number_arg(threshold), number_arg(value)
    if a.dtype.kind in "bc":  # (its CPU kernel takes every real type but bool)
        raise unsupported("threshold_cpu", a.dtype)
    check_scalar_parameter(threshold, a.dtype, opmath=True)
    # (the kernel reads both numbers as the input's type, checked: a uint8 input's threshold -1 is 255)
    threshold = integral_scalar(threshold, a.dtype)
    return select(a <= threshold, _replacement(value, a.dtype), a)  # NaN is kept, as in PyTorch


def _threshold_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    th, _ = ctx.attrs
    return threshold_backward(g, x, th)


threshold, threshold_ = _with_inplace(
    "threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
    _threshold_kernel,
    {"node_name": "ThresholdBackward1"},
    vjp=_threshold_vjp,
    saves=("self",),
    attrs=("threshold", "value"),
)


# ---- hardtanh / relu6 --------------------------------------------------------------------------------------


def _hardtanh_kernel(a, min_val=-1, max_val=1):
    if a.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if a.dtype.kind in "iu":  # (torch reads an integer tensor's limits as int64s first)
        min_val, max_val = int(scalar_for(min_val, np.int64)), int(scalar_for(max_val, np.int64))
        if a.dtype.kind == "u" and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        min_val, max_val = scalar_for(min_val, a.dtype), scalar_for(max_val, a.dtype)  # (then clamp's conversion)
    for bound in (min_val, max_val):  # (converted to the tensor's own dtype, half included; an int too: 70000
        check_scalar_parameter(bound, a.dtype)  # overflows half)
    return clip_values(a, np.asarray(min_val, dtype=a.dtype), np.asarray(max_val, dtype=a.dtype))


def _hardtanh_backward_kernel(g, x, min_val, max_val):
    zero = np.zeros((), dtype=np.result_type(g))

    def formula(grad: np.ndarray, v: np.ndarray, vector: bool) -> np.ndarray:
        if vector:  # ((x > min_val) & (x < max_val)) & grad: 0 at NaN
            return select((v > min_val) & (v < max_val), grad, zero)
        # the scalar loop zeroes where x <= min_val or x >= max_val: NaN passes its gradient
        return select((v <= min_val) | (v >= max_val), zero, grad)

    # (hardtanh_backward is registered for AVX2 only, as shrink_backward)
    return _split_at_nan(formula, g, x, loop_block(x.dtype, also_avx512=False))


def _hardtanh_backward_vjp(ctx, gg):
    (x,) = ctx.saved_tensors
    lo, hi = ctx.attrs
    return hardtanh_backward(gg, x, lo, hi), _zero_for_self(ctx, gg)


hardtanh_backward = defop(
    "hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor",
    _hardtanh_backward_kernel,
    vjp=_hardtanh_backward_vjp,
    saves=("self",),
    attrs=("min_val", "max_val"),
)


def _hardtanh_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    lo, hi = ctx.attrs
    return hardtanh_backward(g, x, lo, hi)


hardtanh, hardtanh_ = _with_inplace(
    "hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    reject_complex(_hardtanh_kernel, error=CLAMP_COMPLEX),  # (a clamp in PyTorch)
    vjp=_hardtanh_vjp,
    saves=("self",),
    attrs=("min_val", "max_val"),
)


# ---- leaky_relu --------------------------------------------------------------------------------------------


@half_in_float
def _leaky_kernel(a, negative_slope=0.01):
    check_float(a, "leaky_relu_cpu")
    scaled = np.asarray(a * _scalar(negative_slope, a.dtype))  # (an array for 0-d input too: out= below)
    # (inf * 0 is NaN where PyTorch keeps inf; a NaN slope would make the min/max below NaN where PyTorch keeps a
    # positive element)
    if negative_slope == 0 or negative_slope != negative_slope:
        return select(a > 0, a, scaled)
    # One of a and a * slope, whichever the branch picks: the larger for a slope up to 1, else the smaller (exact;
    # a zero of either sign gets PyTorch's, a NaN stays NaN)
    return np.maximum(a, scaled, out=scaled) if negative_slope <= 1 else np.minimum(a, scaled, out=scaled)


def _leaky_backward_kernel(g, x, negative_slope, self_is_result=False):
    return select(x > 0, g, g * np.asarray(negative_slope, dtype=np.result_type(g)))


def _leaky_backward_vjp(ctx, gg):
    (x,) = ctx.saved_tensors
    slope, is_result = ctx.attrs
    return leaky_relu_backward(gg, x, slope, is_result), _zero_for_self(ctx, gg)


leaky_relu_backward = defop(
    "leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) "
    "-> Tensor",
    _leaky_backward_kernel,
    vjp=_leaky_backward_vjp,
    saves=("self",),
    attrs=("negative_slope", "self_is_result"),
)


def _leaky_vjp_for(is_result: bool):
    def vjp(ctx, g):
        (x,) = ctx.saved_tensors
        (slope,) = ctx.attrs
        if is_result and slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope which is "
                "not supported. This is caused by calling in-place forward function with a negative "
                "slope, please call out-of-place version instead. File an issue at "
                "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
                "backward calculation with negative slope"
            )
        return leaky_relu_backward(g, x, slope, is_result)

    return vjp


leaky_relu, leaky_relu_ = _with_inplace(
    "leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    _leaky_kernel,
    {"vjp": _leaky_vjp_for(True), "saves": ("result",), "node_name": "LeakyReluBackward1"},
    vjp=_leaky_vjp_for(False),
    saves=("self",),
    attrs=("negative_slope",),
)


# ---- rrelu (randomized leaky relu) -------------------------------------------------------------------------
# PyTorch's rrelu_with_noise: ``noise`` (an input, as its schema has it) receives each element's slope. In
# training a negative element gets a slope drawn from U(lower, upper), a positive one 1; in evaluation the
# op is leaky_relu with the mean slope and ``noise`` is left as it is.


def _check_rrelu_bounds(lower, upper) -> None:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _rrelu_kernel(a, noise, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    from ..._factories import _rng

    _check_rrelu_bounds(lower, upper)
    if not training:
        return _leaky_kernel(a, (lower + upper) / 2)
    if a.dtype.kind not in "f" or a.dtype == np.float16:
        raise unsupported("rrelu_with_noise_out_cpu", a.dtype)
    # torch draws a double uniform slope only for each non-positive element, in order, its bounds first
    # rounded to the dtype (Activation.cpp, compiled without fma)
    slopes = np.ones(a.shape, dtype=a.dtype)
    negative = a <= 0
    bounds = float(a.dtype.type(lower)), float(a.dtype.type(upper))
    slopes[negative] = _rng(generator).uniform((int(negative.sum()),), np.dtype(np.float64), *bounds, fused=False)
    noise[...] = slopes
    return a * slopes


def _rrelu_backward_kernel(g, x, noise, lower, upper, training, self_is_result=False):
    if training:
        return g * noise
    return _leaky_backward_kernel(g, x, (lower + upper) / 2, self_is_result)


_RRELU_ATTRS = ("lower", "upper", "training")


def _rrelu_backward_vjp(ctx, gg):
    x, noise = ctx.saved_tensors
    lower, upper, training, _ = ctx.attrs
    return rrelu_with_noise_backward(gg, x, noise, lower, upper, training, False)


rrelu_with_noise_backward = defop(
    "rrelu_with_noise_backward(Tensor grad_output, Tensor self, Tensor noise, Scalar lower, Scalar upper, "
    "bool training, bool self_is_result) -> Tensor",
    _rrelu_backward_kernel,
    vjp=constant_in_self(_rrelu_backward_vjp),
    saves=("self", "noise"),
    attrs=_RRELU_ATTRS + ("self_is_result",),
    hidden=("self_is_result",),  # PyTorch's node keeps lower, noise, self, training and upper
    differentiable=("grad_output", "self"),
)


def _rrelu_vjp_for(is_result: bool):
    def vjp(ctx, g):
        x, noise = ctx.saved_tensors  # (the result, for the in-place form)
        return rrelu_with_noise_backward(g, x, noise, *ctx.attrs, is_result)

    return vjp


def _rrelu_jvp(args, outs, tangents):
    # element-wise: the tangent times each element's slope, as the backward operator computes it
    x, noise, lower, upper, training = args[:5]
    return rrelu_with_noise_backward(tangents[0], x, noise, lower, upper, training, False)


rrelu_with_noise, rrelu_with_noise_ = _with_inplace(
    # (PyTorch's schema marks noise Tensor(b!); written here by the kernel, it stays a plain input so that
    # the registry sees rrelu_with_noise_ as an ordinary in-place op of self)
    "rrelu_with_noise(Tensor self, Tensor noise, Scalar lower=0.125, Scalar upper=0.3333333333333333, "
    "bool training=False, Generator? generator=None) -> Tensor",
    _rrelu_kernel,
    {"vjp": _rrelu_vjp_for(True), "saves": ("result", "noise"), "node_name": "RreluWithNoiseBackward1"},
    vjp=_rrelu_vjp_for(False),
    jvp=_rrelu_jvp,
    saves=("self", "noise"),
    attrs=_RRELU_ATTRS,
    differentiable=("self",),
    node_name="RreluWithNoiseBackward0",
)


def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    """``torch.rrelu``: rrelu_with_noise with a fresh noise tensor shaped like ``input``."""
    return rrelu_with_noise(input, _fresh_noise(input), lower, upper, training, generator)


def rrelu_(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    return rrelu_with_noise_(input, _fresh_noise(input), lower, upper, training, generator)


def _fresh_noise(input: Tensor) -> Tensor:
    """rrelu's noise: contiguous whatever the input's layout (PyTorch's ``LEGACY_CONTIGUOUS_MEMORY_FORMAT``), so
    training's gradient, ``noise * grad_output``, is laid out as PyTorch's."""
    return zeros_like(input, memory_format=contiguous_format)


# ---- elu family (elu, selu, celu) --------------------------------------------------------------------------

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _elu_kernel(a, alpha=1, scale=1, input_scale=1, name="elu_cpu"):
    check_float(a, name)
    dt = a.dtype
    if dt == np.float32 or dt == np.float16:  # (the parameters checked as the kernel converts them: to float)
        alpha, scale, input_scale = (float(_scalar(v, np.float32)) for v in (alpha, scale, input_scale))
        return elu_float(a, alpha, scale, input_scale)
    neg_part = np.expm1(a * _scalar(input_scale, dt)) * _scalar(alpha, dt)
    return select(a > 0, a, neg_part) * _scalar(scale, dt)


def _elu_backward_kernel(g, alpha, scale, input_scale, is_result, x):
    dt = np.result_type(g)
    if dt == np.float32 or dt == np.float16:
        return elu_backward_float(g, x, float(alpha), float(scale), float(input_scale), bool(is_result))
    alpha, scale, input_scale = (np.asarray(v, dtype=dt) for v in (alpha, scale, input_scale))

    def formula(grad: np.ndarray, b: np.ndarray, vector: bool) -> np.ndarray:
        if is_result:
            neg_part = grad * input_scale * (b + alpha * scale)
        else:
            neg_part = grad * input_scale * (alpha * scale) * np.exp(b * input_scale)  # (ATen's negcoef: one number)
        # (as elu_backward_float: the vector code sends NaN to the negative branch, the scalar loop to the other)
        positive = (b > 0) if vector else ~(b <= 0)
        return select(positive, grad * scale, neg_part)

    return _split_at_nan(formula, g, x, loop_block(dt, also_avx512=True))


def _elu_backward_vjp(ctx, gg):
    g, x = ctx.saved_tensors
    alpha, scale, input_scale, is_result = ctx.attrs
    need = ctx.needs_input_grad
    gg_g = elu_backward(gg, alpha, scale, input_scale, is_result, x) if need[0] else None
    gg_x = _elu_double_backward(gg, g, alpha, scale, input_scale, is_result, x) if need[1] else None
    return gg_g, gg_x


def _elu_double_backward(gg, g, alpha, scale, input_scale, is_result, x):
    """PyTorch's elu_double_backward, op for op (so the graph is named as its: a MulBackward0 by the mask): the
    mask is ``x < 0`` in the tensor's dtype (zero at 0 and for NaN)."""
    mask = to_dtype(lt(x, 0), gg.dtype)
    scaled = mul(mul(gg, g), input_scale)
    if is_result:
        return mul(scaled, mask)
    return mul(elu_backward(scaled, alpha, scale, input_scale, is_result, x), mask)


elu_backward = defop(
    "elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, "
    "Tensor self_or_result) -> Tensor",
    _elu_backward_kernel,
    vjp=_elu_backward_vjp,
    saves=("grad_output", "self_or_result"),
    attrs=("alpha", "scale", "input_scale", "is_result"),
)


def _elu_vjp_for(is_result: bool, celu: bool = False):
    def vjp(ctx, g):
        (x,) = ctx.saved_tensors
        if celu:
            (alpha,) = ctx.attrs
            # PyTorch's rule uses 1 / float32(alpha) as the input scale
            return elu_backward(g, alpha, 1.0, 1.0 / float(np.float32(alpha)), is_result, x)
        alpha, scale, input_scale = ctx.attrs
        if is_result:
            _check_elu_inplace_alpha(alpha)
        return elu_backward(g, alpha, scale, input_scale, is_result, x)

    return vjp


elu, elu_ = _with_inplace(
    "elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
    _elu_kernel,
    {"vjp": _elu_vjp_for(True), "saves": ("result",), "node_name": "EluBackward1"},
    vjp=_elu_vjp_for(False),
    saves=("self",),
    attrs=("alpha", "scale", "input_scale"),
)


def _check_elu_inplace_alpha(alpha) -> None:
    if alpha < 0:  # the result no longer tells the sign of the input
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative slope, "
            "please call out-of-place version instead."
        )


def _celu_kernel(a, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu_kernel(a, alpha, 1.0, 1.0 / alpha)


celu, celu_ = _with_inplace(
    "celu(Tensor self, Scalar alpha=1.0) -> Tensor",
    _celu_kernel,
    {"vjp": _elu_vjp_for(True, celu=True), "saves": ("result",), "node_name": "CeluBackward1"},
    vjp=_elu_vjp_for(False, celu=True),
    saves=("self",),
    attrs=("alpha",),
)


def selu(input):
    return elu(input, SELU_ALPHA, SELU_SCALE, 1)


def selu_(input):
    return elu_(input, SELU_ALPHA, SELU_SCALE, 1)


# ---- gelu --------------------------------------------------------------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_C = 0.044715


def _check_approximate(approximate: str) -> None:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def _torch_cpu_dtype(*arrays) -> bool:
    """float32 and float16 GELU take PyTorch's own CPU algorithms, bit for bit (gelu_torch_cpu)."""
    return all(a.__class__ is np.ndarray and a.dtype in _TORCH_CPU_DTYPES for a in arrays) and (
        arrays[0].dtype == arrays[-1].dtype)


_TORCH_CPU_DTYPES = (np.dtype(np.float32), np.dtype(np.float16))


def _gelu_kernel(a, approximate="none"):
    _check_approximate(approximate)
    check_float(a, "GeluKernelImpl")
    if _torch_cpu_dtype(a):
        return torch_gelu(a, approximate)
    return _gelu_kernel_exact(a, approximate)


def _gelu_kernel_exact(a, approximate):  # (float64: within an ulp or so of PyTorch's Sleef_erfd8_u10 formula)
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (a + _GELU_C * a * a * a)
        return 0.5 * a * (1.0 + np.tanh(inner))
    return 0.5 * a * (1.0 + erf_array(a * _INV_SQRT_2))


def _gelu_backward_kernel(g, x, approximate="none"):
    if _torch_cpu_dtype(g, x):
        return torch_gelu_backward(g, x, approximate)
    _check_gelu_backward_dtypes(g, x, approximate)
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + _GELU_C * x * x * x)
        t = np.tanh(inner)
        d_inner = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_C * x * x)
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * d_inner)
    cdf = 0.5 * (1.0 + erf_array(x * _INV_SQRT_2))
    pdf = np.exp(-0.5 * x * x) * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


def _check_gelu_backward_dtypes(g: np.ndarray, x: np.ndarray, approximate: str) -> None:
    """PyTorch's refusals of a gradient of another dtype than ``x``'s (a forward-mode tangent of another dtype reaches
    them through gelu's formula): oneDNN's view of a gradient that is neither float32 nor float16 where it takes the
    backward, else the ATen kernel's of a complex one."""
    if uses_onednn(x, approximate) and g.dtype not in _TORCH_CPU_DTYPES:
        raise RuntimeError("itensor_view_from_dense expects float/bfloat16/half/int8/fp8 tensor input"
                           f"{scalar_type_name(g.dtype)}")
    common = np.promote_types(g.dtype, x.dtype)
    if common.kind == "c":
        raise unsupported("GeluBackwardKernelImpl", common)


def _gelu_backward_vjp(ctx, gg):
    g, x = ctx.saved_tensors
    (approximate,) = ctx.attrs
    need = ctx.needs_input_grad
    gg_g = gelu_backward(gg, x, approximate) if need[0] else None
    gg_x = mul(mul(gg, g), _gelu_second_derivative(x, approximate)) if need[1] else None
    return gg_g, gg_x


def _gelu_second_derivative(x, approximate: str):
    x2 = mul(x, x)
    if approximate == "tanh":
        t = tanh(mul(add(x, mul(mul(x2, x), _GELU_C)), _SQRT_2_OVER_PI))
        one_minus_t2 = scalar_minus(1.0, mul(t, t))
        d_inner = mul(add(mul(x2, 3.0 * _GELU_C), 1.0), _SQRT_2_OVER_PI)
        dd_inner = mul(x, 6.0 * _GELU_C * _SQRT_2_OVER_PI)
        # (1 - t^2) * (u' + x/2 * (u'' - 2 t u'^2))
        bracket = add(d_inner, mul(mul(x, 0.5), sub(dd_inner, mul(mul(t, 2.0), mul(d_inner, d_inner)))))
        return mul(one_minus_t2, bracket)
    pdf = mul(exp(mul(x2, -0.5)), _INV_SQRT_2PI)
    return mul(pdf, scalar_minus(2.0, x2))


gelu_backward = defop(
    "gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor",
    _gelu_backward_kernel,
    vjp=_gelu_backward_vjp,
    saves=("grad_output", "self"),
    attrs=("approximate",),
)


def _gelu_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    (approximate,) = ctx.attrs
    return gelu_backward(g, x, approximate=approximate)


def _gelu_jvp(args, outs, tangents):
    """PyTorch's auto_element_wise formula, ``gelu_backward(self_t.conj(), self_p, approximate).conj()``: the
    backward kernel refuses a tangent of another dtype as it does (conj: a no-op on a real tangent)."""
    (t,) = tangents
    if t is None:
        return None
    return gelu_backward(t.conj(), args[0], approximate=args[1]).conj()


gelu = defop(
    "gelu(Tensor self, *, str approximate='none') -> Tensor",
    _gelu_kernel,
    vjp=_gelu_vjp,
    jvp=_gelu_jvp,
    saves=("self",),
    attrs=("approximate",),
)


# ---- silu / mish / softplus --------------------------------------------------------------------------------


@half_in_float
def _silu_kernel(a):
    check_float(a, "silu_cpu", complex_ok=True)
    if a.dtype == np.float32:
        return silu_float(a)
    with np.errstate(all="ignore"):  # (PyTorch's x / (1 + exp(-x)), complex input too)
        e = one_plus_exp_neg(a)
        return np.divide(a, e, out=e)


def _silu_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    if not (STATE.grad_enabled or STATE.special) and g._data.dtype == x._data.dtype in _FUSED_KERNEL_DTYPES:
        return _wrap(pointwise_result(_silu_backward_array(g._data, x._data), g._data, x._data))
    # (with a graph recorded: PyTorch's infinitely_differentiable_silu_backward)
    s = sigmoid(x)
    return mul(mul(g, s), add(mul(x, scalar_minus(1.0, s)), 1.0))


_FUSED_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))


def _silu_backward_array(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PyTorch's fused silu_backward, which a plain backward runs: g * s * (1 + x * (1 - s)), s = sigmoid(x),
    ``x * (1 - s) + 1`` fused; half computed in float and rounded once."""
    if x.dtype in (np.float32, np.float16):
        return silu_backward_float(g, x)
    s = sigmoid_array(x)
    factor = fma(x, np.subtract(1, s), 1.0)
    out = np.multiply(g, s)
    out *= factor
    return out


silu, silu_ = _with_inplace("silu(Tensor self) -> Tensor", _silu_kernel, vjp=_silu_vjp, saves=("self",))
silu.complex_grad = False  # PyTorch's derivative is real-only (its in-place form does not check)


# ---- glu -----------------------------------------------------------------------------------------------------


def _halves(a: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    return tuple(np.split(a, 2, axis=dim))


def _glu_kernel(a, dim=-1):
    check_float(a, "glu_cpu")
    first, second = _halves(a, dim)
    if a.dtype in (np.float32, np.float16):  # (half: computed in float, rounded once, in blocks of half vectors)
        return glu_float(first, second)
    with np.errstate(all="ignore"):  # (laid out by TensorIterator over the two halves, as PyTorch's)
        return pointwise_result(first * sigmoid_array(second), first, second)


def glu_backward_array(g: np.ndarray, x: np.ndarray, dim: int) -> np.ndarray:
    """PyTorch's ``glu_backward``: the sigmoid of the second half written into the first half of a fresh gradient,
    ``(1 - s) * s * a * g`` into the second, then the first multiplied by ``g`` (half: each kernel in float,
    rounded once)."""
    first, second = _halves(x, dim)
    out = np.empty(x.shape, x.dtype)
    out_first, out_second = _halves(out, dim)
    with np.errstate(all="ignore"):
        if x.dtype in (np.float32, np.float16):
            s = sigmoid_float(second, out_like=out_first)
        else:
            s = sigmoid_array(second)
        if x.dtype == np.float16:
            s, first, g = (v.astype(np.float32) for v in (s, first, g))
        out_second[...] = (1 - s) * s * first * g
        out_first[...] = s * g
    return out


def _glu_backward_kernel(g: np.ndarray, x: np.ndarray, dim: int) -> np.ndarray:
    if x.ndim == 0:
        raise RuntimeError("glu does not support 0-dimensional tensors")
    dim = wrap_dim(dim, x.ndim)
    if x.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {x.shape[dim]}")
    if x.dtype.kind in "biu":  # (ATen's sigmoid_out into the gradient's first half refuses it first)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {type_name(x.dtype)}")
    if g.dtype != x.dtype:  # (ATen's iterator over the gradient's halves and grad_output takes one dtype)
        raise RuntimeError(f"Found dtype {type_name(g.dtype)} but expected {type_name(x.dtype)}")
    check_float(x, "glu_backward_cpu")
    return glu_backward_array(g, x, dim)


def _glu_double_backward(gg: Tensor, go: Tensor, x: Tensor, dim: int) -> Tensor:
    """PyTorch's ``glu_double_backward`` (the gradient for ``self``), operator for operator."""
    from ..shape import cat
    from ..views import narrow

    half = x._data.shape[dim] // 2
    first, second = narrow(x, dim, 0, half), narrow(x, dim, half, half)
    s = sigmoid(second)
    one_minus_s = scalar_minus(1, s)
    s_one_minus_s = mul(s, one_minus_s)
    gg_first, gg_second = narrow(gg, dim, 0, half), narrow(gg, dim, half, half)
    gg_second_times_first = mul(gg_second, first)
    d_first = mul(mul(gg_second, go), s_one_minus_s)
    second_order = sub(mul(s_one_minus_s, one_minus_s), mul(s, s_one_minus_s))
    d_second = add(mul(mul(gg_second_times_first, go), second_order), mul(mul(gg_first, go), s_one_minus_s))
    return cat([d_first, d_second], dim)


def _glu_double_backward_grad_output(gg: Tensor, x: Tensor, dim: int) -> Tensor:
    """PyTorch's ``glu_double_backward_grad_output``: ``glu_backward`` is linear in grad_output, so its gradient
    is ``gg`` times ``glu_backward`` of ones, the two halves summed."""
    from ..views import narrow

    dim = wrap_dim(dim, x._data.ndim)
    half = x._data.shape[dim] // 2
    ones = np.ones(x._data.shape[:dim] + (half,) + x._data.shape[dim + 1:], x._data.dtype)
    tmp = mul(gg, glu_backward(_wrap(ones), x, dim))
    return add(narrow(tmp, dim, 0, half), narrow(tmp, dim, half, half))


def _glu_backward_vjp(ctx, gg: Tensor) -> tuple:
    go, x = ctx.saved_tensors
    (dim,) = ctx.attrs
    need_go, need_x = ctx.needs_input_grad
    return (_glu_double_backward_grad_output(gg, x, dim) if need_go else None,
            _glu_double_backward(gg, go, x, dim) if need_x else None)


glu_backward = defop("glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor", _glu_backward_kernel,
                     vjp=_glu_backward_vjp, saves=("grad_output", "self"), attrs=("dim",))  # GluBackwardBackward0


def _glu_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    (dim,) = ctx.attrs
    return run_op(glu_backward, g, x, dim)


glu_op = defop("glu(Tensor self, int dim=-1) -> Tensor", _glu_kernel, vjp=_glu_vjp, saves=("self",),
               attrs=("dim",))


# softplus and mish in float32 and half: Sleef's and glibc's exp and log1p as PyTorch's kernels split them
_LOG1P_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float16))


def _check_float_scalars(dtype, *values) -> None:
    """Scalar arguments that the kernel converts to float, refused as ``Scalar::to<float>`` refuses them."""
    for value in values:
        _scalar(value, dtype)


def _softplus_kernel(a, beta=1, threshold=20):
    beta, threshold = number_arg(beta), number_arg(threshold)
    check_float(a, "softplus_cpu")
    if a.dtype in _LOG1P_KERNEL_DTYPES:
        _check_float_scalars(a.dtype, beta, threshold)
        return softplus_float(a, beta, threshold)
    z = a * _scalar(beta, a.dtype)
    with np.errstate(over="ignore"):  # (PyTorch's log1p(exp(z)) / beta; where exp overflows, z > threshold)
        smooth = np.log1p(np.exp(z))
    smooth /= np.asarray(beta, dtype=smooth.dtype)
    return select(z > threshold, a, smooth)


def _softplus_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    beta, th = ctx.attrs
    return run_op(softplus_backward, g, x, beta, th)


def _softplus_backward_kernel(g, x, beta, threshold):
    # PyTorch's kernel: g where beta * x > threshold (softplus is linear there), else g * z / (z + 1), z = e^(beta x)
    if g.dtype == x.dtype in _LOG1P_KERNEL_DTYPES:
        beta, threshold = number_arg(beta), number_arg(threshold)
        _check_float_scalars(x.dtype, beta, threshold)
        return softplus_backward_float(g, x, beta, threshold)
    bx = x * np.asarray(beta, dtype=x.dtype)
    with np.errstate(over="ignore"):
        z = np.exp(bx)
        return select(bx > threshold, g, g * z / (z + 1)).astype(np.result_type(g, x), copy=False)


def _softplus_backward_vjp(ctx, gg):
    go, x = ctx.saved_tensors
    beta, th = ctx.attrs
    need_go, need_x = ctx.needs_input_grad
    d_x = None
    if need_x:  # PyTorch's softplus_double_backward: sigmoid_backward(gg * go, sigmoid(beta x)) * (beta x < th) * beta
        bx = mul(x, beta)
        s = sigmoid(bx)
        d_x = mul(mul(mul(mul(gg, go), mul(s, scalar_minus(1.0, s))), lt(bx, th)), beta)
    return (softplus_backward(gg, x, beta, th) if need_go else None), d_x


softplus_backward = defop(
    "softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor",
    _softplus_backward_kernel,
    vjp=_softplus_backward_vjp,
    saves=("grad_output", "self"),
    attrs=("beta", "threshold"),
    node_name="SoftplusBackwardBackward0",
)


softplus = defop(
    "softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
    _softplus_kernel,
    vjp=_softplus_vjp,
    saves=("self",),
    attrs=("beta", "threshold"),
)


def _mish_kernel(a):
    check_float(a, "mish_cpu")
    if a.dtype in _LOG1P_KERNEL_DTYPES:
        return mish_float(a)
    return a * np.tanh(np.logaddexp(np.zeros((), a.dtype), a))


def _mish_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    if not (STATE.grad_enabled or STATE.special) and g._data.dtype == x._data.dtype in _LOG1P_KERNEL_DTYPES:
        # (a plain backward runs PyTorch's fused mish_backward kernel)
        return _wrap(pointwise_result(mish_backward_float(g._data, x._data), g._data, x._data))
    s = sigmoid(x)
    t = tanh(log1p(exp(x)))  # PyTorch's formula: exp().log1p().tanh(), not softplus
    return mul(g, add(t, mul(mul(x, s), scalar_minus(1.0, mul(t, t)))))


mish, mish_ = _with_inplace("mish(Tensor self) -> Tensor", _mish_kernel, vjp=_mish_vjp, saves=("self",))


# ---- hardswish / hardsigmoid -------------------------------------------------------------------------------


@half_in_float
def _hardswish_kernel(a):
    check_float(a, "hardswish_cpu")
    return a * np.clip(a + 3.0, 0.0, 6.0) / 6.0


def _hardswish_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    return run_op(hardswish_backward, g, x)


def _hardswish_backward_kernel(g, x):
    # PyTorch's kernel: 0 up to -3, g * (x / 3 + 1/2) below 3, g from 3 on (and for NaN)
    dt = np.result_type(g, x)
    zero = np.zeros((), dt)

    def formula(grad: np.ndarray, v: np.ndarray, vector: bool) -> np.ndarray:
        middle = grad * (v / np.asarray(3.0, dtype=v.dtype) + np.asarray(0.5, dtype=v.dtype))
        # the vector code keeps NaN in the middle branch (NaN), the scalar loop sends it to the last (g)
        upper = (v >= 3.0) if vector else ~(v < 3.0)
        return select(v <= -3.0, zero, select(upper, grad, middle)).astype(dt, copy=False)

    return _split_at_nan(formula, g, x, loop_block(x.dtype, also_avx512=True))


def _hardswish_backward_vjp(ctx, gg):
    go, x = ctx.saved_tensors
    need_go, need_x = ctx.needs_input_grad
    d_x = None
    if need_x:  # PyTorch: where(-3 < x < 3, gg * go / 3, 0)
        inside = logical_and(gt(x, -3.0), lt(x, 3.0))
        d_x = where(inside, div(mul(gg, go), 3.0), 0.0)
    return (hardswish_backward(gg, x) if need_go else None), d_x


hardswish_backward = defop(
    "hardswish_backward(Tensor grad_output, Tensor self) -> Tensor",
    _hardswish_backward_kernel,
    vjp=_hardswish_backward_vjp,
    saves=("grad_output", "self"),
    node_name="HardswishBackwardBackward0",
)


hardswish, hardswish_ = _with_inplace(
    "hardswish(Tensor self) -> Tensor", _hardswish_kernel, vjp=_hardswish_vjp, saves=("self",)
)


@half_in_float
def _hardsigmoid_kernel(a):
    check_float(a, "hardsigmoid_cpu")
    return np.clip(a + 3.0, 0.0, 6.0) / 6.0


_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))  # PyTorch's kernel constant is a float literal


def _hardsigmoid_backward_kernel(g, x):
    return select((x > -3.0) & (x < 3.0), g * _ONE_SIXTH, np.zeros((), dtype=np.result_type(g)))


def _hardsigmoid_backward_vjp(ctx, gg):
    (x,) = ctx.saved_tensors
    return hardsigmoid_backward(gg, x), None


hardsigmoid_backward = defop(
    "hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor",
    _hardsigmoid_backward_kernel,
    vjp=_hardsigmoid_backward_vjp,
    saves=("self",),
)


def _hardsigmoid_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    return hardsigmoid_backward(g, x)


hardsigmoid, hardsigmoid_ = _with_inplace(
    "hardsigmoid(Tensor self) -> Tensor", _hardsigmoid_kernel, vjp=_hardsigmoid_vjp, saves=("self",)
)


# ---- hardshrink / softshrink -------------------------------------------------------------------------------


def _shrink_mask(x, lambd):
    # PyTorch zeroes where -lambd <= x <= lambd, so NaN passes (as a value forward, as a gradient backward)
    return ~((x >= -lambd) & (x <= lambd))


def _hardshrink_kernel(a, lambd=0.5):
    check_float(a, "hardshrink_cpu")
    check_scalar_parameter(lambd, a.dtype)  # (ATen's kernel converts lambd to the tensor's type: 1e5 overflows half)
    return select(_shrink_mask(a, lambd), a, np.zeros((), dtype=a.dtype))


def _softshrink_kernel(a, lambd=0.5):
    check_float(a, "softshrink_check")
    largest = float(bfloat16_in_float.finfo(a.dtype).max)
    if not 0 <= lambd <= largest:  # (NaN and inf refused too)
        raise RuntimeError(f"lambda must be in range [0, {largest:g}] for input dtype "
                           f"{scalar_type_name(bfloat16_in_float.as_seen(a.dtype))}, but found {float(lambd):g}")
    lam = np.asarray(lambd, dtype=a.dtype)

    def formula(v: np.ndarray, vector: bool) -> np.ndarray:
        if vector:  # (v - clamp(v, -lambd, lambd): +0 inside the band, NaN kept)
            return v - np.clip(v, -lam, lam)
        # the scalar loop's a * 0 inside the band: NaN stays NaN, a small negative gives -0
        return select(v > lam, v - lam, select(v < -lam, v + lam, v * np.zeros((), dtype=v.dtype)))

    with np.errstate(invalid="ignore"):  # (the kernel is registered for AVX2 only: 16 floats, 32 halves a block)
        return vector_and_scalar(formula, (a,), loop_block(a.dtype, also_avx512=False))


def _shrink_backward_kernel(g, x, lambd):
    check_scalar_parameter(lambd, x.dtype)  # (converted to the tensors' type, as the forward kernels convert it)
    zero = np.zeros((), dtype=np.result_type(g))

    def formula(grad: np.ndarray, v: np.ndarray, vector: bool) -> np.ndarray:
        if vector:  # ((x < -lambd) | (x > lambd)) & grad: 0 at NaN
            return select((v < -lambd) | (v > lambd), grad, zero)
        return select(_shrink_mask(v, lambd), grad, zero)  # (the scalar loop lets NaN's gradient through)

    # (shrink_backward is registered for AVX2 only, as softshrink)
    return _split_at_nan(formula, g, x, loop_block(x.dtype, also_avx512=False))


def _shrink_vjp_for(name: str, of_backward: bool = False):
    """The rule of ``name`` (or, ``of_backward``, of its backward op, linear in its gradient): the mask."""

    def vjp(ctx, g):
        (x,) = ctx.saved_tensors
        (lambd,) = ctx.attrs
        grad = _SHRINK_BACKWARD[name](g, x, lambd)
        return (grad, _zero_for_self(ctx, g)) if of_backward else grad

    return vjp


_SHRINK_BACKWARD = {
    name: defop(
        f"{name}_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor",
        _shrink_backward_kernel,
        vjp=_shrink_vjp_for(name, of_backward=True),
        saves=("self",),
        attrs=("lambd",),
    )
    for name in ("hardshrink", "softshrink")
}
hardshrink = defop(
    "hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
    _hardshrink_kernel,
    vjp=_shrink_vjp_for("hardshrink"),
    saves=("self",),
    attrs=("lambd",),
)
softshrink = defop(
    "softshrink(Tensor self, Scalar lambd=0.5) -> Tensor",
    _softshrink_kernel,
    vjp=_shrink_vjp_for("softshrink"),
    saves=("self",),
    attrs=("lambd",),
)


# ---- prelu ---------------------------------------------------------------------------------------------------
# PyTorch's prelu reshapes the weight to broadcast over the channel dim (a ViewBackward0 in the graph) and calls
# _prelu_kernel, whose backward is an operator of its own with a closed-form double backward.


def _prelu_kernel(x, w):
    check_float(x, "prelu_cpu")
    return select(x > 0, x, w * x).astype(np.result_type(x, w), copy=False)


def _prelu_kernel_vjp(ctx, g):
    x, w = ctx.saved_tensors
    return prelu_kernel_backward(g, x, w)


def _prelu_backward_kernel(g, x, w):
    positive = x > 0
    grad_input = select(positive, g, w * g)
    grad_weight = select(positive, 0, x * g)
    return grad_input.astype(g.dtype, copy=False), grad_weight.astype(g.dtype, copy=False)


def _prelu_backward_vjp(ctx, gg_input, gg_weight):
    # torch's formulas for _prelu_kernel_backward (where self > 0 the second derivatives vanish)
    g, x, w = ctx.saved_tensors
    positive = gt(x, 0)
    zero = _wrap(np.zeros((), dtype=g._data.dtype))
    need_g, need_x, need_w = ctx.needs_input_grad
    d_g = d_x = d_w = None
    if need_g:
        if gg_input is None:
            d_g = where(positive, zero, mul(gg_weight, x))
        else:
            other = mul(gg_input, w) if gg_weight is None else add(mul(gg_input, w), mul(gg_weight, x))
            d_g = where(positive, gg_input, other)
    if need_x:
        d_x = zeros_like(x) if gg_weight is None else where(positive, zero, mul(g, gg_weight))
    if need_w:
        d_w = zeros_like(x) if gg_input is None else where(positive, zero, mul(g, gg_input))
    return d_g, d_x, d_w


prelu_kernel_backward = defop(
    "_prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)",
    _prelu_backward_kernel,
    vjp=_prelu_backward_vjp,
    saves=("grad_output", "self", "weight"),
    node_name="PreluKernelBackwardBackward0",
)
prelu_kernel_backward.materialize_grads = False  # its formula tells a missing gradient from a zero one



def _prelu_kernel_jvp(args, outs, tangents):
    """PyTorch's formula: where(self >= 0, self_t, weight * self_t + weight_t * self) (``>=`` where the kernel has
    ``>``: at 0 the tangent is self_t); a missing tangent is the zero tensor."""
    x, w = args
    tx, tw = tangents
    record = recording(args, tangents)
    slope_term = mul(w, tx) if tx is not None else _zero_slope_term(w, or_zero(None, x, tangents)) if record else None
    input_term = mul(tw, x) if tw is not None else zero_times(or_zero(None, w, tangents), x) if record else None
    zx = or_zero(tx, x, tangents, negative=False)  # (where materialises the zero tensor as +0.)
    return where(ge(x, 0), zx, plus(slope_term, input_term))


def _zero_slope_term(w: Tensor, zx: Tensor) -> Tensor:
    """``weight * self_t`` for a zero tangent: the zero tensor's product, weight first (its node's edges in order)."""
    return zero_product(zx, mul(w, zx)) if w._rg else zx


prelu_kernel = defop("_prelu_kernel(Tensor self, Tensor weight) -> Tensor", _prelu_kernel, vjp=_prelu_kernel_vjp,
                     saves=("self", "weight"), node_name="PreluKernelBackward0", jvp=_prelu_kernel_jvp)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """PyTorch's prelu: check the weight against the channels, view it to broadcast, then the kernel."""
    from ..views import reshape

    if input.dtype != weight.dtype:  # (first: a complex weight for a real input is refused here)
        raise RuntimeError(f"prelu: Type promoting not supported. Got {type_name(input._data.dtype)} and "
                           f"{type_name(weight._data.dtype)}")
    if weight.numel() != 1 and input.ndim == 0:
        raise RuntimeError("Not allow zero-dim input tensor.")
    channels = input.shape[1] if input.ndim > 1 else 1
    if weight.numel() != 1 and channels != weight.numel():
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    if input.ndim != weight.ndim:
        shape = [1] * input.ndim
        if input.ndim > 1:
            shape[1] = weight.numel()
        weight = reshape(weight, tuple(shape))
    return prelu_kernel(input, weight)


# ---- softmax / log_softmax ---------------------------------------------------------------------------------


_max_reduce = np.maximum.reduce
_add_reduce = np.add.reduce


def _softmax_dim(a, dim: int, name: str, half_to_float: bool = False) -> int:
    """The dim, checked; then ``half_to_float``, which PyTorch's CPU kernels refuse whatever the input; then the
    dtype, refused as they do (the last-dim kernel's name when the dim is the last one)."""
    d = wrap_dim(dim, a.ndim)
    if half_to_float:
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")
    if a.dtype.kind != "f":  # (no complex kernels either)
        kernel = name if a.ndim == 0 or d == a.ndim - 1 else name.replace("_lastdim", "")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(a.dtype)}'")
    return d


def _softmax_kernel(a, dim, half_to_float=False):
    if a.ndim == 0:  # (PyTorch's kernel sees one element: 1, or NaN for inf and NaN)
        _softmax_dim(a, dim, "softmax_lastdim_kernel_impl", half_to_float)
        return _softmax_kernel(a.reshape(1), 0).reshape(())
    d = _softmax_dim(a, dim, "softmax_lastdim_kernel_impl", half_to_float)
    if a.size == 0:  # (an empty dim, or another: nothing to normalise)
        return a.copy()
    if exact_dtype(a):  # (PyTorch's kernel, bit for bit)
        seen = as_seen(a.dtype)
        if seen is not a.dtype:  # (a float32 copy of a bfloat16 tensor)
            return reduced_softmax(a, d, seen)
        return softmax_forward(a, d, log=False)
    if exact_half(a):
        return reduced_softmax(a.astype(np.float32), d, a.dtype).astype(a.dtype)
    z = np.subtract(a, a.max(axis=d, keepdims=True), order="C")  # contiguous, as PyTorch's softmax returns
    e = np.exp(z)
    e /= e.sum(axis=d, keepdims=True)
    return e


def _softmax_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    dim, _ = ctx.attrs
    return softmax_backward_data(g, y, dim, y.dtype)


# The backward operators, as in PyTorch (their own nodes under create_graph: SoftmaxBackwardDataBackward0,
# LogSoftmaxBackwardDataBackward0), with PyTorch's double-backward formulas.


def _reduce_dim(y, dim: int):
    return wrap_dim(dim, y.ndim) if y.ndim else None


def _exact_backward(g, y) -> bool:
    """Whether PyTorch's backward kernel is emulated: same-shaped float32 or float64 arrays, not empty."""
    return y.ndim > 0 and y.size > 0 and g.dtype == y.dtype and g.shape == y.shape and exact_dtype(y)


def _exact_half_backward(g, y) -> bool:
    """Whether PyTorch's float16 backward kernel is emulated: same-shaped float16 arrays, not empty."""
    return y.ndim > 0 and y.size > 0 and g.dtype == y.dtype and g.shape == y.shape and exact_half(y)


def _half_result(g, input_dtype) -> bool:
    """Whether ATen's meta function makes the gradient Half: a Float grad of a Half input (the CUDA kernel's
    conversion; the CPU kernel then refuses the result)."""
    return scalar_type_name(g) == "Float" and _dtypes.to_dtype(input_dtype) is _dtypes.float16


def _refused_backward_data(g, y, dim: int, input_dtype, name: str) -> np.ndarray | None:
    """ATen's checks of the softmax backward operators on CPU, after the size and dim checks: an empty gradient
    comes back (of the meta function's dtype) before the kernel runs; the kernel dispatches on grad's dtype
    (``name`` is its last-dim form) and refuses a result or an output of another."""
    if g.size == 0:
        return np.empty(g.shape, np.float16 if _half_result(g, input_dtype) else g.dtype)
    if g.dtype.kind != "f":
        kernel = name if g.ndim <= 1 or wrap_dim(dim, g.ndim) == g.ndim - 1 else name.replace("_lastdim", "")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(g.dtype)}'")
    expected = scalar_type_name(g)
    for found in ("Half" if _half_result(g, input_dtype) else expected, scalar_type_name(y)):
        if found != expected:
            raise RuntimeError(f"expected scalar type {expected} but found {found}")
    return None


def _check_same_size(g, y) -> None:
    """checkSameSize("softmax_backward", grad, output)."""
    if g.shape != y.shape:
        raise RuntimeError(f"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
                           f"'output'; but {list(g.shape)} does not equal {list(y.shape)} (while checking arguments "
                           "for softmax_backward)")


def _softmax_backward_data_kernel(g, y, dim, input_dtype):
    _check_same_size(g, y)
    wrap_dim(dim, g.ndim)
    refused = _refused_backward_data(g, y, dim, input_dtype, "softmax_backward_lastdim_kernel_impl")
    if refused is not None:
        return refused
    if y.ndim == 0 and np.ndim(g) == 0:  # (as one element, which PyTorch's kernel sees)
        return _softmax_backward_data_kernel(np.reshape(g, 1), y.reshape(1), 0, input_dtype).reshape(())
    d = _reduce_dim(y, dim)
    if _exact_backward(g, y):
        seen = as_seen(y.dtype)
        if seen is not y.dtype:  # (float32 copies of bfloat16 tensors)
            return reduced_softmax_backward(g, y, d, seen)
        return softmax_backward(g, y, d, log=False)
    if _exact_half_backward(g, y):
        return reduced_softmax_backward(g.astype(np.float32), y.astype(np.float32), d, y.dtype).astype(y.dtype)
    return y * (g - _add_reduce(g * y, axis=d, keepdims=True))  # output * (grad - sum(grad * output))


def _softmax_backward_data_vjp(ctx, gg):
    go, y = ctx.saved_tensors
    dim, _ = ctx.attrs
    need_go, need_y = ctx.needs_input_grad
    # softmax_double_backward: grad_output * gg - (output * grad_output).sum(dim) * gg
    #                          - grad_output * (output * gg).sum(dim)
    d_y = None
    if need_y:
        d_y = sub(sub(mul(go, gg), mul(sum_op(mul(y, go), dim, True), gg)), mul(go, sum_op(mul(y, gg), dim, True)))
    return softmax_backward_data(gg, y, dim, y.dtype) if need_go else None, d_y


softmax_backward_data = defop(
    "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    _softmax_backward_data_kernel,
    vjp=_softmax_backward_data_vjp,
    saves=("grad_output", "output"),
    attrs=("dim", "input_dtype"),
    node_name="SoftmaxBackwardDataBackward0",
)


def _softmax_jvp(args, outs, tangents):
    from ..reductions_extra import logsumexp_jvp

    # derivatives.yaml: result * (self_t - logsumexp_jvp(self_p, self_t, {dim}, true))
    return mul(outs[0], sub(tangents[0], logsumexp_jvp(args[0], tangents[0], (args[1],), True)))


def _log_softmax_jvp(args, outs, tangents):
    from ..reductions_extra import logsumexp_jvp

    # derivatives.yaml: self_t - logsumexp_jvp(self_p, self_t, {dim}, true)
    return sub(tangents[0], logsumexp_jvp(args[0], tangents[0], (args[1],), True))


softmax = defop(
    "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
    _softmax_kernel,
    vjp=_softmax_vjp,
    jvp=_softmax_jvp,
    saves=("result",),
    attrs=("dim", "half_to_float"),
    hidden=("half_to_float",),
    node_name="SoftmaxBackward0",
)


def _log_softmax_kernel(a, dim, half_to_float=False):
    if a.ndim == 0:  # (PyTorch's kernel sees one element: 0, or NaN for inf and NaN)
        _softmax_dim(a, dim, "log_softmax_lastdim_kernel_impl", half_to_float)
        return _log_softmax_kernel(a.reshape(1), 0).reshape(())
    d = _softmax_dim(a, dim, "log_softmax_lastdim_kernel_impl", half_to_float)
    if a.size == 0:  # (an empty dim, or another: nothing to normalise)
        return a.copy()
    if exact_dtype(a):
        seen = as_seen(a.dtype)
        if seen is not a.dtype:  # (a float32 copy of a bfloat16 tensor)
            return reduced_log_softmax(a, d, seen)
        return softmax_forward(a, d, log=True)
    if exact_half(a):
        return reduced_log_softmax(a.astype(np.float32), d, a.dtype).astype(a.dtype)
    # The ufuncs' reductions themselves (what ``.max``/``.sum`` call, minus their Python wrappers). The max
    # shift leaves exp(0) = 1 in every sum that holds no NaN, so the log never sees a zero.
    z = np.subtract(a, _max_reduce(a, axis=d, keepdims=True), order="C")  # contiguous, as PyTorch's
    # In place into the fresh ``z`` and sum (the same ufuncs on the same values: identical results, two
    # allocations fewer). ``z`` is a NumPy scalar only for 0-d input, handled above.
    total = _add_reduce(np.exp(z), axis=d, keepdims=True)
    np.subtract(z, np.log(total, out=total), out=z)
    return z


def _log_softmax_vjp(ctx, g):
    (y,) = ctx.saved_tensors
    dim, _ = ctx.attrs
    return log_softmax_backward_data(g, y, dim, y.dtype)


def _log_softmax_backward_data_kernel(g, y, dim, input_dtype):
    wrap_dim(dim, g.ndim)
    refused = _refused_backward_data(g, y, dim, input_dtype, "log_softmax_backward_lastdim_kernel_impl")
    if refused is not None:
        return refused
    if y.ndim == 0 and np.ndim(g) == 0:  # (as one element, which PyTorch's kernel sees)
        return _log_softmax_backward_data_kernel(np.reshape(g, 1), y.reshape(1), 0, input_dtype).reshape(())
    d = _reduce_dim(y, dim)
    if _exact_backward(g, y):
        seen = as_seen(y.dtype)
        if seen is not y.dtype:  # (float32 copies of bfloat16 tensors)
            return reduced_log_softmax_backward(g, y, d, seen)
        return softmax_backward(g, y, d, log=True)
    if _exact_half_backward(g, y):
        return reduced_log_softmax_backward(g.astype(np.float32), y.astype(np.float32), d, y.dtype).astype(y.dtype)
    return g - np.exp(y) * _add_reduce(g, axis=d, keepdims=True)  # grad - exp(output) * sum(grad)


def _log_softmax_backward_data_vjp(ctx, gg):
    go, y = ctx.saved_tensors
    dim, _ = ctx.attrs
    need_go, need_y = ctx.needs_input_grad
    # derivatives.yaml: grad_output: gg - (gg * output.exp()).sum(dim); output: -grad_output.sum(dim) * output.exp()
    # * gg
    d_go = sub(gg, sum_op(mul(gg, exp(y)), dim, True)) if need_go else None
    d_y = mul(mul(neg(sum_op(go, dim, True)), exp(y)), gg) if need_y else None
    return d_go, d_y


log_softmax_backward_data = defop(
    "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) "
    "-> Tensor",
    _log_softmax_backward_data_kernel,
    vjp=_log_softmax_backward_data_vjp,
    saves=("grad_output", "output"),
    attrs=("dim", "input_dtype"),
    node_name="LogSoftmaxBackwardDataBackward0",
)


log_softmax = defop(
    "_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
    _log_softmax_kernel,
    vjp=_log_softmax_vjp,
    jvp=_log_softmax_jvp,
    saves=("result",),
    attrs=("dim", "half_to_float"),
    hidden=("half_to_float",),
    node_name="LogSoftmaxBackward0",
)


# Element-wise activations: forward AD applies their VJP rule to the tangent, as PyTorch's auto_element_wise.
for _op in (threshold, threshold_, hardtanh, hardtanh_, leaky_relu, leaky_relu_, elu, elu_, celu, celu_, gelu, silu,
            silu_, softplus, mish, mish_, hardswish, hardswish_, hardsigmoid, hardsigmoid_, hardshrink, softshrink):
    _op.elementwise_jvp = True
