"""The observation event bus. The engine checks ``STATE.observed`` (one flag) before calling ``emit``."""

from __future__ import annotations

from collections.abc import Callable

from .._state import STATE

_subscribers: list[Callable[[str, dict], None]] = []


def subscribe(fn: Callable[[str, dict], None]) -> Callable[[], None]:
    """Call ``fn(kind, payload)`` for every event; returns a function that unsubscribes."""
    _subscribers.append(fn)
    STATE.observed = True

    def unsubscribe() -> None:
        if fn in _subscribers:
            _subscribers.remove(fn)
        STATE.observed = bool(_subscribers)

    return unsubscribe


def emit(kind: str, **payload) -> None:
    for fn in list(_subscribers):
        fn(kind, payload)
