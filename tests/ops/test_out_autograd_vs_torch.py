"""``out=`` with an input (or ``out``) that requires grad, as PyTorch decides per operator.

An operator with a derivative refuses ("functions with out=... arguments don't support automatic
differentiation"); one without a formula (PyTorch's autograd fallback) computes and gives ``out`` a
``NotImplemented`` node; a non-differentiable one computes and leaves ``out`` as it was; a composite that ends
in ``out.copy_(result)`` (``special.ndtr``, ``tensordot``, ``linalg.norm``) gives ``out`` a CopyBackwards node.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._lib import raised, tg, torch


def _calls(lib):
    x = lib.randn(3, requires_grad=True)
    m = lib.randn(3, 3, requires_grad=True)
    c = lib.randn(3, dtype=lib.complex128, requires_grad=True)
    return {
        "ndtr": lambda o: lib.special.ndtr(x, out=o(3)),
        "floor_divide": lambda o: lib.floor_divide(x, 2, out=o(3)),
        "heaviside": lambda o: lib.heaviside(x, lib.tensor(0.5), out=o(3)),
        "gt": lambda o: lib.gt(x, 0, out=o(3)),
        "bessel_j0": lambda o: lib.special.bessel_j0(x, out=o(3)),
        "airy_ai": lambda o: lib.special.airy_ai(x, out=o(3)),
        "sign": lambda o: lib.sign(x, out=o(3)),
        "ndtri": lambda o: lib.special.ndtri(x, out=o(3)),
        "slice_scatter": lambda o: lib.slice_scatter(m, lib.zeros(1, 3), 0, 0, 1, out=o(3, 3)),
        "conj_physical": lambda o: lib.conj_physical(c, out=o(3, dtype=lib.complex128)),
        "ifft of real input": lambda o: lib.fft.ifft(x, out=o(3, dtype=lib.complex64)),
        "ifft of complex input": lambda o: lib.fft.ifft(c, out=o(3, dtype=lib.complex128)),
        "tensordot": lambda o: lib.tensordot(m, m, 1, out=o(3, 3)),
        "matrix_norm": lambda o: lib.linalg.matrix_norm(m, out=o(())),
        "vector_norm": lambda o: lib.linalg.vector_norm(m, out=o(())),
        "norm 2": lambda o: lib.linalg.norm(m, 2, out=o(())),
        "matmul": lambda o: lib.matmul(m, m, out=o(3, 3)),
        "diff": lambda o: lib.diff(x, out=o(2)),
    }


def _outcome(lib, name, out_requires_grad):
    def make(*shape, dtype=None):
        return lib.empty(*shape, dtype=dtype, requires_grad=out_requires_grad)

    result = []

    def program(_):
        out = _calls(lib)[name](make)
        node = out.grad_fn
        result.append((out.requires_grad, None if node is None else node.name(),
                       None if node is None else [None if f is None else f.name() for f, _ in node.next_functions],
                       None if node is None else node._sequence_nr() == (1 << 64) - 1))

    error = raised(lib, program)
    return error if error is not None else result


@pytest.mark.parametrize("out_requires_grad", [False, True])
@pytest.mark.parametrize("name", list(_calls(torch)))
def test_out_with_inputs_that_require_grad_as_in_torch(name, out_requires_grad):
    assert _outcome(tg, name, out_requires_grad) == _outcome(torch, name, out_requires_grad)


def test_operators_without_an_out_overload_refuse_the_keyword():
    def calls(lib):
        m = lib.randn(3, 3)
        o = lib.empty(3, 3)
        return [lambda: lib.flip(m, [0], out=o), lambda: lib.transpose(m, 0, 1, out=o), lambda: lib.trace(m, out=o),
                lambda: lib.select_scatter(m, lib.zeros(3), 0, 0, out=o), lambda: lib.roll(m, 1, out=o),
                lambda: lib.diagonal_scatter(m, lib.zeros(3), out=o)]

    for ours, theirs in zip(calls(tg), calls(torch), strict=True):
        assert raised(tg, lambda _, call=ours: call()) == raised(torch, lambda _, call=theirs: call()) is not None


def test_scatter_family_takes_src_of_the_embedded_shape_only():
    def calls(lib):
        m = lib.randn(3, 3)
        return [lambda: lib.slice_scatter(m, lib.zeros(1, 3)), lambda: lib.select_scatter(m, lib.zeros(1, 3), 0, 0),
                lambda: lib.diagonal_scatter(m, lib.zeros(1, 3)),
                lambda: lib.as_strided_scatter(m, lib.zeros(3, 1), (3,), (1,)),
                lambda: lib.slice_scatter(m, lib.zeros(3), 0, 0, 1)]

    for ours, theirs in zip(calls(tg), calls(torch), strict=True):
        assert raised(tg, lambda _, call=ours: call()) == raised(torch, lambda _, call=theirs: call()) is not None


def test_nn_functions_bound_to_an_operator_with_out_take_it():
    """gelu, linear, avg_pool2d... are torch builtins with an out= overload: out= works, and an input that
    requires grad is refused naming the operator."""
    def calls(lib, requires_grad):
        F = lib.nn.functional
        m = lib.ones(3, 4).requires_grad_(requires_grad)
        x = lib.ones(2, 3, 4, 4).requires_grad_(requires_grad)
        return [lambda: F.gelu(m, out=lib.empty(3, 4)), lambda: F.logsigmoid(m, out=lib.empty(3, 4)),
                lambda: F.softplus(m, out=lib.empty(0)), lambda: F.hardshrink(m, out=lib.empty(3, 4)),
                lambda: F.softshrink(m, out=lib.empty(3, 4)), lambda: F.linear(m, lib.ones(2, 4), out=lib.empty(3, 2)),
                lambda: F.avg_pool2d(x, 2, out=lib.empty(2, 3, 2, 2)), lambda: F.avg_pool3d(x, 2, out=lib.empty(2, 1, 2, 2))]

    for requires_grad in (False, True):
        for ours, theirs in zip(calls(tg, requires_grad), calls(torch, requires_grad), strict=True):
            assert raised(tg, lambda _, call=ours: call()) == raised(torch, lambda _, call=theirs: call())
            if not requires_grad:
                assert np.allclose(ours().numpy(), theirs().numpy(), atol=1e-6)


@pytest.mark.parametrize("n, out_size", [(1, 3), (2, 2), (0, 4), (1, 5)])
def test_diff_writes_its_last_difference_into_out(n, out_size):
    """torch.diff's out=: values, resizing, and ``out`` returned (its last step is ``sub(..., out=)``)."""
    seen = []
    for lib in (tg, torch):
        out = lib.full((out_size,), -7.0)
        result = lib.diff(lib.arange(4.0) ** 2, n=n, out=out)
        seen.append((result is out, out.tolist()))
    assert seen[0] == seen[1]
