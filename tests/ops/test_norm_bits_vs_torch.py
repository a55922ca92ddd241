"""``linalg.vector_norm``, ``torch.norm`` and ``Tensor.norm`` give PyTorch's CPU bits (one thread): ords 2, 1,
inf, -inf, 0 and others, full reductions and reductions over one dim or several, keepdim, ``dtype=``, contiguous,
transposed, permuted and sliced inputs, sizes around ATen's vector (8 floats, 4 doubles) and its leftover loop,
random normal data and data whose magnitudes span decades (so the order of the additions shows in many bits).

The order follows ATen's ``norm_kernel_tensor_iterator_impl`` (``tracegrad.ops.aten_norm``); NumPy's pairwise
sums matched about half of float32 2-norms of a few hundred elements and hardly any of 100000.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _lib import STRIDED_VIEWS_2D, assert_same_bits, assert_same_bits_of, both_from, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")

DTYPES = [np.float32, np.float64]
INF = math.inf
ORDS = [2, 1, INF, -INF, 0]  # (the others, through pow: test_other_ords)
# around the vectors (8 floats, 4 doubles), the float leftover loop's groups of 4, and longer runs
SIZES_1D = list(range(1, 21)) + [31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4097, 70001]
SIZES_2D = [1, 3, 4, 7, 8, 9, 12, 16, 17, 33, 65]


def _data(shape, dtype, kind: str = "wide", seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if kind == "wide":  # magnitudes over six decades: the large terms decide the rounding of the small
        x = x * 10.0 ** rng.uniform(-3, 3, shape)
    return np.asarray(x, dtype=dtype)


def _check(base: np.ndarray, ord=2, dim=None, keepdim: bool = False, view=lambda t: t,
           dtype: str | None = None) -> None:
    """``linalg.vector_norm`` in both libraries; ``dtype`` names the ``dtype=`` argument."""
    assert_same_bits_of("linalg.vector_norm", base, ord, dim, keepdim, view=view, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["normal", "wide"])
def test_full_norm_1d(dtype, kind):
    for n in SIZES_1D:
        base = _data((n,), dtype, kind, seed=n)
        for ord in ORDS:
            _check(base, ord)


@pytest.mark.parametrize("dtype", DTYPES)
def test_2d_over_each_dim(dtype):
    for rows in SIZES_2D:
        for cols in SIZES_2D:
            base = _data((rows, cols), dtype, seed=rows * 100 + cols)
            for dim in (None, 0, 1, -1, (0, 1)):
                _check(base, 2, dim)
            _check(base, 1, 0, keepdim=True)
            _check(base, 1, 1)
            _check(base, INF, 1, keepdim=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_and_sliced(dtype):
    """Transposed contiguous data is one run in memory (ATen's contiguous-run path, 2-norm); sliced data is
    not (its element-by-element path, in the iterator's order)."""
    for rows, cols in [(40, 70), (129, 33), (9, 300)]:
        base = _data((rows, cols), dtype, seed=rows)
        for view in STRIDED_VIEWS_2D.values():
            for dim in (None, 0, 1, (0, 1)):
                for ord in (2, 1):
                    _check(base, ord, dim, view=view)


@pytest.mark.parametrize("dtype", DTYPES)
def test_several_dims_and_layouts(dtype):
    base = _data((6, 17, 9, 20), dtype, seed=7)
    layouts = [lambda t: t, lambda t: t.permute(2, 0, 3, 1), lambda t: t.permute(3, 1, 2, 0)[:, ::2],
               lambda t: t[:, 1:, :, ::3]]
    for view in layouts:
        for dims in [(0,), (1,), (3,), (0, 1), (0, 2), (1, 3), (2, 3), (0, 2, 3), (1, 2, 3)]:
            _check(base, 2, dims, view=view)
            _check(base, 2, dims, True, view=view)
            _check(base, 1, dims, view=view)


@pytest.mark.parametrize("dtype", DTYPES)
def test_entry_points(dtype):
    """``torch.norm``, ``Tensor.norm`` and ``linalg.norm`` reach the same kernel."""
    base = _data((37, 41), dtype, seed=3)
    ours, theirs = both_from(base)
    calls = [
        lambda lib, t: lib.norm(t),
        lambda lib, t: lib.norm(t, dim=1),
        lambda lib, t: lib.norm(t, p=1, dim=0, keepdim=True),
        lambda lib, t: t.norm(),
        lambda lib, t: t.norm(2, -1),
        lambda lib, t: t.t().norm(),
        lambda lib, t: lib.linalg.norm(t),
        lambda lib, t: lib.linalg.norm(t[0]),
        lambda lib, t: lib.linalg.norm(t, dim=1),
    ]
    for call in calls:
        assert_same_bits(call(tg, ours), call(torch, theirs))


@pytest.mark.parametrize("dtype", DTYPES)
def test_other_ords(dtype):
    """NormOps: ``acc + pow(|x|, p)`` in order, then ``pow(acc, 1 / p)``, with libm's pow and powf."""
    for ord in (3, 0.5, 1.5, -1, -2.5):
        for n in (7, 64, 301):
            _check(_data((n,), dtype, seed=n), ord)
        _check(_data((33, 20), dtype, seed=1), ord, 0)
        _check(_data((33, 20), dtype, seed=2), ord, 1, view=lambda t: t.t())
        _check(_data((33, 20), np.float16, "normal", seed=3), ord, 1)


def test_one_element_per_output():
    """Where every reduced dim has size 1 nothing is reduced: |x| (x != 0 for ord 0), so no square overflows
    and no power rounds."""
    base = np.array([[3e30], [-1.7], [0.0], [-3e-30], [np.nan]], np.float32)
    for ord in (2, 3, 0.5, 1, 0, INF):
        _check(base, ord, 1)
        _check(base, ord, 1, keepdim=True)
        _check(base[1:2], ord)
        _check(base.reshape(5, 1, 1), ord, (1, 2))
        _check(np.array(-2.5, np.float64), ord)


def test_dtype_argument_and_half():
    base = _data((33, 65), np.float32, seed=8)
    half = _data((33, 65), np.float16, "normal", seed=8)
    for dim in (None, 0, 1):
        for ord in (2, 1):
            _check(base, ord, dim, dtype="float64")
            _check(base, ord, dim, view=lambda t: t.t()[::2], dtype="float64")
            _check(half, ord, dim)
            _check(half, ord, dim, dtype="float32")
            _check(half, ord, dim, view=lambda t: t.t()[::2], dtype="float32")


def test_edge_values():
    _check(np.zeros((0, 5), np.float32), 2, 0)
    _check(np.zeros((0, 5), np.float32), 1, 1)
    _check(np.zeros((3, 0), np.float64), 2, 1)
    _check(np.array(-0.0, np.float32))
    _check(np.array(-2.5, np.float64), 1)
    _check(-np.zeros((3, 40), np.float32), 2, 1)
    _check(np.array([np.inf, 1.0, -np.inf, 2.0] * 5, np.float32))
    _check(np.array([np.nan, 1.0, 2.0] * 5, np.float32), INF)
    _check(np.array([1.0, np.nan, 2.0] * 7, np.float64))
    _check(np.array([3e38, 3e38, 1.0], np.float32))  # (the squares overflow, as there)
    _check(np.array([0.0, 2.0, 0.0, -1.0], np.float32), 0)
    _check(_data((1, 1, 37), np.float32), 2, (0, 1))


def test_empty_refusals():
    """ord < 0 or inf over nothing has no identity: refused, with the dim named as given."""
    for ord, dim in ((-1, None), (INF, 1), (-INF, -1), (-0.5, (0, 1))):
        messages = []
        for lib in (tg, torch):
            with pytest.raises(RuntimeError) as info:
                lib.linalg.vector_norm(lib.zeros(3, 0), ord, dim)
            messages.append(str(info.value))
        assert messages[0] == messages[1]
    assert_same_bits(tg.linalg.vector_norm(tg.zeros(3, 0), -1, 0), torch.linalg.vector_norm(torch.zeros(3, 0), -1, 0))


FUNCTIONS_OF_NORMS = {
    "cosine_similarity": lambda F, a, b: F.cosine_similarity(a, b, dim=1),
    "cosine_similarity_dim0": lambda F, a, b: F.cosine_similarity(a, b, dim=0),
    "pairwise_distance": lambda F, a, b: F.pairwise_distance(a, b),
    "pairwise_distance_p1": lambda F, a, b: F.pairwise_distance(a, b, p=1.0),
    "normalize": lambda F, a, b: F.normalize(a, dim=1) * b,
    "normalize_p3": lambda F, a, b: F.normalize(a, p=3.0, dim=0) * b,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(FUNCTIONS_OF_NORMS))
def test_functions_built_on_norms(name, dtype):
    """cosine_similarity, pairwise_distance and normalize take the norm operator's bits, and so do their
    gradients."""
    rng = np.random.default_rng(9)
    a, b = (rng.standard_normal((64, 63)).astype(dtype) * 2 for _ in range(2))
    results = []
    for lib in (tg, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = FUNCTIONS_OF_NORMS[name](lib.nn.functional, x, y)
        out.backward(lib.tensor(np.linspace(-1, 1, out.numel(), dtype=dtype).reshape(tuple(out.shape))))
        results.append((out, x.grad, y.grad))
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)
