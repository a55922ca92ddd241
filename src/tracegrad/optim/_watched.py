"""The optimizers' ``step`` and ``zero_grad`` as torch's Python code runs them, call by call, for while the
``__torch_function__`` protocol is live (a ``TorchFunctionMode`` entered, or a Tensor subclass that overrides it).

A handler then sees what torch shows it: the profiler's ``record_function`` operators around ``step`` and
``zero_grad``, the grad switches of ``_use_grad_for_differentiable``, each ``_init_group``'s reads (``p.grad``,
``p.grad.is_sparse``, ``torch.is_complex(p)``), the state made by ``torch.tensor``/``torch.zeros_like``, the device
read that picks the foreach default, then the update's own Tensor and ``_foreach_*`` calls. Without the protocol the
optimizers keep their NumPy updates: these paths compute the same values through tracegrad's operators.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tracegrad as _tg

from .._tensor import Tensor
from ..autograd.grad_mode import _mode, _switch_grad
from ..autograd.profiler import record_function
from ..nn.parameter import Parameter

__all__ = ["hooked_step", "zero_grad", "module_zero_grad", "follows", "default_foreach", "use_grad", "sgd_step",
           "adam_step"]

# torch's ``_get_foreach_kernels_supported_devices`` (the CPU is not among them)
_FOREACH_DEVICES = ("cuda", "xpu", "mtia", "privateuseone")


def hooked_step(optimizer, step: Callable, args: tuple, kwargs: dict, pre_hooks: Callable, post_hooks: Callable):
    """torch's ``profile_hook_step``: the step and its hooks inside ``record_function`` (``args`` are the whole
    call's, the optimizer first)."""
    with record_function(f"Optimizer.step#{optimizer.__class__.__name__}.step"):
        args, kwargs = pre_hooks(args, kwargs)
        out = step(*args, **kwargs)
        post_hooks(args, kwargs)
    return out


def use_grad(optimizer, body: Callable[[], Any]) -> Any:
    """torch's ``_use_grad_for_differentiable``: ``body()`` with grad mode as the defaults' ``differentiable``,
    switched by two ``torch.set_grad_enabled`` calls."""
    previous = _mode()
    try:
        _switch_grad(bool(optimizer.defaults["differentiable"]))
        return body()
    finally:
        _switch_grad(previous)


def follows(optimizer) -> bool:
    """Whether ``optimizer``'s groups take options these paths follow: not fused, not differentiable, not
    capturable (those keep the optimizer's own update)."""
    if optimizer.defaults.get("differentiable"):
        return False
    return not any(group.get("fused") or group.get("differentiable") or group.get("capturable")
                   for group in optimizer.param_groups)


def default_foreach(params: list) -> bool:
    """torch's ``_default_to_fused_or_foreach`` (not fused): every parameter a plain Tensor or Parameter on a
    device with foreach kernels, read one by one until one is not."""
    return all(p is None or (type(p) in (Tensor, Parameter) and p.device.type in _FOREACH_DEVICES) for p in params)


def zero_grad(optimizer, set_to_none: bool) -> None:
    """torch's ``Optimizer.zero_grad``: each gradient dropped, or detached and zeroed (one ``_foreach_zero_`` per
    device and dtype where the defaults ask for foreach or fused)."""
    foreach = optimizer.defaults.get("foreach", False) or optimizer.defaults.get("fused", False)
    per_dtype: dict = {}
    with record_function(f"Optimizer.zero_grad#{optimizer.__class__.__name__}.zero_grad"):
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                _detach_grad(p)
                if not foreach or p.grad.is_sparse:
                    p.grad.zero_()
                else:
                    per_dtype.setdefault(p.grad.device, {}).setdefault(p.grad.dtype, []).append(p.grad)
        for grads_of_device in per_dtype.values():
            for grads in grads_of_device.values():
                _tg._foreach_zero_(grads)


def _detach_grad(p: Tensor) -> None:
    if p.grad.grad_fn is not None:
        p.grad.detach_()
    else:
        p.grad.requires_grad_(False)


def module_zero_grad(module, set_to_none: bool) -> None:
    """torch's ``Module.zero_grad``."""
    for p in module.parameters():
        if p.grad is not None:
            if set_to_none:
                p.grad = None
            else:
                _detach_grad(p)
                p.grad.zero_()


# ---- SGD ---------------------------------------------------------------------------------------------------------

def sgd_step(optimizer, closure, single: Callable, multi: Callable) -> Any:
    """torch's ``SGD.step``, with the update functions ``single`` and ``multi`` (its ``_single_tensor_sgd`` and
    ``_multi_tensor_sgd``: ``(params, grads, buffers, group)``, new buffers written into ``buffers``)."""
    def body():
        loss = optimizer._closure_loss(closure)
        for group in optimizer.param_groups:
            params, grads, buffers = _sgd_init_group(optimizer, group)
            foreach = group["foreach"]
            if foreach is None and not group["fused"]:
                foreach = default_foreach(params)
            (multi if foreach else single)(params, grads, buffers, group)
            if group["momentum"] != 0:
                for p, buf in zip(params, buffers):
                    optimizer.state[p]["momentum_buffer"] = buf
        return loss
    return use_grad(optimizer, body)


def _sgd_init_group(optimizer, group: dict) -> tuple[list, list, list]:
    params, grads, buffers = [], [], []
    for p in group["params"]:
        if p.grad is not None:
            params.append(p)
            grads.append(p.grad)
            p.grad.is_sparse  # noqa: B018 - (torch's has_sparse_grad check: a handler sees the read)
            if group["momentum"] != 0:
                buffers.append(optimizer.state[p].get("momentum_buffer"))
    if group["momentum"] == 0:
        buffers = [None] * len(params)
    return params, grads, buffers


# ---- Adam, AdamW ---------------------------------------------------------------------------------------------------

def adam_step(optimizer, closure, single: Callable) -> Any:
    """torch's ``Adam.step`` (AdamW's too), with its single-tensor update ``single`` (``(param, grad, state,
    group)``, the gradient negated where ``maximize``); the foreach one is the optimizer's ``_foreach_update``."""
    def body():
        loss = optimizer._closure_loss(closure)
        for group in optimizer.param_groups:
            params = _adam_init_group(optimizer, group)
            foreach = group["foreach"]
            if foreach is None and not group["fused"]:
                foreach = default_foreach(params) and not (isinstance(group["lr"], Tensor)
                                                           and not group["capturable"])
            if foreach:
                optimizer._foreach_updates(group, params)
                continue
            options = optimizer._single_tensor_options(group)
            for p in params:
                grad = -p._grad if group["maximize"] else p._grad
                single(p, grad, optimizer.state[p], options)
        return loss
    return use_grad(optimizer, body)


def _scalar_dtype():
    return _tg.float64 if _tg.get_default_dtype() is _tg.float64 else _tg.float32


def _adam_init_group(optimizer, group: dict) -> list:
    params = []
    for p in group["params"]:
        if p.grad is None:
            continue
        _tg.is_complex(p)
        params.append(p)
        if p.grad.is_sparse:
            raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam instead")
        p.grad  # noqa: B018 - (torch appends it to its list: a handler sees the read)
        state = optimizer.state[p]
        if len(state) == 0:
            state["step"] = _tg.tensor(0.0, dtype=_scalar_dtype(), device="cpu")
            state["exp_avg"] = _tg.zeros_like(p, memory_format=_tg.preserve_format)
            state["exp_avg_sq"] = _tg.zeros_like(p, memory_format=_tg.preserve_format)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = _tg.zeros_like(p, memory_format=_tg.preserve_format)
    return params
