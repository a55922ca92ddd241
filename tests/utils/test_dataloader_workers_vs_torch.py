"""``DataLoader`` with ``num_workers > 0`` against torch: the same seeded program gives the same batches, bit for
bit, under both libraries.

What is compared: random draws inside a dataset (``random``, NumPy's global generator and torch's, each seeded per
worker from the iterator's base seed), ``get_worker_info()`` (id, count, seed, this worker's dataset copy),
``worker_init_fn``, IterableDataset replicas (sharded through worker info, or repeated without it),
``persistent_workers``, shuffling with a seeded generator over two epochs, ``drop_last``, collation of dicts and
tuples, errors raised in a worker (re-raised as "Caught <Type> in DataLoader worker process <id>"), a worker that
dies, ``timeout``, the option checks, and the isolation of each worker's copy of the dataset.

Workers are real processes (fork on Linux): datasets are module-level classes that take the library, and every
loader is small, with two workers, to keep process starts cheap.
"""

from __future__ import annotations

import functools
import os
import random
import re
import time
import warnings

import numpy as np
import pytest
from _lib import plain_nested, run_both

import tracegrad as tg


def _batches(loader) -> list:
    return [plain_nested(b) for b in loader]


class _Draws:
    """A map-style dataset whose samples are random draws from every global generator a worker seeds, plus what
    the worker knows of itself."""

    def __init__(self, lib, n: int = 7) -> None:
        self.lib, self.n = lib, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        torch = self.lib
        info = torch.utils.data.get_worker_info()
        return {"index": i, "random": random.random(), "numpy": np.random.rand(), "rand": torch.rand(2),
                "randn": torch.randn(1), "worker": info.id, "workers": info.num_workers, "seed": info.seed,
                "initial_seed": torch.initial_seed(), "threads": torch.get_num_threads(),
                "own_copy": info.dataset is self}


def _main_streams(lib) -> tuple:
    """What the main process's own generators give next (workers must leave them untouched)."""
    return lib.rand(1).item(), random.random(), np.random.rand()


def _seed_everything(lib, seed: int) -> None:
    lib.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


@pytest.mark.parametrize("drop_last", [False, True])
def test_random_draws_in_workers_and_the_next_epochs_shuffle_match_torch(drop_last):
    def program(lib):
        _seed_everything(lib, 0)
        loader = lib.utils.data.DataLoader(_Draws(lib), batch_size=2, shuffle=True, num_workers=2,
                                           drop_last=drop_last, generator=lib.Generator().manual_seed(3))
        epochs = [_batches(loader) for _ in range(2)]
        return epochs, len(loader), _main_streams(lib)

    ours, theirs = run_both(program)
    assert ours == theirs


def test_persistent_workers_keep_their_streams_and_seed_across_epochs():
    def program(lib):
        _seed_everything(lib, 1)
        loader = lib.utils.data.DataLoader(_Draws(lib, 5), batch_size=2, shuffle=True, num_workers=2,
                                           persistent_workers=True, generator=lib.Generator().manual_seed(4))
        first = iter(loader)
        epochs = [_batches(first), _batches(loader)]
        return epochs, iter(loader) is first, _main_streams(lib)

    ours, theirs = run_both(program)
    assert ours == theirs


def test_the_base_seed_is_drawn_when_the_iterator_is_made():
    def program(lib):
        lib.manual_seed(2)
        drawn = []
        for workers in (0, 1):
            it = iter(lib.utils.data.DataLoader(range(3), num_workers=workers))
            drawn.append(lib.rand(1).item())  # (after the base seed, before any batch)
            drawn.append(plain_nested(list(it)))
        return drawn

    ours, theirs = run_both(program)
    assert ours == theirs


def _stream(lib, n: int, shard: bool = True):
    """An IterableDataset of ``n`` samples that each worker reads its share of through ``get_worker_info()`` (the
    first worker's share is the larger: workers run out at different batches), or all of (``shard=False``)."""

    class Stream(lib.utils.data.IterableDataset):
        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            start, step = (info.id, info.num_workers) if shard and info is not None else (0, 1)
            for k in range(start, n, step):
                yield {"k": k, "rand": lib.rand(1)}

        def __len__(self) -> int:
            return n

    return Stream()


