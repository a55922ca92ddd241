"""torch.svd_lowrank / torch.pca_lowrank against torch. The Gaussian sketch comes from each library's own
generator (different streams), so the factors are compared through what the sketch does not decide: on a matrix
of rank k <= q the top k singular values are exact, the reconstruction is exact, the factors orthonormal, and the
gradient of the singular values is the true SVD's. Shapes, dtypes, recorded graphs and errors are compared as
they are."""

from __future__ import annotations

import pytest
from _lib import assert_close, np, raised, recorded_graph, tg, torch

_RNG = np.random.RandomState(0)


def _low_rank(shape: tuple, rank: int, complex_values: bool = False) -> np.ndarray:
    *batch, m, n = shape

    def draw(*s):
        values = _RNG.standard_normal(s)
        return values + 1j * _RNG.standard_normal(s) if complex_values else values

    return draw(*batch, m, rank) @ draw(*batch, rank, n)


def _mH(lib, t):
    return t.transpose(-2, -1).conj()


def _check_factors(lib, A, U, S, V, rank: int) -> None:
    """Orthonormal columns, an exact reconstruction and the exact top singular values."""
    q = S.shape[-1]
    eye = np.broadcast_to(np.eye(q), U.shape[:-2] + (q, q))
    assert_close(_mH(lib, U) @ U, eye, atol=1e-10)
    assert_close(_mH(lib, V) @ V, eye, atol=1e-10)
    assert_close((U * S.unsqueeze(-2).to(U.dtype)) @ _mH(lib, V), A, atol=1e-9)
    assert_close(S[..., :rank], lib.linalg.svdvals(A)[..., :rank], rtol=1e-9)


CASES = [((12, 8), 3, 3, False), ((8, 12), 3, 5, False), ((2, 10, 7), 2, 4, False), ((9, 6), 2, 3, True),
         ((6, 9), 6, 6, False)]


@pytest.mark.parametrize("shape,rank,q,complex_values", CASES)
def test_svd_lowrank_vs_torch(shape, rank, q, complex_values):
    a = _low_rank(shape, rank, complex_values)
    results = []
    for lib in (tg, torch):
        lib.manual_seed(0)
        A = lib.tensor(a)
        U, S, V = lib.svd_lowrank(A, q=q)
        _check_factors(lib, A, U, S, V, rank)
        results.append(([tuple(t.shape) for t in (U, S, V)], [str(t.dtype) for t in (U, S, V)], S[..., :rank]))
    assert results[0][:2] == results[1][:2]
    assert_close(results[0][2], results[1][2], rtol=1e-9)


def test_svd_lowrank_with_mean_vs_torch():
    """``M`` (broadcast to ``A``) is subtracted without forming ``A - M``."""
    a = _low_rank((10, 7), 3)
    mean = _RNG.standard_normal(7)
    for lib in (tg, torch):
        lib.manual_seed(0)
        A, M = lib.tensor(a + mean), lib.tensor(mean)
        U, S, V = lib.svd_lowrank(A, q=4, niter=1, M=M)
        _check_factors(lib, A - M, U, S, V, 3)


def test_svd_lowrank_gradient_and_graph_vs_torch():
    """With q equal to the rank the sketch spans the range exactly, so d(sum S)/dA = U V^H, the SVD's."""
    a = _low_rank((12, 8), 3)
    results = []
    for lib in (tg, torch):
        lib.manual_seed(0)
        A = lib.tensor(a, requires_grad=True)
        U, S, V = lib.svd_lowrank(A, q=3)
        S.sum().backward()
        results.append((S, A.grad, recorded_graph([U, S, V])))
    assert_close(results[0][:2], results[1][:2], rtol=1e-8, atol=1e-10)
    assert results[0][2] == results[1][2]


@pytest.mark.parametrize("center", [True, False])
def test_pca_lowrank_vs_torch(center):
    a = _low_rank((3, 15, 6), 2) + 5.0 * _RNG.standard_normal(6)
    results = []
    for lib in (tg, torch):
        lib.manual_seed(0)
        A = lib.tensor(a, dtype=lib.float64)
        U, S, V = lib.pca_lowrank(A, q=4, center=center, niter=3)
        # the centred data has rank 2 (the row mean is removed), the uncentred one rank 3
        rank = 2 if center else 3
        _check_factors(lib, A - A.mean(-2, keepdim=True) if center else A, U, S, V, rank)
        results.append(([tuple(t.shape) for t in (U, S, V)], [str(t.dtype) for t in (U, S, V)], S[..., :rank]))
    assert results[0][:2] == results[1][:2]
    assert_close(results[0][2], results[1][2], rtol=1e-9)


def test_default_q_and_float32_vs_torch():
    """q defaults to min(6, m, n) in pca_lowrank; svd_lowrank's default q=6 exceeds n=4 here, so its QR
    factors are cut to 4 columns."""
    a = _low_rank((5, 4), 4)
    results = []
    for lib in (tg, torch):
        lib.manual_seed(0)
        A = lib.tensor(a, dtype=lib.float32)
        factors = [*lib.pca_lowrank(A), *lib.svd_lowrank(A, q=None)]
        results.append([(tuple(t.shape), str(t.dtype)) for t in factors])
    assert results[0] == results[1]


ERRORS = {
    "q too large": lambda L: L.pca_lowrank(L.ones(5, 4), q=5),
    "q negative": lambda L: L.pca_lowrank(L.ones(5, 4), q=-1),
    "niter negative": lambda L: L.pca_lowrank(L.ones(5, 4), niter=-1),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_vs_torch(name):
    theirs = raised(torch, ERRORS[name])
    assert theirs is not None
    assert raised(tg, ERRORS[name]) == theirs
