"""PyTorch's autograd tutorials ("A gentle introduction to torch.autograd", "Automatic differentiation with
torch.autograd", "Learning PyTorch with examples"), the hook sections of the "Autograd mechanics" note and the
``torch.autograd.graph`` API docs, run under tracegrad and torch.

What each program shows (values, reprs of nodes and handles, ``next_functions``, hook calls, errors) must be
torch's. Random initial values come from NumPy (tracegrad's generator is not torch's).

Differences these programs found, now fixed:
- a node's repr is its Python type's name (``<AccumulateGrad object at ...>``, not the ``name()``
  ``torch::autograd::AccumulateGrad``); a custom Function's node prints as the Python object it is in torch,
  ``<torch.autograd.function.MyFnBackward object at ...>``;
- hook handles are ``torch.utils.hooks.RemovableHandle``;
- what a node pre-hook or post-hook returns is checked as torch checks it: a tuple (``expected tuple, but hook
  returned 'list'``), of the right length (``hook '<name>' has returned an incorrect number of values``), each
  value a tensor (``expected Variable``) of the same dtype and size (``has changed the type/size of value``),
  never a value for an undefined gradient; a tensor hook may not change the dtype either; a hook without a
  ``__name__`` is ``<unknown>``;
- ``register_multi_grad_hook`` works as torch's: ``"all"`` asks ``_will_engine_execute_node`` (so a leaf under
  ``autograd.grad`` is refused with torch's error), a tensor without a gradient function is refused at
  registration;
- ``GradientEdge`` has torch's ``ownership_token`` field (a view's node, for a custom Function's output);
- ``set_grad_enabled`` prints as torch's (``torch.autograd.grad_mode.set_grad_enabled(mode=True)``).

Left on purpose: node classes derive from tracegrad's ``Node`` base (torch's are C++ classes registered as
virtual subclasses of ``torch.autograd.graph.Node``), so ``type(node).__mro__`` differs; ``isinstance`` agrees.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _tutorial_lib import assert_same_transcript


def _t(lib, shape, seed, requires_grad=True):
    return lib.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=lib.float32,
                      requires_grad=requires_grad)


def test_automatic_differentiation_tutorial():
    def program(lib, show):
        x = lib.ones(5)
        y = lib.zeros(3)
        w = _t(lib, (5, 3), 0)
        b = _t(lib, (3,), 1)
        z = lib.matmul(x, w) + b
        loss = lib.nn.functional.binary_cross_entropy_with_logits(z, y)
        show(f"Gradient function for z = {z.grad_fn}")
        show(f"Gradient function for loss = {loss.grad_fn}")
        show(loss.grad_fn.next_functions)
        show(z.grad_fn.next_functions, z.grad_fn.next_functions[0][0].next_functions)
        loss.backward()
        show(w.grad, b.grad)
        show((lib.matmul(x, w) + b).requires_grad)
        with lib.no_grad():
            show((lib.matmul(x, w) + b).requires_grad)
        show((lib.matmul(x, w) + b).detach().requires_grad)
        loss.backward()

    log = assert_same_transcript(program)
    assert log[3][0] == ("text", "((<SqueezeBackward4 object at 0x…>, 0), (<AccumulateGrad object at 0x…>, 0))")
    assert log[-1][0][0] == "raised"


def test_jacobian_vector_product_tutorial():
    def program(lib, show):
        inp = lib.eye(4, 5, requires_grad=True)
        out = (inp + 1).pow(2).t()
        out.backward(lib.ones_like(out), retain_graph=True)
        show(f"First call\n{inp.grad}")
        out.backward(lib.ones_like(out), retain_graph=True)
        show(f"\nSecond call\n{inp.grad}")
        inp.grad.zero_()
        out.backward(lib.ones_like(out), retain_graph=True)
        show(f"\nCall after zeroing gradients\n{inp.grad}")
        show(out.grad_fn, out.grad_fn.next_functions, out.grad_fn.next_functions[0][0].next_functions)
        out.backward()  # not a scalar

    assert_same_transcript(program)


def test_gentle_introduction():
    def program(lib, show):
        a = lib.tensor([2., 3.], requires_grad=True)
        b = lib.tensor([6., 4.], requires_grad=True)
        Q = 3 * a ** 3 - b ** 2
        Q.backward(gradient=lib.tensor([1., 1.]))
        show(9 * a ** 2 == a.grad, -2 * b == b.grad)
        show(Q, Q.grad_fn, Q.grad_fn.next_functions)
        x, y, z = _t(lib, (5, 5), 2, False), _t(lib, (5, 5), 3, False), _t(lib, (5, 5), 4)
        show(f"Does `a` require gradients?: {(x + y).requires_grad}")
        show(f"Does `b` require gradients?: {(x + z).requires_grad}")
        show(lib.no_grad(), lib.set_grad_enabled(True), lib.enable_grad)

    assert_same_transcript(program)


def test_polynomial_fit_with_autograd_and_legendre_function():
    """"Learning PyTorch with examples": the third-order polynomial fitted by hand with autograd, then with
    the LegendrePolynomial3 Function."""

    def program(lib, show):
        class LegendrePolynomial3(lib.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                ctx.save_for_backward(input)
                return 0.5 * (5 * input ** 3 - 3 * input)

            @staticmethod
            def backward(ctx, grad_output):
                input, = ctx.saved_tensors
                return grad_output * 1.5 * (5 * input ** 2 - 1)

        x = lib.linspace(-math.pi, math.pi, 2000, dtype=lib.float64)
        y = lib.sin(x)
        a, b, c, d = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in (0.3, -0.2, 0.1, 0.05))
        for t in range(200):
            y_pred = a + b * x + c * x ** 2 + d * x ** 3
            loss = (y_pred - y).pow(2).sum()
            if t % 100 == 99:
                show(t, loss)
            loss.backward()
            with lib.no_grad():
                for p in (a, b, c, d):
                    p -= 1e-6 * p.grad
                    p.grad = None
        show(y_pred.grad_fn, y_pred.grad_fn.next_functions)
        a, b, c, d = (lib.full((), v, dtype=lib.float64, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3))
        P3 = LegendrePolynomial3.apply
        for t in range(200):
            y_pred = a + b * P3(c + d * x)
            loss = (y_pred - y).pow(2).sum()
            if t % 100 == 99:
                show(t, loss)
            loss.backward()
            with lib.no_grad():
                for p in (a, b, c, d):
                    p -= 5e-6 * p.grad
                    p.grad = None
        legendre = y_pred.grad_fn.next_functions[1][0].next_functions[1][0]
        show(legendre, legendre.next_functions, legendre.name(), legendre.saved_tensors[0].shape)
        show(a, b, d)

    assert_same_transcript(program, rtol=1e-7)


def test_dynamic_net_with_weight_sharing():
    def program(lib, show):
        class DynamicNet(lib.nn.Module):
            def __init__(self):
                super().__init__()
                for name, v in zip("abcde", (0.1, 0.2, -0.1, 0.05, 0.01)):
                    setattr(self, name, lib.nn.Parameter(lib.tensor(v, dtype=lib.float64)))

            def forward(self, x, k):
                y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
                for exp in range(4, k):
                    y = y + self.e * x ** exp
                return y

        x = lib.linspace(-math.pi, math.pi, 200, dtype=lib.float64)
        y = lib.sin(x)
        model = DynamicNet()
        criterion = lib.nn.MSELoss(reduction="sum")
        optimizer = lib.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
        for k in (4, 6, 5, 6, 4):
            loss = criterion(model(x, k), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            show(k, loss, loss.grad_fn.next_functions, model.e.grad)
        show([p for p in model.parameters()])

    assert_same_transcript(program, rtol=1e-7)


def test_node_hooks_as_the_graph_docs_show():
    def program(lib, show):
        a = lib.tensor([0., 0., 0.], requires_grad=True)
        b = a.clone()
        show(isinstance(b.grad_fn, lib.autograd.graph.Node))
        handle = b.grad_fn.register_hook(lambda gI, gO: (gO[0] * 2,))
        b.sum().backward(retain_graph=True)
        show(a.grad, handle, type(handle).__module__)
        handle.remove()
        a.grad = None
        b.sum().backward(retain_graph=True)
        show(a.grad)
        handle = b.grad_fn.register_prehook(lambda gO: (gO[0] * 3,))
        b.register_hook(lambda g: show("tensor hook", g))
        b.grad_fn.register_hook(lambda gI, gO: show("post hook", gI, gO))
        a.register_post_accumulate_grad_hook(lambda t: show("post accumulate", t.grad))
        a.grad = None
        b.sum().backward()
        show(a.grad)

    assert_same_transcript(program)


_HOOK_RESULTS = {
    "pre_list": ("pre", lambda lib: lambda gO: [gO[0]]),
    "pre_int": ("pre", lambda lib: lambda gO: 3),
    "pre_tensor": ("pre", lambda lib: lambda gO: gO[0]),
    "pre_two_values": ("pre", lambda lib: lambda gO: (gO[0], gO[0])),
    "pre_not_a_tensor": ("pre", lambda lib: lambda gO: (3,)),
    "pre_other_dtype": ("pre", lambda lib: lambda gO: (gO[0].double(),)),
    "pre_other_size": ("pre", lambda lib: lambda gO: (lib.ones(3),)),
    "post_list": ("post", lambda lib: lambda gI, gO: [gI[0], gI[1]]),
    "post_three_values": ("post", lambda lib: lambda gI, gO: (gI[0], gI[1], gI[0])),
    "post_other_size": ("post", lambda lib: lambda gI, gO: (gI[0][:1], gI[1])),
    "post_other_dtype": ("post", lambda lib: lambda gI, gO: (gI[0], gI[1].double())),
    "post_replaces_none": ("post", lambda lib: lambda gI, gO: (gI[0], lib.ones(2))),
    "post_same_tuple": ("post", lambda lib: lambda gI, gO: gI),
    "acc_post_returns_value": ("acc_post", lambda lib: lambda gI, gO: (lib.ones(2),)),
    "callable_without_name": ("post", lambda lib: _Unnamed()),
    "tensor_other_dtype": ("tensor", lambda lib: lambda g: g.double()),
    "tensor_other_size_unnamed": ("tensor", lambda lib: _Unnamed()),
}


class _Unnamed:
    """A hook object without ``__name__``: torch's errors call it ``<unknown>``."""

    def __call__(self, *grads):
        return grads[0][:1] if len(grads) == 1 else (grads[0][0],)


