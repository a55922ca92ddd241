"""Review of 81ba956 (layouts, index_put_'s value shapes) against torch itself: index_put_ with a 0-d mask
(whose ``nonzero()`` gives torch no index: the result is the whole tensor), a non-strided ``layout=`` given to a
function without that parameter (torch's parser refuses the keyword first), and ``torch.layout`` named as torch's
parser names it."""

from __future__ import annotations

import pytest
from _lib import raised, tg, torch


def _put(value_shape, mask):
    def program(L):
        x = L.zeros(3)
        x.index_put_((L.tensor(mask),), L.ones(value_shape) if value_shape is not None else L.tensor(5.0))
        return x
    return program


@pytest.mark.parametrize("value_shape", [None, (1,), (1, 3)])  # ((3,): torch fails an internal assert)
def test_index_put_with_a_0d_true_mask(value_shape) -> None:
    program = _put(value_shape, True)
    theirs = raised(torch, program)
    assert raised(tg, program) == theirs
    if theirs is None:
        assert program(tg).tolist() == program(torch).tolist()


@pytest.mark.parametrize("call", [
    lambda L: L.add(L.ones(2), L.ones(2), layout=L.sparse_coo),
    lambda L: L.ones(2).new_tensor([1.0], layout=L.sparse_coo),
    lambda L: L.ones(2).new_tensor([1.0], layout=L.jagged),
    lambda L: L.ones(2).sum(layout=L.sparse_csr),
])
def test_layout_keyword_where_torch_takes_none(call) -> None:
    assert raised(tg, call) == raised(torch, call)


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2).sum(layout=L.strided),
    lambda L: L.ones(2).add(L.strided),
    lambda L: L.zeros(L.strided),
    lambda L: L.ones(2).view(L.strided),
])
def test_layout_named_in_parser_messages(call) -> None:
    assert raised(tg, call) == raised(torch, call)


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(3).index_put_((None,), L.tensor(1.0)),
    lambda L: L.zeros(3).index_put((None,), L.tensor(1.0)),
    lambda L: L.zeros(3).index_put_(indices=(None,), values=L.tensor(1.0)),
    lambda L: L.zeros(3).index_put_((L.tensor([0]), 1), L.tensor(1.0)),
    lambda L: L.zeros(3).index_put_(([0],), L.tensor(1.0)),
    lambda L: L.index_put(L.zeros(3), (L.tensor([0]), None), L.tensor(1.0)),
    lambda L: L.index_put_(L.zeros(3), (None,), L.tensor(1.0)),
    lambda L: L.index_put(input=L.zeros(3), indices=(L.tensor([1]),), values=L.tensor(2.0), accumulate=True),
    lambda L: L.zeros(3).index_put_((L.tensor([0]), L.tensor([0])), L.tensor(1.0)),
    lambda L: L.index_put(L.zeros(3, 2), (L.tensor([0]),) * 3, L.tensor(1.0)),
    lambda L: L.zeros(()).index_put_((L.tensor([0]),), L.tensor(1.0)),
], ids=["none_method", "none_out_of_place", "none_keywords", "int_method", "list_method", "none_function",
         "none_function_inplace", "function_keywords",
        "too_many", "too_many_function", "too_many_0d"])
def test_index_put_takes_tensors_only_and_counts_them(call) -> None:
    """torch's parser takes tensors only in index_put's indices, method or function (no None, unlike
    x[None, i]), and index_put refuses more of them than the tensor has dims."""
    assert raised(tg, call) == raised(torch, call)
