"""Adadelta (weight decay, maximize), following PyTorch's single-tensor update."""

from __future__ import annotations

from typing import Any

import numpy as np

import tracegrad as _tg

from .._tensor import Tensor
from ..ops.complex_ops import _view_as_complex_kernel
from ._fused import add_scaled_, addcmul_, added_scaled
from ._multi_tensor import increment_steps, l2_decayed_grads, negated_if, real_views, to_scalar, view_lists_as_real
from ._per_param import PerParamOptimizer
from .optimizer import as_real, check_lr, state_as_real, step_tensor, zeros_state

__all__ = ["Adadelta"]


class Adadelta(PerParamOptimizer):
    _scalar_state_keys = ("step",)
    _states_viewed_as_real = ("square_avg", "acc_delta")
    _capturable_xla = False  # PyTorch's Adadelta asks for the device list without XLA

    def __init__(
        self,
        params,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = step_tensor()
        state["square_avg"] = zeros_state(p)
        state["acc_delta"] = zeros_state(p)

    def _differentiable_update(self, param: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """PyTorch's single-tensor update with ``differentiable=True`` (the delta a copy before its in-place
        scaling), in tensor operations; a complex parameter takes the delta viewed back as complex."""
        lr, rho, eps, wd = to_scalar(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
        state["step"] += 1
        if wd != 0:
            grad = grad.add(param, alpha=wd)
        square_avg, acc_delta, grad = real_views(state["square_avg"], state["acc_delta"], grad)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if group["differentiable"]:
            delta = delta.clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        if param.is_complex():
            delta = _tg.view_as_complex(delta)
        param.add_(delta, alpha=-lr)

    def _foreach_update(self, params: list, grads: list, states: dict[str, list], group: dict[str, Any]) -> None:
        """PyTorch's ``_multi_tensor_adadelta`` (not capturable): the steps counted before ``maximize`` negates."""
        lr, rho, eps, wd = to_scalar(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
        square_avgs, acc_deltas = states["square_avg"], states["acc_delta"]
        view_lists_as_real(params, grads, square_avgs, acc_deltas)
        increment_steps(states["step"])
        grads = negated_if(group["maximize"], grads)
        if wd != 0:
            grads = l2_decayed_grads(grads, params, wd, group["maximize"])
        _tg._foreach_mul_(square_avgs, rho)
        _tg._foreach_addcmul_(square_avgs, grads, grads, value=1 - rho)
        std = _tg._foreach_add(square_avgs, eps)
        _tg._foreach_sqrt_(std)
        deltas = _tg._foreach_add(acc_deltas, eps)
        _tg._foreach_sqrt_(deltas)
        _tg._foreach_div_(deltas, std)
        _tg._foreach_mul_(deltas, grads)
        _tg._foreach_mul_(acc_deltas, rho)
        _tg._foreach_addcmul_(acc_deltas, deltas, deltas, value=1 - rho)
        _tg._foreach_add_(params, deltas, alpha=-lr)

    def _update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
        state["step"]._data += 1
        state["step"]._bump_version()
        param = p._data
        if wd != 0:
            grad = added_scaled(grad, param, wd)
        grad = as_real(grad)
        square_avg = state_as_real(p, state, "square_avg")
        acc_delta = state_as_real(p, state, "acc_delta")
        square_avg *= square_avg.dtype.type(rho)
        state["square_avg"]._bump_version()
        addcmul_(square_avg, grad, grad, 1 - rho)
        state["square_avg"]._bump_version()
        std = np.sqrt(square_avg + eps)
        delta = np.sqrt(acc_delta + eps)
        delta /= std
        delta *= grad
        acc_delta *= acc_delta.dtype.type(rho)
        state["acc_delta"]._bump_version()
        addcmul_(acc_delta, delta, delta, 1 - rho)
        state["acc_delta"]._bump_version()
        p._before_write()
        if param.dtype.kind == "c":  # (the delta viewed as complex: added in complex arithmetic)
            delta = _view_as_complex_kernel(delta)
        add_scaled_(param, delta, -group["lr"])
        p._bump_version()
