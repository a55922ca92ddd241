"""Padding, resampling (interpolate, adaptive average pooling), embedding, one_hot, dropout and the
distance/normalisation helpers (normalize, cosine_similarity, pairwise_distance)."""

from __future__ import annotations

import math
import operator

import numpy as np

from ..._factories import _rng
from ..._state import STATE, next_sequence_nr
from ..._strides import copy_preserving_layout, empty_strided, in_memory_order, like_self, preserve_format_strides
from ..._tensor import Tensor, _wrap
from ...backend import dtypes as _dt
from ...backend.dtypes import scalar_type_name, tensor_type_string
from ...memory_format import suggests_channels_last
from .._util import as_double, result_dtype, unsupported
from ..accumulate import add_rows_at
from ..creation import copy_, new_zeros
from ..inference_writes import counted_writes
from ..pointwise import add_, div, mul, mul_, sub
from ..reductions_extra import mean as mean_dims
from ..reductions_extra import sum as sum_dims
from ..registry import defop
from ..scalar_fill import written_value
from ..scalar_overloads import add_scalar
from ..views import as_strided_, call_plain, expand, squeeze, unsqueeze
from ..views import slice as slice_op
from . import adaptive_pool_cpu, interp_aa_cpu, resample
from ._basic import clamp_min, norm, vector_norm
from ._common import as_int, broadcast_shapes, check_float, type_name
from .interp_cpu import shared_plan
from .pool import constant_in_self, pool_kernel_name

# ---- constant padding --------------------------------------------------------------------------------------


def _constant_pad_kernel(x, pad, value=0):
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    k = len(pad) // 2
    if k > x.ndim:
        raise RuntimeError(
            f"Length of pad should be no more than twice the number of dimensions of the input. Pad "
            f"length is {len(pad)} while the input has {x.ndim} dimensions."
        )
    crop = [slice(None)] * x.ndim
    widths = [(0, 0)] * x.ndim
    for i in range(k):
        dim = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = x.shape[dim]
        # ATen narrows a negative pad away before padding: on each side in turn, so a cut deeper than what is
        # left is narrow's error, even where the other side's padding would make the output size positive
        kept = size + min(lo, 0)
        if kept < 0 or kept + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        crop[dim] = slice(max(-lo, 0), size - max(-hi, 0))
        widths[dim] = (max(lo, 0), max(hi, 0))
    out = x[tuple(crop)]
    return (
        np.pad(out, widths, constant_values=written_value(value, x.dtype))  # (Scalar::to's refusals: 300 for int8)
        if any(w != (0, 0) for w in widths)
        else out.copy()
    )


def _constant_pad_vjp(ctx, g):
    pad, _ = ctx.attrs
    return constant_pad_nd(g, tuple(-p for p in pad), 0)


constant_pad_nd = defop(
    "constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
    _constant_pad_kernel,
    vjp=_constant_pad_vjp,
    attrs=("pad", "value"),
    hidden=("value",),  # PyTorch's node keeps only the pad
)

_PAD_OPS: dict[tuple[str, int], object] = {}
_PAD_NAMES = {"reflect": "Reflection", "replicate": "Replication", "circular": "Circular"}


def _pad_op(mode: str, k: int):
    key = (mode, k)
    if key not in _PAD_OPS:
        name = _PAD_NAMES[mode]
        _PAD_OPS[key] = _op_and_backward(f"_{name.lower()}_pad{k}d", f"{name}Pad{k}DBackward0",
                                         resample.gather_kernel, _pad_backward_kernel, "index_maps",
                                         shown=("SymInt[] padding",))
    return _PAD_OPS[key][0]


def _pad_backward_kernel(g, x, index_maps):
    return resample.scatter_kernel(g, index_maps, x.shape)


def _pad_value(value):
    """``F.pad``'s ``value`` as torch's C++ ``pad`` reads it, a ``float?``: a number as a double (2**70 is a
    double, 2**62 + 1 rounds, an int8 tensor refuses 300.0) and a complex number refused by its parser."""
    if isinstance(value, complex):
        raise TypeError(f"pad(): argument 'value' (position 4) must be float, not {type(value).__name__}")
    if isinstance(value, (int, float, np.number, np.bool_)):
        return float(value)  # (CPython's OverflowError for an int beyond the doubles)
    return value


