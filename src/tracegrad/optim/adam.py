"""Adam (with amsgrad, L2 or decoupled weight decay, maximize), following PyTorch's single-tensor update."""

from __future__ import annotations

import numpy as np

import tracegrad as _tg

from .._state import STATE
from .._tensor import Tensor
from . import _watched
from ._fused import addcmul_, added_scaled, lerp_, refuse_unfit
from ._multi_tensor import (
    decayed_then_moments,
    increment_steps,
    l2_decayed_grad,
    negated_if,
    to_scalar,
    value_of,
    view_lists_as_real,
)
from ._refusals import check_fused_dtype, refuse_at_step, refuse_fused_combinations
from .optimizer import (
    Optimizer,
    array_options,
    as_real,
    check_lr,
    state_as_real,
    step_tensor,
    zeros_state,
)

__all__ = ["Adam"]


def check_adam_hparams(lr, betas, eps, weight_decay) -> None:
    check_lr(lr)
    if not eps >= 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not weight_decay >= 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _refuse_tensor_for_foreach(value, name: str, foreach, capturable) -> None:
    """Adam's foreach update takes no tensor hyper-parameters unless capturable."""
    if isinstance(value, Tensor) and foreach and not capturable:
        raise ValueError(f"{name} as a Tensor is not supported for capturable=False and foreach=True")


def _check_tensor_betas(betas, foreach, capturable) -> None:
    """Adam's checks of the betas' types, after their ranges."""
    if not all(isinstance(b, float) for b in betas) and not all(isinstance(b, Tensor) for b in betas):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, beta in enumerate(betas):
        _refuse_tensor_for_foreach(beta, f"betas[{i}]", foreach, capturable)
        if isinstance(beta, Tensor) and beta.numel() != 1:
            raise ValueError(f"Tensor betas[{i}] must be 1-element")


def _check_foreach_tensor_options(group: dict) -> None:
    """``_multi_tensor_adam``'s checks of a tensor lr and tensor betas, before it checks devices or autograd."""
    capturable = group["capturable"]
    for name, value in (("lr", group["lr"]), ("beta1", group["betas"][0]), ("beta2", group["betas"][1])):
        if not isinstance(value, Tensor):
            continue
        if not capturable:
            message = f"{name} as a Tensor is not supported for capturable=False and foreach=True"
            raise RuntimeError(message) if name == "lr" else ValueError(message)
        if value.numel() != 1:
            raise ValueError(f"Tensor {name} must be 1-element")


