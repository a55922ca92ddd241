"""Linear algebra (ops/linalg.py and the tracegrad.linalg namespace) against torch: values, dtypes,
gradients (first and second order), batching, and PyTorch's error messages."""

from __future__ import annotations

import pytest
from _lib import assert_close, np, recorded_graph, tg, torch
from test_reductions import compare, raises_like

RNG = np.random.default_rng(1)


def _m(*shape, dtype="float64"):
    v = RNG.uniform(-1, 1, size=shape)
    return v.astype(dtype) if dtype.startswith("float") else RNG.integers(-3, 4, size=shape).astype(dtype)


def _well(*shape):
    """Well-conditioned square matrices (near ±I)."""
    n = shape[-1]
    return RNG.uniform(-1, 1, size=shape) * (0.4 / np.sqrt(n)) + np.eye(n) * RNG.choice([-1, 1], n)


def _spd(*shape):
    a = RNG.uniform(-1, 1, size=shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _sym_gaps(*shape):
    """Symmetric, eigenvalues at least 1 apart."""
    n = shape[-1]
    q, _ = np.linalg.qr(RNG.normal(size=shape))
    lam = np.arange(n) * 1.5 - n / 2 + RNG.uniform(0, 0.2, size=shape[:-1])
    return (q * lam[..., None, :]) @ np.swapaxes(q, -1, -2)


def _distinct_sv(*shape):
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(RNG.normal(size=shape[:-2] + (m, k)))
    w, _ = np.linalg.qr(RNG.normal(size=shape[:-2] + (n, k)))
    s = 1.0 + 0.7 * np.arange(k)[::-1]
    return (u * s) @ np.swapaxes(w, -1, -2)


def _sym(L, a):
    return (a + a.mT) / 2


def _signfix(L, v):
    """Sign of each column's largest entry made positive (eigen/singular vectors are defined up to sign)."""
    idx = v.abs().argmax(dim=-2, keepdim=True)
    return v * v.gather(-2, idx).sign()


# ---------------------------------------------------------------------------------------------- products


def test_matrix_vector_products():
    compare(lambda L, a, b: (L.bmm(a, b), a.bmm(b)), _m(2, 3, 4), _m(2, 4, 5), gradgrad=True)
    compare(lambda L, a, v: (L.mv(a, v), a.mv(v)), _m(3, 4), _m(4), gradgrad=True)
    compare(lambda L, a, b: (L.dot(a, b), a.vdot(b), L.inner(a, b)), _m(5), _m(5), gradgrad=True)
    compare(lambda L, a, b: (L.outer(a, b), L.ger(a, b)), _m(3), _m(4), gradgrad=True)
    compare(lambda L, a, b: L.inner(a, b), _m(2, 3), _m(4, 3))
    compare(lambda L, a, b: (L.bmm(a, b), L.mv(a[0], b[0, :, 0]), L.dot(a[0, 0], a[1, 1])), _m(2, 3, 3, dtype="int64"),
            _m(2, 3, 2, dtype="int64"))
    compare(lambda L, a, b: L.outer(a, b), _m(3, dtype="float32"), _m(2))


def test_product_errors():
    raises_like(lambda L, a, b: L.bmm(a, b), _m(2, 3), _m(2, 3))
    raises_like(lambda L, a, b: L.bmm(a, b), _m(2, 2, 3), _m(2, 2, 3))
    raises_like(lambda L, a, b: L.bmm(a, b), _m(2, 2, 3, dtype="float32"), _m(2, 3, 3))
    raises_like(lambda L, a, b: L.mv(a, b), _m(2, 3), _m(2))
    raises_like(lambda L, a, b: L.dot(a, b), _m(2, 2), _m(2))
    raises_like(lambda L, a, b: L.dot(a, b), _m(3), _m(2))
    raises_like(lambda L, a, b: L.dot(a, b), _m(2, dtype="float32"), _m(2))
    raises_like(lambda L, a, b, c: L.addmm(a, b, c), _m(2, 2), _m(2, 3), _m(2, 3))
    raises_like(lambda L, a, b, c: L.addmm(a, b, c), _m(2, 2), _m(2, 3, dtype="float32"), _m(3, 2))
    raises_like(lambda L, a, b, c: L.addmm(a, b, c), _m(3), _m(2, 3), _m(3, 2))


@pytest.mark.parametrize("ab", [{}, {"beta": 0.5, "alpha": 2.0}, {"beta": 0.0}])
def test_add_products(ab):
    compare(lambda L, i, a, b: (L.addmm(i, a, b, **ab), i.addmm(a, b, **ab)), _m(3, 2), _m(3, 4), _m(4, 2),
            gradgrad=True)
    compare(lambda L, i, a, b: L.addmm(i, a, b, **ab), _m(2), _m(3, 4), _m(4, 2))
    compare(lambda L, i, a, v: L.addmv(i, a, v, **ab), _m(3), _m(3, 4), _m(4))
    compare(lambda L, i, a, b: L.baddbmm(i, a, b, **ab), _m(3, 1), _m(2, 3, 4), _m(2, 4, 2))
    compare(lambda L, i, a, b: L.addbmm(i, a, b, **ab), _m(3, 2), _m(2, 3, 4), _m(2, 4, 2))
    compare(lambda L, i, a, b: L.addr(i, a, b, **ab), _m(3, 4), _m(3), _m(4))


def test_add_products_inplace_and_specials():
    compare(lambda L, i, a, b: i.clone().addmm_(a, b, beta=0.5), _m(3, 2), _m(3, 4), _m(4, 2))
    compare(lambda L, i, a, b: i.clone().baddbmm_(a, b, alpha=3.0), _m(2, 3, 2), _m(2, 3, 4), _m(2, 4, 2))
    compare(lambda L, i, a, v: i.clone().addmv_(a, v), _m(3), _m(3, 4), _m(4))
    nan_bias = np.full((3, 2), np.nan)
    compare(lambda L, i, a, b: L.addmm(i, a, b, beta=0), nan_bias, _m(3, 4), _m(4, 2))
    compare(lambda L, i, a, b: L.addmm(i, a, b, beta=2, alpha=3), _m(2, 2, dtype="int64"), _m(2, 3, dtype="int64"),
            _m(3, 2, dtype="int64"))
    assert tg.addmm(tg.zeros(2, 2), tg.ones(2, 3), tg.ones(3, 2, requires_grad=True)).grad_fn.name() \
        == "AddmmBackward0"


# ---------------------------------------------------------------------------------------------- einsum


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 2)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("bij,bkj->bik", [(2, 3, 4), (2, 2, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (2,)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("iij->j", [(2, 2, 3)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    ("...j,j->...", [(2, 3, 4), (4,)]),
    ("b...,b...->b", [(2, 3), (2, 3)]),
    ("ij,jk->ik", [(3, 1), (4, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ik,kj", [(2, 3), (3, 2)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("Ab,bC->AC", [(2, 3), (3, 2)]),
])
def test_einsum(eq, shapes):
    compare(lambda L, *ops: L.einsum(eq, *ops), *[_m(*s) for s in shapes], gradgrad=True)


def test_einsum_call_forms_and_errors():
    compare(lambda L, a, b: (L.einsum("ij,jk->ik", [a, b]), L.einsum(a, [0, 1], b, [1, 2], [0, 2]),
                             L.einsum(a, [Ellipsis, 1], b, [1, 2])), _m(3, 4), _m(4, 2))
    compare(lambda L, a, b: L.einsum("ij,jk->ik", a, b), _m(3, 4, dtype="int64"), _m(4, 2, dtype="int64"))
    raises_like(lambda L, a: L.einsum("ij,jk->ik", a), _m(2, 3))
    raises_like(lambda L, a, b: L.einsum("ij,jk->ik", a, b), _m(2, 3), _m(2, 3))
    raises_like(lambda L, a, b: L.einsum("ij,jk", a, b), _m(2, 3, dtype="float32"), _m(3, 2))
    raises_like(lambda L, a, b: L.einsum("ij,jk->ik", a, b), _m(2, 3, dtype="int64"), _m(3, 2, dtype="int32"))
    x = tg.tensor(_m(4), requires_grad=True)
    assert tg.einsum("i->", x).item() == pytest.approx(float(x.sum()))


def test_einsum_gradcheck():
    a, b = (tg.tensor(_m(2, 3, 3), requires_grad=True), tg.tensor(_m(3, 4), requires_grad=True))
    fn = lambda a, b: tg.einsum("bii,ij->bj", a, b)  # noqa: E731
    assert tg.autograd.gradcheck(fn, (a, b))
    assert tg.autograd.gradgradcheck(fn, (a, b))


# ---------------------------------------------------------------------------------------------- tensordot / kron


@pytest.mark.parametrize("dims,sa,sb", [
    (2, (2, 3, 4), (3, 4, 5)), (1, (3, 4), (4, 2)), (0, (2,), (3,)),
    (([0, 1], [1, 0]), (3, 2, 4), (2, 3, 5)), (([2], [0]), (2, 3, 4), (4, 2)), (([1], [0]), (2, 3), (3, 4)),
])
def test_tensordot(dims, sa, sb):
    compare(lambda L, a, b: L.tensordot(a, b, dims=dims), _m(*sa), _m(*sb), gradgrad=True)


def test_tensordot_errors():
    raises_like(lambda L, a, b: L.tensordot(a, b, 1), _m(2, 3), _m(2, 3))
    raises_like(lambda L, a, b: L.tensordot(a, b, 1), _m(2, 3, dtype="float32"), _m(3, 3))


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 2)), ((2,), (2, 3)), ((2, 1, 2), (3, 2)), ((3,), (4,))])
def test_kron(sa, sb):
    compare(lambda L, a, b: (L.kron(a, b), a.kron(b)), _m(*sa), _m(*sb), gradgrad=True)
    compare(lambda L, a, b: L.kron(a, b), _m(*sa, dtype="float32"), _m(*sb))


# ---------------------------------------------------------------------------------------------- diagonal / triangular


def test_trace_tril_triu_diag():
    compare(lambda L, a: (L.trace(a), a.trace()), _m(3, 4), gradgrad=True)
    compare(lambda L, a: L.trace(a), _m(3, 3, dtype="int32"))
    raises_like(lambda L, a: L.trace(a), _m(2, 2, 2))
    for k in (-1, 0, 2):
        compare(lambda L, a, k=k: (L.tril(a, k), a.triu(k), L.triu(a, diagonal=k)), _m(2, 3, 4), gradgrad=True)
        compare(lambda L, a, k=k: (L.diag(a[0], k), L.diag(a[0, 0], k), L.diagflat(a[0], k)), _m(2, 3, 4))
    compare(lambda L, a: (a.clone().tril_(-1), a.clone().triu_(1)), _m(3, 4))
    compare(lambda L, a: (L.tril(a), L.triu(a, 1)), _m(3, 3, dtype="bool"))
    raises_like(lambda L, a: L.tril(a), _m(3))
    raises_like(lambda L, a: L.diag(a), _m(2, 2, 2))


@pytest.mark.parametrize("kw", [{}, {"offset": 1}, {"offset": -2, "dim1": 0, "dim2": 2}, {"dim1": -1, "dim2": 0}])
def test_diag_embed(kw):
    compare(lambda L, a: L.diag_embed(a, **kw), _m(2, 3), gradgrad=True)


def test_cross():
    compare(lambda L, a, b: (L.linalg.cross(a, b), L.cross(a, b, dim=1)), _m(4, 3), _m(4, 3), gradgrad=True)
    compare(lambda L, a, b: L.linalg.cross(a, b, dim=0), _m(3, 2), _m(3, 1))
    was = tg.is_warn_always_enabled()
    tg.set_warn_always(True)  # (torch warns once a process: another test may have used the default dim before)
    try:
        with pytest.warns(UserWarning, match="without specifying the dim"):
            tg.cross(tg.randn(2, 3), tg.randn(2, 3))
    finally:
        tg.set_warn_always(was)
    raises_like(lambda L, a, b: L.linalg.cross(a, b), _m(2), _m(2))


# ---------------------------------------------------------------------------------------------- norms


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, -1, float("inf"), float("-inf")])
def test_vector_norm(ord):
    compare(lambda L, a: (L.linalg.vector_norm(a, ord), L.linalg.vector_norm(a, ord, dim=(0, 2), keepdim=True),
                          L.linalg.vector_norm(a, ord, 1)), _m(3, 4, 2))