def pad(input: Tensor, pad: tuple, mode: str = "constant", value: float | None = None) -> Tensor:
    """PyTorch's ``F.pad``: pads the last ``len(pad) // 2`` dims, last dim first. (``F.pad`` calls it through an
    argument guard, as torch's Python ``F.pad`` calls its C++ ``pad``: a float or a tensor for ``pad`` fails
    here and is refused in the parser's words.)"""
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad must be a sequence of ints, not {type(pad).__name__}")
    pad = tuple(operator.index(p) for p in pad)
    # (torch's checks, in its order: the mode, the length of pad, then what the mode allows)
    if mode != "constant" and mode not in _PAD_NAMES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else _pad_value(value))
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    x = input._data
    k = len(pad) // 2
    if k > 3 or not (k + 1 <= x.ndim <= k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {x.ndim}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D "
            "input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 "
            "dimensions)")
    # (checked from the last dim, as PyTorch does: that decides which error a user sees first)
    for i in reversed(range(k)):
        dim = x.ndim - k + i
        j = k - 1 - i  # pad pairs are listed from the last dim
        lo, hi = pad[2 * j], pad[2 * j + 1]
        if mode == "reflect" and (lo >= x.shape[dim] or hi >= x.shape[dim]):
            if STATE.grad_enabled and input.requires_grad:
                next_sequence_nr()  # (PyTorch's reflection_pad node exists when its kernel raises this)
            raise RuntimeError(
                f"Argument #{4 + 2 * j}: Padding size should be less than the corresponding input dimension, but "
                f"got: padding ({lo}, {hi}) at dimension {dim} of input {list(x.shape)}"
            )
    if STATE.special and STATE.autocast is not None:  # (CPU autocast: torch's reflection/replication pads in float)
        from ...amp.cpu_policy import call_with_policy, padding_policy

        policy = padding_policy(mode, k)
        if policy is not None:
            return call_with_policy(policy, globals()["pad"], (input, pad, mode, value), {})
    if mode == "circular" and (min(pad) < 0 or (STATE.grad_enabled and input.requires_grad)):
        # (PyTorch's composite where its graph is recorded or a negative pad crops before another dim wraps; else
        # one gather gives the same values, some ten times faster)
        return _pad_circular(input, pad)
    maps = []
    for i in range(k):
        dim = x.ndim - k + i
        j = k - 1 - i
        lo, hi = pad[2 * j], pad[2 * j + 1]
        size = x.shape[dim]
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + lo + hi <= 0:
            raise RuntimeError(f"input tensor has size 0 at dimension {dim} after padding")
        maps.append(resample.pad_index_map(size, lo, hi, mode))
    out = _pad_op(mode, k)(input, tuple(maps), pad)
    # (torch's circular padding copies the input into its result, then each positive pad: in any mode, those writes
    # count, as _pad_circular's do)
    return counted_writes(out, 1 + sum(p > 0 for p in pad)) if mode == "circular" else out


def _pad_circular(input: Tensor, pad: tuple) -> Tensor:
    """PyTorch's ``_pad_circular``, composite as there, so that its graph (CopySlices over slices) and its
    values are torch's: the input, cropped by negative pads, is copied into the middle of a new tensor, then
    each padded dim, the last first, is wrapped by copying slices of the output itself. So a negative pad in one
    dim crops before another dim wraps, and a corner is copied from what earlier steps wrote. (Where a negative
    pad leaves a dim's middle empty, PyTorch's wraps read its uninitialized memory; here, zeros.)"""
    shape = input._data.shape
    k = len(pad) // 2
    batch_dims = len(shape) - k
    out_shape = list(shape)
    for i in range(k):
        lo, hi = pad[2 * (k - i - 1)], pad[2 * (k - i - 1) + 1]
        size = shape[batch_dims + i]
        out_shape[batch_dims + i] = size + lo + hi
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[batch_dims + i] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = new_zeros(input, out_shape)
    out_middle, in_middle = out, input
    for i in range(k):
        dim = k - i + batch_dims - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        out_middle = _slice(out_middle, dim, max(lo, 0), out_shape[dim] - max(hi, 0))
        in_middle = _slice(in_middle, dim, max(-lo, 0), shape[dim] - max(-hi, 0))
    copy_(out_middle, in_middle)
    for i in range(k):
        dim = k - i + batch_dims - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        end = out_shape[dim] - max(hi, 0)
        if lo > 0:
            copy_(_slice(out, dim, 0, lo), _slice(out, dim, end - lo, end))
        if hi > 0:
            start = max(lo, 0)
            copy_(_slice(out, dim, out_shape[dim] - hi, out_shape[dim]), _slice(out, dim, start, start + hi))
    return out


def _slice(t: Tensor, dim: int, start: int, end: int) -> Tensor:
    """``t[..., start:end]`` along ``dim`` as the ``slice`` operator makes it, by the views' lean path."""
    return call_plain(slice_op, t, dim, start, end)


# ---- interpolate / adaptive average pooling ----------------------------------------------------------------

_UPSAMPLE_OPS: dict[str, object] = {}


_SCALES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}


# Each upsampling's CPU kernel, by kind and dims, as PyTorch names it in its dtype errors (the 2-d ones under
# their channels-last names whatever the layout, the others computing indices and weights), and whether it has
# a uint8 (image) path: nearest in every dimension, bilinear and bicubic.
_KERNELS = {("nearest", 1): ("compute_indices_weights_nearest", True),
            ("nearest", 2): ("upsample_nearest2d_channels_last", True),
            ("nearest", 3): ("compute_indices_weights_nearest", True),
            ("linear", 1): ("compute_indices_weights_linear", False),
            ("linear", 2): ("upsample_bilinear2d_channels_last", True),
            ("linear", 3): ("compute_indices_weights_linear", False),
            ("bicubic", 2): ("compute_indices_weights_cubic", True)}


