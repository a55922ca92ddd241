"""A fifteenth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: numerical-methods and data-pipeline notebooks. A spectral
derivative with rfft/irfft under every norm mode (Parseval), a low-pass filter differentiated back to the signal,
fftshift/ifftshift over chosen dims and hfft/ihfft; circular and linear 2-d convolution by rfft2/irfft2 against
rolls and conv2d, with the kernel's gradient; a Markov chain's stationary distribution by linalg.eig, the spectral
radius differentiated through eigvals and the gauge-dependent loss refused; a linear ODE by matrix_exp and its
sensitivity, negative matrix powers, multi_dot, cond under every norm, matrix_rank with tolerances and
householder_product from geqrf; polynomial fits through every lstsq driver (residuals, rank, singular values as
each reports them), batched and broadcast right-hand sides, pinv with hermitian/atol/rtol; svd_lowrank/pca_lowrank;
interpolation tables by searchsorted/bucketize (a table with a NaN gap) integrated by trapz/cumulative_trapezoid;
assert_close's full reports (complex, integer, bool, NaN, inf, nested containers, bfloat16); datasets built from
parts (namedtuple collation, StackDataset by name, ConcatDataset, nested Subset, ChainDataset, random_split by
fractions, default_convert); DataLoader epochs (seeded reshuffles with drop_last, WeightedRandomSampler without
replacement, a BatchSampler, a padding collate_fn, an IterableDataset whose __len__ lies); summarised prints of
large tensors under set_printoptions; and Gauss-Legendre/Clenshaw-Curtis quadrature. Everything is drawn from
the seeded global generator (or seeded generators), which is torch's; values are compared to a tolerance (matrix
products, LAPACK and the FFTs are not bit for bit). Results of ``ihfft`` and of ``ifft`` of a real signal are
shown through ``resolve_conj()`` (torch returns them lazily conjugated, and its ``numpy()`` refuses that).

Differences these programs found, now fixed (``tests/ops/test_program15_findings_vs_torch.py``):
- ``linalg.eig`` of a matrix holding an infinity or a NaN leaked NumPy's ``LinAlgError`` where torch says
  "torch.linalg.eig: input tensor should not contain infs or NaNs." (``eigvals`` leaked it too: torch gives NaN
  eigenvalues); a real ``out=`` was refused in a cast's words, not "Expected eigenvalues to be safely castable";
- ``linalg.lstsq`` read ``other`` by its shape alone: torch refuses an ``other`` of more dimensions than ``input``
  or of two fewer (a 1-d ``b`` beside a batch of matrices), broadcasts an ``other`` of one dimension fewer as a
  batch of vectors first (``lstsq(A_batch, B)`` with one matrix ``B`` is refused unless the batch matches its
  rows), words a vector's length mismatch as ``other.size(-1)``, and shapes ``rank``/``singular_values`` by
  ``input``'s batch alone;
- ``assert_close`` compared bfloat16 exactly (torch: rtol 0.016, atol 1e-5), and its report of an unexpected
  exception lacked torch's closing sentences;
- ``trapezoid``/``trapz``/``cumulative_trapezoid`` of a 0-d tensor failed with ``tuple index out of range``;
- ``searchsorted``/``bucketize`` with NaN among the boundaries followed NumPy's NaN-last order, where torch's
  binary search goes right past a NaN;
- ``linalg.matrix_exp`` of empty matrices failed in NumPy's reshape.

Left: torch's ``ihfft`` and ``ifft``/``ifftn`` of real input return lazily conjugated tensors (``is_conj()``
True, ``numpy()`` refused) where tracegrad's are plain; eigenvectors of ``linalg.eig`` can differ from torch's
by a sign (MKL's geev and NumPy's OpenBLAS geev normalise them differently; eigenvalues agree); MKL's ``gelsy`` on an
exactly rank-deficient matrix is not repeatable run to run in torch, so the program uses gelsd/gelss there; ``eigvals``
of a NaN matrix gives NaN where MKL returns what its balancing left (or crashes); ``torch._lowrank`` is missing.
"""

from __future__ import annotations

import collections
import math

