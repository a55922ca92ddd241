"""Stochastic gradient descent (with momentum, dampening, Nesterov, weight decay, maximize)."""

from __future__ import annotations

import numpy as np

import tracegrad as _tg

from .._state import STATE
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import set_grad_enabled
from ..backend.dtypes import scalar_type_name
from ..ops.aten_vec import BLOCKED_MIN
from ..ops.pointwise import check_cast_into
from . import _watched
from ._fused import add_scaled_, added_scaled
from ._multi_tensor import grouped_by_dtype, l2_decayed_grad, l2_decayed_grads, to_scalar
from ._refusals import check_first_fused_dtype, refuse_at_step, refuse_fused_combinations
from .optimizer import Optimizer, array_options, check_tensor_lr, updates_need_tensor_ops

__all__ = ["SGD"]

_F32 = np.dtype(np.float32)

class SGD(Optimizer):
    _group_defaults_on_load = (("nesterov", False), ("maximize", False), ("foreach", None), ("differentiable", False),
                               ("fused", False))
    _foreach_refuses_autograd = False  # (its foreach update fails on the leaf's in-place write instead)
    _has_capturable = False  # (PyTorch's SGD has no such option: a group's key is ignored)

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach=None,
        differentiable: bool = False,
        fused=None,
    ) -> None:
        check_tensor_lr(lr)
        if lr < 0.0:  # (torch's SGD compares this way round, unlike its other optimizers: a str lr says so)
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        refuse_fused_combinations(defaults)

    def step(self, closure=None):
        if STATE.torch_function and _watched.follows(self):  # (a handler watches: torch's calls, one by one)
            return _watched.sgd_step(self, closure, _single_tensor_sgd, _multi_tensor_sgd)
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            refuse_at_step(self, group)
            if self._updates_as_tensor_ops(group):
                self._step_in_tensor_ops(group)
                continue
            group = array_options(group)
            if group["fused"]:
                self._check_fused_group(group)
            lr = group["lr"]
            momentum = group["momentum"]
            wd = group["weight_decay"]
            if momentum == 0 and wd == 0 and not group["maximize"]:
                _plain_updates(group["params"], -lr)
                continue
            self._general_step(group, lr, momentum, wd)
        return loss

    def _updates_as_tensor_ops(self, group: dict) -> bool:
        # (its single-tensor update has no ``differentiable`` branch: under differentiable defaults, which run
        # ``step`` under autograd, a group without the option records the same update)
        return bool(group["foreach"] or group["differentiable"] or self.defaults["differentiable"]
                    or updates_need_tensor_ops(group))

    def _step_in_tensor_ops(self, group: dict) -> None:
        """PyTorch's foreach or (``differentiable``) single-tensor update of ``group`` in tracegrad's tensor
        operations, with autograd as ``defaults["differentiable"]`` says; the momentum buffers made by the update
        are stored once it has run through (an error midway stores none)."""
        params = [p for p in group["params"] if p._grad is not None]
        if group["momentum"] != 0:
            buffers = [self.state[p].get("momentum_buffer") for p in params]
        else:
            buffers = [None] * len(params)
        update = _multi_tensor_sgd if group["foreach"] else _single_tensor_sgd
        with set_grad_enabled(bool(self.defaults["differentiable"])):
            update(params, [p._grad for p in params], buffers, group)
        if group["momentum"] != 0:
            for p, buf in zip(params, buffers):
                self.state[p]["momentum_buffer"] = buf

    def _check_fused_group(self, group: dict) -> None:
        """PyTorch's checks of a fused group before its update: the dtype of the first parameter with a gradient
        (once), then its fused kernel's refusal of a complex dtype (the momentum state's entries made, empty)."""
        check_first_fused_dtype(self, group)
        params = [p for p in group["params"] if p._grad is not None]
        if group["momentum"] != 0:
            for p in params:
                self.state[p]  # noqa: B018 - (PyTorch's ``_init_group`` reads each parameter's state)
        for p in params:
            if p.is_complex():
                raise NotImplementedError(
                    f'"fused_sgd_kernel" not implemented for \'{scalar_type_name(p._data.dtype)}\'')

    def _general_step(self, group: dict, lr: float, momentum: float, wd: float) -> None:
        dampening = group["dampening"]
        nesterov = group["nesterov"]
        maximize = group["maximize"]
        new_buffers = []  # (PyTorch stores the new momentum buffers once every parameter is updated)
        for p in group["params"]:
            if p._grad is None:
                continue
            grad = p._grad._data
            if maximize:
                grad = -grad
            if wd != 0:
                grad = added_scaled(grad, p._data, wd)
            if momentum != 0:
                buf = self.state[p].get("momentum_buffer")
                if buf is None:
                    buf = _wrap(np.array(grad, copy=True))
                    new_buffers.append((p, buf))
                else:
                    b = buf._data
                    b *= b.dtype.type(momentum)
                    buf._bump_version()  # (PyTorch's mul_, then add_: each counted as it succeeds)
                    # (a real buffer loaded for a complex parameter: load_state_dict casts only floating ones')
                    check_cast_into(np.result_type(b, grad), b.dtype)
                    add_scaled_(b, grad, 1 - dampening)
                    buf._bump_version()
                grad = added_scaled(grad, buf._data, momentum) if nesterov else buf._data
            p._before_write()
            add_scaled_(p._data, grad, -lr)
            p._bump_version()
        for p, buf in new_buffers:
            self.state[p]["momentum_buffer"] = buf