@pytest.mark.parametrize("case", sorted(_HOOK_RESULTS))
def test_what_hooks_may_return(case):
    kind, make = _HOOK_RESULTS[case]

    def program(lib, show):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=case != "post_replaces_none")
        c = a * b
        hook = make(lib)
        if kind == "pre":
            c.grad_fn.register_prehook(hook)
        elif kind == "post":
            c.grad_fn.register_hook(hook)
        elif kind == "acc_post":
            c.grad_fn.next_functions[0][0].register_hook(hook)
        else:
            c.register_hook(hook)
        c.sum().backward()
        show(a.grad)

    assert_same_transcript(program)


def test_multi_grad_hook_modes():
    def program(lib, show):
        a, b, c = _t(lib, (2,), 0), _t(lib, (2,), 1), _t(lib, (2,), 2)
        d = a * b
        handle = lib.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: show("all", [g is not None for g in grads]))
        d.sum().backward(retain_graph=True)
        d.sum().backward(inputs=(a,), retain_graph=True)
        show(type(handle).__name__, type(handle).__mro__[1])
        lib.autograd.graph.register_multi_grad_hook((a, b), lambda g: show("any", g), mode="any")
        (a * b).sum().backward()
        (b * 2).sum().backward()
        handle.remove()
        try:
            lib.autograd.graph.register_multi_grad_hook((a, b), lambda grads: None, mode="some")
        except ValueError as e:
            show(e)
        try:
            lib.autograd.graph.register_multi_grad_hook((a, lib.ones(2)), lambda grads: None)
        except AssertionError as e:
            show("AssertionError", e)
        lib.autograd.graph.register_multi_grad_hook((a, b), lambda grads: show("never"))
        lib.autograd.grad((a * b).sum(), (a,))  # a leaf's node cannot be asked about under grad()

    log = assert_same_transcript(program)
    assert log[0] == (("text", "all"), ("text", "[True, True, False, True]"))
    assert "currently running autograd.grad()" in log[-1][0][2]


