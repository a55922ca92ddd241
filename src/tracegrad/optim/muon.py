"""Muon (momentum, then orthogonalisation by a Newton–Schulz iteration), following torch 2.13's single-tensor
update (``torch.optim._muon``) for 2-D parameters.

torch runs the Newton–Schulz iteration in bfloat16, which tracegrad has no dtype for; its arithmetic is emulated:
values are kept in float32 arrays rounded to bfloat16 (round to nearest even) wherever torch stores a bfloat16
tensor, and each operation computes in float32, as torch's CPU kernels do, before that rounding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap
from ._per_param import decay_in_place, lerp_
from .optimizer import Optimizer, array_options

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(x: np.ndarray | float) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32; NaN stays NaN."""
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(a), a, out)


def _zeropower_via_newtonschulz(grad: np.ndarray, ns_coefficients: tuple[float, float, float], ns_steps: int,
                                eps: float) -> np.ndarray:
    """An approximately orthogonal matrix with ``grad``'s singular vectors (bfloat16 values, float32 array)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (np.float32(v) for v in ns_coefficients)
    x = _bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    wide = x.astype(np.float64)
    norm = _bf16(np.float32(np.sqrt(np.sum(wide * wide))))
    x = _bf16(x / max(norm, _bf16(np.float32(eps))))
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T)
        update = _bf16(b * gram + c * (gram @ gram))
        x = _bf16(a * x + update @ x)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape: tuple[int, ...]) -> float:
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not momentum >= 0.0:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = self._real_params_with_grad(group)
            group = array_options(group)
            for p in params:
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = _wrap(np.zeros_like(p._grad._data))
            for p in params:
                self._update(p, self.state[p]["momentum_buffer"]._data, group)
        return loss

    def _update(self, p: Tensor, buf: np.ndarray, group: dict[str, Any]) -> None:
        lr = group["lr"].item() if isinstance(group["lr"], Tensor) else group["lr"]
        grad = p._grad._data
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        momentum = group["momentum"]
        lerp_(buf, grad, 1 - momentum)
        self.state[p]["momentum_buffer"]._bump_version()
        if group["nesterov"]:
            update = grad.copy()
            lerp_(update, buf, momentum)
        else:
            update = buf
        ortho = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], tuple(p.shape))
        decay_in_place(p, 1 - lr * group["weight_decay"])
        p._before_write()
        p._data += -adjusted_lr * ortho.astype(p._data.dtype)
        p._bump_version()