import numpy as np
import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _spectral_derivative(lib, show):
    """Spectral methods on a periodic grid: rfft/irfft under each norm mode (Parseval's identity), a spectral
    derivative by multiplying with i*k, a low-pass filter whose energy is differentiated back to the signal,
    fftshift/ifftshift over chosen dims, and hfft/ihfft of a Hermitian spectrum."""
    torch = lib
    torch.manual_seed(150)
    n = 32
    x = torch.linspace(0, 2 * math.pi, n + 1, dtype=torch.float64)[:-1]
    u = torch.sin(3 * x) + 0.5 * torch.cos(5 * x)
    for norm in ("backward", "forward", "ortho"):
        U = torch.fft.rfft(u, norm=norm)
        back = torch.fft.irfft(U, n=n, norm=norm)
        show(norm, U.shape, U.dtype, U[3].real.round(decimals=6), U[5].real.round(decimals=6),
             (back - u).abs().max() < 1e-12)
    U = torch.fft.rfft(u, norm="ortho")
    energy_time = (u ** 2).sum()
    energy_freq = 2 * (U.abs() ** 2).sum() - U[0].abs() ** 2 - U[-1].abs() ** 2
    show(energy_time, energy_freq, torch.isclose(energy_time, energy_freq))
    k = torch.fft.rfftfreq(n, d=1.0 / n)
    du = torch.fft.irfft(1j * k * torch.fft.rfft(u), n=n)
    exact = 3 * torch.cos(3 * x) - 2.5 * torch.sin(5 * x)
    show(k[:6], (du - exact).abs().max() < 1e-10, du.dtype)

    signal = (torch.sin(2 * x) + 0.3 * torch.randn(n, dtype=torch.float64)).float().requires_grad_()
    spectrum = torch.fft.rfft(signal)
    mask = (torch.arange(spectrum.shape[0]) < 4).to(spectrum.real.dtype)
    smooth = torch.fft.irfft(spectrum * mask, n=n)
    loss = (smooth - signal).pow(2).mean()
    loss.backward()
    show(spectrum.grad_fn.name(), smooth.grad_fn.name(), loss, signal.grad[:6])

    grid = torch.arange(12.0).reshape(3, 4)
    show(torch.fft.fftshift(grid), torch.fft.fftshift(grid, dim=1), torch.fft.ifftshift(torch.fft.fftshift(grid, 0), 0))
    f2 = torch.fft.fftfreq(6, d=0.1)
    show(f2, torch.fft.fftshift(f2), torch.fft.fftfreq(5, dtype=torch.float64))
    half = torch.fft.ihfft(torch.tensor([1.0, 2.0, 3.0, 2.0])).resolve_conj()
    show(half, torch.fft.hfft(half, n=4), torch.fft.hfft(torch.tensor([1.0, 2.0j, 3.0]), norm="forward"))
    show_outcome(show, lambda: torch.fft.rfft(torch.randn(4, dtype=torch.complex64)))
    show_outcome(show, lambda: torch.fft.rfft(u, norm="unitary"))
    show_outcome(show, lambda: torch.fft.ihfft(torch.ones(3, dtype=torch.complex64)))


def _fft_convolution_2d(lib, show):
    """Circular 2-d convolution by the convolution theorem (rfft2 of a zero-padded kernel, irfft2 with s=)
    checked against a sum of rolls, the kernel's gradient through both routes, a linear (non-circular)
    convolution by padding to full size against conv2d, fftn/ifftn over chosen dims, and dtype promotion."""
    torch = lib
    F = torch.nn.functional
    torch.manual_seed(151)
    img = torch.randn(6, 8, dtype=torch.float64)
    kernel = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    padded = F.pad(kernel, (0, 8 - 3, 0, 6 - 3))
    via_fft = torch.fft.irfft2(torch.fft.rfft2(img) * torch.fft.rfft2(padded), s=img.shape)
    via_rolls = sum(kernel[i, j] * torch.roll(img, shifts=(i, j), dims=(0, 1)) for i in range(3) for j in range(3))
    show(via_fft.shape, via_fft.dtype, via_fft.grad_fn.name(), (via_fft - via_rolls).abs().max() < 1e-12)
    target = torch.randn(6, 8, dtype=torch.float64)
    g_fft, = torch.autograd.grad(((via_fft - target) ** 2).sum(), kernel)
    g_rolls, = torch.autograd.grad(((via_rolls - target) ** 2).sum(), kernel)
    show(g_fft, (g_fft - g_rolls).abs().max() < 1e-10)

    H, W = 6 + 3 - 1, 8 + 3 - 1
    full = torch.fft.irfft2(torch.fft.rfft2(img, s=(H, W)) * torch.fft.rfft2(kernel, s=(H, W)), s=(H, W))
    conv = F.conv2d(img[None, None], kernel.flip(0, 1)[None, None], padding=2)[0, 0]
    show(full.shape, conv.shape, (full - conv).abs().max() < 1e-12)

    vol = torch.randn(2, 4, 5)
    spec = torch.fft.fftn(vol, dim=(-2, -1), norm="ortho")
    show(spec.dtype, spec.shape, torch.fft.ifftn(spec, dim=(-2, -1), norm="ortho").real.sub(vol).abs().max() < 1e-5)
    show(torch.fft.fft2(torch.arange(4).reshape(2, 2)).dtype, torch.fft.rfft(torch.ones(4, dtype=torch.float64)).dtype)
    show(torch.fft.fft(torch.tensor([1.0, 2.0, 3.0]), n=5), torch.fft.ifft(torch.tensor([1.0, 2.0, 3.0]), n=2).resolve_conj())
    show(torch.fft.rfftn(torch.ones(2, 3, 4)).shape, torch.fft.irfftn(torch.ones(2, 3, 3, dtype=torch.complex64)).shape)
    show_outcome(show, lambda: torch.fft.irfft2(torch.fft.rfft2(img), s=(6,)))
    show_outcome(show, lambda: torch.fft.fft(torch.ones(4, dtype=torch.float16)))
    show_outcome(show, lambda: torch.fft.fft2(torch.ones(4)))


