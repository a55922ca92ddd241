"""Complex gradients of the matrix products and the SVD against torch: torch's gradient of a real loss of
complex outputs is grad * conj(derivative) (its formulas take conjugated operands: ``grad.mm(mat2.t().conj())``).
First and second derivatives on complex128 inputs, for every product, and the SVD's gauge-invariant losses."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, tg, torch


def _complex(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


PRODUCTS = {
    "mm": (lambda L, a, b: L.mm(a, b), ((3, 4), (4, 2))),
    "matmul_batched": (lambda L, a, b: a @ b, ((2, 3, 4), (4, 2))),
    "mv": (lambda L, a, v: L.mv(a, v), ((3, 4), (4,))),
    "dot": (lambda L, v, w: L.dot(v, w), ((4,), (4,))),
    "vdot": (lambda L, v, w: L.vdot(v, w), ((4,), (4,))),
    "outer": (lambda L, v, w: L.outer(v, w), ((3,), (4,))),
    "bmm": (lambda L, a, b: L.bmm(a, b), ((2, 3, 4), (2, 4, 2))),
    "addmm": (lambda L, i, a, b: L.addmm(i, a, b), ((3, 2), (3, 4), (4, 2))),
    "addmv": (lambda L, i, a, v: L.addmv(i, a, v), ((3,), (3, 4), (4,))),
    "baddbmm": (lambda L, i, a, b: L.baddbmm(i, a, b), ((2, 3, 2), (2, 3, 4), (2, 4, 2))),
    "addr": (lambda L, i, v, w: L.addr(i, v, w), ((3, 4), (3,), (4,))),
    "linear": (lambda L, x, w, b: L.nn.functional.linear(x, w, b), ((5, 4), (2, 4), (2,))),
    "einsum": (lambda L, a, b: L.einsum("ij,jk->ik", a, b), ((3, 4), (4, 2))),
    "tensordot": (lambda L, a, b: L.tensordot(a, b, 1), ((3, 4), (4, 2))),
    "inner": (lambda L, v, w: L.inner(v, w), ((4,), (4,))),
    "kron": (lambda L, a, b: L.kron(a, b), ((2, 2), (2, 3))),
}


def _first_and_second(lib, fn, arrays: list) -> tuple:
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    weight = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)) + 0.7j)
    loss = (out * weight).real.sum() + (out.abs() ** 2).sum()
    grads = lib.autograd.grad(loss, inputs, create_graph=True)
    second = lib.autograd.grad(sum((g * g.conj()).real.sum() for g in grads), inputs, allow_unused=True)
    return [out.detach().resolve_conj().numpy()] + [g.detach().resolve_conj().numpy() for g in grads], \
        [None if g is None else g.resolve_conj().numpy() for g in second]


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_complex_product_gradients_as_torch(name):
    fn, shapes = PRODUCTS[name]
    rng = np.random.default_rng(len(name))
    arrays = [_complex(rng, *s) for s in shapes]
    (ours, ours2), (theirs, theirs2) = _first_and_second(tg, fn, arrays), _first_and_second(torch, fn, arrays)
    for a, b in zip(ours + ours2, theirs + theirs2, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 4, 3)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_complex_svd_gradients_as_torch(shape, full_matrices):
    rng = np.random.default_rng(sum(shape))
    A, W = _complex(rng, *shape), _complex(rng, *shape)

    def program(lib):
        a = lib.tensor(A, requires_grad=True)
        U, S, Vh = lib.linalg.svd(a, full_matrices=full_matrices)
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        loss = S.sum() + ((U * S.unsqueeze(-2)) @ Vh * lib.tensor(W)).real.sum() + (U.abs() ** 2 * 1.5).sum()
        return lib.autograd.grad(loss, a)[0].numpy()

    np.testing.assert_allclose(program(tg), program(torch), rtol=1e-9, atol=1e-9)


def test_a_phase_dependent_svd_loss_is_refused_as_torch():
    A = _complex(np.random.default_rng(0), 3, 3)

    def program(lib):
        a = lib.tensor(A, requires_grad=True)
        U = lib.linalg.svd(a)[0]
        lib.autograd.grad(U.real.sum(), a)

    assert raised(tg, program) == raised(torch, program) is not None
