"""Area A of seed 004: the ``backward()`` / ``autograd.grad()`` calling API.

Covers multiple and dependent roots, ``inputs=`` (leaf, 0-d, non-leaf, unreachable),
``allow_unused``, ``materialize_grads``, ``is_grads_batched``, sharded backward, and the
errors raised for bad calls.

Skipped seed tests:
- ``test_calculate_shape_util``: inventory N; it exercises nested tensors through the private
  ``torch.autograd._calculate_shape`` helper.

Oracle notes (PyTorch 2.13 differs from the seed text; the oracle wins):
- ``autograd.grad(out, [])`` raises ``RuntimeError("`inputs` argument to `grad()` cannot be
  empty.")`` where the seed expected ``ValueError("grad requires non-empty inputs.")``.
- ``nextafter`` now has a derivative, so ``test_not_implemented_grad`` uses ``igamma`` (its
  derivative w.r.t. ``input`` is still not implemented).
"""

from __future__ import annotations

import warnings

import pytest
from _lib import assert_close, np, run_both, tg


def _data(shape, seed, low=-1.0, high=1.0):
    """Deterministic float data as nested lists, so both libraries see the same numbers."""
    return np.random.default_rng(seed).uniform(low, high, size=shape).tolist()


def _leaf(lib, shape, seed, dtype=None, requires_grad=True, low=-1.0, high=1.0):
    return lib.tensor(_data(shape, seed, low, high), dtype=dtype or lib.float32, requires_grad=requires_grad)


def test_backward():
    """backward(gradient) on a leaf copies the gradient; on a graph it applies the chain rule."""
    def program(lib):
        v = _leaf(lib, (3, 3), 0)
        x = _leaf(lib, (3, 3), 1)
        y = _leaf(lib, (3, 3), 2, low=0.5, high=1.5)
        z = _leaf(lib, (3, 3), 3)
        go = lib.tensor(_data((3, 3), 4))
        v.backward(go)
        a = x + (y * z) + 4 * z**2 * x / y
        a.backward(go)
        return v.grad, x.grad, y.grad, z.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    x, y, z, go = (np.array(_data((3, 3), s, *r)) for s, r in
                   ((1, (-1, 1)), (2, (0.5, 1.5)), (3, (-1, 1)), (4, (-1, 1))))
    assert_close(ours[0], go)
    assert_close(ours[1], (4 * z**2 / y + 1) * go, rtol=1e-4)
    assert_close(ours[2], (z - 4 * x * z**2 / y**2) * go, rtol=1e-4)
    assert_close(ours[3], (8 * x * z / y + y) * go, rtol=1e-4)


def test_multi_backward():
    """autograd.backward over several roots sums contributions through a shared subgraph."""
    def program(lib):
        x, y, q, a, b = (_leaf(lib, (2, 3), s) for s in range(5))
        q2 = q * 2
        z = x + y + q2
        c = a * b + q2
        gz, gc = lib.tensor(_data((2, 3), 10)), lib.tensor(_data((2, 3), 11))
        lib.autograd.backward([z, c], [gz, gc])
        return x.grad, y.grad, a.grad, b.grad, q.grad, (gc + gz) * 2, gc * b, gc * a

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours[4], ours[5])
    assert_close(ours[2], ours[6])
    assert_close(ours[3], ours[7])


def test_multi_backward_no_grad():
    """A root that neither requires grad nor has a grad_fn is an error, named by its position."""
    x = tg.ones(2, 2, requires_grad=True)
    y = tg.ones(2, 2)
    z = x + y
    q = y * 2
    with pytest.raises(RuntimeError,
                       match="element 1 of tensors does not require grad and does not have a grad_fn"):
        tg.autograd.backward([z, q], [tg.ones(2, 2), tg.ones(2, 2)])


def test_backward_with_inputs():
    """backward(inputs=...) accumulates only into the listed tensors; a bare tensor is accepted."""
    def program(lib):
        x = _leaf(lib, (2, 2), 0, dtype=lib.float64)
        y = _leaf(lib, (2, 2), 1, dtype=lib.float64)

        def fn():
            return x**2 + y * x + y**2

        gradient = lib.ones(2, 2, dtype=lib.float64)
        results = []
        for inputs in ([x, y], [x], [y], y):
            if x.grad is not None:
                with lib.no_grad():
                    x.grad.zero_()
                    y.grad.zero_()
            lib.autograd.backward(fn(), gradient, inputs=inputs)
            results.append((x.grad.clone(), y.grad.clone()))
        with pytest.raises(RuntimeError, match="cannot be empty"):
            lib.autograd.backward(fn(), gradient, inputs=[])
        return results, 2 * x + y, x + 2 * y

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    (both, only_x, only_y, only_y_bare), gx, gy = ours
    zeros = np.zeros((2, 2))
    assert_close(both, (gx, gy))
    assert_close(only_x, (gx, zeros))
    assert_close(only_y, (zeros, gy))
    assert_close(only_y_bare, (zeros, gy))


