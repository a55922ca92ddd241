"""Area M of seed 004: the graph API and engine introspection.

Covers ``grad_fn`` / ``next_functions`` / ``output_nr`` / ``Node.name()`` / ``Node.metadata`` /
``Node._input_metadata``, calling a node directly, ``torch.autograd.graph.Node`` as a virtual base
class, ``GradientEdge`` and ``get_gradient_edge`` as inputs and outputs of ``grad`` / ``backward``,
``torch._C._will_engine_execute_node``, ``torch._C._current_graph_task_id``,
``torch._C._current_graph_task_execution_order`` (with ``set_multithreading_enabled(False)``),
``torch._C._current_autograd_node`` and tensor ``repr`` with ``grad_fn``.

The ``torch._C`` functions are spelled as in PyTorch on purpose: user code written against PyTorch
calls them by these names, so tracegrad must expose them there.

Adapted seed tests:
- ``test_grad_to_node``: the private ``torch.autograd._functions.Resize`` Function is replaced by
  an equivalent custom ``autograd.Function``.
- ``test_grad_fn_input_metadata``: the nested-tensor (jagged / SymInt) part is dropped.
- ``test_current_node``: ``TorchDispatchMode`` is not part of tracegrad; the running node is read
  from hooks, a custom backward and a saved-tensor unpack hook instead.
- ``test_next_functions`` / ``test_autograd_node_isinstance``: ``torch._C._functions.AccumulateGrad``
  and ``DelayedError`` are C++ registrations; the AccumulateGrad class is taken from a live node and
  ``DelayedError`` is left out.

No seed test of this area is skipped.
"""

from __future__ import annotations

import pytest
from _lib import assert_close, np, run_both, tg

ACC = "torch::autograd::AccumulateGrad"


def _data(shape, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).tolist()


def _node_of(t):
    """The node that receives t's gradient: its grad_fn, or its AccumulateGrad for a leaf."""
    if t.requires_grad and t.grad_fn is None:
        return t.clone().grad_fn.next_functions[0][0]
    return t.grad_fn


def test_will_engine_execute_node():
    """During backward, _will_engine_execute_node tells which nodes this pass will run."""
    counter = [0]

    class MyFunction(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    a = tg.tensor(_data((2, 3), 0), requires_grad=True)
    a2 = tg.tensor(_data((2, 3), 1), requires_grad=True)
    b = a * a2
    b2 = b.cos()
    c = MyFunction.apply(b)

    expectations = {"run": [_node_of(t) for t in (a, b, c)], "skip": [_node_of(t) for t in (a2, b2)]}
    verdicts = []

    def check(_grad):
        counter[0] += 1
        verdicts.extend(tg._C._will_engine_execute_node(n) for n in expectations["run"])
        verdicts.extend(not tg._C._will_engine_execute_node(n) for n in expectations["skip"])

    h1 = b.register_hook(check)
    h2 = c.register_hook(check)

    out = c.sum()
    tg.autograd.backward(out, inputs=(a, b), retain_graph=True)
    assert counter[0] == 2

    expectations = {"run": [_node_of(t) for t in (a, a2, b, c)], "skip": [_node_of(b2)]}
    tg.autograd.backward(out, retain_graph=True)
    assert counter[0] == 4
    assert verdicts and all(verdicts)

    # with grad(), asking about a leaf's AccumulateGrad is refused
    with pytest.raises(RuntimeError, match="are currently running autograd.grad()"):
        tg.autograd.grad(out, (a,))

    # ... but a non-leaf's node is fine
    a = tg.tensor(_data((1, 2, 3), 2), requires_grad=True) * 2
    b = a * 2
    answers = []
    h3 = b.register_hook(lambda _g: answers.append(tg._C._will_engine_execute_node(b.grad_fn)))
    tg.autograd.grad(b.sum(), (a,))
    assert answers == [True]

    with pytest.raises(RuntimeError, match="during the backward pass"):
        tg._C._will_engine_execute_node(out.grad_fn)
    with pytest.raises(RuntimeError, match="expects an grad_fn"):
        tg._C._will_engine_execute_node(out)
    for h in (h1, h2, h3):
        h.remove()


def test_grad_to_node():
    """get_gradient_edge(t) as grad() input gives t's gradient, for built-in, leaf and custom nodes."""
    class Reshape(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, shape):
            ctx.old = x.shape
            return x.reshape(shape).clone()

        @staticmethod
        def backward(ctx, grad):
            return grad.reshape(ctx.old), None

    def check(out, inp):
        ref = tg.autograd.grad(out.sum(), inp)
        edge = tg.autograd.graph.get_gradient_edge(inp)
        new = tg.autograd.grad(out.sum(), edge)
        assert_close(new, ref)

    x = tg.tensor([0.5, 1.5], requires_grad=True)
    check(x.clone(), x)  # AccumulateGrad
    x = x.clone()
    check(x.clone(), x)  # built-in node
    x = Reshape.apply(x, (2,))
    check(x.clone(), x)  # custom Function node
    x = tg.var_mean(x)[1]
    check(x.clone(), x)  # second output of a multi-output node


def test_grad_to_node_set():
    """An edge taken before set_() still reaches the old graph; the tensor itself no longer does."""
    x = tg.tensor([0.5, 1.5], requires_grad=True)
    x_edge = tg.autograd.graph.get_gradient_edge(x)
    out = x.clone()
    with tg.no_grad():
        x.set_(tg.tensor([2.0, 3.0]))
    with pytest.raises(RuntimeError, match="to not have been used in the graph"):
        tg.autograd.grad(out.sum(), x)
    (g,) = tg.autograd.grad(out.sum(), x_edge)
    assert_close(g, np.ones(2))


def test_grad_to_node_inplace():
    """An edge captured before an in-place op refers to the old version of the tensor."""
    def program(lib):
        x = lib.tensor([0.5, 1.5], requires_grad=True).clone()
        x_edge = lib.autograd.graph.get_gradient_edge(x)
        x *= 2
        return lib.autograd.grad(x.sum(), (x_edge, x))

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours, (np.full(2, 2.0), np.ones(2)))