def test_vector_norm_specials():
    compare(lambda L, a: L.linalg.vector_norm(a, dtype=L.float64), _m(5, dtype="float32"))
    compare(lambda L, a: (L.linalg.vector_norm(a), L.linalg.vector_norm(a, 1)), np.zeros(4), gradgrad=True)
    compare(lambda L, a: L.linalg.vector_norm(a, 2), _m(3, 4), gradgrad=True)
    raises_like(lambda L, a: L.linalg.vector_norm(a), _m(3, dtype="int64"))
    raises_like(lambda L, a: L.linalg.vector_norm(a, float("inf")), np.zeros((0, 3)))


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")])
def test_matrix_norm(ord):
    a = _distinct_sv(2, 3, 4) + RNG.uniform(0, 0.01, size=(2, 3, 4))
    compare(lambda L, a: (L.linalg.matrix_norm(a, ord), L.linalg.matrix_norm(a, ord, keepdim=True),
                          L.linalg.norm(a, ord, (0, 2))), a, rtol=1e-6, atol=1e-7)


def test_linalg_norm_forms_and_errors():
    compare(lambda L, a: (L.linalg.norm(a), L.linalg.norm(a, dim=1), L.linalg.norm(a[0], 2), L.linalg.norm(a[0, 0], 3),
                          L.linalg.norm(a, dim=(1, 2)), L.linalg.norm(a, float("inf"), (0, 1))), _m(2, 3, 4))
    raises_like(lambda L, a: L.linalg.norm(a, 2), _m(2, 2, 2))
    raises_like(lambda L, a: L.linalg.matrix_norm(a, 3), _m(3, 3))
    raises_like(lambda L, a: L.linalg.matrix_norm(a), _m(3))
    out = tg.empty(0, dtype=tg.float64)  # (the result's dtype: torch refuses another)
    assert tg.linalg.norm(tg.tensor(_m(3, 4)), out=out) is out
    assert tg.linalg.matrix_norm(tg.randn(3, 3, requires_grad=True), 1).grad_fn.name() == "AmaxBackward0"


