"""Adafactor, following torch 2.13's ``torch.optim._adafactor`` op for op: its single-tensor update
(``_single_tensor_adafactor``) and its foreach update (``_multi_tensor_adafactor``), both run as tracegrad's tensor
operations, which round as PyTorch's per-tensor CPU kernels do (a half parameter computes in float and rounds once
per op; a gradient of another dtype is promoted or refused by each op as PyTorch's).

Matrices (and batches of them) keep factored second moments: one running mean of squared gradients per row and
one per column, whose outer product (over the mean of the row factors) estimates the full matrix. Vectors and
scalars keep a full running mean. The relative step size is ``min(lr, 1/sqrt(step))`` scaled by the parameter's
RMS; updates are clipped to an RMS of ``d``; weight decay is decoupled, scaled by ``lr``.
"""

from __future__ import annotations

from typing import Any

import tracegrad as _tg

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ._multi_tensor import grouped_by_dtype, increment_steps, negated_if, to_scalar
from .optimizer import Optimizer, checked_grads_of, step_tensor

__all__ = ["Adafactor"]

_STATE_KEYS = ("row_var", "col_var", "variance")


class Adafactor(Optimizer):
    _step_switches_grad_mode = False  # (PyTorch's step is in torch.no_grad())
    _group_defaults_on_load = (("foreach", None),)
    _scalar_state_keys = ("step",)

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

    def _init_group_state(self, group: dict[str, Any]) -> None:
        """PyTorch's ``_init_group``: each parameter with a gradient checked, then given its state, in order (a
        complex parameter is refused after the state of those before it is made)."""
        for p, grad in checked_grads_of(group, "Adafactor"):
            state = self.state[p]
            if len(state) == 0:
                _init_state(state, grad)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                _, eps2 = group["eps"]  # (PyTorch unpacks the pair first)
                self._init_group_state(group)
                params = [p for p in group["params"] if p._grad is not None]
                if group["foreach"]:
                    _multi_tensor_step(params, [self.state[p] for p in params], group)
                else:
                    _single_tensor_step(params, [self.state[p] for p in params], group)
        return loss


def _init_state(state: dict[str, Any], grad: Tensor) -> None:
    state["step"] = step_tensor()
    if grad.dim() > 1:
        # the factors of a matrix (or of each matrix of a batch): its rows' and its columns' mean squares
        state["row_var"] = grad.new_zeros([*grad.shape[:-1], 1])
        state["col_var"] = grad.new_zeros([*grad.shape[:-2], 1, grad.shape[-1]])
    else:
        state["variance"] = _tg.zeros_like(grad)


def _relative_step(step: float, lr: Any) -> Any:
    """rho: ``min(lr, 1/sqrt(step))``, where a tensor lr stays a tensor (Python's ``min`` compares the two)."""
    return min(lr, 1 / (step**0.5))


def _rms(t: Tensor) -> float:
    return t.norm(2).item() / (t.numel() ** 0.5)


def _clipped_step(alpha: Any, update: Tensor, d: float) -> Any:
    """The update's factor: ``-alpha``, over the update's RMS in units of ``d`` where that exceeds 1."""
    return -alpha / max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))


def _single_tensor_step(params: list[Tensor], states: list[dict], group: dict[str, Any]) -> None:
    """PyTorch's ``_single_tensor_adafactor``: eps1 (where None) from the first parameter's dtype, kept for the
    group."""
    lr, (eps1, eps2) = to_scalar(group["lr"]), group["eps"]
    for param, state in zip(params, states):
        grad = -param._grad if group["maximize"] else param._grad
        if eps1 is None:
            eps1 = _tg.finfo(param.dtype).eps
        step_t = state["step"]
        step_t += 1
        step = step_t.item()
        one_minus_beta2 = step ** group["beta2_decay"]
        alpha = max(eps2, _rms(param)) * _relative_step(step, lr)
        if group["weight_decay"] != 0:
            param.mul_(1 - lr * group["weight_decay"])
        if grad.dim() > 1:
            var_estimate = _factored_estimate(grad, state["row_var"], state["col_var"], one_minus_beta2, eps1)
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, one_minus_beta2)
            var_estimate = variance.clone()  # (the update must not write into the state)
        # eps1 squared: the square root after brings it back to eps1's magnitude
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        param.add_(update, alpha=_clipped_step(alpha, update, group["d"]))


