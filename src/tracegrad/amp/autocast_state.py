"""torch's top-level autocast state functions (``torch.is_autocast_enabled``, ``torch.set_autocast_dtype``...).

The state is kept as torch keeps it: an enabled flag and a "fast" dtype per device type, one cache flag and one
nesting counter. The values and checks follow torch's CPU build:

- device types are checked against torch's list; those without an autocast dispatch key (``meta``, ``hip``...)
  refuse the enabled flag with torch's message, and have no default dtype;
- the default dtypes are float16 (cuda, xpu, mps...) and bfloat16 (cpu, xla, hpu, maia); any tracegrad dtype
  can be set;
- the CPU's flag and dtype switch the operators' casts (``STATE.autocast``, read by amp/cpu_policy.py); switching
  autocast *on* for CUDA when CuPy sees a GPU would promise lower-precision kernels that do not exist, so it raises
  NotImplementedError, as ``torch.autocast(enabled=True)`` does there. For other device types no tensor can ever
  be affected, so the flag is recorded, as torch records it;
- the legacy ``*_cpu_*``/``*_gpu_*`` forms warn with torch's DeprecationWarning and act on "cpu"/"cuda".
"""

from __future__ import annotations

import warnings
from typing import Any

from .._arg_parser import tp_name
from .._state import STATE
from ..backend.dtypes import bfloat16, bfloat16_in_use, float16
from ..backend.dtypes import dtype as _dtype
from .autocast_mode import WITH_DISPATCH_KEY, is_autocast_available

__all__ = [
    "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
    "set_autocast_cpu_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
    "autocast_increment_nesting", "autocast_decrement_nesting",
]

BF16 = bfloat16  # (brought into use, ml_dtypes imported, only when read: see get_autocast_dtype)
# torch's default fast dtypes (ATen's autocast_mode.cpp); device types missing here have none
_DEFAULT_DTYPES: dict[str, Any] = {
    "cpu": BF16, "cuda": float16, "ipu": float16, "xpu": float16, "hip": float16, "maia": BF16,
    "xla": BF16, "mps": float16, "hpu": BF16, "mtia": float16, "privateuseone": float16,
}

_enabled: dict[str, bool] = {}
_fast_dtypes: dict[str, Any] = dict(_DEFAULT_DTYPES)
_cache_enabled = True
_nesting = 0


def _check_device_type(fn: str, device_type: Any, position: int = 1) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}(): argument 'device_type' (position {position}) must be str, not "
                        f"{tp_name(device_type)}")
    is_autocast_available(device_type)  # torch's "Expected one of cpu, cuda, ... device type" for unknown names
    return device_type


def _check_dispatch_key(device_type: str) -> None:
    if device_type not in WITH_DISPATCH_KEY:
        raise RuntimeError("unknown device type for autocast in get_autocast_dispatch_key_from_device_type")


def _sync_cpu_autocast() -> None:
    """Tell the operators (``STATE.autocast``) the CPU's autocast dtype while its autocast is on."""
    STATE.autocast = default_fast_dtype("cpu") if _enabled.get("cpu", False) else None


def _lacks_low_precision_kernels(device_type: str) -> bool:
    """Whether autocast would promise casts tracegrad does not make: CUDA's, when CuPy sees a GPU."""
    if device_type == "cuda":
        from .. import cuda

        return cuda.is_available()
    return False


def _check_bool(fn: str, value: Any, position: int) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{fn}(): argument 'enabled' (position {position}) must be bool, not {tp_name(value)}")


def is_autocast_enabled(*args: Any, **kwargs: Any) -> bool:
    """``is_autocast_enabled(device_type)``; without an argument, CUDA's flag (torch's legacy form)."""
    if len(args) + len(kwargs) > 1 or set(kwargs) - {"device_type"}:
        got = ", ".join(tp_name(a) for a in (*args, *kwargs.values()))
        raise TypeError(f"is_autocast_enabled() received an invalid combination of arguments - got ({got}), but "
                        "expected one of:\n * (str device_type)\n * ()\n")
    if not args and not kwargs:
        return _enabled.get("cuda", False)
    if kwargs:
        device_type = kwargs["device_type"]
        if not isinstance(device_type, str):
            raise TypeError(f"is_autocast_enabled(): argument 'device_type' must be str, not "
                            f"{tp_name(device_type)}")
    else:
        device_type = _check_device_type("is_autocast_enabled", args[0])
    is_autocast_available(device_type)
    _check_dispatch_key(device_type)
    return _enabled.get(device_type, False)


def is_any_autocast_enabled() -> bool:
    """torch's ``torch._C._is_any_autocast_enabled()``: autocast is on for some device type."""
    return any(_enabled.values())


