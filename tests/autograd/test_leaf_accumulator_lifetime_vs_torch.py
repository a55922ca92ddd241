"""A leaf's AccumulateGrad lives as long as the graphs that reach it, as in PyTorch (compared with torch).

PyTorch's leaf holds its AccumulateGrad node weakly and the node holds the leaf: a graph keeps both alive, and
when the last graph that reaches the node dies, the node dies, and a leaf nobody else holds is freed at once,
by reference counting. The next graph gets a new node. tracegrad's node once cached its own edge, a reference
cycle that kept every leaf used in a graph alive until Python's cycle collector ran (a deleted model's
parameters, a dropped input that required grad): these programs run with the collector off.
"""

from __future__ import annotations

import weakref

import pytest
from _lib import collector_off, run_both


def _alive(refs: dict) -> dict:
    return {name: ref() is not None for name, ref in refs.items()}


def _leaf_after_forward(lib):
    x = lib.randn(3, requires_grad=True)
    y = (x * 2).sum()
    refs = {"x": weakref.ref(x)}
    del x, y
    return refs


def _leaf_after_backward(lib):
    x = lib.randn(3, requires_grad=True)
    y = x.sin().sum()
    y.backward()
    refs = {"x": weakref.ref(x), "x.grad": weakref.ref(x.grad)}
    del x, y
    return refs


def _leaf_through_each_path(lib):
    """Leaves reaching graphs through the unary, binary, matrix, linear and general paths."""
    a, b = lib.randn(4, 4, requires_grad=True), lib.randn(4, 4, requires_grad=True)
    w, bias = lib.randn(2, 4, requires_grad=True), lib.randn(2, requires_grad=True)
    c = lib.randn(4, requires_grad=True)
    outs = [a.exp(), a * b, a @ b, lib.nn.functional.linear(a, w, bias), lib.cat([c, c]), c[1:], a.t()]
    refs = {name: weakref.ref(t) for name, t in (("a", a), ("b", b), ("w", w), ("bias", bias), ("c", c))}
    del a, b, w, bias, c, outs
    return refs


def _model_after_backward(lib):
    """(No optimizer: torch's keeps itself in a reference cycle until its first step.)"""
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
    loss = lib.nn.functional.cross_entropy(model(lib.randn(5, 4)), lib.tensor([0, 1, 2, 0, 1]))
    loss.backward()
    refs = {f"param {i}": weakref.ref(p) for i, p in enumerate(model.parameters())}
    del model, loss
    return refs


def _leaf_of_custom_function(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = lib.randn(3, requires_grad=True)
    Double.apply(x).sum().backward()
    refs = {"x": weakref.ref(x)}
    del x
    return refs, Double  # (the class itself is a cycle, in both libraries: kept out of the check)


@pytest.mark.parametrize("program", [_leaf_after_forward, _leaf_after_backward, _leaf_through_each_path,
                                     _model_after_backward])
def test_a_dead_graph_frees_its_leaves_by_reference_counting(program):
    with collector_off():
        ours, theirs = run_both(lambda lib: _alive(program(lib)))
    assert ours == theirs
    assert not any(ours.values())


def test_a_custom_function_graph_frees_its_leaf_too():
    with collector_off():
        ours, theirs = run_both(lambda lib: _alive(_leaf_of_custom_function(lib)[0]))
    assert ours == theirs == {"x": False}


def _accumulator_identity(lib):
    """Is the AccumulateGrad node the same while a graph holds it, or while the user holds it?"""
    x = lib.randn(3, requires_grad=True)
    first = x * 2
    acc = first.grad_fn.next_functions[0][0]
    same_while_graph_alive = (x * 3).grad_fn.next_functions[0][0] is acc
    del first
    same_while_user_holds_it = (x * 4).grad_fn.next_functions[0][0] is acc
    del acc
    edge = lib.autograd.graph.get_gradient_edge(x)  # (holding the edge holds the node)
    same_while_edge_held = (x * 5).grad_fn.next_functions[0][0] is edge.node
    return same_while_graph_alive, same_while_user_holds_it, same_while_edge_held


def test_the_node_is_shared_while_a_graph_or_the_user_holds_it():
    with collector_off():
        ours, theirs = run_both(_accumulator_identity)
    assert ours == theirs == (True, True, True)
    # (that the node dies with the last graph: test_a_hook_on_the_node_goes_with_its_graph)


def _node_hook_dies_with_its_graph(lib):
    calls = []
    x = lib.randn(3, requires_grad=True)
    y = (x * 2).sum()
    y.grad_fn.next_functions[0][0].next_functions[0][0].register_prehook(lambda g: calls.append("first graph"))
    y.backward()
    del y
    (x * 3).sum().backward()  # (a new graph, a new node: the hook went with the first)
    return calls, x.grad.tolist() == [5.0, 5.0, 5.0]


def test_a_hook_on_the_node_goes_with_its_graph():
    with collector_off():
        ours, theirs = run_both(_node_hook_dies_with_its_graph)
    assert ours == theirs == (["first graph"], True)


def _dropped_leaf_still_accumulates(lib):
    """A graph keeps its leaves alive: their hooks run and their node's variable is readable after ``del``."""
    calls = []
    x = lib.randn(3, requires_grad=True)
    x.register_hook(lambda g: calls.append("tensor hook"))
    x.register_post_accumulate_grad_hook(lambda t: calls.append(("post accumulate", t.grad.tolist())))
    y = (x * 2).sum()
    x_ref = weakref.ref(x)
    del x
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    kept = acc.variable is x_ref()
    y.backward()
    del y, acc
    return calls, kept, x_ref() is None


def test_a_graph_keeps_a_dropped_leaf_until_it_dies():
    with collector_off():
        ours, theirs = run_both(_dropped_leaf_still_accumulates)
    assert ours == theirs
    assert ours[1] and ours[2]
