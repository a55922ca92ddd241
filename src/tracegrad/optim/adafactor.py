"""Adafactor, following torch 2.13's single-tensor update (``torch.optim._adafactor``).

Matrices (and batches of them) keep factored second moments: one running mean of squared gradients per row and
one per column, whose outer product (over the mean of the row factors) estimates the full matrix. Vectors and
scalars keep a full running mean. The relative step size is ``min(lr, 1/sqrt(step))`` scaled by the parameter's
RMS; updates are clipped to an RMS of ``d``; weight decay is decoupled, scaled by ``lr``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap
from ._per_param import decay_in_place, lerp_
from .optimizer import Optimizer, array_options, scalar_dtype, step_tensor

__all__ = ["Adafactor"]


def _norm(a: np.ndarray, axis: int | None = None) -> np.ndarray:
    """The 2-norm in the array's own dtype, from a float64 sum of squares (the correctly rounded value, which
    torch's float32 reduction reproduces to its last bit or so)."""
    wide = a.astype(np.float64)
    return np.sqrt(np.sum(wide * wide, axis=axis, keepdims=axis is not None)).astype(a.dtype)


def _lr_scalar(value: Any) -> Any:
    """A float lr as it is; a tensor lr as a NumPy scalar of its dtype."""
    return value._data.reshape(())[()] if isinstance(value, Tensor) else value


class Adafactor(Optimizer):
    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not beta2_decay <= 0.0:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not eps[0] >= 0.0:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not eps[1] >= 0.0:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not d >= 1.0:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _wrap(np.asarray(float(p_state["step"]), dtype=scalar_dtype()))

    def _init_state(self, p: Tensor, state: dict[str, Any]) -> None:
        state["step"] = step_tensor()
        grad = p._grad._data
        if grad.ndim > 1:
            state["row_var"] = _wrap(np.zeros((*grad.shape[:-1], 1), dtype=grad.dtype))
            state["col_var"] = _wrap(np.zeros((*grad.shape[:-2], 1, grad.shape[-1]), dtype=grad.dtype))
        else:
            state["variance"] = _wrap(np.zeros_like(grad))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = self._real_params_with_grad(group)
            group = array_options(group)
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    self._init_state(p, state)
            # torch reads eps1 = finfo(dtype).eps from the first parameter and keeps it for the whole group
            eps1 = group["eps"][0]
            for p in params:
                if eps1 is None:
                    eps1 = float(np.finfo(p._data.dtype).eps)
                self._update(p, self.state[p], group, eps1)
        return loss

    def _update(self, p: Tensor, state: dict[str, Any], group: dict[str, Any], eps1: float) -> None:
        grad = p._grad._data
        if group["maximize"]:
            grad = -grad
        # A tensor lr stays a 0-d tensor in torch: the step size and the decay factor are then computed in its
        # dtype (NumPy scalars of that dtype reproduce the rounding), and the final scale is read back with item().
        lr = _lr_scalar(group["lr"])
        state["step"]._data += 1
        step = float(state["step"]._data)
        one_minus_beta2 = step ** group["beta2_decay"]
        rho = min(lr, 1 / (step**0.5))
        param = p._data
        alpha = max(group["eps"][1], float(_norm(param)) / (param.size**0.5)) * rho
        if group["weight_decay"] != 0:
            decay_in_place(p, 1 - lr * group["weight_decay"])
        if grad.ndim > 1:
            row_mean = _norm(grad, -1)
            row_mean *= row_mean
            row_mean /= grad.shape[-1]
            row_var = state["row_var"]._data
            lerp_(row_var, row_mean, one_minus_beta2)
            col_mean = _norm(grad, -2)
            col_mean *= col_mean
            col_mean /= grad.shape[-2]
            col_var = state["col_var"]._data
            lerp_(col_var, col_mean, one_minus_beta2)
            estimate = row_var @ col_var  # (.., m, 1) @ (.., 1, n): the outer product
            estimate /= np.maximum(row_var.mean(axis=-2, keepdims=True), eps1).astype(estimate.dtype)
        else:
            variance = state["variance"]._data
            lerp_(variance, grad * grad, one_minus_beta2)
            estimate = variance.copy()
        # eps1 squared: the square root below brings it back to eps1's magnitude
        update = 1 / np.sqrt(np.maximum(estimate, eps1 * eps1).astype(estimate.dtype))
        update *= grad
        denom = max(1.0, float(_norm(update)) / ((update.size**0.5) * group["d"]))
        p._before_write()
        param += float(-alpha / denom) * update
        p._bump_version()
        for t in state.values():  # PyTorch's one in-place op on each: step += 1 and a lerp_ per variance
            t._bump_version()
