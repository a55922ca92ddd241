"""The nn operators PyTorch also exposes as ``torch.<name>`` and ``Tensor.<name>``, with those signatures."""

from __future__ import annotations

import warnings

from ..._tensor import Tensor
from ...backend.dtypes import to_dtype
from ..creation import to_dtype as cast
from . import activation as act
from . import bag_ctc, conv, conv_tbc, distance, linear, misc, norm, pixel_shuffle, rnn, unpool
from . import grid_sample as _grid


def _maybe_cast(input: Tensor, dtype) -> Tensor:
    return cast(input, to_dtype(dtype)) if dtype is not None else input


def implicit_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
        "as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return act.softmax(_maybe_cast(input, dtype), dim, False)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return act.log_softmax(_maybe_cast(input, dtype), dim, False)


def _into_softmax_out(name: str, kernel, input: Tensor, dim: int, dtype, out: Tensor) -> Tensor:
    """``torch.softmax``/``log_softmax`` with ``out=`` (``<name>.int_out``, which has no derivative formula): an
    out= that requires grad is refused by autograd's fallback; the dim is wrapped, then the structured
    ``_softmax_out`` checks out's dtype before its kernel's dtype dispatch; ``out`` gets a NotImplemented node
    where the input requires grad."""
    from ..._state import STATE
    from ...autograd.grad_mode import no_grad
    from .._util import wrap_dim
    from ..variants import _expected_dtype, _store, give_not_implemented_history, out_with_grad_error

    if STATE.grad_enabled and out.requires_grad:
        raise out_with_grad_error(f"aten::{name}")
    wrap_dim(dim, input.ndim)
    want = to_dtype(dtype).np if dtype is not None else input._data.dtype
    if out._data.dtype != want:
        raise RuntimeError(_expected_dtype(want, out._data.dtype, 0))
    with no_grad():
        result = kernel(_maybe_cast(input, dtype), dim, False)
    _store(out, result)
    give_not_implemented_history(name, (out,), (input,))
    return out


def softmax_out(input: Tensor, dim: int, dtype=None, *, out: Tensor | None = None) -> Tensor:
    """``torch.softmax``, which (unlike ``Tensor.softmax`` and ``F.softmax``) takes ``out=``."""
    if out is None:
        return softmax(input, dim, dtype)
    return _into_softmax_out("softmax", act.softmax, input, dim, dtype, out)


def log_softmax_out(input: Tensor, dim: int, dtype=None, *, out: Tensor | None = None) -> Tensor:
    """``torch.log_softmax``, which (unlike ``Tensor.log_softmax`` and ``F.log_softmax``) takes ``out=``."""
    if out is None:
        return log_softmax(input, dim, dtype)
    return _into_softmax_out("log_softmax", act.log_softmax, input, dim, dtype, out)


def relu(input: Tensor) -> Tensor:
    return act.relu_fast(input)


def relu_(input: Tensor) -> Tensor:
    return act.relu_(input)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return misc.dropout(input, p, train)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv.conv_nd(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv.conv_nd(input, weight, bias, stride, padding, dilation, groups, 2)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv.conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv.conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv.conv_nd(input, weight, bias, stride, padding, dilation, groups, 3)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv.conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    # (a list of sizes: an int fails, as torch's parser refuses it, where nn.LayerNorm keeps a tuple)
    return norm.layer_norm(input, tuple(normalized_shape), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return norm.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    momentum.__float__()  # (a number, checked as torch's parser does: without running statistics it is unused)
    return norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled=True
):
    momentum.__float__()
    return norm.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return misc.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return misc.pairwise_distance(x1, x2, p, eps, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return misc.cosine_similarity(x1, x2, dim, eps)


def native_batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool, momentum: float,
                      eps: float) -> tuple:
    """(output, save_mean, save_invstd): the batch's statistics in training, empty tensors in evaluation."""
    if training:
        return norm.batch_norm_train(input, weight, bias, running_mean, running_var, momentum, eps)
    return norm.batch_norm_eval(input, weight, bias, running_mean, running_var, eps)


PUBLIC = {
    "relu": relu,
    "relu_": relu_,
    "softmax": softmax_out,
    "log_softmax": log_softmax_out,
    "_softmax": act.softmax,
    "_log_softmax": act.log_softmax,
    "_softmax_backward_data": act.softmax_backward_data,
    "_log_softmax_backward_data": act.log_softmax_backward_data,
    "selu": act.selu,
    "selu_": act.selu_,
    "celu": lambda input, alpha=1.0: act.celu(input, alpha),
    "celu_": lambda input, alpha=1.0: act.celu_(input, alpha),
    "threshold": lambda input, threshold, value: act.threshold(input, threshold, value),
    "threshold_": lambda input, threshold, value: act.threshold_(input, threshold, value),
    "dropout": dropout,
    "conv1d": conv1d,
    "conv2d": conv2d,
    "conv_transpose1d": conv_transpose1d,
    "conv_transpose2d": conv_transpose2d,
    "conv3d": conv3d,
    "conv_transpose3d": conv_transpose3d,
    "layer_norm": layer_norm,
    "group_norm": group_norm,
    "batch_norm": batch_norm,
    "instance_norm": instance_norm,
    "embedding": embedding,
    "embedding_bag": bag_ctc.embedding_bag,
    "_embedding_bag": bag_ctc.embedding_bag_op,
    "ctc_loss": bag_ctc.ctc_loss,
    "_ctc_loss": bag_ctc.ctc_loss_op,
    "bilinear": linear.bilinear,
    "pairwise_distance": pairwise_distance,
    "cosine_similarity": cosine_similarity,
    "constant_pad_nd": lambda input, pad, value=0: misc.constant_pad_nd(input, tuple(pad), value),
    "cdist": distance.cdist,
    "pdist": distance.pdist,
    "rrelu": act.rrelu,
    "rrelu_": act.rrelu_,
    "channel_shuffle": pixel_shuffle.channel_shuffle,
    "native_channel_shuffle": pixel_shuffle.native_channel_shuffle,
    "pixel_shuffle": pixel_shuffle.pixel_shuffle,
    "pixel_unshuffle": pixel_shuffle.pixel_unshuffle,
    "affine_grid_generator": _grid.affine_grid_generator,
    "grid_sampler": _grid.grid_sampler,
    "grid_sampler_2d": _grid.grid_sampler_2d,
    "grid_sampler_3d": _grid.grid_sampler_3d,
    "unsafe_split": rnn.unsafe_split,
    "unsafe_chunk": rnn.unsafe_chunk,
    "native_layer_norm": lambda input, normalized_shape, weight, bias, eps: norm.native_layer_norm(
        input, tuple(normalized_shape), weight, bias, eps),
    "native_group_norm": norm.native_group_norm,
    "native_batch_norm": native_batch_norm,
    "native_dropout": misc.native_dropout,
    "conv_tbc": conv_tbc.conv_tbc,
    "_weight_norm_interface": unpool._weight_norm_interface,
    "_weight_norm": unpool._weight_norm,
    "norm_except_dim": unpool.norm_except_dim,
    **rnn.NETWORKS,
}

METHODS = {
    "unsafe_split": rnn.unsafe_split,
    "unsafe_chunk": rnn.unsafe_chunk,
    "relu": relu,
    "relu_": relu_,
    "softmax": softmax,
    "log_softmax": log_softmax,
}
