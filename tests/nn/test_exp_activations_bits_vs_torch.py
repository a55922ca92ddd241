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
from _lib import assert_same_bits, tg, torch

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
        ours = _value_and_grad(tg, FUNCTIONS[name], x, g, view)
        theirs = _value_and_grad(torch, FUNCTIONS[name], x, g, view)
        for a, b in zip(ours, theirs):
            assert_same_bits(a, b)


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
    for a, b in zip(*results):
        assert_same_bits(a, b)


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