# ---------------------------------------------------------------------------------------------- inverse / det / solve


def test_inv_det_slogdet():
    a = _well(2, 3, 3)
    compare(lambda L, a: (L.linalg.inv(a), L.inverse(a), a.inverse(), L.linalg.inv_ex(a)), a, gradgrad=True)
    compare(lambda L, a: (L.linalg.det(a), L.det(a), a.det(), L.linalg.slogdet(a), L.logdet(a @ a.mT)), a,
            gradgrad=True)
    compare(lambda L, a: (L.linalg.det(a), L.linalg.slogdet(a)), _well(3, 3).astype("float32"), rtol=1e-5, atol=1e-6)
    r = tg.linalg.slogdet(tg.tensor(a))
    assert type(r).__name__ == "linalg_slogdet" and r.__match_args__ == ("sign", "logabsdet")
    x = tg.tensor(a, requires_grad=True)
    assert tg.linalg.inv(x).grad_fn.name() == "LinalgInvExBackward0"
    assert tg.det(x).grad_fn.name() == "LinalgDetBackward0"


def test_det_singular_gradient():
    sing = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.5, 2.0]])
    rank1 = np.outer([1.0, 2.0, 3.0], [0.5, -1.0, 2.0])
    for a in (sing, rank1, np.stack([_well(3, 3), sing]), np.array([[2.5]])):
        # First order, without a graph: PyTorch's LU solve of A^H X = det g I, which gives 0 where det is
        # exactly 0 (sing and rank1 here), though the true gradient (the cofactor matrix) of rank n-1 is not.
        grads = []
        for lib in (tg, torch):
            x = lib.tensor(a, requires_grad=True)
            lib.linalg.det(x).sum().backward()
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], atol=1e-7)
        compare(lambda L, a: L.linalg.det(a), a, atol=1e-7, gradgrad=True)  # with a graph: the SVD path
    x = tg.tensor(sing, requires_grad=True)
    (g,) = tg.autograd.grad(tg.linalg.det(x), x, create_graph=True)  # the SVD path gives the cofactor matrix
    np.testing.assert_allclose(g.detach().numpy(), _cofactors(sing), atol=1e-7)


