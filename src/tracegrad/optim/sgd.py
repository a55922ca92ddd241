"""Stochastic gradient descent (with momentum, dampening, Nesterov, weight decay, maximize)."""

from __future__ import annotations

import numpy as np

from .._tensor import _wrap
from ..backend.dtypes import scalar_type_name
from ..ops.aten_vec import BLOCKED_MIN
from ._fused import add_scaled_, added_scaled
from ._refusals import check_first_fused_dtype, refuse_at_step, refuse_fused_combinations
from .optimizer import Optimizer, array_options, check_tensor_lr, count_writes

__all__ = ["SGD"]

_F32 = np.dtype(np.float32)

class SGD(Optimizer):
    _group_defaults_on_load = (("nesterov", False), ("maximize", False), ("foreach", None), ("differentiable", False),
                               ("fused", False))
    _foreach_refuses_autograd = False  # (its foreach update fails on the leaf's in-place write instead)
    _has_capturable = False  # (PyTorch's SGD has no such option: a group's key is ignored)
    _complex_written_through_view = False  # (its update is complex arithmetic on the parameter itself)
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
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            refuse_at_step(self, group)
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
                    add_scaled_(b, grad, 1 - dampening)
                    count_writes(buf, 2)  # (PyTorch's mul_ then add_)
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
