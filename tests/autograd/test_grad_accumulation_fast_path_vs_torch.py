"""Accumulation into an existing ``.grad`` (a plain backward's in-place add, ``autograd/accumulate.py``) as PyTorch.

A plain backward adds a leaf's gradient into its ``.grad`` in place. For dense float32/float64 tensors with nothing
special active, tracegrad adds the arrays itself instead of dispatching ``add_``; everywhere else the operator
runs. These tests pin what must not differ from PyTorch either way: the bits, the ``.grad`` object and its storage,
its version counter, the order of tensor and post-accumulate-grad hooks, and the errors; and that the operator still
runs where the lean path does not apply.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_same_bits, to_numpy, torch

import tracegrad as tg
import tracegrad._functional_core as functional_core

_DTYPES = {np.float32: (tg.float32, torch.float32), np.float64: (tg.float64, torch.float64)}


@pytest.fixture
def operator_calls(monkeypatch):
    """The accumulations that went through the ``add_`` operator (the general path)."""
    calls = []
    add_inplace = functional_core.add_inplace

    def spy(dst, src):
        calls.append(dst)
        add_inplace(dst, src)

    monkeypatch.setattr(functional_core, "add_inplace", spy)
    return calls


def _leaf(lib, data: np.ndarray):
    return lib.tensor(data.copy(), requires_grad=True)


def _three_backwards(lib, data: np.ndarray, upstream: list) -> dict:
    """Three backward calls through different graphs into one leaf: its ``.grad`` after each, whether it is still
    the first ``.grad`` object (and storage), and its version. (One gradient per call reaches the leaf: PyTorch
    sums several in its input buffer in place, which bumps that buffer's version, and tracegrad out of place.)"""
    w = _leaf(lib, data)
    seen = {"grads": [], "same_object": [], "same_storage": [], "versions": []}
    first = None
    for k, g in enumerate(upstream):
        # (products only, each rounded once as IEEE says: the same bits in both libraries)
        y = (w * (k + 1.5)) * 0.75 if k % 2 else w * lib.tensor(data[::-1].copy())
        y.backward(lib.tensor(g))
        if first is None:
            first, first_ptr = w.grad, w.grad.data_ptr()
        seen["grads"].append(to_numpy(w.grad).copy())
        seen["same_object"].append(w.grad is first)
        seen["same_storage"].append(w.grad.data_ptr() == first_ptr)
        seen["versions"].append(w.grad._version)
    return seen


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_accumulated_bits_identity_and_version(dtype, operator_calls, one_thread):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((5, 7)).astype(dtype)
    upstream = [rng.standard_normal((5, 7)).astype(dtype) * 10.0 ** k for k in range(3)]
    ours, theirs = _three_backwards(tg, data, upstream), _three_backwards(torch, data, upstream)
    for a, b in zip(ours["grads"], theirs["grads"]):
        assert_same_bits(a, b)
    for key in ("same_object", "same_storage", "versions"):
        assert ours[key] == theirs[key], key
    assert ours["versions"] == [0, 1, 2]
    assert not operator_calls  # the lean path added


def test_zero_grad_without_none_keeps_the_tensor(operator_calls):
    """``zero_grad(set_to_none=False)`` then accumulation: the same ``.grad`` object, zeroed and added to in place."""

    def program(lib):
        model = lib.nn.Linear(4, 3)
        with lib.no_grad():
            model.weight.copy_(lib.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10))
            model.bias.fill_(0.5)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        x = lib.tensor(np.arange(-4, 4, dtype=np.float32).reshape(2, 4) / 4)  # (exact products: any order agrees)
        out = []
        for _ in range(3):
            opt.zero_grad(set_to_none=False)
            for scale in (1.0, 2.0):  # two micro-batches
                (model(x * scale) * lib.tensor([[1.0, -2.0, 0.5]])).sum().backward()
            out.append((to_numpy(model.weight.grad).copy(), model.weight.grad._version, id(model.weight.grad)))
            opt.step()
        return out, to_numpy(model.weight).copy()

    (ours, w_ours), (theirs, w_theirs) = program(tg), program(torch)
    for (ga, va, _), (gb, vb, _) in zip(ours, theirs):
        assert_same_bits(ga, gb)
        assert va == vb
    assert len({i for *_, i in ours}) == 1 and len({i for *_, i in theirs}) == 1
    assert_same_bits(w_ours, w_theirs)
    assert operator_calls == []


