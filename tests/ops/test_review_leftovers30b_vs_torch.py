"""Review leftovers (thirtieth round, b), against torch: histogramdd's weights added per thread in the input's
dtype and its density divided as ATen's CPU template does (torch.histogram's density too); half-precision threads'
weighted histograms added in float."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _lib import bits_or_error, on_threads

import tracegrad

_RNG = np.random.default_rng(30)
POINTS = (_RNG.standard_normal((1500, 3)) * 2).tolist()
WEIGHTS = (_RNG.random(1500) * 5).tolist()
EDGES = [[-4.0, -1.0, 0.0, 0.5, 4.0], [-3.0, 0.0, 3.0], [-2.0, -1.5, 1.0, 5.0]]


def _histogramdd(dtype: str, dims: int, weighted: bool, density: bool, given_edges: bool):
    def program(L):
        dt = getattr(L, dtype)
        x = L.tensor([p[:dims] for p in POINTS], dtype=dt)
        w = L.tensor(WEIGHTS, dtype=dt) if weighted else None
        bins = [L.tensor(e, dtype=dt) for e in EDGES[:dims]] if given_edges else 7
        hist, edges = L.histogramdd(x, bins=bins, weight=w, density=density)
        return [hist, *edges]
    return program


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize(("weighted", "density"), [(True, False), (False, True), (True, True)])
def test_histogramdd_bits_as_torch(threads, dtype, dims, weighted, density):
    program = _histogramdd(dtype, dims, weighted, density, given_edges=False)
    with on_threads(threads):
        assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("density", [False, True])
def test_histogramdd_of_given_edges_as_torch(threads, dtype, density):
    program = _histogramdd(dtype, 3, True, density, given_edges=True)
    with on_threads(threads):
        assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weighted", [False, True])
def test_histogram_density_as_torch(threads, dtype, weighted):
    def program(L):
        dt = getattr(L, dtype)
        w = L.tensor(WEIGHTS, dtype=dt) if weighted else None
        return list(L.histogram(L.tensor([p[0] for p in POINTS], dtype=dt), bins=100, weight=w, density=True))

    with on_threads(threads):
        assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


@pytest.mark.parametrize(("dtype", "bins"), [("float16", 4), ("bfloat16", 3)])
def test_half_precision_weighted_histogram_threads_added_in_float(dtype, bins):
    def program(L):
        dt = getattr(L, dtype)
        x = L.tensor([p[0] for p in POINTS], dtype=dt)
        return list(L.histogram(x, bins=bins, range=(-4.0, 4.0), weight=L.tensor(WEIGHTS, dtype=dt)))

    with on_threads(3):
        assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


# ---- calling an overload packet: each overload in turn ------------------------------------------------------

_LIBRARIES = {}


def _two_overloads(L):
    """``leftovers30b::pick`` of two overloads (defined once per library, as a test session keeps them)."""
    if L not in _LIBRARIES:
        lib = L.library.Library("leftovers30b", "DEF")
        lib.define("pick(Tensor x) -> Tensor")
        lib.define("pick.shifted(Tensor x, int n) -> Tensor")
        lib.impl("pick", lambda x: x + 1, "CPU")
        lib.impl("pick.shifted", lambda x, n: x + n, "CPU")
        _LIBRARIES[L] = lib
    return L.ops.leftovers30b.pick


PACKET_CALLS = {
    "first overload": ((), {}),
    "second overload": ((5,), {}),
    "second by keyword": ((), {"n": 2}),
    "no overload: a str": (("a",), {}),
    "no overload: too many": ((1, 2), {}),
    "no overload: unknown keyword": ((), {"m": 3}),
}


@pytest.mark.parametrize("call", list(PACKET_CALLS))
def test_library_packet_tries_each_overload_as_torch(call):
    args, kwargs = PACKET_CALLS[call]

    def program(L):
        return _two_overloads(L)(L.tensor([1.0, 2.0]), *args, **kwargs)

    ours, theirs = bits_or_error(program, tracegrad), bits_or_error(program, torch)
    assert ours == theirs


def test_library_packet_error_lists_each_overload_as_torch():
    def message(L):
        with pytest.raises(RuntimeError) as info:
            _two_overloads(L)(L.tensor([1.0]), "a")
        return str(info.value)

    assert message(tracegrad) == message(torch)


ATEN_CALLS = {
    "add, a number: add.Tensor": ("add", lambda x: (x, 1)),
    "add, a positional alpha: add.Scalar": ("add", lambda x: (x, 1, 2)),
    "mul, a float": ("mul", lambda x: (x, 2.5)),
    "sub of tensors": ("sub", lambda x: (x, x)),
    "pow of a number": ("pow", lambda x: (2, x)),
    "sum over dims": ("sum", lambda x: (x, [0])),
    "sum": ("sum", lambda x: (x,)),
    "fmod, a number": ("fmod", lambda x: (x, 1.5)),
    "where, a number": ("where", lambda x: (x > 1, x, 1)),
}


@pytest.mark.parametrize("call", list(ATEN_CALLS))
def test_aten_packet_picks_overload_as_torch(call):
    name, arguments = ATEN_CALLS[call]

    def program(L):
        return getattr(L.ops.aten, name)(*arguments(L.tensor([1.0, 2.0])))

    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


def test_aten_packet_error_starts_as_torch():
    """(torch's list goes on with the out= and TorchScript overloads, which tracegrad does not register)"""
    def message(L):
        with pytest.raises(RuntimeError) as info:
            L.ops.aten.add(L.tensor([1.0]), "a")
        return str(info.value)

    ours, theirs = message(tracegrad), message(torch)
    assert theirs.startswith(ours) and ours.count("Declaration: aten::add.") == 2


# ---- bfloat16 losses: each step of ATen's kernels rounded to bfloat16 -----------------------------------------

LOSS_X = (_RNG.standard_normal(600) * 4).tolist()
LOSS_SIGNS = np.sign(_RNG.standard_normal(600)).tolist()
LOSS_TARGETS = (_RNG.random(600) * 4).tolist()


def _loss_and_grads(name: str, target: list, input_dtype: str, target_dtype: str, reduction: str):
    def program(L):
        x = L.tensor(LOSS_X, dtype=getattr(L, input_dtype)).reshape(20, 30).requires_grad_()
        t = L.tensor(target, dtype=getattr(L, target_dtype)).reshape(20, 30)
        loss = getattr(L.nn.functional, name)(x, t, reduction=reduction)
        grad, = L.autograd.grad(loss, x, L.ones_like(loss))
        return [loss, grad]
    return program


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize(("input_dtype", "target_dtype"),
                         [("bfloat16", "bfloat16"), ("bfloat16", "float32"), ("float16", "float16")])
def test_mse_loss_bits_as_torch(input_dtype, target_dtype, reduction):
    program = _loss_and_grads("mse_loss", LOSS_TARGETS, input_dtype, target_dtype, reduction)
    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("target", ["signs", "reals"])
def test_soft_margin_loss_bits_as_torch(dtype, target, reduction):
    targets = LOSS_SIGNS if target == "signs" else LOSS_TARGETS
    program = _loss_and_grads("soft_margin_loss", targets, dtype, dtype, reduction)
    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)
