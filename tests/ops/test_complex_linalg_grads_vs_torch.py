"""Linear algebra on complex128 input against torch: values, first- and second-order gradients of a real loss
and forward-AD tangents. The losses are invariant under the phases that eigenvectors (and singular vectors) are
only defined up to, so that torch's phase checks pass and the gradients are well defined."""

from __future__ import annotations

import warnings

import pytest
from _lib import np, tg, torch

_RNG = np.random.RandomState(7)


def _c(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape) + 1j * _RNG.standard_normal(shape)


def _hpd(n: int) -> np.ndarray:
    m = _c(n, n)
    return m @ m.conj().T + n * np.eye(n)


def _tri(n: int, upper: bool) -> np.ndarray:
    m = _c(n, n) * 0.3 + 2.0 * np.eye(n)  # a dominant diagonal keeps the solves well conditioned
    return np.triu(m) if upper else np.tril(m)


_SQ = _c(3, 3) + 3.0 * np.eye(3)
_SQ_BATCH = _c(2, 3, 3) + 3.0 * np.eye(3)
_TALL, _WIDE = _c(4, 3), _c(3, 4)
_RHS, _RHS_ROW, _VEC = _c(3, 2), _c(2, 3), _c(3)
_HPD, _UP, _LOW = _hpd(3), _tri(3, True), _tri(3, False)
# Cholesky factors have a real positive diagonal, which LAPACK's potri assumes
_CHOL_LOW = np.linalg.cholesky(_HPD)
_CHOL_UP = _CHOL_LOW.conj().T.copy()
_W = _c(64)  # loss weights, cropped to each output's size


def _eigh_vectors(L, A):
    """V diag(w) V^H and |V|: the phase-invariant functions of the eigenvectors."""
    w, V = L.linalg.eigh(A + A.mH)
    return (V * w.unsqueeze(-2)) @ V.mH, V.abs()


def _lu_solve(L, A, B, **kw):
    LU, piv = L.linalg.lu_factor(A)
    return L.linalg.lu_solve(LU, piv, B, **kw)


def _householder(L, A, tau):
    return L.linalg.householder_product(A, tau)


