"""RAdam (rectified Adam, with optional decoupled weight decay), following PyTorch's single-tensor update."""

from __future__ import annotations

from typing import Any

import numpy as np

import tracegrad as _tg

from .._tensor import Tensor
from ._fused import addcmul_, added_scaled, refuse_unfit
from ._multi_tensor import (
    decayed_grad,
    decayed_then_moments,
    increment_steps,
    negated_if,
    real_views,
    to_scalar,
    value_of,
    view_lists_as_real,
)
from ._per_param import PerParamOptimizer, decay_in_place, lerp_
from .adam import check_adam_hparams
from .optimizer import as_real, state_as_real, step_tensor, zeros_state

__all__ = ["RAdam"]


class RAdam(PerParamOptimizer):
    _states_viewed_as_real = ("exp_avg", "exp_avg_sq")
    _views_states_first = True
    _scalar_state_keys = ("step",)
    _group_defaults_on_load = (("foreach", None), ("maximize", False), ("differentiable", False),
                               ("decoupled_weight_decay", False), ("capturable", False))

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_hparams(lr, betas, eps, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = step_tensor()
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)

    def _update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        lr, wd = group["lr"], group["weight_decay"]
        state["step"]._data += 1
        state["step"]._bump_version()
        step = float(state["step"]._data)
        param, grad = as_real(p._data), as_real(grad)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                decay_in_place(p, 1 - lr * wd)
            else:
                grad = added_scaled(grad, param, wd)
        exp_avg = state_as_real(p, state, "exp_avg")
        exp_avg_sq = state_as_real(p, state, "exp_avg_sq")
        lerp_(exp_avg, grad, 1 - beta1)
        state["exp_avg"]._bump_version()
        exp_avg_sq *= exp_avg_sq.dtype.type(beta2)
        state["exp_avg_sq"]._bump_version()
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        state["exp_avg_sq"]._bump_version()
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        update = exp_avg / bias_correction1 * lr
        # the variance is tractable (rectification applies) once rho_t exceeds 5
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            denom = np.sqrt(exp_avg_sq)
            denom += group["eps"]
            update = update * ((bias_correction2**0.5) / denom)
            update *= _rectification(rho_t, rho_inf)
        p._before_write()
        if update.shape != param.shape:
            refuse_unfit(param, update)  # (PyTorch's param.add_(update, alpha=-1))
        param -= update
        p._bump_version()

    def _differentiable_update(self, param: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """PyTorch's single-tensor update (not capturable) with ``differentiable=True``, in tensor operations."""
        beta1, beta2 = group["betas"]
        lr = to_scalar(group["lr"])
        param, grad, exp_avg, exp_avg_sq = real_views(param, grad, state["exp_avg"], state["exp_avg_sq"])
        state["step"] += 1
        step = value_of(state["step"])
        grad = decayed_grad(param, grad, group, lr)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / (1 - beta1**step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            root = exp_avg_sq.sqrt()
            root = root.add(group["eps"]) if group["differentiable"] else root.add_(group["eps"])
            adaptive_lr = (bias_correction2**0.5) / root
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * _rectification(rho_t, rho_inf), alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)

    def _foreach_update(self, params: list, grads: list, states: dict[str, list], group: dict[str, Any]) -> None:
        """PyTorch's ``_multi_tensor_radam`` (not capturable): one multiplier per element,
        ``sqrt(1 - beta2^t) * rect_step_size / (sqrt(v) + eps) + unrect_step_size``, applied in one ``addcmul_``."""
        beta1, beta2 = group["betas"]
        maximize = group["maximize"]
        lr = to_scalar(group["lr"])
        exp_avgs, exp_avg_sqs = states["exp_avg"], states["exp_avg_sq"]
        increment_steps(states["step"])
        view_lists_as_real(params, grads, exp_avgs, exp_avg_sqs)
        grads = negated_if(maximize, grads)
        counts = [value_of(step) for step in states["step"]]
        rho_inf = 2 / (1 - beta2) - 1
        rects = [_rectification(rho_inf - 2 * n * (beta2**n) / (1 - beta2**n), rho_inf) for n in counts]
        grads = decayed_then_moments(params, grads, exp_avgs, exp_avg_sqs, group, lr)
        bias_corrections1 = [1 - beta1**n for n in counts]
        unrect_step_sizes = [(lr * (0 if rect > 0 else 1.0) / bc) * -1 for rect, bc in zip(rects, bias_corrections1)]
        rect_step_sizes = [((1 - beta2**n) ** 0.5) * (lr * rect / bc) * -1
                           for n, rect, bc in zip(counts, rects, bias_corrections1)]
        buffer = _tg._foreach_sqrt(exp_avg_sqs)
        _tg._foreach_add_(buffer, group["eps"])
        _tg._foreach_div_(buffer, rect_step_sizes)
        _tg._foreach_reciprocal_(buffer)
        _tg._foreach_add_(buffer, unrect_step_sizes)
        _tg._foreach_addcmul_(params, exp_avgs, buffer)


def _rectification(rho_t: float, rho_inf: float) -> float:
    """RAdam's variance rectification term, 0 while the variance is intractable (``rho_t <= 5``)."""
    if rho_t > 5:
        return ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
    return 0
