"""``sum``, ``mean`` and ``nansum`` give PyTorch's CPU bits (one thread): full reductions and reductions over
one dim or several, keepdim, ``dtype=``, contiguous, transposed, permuted and sliced inputs, sizes around ATen's
vector (8 floats, 4 doubles), row-sum (4 vectors) and cascade (16, 256, 4096 rows) boundaries, random normal
data and data where large terms cancel (so the order of the additions shows in many bits).

The order follows ATen's ``cascade_sum`` (``tracegrad.ops.aten_sum``); NumPy's pairwise sums matched about a
fifth of float32 row sums and hardly any full sum of more than a few elements.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import STRIDED_VIEWS_2D, assert_same_bits, assert_same_bits_of, tg, torch

DTYPES = [np.float32, np.float64]
# around the vector, 4-vector and 16-row cascade boundaries, for floats and doubles
SIZES_1D = [1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513,
            1000, 4097, 8193, 70001]
SIZES_2D = [1, 4, 7, 8, 9, 16, 17, 33, 64, 65, 257]


@pytest.fixture(autouse=True)
def one_thread():
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved)


def _data(shape, dtype, kind: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if kind == "cancel":  # magnitudes over 12 decades, half of them cancelled by a later negative
        x = x * 10.0 ** rng.uniform(-6, 6, shape)
        flat = x.reshape(-1)
        half = flat.size // 2
        flat[half:2 * half] = -flat[rng.permutation(half)] * (1 + 1e-3 * rng.standard_normal(half))
    return np.asarray(x, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["normal", "cancel"])
def test_full_sum_and_mean_1d(dtype, kind):
    for n in SIZES_1D:
        base = _data((n,), dtype, kind, seed=n)
        assert_same_bits_of("sum", base)
        assert_same_bits_of("mean", base)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["normal", "cancel"])
def test_2d_over_each_dim(dtype, kind):
    for rows in SIZES_2D:
        for cols in SIZES_2D:
            base = _data((rows, cols), dtype, kind, seed=rows * 1000 + cols)
            for dim in (0, 1, -1, (0, 1)):
                assert_same_bits_of("sum", base, dim)
            assert_same_bits_of("sum", base)
            assert_same_bits_of("mean", base, 0, keepdim=True)
            assert_same_bits_of("mean", base, 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_and_sliced(dtype):
    for rows, cols in [(40, 70), (129, 33), (9, 300)]:
        base = _data((rows, cols), dtype, "cancel", seed=rows)
        for view in STRIDED_VIEWS_2D.values():
            for dim in (None, 0, 1, (0, 1)):
                args = () if dim is None else (dim,)
                assert_same_bits_of("sum", base, *args, view=view)
                assert_same_bits_of("mean", base, *args, view=view)


@pytest.mark.parametrize("dtype", DTYPES)
def test_several_dims_and_layouts(dtype):
    base = _data((6, 17, 9, 20), dtype, "cancel", seed=7)
    layouts = [lambda t: t, lambda t: t.permute(2, 0, 3, 1), lambda t: t.permute(3, 1, 2, 0)[:, ::2],
               lambda t: t[:, 1:, :, ::3]]
    for view in layouts:
        for dims in [(0,), (1,), (3,), (0, 1), (0, 2), (1, 3), (0, 2, 3), (2, 3), (0, 1, 2, 3)]:
            assert_same_bits_of("sum", base, dims, view=view)
            assert_same_bits_of("sum", base, dims, True, view=view)
            assert_same_bits_of("mean", base, dims, view=view)


def test_deep_cascades():
    """Row counts that reach the cascade's third and fourth levels, and a longer first run (``2**5``)."""
    assert_same_bits_of("sum", _data((140_001,), np.float32, "cancel", 1))
    assert_same_bits_of("sum", _data((4500, 33), np.float32, "cancel", 2), 0)
    assert_same_bits_of("sum", _data((4500, 3), np.float64, "cancel", 3), 0)
    assert_same_bits_of("sum", _data((3, 70_000), np.float64, "normal", 4), 1)
    assert_same_bits_of("mean", _data((2 ** 19 + 3, 2), np.float32, "normal", 5), 0)


def test_dtype_argument_and_other_dtypes():
    base = _data((33, 65), np.float32, "cancel", 8)
    half = _data((33, 65), np.float16, "normal", 8)  # (cancelling data would overflow float16)
    for dim in (None, 0, 1):
        args = () if dim is None else (dim,)
        assert_same_bits_of("sum", base, *args, dtype="float64")
        assert_same_bits_of("mean", base, *args, dtype="float64")
        assert_same_bits_of("sum", base, *args, view=lambda t: t.t()[::2], dtype="float64")
        assert_same_bits_of("sum", half, *args)
        assert_same_bits_of("mean", half, *args)
        assert_same_bits_of("sum", half, *args, view=lambda t: t.t()[::2])
        assert_same_bits_of("sum", half, *args, dtype="float32")
        complex_base = (base + 1j * _data((33, 65), np.float32, "normal", 9)).astype(np.complex64)
        assert_same_bits_of("sum", complex_base, *args)
        assert_same_bits_of("mean", complex_base, *args)
        assert_same_bits_of("sum", complex_base.astype(np.complex128), *args)


def test_edge_values():
    assert_same_bits_of("sum", np.zeros((0, 5), np.float32), 0)
    assert_same_bits_of("sum", np.array(-0.0, np.float32))
    assert_same_bits_of("sum", -np.zeros((3, 40), np.float32), 1)
    assert_same_bits_of("sum", np.array([np.inf, 1.0, -np.inf, 2.0] * 5, np.float32))
    assert_same_bits_of("mean", np.array(2.5, np.float64), 0)
    assert_same_bits_of("sum", _data((1, 1, 37), np.float32, "normal"), (0, 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_nansum(dtype):
    base = _data((37, 70), dtype, "cancel", 10)
    base[np.random.default_rng(0).random(base.shape) < 0.1] = np.nan
    for view in (lambda t: t, lambda t: t.t()[::2]):
        for dim in (None, 0, 1):
            args = () if dim is None else (dim,)
            assert_same_bits_of("nansum", base, *args, view=view)


@pytest.mark.parametrize("grad_mode", ["plain", "create_graph"])
def test_broadcast_gradients(grad_mode):
    """A broadcast operand's gradient is summed down to its shape (``sum_to_size``) with the sum's order too, in
    a plain backward (the engine's array path) as in a recorded one."""
    x_base = _data((300, 37), np.float32, "cancel", 11)
    w_base = _data((37,), np.float32, "normal", 12)
    grads = []
    for lib in (tg, torch):
        x, w = lib.from_numpy(x_base.copy()), lib.from_numpy(w_base.copy()).requires_grad_()
        loss = (x * w).sum()
        (grad,) = lib.autograd.grad(loss, w, create_graph=grad_mode == "create_graph")
        grads.append(grad)
    assert_same_bits(*grads)
