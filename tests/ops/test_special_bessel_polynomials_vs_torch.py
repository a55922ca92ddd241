"""``tracegrad.special``'s orthogonal polynomials and Bessel-family functions against ``torch.special``: values
over wide grids (edges, infinities, NaN, negative and huge degrees, float64 and float32), the number/tensor
overloads and their dtypes, ``out=``, and the absence of a derivative.

Tolerances: PyTorch's compiled kernels fuse multiply-adds (FMA) and use the C library's sin/cos/exp/log, so
the last bits differ; where a recurrence is ill-conditioned (|x| just above 1 with a large degree, values that
cancel to ~1e-15) that difference grows, hence an absolute floor on the scale of the values.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
BESSEL = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
          "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
          "scaled_modified_bessel_k1", "spherical_bessel_j0"]

INF, NAN = float("inf"), float("nan")
X_WIDE = [0.0, -0.0, 1e-20, 1e-8, 0.25, 0.5, 0.75, 0.9999, 1.0, -1.0, -0.3, -0.5, -0.9999, 1.5, 2.0, -2.0, 3.0,
          5.5, 10.0, -10.0, 20.0, 1e3, 1e200, INF, -INF]
N_WIDE = [-3, -1, -0.5, 0, 1, 2, 2.7, 3, 4, 5, 6, 7, 8, 9, 10, 12, 20, 50, 129, 200, 513, 600, 1000, 1e30, NAN,
          INF, -INF]
X_SMALL = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0, -1.0, -0.4, -0.8, 1.25, -1.5, 2.0, 2.5]
N_SMALL = [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]


def _both(name: str, xs, ns, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    x, n = np.meshgrid(np.array(xs, dtype=np.float64), np.array(ns, dtype=np.float64))
    return tuple(getattr(lib.special, name)(lib.tensor(x, dtype=getattr(lib, dtype)),
                                            lib.tensor(n, dtype=getattr(lib, dtype))).double().numpy()
                 for lib in (tg, torch))


def _assert_close(ours, theirs, rtol, atol, where):
    with np.errstate(invalid="ignore"):
        ok = np.isclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True) | (ours == theirs)
    assert ok.all(), list(zip(np.broadcast_to(where, ours.shape)[~ok][:5], ours[~ok][:5], theirs[~ok][:5]))


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_float64_over_a_wide_grid(name):
    ours, theirs = _both(name, X_WIDE, N_WIDE, "float64")
    # (|x| just above 1 with degrees in the hundreds: the recurrence's rounding grows to ~1e-12)
    _assert_close(ours, theirs, 1e-10, 1e-12, "wide grid")


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_float32(name):
    ours, theirs = _both(name, X_SMALL, N_SMALL, "float32")
    scale = np.nanmax(np.where(np.isinf(theirs), np.nan, np.abs(theirs)), axis=1, keepdims=True)
    _assert_close(ours, theirs, 1e-5, 1e-5 * np.maximum(scale, 1.0), "float32 grid")


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_nan_input_at_low_degrees(name):
    # (PyTorch returns an uninitialised value for NaN x at degrees >= 2: only n < 2 is specified)
    ours, theirs = _both(name, [NAN], [-1, 0, 1], "float64")
    np.testing.assert_array_equal(ours, theirs)


def _bessel_points() -> np.ndarray:
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 1e-300, 1e-6, 1e-5, 0.3, 0.5, 1.0, 2.0, 2.09, -2.09, 5.0, -5.0, 8.0, -8.0, 8.3203353,
               30.0, 100.0, 103.892, 104.0, 700.0, 710.0, -700.0, 1e10, -1e10, INF, -INF, NAN]
    return np.concatenate([special, rng.uniform(-12, 12, 200), rng.uniform(-120, 120, 50)])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", BESSEL)
def test_bessel_family_values(name, dtype):
    points = _bessel_points()
    ours, theirs = (getattr(lib.special, name)(lib.tensor(points, dtype=getattr(lib, dtype))).double().numpy()
                    for lib in (tg, torch))
    if dtype == "float64":
        _assert_close(ours, theirs, 1e-13, 1e-300, points)
    else:  # (near the zeros of J and Y a few float32 ulps of the terms are the whole value)
        _assert_close(ours, theirs, 1e-5, 1e-6, points)


def test_modified_bessel_i0_is_not_special_i0():
    x = np.linspace(-30, 30, 61)
    ours = tg.special.modified_bessel_i0(tg.tensor(x)).numpy()
    assert np.allclose(ours, tg.special.i0(tg.tensor(x)).numpy(), rtol=1e-14)
    assert np.allclose(ours, torch.special.modified_bessel_i0(torch.tensor(x)).numpy(), rtol=1e-14, atol=0)


@pytest.mark.parametrize("make", [
    lambda L: L.special.chebyshev_polynomial_t(L.tensor([1, 2, 3]), 3),  # integers: float32
    lambda L: L.special.chebyshev_polynomial_t(L.tensor([1, 2]), 3.5),  # n truncated
    lambda L: L.special.hermite_polynomial_h(L.tensor([1, 2]), L.tensor(3.0, dtype=L.float64)),  # 0-dim float64
    lambda L: L.special.legendre_polynomial_p(L.tensor([0.5], dtype=L.float32), L.tensor(3.0, dtype=L.float64)),
    lambda L: L.special.laguerre_polynomial_l(L.tensor([0.5], dtype=L.float32), L.tensor([3], dtype=L.int64)),
    lambda L: L.special.chebyshev_polynomial_u(L.tensor([0.5], dtype=L.float32), L.tensor([2.0], dtype=L.float64)),
    lambda L: L.special.chebyshev_polynomial_w(0.5, L.tensor([[1, 2], [3, 4]])),  # number x, broadcast
    lambda L: L.special.shifted_chebyshev_polynomial_v(L.tensor([[0.2], [0.7]]), L.tensor([1.0, 5.0, 9.0])),
    lambda L: L.special.hermite_polynomial_he(L.tensor([True, False]), 4),
    lambda L: L.special.bessel_j0(L.tensor([1, 2, 3])),
    lambda L: L.special.airy_ai(L.tensor([True, False])),
    lambda L: L.special.modified_bessel_k1(input=L.tensor([0.5, 3.0], dtype=L.float64)),
    lambda L: L.special.scaled_modified_bessel_k0(x=L.tensor([0.5, 3.0])),
    lambda L: L.special.chebyshev_polynomial_t(x=L.tensor([0.5]), n=2),
])
def test_overloads_and_dtypes(make):
    ours, theirs = make(tg), make(torch)
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-5)  # (float32 near zeros)


@pytest.mark.parametrize("name", ["bessel_j0", "chebyshev_polynomial_t"])
def test_out_argument(name):
    results = []
    for lib in (tg, torch):
        x, out = lib.tensor([0.3, 1.7], dtype=lib.float64), lib.empty(2, dtype=lib.float64)
        fn = getattr(lib.special, name)
        returned = fn(x, out=out) if name == "bessel_j0" else fn(x, 3, out=out)
        assert returned is out
        results.append(out.numpy())
    np.testing.assert_allclose(*results, rtol=1e-14)


@pytest.mark.parametrize("dtype", ["float16", "complex64"])  # (tracegrad has no bfloat16)
@pytest.mark.parametrize("call", [lambda L, x: L.special.bessel_y1(x),
                                  lambda L, x: L.special.legendre_polynomial_p(x, 2)])
def test_unsupported_dtypes_raise_as_torch(call, dtype):
    messages = []
    for lib in (tg, torch):
        with pytest.raises(NotImplementedError) as info:
            call(lib, lib.ones(2, dtype=getattr(lib, dtype)))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_two_numbers_are_refused():
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        tg.special.chebyshev_polynomial_t(0.5, 2)


@pytest.mark.parametrize("call", [lambda L, x: L.special.spherical_bessel_j0(x),
                                  lambda L, x: L.special.modified_bessel_i1(x),
                                  lambda L, x: L.special.hermite_polynomial_h(x, 3),
                                  lambda L, x: L.special.chebyshev_polynomial_t(x.detach(), x)])
def test_no_derivative(call):
    messages = []
    for lib in (tg, torch):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        y = call(lib, x)
        assert not y.requires_grad and y.grad_fn is None
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]
