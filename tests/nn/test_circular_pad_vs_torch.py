"""``F.pad(mode="circular")`` as PyTorch computes it: a composite of slices and copies, so the same graph
(CopySlices over SliceBackward0, no node of its own), the same values where a negative pad crops one dim and
another dim wraps (PyTorch wraps the cropped tensor: tracegrad wrapped the original), the same gradients and the
same errors. Cases where PyTorch's result is not defined (uninitialized memory, overlapping copies) are left
out of the value comparison.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch


def _graph_names(t) -> list[str]:
    """The node names reachable from ``t.grad_fn``, breadth first (each node once)."""
    seen, order, queue = set(), [], [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node.name())
        queue.extend(fn for fn, _ in node.next_functions)
    return order


def _run(lib, data: np.ndarray, pad: tuple, grad: np.ndarray | None):
    x = lib.tensor(data, requires_grad=True)
    try:
        y = lib.nn.functional.pad(x, pad, mode="circular")
    except Exception as exc:  # noqa: BLE001 - the error is compared
        return ("error", type(exc).__name__, str(exc)), None, None
    y.backward(lib.tensor(grad if grad is not None and grad.shape == tuple(y.shape) else np.ones(tuple(y.shape))))
    return y.detach(), x.grad, _graph_names(y)


def _undefined_in_torch(shape: tuple, pad: tuple) -> bool:
    """Whether PyTorch's result is not defined by its algorithm: a dim's middle left empty by negative pads (the
    wraps read uninitialized memory), or a wrap whose source overlaps its destination (a negative pad on one side
    leaves less than the other side's pad: torch's copy_ of overlapping memory, whose result follows its vector
    loop)."""
    for i in range(len(pad) // 2):
        size, lo, hi = shape[len(shape) - 1 - i], pad[2 * i], pad[2 * i + 1]
        if size + min(lo, 0) + min(hi, 0) <= 0 or (lo < 0 and size + lo < hi) or (hi < 0 and size + hi < lo):
            return True
    return False


def _cases():
    rng = np.random.default_rng(20)
    cases = []
    for k, batch in itertools.product((1, 2, 3), (1, 2)):
        for _ in range(14):
            shape = tuple(int(s) for s in rng.integers(1, 4, batch)) + tuple(int(s) for s in rng.integers(1, 6, k))
            pad = []
            for i in range(k):
                size = shape[-1 - i]
                pad += [int(rng.integers(-size, size + 2)), int(rng.integers(-size, size + 2))]
            cases.append((shape, tuple(pad)))
    return cases


@pytest.mark.parametrize(("shape", "pad"), _cases())
def test_circular_pad_as_in_torch(shape, pad):
    rng = np.random.default_rng(abs(hash((shape, pad))) % 2**32)
    data = rng.standard_normal(shape)
    out_shape = list(shape)
    for i in range(len(pad) // 2):
        out_shape[-1 - i] += pad[2 * i] + pad[2 * i + 1]
    grad = rng.standard_normal(out_shape) if min(out_shape) > 0 else None
    expected, got = _run(torch, data, pad, grad), _run(tg, data, pad, grad)
    if isinstance(expected[0], tuple):
        assert got[0] == expected[0]
        return
    assert not isinstance(got[0], tuple), got[0]
    assert got[2] == expected[2]  # (the graph: CopySlices and slices, as torch builds it)
    if _undefined_in_torch(shape, pad):
        return
    assert_same_bits(got[0], expected[0])
    assert_same_bits(got[1], expected[1])


def test_negative_pad_crops_before_another_dim_wraps():
    x = np.arange(10.0).reshape(1, 1, 2, 5)
    for pad in [(-1, 2, 0, -1), (1, -1, -1, 1)]:
        assert_same_bits(tg.nn.functional.pad(tg.tensor(x), pad, mode="circular"),
                         torch.nn.functional.pad(torch.tensor(x), pad, mode="circular"))


def test_circular_conv_trains_as_in_torch():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 3, 5, 6)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    results = []
    for lib in (torch, tg):
        conv = lib.nn.Conv2d(3, 4, 3, padding=2, padding_mode="circular", bias=False)
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(w))
        xt = lib.tensor(x, requires_grad=True)
        out = conv(xt)
        out.square().sum().backward()
        results.append((out.detach(), xt.grad, conv.weight.grad))
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("shape", "pad"), [((2, 3, 5), (2, 1)), ((1, 2, 4, 5), (1, 2, 3, 0)), ((3, 4, 2), (0, 2)),
                                            ((1, 1, 2, 3, 4), (1, 1, 2, 0, 1, 2)), ((2, 3, 5), (5, 3))])
def test_circular_pad_without_a_graph_as_in_torch(shape, pad):
    """No graph to record and no negative pad: one gather, the same values (and errors) as torch's composite."""
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    outcomes = []
    for lib in (torch, tg):
        with lib.no_grad():
            try:
                outcomes.append(lib.nn.functional.pad(lib.tensor(data, requires_grad=True), pad, mode="circular"))
            except RuntimeError as exc:
                outcomes.append(str(exc))
    if isinstance(outcomes[0], str):
        assert outcomes[1] == outcomes[0]
    else:
        assert_same_bits(outcomes[1], outcomes[0])
        assert outcomes[1].grad_fn is None
