"""PyTorch's ``torch.utils.data._utils`` path: collation (``from ..._utils.collate import collate,
default_collate_fn_map`` is the documented way to extend ``default_collate``), the fetchers shared by single- and
multi-process loading, and the worker processes' loop."""

from __future__ import annotations

import atexit

MP_STATUS_CHECK_INTERVAL = 5.0
"""Seconds between checks that the other side is still alive: the main process looks for dead workers, a worker
for a dead main process, while waiting on a queue."""

python_exit_status: bool | None = False
"""True once the interpreter is shutting down: an iterator's ``__del__`` then leaves its daemonic workers to
multiprocessing's own exit handler instead of joining them with half-freed queues."""


def _set_python_exit_flag() -> None:
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)

from . import collate, fetch, worker  # noqa: E402 - after the flag they read
from .errors import ExceptionWrapper  # noqa: E402 - (torch's old private location of it)

__all__ = ["ExceptionWrapper", "MP_STATUS_CHECK_INTERVAL", "collate", "fetch", "worker"]
