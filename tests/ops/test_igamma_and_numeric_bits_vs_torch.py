"""Last bits of a few numeric kernels against torch, bit for bit.

- ``special.polygamma(1, x)`` (trigamma) in float32: the series fused and the C library's sinf, as torch's kernel.
- ``special.gammainc``/``gammaincc`` (``igamma``/``igammac``) follow ATen's calc_igamma/calc_igammac branch by branch
  (before: a textbook series and continued fraction in float64, a few ulps off, 0.04 for torch's 0.5 at
  a = x = 1e10 and NaN from a = 1e20, where torch takes Temme's uniform asymptotic expansion), fused multiply-adds
  where torch's vector loop fuses them and not in igamma's scalar tail.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch


def _wide_grid(dtype: str, seed: int, n: int = 6000) -> tuple[np.ndarray, np.ndarray]:
    """a and x log-uniform over 1e-3..1e25, the same near each other (|x - a| ~ sqrt(a): the asymptotic regime and
    its borders), and both over 1e-3..1e3 (the series and the continued fraction)."""
    rng = np.random.default_rng(seed)
    a = 10 ** rng.uniform(-3, 25, n)
    x = 10 ** rng.uniform(-3, 25, n)
    near_a = 10 ** rng.uniform(-1, 25, n)
    near_x = near_a * (1 + rng.normal(0, 1, n) * np.minimum(0.5, 5 / np.sqrt(near_a)))
    small_a, small_x = 10 ** rng.uniform(-3, 3, (2, n))
    large = np.array([1e10, 1e15, 1e20, 1e25, 1e30])
    columns = (np.concatenate([a, near_a, small_a, large]), np.concatenate([x, near_x, small_x, large]))
    with np.errstate(over="ignore"):
        return tuple(c.astype(dtype) for c in columns)


def _both(name: str, a: np.ndarray, x: np.ndarray, view=lambda t: t) -> tuple:
    return tuple(view(eval(f"lib.{name}")(lib.tensor(a), lib.tensor(x))) for lib in (tg, torch))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["special.gammainc", "special.gammaincc"])
@pytest.mark.parametrize("seed", [0, 1])
def test_incomplete_gamma_on_a_wide_grid(name, dtype, seed):
    assert_same_bits(*_both(name, *_wide_grid(dtype, seed)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_for_large_a_near_x(name, dtype):
    a = np.array([1e10, 1e10, 1e10, 1e20, 1e20, 1e25, 3e30, 1e12, 250.0, 25.0], dtype)
    x = a * np.array([1.0, 1 - 1e-5, 1 + 1e-5, 1.0, 1 + 1e-9, 1.0, 1.0, 1 - 3e-6, 1.1, 0.8], dtype)
    ours, theirs = _both(name, a, x)
    assert not np.isnan(ours.numpy()).any()
    assert_same_bits(ours, theirs)


@pytest.mark.parametrize("length", [1, 15, 16, 17, 33, 47, 70])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_igamma_scalar_tail_of_the_vector_loop(length, dtype):
    """igamma's elements past the last whole block of two AVX-512 vectors take ATen's scalar loop, whose
    calc_igamma was compiled without fused multiply-adds: the same element rounds differently there."""
    cases = {"float32": (0.06638703, 0.00028702), "float64": (2.59765117, 0.01214499)}
    rng = np.random.default_rng(length)
    a = np.concatenate([np.full(length // 2, cases[dtype][0]), 10 ** rng.uniform(-2, 2, length - length // 2)])
    x = np.concatenate([np.full(length // 2, cases[dtype][1]), a[length // 2:] * 10 ** rng.uniform(-1, 0, length
                                                                                                   - length // 2)])
    rolled = tuple(np.roll(v, length // 3).astype(dtype) for v in (a, x))
    assert_same_bits(*_both("special.gammainc", *rolled))


def test_incomplete_gamma_half_and_layouts():
    a, x = (np.minimum(v, 6e4) for v in _wide_grid("float32", 2, n=1500))
    a, x = a[:4096].reshape(64, 64), x[:4096].reshape(64, 64)
    assert_same_bits(*_both("special.gammainc", a, x, view=lambda t: t))
    assert_same_bits(*_both("special.gammainc", a.T.copy(), x, view=lambda t: t))
    assert_same_bits(*_both("igamma", a.astype("float16"), x.astype("float16")))
    assert_same_bits(*_both("igammac", a.astype("float16"), x.astype("float16")))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trigamma_last_bits(dtype):
    """polygamma(1, x) as ATen's trigamma: the series' multiply-adds fused, sin(pi x) the C library's (float32 was
    an ulp off on some 1% of arguments)."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-10, 30, 20000), 10 ** rng.uniform(-3, 6, 5000), -(10 ** rng.uniform(-3, 6, 5000))])
    ours, theirs = (lib.special.polygamma(1, lib.tensor(x.astype(dtype))) for lib in (tg, torch))
    assert_same_bits(ours, theirs)
