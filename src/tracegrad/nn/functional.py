"""``tracegrad.nn.functional``: PyTorch's ``torch.nn.functional`` names, signatures and argument handling.

The operators themselves live in ``tracegrad.ops.nn_ops``; this module only normalises arguments
(reduction strings, int-or-tuple sizes, 'same' padding, unbatched inputs) the way PyTorch's wrappers do.

Most of torch's module is Python ending in a call of a C++-bound operator, with positional arguments, whose parser
refuses the user's mistakes under the operator's name (``F.cross_entropy(x, [0, 1])``: ``cross_entropy_loss():
argument 'target' (position 2) must be Tensor, not list``). So each function here does what torch's Python does,
in its order (what fails there fails with Python's own error), then calls a module-level ``_x_operator``,
``guard_errors(<torch's operator name>, implementation)``, with the arguments torch passes. A correct call pays that
one wrapper; the implementation fails on what the parser refuses (sizes read with ``operator.index``, not ``int``),
for the guard to answer in the parser's words. The names torch binds straight to C++ (``linear``, ``conv2d``,
``avg_pool2d``...) are guarded themselves (here, or by ``tracegrad._guard_arguments``).
"""

from __future__ import annotations

import functools
import math
import operator
import warnings

import numpy as np

from .._arg_parser import guard_errors, tp_name
from .._jit_internal import boolean_dispatch
from .._tensor import Tensor
from ..autograd.forward_ad import has_tangent as _has_tangent
from ..autograd.grad_mode import is_grad_enabled as _grad_enabled
from ..ops import creation as _creation
from ..ops import pointwise as _pw
from ..ops.inference_writes import counted_writes as _counted_writes
from ..ops.nn_ops import activation as _act
from ..ops.nn_ops import bag_ctc as _bag_ctc_ops
from ..ops.nn_ops import composite_losses as _composite_losses
from ..ops.nn_ops import conv as _conv
from ..ops.nn_ops import grid_sample as _grid
from ..ops.nn_ops import linear as _linear
from ..ops.nn_ops import loss as _loss
from ..ops.nn_ops import margin_loss as _margin_loss
from ..ops.nn_ops import misc as _misc
from ..ops.nn_ops import pool as _pool
from ..ops.nn_ops import public as _public
from ..ops.nn_ops import unpool as _unpool
from ..ops.nn_ops._basic import abs as _abs
from ..ops.nn_ops._common import as_int, aten_sizes, broadcast_shapes, check_float, expand_param, ntuple
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
from . import grad  # noqa: F401  (F.grad, as torch's module imports it)
from ._bag_ctc import embedding_bag
from ._extra_losses import gaussian_nll_loss, multilabel_soft_margin_loss, triplet_margin_with_distance_loss
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
    "linear_cross_entropy",
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
                "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
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


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None, *, out: Tensor | None = None) -> Tensor:
    if out is None:
        return _linear.linear(input, weight, bias)
    return _linear_into(input, weight, bias, out=out)


_linear_into = _takes_out("linear")(_linear.linear)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    return _linear.bilinear(input1, input2, weight, bias)


# (torch binds both to C++: their argument errors are the operators' parser's; nn.Linear calls the operator)
linear = guard_errors("linear", linear)
bilinear = guard_errors("bilinear", bilinear)
_linear_operator = guard_errors("linear", _linear.linear)


# ---- activations -------------------------------------------------------------------------------------------


def _not_tensor(fn: str, input) -> TypeError:
    """torch's parser refusing a list or a number where an activation takes a Tensor (tracegrad's kernels would
    fail on it with an AttributeError, or convert it)."""
    return TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {tp_name(input)}")


def _need_method(name: str, input) -> None:
    """torch's Python calls ``input.<name>(...)`` here: on anything but a tensor, Python's AttributeError."""
    if not isinstance(input, Tensor):
        getattr(input, name)  # (an object that has the method goes on, and fails further on, as in torch)


def _operators(name: str, fn, fn_=None, **bound) -> tuple:
    """The operator ``name`` and its in-place form ``name_``, each refusing a call's arguments in torch's words:
    (out of place, in place), to pick from by ``inplace``. ``fn_`` None: ``fn`` with ``inplace=True``, and both
    with the arguments ``bound``."""
    if fn_ is None:
        fn, fn_ = functools.partial(fn, inplace=False, **bound), functools.partial(fn, inplace=True, **bound)
    return guard_errors(name, fn), guard_errors(f"{name}_", fn_)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise _not_tensor("relu_" if inplace else "relu", input)
    return _act.relu_(input) if inplace else _act.relu_fast(input)


def relu_(input: Tensor) -> Tensor:
    return _act.relu_(input)


def _relu6(input: Tensor) -> Tensor:
    return _act.hardtanh(input, 0, 6)  # ATen's relu6: int Scalars, as the node shows them


def _relu6_(input: Tensor) -> Tensor:
    return _act.hardtanh_(input, 0, 6)


_relu6_operator, _relu6_operator_ = _operators("relu6", _relu6, _relu6_)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _relu6_operator_(input) if inplace else _relu6_operator(input)


def _threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return (_act.threshold_ if inplace else _act.threshold)(input, threshold, value)