def test_gradient_edge_of_builtin_and_custom_nodes():
    def program(lib, show):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        a = _t(lib, (2,), 0)
        for y in (a * 2, Double.apply(a), a):
            edge = lib.autograd.graph.get_gradient_edge(y)
            show(edge, edge.node.name(), edge.output_nr, edge._fields)
            show(lib.autograd.grad((y.exp() * 3).sum(), edge))
        lib.autograd.graph.get_gradient_edge(lib.ones(2))

    assert_same_transcript(program)


def test_custom_nodes_and_handles_print_as_in_torch():
    def program(lib, show):
        x = lib.ones(3, requires_grad=True)
        y = x.clone()
        y[0] = 2
        show(y.grad_fn, y.grad_fn.name())
        acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
        show(acc, acc.name(), type(acc).__name__)
        handle = acc.register_prehook(lambda g: None)
        show(handle, type(handle).__name__)

    assert_same_transcript(program)


def test_tensor_hook_of_an_undefined_gradient():
    """A hook on an output that gets no gradient is called with None, and may not return a value for it."""

    def program(lib, show):
        x = lib.ones(2, 3, requires_grad=True)
        a, b = x.unbind()
        b.register_hook(lambda g: show("hook of b", g))
        a.sum().backward(retain_graph=True)
        b.register_hook(lambda g: lib.ones(3))
        a.sum().backward()

    log = assert_same_transcript(program)
    assert log[0] == (("text", "hook of b"), ("text", "None"))
