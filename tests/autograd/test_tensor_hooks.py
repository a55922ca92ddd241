"""Area C of seed 004 (tensor hooks, ``retain_grad``) and inventory section 2 (hook ordering rules).

Area C: ``Tensor.register_hook`` (replacement of the gradient, composition in registration order,
removal through the handle, callables without ``__name__``), hooks being bound to the
``(grad_fn, output_nr)`` they were registered on while ``retain_grad`` follows in-place updates,
hooks called with ``None``, the non-leaf ``.grad`` warning and module full-backward hooks under
double backward.

Section 2: the order of hooks inside one node (tensor hooks, then ``retain_grad``, node pre-hooks,
the node, post-accumulate-grad hooks, node post-hooks), which hooks run for ``grad()`` /
``backward()`` / ``backward(inputs=)``, snapshotting of hook lists, and the order across nodes as
seen by hooks (``test_backward_hook_relative_ordering``). The engine-level execution-order API
(``test_current_graph_task_execution_order``) lives in ``test_graph_api.py``; reentrant priority
lives in ``test_engine.py``.

Adapted seed tests:
- ``test_hooks_cpp``: PyTorch uses a C++ BatchNorm node; every tracegrad node is Python, so the
  hook is put on the output of an ``nn.Linear`` module instead.

No seed test of these areas is skipped.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import assert_close, np, run_both, tg


def _data(shape, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).tolist()


def _double_mul(lib):
    """A two-output custom Function (x*2, x*3), built per library."""
    class DoubleMul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    return DoubleMul.apply


# --------------------------------------------------------------------------------------------
# Area C
# --------------------------------------------------------------------------------------------


def test_hooks():
    """Tensor hooks fire per backward, compose in order, can be removed; a return value replaces the grad."""
    def program(lib):
        x = lib.ones(2, 2, requires_grad=True)
        y = (lib.ones(2, 2) * 4).requires_grad_(True)
        counter = [0]
        types_ok = []

        def bw_hook(inc, grad):
            types_ok.append(isinstance(grad, lib.Tensor))
            counter[0] += inc

        z = x**2 + x * 2 + x * y + y
        x.register_hook(lambda *args: bw_hook(0, *args))
        h1 = z.register_hook(lambda *args: bw_hook(1, *args))
        z.backward(lib.ones(2, 2), retain_graph=True)
        counts = [counter[0]]
        h2 = z.register_hook(lambda *args: bw_hook(2, *args))
        z.backward(lib.ones(2, 2), retain_graph=True)
        counts.append(counter[0])
        h2.remove()
        z.backward(lib.ones(2, 2), retain_graph=True)
        counts.append(counter[0])

        h1.remove()
        z.register_hook(lambda grad: grad.mul(2))
        with lib.no_grad():
            y.grad.zero_()
        z.backward(lib.ones(2, 2), retain_graph=True)
        y_grad_1 = y.grad.clone()

        y.register_hook(lambda grad: grad.mul(2))
        with lib.no_grad():
            y.grad.zero_()
        z.backward(lib.ones(2, 2))
        return counts, all(types_ok), y_grad_1, y.grad, (x + 1) * 2, (x + 1) * 4

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    counts, types_ok, y_grad_1, y_grad_2, exp_1, exp_2 = ours
    assert counts == [1, 4, 5]
    assert types_ok
    assert_close(y_grad_1, exp_1)
    assert_close(y_grad_2, exp_2)


def test_hook_with_no_name():
    """Any callable works as a hook, including instances without a __name__."""
    class CloneGrad:
        def __call__(self, grad):
            return grad.clone()

    a = tg.ones(3, requires_grad=True)
    x = a.clone()
    x.register_hook(CloneGrad())
    x.sum().backward()
    assert_close(a.grad, np.ones(3))


def test_hook_none():
    """A hook on an output whose backward returns None for a non-differentiable input still sees a grad."""
    class NoneGradientFunction(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            assert ctx.needs_input_grad[0]
            assert not ctx.needs_input_grad[1]
            return x, y

        @staticmethod
        def backward(ctx, grad_x, grad_y):
            return grad_x, None

    seen = []

    def hook(grad):
        seen.append(grad is not None)

    x = tg.ones(2, 2, requires_grad=True)
    y = tg.ones(2, 2)
    rx, ry = NoneGradientFunction.apply(x, y)
    # every output of a Function with a grad-requiring input requires grad, even the one from y
    assert rx.requires_grad and ry.requires_grad
    rx.register_hook(hook)
    ry.register_hook(hook)
    sum(rx, ry).sum().backward()
    assert seen == [True, True]
    assert_close(x.grad, np.full((2, 2), 2.0))  # sum() adds each row of rx, broadcast over ry


def test_register_hook_requires_grad():
    """Registering a hook on a tensor that does not require grad is an error."""
    with pytest.raises(RuntimeError,
                       match="cannot register a hook on a tensor that doesn't require gradient"):
        tg.ones(1).register_hook(lambda g: g)


def test_hooks_cpp():
    """A tensor hook on the output of a built-in module runs once and its return value flows on."""
    def program(lib):
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(_data((2, 3), 0)))
            lin.bias.copy_(lib.tensor(_data((2,), 1)))
        counter = [0]

        def bw_hook(grad):
            counter[0] += 1
            return grad * 2

        x = lib.ones(4, 3, requires_grad=True)
        z = lin(x)
        z.register_hook(bw_hook)
        z.sum().backward()
        return counter[0], x.grad, (lin.weight.sum(0) * 2).expand(4, 3)

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert ours[0] == 1
    assert_close(ours[1], ours[2])


def test_retain_grad():
    """retain_grad is idempotent, accumulates across backwards, and is a no-op on leaves."""
    def program(lib):
        inp = lib.tensor([[0.2, 0.5, 0.9]], requires_grad=True)
        h1 = inp * 3
        out = (h1 * h1).sum()
        h1.retain_grad()
        h1.retain_grad()
        out.backward(retain_graph=True)
        g1 = h1.grad.clone()
        out.backward(retain_graph=True)
        g2 = h1.grad.clone()
        with lib.no_grad():
            inp.grad.zero_()
        inp.retain_grad()
        inp.retain_grad()
        out.backward()
        return g1, g2, inp.grad, h1 * 2, h1 * 4, inp * 18, h1.retains_grad, inp.retains_grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    g1, g2, inp_grad, e1, e2, e3, h1_retains, inp_retains = ours
    assert_close(g1, e1)
    assert_close(g2, e2)
    assert_close(inp_grad, e3)
    assert h1_retains is True
    assert inp_retains is False  # leaves never report retains_grad


def test_retain_grad_inplace():
    """After in-place ops the retained grad is w.r.t. the newest version, also across a view."""
    a = tg.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.sum().backward()
    assert_close(a.grad, np.array([1.0]))

    a = tg.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.mul_(2)
    a.sum().backward()
    assert_close(a.grad, np.array([1.0]))

    # in-place through a view moves the retain_grad hook onto the base's new (CopySlices) node
    x = tg.tensor([1.0], requires_grad=True).clone()
    x.retain_grad()
    x_view = x[:]
    x_view *= 2
    x *= 2
    x.sum().backward()
    assert_close(x.grad, np.array([1.0]))

    # a base that never required grad has no hook to move
    x = tg.zeros(4)
    y = x.view(2, 2)
    y.add_(tg.ones(2, 2, requires_grad=True))
    assert x.requires_grad


def test_retains_grad_inplace_multiple_outputs():
    """retain_grad on outputs of a multi-output node follows an in-place op on one of them."""
    def program(lib):
        results = []
        for fn in (_double_mul(lib), lambda t: lib.var_mean(t, dim=0)):
            b = lib.tensor(_data((3, 3), 0), requires_grad=True)
            var, mean = fn(b)
            var.retain_grad()
            mean.retain_grad()
            var.mul_(2)
            (var + mean).sum().backward()
            got = (var.grad, mean.grad)

            a = b.detach().requires_grad_(True)
            var, mean = fn(a)
            var.mul_(2)
            out = (var + mean).sum()
            expected = lib.autograd.grad(out, inputs=(var, mean))
            results.append((got, expected))
        return results

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    for got, expected in ours:
        assert_close(got, expected)


def test_retain_grad_inplace_over_view():
    """retain_grad on two views of a base both see the grad after one view is modified in place."""
    base = tg.tensor([1.0], requires_grad=True).clone()
    view = base[:]
    view2 = base[:]
    view.retain_grad()
    view2.retain_grad()
    view.mul_(2)
    (view + view2).sum().backward()
    assert view.grad is not None and view2.grad is not None
    assert_close(view.grad, view2.grad)
    assert_close(view.grad, np.array([1.0]))


def test_tensor_hooks_inplace():
    """A hook stays on the version it was registered on; one added after mul_ sees the new version."""
    def program(lib):
        log = []

        def fn1(grad):
            log.append(("fn1", grad.tolist()))
            return grad * 2

        def fn2(grad):
            log.append(("fn2", grad.tolist()))
            return grad * 2

        a = lib.tensor([1.0], requires_grad=True)
        b = a.clone()
        b.register_hook(fn1)
        b.mul_(2)
        b.register_hook(fn2)
        b.sum().backward()
        first = a.grad

        def fn3(grad):
            log.append(("fn3", grad.tolist()))
            return grad * 2

        a = lib.tensor([1.0], requires_grad=True)
        b = a.clone()
        b.register_hook(fn3)
        b.mul_(2)
        b.mul_(2)
        b.sum().backward()
        return log, first, a.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    log, first, second = ours
    # fn2 (new version) sees 1 and doubles; mul_'s backward doubles; fn1 (old version) sees 4
    assert log == [("fn2", [1.0]), ("fn1", [4.0]), ("fn3", [4.0])]
    assert_close(first, np.array([8.0]))
    assert_close(second, np.array([8.0]))


def test_tensor_hooks_inplace_multiple_outputs():
    """On multi-output nodes, hooks registered before an in-place op stay on the old outputs."""
    def program(lib):
        results = []
        for fn in (_double_mul(lib), lambda t: lib.var_mean(t, dim=0)):
            log = []
            b = lib.tensor(_data((3, 3), 1), requires_grad=True)
            out1, out2 = fn(b)
            h1 = out1.register_hook(lambda g, log=log: log.append(("h1", g.tolist())))
            h2 = out2.register_hook(lambda g, log=log: log.append(("h2", g.tolist())))
            out1.mul_(2)
            h3 = out1.register_hook(lambda g, log=log: log.append(("h3", g.tolist())))
            (out1 + out2 * 3).sum().backward()
            for h in (h1, h2, h3):
                h.remove()
            results.append(log)
        return results

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    for log in ours:
        seen = dict(log)
        assert sorted(seen) == ["h1", "h2", "h3"] and len(log) == 3
        for name, value in (("h1", 2.0), ("h2", 3.0), ("h3", 1.0)):
            grad = np.array(seen[name])
            assert_close(grad, np.full_like(grad, value))


def test_tensor_hooks_inplace_over_view():
    """Hooks registered on views before an in-place op on a sibling view never fire."""
    fired = []
    base = tg.tensor([1.0], requires_grad=True).clone()
    view = base[:]
    view2 = base[:]
    view.register_hook(lambda g: fired.append("view_old"))
    view2.register_hook(lambda g: fired.append("view2_old"))
    view.mul_(2)
    view2.grad_fn  # noqa: B018 - reading grad_fn regenerates view2's node from the base
    view2.register_hook(lambda g: fired.append(("view2_new", g.tolist())))
    (view + view2).sum().backward()
    assert fired == [("view2_new", [1.0])]


def test_grad_nonleaf_register_hook():
    """A hook on one output of unbind is called with None when only another output gets a grad."""
    x = tg.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
    x_list = x.unbind()
    results = []
    x_list[0].register_hook(lambda g: results.append(g))

    x_list[0].backward()
    assert len(results) == 1
    assert_close(results[0], 1.0)
    expected = np.array([1.0, 0, 0, 0, 0])
    assert_close(x.grad, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert x_list[0].grad is None

    for i in range(1, 5):
        x_list[i].backward()
        assert len(results) == i + 1
        assert results[-1] is None
        expected[i] = 1.0
        assert_close(x.grad, expected)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert x_list[i].grad is None


def test_retains_grad_can_always_observe_tensor_prehook():
    """retain_grad runs after every tensor hook, whatever the registration order."""
    def program(lib):
        def double(g):
            return g * 2

        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.register_hook(double)
        b.retain_grad()
        b.register_hook(double)
        b.clone().backward()
        first = b.grad.item()

        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.retain_grad()
        b.register_hook(double)
        b.clone().backward()
        return first, b.grad.item()

    ours, theirs = run_both(program)
    assert ours == theirs == (4.0, 2.0)


def test_tensor_grad_warnings():
    """Reading .grad warns once for a non-leaf that does not retain grad, never for leaves or retainers."""
    dummy = tg.empty(1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        dummy.requires_grad_()
        _ = dummy.grad
        assert len(w) == 0

        dummy = dummy.clone()
        _ = dummy.grad
        assert len(w) == 1
        assert issubclass(w[0].category, UserWarning)
        assert "is not a leaf Tensor is being accessed" in str(w[0].message)
        assert "retain_grad()" in str(w[0].message)

        dummy.retain_grad()
        _ = dummy.grad
        assert len(w) == 1


def test_full_backward_hook_double_backward():
    """A module full-backward hook fires once in the first grad and not again in double backward."""
    x = tg.tensor([0.3], requires_grad=True)
    y = tg.tensor([0.8])
    loss_fn = tg.nn.MSELoss()
    counter = [0]

    def hook(module, grad_input, grad_output):
        counter[0] += 1

    loss_fn.register_full_backward_hook(hook)
    f = loss_fn(x, y)
    (gradx_f,) = tg.autograd.grad(f, x, create_graph=True)
    assert counter[0] == 1
    (gradgrad,) = tg.autograd.grad(gradx_f, x)
    assert counter[0] == 1
    assert_close(gradx_f, np.array([2 * (0.3 - 0.8)]), atol=1e-6)
    assert_close(gradgrad, np.array([2.0]))


# --------------------------------------------------------------------------------------------
# Section 2: ordering rules
# --------------------------------------------------------------------------------------------


def test_prehook_ordering():
    """Tensor hooks run before node pre-hooks; grad() runs leaf tensor hooks but not AccumulateGrad's."""
    def program(lib):
        log = []

        def hook1(g):
            log.append(1)
            return g * 3

        def hook2(gs):
            log.append(2)
            return tuple(g * 2 for g in gs)

        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(hook2)
        b.register_hook(hook1)
        b.grad_fn.register_prehook(hook2)
        acc = b.grad_fn.next_functions[0][0]
        a.register_hook(hook1)
        acc.register_prehook(hook2)
        a.register_hook(hook1)

        logs = []
        b.sum().backward(retain_graph=True)
        logs.append(list(log))
        log.clear()
        lib.autograd.grad(b.sum(), inputs=(a,), retain_graph=True)
        logs.append(list(log))
        log.clear()
        b.sum().backward(inputs=(b,))
        logs.append(list(log))
        return logs, b.grad.item(), a.grad.item()

    ours, theirs = run_both(program)
    assert ours == theirs
    logs, b_grad, a_grad = ours
    assert logs == [[1, 2, 2, 1, 1, 2], [1, 2, 2, 1, 1], [1, 2, 2]]
    # retain_grad sees the tensor hook (x3) but not the node pre-hooks that run after it
    assert b_grad == 3.0
    assert a_grad == 3 * 2 * 2 * 3 * 3 * 2


