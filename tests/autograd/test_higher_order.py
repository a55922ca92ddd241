"""Area B of seed 004: ``retain_graph``, ``create_graph`` and higher-order gradients.

Covers Hessian-vector products through ``backward(create_graph=True)`` and ``grad(create_graph=True)``,
gradient ascent on non-leaves, the freeing of saved tensors after a backward without
``retain_graph`` (and that nodes saving nothing can be re-run), the ``create_graph`` warning of
``backward()``, and double backward through custom Functions.

No seed test of this area is skipped.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import assert_close, np, run_both, tg
from _lib import to_numpy as to_np

SECOND_TIME = r"Trying to backward through the graph a second time.*Specify retain_graph=True"


def _data(shape, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).tolist()


def _leaf(lib, shape, seed, dtype=None):
    return lib.tensor(_data(shape, seed), dtype=dtype or lib.float32, requires_grad=True)


def _quiet_backward(t, *args, **kwargs):
    """Tensor.backward(create_graph=True) warns about a reference cycle; these tests expect it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t.backward(*args, **kwargs)


def test_hessian_vector():
    """backward(create_graph=True) leaves differentiable .grad; a second backward adds the HVP."""
    def program(lib):
        x, y = _leaf(lib, (2, 2), 0), _leaf(lib, (2, 2), 1)
        z = x**2 + y * x + y**2
        _quiet_backward(z, lib.ones(2, 2), create_graph=True)
        first = (x.grad.detach().clone(), y.grad.detach().clone())
        with lib.no_grad():
            expected_first = (2 * x + y, x + 2 * y)
        grad_sum = 2 * x.grad + y.grad
        grad_sum.backward(lib.ones(2, 2))
        second = (x.grad.detach().clone(), y.grad.detach().clone())
        x.grad = y.grad = None
        return first, expected_first, second, grad_sum.requires_grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    first, expected_first, second, differentiable = ours
    assert differentiable is True
    assert_close(first, expected_first)
    # d/dx (2 (2x + y) + (x + 2y)) = 5, d/dy = 4
    assert_close(second, (to_np(expected_first[0]) + 5, to_np(expected_first[1]) + 4))


def test_grad():
    """grad(create_graph=True) of a gradient gives the HVP without touching .grad; shape mismatch raises."""
    x = tg.tensor(_data((2, 2), 0), requires_grad=True)
    y = tg.tensor(_data((2, 2), 1), requires_grad=True)
    z = x**2 + y * x + y**2
    _quiet_backward(z, tg.ones(2, 2), create_graph=True)
    x_grad = 2 * to_np(x) + to_np(y)
    y_grad = to_np(x) + 2 * to_np(y)
    assert_close(x.grad, x_grad)
    assert_close(y.grad, y_grad)

    grad_sum = 2 * x.grad + y.grad
    (x_hv,) = tg.autograd.grad(outputs=[grad_sum], grad_outputs=[tg.ones(2, 2)], inputs=[x],
                               create_graph=True)
    assert_close(x_hv, np.full((2, 2), 5.0))
    assert_close(x.grad, x_grad)
    assert_close(y.grad, y_grad)
    x.grad = y.grad = None

    grad_out = tg.ones(2)
    with pytest.raises(RuntimeError) as info:
        tg.autograd.grad(outputs=[grad_sum], grad_outputs=[grad_out], inputs=[x], create_graph=True)
    assert str(info.value) == (
        "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and "
        "output[0] has a shape of torch.Size([2, 2])."
    )


def test_grad_nonleaf():
    """Five steps of gradient ascent through grad(create_graph=True) on non-leaves, then a final backward."""
    def program(lib):
        x_init = _leaf(lib, (2, 2), 0)
        x = x_init
        y = _leaf(lib, (2, 2), 1)
        grad_output = lib.ones(2, 2)

        def fn(x):
            return x**2 + y * x + y**2

        steps = []
        for _ in range(5):
            (grad_x,) = lib.autograd.grad(fn(x), x, grad_outputs=grad_output, create_graph=True)
            steps.append((grad_x.detach(), (2 * x + y).detach(), y.grad is None, x.grad is None))
            x = x + 0.05 * grad_x
        improved = fn(x).sum().item() > fn(x_init).sum().item()
        x.backward(grad_output)
        return steps, improved, y.grad is not None, x_init.grad is not None, x_init.grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading .grad of the non-leaf x warns
        ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-4)
    steps, improved, y_has_grad, x_init_has_grad, _ = ours
    for grad_x, expected, y_none, x_none in steps:
        assert_close(grad_x, expected)
        assert y_none and x_none
    assert improved and y_has_grad and x_init_has_grad


