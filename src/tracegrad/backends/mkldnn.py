"""``torch.backends.mkldnn`` (oneDNN), which torch's x86 CPU build has."""

from __future__ import annotations

import warnings
from contextlib import AbstractContextManager

from . import _bool_setter, _precision, install_flags, module_flags, set_module_flags

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


install_flags(__name__, {
    "enabled": (True, _bool_setter("set_enabled_mkldnn")),
    "deterministic": (False, _bool_setter("set_deterministic_mkldnn")),
    "allow_tf32": (None, _onednn_tf32),
    "fp32_precision": ("none", _precision),
})


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none") -> tuple:
    return set_module_flags(__name__, {"enabled": _enabled, "deterministic": _deterministic,
                                       "allow_tf32": _allow_tf32, "fp32_precision": _fp32_precision})


def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> AbstractContextManager:
    """Switch oneDNN (off, by default) inside the block: float32 LSTMs then take the composed path."""
    return module_flags(__name__, {"enabled": enabled, "deterministic": deterministic, "allow_tf32": allow_tf32,
                                   "fp32_precision": fp32_precision})
