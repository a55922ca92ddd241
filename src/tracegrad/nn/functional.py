"""``tracegrad.nn.functional``: PyTorch's ``torch.nn.functional`` names, signatures and argument handling.

The operators themselves live in ``tracegrad.ops.nn_ops``; this module only normalises arguments
(reduction strings, int-or-tuple sizes, 'same' padding, unbatched inputs) the way PyTorch's wrappers do.
"""

from __future__ import annotations

import functools
import math
import warnings

from .._arg_parser import guard_errors
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled as _grad_enabled
from ..ops import pointwise as _pw
from ..ops.nn_ops import activation as _act
from ..ops.nn_ops import conv as _conv
from ..ops.nn_ops import grid_sample as _grid
from ..ops.nn_ops import linear as _linear
from ..ops.nn_ops import loss as _loss
from ..ops.nn_ops import misc as _misc
from ..ops.nn_ops import norm as _norm
from ..ops.nn_ops import pool as _pool
from ..ops.nn_ops import unpool as _unpool
from ..ops.nn_ops._basic import abs as _abs
from ..ops.nn_ops._common import broadcast_shapes, check_float, expand_param
from ..ops.nn_ops.attention import scaled_dot_product_attention
from ..ops.nn_ops.distance import pdist
from ..ops.nn_ops.margin_loss import log_sigmoid as _log_sigmoid
from ..ops.nn_ops.pixel_shuffle import channel_shuffle, native_channel_shuffle, pixel_shuffle, pixel_unshuffle
from ..ops.nn_ops.public import implicit_softmax_dim
from ..ops.nn_ops.public import log_softmax as _log_softmax
from ..ops.nn_ops.public import softmax as _softmax
from ..ops.unary import sign as _sign
from ..ops.views import squeeze as _squeeze
from ..ops.views import unsqueeze as _unsqueeze
from ._bag_ctc import ctc_loss, embedding_bag
from ._extra_losses import (
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._multihead_attention import multi_head_attention_forward

__all__ = [
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
    "linear",
    "bilinear",
    "relu",
    "relu_",
    "relu6",
    "leaky_relu",
    "leaky_relu_",
    "elu",
    "elu_",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "gelu",
    "silu",
    "mish",
    "softplus",
    "hardtanh",
    "hardtanh_",
    "hardswish",
    "hardsigmoid",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "softmin",
    "threshold",
    "threshold_",
    "logsigmoid",
    "softsign",
    "tanhshrink",
    "glu",
    "prelu",
    "hardshrink",
    "softshrink",
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "native_channel_shuffle",
    "pdist",
    "rrelu",
    "rrelu_",
    "gumbel_softmax",
    "local_response_norm",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "cosine_embedding_loss",
    "triplet_margin_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "triplet_margin_with_distance_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "layer_norm",
    "group_norm",
    "batch_norm",
    "instance_norm",
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv3d",
    "conv_transpose3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "embedding",
    "embedding_bag",
    "ctc_loss",
    "pad",
    "one_hot",
    "normalize",
    "cosine_similarity",
    "pairwise_distance",
    "unfold",
    "fold",
    "interpolate",
    "upsample",
    "affine_grid",
    "grid_sample",
]


# ---- argument helpers --------------------------------------------------------------------------------------

_pair = expand_param


class _Reduction:
    @staticmethod
    def get_enum(reduction: str) -> int:
        if reduction == "none":
            return 0
        if reduction == "mean":
            return 1
        if reduction == "elementwise_mean":
            warnings.warn(
                "reduction='elementwise_mean' is deprecated, please use reduction='mean' instead.",
                stacklevel=3,
            )
            return 1
        if reduction == "sum":
            return 2
        raise ValueError(f"{reduction} is not a valid value for reduction")

    @staticmethod
    def legacy_get_string(size_average, reduce, emit_warning: bool = True) -> str:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
        if emit_warning:
            warnings.warn(
                f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                stacklevel=3,
            )
        return ret


def _named(fn, name: str):
    fn.__name__ = fn.__qualname__ = name
    return fn


def _reduction(size_average, reduce, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _Reduction.legacy_get_string(size_average, reduce)
    return reduction


def _warn_target_size(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():  # (target first: a list target fails on .size, as in torch)
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
            "same size.",
            stacklevel=3,
        )


# ---- out= for the builtins that have it ---------------------------------------------------------------------


def _takes_out(op_name: str):
    """For the nn functions PyTorch binds straight to an operator with an ``out=`` overload (gelu, linear,
    avg_pool2d...): the result stored into ``out`` as out= variants store it, and torch's error, naming the
    operator, when an input requires grad."""
    def wrap(fn):
        @functools.wraps(fn)
        def call(*args, out: Tensor | None = None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            from ..autograd.grad_mode import no_grad
            from ..ops.variants import _store, out_with_grad_error

            given = (*args, *kwargs.values())
            if _grad_enabled() and (out.requires_grad or any(isinstance(a, Tensor) and a.requires_grad
                                                             for a in given)):
                raise out_with_grad_error(op_name)
            with no_grad():
                _store(out, fn(*args, **kwargs))
            return out
        return call
    return wrap


# ---- linear ------------------------------------------------------------------------------------------------


@_takes_out("linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    return _linear.linear(input, weight, bias)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    return _linear.bilinear(input1, input2, weight, bias)


# ---- activations -------------------------------------------------------------------------------------------


def _need_tensor(fn: str, input) -> None:
    """torch's parser refuses a list or a number where its activations take a Tensor (tracegrad's kernels would
    fail on it with an AttributeError, or convert it)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    _need_tensor("relu", input)
    return _act.relu_(input) if inplace else _act.relu_fast(input)


def relu_(input: Tensor) -> Tensor:
    return _act.relu_(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0, 6, inplace)  # ATen's relu6: int Scalars, as the node shows them


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return (_act.threshold_ if inplace else _act.threshold)(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _act.threshold_(input, threshold, value)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return (_act.hardtanh_ if inplace else _act.hardtanh)(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    _need_tensor("leaky_relu", input)
    return (_act.leaky_relu_ if inplace else _act.leaky_relu)(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _act.leaky_relu_(input, negative_slope)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: in training each negative element's slope is drawn from U(lower, upper) with the
    default generator (``manual_seed`` makes it reproducible); in evaluation the slope is (lower + upper) / 2."""
    return (_act.rrelu_ if inplace else _act.rrelu)(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    return _act.rrelu_(input, lower, upper, training, generator)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return (_act.elu_ if inplace else _act.elu)(input, alpha, 1, 1)  # the schema's int defaults


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _act.elu_(input, alpha, 1, 1)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _act.selu_(input) if inplace else _act.selu(input)


def selu_(input: Tensor) -> Tensor:
    return _act.selu_(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return (_act.celu_ if inplace else _act.celu)(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _act.celu_(input, alpha)


@_takes_out("gelu")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    _need_tensor("gelu", input)
    return _act.gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _act.silu_(input) if inplace else _act.silu(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _act.mish_(input) if inplace else _act.mish(input)


@_takes_out("softplus")
def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    return _act.softplus(input, beta, threshold)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _act.hardswish_(input) if inplace else _act.hardswish(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _act.hardsigmoid_(input) if inplace else _act.hardsigmoid(input)


def sigmoid(input: Tensor) -> Tensor:
    return _pw.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return _pw.tanh(input)


@_takes_out("log_sigmoid_forward")
def logsigmoid(input: Tensor) -> Tensor:
    return _log_sigmoid(input)


def softsign(input: Tensor) -> Tensor:
    return _pw.div(input, _pw.add(_abs(input), 1))


def tanhshrink(input: Tensor) -> Tensor:
    return _pw.sub(input, _pw.tanh(input))


@_takes_out("hardshrink")
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return _act.hardshrink(input, lambd)


@_takes_out("softshrink")
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return _act.softshrink(input, lambd)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    from ..ops.views import chunk

    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.shape[dim] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim % input.ndim} is size {input.shape[dim]}"
        )
    a, b = chunk(input, 2, dim)
    return _pw.mul(a, _pw.sigmoid(b))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    return _act.prelu(input, weight)


def _softmax_dim(name: str, input: Tensor, dim, stacklevel: int) -> int:
    return implicit_softmax_dim(name, input.ndim, stacklevel + 1) if dim is None else dim


def _need_method(fn: str, input) -> None:
    """torch's softmax family calls ``input.softmax(...)``: anything but a tensor has no such attribute."""
    if not isinstance(input, Tensor):
        raise AttributeError(f"'{type(input).__name__}' object has no attribute '{fn}'")


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    _need_method("softmax", input)
    dim = _softmax_dim("softmax", input, dim, _stacklevel)
    return _softmax_method(input, dim) if dtype is None else _softmax_method(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    _need_method("log_softmax", input)
    dim = _softmax_dim("log_softmax", input, dim, _stacklevel)
    return _log_softmax_method(input, dim) if dtype is None else _log_softmax_method(input, dim, dtype=dtype)


# (torch's ``F.softmax`` calls ``input.softmax(dim)``: a wrong ``dim`` is refused in that method's words)
_softmax_method = guard_errors("softmax", _softmax, method=True)
_log_softmax_method = guard_errors("log_softmax", _log_softmax, method=True)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    dim = _softmax_dim("softmin", input, dim, _stacklevel)
    return _softmax(_pw.neg(input), dim, dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A sample of the Gumbel-Softmax distribution (one-hot with ``hard``, differentiated as the soft sample).

    Written as PyTorch's Python composite, operator for operator, so the recorded graph is the same."""
    from ..ops.creation import empty_like, zeros_like

    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()  # ~Gumbel(0, 1), from the default generator
    gumbels = (logits + gumbels) / tau  # ~Gumbel(logits, tau)
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft  # the reparameterization trick
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft  # straight through: y_hard's values, y_soft's gradient


# ---- losses ------------------------------------------------------------------------------------------------


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    reduction = _reduction(size_average, reduce, reduction)
    return _loss.cross_entropy(
        input, target, weight, _Reduction.get_enum(reduction), ignore_index, label_smoothing
    )


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    reduction = _reduction(size_average, reduce, reduction)
    return _loss.nll_loss(input, target, weight, _Reduction.get_enum(reduction), ignore_index)


def _check_weight_size(weight: Tensor, input: Tensor) -> None:
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")


def _reduce_weighted(loss: Tensor, weight: Tensor, reduction: str, plain_mean: bool = False) -> Tensor:
    """Reduce an already weighted elementwise loss; 'mean' divides by the weights' sum unless ``plain_mean``."""
    from ..ops.reductions import sum as _sum
    from ..ops.reductions_extra import mean as _mean

    if reduction == "none":
        return loss
    if reduction == "sum":
        return _sum(loss, None, False, None)
    if reduction == "mean":
        if plain_mean:
            return _mean(loss)  # loss.mean(): MeanBackward0, as in PyTorch
        return _pw.div(_sum(loss, None, False, None), _sum(weight, None, False, None))
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _broadcast(input: Tensor, target: Tensor) -> tuple:
    from ..ops.views import expand

    shape = broadcast_shapes(tuple(input.shape), tuple(target.shape))
    a = input if tuple(input.shape) == shape else expand(input, shape)
    b = target if tuple(target.shape) == shape else expand(target, shape)
    return a, b


def _square(x: Tensor) -> Tensor:
    return _pw.mul(x, x)


def _diff_loss_fn(name: str, of_diff, fused):
    """mse_loss/l1_loss: ``fused`` over the broadcast pair, or ``of_diff(input - target)`` weighted by ``weight``."""

    def loss(
        input: Tensor,
        target: Tensor,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        weight: Tensor | None = None,
    ) -> Tensor:
        _warn_target_size(input, target)
        reduction = _reduction(size_average, reduce, reduction)
        a, b = _broadcast(input, target)
        if weight is not None:
            elementwise = of_diff(_pw.sub(a, b))
            _check_weight_size(weight, input)
            return _reduce_weighted(_pw.mul(elementwise, weight), weight, reduction)
        return fused(a, b, _Reduction.get_enum(reduction))

    return _named(loss, name)


mse_loss = _diff_loss_fn("mse_loss", _square, _loss.mse_loss)
l1_loss = _diff_loss_fn("l1_loss", _abs, _loss.l1_loss)


def smooth_l1_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0
) -> Tensor:
    _warn_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    a, b = _broadcast(input, target)
    return _loss.smooth_l1_loss(a, b, _Reduction.get_enum(reduction), beta)


def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0, weight: Tensor | None = None
) -> Tensor:
    _warn_target_size(input, target)
    a, b = _broadcast(input, target)
    if weight is not None:
        _check_weight_size(weight, input)
        weighted = _pw.mul(_loss.huber_loss(a, b, 0, delta), weight)
        # unlike mse/l1, PyTorch takes the plain mean here
        return _reduce_weighted(weighted, weight, reduction, plain_mean=True)
    return _loss.huber_loss(a, b, _Reduction.get_enum(reduction), delta)


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    reduction = _reduction(size_average, reduce, reduction)
    enum = _Reduction.get_enum(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        from ..ops.shape_extra import broadcast_shapes as broadcast_sizes
        from ..ops.views import expand

        weight = expand(weight, tuple(broadcast_sizes(target.size(), weight.size())))
    return _loss.binary_cross_entropy(input, target, weight, enum)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    reduction = _reduction(size_average, reduce, reduction)
    enum = _Reduction.get_enum(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _loss.binary_cross_entropy_with_logits(input, target, weight, pos_weight, enum)


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _Reduction.legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            stacklevel=2,
        )
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _loss.kl_div(input, target, reduction, log_target)


# ---- dropout -----------------------------------------------------------------------------------------------


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    return _misc.dropout(input, p, training, inplace)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, channel_dim: int) -> Tensor:
    """Dropout of whole channels: one draw per index up to ``channel_dim`` (the batch and channel dims)."""
    if training and p > 0 and input.ndim < channel_dim + 1:  # (torch returns the input first when p is 0)
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[: channel_dim + 1]) + (1,) * (input.ndim - channel_dim - 1)
    return _misc.dropout(input, p, training, inplace, mask_shape=shape)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _deprecated_feature_input(name: str, nd: int, spatial: int) -> None:
    warnings.warn(f"{name}: Received a {nd}-D input to {name}, which is deprecated and will result in an error in a "
                  "future release. To retain the behavior and silence this warning, please use dropout instead. Note "
                  f"that {name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, "
                  f"a channel dimension, and an optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D "
                  "inputs).", stacklevel=3)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
            "batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, 1 if input.ndim == 3 else 0)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """As torch 2.13: other ranks than 3 and 4 only warn, and a 3-D input is read as (N, C, L) (with a warning),
    not as one unbatched (C, H, W) image."""
    _check_p(p)
    nd = input.ndim
    if nd not in (3, 4):
        _deprecated_feature_input("dropout2d", nd, 2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, 1)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    nd = input.ndim
    if nd not in (4, 5):
        _deprecated_feature_input("dropout3d", nd, 3)
    return _feature_dropout(input, p, training, inplace, 1 if nd == 5 else 0)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """SELU-preserving dropout: dropped units go to the negative saturation value, then an affine fix."""
    return _misc.alpha_dropout(input, p, training, inplace)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (one draw per sample and channel)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _misc.aten_dropout(input, p, training, feature=True, alpha=True, inplace=inplace)


# ---- unpooling ---------------------------------------------------------------------------------------------


def _unpool_output_size(input: Tensor, kernel_size: tuple, stride: tuple, padding: tuple, output_size) -> list:
    """The unpooled spatial size: the default inverse of the pooling's size formula, or ``output_size``
    (optionally with batch and channel sizes) when it is within one stride of it."""
    n = len(kernel_size)
    default = [(input.shape[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        size = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(
                f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length of "
                f"'{len(output_size)}'"
            )
        for d in range(n):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
        size = output_size
    for d in range(n):
        if size[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                f"output_size[{d}]={size[d]}"
            )
    return list(size)


def _unpool_args(input: Tensor, n: int, kernel_size, stride, padding, output_size) -> tuple:
    kernel = _pair(kernel_size, n)
    strides = kernel if stride is None else _pair(stride, n)
    pads = _pair(padding, n)
    if isinstance(output_size, int):
        output_size = [output_size]
    return _unpool_output_size(input, kernel, strides, pads, output_size), strides, pads


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    size, _, _ = _unpool_args(input, 1, kernel_size, stride, padding, output_size)
    # PyTorch runs the 2-d kernel on a trailing size-1 dim
    out = _unpool.max_unpool2d(_unsqueeze(input, -1), _unsqueeze(indices, -1), size + [1])
    return _squeeze(out, -1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    size, _, _ = _unpool_args(input, 2, kernel_size, stride, padding, output_size)
    return _unpool.max_unpool2d(input, indices, size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    size, strides, pads = _unpool_args(input, 3, kernel_size, stride, padding, output_size)
    return _unpool.max_unpool3d(input, indices, size, list(strides), list(pads))


# ---- normalisation -----------------------------------------------------------------------------------------


def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    return _norm.layer_norm(input, shape, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """``input / sqrt(mean(input², over the last dims) + eps) * weight``, composed as PyTorch's rms_norm (pow,
    mean, an in-place add of eps, rsqrt, mul, mul), computed in float32 for half inputs. ``eps`` None: the
    dtype's machine epsilon."""
    from .. import finfo, float32
    from ..ops.scalar_overloads import add_scalar_

    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    sizes = tuple(input.shape)
    if sizes[len(sizes) - len(shape):] != shape or len(shape) > len(sizes):
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in shape)}], but got input of size{list(sizes)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    dims = [len(sizes) - 1 - i for i in range(len(shape))]  # (innermost first, as PyTorch lists them)
    x = input.to(float32) if input.dtype.itemsize < 4 and input.is_floating_point() else input
    eps_value = finfo(input.dtype).eps if eps is None else eps
    inverse_rms = add_scalar_(x.pow(2).mean(dims, keepdim=True), eps_value).rsqrt()  # (C++'s add_: AddBackward1)
    result = (x * inverse_rms).type_as(input)
    return result * weight if weight is not None else result


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    shape = list(input.shape)
    if num_groups and shape[1] % num_groups == 0:  # (one value per group and sample cannot be normalized)
        _verify_batch_size([shape[0] * shape[1] // num_groups, num_groups] + shape[2:])
    return _norm.group_norm(input, num_groups, weight, bias, eps)


def _spatial_numel(size) -> int:
    count = 1
    for s in size[2:]:
        count *= s
    return count


def _verify_batch_size(size) -> None:
    if size[0] * _spatial_numel(size) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    if training:
        _verify_batch_size(input.size())
    return _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    if use_input_stats:
        size = input.size()
        if _spatial_numel(size) == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")
    return _norm.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
                        ) -> Tensor:
    """Each element over (k + alpha * the mean of the squares of ``size`` neighbouring channels) ** beta, as
    PyTorch's Python composite computes it: pad the channel dim, average-pool it (avg_pool2d for 3-D input,
    avg_pool3d over a 5-D view otherwise)."""
    dim = input.dim()
    if dim < 3:
        # (PyTorch's message, with the spaces of its source's line continuation)
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _pool.avg_pool3d(div, (size, 1, 1), (1, 1, 1), (0, 0, 0), False, True, None).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# ---- convolution -------------------------------------------------------------------------------------------


def _conv_fn(n: int):
    def conv(
        input: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
    ) -> Tensor:
        return _conv.conv_nd(input, weight, bias, stride, padding, dilation, groups, n)

    return _named(conv, f"conv{n}d")


def _conv_transpose_fn(n: int):
    def conv_transpose(
        input: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        dilation=1,
    ) -> Tensor:
        return _conv.conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, n)

    return _named(conv_transpose, f"conv_transpose{n}d")


conv1d = _conv_fn(1)
conv2d = _conv_fn(2)
conv_transpose1d = _conv_transpose_fn(1)
conv_transpose2d = _conv_transpose_fn(2)
conv3d = _conv_fn(3)
conv_transpose3d = _conv_transpose_fn(3)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    return _conv.unfold(input, _pair(kernel_size, 2), _pair(dilation, 2), _pair(padding, 2), _pair(stride, 2))


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    return _conv.fold(
        input,
        _pair(output_size, 2),
        _pair(kernel_size, 2),
        _pair(dilation, 2),
        _pair(padding, 2),
        _pair(stride, 2),
    )


# ---- pooling -----------------------------------------------------------------------------------------------


def _stride_or_kernel(stride, kernel: tuple, n: int) -> tuple:
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        return kernel
    return _pair(stride, n)


def _stride_or_empty(stride, n: int = 2) -> tuple:
    """A 2d/3d pooling's stride as PyTorch passes it on: ``()`` when not given (the kernel size then)."""
    return () if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else _pair(stride, n)


def _triple(value, message: str, allow_empty: bool = False) -> tuple:
    """A 3d pooling's int-or-tuple argument as a 3-tuple; PyTorch's ``message`` for a sequence of another length."""
    if isinstance(value, (tuple, list)) and len(value) not in (1, 3) and not (allow_empty and len(value) == 0):
        raise RuntimeError(message)
    return _pair(value, 3)


def _pool1d_as_2d(name: str, input: Tensor, kernel_size, stride, padding) -> tuple:
    """A 1d pooling's input and kernel, stride, padding as the 2d pooling over a height-1 dimension takes them."""
    if input.ndim not in (2, 3):  # (each in torch's words)
        if name == "avg_pool1d":
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                               "'self' (while checking arguments for avg_pool1d)")
        raise RuntimeError(f"{name}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, "
                           f"but got:{list(input.shape)}")
    k = _pair(kernel_size, 1)
    s = _stride_or_kernel(stride, k, 1)
    return _unsqueeze(input, -2), (1,) + k, (1,) + s, (0,) + _pair(padding, 1)


def max_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    k = _pair(kernel_size, 2)
    out, indices = _pool.max_pool2d_with_indices(
        input, k, _stride_or_empty(stride), _pair(padding, 2), _pair(dilation, 2), ceil_mode
    )
    return (out, indices) if return_indices else out


def max_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    x, k, s, p = _pool1d_as_2d("max_pool1d", input, kernel_size, stride, padding)
    if s[1] <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s[1]}")
    if p[1] > k[1] // 2:  # (PyTorch's max_pool1d checks this itself, in its own words)
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p[1]} and "
                           f"kernel_size={k[1]}")
    width = _pool.pool_out_size(x.shape[-1], k[1], s[1], p[1], _pair(dilation, 1)[0], ceil_mode)
    if width < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {width}")
    if not return_indices and not (input.requires_grad and _grad_enabled()):
        check_float(input._data, "max_pool1d_impl")  # (torch's path without indices: a kernel for floats only)
    out, indices = _pool.max_pool2d_with_indices(x, k, s, p, (1,) + _pair(dilation, 1), ceil_mode)
    out = _squeeze(out, -2)
    return (out, _squeeze(indices, [-2])) if return_indices else out