threshold = _threshold  # (torch's name, which Python's errors for a wrong call show)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _act.threshold_(input, threshold, value)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return (_act.hardtanh_ if inplace else _act.hardtanh)(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    # (torch's C++ operator, unlike its Python ``hardtanh``, does not compare the bounds)
    return _act.hardtanh_(input, min_val, max_val)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise _not_tensor("leaky_relu_" if inplace else "leaky_relu", input)
    return (_act.leaky_relu_ if inplace else _act.leaky_relu)(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _act.leaky_relu_(input, negative_slope)


_rrelu_operator, _rrelu_operator_ = _operators("rrelu", _act.rrelu, _act.rrelu_)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: in training each negative element's slope is drawn from U(lower, upper) with the
    default generator (``manual_seed`` makes it reproducible); in evaluation the slope is (lower + upper) / 2."""
    return (_rrelu_operator_ if inplace else _rrelu_operator)(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    return _act.rrelu_(input, lower, upper, training, generator)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return (_act.elu_ if inplace else _act.elu)(input, alpha, 1, 1)  # the schema's int defaults


def elu_(input: Tensor, alpha: float = 1.0, scale: float = 1, input_scale: float = 1) -> Tensor:
    """torch's C++ ``elu_``, which takes the operator's scales too."""
    return _act.elu_(input, alpha, scale, input_scale)


_selu_operator, _selu_operator_ = _operators("selu", _act.selu, _act.selu_)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _selu_operator_(input) if inplace else _selu_operator(input)


def selu_(input: Tensor) -> Tensor:
    return _act.selu_(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return (_act.celu_ if inplace else _act.celu)(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _act.celu_(input, alpha)


@_takes_out("gelu")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    if not isinstance(input, Tensor):
        raise _not_tensor("gelu", input)
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
    _need_method("sigmoid", input)  # (torch's is ``input.sigmoid()``)
    return _pw.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    _need_method("tanh", input)
    return _pw.tanh(input)


@_takes_out("log_sigmoid_forward")
def logsigmoid(input: Tensor) -> Tensor:
    return _log_sigmoid(input)


# (torch's F.logsigmoid is the C++ ``log_sigmoid``, under that name in its errors)
logsigmoid = guard_errors("log_sigmoid", logsigmoid)


def softsign(input: Tensor) -> Tensor:
    _need_method("abs", input)  # (torch's is ``input / (input.abs() + 1)``)
    return _pw.div(input, _pw.add(_abs(input), 1))


def tanhshrink(input: Tensor) -> Tensor:
    _need_method("tanh", input)  # (``input - input.tanh()``)
    return _pw.sub(input, _pw.tanh(input))


@_takes_out("hardshrink")
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return _act.hardshrink(input, lambd)


@_takes_out("softshrink")
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return _act.softshrink(input, lambd)


def _glu(input: Tensor, dim: int = -1) -> Tensor:
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.ndim} is size {size}")
    return _act.glu_op(input, dim)  # (a native operator, as PyTorch's: GluBackward0)


_glu_operator = guard_errors("glu", _glu)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _glu_operator(input, dim)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    return _act.prelu(input, weight)


def _softmax_dim(name: str, input: Tensor, dim, stacklevel: int) -> int:
    return implicit_softmax_dim(name, input.dim(), stacklevel + 1) if dim is None else dim


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    dim = _softmax_dim("softmax", input, dim, _stacklevel)
    _need_method("softmax", input)
    return _softmax_method(input, dim) if dtype is None else _softmax_method(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    dim = _softmax_dim("log_softmax", input, dim, _stacklevel)
    _need_method("log_softmax", input)
    return _log_softmax_method(input, dim) if dtype is None else _log_softmax_method(input, dim, dtype=dtype)


# (torch's ``F.softmax`` calls ``input.softmax(dim)``: a wrong ``dim`` is refused in that method's words)
_softmax_method = guard_errors("softmax", _softmax, method=True)
_log_softmax_method = guard_errors("log_softmax", _log_softmax, method=True)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    dim = _softmax_dim("softmin", input, dim, _stacklevel)
    negated = -input  # (torch's ``(-input).softmax(dim)``: Python's error for what cannot be negated)
    if not isinstance(negated, Tensor):
        return negated.softmax(dim)  # (Python's AttributeError, as torch's)
    return _softmax_method(negated, dim) if dtype is None else _softmax_method(negated, dim, dtype=dtype)


_empty_like = guard_errors("empty_like", _creation.empty_like)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A sample of the Gumbel-Softmax distribution (one-hot with ``hard``, differentiated as the soft sample).

    Written as PyTorch's Python composite, operator for operator, so the recorded graph is the same."""
    from ..ops.creation import zeros_like

    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_empty_like(logits).exponential_().log()  # ~Gumbel(0, 1), from the default generator
    gumbels = (logits + gumbels) / tau  # ~Gumbel(logits, tau)
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft  # the reparameterization trick
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft  # straight through: y_hard's values, y_soft's gradient


# ---- losses ------------------------------------------------------------------------------------------------
# torch's losses are Python around C++ operators (``cross_entropy_loss``, ``nll_loss_nd``, ``mse_loss``...), called
# with the reduction's enum and these positional arguments: their argument errors are those operators'.


def _legacy_enum(size_average, reduce, reduction: str) -> int:
    """The reduction's enum, from the deprecated ``size_average``/``reduce`` where either is given."""
    return _Reduction.get_enum(_reduction(size_average, reduce, reduction))


_cross_entropy_operator = guard_errors("cross_entropy_loss", _loss.cross_entropy)
_nll_loss_operator = guard_errors("nll_loss_nd", _loss.nll_loss)


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
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    enum = 1 if reduction == "mean" else _Reduction.get_enum(reduction)  # (the usual one without a call)
    return _cross_entropy_operator(input, target, weight, enum, ignore_index, label_smoothing)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    return _nll_loss_operator(input, target, weight, _legacy_enum(size_average, reduce, reduction), ignore_index)


def _check_weight_size(weight: Tensor, input: Tensor) -> None:
    if weight.size() != input.size():
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


_l1_loss_operator = guard_errors("l1_loss", _loss.l1_loss)
_smooth_l1_loss_operator = guard_errors("smooth_l1_loss", _loss.smooth_l1_loss)
_huber_loss_operator = guard_errors("huber_loss", _loss.huber_loss)


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
            _check_weight_size(weight, input)
            return _reduce_weighted(_pw.mul(of_diff(_pw.sub(a, b)), weight), weight, reduction)
        return fused(a, b, _Reduction.get_enum(reduction))

    return _named(loss, name)


mse_loss = _diff_loss_fn("mse_loss", _square, _loss.mse_loss)
l1_loss = _diff_loss_fn("l1_loss", _abs, _l1_loss_operator)


def smooth_l1_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0
) -> Tensor:
    _warn_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    a, b = _broadcast(input, target)
    if beta == 0.0:
        return _l1_loss_operator(a, b, _Reduction.get_enum(reduction))
    return _smooth_l1_loss_operator(a, b, _Reduction.get_enum(reduction), beta)


