"""A leaf that has a ``.grad`` already, reached by the engine's array loop (``autograd/array_chain.py``), accumulates
as its one gradient arrives (``accumulate.adds_on_arrival``) instead of through the queue, where that adds the
arrays in place and calls no user code: no hooks of any kind, no cast, the ``.grad`` laid out as the leaf.

These tests pin what must not differ from PyTorch either way (bits, the ``.grad`` object, its version, hook order,
the layout warning, the errors) and that the common program takes the lean path.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import assert_same_bits, np, tg, torch

from tracegrad.autograd.accumulate import AccumulateGrad

# (products by numbers and sums: IEEE's one rounding, the same bits in both libraries)
_PROGRAMS = {
    "(x * 2).sum()": lambda x: (x * 2).sum(),
    "(x * 2.5).relu().sum()": lambda x: (x * 2.5).relu().sum(),
    "((x * 3) * 0.5).sum()": lambda x: ((x * 3) * 0.5).sum(),
    "(x + 1).sum()": lambda x: (x + 1).sum(),
    "(x * 2).mean()": lambda x: (x * 2).mean(),
}


def _leaf(lib, shape: tuple, dtype: str):
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) / 3 - 1
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)


def _accumulated(lib, program: str, shape: tuple, dtype: str, steps: int = 3):
    """The ``.grad`` after ``steps`` backward calls, whether it stayed one object, and its version."""
    x = _leaf(lib, shape, dtype)
    _PROGRAMS[program](x).backward()
    first = x.grad
    version = first._version
    for _ in range(steps - 1):
        _PROGRAMS[program](x).backward()
    return x.grad, x.grad is first, x.grad._version - version


@pytest.mark.parametrize("program", list(_PROGRAMS))
@pytest.mark.parametrize("shape", [(4, 4), (3,), (), (2, 1, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_accumulated_grad_as_torch(program, shape, dtype):
    ours, theirs = (_accumulated(lib, program, shape, dtype) for lib in (tg, torch))
    assert_same_bits(ours[0], theirs[0])
    assert ours[0].stride() == theirs[0].stride()
    assert ours[1:] == theirs[1:]


def test_the_common_program_adds_on_arrival(monkeypatch):
    """``(x * 2).sum().backward()`` into an existing ``.grad`` runs no AccumulateGrad node from the queue."""
    x = tg.randn(4, 4, requires_grad=True)
    (x * 2).sum().backward()
    loss = (x * 2).sum()

    def refuse(self, grads):
        raise AssertionError("AccumulateGrad ran from the queue")

    monkeypatch.setattr(AccumulateGrad, "apply", refuse)
    loss.backward()
    assert_same_bits(x.grad, np.full((4, 4), 4, np.float32))


def _hooked_run(lib) -> list:
    """Hooks of every kind on a leaf with a ``.grad``: they all run, in torch's order."""
    x = _leaf(lib, (2, 3), "float32")
    (x * 2).sum().backward()
    calls = []
    x.register_hook(lambda g: calls.append(("tensor", g.sum().item())))
    x.register_post_accumulate_grad_hook(lambda t: calls.append(("post_accumulate", t.grad.sum().item())))
    (x * 2).sum().backward()
    return calls


def test_hooks_still_run_in_torchs_order():
    assert _hooked_run(tg) == _hooked_run(torch)


def _node_hook_run(lib, kind: str) -> list:
    x = _leaf(lib, (2, 3), "float32")
    (x * 2).sum().backward()
    y = x * 2
    node = y.grad_fn.next_functions[0][0]  # (x's AccumulateGrad)
    calls = []
    if kind == "pre":
        node.register_prehook(lambda grads: calls.append(("pre", grads[0].sum().item())))
    else:
        node.register_hook(lambda grads_in, grads_out: calls.append(("post", grads_out[0].sum().item())))
    y.sum().backward()
    calls.append(("grad", x.grad.sum().item()))
    return calls


@pytest.mark.parametrize("kind", ["pre", "post"])
def test_node_hooks_on_the_accumulator_still_run(kind):
    assert _node_hook_run(tg, kind) == _node_hook_run(torch, kind)


def _transposed_grad_run(lib):
    """A ``.grad`` the user set with other strides than the leaf's: torch warns of the layout contract once."""
    x = _leaf(lib, (3, 3), "float32")
    x.grad = lib.zeros(3, 3).t().contiguous().t()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (x * 2).sum().backward()
    return x.grad, [str(w.message).split("\n")[0] for w in caught]


def test_grad_of_another_layout_warns_as_torch():
    (ours, ours_warned), (theirs, theirs_warned) = _transposed_grad_run(tg), _transposed_grad_run(torch)
    assert_same_bits(ours, theirs)
    assert ours.stride() == theirs.stride()
    assert ours_warned == theirs_warned


def _aliased_run(lib):
    """The incoming gradient is the ``.grad`` itself (``add``'s rule hands it on unchanged)."""
    x = _leaf(lib, (2, 2), "float64")
    g = lib.ones(2, 2, dtype=lib.float64)
    x.grad = g
    (x + 1).backward(g)
    return x.grad, x.grad is g, g._version


def test_incoming_gradient_aliasing_the_grad():
    (ours, ours_same, ours_version), (theirs, theirs_same, theirs_version) = _aliased_run(tg), _aliased_run(torch)
    assert_same_bits(ours, theirs)
    assert (ours_same, ours_version) == (theirs_same, theirs_version)


def _grad_dtype_run(lib):
    x = _leaf(lib, (2, 2), "float32")
    x.grad_dtype = lib.float64
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    return x.grad


def test_leaf_with_a_grad_dtype():
    ours, theirs = _grad_dtype_run(tg), _grad_dtype_run(torch)
    assert_same_bits(ours, theirs)
