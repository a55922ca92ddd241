"""``torch.backends.cuda`` of a CPU build: ``is_built()`` is False; the cuBLAS flags and the scaled dot product
attention switches still read and write (the latter are the ones tracegrad's attention consults)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from .. import _fp32_precision
from ..nn.attention import SDPBackend, sdpa_kernel
from ..ops.nn_ops.attention import ENABLED_BACKENDS
from . import _bool_setter

__all__ = ["is_built", "matmul", "SDPBackend", "flash_sdp_enabled", "enable_flash_sdp", "mem_efficient_sdp_enabled",
           "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp", "cudnn_sdp_enabled",
           "enable_cudnn_sdp", "is_flash_attention_available", "allow_fp16_bf16_reduction_math_sdp",
           "fp16_bf16_reduction_math_sdp_allowed", "sdp_kernel"]


def is_built() -> bool:
    return False


def _parse_reduction_setting(value: Any, attr_name: str) -> tuple[bool, bool]:
    def ensure_bool(obj: Any, which: str) -> bool:
        if isinstance(obj, bool):
            return obj
        raise TypeError(f"{attr_name} expects a bool for {which}, but got {type(obj)!r}")

    if isinstance(value, bool):
        return value, True
    if isinstance(value, (list, tuple)):
        if not value:
            raise TypeError(f"{attr_name} expects at least one boolean argument")
        if len(value) > 2:
            raise TypeError(f"{attr_name} expects at most two boolean arguments")
        allow = ensure_bool(value[0], "allow_reduced_precision")
        return allow, (ensure_bool(value[1], "allow_splitk") if len(value) == 2 else True)
    raise TypeError(f"{attr_name} expects a bool or a tuple/list of bools, but got {type(value)!r}")


class cuBLASModule:  # noqa: N801 - PyTorch's name
    """``torch.backends.cuda.matmul``: ``allow_tf32`` (legacy) and ``fp32_precision`` (new) are two views of
    cuBLAS's float32 precision, kept in ``_fp32_precision`` with the rules of torch's two APIs."""

    _reduction = {"fp16": (True, True), "bf16": (True, True)}
    _state: dict[str, Any] = {"allow_fp16_accumulation": False}

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return _fp32_precision.allow_tf32_cublas()
        if name == "fp32_precision":
            return _fp32_precision.get_fp32_precision_getter("cuda", "matmul")
        for kind in ("fp16", "bf16"):
            if name == f"allow_{kind}_reduced_precision_reduction":
                return self._reduction[kind][0]
            if name == f"allow_{kind}_reduced_precision_reduction_split_k":
                return self._reduction[kind][1]
        if name in self._state:
            return self._state[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            _fp32_precision.set_allow_tf32_cublas(value)
        elif name in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
            self._reduction[name[6:10]] = _parse_reduction_setting(value, name)
        elif name == "allow_fp16_accumulation":
            self._state[name] = _bool_setter("set_allow_fp16_accumulation_cublas")(value)
        elif name == "fp32_precision":
            _fp32_precision.set_fp32_precision_setter("cuda", "matmul", value)
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()


def flash_sdp_enabled() -> bool:
    return ENABLED_BACKENDS["flash_attention"]


def enable_flash_sdp(enabled: bool) -> None:
    ENABLED_BACKENDS["flash_attention"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return ENABLED_BACKENDS["efficient_attention"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    ENABLED_BACKENDS["efficient_attention"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return ENABLED_BACKENDS["math"]


def enable_math_sdp(enabled: bool) -> None:
    ENABLED_BACKENDS["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return ENABLED_BACKENDS["cudnn_attention"]


def enable_cudnn_sdp(enabled: bool) -> None:
    ENABLED_BACKENDS["cudnn_attention"] = bool(enabled)


def is_flash_attention_available() -> bool:
    return False  # the CUDA flash kernels are not built


_math_sdp_reduction = [False]


def allow_fp16_bf16_reduction_math_sdp(enabled: bool) -> None:
    _math_sdp_reduction[0] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed() -> bool:
    return _math_sdp_reduction[0]


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
               enable_cudnn: bool = True) -> Iterator[None]:
    """Deprecated form of ``torch.nn.attention.sdpa_kernel``, with torch's FutureWarning."""
    warnings.warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be removed. "
        "Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated signature.",
        FutureWarning,
        stacklevel=3,
    )
    chosen = [backend for backend, on in ((SDPBackend.FLASH_ATTENTION, enable_flash),
                                          (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
                                          (SDPBackend.MATH, enable_math),
                                          (SDPBackend.CUDNN_ATTENTION, enable_cudnn)) if on]
    with sdpa_kernel(chosen):
        yield
