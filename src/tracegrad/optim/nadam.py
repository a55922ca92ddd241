"""NAdam (Nesterov-accelerated Adam, with momentum decay and optional decoupled weight decay), following
PyTorch's single-tensor update."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap
from ._fused import addcmul_, added_scaled, refuse_unfit
from ._per_param import PerParamOptimizer, begin_write, decay_in_place, lerp_
from .adam import check_adam_hparams
from .optimizer import as_real, step_tensor, zeros_state

__all__ = ["NAdam"]


class NAdam(PerParamOptimizer):
    _group_defaults_on_load = (("maximize", False), ("foreach", None), ("capturable", False), ("differentiable", False),
                               ("decoupled_weight_decay", False))
    _capturable_what = "params, mu_products and state_steps"
    _foreach_capturable_what = "params, mu_products, and state_steps"
    _param_writes = 2  # two addcdiv_: the gradient's share, then the momentum's
    _state_writes = {"step": 1, "mu_product": 1, "exp_avg": 1, "exp_avg_sq": 2}

    def __init__(
        self,
        params,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_hparams(lr, betas, eps, weight_decay)
        if not momentum_decay >= 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = step_tensor()
        state["mu_product"] = _wrap(np.ones((), dtype=np.float32))
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)

    def _update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        lr, wd, momentum_decay = group["lr"], group["weight_decay"], group["momentum_decay"]
        state["step"]._data += 1
        step = float(state["step"]._data)
        bias_correction2 = 1 - beta2**step
        param, grad = as_real(p._data), as_real(grad)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                decay_in_place(p, group, 1 - lr * wd)
            else:
                grad = added_scaled(grad, param, wd)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product = state["mu_product"]._data
        mu_product *= mu  # accumulated in float32, as PyTorch's state tensor is
        exp_avg = as_real(state["exp_avg"]._data)
        exp_avg_sq = as_real(state["exp_avg_sq"]._data)
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= exp_avg_sq.dtype.type(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        denom = np.sqrt(exp_avg_sq / bias_correction2)
        denom += group["eps"]
        mu_product_value = float(mu_product)
        mu_product_next = mu_product_value * mu_next
        begin_write(p, group)
        if denom.shape != param.shape or grad.shape != param.shape:
            refuse_unfit(param, grad, denom)  # (PyTorch's param.addcdiv_(grad, denom))
        param += (-lr * (1.0 - mu) / (1.0 - mu_product_value)) * grad / denom
        param += ((-lr * mu_next) / (1.0 - mu_product_next)) * exp_avg / denom
