"""Rprop (resilient backpropagation), following PyTorch's single-tensor update."""

from __future__ import annotations

from typing import Any

import numpy as np

import tracegrad as _tg

from .._tensor import Tensor
from ._fused import refuse_unfit
from ._multi_tensor import increment_steps, real_views, to_scalar, view_lists_as_real
from ._per_param import PerParamOptimizer
from .optimizer import as_real, check_lr, state_as_real, step_tensor, zeros_state

__all__ = ["Rprop"]


class Rprop(PerParamOptimizer):
    _scalar_state_keys = ("step",)
    _states_viewed_as_real = ("prev", "step_size")
    _foreach_capturable_xla = True  # (its foreach update asks for the device list with XLA)

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = step_tensor()
        state["prev"] = zeros_state(p)
        # (a complex parameter's two parts each start at lr; a tensor lr that requires grad is refused as a fill
        # value, as in PyTorch)
        lr = group["lr"]
        state["step_size"] = _tg.full_like(p._grad, complex(lr, lr) if p.is_complex() else to_scalar(lr))

    def _differentiable_update(self, param: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """PyTorch's single-tensor update (not capturable) with ``differentiable=True``, in tensor operations: the
        factors and the zeroed gradient written through boolean masks."""
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        state["step"] += 1
        param, grad, prev, step_size = real_views(param, grad, state["prev"], state["step_size"])
        sign = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
        _signs_to_factors_(sign, etaminus, etaplus)
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone(memory_format=_tg.preserve_format)
        grad[sign.eq(etaminus)] = 0
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)

    def _foreach_update(self, params: list, grads: list, states: dict[str, list], group: dict[str, Any]) -> None:
        """PyTorch's ``_multi_tensor_rprop`` (not capturable): ``prev`` is the buffer of the new gradients (copied,
        negated where ``maximize``, zeroed where the sign changed) before the parameters' ``addcmul_``."""
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        prevs, step_sizes = states["prev"], states["step_size"]
        increment_steps(states["step"])
        view_lists_as_real(params, grads, prevs, step_sizes)
        signs = list(_tg._foreach_mul(grads, prevs))
        if group["maximize"]:
            _tg._foreach_neg_(signs)
        _tg._foreach_copy_(prevs, grads)
        if group["maximize"]:
            _tg._foreach_neg_(prevs)
        _tg._foreach_sign_(signs)
        for sign in signs:
            _signs_to_factors_(sign, etaminus, etaplus)
        _tg._foreach_mul_(step_sizes, signs)
        for step_size in step_sizes:
            step_size.clamp_(step_size_min, step_size_max)
        for grad, sign in zip(prevs, signs):
            grad.copy_(_tg.where(sign.eq(etaminus), 0, grad))
        _tg._foreach_addcmul_(params, [grad.sign() for grad in prevs], step_sizes, value=-1)

    def _update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        state["step"]._data += 1
        state["step"]._bump_version()
        # (PyTorch views a complex parameter, its gradient and its state as real before its first op: its errors
        # name the real views' shapes)
        grad, param = as_real(grad), as_real(p._data)
        prev, step_size = state_as_real(p, state, "prev"), state_as_real(p, state, "step_size")
        if grad.shape != prev.shape:
            refuse_unfit(None, grad, prev)  # (PyTorch's grad.mul(prev))
        sign = np.sign(grad * prev)
        # the sign of grad * prev picks the factor: grow on agreement, shrink on a sign change
        factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1)).astype(sign.dtype, copy=False)
        if step_size.shape != factor.shape:  # (its shape is the first gradient's)
            refuse_unfit(step_size, factor)  # (PyTorch's step_size.mul_(sign))
        step_size *= factor
        state["step_size"]._bump_version()
        np.clip(step_size, step_size_min, step_size_max, out=step_size)
        state["step_size"]._bump_version()
        if factor.shape != grad.shape:
            _refuse_unfit_mask(factor.shape, grad.shape)  # (PyTorch's grad[sign.eq(etaminus)] = 0)
        grad = np.where(factor == factor.dtype.type(etaminus), 0, grad).astype(grad.dtype, copy=False)
        p._before_write()
        direction = np.asarray(np.sign(grad))
        if direction.dtype.kind == "f":  # (PyTorch's sign of NaN is 0: such an element keeps its value)
            np.copyto(direction, 0, where=direction != direction)
        if direction.shape != param.shape or step_size.shape != param.shape:
            refuse_unfit(param, direction, step_size)  # (PyTorch's param.addcmul_(grad.sign(), step_size))
        param += -(direction * step_size)
        p._bump_version()
        prev[...] = grad
        state["prev"]._bump_version()


def _signs_to_factors_(sign: Tensor, etaminus: float, etaplus: float) -> None:
    """PyTorch's step-size factors written into ``sign`` (of ``grad * prev``) through boolean masks: grow where the
    gradient kept its sign, shrink where it changed, 1 where either was zero."""
    sign[sign.gt(0)] = etaplus
    sign[sign.lt(0)] = etaminus
    sign[sign.eq(0)] = 1


def _refuse_unfit_mask(mask: tuple[int, ...], shape: tuple[int, ...]) -> None:
    """PyTorch's IndexError where a boolean mask of shape ``mask`` indexes a tensor of shape ``shape`` it does not
    fit (the single-tensor update zeroes the gradient where the sign changed through such a mask; the mask is the
    broadcast of the gradient and the previous one, so it has at least the gradient's dims)."""
    if len(mask) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    d = next(d for d, (m, n) in enumerate(zip(mask, shape)) if m != n)
    raise IndexError(f"The shape of the mask {list(mask)} at index {d} does not match the shape of the indexed "
                     f"tensor {list(shape)} at index {d}")
