"""Graphs where a node is reached both along a chain of one-edge nodes and another way, run as torch runs them.

A backward without ``inputs`` counts dependencies only once a node first hands gradients to several nodes
(``engine._lazy_counts``), and the engine's array loop skips the count of a node reached by a one-edge chain. These
tests hold graphs that would break a wrong shortcut (a leaf or node used at both ends of a chain, diamonds, a weight
shared by several layers or reached through a fused linear's input, several roots, multi-output nodes) to torch's
order of node runs (pre hooks on all or some nodes; an observer of node runs), leaf hooks' order and what they see,
``retain_grad``, ``_will_engine_execute_node`` for nodes already run, and gradients: values as torch's, and the
array loop's bits as the general loop's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_same_bits, graph_nodes, to_numpy, torch

import tracegrad as tg
from tracegrad import _events


def _chain(lib, h, n: int = 8):
    """``n`` pointwise one-edge nodes (the array loop's chain)."""
    ops = (lib.sin, lambda v: v * 0.9, lambda v: v + 0.1, lib.tanh, lib.exp, lambda v: v * 0.8, lambda v: v - 0.7)
    for i in range(n):
        h = ops[i % len(ops)](h)
    return h


def _linear(lib, h, w, b=None):
    return lib.nn.functional.linear(h, w, b)


def _diamonds(lib, x):
    h = x
    for _ in range(4):
        h = _chain(lib, h, 3) + h * 0.5
    return [h.sum()]


def _split_both(lib, x):
    a, c = x.split(8)
    return [_chain(lib, a).sum() + _chain(lib, c, 5).sum()]


def _shared_weight(lib, x, w, b):
    h = x.reshape(4, 4)
    for _ in range(3):
        h = lib.tanh(_linear(lib, h, w, b))
    return [_chain(lib, h).sum()]


def _two_roots(lib, x):
    h = _chain(lib, x)
    return [_chain(lib, h).sum(), (h * 2).sum()]


def _one_root_twice(lib, x):
    loss = _chain(lib, x).sum()
    return [loss, loss]


# name -> (lib, x (16,), w (4, 4), b (4,)) -> the roots of the backward
SHAPES = {
    "chain": lambda lib, x, w, b: [_chain(lib, x).sum()],
    "leaf at both ends (add)": lambda lib, x, w, b: [(_chain(lib, x) + x).sum()],
    "leaf at both ends (mul)": lambda lib, x, w, b: [(_chain(lib, x) * x).sum()],
    "node at both ends": lambda lib, x, w, b: [(lambda y: (_chain(lib, y) * y).sum())(x * 1.5)],
    "leaf at both ends, then a chain": lambda lib, x, w, b: [_chain(lib, _chain(lib, x) + x).sum()],
    "diamond at the top": lambda lib, x, w, b: [(lambda h: (lib.sin(h) * lib.cos(h)).sum())(_chain(lib, x))],
    "diamond at the bottom": lambda lib, x, w, b: [(lambda a: _chain(lib, lib.sin(a) + lib.cos(a)).sum())(x * 2)],
    "diamonds all along": lambda lib, x, w, b: _diamonds(lib, x),
    "square of a chain": lambda lib, x, w, b: [(lambda h: (h * h).sum())(_chain(lib, x))],
    "chain of a square": lambda lib, x, w, b: [_chain(lib, x * x).sum()],
    "split, one piece": lambda lib, x, w, b: [_chain(lib, x.split(8)[1]).sum()],
    "split, both pieces": lambda lib, x, w, b: _split_both(lib, x),
    "linear in a chain": lambda lib, x, w, b: [_chain(lib, _linear(lib, _chain(lib, x).reshape(4, 4), w, b)).sum()],
    "weight shared by layers": _shared_weight,
    "weight through the input": lambda lib, x, w, b: [
        _chain(lib, _linear(lib, lib.tanh(w.sum(0, keepdim=True)), w, b)).sum()],
    "weight through the input, no bias": lambda lib, x, w, b: [
        _chain(lib, _linear(lib, _chain(lib, w[:1], 3), w)).sum()],
    "bias through the input": lambda lib, x, w, b: [_chain(lib, _linear(lib, b[None] * x[:4, None], w, b)).sum()],
    "two roots sharing a chain": lambda lib, x, w, b: _two_roots(lib, x),
    "one root twice": lambda lib, x, w, b: _one_root_twice(lib, x),
}


def _leaves(lib) -> list:
    rng = np.random.default_rng(11)
    return [lib.tensor(rng.uniform(-1, 1, shape).astype(np.float32), requires_grad=True) for shape in
            ((16,), (4, 4), (4,))]


def _backward(lib, roots: list, create_graph: bool = False) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # backward(create_graph=True)'s reference-cycle warning
        lib.autograd.backward(roots, create_graph=create_graph)


def _run(lib, shape: str, how: str, create_graph: bool = False) -> dict:
    """Build ``shape``'s graph, instrument it as ``how`` says, run its backward; what was seen, and the gradients."""
    x, w, b = leaves = _leaves(lib)
    middle = None
    if how == "retain_grad":  # the shape built on a chain whose end retains its gradient
        middle = _chain(lib, x, 4)
        middle.retain_grad()
    roots = SHAPES[shape](lib, x if middle is None else middle, w, b)
    nodes = graph_nodes(roots)
    seen: list = []
    if how in ("every node hooked", "every third node hooked"):
        step = 1 if how == "every node hooked" else 3
        for k, fn in enumerate(nodes):
            if k % step == step - 1:
                fn.register_prehook(lambda grads, k=k: seen.append(k))
    elif how == "leaf hooks":
        for k, leaf in enumerate(leaves):
            leaf.register_post_accumulate_grad_hook(
                lambda p, k=k: seen.append((k, [v.grad is not None for v in leaves])))
    elif how == "will execute":
        other = (_leaves(lib)[0] * 2).grad_fn  # a node of another graph
        for leaf in leaves:
            leaf.register_hook(lambda g: seen.append(
                [lib._C._will_engine_execute_node(fn) for fn in nodes] + [lib._C._will_engine_execute_node(other)]))
    if how == "anomaly mode":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch warns that anomaly mode is on)
            with lib.autograd.detect_anomaly():
                _backward(lib, roots, create_graph)
    else:
        _backward(lib, roots, create_graph)
    return {"seen": seen, "grads": [v.grad for v in leaves] + ([middle.grad] if middle is not None else [])}