def _cofactors(a: np.ndarray) -> np.ndarray:
    """d det(A) / dA by expansion in minors (over the last two dims)."""
    if a.ndim > 2:
        return np.stack([_cofactors(m) for m in a])
    n = a.shape[-1]
    if n == 1:
        return np.ones_like(a)
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            out[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return out


def test_inv_errors():
    raises_like(lambda L, a: L.linalg.inv(a), np.array([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]]))
    raises_like(lambda L, a: L.linalg.inv(a), np.stack([np.eye(2), [[1.0, 2], [2, 4]]]))
    raises_like(lambda L, a: L.linalg.inv(a), _m(2, 3))
    raises_like(lambda L, a: L.linalg.inv(a), _m(3))
    raises_like(lambda L, a: L.linalg.inv(a), np.eye(2, dtype="int64"))
    raises_like(lambda L, a: L.linalg.det(a), _m(2, 3))
    assert issubclass(tg.linalg.LinAlgError, RuntimeError)
    with pytest.raises(tg.linalg.LinAlgError):
        tg.linalg.inv(tg.zeros(2, 2))


@pytest.mark.parametrize("sa,sb,left", [
    ((3, 3), (3, 2), True), ((3, 3), (3,), True), ((2, 3, 3), (3, 1), True), ((2, 3, 3), (2, 3), True),
    ((3, 3), (2, 3), False), ((2, 3, 3), (1, 4, 3), False),
])
def test_solve(sa, sb, left):
    compare(lambda L, a, b: L.linalg.solve(a, b, left=left), _well(*sa), _m(*sb), gradgrad=True)


