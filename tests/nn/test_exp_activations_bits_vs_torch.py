"""sigmoid, SiLU, the ELU family and expm1, forward and backward, give PyTorch's CPU bits in float32 and float16 (one
thread).

PyTorch's kernels take Sleef's expf / expm1f in their vector code and glibc's in the scalar loop that finishes
each run (``nn_ops/sigmoid_cpu``, ``nn_ops/elu_cpu``); NumPy's exp agreed with neither for one float32 input in
six. The sizes below put elements on both sides of that split; transposed and sliced inputs make the inner runs
short. The element where a thread's range starts decides the tails too, so both libraries run one thread.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import STRIDED_VIEWS_2D, assert_all_same_bits, assert_same_bits, run_both, tg, torch

SIZES = [1, 7, 31, 32, 33, 100, 4031, 9001]


def _inputs(n: int, dtype, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 6
    x[:12] = [np.inf, -np.inf, np.nan, 0.0, -0.0, -100.0, 100.0, -88.5, 88.5, 1e-30, -17.3, 17.3][: min(12, n)]
    return x.astype(dtype), rng.standard_normal(n).astype(dtype)


def _value_and_grad(lib, fn, x: np.ndarray, g: np.ndarray, view) -> tuple[np.ndarray, np.ndarray]:
    leaf = lib.tensor(x, requires_grad=True)
    out = fn(lib, view(leaf))
    out.backward(view(lib.tensor(g)))
    return out.detach().numpy(), leaf.grad.numpy()


FUNCTIONS = {
    "sigmoid": lambda lib, t: lib.sigmoid(t),
    "silu": lambda lib, t: lib.nn.functional.silu(t),
    "elu": lambda lib, t: lib.nn.functional.elu(t),
    "elu_alpha": lambda lib, t: lib.nn.functional.elu(t, alpha=0.4),
    "elu_in_place": lambda lib, t: lib.nn.functional.elu(t * 1, inplace=True),  # (backward from the result)
    "selu": lambda lib, t: lib.nn.functional.selu(t),
    "celu": lambda lib, t: lib.nn.functional.celu(t, alpha=1.3),
    "expm1": lambda lib, t: lib.expm1(t),  # (all through Sleef: vec::map loads the last partial vector too)
}
VIEWS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.reshape(-1, 10).t() if t.numel() % 10 == 0 else t,
    "every_third": lambda t: t[::3],
}


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_and_gradients_are_torchs(name: str, n: int, dtype) -> None:
    x, g = _inputs(n, dtype)
    for view in VIEWS.values():
        assert_all_same_bits(*run_both(_value_and_grad, FUNCTIONS[name], x, g, view))


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("n", [100, 40000])
def test_in_place_and_module_forms(n: int) -> None:
    x, _ = _inputs(n, np.float32, seed=1)
    results = []
    for lib in (tg, torch):
        a, b = lib.tensor(x), lib.tensor(x)
        a.sigmoid_()
        lib.nn.functional.silu(b, inplace=True)
        results.append((a.numpy(), b.numpy(), lib.nn.SiLU()(lib.tensor(x)).numpy(),
                        lib.nn.Sigmoid()(lib.tensor(x)).numpy()))
    assert_all_same_bits(*results)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize(("shape", "dim"), [((64, 126), -1), ((64, 126), 0), ((4, 6, 8), 1), ((4032,), 0),
                                            ((3, 70), 1)])
def test_glu_is_a_node_of_its_own_with_torchs_bits(shape: tuple, dim: int, dtype) -> None:
    """glu is PyTorch's native operator (GluBackward0, not a product and a sigmoid), with its kernel's bits: the
    sigmoid's exp split between vector blocks and scalar tails, the backward's sigmoid laid out in the
    gradient's first half."""
    x, _ = _inputs(int(np.prod(shape)), dtype, seed=3)
    x = np.nan_to_num(x).reshape(shape)
    results = []
    for lib in (tg, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.glu(t, dim)
        y.backward(lib.tensor(np.linspace(-2, 2, y.numel(), dtype=dtype).reshape(tuple(y.shape))))
        results.append((y, t.grad, y.grad_fn.name()))
    (y, gx, name), (ty, tgx, tname) = results
    assert name == tname == "GluBackward0"
    assert_same_bits(y, ty)
    assert_same_bits(gx, tgx)


# Half precision runs its kernels in float, in blocks of two Vectorized<Half> (64 halves on AVX-512, twice
# float's). Where Sleef's and glibc's float sigmoid differ by an ulp, a product taken before the rounding can round
# to another half: these (factor, sigmoid's argument) pairs, as float16 bits, do so for glu (a * sigmoid(b)) and
# SiLU's backward (g * s * (1 + x * (1 - s))). Sigmoid and SiLU themselves round every half input alike either way.
GLU_SENSITIVE = [(8650, 11512), (9376, 12249), (9000, 12622), (8924, 13651), (9144, 15424), (9472, 43341),
                 (9209, 47064), (8542, 49020), (9125, 49589), (8964, 50603), (10667, 50673), (17815, 51553)]
SILU_BACKWARD_SENSITIVE = [(8582, 9513), (8695, 10622), (9406, 12507), (9085, 12951), (8645, 15415), (9292, 46551),
                           (8922, 47964), (9102, 49445), (9062, 49681), (9041, 50290), (9000, 50603), (9120, 50802)]
HALF_SIZES = [*range(1, 201), 255, 4099]


def _sensitive(pairs: list, shape) -> tuple[np.ndarray, np.ndarray]:
    bits = np.array(pairs, np.uint16)
    return tuple(np.resize(bits[:, k], shape).view(np.float16) for k in (0, 1))


def _half_results(lib, fn, x: np.ndarray, g: np.ndarray, view=lambda t: t) -> tuple:
    leaf = lib.tensor(x, requires_grad=True)
    out = fn(lib, view(leaf))
    out.backward(lib.tensor(g))
    return out.detach().numpy(), leaf.grad.numpy()


def _glu_of_halves(lib, t):
    """glu along the last dim where it is even, else the first (the views' shapes)."""
    return lib.nn.functional.glu(t, -1 if t.shape[-1] % 2 == 0 else 0)


@pytest.mark.usefixtures("one_thread")
def test_half_blocks_are_two_half_vectors() -> None:
    """Runs of every length up to 200 (and longer ones): torch's float16 kernels take their vector code on blocks of
    64 elements (AVX-512), the rest in the scalar loop; with float's 32 glu and SiLU's backward differ."""
    for n in HALF_SIZES:
        a, b = _sensitive(GLU_SENSITIVE, n)
        x = np.concatenate([a, b])
        outputs = [lib.nn.functional.glu(lib.tensor(x), 0) for lib in (tg, torch)]
        assert_same_bits(*outputs)
        g, x = _sensitive(SILU_BACKWARD_SENSITIVE, n)
        grads = [_half_results(lib, FUNCTIONS["silu"], x, g)[1] for lib in (tg, torch)]
        assert_same_bits(*grads)


def _base_holding(view, shape: tuple, values) -> np.ndarray:
    """A float16 array of ``shape`` whose ``view`` holds ``values(view_shape)`` (zeros elsewhere)."""
    base = torch.zeros(shape, dtype=torch.float16)
    seen = view(base)
    seen.copy_(torch.from_numpy(values(tuple(seen.shape))))
    return base.numpy()


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("name", sorted(STRIDED_VIEWS_2D))
def test_half_blocks_in_strided_views(name: str) -> None:
    """Sliced and transposed half tensors: the inner runs (and so the blocks) are the view's, not a copy's. The
    sensitive pairs are placed in the view's coordinates (glu's halves along the dim it splits)."""
    view, shape = STRIDED_VIEWS_2D[name], (24, 100)

    def glu_input(seen: tuple) -> np.ndarray:
        dim = -1 if seen[-1] % 2 == 0 else 0
        half = list(seen)
        half[dim] //= 2
        return np.concatenate(_sensitive(GLU_SENSITIVE, half), axis=dim)

    x = _base_holding(view, shape, glu_input)
    out_shape = tuple(_glu_of_halves(torch, view(torch.from_numpy(x))).shape)
    _, g = _inputs(int(np.prod(out_shape)), np.float16)
    results = [_half_results(lib, _glu_of_halves, x, np.nan_to_num(g).reshape(out_shape), view) for lib in (tg, torch)]
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)
    x = _base_holding(view, shape, lambda seen: _sensitive(SILU_BACKWARD_SENSITIVE, seen)[1])
    g = _sensitive(SILU_BACKWARD_SENSITIVE, tuple(view(torch.from_numpy(x)).shape))[0]
    results = [_half_results(lib, FUNCTIONS["silu"], x, g, view) for lib in (tg, torch)]
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("name", ["sigmoid", "silu", "glu"])
def test_half_odd_lengths_forward_and_backward(name: str) -> None:
    fn = _glu_of_halves if name == "glu" else FUNCTIONS[name]
    for n in HALF_SIZES:
        x, g = _inputs(2 * n if name == "glu" else n, np.float16, seed=n)
        results = [_half_results(lib, fn, x, g[:n] if name == "glu" else g) for lib in (tg, torch)]
        for ours, theirs in zip(*results):
            assert_same_bits(ours, theirs)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", sorted(STRIDED_VIEWS_2D))
def test_glu_of_strided_views_iterates_as_its_output_is_laid_out(name: str, dtype) -> None:
    """glu's output follows its halves' layout (TensorIterator's), and its kernel runs along that layout: a
    transposed input is one long run, not a short one per row."""
    view = STRIDED_VIEWS_2D[name]
    x, _ = _inputs(24 * 100, dtype, seed=5)
    x = np.nan_to_num(x).reshape(24, 100)
    results = []
    for lib in (tg, torch):
        leaf = lib.tensor(x, requires_grad=True)
        y = _glu_of_halves(lib, view(leaf))
        y.backward(lib.tensor(np.linspace(-2, 2, y.numel(), dtype=dtype).reshape(tuple(y.shape))))
        results.append((y, leaf.grad, tuple(y.stride())))
    (y, gx, strides), (ty, tgx, t_strides) = results
    assert strides == t_strides
    assert_same_bits(y, ty)
    assert_same_bits(gx, tgx)