def test_backward_with_scalar_input():
    """A 0-d tensor can be passed directly as inputs= of Tensor.backward."""
    def program(lib):
        x = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
        (x**2).backward(inputs=x)
        return x.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours, 1.4)


def test_backward_with_nonleaf_inputs():
    """A non-leaf in inputs= gets .grad populated; an unreachable input keeps .grad None."""
    def program(lib):
        x = _leaf(lib, (2, 2), 0, dtype=lib.float64)
        x_nonleaf = x * 1
        y = _leaf(lib, (2, 2), 1, dtype=lib.float64)
        z = _leaf(lib, (2, 2), 2, dtype=lib.float64)
        out = x_nonleaf**2 + y * x_nonleaf + y**2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # backward(create_graph=True) warns about cycles
            out.backward(lib.ones(2, 2, dtype=lib.float64), create_graph=True, inputs=[x, y, x_nonleaf])
            grads = (x.grad.detach(), y.grad.detach(), x_nonleaf.grad.detach())
            # backward has no allow_unused flag: an input outside the graph is simply left alone
            out.backward(lib.ones(2, 2, dtype=lib.float64), create_graph=True, inputs=[z])
        z_grad = z.grad
        expected = ((2 * x + y).detach(), (x + 2 * y).detach(), (2 * x_nonleaf + y).detach())
        x.grad = y.grad = x_nonleaf.grad = None  # break the grad <-> graph cycle
        return grads, expected, z_grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours[0], ours[1])
    assert ours[2] is None


def test_dependent_backward():
    """Roots may depend on each other: y and z = y**3 both contribute to x.grad."""
    def program(lib):
        x = _leaf(lib, (4,), 0)
        y = x**2
        z = y**3
        go_y, go_z = lib.tensor(_data((4,), 1)), lib.tensor(_data((4,), 2))
        lib.autograd.backward([y, z], [go_y, go_z])
        return x.grad, (2 * x * go_y + 6 * x.pow(5) * go_z).detach()

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours[0], ours[1])


def test_duplicate_backward_root():
    """The same root passed twice gets both of its gradients summed."""
    def program(lib):
        a, b = _leaf(lib, (2, 3), 0), _leaf(lib, (2, 3), 1)
        x = a * b
        go = lib.tensor(_data((2, 3), 2))
        lib.autograd.backward([x, x], [go, go])
        return a.grad, b.grad, (b * go * 2).detach(), (a * go * 2).detach()

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours[0], ours[2])
    assert_close(ours[1], ours[3])


def test_backward_no_grad():
    """A None gradient for a non-scalar root cannot be created implicitly."""
    a = tg.ones(2, 2, requires_grad=True)
    b = a + 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        tg.autograd.backward([b], [None])


def test_backward_badcalls():
    """backward() on a tensor that does not require grad raises PyTorch's message."""
    x = tg.ones(1)
    with pytest.raises(RuntimeError,
                       match="element 0 of tensors does not require grad and does not have a grad_fn"):
        x.backward()


def test_grad_badcalls():
    """grad() raises when the output does not require grad; it works once the input does."""
    x = tg.ones(1)
    y = x**2
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.autograd.grad(x, y)
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.autograd.grad(y, x)
    x = tg.ones(1, requires_grad=True)
    (g,) = tg.autograd.grad(x**2, x)
    assert_close(g, np.array([2.0]))


def test_grad_empty_inputs():
    """grad() with an empty inputs list is rejected (PyTorch 2.13 wording and type)."""
    x = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"`inputs` argument to `grad\(\)` cannot be empty\."):
        tg.autograd.grad(2 * x, [], grad_outputs=tg.tensor([1.0]))


def test_grad_unreachable():
    """allow_unused=True returns None for unreachable inputs; without it grad() raises."""
    x = tg.ones(1, requires_grad=True)
    y = tg.ones(1, requires_grad=True)
    # give both leaves a grad accumulator before asking for an unrelated gradient
    _z = x * 2
    _w = y * 2
    grad_x, grad_y = tg.autograd.grad(x * 2, [x, y], allow_unused=True)
    assert_close(grad_x, np.array([2.0]))
    assert grad_y is None

    # z has never been used in any graph at all
    z = tg.ones(1, requires_grad=True)
    grad_x, grad_z = tg.autograd.grad(x * 2, [x, z], allow_unused=True)
    assert_close(grad_x, np.array([2.0]))
    assert grad_z is None

    with pytest.raises(RuntimeError, match="appears to not have been used in the graph. "
                                           "Set allow_unused=True if this is the desired behavior."):
        tg.autograd.grad(x * 2, [x, y], allow_unused=False)