def test_solve_errors():
    raises_like(lambda L, a, b: L.linalg.solve(a, b), np.array([[1.0, 2], [2, 4]]), _m(2))
    raises_like(lambda L, a, b: L.linalg.solve(a, b), np.stack([np.eye(2), [[1.0, 2], [2, 4]]]), _m(2))
    raises_like(lambda L, a, b: L.linalg.solve(a, b), np.eye(2), _m(3))
    raises_like(lambda L, a, b: L.linalg.solve(a, b, left=False), np.eye(2), _m(2, 3))
    raises_like(lambda L, a, b: L.linalg.solve(a, b), np.eye(2, dtype="float32"), _m(2))


@pytest.mark.parametrize("upper,left,unit", [(True, True, False), (False, True, True), (False, False, False),
                                             (True, False, True)])
def test_solve_triangular(upper, left, unit):
    a = _well(2, 3, 3)
    b = _m(2, 3, 4) if left else _m(2, 4, 3)
    compare(lambda L, a, b: L.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit), a, b,
            gradgrad=True)


def test_solve_triangular_zero_pivot_and_cholesky_solve():
    compare(lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True), np.array([[0.0, 1], [0, 1]]), np.ones((2, 1)),
            grad=False)
    for upper in (False, True):
        compare(lambda L, a, b, up=upper: L.cholesky_solve(b, L.linalg.cholesky(_sym(L, a), upper=up), up),
                _spd(3, 3), _m(3, 2))


# ---------------------------------------------------------------------------------------------- factorizations


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(upper):
    compare(lambda L, a: L.linalg.cholesky(_sym(L, a), upper=upper), _spd(2, 3, 3), gradgrad=True)
    was = tg.is_warn_always_enabled(), torch.is_warn_always_enabled()
    tg.set_warn_always(True)  # (a warning both give once a process, else)
    torch.set_warn_always(True)
    try:
        with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
            compare(lambda L, a: L.cholesky(_sym(L, a), upper), _spd(3, 3))
    finally:
        tg.set_warn_always(was[0])
        torch.set_warn_always(was[1])
    compare(lambda L, a: L.linalg.cholesky_ex(a), _spd(3, 3))


