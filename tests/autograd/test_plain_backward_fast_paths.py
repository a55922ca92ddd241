"""The plain-backward fast paths (raw-NumPy rules, the engine's array loop) behave exactly like the dispatched rules.

A plain ``backward()`` runs some operators' backward on the arrays (``ops/raw_backward.py``,
``autograd/array_chain.py``). These tests pin what must not change: the same values as the differentiable
rules, gradient identity and storage sharing, saved-tensor hooks and errors, and hooks in the middle of a run.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from _lib import run_both

import tracegrad as tg


def _chain(lib, w, c):
    h = w
    for _ in range(4):
        h = lib.sin(h)
        h = h * c
        h = h + 0.5
        h = lib.tanh(h)
        h = lib.exp(h)
        h = h * 0.9
        h = lib.relu(h - 1.0)
        h = h + c
    h = h.reshape(2, 8)
    h = h * h.mean(1)[:, None] + h.mean() * 0.5  # mean's full and per-dim rules
    return lib.log_softmax(h, 1).sum()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_values_as_the_differentiable_rules(dtype):
    data = np.random.default_rng(0).standard_normal(16).astype(dtype)
    cdata = np.random.default_rng(1).uniform(0.5, 1.0, 16).astype(dtype)
    w = tg.tensor(data, requires_grad=True)
    c = tg.tensor(cdata)
    _chain(tg, w, c).backward()
    plain = w.grad._data.copy()
    w.grad = None
    (g,) = tg.autograd.grad(_chain(tg, w, c), w, create_graph=True)  # dispatched, differentiable rules
    np.testing.assert_array_equal(plain, g._data)
    tw = torch.tensor(data, requires_grad=True)
    _chain(torch, tw, torch.tensor(cdata)).backward()
    np.testing.assert_allclose(plain, tw.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_sum_gradient_is_a_view_as_torchs_expand():
    """SumBackward0 hands on ``grad.expand(sizes)``: a hook or a custom backward further down sees a view of the
    incoming gradient (stride 0, not contiguous), and the leaf gets a contiguous copy of it."""

    def program(lib):
        seen = []

        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                seen.append(("function", g._base is not None, g.is_contiguous(), g.stride()))
                return g

        x = lib.ones(3, 2, requires_grad=True)
        h = x * 2.0
        h.register_hook(lambda g: seen.append(("hook", g._base is not None, g.is_contiguous(), g.stride())))
        Identity.apply(h).sum().backward()
        return seen, x.grad.tolist(), x.grad.stride()

    ours, theirs = run_both(program)
    assert ours == theirs and theirs[0][0] == ("function", True, False, (0, 0))


def test_passed_through_gradient_is_not_aliased_by_grad():
    """``add`` hands its gradient on unchanged: a leaf must not adopt the user's gradient buffer."""
    x = tg.randn(4, requires_grad=True)
    y = tg.randn(4, requires_grad=True)
    g0 = tg.ones(4)
    (x + 1.0 + 2.0).backward(g0)
    assert not np.shares_memory(x.grad._data, g0._data)
    s = x + y  # both operands get the same gradient: neither .grad may alias the other
    x.grad = y.grad = None
    s.backward(tg.ones(4))
    assert not np.shares_memory(x.grad._data, y.grad._data)
    np.testing.assert_array_equal(x.grad._data, np.ones(4, np.float32))


def test_unpack_hooks_run_once_per_access():
    calls = []

    def pack(t):
        calls.append("pack")
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    x = tg.randn(5, requires_grad=True)
    with tg.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = tg.exp(tg.sin(x) * 2.0)
    y.sum().backward()
    assert calls == ["pack", "pack", "unpack", "unpack"]


def test_version_error_and_freed_error_still_raised():
    x = tg.randn(3, requires_grad=True)
    h = x * 2.0
    y = tg.sin(h)
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        y.sum().backward()
    z = tg.sin(tg.exp(x * 3.0))
    z.sum().backward()
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        z.sum().backward()
    x.grad = None
    w = tg.exp(x)
    w.sum().backward(retain_graph=True)
    w.sum().backward()
    np.testing.assert_allclose(x.grad._data, 2 * np.exp(x._data), rtol=1e-6)


def test_saved_number_freed_by_the_array_loop():
    """A number given for a Tensor (``x * 2.0``) is a saved value too: a node run by the array loop frees it, so
    a second backward through the node raises, as PyTorch's (and the general loop's) does."""

    def program(lib):
        x = lib.ones(3, requires_grad=True)
        out = []
        for make in (lambda: x * 2.0, lambda: lib.exp(x) * 2.0, lambda: (x * 2.0).sin()):
            z = make()
            z.sum().backward()
            try:
                z.sum().backward()
                out.append("no error")
            except RuntimeError as exc:
                out.append("second time" in str(exc))
        return out

    ours, theirs = run_both(program)
    assert ours == theirs == [True, True, True]


def test_hooks_in_the_middle_of_a_run():
    data = np.random.default_rng(2).standard_normal(3).astype(np.float32)
    results = []
    for lib in (tg, torch):
        x = lib.tensor(data, requires_grad=True)
        a = lib.sin(x)
        b = lib.exp(a)
        seen = []
        a.register_hook(lambda g, seen=seen: seen.append("a") or g * 2)
        b.retain_grad()
        b.grad_fn.register_prehook(lambda gs, seen=seen: seen.append("pre"))
        lib.tanh(b).sum().backward()
        results.append((seen, b.grad.detach().numpy(), x.grad.detach().numpy()))
    (seen, bg, xg), (tseen, tbg, txg) = results
    assert seen == tseen == ["pre", "a"]
    np.testing.assert_allclose(bg, tbg, rtol=1e-5)
    np.testing.assert_allclose(xg, txg, rtol=1e-5)


