"""Losses that PyTorch composes from other operators in C++ (margin ranking, hinge and cosine embedding, triplet
margin, Poisson NLL), written with the same operators in the same order, so their graphs are PyTorch's.

A number in PyTorch's C++ selects an operator's Scalar overload (``t + 1e-12`` is AddBackward1, ``1 - t`` a
filled tensor minus ``t``); in-place steps on fresh intermediates record the same node as the out-of-place
operator, but ``clamp_min_`` (which saves its input) first records the copy it saves, as PyTorch's does: so it is
written in place where PyTorch's is, for the same sequence numbers. ``reduction`` is PyTorch's enum: 0 none,
1 mean, 2 sum.
"""

from __future__ import annotations

import math

from ..._tensor import Tensor
from .._util import as_double
from ..creation import zeros_like
from ..pointwise import add, add_, div, eq, exp, le, log, mul, ne, neg, sqrt_, sub, where
from ..reductions import sum as sum_op
from ..reductions_extra import _mean_full
from ..scalar_overloads import add_scalar, mul_scalar, scalar_minus, sub_scalar
from ..shape_extra import masked_fill_scalar
from ..unary import clamp_min_
from ._basic import clamp_min

# The epsilon PyTorch adds to squared magnitudes in cosine_embedding_loss.
_COSINE_EPSILON = 1e-12


def apply_loss_reduction(loss: Tensor, reduction: int) -> Tensor:
    """PyTorch's apply_loss_reduction: ``mean()`` (MeanBackward0), ``sum()`` (SumBackward0) or the loss."""
    if reduction == 1:
        return _mean_full(loss)
    if reduction == 2:
        return sum_op(loss, None, False, None)
    return loss


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float, reduction: int) -> Tensor:
    """max(0, -target * (input1 - input2) + margin), the difference taken first (as PyTorch's compiled C++ does:
    its node comes first, and a bool input fails there). ``margin`` is a C++ double: an integer input gives a
    float loss."""
    difference = sub(input1, input2)
    unclamped = add_scalar(mul(neg(target), difference), float(margin))
    return apply_loss_reduction(clamp_min_(unclamped, 0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float, reduction: int) -> Tensor:
    """``input`` where target is 1, max(0, margin - input) where it is -1."""
    margin = as_double(margin)  # (a C++ double)
    zeros = zeros_like(input)
    margin_clamp = clamp_min_(scalar_minus(margin, input), 0)
    output_margin = where(ne(target, 1), margin_clamp, zeros)
    output_self = where(ne(target, -1), input, zeros)
    return apply_loss_reduction(add(output_margin, output_self), reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float, reduction: int) -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1."""
    target_dim = target.ndim
    if target_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target_dim == 1 and not (input1.ndim == 2 and input2.ndim == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if target_dim == 0 and not (input1.ndim == 1 and input2.ndim == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = sum_op(mul(input1, input2), (target_dim,), False, None)
    mag_square1 = add_scalar(sum_op(mul(input1, input1), (target_dim,), False, None), _COSINE_EPSILON)
    mag_square2 = add_scalar(sum_op(mul(input2, input2), (target_dim,), False, None), _COSINE_EPSILON)
    cos = div(prod_sum, sqrt_(mul(mag_square1, mag_square2)))  # (in place, as PyTorch's: its tangent too)
    zeros = zeros_like(cos)
    positive = scalar_minus(1, cos)
    negative = clamp_min_(sub_scalar(cos, as_double(margin)), 0)  # (a C++ double)
    output = add(where(eq(target, 1), positive, zeros), where(eq(target, -1), negative, zeros))
    return apply_loss_reduction(output, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float, p: float, eps: float,
                        swap: bool, reduction: int) -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm pairwise distance (with
    ``swap``, the smaller of d(anchor, negative) and d(positive, negative))."""
    from ..binary import minimum
    from .misc import pairwise_distance

    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if not dims[0] == dims[1] == dims[2]:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
                           f"{dims[2]}D inputs")
    p, eps, margin = float(p), as_double(eps), as_double(margin)  # (C++ doubles: the norm nodes keep 2.0, not 2)
    dist_pos = pairwise_distance(anchor, positive, p, eps, False)
    dist_neg = pairwise_distance(anchor, negative, p, eps, False)
    if swap:
        dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps, False))
    output = clamp_min(sub(add_scalar(dist_pos, margin), dist_neg), 0)
    return apply_loss_reduction(output, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """exp(input) - target * input (``log_input``), else input - target * log(input + eps); with ``full``, plus
    Stirling's term target log(target) - target + log(2 pi target) / 2 where target > 1."""
    # (C++ evaluates the right operand of a binary operator first: its nodes get the lower sequence numbers,
    # which decides the order in which backward adds up the input's gradients)
    if log_input:
        product = mul(target, input)
        loss = sub(exp(input), product)
    else:
        loss = sub(input, mul(target, log(add_scalar(input, as_double(eps)))))  # (a C++ double)
    if full:
        half_log = mul_scalar(log(mul_scalar(target, 2 * math.pi)), 0.5)
        stirling = add(sub(mul(target, log(target)), target), half_log)
        loss = add_(loss, masked_fill_scalar(stirling, le(target, 1), 0))  # (``loss +=``: its tangent copied in)
    return apply_loss_reduction(loss, reduction)