def test_retain_graph_loop(operator_calls):
    def program(lib):
        w = _leaf(lib, np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
        y = w * 1.7
        for k in range(4):
            y.backward(lib.full((3, 4), 0.3 * (k + 1)), retain_graph=True)
        return w.grad, w.grad._version

    (ga, va), (gb, vb) = program(tg), program(torch)
    assert_same_bits(ga, gb)
    assert va == vb == 3
    assert len(operator_calls) == 0


def _hook_order(lib) -> list:
    """Tensor hooks (one replacing the gradient) and post-accumulate-grad hooks on a leaf, over two backward calls:
    what each saw, in order."""
    log = []
    w = _leaf(lib, np.arange(6, dtype=np.float32).reshape(2, 3))
    w.register_hook(lambda g: log.append(("tensor 1", to_numpy(g).copy())))
    w.register_hook(lambda g: g * 2)
    w.register_hook(lambda g: log.append(("tensor 3", to_numpy(g).copy())))
    w.register_post_accumulate_grad_hook(lambda p: log.append(("post 1", to_numpy(p.grad).copy(), p.grad._version)))

    def post_scale(p):
        p.grad.mul_(0.5)  # a hook may write the accumulated gradient in place
        log.append(("post 2", to_numpy(p.grad).copy(), p.grad._version))

    w.register_post_accumulate_grad_hook(post_scale)
    for k in range(2):
        (w * (k + 1.0)).sum().backward()
        log.append(("after", to_numpy(w.grad).copy(), w.grad._version))
    return log


def test_hook_order_with_tensor_and_post_accumulate_hooks(operator_calls):
    ours, theirs = _hook_order(tg), _hook_order(torch)
    assert [e[0] for e in ours] == [e[0] for e in theirs]
    for a, b in zip(ours, theirs):
        assert_same_bits(a[1], b[1])
        assert a[2:] == b[2:]
    assert operator_calls == []


def test_create_graph_accumulates_out_of_place(operator_calls):
    """Under ``create_graph`` the sum is a new, differentiable ``.grad`` (PyTorch's ``grad = grad + new``)."""

    def program(lib):
        w = _leaf(lib, np.array([0.5, -1.0, 2.0], dtype=np.float32))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # backward(create_graph=True)'s reference-cycle warning
            (w ** 3).sum().backward(create_graph=True)
            first = w.grad
            (w ** 2).sum().backward(create_graph=True)
        return w.grad, w.grad is first, w.grad.requires_grad, first._version, lib.autograd.grad(w.grad.sum(), w)[0]

    ours, theirs = program(tg), program(torch)
    assert_same_bits(ours[0], theirs[0])
    assert ours[1:4] == theirs[1:4]
    assert ours[1:3] == (False, True)
    assert_same_bits(ours[4], theirs[4])
    assert operator_calls == []  # no in-place add at all


def test_plain_backward_into_a_grad_that_requires_grad(operator_calls):
    """A ``.grad`` left by a ``create_graph`` backward, then a plain one: added in place (by the operator)."""

    def program(lib):
        w = _leaf(lib, np.array([0.5, -1.0, 2.0], dtype=np.float32))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (w ** 3).sum().backward(create_graph=True)
        first = w.grad
        (w * 4).sum().backward()
        return w.grad, w.grad is first, w.grad.requires_grad, w.grad._version

    ours, theirs = program(tg), program(torch)
    assert_same_bits(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]
    assert len(operator_calls) == 1


@pytest.mark.parametrize("make_grad", [
    pytest.param(lambda lib: lib.zeros(3, 4).t(), id="transposed"),
    pytest.param(lambda lib: lib.zeros(4, 6)[:, ::2], id="strided-view"),
    pytest.param(lambda lib: lib.zeros(4, 3).to(lib.float64).to(lib.float32), id="plain"),
])
def test_user_set_grad_of_another_layout(make_grad):
    def program(lib):
        w = _leaf(lib, np.arange(12, dtype=np.float32).reshape(4, 3))
        w.grad = make_grad(lib)
        first = w.grad
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's layout-contract warning (a transposed .grad)
            for k in range(2):
                (w * (k + 2.0)).sum().backward()
        return w.grad, w.grad is first, w.grad.stride(), w.grad._version, w.grad._base is not None

    ours, theirs = program(tg), program(torch)
    assert_same_bits(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]


def test_expanded_grad_set_by_the_user_is_refused_as_torch(operator_calls):
    def program(lib):
        w = _leaf(lib, np.ones((4, 3), dtype=np.float32))
        w.grad = lib.zeros(1, 3).expand(4, 3)
        with pytest.raises(RuntimeError) as info:
            (w * 2).backward(lib.ones(4, 3))
        return str(info.value), to_numpy(w.grad).copy()

    (msg_a, ga), (msg_b, gb) = program(tg), program(torch)
    assert msg_a == msg_b
    assert_same_bits(ga, gb)
    assert len(operator_calls) == 1


def test_grad_aliasing_the_incoming_gradient(operator_calls):
    """``.grad`` is the very tensor that arrives (add passes its gradient through): the operator adds it to itself."""

    def program(lib):
        w = _leaf(lib, np.ones((2, 3), dtype=np.float32))
        g = lib.full((2, 3), 3.0)
        w.grad = g
        (w + 0).backward(g)
        return w.grad, w.grad is g, g._version

    ours, theirs = program(tg), program(torch)
    assert_same_bits(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]
    assert len(operator_calls) == 1


def test_grad_dtype_other_than_the_leaf():
    """A leaf whose ``grad_dtype`` differs: each gradient is cast, then added."""
    if not hasattr(torch.ones(1), "grad_dtype"):
        pytest.skip("this torch has no grad_dtype")

    def program(lib):
        w = _leaf(lib, np.array([0.1, 0.2, 0.3], dtype=np.float32))
        w.grad_dtype = lib.float64
        for k in range(3):
            (w * (k + 0.1)).sum().backward()
        return w.grad, w.grad._version

    ours, theirs = program(tg), program(torch)
    assert_same_bits(ours[0], theirs[0])
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("dtype", ["float16", "complex64", "complex128"])
def test_other_dtypes_take_the_operator(dtype, operator_calls):
    _check_three_backwards(
        lambda lib: lib.tensor(np.linspace(0.1, 1.7, 6).reshape(2, 3)).to(getattr(lib, dtype)).requires_grad_(), 1.3)
    assert len(operator_calls) == 2


def _check_three_backwards(make_leaf, offset: float) -> None:
    """``(w * (k + offset)).backward()`` for k = 0, 1, 2 accumulates the same ``.grad`` bits, and bumps its version
    twice, in both libraries."""

    def program(lib):
        w = make_leaf(lib)
        for k in range(3):
            y = w * (k + offset)
            y.backward(lib.ones_like(y))
        return w.grad, w.grad._version

    ours, theirs = program(tg), program(torch)
    assert_same_bits(ours[0], theirs[0])
    assert ours[1] == theirs[1] == 2


def test_inference_mode(operator_calls):
    def refused(lib):
        w = _leaf(lib, np.ones((4, 3), dtype=np.float32))
        with lib.inference_mode():
            w.grad = lib.zeros(4, 3)
        with pytest.raises(RuntimeError) as info:
            (w * 2).backward(lib.ones(4, 3))
        return str(info.value)

    def inside(lib):
        w = _leaf(lib, np.ones((4, 3), dtype=np.float32))
        y = w * 2
        (w * 3).backward(lib.ones(4, 3))
        with lib.inference_mode():
            y.backward(lib.full((4, 3), 0.5))
        return w.grad, w.grad._version, w.grad.is_inference()

    assert refused(tg) == refused(torch)
    ours, theirs = inside(tg), inside(torch)
    assert_same_bits(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]
    assert len(operator_calls) == 2  # (inference mode is special: the operator checks and adds)


def test_observed_and_anomaly_runs_take_the_operator(operator_calls):
    """With an observer of the notebook's events, or anomaly mode, the operator runs, and gives the same result."""
    from tracegrad import _events

    def accumulate_twice() -> np.ndarray:
        w = _leaf(tg, np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
        for k in range(2):
            (w * (k + 0.7)).sum().backward()
        return to_numpy(w.grad).copy()

    plain = accumulate_twice()
    assert operator_calls == []
    seen = []
    unsubscribe = _events.subscribe(lambda kind, payload: seen.append(kind), ["node_executed", "hook"])
    try:
        observed = accumulate_twice()
    finally:
        unsubscribe()
    assert len(operator_calls) == 1 and "node_executed" in seen
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anomaly mode's "will increase the runtime"
        with tg.autograd.detect_anomaly():
            anomalous = accumulate_twice()
    assert len(operator_calls) == 2
    assert_same_bits(observed, plain)
    assert_same_bits(anomalous, plain)


def test_mutation_on_saved_tensors_takes_the_operator(operator_calls):
    with tg.autograd.graph.allow_mutation_on_saved_tensors():
        w = _leaf(tg, np.ones(3, dtype=np.float32))
        for k in range(2):
            (w * (k + 2.0)).sum().backward()
    assert len(operator_calls) == 1
    np.testing.assert_array_equal(to_numpy(w.grad), [5.0, 5.0, 5.0])


@pytest.mark.parametrize("shape", [(), (0, 3), (1,)])
def test_scalar_and_empty_grads(shape, operator_calls):
    _check_three_backwards(lambda lib: lib.full(shape, 1.5, requires_grad=True), 0.3)
    assert operator_calls == []
