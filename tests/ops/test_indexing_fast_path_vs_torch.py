"""The lean paths of basic indexing and of the view methods (``indexing._basic_views``, ``views.call_plain``)
make what the operators make: compared with torch (values, strides, base and version sharing, graph), and with
tracegrad's own general path (every piece of view bookkeeping and every node attribute)."""

from __future__ import annotations

import pytest
from _lib import assert_same_bits, np, raised, recorded_graph, run_both, tg, torch

from tracegrad import _events
from tracegrad.ops import indexing, views

KEYS = [
    0, -1, 3, slice(None), slice(1, 3), slice(None, None, 2), slice(-3, None), slice(2, 100), slice(5, 1),
    None, Ellipsis, (), (0, 1), (-1, -2, -3), (slice(None), 1), (slice(None, 2), slice(1, 4)),
    (Ellipsis, None), (None, 0), (0, None, slice(1, 3)), (Ellipsis, 2), (1, Ellipsis, None),
    (slice(None), slice(None), 0), (None, None), (slice(0, 0), None), (slice(None), slice(None)),
    (slice(1, None, 3), Ellipsis, slice(None, -1)),
]
METHOD_CALLS = [
    ("view", (-1,)), ("view", (6, 20)), ("view", ((4, -1),)), ("reshape", (20, 6)), ("reshape", (-1,)),
    ("flatten", ()), ("flatten", (1,)), ("unsqueeze", (0,)), ("unsqueeze", (-1,)), ("unsqueeze", (1,)),
    ("permute", (2, 0, 1)), ("permute", ((-1, 0, 1),)), ("expand", (2, 4, 5, 6)), ("expand", (-1, 5, 6)),
]


def _base(lib, requires_grad=False):
    x = lib.tensor(np.arange(120, dtype=np.float32).reshape(4, 5, 6))
    return x.requires_grad_() if requires_grad else x


def _key_name(key) -> str:
    return repr(key)


@pytest.fixture
def general_path(monkeypatch):
    """Every call through the operators (the general path), for comparisons with the lean one."""
    monkeypatch.setattr(indexing, "_basic_views", lambda t, key, keep_full_slices: None)
    monkeypatch.setattr(indexing, "_set_number_plain", lambda t, key, value: False)
    monkeypatch.setattr(views, "call_plain", lambda op, t, *rest: op(t, *rest))


def _geometry(t):
    # (an empty view's storage offset is left out: tracegrad's is 0 where the slice starts past the end, a known
    # difference of its NumPy views that neither path changes)
    return tuple(t.shape), t.stride(), t.storage_offset() if t.numel() else None


@pytest.mark.parametrize("key", KEYS, ids=_key_name)
@pytest.mark.parametrize("requires_grad", [False, True])
def test_getitem_matches_torch(key, requires_grad):
    def program(lib):
        x = _base(lib, requires_grad)
        y = x[key]
        return x, y

    (x, y), (tx, ty) = run_both(program)
    assert_same_bits(y, ty)
    assert _geometry(y) == _geometry(ty)
    assert y._is_view() == ty._is_view() and (y._base is x) == (ty._base is tx)
    assert recorded_graph([y]) == recorded_graph([ty])
    if requires_grad:
        y.sum().backward()
        ty.sum().backward()
        assert_same_bits(x.grad, tx.grad)
    with torch.no_grad():
        tx.add_(1)
    with tg.no_grad():
        x.add_(1)
    assert y._version == ty._version and y._version == x._version
    assert_same_bits(y, ty)  # (the same memory)


@pytest.mark.parametrize("key", [0, (slice(None), 1), (0, None)], ids=_key_name)
def test_getitem_under_no_grad_matches_torch(key):
    def program(lib):
        x = _base(lib, requires_grad=True)
        with lib.no_grad():
            y = x[key]
        return y.requires_grad, y.grad_fn is None, raised(lib, lambda lib: y.mul_(2))

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("key", [
    # (not compared, as tracegrad's general path differs there: two Ellipses, which torch 2.13 takes, and a step of 0,
    # refused in other words)
    5, -6, (0, 9), (0, 0, 0, 0), slice(None, None, -1), (0, 1, 2, None, 0),
    True, 1.5, (0, "a"),
], ids=_key_name)
def test_getitem_errors_match_torch(key):
    ours, theirs = run_both(lambda lib: raised(lib, lambda lib: _base(lib)[key]))
    assert ours == theirs


@pytest.mark.parametrize("key", KEYS + [slice(1, 3)], ids=_key_name)
@pytest.mark.parametrize("requires_grad", [False, True])
def test_setitem_matches_torch(key, requires_grad):
    def program(lib):
        x = _base(lib, requires_grad)
        y = x * 1 if requires_grad else x
        y[key] = 7.0
        return x, y

    (x, y), (tx, ty) = run_both(program)
    assert_same_bits(y, ty)
    assert y._version == ty._version
    assert recorded_graph([y]) == recorded_graph([ty])


def _replay(t):
    return tuple((op.name, args, index) for op, args, index in (t._view_replay or ()))


def _node(fn):
    if fn is None:
        return None
    return (fn.name(), getattr(fn, "_attrs", None), fn._in_meta, getattr(fn, "_out_meta", None),
            tuple(_node(f) for f, _ in fn.next_functions))


