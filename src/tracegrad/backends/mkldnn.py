"""``torch.backends.mkldnn`` (oneDNN), which torch's x86 CPU build has."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

from .._fp32_precision import get_fp32_precision_getter, set_fp32_precision_setter
from . import _bool_setter, _FP32Precision, install_flags, set_module_flags

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2


def is_available() -> bool:
    return True


def _onednn_tf32(value: object) -> None:
    """torch's CPU build reads this flag as None whatever is set (TF32 on oneDNN needs an Intel GPU): a bool is
    accepted with torch's warning and forgotten."""
    _bool_setter("_set_onednn_allow_tf32")(value)
    warnings.warn("TF32 acceleration on top of oneDNN is available for Intel GPUs. The current Torch version does "
                  "not have Intel GPU Support.", UserWarning, stacklevel=4)


matmul = _FP32Precision("mkldnn", "matmul")
conv = _FP32Precision("mkldnn", "conv")
rnn = _FP32Precision("mkldnn", "rnn")
install_flags(__name__, {
    "enabled": (True, _bool_setter("set_enabled_mkldnn")),
    "deterministic": (False, _bool_setter("set_deterministic_mkldnn")),
    "allow_tf32": (None, _onednn_tf32),
}, {
    # torch reads oneDNN's own node but writes the generic one (its setter names "generic")
    "fp32_precision": (lambda: get_fp32_precision_getter("mkldnn", "all"),
                       lambda value: set_fp32_precision_setter("generic", "all", value)),
})


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none") -> tuple:
    """torch's: the precision read and written here is oneDNN's own node (unlike the module's property)."""
    previous = set_module_flags(__name__, {"enabled": _enabled, "deterministic": _deterministic,
                                           "allow_tf32": _allow_tf32})
    previous += (get_fp32_precision_getter("mkldnn", "all"),)
    if _fp32_precision is not None:
        set_fp32_precision_setter("mkldnn", "all", _fp32_precision)
    return previous


@contextlib.contextmanager
def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> Iterator[None]:
    """Switch oneDNN (off, by default) inside the block: float32 LSTMs then take the composed path."""
    previous = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        set_flags(*previous)