def _nonsymmetric_eigen(lib, show):
    """A Markov chain's stationary distribution from linalg.eig of the transposed transition matrix, eigvals of a
    rotation, the spectral radius differentiated back to a non-symmetric matrix (a complex gradient made real), a
    gauge-invariant loss on eigenvectors, and the error a gauge-dependent loss raises."""
    torch = lib
    torch.manual_seed(152)
    P = torch.tensor([[0.9, 0.075, 0.025], [0.15, 0.8, 0.05], [0.25, 0.25, 0.5]], dtype=torch.float64)
    vals, vecs = torch.linalg.eig(P.T)
    show(vals.dtype, vecs.dtype, vals.shape, vecs.shape)
    i = torch.argmin((vals - 1).abs())
    pi = vecs[:, i].real
    pi = pi / pi.sum()
    show(vals[i], pi, pi @ P)
    show(torch.linalg.eigvals(torch.tensor([[0.0, -2.0], [2.0, 0.0]])))

    A = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    ev = torch.linalg.eigvals(A)
    radius = ev.abs().max()
    radius.backward()
    show(ev.grad_fn.name(), radius.grad_fn.name(), A.grad.dtype, A.grad)
    A.grad = None
    w, V = torch.linalg.eig(A)
    invariant = (V.abs() ** 2).sum() + w.real.sum()
    invariant.backward()
    show(w.grad_fn.name(), A.grad)
    reconstruction = V @ torch.diag(w) @ torch.linalg.inv(V)
    show((reconstruction.real - A).abs().max() < 1e-10, reconstruction.imag.abs().max() < 1e-10)
    _, V2 = torch.linalg.eig(A)
    show_outcome(show, lambda: V2.real.sum().backward())
    show_outcome(show, lambda: torch.linalg.eig(torch.ones(2, 3)))
    show_outcome(show, lambda: torch.linalg.eigvals(torch.ones(3, 3, dtype=torch.int64)))
    show(torch.linalg.eigvals(torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.complex128)))
    broken = P.clone()
    broken[0, 1] = float("nan")
    show_outcome(show, lambda: torch.linalg.eig(broken))
    show_outcome(show, lambda: torch.linalg.eigvals(P, out=torch.empty(3, dtype=torch.float64)))
    show_outcome(show, lambda: torch.linalg.eig(P, out=(torch.empty(3, dtype=torch.complex128), torch.empty(3, 3))))


def _matrix_functions(lib, show):
    """A linear ODE x' = A x solved by matrix_exp(A t) against many Euler steps, its sensitivity to A, negative
    matrix powers, multi_dot of a chain with vector ends, condition numbers under each norm, matrix_rank with
    tolerances, and Q rebuilt from geqrf's reflectors by householder_product."""
    torch = lib
    LA = torch.linalg
    torch.manual_seed(153)
    A = torch.tensor([[0.0, 1.0], [-4.0, -0.4]], dtype=torch.float64, requires_grad=True)
    x0 = torch.tensor([1.0, 0.0], dtype=torch.float64)
    t = 1.5
    xt = LA.matrix_exp(A * t) @ x0
    x = x0.clone()
    steps = 3000
    for _ in range(steps):
        x = x + (t / steps) * (A.detach() @ x)
    show(xt, (xt - x).abs().max() < 1e-2, xt.grad_fn.name())
    xt.pow(2).sum().backward()
    show(A.grad, torch.matrix_exp(torch.zeros(2, 2)), LA.matrix_exp(torch.eye(2) * 1j).dtype)
    show(LA.matrix_exp(torch.zeros(3, 0, 0)).shape, LA.matrix_exp(torch.zeros(0, 2, 2)).shape)

    M = torch.tensor([[2.0, 1.0], [1.0, 3.0]])
    show(LA.matrix_power(M, -2), LA.matrix_power(M, -2) @ LA.matrix_power(M, 2), LA.matrix_power(M, 0))
    show_outcome(show, lambda: LA.matrix_power(torch.tensor([[1, 2], [3, 4]]), -1))
    show_outcome(show, lambda: LA.matrix_power(torch.ones(2, 3), 2))

    a, B, C, d = torch.randn(5), torch.randn(5, 4), torch.randn(4, 3), torch.randn(3)
    chained = LA.multi_dot([a, B, C, d])
    show(chained.shape, torch.isclose(chained, a @ B @ C @ d), LA.multi_dot([B, C]).shape)
    show_outcome(show, lambda: LA.multi_dot([B]))
    show_outcome(show, lambda: LA.multi_dot([B, B]))

    K = torch.tensor([[1.0, 2.0, 0.0], [0.0, 1.0, 1e-3], [0.5, 0.0, 1.0]], dtype=torch.float64)
    show([round(LA.cond(K, p).item(), 6) for p in (None, 2, -2, "fro", "nuc", float("inf"), 1)])
    show(LA.cond(torch.tensor([[1.0, 0.0], [0.0, 0.0]])), LA.cond(torch.tensor([[1.0, 0.0], [0.0, 0.0]]), "fro"))
    low = torch.randn(6, 2, dtype=torch.float64) @ torch.randn(2, 6, dtype=torch.float64)
    noisy = low + 1e-6 * torch.randn(6, 6, dtype=torch.float64)
    show(LA.matrix_rank(low), LA.matrix_rank(noisy), LA.matrix_rank(noisy, atol=1e-4), LA.matrix_rank(noisy, rtol=1e-3))
    sym = low @ low.T
    show(LA.matrix_rank(sym, hermitian=True), LA.matrix_rank(torch.zeros(3, 3)), LA.matrix_rank(torch.ones(2, 4, 4)))

    G = torch.randn(5, 3, dtype=torch.float64)
    qr_packed, tau = torch.geqrf(G)
    Q = LA.householder_product(qr_packed, tau)
    R = qr_packed.triu()[:3]
    show(Q.shape, tau.shape, (Q @ R - G).abs().max() < 1e-12, (Q.T @ Q - torch.eye(3, dtype=torch.float64)).abs().max() < 1e-12)
    show(Q.abs(), LA.qr(G).Q.abs())
    show_outcome(show, lambda: LA.householder_product(qr_packed, torch.ones(4, dtype=torch.float64)))


