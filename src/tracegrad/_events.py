"""The core of the observation event bus, at the bottom layer so the engine can emit without importing viz.

``tracegrad.viz.events`` documents the event kinds and re-exports these functions. Callers check
``STATE.observed`` before calling :func:`emit`, so with no subscriber an event costs that one check.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from ._state import STATE

Subscriber = Callable[[str, dict], None]

# Immutable tuples, replaced on (un)subscribe: emit iterates without copying, and a subscriber that
# unsubscribes while an event is delivered does not disturb the loop.
_everything: tuple[Subscriber, ...] = ()
_by_kind: dict[str, tuple[Subscriber, ...]] = {}


# The module forward calls in progress while someone observes (innermost last), pushed and popped by
# ``nn.Module.__call__``: ``[tracegrad's own forward?, note]``. ``note`` is free for an observer to fill: source
# tracking keeps there the user's line that called the model, so the nodes of a deep model cost one frame walk
# per model call instead of one per node (``tracegrad.viz.sources``).
MODULE_CALLS: list[list] = []

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))  # .../tracegrad
# File name -> whether it is tracegrad's own source. Hot loops read this dict directly and call
# :func:`is_own_file` only for a name they have not met yet.
OWN_FILES: dict[str, bool] = {}


def is_own_file(filename: str) -> bool:
    """Whether ``filename`` is tracegrad's own code (as opposed to the user's), remembered per file name."""
    own = OWN_FILES.get(filename)
    if own is None:
        own = OWN_FILES[filename] = filename.startswith(_PACKAGE_DIR)
    return own

# Events that only the general path emits: wanting them turns the fast paths off (``STATE.special``).
GENERAL_PATH_KINDS = ("op", "saved_packed", "saved_unpacked", "saved_freed")


def _update_flag() -> None:
    STATE.set_observation(bool(_everything or any(_by_kind.values())),
                          bool(_everything or any(_by_kind.get(kind) for kind in GENERAL_PATH_KINDS)))


def subscribe(fn: Subscriber, kinds: Iterable[str] | None = None) -> Callable[[], None]:
    """Call ``fn(kind, payload)`` for every event, or only for the event ``kinds`` given.

    Returns a function that unsubscribes. Naming the kinds matters for speed: a subscriber is not called
    at all for the (frequent) events it does not want.
    """
    global _everything
    wanted = None if kinds is None else tuple(dict.fromkeys(kinds))
    if wanted is None:
        _everything = (*_everything, fn)
    else:
        for kind in wanted:
            _by_kind[kind] = (*_by_kind.get(kind, ()), fn)
    _update_flag()

    def unsubscribe() -> None:
        global _everything
        if wanted is None:
            if fn in _everything:
                rest = list(_everything)
                rest.remove(fn)
                _everything = tuple(rest)
        else:
            for kind in wanted:
                rest = list(_by_kind.get(kind, ()))
                if fn in rest:
                    rest.remove(fn)
                _by_kind[kind] = tuple(rest)
        _update_flag()

    return unsubscribe


def forget_subscribers() -> None:
    """Drop every subscriber, for a forked child process (a DataLoader worker): the observers it inherited
    report to the parent (a notebook's comm channel), which does not see this process's work."""
    global _everything
    _everything = ()
    _by_kind.clear()
    _update_flag()


def subscribers() -> tuple[Subscriber, ...]:
    """Every distinct subscriber, whatever kinds it listens to."""
    seen = dict.fromkeys(_everything)
    for fns in _by_kind.values():
        seen.update(dict.fromkeys(fns))
    return tuple(seen)


def emit_op_call(op: str, outputs: tuple, recorded: bool) -> None:
    """Tell observers about a forward operator call: ``op`` (every call; only general-path observers want
    it), then ``node_created`` once for each graph node that ``outputs`` now point to, if it recorded."""
    if STATE.observed_ops:
        emit("op", op=op, outputs=outputs)
    if recorded:
        last = None
        for out in outputs:
            node = getattr(out, "_gfn", None)
            if node is not None and node is not last:
                last = node
                emit("node_created", node=node, op=op)


def emit(event: str, /, **payload) -> None:
    """Deliver an event (positional-only, so a payload may carry a ``kind``)."""
    for fn in _everything:
        fn(event, payload)
    for fn in _by_kind.get(event, ()):
        fn(event, payload)
