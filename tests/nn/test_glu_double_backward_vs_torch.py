"""GLU's backward is PyTorch's native ``glu_backward`` operator: with ``create_graph=True`` its node is
``GluBackwardBackward0`` (saving grad_output, self and the unwrapped dim), whose gradients are FunctionsManual's
``glu_double_backward`` and ``glu_double_backward_grad_output`` operator for operator; the first backward keeps
the kernel's float32 bits whether or not a graph is recorded.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

CASES = [((3, 4), -1), ((4, 6), 0), ((2, 6, 3), 1), ((8,), 0), ((2, 3, 4), -3)]


def _graph(node, depth: int):
    """A node's name and, ``depth`` levels down, its next functions' (None where an input has no gradient)."""
    if node is None:
        return None
    if depth == 0:
        return node.name()
    return node.name(), tuple(_graph(n, depth - 1) for n, _ in node.next_functions)


def _inputs(shape: tuple, dim: int, dtype=np.float64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2
    half = list(shape)
    half[dim] //= 2
    return x.astype(dtype), rng.standard_normal(half).astype(dtype)


def _second_order(lib, x: np.ndarray, g: np.ndarray, dim: int, g_requires_grad: bool = True):
    """glu's gradient with a graph, and that gradient's own gradients (for x and, where it has one, g)."""
    leaf = lib.tensor(x, requires_grad=True)
    grad_out = lib.tensor(g, requires_grad=g_requires_grad)
    (gx,) = lib.autograd.grad(lib.nn.functional.glu(leaf, dim), leaf, grad_out, create_graph=True)
    weight = lib.tensor(np.linspace(-1.5, 2.0, x.size).reshape(x.shape).astype(x.dtype))
    wrt = [leaf, grad_out] if g_requires_grad else [leaf]
    seconds = lib.autograd.grad((gx * weight).sum(), wrt, create_graph=True)
    return leaf, grad_out, gx, seconds


@pytest.mark.parametrize(("shape", "dim"), CASES)
def test_double_backward_node_is_torchs(shape: tuple, dim: int) -> None:
    x, g = _inputs(shape, dim)
    (leaf, grad_out, gx, seconds), (t_leaf, t_grad_out, t_gx, t_seconds) = (
        _second_order(lib, x, g, dim) for lib in (tg, torch))
    assert gx.grad_fn.name() == "GluBackwardBackward0"
    assert _graph(gx.grad_fn, 2) == _graph(t_gx.grad_fn, 2)
    node, t_node = gx.grad_fn, t_gx.grad_fn
    assert node._saved_dim == t_node._saved_dim  # (unwrapped: -1 reads 2**64 - 1 in both)
    assert node._saved_grad_output is grad_out and t_node._saved_grad_output is t_grad_out
    assert node._saved_self is leaf and t_node._saved_self is t_leaf
    # the third order's graph: FunctionsManual's narrow/sigmoid/mul/cat formulas
    for ours, theirs in zip(seconds, t_seconds):
        assert _graph(ours.grad_fn, 4) == _graph(theirs.grad_fn, 4)


@pytest.mark.parametrize(("shape", "dim"), CASES)
def test_second_and_third_derivatives_are_torchs(shape: tuple, dim: int) -> None:
    x, g = _inputs(shape, dim, seed=1)
    ours, theirs = (_second_order(lib, x, g, dim) for lib in (tg, torch))
    np.testing.assert_allclose(ours[2].detach().numpy(), theirs[2].detach().numpy(), rtol=1e-14, atol=1e-15)
    for a, b in zip(ours[3], theirs[3]):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)
    thirds = [lib.autograd.grad(sum(s.sum() for s in r[3]), [r[0], r[1]]) for lib, r in ((tg, ours), (torch, theirs))]
    for a, b in zip(*thirds):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


def test_grad_output_without_gradient() -> None:
    """Only x needs a gradient: the node's first edge is None, and no grad_output gradient is formed."""
    x, g = _inputs((3, 4), 1)
    results = [_second_order(lib, x, g, 1, g_requires_grad=False) for lib in (tg, torch)]
    assert _graph(results[0][2].grad_fn, 1) == _graph(results[1][2].grad_fn, 1) == (
        "GluBackwardBackward0", (None, "torch::autograd::AccumulateGrad"))
    np.testing.assert_allclose(results[0][3][0].detach().numpy(), results[1][3][0].detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize(("shape", "dim"), CASES)
def test_gradgradcheck(shape: tuple, dim: int) -> None:
    x, g = _inputs(shape, dim, seed=2)
    leaf = tg.tensor(x, requires_grad=True)
    assert tg.autograd.gradgradcheck(lambda t: tg.nn.functional.glu(t, dim), (leaf,))
    grad_out = tg.tensor(g, requires_grad=True)
    assert tg.autograd.gradgradcheck(lambda go, t: tg.ops.aten.glu_backward(go, t, dim), (grad_out, leaf))


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(("shape", "dim"), [((64, 126), -1), ((64, 126), 0), ((4, 6, 8), 1), ((3, 70), 1)])
def test_float32_first_backward_bits_with_and_without_graph(shape: tuple, dim: int, create_graph: bool) -> None:
    x, g = _inputs(shape, dim, np.float32, seed=3)
    grads = []
    for lib in (tg, torch):
        leaf = lib.tensor(x * 4, requires_grad=True)
        (gx,) = lib.autograd.grad(lib.nn.functional.glu(leaf, dim), leaf, lib.tensor(g), create_graph=create_graph)
        grads.append(gx)
    assert_same_bits(*grads)
    assert (grads[0].grad_fn is None) == (not create_graph)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_aten_glu_backward_is_exposed_with_torchs_bits(dtype) -> None:
    """float32 and float16 bit for bit; float64's sigmoid is NumPy's exp (Sleef's exp_u10 in PyTorch's vector
    code), an ulp off at places."""
    x, g = _inputs((5, 40), 1, dtype, seed=4)
    results = [lib.ops.aten.glu_backward(lib.tensor(g), lib.tensor(x), -1) for lib in (tg, torch)]
    if dtype == np.float64:
        np.testing.assert_allclose(results[0].numpy(), results[1].numpy(), rtol=1e-15)
    else:
        assert_same_bits(*results)
    assert tuple(results[0].stride()) == tuple(results[1].stride())


REFUSED = {  # (grad_output, self, dim) that ATen's glu_backward refuses, and how
    "grad_output_of_another_dtype": (np.ones((2, 2), np.float32), np.ones((2, 4)), 1),
    "integral_self": (np.ones((2, 2), np.int64), np.ones((2, 4), np.int64), 1),
    "bool_self": (np.ones((2, 2), bool), np.ones((2, 4), bool), 1),
    "complex_self": (np.ones((2, 2), complex), np.ones((2, 4), complex), 1),
    "zero_dim_self": (np.array(1.0), np.array(1.0), 0),
    "odd_halving_dim": (np.ones((2, 1)), np.ones((2, 3)), 1),
    "dim_out_of_range": (np.ones((2, 2)), np.ones((2, 4)), 5),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_aten_glu_backward_refuses_what_torch_refuses(case: str) -> None:
    g, x, dim = REFUSED[case]
    errors = []
    for lib in (tg, torch):
        with pytest.raises(Exception) as info:
            lib.ops.aten.glu_backward(lib.tensor(g), lib.tensor(x), dim)
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]
