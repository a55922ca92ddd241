"""``torch.backends.opt_einsum``: available when the opt_einsum package is importable, as in torch."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any


@lru_cache
def is_available() -> bool:
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum() -> Any:
    if not is_available():
        return None
    import opt_einsum

    return opt_einsum


def _set_enabled(value: bool) -> None:
    global enabled
    if not is_available() and value:
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap "
            "the benefits of calculating an optimal path for einsum. torch.einsum will "
            "fall back to contracting from left to right. To enable this optimal path "
            "calculation, please install opt-einsum."
        )
    enabled = value


def _set_strategy(value: str) -> None:
    global strategy
    if not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `strategy` to {value} will not be meaningful. "
            "torch.einsum will bypass path calculation and simply contract from left to right. "
            "Please install opt_einsum or unset `strategy`."
        )
    if not enabled:
        raise ValueError(
            f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be meaningful. "
            "torch.einsum will bypass path calculation and simply contract from left to right. "
            "Please set `enabled` to `True` as well or unset `strategy`."
        )
    if value not in ["auto", "greedy", "optimal"]:
        raise ValueError(f"`strategy` must be one of the following: [auto, greedy, optimal] but is {value}")
    strategy = value


def set_flags(_enabled: bool | None = None, _strategy: str | None = None) -> tuple[bool, str | None]:
    orig_flags = (enabled, None if not is_available() else strategy)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return orig_flags


@contextmanager
def flags(enabled: bool | None = None, strategy: str | None = None) -> Iterator[None]:
    """Set the flags within the block, with the checks; restore them on exit."""
    orig_flags = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*orig_flags)


# Plain attributes: torch's module class declares its properties `global`, so a bare assignment
# (torch.backends.opt_einsum.enabled = True) is never checked there; only flags()/set_flags() check.
enabled: bool = is_available()
strategy: str | None = "auto" if is_available() else None
