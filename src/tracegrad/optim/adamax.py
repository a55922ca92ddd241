"""Adamax (the infinity-norm variant of Adam), following PyTorch's single-tensor update."""

from __future__ import annotations

from typing import Any

import numpy as np

import tracegrad as _tg

from .._tensor import Tensor
from ._fused import added_scaled, refuse_unfit
from ._multi_tensor import (
    increment_steps,
    l2_decayed_grads,
    negated_if,
    real_views,
    to_scalar,
    value_of,
    view_lists_as_real,
)
from ._per_param import PerParamOptimizer, lerp_
from .adam import check_adam_hparams
from .optimizer import as_real, state_as_real, step_tensor, zeros_state

__all__ = ["Adamax"]


class Adamax(PerParamOptimizer):
    _scalar_state_keys = ("step",)
    _states_viewed_as_real = ("exp_avg", "exp_inf")

    def __init__(
        self,
        params,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_adam_hparams(lr, betas, eps, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = step_tensor()
        state["exp_avg"] = zeros_state(p)
        state["exp_inf"] = zeros_state(p)

    def _update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        wd = group["weight_decay"]
        state["step"]._data += 1
        state["step"]._bump_version()
        param = p._data
        if wd != 0:
            grad = added_scaled(grad, param, wd)
        param, grad = as_real(param), as_real(grad)
        exp_avg = state_as_real(p, state, "exp_avg")
        exp_inf = state_as_real(p, state, "exp_inf")
        lerp_(exp_avg, grad, 1 - beta1)
        state["exp_avg"]._bump_version()
        exp_inf *= beta2
        state["exp_inf"]._bump_version()
        norm = np.abs(grad)
        norm += group["eps"]
        np.maximum(exp_inf, norm, out=exp_inf)
        state["exp_inf"]._bump_version()
        clr = group["lr"] / (1 - beta1 ** float(state["step"]._data))
        p._before_write()
        if exp_avg.shape != param.shape:
            refuse_unfit(param, exp_avg, exp_inf)  # (PyTorch's param.addcdiv_(exp_avg, exp_inf))
        param += (-clr) * exp_avg / exp_inf
        p._bump_version()

    def _differentiable_update(self, param: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """PyTorch's single-tensor update with ``differentiable=True``: the infinity norm as the ``amax`` of the
        two candidates stacked (``maximum(out=)`` records no graph)."""
        beta1, beta2 = group["betas"]
        lr, wd, eps = to_scalar(group["lr"]), group["weight_decay"], group["eps"]
        step_t = state["step"]
        step_t += 1
        if wd != 0:
            grad = grad.add(param, alpha=wd)
        param, grad, exp_avg, exp_inf = real_views(param, grad, state["exp_avg"], state["exp_inf"])
        exp_avg.lerp_(grad, 1 - beta1)
        if group["differentiable"]:
            norm_buf = _tg.cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0)
            exp_inf.copy_(_tg.amax(norm_buf, 0, keepdim=False))
        else:
            _tg.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        clr = lr / (1 - beta1 ** value_of(step_t))
        param.addcdiv_(exp_avg, exp_inf, value=-clr)

    def _foreach_update(self, params: list, grads: list, states: dict[str, list], group: dict[str, Any]) -> None:
        """PyTorch's ``_multi_tensor_adamax`` (not capturable): one step size per parameter from the learning rate
        as a Python number (a tensor's ``item()``), where the single-tensor update divides a tensor lr as a
        tensor."""
        beta1, beta2 = group["betas"]
        lr, eps, wd, maximize = value_of(group["lr"]), group["eps"], group["weight_decay"], group["maximize"]
        exp_avgs, exp_infs = states["exp_avg"], states["exp_inf"]
        view_lists_as_real(params, grads, exp_avgs, exp_infs)
        grads = negated_if(maximize, grads)
        increment_steps(states["step"])
        if wd != 0:
            grads = l2_decayed_grads(grads, params, wd, maximize)
        _tg._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        _tg._foreach_mul_(exp_infs, beta2)
        if not maximize and wd == 0:  # (the gradients themselves: a copy first)
            grads = list(_tg._foreach_abs(grads))
        else:
            _tg._foreach_abs_(grads)
        _tg._foreach_add_(grads, eps)
        _tg._foreach_maximum_(exp_infs, grads)
        step_sizes = [(lr / (1 - beta1 ** value_of(step))) * -1 for step in states["step"]]
        _tg._foreach_addcdiv_(params, exp_avgs, exp_infs, step_sizes)
