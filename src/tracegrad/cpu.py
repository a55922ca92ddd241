"""``torch.cpu``: the device-agnostic counterparts of ``torch.cuda``'s queries, as no-ops on the one CPU device."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from .amp import cpu_amp as amp  # noqa: F401 - torch.cpu.amp (deprecated aliases of torch.amp)

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream", "stream",
           "set_device", "device_count", "Stream", "StreamContext", "Event"]


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def synchronize(device: Any = None) -> None:
    """Nothing runs asynchronously on the CPU."""


class Stream:
    def __init__(self, priority: int = -1) -> None:
        pass

    def wait_stream(self, stream: Any) -> None:
        pass

    def record_event(self) -> None:
        pass

    def wait_event(self, event: Any) -> None:
        pass


class Event:
    def query(self) -> bool:
        return True

    def record(self, stream: Any = None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def wait(self, stream: Any = None) -> None:
        pass


_default_cpu_stream = Stream()
_current_stream = _default_cpu_stream


def current_stream(device: Any = None) -> Stream:
    return _current_stream


class StreamContext(AbstractContextManager):
    """Makes ``stream`` the current one within the block (``None`` leaves it unchanged)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.prev_stream = _default_cpu_stream

    def __enter__(self) -> None:
        global _current_stream
        if self.stream is None:
            return
        self.prev_stream = _current_stream
        _current_stream = self.stream

    def __exit__(self, type: Any, value: Any, traceback: Any) -> None:  # noqa: A002
        global _current_stream
        if self.stream is None:
            return
        _current_stream = self.prev_stream


def stream(stream: Stream | None) -> AbstractContextManager:
    return StreamContext(stream)


def device_count() -> int:
    return 1


def set_device(device: Any) -> None:
    """There is one CPU device: nothing to select."""


def current_device() -> str:
    return "cpu"
