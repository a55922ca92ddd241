"""``prod`` gives PyTorch's CPU bits (one thread, and several for full products): full products and products over one dim, keepdim, ``dtype=``,
float16/32/64, contiguous and strided inputs, lengths around ATen's blocks of four vectors (32 floats, 16 doubles,
64 halves) and the elements after them, and values where the order shows: factors near 1 over long runs,
factors spanning decades, zeros, infinities, NaN and overflow. The gradient, built from the result, follows.

The order is ``binary_kernel_reduce_vec``'s (``tracegrad.ops.aten_prod``); NumPy's sequential product matched
none of the float32 products over 1000 contiguous elements and 2% of those over rows of 1000.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import STRIDED_VIEWS_2D, assert_same_bits, assert_same_bits_of, both_from, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")

DTYPES = [np.float16, np.float32, np.float64]
SIZES = [1, 2, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 1000, 4099]


def _factors(shape, dtype, seed: int = 0, spread: float = 0.02) -> np.ndarray:
    """Factors near 1 (so that long products stay finite and every rounding shows), of either sign."""
    rng = np.random.default_rng(seed)
    x = 1 + spread * rng.standard_normal(shape)
    x *= rng.choice([-1.0, 1.0], shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_full_product(dtype):
    for n in SIZES:
        assert_same_bits_of("prod", _factors((n,), dtype, seed=n))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(64, 1000), (37, 513), (3, 129), (129, 3), (5, 64), (64, 5)])
def test_each_dim_of_a_matrix(dtype, shape):
    base = _factors(shape, dtype, seed=sum(shape))
    for dim in (0, 1, -1):
        assert_same_bits_of("prod", base, dim)
        assert_same_bits_of("prod", base, dim, keepdim=True)
    assert_same_bits_of("prod", base)


@pytest.mark.parametrize("view", STRIDED_VIEWS_2D.values(), ids=STRIDED_VIEWS_2D.keys())
def test_strided_views(view):
    base = _factors((40, 130), np.float32, seed=3)
    for dim in (0, 1):
        assert_same_bits_of("prod", base, dim, view=view)
    assert_same_bits_of("prod", base, view=view)


def test_three_dims_and_permutations():
    base = _factors((6, 7, 70), np.float32, seed=5)
    for view in (lambda t: t, lambda t: t.permute(2, 0, 1), lambda t: t.transpose(0, 1), lambda t: t[:, ::2]):
        for dim in (0, 1, 2):
            assert_same_bits_of("prod", base, dim, view=view)
        assert_same_bits_of("prod", base, view=view)


def test_dtype_argument_casts_first():
    base = _factors((8, 300), np.float32, seed=7)
    assert_same_bits_of("prod", base, 1, dtype="float64")
    assert_same_bits_of("prod", base, dtype="float64")
    assert_same_bits_of("prod", base.astype(np.float16), 1, dtype="float32")


def test_special_values():
    rng = np.random.default_rng(11)
    base = (10.0 ** rng.uniform(-5, 5, (12, 100))).astype(np.float32)  # (products overflow and underflow)
    base[1, 3] = 0
    base[2, 50] = np.inf
    base[3, 40], base[3, 90] = 0, np.inf
    base[4, 77] = np.nan
    base[5, :] = -0.0
    base[6, 99] = -np.inf
    for dim in (0, 1):
        assert_same_bits_of("prod", base, dim)
    assert_same_bits_of("prod", base[7:])


def test_empty_and_single():
    for shape, dim in [((0,), 0), ((3, 0), 1), ((0, 4), 0), ((1,), 0), ((4, 1), 1)]:
        base = np.ones(shape, np.float32) * np.float32(1.5)
        assert_same_bits_of("prod", base, dim)
        assert_same_bits_of("prod", base)
    assert_same_bits_of("prod", np.array(2.5, np.float32))


def test_integers_keep_their_dtype():
    base = np.arange(1, 41, dtype=np.int32).reshape(4, 10) % 7 + 1
    assert_same_bits_of("prod", base, 1)
    assert_same_bits_of("prod", base)


@pytest.mark.parametrize("dim", [0, 1])
def test_gradient_from_the_product(dim):
    base = _factors((9, 200), np.float32, seed=13)
    grads = []
    for x in both_from(base):
        x.requires_grad_(True)
        x.prod(dim).sum().backward()
        grads.append(x.grad)
    assert_same_bits(*grads)


def test_a_product_is_no_view_of_its_input():
    for make in (lambda lib: lib.ones(3, 1), lambda lib: lib.ones(()), lambda lib: lib.ones(1)):
        x = make(tg)
        (x.prod(-1) if x.ndim else x.prod()).add_(5)
        assert x.flatten().tolist() == [1.0] * x.numel()


@pytest.mark.parametrize("threads", [2, 3])
def test_full_products_split_among_threads(threads):
    """Past at::internal::GRAIN_SIZE elements, each thread multiplies its range into a buffer of its own."""
    tg.set_num_threads(threads)
    torch.set_num_threads(threads)
    rng = np.random.default_rng(threads)
    for n in (40_000, 200_003):
        for dtype in (np.float32, np.float64):
            base = rng.uniform(0.999, 1.001, n).astype(dtype)
            assert_same_bits_of("prod", base)
            assert_same_bits_of("prod", base, view=lambda t: t[::3])
            assert_same_bits_of("prod", base[: n // 100 * 100].reshape(-1, 100), 1)