def set_autocast_enabled(*args: Any, **kwargs: Any) -> None:
    """``set_autocast_enabled(device_type, enabled)``; ``set_autocast_enabled(enabled)`` sets CUDA's flag."""
    bound = list(args) + [kwargs[k] for k in ("device_type", "enabled") if k in kwargs]
    if len(bound) == 1:
        _check_bool("set_autocast_enabled", bound[0], 1)
        device_type, enabled = "cuda", bound[0]
    elif len(bound) == 2:  # (the one signature of two arguments: its refusals in its order)
        device_type, enabled = bound
        if not isinstance(device_type, str):
            raise TypeError(f"set_autocast_enabled(): argument 'device_type' (position 1) must be str, not "
                            f"{tp_name(device_type)}")
        _check_bool("set_autocast_enabled", enabled, 2)
    else:
        got = ", ".join(tp_name(a) for a in bound)
        raise TypeError(f"set_autocast_enabled() received an invalid combination of arguments - got ({got}), but "
                        "expected one of:\n * (str device_type, bool enabled)\n * (bool enabled)\n")
    _set_enabled(device_type, enabled)


def _set_enabled(device_type: str, enabled: bool) -> None:
    is_autocast_available(device_type)
    _check_dispatch_key(device_type)
    if enabled and _lacks_low_precision_kernels(device_type):
        raise NotImplementedError(
            f"tracegrad has no low-precision autocast yet (no per-operator casts): autocast cannot be enabled for "
            f"'{device_type}' (only disabled, a no-op)."
        )
    _enabled[device_type] = enabled
    _sync_cpu_autocast()


def get_autocast_dtype(device_type: str) -> _dtype:
    _check_device_type("get_autocast_dtype", device_type)
    value = _fast_dtypes.get(device_type)
    if value is None:
        raise RuntimeError("unsupported scalarType")
    return bfloat16_in_use() if value is bfloat16 else value


def default_fast_dtype(device_type: str) -> Any:
    """The dtype ``torch.autocast(device_type)`` runs in when given none: the device's current one."""
    value = _fast_dtypes.get(device_type)
    return bfloat16_in_use() if value is bfloat16 else value


def set_autocast_dtype(device_type: str, dtype: _dtype) -> None:
    _check_device_type("set_autocast_dtype", device_type)
    if not isinstance(dtype, _dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not "
                        f"{tp_name(dtype)}")
    _fast_dtypes[device_type] = dtype
    _sync_cpu_autocast()


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def _check_legacy_dtype(dtype: Any) -> None:
    if not isinstance(dtype, _dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {tp_name(dtype)})")


def _check_legacy_bool(value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"enabled must be a bool (got {tp_name(value)})")


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _enabled.get("cpu", False)


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _check_legacy_bool(enabled)
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _set_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> _dtype:
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: _dtype) -> None:
    _check_legacy_dtype(dtype)
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _fast_dtypes["cpu"] = dtype
    _sync_cpu_autocast()


def get_autocast_gpu_dtype() -> _dtype:
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def is_autocast_cache_enabled() -> bool:
    return _cache_enabled


def set_autocast_cache_enabled(*args: Any) -> None:
    global _cache_enabled
    if len(args) != 1:
        raise TypeError(f"torch.set_autocast_cache_enabled() takes exactly one argument ({len(args)} given)")
    _check_legacy_bool(args[0])
    _cache_enabled = args[0]


def _no_arguments(name: str, args: tuple) -> None:
    if args:
        raise TypeError(f"torch.{name}() takes no arguments ({len(args)} given)")


def clear_autocast_cache(*args: Any) -> None:
    """Drop the casts of weights cached inside autocast regions."""
    _no_arguments("clear_autocast_cache", args)
    from .cpu_policy import clear_cache

    clear_cache()


def autocast_increment_nesting(*args: Any) -> int:
    global _nesting
    _no_arguments("autocast_increment_nesting", args)
    _nesting += 1
    return _nesting


def autocast_decrement_nesting(*args: Any) -> int:
    global _nesting
    _no_arguments("autocast_decrement_nesting", args)
    _nesting -= 1
    return _nesting


# ---- what torch.autocast's __enter__/__exit__ do with this state --------------------------------------------


def enter_autocast(device_type: str, enabled: bool, dtype: Any, cache_enabled: bool | None) -> tuple:
    """Save the device's state, then set it for the region; returns what ``exit_autocast`` restores."""
    saved = (device_type, _enabled.get(device_type, False), _fast_dtypes.get(device_type), _cache_enabled)
    # (torch's __enter__ hands both to set_autocast_enabled/set_autocast_dtype, which check their types)
    _check_bool("set_autocast_enabled", enabled, 2)
    if dtype is not BF16 and not isinstance(dtype, _dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not "
                        f"{tp_name(dtype)}")
    _set_enabled(device_type, enabled)
    _fast_dtypes[device_type] = dtype
    _sync_cpu_autocast()
    autocast_increment_nesting()
    if cache_enabled is not None:
        set_autocast_cache_enabled(cache_enabled)  # (torch checks the type, after the nesting count went up)
    return saved


def exit_autocast(saved: tuple) -> None:
    global _cache_enabled
    device_type, was_enabled, fast_dtype, cache_enabled = saved
    if autocast_decrement_nesting() == 0:
        clear_autocast_cache()
    if device_type in WITH_DISPATCH_KEY:
        _enabled[device_type] = was_enabled
    if fast_dtype is not None:
        _fast_dtypes[device_type] = fast_dtype
    _cache_enabled = cache_enabled
    _sync_cpu_autocast()

