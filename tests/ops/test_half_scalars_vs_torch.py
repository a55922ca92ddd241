"""Arithmetic between a float16 tensor and a number gives PyTorch's CPU bits.

PyTorch computes half precision in float ("opmath") and rounds once, but each kernel takes the number its own
way: ``mul``, ``div`` and the floor and trunc divisions keep it in float, while ``add``/``sub`` (and their
``alpha``), ``pow``'s exponent, ``remainder`` and ``fmod`` round it to half first. ``add``/``sub`` with an
``alpha`` round the product to half in the scalar loop that takes the last elements of each run. Rounding every number to half
(NumPy's float16 arithmetic) got ``x * 0.9`` wrong for one element in seven and ``x / 0.7`` for two in five.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

NUMBERS = [0.9, 0.7, -1.3, 0.1, 3.3, 1 / 3, 2.0, 1e-3, 700.0]


def _half_data(positive: bool = False, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(3000) * 3
    x[:40] = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504, -65504, 6e-8, -6e-8, 1e-5] * 4
    x = np.abs(x) + 0.01 if positive else x
    return x.astype(np.float16)


def _both(fn, *arrays):
    with np.errstate(all="ignore"):
        return [fn(lib, *(lib.from_numpy(a.copy()) for a in arrays)) for lib in (tg, torch)]


CASES = {
    "mul": lambda lib, x, s: x * s,
    "rmul": lambda lib, x, s: s * x,
    "div": lambda lib, x, s: x / s,
    "rdiv": lambda lib, x, s: s / x,
    "add": lambda lib, x, s: x + s,
    "radd": lambda lib, x, s: s + x,
    "sub": lambda lib, x, s: x - s,
    "rsub": lambda lib, x, s: s - x,
    "add_alpha": lambda lib, x, s: lib.add(x, s, alpha=0.7),
    "sub_alpha": lambda lib, x, s: lib.sub(x, s, alpha=-1.7),
    "rsub_alpha": lambda lib, x, s: lib.rsub(x, s, alpha=0.3),
    "floor_divide": lambda lib, x, s: lib.floor_divide(x, s),
    "div_floor": lambda lib, x, s: lib.div(x, s, rounding_mode="floor"),
    "div_trunc": lambda lib, x, s: lib.div(x, s, rounding_mode="trunc"),
    "remainder": lambda lib, x, s: lib.remainder(x, s),
    "fmod": lambda lib, x, s: lib.fmod(x, s),
    "mul_": lambda lib, x, s: x.mul_(s),
    "div_": lambda lib, x, s: x.div_(s),
    "add_": lambda lib, x, s: x.add_(s, alpha=0.3),
    "floor_divide_": lambda lib, x, s: x.floor_divide_(s),
}


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_half_tensor_and_number(case: str, number: float) -> None:
    fn = CASES[case]
    assert_same_bits(*_both(lambda lib, x: fn(lib, x, number), _half_data()))


@pytest.mark.parametrize("alpha", [0.3, -1.7, 3.3])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_half_alpha_between_tensors(op: str, alpha: float) -> None:
    """alpha is rounded to half, then ``a + alpha * b`` is computed in float (the product is exact there)."""
    assert_same_bits(*_both(lambda lib, x, y: getattr(lib, op)(x, y, alpha=alpha), _half_data(), _half_data(seed=1)))
    assert_same_bits(*_both(lambda lib, x, y: getattr(x, op + "_")(y, alpha=alpha), _half_data(), _half_data(seed=1)))


@pytest.mark.parametrize("kind", ["float32", "float64", "float16"])
def test_half_tensor_and_zero_dim_tensor(kind: str) -> None:
    """A 0-d tensor of another float dtype takes the number's path: its value is read in float for mul."""
    scalar = np.array(0.9, dtype=kind)
    for fn in (lambda lib, x, s: x * s, lambda lib, x, s: x / s, lambda lib, x, s: x + s):
        assert_same_bits(*_both(fn, _half_data(), scalar))


def test_half_scalar_results_keep_gradients() -> None:
    """The gradient of ``x * s`` is ``g * s`` with the same number, in both libraries."""
    grads = []
    for lib in (tg, torch):
        x = lib.from_numpy(_half_data(positive=True)).requires_grad_()
        (x * 0.9 / 0.7).backward(lib.ones_like(x))
        grads.append(x.grad)
    assert_same_bits(*grads)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("exponent", [1.3, 0.9, -1.3, 1 / 3, 3.7])
