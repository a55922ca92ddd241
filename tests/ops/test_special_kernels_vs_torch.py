"""Dense value comparisons of the Cephes-style special-function kernels with PyTorch's CPU kernels.

Each function is evaluated on a large seeded sample across its domain (uniform bulk, log-uniform magnitudes
from subnormal to the largest finite values, points near integers and the branch points, and the special
values 0, -0, +-1, +-inf, NaN), in float32 and float64, and compared with torch in units in the last place
(ulps). The bounds are what the kernels achieve: where PyTorch computes in float32 with the same operations
(ndtri, i0, i0e, i1, i1e, erfcx, digamma) the float32 results are bit-identical, glibc's expf and logf included;
the float64 ones differ by the fused multiply-adds PyTorch's build compiles in (NumPy has none), a few ulps.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad

_N = 200_000


def _edge_values(dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 8.0, -8.0, 10.0, 50.0, -6.1, -26.7, np.inf,
                     -np.inf, np.nan, info.max, -info.max, info.tiny, -info.tiny, info.smallest_subnormal],
                    dtype=np.float64)


def _real_line(rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
    """Uniform bulks, log-uniform magnitudes of both signs over the dtype's range, and points near integers."""
    info = np.finfo(dtype)
    exponents = rng.uniform(np.log10(info.smallest_subnormal), np.log10(info.max), _N // 4)
    integers = rng.integers(-40, 40, _N // 4).astype(np.float64)
    return np.concatenate([rng.uniform(-30, 30, _N // 4), rng.uniform(-5, 5, _N // 8),
                           10.0 ** exponents * rng.choice([-1.0, 1.0], exponents.size),
                           integers + rng.choice([0.0, 0.5, 1e-3, -1e-3, 1e-6], integers.size),
                           rng.uniform(-200, 200, _N // 8), _edge_values(dtype)])


def _unit_interval(rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
    """Probabilities: uniform, log-uniform down to the smallest subnormal, their mirror images near 1, and
    values outside [0, 1]."""
    info = np.finfo(dtype)
    tiny = 10.0 ** rng.uniform(np.log10(info.smallest_subnormal), 0, _N // 4)
    near_one = 1.0 - 10.0 ** rng.uniform(np.log10(info.epsneg), 0, _N // 4)
    return np.concatenate([rng.uniform(0, 1, _N // 2), tiny, near_one, [-0.5, 1.5, -0.0],
                           _edge_values(dtype)])


def _symmetric_unit(rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
    p = _unit_interval(rng, dtype)
    return p * rng.choice([-1.0, 1.0], p.size)


def _ordered(a: np.ndarray) -> np.ndarray:
    """The floats' bit patterns as integers in the floats' order, so that differences count ulps."""
    bits = a.view(np.int64 if a.dtype == np.float64 else np.int32).astype(np.int64)
    magnitude = bits & (np.iinfo(np.int64 if a.dtype == np.float64 else np.int32).max)
    return np.where(bits < 0, -magnitude, bits)


def _ulp_differences(mine: np.ndarray, ref: np.ndarray) -> np.ndarray:
    assert mine.dtype == ref.dtype and mine.shape == ref.shape
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(mine), nan)
    return np.abs(_ordered(mine[~nan]) - _ordered(ref[~nan]))


# function path, input sampler, {dtype: (max ulps, largest fraction of elements differing at all)}
CASES = {
    "special.ndtri": (_unit_interval, {np.float32: (0, 0.0), np.float64: (6, 0.2)}),
    "i0": (_real_line, {np.float32: (0, 0.0), np.float64: (8, 0.2)}),
    "special.i0e": (_real_line, {np.float32: (0, 0.0), np.float64: (8, 0.2)}),
    "special.i1": (_real_line, {np.float32: (0, 0.0), np.float64: (20, 0.25)}),
    "special.i1e": (_real_line, {np.float32: (0, 0.0), np.float64: (12, 0.2)}),
    # (near digamma's zeros below 0 the reflection cancels: in float64 an ulp of either term is hundreds of the
    # result, and the fused multiply-adds of PyTorch's build show)
    "digamma": (_real_line, {np.float32: (0, 0.0), np.float64: (2048, 5e-3)}),
    "special.erfcx": (_real_line, {np.float32: (0, 0.0), np.float64: (3, 0.05)}),
    "special.log_ndtr": (_real_line, {np.float32: (6, 0.15), np.float64: (40, 0.3)}),
    "erf": (_real_line, {np.float32: (1, 0.05), np.float64: (3, 0.1)}),
    "erfc": (_real_line, {np.float32: (1, 0.05), np.float64: (8, 0.3)}),
    "erfinv": (_symmetric_unit, {np.float32: (1, 0.02), np.float64: (8, 0.4)}),
}


def _function(module, path: str):
    for name in path.split("."):
        module = getattr(module, name)
    return module


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("path", list(CASES))
def test_kernel_values_within_ulps_of_torch(path, dtype):
    sampler, bounds = CASES[path]
    max_ulps, max_fraction = bounds[dtype]
    rng = np.random.default_rng(sum(map(ord, path)))
    with np.errstate(all="ignore"):
        x = sampler(rng, dtype).astype(dtype)
    ref = _function(torch, path)(torch.from_numpy(x)).numpy()
    mine = _function(tracegrad, path)(tracegrad.from_numpy(x)).numpy()
    ulps = _ulp_differences(mine, ref)
    assert ulps.max() <= max_ulps, (path, x[~np.isnan(ref)][ulps.argmax()])
    assert (ulps != 0).mean() <= max_fraction


@pytest.mark.parametrize("path", ["special.ndtri", "i0", "special.i1e", "digamma", "special.erfcx"])
def test_kernels_keep_shape_and_small_inputs(path):
    """0-d, empty and small multi-dimensional inputs go through the same flat kernels."""
    for shape in [(), (0,), (3, 4), (2, 1, 3)]:
        x = np.random.default_rng(0).uniform(0.01, 0.99, shape).astype(np.float32)
        ref = _function(torch, path)(torch.from_numpy(x)).numpy()
        mine = _function(tracegrad, path)(tracegrad.from_numpy(x)).numpy()
        assert mine.shape == ref.shape and mine.dtype == ref.dtype
        np.testing.assert_allclose(mine, ref, rtol=1e-6)


@pytest.mark.parametrize("path", ["special.ndtri", "i0", "special.i0e", "special.i1", "special.i1e", "digamma",
                                  "special.erfcx", "special.log_ndtr", "erfinv"])
def test_gradients_through_the_kernels_match_torch(path):
    x = np.random.default_rng(1).uniform(0.05, 0.95, 64)
    expected = torch.from_numpy(x).requires_grad_()
    _function(torch, path)(expected).sum().backward()
    actual = tracegrad.from_numpy(x).requires_grad_()
    _function(tracegrad, path)(actual).sum().backward()
    np.testing.assert_allclose(actual.grad.numpy(), expected.grad.numpy(), rtol=1e-12, atol=1e-300)


def test_lgamma_float32_is_the_correctly_rounded_value_torch_mostly_gives():
    """PyTorch's float32 lgamma (its vector library) is within 1 ulp of the correctly rounded value but near
    lgamma's zeros (1, 2 and one between each pair of negative integers); this kernel is correctly rounded."""
    x = _real_line(np.random.default_rng(7), np.float32).astype(np.float32)
    ref = torch.lgamma(torch.from_numpy(x)).numpy()
    ulps = _ulp_differences(tracegrad.lgamma(tracegrad.from_numpy(x)).numpy(), ref)
    away_from_zeros = np.abs(ref[~np.isnan(ref)]) > 0.1
    assert ulps[away_from_zeros].max() <= 1
    assert (ulps != 0).mean() <= 0.02


def test_lgamma_float64_within_ulps_of_torch():
    x = _real_line(np.random.default_rng(8), np.float64)
    ref = torch.lgamma(torch.from_numpy(x)).numpy()
    ulps = _ulp_differences(tracegrad.lgamma(tracegrad.from_numpy(x)).numpy(), ref)
    finite = x[~np.isnan(ref)]
    assert ulps[finite > 0].max() <= 8  # (the series around 2 keeps the zeros at 1 and 2 accurate)
    assert np.quantile(ulps, 0.999) <= 100  # (below 0 the reflection cancels near lgamma's zeros)


@pytest.mark.parametrize("path", ["special.ndtri", "special.log_ndtr", "special.erfcx"])
def test_float_and_double_only_kernels_refuse_half_as_torch(path):
    with pytest.raises(NotImplementedError) as expected:
        _function(torch, path)(torch.ones(2, dtype=torch.float16))
    with pytest.raises(NotImplementedError) as actual:
        _function(tracegrad, path)(tracegrad.ones(2, dtype=tracegrad.float16))
    assert str(actual.value) == str(expected.value)