def test_node_names_and_saved_attributes_unchanged():
    x = tg.randn(3, requires_grad=True)
    y = tg.exp(tg.sin(x) * 2.0 + 1.0)
    names = []
    fn = y.grad_fn
    while True:
        names.append(fn.name())
        if not fn.next_functions:
            break
        fn = fn.next_functions[0][0]
    assert names == ["ExpBackward0", "AddBackward0", "MulBackward0", "SinBackward0",
                     "torch::autograd::AccumulateGrad"]
    assert y.grad_fn.next_functions[0][0]._saved_alpha == 1
    assert y.grad_fn.next_functions[0][0].next_functions[0][0]._saved_other == 2.0


def test_attribute_deletion_refused_without_slowing_writes():
    x = tg.randn(2, requires_grad=True)
    for name in ("_grad_fn", "requires_grad", "_backward_hooks", "data"):
        with pytest.raises(RuntimeError):
            delattr(x, name)
    with pytest.raises(AttributeError, match="attribute 'grad_fn' of 'torch._C.TensorBase' objects is not writable"):
        del x.grad_fn  # (torch 2.13: a read-only attribute, refused as CPython refuses any write to it)
    assert x._grad_fn is None and x.grad_fn is None and x.is_leaf


def _branching(lib, x, c):
    """Chains that split and meet again: the array loop starts with nodes queued and gradients buffered."""
    a = lib.sin(x)
    b = lib.exp(a * c) + 0.5
    d = lib.tanh(a) * 0.7
    e = lib.sin(b * d) + lib.cos(a)
    return (e * b).sum()


def _executed_order(x, c, create_graph: bool) -> list:
    from tracegrad import _events

    seen = []
    unsubscribe = _events.subscribe(lambda kind, payload: seen.append(payload["node"].name()), ["node_executed"])
    x.grad = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # backward(create_graph=True)'s reference-cycle warning
            _branching(tg, x, c).backward(create_graph=create_graph)
    finally:
        unsubscribe()
    return seen, x.grad._data


def test_branching_graph_same_order_and_values_as_the_general_path():
    rng = np.random.default_rng(3)
    data, cdata = rng.standard_normal(6).astype(np.float32), rng.uniform(0.5, 1.0, 6).astype(np.float32)
    x, c = tg.tensor(data, requires_grad=True), tg.tensor(cdata)
    plain_order, plain = _executed_order(x, c, False)
    general_order, general = _executed_order(x, c, True)  # dispatched rules, general loop only
    assert plain_order == general_order
    np.testing.assert_array_equal(plain, general)
    tx = torch.tensor(data, requires_grad=True)
    _branching(torch, tx, torch.tensor(cdata)).backward()
    np.testing.assert_allclose(plain, tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def _mlp_loss(lib, layers, x, y):
    h = x
    for i, (w, b) in enumerate(layers):
        h = lib.nn.functional.linear(h, w, b)
        if i < len(layers) - 1:
            h = lib.relu(h)
    return lib.nn.functional.cross_entropy(h, y)


def _mlp_run(create_graph: bool) -> tuple:
    """An MLP step's backward: node order seen by an observer, and every parameter's gradient."""
    from tracegrad import _events

    rng = np.random.default_rng(5)
    sizes = (6, 5, 4, 3)
    layers = [(tg.tensor(rng.standard_normal((o, i)).astype(np.float32), requires_grad=True),
               tg.tensor(rng.standard_normal(o).astype(np.float32), requires_grad=True))
              for i, o in zip(sizes[:-1], sizes[1:])]
    x, y = tg.tensor(rng.standard_normal((7, 6)).astype(np.float32)), tg.tensor(rng.integers(0, 3, 7))
    seen = []
    unsubscribe = _events.subscribe(lambda kind, payload: seen.append(payload["node"].name()), ["node_executed"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # backward(create_graph=True)'s reference-cycle warning
            _mlp_loss(tg, layers, x, y).backward(create_graph=create_graph)
    finally:
        unsubscribe()
    return seen, [p.grad for layer in layers for p in layer]


def test_mlp_leaves_accumulate_in_queue_order():
    """A plain backward runs a leaf's hook-free AccumulateGrad as soon as its gradient arrives (the linear
    nodes feed a bias and a weight each): the same node order and gradients as the general loop."""
    plain_order, plain = _mlp_run(False)
    general_order, general = _mlp_run(True)
    assert plain_order == general_order
    assert plain_order.count("torch::autograd::AccumulateGrad") == 6
    for p, g in zip(plain, general):
        np.testing.assert_allclose(p._data, g._data, rtol=1e-6, atol=1e-7)
    arrays = [p._data for p in plain]
    assert not any(np.shares_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:])


@pytest.mark.parametrize("hooked", ["a", "b"])
def test_hooked_leaf_keeps_its_place_among_leaves(hooked):
    """Leaves fed by one node accumulate in edge order: a hook-free one run on arrival never overtakes a
    hooked one that had to be queued before it (each hook sees the other leaf's .grad as in PyTorch)."""

    def program(lib):
        a, b = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
        seen = []
        leaf, other = (a, b) if hooked == "a" else (b, a)
        leaf.register_post_accumulate_grad_hook(lambda p: seen.append(other.grad is None))
        (a * 2 + b * 3).sum().backward()
        (a + b).sum().backward()  # one node, both leaves, .grad already set
        return seen, a.grad, b.grad

    ours, theirs = run_both(program)
    assert ours[0] == theirs[0]
    np.testing.assert_array_equal(ours[1]._data, theirs[1].numpy())
    np.testing.assert_array_equal(ours[2]._data, theirs[2].numpy())
