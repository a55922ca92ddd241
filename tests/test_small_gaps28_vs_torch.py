"""Small gaps against torch 2.13: in-place writes into expanded tensors (masked_fill_, index_put_, index_fill_ warn
and write; the others refuse), torch.diag's nodes, out= dtype checks of the indexing and triangle operators, the
legacy Variable constructor's argument refusals, and the autograd graph nodes' classes."""

from __future__ import annotations

import warnings

import pytest

from tests._lib import raised, tg, to_numpy, torch

# ---- in-place writes into an expanded tensor -------------------------------------------------------------------

_MASK = "lib.tensor([[True, False, True], [False, True, False]])"
# (each writes into ``e``, a (2, 3) tensor expanded from one row of 0, 1, 2)
_EXPANDED_WRITES = {
    "masked_fill_": f"e.masked_fill_({_MASK}, 5.)",
    "masked_fill_ tensor": f"e.masked_fill_({_MASK}, lib.tensor(5.))",
    "masked_fill_ 1-d mask": "e.masked_fill_(lib.tensor([True, False, False]), 7)",
    "setitem mask number": f"e.__setitem__({_MASK}, 5.)",
    "setitem mask values": f"e.__setitem__({_MASK}, lib.tensor([1., 2., 3.]))",
    "setitem index": "e.__setitem__(lib.tensor([1]), lib.tensor([7., 8., 9.]))",
    "setitem two indices": "e.__setitem__((lib.tensor([0, 1]), lib.tensor([1, 1])), lib.tensor([3., 4.]))",
    "index_put_": "e.index_put_((lib.tensor([0, 1]),), lib.tensor([[1., 2., 3.], [4., 5., 6.]]))",
    "index_put_ accumulate": "e.index_put_((lib.tensor([0, 1]),), lib.tensor(5.), accumulate=True)",
    "index_put_ accumulate repeated": "e.index_put_((lib.tensor([0, 1, 1]), lib.tensor([0, 0, 2])), "
                                      "lib.tensor([1., 2., 3.]), accumulate=True)",
    "index_fill_": "e.index_fill_(1, lib.tensor([2]), 5.)",
    "index_fill_ dim 0": "e.index_fill_(0, lib.tensor([1]), -1.)",
    "index_fill_ tensor": "e.index_fill_(1, lib.tensor([0, 2]), lib.tensor(4.))",
    # (refused as before, in torch too)
    "masked_scatter_": f"e.masked_scatter_({_MASK}, lib.ones(6))",
    "index_copy_": "e.index_copy_(1, lib.tensor([0]), lib.ones(2, 1))",
    "index_add_": "e.index_add_(1, lib.tensor([0]), lib.ones(2, 1))",
    "index_reduce_": "e.index_reduce_(1, lib.tensor([0]), lib.ones(2, 1), 'prod')",
    "scatter_": "e.scatter_(1, lib.tensor([[0], [0]]), 5.)",
    "scatter_add_": "e.scatter_add_(1, lib.tensor([[0], [0]]), lib.ones(2, 1))",
    "put_": "e.put_(lib.tensor([0]), lib.tensor([5.]))",
    "fill_ tensor": "e.fill_(lib.tensor(4.))",
    "add_": "e.add_(1)",
    # (written silently, as before)
    "fill_": "e.fill_(3)",
    "zero_": "e.zero_()",
    # (argument errors still come first where torch checks them first)
    "masked_fill_ integer mask": "e.masked_fill_(lib.tensor([1, 0, 1]), 1.)",
    "index_fill_ float index": "e.index_fill_(1, lib.tensor([1.]), 1.)",
}


def _expanded_write(lib, call: str, dtype: str = "float32"):
    """``call``'s outcome on an expanded tensor: the values written (or the error), and each warning's category,
    text (without torch's "Triggered internally" note) and line."""
    e = lib.arange(3, dtype=getattr(lib, dtype)).reshape(1, 3).expand(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            eval(call, {"lib": lib, "e": e})  # noqa: S307 - the test's own snippets
            outcome = to_numpy(e).tolist()
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            outcome = (type(exc).__name__, str(exc))
    shown = [(w.category.__name__, str(w.message).split(" (Triggered internally")[0], w.filename, w.lineno)
             for w in caught]
    return outcome, shown


@pytest.mark.parametrize("call", list(_EXPANDED_WRITES.values()), ids=list(_EXPANDED_WRITES))
def test_inplace_writes_into_an_expanded_tensor(call):
    assert _expanded_write(tg, call) == _expanded_write(torch, call)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "int64"])
