"""GELU on large float32 tensors takes erf from two Chebyshev fits evaluated in float32 (activation.py): within
2 ulps of the correctly rounded erf everywhere, and GELU and its gradient as close to torch's as the exact
erf was."""

from __future__ import annotations

import math

import numpy as np
from _lib import tg, torch

from tracegrad.ops.nn_ops._basic import erf_array
from tracegrad.ops.nn_ops.activation import _erf_float32


def _ulps(ours: np.ndarray, exact: np.ndarray) -> np.ndarray:
    spacing = np.spacing(np.abs(exact)).astype(np.float64)
    return np.abs(ours.astype(np.float64) - exact) / spacing


def test_fitted_erf_within_two_ulps_of_the_correctly_rounded_one():
    x = np.concatenate([np.linspace(-5, 5, 400_001), np.random.default_rng(0).standard_normal(100_000) * 2,
                        [0.0, -0.0, 1e-30, -1e-30, 1e-45, 1.25, -1.25, 3.95, -3.95, np.inf, -np.inf]]).astype(np.float32)
    exact = np.array([math.erf(v) for v in x.astype(np.float64)]).astype(np.float32)
    ours = _erf_float32(x)
    assert np.array_equal(np.signbit(ours), np.signbit(exact))
    nonzero = exact != 0
    assert _ulps(ours[nonzero], exact[nonzero]).max() <= 2
    assert np.all(ours[~nonzero] == 0)
    assert np.mean(_ulps(ours[nonzero], exact[nonzero]) <= 1) > 0.999
    assert np.isnan(_erf_float32(np.full(4096, np.nan, np.float32))).all()


def test_gelu_and_its_gradient_on_a_large_tensor_as_torch():
    """As close to torch's as GELU with the exact erf (rounded from double precision) is: torch's own float erf
    differs from the exact one, and below zero 1 + erf cancels, so neither is bitwise torch's."""
    x = (np.random.default_rng(1).standard_normal(1 << 16) * 3).astype(np.float32)
    results = []
    for lib in (tg, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.gelu(t)
        (g,) = lib.autograd.grad(y, t, lib.ones_like(y))
        results.append((y.detach().numpy(), g.numpy()))
    exact_erf = erf_array(x * np.float32(1 / math.sqrt(2)))
    exact_gelu = np.float32(0.5) * x * (np.float32(1) + exact_erf)
    error = np.abs(results[0][0].astype(np.float64) - results[1][0]).max()
    assert error <= 1.25 * np.abs(exact_gelu.astype(np.float64) - results[1][0]).max() + 1e-7
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=3e-7)