class Adam(Optimizer):
    _states_viewed_as_real = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    _scalar_state_keys = ("step",)
    _has_fused = True
    _group_defaults_on_load = (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
                               ("differentiable", False), ("decoupled_weight_decay", False), ("fused", None))
    _foreach_capturable_first = True  # (its foreach update checks the devices before ``differentiable``)
    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach=None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused=None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _refuse_tensor_for_foreach(lr, "lr", foreach, capturable)
        check_adam_hparams(lr, betas, eps, weight_decay)
        _check_tensor_betas(betas, foreach, capturable)
        betas = tuple(to_scalar(beta) for beta in betas)  # (a 1-element tensor beta kept 0-d, as PyTorch's)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)
        refuse_fused_combinations(defaults)

    def _init_group_state(self, group: dict) -> None:
        foreach = group["foreach"] and not group["fused"]
        for p in group["params"]:
            if p._grad is not None:
                self._state_for(p, group)
                if foreach and isinstance(group["lr"], Tensor) and not group["capturable"]:
                    raise RuntimeError("lr as a Tensor is not supported for capturable=False and foreach=True")
        if foreach:
            _check_foreach_tensor_options(group)

    def _state_for(self, p, group: dict) -> dict:
        state = self.state[p]
        if len(state) == 0:
            if group["fused"]:
                check_fused_dtype(p)
            state["step"] = step_tensor(bool(group["fused"]))
            state["exp_avg"] = zeros_state(p)
            state["exp_avg_sq"] = zeros_state(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_state(p)
        return state

    def step(self, closure=None):
        if STATE.torch_function and _watched.follows(self):  # (a handler watches: torch's calls, one by one)
            return _watched.adam_step(self, closure, self._differentiable_update)
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
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            amsgrad, maximize, decoupled = (
                group["amsgrad"],
                group["maximize"],
                group["decoupled_weight_decay"],
            )
            if group["fused"]:  # (PyTorch creates the group's state, checking each parameter, before updating)
                self._init_group_state(group)
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._state_for(p, group)
                param = p._data
                p._before_write()  # (AdamW's decay writes first)
                grad = p._grad._data
                if maximize:
                    grad = -grad
                step_t = state["step"]
                step_t._data += 1
                step_t._bump_version()  # (each write's version as it succeeds: a failing op leaves torch's versions)
                if wd != 0:
                    if decoupled:
                        param *= 1 - lr * wd
                        p._bump_version()  # (its own mul_ in PyTorch)
                    else:
                        grad = added_scaled(grad, param, wd)
                param, grad = as_real(param), as_real(grad)
                exp_avg = state_as_real(p, state, "exp_avg")
                exp_avg_sq = state_as_real(p, state, "exp_avg_sq")
                lerp_(exp_avg, grad, 1 - beta1)
                state["exp_avg"]._bump_version()
                exp_avg_sq *= exp_avg_sq.dtype.type(beta2)
                state["exp_avg_sq"]._bump_version()
                addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
                state["exp_avg_sq"]._bump_version()
                step = float(step_t._data)
                step_size = lr / (1 - beta1**step)
                bias_correction2_sqrt = (1 - beta2**step) ** 0.5
                if amsgrad:
                    max_sq = state_as_real(p, state, "max_exp_avg_sq")
                    np.maximum(max_sq, exp_avg_sq, out=max_sq)
                    state["max_exp_avg_sq"]._bump_version()
                    exp_avg_sq = max_sq
                # (in place on two temporaries, arrays for 0-d parameters too: torch's roundings, fewer allocations)
                denom = np.sqrt(exp_avg_sq, out=np.empty_like(exp_avg_sq))
                np.divide(denom, bias_correction2_sqrt, out=denom)
                denom += eps
                update = np.multiply(exp_avg, -step_size, out=np.empty_like(exp_avg))
                if update.shape != param.shape:
                    refuse_unfit(param, exp_avg, denom)  # (PyTorch's param.addcdiv_(exp_avg, denom))
                param += np.divide(update, denom, out=update)
                p._bump_version()
        return loss

    def _foreach_update(self, params: list, grads: list, states: dict[str, list], group: dict) -> None:
        """PyTorch's ``_multi_tensor_adam`` (not capturable): the square roots divided by ``sqrt(1 - beta2^t)``,
        then one ``addcdiv_`` with the step sizes as a scalar list."""
        beta1, beta2 = group["betas"]
        lr, amsgrad = group["lr"], group["amsgrad"]
        exp_avgs, exp_avg_sqs = states["exp_avg"], states["exp_avg_sq"]
        max_exp_avg_sqs = [states["max_exp_avg_sq"]] if amsgrad else []
        params[0].device  # noqa: B018 - (torch's update reads it, for tensor betas: a handler sees the read)
        view_lists_as_real(params, grads, exp_avgs, exp_avg_sqs, *max_exp_avg_sqs)
        grads = negated_if(group["maximize"], grads)
        increment_steps(states["step"])
        decayed_then_moments(params, grads, exp_avgs, exp_avg_sqs, group, lr)
        # (each correction reads the steps' values anew: a handler sees two ``item()`` calls per step tensor)
        bias_corrections1 = [1 - beta1 ** value_of(step) for step in states["step"]]
        bias_corrections2 = [1 - beta2 ** value_of(step) for step in states["step"]]
        step_sizes = [(lr / correction) * -1 for correction in bias_corrections1]
        if amsgrad:
            _tg._foreach_maximum_(max_exp_avg_sqs[0], exp_avg_sqs)
            exp_avg_sqs = max_exp_avg_sqs[0]
        denoms = _tg._foreach_sqrt(exp_avg_sqs)
        _tg._foreach_div_(denoms, [correction**0.5 for correction in bias_corrections2])
        _tg._foreach_add_(denoms, group["eps"])
        _tg._foreach_addcdiv_(params, exp_avgs, denoms, step_sizes)

    def _single_tensor_options(self, group: dict) -> dict:
        """PyTorch's ``_single_tensor_adam`` turns ``lr``, then each beta, into a number or a 0-d tensor once per group
        (``_to_scalar``: a handler sees one ``dim()`` per tensor option, not one per parameter)."""
        lr = to_scalar(group["lr"])
        return {**group, "lr": lr, "betas": tuple(to_scalar(beta) for beta in group["betas"])}

    def _differentiable_update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        """One parameter's single-tensor update in tensor operations, ``group`` as ``_single_tensor_options`` gives
        it. In PyTorch's ``differentiable`` branch the bias corrections and the step size are tensors computed from
        the step tensor (in its dtype), folded into the denominator of one ``addcdiv_``; in the other (a group
        without ``differentiable`` under differentiable defaults) they are numbers."""
        differentiable = group["differentiable"]
        beta1, beta2 = group["betas"]
        lr, wd = group["lr"], group["weight_decay"]
        exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        max_exp_avg_sq = state.get("max_exp_avg_sq") if group["amsgrad"] else None
        step_t += 1
        if wd != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * wd)
            else:
                grad = l2_decayed_grad(grad, param, wd) if differentiable else grad.add(param, alpha=wd)
        complex_param = param
        if _tg.is_complex(param):  # (in torch's order: a handler sees each view_as_real's argument)
            grad, exp_avg, exp_avg_sq = (_tg.view_as_real(t) for t in (grad, exp_avg, exp_avg_sq))
            if max_exp_avg_sq is not None:
                max_exp_avg_sq = _tg.view_as_real(max_exp_avg_sq)
            param = _tg.view_as_real(param)
        param.device  # noqa: B018 - (torch's update reads it, for tensor betas: a handler sees the read)
        exp_avg.lerp_(grad, 1 - (beta1.to(param.dtype) if isinstance(beta1, Tensor) else beta1))
        if differentiable and _requires_grad(beta2):  # (lerp: addcmul_'s value cannot be a tensor)
            exp_avg_sq.lerp_(_tg.square(grad), weight=1 - beta2)
        else:
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        if not differentiable:
            _plain_addcdiv_(param, exp_avg, exp_avg_sq, max_exp_avg_sq, value_of(step_t), group)
        else:
            _differentiable_addcdiv_(param, exp_avg, exp_avg_sq, max_exp_avg_sq, step_t, group)
        # (torch views amsgrad's maximum back as complex for its list, which nothing reads: a handler sees the calls)
        if max_exp_avg_sq is not None and _tg.is_complex(complex_param):
            _tg.view_as_complex(max_exp_avg_sq)