@_takes_out("avg_pool2d")
def avg_pool2d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override=None,
) -> Tensor:
    k = _pair(kernel_size, 2)
    return _pool.avg_pool2d(
        input,
        k,
        _stride_or_empty(stride),
        _pair(padding, 2),
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def _fractional(n: int, input: Tensor, kernel_size, output_size, output_ratio, return_indices: bool,
                _random_samples):
    from ..ops.nn_ops.fractional_pool import sized_fractional_max_pool

    out, indices = sized_fractional_max_pool(input, n, kernel_size, output_size, output_ratio, _random_samples)
    return (out, indices) if return_indices else out


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """Max pooling over pseudo-randomly placed windows whose count is ``output_size`` (or the input size times
    ``output_ratio``); ``_random_samples`` (N, C, 2) fixes the placement."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """The 3-d fractional max pooling; ``_random_samples`` is (N, C, 3)."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    return _fractional(2, input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    return _fractional(3, input, kernel_size, output_size, output_ratio, True, _random_samples)


def max_pool3d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    either = "must either be a single int, or a tuple of three ints"
    k = _triple(kernel_size, f"max_pool3d: kernel_size {either}")
    _triple(stride or (), "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints", True)
    out, indices = _pool.max_pool3d_with_indices(
        input, k, _stride_or_empty(stride, 3), _triple(padding, f"max_pool3d: padding {either}"),
        _triple(dilation, "max_pool3d: dilation must be either a single int, or a tuple of three ints"), ceil_mode
    )
    return (out, indices) if return_indices else out


@_takes_out("avg_pool3d")
def avg_pool3d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override=None,
) -> Tensor:
    k = _triple(kernel_size, "avg_pool3d: kernel_size must be a single int, or a tuple of three ints")
    _triple(stride or (), "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints", True)
    p = _triple(padding, "avg_pool3d: padding must be a single int, or a tuple of three ints")
    return _pool.avg_pool3d(input, k, _stride_or_empty(stride, 3), p, ceil_mode, count_include_pad, divisor_override)