def test_backward_twice_with_saved_values():
    """A second backward through nodes whose saved tensors were freed raises and says retain_graph."""
    b = tg.tensor([0.1, 0.2, 0.3], dtype=tg.float64, requires_grad=True)
    c = tg.zeros(3, dtype=tg.float64)
    c[[1, 2]] = b[[1, 1]]
    c.backward(tg.tensor([1, 1, 1], dtype=tg.float64))
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        c.backward(tg.tensor([1, 1, 1], dtype=tg.float64))

    # the same through a plain product, whose node saves both operands
    d = b * b
    d.sum().backward()
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        d.sum().backward()


def test_backward_twice_without_saved_values():
    """Nodes that save nothing (add) can be backpropagated twice without retain_graph."""
    def program(lib):
        b = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
        c = b + 1
        c.backward(lib.tensor([1, 1, 1], dtype=lib.float64))
        c.backward(lib.tensor([1, 1, 1], dtype=lib.float64))
        return b.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours, np.full(3, 2.0))


def test_backward_twice_retained_graph_with_saved_values():
    """retain_graph=True keeps saved tensors alive for a second backward (indexing graph)."""
    def program(lib):
        b = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
        c = lib.zeros(3, dtype=lib.float64)
        c[[1, 2]] = b[[1, 1]]
        c.backward(lib.tensor([1, 1, 1], dtype=lib.float64), retain_graph=True)
        c.backward(lib.tensor([1, 1, 1], dtype=lib.float64))
        return b.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours, np.array([0.0, 4.0, 0.0]))


def test_backward_twice_retained_graph_without_saved_values():
    """retain_graph=True is harmless for nodes that save nothing; grads accumulate twice."""
    def program(lib):
        b = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
        c = b + 1
        c.backward(lib.tensor([1, 1, 1], dtype=lib.float64), retain_graph=True)
        c.backward(lib.tensor([1, 1, 1], dtype=lib.float64))
        return b.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours, np.full(3, 2.0))


def test_backward_create_graph_warns():
    """Tensor.backward(create_graph=True) warns about a reference cycle; autograd.grad does not."""
    previous = tg.is_warn_always_enabled()
    tg.set_warn_always(True)  # the warning is emitted once per process otherwise
    try:
        b = tg.tensor([0.1, 0.2, 0.3], dtype=tg.float64, requires_grad=True)
        c = b * b
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            c.backward(tg.ones_like(c), create_graph=True)
        b.grad = None
        assert any("Using backward() with create_graph=True" in str(w.message) for w in ws)

        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            tg.autograd.grad(c, b, tg.ones_like(c), create_graph=True)
        assert not any("Using backward() with create_graph=True" in str(w.message) for w in ws)
    finally:
        tg.set_warn_always(previous)