# (name, function of (library, *inputs), inputs); each function returns a tensor or a tuple of them
CASES = [
    ("det", lambda L, A: L.linalg.det(A), (_SQ,)),
    ("det_batch", lambda L, A: L.linalg.det(A), (_SQ_BATCH,)),
    ("slogdet", lambda L, A: tuple(L.linalg.slogdet(A)), (_SQ,)),
    ("logdet_hpd", lambda L, A: L.logdet(A), (_HPD,)),
    ("inv", lambda L, A: L.linalg.inv(A), (_SQ_BATCH,)),
    ("inv_ex", lambda L, A: L.linalg.inv_ex(A).inverse, (_SQ,)),
    ("inverse", lambda L, A: L.inverse(A), (_SQ,)),
    ("solve", lambda L, A, B: L.linalg.solve(A, B), (_SQ, _RHS)),
    ("solve_vec", lambda L, A, B: L.linalg.solve(A, B), (_SQ, _VEC)),
    ("solve_right", lambda L, A, B: L.linalg.solve(A, B, left=False), (_SQ, _RHS_ROW)),
    ("solve_ex", lambda L, A, B: L.linalg.solve_ex(A, B).result, (_SQ, _RHS)),
    ("qr", lambda L, A: tuple(L.linalg.qr(A)), (_TALL,)),
    ("qr_wide", lambda L, A: tuple(L.linalg.qr(A)), (_WIDE,)),
    ("qr_square", lambda L, A: tuple(L.linalg.qr(A)), (_SQ,)),
    ("eigvalsh", lambda L, A: L.linalg.eigvalsh(A + A.mH), (_SQ,)),
    ("eigh_values", lambda L, A: L.linalg.eigh(A + A.mH).eigenvalues, (_SQ,)),
    ("eigh_vectors", _eigh_vectors, (_SQ,)),
    ("cholesky", lambda L, A: L.linalg.cholesky(A @ A.mH + 3 * L.eye(3)), (_SQ,)),
    ("cholesky_upper", lambda L, A: L.linalg.cholesky(A @ A.mH + 3 * L.eye(3), upper=True), (_SQ,)),
    ("cholesky_ex", lambda L, A: L.linalg.cholesky_ex(A @ A.mH + 3 * L.eye(3)).L, (_SQ,)),
    ("cholesky_legacy", lambda L, A: L.cholesky(A @ A.mH + 3 * L.eye(3)), (_SQ,)),
    ("pinv", lambda L, A: L.linalg.pinv(A), (_SQ,)),
    ("pinv_tall", lambda L, A: L.linalg.pinv(A), (_TALL,)),
    ("pinv_wide", lambda L, A: L.linalg.pinv(A), (_WIDE,)),
    ("pinv_hermitian", lambda L, A: L.linalg.pinv(A, hermitian=True), (_HPD,)),
    ("lstsq", lambda L, A, B: L.linalg.lstsq(A, B).solution, (_TALL, _c(4, 2))),
    ("lstsq_square", lambda L, A, B: L.linalg.lstsq(A, B).solution, (_SQ, _RHS)),
    ("lu_factor", lambda L, A: L.linalg.lu_factor(A).LU, (_SQ,)),
    ("lu_factor_tall", lambda L, A: L.linalg.lu_factor(A).LU, (_TALL,)),
    ("lu", lambda L, A: tuple(L.linalg.lu(A))[1:], (_WIDE,)),
    ("lu_solve", _lu_solve, (_SQ, _RHS)),
    ("lu_solve_adjoint", lambda L, A, B: _lu_solve(L, A, B, adjoint=True), (_SQ, _RHS)),
    ("lu_solve_right", lambda L, A, B: _lu_solve(L, A, B, left=False), (_SQ, _RHS_ROW)),
    ("lu_solve_right_adjoint", lambda L, A, B: _lu_solve(L, A, B, left=False, adjoint=True), (_SQ, _RHS_ROW)),
    ("lu_solve_legacy", lambda L, A, B: B.lu_solve(*L.linalg.lu_factor(A)), (_SQ, _RHS)),
    ("matrix_exp", lambda L, A: L.linalg.matrix_exp(0.3 * A), (_SQ,)),
    ("matrix_exp_batch", lambda L, A: L.matrix_exp(0.3 * A), (_SQ_BATCH,)),
    ("svd", lambda L, A: L.linalg.svd(A, full_matrices=False).S, (_TALL,)),
    ("svd_vectors", lambda L, A: (lambda U, S, Vh: (U * S.unsqueeze(-2)) @ Vh)(*L.linalg.svd(A, False)), (_WIDE,)),
    ("svdvals", lambda L, A: L.linalg.svdvals(A), (_WIDE,)),
    ("householder_product", _householder, (_TALL, _c(3))),
    ("cholesky_inverse", lambda L, A: L.cholesky_inverse(A), (_CHOL_LOW,)),
    ("cholesky_inverse_upper", lambda L, A: L.cholesky_inverse(A, upper=True), (_CHOL_UP,)),
    ("cholesky_solve", lambda L, B, A: L.cholesky_solve(B, A), (_RHS, _CHOL_LOW)),
    ("cholesky_solve_upper", lambda L, B, A: L.cholesky_solve(B, A, upper=True), (_RHS, _CHOL_UP)),
    ("triangular_solve", lambda L, B, A: tuple(L.triangular_solve(B, A)), (_RHS, _UP)),
    ("triangular_solve_t", lambda L, B, A: L.triangular_solve(B, A, upper=False, transpose=True)[0], (_RHS, _LOW)),
    ("triangular_solve_unit", lambda L, B, A: L.triangular_solve(B, A, unitriangular=True)[0], (_RHS, _UP)),
    ("solve_triangular", lambda L, A, B: L.linalg.solve_triangular(A, B, upper=True), (_UP, _RHS)),
    ("solve_triangular_right", lambda L, A, B: L.linalg.solve_triangular(A, B, upper=False, left=False),
     (_LOW, _RHS_ROW)),
    ("solve_triangular_unit", lambda L, A, B: L.linalg.solve_triangular(A, B, upper=False, unitriangular=True),
     (_LOW, _RHS)),
    ("matrix_power", lambda L, A: L.linalg.matrix_power(A, 3), (_SQ,)),
    ("matrix_power_neg", lambda L, A: L.linalg.matrix_power(A, -2), (_SQ,)),
    ("multi_dot", lambda L, A, B, C: L.linalg.multi_dot([A, B, C]), (_TALL, _SQ, _RHS)),
    ("tensorinv", lambda L, A: L.linalg.tensorinv(A.reshape(3, 2, 6), ind=2), (_c(6, 6) + 4 * np.eye(6),)),
    ("tensorsolve", lambda L, A, B: L.linalg.tensorsolve(A.reshape(2, 3, 6), B), (_c(6, 6) + 4 * np.eye(6),
                                                                                  _c(2, 3))),
    ("cond", lambda L, A: L.linalg.cond(A), (_SQ,)),
    ("cond_fro", lambda L, A: L.linalg.cond(A, "fro"), (_SQ,)),
    ("cond_inf", lambda L, A: L.linalg.cond(A, float("inf")), (_SQ,)),
    ("cond_neg2", lambda L, A: L.linalg.cond(A, -2), (_SQ,)),
    ("matrix_norm_fro", lambda L, A: L.linalg.matrix_norm(A), (_TALL,)),
    ("matrix_norm_nuc", lambda L, A: L.linalg.matrix_norm(A, "nuc"), (_TALL,)),
    ("matrix_norm_2", lambda L, A: L.linalg.matrix_norm(A, 2), (_TALL,)),
    ("matrix_norm_neg2", lambda L, A: L.linalg.matrix_norm(A, -2), (_TALL,)),
    ("matrix_norm_1", lambda L, A: L.linalg.matrix_norm(A, 1), (_TALL,)),
    ("matrix_norm_inf", lambda L, A: L.linalg.matrix_norm(A, float("inf")), (_TALL,)),
    ("vector_norm", lambda L, A: L.linalg.vector_norm(A, 3, dim=0), (_TALL,)),
    ("norm", lambda L, A: L.linalg.norm(A), (_TALL,)),
    ("norm_ord", lambda L, A: L.linalg.norm(A, "nuc"), (_TALL,)),
    ("legacy_norm", lambda L, A: L.norm(A, p="fro", dim=(0, 1)), (_TALL,)),
    ("vander", lambda L, x: L.linalg.vander(x, N=4), (_VEC,)),
    ("vecdot", lambda L, x, y: L.linalg.vecdot(x, y), (_TALL, _TALL[::-1].copy())),
]
IDS = [case[0] for case in CASES]
# torch's own backward fails here (an in-place write inside its complex cond), and so does ours
_GRADS_RAISE = {"cond_fro", "cond_inf"}
# torch's legacy cholesky has no forward-AD formula, tracegrad's shares linalg.cholesky's; torch's
# cholesky_inverse tangent is not the derivative (see tests/opinfo/db_tensor_extras.py): checked on its own below
_NO_FORWARD_AD = {"cholesky_legacy", "cholesky_inverse", "cholesky_inverse_upper"}


