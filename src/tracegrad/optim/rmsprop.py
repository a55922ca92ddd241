"""RMSprop (centered, momentum, weight decay, maximize)."""

from __future__ import annotations

import numpy as np

import tracegrad as _tg

from .._tensor import Tensor
from ._fused import add_scaled_, addcmul_, added_scaled, lerp_, refuse_unfit
from ._multi_tensor import increment_steps, l2_decayed_grads, negated_if, real_views, to_scalar, view_lists_as_real
from ._refusals import refuse_at_step
from .optimizer import (
    Optimizer,
    array_options,
    as_real,
    check_lr,
    state_as_real,
    step_tensor,
    zeros_state,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    _states_viewed_as_real = ("square_avg", "grad_avg", "momentum_buffer")
    _scalar_state_keys = ("step",)
    _group_defaults_on_load = (("momentum", 0), ("centered", False), ("foreach", None), ("maximize", False),
                               ("differentiable", False), ("capturable", False))
    _foreach_capturable_xla = True  # (its foreach update asks for the device list with XLA)
    def __init__(
        self,
        params,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach=None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not momentum >= 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not alpha >= 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_group_state(self, group: dict) -> None:
        for p in group["params"]:
            if p._grad is not None and len(self.state[p]) == 0:
                _init_state(self.state[p], p, group["momentum"], group["centered"])

    def _differentiable_update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        """PyTorch's single-tensor update in tensor operations."""
        lr, alpha, wd, momentum = to_scalar(group["lr"]), group["alpha"], group["weight_decay"], group["momentum"]
        state["step"] += 1
        if wd != 0:
            grad = grad.add(param, alpha=wd)
        param, grad, square_avg = real_views(param, grad, state["square_avg"])
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg = real_views(state["grad_avg"])[0]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(group["eps"]) if group["differentiable"] else avg.add_(group["eps"])
        if momentum > 0:
            buf = real_views(state["momentum_buffer"])[0]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)

    def _foreach_update(self, params: list, grads: list, states: dict[str, list], group: dict) -> None:
        """PyTorch's ``_multi_tensor_rmsprop`` (not capturable)."""
        lr, alpha, eps, momentum = to_scalar(group["lr"]), group["alpha"], group["eps"], group["momentum"]
        square_avgs = states["square_avg"]
        buffers = [states["momentum_buffer"]] if momentum > 0 else []
        grad_avgs = [states["grad_avg"]] if group["centered"] else []
        view_lists_as_real(params, grads, square_avgs, *buffers, *grad_avgs)
        grads = negated_if(group["maximize"], grads)
        increment_steps(states["step"])
        if group["weight_decay"] != 0:
            grads = l2_decayed_grads(grads, params, group["weight_decay"], group["maximize"])
        _tg._foreach_mul_(square_avgs, alpha)
        _tg._foreach_addcmul_(square_avgs, grads, grads, value=1 - alpha)
        if grad_avgs:
            _tg._foreach_lerp_(grad_avgs[0], grads, 1 - alpha)
            avg = _tg._foreach_addcmul(square_avgs, grad_avgs[0], grad_avgs[0], value=-1)
            _tg._foreach_sqrt_(avg)
        else:
            avg = _tg._foreach_sqrt(square_avgs)
        _tg._foreach_add_(avg, eps)
        if buffers:
            _tg._foreach_mul_(buffers[0], momentum)
            _tg._foreach_addcdiv_(buffers[0], grads, avg)
            _tg._foreach_add_(params, buffers[0], alpha=-lr)
        else:
            _tg._foreach_addcdiv_(params, grads, avg, value=-lr)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            refuse_at_step(self, group)
            if group["foreach"]:
                self._step_foreach(group)
                continue
            if self._single_tensor_in_tensor_ops(group):
                self._step_differentiable(group)
                continue
            group = array_options(group)
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    _init_state(state, p, momentum, centered)
                param = p._data
                p._before_write()
                grad = p._grad._data
                if group["maximize"]:
                    grad = -grad
                state["step"]._data += 1
                state["step"]._bump_version()  # (each write's version as it succeeds: as torch's, where one fails)
                if wd != 0:
                    grad = added_scaled(grad, param, wd)
                param, grad = as_real(param), as_real(grad)
                square_avg = state_as_real(p, state, "square_avg")
                square_avg *= square_avg.dtype.type(alpha)
                state["square_avg"]._bump_version()
                addcmul_(square_avg, grad, grad, 1 - alpha)
                state["square_avg"]._bump_version()
                if centered:
                    grad_avg = state_as_real(p, state, "grad_avg")
                    lerp_(grad_avg, grad, 1 - alpha)
                    state["grad_avg"]._bump_version()
                    avg = np.sqrt(addcmul_(square_avg.copy(), grad_avg, grad_avg, -1.0))
                else:
                    avg = np.sqrt(square_avg)
                avg += eps
                if momentum > 0:
                    buf = state_as_real(p, state, "momentum_buffer")
                    buf *= momentum
                    state["momentum_buffer"]._bump_version()
                    buf += grad / avg
                    state["momentum_buffer"]._bump_version()
                    add_scaled_(param, buf, -lr)
                else:
                    if avg.shape != param.shape or grad.shape != param.shape:
                        refuse_unfit(param, grad, avg)  # (PyTorch's param.addcdiv_(grad, avg))
                    param += (-lr) * grad / avg
                p._bump_version()
        return loss


def _init_state(state: dict, p, momentum: float, centered: bool) -> None:
    state["step"] = step_tensor()
    state["square_avg"] = zeros_state(p)
    if momentum > 0:
        state["momentum_buffer"] = zeros_state(p)
    if centered:
        state["grad_avg"] = zeros_state(p)
