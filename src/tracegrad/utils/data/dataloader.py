"""``DataLoader``: batches of a dataset, in the order of a sampler, through a collate function.

With ``num_workers > 0`` batches are loaded by real worker processes, as in PyTorch: Python's ``multiprocessing``
with its default start method (fork on Linux) or the given ``multiprocessing_context``. Worker processes rather
than an in-process emulation because what users observe of workers is what separate processes give for free:
each worker's own copy of the dataset (mutations stay there), its own global ``random``, NumPy and torch
generators (seeded from the iterator's base seed, which leaves the main process's streams untouched), module
globals, and ``get_worker_info()``. Batches come back pickled by ``multiprocessing``'s pickler, which (with
tracegrad.multiprocessing's reductions, registered on import as torch's are) moves their tensors into shared
memory and sends that: the main process's batches are shared (``is_shared()``), as torch's. Starting a worker
costs a fork (milliseconds); ``persistent_workers`` keeps them across epochs.

The protocol is torch's, so the observable order is too: the iterator draws the workers' base seed from the
loader's generator when it is created, sends batch ``i`` to worker ``i % num_workers`` (skipping workers whose
IterableDataset replica is exhausted), keeps ``prefetch_factor`` requests per worker in flight and hands batches
back in sampler order (``in_order=True``). An exception in a worker is raised again in the main process as
``"Caught <Type> in DataLoader worker process <id>.\\nOriginal Traceback ..."``; a worker that dies is noticed
while the main process waits for a batch (it waits on the workers' process handles too), in the words of
torch's SIGCHLD handler, which is not installed. Not provided: ``pin_memory`` pinning (without an accelerator
torch only warns, as here).
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import queue
import signal
import warnings
from collections.abc import Callable, Iterable
from multiprocessing import connection
from pickle import PicklingError
from typing import Any

from ... import accelerator
from ...autograd.profiler import record_function
from . import _utils
from ._utils import MP_STATUS_CHECK_INTERVAL
from ._utils.collate import default_collate, default_convert
from ._utils.errors import ExceptionWrapper
from ._utils.fetch import _DatasetKind
from ._utils.worker import _IterableDatasetStopIteration, _ResumeIteration, _worker_loop, get_worker_info
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, draw_seed

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

# Attributes that decide which batches an iterator makes: fixed once the loader is built, as in torch.
_FROZEN_ATTRIBUTES = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class _InfiniteConstantSampler(Sampler):
    """None forever: an IterableDataset's sampler (the stream, not the sampler, decides where the data ends)."""

    def __iter__(self):
        while True:
            yield None


def _check_worker_options(num_workers: int, timeout: float, prefetch_factor: int | None,
                          persistent_workers: bool) -> int | None:
    """Refuse torch's impossible option combinations; returns the prefetch factor (2 by default with workers)."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                         "to enable multiprocessing, otherwise set prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _check_iterable_options(shuffle, sampler, batch_sampler) -> None:
    """An IterableDataset decides its own order: no shuffle, sampler or batch sampler."""
    if shuffle not in (None, False):
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                         f"shuffle={shuffle}")
    if sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                         f"sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                         f"batch_sampler={batch_sampler}")


def _multiprocessing_context(context, num_workers: int):
    """The context workers start in: None (the default start method), a start method's name, or a context."""
    if context is None:
        return None
    if num_workers <= 0:
        raise ValueError(f"multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                         f"but got num_workers={num_workers}")
    if isinstance(context, str):
        valid_start_methods = multiprocessing.get_all_start_methods()
        if context not in valid_start_methods:
            raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                             f"{valid_start_methods!r}, but got multiprocessing_context={context!r}")
        context = multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(f"multiprocessing_context option should be a valid context object or a string specifying "
                        f"the start method, but got multiprocessing_context={context}")
    return context


def _cpu_count() -> int | None:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