def _plain_updates(params: list, alpha) -> None:
    """Plain SGD, ``p.add_(p.grad, alpha=alpha)`` for each parameter with a gradient, in order. A small float32
    parameter with a float32 gradient of its shape takes ``aten_vec.fma_into``'s arithmetic written out here (the
    same calls, the same bits): a small model's step is mostly the calls around those four NumPy calls. Its cast
    back needs no ``quietly``: ``step`` runs quietly as a whole (``optimizer._quiet_update``)."""
    factor = None  # (alpha as a float32 value in a float64 0-d array: ``fma_into`` multiplies by that value)
    for p in params:
        g = p._grad
        if g is None:
            continue
        d = p._data
        src = g._data
        p._before_write()
        if (d.dtype is _F32 and src.dtype is _F32 and d.size < BLOCKED_MIN and src.__class__ is np.ndarray
                and src.shape == d.shape and alpha != 1):
            if factor is None:
                factor = np.array(np.float32(alpha), np.float64)
            wide = src.astype(np.float64)
            wide *= factor  # (exact: a product of two floats)
            wide += d
            d[...] = wide  # (one rounding to float; item assignment costs less than np.copyto)
        else:
            add_scaled_(d, src, alpha)
        p._bump_version()


def _single_tensor_sgd(params: list[Tensor], grads: list[Tensor], buffers: list, group: dict) -> None:
    """PyTorch's ``_single_tensor_sgd``, the new momentum buffers written into ``buffers``."""
    lr, wd, momentum = to_scalar(group["lr"]), group["weight_decay"], group["momentum"]
    for i, (param, grad) in enumerate(zip(params, grads)):
        if group["maximize"]:
            grad = -grad
        if wd != 0:
            grad = l2_decayed_grad(grad, param, wd)
        if momentum != 0:
            buf = buffers[i]
            if buf is None:
                buf = buffers[i] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        if isinstance(lr, Tensor) and lr.requires_grad:
            param.addcmul_(grad, lr, value=-1)
        else:
            param.add_(grad, alpha=-lr)


def _multi_tensor_sgd(params: list[Tensor], grads: list[Tensor], buffers: list, group: dict) -> None:
    """PyTorch's ``_multi_tensor_sgd`` on the CPU, the new momentum buffers written into ``buffers``: per dtype,
    with Nesterov momentum added into the gradients themselves where neither ``maximize`` nor a weight decay
    made copies of them."""
    if not params:
        return
    lr, wd, momentum = to_scalar(group["lr"]), group["weight_decay"], group["momentum"]
    # (the buffers grouped too: one of another dtype than its parameter, loaded, is refused there)
    for same_dtype, device_grads, _, where in grouped_by_dtype(params, grads, buffers, with_indices=True):
        if group["maximize"]:
            device_grads = list(_tg._foreach_neg(device_grads))
        if wd != 0:
            device_grads = l2_decayed_grads(device_grads, same_dtype, wd, group["maximize"])
        if momentum != 0:
            bufs = _updated_buffers(device_grads, buffers, where, momentum, group["dampening"])
            if group["nesterov"]:
                _tg._foreach_add_(device_grads, bufs, alpha=momentum)
            else:
                device_grads = bufs
        _tg._foreach_add_(same_dtype, device_grads, alpha=-lr)


def _updated_buffers(grads: list[Tensor], buffers: list, where: list[int], momentum, dampening) -> list[Tensor]:
    """The foreach update's momentum buffers of one dtype's parameters: all updated by two foreach ops where each
    exists, else one by one (a new one a detached copy of its gradient, stored at its place in ``buffers``)."""
    bufs = [buffers[i] for i in where]
    if all(buf is not None for buf in bufs):
        _tg._foreach_mul_(bufs, momentum)
        _tg._foreach_add_(bufs, grads, alpha=1 - dampening)
        return bufs
    for k, (i, buf) in enumerate(zip(where, bufs)):
        if buf is None:
            bufs[k] = buffers[i] = grads[k].detach().clone()
        else:
            buf.mul_(momentum).add_(grads[k], alpha=1 - dampening)
    return bufs
