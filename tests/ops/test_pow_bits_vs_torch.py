"""float32 ``pow`` gives PyTorch's CPU bits: a tensor to the power of a number (Sleef's powf in the vector blocks,
a double power rounded to float in the scalar loop) and of a tensor (Sleef's powf and glibc's powf), broadcast,
strided, in place, and the gradients built from pow; float16 through the same float kernels."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import STRIDED_VIEWS_2D, assert_same_bits, assert_same_bits_of, both_from, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")

EXPONENTS = [1.3, -0.7, 2.5, 1 / 3, 1e-3, 37.5, 3.0000001, 4, 5, 7, -3, -4, 0.25, -1.5, 10.5, 1e-50, 2.0**31 + 0.5,
             -2**25 - 1.0, 1e30]
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-45, -1e-45, 1e-40,
                    3.4e38, -3.4e38, 1.0000001, 0.99999994, -3.0, 7.0], np.float32)


def _bases(n: int, seed: int = 0, positive: bool = False) -> np.ndarray:
    """Floats of every magnitude (subnormal to huge), signs mixed unless ``positive``, special values included."""
    rng = np.random.default_rng(seed)
    x = (10.0 ** rng.uniform(-40, 38, n) * rng.choice([-1.0, 1.0], n)).astype(np.float32)
    x[: n // 2] = (rng.standard_normal(n // 2) * 3).astype(np.float32)
    x[:: 17][: SPECIAL.size] = SPECIAL[: x[:: 17].size]
    return np.abs(x) if positive else x


def _exponents(n: int, seed: int = 1) -> np.ndarray:
    """Exponents: small and large, integers (odd and even), specials."""
    rng = np.random.default_rng(seed)
    y = (rng.standard_normal(n) * 4).astype(np.float32)
    y[1::3] = np.round(y[1::3])
    y[2::7] = (rng.standard_normal(y[2::7].size) * 100).astype(np.float32)
    y[:: 23][: SPECIAL.size] = SPECIAL[: y[:: 23].size]
    return y


@pytest.mark.parametrize("exponent", EXPONENTS)
@pytest.mark.parametrize("n", [20, 1000 + 13, 4096])
def test_power_of_a_number(exponent, n: int) -> None:
    """Odd lengths end in the scalar loop; a short tensor is all scalar loop."""
    assert_same_bits_of("pow", _bases(n), exponent)


@pytest.mark.parametrize("exponent", [1.3, -0.7, 37.5, 5])
def test_power_of_a_number_of_every_magnitude(exponent) -> None:
    """Positive bases from subnormal to the largest float: results that underflow, overflow, or are subnormal."""
    x = np.sort(np.abs(_bases(70000, seed=3, positive=True)))
    assert_same_bits_of("pow", x, exponent)


@pytest.mark.parametrize("view", list(STRIDED_VIEWS_2D.values()), ids=list(STRIDED_VIEWS_2D))
@pytest.mark.parametrize("exponent", [1.3, -2.5, 5])
def test_power_of_a_number_strided(view, exponent) -> None:
    assert_same_bits_of("pow", _bases(123 * 77).reshape(123, 77), exponent, view=view)


@pytest.mark.parametrize("exponent", [1.3, 7, -0.5001])
def test_operator_and_in_place_power_of_a_number(exponent) -> None:
    base = _bases(1000 + 9)
    ours, theirs = both_from(base)
    assert_same_bits(ours ** exponent, theirs ** exponent)
    ours.pow_(exponent)
    theirs.pow_(exponent)
    assert_same_bits(ours, theirs)


@pytest.mark.parametrize("n", [7, 1000 + 13, 8192])
def test_power_of_a_tensor(n: int) -> None:
    x, y = _bases(n), _exponents(n)
    assert_same_bits(tg.pow(tg.from_numpy(x), tg.from_numpy(y)), torch.pow(torch.from_numpy(x), torch.from_numpy(y)))


def test_power_of_a_tensor_special_values() -> None:
    """Every pair of special values (C's pow rules in the scalar loop, Sleef's selects in the vector code)."""
    x, y = np.meshgrid(SPECIAL, np.concatenate([SPECIAL, np.float32([3, -3, 0.5, 2**24, 2**24 + 2, 1e30, -1e30])]))
    for tile in (1, 64):  # (the scalar loop; whole vector blocks)
        xs, ys = np.tile(x.ravel(), tile), np.tile(y.ravel(), tile)
        assert_same_bits(tg.pow(tg.from_numpy(xs), tg.from_numpy(ys)),
                         torch.pow(torch.from_numpy(xs), torch.from_numpy(ys)))


@pytest.mark.parametrize("case", ["row", "column", "scalar_tensor", "scalar_base_tensor", "number_base"])
def test_power_of_a_tensor_broadcast(case: str) -> None:
    x, y = _bases(97 * 131).reshape(97, 131), _exponents(97 * 131).reshape(97, 131)
    operands = {"row": (x, y[3]), "column": (x, y[:, :1]), "scalar_tensor": (x, np.float32(1.3)),
                "scalar_base_tensor": (np.float32(2.7), y)}.get(case)
    if operands is None:
        assert_same_bits(tg.pow(2.7, tg.from_numpy(y)), torch.pow(2.7, torch.from_numpy(y)))
        assert_same_bits(1.7 ** tg.from_numpy(y), 1.7 ** torch.from_numpy(y))
        return
    a, b = operands
    assert_same_bits(tg.pow(tg.tensor(a), tg.tensor(b)), torch.pow(torch.tensor(a), torch.tensor(b)))


@pytest.mark.parametrize("view", list(STRIDED_VIEWS_2D.values()), ids=list(STRIDED_VIEWS_2D))
def test_power_of_a_tensor_strided(view) -> None:
    x, y = _bases(123 * 77).reshape(123, 77), _exponents(123 * 77).reshape(123, 77)
    ours = tg.pow(view(tg.from_numpy(x)), view(tg.from_numpy(y)))
    assert_same_bits(ours, torch.pow(view(torch.from_numpy(x)), view(torch.from_numpy(y))))


def test_power_of_a_tensor_mixed_layouts() -> None:
    """A transposed base with a contiguous exponent: the output (and the loop) follows TensorIterator's order."""
    x, y = _bases(64 * 96).reshape(96, 64), _exponents(64 * 96).reshape(64, 96)
    ours = tg.pow(tg.from_numpy(x).t(), tg.from_numpy(y))
    assert_same_bits(ours, torch.pow(torch.from_numpy(x).t(), torch.from_numpy(y)))


