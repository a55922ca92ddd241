"""``aten_vec.fma32``: a float32 ``a * b + c`` rounded once, as the FMA instructions of PyTorch's kernels round it,
checked against exact rational arithmetic, the float64 sum that lands exactly on a midpoint between two floats
(where a plain cast would round twice) included."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tracegrad.ops.aten_vec import fma32


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