def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0, weight: Tensor | None = None
) -> Tensor:
    _warn_target_size(input, target)
    a, b = _broadcast(input, target)
    if weight is not None:
        _check_weight_size(weight, input)
        weighted = _pw.mul(_huber_loss_operator(a, b, 0, delta), weight)
        # unlike mse/l1, PyTorch takes the plain mean here
        return _reduce_weighted(weighted, weight, reduction, plain_mean=True)
    return _huber_loss_operator(a, b, _Reduction.get_enum(reduction), delta)


_binary_cross_entropy_operator = guard_errors("binary_cross_entropy", _loss.binary_cross_entropy)
_bce_with_logits_operator = guard_errors("binary_cross_entropy_with_logits", _loss.binary_cross_entropy_with_logits)


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    enum = _legacy_enum(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        from ..ops.shape_extra import broadcast_shapes as broadcast_sizes
        from ..ops.views import expand

        weight = expand(weight, tuple(broadcast_sizes(target.size(), weight.size())))
    return _binary_cross_entropy_operator(input, target, weight, enum)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    enum = _legacy_enum(size_average, reduce, reduction)
    if not target.size() == input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _bce_with_logits_operator(input, target, weight, pos_weight, enum)


def _check_linear_cross_entropy_shapes(input: Tensor, linear_weight: Tensor, linear_bias: Tensor | None) -> None:
    """torch's checks, in its order: input 1-d or 2-d, weight (C, *out_features, in_features), bias shaped
    (C, *out_features), out_features only with a batch."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    expected_bias = tuple(linear_weight.shape[:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != expected_bias:
        raise RuntimeError(f"expected linear_bias shape {expected_bias}, got {tuple(linear_bias.shape)}")
    if linear_weight.dim() > 2 and input.dim() == 1:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires batched input,"
            f" (N, {in_features}), got unbatched input with shape {tuple(input.shape)}"
        )


def _chunking_unsupported(options, out_features, reduction: str, label_smoothing: float, target: Tensor) -> bool:
    """Whether the chunked path cannot take the call (torch then warns and takes the reference path; tracegrad
    never traces with torch.jit, so that condition is always false)."""
    from ..backend.dtypes import int64

    return options is not None and (bool(out_features) or reduction not in ("mean", "sum", "none")
                                    or label_smoothing != 0.0 or target.dtype != int64)


def _warn_options_ignored(reduction, label_smoothing, target: Tensor, out_features, linear_bias) -> None:
    bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
    warnings.warn(
        "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in {'mean','sum','none'}, "
        "label_smoothing == 0, target.dtype == int64, out_features == (). Got "
        f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
        f"out_features={tuple(out_features)}, tracing=False, linear_bias.shape={bias_shape}.",
        stacklevel=3,
    )


def _chunked_linear_cross_entropy(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
                                  options) -> Tensor:
    """The chunked path (``nn.modules.linear_cross_entropy``): one custom-operator node instead of
    linear + cross_entropy; an unbatched input is run as a batch of one."""
    from .modules.linear_cross_entropy import (
        _linear_cross_entropy_batch_chunked,
        _linear_cross_entropy_batch_chunked_no_reduction,
    )

    has_batches = input.dim() == 2
    if not has_batches:
        input, target = _unsqueeze(input, 0), _unsqueeze(target, 0)
    options = options._adjust(num_batches=input.shape[0], in_features=input.shape[-1],
                              num_classes=linear_weight.shape[0], dtype=input.dtype, device=input.device)
    if reduction == "none":
        result = _linear_cross_entropy_batch_chunked_no_reduction(
            input, linear_weight, target, linear_bias, weight, ignore_index, options.batch_chunk_size,
            options.acc_policy, options.acc_dtype)
    else:  # (torch forces allow_retain_graph under torch.compile, which tracegrad has not)
        grads_on = _grad_enabled()
        result = _linear_cross_entropy_batch_chunked(
            input, linear_weight, target, linear_bias, weight, reduction, ignore_index, 0.0,
            options.batch_chunk_size, options.acc_policy, options.acc_dtype, options.allow_retain_graph,
            input.requires_grad and grads_on, linear_weight.requires_grad and grads_on,
            linear_bias is not None and linear_bias.requires_grad and grads_on)[0]
    return result if has_batches else _squeeze(result, 0)


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options=None,
) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``, the logits reshaped to
    ``(N, C, *out_features)`` for a ``(C, *out_features, in_features)`` weight; ``options`` (a
    ``LinearCrossEntropyOptions``) opts into the chunked path, which never makes the whole logits tensor."""
    _check_linear_cross_entropy_shapes(input, linear_weight, linear_bias)
    num_classes, out_features = linear_weight.shape[0], linear_weight.shape[1:-1]
    logits_shape = (*input.shape[:-1], num_classes, *out_features)
    if target.shape == logits_shape and ignore_index is not None:  # (torch's test for probabilities)
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if _chunking_unsupported(options, out_features, reduction, label_smoothing, target):
        _warn_options_ignored(reduction, label_smoothing, target, out_features, linear_bias)
    elif options is not None:
        return _chunked_linear_cross_entropy(input, linear_weight, target, linear_bias, weight, reduction,
                                             ignore_index, options)
    if out_features:  # one Linear of C * prod(out_features) outputs
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((rows, input.shape[-1]))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)


_REDUCTION_NAMES = ("none", "mean", "sum")


