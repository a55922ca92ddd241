"""nn functions PyTorch also has at the top level (``torch.kl_div``, ``torch.max_pool2d``...), with the
top-level signatures, which are ATen's: a reduction is the enum (0 none, 1 mean, 2 sum), every argument can be
positional, and an empty ``stride`` means the kernel size. Called from Python, PyTorch's bindings default the
reduction to 0 (no reduction), not to ATen's Mean: so do these. They call nn.functional (layer 7), so they live here
rather than in ops/namespace_extras and are put in the ``tracegrad`` namespace by ``tracegrad/__init__``.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.nn_ops import loss as _loss
from ..ops.nn_ops.conv import convolution
from . import functional as F
from .modules.module import typename

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction: int) -> str:
    """ATen's Reduction enum as nn.functional's string: ATen's losses reduce for Mean (1) and Sum (2) only, and
    leave the loss unreduced for any other int."""
    return _REDUCTIONS[reduction] if reduction in (1, 2) else "none"


def _stride(stride):
    return None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else stride


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False) -> Tensor:  # noqa: A002
    # straight to the operator: F.kl_div's warning about 'mean' is nn.functional's, not ATen's
    return _loss.kl_div(input, target, _reduction(reduction), log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                                     pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:
    # (the aten op, which broadcasts: F's "Target size ... must be the same" check is nn.functional's own)
    return F._bce_with_logits_operator(input, target, weight, pos_weight, reduction if reduction in (1, 2) else 0)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:  # noqa: A002
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,  # noqa: A002
                     reduction: int) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):  # noqa: A002
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,  # noqa: A002
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices=True)


def max_pool2d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):  # noqa: A002
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):  # noqa: A002
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def avg_pool1d(input: Tensor, kernel_size, stride=(), padding=0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True) -> Tensor:
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def adaptive_max_pool1d(input: Tensor, output_size) -> tuple[Tensor, Tensor]:  # noqa: A002
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


PUBLIC = {
    "kl_div": kl_div,
    "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits,
    "cosine_embedding_loss": cosine_embedding_loss,
    "hinge_embedding_loss": hinge_embedding_loss,
    "margin_ranking_loss": margin_ranking_loss,
    "poisson_nll_loss": poisson_nll_loss,
    "triplet_margin_loss": triplet_margin_loss,
    "max_pool1d": max_pool1d,
    "max_pool1d_with_indices": max_pool1d_with_indices,
    "max_pool2d": max_pool2d,
    "max_pool3d": max_pool3d,
    "avg_pool1d": avg_pool1d,
    "adaptive_avg_pool1d": F.adaptive_avg_pool1d,
    "adaptive_max_pool1d": adaptive_max_pool1d,
    "prelu": F.prelu,
    "hardshrink": F.hardshrink,
    "rms_norm": F.rms_norm,
    "convolution": convolution,
    "typename": typename,  # (nn.Module's error messages use it too)
}
