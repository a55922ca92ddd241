"""A thirty-third set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and
compared: numerical linear algebra homework written against ``torch.linalg``.

These add what the other program files do not run: classical and modified Gram-Schmidt against ``linalg.qr`` in
each mode ('reduced', 'complete', 'r') with the signs fixed, and the refusals of mode 'r' and of 'complete' on a
tall matrix in backward; Householder reflections by hand against geqrf, householder_product and ormqr (left/right,
transposed); LU with partial pivoting by hand against linalg.lu, lu_factor, lu_factor_ex, lu_solve (left, right,
adjoint), lu_unpack and the pivots' int32 dtype, with singular matrices; power iteration, the Rayleigh quotient and
inverse iteration against eigvalsh/eigh (UPLO) and eig/eigvals of a non-symmetric matrix; conjugate gradient,
Jacobi and Gauss-Seidel with residual histories against solve and solve_ex; least squares by normal equations,
cholesky and cholesky_ex (info, check_errors), lstsq's fields per driver and pinv; matrix_exp against a Taylor
series, matrix_power with negative and zero powers, matrix_norm/norm ord variants; slogdet/det/inv/inv_ex of
singular and batched matrices and the usual refusals (integer input, non-square, mismatched batches); vander,
multi_dot, cross and vecdot; float64 gradients through solve, inv, det, slogdet, eigh, svd, qr, cholesky, lstsq and
matrix_exp; and the gradient refusals of degenerate or gauge-dependent decompositions. Everything is drawn from
the seeded global generator, which is torch's; values are compared to a tolerance (LAPACK and matrix products
are not bit for bit), and the methods work in float64, as homework does.

Differences these programs found, now fixed (``tests/ops/test_program33_findings_vs_torch.py``):
- ``torch.qr`` did not warn that it is deprecated in favour of ``torch.linalg.qr`` (torch: once for ``qr``, once
  for ``qr_out``);
- ``linalg.eigh``/``eigvalsh`` of an integer matrix raised RuntimeError "Expected a floating point or complex
  tensor" where torch raises NotImplementedError ``"linalg_eigh_cpu" not implemented for 'Int'``, and a lower-case
  ``UPLO`` was refused;
- the gradient of ``eigvalsh`` at a repeated eigenvalue (the identity) was NaN: the eigenvectors' zero gradient
  was divided by zero gaps, where torch takes V diag(gL) V^H;
- ``linalg.solve``/``solve_ex``/``solve_triangular``/``lu_solve`` of batches that do not broadcast named A's batch
  as "tensor a" (torch: B's);
- ``linalg.vecdot`` of two vectors is torch's ``vdot`` (its "inconsistent tensor size" refusal and
  ``VdotBackward0``);
- ``linalg.householder_product`` of integer matrices computed a result (torch: ``"orgqr_cpu" not implemented``).

Left: ``linalg.matrix_exp`` of float16/bfloat16 matrices gives
torch 2.13's CPU kernel garbage (``exp(I)`` is -20896 in half) and tracegrad the true value; ``torch.ormqr``'s
dtype check does not see a bfloat16 ``tau`` or ``other`` beside a float32 input.
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _spd(torch, n, seed):
    """A symmetric positive-definite matrix, as homework builds one."""
    torch.manual_seed(seed)
    M = torch.randn(n, n, dtype=torch.float64)
    return M @ M.T + n * torch.eye(n, dtype=torch.float64)


def _gram_schmidt_qr(lib, show):
    """Classical and modified Gram-Schmidt on a nearly dependent set of columns, compared with linalg.qr in each
    mode after fixing signs (R's diagonal positive), the loss of orthogonality of each, and QR's refusals."""
    torch = lib
    LA = torch.linalg
    torch.manual_seed(330)
    eps = 1e-6
    A = torch.tensor([[1.0, 1.0, 1.0], [eps, 0.0, 0.0], [0.0, eps, 0.0], [0.0, 0.0, eps]], dtype=torch.float64)

    def classical(A):
        m, n = A.shape
        Q = torch.zeros(m, n, dtype=A.dtype)
        R = torch.zeros(n, n, dtype=A.dtype)
        for j in range(n):
            v = A[:, j].clone()
            for i in range(j):
                R[i, j] = Q[:, i] @ A[:, j]
                v -= R[i, j] * Q[:, i]
            R[j, j] = torch.linalg.vector_norm(v)
            Q[:, j] = v / R[j, j]
        return Q, R

    def modified(A):
        m, n = A.shape
        V = A.clone()
        Q = torch.zeros(m, n, dtype=A.dtype)
        R = torch.zeros(n, n, dtype=A.dtype)
        for i in range(n):
            R[i, i] = V[:, i].norm()
            Q[:, i] = V[:, i] / R[i, i]
            for j in range(i + 1, n):
                R[i, j] = Q[:, i].dot(V[:, j])
                V[:, j] = V[:, j] - R[i, j] * Q[:, i]
        return Q, R

    eye = torch.eye(3, dtype=torch.float64)
    for name, (Q, R) in (("classical", classical(A)), ("modified", modified(A))):
        show(name, R.diagonal(), (Q.T @ Q - eye).abs().max() > 1e-3, (Q @ R - A).abs().max() < 1e-12)
    Q, R = LA.qr(A)
    signs = torch.sign(R.diagonal())
    Q, R = Q * signs, R * signs[:, None]
    show(Q.shape, R.shape, R.diagonal(), (Q.T @ Q - eye).abs().max() < 1e-14)
    Qc, Rc = LA.qr(A, mode="complete")
    show(Qc.shape, Rc.shape, Rc[3], (Qc @ Qc.T - torch.eye(4, dtype=torch.float64)).abs().max() < 1e-14)
    Qr, Rr = LA.qr(A, mode="r")
    show(Qr.shape, Qr.dtype, Rr.abs(), LA.qr(A.T, mode="reduced").Q.shape, LA.qr(A.T).R.shape)
    show(type(LA.qr(A)).__name__, LA.qr(A)._fields if hasattr(LA.qr(A), "_fields") else None)
    show_outcome(show, lambda: LA.qr(A, mode="economic"))
    show_outcome(show, lambda: LA.qr(torch.ones(3, 3, dtype=torch.int64)))
    show(torch.qr(A, some=False).Q.shape, torch.qr(A).Q.shape)

    X = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    Q, R = LA.qr(X)
    (Q.sum() + R.diagonal().abs().sum()).backward()
    show(Q.grad_fn.name(), X.grad)
    _, Rr = LA.qr(X, mode="r")
    show(Rr.grad_fn.name())
    show_outcome(show, lambda: Rr.sum().backward())
    Qc, Rc = LA.qr(X, mode="complete")
    show_outcome(show, lambda: Qc.sum().backward())
    W = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    Qw, Rw = LA.qr(W, mode="complete")
    (Qw.sum() + Rw.sum()).backward()
    show(Qw.shape, Rw.shape, W.grad)


def _householder_by_hand(lib, show):
    """Householder reflectors built by hand (v, tau with LAPACK's conventions) against geqrf's packed output,
    Q from householder_product, Q^T b and b Q applied by ormqr without forming Q, and their refusals."""
    torch = lib
    torch.manual_seed(331)
    A = torch.randn(5, 3, dtype=torch.float64)
    m, n = A.shape
    R = A.clone()
    vs, taus = [], []
    for k in range(n):
        x = R[k:, k]
        alpha = -torch.sign(x[0]) * x.norm()
        v = x.clone()
        v[0] = x[0] - alpha
        v = v / v[0]
        tau = 2.0 / (v @ v)
        R[k:, k:] -= tau * torch.outer(v, v @ R[k:, k:])
        vs.append(v)
        taus.append(tau)
    show(R.triu()[:n], torch.stack(taus))
    packed, tau = torch.geqrf(A)
    show(packed.shape, tau.shape, tau.dtype, packed.triu()[:n], tau)
    show((packed.tril(-1)[1:, 0] - vs[0][1:]).abs().max() < 1e-12, (tau - torch.stack(taus)).abs().max() < 1e-12)
    Q = torch.linalg.householder_product(packed, tau)
    show(Q.shape, (Q @ packed.triu()[:n] - A).abs().max() < 1e-12, torch.orgqr(packed, tau).shape)
    Qfull = torch.linalg.householder_product(packed, torch.cat([tau, torch.zeros(0, dtype=torch.float64)]))
    show(Qfull.shape)
    b = torch.randn(5, 2, dtype=torch.float64)
    Qtb = torch.ormqr(packed, tau, b, transpose=True)
    show(Qtb, (Qtb[:n] - Q.T @ b).abs().max() < 1e-12)
    solution = torch.linalg.solve_triangular(packed.triu()[:n], Qtb[:n], upper=True)
    show(solution, (solution - torch.linalg.lstsq(A, b).solution).abs().max() < 1e-10)
    c = torch.randn(2, 5, dtype=torch.float64)
    show(torch.ormqr(packed, tau, c, left=False).shape, torch.ormqr(packed, tau, b).shape)
    show_outcome(show, lambda: torch.ormqr(packed, tau, torch.randn(4, 2, dtype=torch.float64)))
    show_outcome(show, lambda: torch.ormqr(packed, tau, b.float()))
    show_outcome(show, lambda: torch.linalg.householder_product(packed[:2], tau))
    show_outcome(show, lambda: torch.geqrf(torch.ones(3, 3, dtype=torch.int64)))
    leaf = A.clone().requires_grad_()
    p, t = torch.geqrf(leaf)
    show(p.grad_fn.name())
    show_outcome(show, lambda: p.sum().backward())
    hp_in = packed.clone().requires_grad_()
    hp = torch.linalg.householder_product(hp_in, tau)
    hp.sum().backward()
    show(hp.grad_fn.name(), hp_in.grad)


def _lu_partial_pivoting(lib, show):
    """Doolittle LU with partial pivoting by hand against linalg.lu and lu_factor, the pivots' dtype and 1-based
    convention, lu_unpack, lu_solve left/right/adjoint, lu_factor_ex's info on a singular matrix and the refusals."""
    torch = lib
    LA = torch.linalg
    torch.manual_seed(332)
    A = torch.randn(4, 4, dtype=torch.float64)
    U = A.clone()
    n = A.shape[0]
    perm = list(range(n))
    L = torch.eye(n, dtype=torch.float64)
    for k in range(n - 1):
        p = int(U[k:, k].abs().argmax()) + k
        if p != k:
            U[[k, p]] = U[[p, k]]
            L[[k, p], :k] = L[[p, k], :k]
            perm[k], perm[p] = perm[p], perm[k]
        for i in range(k + 1, n):
            L[i, k] = U[i, k] / U[k, k]
            U[i] -= L[i, k] * U[k]
    P = torch.eye(n, dtype=torch.float64)[perm].T
    show(perm, (P @ L @ U - A).abs().max() < 1e-12)
    P2, L2, U2 = LA.lu(A)
    show(P2, L2, U2, (L2 - L).abs().max() < 1e-12, (U2.triu() - U.triu()).abs().max() < 1e-12)
    LU, pivots = LA.lu_factor(A)
    show(pivots, pivots.dtype, LU.shape)
    Pu, Lu, Uu = torch.lu_unpack(LU, pivots)
    show((Pu - P2).abs().max(), (Lu - L2).abs().max() < 1e-15, torch.lu_unpack(LU, pivots, unpack_data=False)[1].shape)
    b = torch.randn(4, 2, dtype=torch.float64)
    x = LA.lu_solve(LU, pivots, b)
    show(x, (A @ x - b).abs().max() < 1e-12)
    xr = LA.lu_solve(LU, pivots, b.T, left=False)
    show((xr @ A - b.T).abs().max() < 1e-12)
    xa = LA.lu_solve(LU, pivots, b, adjoint=True)
    show((A.T @ xa - b).abs().max() < 1e-12)
    show(torch.lu_solve(b, LU, pivots).shape, torch.lu(A)[1].dtype)
    batch = torch.randn(3, 2, 2, dtype=torch.float64)
    LUb, pivb, info = LA.lu_factor_ex(batch)
    show(pivb, info, info.dtype)
    S = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=torch.float64)
    LUs, pivs, infos = LA.lu_factor_ex(S)
    show(LUs, pivs, infos)
    show_outcome(show, lambda: LA.lu_factor(S))
    show_outcome(show, lambda: LA.lu_factor_ex(S, check_errors=True))
    show_outcome(show, lambda: LA.lu_factor(torch.ones(2, 2, dtype=torch.int64)))
    show_outcome(show, lambda: LA.lu_factor(A, pivot=False))
    show_outcome(show, lambda: LA.lu_solve(LU, pivots, torch.ones(3, 1, dtype=torch.float64)))
    show_outcome(show, lambda: LA.lu_solve(LU, pivots.long(), b))
    show(LA.lu(torch.randn(2, 3, dtype=torch.float64))[2].shape, LA.lu(torch.randn(3, 2))[1].shape)
    leaf = A.clone().requires_grad_()
    Pg, Lg, Ug = LA.lu(leaf)
    (Lg.sum() + Ug.pow(2).sum()).backward()
    show(Lg.grad_fn.name(), leaf.grad)
    leaf.grad = None
    LUg, pg = LA.lu_factor(leaf)
    LA.lu_solve(LUg, pg, b).sum().backward()
    show(LUg.grad_fn.name(), leaf.grad)


def _eigen_iterations(lib, show):
    """Power iteration with the Rayleigh quotient, shifted inverse iteration by solve, against eigvalsh and eigh
    with each UPLO (a matrix whose triangles differ), and eig/eigvals of a non-symmetric matrix (complex output)."""
    torch = lib
    LA = torch.linalg
    S = _spd(torch, 4, 333)
    torch.manual_seed(333)
    v = torch.randn(4, dtype=torch.float64)
    history = []
    for _ in range(60):
        w = S @ v
        v = w / w.norm()
        history.append((v @ S @ v).item())
    true = LA.eigvalsh(S)
    show(true, true.dtype, [round(h, 8) for h in history[::15]], abs(history[-1] - true[-1].item()) < 1e-8)
    shift = true[0].item() + 0.1
    u = torch.ones(4, dtype=torch.float64)
    shifted = S - shift * torch.eye(4, dtype=torch.float64)
    for _ in range(8):
        u = LA.solve(shifted, u)
        u = u / u.norm()
    rq = u @ S @ u
    vals, vecs = LA.eigh(S)
    show(rq, abs(rq.item() - true[0].item()) < 1e-10, (vecs[:, 0].abs() - u.abs()).abs().max() < 1e-8)
    show(type(LA.eigh(S)).__name__, (vecs @ torch.diag(vals) @ vecs.T - S).abs().max() < 1e-12)
    lopsided = S.triu() + 5 * S.tril(-1)
    show(LA.eigvalsh(lopsided), LA.eigvalsh(lopsided, UPLO="U"), LA.eigh(lopsided, UPLO="U").eigenvalues)
    show_outcome(show, lambda: LA.eigh(S, UPLO="X"))
    show_outcome(show, lambda: LA.eigvalsh(torch.ones(2, 3, dtype=torch.float64)))
    show_outcome(show, lambda: LA.eigh(torch.ones(2, 2, dtype=torch.int32)))
    show_outcome(show, lambda: torch.symeig(S))

    N = torch.tensor([[0.0, -2.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 3.0]], dtype=torch.float64)
    ev = LA.eigvals(N)
    w, V = LA.eig(N)
    order = torch.argsort(ev.real)
    show(ev.dtype, ev[order].real, ev[order].imag.abs(), V.dtype, V.shape)
    show((N.to(V.dtype) @ V - V * w).abs().max() < 1e-12, V.norm(dim=0))
    show(LA.eigvals(torch.eye(2, dtype=torch.float32)).dtype, LA.eig(torch.eye(2)).eigenvalues)
    rot = torch.tensor([[0.0, -1.0], [1.0, 0.0]])
    show(LA.eigvals(rot), torch.sort(LA.eigvals(rot).imag).values)


def _iterative_solvers(lib, show):
    """Conjugate gradient, Jacobi and Gauss-Seidel (with solve_triangular) on a diagonally dominant SPD system,
    their residual histories against linalg.solve and solve_ex, and solve's refusals."""
    torch = lib
    LA = torch.linalg
    torch.manual_seed(334)
    n = 6
    A = torch.randn(n, n, dtype=torch.float64)
    A = A @ A.T + 2 * n * torch.eye(n, dtype=torch.float64)
    b = torch.randn(n, dtype=torch.float64)
    exact = LA.solve(A, b)

    x = torch.zeros(n, dtype=torch.float64)
    r = b - A @ x
    p = r.clone()
    cg_hist = [r.norm().item()]
    for _ in range(n):
        Ap = A @ p
        alpha = (r @ r) / (p @ Ap)
        x = x + alpha * p
        r_new = r - alpha * Ap
        beta = (r_new @ r_new) / (r @ r)
        p = r_new + beta * p
        r = r_new
        cg_hist.append(r.norm().item())
    show("cg", [f"{h:.3e}" for h in cg_hist[:4]], (x - exact).abs().max() < 1e-10)

    D = A.diagonal()
    x = torch.zeros(n, dtype=torch.float64)
    jac = []
    for _ in range(25):
        x = (b - (A @ x - D * x)) / D
        jac.append(LA.vector_norm(b - A @ x).item())
    show("jacobi", [f"{h:.3e}" for h in jac[:19:6]], (x - exact).abs().max() < 1e-6)

    lower = A.tril()
    upper = A.triu(1)
    x = torch.zeros(n, 1, dtype=torch.float64)
    gs = []
    for _ in range(12):
        x = LA.solve_triangular(lower, b[:, None] - upper @ x, upper=False)
        gs.append((b[:, None] - A @ x).norm().item())
    show("gauss-seidel", [f"{h:.3e}" for h in gs[::3]], (x.squeeze(1) - exact).abs().max() < 1e-8)

    result, info = LA.solve_ex(A, b)
    show(type(LA.solve_ex(A, b)).__name__, info, info.dtype, (result - exact).abs().max() < 1e-12)
    singular = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=torch.float64)
    res, info = LA.solve_ex(singular, torch.ones(2, dtype=torch.float64))
    show(info, res.shape)
    show_outcome(show, lambda: LA.solve_ex(singular, torch.ones(2, dtype=torch.float64), check_errors=True))
    show_outcome(show, lambda: LA.solve(singular, torch.ones(2, dtype=torch.float64)))
    batch = torch.stack([A[:2, :2], singular])
    res, info = LA.solve_ex(batch, torch.ones(2, 2, dtype=torch.float64))
    show(info)
    show_outcome(show, lambda: LA.solve(batch, torch.ones(2, 2, dtype=torch.float64)))
    show(LA.solve(A, b[:, None]).shape, LA.solve(A.T, b[None], left=False).shape, LA.solve(A.expand(2, n, n), b).shape)
    show_outcome(show, lambda: LA.solve(A, torch.ones(n + 1, dtype=torch.float64)))
    show_outcome(show, lambda: LA.solve(A.float(), b))
    show_outcome(show, lambda: LA.solve(torch.ones(2, 3, dtype=torch.float64), torch.ones(2, dtype=torch.float64)))
    show_outcome(show, lambda: LA.solve(A.expand(2, n, n), torch.ones(3, n, 1, dtype=torch.float64)))


