"""``torch.distributed`` for a program that runs as one process, which is all tracegrad can run.

``is_available()`` is False: tracegrad has no communication backend, and False is the answer a real torch gives when
built without one (``USE_DISTRIBUTED=0``). Libraries branch on it before they import the rest of the package
(process groups, ``ReduceOp``, DTensor, FSDP), so False sends them down the path they already keep for such builds,
where True would send them into APIs no single process can provide. Code guarded by
``dist.is_available() and dist.is_initialized()`` takes the same branch as on any single-process torch.

Beyond what a build without distributed has (``is_available``, the ``Dist*Error`` classes, and ``ProcessGroup`` and
``GroupName`` for annotations), the calls a single-process program makes on a torch with distributed answer as
there, without a process group: ``is_initialized()`` is False, and ``get_rank()``, ``get_world_size()``,
``get_backend()`` and ``barrier()`` raise torch's ValueError. ``init_process_group`` refuses: there is no backend
to start one.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["DistBackendError", "DistError", "DistNetworkError", "DistStoreError", "GroupName", "ProcessGroup",
           "QueueEmptyError", "barrier", "get_backend", "get_rank", "get_world_size", "init_process_group",
           "is_available", "is_initialized"]

# torch's message for any call that needs the default process group before init_process_group
NO_PROCESS_GROUP = "Default process group has not been initialized, please make sure to call init_process_group."


class DistError(RuntimeError):
    """An error of the distributed package."""


class DistBackendError(DistError):
    pass


class DistNetworkError(DistError):
    pass


class DistStoreError(DistError):
    pass


class QueueEmptyError(DistStoreError):
    pass


class ProcessGroup:
    """A group of processes: there is none in tracegrad (the name is kept for annotations, as torch without
    distributed keeps it)."""


class GroupName:
    """A process group's name (kept for annotations)."""


def is_available() -> bool:
    """Whether a distributed backend is built in: not in tracegrad (see the module's docstring)."""
    return False


def is_initialized() -> bool:
    """Whether the default process group exists: never, as nothing can start one."""
    return False


def _no_process_group() -> NoReturn:
    raise ValueError(NO_PROCESS_GROUP)


def get_rank(group: ProcessGroup | None = None) -> int:
    _no_process_group()


def get_world_size(group: ProcessGroup | None = None) -> int:
    _no_process_group()


def get_backend(group: ProcessGroup | None = None) -> str:
    _no_process_group()


def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids: Any = None,
            timeout: Any = None) -> None:
    _no_process_group()


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout: Any = None,
                       world_size: int = -1, rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> NoReturn:
    """Refused: tracegrad has no communication backend (gloo, nccl, mpi) to start a process group with."""
    raise NotImplementedError("torch.distributed.init_process_group: tracegrad has no distributed backend (no gloo, "
                              "nccl or mpi), so it cannot start a process group; torch.distributed.is_available() "
                              "is False. Run the program as a single process.")
