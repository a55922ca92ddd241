"""sinh, cosh, exp2 and atan2, forward and backward, and logaddexp and logaddexp2 give PyTorch's CPU bits in float32
and float16 (one thread).

PyTorch's kernels take Sleef's sinhf / coshf / exp2f / atan2f (logaddexp's expf or exp2f and log1pf) in their vector
blocks and glibc's in the scalar loop that finishes each run (``nn_ops/transcendental_cpu``); NumPy's functions
agreed with PyTorch's for only 61% to 88% of float32 inputs (logaddexp 98%). Lengths 1 to 200 put the split at every place of a block of 32 (two AVX-512 vectors);
transposed and sliced inputs make the inner runs short or scalar throughout; atan2 broadcasts a row, a column
and a number. The element where a thread's range starts decides the tails too, so both libraries run one thread.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import STRIDED_VIEWS_2D, assert_all_same_bits, assert_same_bits, run_both, tg, torch

# Zeros, infinities, NaN, subnormals, the ends of each formula's ranges, overflow thresholds (sinh and cosh past
# 88.72 and 89.4, exp2 at 128 and -150), and 32.564632, where glibc's fused expf rounds otherwise than unfused.
F32_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, -3e-39, 1.2e-38, 2.0**-28, 2.0**-14,
             0.5, 1.0, -1.0, 22.0, -22.0, 32.564632, 88.0, 88.72, -88.73, 89.0, 89.4, -89.42, 90.0, 126.5,
             127.99, 128.0, -149.5, -150.0, -150.5, 1e30, -3.4e38]
UNARY = ("exp2", "sinh", "cosh")
pytestmark = pytest.mark.usefixtures("one_thread")


def _values(n: int, dtype, seed: int = 0) -> np.ndarray:
    """n values of all magnitudes (2^-40 to 2^8, some tiny, some huge), the edges first."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 2.0 ** rng.integers(-40, 8, n)
    x[::7] = rng.standard_normal(x[::7].size) * 3
    edges = F32_EDGES[: min(len(F32_EDGES), n // 2)]
    x[: len(edges)] = edges
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def _value_and_grads(lib, name: str, arrays: tuple, grad: np.ndarray, view=lambda t: t) -> list:
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = getattr(lib, name)(*(view(t) for t in leaves))
    out.backward(lib.tensor(grad))
    return [out.detach().numpy()] + [t.grad.numpy() for t in leaves]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", UNARY)
def test_every_length_up_to_200_splits_as_torch(name: str, dtype) -> None:
    for n in range(1, 201):
        x = _values(n, dtype, seed=n)
        assert_same_bits(getattr(tg, name)(tg.tensor(x)), getattr(torch, name)(torch.tensor(x)))


@pytest.mark.parametrize("name", UNARY)
def test_many_values_and_all_edges(name: str) -> None:
    x = np.concatenate([_values(100_000, np.float32), np.array(F32_EDGES, np.float32)])
    bits = np.random.default_rng(1).integers(0, 2**32, 50_000, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([x, bits.view(np.float32), -x])
    assert_same_bits(getattr(tg, name)(tg.tensor(x)), getattr(torch, name)(torch.tensor(x)))


@pytest.mark.parametrize("name", UNARY)
def test_edges_through_the_vector_code_and_the_scalar_loop(name: str) -> None:
    edges = np.array(F32_EDGES, np.float32)
    edges = np.concatenate([edges, -edges])
    every_other = np.repeat(edges, 2)  # (a stride of 2: the scalar loop throughout)
    assert_same_bits(getattr(tg, name)(tg.tensor(every_other)[::2]), getattr(torch, name)(torch.tensor(every_other)[::2]))
    whole_blocks = np.resize(edges, 32 * (edges.size // 32 + 1))
    assert_same_bits(getattr(tg, name)(tg.tensor(whole_blocks)), getattr(torch, name)(torch.tensor(whole_blocks)))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("view", sorted(STRIDED_VIEWS_2D))
@pytest.mark.parametrize("name", UNARY)
def test_strided_values_and_gradients(name: str, view: str, dtype) -> None:
    x = _values(41 * 37, dtype, seed=3).reshape(41, 37)
    x[np.abs(x) > 12] = 0.75  # (finite gradients: cosh of the huge ones overflows)
    shape = STRIDED_VIEWS_2D[view](torch.tensor(x)).shape
    g = np.random.default_rng(4).standard_normal(shape).astype(dtype)
    assert_all_same_bits(*run_both(_value_and_grads, name, (x,), g, STRIDED_VIEWS_2D[view]))


EXPANDED = {"column": ((100, 1), (100, 64)), "row": ((1, 100), (64, 100)), "number": ((1, 1), (37, 45)),
            "short_column": ((100, 1), (100, 37))}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("case", sorted(EXPANDED))
@pytest.mark.parametrize("name", UNARY)
def test_expanded_inputs(name: str, case: str, dtype) -> None:
    # (a stride-0 inner dimension is a broadcast scalar to PyTorch's vector code, not a strided run)
    small, shape = EXPANDED[case]
    x = _values(int(np.prod(small)) + 40, dtype, seed=6)[40:].reshape(small)
    assert_same_bits(getattr(tg, name)(tg.tensor(x).expand(*shape)),
                     getattr(torch, name)(torch.tensor(x).expand(*shape)))


@pytest.mark.parametrize("name", UNARY)
def test_in_place_and_integer_inputs(name: str) -> None:
    x = _values(333, np.float32, seed=5).reshape(9, 37)
    ours, theirs = tg.tensor(x), torch.tensor(x)
    getattr(ours[:, 2:], name + "_")()
    getattr(theirs[:, 2:], name + "_")()
    assert_same_bits(ours, theirs)
    k = np.arange(-40, 41, dtype=np.int64)
    assert_same_bits(getattr(tg, name)(tg.tensor(k)), getattr(torch, name)(torch.tensor(k)))


def _atan2_pairs(n: int, dtype, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y, x = _values(n, np.float64, seed), rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)
    x[1::5] = y[1::5] * (1 + rng.standard_normal(x[1::5].size) * 1e-4)  # (near the diagonal)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, 3e-39, 1e38])
    k = min(n // 2, edges.size)
    x[n - k :] = edges[:k]
    with np.errstate(over="ignore"):
        return y.astype(dtype), x.astype(dtype)


BINARY = ("atan2", "logaddexp", "logaddexp2")


def _assert_binary_same(name: str, y, x, view=lambda t: t) -> None:
    assert_same_bits(getattr(tg, name)(view(tg.tensor(y)), view(tg.tensor(x))),
                     getattr(torch, name)(view(torch.tensor(y)), view(torch.tensor(x))))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", BINARY)
def test_binary_every_length_up_to_200(name: str, dtype) -> None:
    for n in range(1, 201):
        _assert_binary_same(name, *_atan2_pairs(n, dtype, seed=n))


@pytest.mark.parametrize("name", BINARY)
def test_binary_special_values_pairwise(name: str) -> None:
    edges = np.array(F32_EDGES + [1.0, 2.0, -0.5], np.float32)
    y, x = (a.ravel() for a in np.meshgrid(edges, edges))
    y, x = np.tile(y, 3), np.tile(x, 3)  # (both the vector blocks and the scalar tail)
    _assert_binary_same(name, y, x)
    _assert_binary_same(name, np.repeat(y, 2), np.repeat(x, 2), lambda t: t[::2])  # (the scalar loop throughout)
    _assert_binary_same(name, *_atan2_pairs(200_000, np.float32, seed=7))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("view", sorted(STRIDED_VIEWS_2D))
def test_atan2_strided_values_and_gradients(view: str, dtype) -> None:
    y, x = (a.reshape(41, 37) for a in _atan2_pairs(41 * 37, dtype, seed=8))
    finite = np.isfinite(y) & np.isfinite(x) & (np.abs(y) < 1e4) & (np.abs(x) < 1e4)
    y, x = np.where(finite, y, dtype(0.5)), np.where(finite, x, dtype(-2))  # (finite gradients)
    shape = STRIDED_VIEWS_2D[view](torch.tensor(y)).shape
    g = np.random.default_rng(9).standard_normal(shape).astype(dtype)
    assert_all_same_bits(*run_both(_value_and_grads, "atan2", (y, x), g, STRIDED_VIEWS_2D[view]))


BROADCASTS = {
    "row": lambda y, x: (y, x[:1]),
    "column": lambda y, x: (y[:, :1], x),
    "row_of_y": lambda y, x: (y[:1], x),
    "transposed": lambda y, x: (y.T, x.T[:1]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("case", sorted(BROADCASTS))
@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcasts(name: str, case: str, dtype) -> None:
    y, x = (a.reshape(45, 53) for a in _atan2_pairs(45 * 53, dtype, seed=10))
    a, b = BROADCASTS[case](y, x)
    _assert_binary_same(name, a, b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    expanded = [np.broadcast_to(v, shape) for v in (a, b)]  # (both broadcast along the inner dimension)
    ours, theirs = (getattr(lib, name)(*(lib.tensor(v[..., :1]).expand(*v.shape) for v in expanded))
                    for lib in (tg, torch))
    assert_same_bits(ours, theirs)
    for number in (0.5, -3.0):  # (a 0-d tensor)
        _assert_binary_same(name, a, np.array(number, dtype))
        _assert_binary_same(name, np.array(number, dtype), b)
