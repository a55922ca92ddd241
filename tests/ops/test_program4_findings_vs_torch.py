"""Differences that the programs of ``tests/test_user_programs4_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- A complex ``nn.Linear`` (``dtype=torch.cfloat``) got a wrong weight gradient whenever its input did not require
  grad, the usual case for a first layer: the fused backward conjugated its operands only when it had kept the
  weight, which it keeps only for the input's gradient, so the weight's gradient took ``x`` unconjugated.
- ``clip_grad_value_`` clipped complex gradients (NumPy's lexicographic clip) where torch's clamp refuses complex
  types, and bumped each gradient's version once where torch's default (foreach) path writes it twice
  (``clamp_min_`` then ``clamp_max_``).
- ``clip_grad_norm_``/``get_total_norm`` of complex gradients returned a complex norm for ``norm_type=0`` (torch's
  is real), and an infinity norm over an empty gradient (a parameter with no elements) was 0 where torch refuses
  it (a max or min over nothing has no identity).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_close, tg, torch, value_or_error

_RNG = np.random.default_rng(4)
_X = (_RNG.standard_normal((4, 3)) + 1j * _RNG.standard_normal((4, 3))).astype(np.complex128)
_W = (_RNG.standard_normal((2, 3)) + 1j * _RNG.standard_normal((2, 3))).astype(np.complex128)
_B = (_RNG.standard_normal(2) + 1j * _RNG.standard_normal(2)).astype(np.complex128)


def _complex_linear_grads(lib, dtype, input_requires_grad: bool, bias: bool, batched: bool, create_graph: bool):
    """The gradients of ``|linear(x, W, b)|^2`` (and, with ``create_graph``, of their squared norms)."""
    x = lib.tensor(_X[None] if batched else _X, dtype=dtype, requires_grad=input_requires_grad)
    w = lib.tensor(_W, dtype=dtype, requires_grad=True)
    b = lib.tensor(_B, dtype=dtype, requires_grad=True) if bias else None
    inputs = [t for t in (x, w, b) if t is not None and t.requires_grad]
    loss = lib.nn.functional.linear(x, w, b).abs().pow(2).mean()
    grads = lib.autograd.grad(loss, inputs, create_graph=create_graph)
    if create_graph:
        again = lib.autograd.grad(sum(g.abs().pow(2).sum() for g in grads), inputs, allow_unused=True)
        grads = grads + tuple(g for g in again if g is not None)
    return [g.detach() for g in grads]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("input_requires_grad", [False, True])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_linear_weight_gradient(dtype, input_requires_grad, bias, batched, create_graph):
    ours = _complex_linear_grads(tg, getattr(tg, dtype), input_requires_grad, bias, batched, create_graph)
    theirs = _complex_linear_grads(torch, getattr(torch, dtype), input_requires_grad, bias, batched, create_graph)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-5, check_dtype=True)


def test_complex_linear_module_trained_with_adam():
    """The program's case: ``nn.Linear(dtype=cfloat)`` on an input without grad, one Adam step."""

    def program(lib):
        lib.manual_seed(103)
        layer = lib.nn.Linear(3, 2, dtype=lib.cfloat)
        layer(lib.randn(4, 3, dtype=lib.cfloat)).abs().pow(2).mean().backward()
        grad = layer.weight.grad.clone()
        lib.optim.Adam(layer.parameters(), lr=0.1).step()
        return [grad, layer.bias.grad, layer.weight.detach()]

    assert_close(program(tg), program(torch), rtol=1e-5, atol=1e-6, check_dtype=True)


# ---- clip_grad_value_ -------------------------------------------------------------------------------------


def _clip_values(lib, dtype, foreach):
    """``clip_grad_value_`` of one gradient: the clipped gradient and how many versions it moved on."""
    p = lib.nn.Parameter(lib.zeros(3, dtype=dtype))
    p.grad = lib.tensor([1.0, -2.0, 0.05], dtype=dtype)
    before = p.grad._version
    lib.nn.utils.clip_grad_value_([p], 0.1, foreach=foreach)
    return p.grad * 0 + (p.grad._version - before), p.grad


@pytest.mark.parametrize("part", [0, 1], ids=["versions", "clipped"])
@pytest.mark.parametrize("foreach", [None, False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_clip_grad_value(dtype, foreach, part):
    def program(lib):
        return _clip_values(lib, getattr(lib, dtype), foreach)[part]

    assert value_or_error(program, tg) == value_or_error(program, torch)


# ---- get_total_norm / clip_grad_norm_ ---------------------------------------------------------------------


@pytest.mark.parametrize("norm_type", [0, 2.0, "inf"])
def test_complex_gradient_norm_is_real(norm_type):
    def program(lib):
        p = lib.nn.Parameter(lib.zeros(3, dtype=lib.cfloat))
        p.grad = lib.tensor([1 + 1j, 0j, -2j])
        return lib.nn.utils.clip_grad_norm_([p], 0.5, norm_type=norm_type)

    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("foreach", [None, False, True])
@pytest.mark.parametrize("norm_type", ["inf", "-inf", 2.0])
def test_infinity_norm_of_an_empty_gradient(norm_type, foreach):
    def program(lib):
        return lib.nn.utils.get_total_norm([lib.ones(2), lib.zeros(0, 3)], norm_type, foreach=foreach)

    assert value_or_error(program, tg) == value_or_error(program, torch)