def test_in_place_power_of_a_tensor() -> None:
    x, y = _bases(77 * 65).reshape(77, 65), _exponents(65)
    ours, theirs = both_from(x)
    ours.pow_(tg.from_numpy(y))
    theirs.pow_(torch.from_numpy(y))
    assert_same_bits(ours, theirs)
    ours, theirs = both_from(x.T.copy(), lambda t: t.t())  # (a transposed self: its layout decides)
    ours.pow_(tg.from_numpy(x))
    theirs.pow_(torch.from_numpy(x))
    assert_same_bits(ours, theirs)


@pytest.mark.parametrize("exponent", [1.3, -0.7, 2.5, 5, 37.5])
def test_gradient_of_power_of_a_number(exponent) -> None:
    """PyTorch's pow_backward: grad * (exponent * x ** (exponent - 1)), the power of the double exponent - 1."""
    x = np.abs(_bases(1000 + 3, positive=True)) + np.float32(0.01)
    g = np.random.default_rng(5).standard_normal(x.size).astype(np.float32)
    grads = []
    for lib in (tg, torch):
        t = lib.from_numpy(x.copy()).requires_grad_()
        (t ** exponent).backward(lib.from_numpy(g.copy()))
        grads.append(t.grad)
    assert_same_bits(*grads)


