"""NAdam (Nesterov-accelerated Adam, with momentum decay and optional decoupled weight decay), following
PyTorch's single-tensor update."""

from __future__ import annotations

from typing import Any

import numpy as np

import tracegrad as _tg

from .._tensor import Tensor, _wrap
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
from .optimizer import as_real, scalar_dtype, state_as_real, step_tensor, zeros_state

__all__ = ["NAdam"]


class NAdam(PerParamOptimizer):
    _states_viewed_as_real = ("exp_avg", "exp_avg_sq")
    _views_states_first = True
    _scalar_state_keys = ("step", "mu_product")
    _group_defaults_on_load = (("maximize", False), ("foreach", None), ("capturable", False), ("differentiable", False),
                               ("decoupled_weight_decay", False))
    _capturable_what = "params, mu_products and state_steps"
    _foreach_capturable_what = "params, mu_products, and state_steps"

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
        state["mu_product"] = _wrap(np.ones((), dtype=scalar_dtype()))
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)

    def _update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        lr, wd, momentum_decay = group["lr"], group["weight_decay"], group["momentum_decay"]
        state["step"]._data += 1
        state["step"]._bump_version()
        step = float(state["step"]._data)
        bias_correction2 = 1 - beta2**step
        param, grad = as_real(p._data), as_real(grad)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                decay_in_place(p, 1 - lr * wd)
            else:
                grad = added_scaled(grad, param, wd)
        mu = _momentum_coefficient(beta1, step, momentum_decay)
        mu_next = _momentum_coefficient(beta1, step + 1, momentum_decay)
        mu_product = state["mu_product"]._data
        mu_product *= mu  # accumulated in the state tensor's dtype, as PyTorch's
        state["mu_product"]._bump_version()
        exp_avg = state_as_real(p, state, "exp_avg")
        exp_avg_sq = state_as_real(p, state, "exp_avg_sq")
        lerp_(exp_avg, grad, 1 - beta1)
        state["exp_avg"]._bump_version()
        exp_avg_sq *= exp_avg_sq.dtype.type(beta2)
        state["exp_avg_sq"]._bump_version()
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        state["exp_avg_sq"]._bump_version()
        denom = np.sqrt(exp_avg_sq / bias_correction2)
        denom += group["eps"]
        mu_product_value = float(mu_product)
        mu_product_next = mu_product_value * mu_next
        p._before_write()
        if denom.shape != param.shape or grad.shape != param.shape:
            refuse_unfit(param, grad, denom)  # (PyTorch's param.addcdiv_(grad, denom))
        param += (-lr * (1.0 - mu) / (1.0 - mu_product_value)) * grad / denom
        p._bump_version()
        param += ((-lr * mu_next) / (1.0 - mu_product_next)) * exp_avg / denom
        p._bump_version()

    def _foreach_update(self, params: list, grads: list, states: dict[str, list], group: dict[str, Any]) -> None:
        """PyTorch's ``_multi_tensor_nadam`` (not capturable): the square roots divided by ``sqrt(bias_correction2)``
        (the single-tensor update takes the root of the quotient), step sizes as scalar lists."""
        beta1, beta2 = group["betas"]
        eps, maximize = group["eps"], group["maximize"]
        lr = to_scalar(group["lr"])
        exp_avgs, exp_avg_sqs, mu_products = states["exp_avg"], states["exp_avg_sq"], states["mu_product"]
        view_lists_as_real(params, grads, exp_avgs, exp_avg_sqs)
        grads = negated_if(maximize, grads)
        increment_steps(states["step"])
        grads = decayed_then_moments(params, grads, exp_avgs, exp_avg_sqs, group, lr)
        denoms = _tg._foreach_sqrt(exp_avg_sqs)
        counts = [value_of(step) for step in states["step"]]
        mus = [_momentum_coefficient(beta1, n, group["momentum_decay"]) for n in counts]
        mu_nexts = [_momentum_coefficient(beta1, n + 1, group["momentum_decay"]) for n in counts]
        _tg._foreach_mul_(mu_products, mus)
        _tg._foreach_div_(denoms, [(1 - beta2**n) ** 0.5 for n in counts])
        _tg._foreach_add_(denoms, eps)
        lr_value = value_of(lr)
        products = [value_of(mu_product) for mu_product in mu_products]
        grad_steps = [(lr_value * (1.0 - mu) / (1.0 - product)) * -1 for product, mu in zip(products, mus)]
        avg_steps = [(lr_value * mu_next / (1.0 - product * mu_next)) * -1
                     for product, mu_next in zip(products, mu_nexts)]
        _tg._foreach_addcdiv_(params, grads, denoms, grad_steps)
        _tg._foreach_addcdiv_(params, exp_avgs, denoms, avg_steps)

    def _differentiable_update(self, param: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """PyTorch's single-tensor update with ``differentiable=True``: the step sizes are tensors made from the
        mu product (in its dtype), multiplied into the gradient and the average before two ``addcdiv_``."""
        beta1, beta2 = group["betas"]
        lr, eps = to_scalar(group["lr"]), group["eps"]
        exp_avg, exp_avg_sq, mu_product = state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
        param, grad, exp_avg, exp_avg_sq = real_views(param, grad, exp_avg, exp_avg_sq)
        state["step"] += 1
        step = value_of(state["step"])
        grad = decayed_grad(param, grad, group, lr)
        mu = _momentum_coefficient(beta1, step, group["momentum_decay"])
        mu_next = _momentum_coefficient(beta1, step + 1, group["momentum_decay"])
        mu_product *= mu
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(1 - beta2**step).sqrt()
        if group["differentiable"]:
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            param.addcdiv_(grad * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom)
            param.addcdiv_(exp_avg * (-lr * mu_next / (1.0 - mu_product_next)), denom)
        else:
            mu_product_next = value_of(mu_product) * mu_next
            denom.add_(eps)
            param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - value_of(mu_product)))
            param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))


def _momentum_coefficient(beta1: float, step: float, momentum_decay: float) -> float:
    """NAdam's momentum cache ``mu`` at ``step``."""
    return beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
