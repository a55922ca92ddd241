"""Areas N and P of seed 004: the backward engine itself.

Area N: reentrant backward (a backward or ``autograd.grad`` started from inside a custom
``Function.backward`` or a hook), errors from the child pass, deep reentrancy without a stack
overflow, the priority of reentrant work over the outer graph, ``queue_callback`` (end of the
current graph task, callbacks queueing callbacks, one set per nested pass, errors propagating),
grad mode restored after a reentrant ``grad``, and the order in which the ready queue picks nodes.

Area P: how gradients are accumulated: in place into an existing ``.grad`` unless
``create_graph=True``, ``.grad`` identity, zero-numel gradients, input buffers that must not alias,
stealing the incoming buffer for the first accumulation, and ``Tensor.grad_dtype``.

The callback API is spelled as in PyTorch: ``torch.autograd.Variable._execution_engine.queue_callback``.

Skipped seed tests (inventory N):
- ``test_thread_shutdown``: checks that CUDA worker threads shut down, from a subprocess.
- ``test_node_ordering_when_none_returned``: CUDA-only (bfloat16 on a device stream).
- ``test_no_grad_copy_sparse``: sparse gradients.

Adapted seed tests:
- ``test_callback_propagates_errors_from_device_thread``: runs on CPU (the error must still
  surface from ``backward()``).
- ``test_accumulate_grad_tensor_reference``: the dense-into-dense cases only (sparse dropped).
- ``test_input_buffer_accum`` (inventory N for its sparse gather): the dense half is kept — a
  user-provided gradient is never modified in place by the engine.
- ``test_grad_dtype``: NumPy has no bfloat16, so its mixed-accumulation cases use float16.
- ``test_simple_reentrant`` / ``test_deep_reentrant`` / ``test_reentrant_priority``: the deprecated
  ``Variable(x, requires_grad=True)`` is written ``x.detach().requires_grad_()``.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import assert_close, np, run_both, tg


def _data(shape, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).tolist()


def _queue_callback(lib, fn):
    lib.autograd.Variable._execution_engine.queue_callback(fn)


# --------------------------------------------------------------------------------------------
# Area N: reentrant backward and callbacks
# --------------------------------------------------------------------------------------------


def test_simple_reentrant():
    """A Function.backward may run a whole backward pass of its own (reentrant) and use its result."""
    def program(lib):
        y_data = lib.tensor(_data((2, 2), 1))

        class Reenter(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with lib.enable_grad():
                    ctx.x = x.detach().requires_grad_()
                    ctx.y = y_data.detach().requires_grad_()
                    ctx.output_var = ctx.x * ctx.y
                return ctx.output_var.detach()

            @staticmethod
            def backward(ctx, grad_output):
                with lib.enable_grad():
                    ctx.output_var.sum().backward()
                return ctx.x.grad * grad_output

        x = lib.tensor(_data((2, 2), 0), requires_grad=True)
        Reenter.apply(x).sum().backward()
        return x.grad, y_data

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours[0], ours[1])


def test_reentrant_child_error():
    """An exception raised inside a reentrant child backward propagates out of the outer backward."""
    class SimulateBackwardError(tg.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        @tg.autograd.function.once_differentiable
        def backward(ctx, grad):
            raise Exception("Simulate error on backward pass")  # noqa: TRY002 - any exception type

    a = tg.ones(2, 2, requires_grad=True)
    c = a * a
    b = tg.ones(2, 2, requires_grad=True)
    reentrant_root = SimulateBackwardError.apply(b * b).sum()

    class ReentrantFunc(tg.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, grad):
            reentrant_root.backward()
            return grad

    d = ReentrantFunc.apply(c)
    with pytest.raises(Exception, match="Simulate error on backward pass"):
        d.sum().backward()


def test_deep_reentrant():
    """Reentrant backward nested 2000 deep does not overflow the stack, and can be repeated."""
    calls = [0]

    class DeepReentrant(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with tg.enable_grad():
                ctx.x = x.detach().requires_grad_() - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, grad):
            calls[0] += 1
            if ctx.x < 0:
                return grad
            with tg.enable_grad():
                DeepReentrant.apply(ctx.x).sum().backward()
            return grad

    v = tg.tensor(2000.0, requires_grad=True)
    DeepReentrant.apply(v).sum().backward()
    assert calls[0] == 2001
    assert_close(v.grad, 1.0)

    v2 = tg.tensor(200.0, requires_grad=True)
    DeepReentrant.apply(v2).sum().backward()
    assert calls[0] == 2001 + 201


def test_reentrant_priority():
    """All reentrant work finishes before the outer graph's other pending nodes run."""
    def program(lib):
        order = []

        class MyFunction(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                order.append("MyFunction")
                return grad

        class Reentrant(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with lib.enable_grad():
                    ctx.x = x.detach().requires_grad_() - 1
                return ctx.x.detach()

            @staticmethod
            def backward(ctx, grad):
                order.append("Reentrant")
                if ctx.x < 0:
                    return grad
                with lib.enable_grad():
                    Reentrant.apply(ctx.x).backward()
                return grad

        a = MyFunction.apply(lib.tensor(6.0, requires_grad=True))
        b = Reentrant.apply(lib.tensor(9.0, requires_grad=True))
        (a * b).backward()
        return order

    ours, theirs = run_both(program)
    assert ours == theirs
    assert len(ours) == 11
    assert ours.count("Reentrant") == 10
    assert ours[-1] == "MyFunction"


def _reentrant_with_callbacks(depths):
    counter = {"inner": 0, "outer": 0}

    class MyFunc(tg.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp

        @staticmethod
        @tg.autograd.function.once_differentiable
        def backward(ctx, grad):
            if 1 in depths:
                _queue_callback(tg, lambda: counter.__setitem__("inner", counter["inner"] + 1))
            return grad

    class MyReentrantFunc(tg.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp

        @staticmethod
        @tg.autograd.function.once_differentiable
        def backward(ctx, grad):
            if 0 in depths:
                _queue_callback(tg, lambda: counter.__setitem__("outer", counter["outer"] + 1))
            tmp_inp = grad.detach().requires_grad_()
            with tg.enable_grad():
                tmp_out = MyFunc.apply(tmp_inp).sum()
            tmp_out.backward()
            return grad

    t1 = tg.ones(2, 2, requires_grad=True)
    tg.autograd.backward([MyReentrantFunc.apply(t1).sum()])
    return counter


def test_reentrant_with_callbacks_depth_0():
    """A callback queued by the outer pass runs once, at the end of the outer pass only."""
    assert _reentrant_with_callbacks([0]) == {"inner": 0, "outer": 1}


def test_reentrant_with_callbacks_depth_1():
    """A callback queued inside the nested pass runs once, for that pass."""
    assert _reentrant_with_callbacks([1]) == {"inner": 1, "outer": 0}


def test_reentrant_with_callbacks_both_depths():
    """Callbacks queued at both depths each run exactly once."""
    assert _reentrant_with_callbacks([0, 1]) == {"inner": 1, "outer": 1}


def test_reentrant_with_leaf_variable_hook():
    """A leaf hook may remove itself, run a reentrant backward and rewrite .grad before accumulation."""
    def program(lib):
        param = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)

        def add_gradient_penalty(grad):
            handle.remove()
            old_param_grad = grad
            param.grad = None
            with lib.enable_grad():
                g = grad.detach().requires_grad_()
                new_param = param.detach().requires_grad_()
                ((g * 2) + new_param).sum().backward()
            res = g.grad + grad
            param.grad = old_param_grad
            return res

        handle = param.register_hook(add_gradient_penalty)
        (param * param).sum().backward()
        return param.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    # accumulation adds the hook's result (2p + 2) onto the .grad the hook set (2p)
    assert_close(ours, 4 * np.array([1.0, 2.0, 3.0]) + 2)


def test_reentrant_with_non_leaf_variable_hook():
    """A non-leaf hook may remove itself and run a reentrant backward; its result flows on."""
    def program(lib):
        param = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)

        def manual_increase_gradient(grad):
            handle.remove()
            with lib.enable_grad():
                g = grad.detach().requires_grad_()
                ((g * 2) + 5).sum().backward()
            return g.grad + grad

        tmp = param * param
        handle = tmp.register_hook(manual_increase_gradient)
        tmp.sum().backward()
        return param.grad, 6 * param

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours[0], ours[1])


def test_grad_mode_restored_reentrant():
    """Grad mode inside backward is restored after a reentrant autograd.grad under enable_grad."""
    observed = []

    class MyFunction(tg.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, go):
            original = tg.is_grad_enabled()
            with tg.enable_grad():
                observed.append(tg.is_grad_enabled())
                foo = tg.ones(go.shape, requires_grad=True)
                (grad,) = tg.autograd.grad(foo**3, foo, grad_outputs=go)
                observed.append(tg.is_grad_enabled())
            observed.append(tg.is_grad_enabled() == original)
            return grad

    inp = tg.ones(3, requires_grad=True)
    MyFunction.apply(inp).sum().backward()  # grad mode off inside backward
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # backward(create_graph=True) warns about a reference cycle
        MyFunction.apply(inp).sum().backward(create_graph=True)  # grad mode on inside backward
    assert observed == [True] * 6
    inp.grad = None


def test_callback_adds_callback():
    """A final callback may queue another callback; both run in the same pass."""
    called = [0]

    def callback_final():
        called[0] += 1

    def callback_adds_callback():
        called[0] += 1
        _queue_callback(tg, callback_final)

    class MyFunc(tg.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp

        @staticmethod
        @tg.autograd.function.once_differentiable
        def backward(ctx, grad):
            _queue_callback(tg, callback_adds_callback)
            return grad

    a = tg.ones(3, 3, requires_grad=True)
    MyFunc.apply(a).sum().backward()
    assert called[0] == 2


def test_callback_propagates_errors_from_device_thread():
    """An exception raised by a queued callback surfaces from backward()."""
    def callback():
        raise RuntimeError("blah")

    t = tg.tensor([1.0, 2.0], requires_grad=True)
    t.register_hook(lambda _g: _queue_callback(tg, callback))
    with pytest.raises(RuntimeError, match="blah"):
        (t**2).sum().backward()


def test_queue_callback_runs_after_all_nodes():
    """Callbacks run after every node and hook of the pass; outside backward they are refused."""
    def program(lib):
        log = []
        a = lib.tensor([1.0], requires_grad=True)
        b = a * 2

        def hook(_g):
            _queue_callback(lib, lambda: log.append(("callback", a.grad.tolist())))
            log.append("hook")

        b.register_hook(hook)
        a.register_post_accumulate_grad_hook(lambda _t: log.append("post_accumulate"))
        b.sum().backward()
        with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass."):
            _queue_callback(lib, lambda: None)
        return log

    ours, theirs = run_both(program)
    assert ours == theirs == ["hook", "post_accumulate", ("callback", [2.0])]


def test_ready_queue_prefers_later_created_nodes():
    """Of two independent chains, the one created later runs first, depth first; a shared leaf runs last."""
    def program(lib):
        log = []
        a = lib.tensor(1.0, requires_grad=True)
        x1 = a.sin()
        x2 = x1.exp()
        x3 = x2.cos()
        y1 = a.cos()
        y2 = y1.exp()
        y3 = y2.sin()
        out = x3 + y3
        for name, t in (("x1", x1), ("x2", x2), ("x3", x3), ("y1", y1), ("y2", y2), ("y3", y3)):
            t.grad_fn.register_prehook(lambda _g, name=name: log.append(name))
        a.register_hook(lambda _g: log.append("acc"))
        out.backward()
        return log

    ours, theirs = run_both(program)
    assert ours == theirs == ["y3", "y2", "y1", "x3", "x2", "x1", "acc"]


# --------------------------------------------------------------------------------------------
# Area P: gradient accumulation
# --------------------------------------------------------------------------------------------


def test_accumulate_grad():
    """Without create_graph .grad is updated in place; with create_graph a new tensor replaces it."""
    def compute(lib, create_graph):
        x = lib.tensor(_data((2, 3), 0), requires_grad=True)
        y = x + 2
        y.backward(lib.ones(2, 3), retain_graph=True)
        x_grad = x.grad
        x_grad_clone = x.grad.clone()
        y.backward(lib.ones(2, 3), create_graph=create_graph)
        return x_grad, x_grad_clone, x.grad is x_grad

    def program(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_graph=True warns about a reference cycle
            return compute(lib, False), compute(lib, True)

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    (in_place, clone1, same1), (out_of_place, clone2, same2) = ours
    assert_close(in_place, np.asarray(clone1.tolist()) * 2)
    assert same1 is True
    assert_close(out_of_place, clone2)
    assert same2 is False


@pytest.mark.parametrize("create_graph", [False, True])
def test_accumulate_grad_tensor_reference(create_graph):
    """A user-set dense .grad keeps its identity through accumulation only when create_graph=False."""
    params = tg.tensor([1.5, 1.5]).requires_grad_()
    params.grad = tg.tensor([1.5, 1.5])
    grad_saved = params.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        params.backward(tg.tensor([1.5, 1.5]), create_graph=create_graph)
    assert (params.grad is grad_saved) == (not create_graph)
    assert_close(params.grad, np.full(2, 3.0))


def test_accumulate_grad_with_zero_numel_grad():
    """Zero-element gradients accumulate fine next to a broadcast partner."""
    def program(lib):
        a = lib.ones(4, 0, requires_grad=True)
        b = lib.ones(4, 1, requires_grad=True)
        c = a + b
        c.sum().backward()
        return tuple(c.shape), a.grad, b.grad

    ours, theirs = run_both(program)
    assert_close(ours[1:], theirs[1:])
    assert ours[0] == (4, 0)
    assert_close(ours[1], np.zeros((4, 0)))
    assert_close(ours[2], np.zeros((4, 1)))


def test_backward_copy():
    """A gradient buffered in three places is copied before in-place summation (34 and 17, not more)."""
    def program(lib):
        x = lib.ones(2, 2, requires_grad=True)
        y = lib.ones(2, 2, requires_grad=True)
        a = x + 2
        b = y + 2
        c = x + 2
        add1 = a + b  # passes its incoming gradient on, unchanged, twice
        add2 = add1 + c
        for _ in range(4):  # a long branch so that add2's gradient gets buffered
            a = a * 2
            b = b * 2
            c = c * 2
        out = add2 + (a + b + c)
        out.backward(lib.ones(2, 2))
        return x.grad, y.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours, (np.full((2, 2), 34.0), np.full((2, 2), 17.0)))


def test_no_grad_copy():
    """The first accumulation may adopt the incoming buffer; two leaves never share one; strided ones copy."""
    class MyFunc(tg.autograd.Function):
        static_grad_ptr = None

        @staticmethod
        def forward(ctx, inp1, inp2):
            return inp1 + inp2

        @staticmethod
        def backward(ctx, grad):
            MyFunc.static_grad_ptr = grad.data_ptr()
            return grad, grad

    class NonContGradFunc(tg.autograd.Function):
        @staticmethod
        def forward(ctx, inp1):
            ctx.size = inp1.size()
            return tg.tensor([1.0])

        @staticmethod
        def backward(ctx, grad):
            return tg.ones(1).expand(ctx.size)

    a = tg.ones(2, 3, requires_grad=True)
    b = tg.ones(2, 3, requires_grad=True)
    NonContGradFunc.apply(MyFunc.apply(a, b)).backward()
    assert a.grad.data_ptr() != MyFunc.static_grad_ptr
    assert b.grad.data_ptr() != MyFunc.static_grad_ptr

    a.grad = b.grad = None
    MyFunc.apply(a, b)[1][0].backward()
    p_g = MyFunc.static_grad_ptr
    p_a, p_b = a.grad.data_ptr(), b.grad.data_ptr()
    assert p_a != p_b
    assert p_g in (p_a, p_b)


def test_input_buffer_accum():
    """Gradients passed in by the user are never modified in place while being summed."""
    def program(lib):
        leaf = lib.tensor(_data((2, 2), 0), requires_grad=True)
        out1 = leaf.clone()  # passes its gradient through as-is
        out2 = leaf * 1
        grad_out1_original = lib.tensor(_data((2, 2), 1))
        grad_out1 = grad_out1_original.clone()
        grad_out2 = lib.tensor(_data((2, 2), 2))
        lib.autograd.backward((out1, out2), (grad_out1, grad_out2))
        return grad_out1, grad_out1_original, grad_out2, leaf.grad, grad_out1_original + grad_out2

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours[0], ours[1])
    assert_close(ours[3], ours[4])


def test_grad_dtype():
    """Tensor.grad_dtype: leaf-only, defaults to dtype, None allows any, casts incoming grads."""
    leaf = tg.tensor([1.0, 2.0], requires_grad=True)
    assert leaf.grad_dtype == tg.float32
    leaf.grad_dtype = tg.float16
    assert leaf.grad_dtype == tg.float16
    leaf.grad_dtype = None
    assert leaf.grad_dtype is None

    non_leaf = leaf * 2
    assert not non_leaf.is_leaf
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf tensors"):
        _ = non_leaf.grad_dtype
    with (pytest.raises(RuntimeError, match="grad_dtype can only be set on leaf tensors"),
          warnings.catch_warnings()):
        warnings.simplefilter("ignore")  # PyTorch also warns about reading a non-leaf's .grad here
        non_leaf.grad_dtype = tg.float16

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    x.grad = tg.tensor([1.0, 1.0])
    assert x.grad.dtype == tg.float32
    x.grad = None
    x.grad_dtype = tg.float16
    with pytest.raises(RuntimeError,
                       match="attempting to assign a gradient with dtype.*float.*"
                             "to a tensor with grad_dtype.*Half"):
        x.grad = tg.tensor([1.0, 1.0])
    x.grad = None
    x.grad_dtype = None
    x.grad = tg.tensor([1.0, 1.0], dtype=tg.float64)
    assert x.grad.dtype == tg.float64

    class ToDouble(tg.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.to(tg.float64)

    d = tg.tensor([1.0, 2.0], requires_grad=True)
    ToDouble.apply(d).sum().backward()
    assert d.grad.dtype == tg.float32  # cast to the tensor's dtype by default
    assert_close(d.grad, np.ones(2))

    e = tg.tensor([3.0, 4.0], requires_grad=True)
    e.grad_dtype = None
    ToDouble.apply(e).sum().backward()
    assert e.grad.dtype == tg.float64  # no cast with grad_dtype None

    f = tg.tensor([5.0, 6.0], requires_grad=True)
    f.grad_dtype = tg.float16
    ToDouble.apply(f).sum().backward()
    assert f.grad.dtype == tg.float16

    g = tg.tensor([1.0, 2.0], requires_grad=True)
    g.grad = tg.tensor([1.0, 1.0])
    g.grad_dtype = tg.float32
    assert g.grad_dtype == tg.float32
    with pytest.raises(RuntimeError, match="Cannot set grad_dtype.*because there is already a gradient"):
        g.grad_dtype = tg.float16
    g.grad_dtype = None
    assert g.grad_dtype is None
    g.grad = None
    g.grad_dtype = tg.float16
    assert g.grad_dtype == tg.float16

    # the leaf's accumulator already exists when grad_dtype changes
    h = tg.tensor([1.0, 2.0], requires_grad=True)
    _ = h.clone()
    h.grad_dtype = None
    ToDouble.apply(h).sum().backward()
    assert h.grad.dtype == tg.float64

    # accumulating into an existing .grad keeps that .grad's dtype (it is updated in place)
    k = tg.tensor([1.0, 2.0], requires_grad=True)
    k.grad_dtype = None
    (k * 2).sum().backward()
    k.grad = k.grad.to(tg.float16)
    (k * 3).sum().backward()
    assert k.grad.dtype == tg.float16
    assert_close(k.grad, np.full(2, 5.0))

    m = tg.tensor([3.0, 4.0], requires_grad=True, dtype=tg.float16)
    m.grad_dtype = None
    (m * 2).sum().backward()
    m.grad = m.grad.to(tg.float32)
    (m * 3).sum().backward()
    assert m.grad.dtype == tg.float32
    assert_close(m.grad, np.full(2, 5.0))