def avg_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    x, k, s, p = _pool1d_as_2d("avg_pool1d", input, kernel_size, stride, padding)
    out = _pool.avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, None)
    return _squeeze(out, -2)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    sizes = (output_size, output_size) if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    return _misc.adaptive_avg_pool(input, sizes)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    sizes = (output_size,) * 3 if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    if len(sizes) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    return _misc.adaptive_avg_pool(input, sizes)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    size = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
    return _misc.adaptive_avg_pool(input, (size,))


def _adaptive_max_pool(input: Tensor, output_size, return_indices: bool, n: int):
    sizes = (output_size,) * n if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    if len(sizes) == n:  # None keeps that input dim's size
        sizes = tuple(input.shape[-n + i] if s is None else s for i, s in enumerate(sizes))
    out, indices = (_pool.adaptive_max_pool2d if n == 2 else _pool.adaptive_max_pool3d)(input, sizes)
    return (out, indices) if return_indices else out


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    return _adaptive_max_pool(input, output_size, return_indices, 2)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    return _adaptive_max_pool(input, output_size, return_indices, 3)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """PyTorch's composite: the 2-D operator over an unsqueezed height of 1, then squeezed back."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for adaptive_max_pool1d)")
    size = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
    out, indices = _pool.adaptive_max_pool2d(_unsqueeze(input, -2), (1, size))
    out, indices = _squeeze(out, -2), _squeeze(indices, -2)
    return (out, indices) if return_indices else out


# PyTorch's *_with_indices functions: the pooling with indices, returned whatever return_indices says.


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False
                                     ) -> tuple[Tensor, Tensor]:
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False
                                     ) -> tuple[Tensor, Tensor]:
    return adaptive_max_pool2d(input, output_size, return_indices=True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False
                                     ) -> tuple[Tensor, Tensor]:
    return adaptive_max_pool3d(input, output_size, return_indices=True)


def _lp_pool(input: Tensor, norm_type: float, kernel_size, stride, ceil_mode: bool, n: int) -> Tensor:
    """PyTorch's lp_pool{n}d composite: (sum over each window of x ** p) ** (1 / p), as the window's average
    times its size; a negative average (odd p) is zeroed through sign * relu(abs), so its gradient is 0."""
    max_pool, avg_pool = {1: (max_pool1d, avg_pool1d), 2: (max_pool2d, avg_pool2d), 3: (max_pool3d, avg_pool3d)}[n]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:  # (as torch's: the C++ ``avg_pool`` takes no None stride)
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    if n == 1:
        window = kernel_size  # (PyTorch multiplies by the argument as given)
    else:
        window = math.prod(_pair(kernel_size, n))
    return (_sign(out) * relu(_abs(out))).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


# ---- embedding, padding, resampling, distances -------------------------------------------------------------


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    if padding_idx is not None:
        n = weight.shape[0]
        if padding_idx > 0:
            if padding_idx >= n:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        from ..autograd.grad_mode import no_grad

        with no_grad():
            _misc.embedding_renorm_(weight, input, max_norm, norm_type)
    return _misc.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    return _pad_operator(input, pad, mode, value)


# (torch's ``F.pad`` is Python, calling the C++ ``pad``: its argument errors are that operator's parser's)
_pad_operator = guard_errors("pad", _misc.pad)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    return _misc.one_hot(tensor, num_classes)


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    result = _misc.normalize(input, p, dim, eps)
    if out is not None:
        out.copy_(result)
        return out
    return result


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    return _misc.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    return _misc.pairwise_distance(x1, x2, p, eps, keepdim)


def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias: bool = False,
) -> Tensor:
    return _misc.interpolate(
        input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias
    )


def upsample(
    input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None
) -> Tensor:
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- spatial transformers ----------------------------------------------------------------------------------

_ALIGN_CORNERS_DEFAULT = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please specify "
    "align_corners=True if the old behavior is desired. See the documentation of grid_sample for details."
)
_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def affine_grid(theta: Tensor, size: list[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, *spatial, 2 or 3) of a batch of affine matrices, for ``grid_sample``."""
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) in (4, 5):
        dims = len(size) - 2
        if theta.dim() != 3 or theta.shape[-2] != dims or theta.shape[-1] != dims + 1:
            raise ValueError(f"Expected a batch of {dims}D affine matrices of shape Nx{dims}x{dims + 1} for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-dims:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _grid.affine_grid_generator(theta, size, align_corners)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` at the normalised locations ``grid`` (x first), as PyTorch's grid_sampler."""
    if mode not in _GRID_MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _GRID_PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
        align_corners = False
    return _grid.grid_sampler(input, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode], align_corners)
