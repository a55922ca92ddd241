"""torch.linalg.eig / eigvals against torch: complex results of real and complex input, unit-norm eigenvectors
in LAPACK's order and layout, LinalgEigBackward0's gradients (first and second order, the eigvals shortcut,
real gradients for real input), forward AD, graphs and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, recorded_graph, tg, torch

_RNG = np.random.default_rng(0)
INPUTS = {
    "real": _RNG.standard_normal((3, 3)),
    "complex": _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3)),
    "batched": _RNG.standard_normal((2, 3, 3)),
}
WEIGHT = _RNG.standard_normal(3) + 1j * _RNG.standard_normal(3)


def _program(lib, matrix: np.ndarray) -> list:
    a = lib.tensor(matrix, requires_grad=True)
    values, vectors = lib.linalg.eig(a)
    weight = lib.tensor(np.resize(WEIGHT, tuple(values.shape)))
    # a loss that does not depend on the eigenvectors' phases (|V|^2)
    loss = (values * weight).real.sum() + (vectors.abs() ** 2 * lib.arange(3, dtype=lib.float64)).sum()
    grad, = lib.autograd.grad(loss, a, create_graph=True)
    second, = lib.autograd.grad((grad * grad.conj()).real.sum(), a)
    only_values = lib.linalg.eigvals(a)
    values_grad, = lib.autograd.grad((only_values * weight).real.sum(), a)
    fwd = lib.autograd.forward_ad
    with fwd.dual_level():
        dual = fwd.make_dual(a.detach(), lib.tensor(np.ones(matrix.shape, dtype=matrix.dtype)))
        tangent = fwd.unpack_dual(lib.linalg.eig(dual)[0]).tangent
    arrays = [values.detach().numpy(), np.abs(vectors.detach().numpy()), grad.detach().numpy(), second.numpy(),
              values_grad.numpy(), tangent.numpy()]
    return arrays, [str(values.dtype), str(grad.dtype), vectors.stride(), recorded_graph([only_values]),
                    recorded_graph([grad])]


@pytest.mark.parametrize("name", list(INPUTS))
def test_eig_as_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (casting complex gradients to real warns in torch)
        (ours, our_facts), (theirs, their_facts) = _program(tg, INPUTS[name]), _program(torch, INPUTS[name])
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    assert our_facts == their_facts


def test_a_phase_dependent_loss_is_refused_as_torch():
    def program(lib):
        a = lib.tensor(INPUTS["complex"], requires_grad=True)
        lib.autograd.grad(lib.linalg.eig(a)[1].real.sum(), a)

    assert raised(tg, program) == raised(torch, program) is not None


@pytest.mark.parametrize("bad", [np.ones((2, 3)), np.ones((3, 3), dtype=np.int64)], ids=["not_square", "integer"])
@pytest.mark.parametrize("fn", ["eig", "eigvals"])
def test_errors_as_torch(bad, fn):
    def program(lib):
        getattr(lib.linalg, fn)(lib.tensor(bad))

    assert raised(tg, program) == raised(torch, program) is not None