def _bookkeeping(t, x):
    return (_geometry(t), t._data.dtype, t._base is x, t._vc is x._vc, t._view_version, t._creation_meta, t._view_fn,
            _replay(t), t._rg, t._output_nr, _node(t._gfn))


def _indexed_twice(key, requires_grad, grad_enabled, make):
    """``make(x, key)`` by each path, from one base (so version counters and sequence numbers are comparable)."""
    x = _base(tg, requires_grad)
    seen = []
    unsubscribe = _events.subscribe(lambda kind, payload: seen.append(payload["node"].name()), ("node_created",))
    try:
        with tg.set_grad_enabled(grad_enabled):
            out = make(x, key)
    finally:
        unsubscribe()
    return x, out, seen


@pytest.mark.parametrize("key", KEYS, ids=_key_name)
@pytest.mark.parametrize("requires_grad, grad_enabled", [(False, True), (True, True), (True, False)])
def test_getitem_fast_path_is_the_general_path(key, requires_grad, grad_enabled, request):
    x, fast, fast_events = _indexed_twice(key, requires_grad, grad_enabled, lambda x, key: x[key])
    request.getfixturevalue("general_path")
    y, general, general_events = _indexed_twice(key, requires_grad, grad_enabled, lambda x, key: x[key])
    assert _bookkeeping(fast, x) == _bookkeeping(general, y)
    assert fast_events == general_events


@pytest.mark.parametrize("key", KEYS, ids=_key_name)
def test_setitem_fast_path_is_the_general_path(key, request):
    def write(x, key):
        y = x * 1
        y[key] = 3.0
        return y

    x, fast, fast_events = _indexed_twice(key, True, True, write)
    request.getfixturevalue("general_path")
    y, general, general_events = _indexed_twice(key, True, True, write)
    assert_same_bits(fast, general)
    assert fast._version == general._version
    assert _node(fast._gfn) == _node(general._gfn)
    assert fast_events == general_events


@pytest.mark.parametrize("name, args", METHOD_CALLS, ids=[f"{n}{a}" for n, a in METHOD_CALLS])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_view_methods_match_torch(name, args, requires_grad):
    def program(lib):
        x = _base(lib, requires_grad)
        return x, getattr(x, name)(*args)

    (x, y), (tx, ty) = run_both(program)
    assert_same_bits(y, ty)
    assert _geometry(y) == _geometry(ty)
    assert y._is_view() == ty._is_view() and (y._base is x) == (ty._base is tx)
    assert recorded_graph([y]) == recorded_graph([ty])


@pytest.mark.parametrize("name, args", METHOD_CALLS, ids=[f"{n}{a}" for n, a in METHOD_CALLS])
@pytest.mark.parametrize("requires_grad, grad_enabled", [(False, True), (True, True), (True, False)])
def test_view_methods_fast_path_is_the_general_path(name, args, requires_grad, grad_enabled, request):
    def call(x, key):
        return getattr(x, name)(*args)

    x, fast, fast_events = _indexed_twice(None, requires_grad, grad_enabled, call)
    request.getfixturevalue("general_path")
    y, general, general_events = _indexed_twice(None, requires_grad, grad_enabled, call)
    assert _bookkeeping(fast, x) == _bookkeeping(general, y)
    assert fast_events == general_events


@pytest.mark.parametrize("source", [
    "x.view(7, -1)", "x.view(-1, -1)", "x.view(0, -1)", "x.view(2, -2)", "x.view(1.5)", "x.view(True)",
    "x.reshape(7)", "x.unsqueeze(3)", "x.unsqueeze(-5)", "x.unsqueeze(1.0)", "x.unsqueeze()", "x.unsqueeze(dim=0)",
    "x.permute(0, 1)", "x.permute(0, 0, 1)", "x.permute(0, 1, 3)", "x.expand(3, 5, 6)", "x.expand(5, 6)",
    "x.expand(-1, 4, 5, 6)", "x.transpose(0, 1).view(-1)", "x.flatten(2, 1)", "x.flatten(0, 5)",
])
def test_view_method_errors_match_torch(source):
    ours, theirs = run_both(lambda lib: raised(lib, lambda lib: eval(source, {"x": _base(lib)})))
    assert ours == theirs


@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("index", [[0, 3, -1], [[1, 2], [0, 0]], []])
def test_index_tensor_matches_torch(dtype, index):
    def program(lib):
        x = _base(lib, requires_grad=True)
        y = x[lib.tensor(index, dtype=getattr(lib, dtype))]
        y.sum().backward()
        return x.grad, y, _geometry(y), recorded_graph([y]), raised(lib, lambda lib: x[lib.tensor([4])])

    (grad, y, *rest), (tgrad, ty, *trest) = run_both(program)
    assert_same_bits(y, ty)
    assert_same_bits(grad, tgrad)
    assert rest == trest


def test_inference_mode_views_match_torch():
    def program(lib):
        with lib.inference_mode():
            x = _base(lib)
            inner = x[0]
        outside = x[:, 1]
        return inner.is_inference(), outside.is_inference(), outside._is_view(), outside.unsqueeze(0).is_inference()

    ours, theirs = run_both(program)
    assert ours == theirs