def _least_squares_three_ways(lib, show):
    """A linear fit by normal equations through cholesky/cholesky_solve, by lstsq with each driver's fields, and
    by pinv (hermitian, atol/rtol) on the Gram matrix; cholesky_ex on an indefinite matrix and its refusals."""
    torch = lib
    LA = torch.linalg
    torch.manual_seed(335)
    t = torch.linspace(0, 2, 12, dtype=torch.float64)
    X = torch.stack([torch.ones_like(t), t, t ** 2], dim=1)
    y = 0.5 + 1.5 * t - 0.7 * t ** 2 + 0.05 * torch.randn(12, dtype=torch.float64)
    G = X.T @ X
    L = LA.cholesky(G)
    coef_normal = torch.cholesky_solve((X.T @ y)[:, None], L).squeeze(1)
    show(L, coef_normal, (L @ L.T - G).abs().max() < 1e-12, LA.cholesky(G, upper=True).shape)
    for driver in ("gels", "gelsy", "gelsd", "gelss"):
        out = LA.lstsq(X, y[:, None], driver=driver)
        show(driver, out.solution.squeeze(1), out.residuals, out.rank, out.singular_values,
             (out.solution.squeeze(1) - coef_normal).abs().max() < 1e-10)
    wide = LA.lstsq(X.T, torch.ones(3, 1, dtype=torch.float64), driver="gelsd")
    show(wide.solution.shape, wide.residuals, wide.rank)
    pinv_coef = LA.pinv(X) @ y
    show(pinv_coef, LA.pinv(G, hermitian=True) @ (X.T @ y), LA.pinv(X, rtol=0.5).abs().sum())
    show(LA.pinv(G, atol=10.0, hermitian=True), LA.pinv(torch.zeros(2, 3)))
    indefinite = torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=torch.float64)
    Lbad, info = LA.cholesky_ex(indefinite)
    show(Lbad, info, info.dtype)
    show_outcome(show, lambda: LA.cholesky(indefinite))
    show_outcome(show, lambda: LA.cholesky_ex(indefinite, check_errors=True))
    show_outcome(show, lambda: LA.cholesky(torch.stack([G[:2, :2], indefinite])))
    show_outcome(show, lambda: LA.cholesky(torch.ones(2, 3, dtype=torch.float64)))
    show_outcome(show, lambda: LA.cholesky(torch.eye(2, dtype=torch.int64)))
    show(LA.cholesky_ex(torch.stack([G[:2, :2], indefinite])).info)