def test_post_accumulate_grad_hook_ordering():
    """Leaf order: tensor hook, AccumulateGrad pre-hook, post-accumulate hook, AccumulateGrad post-hook."""
    def program(lib):
        tensor = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)

        def acc_post(grad_in, grad_out):
            tensor.grad = grad_out[0].mul(10)

        def post_accumulate(t):
            t.grad.add_(0.5)  # must return None

        acc_grad = tensor.view_as(tensor).grad_fn.next_functions[0][0]
        tensor.register_hook(lambda grad: grad.sub(2.0))
        acc_grad.register_prehook(lambda grad_out: (grad_out[0].div(5.0),))
        tensor.register_post_accumulate_grad_hook(post_accumulate)
        acc_grad.register_hook(acc_post)
        tensor.sum().backward()
        return tensor.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    # ((1 - 2) / 5 + 0.5) * 10: the post-hook's grad_out[0] aliases the .grad the post-accumulate hook edited
    assert_close(ours, np.full(3, 3.0))


def test_backward_hook_relative_ordering():
    """Whole-graph hook order for nn.Linear with a module full-backward hook (PyTorch's exact sequence)."""
    order = []

    class MyModule(tg.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = tg.nn.Linear(4, 4)

        def forward(self, x):
            return self.linear(x)

    x = tg.ones(4, 4, requires_grad=True)
    module = MyModule()
    module.register_full_backward_hook(
        lambda _m, _gi, _go: order.append("module_full_backward_hook_BackwardHookFunctionBackward0"))

    count = 0

    def register_everywhere(edges):
        nonlocal count
        for node, _ in edges:
            count += 1
            ident = f"{node.name()}_{count}"
            node.register_prehook(lambda _g, ident=ident: order.append(f"pre_hook_{ident}"))
            node.register_hook(lambda _gi, _go, ident=ident: order.append(f"post_hook_{ident}"))
            register_everywhere(node.next_functions)

    loss = module(x).sum()
    register_everywhere(((loss.grad_fn, None),))
    for name, t in (("x", x), ("weight", module.linear.weight), ("bias", module.linear.bias)):
        t.register_hook(lambda _g, name=name: order.append(f"tensor_pre_hook_{name}"))
    for name, t in (("x", x), ("weight", module.linear.weight), ("bias", module.linear.bias)):
        t.register_post_accumulate_grad_hook(lambda _t, name=name: order.append(f"post_acc_grad_hook_{name}"))

    loss.backward()

    acc = "torch::autograd::AccumulateGrad"
    expected = [
        "pre_hook_SumBackward0_1", "post_hook_SumBackward0_1",
        "pre_hook_BackwardHookFunctionBackward_2", "post_hook_BackwardHookFunctionBackward_2",
        "pre_hook_AddmmBackward0_3", "post_hook_AddmmBackward0_3",
        "tensor_pre_hook_bias", f"pre_hook_{acc}_4", "post_acc_grad_hook_bias", f"post_hook_{acc}_4",
        "pre_hook_TBackward0_7", "post_hook_TBackward0_7",
        "tensor_pre_hook_weight", f"pre_hook_{acc}_8", "post_acc_grad_hook_weight", f"post_hook_{acc}_8",
        "pre_hook_BackwardHookFunctionBackward_5",
        "module_full_backward_hook_BackwardHookFunctionBackward0",
        "post_hook_BackwardHookFunctionBackward_5",
        "tensor_pre_hook_x", f"pre_hook_{acc}_6", "post_acc_grad_hook_x", f"post_hook_{acc}_6",
    ]
    assert order == expected


def test_hook_edge_case_when_called_with_grad():
    """Counts of tensor/pre/post hooks for grad() vs backward() vs backward(inputs=) (inventory 2.4)."""
    def program(lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = a * 2
        c = b * 2
        counts = {"tensor": 0, "pre": 0, "post": 0}

        def bump(kind):
            def hook(*_args):
                counts[kind] += 1
            return hook

        a.register_hook(bump("tensor"))
        b.register_hook(bump("tensor"))
        acc = b.grad_fn.next_functions[0][0]
        acc.register_hook(bump("post"))
        acc.register_prehook(bump("pre"))
        b.grad_fn.register_hook(bump("post"))
        b.grad_fn.register_prehook(bump("pre"))

        results = []
        calls = (
            lambda: lib.autograd.grad(c, inputs=(b), retain_graph=True),
            lambda: lib.autograd.grad(c, inputs=(a, b), retain_graph=True),
            lambda: c.backward(retain_graph=True),
            lambda: c.backward(inputs=(a, b), retain_graph=True),
        )
        for call in calls:
            counts.update(tensor=0, pre=0, post=0)
            call()
            results.append((counts["tensor"], counts["pre"], counts["post"]))
        return results

    ours, theirs = run_both(program)
    assert ours == theirs == [(1, 0, 0), (2, 1, 1), (2, 2, 2), (2, 2, 2)]


def test_hook_order_within_one_node():
    """All six hook kinds around a non-leaf and a leaf node fire in SEMANTICS.md's order."""
    def program(lib):
        log = []
        a = lib.tensor(1.0, requires_grad=True)
        acc = a.clone().grad_fn.next_functions[0][0]
        # register in scrambled order: the engine, not registration, decides between kinds
        acc.register_hook(lambda gi, go: log.append("acc_post"))
        a.register_post_accumulate_grad_hook(lambda t: log.append("post_accumulate"))
        acc.register_prehook(lambda go: log.append("acc_pre"))
        a.register_hook(lambda g: log.append("a_tensor"))
        b = a * 2
        b.grad_fn.register_hook(lambda gi, go: log.append("mul_post"))
        b.grad_fn.register_prehook(lambda go: log.append("mul_pre"))
        b.retain_grad()
        b.register_hook(lambda g: (log.append("b_tensor"), g * 10)[1])
        b.backward()
        return log, b.grad.item(), a.grad.item()

    ours, theirs = run_both(program)
    assert ours == theirs
    log, b_grad, a_grad = ours
    assert log == ["b_tensor", "mul_pre", "mul_post", "a_tensor", "acc_pre", "post_accumulate", "acc_post"]
    assert b_grad == 10.0  # retain_grad saw the tensor hook's replacement
    assert a_grad == 20.0


def test_tensor_hook_list_is_snapshotted():
    """Removing a tensor hook from inside an earlier hook does not stop it in the current pass."""
    def program(lib):
        log = []
        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()

        def first(g):
            log.append("first")
            handle.remove()

        b.register_hook(first)
        handle = b.register_hook(lambda g: log.append("second"))
        b.backward(retain_graph=True)
        passes = [list(log)]
        log.clear()
        b.backward()
        passes.append(list(log))

        # the same on a leaf's hooks
        log.clear()
        c = lib.tensor(1.0, requires_grad=True)

        def leaf_first(g):
            log.append("leaf_first")
            leaf_handle.remove()

        c.register_hook(leaf_first)
        leaf_handle = c.register_hook(lambda g: log.append("leaf_second"))
        (c * 2).backward()
        passes.append(list(log))
        return passes

    ours, theirs = run_both(program)
    assert ours == theirs == [["first", "second"], ["first"], ["leaf_first", "leaf_second"]]


def test_tensor_hook_order_across_nodes():
    """Across nodes, ready AccumulateGrad nodes run first, then the node created later in forward."""
    def run(lib, build, call):
        log = []
        tensors = build(lib)
        for name, t in tensors.items():
            t.register_hook(lambda _g, name=name: log.append(name))
        call(lib, tensors)
        return log

    def crossed(lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(2.0, requires_grad=True)
        c = b.sin()
        d = a.cos()
        return {"a": a, "b": b, "c": c, "d": d, "out": c * d}

    def shared_leaf(lib):
        a = lib.tensor(1.0, requires_grad=True)
        b, c = a.sin(), a.cos()
        return {"a": a, "b": b, "c": c, "out": b * c}

    def three_roots(lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = a * 2
        return {"a": a, "b": b, "out": b.sin(), "out2": b.cos(), "out3": b.cos()}

    def siblings(lib):
        a = lib.tensor(1.0, requires_grad=True)
        r, q, p = a.cos(), a.sin(), a.exp()
        return {"a": a, "p": p, "q": q, "r": r, "out": p + q + r}

    def program(lib):
        backward = lambda lib, t: t["out"].backward()  # noqa: E731
        return [
            run(lib, crossed, backward),
            run(lib, shared_leaf, backward),
            run(lib, three_roots, lambda lib, t: lib.autograd.grad((t["out"], t["out3"], t["out2"]),
                                                                   inputs=(t["a"],))),
            run(lib, siblings, backward),
        ]

    ours, theirs = run_both(program)
    assert ours == theirs
    assert ours == [
        ["out", "d", "a", "c", "b"],  # a's AccumulateGrad runs as soon as it is ready
        ["out", "c", "b", "a"],
        ["out3", "out2", "out", "b", "a"],  # roots by creation order, not argument order
        ["out", "p", "q", "r", "a"],
    ]


def test_tensor_hook_registered_during_backward_waits_for_next_pass():
    """A tensor hook added by another hook of the same tensor does not run in the current pass."""
    def program(lib):
        log = []
        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()

        def adder(g):
            log.append("adder")
            b.register_hook(lambda g: log.append("added"))

        handle = b.register_hook(adder)
        b.backward(retain_graph=True)
        first = list(log)
        handle.remove()
        log.clear()
        b.backward()
        return first, list(log)

    ours, theirs = run_both(program)
    assert ours == theirs == (["adder"], ["added"])


def test_hook_returning_wrong_shape_raises():
    """A tensor hook must return a gradient of the tensor's shape."""
    a = tg.ones(3, requires_grad=True)
    b = a.clone()
    b.register_hook(lambda g: tg.ones(4))
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the size of value"):
        b.sum().backward()
