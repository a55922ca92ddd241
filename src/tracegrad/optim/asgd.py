"""ASGD (averaged stochastic gradient descent), following PyTorch's single-tensor update."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap
from ._fused import add_scaled_, added_scaled
from ._per_param import PerParamOptimizer, begin_write
from .optimizer import as_real, check_lr, step_tensor, zeros_state

__all__ = ["ASGD"]


class ASGD(PerParamOptimizer):
    _capturable_what = "params, mus, etas, and state_steps"
    _param_writes = 2  # the decay's mul_, then the gradient's add_
    _state_writes = {"step": 1, "eta": 1, "mu": 1, "ax": 1}

    def _writes(self, group: dict[str, Any]) -> tuple[int, dict[str, int]]:
        # PyTorch's foreach update folds the decay into one addcmul_ on the parameters
        return (1 if group["foreach"] else 2), self._state_writes

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
        param, grad = as_real(p._data), as_real(grad)
        if wd != 0:
            grad = added_scaled(grad, param, wd)
        eta_value = float(eta)
        begin_write(p, group)
        param *= 1 - lambd * eta_value  # decay term
        add_scaled_(param, grad, -eta_value)
        ax = as_real(state["ax"]._data)
        if float(mu) != 1:
            ax += (param - ax) * mu
        else:
            ax[...] = param
        step = float(step_t)
        eta[...] = lr / ((1 + lambd * lr * step) ** alpha)
        mu[...] = 1 / max(1, step - t0)