def _matrix_functions_series(lib, show):
    """matrix_exp against a truncated Taylor series and scaling-and-squaring by hand, exp(A) exp(-A) = I,
    matrix_power with negative and zero exponents, and norm/matrix_norm with each ord."""
    torch = lib
    LA = torch.linalg
    torch.manual_seed(336)
    A = 0.5 * torch.randn(3, 3, dtype=torch.float64)
    term = torch.eye(3, dtype=torch.float64)
    series = term.clone()
    for k in range(1, 25):
        term = term @ A / k
        series = series + term
    E = LA.matrix_exp(A)
    show(E, (E - series).abs().max() < 1e-13)
    big = 4 * A
    s = 4
    scaled = LA.matrix_exp(big / 2 ** s)
    for _ in range(s):
        scaled = scaled @ scaled
    show((scaled - LA.matrix_exp(big)).abs().max() / LA.matrix_exp(big).abs().max() < 1e-12)
    show((LA.matrix_exp(A) @ LA.matrix_exp(-A) - torch.eye(3, dtype=torch.float64)).abs().max() < 1e-13)
    show(LA.matrix_exp(torch.diag(torch.tensor([0.0, 1.0, 2.0]))).diagonal(), torch.matrix_exp(A[None]).shape)
    show_outcome(show, lambda: LA.matrix_exp(torch.ones(2, 3)))
    show_outcome(show, lambda: LA.matrix_exp(torch.eye(2, dtype=torch.int64)))

    M = torch.tensor([[4.0, 1.0], [2.0, 3.0]], dtype=torch.float64)
    show(LA.matrix_power(M, 0), LA.matrix_power(M, 3), LA.matrix_power(M, -1), LA.matrix_power(M, -3))
    show(torch.matrix_power(M.expand(2, 2, 2), 2).shape, LA.matrix_power(torch.eye(2, dtype=torch.int64) * 2, 5))
    show_outcome(show, lambda: LA.matrix_power(torch.tensor([[1.0, 2.0], [2.0, 4.0]]), -1))
    show_outcome(show, lambda: LA.matrix_power(M, 1.5))

    B = torch.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], dtype=torch.float64)
    for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        show(ord, LA.matrix_norm(B, ord=ord), LA.norm(B, ord=ord))
    show(LA.norm(B), LA.norm(B, dim=1), LA.norm(B.flatten(), ord=3), LA.matrix_norm(B, keepdim=True).shape)
    show(LA.matrix_norm(B.expand(2, 2, 3), ord=1, dim=(0, 2)), torch.norm(B, p="nuc"), torch.norm(B, p=1))
    show_outcome(show, lambda: LA.matrix_norm(B, ord=3))
    show_outcome(show, lambda: LA.matrix_norm(B[0]))
    show_outcome(show, lambda: LA.norm(B.expand(2, 2, 3), ord=2))
    show_outcome(show, lambda: LA.matrix_norm(torch.ones(2, 2, dtype=torch.int64)))


