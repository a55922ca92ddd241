"""Gradient clipping, in place on ``.grad`` and without autograd (as PyTorch does under ``no_grad``). The parameters
are read through their public attributes (``.grad``, ``.device``) in torch's order, so a non-tensor fails on the
attribute it does in torch. While the ``__torch_function__`` protocol is live, torch's Python code runs instead, call
by call through tracegrad's operators (``_watched_*``), so that a handler sees what it sees in torch: the
``no_grad`` switches, the ``.grad`` reads, ``_foreach_norm``, ``stack``, ``linalg.vector_norm``, ``clamp``,
``_foreach_mul_``..."""

from __future__ import annotations

import math
import types
import warnings
from collections.abc import Iterable

import numpy as np

import tracegrad as _tg

from ..._C._foreach_grouping import _group_tensors_by_device_and_dtype
from ..._state import STATE
from ..._tensor import Tensor, _wrap
from ...autograd.grad_mode import no_grad
from ...backend import dtypes as _dt
from ...ops.aten_vec import quiet
from ...ops.linalg import _vector_norm_kernel
from ...utils import _foreach_utils


def _as_list(parameters) -> list:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _parameters_listed(parameters) -> list:
    """``_as_list``, with torch's warning for an empty generator (nothing to clip)."""
    if isinstance(parameters, Tensor):
        return [parameters]
    listed = list(parameters)
    if isinstance(parameters, types.GeneratorType) and not listed:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    return listed


def _vector_norm(a: np.ndarray, p: float) -> np.ndarray:
    """``linalg.vector_norm(a, p)``'s value, by its kernel (float16/32/64 in ATen's reduction order); bfloat16, as
    ATen computes it, in float, the result rounded."""
    if a.dtype is _dt.bfloat16.np:  # (by identity: NumPy finds float64 == bfloat16; None until bfloat16 is used)
        return _vector_norm_kernel(a.astype(np.float32), p).astype(a.dtype)
    return _vector_norm_kernel(a, p)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """The norm of the per-tensor norms (equal to the norm of all values concatenated)."""
    if STATE.torch_function:
        return _watched_total_norm(tensors, norm_type, error_if_nonfinite, foreach)
    return _total_norm(tensors, norm_type, error_if_nonfinite, foreach)


@quiet
def _total_norm(tensors, norm_type: float, error_if_nonfinite: bool, foreach) -> Tensor:
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _wrap(np.asarray(0.0, dtype=np.float32))
    tensors[0].device  # noqa: B018 - torch reads the first one's device before anything else
    # (the norms stacked in the order of torch's groups by dtype, not the tensors': it is the order of the total's sum;
    # tensors of one dtype, the common case, are one group in their own order)
    dtype = tensors[0]._data.dtype if tensors[0].__class__ is Tensor else None
    if dtype is not None and all(t.__class__ is Tensor and t._data.dtype is dtype for t in tensors):
        grouped = [tensors]
    else:
        grouped = [group for ([group], _) in _group_tensors_by_device_and_dtype([tensors], False).values()]
    if math.isinf(norm_type) and any(t._data.size == 0 for group in grouped for t in group):
        raise _empty_infinity_norm_error(norm_type, foreach)
    norms = _tg.stack([_wrap(_vector_norm(t._data, norm_type)) for group in grouped for t in group])  # (promoted)
    total = _wrap(_vector_norm(norms._data, norm_type))
    if error_if_nonfinite and not np.isfinite(total._data.astype(np.float64)):  # (bfloat16 too)
        raise _nonfinite_norm_error(norm_type)
    return total


def _nonfinite_norm_error(norm_type: float) -> RuntimeError:
    return RuntimeError(
        f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
        "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
        "norm anyway, set `error_if_nonfinite=False`"
    )


def _empty_infinity_norm_error(norm_type: float, foreach) -> RuntimeError:
    """Torch's refusal of an infinity norm of an empty tensor (a max or min over nothing): in ``_foreach_norm``, its
    default route, for +inf; in ``linalg.vector_norm`` for -inf (which the foreach kernel hands on) or without
    foreach."""
    if norm_type > 0 and foreach is not False:
        return RuntimeError("_foreach_norm cannot compute the infinity norm on an empty tensor because the operation "
                            "does not have an identity")
    order = "inf" if norm_type > 0 else "-inf"
    return RuntimeError(f"linalg.vector_norm cannot compute the {order} norm on an empty tensor because the operation "
                        "does not have an identity")


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    if STATE.torch_function:
        return _watched_clip_with_norm_(parameters, max_norm, total_norm, foreach)
    return _clip_with_norm_(parameters, max_norm, total_norm)


