"""What runs inside a DataLoader worker process: seeding, ``get_worker_info()``, ``worker_init_fn`` and the loop
that answers the main process's requests (PyTorch's ``torch.utils.data._utils.worker``)."""

from __future__ import annotations

import io
import os
import pickle
import queue
import random
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler
from typing import Any

import numpy as np

from ...._events import forget_subscribers
from ...._factories import manual_seed
from ...._runtime import set_num_threads
from ...._tensor import Tensor
from . import MP_STATUS_CHECK_INTERVAL
from .errors import ExceptionWrapper
from .fetch import _DatasetKind


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` tells code running in a worker: its id, how many workers there are, the seed
    its ``torch`` and ``random`` generators were given, and this process's own copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None  # (torch's thread workers keep generators here; process workers have none)
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current DataLoader worker's ``WorkerInfo``; None in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's answer once its replica of an IterableDataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Asks a persistent worker to start a new epoch (a fresh fetcher); it is echoed back as the acknowledgement."""


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """The NumPy seed torch gives a worker: four 32-bit words that NumPy's ``SeedSequence`` draws from the entropy
    ``[worker_id, low word of base_seed, high word, 0]`` (torch's own copy of that algorithm gives the same
    words), so that NumPy's stream differs from the one ``random`` gets from ``base_seed + worker_id``."""
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    return np.random.SeedSequence(entropy).generate_state(4).tolist()


def _seed_this_worker(base_seed: int, worker_id: int) -> int:
    """Seed torch, ``random`` and NumPy's global generators as torch's worker does; returns the worker's seed."""
    set_num_threads(1)
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


class _BatchPickler(ForkingPickler):
    """Pickles a worker's answer, refusing a tensor with a grad_fn as torch's multiprocessing pickler does
    (autograd does not cross processes; its words)."""

    def reducer_override(self, obj):
        if isinstance(obj, Tensor) and obj.requires_grad and not obj.is_leaf:
            raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
                               "does not support crossing process boundaries.  If you just want to transfer the "
                               "data, call detach() on the tensor before serializing (e.g., putting it on the "
                               "queue).")
        return NotImplemented

    @classmethod
    def dumps(cls, obj, protocol=None) -> bytes:
        buf = io.BytesIO()
        cls(buf, protocol).dump(obj)
        return buf.getvalue()  # (ForkingPickler's is a memoryview, which cannot itself be pickled)


class _Pickled:
    """An answer pickled by the worker itself, unpickled by the main process as it reads the result queue.

    The queue pickles what it is given in a background feeder thread, where a failure (an unpicklable batch, a
    tensor with a grad_fn) is only printed: the batch is lost and the main process, whose worker is alive, waits
    for it forever (torch's loader hangs so). Pickled here, the failure is this worker's error instead."""

    __slots__ = ("payload",)

    def __init__(self, payload: bytes) -> None:
        self.payload = payload

    def __reduce__(self):
        return pickle.loads, (self.payload,)


class _ParentWatchdog:
    """Whether the process that started this worker still runs (a killed parent leaves its worker orphaned,
    adopted by another process)."""

    def __init__(self) -> None:
        self.parent_pid = os.getppid()

    def parent_alive(self) -> bool:
        return os.getppid() == self.parent_pid


class _WorkerLoop:
    """One worker: answers each ``(task index, sampler step)`` request with ``(task index, batch)``, or with an
    ``ExceptionWrapper`` or ``_IterableDatasetStopIteration``, until it receives None."""

    def __init__(self, dataset_kind: int, dataset, index_queue, data_queue, done_event, auto_collation: bool,
                 collate_fn, drop_last: bool, worker_id: int) -> None:
        self.dataset_kind = dataset_kind
        self.dataset = dataset
        self.index_queue = index_queue
        self.data_queue = data_queue
        self.done_event = done_event
        self.fetcher_args = (dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        self.worker_id = worker_id
        self.where = f"in DataLoader worker process {worker_id}"
        self.fetcher = None
        self.pending_error: ExceptionWrapper | None = None  # (an init failure, the answer to the first request)
        self.iteration_end = False  # an exhausted IterableDataset: requests are ignored until None or a resume

    def start(self, init_fn) -> None:
        try:
            if init_fn is not None:
                init_fn(self.worker_id)
            self.fetcher = _DatasetKind.create_fetcher(*self.fetcher_args)
        except Exception:
            self.pending_error = ExceptionWrapper(where=self.where)

    def serve(self) -> None:
        watchdog = _ParentWatchdog()
        while watchdog.parent_alive():
            try:
                request = self.index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if request is None:  # the final signal
                break
            if isinstance(request, _ResumeIteration):
                self.data_queue.put((request, None))
                self.iteration_end = False
                self.fetcher = _DatasetKind.create_fetcher(*self.fetcher_args)
            elif not (self.done_event.is_set() or self.iteration_end):
                task_idx, index = request
                self.data_queue.put((task_idx, self.pickled(self.answer(index))))

    def pickled(self, answer) -> _Pickled | ExceptionWrapper:
        try:
            return _Pickled(_BatchPickler.dumps(answer))
        except Exception:
            return ExceptionWrapper(where=self.where)

    def answer(self, index) -> Any:
        if self.pending_error is not None:
            error, self.pending_error = self.pending_error, None
            return error
        try:
            return self.fetcher.fetch(index)
        except StopIteration:
            if self.dataset_kind != _DatasetKind.Iterable:
                return ExceptionWrapper(where=self.where)
            self.iteration_end = True
            return _IterableDatasetStopIteration(self.worker_id)
        except Exception:
            return ExceptionWrapper(where=self.where)


def _worker_loop(dataset_kind: int, dataset, index_queue, data_queue, done_event, auto_collation: bool,
                 collate_fn, drop_last: bool, base_seed: int, init_fn, worker_id: int, num_workers: int) -> None:
    """A worker process's whole life (the target of ``multiprocessing.Process``)."""
    global _worker_info
    try:
        forget_subscribers()  # (observers such as a notebook's comms belong to the main process)
        seed = _seed_this_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        loop = _WorkerLoop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn,
                           drop_last, worker_id)
        loop.start(init_fn)
        loop.serve()
    except KeyboardInterrupt:
        pass  # (the main process gets it too, and raises it)
    if done_event.is_set():
        data_queue.cancel_join_thread()  # (the main process stopped reading: do not wait to flush)
        data_queue.close()
