"""Differences that the programs of ``tests/test_user_programs40_vs_torch.py`` (sequence models by hand) ran into,
each reduced to the call that caused it and compared with torch.

- ``index_select`` with an out-of-range index (a beam's back-pointer gone wrong) always said "index out of range
  in self" (IndexError); torch's CPU kernel words it by its path: along dim 1 of a tensor of two or more dims (its
  fast path), or in an empty one, "INDICES element is out of DATA bounds, id=.. axis_dim=.." (RuntimeError), and
  "index_select(): self indexing axis dim should be positive" for an empty selected dim;
- ``pad_sequence`` of 0-d tensors said "Dimension specified as 0 ..." where torch fails slicing the first one's
  trailing sizes ("ArrayRef: invalid slice, N = 1; size = 0"), and a bad ``padding_side`` came after the lengths'
  checks where torch checks it first;
- ``pack_padded_sequence`` of a 1-d or 0-d input failed inside NumPy (``tuple index out of range``, ``AxisError``)
  where torch refuses the dim it reads (``size(1)``, or ``transpose(0, 1)`` with ``batch_first``, before the
  lengths' check);
- ``nn.RNN(3, True)`` built a network where torch's ``empty()`` refuses the bool size (a plain RNN's gate size is
  ``hidden_size`` itself);
- ``unique``/``unique_consecutive`` with ``dim`` gave results for a tensor with a size-0 dim other than the one
  selected, or with several, where torch refuses them, and a 0-d tensor failed inside NumPy (``AxisError``).
"""

from __future__ import annotations

import pytest
from _lib import tg, torch


def _outcome(program, lib):
    """What ``program(lib)`` gives (each tensor's dtype, shape and values), or its error's type and message."""
    try:
        result = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    parts = result if isinstance(result, (tuple, list)) else (result,)
    return [(str(t.dtype).replace("tracegrad", "torch"), tuple(t.shape), repr(t.tolist())) for t in parts]


def _assert_same(program):
    assert _outcome(program, tg) == _outcome(program, torch)


INDEX_SELECT = {
    "dim 1 past the end": lambda L: L.ones(2, 3).index_select(1, L.tensor([3])),
    "dim 1 negative": lambda L: L.ones(2, 3).index_select(1, L.tensor([-1])),
    "dim -1 of 2-d is dim 1": lambda L: L.ones(2, 3).index_select(-1, L.tensor([0, 5])),
    "dim 1 of 3-d, int32 index": lambda L: L.ones(2, 3, 4).index_select(1, L.tensor([0, 9, -1], dtype=L.int32)),
    "dim 1 of bool": lambda L: L.ones(2, 3, dtype=L.bool).index_select(1, L.tensor([7])),
    "dim 1 into out": lambda L: L.index_select(L.ones(2, 3), 1, L.tensor([5]), out=L.empty(2, 1)),
    "dim 0 of 2-d": lambda L: L.ones(2, 3).index_select(0, L.tensor([2])),
    "dim 2 of 3-d": lambda L: L.ones(2, 3, 4).index_select(2, L.tensor([4])),
    "1-d": lambda L: L.ones(5).index_select(0, L.tensor([5])),
    "empty tensor, non-empty dim": lambda L: L.ones(0, 3).index_select(1, L.tensor([0, 5])),
    "empty tensor, dim 0 of 3-d": lambda L: L.ones(4, 3, 0).index_select(0, L.tensor([4])),
    "empty selected dim": lambda L: L.ones(4, 3, 0).index_select(2, L.tensor([0])),
    "empty selected dim, 2-d": lambda L: L.ones(0, 3).index_select(0, L.tensor([0, 1])),
    "in range, empty index": lambda L: L.ones(0, 3).index_select(0, L.tensor([], dtype=L.long)),
    "in range along dim 1": lambda L: L.arange(6.).view(2, 3).index_select(1, L.tensor([2, 0])),
}


@pytest.mark.parametrize("case", INDEX_SELECT)
def test_index_select_out_of_range_as_torch(case):
    _assert_same(INDEX_SELECT[case])


