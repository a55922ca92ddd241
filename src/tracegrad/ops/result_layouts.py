"""Which layout each operator gives its new results, as PyTorch allocates them.

NumPy's kernels return whatever layout NumPy picks (it follows the inputs' order, and gives dims of size 1
and empty arrays strides of its own). PyTorch's operators fall into these families, and ``OpDef`` applies
its operator's rule to every array it returns (``rule_for``):
- pointwise operators: TensorIterator's layout (_strides.py), over the operands in ATen's order (which for a few
  is not the schema's: ``rsub``, ``leaky_relu_backward``, rrelu's backward);
- the operators that allocate with ``at::empty`` or clone contiguously: reductions, scans, normalisations,
  padding, ``masked_fill``...: C-contiguous with PyTorch's strides;
- the operators that clone ``self`` (``MemoryFormat::Preserve``) and write into the copy: ``self``'s exact
  strides where ``self`` is dense, else contiguous;
- convolutions, pooling, upsampling, padding and pixel shuffles: channels-last where an operand's strides
  suggest it (``suggest_memory_format``), else contiguous; the normalisations' backward kernels: where the
  input's strides suggest it (not grad_output's);
- the ``*_scatter`` operators: ``self``'s strides and offset, in a copy of its whole storage;
- advanced indexing (``index``): TensorIterator's layout over the source restrided and the index tensors;
- ``cat`` and the operators ATen builds on it (``stack``, ``roll``): the memory format all of ``cat``'s inputs
  suggest, else contiguous (``cat_memory_format``).
Every other operator keeps NumPy's layout: where it differs from PyTorch's the difference is listed in
tests/ops/test_result_layouts_vs_torch.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .._strides import (
    contiguous_as_torch,
    dense_in_order,
    has_torch_contiguous_strides,
    in_copy_of_storage,
    in_torch_layout,
    index_strides,
    like_self,
    with_strides,
)
from ..memory_format import (
    contiguous_format,
    format_strides,
    memory_format,
    suggested_format,
    suggests_channels_last,
)
from ._util import wrap_dim

# The operators whose results TensorIterator allocates: ATen's ``pointwise`` operators (but ``clone``,
# ``masked_fill``, ``mvlgamma`` and the two-output ``frexp``, which allocate otherwise; ``max``/``min`` here are
# the reductions), ``complex`` and ``polar``, and the activations' backward kernels. A composite of pointwise ops
# (``hardswish``) is laid out as its last op lays it out, which for these is the same.
TENSOR_ITERATOR_OPS = frozenset((
    "abs", "acos", "acosh", "add", "addcdiv", "addcmul", "angle", "asin", "asinh", "atan", "atan2", "atanh",
    "binary_cross_entropy_backward", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "ceil", "celu", "clamp", "clamp_max", "clamp_min", "complex", "copysign",
    "cos", "cosh", "deg2rad", "digamma", "div", "elu", "elu_backward", "eq", "erf", "erfc", "erfinv", "exp",
    "exp2", "expm1", "floor", "fmax", "fmin", "fmod", "frac", "gcd", "ge", "gelu", "gelu_backward", "gt",
    "hardshrink", "hardshrink_backward", "hardsigmoid", "hardsigmoid_backward", "hardswish", "hardswish_backward",
    "hardtanh", "hardtanh_backward", "heaviside", "hypot", "i0", "igamma", "igammac", "isfinite", "isinf", "isnan",
    "isneginf", "isposinf", "lcm", "ldexp", "le", "leaky_relu", "leaky_relu_backward", "lerp", "lgamma", "log",
    "log10", "log1p", "log2", "logaddexp", "logaddexp2", "logical_and", "logical_not", "logical_or", "logical_xor",
    "logit", "lt", "maximum", "minimum", "mish", "mul", "nan_to_num", "ne", "neg", "nextafter", "polar",
    "polygamma", "pow", "rad2deg", "reciprocal", "relu", "remainder", "round", "rrelu_with_noise_backward",
    "rsqrt", "rsub", "sgn", "sigmoid", "sigmoid_backward", "sign", "signbit", "silu", "sin", "sinc", "sinh",
    "softplus", "softplus_backward", "softshrink", "softshrink_backward", "special_airy_ai", "special_bessel_j0",
    "special_bessel_j1", "special_bessel_y0", "special_bessel_y1", "special_chebyshev_polynomial_t",
    "special_chebyshev_polynomial_u", "special_chebyshev_polynomial_v", "special_chebyshev_polynomial_w",
    "special_entr", "special_erfcx", "special_hermite_polynomial_h", "special_hermite_polynomial_he",
    "special_i0e", "special_i1", "special_i1e", "special_laguerre_polynomial_l", "special_legendre_polynomial_p",
    "special_log_ndtr", "special_modified_bessel_i0", "special_modified_bessel_i1", "special_modified_bessel_k0",
    "special_modified_bessel_k1", "special_ndtri", "special_scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1", "special_shifted_chebyshev_polynomial_t",
    "special_shifted_chebyshev_polynomial_u", "special_shifted_chebyshev_polynomial_v",
    "special_shifted_chebyshev_polynomial_w", "special_spherical_bessel_j0", "special_xlog1py", "special_zeta",
    "sqrt", "sub", "tan", "tanh", "tanh_backward", "threshold", "threshold_backward", "trunc", "where", "xlogy",
))
# ATen's operand order where it is not the schema's: ``rsub(self, other)`` computes ``other - self``.
SWAPPED_OPERANDS = frozenset({"rsub"})
# Backward kernels whose iterator takes ``self`` before ``grad_output`` (the schema's first tensor), so that the
# gradient keeps the input's layout (relu's raw backward rule in raw_backward.py follows the same order)
SELF_BEFORE_GRAD = frozenset({"leaky_relu_backward", "threshold_backward"})
# ``.Scalar`` overloads wrap their number in a 0-d tensor and call the Tensor overload, but for these, whose
# number is a parameter of a unary kernel
_SCALAR_PARAMETER = frozenset({"pow.Tensor_Scalar"})


def operand_positions(schema) -> tuple:
    """The positions of a pointwise schema's operands in ATen's order: its tensors, and a number in one of the
    first two places (``mul.Scalar``'s ``other``; not ``add``'s ``alpha``)."""
    positions = tuple(i for i, p in enumerate(schema.params)
                      if p.is_tensor or (i < 2 and p.type == "Scalar" and schema.full_name not in _SCALAR_PARAMETER))
    if schema.name in SELF_BEFORE_GRAD:
        return (positions[1], positions[0]) + positions[2:]
    return positions[::-1] if schema.name in SWAPPED_OPERANDS else positions


def follows_tensor_iterator(name: str) -> bool:
    """Whether operator ``name``'s new result is laid out by TensorIterator's rule."""
    return name in TENSOR_ITERATOR_OPS


# Allocated with ``at::empty`` (reductions, scans, repeat, norms' statistics, the gradients of bicubic and 3-d nearest
# upsampling: their ``_nn_*_backward``; ``glu_backward``'s ``resize_as_``) or cloned contiguously (masked_fill)
CONTIGUOUS_RESULTS = frozenset((
    "_cdist_forward", "_nn_layer_norm", "_nn_norm", "_nn_upsamplebicubic2dbackward0_backward",
    "_nn_upsamplenearest3dbackward0_backward", "_nn_upsamplenearestexact3dbackward0_backward",
    "adaptive_max_pool3d", "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "avg_pool3d",
    "avg_pool3d_backward", "col2im", "cummax", "cummin", "cumprod", "cumsum", "diagonal_backward", "gather",
    "glu_backward", "huber_loss_backward", "linalg_vector_norm", "log_sigmoid_forward", "logcumsumexp", "logsumexp",
    "masked_fill", "masked_scatter", "mean", "multi_margin_loss_backward", "mvlgamma", "nansum", "one_hot", "prod",
    "repeat", "rrelu_with_noise", "std", "std_mean", "sum", "tril", "triu", "var", "var_mean",
))

# Allocated in ``suggest_memory_format()`` of the input (and, for a convolution, of the weight)
SUGGESTED_LAYOUT_RESULTS = frozenset((
    "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "_nn_batch_norm_eval", "_nn_batch_norm_train",
    "_nn_group_norm", "_nn_max_pool2d_with_indices_backward", "_nn_max_pool3d_with_indices_backward",
    "_nn_upsamplebicubic2dbackward0", "_nn_upsamplebilinear2dbackward0", "_nn_upsamplebilinear2dbackward0_backward",
    "_nn_upsamplenearest2dbackward0", "_nn_upsamplenearest2dbackward0_backward", "_nn_upsamplenearest3dbackward0",
    "_nn_upsamplenearestexact2dbackward0", "_nn_upsamplenearestexact2dbackward0_backward",
    "_nn_upsamplenearestexact3dbackward0", "_nn_upsampletrilinear3dbackward0",
    "_nn_upsampletrilinear3dbackward0_backward", "_reflection_pad1d", "_reflection_pad1d_backward", "_reflection_pad2d",
    "_reflection_pad2d_backward", "_reflection_pad3d", "_reflection_pad3d_backward", "_replication_pad1d",
    "_replication_pad1d_backward", "_replication_pad2d", "_replication_pad2d_backward", "_replication_pad3d",
    "_replication_pad3d_backward", "_upsample_bicubic2d_aa", "_upsample_bilinear2d_aa",
    "_upsample_bilinear2d_aa_backward", "_upsample_lanczos2d_aa", "adaptive_max_pool2d", "adaptive_max_pool2d_backward",
    "avg_pool2d", "avg_pool2d_backward", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "pixel_shuffle", "pixel_unshuffle",
))

# Allocated in ``input.suggest_memory_format()``, whatever grad_output's: the normalisations' backward kernels
INPUT_SUGGESTED_RESULTS = frozenset(("native_batch_norm_backward", "native_group_norm_backward"))

# ``self.clone()`` (or ``empty_like(self)``) written into; log_sigmoid_backward's self is its grad_output
SELF_LAYOUT_RESULTS = frozenset((
    "_conj", "_fake_quantize_learnable_per_channel_affine", "_fake_quantize_learnable_per_channel_affine_backward",
    "_fake_quantize_learnable_per_tensor_affine", "_fake_quantize_learnable_per_tensor_affine_backward",
    "_fake_quantize_per_tensor_affine_cachemask_tensor_qparams", "conj_physical",
    "fake_quantize_per_channel_affine_cachemask", "fake_quantize_per_tensor_affine_cachemask", "flip", "index_fill",
    "index_put", "log_sigmoid_backward", "put", "sort",
))

# ``clone_preserve_strides(self)`` written into: self's strides and offset in a copy of its whole storage
SCATTER_RESULTS = frozenset(("as_strided_scatter", "diagonal_scatter", "select_scatter", "slice_scatter"))

# A rule takes a result array, the operator's arguments (arrays for its tensors) and its operands' positions.
Rule = Callable[[np.ndarray, Sequence, tuple], np.ndarray]


def _contiguous(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    if result.__class__ is not np.ndarray or result.ndim < 1:
        return result
    return contiguous_as_torch(result)


def _like_self(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    """``self.clone()``'s layout (``preserve_format``)."""
    self = arrays[positions[0]]
    if result.__class__ is not np.ndarray or result.ndim < 1 or self.__class__ is not np.ndarray:
        return result
    return like_self(result, self) if self.shape == result.shape else contiguous_as_torch(result)