class DataLoader:
    """Iterate over ``dataset`` in batches (PyTorch's signature and behaviour, worker processes included)."""

    _initialized = False

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None, batch_sampler: Sampler | Iterable | None = None,
                 num_workers: int = 0, collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:
        self.prefetch_factor = _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            _check_iterable_options(shuffle, sampler, batch_sampler)
        else:
            self._dataset_kind = _DatasetKind.Map
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            sampler = self._default_sampler(dataset, shuffle, generator)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True
        self._IterableDataset_len_called = None  # what len(loader) said, to warn when the stream gives more
        self._iterator = None
        self.check_worker_number_rationality()

    def _default_sampler(self, dataset, shuffle: bool, generator) -> Sampler:
        if self._dataset_kind == _DatasetKind.Iterable:
            return _InfiniteConstantSampler()
        return RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        self._multiprocessing_context = _multiprocessing_context(multiprocessing_context, self.num_workers)

    def __setattr__(self, attr: str, val) -> None:
        if self._initialized and attr in _FROZEN_ATTRIBUTES:
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> _BaseDataLoaderIter:
        # persistent workers live as long as the loader: one iterator, reset for each epoch
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What each fetch is given: a list of indices per batch (auto-collation), else one index."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            # (a guess, as torch's: workers that do not shard the stream repeat it)
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn when more workers are asked for than this process may use CPUs."""
        if not self.num_workers:
            return
        suggested = _cpu_count()
        if suggested is not None and self.num_workers <= suggested:
            return
        if suggested is None:
            suggestion = "DataLoader is not able to compute a suggested max number of worker in current system."
        else:
            cpuset = "" if hasattr(os, "sched_getaffinity") else " (`cpuset` is not taken into account)"
            suggestion = (f"Our suggested max number of worker in current system is {suggested}{cpuset}, which is "
                          "smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {suggestion} "
                      "Please be aware that excessive worker creation might get DataLoader running slow or even "
                      "freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
                      stacklevel=2)


def _warn_about_pinning(loader: DataLoader) -> None:
    if loader.pin_memory and loader.pin_memory_device:
        warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                      f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=3)
    if loader.pin_memory and not accelerator.is_available():
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                      "memory won't be used.", stacklevel=3)


# The index queues of each iterator whose workers run, by the iterator's id. An iterator that dies in a reference
# cycle (one an exception's traceback makes) is freed by the cyclic GC, which calls the weakref finalizers of the
# queues it owns, stopping their feeder threads, before the iterator's __del__: held here, the queues outlive it,
# so __del__ can still send each worker its final None instead of waiting for it to time out.
_INDEX_QUEUES_IN_USE: dict[int, list] = {}


def _abnormal_exit_message(pid: int, exitcode: int) -> str:
    if exitcode < 0:  # (killed by a signal)
        return f"DataLoader worker (pid {pid}) is killed by signal: {signal.strsignal(-exitcode)}. "
    return (f"DataLoader worker (pid {pid}) exited unexpectedly with exit code {exitcode}. Details are lost due to "
            "multiprocessing. Rerunning with num_workers=0 may give better error trace.")


class _BaseDataLoaderIter:
    """One pass over a loader (several, with persistent workers): the sampler's steps turned into batches."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        _warn_about_pinning(loader)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # drawn even without workers, so the loader's generator (or the global one) advances as torch's does
        self._base_seed = draw_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        self._profile_name = f"enumerate(DataLoader)#{type(self).__name__}.__next__"

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        with record_function(self._profile_name):
            data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            self._warn_stream_longer_than_len()
        return data

    def _warn_stream_longer_than_len(self) -> None:
        message = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
        if self._num_workers > 0:
            message += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
        warnings.warn(message, stacklevel=3)

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", type(self).__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Loads each batch in the main process, when it is asked for."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(self._dataset_kind, self._dataset,
                                                            self._auto_collation, self._collate_fn, self._drop_last)

    def _next_data(self) -> Any:
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration (an exhausted stream)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Loads batches in ``num_workers`` worker processes.

    Each worker reads ``(task index, sampler step)`` requests from its own index queue and writes
    ``(task index, batch)`` to the shared result queue. ``_task_info`` maps each task sent but not yet handed out
    to ``(worker,)`` while it is outstanding, ``(worker, batch)`` once it arrived ahead of its turn.
    """

    _shutdown = True  # (until workers exist: __del__ may run on a half-built iterator)

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._num_workers <= 0:
            raise AssertionError("num_workers must be greater than 0 for MultiProcessingDataLoaderIter")
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        context = loader.multiprocessing_context or multiprocessing
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = context.Queue()
        self._data_queue = self._worker_result_queue
        self._workers_done_event = context.Event()
        self._index_queues: list = []
        _INDEX_QUEUES_IN_USE[id(self)] = self._index_queues
        self._workers: list = []
        self._workers_status = [True] * self._num_workers
        self._owner_pid = os.getpid()
        self._shutdown = False
        for worker_id in range(self._num_workers):
            self._start_worker(context, worker_id)
        self._reset(loader, first_iter=True)

    def _start_worker(self, context, worker_id: int) -> None:
        index_queue = context.Queue()
        index_queue.cancel_join_thread()  # (never block the main process's exit on a request nobody reads)
        worker = context.Process(target=_worker_loop, args=(
            self._dataset_kind, self._dataset, index_queue, self._worker_result_queue, self._workers_done_event,
            self._auto_collation, self._collate_fn, self._drop_last, self._base_seed, self._worker_init_fn,
            worker_id, self._num_workers))
        worker.daemon = True
        try:
            worker.start()
        except (TypeError, AttributeError, PicklingError):
            warnings.warn("Got pickle error when attempting to start a worker Process. This might be because the "
                          "worker Process arguments are not picklable. Python 3.14+ changed the multiprocessing "
                          "start method in non-Mac POSIX platforms to 'forkserver', which requires the worker "
                          "Process arguments to be picklable. You can also try "
                          "multiprocessing.set_start_method('fork').", stacklevel=4)
            raise
        self._index_queues.append(index_queue)  # (only started workers are joined at shutdown)
        self._workers.append(worker)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to send
        self._rcvd_idx = 0  # the next task to hand out
        self._task_info: dict[int, tuple] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers  # False: its IterableDataset replica is exhausted
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))  # round robin from worker 0
        if not first_iter:
            self._resume_workers()
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _resume_workers(self) -> None:
        """Start a new epoch in persistent workers; drop whatever the last epoch left in the result queue."""
        for index_queue in self._index_queues:
            index_queue.put(_ResumeIteration())
        waiting = self._num_workers
        while waiting > 0:
            task_idx, _ = self._get_data()
            if isinstance(task_idx, _ResumeIteration):
                waiting -= 1

    def _try_get_data(self, timeout: float = MP_STATUS_CHECK_INTERVAL) -> tuple[bool, Any]:
        """``(True, result)``, or ``(False, None)`` when nothing came within ``timeout``; RuntimeError when a
        worker died without answering."""
        try:
            self._wait_for_data(timeout)
            return True, self._data_queue.get(timeout=0)
        except Exception as e:
            failed = [w for worker_id, w in enumerate(self._workers)
                      if self._workers_status[worker_id] and not w.is_alive()]
            for w in failed:
                self._mark_worker_as_unavailable(self._workers.index(w))
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _wait_for_data(self, timeout: float) -> None:
        """Until a result is ready, the timeout passes, or a working worker exits. An abnormal exit is raised at
        once, in the words torch's SIGCHLD handler uses (a clean exit is reported by the caller)."""
        working = [w for worker_id, w in enumerate(self._workers) if self._workers_status[worker_id]]
        # (the queue's reading end: mp.Queue has no public way to wait on it together with other handles)
        ready = connection.wait([self._data_queue._reader, *(w.sentinel for w in working)], timeout)
        if self._data_queue._reader in ready:
            return
        for w in working:
            if w.sentinel in ready:
                w.join(MP_STATUS_CHECK_INTERVAL)  # (its handle closes as it exits, just before its exit code is set)
                if w.exitcode:
                    raise RuntimeError(_abnormal_exit_message(w.pid, w.exitcode))

    def _get_data(self) -> Any:
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if not success:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def _skip_to_next_valid_task(self) -> bool:
        """Move ``_rcvd_idx`` past tasks whose worker is exhausted and will never answer; False when no task is
        left."""
        while self._rcvd_idx < self._send_idx:
            info = self._task_info.get(self._rcvd_idx)
            if info:
                if len(info) == 2 or self._workers_status[info[0]]:  # arrived, or its worker still works
                    return True
                del self._task_info[self._rcvd_idx]
            self._rcvd_idx += 1
        return False

    def _next_data(self) -> Any:
        while True:
            if not self._skip_to_next_valid_task():
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # it arrived earlier, out of order
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            if self._shutdown or self._tasks_outstanding <= 0:
                raise AssertionError("Invalid iterator state: shutdown or no outstanding tasks when fetching next "
                                     "data")
            task_idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if task_idx == self._rcvd_idx or not self._in_order:
                worker_id = self._task_info.pop(task_idx)[0]
                if task_idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            self._task_info[task_idx] += (data,)  # keep it for its turn

    def _try_put_index(self) -> None:
        """Send the sampler's next step to the next worker in the cycle that still works (with ``in_order=False``:
        that also has room), if any."""
        max_tasks = self._prefetch_factor * self._num_workers
        if self._tasks_outstanding >= max_tasks:
            raise AssertionError("Number of outstanding tasks exceeded maximum allowed tasks")
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id] and (
                    self._in_order or self._workers_num_tasks[worker_id] < max_tasks // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id: int) -> Any:
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        """Tell one worker to exit (its stream is exhausted, or everything shuts down); it is joined later."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        # At interpreter exit multiprocessing's own handler terminates the daemonic workers (queues may be gone).
        # A forked process (a worker of another loader) inherits this iterator, and may collect it: the workers
        # are not its own to stop.
        if (_utils is None or _utils.python_exit_status is not False or self._shutdown
                or os.getpid() != self._owner_pid):
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id)
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for index_queue in self._index_queues:
                index_queue.cancel_join_thread()
                index_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():  # (it did not exit when asked: do not leave it behind)
                    w.terminate()
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            _INDEX_QUEUES_IN_USE.pop(id(self), None)

    def __del__(self) -> None:
        self._shutdown_workers()
