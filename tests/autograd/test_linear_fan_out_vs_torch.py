"""A fused linear's three gradients handed out inside the engine's array loop (``array_chain._fan_out``).

Where the general loop's order is plain (nothing queued, no hooks, nobody observing), the array loop accumulates the
bias's gradient, runs the weight's TBackward0 and its leaf, and goes on with the input's node itself. These tests
run the same backward with an observer of node runs subscribed (which keeps the general loop) and without, and
compare every gradient's bits, and the values with PyTorch's; and they cover the graphs the shortcut must leave to
the general loop (a shared weight, hooks, an input that requires grad, an existing ``.grad``).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, to_numpy, torch

import tracegrad as tg
from tracegrad import _events
from tracegrad.autograd import array_chain


def _params(lib, sizes: tuple, shared: bool) -> list:
    rng = np.random.default_rng(7)
    layers = [(rng.standard_normal((o, i)).astype(np.float32) / 3, rng.standard_normal(o).astype(np.float32))
              for i, o in zip(sizes[:-1], sizes[1:])]
    params = [(lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)) for w, b in layers]
    if shared:  # the middle layer's weight is used twice
        params.insert(1, params[1])
    return params


def _backward(lib, case: str, calls: int = 1) -> list:
    sizes = (6, 5, 5, 3)
    params = _params(lib, sizes, case == "shared weight")
    rng = np.random.default_rng(8)
    x = lib.tensor(rng.standard_normal((7, 6)).astype(np.float32), requires_grad=case == "input requires grad")
    y = lib.tensor(rng.integers(0, 3, 7))
    if case == "weight hook":
        params[0][0].register_hook(lambda g: g * 2)
    for _ in range(calls):
        h = x
        for i, (w, b) in enumerate(params):
            h = lib.nn.functional.linear(h, w, b)
            if i < len(params) - 1:
                h = lib.relu(h)
        lib.nn.functional.cross_entropy(h, y).backward()
    grads = [p.grad for pair in params for p in pair]
    return grads + ([x.grad] if x.requires_grad else [])


_CASES = ["plain", "shared weight", "weight hook", "input requires grad"]


def _observed(fn):
    unsubscribe = _events.subscribe(lambda kind, payload: None, ["node_executed"])
    try:
        return fn()
    finally:
        unsubscribe()


@pytest.mark.parametrize("calls", [1, 2])
@pytest.mark.parametrize("case", _CASES)
def test_same_bits_as_the_general_loop_and_values_as_torch(case, calls):
    fast = _backward(tg, case, calls)
    general = _observed(lambda: _backward(tg, case, calls))
    assert len(fast) == len(general)
    for a, b in zip(fast, general):
        assert_same_bits(a, b)
    for a, b in zip(fast, _backward(torch, case, calls)):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-5, atol=1e-6)


def _fan_out_results(case: str, monkeypatch) -> list:
    results = []
    fan_out = array_chain._fan_out

    def spy(*args):
        results.append(fan_out(*args))
        return results[-1]

    monkeypatch.setattr(array_chain, "_fan_out", spy)
    _backward(tg, case)
    return results


def test_taken_for_a_plain_mlp_and_left_to_the_general_loop_otherwise(monkeypatch):
    plain = _fan_out_results("plain", monkeypatch)
    assert plain and all(r is not False for r in plain)
    for case in ("shared weight", "weight hook", "input requires grad"):
        assert False in _fan_out_results(case, monkeypatch), case


def test_gradients_are_adopted_not_copied():
    """Each leaf adopts its gradient's buffer, as from the general loop: a ``.grad`` owns its memory."""
    for g in _backward(tg, "plain"):
        assert g._data.base is None and g._base is None
