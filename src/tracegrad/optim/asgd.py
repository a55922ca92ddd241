"""ASGD (averaged stochastic gradient descent), following PyTorch's single-tensor update."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap
from ._fused import add_scaled_, added_scaled, refuse_unfit
from ._per_param import PerParamOptimizer, begin_write
from .optimizer import as_real, check_lr, step_tensor, zeros_state

__all__ = ["ASGD"]


class ASGD(PerParamOptimizer):
    _capturable_what = "params, mus, etas, and state_steps"
    # The parameter's writes count themselves in ``_update``, as each is made (a write that fails later, into the
    # average, leaves them counted): the decay's mul_ then the gradient's add_, which PyTorch's foreach update folds
    # into one addcmul_
    _param_writes = 0
    _state_writes = {"step": 1, "eta": 1, "mu": 1, "ax": 1}

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
        # eta and mu are float32 scalar tensors in PyTorch's state, like step
        state["step"] = step_tensor()
        state["eta"] = _wrap(np.asarray(group["lr"], dtype=np.float32))
        state["mu"] = _wrap(np.ones((), dtype=np.float32))
        state["ax"] = zeros_state(p)

    def _update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        wd = group["weight_decay"]
        step_t, eta, mu = state["step"]._data, state["eta"]._data, state["mu"]._data
        step_t += 1
        param = p._data
        if group["foreach"] and grad.shape != param.shape:
            refuse_unfit(None, grad, param)  # (PyTorch's foreach update adds the parameters to the gradients first)
        param, grad = as_real(param), as_real(grad)
        if wd != 0:
            grad = added_scaled(grad, param, wd)
        eta_value = float(eta)
        begin_write(p, group)
        param *= 1 - lambd * eta_value  # decay term
        if not group["foreach"]:
            p._bump_version()
        add_scaled_(param, grad, -eta_value)
        p._bump_version()
        ax = state["ax"]._data
        if ax.shape != p._data.shape:
            _refuse_unfit_average(ax, p._data, averaging=group["foreach"] or float(mu) != 1)
        ax = as_real(ax)
        if float(mu) != 1:
            ax += (param - ax) * mu
        else:
            ax[...] = param
        step = float(step_t)
        eta[...] = lr / ((1 + lambd * lr * step) ** alpha)
        mu[...] = 1 / max(1, step - t0)


def _refuse_unfit_average(ax: np.ndarray, param: np.ndarray, averaging: bool) -> None:
    """PyTorch's error where the running average has another shape than the parameter: ``ax.add_(param.sub(ax)
    .mul_(mu))`` while averaging (always in the foreach update), else ``ax.copy_(param)``."""
    if averaging:
        refuse_unfit(None, param, ax)
    refuse_unfit(ax, param)