def _kl_div(input: Tensor, target: Tensor, reduction: int = 1, *, log_target: bool = False) -> Tensor:
    return _loss.kl_div(input, target, _REDUCTION_NAMES[reduction], log_target)


_kl_div_operator = guard_errors("kl_div", _kl_div)


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    if size_average is not None or reduce is not None:
        enum = _Reduction.get_enum(_reduction(size_average, reduce, reduction))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        enum = _Reduction.get_enum("sum" if reduction == "batchmean" else reduction)
    reduced = _kl_div_operator(input, target, enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        return _pw.div(reduced, input.size()[0])
    return reduced


# the margin and ranking losses (composed in ops/nn_ops, as torch's C++ composes them)
_margin_ranking_loss_operator = guard_errors("margin_ranking_loss", _composite_losses.margin_ranking_loss)
_hinge_embedding_loss_operator = guard_errors("hinge_embedding_loss", _composite_losses.hinge_embedding_loss)
_cosine_embedding_loss_operator = guard_errors("cosine_embedding_loss", _composite_losses.cosine_embedding_loss)
_triplet_margin_loss_operator = guard_errors("triplet_margin_loss", _composite_losses.triplet_margin_loss)
_poisson_nll_loss_operator = guard_errors("poisson_nll_loss", _composite_losses.poisson_nll_loss)
_soft_margin_loss_operator = guard_errors("soft_margin_loss", _margin_loss.soft_margin_loss)
_multi_margin_loss_operator = guard_errors("multi_margin_loss", _margin_loss.multi_margin_loss)
_multilabel_margin_loss_operator = guard_errors("multilabel_margin_loss", _margin_loss.multilabel_margin_loss)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    enum = _legacy_enum(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _margin_ranking_loss_operator(input1, input2, target, margin, enum)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    return _hinge_embedding_loss_operator(input, target, margin, _legacy_enum(size_average, reduce, reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    enum = _legacy_enum(size_average, reduce, reduction)
    return _cosine_embedding_loss_operator(input1, input2, target, margin, enum)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    enum = _legacy_enum(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _triplet_margin_loss_operator(anchor, positive, negative, margin, p, eps, swap, enum)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    reduction = _reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _poisson_nll_loss_operator(input, target, log_input, full, eps, _Reduction.get_enum(reduction))


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    return _soft_margin_loss_operator(input, target, _legacy_enum(size_average, reduce, reduction))


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    enum = _legacy_enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _multi_margin_loss_operator(input, target, p, margin, weight, enum)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    return _multilabel_margin_loss_operator(input, target, _legacy_enum(size_average, reduce, reduction))


_ctc_loss_operator = guard_errors("ctc_loss", _bag_ctc_ops.ctc_loss)


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Tensor,
    target_lengths: Tensor,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The Connectionist Temporal Classification loss of (T, N, C) or unbatched (T, C) log-probabilities."""
    return _ctc_loss_operator(log_probs, targets, input_lengths, target_lengths, blank, _Reduction.get_enum(reduction),
                              zero_infinity)


# ---- dropout -----------------------------------------------------------------------------------------------


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:  # (a float comparison first: Python's error for what is not a number)
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


# ATen's dropouts, ``name(input, p, train)`` and ``name_``: (out of place, in place)
_DROPOUT = _operators("dropout", _misc.aten_dropout, feature=False, alpha=False)
_ALPHA_DROPOUT = _operators("alpha_dropout", _misc.aten_dropout, feature=False, alpha=True)
_FEATURE_ALPHA_DROPOUT = _operators("feature_alpha_dropout", _misc.aten_dropout, feature=True, alpha=True)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    return _DROPOUT[1 if inplace else 0](input, p, training)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """SELU-preserving dropout: dropped units go to the negative saturation value, then an affine fix."""
    _check_p(p)
    return _ALPHA_DROPOUT[1 if inplace else 0](input, p, training)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (one draw per sample and channel)."""
    _check_p(p)
    return _FEATURE_ALPHA_DROPOUT[1 if inplace else 0](input, p, training)


def _feature_dropout_operators(batched_ndim: int | None) -> tuple:
    """ATen's ``feature_dropout`` and ``feature_dropout_`` as dropout1d/2d/3d call them: one draw per index up to
    the channel dim, the second dim of a batched input (of ``batched_ndim`` dims; None: any) and the first of an
    unbatched one, which torch's Python unsqueezes first."""

    def feature_dropout(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:
        channel_dim = 1 if batched_ndim is None or input.ndim == batched_ndim else 0
        if train and p > 0 and input.ndim < channel_dim + 1:  # (torch returns the input first when p is 0)
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[: channel_dim + 1]) + (1,) * (input.ndim - channel_dim - 1)
        return _misc.dropout(input, p, train, inplace, mask_shape=shape)

    return _operators("feature_dropout", feature_dropout)


_DROPOUT1D = _feature_dropout_operators(3)
_DROPOUT2D = _feature_dropout_operators(None)
_DROPOUT3D = _feature_dropout_operators(5)


def _deprecated_feature_input(name: str, nd: int, spatial: int) -> None:
    warnings.warn(f"{name}: Received a {nd}-D input to {name}, which is deprecated and will result in an error in a "
                  "future release. To retain the behavior and silence this warning, please use dropout instead. Note "
                  f"that {name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, "
                  f"a channel dimension, and an optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D "
                  "inputs).", stacklevel=3)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
            "batch dimension (i.e. 2D or 3D inputs).")
    return _DROPOUT1D[1 if inplace else 0](input, p, training)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """As torch 2.13: other ranks than 3 and 4 only warn, and a 3-D input is read as (N, C, L) (with a warning),
    not as one unbatched (C, H, W) image."""
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        _deprecated_feature_input("dropout2d", nd, 2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _DROPOUT2D[1 if inplace else 0](input, p, training)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        _deprecated_feature_input("dropout3d", nd, 3)
    return _DROPOUT3D[1 if inplace else 0](input, p, training)


# ---- unpooling ---------------------------------------------------------------------------------------------


def _unpool_output_size(input: Tensor, kernel_size: tuple, stride: tuple, padding: tuple, output_size) -> list:
    """The unpooled spatial size: the default inverse of the pooling's size formula, or ``output_size``
    (optionally with batch and channel sizes) when it is within one stride of it."""
    n = len(kernel_size)
    sizes = input.size()  # (torch's first step: Python's error for what is not a tensor)
    default = [(sizes[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
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


# (torch's normalization functions end in these operators, called with these positional arguments)
_layer_norm_operator = guard_errors("layer_norm", _public.layer_norm)
_group_norm_operator = guard_errors("group_norm", _public.group_norm)
_batch_norm_operator = guard_errors("batch_norm", _public.batch_norm)
_instance_norm_operator = guard_errors("instance_norm", _public.instance_norm)


def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    return _layer_norm_operator(input, normalized_shape, weight, bias, eps, True)


def _rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None
              ) -> Tensor:
    """``input / sqrt(mean(input², over the last dims) + eps) * weight``, composed as PyTorch's rms_norm (pow,
    mean, an in-place add of eps, rsqrt, mul, mul), computed in float32 for half inputs. ``eps`` None: the
    dtype's machine epsilon."""
    from .. import finfo, float32
    from ..ops._util import as_double
    from ..ops.scalar_overloads import add_scalar_

    shape = tuple(normalized_shape)  # (an int fails: torch's parser refuses it)
    sizes = tuple(input.shape)
    if sizes[len(sizes) - len(shape):] != shape or len(shape) > len(sizes):
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in shape)}], but got input of size{list(sizes)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    dims = [len(sizes) - 1 - i for i in range(len(shape))]  # (innermost first, as PyTorch lists them)
    x = input.to(float32) if input.dtype.itemsize < 4 and input.is_floating_point() else input
    eps_value = finfo(x.dtype).eps if eps is None else as_double(eps)  # (a C++ double: 2**70 is one)
    inverse_rms = add_scalar_(x.pow(2).mean(dims, keepdim=True), eps_value).rsqrt()  # (C++'s add_: AddBackward1)
    result = x * inverse_rms
    if weight is None or weight.dtype == input.dtype:
        result = result.type_as(input)
        return result * weight if weight is not None else result
    from .._warnings import warn_once_at_caller
    from ..backend.dtypes import c10_type_name

    # (torch's composite path for a weight of another dtype: weighted in float, then brought to the input's dtype)
    warn_once_at_caller("rms_norm mixed dtype", f"Mismatch dtype between input and weight: input dtype = "
                        f"{c10_type_name(input.dtype)}, weight dtype = {c10_type_name(weight.dtype)}, Cannot "
                        f"dispatch to fused implementation.")
    return (result * weight).type_as(input)



_rms_norm_operator = guard_errors("rms_norm", _rms_norm)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    return _rms_norm_operator(input, normalized_shape, weight, eps)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    # (as torch's: one value per group and sample cannot be normalized; a zero or a wrong num_groups fails here)
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return _group_norm_operator(input, num_groups, weight, bias, eps, True)


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
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _batch_norm_operator(input, weight, bias, running_mean, running_var, training, momentum, eps, True)


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
    return _instance_norm_operator(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                                   True)


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
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# ---- convolution -------------------------------------------------------------------------------------------


# (torch binds these to C++: the functions themselves refuse their arguments in the operators' words, which the
# conv modules, calling them, get too)
conv1d = guard_errors("conv1d", _public.conv1d)
conv2d = guard_errors("conv2d", _public.conv2d)
conv3d = guard_errors("conv3d", _public.conv3d)
conv_transpose1d = guard_errors("conv_transpose1d", _public.conv_transpose1d)
conv_transpose2d = guard_errors("conv_transpose2d", _public.conv_transpose2d)
conv_transpose3d = guard_errors("conv_transpose3d", _public.conv_transpose3d)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    # (the operator is ATen's im2col, and refuses its arguments in its words)
    return _conv.unfold(input, ntuple(kernel_size, 2), ntuple(dilation, 2), ntuple(padding, 2), ntuple(stride, 2))


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    return _conv.fold(input, ntuple(output_size, 2), ntuple(kernel_size, 2), ntuple(dilation, 2),
                      ntuple(padding, 2), ntuple(stride, 2))


# ---- pooling -----------------------------------------------------------------------------------------------
# torch's pooling functions are Python around C++ operators, which take sizes as they come (an int or a sequence,
# ``[]`` for a stride not given): each operator below expands and checks them as ATen's, with ATen's messages,
# and refuses what is not an int in its parser's words.

_COUNTS = {2: "two", 3: "three"}


def _one_size(value, message: str, allow_empty: bool = False) -> tuple:
    """A 1-d pooling's ``int[1]`` argument as a 1-tuple (``()`` for an empty stride, with ``allow_empty``);
    ``message``, formatted with the length, for a sequence of another length."""
    if isinstance(value, (tuple, list)):
        if allow_empty and not value:
            return ()
        if len(value) != 1:
            raise RuntimeError(message.format(len(value)))
    return expand_param(value, 1)


def _max_pool_operator(n: int, with_indices: bool):
    """ATen's ``max_pool{n}d`` or ``max_pool{n}d_with_indices`` (2-d and 3-d), through the pooling with indices."""
    name, either = f"max_pool{n}d", f"a single int, or a tuple of {_COUNTS[n]} ints"
    pool_with_indices = _pool.max_pool2d_with_indices if n == 2 else _pool.max_pool3d_with_indices

    def max_pool(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):
        k = aten_sizes(kernel_size, n, f"{name}: kernel_size must either be {either}")
        s = aten_sizes(stride, n, f"{name}: stride must either be omitted, {either}", allow_empty=True)
        p = aten_sizes(padding, n, f"{name}: padding must either be {either}")
        d = aten_sizes(dilation, n, f"{name}: dilation must be either {either}")
        out, indices = pool_with_indices(input, k, s, p, d, ceil_mode)
        return (out, indices) if with_indices else out

    return guard_errors(f"{name}_with_indices" if with_indices else name, max_pool)


def _max_pool1d_operator(with_indices: bool):
    """ATen's ``max_pool1d`` or ``max_pool1d_with_indices``: the 2-d pooling over a height of 1 (each with its
    own words for a size of another length than 1)."""
    if with_indices:
        messages = tuple(f"max_pool1d() argument '{arg}' should contain one int (got {{}})"
                         for arg in ("kernel_size", "stride", "padding", "dilation"))
    else:
        messages = tuple(f"max_pool1d() {arg} must be {kinds} of size 1 but got size {{}}" for arg, kinds in (
            ("kernel_size", "an int, list of ints or tuple of ints"),
            ("stride", "None, an int, list of ints, or tuple of ints"),
            ("padding", "an int, list of ints, or tuple of ints"),
            ("dilation", "an int, list of ints or tuple of ints")))

    def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):
        nd = input.ndim
        if nd not in (2, 3):
            if with_indices:
                raise RuntimeError(f"Expected 2 to 3 dimensions, but got {nd}-dimensional tensor for argument #1 "
                                   "'self' (while checking arguments for max_pool1d)")
            raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                               f"input, but got:{list(input.shape)}")
        k = _one_size(kernel_size, messages[0])
        s = _one_size(stride, messages[1], allow_empty=True) or k
        p = _one_size(padding, messages[2])
        d = _one_size(dilation, messages[3])
        if s[0] <= 0:
            raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s[0]}")
        if not with_indices and p[0] > k[0] // 2:  # (max_pool1d's own words; with indices, the 2-d pooling's)
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p[0]} "
                               f"and kernel_size={k[0]}")
        width = _pool.pool_out_size(input.shape[-1], k[0], s[0], p[0], d[0], ceil_mode)
        if not with_indices and width < 1:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {width}")
        if not with_indices and not (input.requires_grad and _grad_enabled()) and not _has_tangent(input):
            check_float(input._data, "max_pool1d_impl")  # (torch's path without indices: a kernel for floats only)
        out, indices = _pool.max_pool2d_with_indices(_unsqueeze(input, -2), (1,) + k, (1,) + s, (0,) + p,
                                                     (1,) + d, ceil_mode)
        out = _squeeze(out, -2)
        return (out, _squeeze(indices, [-2])) if with_indices else out

    return guard_errors("max_pool1d_with_indices" if with_indices else "max_pool1d", max_pool1d)


