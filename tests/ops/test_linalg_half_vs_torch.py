"""float16 (Half) in linear algebra, as torch's CPU kernels take it.

torch refuses Half in most of its CPU linear algebra, each operator in its own words: a kernel with no Half
instantiation with ``"<kernel>" not implemented for 'Half'`` (NotImplementedError), those checking their input
with ``<name>: Low precision dtypes not supported. Got Half``, pinv and matrix_rank with their own messages; the
norms that need no decomposition compute in float16. Shape checks come first, as torch's. Each snippet runs in both
libraries with ``A`` a 3x3 Half matrix, ``v`` a Half vector of 3, ``N`` a 2x3 Half matrix and ``p`` int32 pivots:
both refuse it with the same exception type and message, or both compute the same values (rtol 1e-2) and dtype.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests._lib import raised, tg, torch

SNIPPETS = [
    # inverse: linalg.inv's check, also through inv_ex, matrix_power, tensorinv and cond
    "torch.linalg.inv(A)", "torch.inverse(A)", "torch.linalg.inv_ex(A)", "torch.linalg.inv(N)",
    "torch.linalg.matrix_power(A, -1)", "torch.linalg.tensorinv(A, 1)", "torch.linalg.cond(A, 'fro')",
    "torch.linalg.cond(A, 1)", "torch.linalg.cond(A, float('inf'))", "torch.linalg.cond(N, 'fro')",
    "torch.linalg.matrix_power(A, 2)", "torch.matrix_power(A, 0)",
    # determinants: det goes as far as the LU kernel; slogdet and logdet check first
    "torch.linalg.det(A)", "torch.det(A)", "torch.linalg.det(A.unsqueeze(0))", "torch.linalg.det(N)",
    "torch.linalg.det(v)", "torch.linalg.slogdet(A)", "torch.slogdet(A)", "torch.linalg.slogdet(N)",
    "torch.logdet(A)", "torch.logdet(N)", "torch.logdet(v)", "torch.logdet(A.long())",
    # LU
    "torch.linalg.lu_factor(A)", "torch.linalg.lu_factor_ex(A)", "torch.linalg.lu(A)", "torch.lu(A)",
    "torch.linalg.lu(N)", "torch.linalg.lu_factor(N)", "torch.linalg.lu_factor(v)", "torch.linalg.lu(v)",
    "torch.linalg.lu_factor(A, pivot=False)", "torch.lu_unpack(A, p)",
    "torch.linalg.lu_solve(A, p, A)", "torch.lu_solve(A, A, p)", "torch.linalg.lu_solve(A, p, N)",
    "torch.linalg.lu_solve(A, p, A.float())", "torch.linalg.lu_solve(A, p.long(), A)",
    # solve and the solves built on it
    "torch.linalg.solve(A, A)", "torch.linalg.solve(A, v)", "torch.linalg.solve_ex(A, A)",
    "torch.linalg.solve(A, A, left=False)", "torch.linalg.solve(N, N)", "torch.linalg.solve(A, v[:2])",
    "torch.linalg.solve(A, v.float())", "torch.linalg.solve_ex(A, v, check_errors=True)",
    "torch.linalg.tensorsolve(A, v)",
    # triangular solves
    "torch.linalg.solve_triangular(A, A, upper=True)", "torch.linalg.solve_triangular(N, N, upper=True)",
    "torch.linalg.solve_triangular(A, N, upper=True)", "torch.linalg.solve_triangular(A, N, upper=True, left=False)",
    "torch.linalg.solve_triangular(A, N.mT, upper=True, left=False)", "torch.triangular_solve(A, A)",
    "torch.triangular_solve(N, A)",
    # Cholesky
    "torch.linalg.cholesky(A)", "torch.cholesky(A)", "torch.linalg.cholesky_ex(A)", "torch.linalg.cholesky(N)",
    "torch.cholesky_inverse(A)", "torch.cholesky_inverse(N)", "torch.cholesky_solve(A, A)",
    "torch.cholesky_solve(A, A, upper=True)", "torch.cholesky_solve(N, A)", "torch.cholesky_solve(A, A.float())",
    # QR and Householder
    "torch.linalg.qr(A)", "torch.linalg.qr(N)", "torch.linalg.qr(A, 'r')", "torch.linalg.qr(A, 'bad')",
    "torch.qr(A)", "torch.geqrf(A)", "torch.geqrf(v)", "torch.orgqr(A, v)", "torch.ormqr(A, v, A)",
    "torch.linalg.householder_product(A, v)", "torch.linalg.householder_product(N, v[:2])",
    "torch.linalg.householder_product(A, v.float())",
    # eigen decompositions
    "torch.linalg.eig(A)", "torch.linalg.eigvals(A)", "torch.linalg.eig(N)", "torch.linalg.eigh(A)",
    "torch.linalg.eigvalsh(A)", "torch.linalg.eigh(A, 'U')", "torch.linalg.eigh(N)", "torch.linalg.eigh(A, 'X')",
    # singular values and what is built on them
    "torch.linalg.svd(A)", "torch.linalg.svd(N, full_matrices=False)", "torch.svd(A)", "torch.linalg.svdvals(A)",
    "torch.linalg.svdvals(N)", "torch.linalg.pinv(A)", "torch.linalg.pinv(N)", "torch.linalg.pinv(v)",
    "torch.linalg.pinv(A, hermitian=True)", "torch.linalg.pinv(A, rtol=0.1)", "torch.pinverse(A)",
    "torch.linalg.pinv(A.long())", "torch.linalg.cond(A)", "torch.linalg.cond(A, 'nuc')", "torch.linalg.cond(A, -2)",
    "torch.linalg.matrix_rank(A)", "torch.linalg.matrix_rank(A, hermitian=True)", "torch.linalg.matrix_rank(v)",
    "torch.linalg.matrix_rank(N, hermitian=True)", "torch.linalg.matrix_rank(A, tol=0.1)",
    "torch.linalg.matrix_rank(A, atol=1.0, rtol=0.1)", "torch.linalg.matrix_rank(A, atol=0.1, hermitian=True)",
    "torch.linalg.matrix_rank(A, atol=0.1, rtol=0.0, hermitian=True)", "torch.linalg.matrix_rank(A.long())",
    "torch.linalg.lstsq(A, A)", "torch.svd_lowrank(A)", "torch.pca_lowrank(A)",
    # LDL
    "torch.linalg.ldl_factor(A)", "torch.linalg.ldl_factor_ex(A)", "torch.linalg.ldl_factor(N)",
    "torch.linalg.ldl_solve(A, p, A)", "torch.linalg.ldl_solve(A, p, N)", "torch.linalg.ldl_solve(A, p * 0, A)",
    "torch.linalg.ldl_solve(A, p + 3, A)", "torch.linalg.ldl_solve(A.expand(2, 3, 3), p.expand(2, 3), A.expand(3, 3, 3))",
    # norms: those needing singular values refuse Half (of A itself, before dim and dtype); the others compute
    "torch.linalg.matrix_norm(A)", "torch.linalg.matrix_norm(A, 1)", "torch.linalg.matrix_norm(A, -float('inf'))",
    "torch.linalg.matrix_norm(A, 2)", "torch.linalg.matrix_norm(A, 'nuc')", "torch.linalg.matrix_norm(A, -2)",
    "torch.linalg.matrix_norm(v, 2)", "torch.linalg.matrix_norm(A, 2, dim=(0, 0))",
    "torch.linalg.matrix_norm(A, 2, dtype=torch.float32)", "torch.linalg.matrix_norm(A, 1, dtype=torch.float32)",
    "torch.linalg.matrix_norm(A, 3)", "torch.linalg.norm(A)", "torch.linalg.norm(A, 2)", "torch.linalg.norm(A, 'nuc')",
    "torch.linalg.norm(A, -2.0, dim=(0, 1))", "torch.linalg.norm(A, 1)", "torch.linalg.vector_norm(A)",
    "torch.linalg.vector_norm(v, 3)",
    # what computes in Half in torch too
    # (matrix_exp computes in Half in torch, its values off: their dtype only)
    "str(torch.linalg.matrix_exp(A).dtype)[-7:]", "str(torch.matrix_exp(A).dtype)[-7:]",
    "torch.linalg.multi_dot([A, A, A])",
    "torch.linalg.vander(v)", "torch.linalg.cross(A, A)", "torch.linalg.diagonal(A)", "torch.linalg.vecdot(A, A)",
    "torch.linalg.matmul(A, A)",
]


def _plain(value):
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if hasattr(value, "detach"):
        return value.detach().numpy().astype(np.complex128), str(value.dtype).split(".")[-1]
    return value


def _outcome(lib, snippet: str):
    """The error torch-style, or the values and dtypes."""
    env = {"torch": lib, "A": lib.eye(3, dtype=lib.float16) + 1, "v": lib.tensor([1.0, 2.0, 3.0], dtype=lib.float16),
           "N": lib.ones(2, 3, dtype=lib.float16), "p": lib.tensor([1, 2, 3], dtype=lib.int32)}
    result = []

    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result.append(eval(snippet, env))  # noqa: S307 - the snippets above

    error = raised(lib, run)
    return error if error is not None else _plain(result[0])


def _assert_same(mine, theirs):
    if isinstance(theirs, list):
        assert isinstance(mine, list) and len(mine) == len(theirs), (mine, theirs)
        for a, b in zip(mine, theirs):
            _assert_same(a, b)
    elif isinstance(theirs, tuple) and len(theirs) == 2 and isinstance(theirs[0], np.ndarray):
        assert isinstance(mine, tuple) and mine[1] == theirs[1], (mine, theirs)
        np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-2, atol=1e-3)
    else:
        assert mine == theirs


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_linalg_half_as_torch(snippet):
    _assert_same(_outcome(tg, snippet), _outcome(torch, snippet))
