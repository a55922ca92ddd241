"""Adagrad (learning-rate decay, weight decay, initial accumulator, maximize)."""

from __future__ import annotations

import numpy as np

import tracegrad as _tg

from .._tensor import Tensor, _wrap
from ._fused import addcmul_, added_scaled, refuse_unfit
from ._multi_tensor import (
    increment_steps,
    l2_decayed_grads,
    negated_if,
    real_views,
    to_scalar,
    value_of,
    view_lists_as_real,
)
from ._refusals import check_first_fused_dtype, check_fused_dtype, refuse_at_step, refuse_fused_combinations
from .optimizer import Optimizer, array_options, as_real, check_lr, state_as_real, step_tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    _states_viewed_as_real = ("sum",)
    _scalar_state_keys = ("step",)
    _has_fused = True
    _group_defaults_on_load = (("foreach", None), ("maximize", False), ("differentiable", False), ("fused", None))
    _has_capturable = False  # (PyTorch's Adagrad has no such option: a group's key is ignored)

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach=None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused=None,
    ) -> None:
        check_lr(lr)
        if not lr_decay >= 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not initial_accumulator_value >= 0.0:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not eps >= 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        refuse_fused_combinations(defaults)
        # Like PyTorch, the state exists from construction on (parameters of groups added later get theirs at
        # their first step)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p], group)

    def _init_state(self, p, state: dict, group: dict) -> None:
        """PyTorch's: the accumulator from the constructor's ``initial_accumulator_value`` (not the group's), as
        ``complex(v, v)`` for a complex parameter; the step float32 in a fused group."""
        value = self.defaults["initial_accumulator_value"]
        state["step"] = step_tensor(bool(group["fused"]))
        state["sum"] = _wrap(np.full_like(p._data, complex(value, value) if np.iscomplexobj(p._data) else value))

    def _init_group_state(self, group: dict) -> None:
        for p in group["params"]:
            if p._grad is not None and not self.state[p]:  # (a parameter of a group added after construction)
                self._init_state(p, self.state[p], group)

    def _differentiable_update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        """PyTorch's single-tensor update (dense gradients) in tensor operations."""
        lr, wd = to_scalar(group["lr"]), group["weight_decay"]
        step_t = state["step"]
        step_t += 1
        step = value_of(step_t)
        if wd != 0:
            grad = grad.add(param, alpha=wd)
        clr = lr / (1 + (step - 1) * group["lr_decay"])
        param, grad, state_sum = real_views(param, grad, state["sum"])
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt() + group["eps"] if group["differentiable"] else state_sum.sqrt().add_(group["eps"])
        param.addcdiv_(grad, std, value=-clr)

    def _foreach_update(self, params: list, grads: list, states: dict[str, list], group: dict) -> None:
        """PyTorch's ``_multi_tensor_adagrad`` (dense gradients): the decayed learning rates as a scalar list (of
        0-d tensors where lr is a tensor) multiplied into the gradients before one ``addcdiv_``."""
        lr, wd, maximize = to_scalar(group["lr"]), group["weight_decay"], group["maximize"]
        sums = states["sum"]
        view_lists_as_real(params, grads, sums)
        grads = negated_if(maximize, grads)
        increment_steps(states["step"])
        if wd != 0:
            grads = l2_decayed_grads(grads, params, wd, maximize)
        minus_clr = [-lr / (1 + (value_of(step) - 1) * group["lr_decay"]) for step in states["step"]]
        _tg._foreach_addcmul_(sums, grads, grads, value=1)
        std = _tg._foreach_sqrt(sums)
        _tg._foreach_add_(std, group["eps"])
        if wd != 0 or maximize:  # (into the gradients' copies made above)
            _tg._foreach_mul_(grads, minus_clr)
        else:
            grads = _tg._foreach_mul(grads, minus_clr)
        _tg._foreach_addcdiv_(params, grads, std)

    def _check_fused_group(self, group: dict) -> None:
        """PyTorch's checks of a fused group before its update: the dtype of the first parameter with a gradient
        (once) and of each whose state it creates, then its fused update's refusal of any complex parameter."""
        check_first_fused_dtype(self, group)
        params = [p for p in group["params"] if p._grad is not None]
        for p in params:
            if not self.state[p]:
                check_fused_dtype(p)
                self._init_state(p, self.state[p], group)
        if any(p.is_complex() for p in params):
            raise RuntimeError("`fused` does not support sparse grad or complex param")

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            refuse_at_step(self, group)
            if group["foreach"] and not group["fused"]:
                self._step_foreach(group)
                continue
            if self._single_tensor_in_tensor_ops(group):
                self._step_differentiable(group)
                continue
            group = array_options(group)
            if group["fused"]:
                self._check_fused_group(group)
            lr, lr_decay, wd, eps = group["lr"], group["lr_decay"], group["weight_decay"], group["eps"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if not state:  # (a parameter of a group added after construction)
                    self._init_state(p, state, group)
                param = p._data
                grad = p._grad._data
                if group["maximize"]:
                    grad = -grad
                state["step"]._data += 1
                state["step"]._bump_version()  # (each write's version as it succeeds: as torch's, where one fails)
                step = float(state["step"]._data)
                if wd != 0:
                    grad = added_scaled(grad, param, wd)
                param, grad = as_real(param), as_real(grad)
                clr = lr / (1 + (step - 1) * lr_decay)
                acc = state_as_real(p, state, "sum")
                addcmul_(acc, grad, grad, 1)
                state["sum"]._bump_version()
                std = np.sqrt(acc)
                std += eps
                p._before_write()
                if std.shape != param.shape or grad.shape != param.shape:
                    refuse_unfit(param, grad, std)  # (PyTorch's param.addcdiv_(grad, std))
                param += (-clr) * grad / std
                p._bump_version()
        return loss
