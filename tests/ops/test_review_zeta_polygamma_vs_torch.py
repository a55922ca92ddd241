"""Review of special.zeta/polygamma (Cephes' steps worked in chunks) and the incomplete gamma's gradient.

- ``polygamma(n, x)`` for n > 170 in float64 raised OverflowError (Python's math.exp refuses to overflow where
  PyTorch's exp(lgamma(n + 1)) is inf).
- ``zeta`` with a large negative non-integer q (integer s) takes one Cephes step per unit up to 9: worked 64
  steps a chunk, q = -3e6 + 0.5 took some 30 s (torch: 0.1 s); chunks now hold up to about a million terms.
- ``special.zeta(number, number)`` computed where PyTorch's parser refuses.
- The gradient of ``gammainc``/``gammaincc`` w.r.t. x took log Gamma(a) from an approximation that is not 0 at
  a = 1 and 2 (3.6e-15 there), a few ulps off torch.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from _lib import tg, torch


def _same_bits(ours, theirs) -> None:
    ours, theirs = ours.detach().numpy(), theirs.detach().numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert ours.tobytes() == theirs.tobytes()


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("n", [170, 171, 200, 1000])
def test_polygamma_of_large_order(n, dtype):
    x = np.array([0.5, 1.0, 3.0, 100.0, -2.5, np.inf, 0.0], dtype=dtype)
    _same_bits(tg.polygamma(n, tg.from_numpy(x)), torch.polygamma(n, torch.from_numpy(x)))


def test_polygamma_backward_into_large_order():
    results = []
    for lib in (tg, torch):
        x = lib.tensor([0.5, 3.0], dtype=lib.float64, requires_grad=True)
        lib.polygamma(170, x).sum().backward()  # (the gradient is polygamma(171, x))
        results.append(x.grad)
    _same_bits(*results)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_zeta_large_negative_q(dtype):
    s = np.array([2.0, 3.0, 4.0, 2.0, 5.0], dtype=dtype)
    q = np.array([-3e6 + 0.5, -123456.25, -7.5, 1e-6, -20000.5], dtype=dtype)
    start = time.perf_counter()
    ours = tg.special.zeta(tg.from_numpy(s), tg.from_numpy(q))
    assert time.perf_counter() - start < 5.0  # (was some 30 s)
    _same_bits(ours, torch.special.zeta(torch.from_numpy(s), torch.from_numpy(q)))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_zeta_mixed_step_counts(dtype):
    rng = np.random.default_rng(7)
    s = np.concatenate([rng.integers(2, 40, 1500).astype(float), rng.uniform(1, 3, 500)]).astype(dtype)
    q = np.concatenate([rng.uniform(-3000, 50, 1500), rng.uniform(1e-3, 1, 500)]).astype(dtype)
    _same_bits(tg.special.zeta(tg.from_numpy(s), tg.from_numpy(q)),
               torch.special.zeta(torch.from_numpy(s), torch.from_numpy(q)))


@pytest.mark.parametrize("args", [(2.0, 3.0), (2, 3), (True, 2.0)])
def test_zeta_of_two_numbers_is_refused(args):
    with pytest.raises(TypeError) as theirs:
        torch.special.zeta(*args)
    with pytest.raises(TypeError) as ours:
        tg.special.zeta(*args)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_grad_at_integer_shape(name):
    grads = []
    for lib in (tg, torch):
        x = lib.tensor([1.0, 0.5, 3.0, 1.0], dtype=lib.float64, requires_grad=True)
        a = lib.tensor([2.0, 1.0, 1.0, 1.0], dtype=lib.float64)
        getattr(lib.special, name)(a, x).sum().backward()
        grads.append(x.grad)
    _same_bits(*grads)
