"""GELU on a large float32 tensor: tracegrad takes PyTorch's own CPU algorithms (gelu_torch_cpu), so GELU and its
gradient are at least as close to torch's as GELU with the exact erf is (bitwise checks: test_gelu_torch_bits)."""

from __future__ import annotations

import math

import numpy as np
from _lib import tg, torch

from tracegrad.ops.nn_ops._basic import erf_array


def test_gelu_and_its_gradient_on_a_large_tensor_as_torch():
    """torch's own float erf differs from the exact one, and below zero 1 + erf cancels: tracegrad's error from
    torch is bounded by the exact GELU's."""
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
