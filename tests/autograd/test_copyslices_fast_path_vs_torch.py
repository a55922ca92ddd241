"""In-place writes into views of a graph's tensors (PyTorch's CopySlices), by tracegrad and by torch: the same
nodes, edges, sequence numbers, versions, gradients and errors.

Recording reads the view's place in its storage once for the CopySlices node and the view's regenerated
``grad_fn``; a plain backward runs CopySlices on the arrays (and the in-place nodes of fills, copies and
``zero_`` by raw rules), while ``create_graph`` and other special modes keep the dispatched operators. Each case is
checked both ways, and where the array path gives way to the operators (a slice whose elements share memory) or
the in-place node's raw rule to its formula (a filled value that needs a gradient).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, raised, recorded_graph, tg, torch


def _leaves(lib) -> dict:
    rng = np.random.default_rng(0)
    arrays = {"x": (4, 6), "z": (4, 2), "w": (), "v": (6,), "p": (2, 3, 8), "q": (2, 2, 5, 4)}
    return {
        name: lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        for name, shape in arrays.items()
    }


# name -> write(lib, y, leaves) -> the view written into (y = x * 2 is the base)
WRITES = {
    "setitem number": lambda lib, y, t: (y.__setitem__(0, 5), y[0])[1],
    "setitem tensor": lambda lib, y, t: (y.__setitem__((slice(None), slice(1, 3)), t["z"]), None)[1],
    "setitem broadcast": lambda lib, y, t: (y.__setitem__(1, t["v"][:1]), None)[1],
    "narrow mul_": lambda lib, y, t: y.narrow(0, 1, 2).mul_(3),
    "diagonal add_": lambda lib, y, t: y.diagonal().add_(1),
    "transposed zero_": lambda lib, y, t: y.t()[1:3].zero_(),
    "fill_ with a value needing grad": lambda lib, y, t: y[1].fill_(t["w"]),
    "copy_ into a strided view": lambda lib, y, t: y.view(-1)[::3].copy_(t["x"].view(-1)[:8] * t["w"]),
    "mul_ by a tensor (saved)": lambda lib, y, t: y[:, 2].mul_(t["x"][:, 0]),
    "view of a view": lambda lib, y, t: y[1:3][:, ::2].sub_(t["v"][:3]),
}


def _record(lib, case: str, create_graph: bool) -> dict:
    t = _leaves(lib)
    y = t["x"] * 2
    first = y.grad_fn
    seen = []
    first.register_prehook(lambda g: seen.append((g[0]._version, g[0].stride(), g[0].detach().clone())))
    start = first._sequence_nr()
    view = WRITES[case](lib, y, t)
    after = y * 1  # (a node made after the write: its sequence number counts the write's nodes)
    out = {
        "graph": recorded_graph([y]),
        "y_version": y._version,
        "after": after.grad_fn._sequence_nr() - start,
        "base_seq": y.grad_fn._sequence_nr() - start,
    }
    if view is not None:
        out.update(
            view_graph=recorded_graph([view]), view_version=view._version, view_seq=view.grad_fn._sequence_nr() - start
        )
    g = lib.arange(24, dtype=lib.float32).reshape(4, 6)
    grads = lib.autograd.grad(y, list(t.values())[:4], g, create_graph=create_graph, allow_unused=True)
    out["grads"] = grads
    out["seen"] = seen
    differentiable = [gr for gr in grads if gr is not None and gr.requires_grad]
    if differentiable:  # (under create_graph: the gradient's own graph, through CopySlices' dispatched operators)
        total = sum((gr * gr).sum() for gr in differentiable)
        out["double"] = lib.autograd.grad(total, [t["x"], t["w"]], allow_unused=True)
    return out


def _assert_same(ours: dict, theirs: dict) -> None:
    for key in ("graph", "y_version", "after", "base_seq", "view_graph", "view_version", "view_seq"):
        assert ours.get(key) == theirs.get(key), key
    for a, b in zip(ours["grads"], theirs["grads"], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert_same_bits(a, b)
    assert len(ours["seen"]) == len(theirs["seen"])
    for (va, sa, ga), (vb, sb, gb) in zip(ours["seen"], theirs["seen"]):
        assert (va, sa) == (vb, sb)
        assert_same_bits(ga, gb)
    if theirs.get("double") is not None:
        for a, b in zip(ours["double"], theirs["double"]):
            assert (a is None) == (b is None)
            if a is not None:
                assert_same_bits(a, b)


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
@pytest.mark.parametrize("case", list(WRITES))
def test_write_into_view_graph_and_gradients_as_torch(case: str, create_graph: bool) -> None:
    _assert_same(_record(tg, case, create_graph), _record(torch, case, create_graph))


@pytest.mark.parametrize("case", ["setitem number", "transposed zero_", "copy_ into a strided view"])
def test_backward_from_the_base_and_the_view_accumulates_as_torch(case: str) -> None:
    def run(lib):
        t = _leaves(lib)
        y = t["x"] * 2
        view = WRITES[case](lib, y, t)
        view = y[0] if view is None else view
        (y.sum() + (view * view).sum()).backward()
        return t["x"].grad, y._version

    (ours, ours_version), (theirs, theirs_version) = run(tg), run(torch)
    assert ours_version == theirs_version
    assert_same_bits(ours, theirs)


def test_write_into_an_expanded_view_fails_in_backward_as_torch() -> None:
    # zero_ may write where elements share memory; CopySlices' copy_ into that slice may not
    def run(lib):
        x = lib.ones(3, 4, requires_grad=True)
        y = x * 2
        y[0].expand(2, 4).zero_()
        y.sum().backward()

    assert raised(tg, run) == raised(torch, run)
    assert raised(torch, run) is not None


def test_second_backward_through_the_write_fails_as_torch() -> None:
    def run(lib):
        x = lib.ones(3, 4, requires_grad=True)
        y = x * 2
        y[1:].mul_(x[1:])
        y.sum().backward()
        y.sum().backward()

    assert raised(tg, run) == raised(torch, run)


@pytest.mark.parametrize("shape,pad", [((2, 3, 8), (1, 1)), ((2, 2, 5, 4), (2, 1, 1, 3)), ((2, 3, 8), (3, -2))])
def test_circular_pad_graph_and_gradients_as_torch(shape: tuple, pad: tuple) -> None:
    def run(lib):
        x = lib.tensor(np.random.default_rng(1).standard_normal(shape).astype(np.float32), requires_grad=True)
        out = lib.nn.functional.pad(x, pad, mode="circular")
        out.backward(lib.arange(out.numel(), dtype=lib.float32).reshape(out.shape))
        return recorded_graph([out]), out._version, out, x.grad

    (graph, version, out, grad), (t_graph, t_version, t_out, t_grad) = run(tg), run(torch)
    assert (graph, version) == (t_graph, t_version)
    assert_same_bits(out, t_out)
    assert_same_bits(grad, t_grad)


# (the views whose storage offsets a write reads: through ndarray owners, as_strided's, empty ones)
OFFSET_VIEWS = {
    "row": lambda t: t[2],
    "column slice": lambda t: t[:, 3:5],
    "transposed": lambda t: t.t()[1:, 2],
    "diagonal": lambda t: t[1:].diagonal(1),
    "as_strided": lambda t: t.as_strided((2, 2), (3, 1), 5)[1],
    "empty": lambda t: t[3:3, 1:],
    "view of a view": lambda t: t[1:][1:][:, ::2],
}


@pytest.mark.parametrize("name", list(OFFSET_VIEWS))
def test_storage_offsets_and_data_pointers_of_views_as_torch(name: str) -> None:
    def run(lib):
        base = lib.arange(24.0).reshape(4, 6)
        view = OFFSET_VIEWS[name](base)
        return view.storage_offset(), view.data_ptr() - base.data_ptr() if view.numel() else None, view.stride()

    assert run(tg) == run(torch)
