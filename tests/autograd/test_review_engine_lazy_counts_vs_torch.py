"""Review of the lazily counted dependencies (engine._lazy_counts), the array loop's shortcuts and
``_will_engine_execute_node`` of the root's own node, against torch: graphs of one-edge chains mixed with custom
Functions (several outputs used partly, None gradients, once_differentiable, non-differentiable outputs,
materialize_grads off), hooks that change gradients, multi-grad hooks that include the root, retain_graph re-runs,
checkpoints, an error raised mid-chain and the second backward after it, and a deep chain whose first node with
several edges is at its bottom. Order of node runs (pre hooks on every node, or an observer of node runs for
tracegrad), gradients and errors as torch's.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import graph_nodes, to_numpy, torch

import tracegrad as tg
from tracegrad import _events


def _chain(lib, h, n: int = 6):
    ops = (lib.sin, lambda v: v * 0.9, lambda v: v + 0.1, lib.tanh, lib.exp, lambda v: v * 0.8)
    for i in range(n):
        h = ops[i % len(ops)](h)
    return h


def _leaf(lib, seed: int = 0, shape: tuple = (5,)):
    return lib.tensor(np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32), requires_grad=True)


def _functions(lib):
    class TwoOut(lib.autograd.Function):  # two outputs (often one used), a None gradient for its second input
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x)
            return x * x, x + y

        @staticmethod
        def backward(ctx, g1, g2):
            x, = ctx.saved_tensors
            return 2 * x * g1 + g2, None

    class Once(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            return g * 3

    class NonDiff(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = (x > 0).long()
            ctx.mark_non_differentiable(idx)
            return x * 2, idx

        @staticmethod
        def backward(ctx, g, gi):
            return g * 2

    class Unmaterialized(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            assert g1 is None or g2 is None
            return g2 if g1 is None else g1

    return TwoOut, Once, NonDiff, Unmaterialized


def _custom_functions(lib, log):
    TwoOut, Once, NonDiff, Unmaterialized = _functions(lib)
    x, y = _leaf(lib), _leaf(lib, 1)
    a, b = TwoOut.apply(_chain(lib, x), y)
    h, _ = NonDiff.apply(Once.apply(_chain(lib, b, 4)))
    _, q = Unmaterialized.apply(_chain(lib, h, 3))
    return [_chain(lib, q).sum()], [x, y]


def _hooks_changing_gradients(lib, log):
    x = _leaf(lib)
    h = _chain(lib, x, 3)
    h.register_hook(lambda g: g * 2)
    h2 = _chain(lib, h, 3)
    h2.grad_fn.register_prehook(lambda g: (g[0] - 1,))
    h3 = _chain(lib, h2, 3)
    h3.grad_fn.register_hook(lambda gi, go: tuple(None if g is None else g * 0.5 for g in gi))
    x.register_hook(lambda g: g + 1)
    return [_chain(lib, h3, 3).sum()], [x]


def _multi_grad_hook_with_root(lib, log):
    x, y = _leaf(lib), _leaf(lib, 1)
    a = _chain(lib, x, 3)
    loss = (_chain(lib, a, 3) * y).sum()
    # (the root's own node is not in torch's nodes_in_graph: "all" fires without waiting for ``a``)
    lib.autograd.graph.register_multi_grad_hook((loss, a), lambda gs: log.append([g is not None for g in gs]))
    return [loss], [x, y]


def _checkpoints(lib, log):
    x, w = _leaf(lib), _leaf(lib, 1)
    h = _chain(lib, x, 3)
    h = lib.utils.checkpoint.checkpoint(lambda v: _chain(lib, v * w, 4), h, use_reentrant=True)
    h = lib.utils.checkpoint.checkpoint(lambda v: _chain(lib, v * w, 4), _chain(lib, h, 3), use_reentrant=False)
    return [_chain(lib, h, 2).sum()], [x, w]


def _several_roots_sharing(lib, log):
    x, w = _leaf(lib), _leaf(lib, 1)
    h = _chain(lib, x) * w
    return [_chain(lib, h, 3).sum(), (_chain(lib, h, 2) * w).sum(), h.sum()], [x, w]


GRAPHS = {"custom functions": _custom_functions, "hooks changing gradients": _hooks_changing_gradients,
          "multi-grad hook with the root": _multi_grad_hook_with_root, "checkpoints": _checkpoints,
          "several roots sharing a subgraph": _several_roots_sharing}


def _run(lib, graph: str, how: str) -> tuple:
    log: list = []
    roots, leaves = GRAPHS[graph](lib, log)
    nodes = graph_nodes(roots)
    unsubscribe = None
    if how == "pre hooks" or (how == "observer" and lib is torch):
        for k, fn in enumerate(nodes):
            fn.register_prehook(lambda grads, k=k, fn=fn: log.append((k, fn.name())))
    elif how == "observer":
        index = {fn: k for k, fn in enumerate(nodes)}
        unsubscribe = _events.subscribe(
            lambda kind, p: log.append((index[p["node"]], p["node"].name())) if p["node"] in index else None,
            ["node_executed"])
    try:
        lib.autograd.backward(roots, retain_graph=True)
        first = [to_numpy(v.grad) for v in leaves]
        lib.autograd.backward(roots)  # (again: the retained graph, then freed)
    finally:
        if unsubscribe is not None:
            unsubscribe()
    return log, first + [to_numpy(v.grad) for v in leaves]


@pytest.mark.parametrize("how", ["plain", "pre hooks", "observer"])
@pytest.mark.parametrize("graph", list(GRAPHS))
def test_order_and_gradients_as_torch(graph, how):
    (ours, our_grads), (theirs, their_grads) = _run(tg, graph, how), _run(torch, graph, how)
    assert ours == theirs
    for g, t in zip(our_grads, their_grads):
        assert (g is None) == (t is None)
        if g is not None:
            np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)


def _error_mid_chain(lib) -> list:
    class Boom(lib.autograd.Function):
        calls = 0

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            Boom.calls += 1
            if Boom.calls == 1:
                raise ValueError("boom")
            return g * 2

    x = _leaf(lib)
    h = _chain(lib, x, 4)
    loss = _chain(lib, Boom.apply(h) * h, 4).sum()
    seen = []
    for retain in (False, True):  # the nodes run before the error freed their saved tensors
        try:
            loss.backward(retain_graph=retain)
        except (ValueError, RuntimeError) as exc:
            seen.append((type(exc).__name__, str(exc).split(".")[0]))
        seen.append(None if x.grad is None else to_numpy(x.grad).tolist())
    return seen


def test_error_mid_chain_then_second_backward_as_torch():
    assert _error_mid_chain(tg) == _error_mid_chain(torch)


def test_deep_chain_counted_from_its_bottom():
    """100,000 one-edge nodes, then the first node with several edges (its input is also the chain's start): the
    counts are made there, without recursion, and the saved tensors of the chain are freed."""
    x = tg.tensor([0.5], dtype=tg.float64, requires_grad=True)
    c = tg.tensor([1.000001], dtype=tg.float64)
    start = x * 1.0
    y = start
    for _ in range(100_000):
        y = y * c  # (saves c)
    middle = y.grad_fn
    for _ in range(50_000):
        middle = middle.next_functions[0][0]
    (y * start).sum().backward()
    expected = 2 * 0.5 * 1.000001 ** 100_000
    np.testing.assert_allclose(to_numpy(x.grad), [expected], rtol=1e-9)
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        middle._saved_other