@pytest.mark.parametrize("batch_size,drop_last", [(2, False), (2, True), (None, False)])
def test_an_iterable_dataset_sharded_through_worker_info_matches_torch(batch_size, drop_last):
    def program(lib):
        lib.manual_seed(5)
        loader = lib.utils.data.DataLoader(_stream(lib, 7), batch_size=batch_size,
                                           drop_last=drop_last, num_workers=2)
        return _batches(loader)

    ours, theirs = run_both(program)
    assert ours == theirs


def test_an_unsharded_iterable_dataset_repeats_in_each_worker_and_warns_past_its_len():
    def program(lib):
        lib.manual_seed(6)
        loader = lib.utils.data.DataLoader(_stream(lib, 3, shard=False), batch_size=2,
                                           num_workers=2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            batches = (len(loader), _batches(loader))
        texts = [re.sub(r" at 0x[0-9a-f]+", "", str(w.message)) for w in caught]
        return batches, type(loader.sampler).__name__, loader.prefetch_factor, texts

    ours, theirs = run_both(program)
    assert ours == theirs
    assert "IterableDataset replica at each worker" in ours[-1][0]


def _configure_worker(lib, worker_id: int) -> None:
    """A worker_init_fn (given the library by ``functools.partial``): it sees its worker info, seeds NumPy from it,
    and configures its copy of the dataset."""
    info = lib.utils.data.get_worker_info()
    assert info.id == worker_id
    np.random.seed(info.seed % 2**32)
    info.dataset.offset = 100 * (worker_id + 1)


class _Offsets:
    """A map-style dataset whose samples depend on what ``worker_init_fn`` set on this worker's copy."""

    offset = 0

    def __init__(self, lib) -> None:
        self.lib = lib

    def __len__(self) -> int:
        return 5

    def __getitem__(self, i):
        return i + self.offset, np.random.randint(1000)


def test_worker_init_fn_configures_each_workers_copy_of_the_dataset():
    def program(lib):
        lib.manual_seed(7)
        dataset = _Offsets(lib)
        loader = lib.utils.data.DataLoader(dataset, batch_size=2, num_workers=2, worker_init_fn=functools.partial(_configure_worker, lib))
        return _batches(loader), dataset.offset  # (the main process's dataset is not the workers')

    ours, theirs = run_both(program)
    assert ours == theirs
    assert ours[1] == 0


class _Remembers:
    """A dataset that mutates itself as it is read: each worker's copy counts its own reads."""

    def __init__(self, lib) -> None:
        self.lib, self.seen = lib, []

    def __len__(self) -> int:
        return 6

    def __getitem__(self, i):
        self.seen.append(i)
        return len(self.seen)


def test_a_dataset_mutated_in_a_worker_stays_unchanged_in_the_main_process():
    def program(lib):
        dataset = _Remembers(lib)
        return _batches(lib.utils.data.DataLoader(dataset, batch_size=None, num_workers=2)), dataset.seen

    ours, theirs = run_both(program)
    assert ours == theirs == ([1, 1, 2, 2, 3, 3], [])


class _Records:
    """Samples of several kinds, as dicts and tuples."""

    def __init__(self, lib) -> None:
        self.lib = lib

    def __len__(self) -> int:
        return 5

    def __getitem__(self, i):
        x = self.lib.full((2,), float(i))
        return {"x": x, "pair": (i, 0.5 * i), "name": f"item{i}", "np": np.arange(3) * i, "nested": {"y": x * 2}}


@pytest.mark.parametrize("batch_size", [2, None])
def test_collation_of_dicts_and_tuples_in_workers_matches_torch(batch_size):
    def program(lib):
        return _batches(lib.utils.data.DataLoader(_Records(lib), batch_size=batch_size, num_workers=2))

    ours, theirs = run_both(program)
    assert ours == theirs


class _Fails:
    """A dataset whose fourth sample raises ``error``."""

    def __init__(self, lib, error) -> None:
        self.lib, self.error = lib, error

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        if i == 3:
            raise self.error
        return i


class _TwoArgumentError(Exception):
    def __init__(self, a, b) -> None:
        super().__init__(a, b)


def _fail_init(worker_id: int) -> None:
    raise RuntimeError(f"init of worker {worker_id} failed")


def _raised(program) -> Exception:
    """The exception ``program()`` raises, without the tracebacks of it and of the exceptions chained to it. Those
    frames hold the loader's iterator in a reference cycle; torch's iterator, freed by the cyclic GC, waits 5 s for
    each worker (its queues' finalizers run first, so its workers never get the final None), where dropping the
    tracebacks frees it at once."""
    outcome = _outcome(program)
    if not isinstance(outcome, Exception):
        raise AssertionError("nothing was raised")
    return outcome


def _outcome(program):
    """What ``program()`` returns, or the exception it raises without its tracebacks (see ``_raised``)."""
    try:
        return program()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        chained = [e]
        while chained:
            error = chained.pop()
            error.__traceback__ = None
            chained += [c for c in (error.__cause__, error.__context__) if c is not None]
        return e


def _wrapped_error(program) -> tuple:
    """The error ``program()`` raises: its type, the first two lines of its message ("Caught ...", "Original
    Traceback ...") and the lines from the failing frame of this file on (the libraries' own frames differ)."""
    lines = str(error := _raised(program)).splitlines()
    own = max(i for i, line in enumerate(lines) if __file__ in line)
    return type(error).__name__, lines[:2], lines[own:]


@pytest.mark.parametrize("error", [ValueError("bad item 3"), KeyError("missing"), _TwoArgumentError(1, 2)],
                         ids=["ValueError", "KeyError", "needs two arguments"])
def test_an_error_in_a_worker_is_raised_again_in_the_main_process(error):
    def program(lib):
        return _wrapped_error(lambda: list(lib.utils.data.DataLoader(_Fails(lib, error), num_workers=2)))

    ours, theirs = run_both(program)
    assert ours == theirs
    assert ours[1][0].startswith(f"Caught {type(error).__name__} in DataLoader worker process 1.")


def test_an_error_in_worker_init_fn_is_raised_with_the_first_batch():
    def program(lib):
        return _wrapped_error(lambda: next(iter(lib.utils.data.DataLoader(range(4), num_workers=2,
                                                                          worker_init_fn=_fail_init))))

    ours, theirs = run_both(program)
    assert ours == theirs
    assert ours[1] == ["Caught RuntimeError in DataLoader worker process 0.",
                       "Original Traceback (most recent call last):"]


class _Dies:
    """A dataset whose worker process exits at the second sample (in the main process it raises instead)."""

    def __init__(self, lib) -> None:
        self.lib = lib

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        if i == 1:
            if self.lib.utils.data.get_worker_info() is None:
                raise RuntimeError("loaded in the main process")
            os._exit(3)
        return i


def test_a_worker_that_dies_is_reported_with_its_exit_code():
    def program(lib):
        error = _raised(lambda: list(lib.utils.data.DataLoader(_Dies(lib), num_workers=2)))
        return [(type(e).__name__, re.sub(r"pid(\(s\))? \d+", "pid", str(e))) for e in (error, error.__cause__)]

    ours, theirs = run_both(program)
    assert ours == theirs
    assert ours[1][1].startswith("DataLoader worker (pid) exited unexpectedly with exit code 3.")


class _Slow:
    def __len__(self) -> int:
        return 2

    def __getitem__(self, i):
        time.sleep(0.3)
        return i


def test_a_timeout_is_raised_as_torch_raises_it():
    def program(lib):
        error = _raised(lambda: list(lib.utils.data.DataLoader(_Slow(), num_workers=1, timeout=0.05)))
        return type(error).__name__, str(error)

    ours, theirs = run_both(program)
    assert ours == theirs == ("RuntimeError", "DataLoader timed out after 0.05 seconds")


OPTION_MISTAKES = {
    "negative prefetch_factor": lambda L: L.utils.data.DataLoader(range(2), num_workers=1, prefetch_factor=-1),
    "zero prefetch_factor": lambda L: iter(L.utils.data.DataLoader(range(2), num_workers=1, prefetch_factor=0)),
    "unknown start method": lambda L: L.utils.data.DataLoader(range(2), num_workers=1,
                                                              multiprocessing_context="bogus"),
    "a context that is no context": lambda L: L.utils.data.DataLoader(range(2), num_workers=1,
                                                                      multiprocessing_context=3),
    "a context without workers": lambda L: L.utils.data.DataLoader(range(2), multiprocessing_context="fork"),
    "a timeout without workers": lambda L: iter(L.utils.data.DataLoader(range(2), timeout=1)),
    "batch_size set after init": lambda L: setattr(L.utils.data.DataLoader(range(2)), "batch_size", 3),
    "an iterator pickled": lambda L: iter(L.utils.data.DataLoader(range(2))).__getstate__(),
}


# (torch's iterator refused for its prefetch factor reports an AttributeError from its __del__: not compared)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("mistake", OPTION_MISTAKES)
def test_worker_option_mistakes_are_refused_as_torch_refuses_them(mistake):
    def program(lib):
        error = _raised(lambda: OPTION_MISTAKES[mistake](lib))
        return type(error).__name__, str(error)

    ours, theirs = run_both(program)
    assert ours == theirs


def test_a_fork_context_and_an_explicit_prefetch_factor_load_the_same_batches():
    def program(lib):
        lib.manual_seed(8)
        loader = lib.utils.data.DataLoader(_Draws(lib, 4), batch_size=2, num_workers=2, prefetch_factor=1,
                                           multiprocessing_context="fork")
        return _batches(loader), type(loader.multiprocessing_context).__name__

    ours, theirs = run_both(program)
    assert ours == theirs


# ---- review: collation inside a worker, batches that cannot cross the process boundary -----------------------------

class _Samples:
    """A map-style dataset of the given samples."""

    def __init__(self, make) -> None:
        self.make = make

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i):
        return self.make()[i]