def _factored_estimate(grad: Tensor, row_var: Tensor, col_var: Tensor, one_minus_beta2: float, eps1: float) -> Tensor:
    """The row and column factors moved towards the gradient's row and column mean squares (norms squared over the
    count, without the squared gradient), and the estimate of the full second moment they give."""
    row_mean = _tg.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
    row_var.lerp_(row_mean, one_minus_beta2)
    col_mean = _tg.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
    col_var.lerp_(col_mean, one_minus_beta2)
    var_estimate = row_var @ col_var
    return var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))


def _multi_tensor_step(params: list[Tensor], states: list[dict], group: dict[str, Any]) -> None:
    """PyTorch's ``_multi_tensor_adafactor``: one update per dtype and kind (matrices, vectors), eps1 (where None)
    from the first such group's dtype, kept for the others."""
    if not params:
        return
    lr, (eps1, _) = to_scalar(group["lr"]), group["eps"]
    grads = [p._grad for p in params]
    state_lists = [[state.get(key) for state in states] for key in _STATE_KEYS]
    steps = [state["step"] for state in states]
    for lists in _grouped_by_dtype_and_kind(params, grads, *state_lists, steps):
        if eps1 is None:
            eps1 = _tg.finfo(lists[0][0].dtype).eps
        _multi_tensor_update(*lists, group, lr, eps1)


def _grouped_by_dtype_and_kind(params: list[Tensor], *others: list) -> list[tuple[list, ...]]:
    """PyTorch's ``_group_tensors_by_device_dtype_and_is_multidim``: each dtype's lists (its grouping and order)
    split into the parameters whose gradient (the first of ``others``) is a matrix and the others, in the order
    each kind first appears."""
    split: list[tuple[list, ...]] = []
    for lists in grouped_by_dtype(params, *others):
        kinds: dict[bool, tuple[list, ...]] = {}
        for i, grad in enumerate(lists[1]):
            kind = kinds.setdefault(grad.dim() > 1, tuple([] for _ in lists))
            for grouped, tensors in zip(kind, lists):
                grouped.append(tensors[i])
        split.extend(kinds.values())
    return split


def _multi_tensor_update(params: list, grads: list, row_vars: list, col_vars: list, variances: list, steps: list,
                         group: dict[str, Any], lr: Any, eps1: float) -> None:
    _, eps2 = group["eps"]
    grads = negated_if(group["maximize"], grads)
    increment_steps(steps)
    one_minus_beta2s = [s.item() ** group["beta2_decay"] for s in steps]
    alphas = [max(eps2, _rms(p)) * _relative_step(s.item(), lr) for p, s in zip(params, steps)]
    if group["weight_decay"] != 0:
        _tg._foreach_mul_(params, 1 - lr * group["weight_decay"])
    if grads[0].dim() > 1:
        var_estimates = _factored_estimates(grads, row_vars, col_vars, one_minus_beta2s, eps1)
    else:
        _tg._foreach_lerp_(variances, _tg._foreach_mul(grads, grads), one_minus_beta2s)
        var_estimates = [v.clone() for v in variances]
    _tg._foreach_clamp_min_(var_estimates, eps1 * eps1)
    _tg._foreach_rsqrt_(var_estimates)
    _tg._foreach_mul_(var_estimates, grads)
    _tg._foreach_mul_(var_estimates, [_clipped_step(a, u, group["d"]) for a, u in zip(alphas, var_estimates)])
    _tg._foreach_add_(params, var_estimates)


def _factored_estimates(grads: list, row_vars: list, col_vars: list, one_minus_beta2s: list, eps1: float) -> list:
    """``_factored_estimate`` for each matrix in foreach operations."""
    for factors, dim in ((row_vars, -1), (col_vars, -2)):
        means = [_tg.norm(g, dim=dim, keepdim=True) for g in grads]
        _tg._foreach_mul_(means, means)
        _tg._foreach_div_(means, [g.size(dim) for g in grads])
        _tg._foreach_lerp_(factors, means, one_minus_beta2s)
    var_estimates = [r @ c for r, c in zip(row_vars, col_vars)]
    row_var_means = [r.mean(dim=-2, keepdim=True) for r in row_vars]
    _tg._foreach_clamp_min_(row_var_means, eps1)
    _tg._foreach_div_(var_estimates, row_var_means)
    return var_estimates