def _observed_order(shape: str) -> list:
    """tracegrad's node runs as an observer sees them (indices into the graph's nodes)."""
    x, w, b = _leaves(tg)
    roots = SHAPES[shape](tg, x, w, b)
    index = {fn: k for k, fn in enumerate(graph_nodes(roots))}
    seen: list = []  # (GraphRoot, which torch runs unseen, left out)
    unsubscribe = _events.subscribe(lambda kind, payload: seen.extend([index[payload["node"]]] if payload["node"] in
                                                                       index else []), ["node_executed"])
    try:
        _backward(tg, roots)
    finally:
        unsubscribe()
    return seen


def _torch_order(shape: str) -> list:
    return _run(torch, shape, "every node hooked")["seen"]


HOWS = ["plain", "every node hooked", "every third node hooked", "leaf hooks", "will execute", "retain_grad",
        "anomaly mode"]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_same_order_hooks_and_gradients_as_torch(shape, how):
    ours, theirs = _run(tg, shape, how), _run(torch, shape, how)
    assert ours["seen"] == theirs["seen"]
    assert len(ours["grads"]) == len(theirs["grads"])
    for g, t in zip(ours["grads"], theirs["grads"]):
        assert (g is None) == (t is None)
        if g is not None:
            np.testing.assert_allclose(to_numpy(g), to_numpy(t), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_observed_node_runs_in_torchs_order(shape):
    assert _observed_order(shape) == _torch_order(shape)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_array_loop_gives_the_general_loops_bits(shape):
    plain = _run(tg, shape, "plain")["grads"]
    general = _run(tg, shape, "plain", create_graph=True)["grads"]  # (dispatched rules, general loop only)
    for p, g in zip(plain, general):
        assert (p is None) == (g is None)
        if p is not None:
            assert_same_bits(p, g.detach())


def _will_execute_root_node(lib, how: str) -> list:
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    z = y.sin()
    loss, loss2 = z.sum(), (z * 3).sum()
    nodes = (loss.grad_fn, loss2.grad_fn, z.grad_fn, y.grad_fn)
    seen: list = []
    x.register_hook(lambda g: seen.append([lib._C._will_engine_execute_node(fn) for fn in nodes]))
    if how == "one root":
        loss.backward()
    elif how == "two roots":
        lib.autograd.backward([loss, loss2])
    elif how == "one root, inputs":
        lib.autograd.backward([loss], inputs=[x, y])
    else:
        lib.autograd.backward([loss, loss2], inputs=[x])
    return seen


@pytest.mark.parametrize("how", ["one root", "two roots", "one root, inputs", "two roots, inputs"])
def test_will_engine_execute_node_of_the_root(how):
    """With one root edge, PyTorch's graph root is that edge's node itself, which is not in its nodes_in_graph:
    _will_engine_execute_node says False for it (before: True)."""
    assert _will_execute_root_node(tg, how) == _will_execute_root_node(torch, how)
