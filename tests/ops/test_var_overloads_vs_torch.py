"""``torch.ops.aten`` packets of var/std/var_mean/std_mean and max/min pick torch's overload, against torch.

tracegrad registered only ``var.correction`` (and only ``max``/``max.dim``): the packet then took
``aten.var(x, 0)`` for ``dim=0`` with correction 1, where torch's first overload, ``var(Tensor self, bool unbiased)``,
reads 0 as ``unbiased=False``; and ``aten.max(x, torch.tensor(1))`` took the 0-d tensor for ``dim``, where torch's
``max.other`` compares elementwise. The other overloads now exist (computed through the registered operator, as
ATen's composites are), in torch's order, with torch's schemas; a sized ``int[1]`` list takes one int, as torch's
parser does."""

from __future__ import annotations

import warnings

import pytest
import torch
from _lib import bits_or_error

import tracegrad

VARIANCES = ("var", "std", "var_mean", "std_mean")

# (call, given the library's aten packet of one variance op ``op`` and a 2 x 3 input ``x`` requiring grad)
VARIANCE_CALLS = {
    "dim 0 read as unbiased=False": lambda L, op, x: op(x, 0),
    "no argument": lambda L, op, x: op(x),
    "unbiased True": lambda L, op, x: op(x, True),
    "default overload": lambda L, op, x: op.default(x, False),
    "default overload, self by keyword": lambda L, op, x: op.default(self=x),
    "None read as unbiased=False": lambda L, op, x: op(x, None),
    "unbiased by keyword": lambda L, op, x: op(x, unbiased=False),
    "dim list, unbiased": lambda L, op, x: op(x, [0], True),
    "dim list, unbiased, keepdim": lambda L, op, x: op(x, [1], False, True),
    "dim None, unbiased": lambda L, op, x: op(x, None, True),
    "dim overload without unbiased": lambda L, op, x: op.dim(x, None),
    "int dim with correction": lambda L, op, x: op(x, 0, correction=0),
    "dim and correction by keyword": lambda L, op, x: op(x, dim=[0], correction=0),
    "int dim, keywords": lambda L, op, x: op(x, 1, unbiased=False, keepdim=True),
    "unbiased and correction": lambda L, op, x: op(x, [1], False, correction=0),
    "too many arguments": lambda L, op, x: op.default(x, 1, 2),
    "dim overload without dim": lambda L, op, x: op.dim(x),
    "a string": lambda L, op, x: op(x, "a"),
    "out=": lambda L, op, x: op(x.detach(), 0, out=L.empty(3)),
    "out= with unbiased": lambda L, op, x: op(x.detach(), [0], False, out=L.empty(3)),
    "out= requiring grad": lambda L, op, x: op(x, 0, out=L.empty(3)),
    "out overload": lambda L, op, x: op.out(x.detach(), [0], out=L.empty(3)),
    "out0= and out1=": lambda L, op, x: op(x.detach(), [0], out0=L.empty(3), out1=L.empty(3)),
}


def _outcome(program, lib):
    """The result's bits, its node's name and saved correction, or the error's type and whole message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = program(lib)
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            return type(exc).__name__, str(exc)
    results = result if isinstance(result, tuple) else (result,)
    nodes = [(t.grad_fn.name(), getattr(t.grad_fn, "_saved_correction", None)) if t.grad_fn else None
             for t in results]
    return bits_or_error(lambda L: result, lib), nodes


def _input(lib):
    return lib.tensor([[1.0, 2.0, 3.5], [4.0, 5.0, 7.0]], requires_grad=True)


@pytest.mark.parametrize("name", VARIANCES)
@pytest.mark.parametrize("case", list(VARIANCE_CALLS))
def test_variance_packet_call_as_torch(name, case):
    def program(L):
        return VARIANCE_CALLS[case](L, getattr(L.ops.aten, name), _input(L))

    assert _outcome(program, tracegrad) == _outcome(program, torch)


@pytest.mark.parametrize("name", VARIANCES)
def test_variance_gradient_through_default_overload_as_torch(name):
    def gradient(L):
        x = _input(L)
        result = getattr(L.ops.aten, name)(x, 0)
        first = result[0] if isinstance(result, tuple) else result
        first.backward()
        return x.grad

    assert bits_or_error(gradient, tracegrad) == bits_or_error(gradient, torch)


@pytest.mark.parametrize("name", (*VARIANCES, "max", "min"))
def test_overloads_and_schemas_as_torch(name):
    def listed(L):
        packet = getattr(L.ops.aten, name)
        return [(overload, str(getattr(packet, overload)._schema)) for overload in packet.overloads()]

    assert listed(tracegrad) == listed(torch)


EXTREME_CALLS = {
    "0-d float other": lambda L, op, x: op(x, L.tensor(3.0)),
    "0-d int other, not a dim": lambda L, op, x: op(x, L.tensor(1)),
    "broadcast other": lambda L, op, x: op(x, L.tensor([[3.0]])),
    "other overload": lambda L, op, x: op.other(x, L.tensor(3.0)),
    "other by keyword": lambda L, op, x: op(x, other=L.tensor(3.0)),
    "whole tensor": lambda L, op, x: op(x),
    "int dim": lambda L, op, x: op(x, 1, True),
    "a float": lambda L, op, x: op(x, 2.0),
    "unary out=": lambda L, op, x: op(x.detach(), out=L.empty(())),
    "elementwise out=": lambda L, op, x: op(x.detach(), L.tensor(3.0), out=L.empty(2, 3)),
    "elementwise out= requiring grad": lambda L, op, x: op(x, L.tensor(3.0), out=L.empty(2, 3)),
}


@pytest.mark.parametrize("name", ("max", "min"))
@pytest.mark.parametrize("case", list(EXTREME_CALLS))
def test_extreme_packet_call_as_torch(name, case):
    def program(L):
        x = L.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 7.0]], requires_grad=True)
        return EXTREME_CALLS[case](L, getattr(L.ops.aten, name), x)

    assert _outcome(program, tracegrad) == _outcome(program, torch)


@pytest.mark.parametrize("name,indices", (("max", "max_values"), ("min", "min_indices")))
def test_extreme_dim_out_overload_as_torch(name, indices):
    def program(L):
        x = L.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 7.0]])
        return getattr(L.ops.aten, name)(x, 0, **{name: L.empty(3), indices: L.empty(3, dtype=L.long)})

    assert _outcome(program, tracegrad) == _outcome(program, torch)


def test_public_var_unchanged_as_torch():
    """``torch.var``/``Tensor.var`` bind their own signatures: no packet in between."""
    def program(L):
        x = _input(L)
        return (L.var(x), x.var(1), L.var(x, 0, keepdim=True), x.std(0, False), L.var_mean(x, 1, correction=0)[0],
                L.std_mean(x, unbiased=False)[0])

    assert _outcome(program, tracegrad) == _outcome(program, torch)