# (without indices, with indices)
_MAX_POOL1D = (_max_pool1d_operator(False), _max_pool1d_operator(True))
_MAX_POOL2D = (_max_pool_operator(2, False), _max_pool_operator(2, True))
_MAX_POOL3D = (_max_pool_operator(3, False), _max_pool_operator(3, True))


def _max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                return_indices: bool = False) -> Tensor:
    return _MAX_POOL1D[0](input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)


def _max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                return_indices: bool = False) -> Tensor:
    return _MAX_POOL2D[0](input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)


def _max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                return_indices: bool = False) -> Tensor:
    return _MAX_POOL3D[0](input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)


# PyTorch's *_with_indices functions: the pooling with indices, returned whatever return_indices says.


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return _MAX_POOL1D[1](input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return _MAX_POOL2D[1](input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    _ = input.is_cuda  # (torch's Python reads it first, for a deterministic CUDA path: a non-tensor fails there)
    return _MAX_POOL3D[1](input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)


max_pool1d = boolean_dispatch("return_indices", 6, max_pool1d_with_indices, _max_pool1d, name="max_pool1d")
max_pool2d = boolean_dispatch("return_indices", 6, max_pool2d_with_indices, _max_pool2d, name="max_pool2d")
max_pool3d = boolean_dispatch("return_indices", 6, max_pool3d_with_indices, _max_pool3d, name="max_pool3d")


def avg_pool1d(
    input: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    k, s, p = (_one_size(value, f"avg_pool1d() argument '{arg}' should contain one int (got {{}})", arg == "stride")
               for value, arg in ((kernel_size, "kernel_size"), (() if stride is None else stride, "stride"),
                                  (padding, "padding")))
    out = _pool.avg_pool2d(_unsqueeze(input, -2), (1,) + k, (1,) + (s or k), (0,) + p, ceil_mode,
                           count_include_pad, None)
    return _squeeze(out, -2)


def _avg_pool_fn(n: int):
    """avg_pool2d/avg_pool3d, as ATen's: sizes expanded and checked in its words (which differ by dims)."""
    name, count = f"avg_pool{n}d", _COUNTS[n]
    must = "must either be" if n == 2 else "must be"
    pool = _pool.avg_pool2d if n == 2 else _pool.avg_pool3d

    def avg_pool(
        input: Tensor,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ) -> Tensor:
        k = aten_sizes(kernel_size, n, f"{name}: kernel_size {must} a single int, or a tuple of {count} ints")
        s = () if stride is None else aten_sizes(
            stride, n, f"{name}: stride {must} omitted, a single int, or a tuple of {count} ints", allow_empty=True)
        p = aten_sizes(padding, n, f"{name}: padding {must} a single int, or a tuple of {count} ints")
        return pool(input, k, s, p, ceil_mode, count_include_pad, divisor_override)

    return _named(avg_pool, name)


avg_pool1d = guard_errors("avg_pool1d", avg_pool1d)
avg_pool2d = guard_errors("avg_pool2d", _takes_out("avg_pool2d")(_avg_pool_fn(2)))
avg_pool3d = guard_errors("avg_pool3d", _takes_out("avg_pool3d")(_avg_pool_fn(3)))


def _fractional(n: int, input: Tensor, kernel_size, output_size, output_ratio, return_indices: bool,
                _random_samples):
    from ..ops.nn_ops.fractional_pool import sized_fractional_max_pool

    out, indices = sized_fractional_max_pool(input, n, kernel_size, output_size, output_ratio, _random_samples)
    return (out, indices) if return_indices else out


def _fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                           return_indices: bool = False, _random_samples=None):
    """Max pooling over pseudo-randomly placed windows whose count is ``output_size`` (or the input size times
    ``output_ratio``); ``_random_samples`` (N, C, 2) fixes the placement."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, False, _random_samples)


def _fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                           return_indices: bool = False, _random_samples=None):
    """The 3-d fractional max pooling; ``_random_samples`` is (N, C, 3)."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, False, _random_samples)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    return _fractional(2, input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples=None):
    return _fractional(3, input, kernel_size, output_size, output_ratio, True, _random_samples)


fractional_max_pool2d = boolean_dispatch("return_indices", 4, fractional_max_pool2d_with_indices,
                                          _fractional_max_pool2d, name="fractional_max_pool2d")
fractional_max_pool3d = boolean_dispatch("return_indices", 4, fractional_max_pool3d_with_indices,
                                          _fractional_max_pool3d, name="fractional_max_pool3d")


def _list_with_default(output_size, defaults) -> list:
    """torch's: an int as it is; a sequence with None for each dim to keep (an input of too few dims refused)."""
    if isinstance(output_size, int):
        return output_size
    if len(defaults) <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    return [size if size is not None else default
            for size, default in zip(output_size, defaults[-len(output_size):])]


def _adaptive_sizes(output_size, n: int, message: str) -> tuple:
    """An adaptive pooling's ``int[n]`` output size: a single int for every dim, or ``n`` of them."""
    if not isinstance(output_size, (tuple, list)):
        return (as_int(output_size),) * n
    if len(output_size) != n:
        raise RuntimeError(message)
    return tuple(as_int(size) for size in output_size)


def _adaptive_avg_pool_operator(n: int):
    def adaptive_avg_pool(input: Tensor, output_size) -> Tensor:
        if n == 1:
            sizes = _one_size(output_size, "adaptive_avg_pool1d() argument 'output_size' should contain one int "
                                           "(got {})")
        else:
            sizes = _adaptive_sizes(output_size, n, f"adaptive_avg_pool{n}d: output_size must be {n}")
        return _misc.adaptive_avg_pool(input, sizes)

    return guard_errors(f"adaptive_avg_pool{n}d", adaptive_avg_pool)


def _adaptive_max_pool_operator(n: int):
    """ATen's ``adaptive_max_pool{n}d``: (values, indices); the 1-d one through the 2-d over a height of 1."""
    def adaptive_max_pool(input: Tensor, output_size) -> tuple[Tensor, Tensor]:
        if n > 1:
            sizes = _adaptive_sizes(output_size, n, f"adaptive_max_pool{n}d(): internal error: output_size.size() "
                                                    f"must be {n}")
            return (_pool.adaptive_max_pool2d if n == 2 else _pool.adaptive_max_pool3d)(input, sizes)
        if input.ndim not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument "
                               "#1 'self' (while checking arguments for adaptive_max_pool1d)")
        size = _one_size(output_size, "adaptive_max_pool1d() argument 'output_size' should contain one int (got {})")
        out, indices = _pool.adaptive_max_pool2d(_unsqueeze(input, -2), (1,) + size)
        return _squeeze(out, -2), _squeeze(indices, -2)

    return guard_errors(f"adaptive_max_pool{n}d", adaptive_max_pool)


adaptive_avg_pool1d = _named(_adaptive_avg_pool_operator(1), "adaptive_avg_pool1d")
_ADAPTIVE_AVG_POOL = {n: _adaptive_avg_pool_operator(n) for n in (2, 3)}
_ADAPTIVE_MAX_POOL = {n: _adaptive_max_pool_operator(n) for n in (1, 2, 3)}


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    return _ADAPTIVE_AVG_POOL[2](input, _list_with_default(output_size, input.size()))


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    return _ADAPTIVE_AVG_POOL[3](input, _list_with_default(output_size, input.size()))


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False
                                     ) -> tuple[Tensor, Tensor]:
    return _ADAPTIVE_MAX_POOL[1](input, output_size)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False
                                     ) -> tuple[Tensor, Tensor]:
    return _ADAPTIVE_MAX_POOL[2](input, _list_with_default(output_size, input.size()))


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False
                                     ) -> tuple[Tensor, Tensor]:
    return _ADAPTIVE_MAX_POOL[3](input, _list_with_default(output_size, input.size()))