def _least_squares_drivers(lib, show):
    """Polynomial fitting with vander through every lstsq driver (solution, residuals, rank and singular values
    as each driver reports them), a rank-deficient design, batched right-hand sides, the gradient of a fit's
    error to the data, pinv with hermitian=True and tolerances, and lstsq's refusals."""
    torch = lib
    LA = torch.linalg
    torch.manual_seed(154)
    xs = torch.linspace(-1, 1, 9, dtype=torch.float64)
    ys = 1.0 - 2.0 * xs + 0.5 * xs ** 3 + 0.01 * torch.randn(9, dtype=torch.float64)
    V = LA.vander(xs, N=4)
    show(V[:2], torch.vander(xs, N=4, increasing=True)[:2].flip(1))
    for driver in ("gels", "gelsy", "gelsd", "gelss"):
        res = LA.lstsq(V, ys[:, None], driver=driver)
        show(driver, res.solution.squeeze(1), res.residuals, res.rank, res.singular_values)
    res = LA.lstsq(V.float(), ys[:, None].float())
    show(res.solution.dtype, res.residuals.shape, res.rank, res.singular_values)
    deficient = torch.cat([V, V[:, :1] * 2], dim=1)
    for driver in ("gelsd", "gelss"):  # (MKL's gelsy on an exactly dependent column is not repeatable)
        res = LA.lstsq(deficient, ys[:, None], driver=driver)
        show(driver, res.rank, res.residuals, (deficient @ res.solution - ys[:, None]).norm())
    rhs = torch.stack([ys, ys.flip(0)], dim=1)
    batched = LA.lstsq(V.expand(3, 9, 4), rhs.expand(3, 9, 2))
    show(batched.solution.shape, batched.residuals.shape, batched.solution[0])
    shared = LA.lstsq(V[None], torch.stack([rhs, 2 * rhs]), driver="gelsd")
    show(shared.solution.shape, shared.residuals.shape, shared.rank, shared.singular_values.shape)
    show(LA.lstsq(V[None], ys[None]).solution.shape, LA.lstsq(V.expand(9, 9, 4), rhs).solution.shape)
    show_outcome(show, lambda: LA.lstsq(V.expand(3, 9, 4), rhs))
    show_outcome(show, lambda: LA.lstsq(V.expand(3, 9, 4), ys))
    show_outcome(show, lambda: LA.lstsq(V, rhs[None]))

    y_leaf = ys.clone().requires_grad_()
    coef = LA.lstsq(V, y_leaf[:, None]).solution
    fit_error = (V @ coef).squeeze(1).sub(y_leaf).pow(2).sum()
    fit_error.backward()
    show(coef.grad_fn.name(), fit_error, y_leaf.grad)

    S = torch.tensor([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 1e-9]], dtype=torch.float64)
    show(LA.pinv(S, hermitian=True), LA.pinv(S, hermitian=True, atol=1e-6), LA.pinv(S, rtol=1e-3))
    show((LA.pinv(V) @ ys - LA.lstsq(V, ys[:, None]).solution.squeeze(1)).abs().max() < 1e-10)
    show_outcome(show, lambda: LA.lstsq(V, ys[:, None], driver="gelsx"))
    show_outcome(show, lambda: LA.lstsq(V, torch.ones(8, 1, dtype=torch.float64)))
    show_outcome(show, lambda: LA.lstsq(V, ys[:, None].float()))
    show_outcome(show, lambda: LA.lstsq(V, ys))