def test_custom_autograd_repeated_grad_grad():
    """Repeating grad-of-grad through a custom Function gives the same numbers each time."""
    def prod_last_two(x):
        return x.prod(dim=-1).prod(dim=-1)

    class Mult(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = prod_last_two(x)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return (grad_output * y)[:, None, None] / x

    def repeated(x, y):
        (gy,) = tg.autograd.grad(y[0], x, create_graph=True)
        (ggy_1,) = tg.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        (gy,) = tg.autograd.grad(y[0], x, create_graph=True)
        (ggy_2,) = tg.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        return ggy_1, ggy_2

    x = tg.ones(2, 3, 3).requires_grad_()
    ref_1, ref_2 = repeated(x, prod_last_two(x))
    assert_close(ref_1, ref_2)
    got_1, got_2 = repeated(x, Mult.apply(x))
    assert_close(got_1[0, 0, 1], got_2[0, 0, 1])
    assert_close(got_1[0, 0, 1], ref_1[0, 0, 1])


def test_custom_autograd_no_early_free():
    """A custom Function saving its own output can be differentiated with create_graph then again."""
    class Double(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x**2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            x, _ = ctx.saved_tensors
            return grad_output * 2 * x

    class Double2(Double):
        # same derivative, but reads the saved forward output
        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return grad_output * 2 * y / x

    x = tg.tensor(2).double().requires_grad_()
    for fn in (Double.apply, Double2.apply):
        assert tg.autograd.gradcheck(fn, x)
        assert tg.autograd.gradgradcheck(fn, x)
        y = fn(x)
        (g1,) = tg.autograd.grad(y, x, create_graph=True)
        (g2,) = tg.autograd.grad(y, x)  # must not complain that buffers were freed
        assert_close(g1, 4.0)
        assert_close(g2, 4.0)


def test_third_order_grad():
    """Chained create_graph=True calls give third derivatives (x**4 -> 24 x)."""
    def program(lib):
        x = lib.tensor([0.5, -1.5], dtype=lib.float64, requires_grad=True)
        y = (x**4).sum()
        (g1,) = lib.autograd.grad(y, x, create_graph=True)
        (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        return g1, g2, g3

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    x = np.array([0.5, -1.5])
    assert_close(ours, (4 * x**3, 12 * x**2, 24 * x))


_PENALIZED_LAYERS = {
    "conv1d": (lambda F, x, w, b: F.conv1d(x, w, b, padding=1), ((3, 2, 4), (3, 2, 3), (3,))),
    "conv_transpose1d": (lambda F, x, w, b: F.conv_transpose1d(x, w, b, stride=2), ((3, 2, 4), (2, 3, 3), (3,))),
    "layer_norm": (lambda F, x, w, b: F.layer_norm(x, (2, 4), w, b), ((3, 2, 4), (2, 4), (2, 4))),
    "batch_norm_train": (lambda F, x, w, b: F.batch_norm(x, None, None, w, b, True), ((3, 2, 4), (2,), (2,))),
    "batch_norm_eval": (lambda F, x, w, b: F.batch_norm(x, w.detach() * 0.5, w.detach() ** 2 + 1, w, b, False),
                        ((3, 2, 4), (2,), (2,))),
    "instance_norm": (lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b), ((3, 2, 4), (2,), (2,))),
}


@pytest.mark.parametrize("flags", [(True, False, False), (False, True, False), (False, False, True),
                                   (True, True, True)], ids=lambda f: "".join("xwb"[i] for i in range(3) if f[i]))
@pytest.mark.parametrize("layer", sorted(_PENALIZED_LAYERS))
def test_gradient_penalty_through_fused_backward(layer, flags):
    """PyTorch computes the gradients of a convolution or a normalisation with one backward operator taking
    grad_output, input and weight (ConvolutionBackwardBackward0, NativeLayerNormBackwardBackward0, ...): under
    create_graph=True every gradient, the bias's too, requires grad when input, weight or bias does, and a
    gradient penalty backpropagates through it."""
    fn, shapes = _PENALIZED_LAYERS[layer]

    def program(lib):
        ins = [lib.tensor(_data(s, k), dtype=lib.float64, requires_grad=f) for k, (s, f) in enumerate(zip(shapes, flags))]
        out = fn(lib.nn.functional, *ins)
        diff = [t for t in ins if t.requires_grad]
        grads = lib.autograd.grad((out * out.detach().cos()).sum(), diff, create_graph=True)
        connected = [g.requires_grad for g in grads]
        penalty = sum((g * g).sum() for g in grads if g.requires_grad)
        second = lib.autograd.grad(penalty, diff, allow_unused=True, materialize_grads=True) if any(connected) else ()
        return connected, grads, second

    ours, theirs = run_both(program)
    assert ours[0] == theirs[0]
    assert_close(ours[1:], theirs[1:])
