"""Kernels that pick one of two values per element give torch's bits: the vector code's choice for a NaN input
(hardtanh, relu6 and hardswish backward zero or poison it, where the scalar loop passes the gradient; ELU's
double backward sends it to the negative branch), signed zeros and inf or NaN gradients kept as torch keeps
them, and the selections done without a branch per element (``select``) giving ``np.where``'s bits. Short
arrays (scalar tails) and long ones (vector bodies, and ``select``'s bit path from 4096 elements), contiguous,
strided, transposed, with negative, inf, NaN, strided and expanded gradients. Also edge shapes: 0-d inputs and
empty mean losses.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _lib import assert_same_bits, run_both

# inputs: the branch points of the kernels below (0, +-1, +-3, the shrink lambda 0.5), signed zeros, inf, NaN
VALUES = [-0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 3.0, -3.0, 6.0, math.inf, -math.inf, math.nan, 2.5, -2.5, 0.25, -7.0,
          20.0]
GRADS = {
    "negative": lambda n: -np.abs(np.linspace(0.5, 4.0, n)),
    "mixed": lambda n: np.resize([-1.5, math.inf, -math.inf, math.nan, -0.0, 0.0, 2.0], n),
    "minus inf": lambda n: np.full(n, -math.inf),
    "nan": lambda n: np.full(n, math.nan),
}
GRAD_LAYOUTS = {
    "contiguous": lambda L, g, n: g[:n],
    "strided": lambda L, g, n: g[::2][:n],
    "expanded": lambda L, g, n: g[:1].expand(n),
}
LENGTHS = [37, 5003]
INPUT_LAYOUTS = {
    "contiguous": lambda x, n: x[:n],
    "transposed": lambda x, n: x[: n - n % 2].reshape(2, -1).t(),
}

CASES = {  # (op, dtypes): dtypes where torch's arithmetic is matched bit for bit
    "hardtanh": (lambda L, x, t: L.nn.functional.hardtanh(x), ["float32", "float64", "float16"]),
    "relu6": (lambda L, x, t: L.nn.functional.relu6(x), ["float32", "float64", "float16"]),
    "hardswish": (lambda L, x, t: L.nn.functional.hardswish(x), ["float32", "float64"]),
    "elu": (lambda L, x, t: L.nn.functional.elu(x), ["float32", "float16"]),
    "selu": (lambda L, x, t: L.nn.functional.selu(x), ["float32"]),
    "softplus": (lambda L, x, t: L.nn.functional.softplus(x, 2.0, 1.0), ["float32"]),
    "logsigmoid": (lambda L, x, t: L.nn.functional.logsigmoid(x), ["float32"]),
    "leaky_relu": (lambda L, x, t: L.nn.functional.leaky_relu(x, 0.1), ["float32", "float64"]),
    "hardshrink": (lambda L, x, t: L.nn.functional.hardshrink(x), ["float32", "float64"]),
    "smooth_l1": (lambda L, x, t: L.nn.functional.smooth_l1_loss(x, t, reduction="none", beta=0.5),
                  ["float32", "float64"]),
    "huber": (lambda L, x, t: L.nn.functional.huber_loss(x, t, reduction="none", delta=2.0), ["float32", "float64"]),
    "remainder": (lambda L, x, t: L.remainder(x, t), ["float32", "float64"]),
}


def _tensor(L, values, dtype: str):
    return L.tensor(np.asarray(values, np.float64).tolist(), dtype=getattr(L, dtype))


def _forward_and_grad(L, case: str, dtype: str, n: int, layout: str, grads: str, grad_layout: str) -> list:
    op = CASES[case][0]
    x = INPUT_LAYOUTS[layout](_tensor(L, np.resize(VALUES, n), dtype), n).detach().requires_grad_(True)
    t = INPUT_LAYOUTS[layout](_tensor(L, np.resize([0.25, -0.75, 1.5, -2.0, 0.0, 3.5, -5.0], n), dtype), n)
    y = op(L, x, t)
    g = GRAD_LAYOUTS[grad_layout](L, _tensor(L, GRADS[grads](2 * y.numel()), dtype), y.numel()).reshape(y.shape)
    (gx,) = L.autograd.grad(y, x, g)
    return [y, gx]


@pytest.mark.parametrize("grad_layout", list(GRAD_LAYOUTS))
@pytest.mark.parametrize("grads", list(GRADS))
@pytest.mark.parametrize("layout", list(INPUT_LAYOUTS))
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("case,dtype", [(c, d) for c, (_, dtypes) in CASES.items() for d in dtypes])
def test_forward_and_gradient_bits_match_torch(case, dtype, n, layout, grads, grad_layout):
    ours, theirs = run_both(lambda L: _forward_and_grad(L, case, dtype, n, layout, grads, grad_layout))
    for a, b in zip(ours, theirs):
        assert_same_bits(a, b)
        assert a.stride() == b.stride()


@pytest.mark.parametrize("n", [37, 5003])
@pytest.mark.parametrize("case", ["elu", "celu", "selu"])
def test_float64_elu_family_gradient_at_nan_matches_torch(case, n):
    """float64's ELU backward: NaN takes the negative branch in the vector code (NaN under an inf gradient), the
    positive one in the scalar loop. Inputs whose exponentials are exact (torch's double exp is Sleef's)."""
    ops = {"elu": lambda L, x: L.nn.functional.elu(x), "celu": lambda L, x: L.nn.functional.celu(x, 0.5),
           "selu": lambda L, x: L.nn.functional.selu(x)}

    def program(L):
        x = _tensor(L, np.resize([math.nan, 2.0, 0.0, -0.0, -math.inf, -1000.0, math.inf], n), "float64")
        x.requires_grad_(True)
        g = _tensor(L, np.resize([-math.inf, -2.0, math.nan, -0.0], n), "float64")
        return [L.autograd.grad(ops[case](L, x), x, g)[0]]

    ours, theirs = run_both(program)
    assert_same_bits(ours[0], theirs[0])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_zero_dim_leaky_relu_and_logsigmoid(dtype):
    def program(L):
        out = []
        for f in (lambda v: L.nn.functional.leaky_relu(v, 0.1), L.nn.functional.logsigmoid):
            x = _tensor(L, -0.5, dtype).requires_grad_(True)
            y = f(x)
            y.backward()
            out += [y, x.grad]
        return out

    ours, theirs = run_both(program)
    for a, b in zip(ours, theirs):
        assert_same_bits(a, b)
        assert a.detach().numpy().shape == ()


@pytest.mark.parametrize("loss", ["smooth_l1_loss", "huber_loss", "mse_loss"])
def test_empty_mean_loss_is_nan_with_an_empty_gradient(loss):
    def program(L):
        x = L.zeros(0, requires_grad=True)
        y = getattr(L.nn.functional, loss)(x, L.zeros(0))
        y.backward()
        return [y, x.grad]

    ours, theirs = run_both(program)
    for a, b in zip(ours, theirs):
        assert_same_bits(a, b)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "huber_loss", "l1_loss"])
def test_pointwise_loss_of_a_transposed_input_is_laid_out_and_summed_as_torch(loss, reduction):
    """The unreduced loss takes TensorIterator's layout (the transposed input's), and its mean and sum add the
    elements in that memory order: the float32 sum of a transposed input's squared errors differed in its last
    bits before."""
    rng = np.random.default_rng(0)
    x_values = rng.standard_normal((300, 70)).astype(np.float32)
    t_values = rng.standard_normal((70, 300)).astype(np.float32)

    def program(L):
        out = getattr(L.nn.functional, loss)(L.tensor(x_values).t(), L.tensor(t_values), reduction=reduction)
        return out, tuple(out.stride())

    (ours, our_strides), (theirs, their_strides) = run_both(program)
    assert_same_bits(ours, theirs)
    assert our_strides == their_strides