def _named(name: str, kind: str, k: int):
    """The upsample operator recording node ``name``, with the arguments PyTorch's node saves: output_size,
    one scale per dimension (and align_corners for the interpolating kinds, "linear" and "bicubic")."""
    if name not in _UPSAMPLE_OPS:
        shown = ("SymInt[] output_size",) + tuple(f"float? {s}" for s in _SCALES[k])
        meta, dtypes = ("self_sym_sizes",), _KERNELS[kind, k]
        if kind == "nearest":
            _UPSAMPLE_OPS[name] = resample.named_gather(name, shown, meta=meta, dtypes=dtypes)
        else:
            _UPSAMPLE_OPS[name] = resample.named_linear(name, shown + ("bool align_corners",), meta=meta,
                                                        dtypes=dtypes)
    return _UPSAMPLE_OPS[name]


def adaptive_avg_pool(input: Tensor, output_size: tuple) -> Tensor:
    x = input._data
    k = len(output_size)
    if k == 1:  # as PyTorch: the 2-d pool of the input unsqueezed at -2, squeezed back
        if x.ndim not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 "
                               "'self' (while checking arguments for adaptive_avg_pool1d)")
        return squeeze(adaptive_avg_pool(unsqueeze(input, -2), (1, output_size[0])), -2)
    outs = tuple(int(o) for o in output_size)
    if any(o < 0 for o in outs):  # (the 3-d message lists its sizes as "{d, h,w}")
        listed = f"{outs[0]}, {outs[1]}" + (f",{outs[2]}" if k == 3 else "")
        raise RuntimeError(f"adaptive_avg_pool{k}d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{listed}}}")
    if all(o == 1 for o in outs):
        # PyTorch takes the mean over the pooled dims then (MeanBackward1), before any check of the input's
        # dims: a 2-d input to the 2-d pool (a 3-d one to the 3-d pool) gives its mean, a 1-d one mean's error
        return _restrided_like_input(mean_dims(input, tuple(range(-1, -k - 1, -1)), True), x, k)
    if x.ndim not in (k + 1, k + 2):
        raise RuntimeError(
            f"adaptive_avg_pool{k}d(): Expected {k + 1}D or {k + 2}D tensor, but got {list(x.shape)}"
        )
    sizes = x.shape[x.ndim - k :]
    # (the pooling kernels, not the mean, refuse empty dims: the 2-d one its two pooled dims only, so an empty
    # batch or channel dim passes; the 3-d one every dim but the first, a 4-d input's channels too)
    _check_pooled_nonempty(x, k, range(x.ndim - 2, x.ndim) if k == 2 else range(1, x.ndim))
    mats = tuple(resample.adaptive_avg_matrix(s, o) for s, o in zip(sizes, outs))
    return _adaptive_avg_pool_ops(k)[0](input, mats)


def _restrided_like_input(out: Tensor, x: np.ndarray, k: int) -> Tensor:
    """The all-ones pool's mean, given channels-last strides where the input suggests that format: ATen's
    composite restrides the mean in place (``as_strided_``, so AsStridedBackward1), as its own kernels would lay
    the result out."""
    if x.ndim != k + 2 or not suggests_channels_last(x):
        return out
    n, c = x.shape[:2]
    return as_strided_(out, (n, c) + (1,) * k, (c, 1) + (c,) * k)


def _check_pooled_nonempty(x: np.ndarray, k: int, dims: range, backward: bool = False) -> None:
    """adaptive_avg_pool{k}d's (``backward``: its backward's, of the gradient) refusal of an empty dim among
    ``dims``, the first such dim named."""
    op, name = (f"adaptive_avg_pool{k}d_backward", "grad_output") if backward else (f"adaptive_avg_pool{k}d", "input")
    for d in dims:
        if x.shape[d] == 0:
            raise RuntimeError(f"{op}(): Expected {name} to have non-zero size for non-batch dimensions, but {name} "
                               f"has sizes {list(x.shape)} with dimension {d} being empty")


_ADAPTIVE_OPS: dict[int, tuple] = {}


def _adaptive_avg_pool_ops(k: int) -> tuple:
    """``_adaptive_avg_pool{k}d`` (a separable linear map over the pooled dims) and its backward operator."""
    if k not in _ADAPTIVE_OPS:
        def backward_kernel(g, _x, mats):
            _check_pooled_nonempty(g, k, range(1, g.ndim), backward=True)  # (an empty batch passes)
            if k == 2 and g.dtype.kind == "f":  # (PyTorch's window-by-window order; 3-d stays a linear map)
                return adaptive_pool_cpu.adaptive_avg_pool2d_backward(g, _x)
            return resample.apply_matrices(g, resample.transposed(mats))

        def kernel(x, mats):
            # PyTorch's CPU kernels take floating types only (the mean for an output of ones takes complex too);
            # the 2-d one returns an empty output before it looks at the dtype
            out_shape = x.shape[: x.ndim - k] + tuple(m.shape[0] for m in mats)
            if k == 2 and math.prod(out_shape) == 0:
                return np.empty(out_shape, x.dtype)
            check_float(x, pool_kernel_name(x, "adaptive_avg_pool2d") if k == 2 else "adaptive_avg_pool3d_cpu")
            if k == 2 and x.dtype.kind == "f":
                return adaptive_pool_cpu.adaptive_avg_pool2d(x, mats[0].shape[0], mats[1].shape[0])
            return resample.apply_matrices(x, mats)

        _ADAPTIVE_OPS[k] = _op_and_backward(f"_adaptive_avg_pool{k}d", f"AdaptiveAvgPool{k}DBackward0",
                                            kernel, backward_kernel, "matrices")
    return _ADAPTIVE_OPS[k]


