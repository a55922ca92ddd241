"""``utils.data`` extras against torch: StackDataset, ChainDataset, WeightedRandomSampler, DistributedSampler,
random_split fractions and the collate/convert details. Random samplers are checked by their properties
(partition, no repeats, frequencies, seeded determinism) and everything without randomness is compared
exactly."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest
from _lib import plain_nested, run_both

import tracegrad as tg

DATAPIPES = {"IterDataPipe", "MapDataPipe", "DFIterDataPipe", "DataChunk", "functional_datapipe",
             "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation",
             "runtime_validation_disabled", "argument_validation", "_DatasetKind"}


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


def test_public_names_cover_torch_except_datapipes():
    import torch

    assert [n for n in torch.utils.data.__all__ if not hasattr(tg.utils.data, n) and n not in DATAPIPES] == []


# ---- DistributedSampler -------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,replicas", [(10, 3), (9, 3), (2, 5), (7, 2), (1, 4)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_without_shuffle_matches_torch(n, replicas, drop_last):
    def program(lib):
        out = []
        for rank in range(replicas):
            s = lib.utils.data.DistributedSampler(list(range(n)), num_replicas=replicas, rank=rank, shuffle=False,
                                                  drop_last=drop_last)
            out.append((list(s), len(s), s.num_samples, s.total_size))
        return out

    ours, theirs = run_both(program)
    assert ours == theirs


def test_distributed_sampler_shuffle_partitions_and_follows_seed_and_epoch():
    ds = list(range(12))

    def orders(epoch=0, seed=0):
        samplers = [tg.utils.data.DistributedSampler(ds, num_replicas=3, rank=r, seed=seed) for r in range(3)]
        for s in samplers:
            s.set_epoch(epoch)
        return [list(s) for s in samplers]

    first = orders()
    assert sorted(i for part in first for i in part) == ds and all(len(p) == 4 for p in first)
    assert first != [ds[r::3] for r in range(3)]
    tg.manual_seed(5)
    state = tg.get_rng_state()
    assert orders() == first  # deterministic, and independent of the global random state ...
    assert tg.equal(tg.get_rng_state(), state)  # ... which it leaves untouched
    assert orders(epoch=1) != first and orders(seed=7) != first
    assert orders(epoch=1) == orders(epoch=1)
    padded = tg.utils.data.DistributedSampler(list(range(5)), num_replicas=2, rank=1)
    assert len(list(padded)) == 3


@pytest.mark.parametrize("kwargs", [{}, {"num_replicas": 2}, {"rank": 0}, {"num_replicas": 2, "rank": 2},
                                    {"num_replicas": 2, "rank": -1}])
def test_distributed_sampler_errors_match_torch(kwargs):
    ours, theirs = run_both(lambda lib: _error(lambda: lib.utils.data.DistributedSampler(range(4), **kwargs)))
    assert ours == theirs


def test_distributed_sampler_drives_a_dataloader():
    def program(lib):
        ds = lib.utils.data.TensorDataset(lib.arange(7))
        sampler = lib.utils.data.DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
        return [plain_nested(b) for b in lib.utils.data.DataLoader(ds, batch_size=2, sampler=sampler)]

    ours, theirs = run_both(program)
    assert ours == theirs


# ---- WeightedRandomSampler ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [([1.0, 2.0], 0), ([1.0, 2.0], True), ([1.0, 2.0], 2.0), ([1.0, 2.0], -3),
                                  ([1.0, 2.0], 2, "yes"), ([[1.0, 2.0]], 2), (3.0, 1)])
def test_weighted_sampler_argument_errors_match_torch(args):
    ours, theirs = run_both(lambda lib: _error(lambda: lib.utils.data.WeightedRandomSampler(*args)))
    assert ours == theirs


def test_weighted_sampler_draw_errors_match_torch():
    def program(lib):
        too_many = lib.utils.data.WeightedRandomSampler([1.0, 1.0], 3, replacement=False)
        # (with replacement, torch words the negative-weight error differently; that is multinomial's business)
        negative = lib.utils.data.WeightedRandomSampler([1.0, -1.0], 1, replacement=False)
        return _error(lambda: list(too_many)), _error(lambda: list(negative))

    ours, theirs = run_both(program)
    assert ours == theirs


def test_weighted_sampler_statistics_and_seeding():
    weights = [1.0, 0.0, 3.0, 6.0]
    sampler = tg.utils.data.WeightedRandomSampler(weights, 20000, generator=tg.Generator().manual_seed(0))
    draws = list(sampler)
    assert len(sampler) == len(draws) == 20000 and all(isinstance(i, int) for i in draws)
    freq = np.bincount(draws, minlength=4) / len(draws)
    np.testing.assert_allclose(freq, np.array(weights) / 10, atol=0.015)
    assert freq[1] == 0
    again = tg.utils.data.WeightedRandomSampler(weights, 20000, generator=tg.Generator().manual_seed(0))
    assert list(again) == draws
    tg.manual_seed(1)
    first = list(tg.utils.data.WeightedRandomSampler(weights, 50))
    tg.manual_seed(1)
    assert list(tg.utils.data.WeightedRandomSampler(weights, 50)) == first


def test_weighted_sampler_without_replacement_never_repeats():
    gen = tg.Generator().manual_seed(3)
    sampler = tg.utils.data.WeightedRandomSampler([0.1, 5.0, 1.0, 2.0, 0.5, 9.0], 6, replacement=False,
                                                  generator=gen)
    firsts = []
    for _ in range(300):
        draw = list(sampler)
        assert sorted(draw) == list(range(6))
        firsts.append(draw[0])
    # the heaviest weight comes first most often (9 / 17.6 of the time)
    assert abs(firsts.count(5) / 300 - 9.0 / 17.6) < 0.1
    assert len(list(tg.utils.data.WeightedRandomSampler([1.0, 0.0, 2.0], 2, replacement=False))) == 2


def test_weighted_sampler_attributes_match_torch():
    def program(lib):
        s = lib.utils.data.WeightedRandomSampler(np.array([1, 2, 3]), 4, replacement=False)
        return plain_nested(s.weights), s.num_samples, s.replacement, len(s), s.generator

    ours, theirs = run_both(program)
    assert ours == theirs


# ---- StackDataset / ChainDataset ----------------------------------------------------------------------------

def _parts(lib):
    return lib.utils.data.TensorDataset(lib.arange(4)), ["a", "b", "c", "d"]


def test_stack_dataset_tuple_and_dict_forms_match_torch():
    def program(lib):
        nums, names = _parts(lib)
        as_tuple = lib.utils.data.StackDataset(nums, names)
        as_dict = lib.utils.data.StackDataset(x=nums, name=names)
        loaders = [[plain_nested(b) for b in lib.utils.data.DataLoader(d, batch_size=3)] for d in (as_tuple, as_dict)]
        return (len(as_tuple), plain_nested(as_tuple[1]), plain_nested(as_dict[2]), plain_nested(as_tuple.__getitems__([3, 0])),
                plain_nested(as_dict.__getitems__([1])), loaders)

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("make", [lambda d, n: d.StackDataset(), lambda d, n: d.StackDataset(n, x=n),
                                  lambda d, n: d.StackDataset(n, [1]), lambda d, n: d.StackDataset(x=n, y=[1])])
def test_stack_dataset_errors_match_torch(make):
    ours, theirs = run_both(lambda lib: _error(lambda: make(lib.utils.data, _parts(lib)[0])))
    assert ours == theirs


def test_stack_dataset_checks_nested_getitems_sizes():
    def program(lib):
        class Short(lib.utils.data.Dataset):
            def __len__(self):
                return 3

            def __getitem__(self, i):
                return i

            def __getitems__(self, indices):
                return indices[:-1]

        return _error(lambda: lib.utils.data.StackDataset(Short(), [0, 1, 2]).__getitems__([0, 1]))

    ours, theirs = run_both(program)
    assert ours == theirs


def _streams(lib):
    class Count(lib.utils.data.IterableDataset):
        def __init__(self, start, stop):
            self.start, self.stop = start, stop

        def __iter__(self):
            return iter(range(self.start, self.stop))

        def __len__(self):
            return self.stop - self.start

    return Count(0, 3), Count(10, 14)


def test_chain_dataset_and_iterable_add_match_torch():
    def program(lib):
        a, b = _streams(lib)
        chain = lib.utils.data.ChainDataset([a, b])
        added = a + b
        batches = [plain_nested(x) for x in lib.utils.data.DataLoader(chain, batch_size=3)]
        return list(chain), len(chain), type(added).__name__, list(added), batches

    ours, theirs = run_both(program)
    assert ours == theirs


def test_chain_dataset_rejects_map_style_datasets_lazily():
    def program(lib):
        a, _ = _streams(lib)
        chain = lib.utils.data.ChainDataset([a, lib.utils.data.TensorDataset(lib.arange(2))])  # no error yet
        seen = []

        def consume():
            for x in chain:
                seen.append(x)

        return _error(consume), seen, _error(lambda: len(chain))

    ours, theirs = run_both(program)
    assert ours == theirs


def test_iterable_dataset_is_abstract_and_generic_like_torch():
    def program(lib):
        d = lib.utils.data
        return (_error(lambda: d.IterableDataset()), _error(lambda: d.Sampler([1])),
                d.Dataset[int] is not None and d.Sampler[int] is not None)

    ours, theirs = run_both(program)
    assert ours[0][0] == theirs[0][0] == "TypeError" and ours[1:] == theirs[1:]


# ---- Subset / random_split ----------------------------------------------------------------------------------

def test_subset_getitems_and_override_check_match_torch():
    def program(lib):
        nums = lib.utils.data.TensorDataset(lib.arange(5))

        class Doubled(lib.utils.data.Subset):
            def __getitem__(self, i):
                return 2 * i

        sub = lib.utils.data.Subset(lib.utils.data.StackDataset(nums, list("vwxyz")), [4, 2, 0])
        return (_error(lambda: Doubled(nums, [0])), plain_nested(sub.__getitems__([0, 2])),
                [plain_nested(b) for b in lib.utils.data.DataLoader(sub, batch_size=2)])

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("lengths", [[0.5, 0.5], [0.3, 0.3, 0.4], [0.9, 0.1, 0.0], [1.0], [1.5, -0.5], [4, 6],
                                     [4, 5]])
def test_random_split_lengths_warnings_and_errors_match_torch(lengths):
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                parts = lib.utils.data.random_split(range(10), lengths, generator=lib.Generator().manual_seed(0))
            except ValueError as e:
                return "ValueError", str(e)
        flat = sorted(i for p in parts for i in p)
        return [len(p) for p in parts], flat, [str(w.message) for w in caught]

    ours, theirs = run_both(program)
    assert ours == theirs


# ---- collate / convert --------------------------------------------------------------------------------------

def test_default_convert_matches_torch():
    def program(lib):
        d = lib.utils.data
        samples = [(np.arange(2), 3), collections.OrderedDict(a=np.float32(1.5)), [np.array(["s"]), b"x"],
                   {"n": np.int16(3), "t": (1, 2)}, "text", np.bool_(True)]
        converted = [d.default_convert(s) for s in samples]
        return [(type(c).__name__, plain_nested(c) if not isinstance(c, list) or not c or not isinstance(c[0], np.ndarray)
                 else c[0].tolist()) for c in converted]

    ours, theirs = run_both(program)
    assert ours == theirs


def test_default_collate_container_types_and_errors_match_torch():
    def program(lib):
        d = lib.utils.data
        dd = collections.defaultdict(list, a=1.0)
        results = [
            type(d.default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])).__name__,
            plain_nested(d.default_collate([dd, dd])),
            plain_nested(d.default_collate([np.float32(1), np.float32(2)])),
            plain_nested(d.default_collate([True, False])),
            plain_nested(d.default_collate([[1, 2.0], [3, 4.0]])),
            d.default_collate([b"a", b"b"]),
        ]
        errors = [_error(lambda: d.default_collate([1j, 2j])),
                  _error(lambda: d.default_collate([np.array(["a"]), np.array(["b"])])),
                  _error(lambda: d.default_collate([[1, 2], [3]])),
                  _error(lambda: d.default_collate([None]))]
        return results, errors

    ours, theirs = run_both(program)
    assert ours == theirs


def test_collate_fn_map_can_be_extended_like_torch():
    def program(lib):
        from importlib import import_module

        c = import_module(f"{lib.__name__}.utils.data._utils.collate")
        custom = {**c.default_collate_fn_map, str: lambda batch, *, collate_fn_map=None: "+".join(batch)}
        return plain_nested(c.collate([{"s": "a", "v": 1}, {"s": "b", "v": 2}], collate_fn_map=custom))

    ours, theirs = run_both(program)
    assert ours == theirs


def test_get_worker_info_is_none_in_the_main_process():
    ours, theirs = run_both(lambda lib: lib.utils.data.get_worker_info())
    assert ours is theirs is None