def test_gradient_of_power_of_a_tensor() -> None:
    """The base's gradient, grad * (y * x ** (y - 1)), has PyTorch's bits; the exponent's multiplies by log x, so
    follows log's own bits: compared closely."""
    x = np.random.default_rng(5).uniform(0.01, 5, (40, 53)).astype(np.float32)
    y = np.random.default_rng(6).standard_normal((40, 53)).astype(np.float32)
    g = np.random.default_rng(7).standard_normal((40, 53)).astype(np.float32)
    grads = []
    for lib in (tg, torch):
        a, b = lib.from_numpy(x.copy()).requires_grad_(), lib.from_numpy(y.copy()).requires_grad_()
        lib.pow(a, b).backward(lib.from_numpy(g.copy()))
        grads.append((a.grad, b.grad))
    assert_same_bits(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1].numpy(), grads[1][1].numpy(), rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("exponent", [1.3, -0.7, 1 / 3, 37.5, 5, 1e-3])
def test_half_power_of_a_number_every_half(exponent) -> None:
    """Half: the float kernels of the widened values, the number rounded to half, each result rounded once; every
    half value through the vector code (contiguous) and the scalar loop (strided)."""
    x = np.arange(2**16, dtype=np.uint16).view(np.float16)
    assert_same_bits_of("pow", x, exponent)
    assert_same_bits_of("pow", np.stack([x, x], axis=1), exponent, view=lambda t: t[:, 0])


@pytest.mark.parametrize("view", [lambda t: t, lambda t: t.t()], ids=["contiguous", "t"])
def test_half_power_of_a_tensor(view) -> None:
    with np.errstate(over="ignore"):  # (the largest floats become inf)
        x = _bases(128 * 67).astype(np.float16).reshape(128, 67)
        y = _exponents(128 * 67).astype(np.float16).reshape(128, 67)
    assert_same_bits(tg.pow(view(tg.from_numpy(x)), view(tg.from_numpy(y))),
                     torch.pow(view(torch.from_numpy(x)), view(torch.from_numpy(y))))


@pytest.mark.parametrize("exponent", [37.5, 15.3, 3.0000001])
def test_power_of_a_number_in_the_scalar_loop_subnormal_results(exponent) -> None:
    """The scalar loop (a strided column) rounds a double power to float, subnormal floats included."""
    x = (10.0 ** np.random.default_rng(8).uniform(-45, 0, (5000, 2))).astype(np.float32)
    assert_same_bits_of("pow", x, exponent, view=lambda t: t[:, 0])


@pytest.mark.parametrize("value", [0.5, 1e-30, -1.5, 0.0, 7.25])
def test_zero_dimensional(value: float) -> None:
    for exponent in (3.0000001, 1.3, 5):
        assert_same_bits(tg.tensor(value) ** exponent, torch.tensor(value) ** exponent)
        assert_same_bits(tg.pow(tg.tensor(value), tg.tensor(np.float32(exponent))),
                         torch.pow(torch.tensor(value), torch.tensor(np.float32(exponent))))


@pytest.mark.parametrize("exponent", [2, 3, -2, -0.5, -1, 0, 1, 2.0, 3.0])
def test_replaced_exponents(exponent) -> None:
    """PyTorch replaces these powers by products, square roots and reciprocals (and 0, 1 by a fill, a copy).
    (0.5 is PyTorch's sqrt kernel, whose float32 results here are an ulp from the correctly rounded root for
    about a fifth of inputs: sqrt's own bits, not pow's.)"""
    assert_same_bits_of("pow", _bases(1000 + 13), exponent)
    assert_same_bits_of("pow", _bases(60 * 70).reshape(60, 70), exponent, view=STRIDED_VIEWS_2D["cols"])


@pytest.mark.parametrize("exponent", [np.float64(1.3), np.float32(1.3), np.int64(3), np.int32(-2)],
                         ids=["float64", "float32", "int64", "int32"])
def test_numpy_number_exponents_are_the_numbers_they_hold(exponent) -> None:
    x = _bases(5000, seed=3, positive=True)
    ours, theirs = (t ** exponent for t in both_from(x))
    assert_same_bits(ours, theirs)


@pytest.mark.parametrize("exponent", [100000, 70000, 1e5])
def test_half_refuses_an_exponent_beyond_its_range(exponent) -> None:
    messages = []
    for lib in (tg, torch):
        with pytest.raises(RuntimeError) as info:
            lib.pow(lib.tensor([1.5, 2.0], dtype=lib.float16), exponent)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
