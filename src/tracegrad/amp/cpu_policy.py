"""CPU autocast: which operators torch casts the arguments of, to what, and the cast itself.

The three lists are torch 2.13's ``AutocastCPU`` registrations (ATen's ``autocast_mode.cpp``, checked against the
installed build's dispatch table), as schema names. An operator listed runs with every floating-point CPU tensor
among its arguments (alone, optional or in a list; float64 ones excepted) cast:

- ``lower_precision_fp``: to autocast's dtype (bfloat16 unless set otherwise);
- ``fp32``: to float32;
- ``promote``: to the widest of its floating arguments, float32 over the lower dtype (float64 ones ignored).

Then the operator runs with autocast off, as torch's ``ExcludeDispatchKeyGuard`` runs it: the operators it is made
of (``linear``'s ``addmm``, ``cross_entropy_loss``'s ``log_softmax``) are not cast again. Casts of float32 leaves
that require grad to the lower dtype are cached until the outermost autocast region ends (torch's weight cache:
the first cast is reused, even after the weight changed in place).

The lists are in ``tracegrad/_autocast_policies.py``. Hooks: ``OpDef.__call__`` (behind ``STATE.special``, which
CPU autocast sets) for operators tracegrad declares, and ``guard_errors`` for the ones it composes in Python
(``linear``, ``conv2d``, the losses...), whose guarded entry points carry torch's operator names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._autocast_policies import FP32, LOWER_PRECISION_FP, POLICIES, PROMOTE, padding_policy
from .._state import STATE

__all__ = ["FP32", "LOWER_PRECISION_FP", "POLICIES", "PROMOTE", "padding_policy", "call_with_policy", "clear_cache",
           "cached_cast"]

# ---- the casts --------------------------------------------------------------------------------------------------

# id of the float32 leaf -> (the leaf, its cast): the leaf is held, so no other tensor takes its id meanwhile
_cached_casts: dict[int, tuple] = {}


def clear_cache() -> None:
    _cached_casts.clear()


def call_with_policy(policy: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """Run ``fn`` as torch's autocast kernel of that policy runs an operator: arguments cast, autocast off inside.
    An ``out=`` call is another operator (``mm.out``), which torch's autocast lists do not name."""
    lower = STATE.autocast
    STATE.autocast = None  # (the casts themselves are not cast again either)
    try:
        if "out" in kwargs and kwargs["out"] is not None:
            return fn(*args, **kwargs)
        to = _target_dtype(policy, lower, args, kwargs)
        args = tuple(_cast_argument(to, lower, a) for a in args)
        kwargs = {key: _cast_argument(to, lower, value) for key, value in kwargs.items()}
        return fn(*args, **kwargs)
    finally:
        STATE.autocast = lower


def _target_dtype(policy: str, lower: Any, args: tuple, kwargs: dict) -> Any:
    from ..backend.dtypes import float32

    if policy is LOWER_PRECISION_FP:
        return lower
    if policy is FP32:
        return float32
    promoted = lower
    for value in (*args, *kwargs.values()):
        for tensor in _tensors_in(value):
            promoted = _prioritize(promoted, tensor, lower)
    return promoted


def _prioritize(current: Any, tensor: Any, lower: Any) -> Any:
    """torch's ``at::autocast::prioritize``: float32 wins over the lower dtype; float64 tensors are ignored."""
    from ..backend.dtypes import float32, float64

    if not _is_eligible_device_and_kind(tensor):
        return current
    dtype = tensor.dtype
    if dtype is float64:
        return current
    if current is float32 or dtype is float32:
        return float32
    if current is lower and dtype is lower:
        return lower
    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")


def _tensors_in(value: Any) -> tuple:
    from .._tensor import Tensor

    if isinstance(value, Tensor):
        return (value,)
    if value.__class__ is list or value.__class__ is tuple:
        return tuple(v for v in value if isinstance(v, Tensor))
    return ()


def _cast_argument(to: Any, lower: Any, value: Any) -> Any:
    from .._tensor import Tensor

    if isinstance(value, Tensor):
        return cached_cast(to, lower, value)
    if (value.__class__ is list or value.__class__ is tuple) and any(isinstance(v, Tensor) for v in value):
        return value.__class__(cached_cast(to, lower, v) if isinstance(v, Tensor) else v for v in value)
    return value


def _is_eligible_device_and_kind(tensor: Any) -> bool:
    return tensor.device.type == "cpu" and tensor.is_floating_point()


def cached_cast(to: Any, lower: Any, tensor: Any) -> Any:
    """torch's ``cached_cast``: an eligible tensor (a floating CPU tensor, not float64) of another dtype cast with
    ``to``; casts of float32 leaves that require grad to the lower dtype are kept while the cache is on.

    As torch 2.13's (pytorch#165068): a cast to be kept is made with grad enabled, so one first made under
    ``no_grad`` still carries ``ToCopyBackward0`` when a later forward in the region records a graph; inside
    ``inference_mode`` the cache is neither read nor written (its casts are inference tensors)."""
    from ..autograd.grad_mode import enable_grad
    from ..backend.dtypes import float32, float64
    from .autocast_state import is_autocast_cache_enabled

    dtype = tensor.dtype
    if dtype is to or dtype is float64 or not _is_eligible_device_and_kind(tensor):
        return tensor
    cacheable = (to is lower and dtype is float32 and tensor.requires_grad and tensor.is_leaf
                 and tensor._base is None and is_autocast_cache_enabled() and not STATE.inference)
    if not cacheable:
        return tensor.to(to)
    cached = _cached_casts.get(id(tensor))
    if cached is not None:
        return cached[1]
    with enable_grad():
        cast = tensor.to(to)
    _cached_casts[id(tensor)] = (tensor, cast)
    return cast
