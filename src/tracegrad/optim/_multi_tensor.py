"""The pieces PyTorch's foreach updates (``_multi_tensor_*`` in ``torch/optim``) share, written with tracegrad's
own tensors and ``_foreach_*`` operators.

A foreach update rounds otherwise than the single-tensor one: it folds operations together (ASGD's decay and step
in one ``addcmul_``), computes per-parameter factors from the step *tensors* (float32 arithmetic) and passes
scalar lists where the single-tensor update passes one number. The optimizers whose foreach arithmetic differs
(ASGD, Adamax, NAdam, RAdam) run PyTorch's foreach update operation by operation through these operators, which
round as PyTorch's per-tensor CPU kernels do; the in-place ones advance the tensors' versions as PyTorch's.
"""

from __future__ import annotations

from typing import Any

import tracegrad as _tg

from .._C._foreach_grouping import _group_tensors_by_device_and_dtype
from .._state import STATE
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["grouped_by_dtype", "view_lists_as_real", "increment_steps", "negated_if",
           "l2_decayed_grads", "to_scalar", "value_of", "real_views", "l2_decayed_grad",
           "decayed_then_moments"]


def grouped_by_dtype(params: list[Tensor], *others: list, with_indices: bool = False) -> list[tuple[list, ...]]:
    """``Optimizer._group_tensors_by_device_and_dtype`` on the CPU, ``torch._C``'s grouping itself: the lists split by
    the parameters' dtype, each parameter's entries staying together, the groups in its order (the newest dtype
    first), with its refusals; each group's positions in ``params`` last where ``with_indices``."""
    if STATE.torch_function:  # (torch's grouping is a no_grad function: a mode sees its two grad switches)
        with no_grad():
            groups = _group_tensors_by_device_and_dtype([params, *others], with_indices).values()
    else:
        groups = _group_tensors_by_device_and_dtype([params, *others], with_indices).values()
    return [(*lists, indices) if with_indices else tuple(lists) for lists, indices in groups]


def view_lists_as_real(params: list[Tensor], *others: list[Tensor]) -> None:
    """PyTorch's ``_view_as_real``: each complex parameter, and the same entry of each other list, replaced by its
    ``view_as_real`` in place in the lists. Where none is complex nothing is asked (torch's ``has_complex``)."""
    if not any(p._data.dtype.kind == "c" for p in params):
        return
    for i, p in enumerate(params):
        if _tg.is_complex(p):
            params[i] = _tg.view_as_real(p)
            for lst in others:
                lst[i] = _tg.view_as_real(lst[i])


def increment_steps(steps: list[Tensor]) -> None:
    """``step += 1`` as the foreach updates write it: for CPU step tensors a float tensor one, ``alpha=1.0``."""
    if steps[0].is_cpu:
        _tg._foreach_add_(steps, _tg.tensor(1.0, device="cpu"), alpha=1.0)
    else:
        _tg._foreach_add_(steps, 1)


def negated_if(maximize: bool, grads: list[Tensor]) -> list[Tensor]:
    return list(_tg._foreach_neg(grads)) if maximize else grads


def l2_decayed_grads(grads: list[Tensor], params: list[Tensor], weight_decay: float, maximize: bool) -> list:
    """``grad + weight_decay * param``: into the negated copies where ``maximize`` made them, else new tensors."""
    if maximize:
        _tg._foreach_add_(grads, params, alpha=weight_decay)
        return grads
    return list(_tg._foreach_add(grads, params, alpha=weight_decay))


def to_scalar(x: Any) -> Any:
    """PyTorch's ``_to_scalar``: a 1-element tensor hyper-parameter as a 0-d tensor, a number as it is."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def value_of(x: Any) -> Any:
    """PyTorch's ``_get_value``: a tensor's ``item()``, a number as it is."""
    return x.item() if isinstance(x, Tensor) else x


def real_views(param: Tensor, *tensors: Tensor) -> tuple[Tensor, ...]:
    """``param`` and ``tensors`` through their ``view_as_real`` where ``param`` is complex (PyTorch's single-tensor
    updates view them so before their arithmetic), else as they are."""
    if not _tg.is_complex(param):
        return (param, *tensors)
    return tuple(_tg.view_as_real(t) for t in (param, *tensors))


def l2_decayed_grad(grad: Tensor, param: Tensor, weight_decay: Any) -> Tensor:
    """PyTorch's L2 decay in a differentiable single-tensor update: into ``grad`` itself where the weight decay is a
    tensor that requires grad (``addcmul_`` takes a tensor factor, ``alpha`` does not), else a new tensor."""
    if isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
        return grad.addcmul_(param.clone(), weight_decay)
    return grad.add(param, alpha=weight_decay)


def decayed_grad(param: Tensor, grad: Tensor, group: dict, lr: float) -> Tensor:
    """NAdam's and RAdam's single-tensor weight decay: the parameter scaled in place where it is decoupled, else the
    gradient plus ``weight_decay * param`` (a new tensor); the gradient to go on with."""
    wd = group["weight_decay"]
    if wd != 0:
        if group["decoupled_weight_decay"]:
            param.mul_(1 - lr * wd)
        else:
            grad = grad.add(param, alpha=wd)
    return grad


def decayed_then_moments(params: list, grads: list, exp_avgs: list, exp_avg_sqs: list, group: dict, lr: float) -> list:
    """The opening of PyTorch's ``_multi_tensor_nadam`` and ``_multi_tensor_radam``: the weight decay (decoupled, into
    the parameters, or L2, into new gradients), then Adam's two moments updated in place; the gradients to go on
    with."""
    beta1, beta2 = group["betas"]
    wd = group["weight_decay"]
    if wd != 0:
        if group["decoupled_weight_decay"]:
            _tg._foreach_mul_(params, 1 - lr * wd)
        else:
            grads = l2_decayed_grads(grads, params, wd, group["maximize"])
    _tg._foreach_lerp_(exp_avgs, grads, 1 - beta1)
    _tg._foreach_mul_(exp_avg_sqs, beta2)
    _tg._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
    return grads
