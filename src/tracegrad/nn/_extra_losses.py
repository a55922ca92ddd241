"""The losses PyTorch writes in Python all the way down (``gaussian_nll_loss``, ``multilabel_soft_margin_loss``,
``triplet_margin_with_distance_loss``); the others reach their operator from ``nn/functional.py``, as torch's do."""

from __future__ import annotations

import math
from collections.abc import Callable

from .._tensor import Tensor


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """0.5 * (log(var) + (input - target)^2 / var), var clamped below by ``eps`` (without a gradient
    through the clamp); ``var`` may have one dim fewer than ``input``, or one mismatched dim of size 1."""
    from .. import any as _any
    from .. import no_grad
    from ..ops import pointwise as pw
    from ..ops.creation import ones_like

    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif _any(var < 0):  # (torch.any: its parser refuses what ``var < 0`` gives for a bool ``var``)
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():  # one variance per row of the last dim
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim
                  and sum(v for i, v in zip(input.size(), var.size(), strict=True) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (pw.log(var) + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# ---- margin losses --------------------------------------------------------------------------------------------


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    """PyTorch writes this one in Python: the same tensor operations in the same order give its graph."""
    from .functional import _reduction, logsigmoid

    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    if class_dim < 0:  # (PyTorch's input.size(-1) on a 0-D tensor)
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    classes = input.size(class_dim)
    loss = loss.sum(dim=class_dim) / classes  # one loss per sample
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) for any distance d (pairwise_distance by
    default); PyTorch writes it in Python, so its graph is that of the user-level operations below."""
    from .. import clamp_min, minimum
    from .. import mean as mean_all
    from .. import sum as sum_all
    from .functional import pairwise_distance

    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:  # the positive example as anchor where it is closer to the negative one (Balntas et al.)
        dist_neg = minimum(dist_neg, distance_function(positive, negative))
    loss = clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return sum_all(loss)
    if reduction == "mean":
        return mean_all(loss)
    return loss