def _adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    """PyTorch's composite: the 2-D operator over an unsqueezed height of 1, then squeezed back."""
    return adaptive_max_pool1d_with_indices(input, output_size)[0]


def _adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    return adaptive_max_pool2d_with_indices(input, output_size)[0]


def _adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    return adaptive_max_pool3d_with_indices(input, output_size)[0]


adaptive_max_pool1d = boolean_dispatch("return_indices", 2, adaptive_max_pool1d_with_indices,
                                        _adaptive_max_pool1d, name="adaptive_max_pool1d")
adaptive_max_pool2d = boolean_dispatch("return_indices", 2, adaptive_max_pool2d_with_indices,
                                        _adaptive_max_pool2d, name="adaptive_max_pool2d")
adaptive_max_pool3d = boolean_dispatch("return_indices", 2, adaptive_max_pool3d_with_indices,
                                        _adaptive_max_pool3d, name="adaptive_max_pool3d")


def _lp_pool(input: Tensor, norm_type: float, kernel_size, stride, ceil_mode: bool, n: int, sizes: tuple) -> Tensor:
    """PyTorch's lp_pool{n}d composite: (sum over each window of x ** p) ** (1 / p), as the window's average
    times its size (the product of ``sizes``, as torch multiplies them); a negative average (odd p) is zeroed
    through sign * relu(abs), so its gradient is 0."""
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
    return (_sign(out) * relu(_abs(out))).mul(functools.reduce(operator.mul, sizes)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False) -> Tensor:
    # (PyTorch multiplies by the kernel size as given)
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, (kernel_size,))


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    kw, kh = ntuple(kernel_size, 2)  # (torch unpacks the kernel size first)
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, (kw, kh))


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    kd, kw, kh = ntuple(kernel_size, 3)
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, (kd, kw, kh))