def _op_and_backward(name: str, node_name: str, kernel, backward_kernel, arg: str, shown: tuple = ()) -> tuple:
    """An operator ``name(self, arg)``, linear in ``self``, and its backward operator, as PyTorch's pairs
    (``reflection_pad1d`` / ``reflection_pad1d_backward``): the backward takes the forward's input too and is
    differentiated w.r.t. it with a zero gradient, so under create_graph=True the gradient is connected to the
    input (node ``...BackwardBackward0``); its derivative in grad_output is the forward map again."""

    def forward_vjp(ctx, g):
        (x,) = ctx.saved_tensors
        return backward(g, x, *ctx.attrs)

    tail, forward_kernel, rules = resample.shown_args(kernel, arg, shown)
    forward = defop(f"{name}(Tensor self, Any {arg}{tail}) -> Tensor", forward_kernel, vjp=forward_vjp,
                    saves=("self",), node_name=node_name, **rules)
    _, backward_kernel, rules = resample.shown_args(backward_kernel, arg, shown)
    backward = defop(f"{name}_backward(Tensor grad_output, Tensor self, Any {arg}{tail}) -> Tensor",
                     backward_kernel, vjp=constant_in_self(lambda ctx, gg: forward(gg, *ctx.attrs)),
                     differentiable=("grad_output", "self"),
                     node_name=resample.backward_node_name(node_name), **rules)
    return forward, backward


_LINEAR_NODES = {1: "UpsampleLinear1DBackward0", 2: "UpsampleBilinear2DBackward0", 3: "UpsampleTrilinear3DBackward0"}


def _output_sizes(x: np.ndarray, output_size, scale_factors) -> tuple:
    """ATen's upsample ``.vec`` overloads: the output size given (the kernel gets no scales), or the input's size
    times each scale factor, rounded down (the kernel gets the scales). What is not an int or a float fails."""
    if output_size is not None:
        return tuple(as_int(o) for o in output_size), (None,) * len(output_size)
    if isinstance(scale_factors[0], Tensor):  # (torch's parser types the first factor only: a later tensor passes)
        raise TypeError("scale_factors must be a sequence of floats")  # (the guard words it as torch's parser)
    scales = tuple(s.__float__() for s in scale_factors)  # (``float("2")`` would read a string)
    return tuple(_scaled_size(n, s) for n, s in zip(x.shape[2:], scales)), scales


def _scaled_size(n: int, scale: float) -> int:
    """``n * scale`` rounded down, as an int64: a NaN or out-of-range product is refused, as ATen's cast does."""
    size = n * scale
    if not -(2.0**63) <= size < 2.0**63:  # (NaN fails the comparison too)
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return int(math.floor(size))


_SPATIAL_LETTERS = {1: "W", 2: "HW", 3: "DHW"}


def _labelled(sizes: tuple) -> str:
    """``D: 4, H: 4, W: 4``: sizes by the letters PyTorch's upsample checks name their dims with."""
    return ", ".join(f"{letter}: {n}" for letter, n in zip(_SPATIAL_LETTERS[len(sizes)], sizes))


def _check_upsample(x: np.ndarray, sizes: tuple) -> None:
    """upsample_{1,2,3}d_common_check: positive input and output spatial sizes, then a non-empty input (an
    empty batch passes, an empty channel dim does not). The 1-d message words it differently ("and output")."""
    spatial, sizes = tuple(x.shape[2:]), tuple(sizes)
    if min(spatial + sizes) <= 0:
        joint = " and output" if len(sizes) == 1 else " output"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({_labelled(spatial)})"
                           f"{joint} ({_labelled(sizes)})")
    if x.size == 0 and math.prod(x.shape[1:]) == 0:
        raise RuntimeError(f"Non-empty {x.ndim}D data tensor expected but got a tensor with sizes {list(x.shape)}")


def upsample_nearest(input: Tensor, output_size, scale_factors, *, exact: bool = False) -> Tensor:
    """``upsample_nearest{k}d`` (``_upsample_nearest_exact{k}d`` with ``exact``), of an input of k spatial dims."""
    x = input._data
    k = x.ndim - 2
    sizes, scales = _output_sizes(x, output_size, scale_factors)
    _check_upsample(x, sizes)
    axes = tuple(zip(x.shape[2:], sizes, scales))
    # (measured: torch's nearest backward maps a kept or exactly doubled size by index, as its 2-d forward does;
    # its 1-d and 3-d forward kernels, and nearest-exact's, follow the scale factor)
    backward = tuple(resample.nearest_index_map(n, o, s, exact, not exact) for n, o, s in axes)
    forward = backward if k == 2 or exact else tuple(resample.nearest_index_map(n, o, s) for n, o, s in axes)
    maps = resample.NearestMaps(forward, backward)
    prefix = "UpsampleNearestExact" if exact else "UpsampleNearest"
    return _named(f"{prefix}{k}DBackward0", "nearest", k)(input, maps, sizes, *scales)