@pytest.mark.parametrize("call", ["masked_fill_", "setitem mask number", "index_fill_", "index_put_"])
def test_inplace_writes_into_an_expanded_tensor_of_other_dtypes(call, dtype):
    source = _EXPANDED_WRITES[call].replace("1., 2., 3.], [4., 5., 6.]", "1, 0, 1], [0, 1, 1]")
    source = source.replace("lib.tensor([[1, 0, 1], [0, 1, 1]])", f"lib.tensor([[1, 0, 1], [0, 1, 1]], dtype=lib.{dtype})")
    assert _expanded_write(tg, source, dtype) == _expanded_write(torch, source, dtype)


def test_expanded_write_warns_at_each_call_and_the_default_filter_shows_it_once_a_line():
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            for _ in range(3):
                lib.zeros(1, 2).expand(3, 2).masked_fill_(lib.tensor([True, False]), 1.)
            for _ in range(2):
                lib.zeros(1, 2).expand(3, 2).index_fill_(1, lib.tensor([0]), 1.)
        return [(str(w.message)[:30], w.lineno) for w in caught]
    assert run(tg) == run(torch)


def _expanded_view_of_history(lib, write: str):
    """A write into an expanded view of a non-leaf: its history (CopySlices), the values, and the backward, which
    torch refuses in its own words (its CopySlices writes the gradient into an expanded one)."""
    a = lib.ones(1, 3, requires_grad=True)
    c = a * 2
    e = c.expand(2, 3)
    value = lib.tensor(3., requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eval(write, {"lib": lib, "e": e, "v": value})  # noqa: S307 - the test's own snippets
    graph = (e.grad_fn.name(), c.grad_fn.name(), [n and n.name() for n, _ in c.grad_fn.next_functions])
    backward = raised(lib, lambda lib: (e * lib.tensor([[1., 2., 3.], [4., 5., 6.]])).sum().backward())
    return graph, to_numpy(c).tolist(), e._version, backward, a.grad, value.grad


@pytest.mark.parametrize("write", ["e.masked_fill_(lib.tensor([True, False, False]), 5.)",
                                   "e.__setitem__(lib.tensor([0]), lib.tensor([7., 8., 9.]))",
                                   "e.index_fill_(1, lib.tensor([2]), v)"])
def test_expanded_write_into_a_view_with_history(write):
    assert _expanded_view_of_history(tg, write) == _expanded_view_of_history(torch, write)


def test_expanded_write_into_a_view_of_a_leaf_is_refused():
    def run(lib):
        return lib.ones(1, 3, requires_grad=True).expand(2, 3).masked_fill_(lib.tensor([True, False, False]), 1.)
    assert raised(tg, run) == raised(torch, run)


# ---- torch.diag ------------------------------------------------------------------------------------------------

def _node_summary(node) -> tuple:
    saved = {name: getattr(node, name) for name in dir(node) if name.startswith("_saved_")}
    return node.name(), [n and n.name() for n, _ in node.next_functions], saved


@pytest.mark.parametrize("call", ["lib.diag(m)", "lib.diag(m, 1)", "m.diag(-2)", "lib.diag(v)", "lib.diag(v, 2)",
                                  "v.diag(-1)"])
def test_diag_records_diagonal_copy_or_diag_embed(call):
    def run(lib):
        m = lib.arange(12.).reshape(3, 4).requires_grad_()
        v = lib.arange(3.).requires_grad_()
        result = eval(call, {"lib": lib, "m": m, "v": v})  # noqa: S307 - the test's own snippets
        (result * lib.arange(float(result.numel())).reshape(result.shape)).sum().backward()
        source = m if m.grad is not None else v
        return _node_summary(result.grad_fn), to_numpy(result).tolist(), to_numpy(source.grad).tolist()
    assert run(tg) == run(torch)


def test_diag_of_inference_tensors_counts_torchs_writes():
    def run(lib):
        with lib.inference_mode():
            v, m = lib.ones(3), lib.ones(3, 3)
        return [lib.diag(v)._version, lib.diag(m)._version, lib.diag_embed(v)._version,
                lib.diagonal_copy(m)._version]
    assert run(tg) == run(torch)


# ---- out= of another dtype -------------------------------------------------------------------------------------

_OUT_DTYPE_CALLS = {
    "index_select": "lib.index_select(x, 0, lib.tensor([0, 2]), out=out)",
    "masked_select": "lib.masked_select(x, x > 3, out=out)",
    "take": "lib.take(x, lib.tensor([0, 2]), out=out)",
    "tril": "lib.tril(x, out=out)",
    "triu": "lib.triu(x, 1, out=out)",
    "diag matrix": "lib.diag(x, out=out)",
    "diag vector": "lib.diag(x[0], 1, out=out)",
    "diag 3-d": "lib.diag(x.unsqueeze(0), out=out)",
    "diagonal_copy": "lib.diagonal_copy(x, out=out)",
}


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "float16", "int64", "bool", "complex64"])
@pytest.mark.parametrize("x_dtype", ["float32", "int64"])
@pytest.mark.parametrize("call", list(_OUT_DTYPE_CALLS.values()), ids=list(_OUT_DTYPE_CALLS))
def test_out_of_another_dtype_is_refused(call, x_dtype, out_dtype):
    def run(lib):
        x = lib.arange(9, dtype=getattr(lib, x_dtype)).reshape(3, 3)
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        eval(call, {"lib": lib, "x": x, "out": out})  # noqa: S307 - the test's own snippets
        return str(out.dtype).replace("tracegrad", "torch"), to_numpy(out).tolist()
    assert raised(tg, run) == raised(torch, run)
    if raised(torch, run) is None:
        assert run(tg) == run(torch)