# ---- embedding, padding, resampling, distances -------------------------------------------------------------


_embedding_operator = guard_errors("embedding", _public.embedding)
_embedding_renorm_operator = guard_errors("embedding_renorm_", _misc.embedding_renorm_)


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
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        from ..autograd.grad_mode import no_grad

        input = input.contiguous()  # (torch's first step, which a non-tensor fails)
        with no_grad():
            _embedding_renorm_operator(weight, input, max_norm, norm_type)
    return _embedding_operator(weight, input, padding_idx, scale_grad_by_freq, sparse)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    return _pad_operator(input, pad, mode, value)


# (torch's ``F.pad`` is Python, calling the C++ ``pad``: its argument errors are that operator's parser's)
_pad_operator = guard_errors("pad", _misc.pad)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    # (torch's one_hot writes its result twice in place, counted in any mode; an empty one, never)
    return _counted_writes(_misc.one_hot(tensor, num_classes), 2 if tensor.numel() else 0)


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """``input`` over its ``p``-norm along ``dim`` (at least ``eps``), with torch's Tensor methods in its order."""
    _need_method("norm", input)
    norm = input.norm(p, dim, keepdim=True)
    if out is None:
        return input / norm.clamp_min(eps).expand_as(input)
    return _pw.div(input, norm.clamp_min_(eps).expand_as(input), out=out)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    return _misc.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    return _misc.pairwise_distance(x1, x2, p, eps, keepdim)