def upsample_interpolating(input: Tensor, output_size, align_corners: bool, scale_factors, *, mode: str) -> Tensor:
    """``upsample_linear1d``, ``upsample_bilinear2d``, ``upsample_trilinear3d`` or ``upsample_bicubic2d`` (``mode``)
    of an input of as many spatial dims."""
    if align_corners.__class__ is not bool:  # (a truthy object would do; torch's parser takes a bool only)
        raise TypeError("align_corners must be a bool")
    x = input._data
    k = x.ndim - 2
    sizes, scales = _output_sizes(x, output_size, scale_factors)
    _check_upsample(x, sizes)
    # (the plan computes PyTorch's indices and weights per axis, and replays its kernels' arithmetic)
    plan = shared_plan("cubic" if mode == "bicubic" else "linear", tuple(x.shape[2:]), tuple(sizes),
                         align_corners, tuple(scales))
    if mode == "bicubic":
        return _named("UpsampleBicubic2DBackward0", "bicubic", 2)(input, plan, sizes, *scales, align_corners)
    return _named(_LINEAR_NODES[k], "linear", k)(input, plan, sizes, *scales, align_corners)


# ---- anti-aliased upsampling -------------------------------------------------------------------------------

_AA_OPS: dict[str, tuple] = {}
_AA_SHOWN = "SymInt[2] output_size, bool align_corners, float? scales_h, float? scales_w"
_AA_ATTRS = ("output_size", "align_corners", "scales_h", "scales_w")


def _antialiased_ops(mode: str) -> tuple:
    """``_upsample_{mode}2d_aa`` and its backward (which takes the input's sizes, not the input: PyTorch's node
    keeps only ``self_sym_sizes``), each linear in its tensor, the other's adjoint."""
    if mode not in _AA_OPS:
        name, node = f"_upsample_{mode}2d_aa", f"Upsample{mode.capitalize()}2DAaBackward0"

        def forward_vjp(ctx, g):
            plan, output_size, align_corners, scales_h, scales_w = ctx.attrs
            return backward(g, plan, output_size, tuple(ctx.input_shapes[0]), align_corners, scales_h, scales_w)

        def backward_vjp(ctx, gg):
            plan, output_size, _, align_corners, scales_h, scales_w = ctx.attrs
            return forward(gg, plan, output_size, align_corners, scales_h, scales_w)

        forward = defop(f"{name}(Tensor self, Any plan, {_AA_SHOWN}) -> Tensor",
                        lambda x, plan, *shown: _antialiased_forward(x, plan), vjp=forward_vjp,
                        attrs=("plan",) + _AA_ATTRS, hidden=("plan",), meta=("self_sym_sizes",), node_name=node)
        backward = defop(f"{name}_backward(Tensor grad_output, Any plan, SymInt[2] output_size, SymInt[4] input_size, "
                         "bool align_corners, float? scales_h, float? scales_w) -> Tensor",
                         lambda g, plan, *shown: interp_aa_cpu.backward(g, plan), vjp=backward_vjp,
                         attrs=("plan", "output_size", "input_size", "align_corners", "scales_h", "scales_w"),
                         hidden=("plan", "input_size"), node_name=node.replace("Backward0", "BackwardBackward0"))
        _AA_OPS[mode] = forward, backward
    return _AA_OPS[mode]


def _antialiased_forward(x: np.ndarray, plan) -> np.ndarray:
    """The forward kernel: PyTorch computes weights (for float32 and float64 only) where a dim's size changes."""
    if tuple(x.shape[2:]) != tuple(plan.out_sizes) and x.dtype not in (np.float32, np.float64):
        if x.dtype == np.uint8:  # (torch's uint8 image path, in 16-bit fixed point, is not reproduced)
            raise NotImplementedError("interpolate(antialias=True) of uint8 images is not supported")
        raise NotImplementedError(
            f'"compute_index_ranges_weights" not implemented for \'{scalar_type_name(x.dtype)}\'')
    return interp_aa_cpu.forward(x, plan)


def upsample_antialiased(input: Tensor, output_size, align_corners: bool, scale_factors, *, mode: str) -> Tensor:
    """``_upsample_bilinear2d_aa``, ``_upsample_bicubic2d_aa`` or ``_upsample_lanczos2d_aa`` (``mode``) of a
    4-d input."""
    if align_corners.__class__ is not bool:  # (as upsample_interpolating: torch's parser takes a bool only)
        raise TypeError("align_corners must be a bool")
    x = input._data
    sizes, scales = _output_sizes(x, output_size, scale_factors)
    _check_upsample(x, sizes)
    plan = interp_aa_cpu.AntialiasPlan(mode, tuple(x.shape[2:]), tuple(sizes), align_corners, tuple(scales))
    return _antialiased_ops(mode)[0](input, plan, sizes, align_corners, *scales)


# ---- embedding ---------------------------------------------------------------------------------------------