def test_grad_unreachable_discovery():
    """Nodes that cannot reach any requested input are never executed."""
    class MustNotRun(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            raise AssertionError("this node should not be executed")

    x = MustNotRun.apply(tg.ones(1, requires_grad=True) * 2)
    y = tg.ones(1, requires_grad=True)
    (gy,) = tg.autograd.grad(x, (y,), allow_unused=True)
    assert gy is None

    x = MustNotRun.apply(tg.ones(1, requires_grad=True) * 2)
    y = tg.ones(1, requires_grad=True)
    z = tg.ones(1, requires_grad=True)
    gy, gz = tg.autograd.grad(x + z, (y, z), allow_unused=True)
    assert gy is None
    assert_close(gz, np.array([1.0]))

    x = MustNotRun.apply(tg.ones(1, requires_grad=True) * 2)
    y = tg.ones(1, requires_grad=True)
    tg.autograd.backward(x, inputs=(y,))  # allow_unused is implicitly True for backward
    assert y.grad is None


def test_grad_batched_grad():
    """is_grads_batched=True treats dim 0 of grad_outputs as a batch; shape mismatches raise."""
    def program(lib):
        x = _leaf(lib, (2, 2), 0)
        out = x.clone()
        batched = lib.arange(3).expand(2, 2, 3).transpose(0, 2)  # shape (3, 2, 2)
        (g1,) = lib.autograd.grad(out, (x,), (batched,), is_grads_batched=True)
        with pytest.raises(RuntimeError, match="If `is_grads_batched=True`, we interpret the first"):
            lib.autograd.grad(outputs=out, grad_outputs=(lib.ones(2, 2),), inputs=(x,), is_grads_batched=True)
        out = x.sum()
        (g2,) = lib.autograd.grad(out, (x,), (lib.arange(3),), is_grads_batched=True)
        # a size-1 trailing dim is not the same as a scalar output
        with pytest.raises(RuntimeError, match="If `is_grads_batched=True`, we interpret the first"):
            lib.autograd.grad(outputs=out, grad_outputs=(lib.ones(2).unsqueeze(1),), inputs=(x,),
                              is_grads_batched=True)
        return g1, g2, g1.dtype == x.dtype

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    expected = np.broadcast_to(np.arange(3.0)[:, None, None], (3, 2, 2))
    assert_close(ours[0], expected)
    assert_close(ours[1], expected)
    assert ours[2] is True


def test_grad_nonleaf_many_outputs():
    """grad() w.r.t. two outputs of one node captures both; the leaf's hooks and .grad stay untouched."""
    def program(lib):
        x = _leaf(lib, (4, 2), 0)
        a, b = x.chunk(2)
        called = []
        x.register_hook(lambda g: called.append("x"))
        go = lib.tensor(_data((2, 2), 1))
        grad_a, grad_b = lib.autograd.grad(a + 2 * b, [a, b], grad_outputs=go, create_graph=True)
        return grad_a, grad_b, go * 2, called, x.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours[1], ours[2])
    assert ours[3] == []
    assert ours[4] is None


def test_grad_materialize_grads():
    """materialize_grads=True turns None into zeros, implies allow_unused, and rejects allow_unused=False."""
    x = tg.tensor(0.5, requires_grad=True)
    a = tg.tensor(1.0, requires_grad=True)
    y = x * a
    dydx = tg.autograd.grad(y, x, create_graph=True)
    d2_none = tg.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
    d2 = tg.autograd.grad(dydx, x, create_graph=True, allow_unused=True, materialize_grads=True)
    d3 = tg.autograd.grad(d2, x, materialize_grads=True)  # allow_unused implied
    assert d2_none[0] is None
    assert d2[0].item() == 0
    assert d3[0].item() == 0
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed when"):
        tg.autograd.grad(y, x, allow_unused=False, materialize_grads=True)


def test_sharded_grad():
    """grad() to intermediates in shards, then backward(intermediates, grads) finishes the pass."""
    def program(lib):
        leaves = [lib.zeros(2, 2, requires_grad=True) for _ in range(5)]
        inter = [leaf * i + leaf * leaf for i, leaf in enumerate(leaves)]
        loss = sum(v * i for i, v in enumerate(inter)).sum()
        # no retain_graph: each shard executes different Mul nodes, shared nodes save no tensors
        d_inter = []
        for start in range(0, len(inter), 2):
            d_inter.extend(lib.autograd.grad(loss, inter[start:start + 2]))
        lib.autograd.backward(inter, d_inter)
        return [leaf.grad for leaf in leaves]

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    for i, g in enumerate(ours):
        assert_close(g, np.full((2, 2), float(i * i)))


def test_not_implemented_grad():
    """An op without a derivative formula raises NotImplementedError at backward time."""
    a = tg.tensor([1.5, 2.0], requires_grad=True)
    other = tg.tensor([1.0, 1.0])
    y = tg.igamma(a, other).sum()
    with pytest.raises(NotImplementedError, match="the derivative for .* is not implemented"):
        y.backward()


def test_isolated_node():
    """An integer-valued branch (argmax indices) inside the graph does not break backward."""
    def program(lib):
        x = _leaf(lib, (3, 3), 0)
        y = _leaf(lib, (3, 3), 1)
        a = x + y
        b = lib.max(a, 1, True)[1].repeat(1, 3).double()
        o = (b + a).sum()
        o.backward()
        return x.grad, y.grad, b.requires_grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours[0], np.ones((3, 3)))
    assert ours[2] is False