def _differentiable_addcdiv_(param: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, max_exp_avg_sq: Tensor | None,
                             step_t: Tensor, group: dict) -> None:
    """The end of PyTorch's single-tensor update in its ``differentiable`` branch: the bias corrections and the step
    size as tensors made from the step tensor, folded into the denominator of one ``addcdiv_``."""
    beta1, beta2 = group["betas"]
    lr, eps = group["lr"], group["eps"]
    bias_correction1 = 1 - beta1 ** (step_t.clone() if _requires_grad(beta1) else step_t)
    bias_correction2 = 1 - beta2 ** (step_t.clone() if _requires_grad(beta2) else step_t)
    step_size_neg = (lr / bias_correction1).neg()
    if max_exp_avg_sq is not None:
        max_exp_avg_sq.copy_(_tg.maximum(max_exp_avg_sq.clone(), exp_avg_sq))
        exp_avg_sq = max_exp_avg_sq
    denom = (exp_avg_sq.sqrt() / (bias_correction2.sqrt() * step_size_neg)).add_(eps / step_size_neg)
    param.addcdiv_(exp_avg.clone(), denom)


def _plain_addcdiv_(param: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, max_exp_avg_sq: Tensor | None, step: float,
                    group: dict) -> None:
    """The end of PyTorch's single-tensor update outside its ``differentiable`` branch: the bias corrections as
    numbers, amsgrad's maximum written with ``out=`` (refused under autograd where an operand requires grad)."""
    beta1, beta2 = group["betas"]
    step_size = group["lr"] / (1 - beta1**step)
    if max_exp_avg_sq is not None:
        _tg.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        exp_avg_sq = max_exp_avg_sq
    denom = (exp_avg_sq.sqrt() / (1 - beta2**step) ** 0.5).add_(group["eps"])
    param.addcdiv_(exp_avg, denom, value=-step_size)


def _requires_grad(value) -> bool:
    return isinstance(value, Tensor) and value.requires_grad
