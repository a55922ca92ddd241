"""Differences that the programs of ``tests/test_user_programs41_vs_torch.py`` (and the probes around them) ran
into, each reduced to the operation that caused it and compared with torch.

- a float16 batch norm with float32 parameters (a model's BatchNorm kept in float32 under ``.half()``) rounded
  the weight's and bias's gradients to float16 precision (though stored float32): torch's mixed kernel keeps them
  float;
- ``dtype.to_complex()`` of an integer or bool dtype returned the dtype itself, where torch refuses it;
- ``Module.to(..., copy=...)`` was accepted (torch: ".to() does not accept copy argument");
- ``out=`` of another floating dtype was cast into by mm/bmm/addmm/baddbmm/addmv/gather/where, which torch
  refuses ("Expected out tensor to have dtype float, but got c10::Half instead").
"""

from __future__ import annotations

import pytest
from _lib import np, tg, torch, value_or_error

pytestmark = pytest.mark.usefixtures("one_thread")


def _mixed_batch_norm_grads(lib, shape: tuple, train: bool) -> tuple:
    """(input grad dtype, weight grad, bias grad) of a float32 BatchNorm1d on a float16 batch."""
    bn = lib.nn.BatchNorm1d(3).train(train)
    with lib.no_grad():
        bn.weight.copy_(lib.tensor([1.3, 0.7, 2.1]))
        bn.bias.copy_(lib.tensor([0.1, 0.2, 0.3]))
    data = np.random.default_rng(41).standard_normal(shape).astype(np.float32) * 2
    x = lib.tensor(data).half().requires_grad_()
    (bn(x).float() ** 2).sum().backward()
    return str(x.grad.dtype).split(".")[1], bn.weight.grad.numpy(), bn.bias.grad.numpy()


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("shape", [(6, 3), (6, 3, 5)])
def test_mixed_half_batch_norm_keeps_float_parameter_gradients(shape, train):
    ours, theirs = _mixed_batch_norm_grads(tg, shape, train), _mixed_batch_norm_grads(torch, shape, train)
    assert ours[0] == theirs[0] == "float16"
    for a, b in zip(ours[1:], theirs[1:]):
        assert a.dtype == b.dtype == np.float32
        # (float sums ordered otherwise: an ulp or two of float32; float16's rounding was ~1e-3 off)
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["int32", "int64", "uint8", "bool", "int8", "uint16", "float32", "float64",
                                  "bfloat16", "complex64"])
def test_to_complex_refuses_integers(name):
    def program(lib):
        try:
            return str(getattr(lib, name).to_complex())
        except RuntimeError as e:
            return "RuntimeError", str(e)

    assert program(tg) == program(torch)


@pytest.mark.parametrize("call", [
    lambda L, m: m.to(L.float16, copy=True),
    lambda L, m: m.to(L.float16, False, True),
    lambda L, m: m.to("cpu", L.float64, False, True),
    lambda L, m: m.to(L.ones(1), False, True),
    lambda L, m: m.to(copy=True),
    lambda L, m: m.to(L.float16, copy=False).weight.dtype,
    lambda L, m: m.to(L.float16, True).weight.dtype,
    lambda L, m: m.to(L.float16, False, False),
    lambda L, m: m.to(L.float64).weight.dtype,
])
def test_module_to_refuses_copy(call):
    def program(lib):
        try:
            return str(call(lib, lib.nn.Linear(2, 2)))
        except RuntimeError as e:
            return "RuntimeError", str(e)

    assert program(tg) == program(torch)


_OUT_CALLS = {
    "mm": lambda L, out: L.mm(L.ones(2, 2), L.ones(2, 2), out=out(2, 2)),
    "bmm": lambda L, out: L.bmm(L.ones(1, 2, 2), L.ones(1, 2, 2), out=out(1, 2, 2)),
    "addmm": lambda L, out: L.addmm(L.ones(2, 2), L.ones(2, 2), L.ones(2, 2), out=out(2, 2)),
    "baddbmm": lambda L, out: L.baddbmm(L.ones(1, 2, 2), L.ones(1, 2, 2), L.ones(1, 2, 2), out=out(1, 2, 2)),
    "addmv": lambda L, out: L.addmv(L.ones(2), L.ones(2, 2), L.ones(2), out=out(2)),
    "gather": lambda L, out: L.gather(L.ones(2), 0, L.tensor([0]), out=out(1)),
    "where": lambda L, out: L.where(L.tensor([True, False]), L.ones(2), L.zeros(2), out=out(2)),
}


@pytest.mark.parametrize("out_dtype", ["float16", "float64", "float32"])
@pytest.mark.parametrize("name", sorted(_OUT_CALLS))
def test_out_of_another_floating_dtype_is_refused(name, out_dtype):
    def program(lib):
        return _OUT_CALLS[name](lib, lambda *shape: lib.empty(*shape, dtype=getattr(lib, out_dtype)))

    assert value_or_error(program, tg) == value_or_error(program, torch)