def test_grad_to_node_multi():
    """GradientEdge(node, output_nr) built by hand works like the tensors, several at once."""
    x = tg.tensor([0.5, 1.5], requires_grad=True).clone()
    y = tg.tensor([2.5, 3.5], requires_grad=True).clone()
    out = x + y
    ref = tg.autograd.grad(out.sum(), (x, y), retain_graph=True)
    edges = (tg.autograd.graph.GradientEdge(x.grad_fn, x.output_nr),
             tg.autograd.graph.GradientEdge(y.grad_fn, y.output_nr))
    new = tg.autograd.grad(out.sum(), edges)
    assert_close(new, ref)
    assert edges[0].node is x.grad_fn and edges[0].output_nr == 0


def test_grad_to_node_materialize():
    """materialize_grads works with edge inputs that are used, but not with an unused edge input."""
    GradientEdge = tg.autograd.graph.GradientEdge
    x = tg.tensor([0.5, 1.5], requires_grad=True).clone()
    edge_x = GradientEdge(x.grad_fn, x.output_nr)
    y = tg.tensor([2.5, 3.5], requires_grad=True).clone()
    edge_y = GradientEdge(y.grad_fn, y.output_nr)
    out = x.clone()

    gx, gy = tg.autograd.grad(out.sum(), (edge_x, y), allow_unused=True, materialize_grads=True)
    assert_close(gy, np.zeros(2))
    gx, gy = tg.autograd.grad(out.sum(), (x, y), allow_unused=True, materialize_grads=True)
    assert_close((gx, gy), (np.ones(2), np.zeros(2)))
    gx, gy = tg.autograd.grad(out.sum(), (x, edge_y), allow_unused=True)
    assert gy is None
    with pytest.raises(RuntimeError,
                       match="materialize_grads cannot be used when the given input is a GradientEdge"):
        tg.autograd.grad(out.sum(), (x, edge_y), allow_unused=True, materialize_grads=True)


def test_backward_to_node():
    """backward(inputs=...) accepts GradientEdges, alone or mixed with tensors."""
    GradientEdge = tg.autograd.graph.GradientEdge
    x = tg.tensor([0.5, 1.5], requires_grad=True).clone()
    edge_x = GradientEdge(x.grad_fn, x.output_nr)
    y = tg.tensor([2.5, 3.5], requires_grad=True).clone()
    edge_y = GradientEdge(y.grad_fn, y.output_nr)
    out = x.clone()
    tg.autograd.backward(out.sum(), inputs=(edge_x, y))
    tg.autograd.backward(out.sum(), inputs=(x, y))
    tg.autograd.backward(out.sum(), inputs=(x, edge_y))
    tg.autograd.backward(out.sum(), inputs=(edge_x, edge_y))


