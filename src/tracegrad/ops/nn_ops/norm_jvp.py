"""Forward-mode formulas of the normalisations, as FunctionsManual writes them (``batch_norm_jvp``,
``layer_norm_jvp``, ``group_norm_jvp`` and their helpers ``_invstd_jvp``, ``_norm_jvp``, ``_affine_jvp``).

Each step is the operator torch's formula calls, in place where it writes in place, so that a tangent computed
with inputs requiring grad records torch's graph and rounds as torch's does. A missing tangent of a present
input (weight without tangent, say) is PyTorch's zero tensor: zeros here, which take the formula's branch for a
zero tensor (out of place) as torch's does.
"""

from __future__ import annotations

import math

from ..._tensor import Tensor
from .._jvp import zero
from ..pointwise import add, add_, mul, mul_, neg, pow, sub
from ..reductions import mean as mean_op
from ..reductions import sum as sum_op
from ..scalar_overloads import div_scalar_
from ..views import view


class Tangent:
    """A tangent as the formulas read it: the tensor, and whether it stands for PyTorch's zero tensor."""

    __slots__ = ("tensor", "is_zero")

    def __init__(self, tensor: Tensor | None, is_zero: bool = False) -> None:
        self.tensor, self.is_zero = tensor, is_zero

    @classmethod
    def of(cls, tangent: Tensor | None, primal: Tensor | None, dtype) -> Tangent:
        """``tangent``, or where ``primal`` is given without one, the zero tensor torch's codegen makes for it."""
        if tangent is not None or primal is None:
            return cls(tangent)
        return cls(zero(primal, dtype, True), True)

    def viewed(self, shape) -> Tangent:
        return self if self.tensor is None else Tangent(view(self.tensor, shape), self.is_zero)


def _centred_tangent(input_t: Tensor, dims: list) -> Tensor:
    return sub(input_t, mean_op(input_t, dims, True, None))  # input_t - input_t.mean(dims, true)


def _invstd_jvp(input_p: Tensor, input_t: Tangent, mean_p: Tensor, invstd_p: Tensor, dims: list, numel: int,
                keepdim: bool) -> Tensor:
    """The tangent of ``1 / input.std(dims, keepdim)``."""
    if input_t.is_zero:
        invstd_t = mul(mul(neg(pow(invstd_p, 3)), _centred_tangent(input_t.tensor, dims)), sub(input_p, mean_p))
    else:
        invstd_t = _centred_tangent(input_t.tensor, dims)
        mul_(invstd_t, sub(input_p, mean_p))
        mul_(invstd_t, neg(pow(invstd_p, 3)))
    invstd_t = sum_op(invstd_t, dims, keepdim, None)
    return div_scalar_(invstd_t, numel)


def _norm_jvp(input_p: Tensor, input_t: Tangent, mean_p: Tensor, invstd_p: Tensor, dims: list,
              numel: int) -> Tensor:
    """The tangent of ``(input - input.mean(dims)) * input.invstd(dims)``."""
    invstd_t = _invstd_jvp(input_p, input_t, mean_p, invstd_p, dims, numel, True)
    if input_t.is_zero:
        return add(mul(_centred_tangent(input_t.tensor, dims), invstd_p), mul(sub(input_p, mean_p), invstd_t))
    result_t = _centred_tangent(input_t.tensor, dims)
    mul_(result_t, invstd_p)
    temp = sub(input_p, mean_p)
    mul_(temp, invstd_t)
    return add_(result_t, temp)


def _affine_jvp(input_p: Tensor | None, input_t: Tangent, weight_p: Tensor | None, weight_t: Tangent,
                bias_t: Tangent) -> Tensor:
    """The tangent of ``input * weight + bias`` (either may be missing); writes into ``input_t`` where torch's
    does (out of place where a term is a zero tensor)."""
    result, result_is_zero = input_t.tensor, input_t.is_zero
    if weight_p is not None:
        if result_is_zero or weight_t.is_zero:
            result = add(mul(result, weight_p), mul(input_p, weight_t.tensor))
            result_is_zero = result_is_zero and weight_t.is_zero  # (a zero tensor plus a tensor is a tensor)
        else:
            mul_(result, weight_p)
            add_(result, mul_(input_p, weight_t.tensor))
    if bias_t.tensor is None:
        return result
    if result_is_zero:
        return add(result, bias_t.tensor)
    # (an in-place sum materialises a zero tensor operand as +0.)
    return add_(result, zero(bias_t.tensor, bias_t.tensor._data.dtype, False) if bias_t.is_zero else bias_t.tensor)


def _normalized_primal(input_p: Tensor, mean_p: Tensor, invstd_p: Tensor, weight_p: Tensor | None):
    """``(input_p - mean_p) * invstd_p``, which only the weight's term reads."""
    return None if weight_p is None else mul(sub(input_p, mean_p), invstd_p)


def _viewed(t: Tensor | None, shape) -> Tensor | None:
    return None if t is None else view(t, shape)


