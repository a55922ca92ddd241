"""``torch.backends.cudnn`` of a build without cuDNN: flags that read and write, no library behind them. Its
float32 precisions (``allow_tf32``, ``fp32_precision``, ``conv.fp32_precision``, ``rnn.fp32_precision``) are
nodes of the tree ``_fp32_precision`` keeps."""

from __future__ import annotations

from contextlib import AbstractContextManager

from ..._fp32_precision import allow_tf32_cudnn, set_allow_tf32_cudnn
from .. import _bool_setter, _FP32Precision, install_flags, module_flags, precision_of, set_module_flags
from . import rnn  # noqa: F401 - torch.backends.cudnn.rnn


def is_available() -> bool:
    return False


def version() -> int | None:
    return None


def _depthwise_kernel(value: str) -> str:
    if value not in ("auto", "cudnn", "native"):
        raise RuntimeError(f"Unknown cuDNN depthwise kernel mode: {value}. Expected one of: auto, cudnn, native")
    return value


# benchmark_limit is a plain None without cuDNN, as in torch
benchmark_limit = None


conv = _FP32Precision("cuda", "conv")
install_flags(__name__, {
    "enabled": (True, _bool_setter("set_enabled_cudnn")),
    "benchmark": (False, _bool_setter("set_benchmark_cudnn")),
    "deterministic": (False, _bool_setter("set_deterministic_cudnn")),
    "depthwise_kernel": ("auto", _depthwise_kernel),
}, {
    "allow_tf32": (allow_tf32_cudnn, set_allow_tf32_cudnn),
    "fp32_precision": precision_of("cuda", "all"),
})


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None,
              _fp32_precision="none", _depthwise_kernel=None) -> tuple:
    """(the benchmark limit is kept only where cuDNN exists: never here)"""
    previous = set_module_flags(__name__, {"enabled": _enabled, "benchmark": _benchmark,
                                           "deterministic": _deterministic, "allow_tf32": _allow_tf32,
                                           "fp32_precision": _fp32_precision,
                                           "depthwise_kernel": _depthwise_kernel})
    return previous[:2] + (None,) + previous[2:]


def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10, deterministic: bool = False,
          allow_tf32: bool = True, fp32_precision: str = "none", depthwise_kernel: str = "auto"
          ) -> AbstractContextManager:
    return module_flags(__name__, {"enabled": enabled, "benchmark": benchmark, "deterministic": deterministic,
                                   "allow_tf32": allow_tf32, "fp32_precision": fp32_precision,
                                   "depthwise_kernel": depthwise_kernel})