def test_grad_fn_input_metadata():
    """Node._input_metadata[i] records shape and dtype of each forward output."""
    x = tg.tensor([0.5, 1.5], requires_grad=True, dtype=tg.float32)
    y = tg.tensor([2.5, 3.5], requires_grad=True, dtype=tg.float32)
    z = x * y
    meta = z.grad_fn._input_metadata[0]
    assert tuple(meta.shape) == (2,)
    assert meta.dtype == tg.float32

    b = tg.ones(3, 3, requires_grad=True)
    var, _ = tg.var_mean(b, dim=0)
    assert tuple(var.grad_fn._input_metadata[0].shape) == (3,)
    assert tuple(var.grad_fn._input_metadata[1].shape) == (3,)

    class Identity(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    x = Identity.apply(tg.ones(3, 3, requires_grad=True, dtype=tg.float64))
    assert tuple(x.grad_fn._input_metadata[0].shape) == (3, 3)
    assert x.grad_fn._input_metadata[0].dtype == tg.float64


def test_gradient_edge_output():
    """An edge can be a grad()/backward() output: two-step backward equals one step; errors match."""
    x = tg.tensor([1.0, 2.0], requires_grad=True)

    def fn(x, reduce=True):
        tmp = x.sin().cos()
        if reduce:
            tmp = tmp.sum()
        out = tmp.exp().clone().sin().sum()
        return out, tg.autograd.graph.get_gradient_edge(tmp)

    out, tmp_edge = fn(x)
    (tmp_grad,) = tg.autograd.grad(out, (tmp_edge,))
    (x_grad,) = tg.autograd.grad(tmp_edge, (x,), grad_outputs=(tmp_grad,))
    out, _ = fn(x)
    (x_grad_ref,) = tg.autograd.grad(out, (x,))
    assert_close(x_grad, x_grad_ref)

    out, tmp_edge = fn(x, reduce=False)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar output"):
        tg.autograd.grad(tmp_edge, (x,))

    out, tmp_edge = fn(x, reduce=True)
    tg.autograd.grad(tmp_edge, (x,))  # a scalar edge needs no grad_outputs

    out, tmp_edge = fn(x)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        tg.autograd.grad(tmp_edge, (x,), grad_outputs=tg.tensor([1.0, 2.0, 3.0, 4.0]))

    out, tmp_edge = fn(x)
    (tmp_grad,) = tg.autograd.grad(out, (tmp_edge,))
    with pytest.raises(RuntimeError, match="required to have the same dtype"):
        tg.autograd.grad(tmp_edge, (x,), grad_outputs=tg.ones_like(tmp_grad, dtype=tg.complex64))

    out, tmp_edge = fn(x)
    tg.autograd.backward(tmp_edge, retain_graph=True)
    (x_grad_ref,) = tg.autograd.grad(tmp_edge, (x,), retain_graph=True)
    assert_close(x.grad, x_grad_ref)

    x.grad = None
    tg.autograd.backward((tmp_edge,), retain_graph=True)
    assert_close(x.grad, x_grad_ref)

    out1, tmp_edge1 = fn(x)
    out2, _ = fn(x)
    (x_grad_ref,) = tg.autograd.grad((tmp_edge1, out2), (x,), retain_graph=True)
    x.grad = None
    tg.autograd.backward((tmp_edge1, out2), retain_graph=True)
    assert_close(x.grad, x_grad_ref)

    out, tmp_edge = fn(x)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        tg.autograd.backward(tmp_edge, inputs=(x,), grad_tensors=tg.tensor([1.0, 2.0, 3.0, 4.0]))


def test_gradient_edge_graph_ownership():
    """An edge keeps its node alive after the tensor it came from is deleted."""
    class Clone(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad.clone()

    leaf = tg.tensor([0.5], requires_grad=True)
    inp = leaf.clone()
    for make in (lambda t: t.clone(), Clone.apply):
        out = make(inp)
        edge = tg.autograd.graph.get_gradient_edge(out)
        tg.autograd.backward(edge)
        del out
        tg.autograd.backward(edge)
    assert_close(leaf.grad, np.array([4.0]))


def test_grad_fn_badcalls():
    """Calling a node directly checks the number of gradients; the right count returns the input grad."""
    x = tg.ones(1, requires_grad=True)
    y = x**2
    with pytest.raises(TypeError, match="expected .* arguments, got .* instead"):
        y.grad_fn(x.detach(), x.detach())
    with pytest.raises(TypeError, match="expected .* arguments, got .* instead"):
        y.grad_fn()
    assert_close(y.grad_fn(x.detach()), np.array([2.0]))


def test_next_functions():
    """next_functions lists (node, output_nr): AccumulateGrad for leaves, None for constants."""
    x = tg.ones(2, 2, requires_grad=True)
    y = tg.ones(2, 2, requires_grad=True)
    a = x + y
    assert a.grad_fn is not None
    nf = a.grad_fn.next_functions
    assert isinstance(nf, tuple) and len(nf) == 2
    acc_type = type(_node_of(x))
    for (node, nr), leaf in zip(nf, (x, y)):
        assert isinstance(node, acc_type)
        assert node.name() == ACC
        assert node.variable is leaf
        assert nr == 0
    assert nf[0][0] is _node_of(x)  # one accumulator per leaf, shared by all uses
    assert nf[0][0].next_functions == ()

    b = a + 5
    nf = b.grad_fn.next_functions
    assert len(nf) == 2
    assert nf[0][0] is a.grad_fn
    assert nf[1][0] is None


def test_current_graph_task_id():
    """_current_graph_task_id is -1 outside backward and grows by one per backward call."""
    ids = []
    t = tg.tensor(1.0, requires_grad=True).clone()
    t.register_hook(lambda _g: ids.append(tg._C._current_graph_task_id()))
    for _ in range(3):
        t.backward(retain_graph=True)
    assert [i - ids[0] for i in ids] == [0, 1, 2]
    assert ids[0] >= 0
    assert tg._C._current_graph_task_id() == -1


def test_current_graph_task_execution_order():
    """_current_graph_task_execution_order predicts the order in which this pass runs its nodes."""
    predicted = [None]
    all_hooks = []
    actual = []

    def predict(_grad):
        predicted[0] = tg._C._current_graph_task_execution_order()

    def names(nodes):
        return ", ".join(node.name().split(" ")[-1] for node in nodes)

    def log_hooks(*tensors):
        for t in tensors:
            all_hooks.append(t.register_hook(lambda _g, t=t: actual.append(t)))

    def single_threaded(fn):
        with tg.autograd.set_multithreading_enabled(False):
            fn()

    t = tg.tensor(1.0, requires_grad=True).clone().sin().exp()
    all_hooks.append(t.register_hook(predict))
    single_threaded(t.backward)
    assert names(predicted[0]) == f"ExpBackward0, SinBackward0, CloneBackward0, {ACC}"

    # not plain sequence_nr order: a's accumulator runs as soon as it is ready
    a = tg.tensor(1.0, requires_grad=True)
    b = tg.tensor(2.0, requires_grad=True)
    c = b.sin()
    d = a.cos()
    out = c * d
    log_hooks(a, b, c, d, out)
    all_hooks.append(out.register_hook(predict))
    single_threaded(out.backward)
    assert predicted[0] == [_node_of(t) for t in actual]
    actual.clear()

    # an accumulator with two incoming edges
    a = tg.tensor(1.0, requires_grad=True)
    b, c = a.sin(), a.cos()
    out = b * c
    log_hooks(a, b, c, out)
    all_hooks.append(out.register_hook(predict))
    single_threaded(out.backward)
    assert predicted[0] == [_node_of(t) for t in actual]
    actual.clear()

    # several roots: ordered by creation, not by argument position
    a = tg.tensor(1.0, requires_grad=True)
    b = a * 2
    out, out2, out3 = b.sin(), b.cos(), b.cos()
    all_hooks.append(out3.register_hook(predict))
    single_threaded(lambda: tg.autograd.grad((out, out3, out2), inputs=(a,)))
    assert names(predicted[0]) == f"CosBackward0, CosBackward0, SinBackward0, MulBackward0, {ACC}"

    # a graph with a constant (None) edge
    a = tg.tensor(1.0, requires_grad=True)
    b = a * 2
    out = b.sin()
    log_hooks(a, b, out)
    all_hooks.append(out.register_hook(predict))
    single_threaded(out.backward)
    assert predicted[0] == [_node_of(t) for t in actual]
    actual.clear()

    # two inputs on the same path, and inputs selecting a sub-graph
    a = tg.tensor(1.0, requires_grad=True)
    b = a * 2
    out = b.sin()
    all_hooks.append(out.register_hook(predict))
    single_threaded(lambda: tg.autograd.grad((out,), inputs=(a, b)))
    assert names(predicted[0]) == f"SinBackward0, MulBackward0, {ACC}"

    a = tg.tensor(1.0, requires_grad=True)
    b = tg.tensor(1.0, requires_grad=True)
    out = (a * b).sin()
    all_hooks.append(out.register_hook(predict))
    single_threaded(lambda: tg.autograd.grad((out,), inputs=(a,)))
    assert names(predicted[0]) == f"SinBackward0, MulBackward0, {ACC}"

    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        tg._C._current_graph_task_execution_order()

    t = tg.tensor(1.0, requires_grad=True).clone().sin().exp()
    all_hooks.append(t.register_hook(predict))
    with pytest.raises(RuntimeError,
                       match="expects the current backward to be executed with multithreading disabled"):
        t.backward()
    for h in all_hooks:
        h.remove()


def test_current_node():
    """_current_autograd_node is None outside backward and the running node inside hooks and backward."""
    log = []

    def current():
        node = tg._C._current_autograd_node()
        return None if node is None else node.name()

    class Double(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            log.append(("Double.backward", current(), tg._C._current_autograd_node() is ctx))
            (x,) = ctx.saved_tensors
            return grad * 2

    def unpack(t):
        log.append(("unpack", current()))
        return t

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    w = tg.tensor([3.0, 4.0])
    log.append(("forward", current()))
    with tg.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        b = a * w  # saves w (and not a, which is not needed)
        c = Double.apply(b)
    loss = c.sum()
    b.register_hook(lambda _g: log.append(("b tensor hook", current())))
    b.grad_fn.register_prehook(lambda _g: log.append(("b pre-hook", current())))
    b.grad_fn.register_hook(lambda _gi, _go: log.append(("b post-hook", current())))
    a.register_hook(lambda _g: log.append(("a tensor hook", current())))
    a.register_post_accumulate_grad_hook(lambda _t: log.append(("a post-accumulate", current())))
    loss.backward()
    log.append(("after", current()))
    assert log == [
        ("forward", None),
        ("Double.backward", "DoubleBackward", True),
        ("unpack", "DoubleBackward"),
        ("b tensor hook", "MulBackward0"),
        ("b pre-hook", "MulBackward0"),
        ("unpack", "MulBackward0"),
        ("b post-hook", "MulBackward0"),
        ("a tensor hook", ACC),
        ("a post-accumulate", ACC),
        ("after", None),
    ]


def test_autograd_node_isinstance():
    """graph.Node is a virtual base: isinstance/issubclass hold for every node, but it is not in the MRO."""
    Node = tg.autograd.graph.Node
    a = tg.ones(3, 3, requires_grad=True)
    b = a.exp()
    assert isinstance(b.grad_fn, Node)
    assert issubclass(type(b.grad_fn), Node)
    assert Node not in type(b.grad_fn).mro()

    acc = b.grad_fn.next_functions[0][0]
    assert isinstance(acc, Node)
    assert issubclass(type(acc), Node)
    assert not isinstance(type(acc), Node)  # the class itself is not a node

    assert not isinstance(None, Node)
    assert not isinstance(1, Node)
    assert not isinstance(Node, Node)
    assert issubclass(Node, Node)
    assert issubclass(tg.autograd.function.BackwardCFunction, Node)

    ctx_checks = []

    class Func(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx_checks.append(isinstance(ctx, Node))
            return x

        @staticmethod
        def backward(ctx, grad):
            ctx_checks.append(isinstance(ctx, Node))
            return grad

    out = Func.apply(a)
    assert isinstance(out.grad_fn, Node)
    assert issubclass(type(out.grad_fn), Node)
    assert Node not in type(out.grad_fn).mro()
    out.sum().backward()
    assert ctx_checks == [True, True]


def test_autograd_print_tensor():
    """repr: requires_grad=True on leaves, grad_fn=<Name> otherwise, <Invalid> for stale no-grad views."""
    a = tg.ones(1, requires_grad=True)
    assert repr(a) == "tensor([1.], requires_grad=True)"
    assert repr(a.clone()) == "tensor([1.], grad_fn=<CloneBackward0>)"

    with tg.no_grad():
        b = a[:]
        b *= 2
    assert repr(b) == "tensor([2.], grad_fn=<Invalid>)"

    class Func(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    assert repr(Func.apply(a)) == "tensor([2.], grad_fn=<FuncBackward>)"
    c = tg.tensor([1.5, 2.0], dtype=tg.float64, requires_grad=True) * 2
    assert repr(c) == "tensor([3., 4.], dtype=torch.float64, grad_fn=<MulBackward0>)"


def test_node_name_and_metadata():
    """Node.name() gives PyTorch's node names; Node.metadata is one persistent dict per node."""
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b.sum()
    assert b.grad_fn.name() == "MulBackward0"
    assert c.grad_fn.name() == "SumBackward0"
    assert type(b.grad_fn).__name__ == "MulBackward0"
    assert b.grad_fn.metadata == {}
    b.grad_fn.metadata["label"] = "scale"
    assert b.grad_fn.metadata is b.grad_fn.metadata
    assert c.grad_fn.next_functions[0][0].metadata == {"label": "scale"}

    var, mean = tg.var_mean(tg.ones(3, 3, requires_grad=True), dim=0)
    assert var.grad_fn is mean.grad_fn
    assert (var.output_nr, mean.output_nr) == (0, 1)


def test_get_gradient_edge_fields():
    """get_gradient_edge gives (node, output_nr), AccumulateGrad for a leaf; no requires_grad raises."""
    a = tg.ones(2, requires_grad=True)
    edge = tg.autograd.graph.get_gradient_edge(a)
    assert edge.node is _node_of(a)
    assert edge.output_nr == 0
    _, mean = tg.var_mean(a * 1, dim=0)
    edge = tg.autograd.graph.get_gradient_edge(mean)
    assert edge.node is mean.grad_fn and edge.output_nr == 1
    with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for a Tensor "
                                           "that does not require gradients"):
        tg.autograd.graph.get_gradient_edge(tg.ones(1))


def test_sequence_numbers_match_torch():
    """Each operator's node takes the next sequence number; a leaf's AccumulateGrad, made on the leaf's first
    use, takes none (it runs first whenever it is ready)."""

    def program(lib):
        x = lib.ones(3, requires_grad=True)
        w = lib.ones(3, requires_grad=True)
        a = x * 2
        b = a * w  # w's accumulator is made here
        c = lib.sin(b) + lib.ones(3, requires_grad=True)
        nodes = [a.grad_fn, b.grad_fn, c.grad_fn, c.grad_fn.next_functions[0][0]]
        first = nodes[0]._sequence_nr()
        return [n._sequence_nr() - first for n in nodes]

    ours, theirs = run_both(program)
    assert ours == theirs


def test_memory_formats_match_torch():
    """contiguous() gives C order whatever the input's layout; clone() keeps a dense input's order
    (preserve_format) and makes others contiguous; channels_last orders N, H, W, C in memory."""

    def program(lib):
        x = lib.tensor(np.arange(12.0).reshape(3, 4)).t()
        expanded = lib.tensor(np.arange(3.0).reshape(3, 1)).expand(3, 4)
        permuted = lib.tensor(np.arange(24.0).reshape(2, 3, 4)).permute(2, 0, 1)
        images = lib.tensor(np.arange(120.0).reshape(2, 3, 4, 5))
        last = images.contiguous(memory_format=lib.channels_last)
        return [x.contiguous().is_contiguous(), x.clone().stride(), expanded.clone().stride(),
                permuted.clone().stride(), last.stride(), last.is_contiguous(),
                last.is_contiguous(memory_format=lib.channels_last), last.clone().stride(),
                last.contiguous().stride(), repr(lib.channels_last), (last * 2).sum().item()]

    ours, theirs = run_both(program)
    assert ours == theirs
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):  # (a contiguous one is kept)
        tg.ones(2, 3).t().contiguous(memory_format=tg.preserve_format)