def test_cholesky_reads_lower_triangle_and_errors():
    a = _spd(3, 3)
    a[0, 2] = 100.0  # the upper triangle is ignored
    compare(lambda L, a: L.linalg.cholesky(a), a, grad=False)
    raises_like(lambda L, a: L.linalg.cholesky(a), np.array([[1.0, 2], [2, 1]]))
    raises_like(lambda L, a: L.linalg.cholesky(a), np.stack([np.eye(2), [[1.0, 2], [2, 1]]]))
    raises_like(lambda L, a: L.linalg.cholesky(a), -np.eye(3))


def _qr_fixed(L, a, mode="reduced"):
    q, r = L.linalg.qr(a, mode=mode)
    s = r.diagonal(dim1=-2, dim2=-1).sign()
    return q * s.unsqueeze(-2), r * s.unsqueeze(-1)


@pytest.mark.parametrize("shape,mode", [((4, 3), "reduced"), ((3, 3), "complete"), ((2, 4, 3), "reduced"),
                                        ((3, 5), "reduced"), ((2, 3, 4), "complete")])
def test_qr(shape, mode):
    compare(lambda L, a: _qr_fixed(L, a, mode), _distinct_sv(*shape), gradgrad=True)


def test_qr_modes_and_errors():
    a = _distinct_sv(4, 3)
    compare(lambda L, a: (L.linalg.qr(a, "complete")[0].abs(), L.linalg.qr(a, mode="r")[1].abs()), a, grad=False)
    raises_like(lambda L, a: L.linalg.qr(a, mode="x"), a)
    raises_like(lambda L, a: L.linalg.qr(a), _m(3))
    x = tg.tensor(a, requires_grad=True)
    q, r = tg.linalg.qr(x, mode="r")
    with pytest.raises(RuntimeError, match="mode='r'"):
        r.sum().backward()
    q, r = tg.linalg.qr(x, mode="complete")
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
        q.sum().backward()
    assert tg.linalg.qr(x).Q.grad_fn._saved_mode == "reduced"


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(uplo):
    def fn(L, a):
        w, v = L.linalg.eigh(_sym(L, a), UPLO=uplo)
        return w, _signfix(L, v), L.linalg.eigvalsh(_sym(L, a), uplo)

    compare(fn, _sym_gaps(2, 4, 4), gradgrad=True, rtol=1e-6, atol=1e-7)
    raises_like(lambda L, a: L.linalg.eigh(a, UPLO="X"), np.eye(2))
    raises_like(lambda L, a: L.linalg.eigh(a), _m(2, 3))


def _svd_fixed(L, a, full=False):
    u, s, vh = L.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    sign = _signfix(L, u[..., :k]) / u[..., :k]
    sign = sign[..., :1, :]
    return u[..., :k] * sign, s, vh[..., :k, :] * sign.mT


@pytest.mark.parametrize("shape,full", [((3, 4), False), ((4, 3), False), ((2, 3, 3), False), ((4, 3), True),
                                        ((3, 5), True)])
def test_svd(shape, full):
    compare(lambda L, a: _svd_fixed(L, a, full), _distinct_sv(*shape), gradgrad=True, rtol=1e-6, atol=1e-7)
    compare(lambda L, a: L.linalg.svdvals(a), _distinct_sv(*shape), gradgrad=True)
    k = min(shape[-2:])
    compare(lambda L, a: [t[..., :k].abs() for t in L.svd(a, some=not full)], _distinct_sv(*shape), grad=False)


