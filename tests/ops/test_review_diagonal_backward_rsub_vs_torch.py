"""Review of the double-backward graph commits (17f6b2f, 5b46413): ``diagonal_backward`` called as an operator
refuses what ATen's refuses, in its words; its empty results keep PyTorch's contiguous strides through views; and
rsub's alpha gradient negates first, as sub's (NegBackward0 under MulBackward1)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import double_backward, graph_with_edges, tg, torch


def _outcome(fn, lib):
    try:
        out = fn(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return tuple(out.shape), tuple(out.stride()), out.detach().numpy().tobytes()


BAD_CALLS = {
    "identical_dims": lambda L: L.ops.aten.diagonal_backward(L.ones(3), [3, 3], 0, 0, 0),
    "identical_dims_negative": lambda L: L.ops.aten.diagonal_backward(L.ones(3), [3, 3], 0, 0, -2),
    "gradient_too_long": lambda L: L.ops.aten.diagonal_backward(L.ones(4), [3, 3], 0, 0, 1),
    "gradient_more_dims": lambda L: L.ops.aten.diagonal_backward(L.ones(1, 3), [3, 4], 0, 0, 1),
    "gradient_broadcast": lambda L: L.ops.aten.diagonal_backward(L.ones(1), [3, 4], 1, 1, 0),
    "negative_size": lambda L: L.ops.aten.diagonal_backward(L.ones(3), [-3, 4], 0, 0, 1),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_diagonal_backward_refuses_as_torch(name):
    assert _outcome(BAD_CALLS[name], tg) == _outcome(BAD_CALLS[name], torch)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3)])
def test_empty_diagonal_gradient_strides_through_views(shape):
    def fn(L):
        x = L.zeros(shape, dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(x.transpose(0, 1).diagonal(), x, L.zeros(0, *shape[2:], dtype=L.float64).mT
                               if len(shape) == 3 else L.zeros(0, dtype=L.float64))
        return g
    assert _outcome(fn, tg) == _outcome(fn, torch)


RSUBS = {
    "tensor": lambda L, x: L.rsub(x.sin(), x * x, alpha=-1.5),
    "tensor_complex_alpha": lambda L, x: L.rsub(x.sin().to(L.complex128), x * x, alpha=2 - 1j),
    "scalar": lambda L, x: L.rsub(x.sin(), 2.0, alpha=3),
}


def _rsub_outcome(lib, name: str):
    gradients = double_backward(lib, RSUBS[name])
    return graph_with_edges(gradients[0].grad_fn), [t.detach().numpy() for t in gradients]


@pytest.mark.parametrize("name", RSUBS)
def test_rsub_alpha_gradient_negates_first(name):
    (graph, values), (graph_th, values_th) = _rsub_outcome(tg, name), _rsub_outcome(torch, name)
    assert graph == graph_th
    for ours, theirs in zip(values, values_th, strict=True):
        if name == "tensor_complex_alpha":  # (tracegrad's complex products are not torch's bit for bit)
            np.testing.assert_allclose(ours, theirs, rtol=1e-14)
        else:
            assert ours.tobytes() == theirs.tobytes()