@quiet
def _clip_with_norm_(parameters, max_norm: float, total_norm: Tensor) -> None:
    """torch's arithmetic, by tracegrad's operators (which the coefficient's rounding and each gradient's product
    follow: ``max_norm / t`` is ``t.reciprocal() * max_norm``, a float16 gradient reads the coefficient in float,
    a 0-d one computes in the promoted dtype...), one ``_foreach_mul_`` for all (one version each)."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    with no_grad():
        coefficient = _tg.clamp(max_norm / (total_norm + 1e-6), max=1.0)
        if _scales_alike(grads, coefficient):
            _scale_in_place(grads, coefficient._data)
        else:
            _tg._foreach_mul_(grads, coefficient)


def _scales_alike(grads: list, coefficient: Tensor) -> bool:
    """Whether every gradient is a float32/float64 tensor of at least one dim of the coefficient's dtype that is
    written alone (no view, no 0 stride): then each ``mul_`` by the 0-d coefficient is one IEEE product in that
    dtype, which NumPy's gives bit for bit (the common case, taken without the per-tensor operator calls of
    ``_foreach_mul_``: a third of the time)."""
    dtype = coefficient._data.dtype
    if (dtype is not _F32 and dtype is not _F64) or coefficient._data.ndim:  # (a 1-d total: the operator refuses)
        return False
    # (views, inference tensors and tensors with a 0 stride, which may be expanded: the operator's checks)
    return all(g.__class__ is Tensor and g._data.dtype is dtype and g._data.ndim and not g._rg and g._base is None
               and not g._inference and 0 not in g._data.strides for g in grads)


def _scale_in_place(grads: list, coefficient: np.ndarray) -> None:
    """``_foreach_mul_``'s writes: each gradient multiplied in place, one version each."""
    for g in grads:
        g._before_write()
        np.multiply(g._data, coefficient, out=g._data)
        g._bump_version()


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def clip_grad_norm_(
    parameters: Iterable[Tensor] | Tensor,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:
    """Scale all gradients so that their joint norm is at most ``max_norm``; return the norm before
    clipping."""
    parameters = _parameters_listed(parameters)
    if STATE.torch_function:
        return _watched_clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = _total_norm(grads, norm_type, error_if_nonfinite, foreach)
    _clip_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(
    parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None
) -> Tensor:
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float, foreach=None) -> None:
    """Clamp each gradient into ``[-clip_value, clip_value]`` in place, as torch does with ``clamp_min_`` then
    ``clamp_max_`` (two versions) on its foreach path, the CPU default, or one ``clamp_`` with ``foreach=False``;
    a complex gradient fails in clamp. (Torch clamps dtype group by dtype group in the order of its C++ hash map,
    so which gradients of other dtypes it has clipped before a complex one fails is not followed here.)"""
    if STATE.torch_function:
        return _watched_clip_grad_value_(parameters, clip_value, foreach)
    clip_value = float(clip_value)
    writes = 1 if foreach is False else 2
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    _group_tensors_by_device_and_dtype([grads], False)  # (torch groups them first, on every path: none is an error)
    for grad in grads:
        if grad._data.dtype.kind == "c":
            grad.clamp_(min=-clip_value, max=clip_value)  # (raises clamp's error for complex types)
        grad._before_write()
        np.clip(grad._data, -clip_value, clip_value, out=grad._data)
        for _ in range(writes):
            grad._bump_version()


# ---- torch's code, for handlers to see ------------------------------------------------------------------------------

@no_grad()
def _watched_clip_grad_norm_(parameters: list, max_norm: float, norm_type: float, error_if_nonfinite: bool,
                             foreach) -> Tensor:
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = _watched_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    _watched_clip_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


@no_grad()
def _watched_total_norm(tensors, norm_type: float, error_if_nonfinite: bool, foreach) -> Tensor:
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _tg.tensor(0.0)
    first_device = tensors[0].device
    norms: list = []
    for (device, _), ([device_tensors], _) in _foreach_utils._group_tensors_by_device_and_dtype([tensors]).items():
        if _takes_foreach(foreach, device_tensors, device):
            norms.extend(_tg._foreach_norm(device_tensors, norm_type))
        else:
            norms.extend([_tg.linalg.vector_norm(g, norm_type) for g in device_tensors])
    total_norm = _tg.linalg.vector_norm(_tg.stack([norm.to(first_device) for norm in norms]), norm_type)
    if error_if_nonfinite and _tg.logical_or(total_norm.isnan(), total_norm.isinf()):
        raise _nonfinite_norm_error(norm_type)
    return total_norm


@no_grad()
def _watched_clip_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach) -> None:
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    grouped = _foreach_utils._group_tensors_by_device_and_dtype([grads])
    clip_coef_clamped = _tg.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for (device, _), ([device_grads], _) in grouped.items():
        if _takes_foreach(foreach, device_grads, device):
            _tg._foreach_mul_(device_grads, clip_coef_clamped.to(device))
        else:
            coef = clip_coef_clamped.to(device)
            for g in device_grads:
                g.mul_(coef)


@no_grad()
def _watched_clip_grad_value_(parameters, clip_value: float, foreach) -> None:
    clip_value = float(clip_value)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    for (device, _), ([device_grads], _) in _foreach_utils._group_tensors_by_device_and_dtype([grads]).items():
        if _takes_foreach(foreach, device_grads, device):
            _tg._foreach_clamp_min_(device_grads, -clip_value)
            _tg._foreach_clamp_max_(device_grads, clip_value)
        else:
            for grad in device_grads:
                grad.clamp_(min=-clip_value, max=clip_value)


def _takes_foreach(foreach, tensors: list, device) -> bool:
    """torch's choice of the foreach kernels for one device's group (and its refusal of a device without them)."""
    if (foreach is None and _foreach_utils._has_foreach_support(tensors, device)) or (
            foreach and _foreach_utils._device_has_foreach_support(device)):
        return True
    if foreach:
        raise RuntimeError(f"foreach=True was passed, but can't use the foreach API on {device.type} tensors")
    return False
