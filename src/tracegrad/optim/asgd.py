"""ASGD (averaged stochastic gradient descent), following PyTorch's single-tensor update."""

from __future__ import annotations

from typing import Any

import numpy as np

import tracegrad as _tg

from .._tensor import Tensor, _wrap
from ._fused import add_scaled_, added_scaled, refuse_unfit
from ._multi_tensor import (
    increment_steps,
    l2_decayed_grads,
    negated_if,
    real_views,
    to_scalar,
    value_of,
    view_lists_as_real,
)
from ._per_param import PerParamOptimizer
from .optimizer import as_real, check_lr, scalar_dtype, state_as_real, step_tensor, zeros_state

__all__ = ["ASGD"]


class ASGD(PerParamOptimizer):
    _scalar_state_keys = ("step", "eta", "mu")
    _states_viewed_as_real = ("ax",)
    _views_states_first = True
    _capturable_what = "params, mus, etas, and state_steps"
    # The parameter's writes count themselves in ``_update``, as each is made (a write that fails later, into the
    # average, leaves them counted): the decay's mul_ then the gradient's add_ (the foreach update, ``_foreach_update``,
    # folds them into one addcmul_ of its own)

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_lr(lr)
        if not weight_decay >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        # eta and mu are scalar tensors of the step's dtype in PyTorch's state; eta a copy of a tensor lr (else
        # updating eta would change the learning rate)
        state["step"] = step_tensor()
        state["eta"] = _wrap(np.array(value_of(group["lr"]), dtype=scalar_dtype()))
        state["mu"] = _wrap(np.ones((), dtype=scalar_dtype()))
        state["ax"] = zeros_state(p)

    def _update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        wd = group["weight_decay"]
        step_t, eta, mu = state["step"]._data, state["eta"]._data, state["mu"]._data
        step_t += 1
        state["step"]._bump_version()
        # (PyTorch views a complex parameter, its gradient and its average as real before its first op: its errors
        # name the real views' shapes)
        param, grad = as_real(p._data), as_real(grad)
        if wd != 0:
            grad = added_scaled(grad, param, wd)
        eta_value = float(eta)
        p._before_write()
        param *= 1 - lambd * eta_value  # decay term
        p._bump_version()
        add_scaled_(param, grad, -eta_value)
        p._bump_version()
        ax = state_as_real(p, state, "ax")
        if ax.shape != param.shape:
            _refuse_unfit_average(ax, param, averaging=float(mu) != 1)
        if float(mu) != 1:
            ax += (param - ax) * mu
        else:
            ax[...] = param
        state["ax"]._bump_version()
        step = float(step_t)
        # (PyTorch's ``torch.as_tensor`` of each number, in the default dtype, copied into the state: a float64 one,
        # loaded for float64 parameters, takes the float32 value)
        number = scalar_dtype().type
        eta[...] = number(lr / ((1 + lambd * lr * step) ** alpha))
        state["eta"]._bump_version()
        mu[...] = number(1 / max(1, step - t0))
        state["mu"]._bump_version()

    def _differentiable_update(self, param: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """PyTorch's single-tensor update (not capturable) in tensor operations: eta and mu read as numbers, their
        new values copied into the state tensors."""
        lambd, alpha, t0, wd = group["lambd"], group["alpha"], group["t0"], group["weight_decay"]
        lr = to_scalar(group["lr"])
        mu, eta, step_t = state["mu"], state["eta"], state["step"]
        param, grad, ax = real_views(param, grad, state["ax"])
        step_t += 1
        if wd != 0:
            grad = grad.add(param, alpha=wd)
        eta_value = value_of(eta)
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        step = value_of(step_t)
        eta.copy_(_tg.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
        mu.copy_(_tg.as_tensor(1 / max(1, step - t0)))

    def _foreach_update(self, params: list, grads: list, states: dict[str, list], group: dict[str, Any]) -> None:
        """PyTorch's ``_multi_tensor_asgd`` (not capturable): the decay folded into one ``addcmul_`` with the etas,
        the new etas computed from the step tensors (in their dtype)."""
        lambd, t0, alpha, wd = group["lambd"], group["t0"], group["alpha"], group["weight_decay"]
        lr = to_scalar(group["lr"])
        axs, mus, etas, steps = states["ax"], states["mu"], states["eta"], states["step"]
        view_lists_as_real(params, grads, axs)
        grads = negated_if(group["maximize"], grads)
        increment_steps(steps)
        if wd != 0:
            intermediate = l2_decayed_grads(grads, params, wd, group["maximize"])
            _tg._foreach_add_(intermediate, params, alpha=lambd)
        else:
            intermediate = _tg._foreach_add(grads, params, alpha=lambd)
        _tg._foreach_addcmul_(params, intermediate, etas, value=-1)
        _tg._foreach_addcmul_(axs, _tg._foreach_sub(params, axs), mus)
        new_etas = [_tg.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)) for step in steps]
        new_mus = [_tg.as_tensor(1 / max(1, value_of(step) - t0)) for step in steps]
        _tg._foreach_copy_(etas, new_etas)
        _tg._foreach_copy_(mus, new_mus)


def _refuse_unfit_average(ax: np.ndarray, param: np.ndarray, averaging: bool) -> None:
    """PyTorch's error where the running average has another shape than the parameter: ``ax.add_(param.sub(ax)
    .mul_(mu))`` while averaging, else ``ax.copy_(param)``."""
    if averaging:
        refuse_unfit(None, param, ax)
    refuse_unfit(ax, param)