def _check_index_type(indices: np.ndarray, argument: str, name: str) -> None:
    """ATen's checkScalarTypes for an ``indices`` argument (``argument`` as it numbers it: ``#1 'indices'``)."""
    if indices.dtype.kind not in "iu":
        raise RuntimeError(
            f"Expected tensor for argument {argument} to have one of the following scalar types: Long, "
            f"Int; but got {tensor_type_string(indices)} instead (while checking arguments for {name})"
        )


def _check_indices(indices, num_weights: int) -> None:
    _check_index_type(indices, "#1 'indices'", "embedding")
    if indices.size and (indices.min() < 0 or indices.max() >= num_weights):
        raise IndexError("index out of range in self")


def _embedding_kernel(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    as_int(padding_idx)  # (an int: torch's parser refuses 1.5, which the lookup would not use)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(indices, weight.shape[0])
    return np.take(weight, indices, axis=0)


def _row_scale(indices, num_weights: int, padding_idx: int, scale_grad_by_freq: bool, dtype) -> np.ndarray:
    """Factor per looked-up row: 0 for the padding row, 1/count with scale_grad_by_freq."""
    flat = indices.reshape(-1)
    scale = np.ones(flat.shape, dtype=dtype)
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        scale = scale / counts[flat]
    if padding_idx is not None and padding_idx >= 0:
        scale[flat == padding_idx] = 0
    return scale


def _embedding_backward_kernel(g, indices, num_weights, padding_idx, scale_grad_by_freq):
    dim = g.shape[-1]
    rows = (
        g.reshape(indices.size, dim)  # (not -1: NumPy cannot infer it where the rows are empty, dim 0)
        * _row_scale(indices, num_weights, padding_idx, scale_grad_by_freq, g.dtype)[:, None]
    )
    out = np.zeros((num_weights, dim), dtype=g.dtype)
    add_rows_at(out, indices.reshape(-1), rows)
    return out


def _embedding_gather_kernel(w, indices, padding_idx, scale_grad_by_freq):
    rows = np.take(w, indices.reshape(-1), axis=0)
    rows = rows * _row_scale(indices, w.shape[0], padding_idx, scale_grad_by_freq, w.dtype)[:, None]
    return rows.reshape(indices.shape + (w.shape[1],))


def _embedding_vjp(ctx, g):
    (indices,) = ctx.saved_tensors
    padding_idx, scale_grad_by_freq, _ = ctx.attrs
    return embedding_backward(g, indices, ctx.input_shapes[0][0], padding_idx, scale_grad_by_freq)


def _embedding_backward_vjp(ctx, gg):
    (indices,) = ctx.saved_tensors
    _, padding_idx, scale_grad_by_freq = ctx.attrs
    return embedding_gather(gg, indices, padding_idx, scale_grad_by_freq)


def _embedding_gather_vjp(ctx, g):
    (indices,) = ctx.saved_tensors
    padding_idx, scale_grad_by_freq = ctx.attrs
    return embedding_backward(g, indices, ctx.input_shapes[0][0], padding_idx, scale_grad_by_freq)


def _embedding_jvp(args, outs, tangents):
    # Linear in the weight: the tangent rows are looked up like the weight rows. The padding row's tangent
    # is kept (only its *gradient* is zeroed by definition, so the double-vjp JVP would be wrong here).
    return embedding(tangents[0], *args[1:])


embedding = defop(
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
    "bool sparse=False) -> Tensor",
    _embedding_kernel,
    vjp=_embedding_vjp,
    saves=("indices",),
    attrs=("padding_idx", "scale_grad_by_freq", "sparse"),
    differentiable=("weight",),  # the indices get no edge, as in PyTorch
    jvp=_embedding_jvp,
    meta=("weight_sym_argsize_0",),
    complex_grad=False,  # (a real-only derivative in PyTorch)
)
embedding_backward = defop(
    "_nn_embedding_backward(Tensor grad, Tensor indices, SymInt num_weights, SymInt padding_idx, "
    "bool scale_grad_by_freq) -> Tensor",
    _embedding_backward_kernel,
    vjp=_embedding_backward_vjp,
    saves=("indices",),
    attrs=("num_weights", "padding_idx", "scale_grad_by_freq"),
    differentiable=("grad",),
    node_name="EmbeddingBackwardBackward0",
)
embedding_gather = defop(
    "_nn_embedding_gather(Tensor weight, Tensor indices, SymInt padding_idx, bool scale_grad_by_freq) "
    "-> Tensor",
    _embedding_gather_kernel,
    vjp=_embedding_gather_vjp,
    saves=("indices",),
    attrs=("padding_idx", "scale_grad_by_freq"),
    differentiable=("weight",),
    node_name="EmbeddingBackward0",
)


def embedding_renorm_(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> None:
    """Rescale, in place and without autograd, the looked-up rows whose norm exceeds ``max_norm``."""
    max_norm.__float__(), norm_type.__float__()  # (numbers: NumPy would take None as a norm's order)
    w = weight._data
    if w.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {w.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for embedding_renorm_)")
    _check_index_type(indices._data, "#2 'indices'", "embedding_renorm_")
    rows = np.unique(indices._data.reshape(-1))
    try:
        _renorm_rows(weight, rows, max_norm, norm_type)
    except IndexError:
        _renorm_up_to_bad_row(weight, rows, max_norm, norm_type)
        raise


def _renorm_rows(weight: Tensor, rows: np.ndarray, max_norm: float, norm_type: float) -> None:
    w = weight._data
    picked = w[rows]
    norms = np.linalg.norm(picked, ord=norm_type, axis=1) if norm_type != 2 else np.sqrt((picked * picked).sum(axis=1))
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    weight._before_write()
    w[rows] *= scale[:, None].astype(w.dtype)
    weight._bump_version()


def _renorm_up_to_bad_row(weight: Tensor, rows: np.ndarray, max_norm: float, norm_type: float) -> None:
    """PyTorch renorms the sorted rows one by one with ``self[index]``, so the rows before the first index out of
    range are renormed before select() refuses that one."""
    n = weight.shape[0]
    first = int(np.flatnonzero((rows < -n) | (rows >= n))[0])
    _renorm_rows(weight, rows[:first], max_norm, norm_type)
    raise IndexError(f"select(): index {rows[first]} out of range for tensor of size {list(weight.shape)} at "
                     "dimension 0")


# ---- one_hot -----------------------------------------------------------------------------------------------


def _one_hot_kernel(t, num_classes=-1):
    num_classes = as_int(num_classes)  # (torch's parser refuses 2.5, which NumPy would take)
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size:
        if t.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if t.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (t[..., None] == np.arange(num_classes)).astype(np.int64)


one_hot = defop("one_hot(Tensor self, int num_classes=-1) -> Tensor", _one_hot_kernel)


# ---- dropout -----------------------------------------------------------------------------------------------


# SELU's negative saturation value, alpha * scale, as ATen writes it (alpha dropout drops units to it)
_SELU_SATURATION = 1.7580993408473766


def _keep(shape: tuple, p: float, like: np.ndarray | None = None) -> np.ndarray:
    """Which units survive: torch's ``bernoulli_(1 - p)``, one double uniform per unit from the default generator.
    The noise is ``empty_like(like)`` where ``like`` is given: its units are drawn in that layout's memory order
    (a transposed input's mask is filled column by column), else in C order."""
    draws = _rng(None).bernoulli(np.full(math.prod(shape), 1.0 - p), double=True)
    if like is None or like.flags.c_contiguous:  # (the common case: memory order is C order)
        return draws.reshape(shape)
    noise = empty_strided(shape, preserve_format_strides(like), np.dtype(bool))
    in_memory_order(noise)[...] = draws.reshape(in_memory_order(noise).shape)
    return noise


def _check_probability(p: float, error: type[Exception]) -> None:
    if p < 0 or p > 1:
        raise error(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input: Tensor, p: float, train: bool, *, alpha: bool = False, inplace: bool = False,
                  mask_shape: tuple | None = None, feature: bool = False) -> Tensor:
    """ATen's _dropout_impl, behind nn.functional's dropouts and torch's: one draw per element (or per entry of
    ``mask_shape``, the feature variants'), scaled by 1/(1-p); alpha dropout maps dropped units to SELU's
    saturation value with an affine correction (MulBackward0 then AddBackward0, as ATen's multiply and add_)."""
    x = input._data
    if p == 0 or not train or x.size == 0:
        return input
    multiply = mul_ if inplace else mul
    if p == 1:
        return multiply(input, _wrap(np.zeros((), dtype=x.dtype)))
    if feature:  # (ATen's make_feature_noise, so its check comes after the returns above)
        mask_shape = _feature_noise_shape(x)
    # PyTorch draws its noise like the input (bernoulli_ has no complex kernel), then divides it by 1 - p in place
    if x.dtype.kind == "c":
        raise unsupported("bernoulli_scalar_cpu_", x.dtype)
    if not _dt.is_floating_np(x.dtype):
        raise RuntimeError(f"result type Float can't be cast to the desired output type {type_name(x.dtype)}")
    keep = (_keep(mask_shape, p) if mask_shape else _keep(x.shape, p, like=x)).astype(x.dtype)
    # (each in-place step on the noise rounds to its dtype, computed with the number as a float for a half tensor:
    # ATen's opmath)
    opmath = np.dtype(np.float32) if x.dtype.itemsize < 4 else x.dtype
    if not alpha:  # noise.div_(1 - p)
        return multiply(input, _wrap((keep.astype(opmath) / opmath.type(1 - p)).astype(x.dtype)))
    a = 1.0 / np.sqrt((_SELU_SATURATION * _SELU_SATURATION * p + 1) * (1 - p))
    b = (keep - 1).astype(opmath) * opmath.type(_SELU_SATURATION * a)  # b = noise.add(-1).mul_(alpha * a)...
    b = (b.astype(x.dtype).astype(opmath) + opmath.type(_SELU_SATURATION * a * p)).astype(x.dtype)  # .add_(alpha*a*p)
    return add_(multiply(input, _wrap((keep.astype(opmath) * opmath.type(a)).astype(x.dtype))), _wrap(b))


def dropout(
    input: Tensor,
    p: float = 0.5,
    training: bool = True,
    inplace: bool = False,
    mask_shape: tuple | None = None,
) -> Tensor:
    """nn.functional's dropout (a bad p is its ValueError); ``mask_shape`` for the channel-wise variants."""
    _check_probability(p, ValueError)
    return _dropout_impl(input, p, training, inplace=inplace, mask_shape=mask_shape)


def aten_dropout(input: Tensor, p: float, train: bool, *, feature: bool, alpha: bool, inplace: bool) -> Tensor:
    """torch.dropout / alpha_dropout / feature_dropout / feature_alpha_dropout and their in-place forms (a bad
    p is ATen's RuntimeError); the feature variants draw one unit per (sample, channel)."""
    _check_probability(p, RuntimeError)
    return _dropout_impl(input, p, train, alpha=alpha, inplace=inplace, feature=feature)


def _feature_noise_shape(x: np.ndarray) -> tuple:
    if x.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return x.shape[:2] + (1,) * (x.ndim - 2)


def _dropout_scale(p: float, train) -> float:
    """The scale native_dropout's backward applies: 1 in evaluation, 1/(1-p) in training (0 when p == 1)."""
    if train is None or not train:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


def _native_dropout_kernel(x, p, train=None):
    if x.size == 0:  # (PyTorch returns before any check, its output and mask made like the input)
        return copy_preserving_layout(x), copy_preserving_layout(x)  # (the mask of its dtype, not bool)
    if train is None or train:
        if not 0 <= 1 - p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
        if x.dtype.kind in "biu":  # (PyTorch scales the masked input in place by a float)
            raise RuntimeError(f"result type Float can't be cast to the desired output type {type_name(x.dtype)}")
        keep = _keep(x.shape, p, like=x)  # (p == 1 too: PyTorch draws its bernoulli_(0))
        scale = np.asarray(_dropout_scale(p, True), dtype=x.dtype)
        return like_self((x * keep * scale).astype(x.dtype, copy=False), x), keep
    return x.copy(), np.ones(x.shape, dtype=bool)


def _native_dropout_vjp(ctx, g, _g_mask=None):
    # PyTorch's native_dropout_backward is composite on the CPU: grad * (mask.type_as(grad) * scale), one
    # MulBackward0 against a constant
    (mask,) = ctx.saved_tensors
    p, train = ctx.attrs
    dtype = g._data.dtype
    return mul(g, _wrap(mask._data.astype(dtype) * np.asarray(_dropout_scale(p, train), dtype=dtype)))


# torch.native_dropout: (output, keep mask); its node saves p and the mask (PyTorch's result1)
native_dropout = defop(
    "native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
    _native_dropout_kernel,
    vjp=_native_dropout_vjp,
    saves=("result1",),
    attrs=("p", "train"),
    hidden=("train",),
    nondiff_outputs=(1,),
    node_name="NativeDropoutBackward0",
)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropped units go to SELU's negative saturation value; an affine map keeps mean and variance."""
    _check_probability(p, ValueError)
    return _dropout_impl(input, p, training, alpha=True, inplace=inplace)


# ---- distances ---------------------------------------------------------------------------------------------


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    denom = clamp_min(vector_norm(input, p, (dim,), True), eps)
    return div(input, expand(denom, tuple(input._data.shape)))


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """PyTorch's formula: each input over its norm (clamped at ``eps`` without autograd), then summed."""
    from ..creation import clone

    common = result_dtype(x1._data, x2._data)  # (checked first; an integer input is fine beside a float one)
    if not _dt.is_floating_np(common):
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {type_name(common)}")
    shape = broadcast_shapes(x1._data.shape, x2._data.shape)
    if not shape:
        raise RuntimeError("cosine_similarity requires at least one dimension")
    # an integer input is converted to the common dtype (it has no gradient, so no node), a float one is not
    x1, x2 = (_wrap(x._data.astype(common)) if not _dt.is_floating_np(x._data.dtype) else x for x in (x1, x2))
    if x1._data.shape != x2._data.shape:  # PyTorch's expand_outplace: both expanded (x2 first, as its C++
        x2 = expand(x2, shape)             # evaluates the arguments), or neither
        x1 = expand(x1, shape)
    norms = []
    for x in (x1, x2):
        n = clone(vector_norm(x, 2, (dim,), True))
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            n._before_write()
            np.maximum(n._data, eps, out=n._data)  # the clamp changes values but not the gradient path
            n._bump_version()
        finally:
            STATE.grad_enabled = prev
        norms.append(n)
    # (x1 / n1) * (x2 / n2): C++ evaluates the right operand first, which numbers the nodes (backward order)
    right = div(x2, norms[1])
    return sum_dims(mul(div(x1, norms[0]), right), dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    out_nd = max(x1._data.ndim, x2._data.ndim)
    p, eps = as_double(p), as_double(eps)  # (C++ doubles: 2**70 is one)
    diff = add_scalar(sub(x1, x2), eps)  # x1 - x2 + eps: a C++ number, the Scalar overload
    return norm(diff, p, (out_nd - 1,) if out_nd else None, keepdim)
