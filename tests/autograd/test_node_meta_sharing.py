"""Nodes share their ``(shape, dtype)`` metadata records (autograd/node_meta.py), which keeps what the cyclic
garbage collector visits per node small, and the records still describe every input and output."""

from __future__ import annotations

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import node_meta


def _leaf(*shape, dtype=tg.float32):
    return tg.ones(*shape, dtype=dtype, requires_grad=True)


def test_nodes_of_one_shape_share_their_metadata():
    x, y = _leaf(16), _leaf(16)
    first, second = x * y, (x + 1) * y
    for a, b in ((first, second), (tg.sin(x), tg.sin(y)), (tg.relu(x), tg.relu(y))):
        assert a.grad_fn._in_meta is b.grad_fn._in_meta
        assert a.grad_fn._out_meta is b.grad_fn._out_meta
    w = _leaf(4, 16)
    one, two = tg.nn.functional.linear(x.reshape(1, 16), w), tg.nn.functional.linear(y.reshape(1, 16), w)
    assert one.grad_fn._out_meta is two.grad_fn._out_meta


@pytest.mark.parametrize(("a_shape", "b_shape", "a_dtype", "b_dtype"), [
    ((3, 1), (1, 4), tg.float32, tg.float32),
    ((4,), (3, 4), tg.float32, tg.float32),
    ((3, 4), (4,), tg.float32, tg.float64),
    ((2, 3), (2, 3), tg.float64, tg.float32),
    ((0, 3), (1, 3), tg.float32, tg.float32),
])
def test_binary_metadata_describes_each_operand(a_shape, b_shape, a_dtype, b_dtype):
    a, b = _leaf(*a_shape, dtype=a_dtype), _leaf(*b_shape, dtype=b_dtype)
    for out, needs in ((a * b, (True, True)), (a * b.detach(), (True, False)), (a.detach() * b, (False, True))):
        node = out.grad_fn
        expected_in = tuple((t.shape, t._data.dtype) if need else None for t, need in zip((a, b), needs))
        assert node._in_meta == expected_in
        assert node._out_meta == ((out.shape, out._data.dtype),)
    number = (a * 2.0).grad_fn
    assert number._in_meta == ((a.shape, a._data.dtype), None)


def test_matmul_and_unary_dtype_changes_keep_their_own_records():
    a, b = _leaf(2, 3), _leaf(3, 5)
    node = (a @ b).grad_fn
    assert node._in_meta == (((2, 3), np.dtype(np.float32)), ((3, 5), np.dtype(np.float32)))
    assert node._out_meta == (((2, 5), np.dtype(np.float32)),)
    half = _leaf(4, dtype=tg.float16)
    assert tg.sin(half).grad_fn._out_meta == (((4,), np.dtype(np.float16)),)


def test_a_long_chain_points_to_a_handful_of_metadata_objects():
    x = _leaf(4)
    h = x
    for _ in range(500):
        h = tg.sin(h) * 1.5 + 0.5
    nodes, seen, node = [], set(), h.grad_fn
    while node is not None and len(nodes) < 1500:
        nodes.append(node)
        seen.update((id(node._in_meta), id(node._out_meta)))
        node = next((fn for fn, _ in node.next_functions if fn is not None and type(fn).__name__ != "AccumulateGrad"),
                    None)
    assert len(nodes) == 1500
    assert len(seen) <= 6  # (sin, mul with a number and add with a number: three input forms, one output form)
    h.sum().backward()
    assert x.grad is not None and bool(tg.isfinite(x.grad).all())


def test_metadata_tables_start_afresh_past_their_limit(monkeypatch):
    monkeypatch.setattr(node_meta, "_TABLE_LIMIT", 3)
    shapes = [(k, 7) for k in range(1, 6)]
    records = [node_meta.meta_record(s, np.dtype(np.int8)) for s in shapes]
    assert [r[0] for r in records] == shapes
    assert node_meta.meta_record(shapes[-1], np.dtype(np.int8)) is records[-1]
    assert len(node_meta._TABLES[np.dtype(np.int8)]) <= 3
