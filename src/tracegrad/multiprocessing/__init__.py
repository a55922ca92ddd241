"""``torch.multiprocessing``: Python's ``multiprocessing`` (all its names), whose pickling of tensors and storages
sends shared memory instead of copies (see reductions.py), plus ``spawn`` / ``start_processes`` (spawn.py) and
the choice of how shared memory is named to other processes (the sharing strategies).

As in torch, importing tracegrad registers the reductions, so a plain ``multiprocessing`` queue shares too.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F403

from .. import _shared_memory
from .reductions import init_reductions
from .spawn import (  # noqa: F401
    ENV_VAR_PARALLEL_START,
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           *multiprocessing.__all__]

# Linux: a storage is named to another process by a file descriptor (sent over a socket) or a /dev/shm file name
_all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy: str) -> None:
    """Set how shared CPU storages are named to other processes (one of ``get_all_sharing_strategies()``)."""
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _shared_memory.SHARING_STRATEGY[0] = new_strategy


def get_sharing_strategy() -> str:
    return _shared_memory.SHARING_STRATEGY[0]


def get_all_sharing_strategies() -> set:
    return _all_sharing_strategies


init_reductions()