def _pad(sequences, **kwargs):
    return lambda L: L.nn.utils.rnn.pad_sequence(sequences(L), **kwargs)


PAD_SEQUENCE = {
    "0-d": _pad(lambda L: [L.tensor(1.0), L.tensor(2.0)]),
    "one 0-d, batch_first": _pad(lambda L: [L.tensor(1.0)], batch_first=True),
    "0-d first": _pad(lambda L: [L.tensor(1.0), L.ones(2)], padding_side="left"),
    "0-d later": _pad(lambda L: [L.ones(2), L.tensor(1.0)]),
    "bad side before lengths": _pad(lambda L: [L.ones(2), L.tensor(1.0)], padding_side="middle"),
    "bad side, empty list": _pad(lambda L: [], padding_side="middle"),
    "left": _pad(lambda L: [L.arange(3), L.arange(1)], padding_side="left", padding_value=-1),
}


@pytest.mark.parametrize("case", PAD_SEQUENCE)
def test_pad_sequence_refusals_as_torch(case):
    _assert_same(PAD_SEQUENCE[case])


def _pack(make_input, lengths, batch_first=False, enforce_sorted=True):
    return lambda L: L.nn.utils.rnn.pack_padded_sequence(make_input(L), lengths, batch_first=batch_first,
                                                         enforce_sorted=enforce_sorted).data


PACK_PADDED = {
    "1-d": _pack(lambda L: L.ones(3), [1]),
    "1-d batch_first": _pack(lambda L: L.ones(3), [1], batch_first=True),
    "1-d unsorted": _pack(lambda L: L.ones(3), [1], enforce_sorted=False),
    "0-d": _pack(lambda L: L.tensor(3.0), [1]),
    "0-d batch_first": _pack(lambda L: L.tensor(3.0), [1], batch_first=True),
    "1-d batch_first, 2-d lengths": _pack(lambda L: L.ones(3), [[1]], batch_first=True),
    "1-d, 2-d lengths": _pack(lambda L: L.ones(3), [[1]]),
    "empty 1-d batch_first": _pack(lambda L: L.ones(0), [1], batch_first=True),
    "2-d batch_first": _pack(lambda L: L.arange(6.0).view(2, 3), [3, 1], batch_first=True),
}


@pytest.mark.parametrize("case", PACK_PADDED)
def test_pack_padded_sequence_without_batch_dim_as_torch(case):
    _assert_same(PACK_PADDED[case])


def _weight_shapes(module_name: str, *args, **kwargs):
    return lambda L: [p.detach().new_zeros(tuple(p.shape)) for p in getattr(L.nn, module_name)(*args, **kwargs)
                      .parameters()]


RNN_SIZES = {
    "RNN bool hidden_size": _weight_shapes("RNN", 3, True),
    "RNN relu bool hidden_size": _weight_shapes("RNN", 3, True, nonlinearity="relu"),
    "RNN bool input_size": _weight_shapes("RNN", True, 3),
    "LSTM bool hidden_size": _weight_shapes("LSTM", 3, True),
    "GRU bool hidden_size": _weight_shapes("GRU", 3, True),
    "RNN": _weight_shapes("RNN", 3, 2, bias=False),
}


@pytest.mark.parametrize("case", RNN_SIZES)
def test_rnn_bool_sizes_as_torch(case):
    _assert_same(RNN_SIZES[case])


UNIQUE_BY_DIM = {
    f"{name} {shape} dim={dim}": (lambda L, name=name, shape=shape, dim=dim: getattr(L, name)(
        L.ones(shape), dim=dim, return_inverse=True, return_counts=True))
    for name in ("unique", "unique_consecutive")
    for shape, dim in (((2, 0), 0), ((2, 0), 1), ((0, 2), 1), ((0, 0), 1), ((2, 0, 3), -1), ((0, 0, 2), 2),
                       ((2, 3, 0), 2), ((), 0), ((), -1), ((), 2), ((3, 2), 1))
}


@pytest.mark.parametrize("case", UNIQUE_BY_DIM)
def test_unique_by_dim_of_empty_and_0d_as_torch(case):
    _assert_same(UNIQUE_BY_DIM[case])