WORKER_COLLATIONS = {  # (samples whose stacking in a worker differs from the main process's in torch)
    "float32 then float64": lambda L: [L.ones(2), L.ones(2, dtype=L.float64)],
    "complex64 then float64": lambda L: [L.ones(2, dtype=L.complex64), L.ones(2, dtype=L.float64)],
    "int64 then float32": lambda L: [L.ones(2, dtype=L.int64), L.ones(2)],
    "bool then int64": lambda L: [L.ones(2, dtype=L.bool), L.ones(2, dtype=L.int64)],
    "sizes differ": lambda L: [L.ones(2), L.ones(3)],
    "a leaf that requires grad": lambda L: [L.ones(2), L.ones(2, requires_grad=True)],
    "a non-leaf": lambda L: [L.ones(2, requires_grad=True) * 2] * 2,
}


@pytest.mark.parametrize("samples", WORKER_COLLATIONS)
def test_a_worker_collates_into_a_tensor_of_the_first_samples_dtype_as_torch(samples):
    """torch stacks a worker's batch into an out= tensor of the first sample's dtype (its shared memory): a later
    sample of another dtype is cast to it or refused in cat's words, and samples that require grad are refused
    (out= does not support autograd)."""
    def program(lib):
        loader = lib.utils.data.DataLoader(_Samples(functools.partial(WORKER_COLLATIONS[samples], lib)),
                                           batch_size=2, num_workers=1)
        batch = _outcome(lambda: next(iter(loader)))
        if not isinstance(batch, Exception):
            return plain_nested(batch), batch.requires_grad
        lines = str(batch).splitlines()
        return type(batch).__name__, lines[0], lines[-1]

    ours, theirs = run_both(program)
    assert ours == theirs