def test_power_of_a_number_in_vector_blocks(dtype, exponent: float) -> None:
    """In PyTorch's vector code ``x ** 1.3`` raises to float(1.3) (half: to half(1.3)); the double 1.3 differed
    for half of all float x. Its Sleef powf is within an ulp of the correctly rounded power computed here and
    differs from it for about 2% of float results and one half result in thousands."""
    x = np.abs(np.random.default_rng(2).standard_normal(20000) * 3).astype(dtype) + dtype(0.01)
    ours, theirs = (lib.from_numpy(x.copy()) ** exponent for lib in (tg, torch))
    a, b = ours.numpy(), theirs.numpy()
    assert a.dtype == b.dtype == dtype
    ulps = np.abs(a.view(f"i{a.itemsize}").astype(np.int64) - b.view(f"i{a.itemsize}").astype(np.int64))
    assert ulps.max() <= 1
    assert np.mean(ulps == 0) > (0.999 if dtype == np.float16 else 0.97)


@pytest.mark.parametrize("exponent", [1.3, 3.0000001, 1e-50, 2.0**31 + 0.5, -2.5, 2**25 + 1, 1e300])
def test_power_of_a_number_in_the_scalar_loop(exponent) -> None:
    """PyTorch's scalar loop (a small tensor, each run's last elements) raises float32 to the double itself:
    ``0.5 ** 3.0000001`` is not 0.125 there, ``(-1.5) ** 1e-50`` is NaN, ``0 ** 1e-50`` is 0."""
    x = np.array([0.5, 2.0, 0.0, -1.5, 3.7, 1e-20, 7.5, -0.0, np.inf, np.nan], np.float32)
    assert_same_bits(*(lib.from_numpy(x.copy()) ** exponent for lib in (tg, torch)))
    assert_same_bits(*(lib.from_numpy(np.tile(x, 7)) ** exponent for lib in (tg, torch)))  # (blocks and a tail)


def test_half_exponent_that_overflows_half_is_refused() -> None:
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="value cannot be converted to type c10::Half without overflow"):
            lib.ones(3, dtype=lib.float16) ** 70000.0


@pytest.mark.parametrize("case", ["linear", "linear_3d", "addmm", "addmm_scaled"])
def test_half_products_add_the_bias_before_rounding(case: str) -> None:
    """PyTorch's half gemm sums in float and adds the bias (beta * self) before its one rounding to half; a
    product rounded to half and then added to the bias was up to 4 ulps off for a quarter of the outputs. The
    order of the float sums is BLAS's, so a rare output still differs by an ulp."""
    rng = np.random.default_rng(3)
    x, w = ((rng.standard_normal((40, 100)) * 3).astype(np.float16) for _ in range(2))
    b = rng.standard_normal(40).astype(np.float16)
    fn = {
        "linear": lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
        "linear_3d": lambda lib, x, w, b: lib.nn.functional.linear(x.reshape(4, 10, 100), w, b),
        "addmm": lambda lib, x, w, b: lib.addmm(b, x, w.t()),
        "addmm_scaled": lambda lib, x, w, b: lib.addmm(b, x, w.t(), beta=0.5, alpha=2),
    }[case]
    ours, theirs = (r.numpy() for r in _both(fn, x, w, b))
    ulps = np.abs(ours.view(np.int16).astype(np.int32) - theirs.view(np.int16))
    assert ulps.max() <= 1 and np.mean(ulps == 0) > 0.99


@pytest.mark.parametrize(("shape_a", "shape_b"), [((5,), (40, 5)), ((40, 5), (5,)), ((7, 100), (100,)),
                                                  ((7, 100), (7, 1)), ((7, 100), (1,)), ((100, 7), (100, 7))])
def test_half_alpha_with_broadcasting(shape_a: tuple, shape_b: tuple) -> None:
    """Which elements take the scalar loop follows TensorIterator's runs: a row broadcast down a matrix cuts them
    at every row; a number-like operand does not."""
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in (shape_a, shape_b))
    assert_same_bits(*_both(lambda lib, x, y: lib.add(x, y, alpha=0.3), a, b))
    if a.ndim == b.ndim == 2:  # (transposed: the runs go down the columns, strided)
        assert_same_bits(*_both(lambda lib, x, y: lib.sub(x.t(), y.t(), alpha=3.3), a, b))
