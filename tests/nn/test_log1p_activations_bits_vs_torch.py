"""softplus, Mish, log_sigmoid and log1p, forward and backward, give PyTorch's CPU bits in float32 and float16 (one
thread).

softplus and Mish take Sleef's expf / log1pf / tanhf in their vector code and glibc's in the scalar loop that
finishes each run; log_sigmoid and log1p take Sleef's throughout (``nn_ops/log1p_cpu``, ``unary``). NumPy's log1p and exp agreed with
PyTorch's softplus for some 83% of float32 inputs. The sizes below put elements on both sides of the vector /
scalar split; transposed, sliced and expanded inputs change the inner runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import STRIDED_VIEWS_2D, assert_all_same_bits, assert_same_bits, run_both, tg, torch

SIZES = [1, 7, 31, 32, 33, 63, 100, 4031, 9001]
SPECIAL = [np.inf, -np.inf, np.nan, 0.0, -0.0, -100.0, 100.0, -88.5, 88.5, 1e-30, -1e-30, 1e-40, -17.3, 17.3,
           20.0, 19.999998, 20.000002, -20.0, 87.5, 88.72, -103.9, -104.5, 3.4e38, -3.4e38]


def _inputs(n: int, dtype, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 6
    x[: len(SPECIAL)] = SPECIAL[:n]
    with np.errstate(over="ignore"):  # (the huge ones are inf in half)
        return x.astype(dtype), rng.standard_normal(n).astype(dtype)


def _value_and_grad(lib, fn, x: np.ndarray, g: np.ndarray, view=lambda t: t) -> tuple[np.ndarray, np.ndarray]:
    leaf = lib.tensor(x, requires_grad=True)
    out = fn(lib, view(leaf))
    out.backward(lib.tensor(np.resize(g, tuple(out.shape))))
    return out.detach().numpy(), leaf.grad.numpy()


FUNCTIONS = {
    "softplus": lambda lib, t: lib.nn.functional.softplus(t),
    "softplus_beta": lambda lib, t: lib.nn.functional.softplus(t, beta=2.5, threshold=3),
    "softplus_small_beta": lambda lib, t: lib.nn.functional.softplus(t, beta=0.3, threshold=100),
    "softplus_negative_beta": lambda lib, t: lib.nn.functional.softplus(t, beta=-1.5, threshold=10),
    "mish": lambda lib, t: lib.nn.functional.mish(t),
    "logsigmoid": lambda lib, t: lib.nn.functional.logsigmoid(t),
    "log1p": lambda lib, t: lib.log1p(t),  # (all through Sleef: vec::map loads the last partial vector too)
}
VIEWS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.reshape(-1, 10).t() if t.numel() % 10 == 0 else t,
    "every_third": lambda t: t[::3],
    "expanded": lambda t: t.unsqueeze(0).expand(3, -1),  # (the input repeats along an outer dimension)
}


def _assert_both_same(name: str, x: np.ndarray, g: np.ndarray, view=lambda t: t) -> None:
    assert_all_same_bits(*run_both(_value_and_grad, FUNCTIONS[name], x, g, view))


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_and_gradients_are_torchs(name: str, n: int, dtype) -> None:
    x, g = _inputs(n, dtype)
    for view in VIEWS.values():
        _assert_both_same(name, x, g, view)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("view", sorted(STRIDED_VIEWS_2D))
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_strided_views(name: str, view: str) -> None:
    x, g = _inputs(24 * 100, np.float32, seed=2)
    _assert_both_same(name, x.reshape(24, 100), g, STRIDED_VIEWS_2D[view])


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_magnitude_and_special_value(name: str) -> None:
    """Random float32 bit patterns (subnormals, huge values, infinities and NaN among them), in a run long enough
    for the vector code and an odd tail for the scalar loop."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, 200_003, dtype=np.uint64).astype(np.uint32).view(np.float32)
    g = rng.standard_normal(x.size).astype(np.float32)
    _assert_both_same(name, x, g)
    # and magnitudes spread evenly on a log scale, both signs
    with np.errstate(over="ignore"):  # (the largest are inf in float)
        x = (np.exp(rng.uniform(-105, 90, 100_001)) * rng.choice([-1, 1], 100_001)).astype(np.float32)
    _assert_both_same(name, x, g[: x.size])


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize(("beta", "threshold"), [(1, 20), (2.5, 3), (0.3, 7), (1.7, 0)])
def test_softplus_around_its_threshold(beta: float, threshold: float) -> None:
    """Inputs a few ulps either side of threshold / beta: the linear branch takes over where x * beta (rounded to
    float) passes the threshold."""
    edge = np.float32(threshold / beta)
    steps = np.arange(-40, 41, dtype=np.int32)
    x = (np.full(steps.size, edge).view(np.int32) + steps).view(np.float32)
    x = np.concatenate([x, -x, np.full(3, edge)])
    g = np.linspace(-3, 3, x.size, dtype=np.float32)
    results = []
    for lib in (tg, torch):
        leaf = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.softplus(leaf, beta=beta, threshold=threshold)
        out.backward(lib.tensor(g))
        results.append((out.detach().numpy(), leaf.grad.numpy()))
    assert_all_same_bits(*results)


