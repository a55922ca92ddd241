"""``spawn`` / ``start_processes``: run ``fn(i, *args)`` in ``nprocs`` processes and join them as torch does.

The first process to fail makes the others stop (SIGTERM, then SIGKILL after a grace period) and is raised in the
parent: a ``ProcessRaisedException`` carrying the child's traceback where the child raised (the child writes it to
a file of its own: a one-shot message that cannot deadlock as a queue can), a ``ProcessExitedException`` naming
the exit code or signal where it died otherwise.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"

_log = logging.getLogger(__name__)

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException", "spawn",
           "SpawnContext", "start_processes"]


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """Exception raised when a process failed due to an exception raised by the code."""


class ProcessExitedException(ProcessException):
    """Exception raised when a process failed due to signal or exited with a specific code."""

    __slots__ = ["exit_code"]

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _die_with_parent(signum: int) -> None:
    """Linux's prctl(PR_SET_PDEATHSIG): a child still running when its parent dies gets ``signum``."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signum)  # (1: PR_SET_PDEATHSIG)


def _wrap(fn: Callable, i: int, args: tuple, error_file: str) -> None:
    """A child's life: ``fn(i, *args)``; an exception's traceback goes to ``error_file`` and the exit code is 1."""
    _die_with_parent(signal.SIGINT)
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # (the parent's SIGINT: stopped on purpose)
    except Exception:
        with open(error_file, "wb") as file:
            pickle.dump(traceback.format_exc(), file)
        sys.exit(1)


def _exit_description(index: int, exitcode: int) -> tuple[str, str | None]:
    """How a child that wrote no traceback ended, in torch's words, and the name of the signal that ended it."""
    if exitcode >= 0:
        return f"process {index:d} terminated with exit code {exitcode:d}", None
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = f"<Unknown signal {-exitcode}>"
    return f"process {index:d} terminated with signal {name}", name


class ProcessContext:
    def __init__(self, processes: list, error_files: list) -> None:
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(process.pid) for process in self.processes]

    def _join_procs_with_timeout(self, timeout: float) -> None:
        """Join every process within one shared ``timeout``."""
        end = time.monotonic() + timeout
        for process in self.processes:
            process.join(max(0, end - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait (up to ``timeout``) for a process to end. True once all have ended well, False while some run; the
        first one to fail stops the others (given ``grace_period`` to end by themselves, then SIGTERM, then
        SIGKILL) and is raised as a ``ProcessRaisedException`` or ``ProcessExitedException``."""
        if not self.sentinels:
            return True
        failed = self._first_failure(multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout))
        if failed is None:
            return not self.sentinels
        self._stop_all(grace_period)
        raise self._failure(failed)

    def _first_failure(self, ready: list) -> int | None:
        """Join the processes that ended; the index of the first that failed."""
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                return index
        return None

    def _stop_all(self, grace_period: float | None) -> None:
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for process in self.processes:
            if process.is_alive():
                _log.warning("Terminating process %s via signal SIGTERM", process.pid)
                process.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                _log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL",
                             process.pid)
                process.kill()
            process.join()

    def _failure(self, index: int) -> ProcessException:
        """The exception that tells of process ``index``'s failure (its traceback, where it wrote one)."""
        process = self.processes[index]
        if not os.access(self.error_files[index], os.R_OK):
            message, signal_name = _exit_description(index, process.exitcode)
            return ProcessExitedException(message, error_index=index, error_pid=process.pid,
                                          exit_code=process.exitcode, signal_name=signal_name)
        with open(self.error_files[index], "rb") as file:
            original_trace = pickle.load(file)
        message = f"\n\n-- Process {index:d} terminated with the following error:\n{original_trace}"
        return ProcessRaisedException(message, index, process.pid)


class SpawnContext(ProcessContext):
    def __init__(self, processes: list, error_files: list) -> None:
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def _error_file_name() -> str:
    """A fresh path for a child's traceback: the file exists only once the child raised."""
    file = tempfile.NamedTemporaryFile(prefix="pytorch-errorfile-", suffix=".pickle", delete=False)  # noqa: SIM115
    file.close()
    os.unlink(file.name)
    return file.name


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:
    """Start ``fn(i, *args)`` for ``i`` in ``range(nprocs)`` by ``start_method``; join them unless ``join`` is
    False, which returns their ``ProcessContext``. With 'forkserver' and TORCH_MP_PARALLEL_START=1 they start
    in parallel."""
    context = multiprocessing.get_context(start_method)

    def start(i: int) -> tuple:
        error_file = _error_file_name()
        process = context.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        process.start()
        return process, error_file

    started: list = [None] * nprocs  # (as torch's lists: an nprocs that is not an int refused in its words)
    if start_method == "forkserver" and os.environ.get(ENV_VAR_PARALLEL_START, "0") == "1":
        from concurrent.futures import ThreadPoolExecutor  # (rarely used, slow to import)

        _log.info("Starting processes in parallel.")
        with ThreadPoolExecutor(max_workers=nprocs) as executor:
            started = list(executor.map(start, range(nprocs)))
    else:
        for i in range(nprocs):
            started[i] = start(i)
    processes = ProcessContext([process for process, _ in started], [name for _, name in started])
    if not join:
        return processes
    while not processes.join():
        pass
    return None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    """Spawn ``nprocs`` processes running ``fn(i, *args)`` (always by 'spawn': ``start_processes`` takes another
    start method) and join them unless ``join`` is False, which returns their ``ProcessContext``."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\nTo use a different "
                      "start_method use:\n\t\t torch.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