def test_stack_into_an_out_of_a_dtype_it_cannot_cast_to_is_refused_in_cats_words():
    def program(lib):
        error = _raised(lambda: lib.stack([lib.ones(2), lib.ones(2)], out=lib.empty(0, dtype=lib.int64)))
        return type(error).__name__, str(error)

    ours, theirs = run_both(program)
    assert ours == theirs == ("TypeError", "torch.cat(): input types can't be cast to the desired output type Long")


UNSENDABLE = {  # (torch's feeder thread fails to pickle these and its loader hangs: not compared)
    "a generator": (lambda: (x for x in range(2)), "TypeError: cannot pickle 'generator' object"),
    "a non-leaf tensor": (lambda: tg.ones(2, requires_grad=True) * 2,
                          "RuntimeError: Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
                          "autograd does not support crossing process boundaries.  If you just want to transfer "
                          "the data, call detach() on the tensor before serializing (e.g., putting it on the "
                          "queue)."),
}


class _Unsendable:
    def __init__(self, make) -> None:
        self.make = make

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i):
        return self.make()


@pytest.mark.parametrize("sample", UNSENDABLE)
def test_a_batch_a_worker_cannot_send_is_that_workers_error_not_a_hang(sample):
    make, last_line = UNSENDABLE[sample]
    # (timeout: were the batch lost again, the test fails in seconds instead of waiting forever)
    loader = tg.utils.data.DataLoader(_Unsendable(make), batch_size=None, num_workers=1, timeout=20)
    error = _raised(lambda: list(loader))
    lines = str(error).splitlines()
    assert type(error).__name__ == last_line.split(":")[0]
    assert lines[0] == "Caught {} in DataLoader worker process 0.".format(last_line.split(":")[0])
    assert lines[-1] == last_line