@pytest.mark.usefixtures("one_thread")
def test_modules_and_in_place_forms() -> None:
    x, _ = _inputs(4099, np.float32, seed=1)
    results = []
    for lib in (tg, torch):
        nn = lib.nn
        a = lib.tensor(x)
        nn.functional.mish(a, inplace=True)
        results.append((nn.Softplus()(lib.tensor(x)).numpy(), nn.Softplus(beta=2, threshold=5)(lib.tensor(x)).numpy(),
                        nn.Mish()(lib.tensor(x)).numpy(), nn.LogSigmoid()(lib.tensor(x)).numpy(), a.numpy()))
    assert_all_same_bits(*results)


@pytest.mark.usefixtures("one_thread")
def test_log_sigmoid_buffer_and_backward_op() -> None:
    """``log_sigmoid_forward``'s buffer is exp(-|x|) with Sleef's exp; ``log_sigmoid_backward`` reads it."""
    x, g = _inputs(1001, np.float32, seed=4)
    results = []
    for lib in (tg, torch):
        out, buffer = lib.ops.aten.log_sigmoid_forward(lib.tensor(x))
        grad = lib.ops.aten.log_sigmoid_backward(lib.tensor(g), lib.tensor(x), buffer)
        results.append((out, buffer, grad))
    assert_all_same_bits(*results)


# Half is computed in float and rounded once, in blocks of two Vectorized<Half> (64 halves on AVX-512). Where
# Sleef's and glibc's float results differ by an ulp, a few inputs round to another half: these (as float16 bits;
# pairs are (grad, input)) do so.
MISH_SENSITIVE = [4352, 14836, 36799, 51365]
MISH_BACKWARD_SENSITIVE = [(10412, 10007), (47403, 33758), (48956, 47860), (14777, 48323), (13522, 48432)]
SOFTPLUS_BACKWARD_SENSITIVE = [(22279, 48673), (22701, 43983), (54442, 50639), (23041, 13197), (18563, 13710),
                               (53728, 46585), (20227, 11802), (20240, 13833)]
HALF_SIZES = [*range(1, 131), 255, 4099]


def _halves(bits: list, n: int) -> np.ndarray:
    return np.resize(np.array(bits, np.uint16), n).view(np.float16)


@pytest.mark.usefixtures("one_thread")
def test_half_blocks_are_two_half_vectors() -> None:
    """Runs of every length up to 130 (and longer ones): the float16 kernels take their vector code on blocks of 64
    elements, the rest in the scalar loop."""
    for n in HALF_SIZES:
        x = _halves(MISH_SENSITIVE, n)
        assert_same_bits(*(lib.nn.functional.mish(lib.tensor(x)) for lib in (tg, torch)))
        for name, pairs in (("mish", MISH_BACKWARD_SENSITIVE), ("softplus", SOFTPLUS_BACKWARD_SENSITIVE)):
            g, x = _halves([p[0] for p in pairs], n), _halves([p[1] for p in pairs], n)
            grads = [_value_and_grad(lib, FUNCTIONS[name], x, g)[1] for lib in (tg, torch)]
            assert_same_bits(*grads)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_half_odd_lengths_forward_and_backward(name: str) -> None:
    for n in HALF_SIZES[::7]:
        x, g = _inputs(n, np.float16, seed=n)
        _assert_both_same(name, x, g)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (2, 1, 3)])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_zero_dim_and_empty_inputs(name: str, shape: tuple) -> None:
    x = np.linspace(-3, 3, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    _assert_both_same(name, x, np.ones(shape, np.float32))
