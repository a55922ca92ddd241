"""``torch.svd_lowrank`` / ``torch.pca_lowrank``: randomized low-rank SVD and PCA (Halko et al., 2009,
Algorithm 4.4), as in ``torch/_lowrank.py``: composites of dispatched ops (matmul, ``linalg.qr``, ``linalg.svd``),
so they are differentiable. The Gaussian sketch is drawn from tracegrad's default generator, whose stream differs
from PyTorch's: only results the sketch does not decide (e.g. the singular values when ``q`` >= the rank) match.
Sparse inputs (PyTorch's ``torch.sparse.mm`` path) are not supported: tracegrad has no sparse tensors.
"""

from __future__ import annotations

from .._tensor import Tensor


def _floating_dtype(A: Tensor):
    """``torch._linalg_utils.get_floating_dtype``: half/float/double stay, anything else maps to float32."""
    from .. import float16, float32, float64

    return A.dtype if A.dtype in (float16, float32, float64) else float32


def _minus_mean_product(A: Tensor, M: Tensor | None, X: Tensor) -> Tensor:
    """``(A - M) @ X`` without forming ``A - M`` (PyTorch keeps ``M`` apart so a sparse ``A`` stays sparse)."""
    from .. import matmul

    out = matmul(A, X)
    return out if M is None else out - matmul(M, X)


def get_approximate_basis(A: Tensor, q: int, niter: int | None = 2, M: Tensor | None = None) -> Tensor:
    """``Q`` with ``q`` orthonormal columns such that ``Q Q^H (A - M)`` approximates ``A - M``."""
    from .. import linalg, randn

    niter = 2 if niter is None else niter
    dtype = A.dtype if A.is_complex() else _floating_dtype(A)
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)
    Q = linalg.qr(_minus_mean_product(A, M, R)).Q
    # subspace iterations sharpen the basis towards the dominant singular vectors
    M_H = None if M is None else M.mH
    for _ in range(niter):
        Q = linalg.qr(_minus_mean_product(A.mH, M_H, Q)).Q
        Q = linalg.qr(_minus_mean_product(A, M, Q)).Q
    return Q


def _svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                 M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    from .. import linalg, matmul

    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # (sketch the taller orientation)
        A = A.mH
        if M is not None:
            M = M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = matmul(Q.mH, A)
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter=niter, M=None)


PUBLIC = {"svd_lowrank": svd_lowrank, "pca_lowrank": pca_lowrank}
METHODS: dict = {}