def _low_rank_approximations(lib, show):
    """Randomised low-rank factorisations: svd_lowrank against the exact SVD on a matrix of known rank plus
    noise (singular values, reconstruction error, with niter and M), pca_lowrank's centring against the
    covariance's eigenvalues, and the shapes and errors a notebook meets."""
    torch = lib
    torch.manual_seed(155)
    U0 = torch.linalg.qr(torch.randn(40, 5, dtype=torch.float64)).Q
    V0 = torch.linalg.qr(torch.randn(30, 5, dtype=torch.float64)).Q
    A = U0 @ torch.diag(torch.tensor([10.0, 5.0, 2.0, 1.0, 0.5], dtype=torch.float64)) @ V0.T
    A = A + 1e-3 * torch.randn(40, 30, dtype=torch.float64)
    exact = torch.linalg.svdvals(A)[:5]
    U, S, V = torch.svd_lowrank(A, q=5, niter=2)
    show(U.shape, S.shape, V.shape, S, (S - exact).abs().max() < 1e-2)
    show(((U * S) @ V.T - A).norm() / A.norm())
    U, S, V = torch.svd_lowrank(A, q=8)
    show(S[:5], (S[:5] - exact).abs().max() < 1e-6)
    mean = A.mean(dim=0, keepdim=True)
    U, S, V = torch.svd_lowrank(A, q=5, M=mean.expand_as(A))
    show(S[:3])

    X = torch.randn(50, 3, dtype=torch.float64) @ torch.tensor([[3.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.1]],
                                                                dtype=torch.float64) + 4.0
    U, S, V = torch.pca_lowrank(X, q=3)
    cov_eig = torch.linalg.eigvalsh(torch.cov(X.T)).flip(0)
    show(S, S ** 2 / (X.shape[0] - 1), cov_eig, V.shape)
    projected = (X - X.mean(dim=0)) @ V[:, :2]
    show(projected.shape, projected.var(dim=0))
    _, S_raw, _ = torch.pca_lowrank(X, q=3, center=False)
    show(S_raw)
    show_outcome(show, lambda: torch.pca_lowrank(X, q=5))
    show_outcome(show, lambda: torch.svd_lowrank(torch.ones(3, 4, dtype=torch.int64), q=2))


def _interpolation_tables(lib, show):
    """A lookup table read by linear interpolation (searchsorted, clamp, gather) differentiated to the table's
    values and the query points, bucketize's int32 output and right=True, batched searchsorted with side= and
    sorter=, integration of the interpolant by trapz/trapezoid/cumulative_trapezoid, and the errors."""
    torch = lib
    torch.manual_seed(156)
    xp = torch.tensor([0.0, 0.5, 1.5, 2.0, 4.0])
    fp = torch.tensor([1.0, 2.0, 0.0, -1.0, 3.0], requires_grad=True)
    q = torch.tensor([-1.0, 0.0, 0.25, 1.5, 3.0, 5.0], requires_grad=True)

    def interp(x, xp, fp):
        idx = torch.searchsorted(xp, x.detach(), right=True).clamp(1, len(xp) - 1)
        x0, x1 = xp[idx - 1], xp[idx]
        y0, y1 = fp[idx - 1], fp[idx]
        w = ((x - x0) / (x1 - x0)).clamp(0, 1)
        return y0 + w * (y1 - y0), idx

    y, idx = interp(q, xp, fp)
    show(idx, y, y.grad_fn.name())
    y.sum().backward()
    show(fp.grad, q.grad)

    edges = torch.tensor([0.0, 1.0, 2.0, 3.0])
    vals = torch.tensor([[-0.5, 1.0, 2.5], [3.0, 3.5, 0.0]])
    show(torch.bucketize(vals, edges), torch.bucketize(vals, edges, right=True, out_int32=True))
    show(torch.bucketize(2.0, edges), torch.bucketize(torch.tensor(1.0), edges).shape)
    rows = torch.tensor([[0.0, 1.0, 2.0], [10.0, 20.0, 30.0]])
    show(torch.searchsorted(rows, torch.tensor([[1.0, 1.5], [25.0, 5.0]]), side="right"))
    unsorted = torch.tensor([3.0, 1.0, 2.0])
    show(torch.searchsorted(unsorted, torch.tensor([1.5, 2.5]), sorter=torch.argsort(unsorted)))
    gappy = torch.tensor([0.0, 1.0, float("nan"), 3.0, 4.0])
    show(torch.searchsorted(gappy, torch.tensor([0.5, 2.5, 3.5, float("nan")])),
         torch.bucketize(torch.tensor([0.5, 3.5]), gappy, right=True))

    xx = torch.linspace(0, 4, 41)
    yy, _ = interp(xx, xp, fp.detach())
    show(torch.trapz(yy, xx), torch.trapezoid(yy, dx=0.1), torch.cumulative_trapezoid(yy, xx)[::10])
    show(torch.trapz(torch.stack([yy, 2 * yy]), dx=0.1, dim=1), torch.trapezoid(torch.ones(3, 0)))
    show_outcome(show, lambda: torch.bucketize(vals, edges.reshape(2, 2)))
    show_outcome(show, lambda: torch.searchsorted(rows, torch.tensor([[1.0]] * 3)))
    show_outcome(show, lambda: torch.searchsorted(edges, vals, side="middle"))
    show_outcome(show, lambda: torch.searchsorted(edges, vals, side="left", right=True))
    show_outcome(show, lambda: torch.trapezoid(yy, xx[:10]))
    show_outcome(show, lambda: torch.trapezoid(yy.sum()))
    show_outcome(show, lambda: torch.cumulative_trapezoid(yy.sum()))