# ---- the legacy Variable constructor ---------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    "V(x, requires_grad=None)", "V(x, requires_grad=300)", "V(x, requires_grad=-1)", "V(x, requires_grad=2**70)",
    "V(x, requires_grad=1.0)", "V(x, requires_grad='a')", "V(x, 300)", "V(x, volatile=None)",
    "V(x, False, False, None, False, 1)", "V(x, 1, 1, None, None, 1, foo=2)", "V(x, False, False, None, False)",
    "V(x, name=3)", "V(x, foo=1)", "V(x, requires_grad=True, foo=1, bar=2)", "V(x, requires_grad=None, foo=1)",
    "V(x, True, requires_grad=True)", "V(x, data=x)", "V(x=1)", "V(_grad_fn=3, requires_grad=None)",
    "V(data=x, requires_grad=0, volatile=0, _grad_fn=None, name=None, foo=1)",
    "V(x, requires_grad=2).requires_grad", "V(x, True).requires_grad", "V(x, name='n').requires_grad",
])
def test_variable_refuses_arguments_in_torchs_words(call):
    def run(lib):
        return eval(call, {"V": lib.autograd.Variable, "x": lib.ones(2)})  # noqa: S307 - the test's own snippets
    assert raised(tg, run) == raised(torch, run)
    if raised(torch, run) is None:
        assert run(tg) == run(torch)


# ---- backward graph nodes --------------------------------------------------------------------------------------

def _graph_nodes(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * x
    return y.grad_fn, y.grad_fn.next_functions[0][0]


def test_generated_nodes_are_builtins_classes_that_python_cannot_make():
    def run(lib):
        node, accumulate = _graph_nodes(lib)
        made = raised(lib, lambda lib: type(node)())
        return (type(node).__module__, repr(type(node)), type(accumulate).__module__, repr(type(accumulate)),
                node.requires_grad, accumulate.requires_grad, made)
    assert run(tg) == run(torch)


@pytest.mark.parametrize("attribute", ["_saved_self", "_saved_other", "_raw_saved_self", "metadata",
                                       "next_functions", "requires_grad"])
@pytest.mark.parametrize("action", ["set", "delete"])
def test_node_attributes_are_read_only(attribute, action):
    def run(lib):
        node, _ = _graph_nodes(lib)
        if action == "set":
            setattr(node, attribute, 1)
        else:
            delattr(node, attribute)
    assert raised(tg, run) == raised(torch, run)


@pytest.mark.parametrize("attribute", ["metadata", "next_functions"])
def test_accumulate_grad_and_custom_function_node_attributes_are_read_only(attribute):
    def run(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = lib.ones(2, requires_grad=True)
        node = Double.apply(x).grad_fn
        return [raised(lib, lambda lib, n=n: setattr(n, attribute, 1)) for n in (node, node.next_functions[0][0])] + \
            [node.requires_grad]
    assert run(tg) == run(torch)