def in_suggested_format(result: np.ndarray, *sources) -> np.ndarray:
    """``result`` channels-last when it is 4-d (5-d) and one of the ``sources`` of its rank has strides that
    suggest it (``suggest_memory_format``); contiguous otherwise."""
    if result.__class__ is not np.ndarray or result.ndim < 1:
        return result
    if result.ndim in (4, 5):
        for a in sources:
            if a.__class__ is np.ndarray and a.ndim == result.ndim and suggests_channels_last(a):
                return with_strides(result, format_strides(result.shape, suggested_format(a)))
    return contiguous_as_torch(result)


def _suggested_by_input(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    """``input``'s (the operand after grad_output) suggested memory format."""
    return in_suggested_format(result, arrays[positions[1]])


def _suggested(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    """The operands' suggested memory format (a convolution's weight counts)."""
    return in_suggested_format(result, *(arrays[i] for i in positions))


def _indexed(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    """``index``'s result (advanced indexing): TensorIterator over the restrided source and the indices."""
    source, indices = arrays[0], arrays[1]
    if result.__class__ is not np.ndarray or result.ndim < 2 or source.__class__ is not np.ndarray:
        return result
    if len(indices) == 1 and result.size and has_torch_contiguous_strides(source) and (
            indices[0] is None or (indices[0].__class__ is np.ndarray and indices[0].ndim == 1)):
        # (one leading index of one dim into a contiguous source, and a result with elements: TensorIterator
        # leaves it contiguous, whatever the index's strides)
        return contiguous_as_torch(result)
    return with_strides(result, index_strides(result.shape, source, [
        None if ix is None else np.asarray(ix) for ix in indices]))


# Convolutions: their kernels keep channels-last, but for 5-d only oneDNN's (float32); double runs slow_conv3d,
# which is contiguous
CONVOLUTIONS = frozenset(("_nn_conv", "_nn_conv_input_grad", "_nn_conv_weight_grad", "convolution",
                          "convolution_backward"))


def _convolved(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    if result.__class__ is np.ndarray and result.ndim == 5 and result.dtype != np.float32:
        return contiguous_as_torch(result)
    return _suggested(result, arrays, positions)


def _selected(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    """``where``'s: TensorIterator's, its bool condition an operand that is never cast to the values' dtype."""
    return in_torch_layout(result, arrays, positions, uncast=1)


def _scattered(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    self = arrays[positions[0]]
    if result.__class__ is not np.ndarray or self.__class__ is not np.ndarray or self.shape != result.shape:
        return result
    return in_copy_of_storage(result, self)


def _padded(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    """``constant_pad_nd``'s: the suggested memory format, but with no positive pad ATen returns a clone of the
    input narrowed (``preserve_format``)."""
    source, pads = arrays[0], list(arrays[1])
    if result.__class__ is not np.ndarray or source.__class__ is not np.ndarray or any(p > 0 for p in pads):
        return _suggested(result, arrays, positions)
    cut = [slice(None)] * source.ndim
    for k in range(len(pads) // 2):  # (pairs from the last dim backwards: before, after)
        d = source.ndim - 1 - k
        cut[d] = slice(-pads[2 * k], source.shape[d] + pads[2 * k + 1])
    return like_self(result, source[tuple(cut)])


def cat_memory_format(inputs: Sequence) -> memory_format:
    """The format ATen's ``cat`` allocates its result in (``cat_compute_output_memory_format``): the one every
    input's strides suggest, contiguous as soon as one input suggests contiguous or two disagree. Every input
    counts, empty ones (which suggest contiguous) included."""
    found = None
    for a in inputs:
        fmt = suggested_format(a) if a.__class__ is np.ndarray else contiguous_format
        if fmt is contiguous_format or (found is not None and fmt is not found):
            return contiguous_format
        found = fmt
    return contiguous_format if found is None else found


def _in_format(result: np.ndarray, fmt: memory_format) -> np.ndarray:
    if fmt is contiguous_format:
        return contiguous_as_torch(result)
    return with_strides(result, format_strides(result.shape, fmt))


def _concatenated(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    """``cat``'s: allocated in ``cat_memory_format`` of its inputs."""
    if result.__class__ is not np.ndarray:
        return result
    if result.ndim in (4, 5):  # (only these ranks suggest another format than contiguous)
        return _in_format(result, cat_memory_format(arrays[0]))
    return contiguous_as_torch(result)


def view_strides(shape: tuple, strides: tuple, new_shape: tuple) -> tuple | None:
    """The strides ATen's ``view`` gives a tensor of ``shape`` and ``strides`` viewed as ``new_shape`` (as many
    elements), or None where no view has that shape (``computeStride``). The old dims fall into runs that step
    over one another; the new dims of a run get strides counted from the run's innermost stride, a new dim of
    size 1 the stride of the elements after it in its run (whatever stride an old one had). Strides in elements
    or, for a tensor with elements, in bytes: the rule scales with their unit."""
    if not shape:
        return (1,) * len(new_shape)
    if 0 in shape:
        return dense_in_order(new_shape, range(len(new_shape) - 1, -1, -1))
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base, old_count, new_count = strides[-1], 1, 1
    for d in range(len(shape) - 1, -1, -1):
        old_count *= shape[d]
        if d and (shape[d - 1] == 1 or strides[d - 1] == old_count * base):
            continue  # (the run goes on into dim d - 1)
        while view_d >= 0 and (new_count < old_count or new_shape[view_d] == 1):
            new[view_d] = new_count * base
            new_count *= new_shape[view_d]
            view_d -= 1
        if new_count != old_count:
            return None
        if d:
            base, old_count, new_count = strides[d - 1], 1, 1
    return tuple(new) if view_d == -1 else None


def _unsqueezed_last(a: np.ndarray) -> np.ndarray:
    """``a.unsqueeze(-1)`` with torch's strides (the new dim steps by 1), for the strides' sake only."""
    return np.lib.stride_tricks.as_strided(a[..., None], strides=a.strides + (a.itemsize,))


def _stacked(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    """``stack``'s: ATen's ``cat`` of the inputs along ``dim``, viewed with the new dim split off; or, for a new
    last dim, ``cat`` of the inputs unsqueezed there. So contiguous unless the inputs (unsqueezed) all suggest
    one channels-last format."""
    if result.__class__ is not np.ndarray or result.ndim < 4:  # (inputs of up to two dims suggest contiguous)
        return contiguous_as_torch(result) if result.__class__ is np.ndarray else result
    inputs, d = arrays[0], wrap_dim(arrays[1], result.ndim)
    if d == result.ndim - 1:
        if result.ndim > 5:
            return contiguous_as_torch(result)
        unsqueezed = [_unsqueezed_last(a) if a.__class__ is np.ndarray else a for a in inputs]
        return _in_format(result, cat_memory_format(unsqueezed))
    fmt = cat_memory_format(inputs) if result.ndim in (5, 6) else contiguous_format
    if fmt is contiguous_format:  # (a contiguous ``cat`` viewed is contiguous)
        return contiguous_as_torch(result)
    shape = result.shape
    joined_shape = shape[:d] + (shape[d] * shape[d + 1],) + shape[d + 2:]
    return with_strides(result, view_strides(joined_shape, format_strides(joined_shape, fmt), shape))


def stack_out_layout(result: np.ndarray, dim: int) -> np.ndarray:
    """The layout ``stack(..., out=)`` gives an ``out`` it resizes: ATen's ``stack_out`` resizes it contiguously
    and writes ``cat`` through a view of it; but for a new last dim it calls ``cat``'s out= variant, which resizes
    in ``cat``'s format (``_stacked``'s)."""
    if wrap_dim(dim, result.ndim) == result.ndim - 1:
        return result
    return contiguous_as_torch(result)


def _rolled(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    """``roll``'s: ATen rolls one dim at a time, each a ``cat`` of the two pieces the shift cuts (so laid out by
    ``cat_memory_format`` of those views); a roll of the flattened tensor is contiguous, and an empty tensor is
    cloned (``preserve_format``)."""
    source, shifts, dims = arrays[0], arrays[1], arrays[2]
    if result.__class__ is not np.ndarray or source.__class__ is not np.ndarray or result.shape != source.shape:
        return result
    dims = () if dims is None else tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if not dims:
        return contiguous_as_torch(result)
    if not source.size:
        return like_self(result, source)
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    rolled = source  # (laid out as the last roll's result: the next roll cuts its pieces from it)
    for shift, dim in zip(shifts, dims):
        d = wrap_dim(dim, source.ndim)
        start = (source.shape[d] - shift) % source.shape[d]
        cut = (_WHOLE,) * d
        pieces = (rolled[cut + (slice(start, None),)], rolled[cut + (slice(0, start),)])
        rolled = _in_format(result, cat_memory_format(pieces) if result.ndim in (4, 5) else contiguous_format)
    return rolled


_WHOLE = slice(None)


def _rrelu_backward_layout(result: np.ndarray, arrays: Sequence, positions: tuple) -> np.ndarray:
    """``rrelu_with_noise_backward``'s: ``noise * grad_output`` in training, else ``leaky_relu_backward``'s
    iterator (``self`` first)."""
    grad, self, noise = positions
    training = arrays[5]
    return in_torch_layout(result, arrays, (noise, grad) if training else (self, grad))


# Overloads of a TensorIterator operator whose structured meta function allocates its result contiguous before the
# iterator runs: ``pow.Scalar``'s ``set_output_raw_strided(0, exp.sizes(), {}, ...)`` (no strides), whatever the
# exponent's layout (``torch.pow(2, t)`` of a transposed or channels-last ``t``; ``float_power(2, t)`` through it)
CONTIGUOUS_OVERLOADS = frozenset({"pow.Scalar"})


def rule_for(name: str, full_name: str = "") -> Rule | None:
    """The layout rule of operator ``name``'s results (``full_name``: with its overload), or None to keep NumPy's."""
    if full_name in CONTIGUOUS_OVERLOADS:
        return _contiguous
    if name == "rrelu_with_noise_backward":
        return _rrelu_backward_layout
    if follows_tensor_iterator(name):
        return _selected if name == "where" else in_torch_layout
    if name in CONTIGUOUS_RESULTS:
        return _contiguous
    if name in SELF_LAYOUT_RESULTS:
        return _like_self
    if name in SCATTER_RESULTS:
        return _scattered
    if name in SUGGESTED_LAYOUT_RESULTS:
        return _suggested
    if name in INPUT_SUGGESTED_RESULTS:
        return _suggested_by_input
    if name in CONVOLUTIONS:
        return _convolved
    return {"index": _indexed, "cat": _concatenated, "stack": _stacked, "constant_pad_nd": _padded,
            "roll": _rolled}.get(name)