def _assert_close_reports(lib, show):
    """torch.testing.assert_close in a numerical test suite: the full report for complex values, integer and
    boolean mismatches, NaN with and without equal_nan, infinities, many mismatched elements with the worst
    index, mismatches inside nested containers (the path of the item), Python scalars, a tensor against a NumPy
    array, and the argument errors."""
    torch = lib
    testing = torch.testing

    def report(*args, **kwargs):
        try:
            testing.assert_close(*args, **kwargs)
            show("equal")
        except Exception as e:  # noqa: BLE001 - the report is what the notebook shows
            show(type(e).__name__, str(e))

    z = torch.tensor([1 + 1j, 2 - 1j], dtype=torch.complex64)
    report(z, z + 1e-3j)
    report(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 5]), rtol=0, atol=1)
    report(torch.tensor([True, False]), torch.tensor([True, True]))
    nan = torch.tensor([1.0, float("nan")])
    report(nan, nan.clone())
    report(nan, nan.clone(), equal_nan=True)
    report(torch.tensor([float("inf"), 1.0]), torch.tensor([float("-inf"), 1.0]))
    grid = torch.arange(12.0).reshape(3, 4)
    report(grid, grid + torch.linspace(0, 0.1, 12).reshape(3, 4))
    report({"w": [grid, torch.ones(2)], "b": torch.zeros(1)}, {"w": [grid, torch.tensor([1.0, 1.5])], "b": torch.zeros(1)})
    report((1.0, 2), (1.0 + 1e-3, 2))
    report(0.1 + 0.2, 0.3)
    report(torch.ones(2), np.ones(2))
    report(torch.ones(2), np.ones(2), allow_subclasses=False)
    report(torch.ones(2, dtype=torch.float64), torch.ones(2), check_dtype=False)
    report(torch.tensor(1.0), torch.tensor([1.0]))
    report(torch.ones(2, 3).t(), torch.ones(3, 2), check_stride=True)
    report(torch.ones(2), torch.ones(2) * 1.01, rtol=0.02, atol=0.0)
    report(torch.ones(2), torch.ones(2), rtol=0.1)
    report([1, 2], [1, 2, 3])
    report(torch.ones(3), torch.ones(3) * 2, msg="weights diverged")
    half_weights = torch.tensor([1.0, 2.0, 3.0]).to(torch.bfloat16)
    report(half_weights, half_weights * 1.01)
    report(half_weights, half_weights * 1.1)
    report(half_weights.float(), (half_weights * 1.01).float())