def test_pinv_matrix_power_multi_dot():
    for shape in ((3, 4), (4, 3), (2, 3, 3)):
        compare(lambda L, a: (L.linalg.pinv(a), L.pinverse(a)), _distinct_sv(*shape), gradgrad=True)
    compare(lambda L, a: L.linalg.pinv(_sym(L, a), hermitian=True), _sym_gaps(3, 3))
    compare(lambda L, a: L.linalg.pinv(a, atol=0.5), np.diag([2.0, 1.0, 0.1]))
    for n in (0, 1, 2, 3, 5, -1, -2):
        compare(lambda L, a, n=n: (L.linalg.matrix_power(a, n), a.matrix_power(n)), _well(2, 3, 3),
                gradgrad=True)
    raises_like(lambda L, a: L.linalg.matrix_power(a, 2), _m(2, 3))
    compare(lambda L, a, b, c: (L.linalg.multi_dot([a, b, c]), L.linalg.multi_dot([a[0], b, c[:, 0]])),
            _m(2, 3), _m(3, 4), _m(4, 2))
    compare(lambda L, a, b: L.linalg.vecdot(a, b), _m(3, 4), _m(3, 4))
    compare(lambda L, a: L.linalg.matrix_rank(a), np.diag([1.0, 2.0, 0.0]), grad=False)


def test_gradcheck_decompositions():
    a = tg.tensor(_distinct_sv(3, 3), requires_grad=True)
    s = tg.tensor(_spd(3, 3), requires_grad=True)
    for fn, x in [(lambda a: tg.linalg.inv(a), a), (lambda a: tg.linalg.det(a), a),
                  (lambda a: tg.linalg.slogdet(a)[1], a), (lambda a: tg.linalg.svdvals(a), a),
                  (lambda s: tg.linalg.cholesky((s + s.mT) / 2), s),
                  (lambda a: _qr_fixed(tg, a), a), (lambda a: tg.linalg.pinv(a), a)]:
        assert tg.autograd.gradcheck(fn, (x,))
        assert tg.autograd.gradgradcheck(fn, (x,))


def test_namespace():
    import tracegrad.linalg as tl

    for name in ("norm", "vector_norm", "matrix_norm", "inv", "det", "slogdet", "solve", "cholesky", "qr", "eigh",
                 "svd", "svdvals", "pinv", "matrix_power", "LinAlgError"):
        assert hasattr(tl, name) and hasattr(torch.linalg, name)
    assert tg.linalg is tl
    assert_close(tl.det(tg.eye(3)), torch.tensor(1.0))


# ---------------------------------------------------------------------------------------------- recorded graphs


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 3, 4), (4, 2)),
                                   ((2, 3, 4), (4,)), ((4,), (2, 4, 3)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (2, 4, 5)),
                                   ((2, 3, 4), (1, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 5))])
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
def test_matmul_records_torch_graph(sa, sb, grads):
    """matmul is PyTorch's composite: dot/mv/mm/bmm with the folding and broadcasting views torch records."""
    a, b = _m(*sa), _m(*sb)
    graphs = []
    for lib in (tg, torch):
        x, y = lib.tensor(a, requires_grad=grads[0]), lib.tensor(b, requires_grad=grads[1])
        out = x @ y
        graphs.append(recorded_graph([out]))
        assert_close(out.detach().numpy(), a @ b)
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("eq,shapes", [("ij->", [(3, 4)]), ("iij->j", [(2, 2, 3)]), ("ij,ij,ij->i", [(2, 3)] * 3),
                                       ("ij,jk->ik", [(3, 1), (4, 2)]), ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
                                       ("ijk,jkl,lm->im", [(2, 3, 4), (3, 4, 5), (5, 2)])])
def test_einsum_records_torch_graph(eq, shapes):
    arrays = [_m(*s) for s in shapes]
    graphs = [recorded_graph([lib.einsum(eq, *[lib.tensor(x, requires_grad=True) for x in arrays])]) for lib in (tg, torch)]
    assert graphs[0] == graphs[1]


def test_matmul_rejects_numbers_as_torch():
    for lib in (tg, torch):
        with pytest.raises(TypeError, match=r"matmul\(\): argument 'other' \(position 2\) must be Tensor, not float"):
            lib.matmul(lib.ones(2, 2), 2.0)
        with pytest.raises(TypeError, match="unsupported operand"):
            lib.ones(2, 2) @ 2
