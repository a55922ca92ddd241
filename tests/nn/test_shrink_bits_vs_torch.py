"""softshrink gives PyTorch's CPU bits, the sign of its zeros included: its kernel (registered for AVX2 only: blocks
of 16 floats, 8 doubles, 32 halves) computes ``x - clamp(x, -lambd, lambd)`` in its vector code, +0 inside the band,
and ``x * 0`` in the scalar loop that finishes each run, -0 for a negative x (half: +0 there too, from float). So the
zeros of one tensor differ in sign by position, as torch's do."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")

LENGTHS = [*range(1, 70), 100, 1000, 4097]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("lambd", [0.5, 0.0, 1.25])
def test_softshrink_values_and_zero_signs(dtype, lambd):
    rng = np.random.default_rng(0)
    for n in LENGTHS:
        x = (rng.standard_normal(n) * 0.8).astype(dtype)
        x[: min(n, 4)] = [np.nan, -0.0, np.inf, -np.inf][: min(n, 4)]
        for view in (lambda t: t, lambda t: t[::2], lambda t: t.unsqueeze(0).expand(3, -1)):
            assert_same_bits(tg.nn.functional.softshrink(view(tg.from_numpy(x)), lambd),
                             torch.nn.functional.softshrink(view(torch.from_numpy(x)), lambd))


def test_softshrink_gradient():
    x = (np.random.default_rng(1).standard_normal((9, 37)) * 0.8).astype(np.float32)
    grads = []
    for lib in (tg, torch):
        leaf = lib.tensor(x, requires_grad=True)
        lib.nn.functional.softshrink(leaf.t(), 0.3).sum().backward()
        grads.append(leaf.grad)
    assert_same_bits(*grads)


@pytest.mark.parametrize("name", ["softshrink", "hardshrink"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_gradient_at_nan(name, dtype):
    """The vector code's mask passes no gradient at NaN; the scalar loop's test lets it through."""
    rng = np.random.default_rng(2)
    for n in (7, 40, 70, 1000):
        x = (rng.standard_normal(n) * 0.8).astype(dtype)
        x[rng.random(n) < 0.2] = np.nan
        grads = []
        for lib in (tg, torch):
            leaf = lib.tensor(x, requires_grad=True)
            getattr(lib.nn.functional, name)(leaf, 0.5).backward(lib.ones(n, dtype=leaf.dtype))
            grads.append(leaf.grad)
        assert_same_bits(*grads)