def _dataset_composition(lib, show):
    """Building a data set from parts: namedtuple samples collated into a namedtuple of batches, StackDataset
    with names, ConcatDataset offsets, a Subset of a Subset, ChainDataset of streams, random_split by fractions
    whose remainders go round-robin (and the warning for an empty split), default_convert, and the refusals."""
    torch = lib
    data = torch.utils.data
    torch.manual_seed(157)
    Sample = collections.namedtuple("Sample", ["features", "label", "weight"])

    class Readings(data.Dataset):
        def __init__(self, n, offset=0):
            self.n, self.offset = n, offset

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            if i >= self.n:
                raise IndexError(i)
            return Sample(torch.full((2,), float(i + self.offset)), i % 2, 0.5 * i)

    ds = Readings(7)
    batch = data.default_collate([ds[0], ds[3], ds[5]])
    show(type(batch).__name__, batch.features, batch.label, batch.weight, batch._fields)
    named = data.StackDataset(x=data.TensorDataset(torch.arange(4.0)), y=torch.arange(4) * 2)
    show(named[2], len(named), next(iter(data.DataLoader(named, batch_size=3))))
    show_outcome(show, lambda: data.StackDataset(torch.arange(3), torch.arange(4)))
    show_outcome(show, lambda: data.StackDataset(torch.arange(3), y=torch.arange(3)))

    both = data.ConcatDataset([ds, Readings(3, offset=100)])
    show(len(both), both[8].features, both[-1].features, both.cumulative_sizes)
    show_outcome(show, lambda: both[-11])
    inner = data.Subset(ds, [6, 4, 2, 0])
    outer = data.Subset(inner, [1, 3])
    show(len(outer), outer[0].features, outer[1].label, [s.label for s in outer])

    class Stream(data.IterableDataset):
        def __init__(self, start, stop):
            self.start, self.stop = start, stop

        def __iter__(self):
            return iter(range(self.start, self.stop))

    chain = data.ChainDataset([Stream(0, 3), Stream(10, 12)])
    show(list(chain), [b.tolist() for b in data.DataLoader(chain, batch_size=2)])
    show_outcome(show, lambda: data.ConcatDataset([Stream(0, 2)]))
    show_outcome(show, lambda: list(data.ChainDataset([ds])))

    parts = data.random_split(range(11), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(7))
    show([len(p) for p in parts], [list(p) for p in parts])
    parts = data.random_split(range(3), [0.5, 0.45, 0.05], generator=torch.Generator().manual_seed(8))
    show([len(p) for p in parts])
    show(data.default_convert([np.array([1, 2]), (np.float64(1.5), "s")]), data.default_convert({"a": np.zeros(2)}))
    show_outcome(show, lambda: data.default_collate([None, None]))
    show_outcome(show, lambda: data.default_collate([Sample(1, 2, 3), Sample(1, 2, 3)[:2]]))
    show(data.default_collate([{"a": {"b": 1.5}}, {"a": {"b": 2.5}}]), data.default_collate([b"x", b"y"]))


def _dataloader_epochs(lib, show):
    """A training-style loop over DataLoader epochs: a seeded generator reshuffling each epoch with drop_last,
    WeightedRandomSampler without replacement, a BatchSampler driving the loader, a collate_fn that pads
    variable-length sequences into a dict with a mask, batch_size=None, an IterableDataset whose __len__ lies,
    and the option errors."""
    torch = lib
    data = torch.utils.data
    torch.manual_seed(158)
    X = torch.arange(20.0).reshape(10, 2)
    y = torch.arange(10) % 3
    ds = data.TensorDataset(X, y)
    gen = torch.Generator().manual_seed(11)
    loader = data.DataLoader(ds, batch_size=4, shuffle=True, drop_last=True, generator=gen)
    show(len(loader))
    for epoch in range(2):
        show(epoch, [yb.tolist() for _, yb in loader], [xb[:, 0].tolist() for xb, _ in loader][:1])
    show(gen.initial_seed())

    counts = torch.bincount(y)
    weights = (1.0 / counts.float())[y]
    sampler = data.WeightedRandomSampler(weights, num_samples=6, replacement=False,
                                         generator=torch.Generator().manual_seed(12))
    show(list(sampler), len(sampler), sorted(set(list(sampler))).__len__())
    batches = data.BatchSampler(data.SubsetRandomSampler(range(7), generator=torch.Generator().manual_seed(13)),
                                batch_size=3, drop_last=False)
    show([b.tolist() for _, b in data.DataLoader(ds, batch_sampler=batches)], len(batches))

    sequences = [torch.arange(1, n + 1) for n in (3, 1, 4, 2)]

    def pad_batch(items):
        lengths = torch.tensor([len(s) for s in items])
        out = torch.zeros(len(items), int(lengths.max()), dtype=torch.long)
        for row, s in enumerate(items):
            out[row, : len(s)] = s
        return {"tokens": out, "mask": torch.arange(out.shape[1]) < lengths[:, None], "lengths": lengths}

    for b in data.DataLoader(sequences, batch_size=2, collate_fn=pad_batch):
        show(b["tokens"], b["mask"], b["lengths"])
    show([[t.tolist() for t in item] for item in data.DataLoader(ds, batch_size=None, sampler=[3, 1])])

    class Liar(data.IterableDataset):
        def __iter__(self):
            return iter(torch.arange(5.0))

        def __len__(self):
            return 2

    lying = data.DataLoader(Liar(), batch_size=1)
    show(len(lying), [b.item() for b in lying])
    show_outcome(show, lambda: data.DataLoader(ds, prefetch_factor=2))
    show_outcome(show, lambda: data.DataLoader(ds, batch_sampler=batches, batch_size=2))
    show_outcome(show, lambda: data.DataLoader(ds, batch_sampler=batches, drop_last=True))
    show_outcome(show, lambda: data.DataLoader(ds, batch_size=None, drop_last=True))
    show_outcome(show, lambda: data.DataLoader(Liar(), sampler=[0, 1]))
    show_outcome(show, lambda: data.WeightedRandomSampler(weights, num_samples=20, replacement=False).__iter__().__next__())
    show_outcome(show, lambda: data.BatchSampler(range(3), batch_size=0, drop_last=False))


