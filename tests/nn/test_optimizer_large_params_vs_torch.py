"""Optimizers on parameters large enough for the blocked float64 updates (``aten_vec.fma32_blocked``) give torch's
CPU bits, and the blocked multiply-add itself is torch's fused one, midpoints included."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg
from tracegrad.ops import aten_vec
from tracegrad.ops.aten_vec import BLOCKED_MIN, fma32_blocked, fma_blockable


def _torch_fma(a: np.ndarray, b, c: np.ndarray) -> np.ndarray:
    """torch's ``addcmul(c, a, b)``: one fused multiply-add per element."""
    other = torch.tensor(b) if np.ndim(b) else torch.full(a.shape, float(b), dtype=torch.float32)
    return torch.addcmul(torch.tensor(c), torch.tensor(a), other).numpy()


def _midpoint_operands() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Products that put the exact sum a hair above (or below) a midpoint between two floats, so close that the
    float64 sum lands on the midpoint: rounding that sum again gives the even float, the fused sum the other."""
    a = np.float32(1 + 2**-12)
    b = np.float32(2.0**-24 * (1 - 2**-12 + 2**-24))  # a * b = 2**-24 (1 + 2**-36)
    n = 5003
    rng = np.random.default_rng(3)
    aa = rng.standard_normal(n).astype(np.float32)
    bb = rng.standard_normal(n).astype(np.float32)
    cc = rng.standard_normal(n).astype(np.float32)
    for i in (0, 1234, 4500):  # (in different blocks of the test's scratch)
        aa[i], bb[i], cc[i] = a, b, 1
    aa[2], bb[2], cc[2] = a, -b, -1  # (the same, negated)
    return aa, bb, cc


def test_blocked_fma_is_torchs_fused_multiply_add_at_midpoints():
    a, b, c = _midpoint_operands()
    scratch = np.empty((2, 1000))  # (six blocks)
    ours = fma32_blocked(a, b, c, np.empty_like(c), scratch)
    assert ours[0] == np.float32(1 + 2**-23) and ours[2] == -ours[0]
    assert np.array_equal(ours, _torch_fma(a, b, c))
    unchecked = fma32_blocked(a, b, c, np.empty_like(c), scratch, check_ties=False)
    assert unchecked[0] == 1  # (what the check is for: the float64 sum's tie goes to even)


def test_blocked_fma_with_a_number_and_in_place():
    a, _, c = _midpoint_operands()
    expected = _torch_fma(a, np.float32(-0.01), c)
    ours = fma32_blocked(a, -0.01, c, c, np.empty((2, 1000)))  # (into its addend, block by block)
    assert ours is c and np.array_equal(ours, expected)


def test_blocked_fma_takes_only_dense_float_arrays_that_do_not_half_overlap():
    x = np.zeros(100, np.float32)
    assert fma_blockable(x, x, 0.5, x)
    assert not fma_blockable(x[1:], x[:-1])  # (a shifted overlap would read what a block wrote)
    assert not fma_blockable(x[::2], x[1::2])
    assert not fma_blockable(x, x.astype(np.float64))
    assert not fma_blockable(x.reshape(10, 10).T, x.reshape(10, 10))


OPTIMIZERS = [
    ("SGD", dict(lr=0.01), True),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-4), True),
    ("Adam", dict(lr=1e-3, betas=(0.3, 0.999)), False),  # (a large weight: lerp's other branch)
    ("AdamW", dict(lr=1e-3, amsgrad=True), False),
    ("RMSprop", dict(lr=1e-3, centered=True, momentum=0.9), False),
    ("Adagrad", dict(lr=1e-2), False),
]


def _trajectory(module, name: str, options: dict, transposed: bool, steps: int = 2) -> np.ndarray:
    rng = np.random.default_rng(5)
    start = rng.standard_normal((260, 260)).astype(np.float32)  # (three blocks of 2**15, the last partial)
    param = module.tensor(start.T.copy() if transposed else start).requires_grad_()
    opt = getattr(module.optim, name)([param], **options)
    for _ in range(steps):
        grad = (rng.standard_normal(start.shape) * 0.01).astype(np.float32)
        param.grad = module.tensor(grad.T.copy()).t() if transposed else module.tensor(grad)
        opt.step()
    return param.detach().numpy()


@pytest.mark.parametrize("transposed", [False, True], ids=["dense", "transposed grads"])
@pytest.mark.parametrize(("name", "options", "exact"), OPTIMIZERS)
def test_large_parameter_trajectories_are_torchs(name, options, exact, transposed):
    assert BLOCKED_MIN <= 260 * 260
    theirs = _trajectory(torch, name, options, transposed)
    ours = _trajectory(tg, name, options, transposed)
    if exact:
        assert np.array_equal(theirs, ours)
    else:  # (torch's square roots are MKL's: see test_optimizer_bits_vs_torch; here with parameters near 0)
        assert (theirs != ours).mean() < 0.05
        np.testing.assert_allclose(ours, theirs, rtol=64 * np.finfo(np.float32).eps, atol=1e-8)


@pytest.mark.parametrize(("name", "options", "exact"), OPTIMIZERS)
def test_blocked_updates_are_the_one_call_updates(name, options, exact, monkeypatch):
    """Bit for bit, so that the exact comparisons with torch of test_optimizer_bits_vs_torch (small parameters,
    one-call updates) carry over to the blocked ones."""
    blocked = _trajectory(tg, name, options, transposed=False)
    monkeypatch.setattr(aten_vec, "BLOCKED_MIN", 10**9)
    assert np.array_equal(_trajectory(tg, name, options, transposed=False), blocked)


LARGE_FUSED_OPS = {
    "add alpha": lambda m, a, b, c: m.add(a, b, alpha=0.37),
    "lerp small weight": lambda m, a, b, c: m.lerp(a, b, 0.1),
    "lerp large weight": lambda m, a, b, c: m.lerp(a, b, 0.8),
    "addcmul": lambda m, a, b, c: m.addcmul(a, b, c, value=0.5),
    "addcmul_": lambda m, a, b, c: a.clone().addcmul_(b, c, value=-2.0),
}


@pytest.mark.parametrize("name", list(LARGE_FUSED_OPS))
def test_large_fused_tensor_ops_are_torchs(name):
    """``add(alpha=)``, ``lerp`` and ``addcmul`` of 65,536 elements or more go through the blocked multiply-add
    (``aten_vec._blocked_fma``): torch's bits, midpoints included."""
    a, b, c = _midpoint_operands()
    a, b, c = (np.resize(v, (300, 300)) for v in (a, b, c))
    theirs = LARGE_FUSED_OPS[name](torch, *(torch.tensor(v) for v in (a, b, c))).numpy()
    ours = LARGE_FUSED_OPS[name](tg, *(tg.tensor(v) for v in (a, b, c))).numpy()
    assert np.array_equal(theirs, ours)
