"""Indexing, ``__setitem__`` and view methods on one (2, 3, 4) tensor: torch's result (dtype, shape, values,
container type) or torch's error, case by case."""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch

GET = ["[0]", "[-1]", "[:, 1]", "[..., 2]", "[None]", "[:, None, 1]", "[0, ..., None]", "[[0, 1]]",
       "[[0, 1], [1, 2]]", "[:, [0, 2], 1:3]", "[x > 10]", "[x[0] > 5]", "[L.tensor([True, False])]", "[1:, ::2]",
       "[::-1]", "[5]", "[:, 3]", "[L.tensor([[0, 1]])]", "[0, 0, 0]", "[L.tensor(1)]", "[(0, 1)]",
       "[[0, 0], :, [1, 2]]", "[0.5]", "[L.tensor([0.0])]", "[1, 2, 3, 4]", "[[True, False]]",
       "[L.tensor([], dtype=L.long)]", "[:, L.tensor([[0], [2]]), L.tensor([1, 3])]"]
SET = [("[0]", "0.0"), ("[:, 1]", "L.ones(4)"), ("[x > 10]", "-1.0"), ("[[0, 1], [1, 2]]", "L.tensor([7.0, 8.0])"),
       ("[..., 0]", "L.zeros(2, 3, 1)"), ("[0]", "L.ones(2, 4)"), ("[:, [0, 2]]", "L.ones(2, 2, 4)"),
       ("[x > 100]", "5.0"), ("[0, 0]", "L.tensor([1, 2])"), ("[1]", "L.ones(3, 4, dtype=L.float64)"),
       ("[0]", "L.tensor(3, dtype=L.int64)"), ("[[0, 0], 0, 0]", "L.tensor([1.0, 2.0])"), ("[0]", "L.ones(1, 1, 4)"),
       ("[[0, 1]]", "L.ones(2)"), ("[[0, 1], 0]", "L.ones(3)")]
VIEWS = ["x.view(6, 4)", "x.transpose(0, 1).view(6, 4)", "x.transpose(0, 1).reshape(6, 4)", "x.view(-1, 5)",
         "x.view(2, -1, -1)", "x.unflatten(1, (3, 1))", "x.flatten(1)", "x.expand(2, 2, 3, 4)", "x.expand(3, 3, 4)",
         "x.narrow(2, 1, 2)", "x.narrow(2, 3, 2)", "x.unfold(2, 2, 1)", "x.diagonal(0, 1, 2)", "x.squeeze(0)",
         "x[:, :1].squeeze()", "x.movedim(0, -1)", "x.mT", "x.t()", "x[0].t()", "x.split([1, 2], 1)",
         "x.chunk(3, 2)", "x.unbind(1)", "x.tensor_split(2, 2)", "x.as_strided((2, 2), (1, 2))", "x.select(1, 5)",
         "x.view(L.float64)", "x.view(L.int32)", "x.view(L.float16)", "x.view(L.uint8)", "x.t().view(L.float64)",
         "x[0].t().view(L.float64)", "x[:, :, :2].view(L.float64)", "x[0, 0, 0].view(L.float64)",
         "L.ravel(x.transpose(0, 1))", "x.ravel()", "x.select_scatter(L.zeros(3, 4), 0, 1)",
         "x.slice_scatter(L.zeros(2, 3, 2), 2, 0, 2)", "x.diagonal_scatter(L.zeros(2, 3), 0, 1, 2)",
         "L.tril_indices(3, 4, 1)", "L.triu_indices(4, 3, -1)", "L.tril_indices(3, 3, dtype=L.float32)",
         "L.isin(x, L.tensor([1.0, 5.0]))", "L.isin(x, 3.0, invert=True)", "x.is_same_size(x.mT)",
         "x.is_signed()", "x[0, 0, :1].is_nonzero()", "x.is_nonzero()", "x.get_device()"]


def _outcome(source: str, lib, setting: str | None = None):
    x = lib.arange(24.0).reshape(2, 3, 4)
    scope = {"x": x, "L": lib}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if setting is None:
                result = eval(source, scope)  # noqa: S307 - the fixed expressions above
            else:
                exec(f"x{source} = {setting}", scope)  # noqa: S102
                result = x
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc).__name__, str(exc)
    if isinstance(result, tuple):
        return "tuple", [(str(r.dtype), tuple(r.shape), r.tolist()) for r in result]
    if not hasattr(result, "dtype"):
        return "value", result
    return str(result.dtype), tuple(result.shape), result.tolist()


@pytest.mark.parametrize("key", GET)
def test_getitem(key):
    assert _outcome("x" + key, tg) == _outcome("x" + key, torch)


@pytest.mark.parametrize("key,value", SET)
def test_setitem(key, value):
    assert _outcome(key, tg, value) == _outcome(key, torch, value)


@pytest.mark.parametrize("expression", VIEWS)
def test_view_methods(expression):
    assert _outcome(expression, tg) == _outcome(expression, torch)


def test_setitem_broadcast_graph_and_dtype_view_sharing():
    """A (1, 1, 4) value written into a (3, 4) slice goes through torch's view and expand (its graph), and
    ``view(dtype)`` shares memory and version counter without joining the graph."""

    def program(lib):
        x = lib.zeros(2, 3, 4, requires_grad=True).clone()
        v = lib.ones(1, 1, 4, requires_grad=True)
        x[0] = v
        node = x.grad_fn
        names = [node.name(), [n.name() for n, _ in node.next_functions],
                 [n.name() for n, _ in node.next_functions[1][0].next_functions]]
        x.sum().backward()
        y = lib.arange(4.0)
        bits = y.view(lib.int32)
        bits.add_(1)
        z = (lib.ones(2, requires_grad=True) * 1).view(lib.float32)
        return names, v.grad.tolist(), y._version, y.tolist()[1:], z.requires_grad, z.grad_fn, z._base is None

    assert program(tg) == program(torch)
