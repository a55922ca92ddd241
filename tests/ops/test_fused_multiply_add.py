"""``aten_vec.fma32``: a float32 ``a * b + c`` rounded once, as the FMA instructions of PyTorch's kernels round it,
checked against exact rational arithmetic, the float64 sum that lands exactly on a midpoint between two floats
(where a plain cast would round twice) included."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tracegrad.ops.aten_vec import binade_addend, fma32, fused_in_binade
from tracegrad.ops.nn_ops import sleef_float


def _correctly_rounded(a, b, c) -> np.float32:
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    nearest = np.float32(float(exact))  # (within an ulp: pick the closest of it and its neighbours, ties to even)
    candidates = [np.nextafter(nearest, np.float32(-np.inf)), nearest, np.nextafter(nearest, np.float32(np.inf))]
    return min(candidates, key=lambda v: (abs(Fraction(float(v)) - exact), int(np.array(v).view(np.uint32)) & 1))


def test_random_triples_are_rounded_once():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(3000).astype(np.float32) * 10.0 ** rng.integers(-3, 4, 3000) for _ in range(3))
    ours = fma32(a, b, c)
    assert all(ours[i] == _correctly_rounded(a[i], b[i], c[i]) for i in range(a.size))


def test_a_sum_that_double_rounding_would_get_wrong():
    # 59 * float(2**-24 / 59) is 2**-24 (1 + 2**-29): 1 + that lies just above the midpoint between 1 and its
    # neighbour; its float64 sum is the midpoint itself, which a cast rounds down to 1 (to even).
    a, b, c = np.float32(59), np.float32(2.0**-24 / 59), np.float32(1)
    wanted = np.nextafter(np.float32(1), np.float32(2))
    assert np.float32(np.float64(a) * np.float64(b) + np.float64(c)) == 1  # (the twice-rounded answer)
    assert fma32(a, b, c) == wanted == _correctly_rounded(a, b, c)
    assert fma32(np.full(5, a), np.full(5, b), np.ones(5, np.float32)).tolist() == [wanted] * 5


# ---- fused_in_binade: the same single rounding for results known to lie in one binade -----------------------


def test_fused_in_binade_rounds_once_like_an_fma():
    rng = np.random.default_rng(1)
    addend = np.float32(0.3996108174)  # (in [1/4, 1/2): Sleef's log polynomial's middle coefficient)
    a = rng.uniform(0, 0.3, 20000).astype(np.float32)
    b = rng.uniform(0, 0.04, 20000).astype(np.float32)
    ours = fused_in_binade(np.multiply(a, b, dtype=np.float64), binade_addend(addend, -2))
    assert ours.dtype == np.float64 and np.array_equal(ours, ours.astype(np.float32))  # (floats, held in float64)
    assert np.array_equal(ours.astype(np.float32), fma32(a, b, addend))
    assert all(ours[i] == _correctly_rounded(a[i], b[i], addend) for i in range(0, a.size, 7))


def test_fused_in_binade_at_a_midpoint_rounds_to_even_or_by_the_exact_value():
    # 1/2 + 2**-25 (exactly half a float ulp above 1/2) goes to even, 1/2; a hair more goes up.
    steps = binade_addend(np.float32(0.5), -1)
    half_ulp = np.float64(2.0**-25)
    assert fused_in_binade(np.array([half_ulp]), steps)[0] == 0.5
    assert fused_in_binade(np.array([half_ulp * (1 + 2.0**-20)]), steps)[0] == 0.5 + 2.0**-24
    assert fused_in_binade(np.array([3 * half_ulp]), steps)[0] == 0.5 + 2 * 2.0**-24  # (odd neighbour: to even)


def test_binade_addend_refuses_an_addend_below_the_binade():
    with pytest.raises(ValueError, match="not a float on the grid"):
        binade_addend(np.float32(0.1), -2)


@pytest.mark.parametrize("coefficients, steps, bound", [
    (sleef_float._SLEEF_EXP_POLY, sleef_float._EXP_POLY_STEPS, 0.347),  # s after Cody-Waite's reduction
    (sleef_float._LOG_POLY, sleef_float._LOG_POLY_STEPS, 0.04),  # x * x with |x| <= 0.2
])
def test_the_sleef_polynomial_steps_stay_in_their_binades(coefficients, steps, bound):
    """The claim behind using fused_in_binade in Sleef's expf and logf: over the whole range of the variable, each
    step rounded that way ends in its addend's binade. Horner's values are monotonic here (positive coefficients),
    so the ends of the range bound them; the margins are far wider than an ulp."""
    ends = np.array([0.0, bound] if bound < 0.1 else [-bound, bound])
    u = np.full(2, float(coefficients[0]))
    for coefficient, (shifted, shift) in zip(coefficients[1:], steps):
        u = u * ends + float(coefficient)
        low = 2.0 ** np.floor(np.log2(float(coefficient)))
        assert (low * 1.001 < u).all() and (u < 2 * low / 1.001).all(), (coefficient, u)
        assert shifted - shift == float(coefficient)