def _outputs(out) -> list:
    return [o for o in (out if isinstance(out, tuple) else (out,)) if o.is_floating_point() or o.is_complex()]


def _loss(lib, outs):
    """sum Re(w o) over the outputs: reads both parts of each complex output."""
    total = 0
    for o in outs:
        w = lib.tensor(_W[:o.numel()].reshape(tuple(o.shape)))
        total = total + ((o * w).real if o.is_complex() else o * w.real).sum()
    return total


def _numpy(t) -> np.ndarray:
    return t.detach().resolve_conj().numpy()


def _assert_close(actual: list, expected: list) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and a.dtype == e.dtype, (a.shape, a.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(a, e, rtol=1e-7, atol=1e-9)


def _grads(lib, fn, inputs):
    """Values, first-order gradients and second-order gradients (of a real function of the first)."""
    xs = [lib.tensor(v, requires_grad=True) for v in inputs]
    outs = _outputs(fn(lib, *xs))
    grads = lib.autograd.grad(_loss(lib, outs), xs, create_graph=True)
    second = lib.autograd.grad(_loss(lib, grads), xs, allow_unused=True)
    second = [np.zeros_like(v) if s is None else _numpy(s) for v, s in zip(inputs, second)]
    return [_numpy(o) for o in outs], [_numpy(g) for g in grads], second


@pytest.mark.parametrize("name,fn,inputs", CASES, ids=IDS)
def test_values_and_gradients_vs_torch(name, fn, inputs):
    if name in _GRADS_RAISE:
        for lib in (tg, torch):
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                _grads(lib, fn, inputs)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _grads(tg, fn, inputs), _grads(torch, fn, inputs)
    for a, e in zip(ours, theirs):
        _assert_close(a, e)


def _tangents(lib, fn, inputs, tangents):
    fwd = lib.autograd.forward_ad
    with fwd.dual_level():
        xs = [fwd.make_dual(lib.tensor(v), lib.tensor(t)) for v, t in zip(inputs, tangents)]
        return [_numpy(fwd.unpack_dual(o).tangent) for o in _outputs(fn(lib, *xs))]


@pytest.mark.parametrize("name,fn,inputs", [c for c in CASES if c[0] not in _NO_FORWARD_AD],
                         ids=[i for i in IDS if i not in _NO_FORWARD_AD])
def test_forward_ad_vs_torch(name, fn, inputs):
    tangents = [np.cos(np.arange(v.size)).reshape(v.shape) + 0.5j * np.sin(np.arange(v.size)).reshape(v.shape)
                for v in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _assert_close(_tangents(tg, fn, inputs, tangents), _tangents(torch, fn, inputs, tangents))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_tangent_is_the_derivative(upper):
    """The tangent of (F F^H)^-1 (F^H F for upper) in a direction inside F's triangle (a real diagonal, which
    LAPACK's potri reads only the real part of), by central differences."""
    F = _CHOL_UP if upper else _CHOL_LOW
    rng = np.random.RandomState(1)
    d = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    dF = (np.triu(d, 1) if upper else np.tril(d, -1)) + np.diag(rng.standard_normal(3))
    fwd = tg.autograd.forward_ad
    with fwd.dual_level():
        out = tg.cholesky_inverse(fwd.make_dual(tg.tensor(F), tg.tensor(dF)), upper=upper)
        tangent = _numpy(fwd.unpack_dual(out).tangent)
    h = 1e-6
    gram = (lambda f: f.conj().T @ f) if upper else (lambda f: f @ f.conj().T)
    at = [np.linalg.inv(gram(F + s * h * dF)) for s in (1, -1)]
    np.testing.assert_allclose(tangent, (at[0] - at[1]) / (2 * h), rtol=1e-6, atol=1e-7)


def test_matrix_rank_vs_torch():
    low_rank = _TALL[:, :2] @ _c(2, 3)
    for A, kw in ((_TALL, {}), (low_rank, {}), (_HPD, {"hermitian": True})):
        ours, theirs = tg.linalg.matrix_rank(tg.tensor(A), **kw), torch.linalg.matrix_rank(torch.tensor(A), **kw)
        assert ours.item() == theirs.item() and str(ours.dtype) == str(theirs.dtype)


@pytest.mark.parametrize("vectors", ["abs", "raw"])
def test_eigh_phase_check_vs_torch(vectors):
    """A loss that depends on the eigenvectors' phases raises torch's error; one that does not, passes."""
    errors = []
    for lib in (tg, torch):
        A = lib.tensor(_HPD, requires_grad=True)
        V = lib.linalg.eigh(A).eigenvectors
        loss = V.abs().sum() if vectors == "abs" else (V * lib.tensor(_W[:9].reshape(3, 3))).real.sum()
        try:
            lib.autograd.grad(loss, A)
            errors.append(None)
        except RuntimeError as e:
            errors.append(str(e))
    assert errors[0] == errors[1]
    assert (errors[0] is None) == (vectors == "abs")