# (torch binds these to C++: the functions themselves refuse their arguments in the operators' words)
cosine_similarity = guard_errors("cosine_similarity", cosine_similarity)
pairwise_distance = guard_errors("pairwise_distance", pairwise_distance)


def _resampler(mode: str, n: int):
    """ATen's ``upsample_<mode>{n}d`` (``.vec``: output sizes or scale factors), refusing its arguments in torch's
    words: (input, output_size, scale_factors), with align_corners before the scales for the interpolating
    modes."""
    if mode in ("nearest", "nearest-exact"):
        name = f"{'_upsample_nearest_exact' if mode == 'nearest-exact' else 'upsample_nearest'}{n}d"
        return guard_errors(name, functools.partial(_misc.upsample_nearest, exact=mode == "nearest-exact"))
    return guard_errors(f"upsample_{mode}{n}d", functools.partial(_misc.upsample_interpolating, mode=mode))


_RESAMPLERS = {
    **{(mode, n + 2): _resampler(mode, n) for mode in ("nearest", "nearest-exact") for n in (1, 2, 3)},
    ("linear", 3): _resampler("linear", 1),
    ("bilinear", 4): _resampler("bilinear", 2),
    ("trilinear", 5): _resampler("trilinear", 3),
    ("bicubic", 4): _resampler("bicubic", 2),
}
# ATen's ``_upsample_<mode>2d_aa`` (``.vec``), by mode: (input, output_size, align_corners, scale_factors)
_ANTIALIASED_RESAMPLERS = {
    mode: guard_errors(f"_upsample_{mode}2d_aa", functools.partial(_misc.upsample_antialiased, mode=mode))
    for mode in ("bilinear", "bicubic", "lanczos")
}
# the modes and input dims torch names in its refusal of a mode for the input's dims
_MODE_DIMS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _is_integer(x) -> bool:
    return isinstance(x, (int, np.integer)) or (isinstance(x, Tensor) and not x.is_floating_point())


def interpolate(
    input: Tensor,
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias: bool = False,
) -> Tensor:
    """Resample ``input`` to ``size`` (or its size times ``scale_factor``) by ``mode``: torch's argument handling,
    in its order, then the resampling operator torch calls."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2  # the spatial dims
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor "
                    "in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(x) for x in size]}")
            output_size = size
        else:
            output_size = [size] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                    "provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                    "format.")
            scale_factors = scale_factor
        else:
            scale_factors = [scale_factor] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:  # (the area mode takes an output size only)
        recompute_scale_factor = True
    if recompute_scale_factor:  # the output size computed here; the operator recomputes the scales from it
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    nd = input.dim()
    if mode == "area" and nd in (3, 4, 5):
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 3](input, output_size)
    if mode == "lanczos" and nd == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias:  # (bilinear, bicubic or lanczos of a 4-d input)
        return _ANTIALIASED_RESAMPLERS[mode](input, output_size, align_corners, scale_factors)
    resampler = _RESAMPLERS.get((mode, nd))
    if resampler is not None:
        if mode in ("nearest", "nearest-exact"):
            return resampler(input, output_size, scale_factors)
        return resampler(input, output_size, align_corners, scale_factors)
    if _MODE_DIMS.get(mode, nd) != nd and nd in (3, 4, 5) and mode in _MODE_DIMS:
        raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {_MODE_DIMS[mode]}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: nearest | linear | "
        f"bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})")


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
    return _affine_grid_operator(theta, size, align_corners)


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
    return _grid_sampler_operator(input, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode], align_corners)


# (torch's Python calls these C++ operators: a wrong argument is refused in their words)
_affine_grid_operator = guard_errors("affine_grid_generator", _grid.affine_grid_generator)
_grid_sampler_operator = guard_errors("grid_sampler", _grid.grid_sampler)