def batch_norm_jvp(input_p: Tensor, input_t: Tangent, weight_p: Tensor | None, weight_t: Tangent, bias_t: Tangent,
                   running_mean: Tensor | None, running_var: Tensor | None, saved_mean: Tensor,
                   saved_invstd: Tensor, train: bool, eps: float) -> Tensor:
    """FunctionsManual's ``batch_norm_jvp``: statistics over every dim but the channels (dim 1)."""
    shape = tuple(input_t.tensor.shape)
    dims = [d for d in range(len(shape)) if d != 1]
    view_size = tuple(1 if d != 1 else n for d, n in enumerate(shape))
    numel = math.prod(shape[d] for d in dims)
    if train:
        mean_p, invstd_p = view(saved_mean, view_size), view(saved_invstd, view_size)
        result_t = _norm_jvp(input_p, input_t, mean_p, invstd_p, dims, numel)
    else:
        from ..pointwise import sqrt
        from ..scalar_overloads import add_scalar
        from ..unary import reciprocal

        mean_p = view(running_mean, view_size)
        invstd_p = view(reciprocal(sqrt(add_scalar(running_var, eps))), view_size)  # (1 / at::sqrt(var + eps))
        result_t = mul(input_t.tensor, invstd_p)
    result_p = _normalized_primal(input_p, mean_p, invstd_p, weight_p)
    # (a zero tensor's product is one; _norm_jvp's mean of it is a tensor)
    return _affine_jvp(result_p, Tangent(result_t, input_t.is_zero and not train), _viewed(weight_p, view_size),
                       weight_t.viewed(view_size), bias_t.viewed(view_size))


def layer_norm_jvp(input_p: Tensor, input_t: Tangent, weight_p: Tensor | None, weight_t: Tangent, bias_t: Tangent,
                   saved_mean: Tensor, saved_invstd: Tensor, normalized_ndim: int) -> Tensor:
    """FunctionsManual's ``layer_norm_jvp``: statistics over the last ``normalized_ndim`` dims."""
    shape = tuple(input_t.tensor.shape)
    lead = len(shape) - normalized_ndim
    dims = list(range(lead, len(shape)))
    view_size = shape[:lead] + (1,) * normalized_ndim
    view_size_affine = (1,) * lead + shape[lead:]
    mean_p, invstd_p = view(saved_mean, view_size), view(saved_invstd, view_size)
    result_t = _norm_jvp(input_p, input_t, mean_p, invstd_p, dims, math.prod(shape[lead:]))
    result_p = _normalized_primal(input_p, mean_p, invstd_p, weight_p)
    return _affine_jvp(result_p, Tangent(result_t), _viewed(weight_p, view_size_affine),
                       weight_t.viewed(view_size_affine), bias_t.viewed(view_size_affine))


def _group_rows(n: int, groups: int) -> tuple:
    return (1, n * groups, -1 if n else 1)


def group_norm_jvp(input_p: Tensor, input_t: Tangent, weight_p: Tensor | None, weight_t: Tangent, bias_t: Tangent,
                   saved_mean: Tensor, saved_invstd: Tensor, groups: int) -> Tensor:
    """FunctionsManual's ``group_norm_jvp``: batch norm's over (1, N * groups, -1), then the per-channel affine."""
    input_shape = tuple(input_p.shape)
    rows = _group_rows(input_shape[0], groups)
    input_t_reshaped = input_t.viewed(rows)
    input_p_reshaped = view(input_p, rows)
    none = Tangent(None)
    result_t = view(batch_norm_jvp(input_p_reshaped, input_t_reshaped, None, none, none, None, None, saved_mean,
                                   saved_invstd, True, 0.0), input_shape)
    result_p = None
    if weight_p is not None:
        per_row = (1, input_t_reshaped.tensor.shape[1], 1)
        result_p = view(mul(sub(input_p_reshaped, view(saved_mean, per_row)), view(saved_invstd, per_row)),
                        input_shape)
    affine_shape = (1, input_shape[1]) + (1,) * (len(input_shape) - 2)
    return _affine_jvp(result_p, Tangent(result_t), _viewed(weight_p, affine_shape),
                       weight_t.viewed(affine_shape), bias_t.viewed(affine_shape))


def group_norm_mean_jvp(input_t: Tensor, mean_p: Tensor, groups: int) -> Tensor:
    rows = _group_rows(input_t.shape[0], groups)
    return view(mean_op(view(input_t, rows), [2], False, None), tuple(mean_p.shape))  # (.view_as(mean_p))


def group_norm_invstd_jvp(input_p: Tensor, input_t: Tensor, mean_p: Tensor, invstd_p: Tensor,
                          groups: int) -> Tensor:
    rows = _group_rows(input_p.shape[0], groups)
    input_t_reshaped = view(input_t, rows)
    # (torch passes the tangent where _invstd_jvp takes the primal and the primal for the tangent: the same sum,
    # Σ (x - mean) t, rounded its way)
    swapped_p, swapped_t = input_t_reshaped, Tangent(view(input_p, rows))
    return view(_invstd_jvp(swapped_p, swapped_t, view(mean_p, rows), view(invstd_p, rows), [2],
                            input_t_reshaped.shape[2], False), tuple(invstd_p.shape))