def _printing_large_tensors(lib, show):
    """Printing big results in a notebook: summarised 1-d, 2-d and 3-d tensors under threshold/edgeitems,
    narrow linewidths, integer, boolean and complex summaries, float64 with a chosen precision and sci_mode, a
    summarised tensor that requires grad, and the options restored by profile="default"."""
    torch = lib
    torch.manual_seed(159)
    try:
        show(repr(torch.arange(2000)))
        show(repr(torch.linspace(0, 1, 1500)))
        show(repr(torch.arange(1200.0).reshape(30, 40) / 7))
        show(repr(torch.arange(1331).reshape(11, 11, 11)))
        torch.set_printoptions(threshold=20, edgeitems=2)
        show(repr(torch.arange(30).reshape(5, 6)), repr(torch.arange(25) > 12))
        show(repr(torch.arange(24.0).reshape(2, 3, 4)))
        show(repr(torch.complex(torch.arange(30.0), -torch.arange(30.0))))
        torch.set_printoptions(edgeitems=1, linewidth=50)
        show(repr(torch.randn(4, 50, dtype=torch.float64)))
        torch.set_printoptions(profile="default", precision=8)
        show(repr(torch.tensor([math.pi, math.e, 1 / 3], dtype=torch.float64)))
        show(repr(torch.tensor([1e-9, 1.0, 1e9], dtype=torch.float64)))
        torch.set_printoptions(precision=3, sci_mode=True, threshold=6, edgeitems=2)
        w = torch.linspace(-1, 1, 10).requires_grad_()
        show(repr(w), repr(w * 2), str(w.sum()))
        torch.set_printoptions(sci_mode=False, linewidth=30)
        show(repr(torch.tensor([1e-5, 123456.0, 3.0])), repr(torch.arange(8) * 1000000))
        torch.set_printoptions(profile="short")
        show(repr(torch.randn(3, 3)), repr(torch.randn(1001)))
    finally:
        torch.set_printoptions(profile="default", sci_mode=None, linewidth=80)
    show(repr(torch.tensor([1.5, 2.25])), torch._tensor_str.PRINT_OPTS.threshold)
    show(repr(torch.empty(0, 4)), repr(torch.zeros(1000, 0)), repr(torch.full((3, 400), -0.0)))


def _gauss_quadrature(lib, show):
    """Gauss-Legendre quadrature by Golub-Welsch (eigh of the Jacobi matrix), Clenshaw-Curtis weights by a cosine
    transform written with rfft, both integrating smooth functions, and the nodes' sensitivity to a scaled
    interval differentiated through eigh."""
    torch = lib
    n = 6
    k = torch.arange(1, n, dtype=torch.float64)
    beta = k / torch.sqrt(4 * k ** 2 - 1)
    J = torch.diag(beta, 1) + torch.diag(beta, -1)
    nodes, vecs = torch.linalg.eigh(J)
    weights = 2 * vecs[0] ** 2
    show(nodes, weights, weights.sum())
    for name, f, exact in (("x^10", lambda x: x ** 10, 2 / 11), ("exp", torch.exp, math.e - 1 / math.e),
                           ("cos", torch.cos, 2 * math.sin(1.0))):
        approx = (weights * f(nodes)).sum()
        show(name, approx, abs(approx.item() - exact) < 1e-6)

    N = 8
    theta = torch.arange(N + 1, dtype=torch.float64) * math.pi / N
    cheb = torch.cos(theta)
    fvals = torch.exp(cheb)
    extended = torch.cat([fvals, fvals[1:-1].flip(0)])
    coeffs = torch.fft.rfft(extended).real / N
    coeffs[0] /= 2
    coeffs[N] /= 2
    even = torch.arange(0, N + 1, 2)
    integral = (2 * coeffs[even] / (1 - even.to(torch.float64) ** 2)).sum()
    show(coeffs[:4], integral, abs(integral.item() - (math.e - 1 / math.e)) < 1e-8)

    scale = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    scaled_nodes = torch.linalg.eigvalsh(J * scale)
    integral = (weights * torch.sin(scaled_nodes) ** 2).sum()
    integral.backward()
    show(scaled_nodes.grad_fn.name(), integral, scale.grad)
    show(torch.linalg.eigh(J, UPLO="U").eigenvalues.sub(nodes).abs().max() < 1e-14)


PROGRAMS = [
    _spectral_derivative,
    _fft_convolution_2d,
    _nonsymmetric_eigen,
    _matrix_functions,
    _least_squares_drivers,
    _low_rank_approximations,
    _interpolation_tables,
    _assert_close_reports,
    _dataset_composition,
    _dataloader_epochs,
    _printing_large_tensors,
    _gauss_quadrature,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