def _determinants_and_inverses(lib, show):
    """det/slogdet/logdet/inv/inv_ex of invertible, singular and batched matrices (signs, -inf, info per matrix),
    condition numbers under each p, matrix_rank with tolerances, and the refusals of integer, non-square and
    mismatched-batch inputs."""
    torch = lib
    LA = torch.linalg
    torch.manual_seed(337)
    A = torch.randn(3, 4, 4, dtype=torch.float64)
    A[1, :, 3] = 0.0
    show(LA.det(A).abs() > 1e-12, LA.slogdet(A).sign, LA.slogdet(A).logabsdet.isinf())
    sign, logabs = torch.slogdet(A[0])
    show((sign * logabs.exp() - torch.det(A[0])).abs() < 1e-12, torch.logdet(A[0] @ A[0].T))
    show(torch.logdet(-torch.eye(3)), torch.logdet(torch.zeros(2, 2)), torch.det(torch.zeros(2, 2)))
    inv, info = LA.inv_ex(A)
    show(info, info.dtype, (inv[0] @ A[0] - torch.eye(4, dtype=torch.float64)).abs().max() < 1e-12)
    show_outcome(show, lambda: LA.inv(A))
    show_outcome(show, lambda: LA.inv_ex(A, check_errors=True))
    show_outcome(show, lambda: torch.inverse(torch.zeros(2, 2)))
    for p in (None, "fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2):
        show(p, LA.cond(A[0], p=p), LA.cond(A[1], p=p) > 1e12 if p in (None, "fro", "nuc", math.inf, 1, 2) else None)
    show(LA.matrix_rank(A), LA.matrix_rank(A, atol=1e-8), LA.matrix_rank(A[1], rtol=0.2),
         LA.matrix_rank(A[0] + A[0].T, hermitian=True))
    show(LA.matrix_rank(A[1], tol=1e-10))
    show_outcome(show, lambda: LA.det(torch.ones(2, 2, dtype=torch.int64)))
    show_outcome(show, lambda: LA.det(torch.ones(2, 3)))
    show_outcome(show, lambda: LA.inv(torch.ones(3, dtype=torch.float64)))
    show_outcome(show, lambda: LA.slogdet(torch.ones(2, 3, 3, dtype=torch.int32)))
    show_outcome(show, lambda: LA.cond(torch.ones(2, 3), p=1))
    show_outcome(show, lambda: torch.matmul(A, torch.ones(2, 4, 4, dtype=torch.float64)))
    show(LA.det(torch.zeros(0, 0)), LA.slogdet(torch.zeros(2, 0, 0)), LA.inv(torch.zeros(0, 0)).shape)


def _small_tools(lib, show):
    """vander (increasing, N, torch.vander vs linalg.vander), multi_dot's chain orders with vector ends, cross
    (dim, broadcasting, the legacy default dim) and vecdot of real and complex vectors, with their refusals."""
    torch = lib
    LA = torch.linalg
    torch.manual_seed(338)
    x = torch.tensor([1.0, 2.0, 3.0, 5.0], dtype=torch.float64)
    show(LA.vander(x), LA.vander(x, N=2), torch.vander(x), torch.vander(x, N=3, increasing=True))
    show(LA.vander(torch.tensor([1, 2, 3])).dtype, LA.vander(x.expand(2, 4)).shape)
    show_outcome(show, lambda: LA.vander(x, N=0))
    show_outcome(show, lambda: LA.vander(torch.tensor(2.0)))
    show_outcome(show, lambda: torch.vander(x.expand(2, 4)))
    mats = [torch.randn(10, 30, dtype=torch.float64), torch.randn(30, 5, dtype=torch.float64),
            torch.randn(5, 60, dtype=torch.float64)]
    md = LA.multi_dot(mats)
    show(md.shape, (md - mats[0] @ mats[1] @ mats[2]).abs().max() < 1e-10)
    v = torch.randn(10, dtype=torch.float64)
    w = torch.randn(60, dtype=torch.float64)
    show(LA.multi_dot([v, mats[0], mats[1], mats[2], w]).shape, LA.multi_dot([v, mats[0], mats[1]]).shape)
    show_outcome(show, lambda: LA.multi_dot([mats[0], mats[2]]))
    show_outcome(show, lambda: LA.multi_dot([mats[0], mats[1].float()]))
    show_outcome(show, lambda: LA.multi_dot([]))
    a = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    b = torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    show(LA.cross(a, b), torch.cross(a, b, dim=1), LA.cross(a, b[:1]), LA.cross(a.T, b.T, dim=0))
    show(torch.cross(torch.ones(3, 3), torch.eye(3)))
    show_outcome(show, lambda: LA.cross(torch.ones(2, 2), torch.ones(2, 2)))
    show_outcome(show, lambda: LA.cross(a, b.double()))
    show_outcome(show, lambda: LA.cross(torch.ones(2, 3), torch.ones(3, 3)))
    z = torch.tensor([1 + 2j, 3 - 1j])
    u = torch.tensor([2 - 1j, 1j])
    show(LA.vecdot(z, u), torch.vdot(z, u), (z.conj() * u).sum(), LA.vecdot(a, b), LA.vecdot(a, b, dim=0))
    show(LA.vecdot(torch.ones(2, 3), torch.ones(3)), torch.inner(a, b))
    show_outcome(show, lambda: LA.vecdot(torch.ones(3), torch.ones(4)))
    show_outcome(show, lambda: LA.vecdot(torch.ones(3), torch.ones(3, dtype=torch.float64)))


def _gradients_float64(lib, show):
    """Float64 gradients of scalar losses through solve, inv, det, slogdet, eigh, svd, qr, cholesky, lstsq and
    matrix_exp, with each result's grad_fn name, and one checked by gradcheck."""
    torch = lib
    LA = torch.linalg
    S = _spd(torch, 3, 339)
    torch.manual_seed(339)
    A = (torch.randn(3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)).requires_grad_()
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    losses = {
        "solve": lambda: LA.solve(A, b).pow(2).sum(),
        "inv": lambda: LA.inv(A).trace(),
        "det": lambda: LA.det(A),
        "slogdet": lambda: LA.slogdet(A).logabsdet,
        "eigh": lambda: LA.eigh(A @ A.T).eigenvalues.max(),
        "eigvalsh": lambda: LA.eigvalsh(A + A.T).pow(2).sum(),
        "svd": lambda: LA.svd(A).S.sum(),
        "svdvals": lambda: LA.svdvals(A)[0],
        "qr": lambda: LA.qr(A).R.diagonal().abs().log().sum(),
        "cholesky": lambda: LA.cholesky(A @ A.T + torch.eye(3, dtype=torch.float64)).diagonal().log().sum(),
        "lstsq": lambda: LA.lstsq(A, b[:, None]).solution.sum(),
        "matrix_exp": lambda: LA.matrix_exp(0.3 * A).sum(),
        "pinv": lambda: LA.pinv(A).sum(),
        "matrix_norm": lambda: LA.matrix_norm(A, ord=2) + LA.matrix_norm(A, ord="nuc"),
        "cond": lambda: LA.cond(A),
        "logdet": lambda: torch.logdet(A @ A.T),
        "lu_solve": lambda: LA.lu_solve(*LA.lu_factor(A), b[:, None]).sum(),
        "solve_triangular": lambda: LA.solve_triangular(A.triu(), b[:, None], upper=True).sum(),
        "cholesky_inverse": lambda: torch.cholesky_inverse(LA.cholesky(S + A @ A.T)).sum(),
        "multi_dot": lambda: LA.multi_dot([A, A.T, b]).sum(),
    }
    for name, loss_fn in losses.items():
        A.grad, b.grad = None, None
        loss = loss_fn()
        loss.backward()
        show(name, loss, loss.grad_fn.name(), A.grad, b.grad)
    Sg = S.clone().requires_grad_()
    vals, vecs = LA.eigh(Sg)
    show(vals.grad_fn.name(), vecs.grad_fn.name())
    (vals[-1] + (vecs[:, -1] ** 4).sum()).backward()
    show(Sg.grad)
    ok = torch.autograd.gradcheck(lambda M: LA.solve(M, torch.ones(3, dtype=torch.float64)), (A.detach().requires_grad_(),))
    show(ok, torch.autograd.gradgradcheck(lambda M: LA.det(M), (A.detach().requires_grad_(),)))


def _gradient_refusals(lib, show):
    """The gradient failures users meet: eigh's eigenvectors at a repeated eigenvalue (inf/NaN gradients), svd's
    and eig's gauge-dependent losses, det of a singular matrix, cholesky/inv of a singular input in backward,
    float32 warnings, and the same losses written gauge-invariantly."""
    torch = lib
    LA = torch.linalg
    I3 = torch.eye(3, dtype=torch.float64, requires_grad=True)
    vals, vecs = LA.eigh(I3)
    vecs.sum().backward()
    show(vals, I3.grad)
    D = torch.diag(torch.tensor([1.0, 1.0, 2.0], dtype=torch.float64)).requires_grad_()
    vals, vecs = LA.eigh(D)
    (vecs[:, :2] @ vecs[:, :2].T).trace().backward()
    show(D.grad)
    D.grad = None
    LA.eigvalsh(D).sum().backward()
    show(D.grad)
    torch.manual_seed(340)
    M = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    U, S, Vh = LA.svd(M, full_matrices=False)
    show_outcome(show, lambda: U.sum().backward(retain_graph=True))
    M.grad = None
    (U @ torch.diag(S) @ Vh).sum().backward(retain_graph=True)
    show(M.grad)
    M.grad = None
    U.abs().sum().backward()
    show(M.grad.shape)
    Uf, Sf, Vhf = LA.svd(M, full_matrices=True)
    show_outcome(show, lambda: Uf.abs().sum().backward())
    C = torch.randn(3, 2, dtype=torch.complex128, requires_grad=True)
    Uc, Sc, Vhc = LA.svd(C, full_matrices=False)
    show_outcome(show, lambda: Uc.real.sum().backward(retain_graph=True))
    (Uc.abs() ** 2).sum().backward()
    show(C.grad.abs().max() < 1e-12)
    N = torch.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=torch.float64, requires_grad=True)
    w, V = LA.eig(N)
    show_outcome(show, lambda: V[0, 0].real.backward(retain_graph=True))
    N.grad = None
    w.real.sum().backward()
    show(N.grad)
    singular = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=torch.float64, requires_grad=True)
    LA.slogdet(singular).logabsdet.backward()
    show(singular.grad)
    x = torch.tensor([[1.0, 2.0], [2.0, 4.0 + 1e-17]], dtype=torch.float64, requires_grad=True)
    show_outcome(show, lambda: LA.inv(x))
    z = torch.zeros(2, 2, dtype=torch.float64, requires_grad=True)
    s = LA.svdvals(z)
    s.sum().backward()
    show(s, z.grad)
    P = torch.eye(2, dtype=torch.float64, requires_grad=True)
    Lc = LA.cholesky(P)
    Lc.sum().backward()
    show(P.grad)


PROGRAMS = [
    _gram_schmidt_qr,
    _householder_by_hand,
    _lu_partial_pivoting,
    _eigen_iterations,
    _iterative_solvers,
    _least_squares_three_ways,
    _matrix_functions_series,
    _determinants_and_inverses,
    _small_tools,
    _gradients_float64,
    _gradient_refusals,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
