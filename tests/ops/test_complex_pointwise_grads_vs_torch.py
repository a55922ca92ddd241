"""Complex gradients of the pointwise ops and reductions against torch.

torch's gradient of a real loss of complex outputs is ``grad * conj(f'(z))`` for a holomorphic ``f`` (its
formulas end in ``.conj()``: ``tan: grad * (1 + result.pow(2)).conj()``), while forward mode multiplies the
tangent by ``f'(z)`` itself. For every op here, on complex128 inputs: the values, the first-order gradients of
a real loss, second-order gradients (a real function of the create_graph gradients) and forward-AD tangents."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from _lib import tg, torch


def _unary(name: str):
    return lambda L, x: getattr(L, name)(x)


UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "square", "sin",
         "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "asin", "acos", "atan", "asinh", "acosh", "atanh", "sinc",
         "abs", "angle", "sgn", "neg", "conj_physical", "real", "imag"]

# name -> (function of the library and the inputs, number of complex inputs)
OPS = {
    **{name: (_unary(name), 1) for name in UNARY},
    "pow_scalar": (lambda L, x: x ** 2.5, 1),
    "pow_complex_scalar": (lambda L, x: L.pow(x, 0.5 + 1j), 1),
    "pow_tensor": (lambda L, x, y: x ** (y * 0.3), 2),
    "pow_real_base": (lambda L, x: L.pow(x.real * 1.5, x * 0.4), 1),  # negative real bases: the complex log
    "rpow": (lambda L, x: 2.0 ** x, 1),
    "rpow_negative_base": (lambda L, x: (-2.0) ** x, 1),
    "rpow_complex_base": (lambda L, x: L.pow(1.5 - 0.5j, x), 1),
    "mul": (lambda L, x, y: x * y, 2),
    "div": (lambda L, x, y: x / (y + 3), 2),
    "sub_alpha": (lambda L, x, y: L.sub(x, y, alpha=2), 2),
    "lerp_tensor": (lambda L, x, y, w: L.lerp(x, y, w), 3),
    "lerp_scalar": (lambda L, x, y: L.lerp(x, y, 0.3), 2),
    "addcmul": (lambda L, x, y, z: L.addcmul(x, y, z, value=0.5), 3),
    "addcdiv": (lambda L, x, y, z: L.addcdiv(x, y, z + 3, value=0.5), 3),
    "sum": (lambda L, x: x.sum(0), 1),
    "mean": (lambda L, x: x.mean(1), 1),
    "prod_full": (lambda L, x: x.prod(), 1),
    "prod_dim": (lambda L, x: x.prod(0), 1),
    "cumsum": (lambda L, x: x.cumsum(1), 1),
    "cumprod": (lambda L, x: x.cumprod(1), 1),
    "var": (lambda L, x: x.var(0), 1),
    "std": (lambda L, x: x.std(1), 1),
    "logsumexp": (lambda L, x: L.logsumexp(x, 1), 1),
    "cross": (lambda L, x, y: L.linalg.cross(x, y, dim=0), 2),
}

# inputs of the inverse functions inside the unit disc (the principal branches are smooth there)
_SCALE = {"asin": 0.5, "acos": 0.5, "atanh": 0.5}


def _run(L, fn, arrays: list) -> dict:
    inputs = [L.tensor(a, requires_grad=True) for a in arrays]
    out = fn(L, *inputs)
    out = out if out.is_complex() else out.to(L.complex128)
    weight = L.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)) + 0.7j)
    grads = L.autograd.grad((out * weight).real.sum(), inputs, create_graph=True)
    second = [None] * len(inputs)
    if any(g.requires_grad for g in grads):  # (not for linear ops: their gradients are constants)
        second_loss = sum((g * g.conj()).real.sum() + (g * (0.3 - 0.5j)).real.sum() for g in grads)
        second = L.autograd.grad(second_loss, inputs, allow_unused=True)
    forward_ad = importlib.import_module(L.__name__ + ".autograd.forward_ad")
    rng = np.random.default_rng(1)
    with forward_ad.dual_level():
        # (a real input gets a real tangent)
        tangents = [rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape) * (a.dtype.kind == "c")
                    for a in arrays]
        duals = [forward_ad.make_dual(L.tensor(a), L.tensor(t.astype(a.dtype, copy=False)))
                 for a, t in zip(arrays, tangents, strict=True)]
        tangent = forward_ad.unpack_dual(fn(L, *duals)).tangent
    return {"value": out.detach().resolve_conj().numpy(),
            "grad": [g.detach().resolve_conj().numpy() for g in grads],
            "second": [None if g is None else g.resolve_conj().numpy() for g in second],
            "tangent": tangent.resolve_conj().numpy()}


@pytest.mark.parametrize("name", list(OPS))
def test_complex_gradients_as_torch(name):
    fn, n_inputs = OPS[name]
    rng = np.random.default_rng(len(name))
    scale = _SCALE.get(name, 1.0)
    arrays = [scale * (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))) for _ in range(n_inputs)]
    ours, theirs = _run(tg, fn, arrays), _run(torch, fn, arrays)
    np.testing.assert_allclose(ours["value"], theirs["value"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours["tangent"], theirs["tangent"], rtol=1e-9, atol=1e-10, err_msg="forward AD")
    for kind in ("grad", "second"):
        for a, b in zip(ours[kind], theirs[kind], strict=True):
            assert (a is None) == (b is None), kind
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10, err_msg=kind)


# real tensors with complex outputs: torch keeps the real part of each input's term (handle_r_to_c), in its
# gradients and in its forward-mode tangents
REAL_TO_COMPLEX = {
    "pow_complex_exponent": lambda L, x: L.pow(x, 0.5 + 1j),
    "pow_negative_base_complex_exponent": lambda L, x: L.pow(-x, 0.5 + 1j),
    "rpow_complex_base": lambda L, x: L.pow(1.5 - 0.5j, x),
}


@pytest.mark.parametrize("name", list(REAL_TO_COMPLEX))
def test_real_input_complex_output_as_torch(name):
    x = np.random.default_rng(3).uniform(0.5, 2.0, (3, 4))
    ours, theirs = _run(tg, REAL_TO_COMPLEX[name], [x]), _run(torch, REAL_TO_COMPLEX[name], [x])
    for kind in ("value", "tangent"):
        np.testing.assert_allclose(ours[kind], theirs[kind], rtol=1e-10, atol=1e-12, err_msg=kind)
    for kind in ("grad", "second"):
        np.testing.assert_allclose(ours[kind][0], theirs[kind][0], rtol=1e-10, atol=1e-12, err_msg=kind)


@pytest.mark.parametrize("name", ["tan", "reciprocal", "rsqrt", "expm1", "asinh", "atan", "cumprod"])
def test_plain_backward_conjugates_as_torch(name):
    """A plain ``backward()`` (no graph of the gradient: the raw-NumPy rules may run) gives the same gradient."""
    fn = OPS[name][0]
    z = np.random.default_rng(2).standard_normal((2, 5)) * (1 + 0.6j)

    def grad(L):
        x = L.tensor(z, requires_grad=True)
        (fn(L, x) * L.tensor(np.full((2, 5), 0.4 - 1.1j))).real.sum().backward()
        return x.grad.numpy()

    np.testing.assert_allclose(grad(tg), grad(torch), rtol=1e-10, atol=1e-12)


def test_cumprod_with_zeros_conjugates_as_torch():
    """cumprod's gradient with a zero in the input (its O(n) rule without a graph, its O(n^2) one with)."""
    z = np.array([[1.0 + 0.5j, 0.0, -0.7 + 1.2j, 0.3 - 0.4j], [0.5 - 1j, 2.0 + 0.1j, 0.0, 1.1 + 0.9j]])
    weight = np.cos(np.arange(8.0)).reshape(2, 4) + 0.7j

    def grads(L, create_graph: bool):
        x = L.tensor(z, requires_grad=True)
        (g,) = L.autograd.grad((x.cumprod(1) * L.tensor(weight)).real.sum(), x, create_graph=create_graph)
        return g.detach().numpy()

    for create_graph in (False, True):
        np.testing.assert_allclose(grads(tg, create_graph), grads(torch, create_graph), rtol=1e-10, atol=1e-12)
