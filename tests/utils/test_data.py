"""``utils.data``: datasets, samplers, collation and the DataLoader give torch's batches."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from _lib import run_both, to_numpy

import tracegrad as tg


def _as_plain(batch):
    """A batch as nested lists of NumPy arrays, strings and numbers, comparable across libraries."""
    if isinstance(batch, (list, tuple)):
        return [type(batch).__name__ if hasattr(batch, "_fields") else None] + [_as_plain(b) for b in batch]
    if isinstance(batch, dict):
        return {k: _as_plain(v) for k, v in batch.items()}
    if hasattr(batch, "detach"):
        arr = to_numpy(batch)
        return (arr.dtype.name, arr.tolist())
    return batch


def _batches(lib, loader_kwargs: dict, make_dataset) -> list:
    loader = lib.utils.data.DataLoader(make_dataset(lib), **loader_kwargs)
    return [len(loader)] + [_as_plain(b) for b in loader]


def _tensor_dataset(lib):
    x = lib.arange(10.0).reshape(5, 2)
    y = lib.tensor([0, 1, 0, 1, 1])
    return lib.utils.data.TensorDataset(x, y)


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 2}, {"batch_size": 2, "drop_last": True},
                                    {"batch_size": 5}, {"batch_size": None}, {"batch_size": 3, "num_workers": 2}])
def test_tensor_dataset_batches(kwargs):
    ours, theirs = run_both(_batches, kwargs, _tensor_dataset)
    assert ours == theirs


Point = namedtuple("Point", ["x", "y"])


class Samples:
    """A map-style dataset of mixed samples: numbers, strings, NumPy arrays, dicts, named tuples."""

    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"id": i, "score": 0.5 * i, "flag": i % 2 == 0, "name": f"s{i}",
                "array": np.full(2, i, dtype=np.float32), "point": Point(i, -i),
                "pair": (self.lib.tensor([i, i]), float(i))}


@pytest.mark.parametrize("kwargs", [{"batch_size": 2}, {"batch_size": 3}, {"batch_size": None}])
def test_default_collate_of_mixed_samples(kwargs):
    ours, theirs = run_both(_batches, kwargs, Samples)
    assert ours == theirs


def test_samplers_and_batch_sampler():
    def program(lib):
        data = lib.utils.data
        ds = _tensor_dataset(lib)
        batches = data.BatchSampler(data.SequentialSampler(ds), 2, drop_last=False)
        loader = data.DataLoader(ds, batch_sampler=batches)
        return list(batches), len(batches), [_as_plain(b) for b in loader]

    ours, theirs = run_both(program)
    assert ours == theirs


def test_subset_concat_and_random_split_sizes():
    def program(lib):
        data = lib.utils.data
        ds = _tensor_dataset(lib)
        sub = data.Subset(ds, [4, 0])
        both = sub + ds
        split = data.random_split(ds, [0.5, 0.5], generator=lib.Generator().manual_seed(0))
        split3 = data.random_split(range(10), [0.3, 0.3, 0.4])
        return ([_as_plain(sub[i]) for i in range(len(sub))], len(both), _as_plain(both[2]), _as_plain(both[-1]),
                [len(s) for s in split], [len(s) for s in split3])

    ours, theirs = run_both(program)
    assert ours == theirs


def test_random_split_is_a_partition_and_reproducible():
    parts = tg.utils.data.random_split(range(10), [3, 7], generator=tg.Generator().manual_seed(1))
    again = tg.utils.data.random_split(range(10), [3, 7], generator=tg.Generator().manual_seed(1))
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    assert [list(p) for p in parts] == [list(p) for p in again]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        tg.utils.data.random_split(range(10), [3, 3])


def test_shuffle_visits_every_sample_once_per_epoch_in_a_new_order():
    ds = tg.utils.data.TensorDataset(tg.arange(20))
    loader = tg.utils.data.DataLoader(ds, batch_size=4, shuffle=True, generator=tg.Generator().manual_seed(0))
    epochs = [[int(v) for (b,) in loader for v in b] for _ in range(2)]
    assert all(sorted(e) == list(range(20)) for e in epochs)
    assert epochs[0] != epochs[1] and epochs[0] != list(range(20))
    tg.manual_seed(3)
    first = [int(v) for (b,) in tg.utils.data.DataLoader(ds, batch_size=4, shuffle=True) for v in b]
    tg.manual_seed(3)
    assert first == [int(v) for (b,) in tg.utils.data.DataLoader(ds, batch_size=4, shuffle=True) for v in b]


def _stream(lib):
    class Counter(lib.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    return Counter()


@pytest.mark.parametrize("kwargs", [{"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None}])
def test_iterable_dataset_batches(kwargs):
    def program(lib):
        return [_as_plain(b) for b in lib.utils.data.DataLoader(_stream(lib), **kwargs)]

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("kwargs", [
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1},
    {"prefetch_factor": 2},
])
def test_option_errors_match_torch(kwargs):
    def program(lib):
        with pytest.raises(ValueError) as info:
            lib.utils.data.DataLoader(_tensor_dataset(lib), **kwargs)
        return str(info.value)

    ours, theirs = run_both(program)
    assert ours == theirs


def test_training_loop_over_a_loader():
    """The tutorial pattern: a loader of (x, y) batches drives an optimizer; the loss goes down."""
    tg.manual_seed(0)
    x = tg.randn(64, 3)
    y = x @ tg.tensor([[1.0], [-2.0], [0.5]])
    loader = tg.utils.data.DataLoader(tg.utils.data.TensorDataset(x, y), batch_size=16, shuffle=True)
    model = tg.nn.Linear(3, 1)
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(20):
        for xb, yb in loader:
            opt.zero_grad()
            loss = tg.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-3 < losses[0]
