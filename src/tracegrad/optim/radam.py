"""RAdam (rectified Adam, with optional decoupled weight decay), following PyTorch's single-tensor update."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ._fused import addcmul_, added_scaled, refuse_unfit
from ._per_param import PerParamOptimizer, begin_write, decay_in_place, lerp_
from .adam import check_adam_hparams
from .optimizer import as_real, step_tensor, zeros_state

__all__ = ["RAdam"]


class RAdam(PerParamOptimizer):
    _group_defaults_on_load = (("foreach", None), ("maximize", False), ("differentiable", False),
                               ("decoupled_weight_decay", False), ("capturable", False))
    _state_writes = {"step": 1, "exp_avg": 1, "exp_avg_sq": 2}

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
        step = float(state["step"]._data)
        param, grad = as_real(p._data), as_real(grad)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                decay_in_place(p, group, 1 - lr * wd)
            else:
                grad = added_scaled(grad, param, wd)
        exp_avg = as_real(state["exp_avg"]._data)
        exp_avg_sq = as_real(state["exp_avg_sq"]._data)
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= exp_avg_sq.dtype.type(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
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
            update *= ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        begin_write(p, group)
        if update.shape != param.shape:
            refuse_unfit(param, update)  # (PyTorch's param.add_(update, alpha=-1))
        param -= update
