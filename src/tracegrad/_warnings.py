"""``torch.set_warn_always``: warnings PyTorch emits once per process unless warn-always is on."""

from __future__ import annotations

import warnings

_ALWAYS = [False]
_SEEN: set = set()


def set_warn_always(mode: bool) -> None:
    _ALWAYS[0] = bool(mode)


def is_warn_always_enabled() -> bool:
    return _ALWAYS[0]


def warn_once(key: str, message: str, category=UserWarning, stacklevel: int = 3) -> None:
    if _ALWAYS[0] or key not in _SEEN:
        _SEEN.add(key)
        warnings.warn(message, category, stacklevel=stacklevel)
