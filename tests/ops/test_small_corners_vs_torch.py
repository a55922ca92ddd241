"""Small corners where tracegrad differed from torch 2.13: indexing with an object that follows Python's sequence
protocol without being a registered ``collections.abc.Sequence`` (torch asks PySequence_Check), index data NumPy
cannot read (a ragged list of 32 items), and ``clip_grad_value_`` with no gradients to clip. Each program runs on
both libraries; the result (dtype, shape, values) or the error (type, message), and the warnings, must match."""

from __future__ import annotations

import warnings

import pytest

from tests._lib import tg, torch, value_or_error, warning_texts


class Seq:
    """A sequence by protocol only: ``__len__`` and ``__getitem__``, not registered as a Sequence."""

    def __init__(self, items: list) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class GetItemOnly:
    """A sequence to PySequence_Check, without a length."""

    def __init__(self, items: list) -> None:
        self.items = items

    def __getitem__(self, i):
        return self.items[i]


def _x(L):
    return L.arange(12.).reshape(3, 4)


def _assigned(L, key):
    x = _x(L)
    x[key] = -1.
    return x


INDEXING = {
    "protocol sequence of ints": lambda L: _x(L)[Seq([0, 1])],
    "protocol sequence of sequences (a tuple)": lambda L: _x(L)[Seq([[0, 1], [1, 2]])],
    "protocol sequence with a slice (a tuple)": lambda L: _x(L)[Seq([0, slice(1, 3)])],
    "empty protocol sequence": lambda L: _x(L)[Seq([])],
    "protocol sequences in a tuple": lambda L: _x(L)[Seq([0, 1]), Seq([1, 2])],
    "protocol sequence in a list (a tuple)": lambda L: _x(L)[[Seq([0, 1]), 1]],
    "list of one protocol sequence (a tuple)": lambda L: _x(L)[[Seq([0, 1])]],
    "protocol sequence assigned through": lambda L: _assigned(L, Seq([0, 2])),
    "no length": lambda L: _x(L)[GetItemOnly([0, 1])],
    "no length in 33 items": lambda L: _x(L)[[0] * 32 + [GetItemOnly([0])]],
    "32 items, the last nested": lambda L: _x(L)[[0] * 31 + [[0]]],
    "33 items, the last nested": lambda L: _x(L)[[0] * 32 + [[0]]],
    "32 items, the first nested": lambda L: _x(L)[[[0]] + [0] * 31],
    "32 items, the last a protocol sequence": lambda L: _x(L)[[0] * 31 + [Seq([0])]],
    "dict": lambda L: _x(L)[{0: 1}],
    "int beyond int64 in 33 items": lambda L: _x(L)[[0] * 32 + [2 ** 70]],
}


@pytest.mark.parametrize("name", INDEXING)
def test_indexing_matches_torch(name: str) -> None:
    program = INDEXING[name]
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = value_or_error(program, tg)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        expected = value_or_error(program, torch)
    assert got == expected
    assert warning_texts(ours) == warning_texts(theirs)


def test_tensor_reads_a_protocol_sequence_as_torch() -> None:
    for program in (lambda L: L.tensor(Seq([0, 1])), lambda L: L.tensor([Seq([0, 1])]),
                    lambda L: L.tensor(GetItemOnly([0, 1]))):
        assert value_or_error(program, tg) == value_or_error(program, torch)


def _without_grad(L):
    return L.zeros(2, requires_grad=True)


CLIP_PARAMETERS = {
    "empty list": lambda L: [],
    "parameters without grads": lambda L: [_without_grad(L), _without_grad(L)],
    "a tensor without grad": _without_grad,
    "empty generator": lambda L: (p for p in []),
}


@pytest.mark.parametrize("foreach", [None, False, True])
@pytest.mark.parametrize("name", CLIP_PARAMETERS)
def test_clip_grad_value_without_grads_matches_torch(name: str, foreach) -> None:
    def program(L):
        return L.nn.utils.clip_grad_value_(CLIP_PARAMETERS[name](L), 1.0, foreach=foreach)

    def outcome(L):
        try:
            return program(L)
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            return type(exc).__name__, str(exc)

    assert outcome(tg) == outcome(torch)


def test_clip_grad_value_still_clips() -> None:
    def program(L):
        p = L.tensor([1., 2.], requires_grad=True)
        p.grad = L.tensor([-3., 0.5])
        L.nn.utils.clip_grad_value_([p, _without_grad(L)], 1.0)
        return p.grad

    assert value_or_error(program, tg) == value_or_error(program, torch)
