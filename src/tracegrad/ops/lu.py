"""LU factorisation with partial pivoting, as LAPACK's ``getrf`` computes it (kernel helpers, NumPy only).

PyTorch's det, slogdet and solve save ``LU`` and ``pivots`` from ``getrf`` and their backward formulas solve
with them, so tracegrad reproduces that factorisation: the pivot of each column is its first entry of largest
magnitude, the multipliers are scaled by the pivot's reciprocal (``getrf2``), ``pivots`` are 1-based int32
row interchanges, and a zero pivot leaves its column unscaled (``info`` > 0, no error).
"""

from __future__ import annotations

import numpy as np

from .aten_vec import mkl_fuses_multiply_adds


def _trailing_update(a22: np.ndarray, l: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``a22 - outer(l, u)`` as PyTorch's LAPACK computes it on this processor: fused (one rounding) or not.

    The two differ where it matters most: with fused multiply-adds a singular matrix's last pivot is often a
    rounding residue (2e-16) rather than exactly 0, and det's gradient then takes another path."""
    if mkl_fuses_multiply_adds():
        return _fused_update(a22, l, u)
    return a22 - l[..., :, None] * u[..., None, :]


def _fused_update(a22: np.ndarray, l: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``a22 - outer(l, u)`` rounded once per entry, as a fused multiply-add computes it. The product is exact
    in the wider type (float32 in float64; float64 in long double, whose 64-bit mantissa leaves a rounding
    difference only in rare ties)."""
    if a22.dtype.kind == "c":  # complex: the same widening for both parts (astype(longdouble) drops one)
        wide = np.complex128 if a22.dtype == np.complex64 else np.clongdouble
    else:
        wide = np.float64 if a22.dtype == np.float32 else np.longdouble
    prod = l[..., :, None].astype(wide) * u[..., None, :].astype(wide)
    return (a22.astype(wide) - prod).astype(a22.dtype)


def _pivot_size(col: np.ndarray) -> np.ndarray:
    """The magnitude i?amax compares: |x| for real x, |Re x| + |Im x| (not the modulus) for complex x."""
    if col.dtype.kind == "c":
        return np.abs(col.real) + np.abs(col.imag)
    return np.abs(col)


def lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(LU, pivots, info) of a batch of m x n matrices: L unit lower (below the diagonal) and U upper packed
    in one array, ``pivots`` 1-based int32 of length min(m, n), ``info`` the 1-based first zero pivot (0 if
    none) per matrix. Vectorised over the batch; one step per column."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    count = int(np.prod(batch, dtype=np.int64))
    lu = np.array(a, copy=True).reshape((count, m, n))
    pivots = np.empty((count, k), dtype=np.int32)
    info = np.zeros(count, dtype=np.int32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # (complex products round by the memory layout NumPy's loops see: those keep the batch's layouts)
        if count == 1 and lu.dtype.kind != "c" and not mkl_fuses_multiply_adds():
            info[0] = _factor_one(lu[0], pivots[0])
        else:
            _factor_batch(lu, pivots, info)
    return lu.reshape(batch + (m, n)), pivots.reshape(batch + (k,)), info.reshape(batch)


def _factor_one(lu: np.ndarray, pivots: np.ndarray) -> int:
    """``_factor_batch`` of one real matrix, in place, with the same arithmetic (the same ufuncs on the same
    values, the reciprocal and trailing update unfused) in a third of its calls per column: a Python loop over
    the columns is the cost of a small factorisation. Returns ``info``."""
    m, n = lu.shape
    tiny, info = np.finfo(lu.dtype).tiny, 0
    for j in range(min(m, n)):
        p = j + int(np.argmax(_pivot_size(lu[j:, j])))  # argmax: the first of equal sizes, as i?amax
        pivots[j] = p + 1
        if p != j:
            lu[[j, p]] = lu[[p, j]]
        pivot = lu[j:j + 1, j]  # (an array: its reciprocal takes the ufunc's complex division, as the batch's)
        if pivot[0] == 0:
            info = info or j + 1  # (its column stays unscaled)
        elif j + 1 < m:
            if abs(pivot[0]) < tiny:  # (getrf2 divides where the reciprocal is not representable)
                np.divide(lu[j + 1:, j], pivot, out=lu[j + 1:, j])
            else:
                np.multiply(lu[j + 1:, j], np.divide(1, pivot), out=lu[j + 1:, j])
        if j + 1 < m and j + 1 < n:
            lu[j + 1:, j + 1:] -= np.multiply.outer(lu[j + 1:, j], lu[j, j + 1:])
    return info


def _factor_batch(lu: np.ndarray, pivots: np.ndarray, info: np.ndarray) -> None:
    """LU of each of a batch of matrices (count, m, n) in place, vectorised over the batch: one step per column."""
    count, m, n = lu.shape
    every = np.arange(count)
    for j in range(min(m, n)):
        p = j + np.argmax(_pivot_size(lu[:, j:, j]), axis=1)  # argmax: the first of equal sizes, as i?amax
        pivots[:, j] = p + 1
        swap = p != j
        if swap.any():
            b, r = every[swap], p[swap]
            rows_j, rows_p = lu[b, j].copy(), lu[b, r].copy()
            lu[b, j], lu[b, r] = rows_p, rows_j
        pivot = lu[:, j, j]
        zero = pivot == 0
        info[(info == 0) & zero] = j + 1
        if j + 1 < m:
            # getrf2 multiplies by the reciprocal when it is representable (|pivot| >= sfmin), else divides
            tiny = np.abs(pivot) < np.finfo(lu.dtype).tiny
            scale = np.where(tiny, 1, 1 / np.where(zero, 1, pivot)).astype(lu.dtype)
            col = lu[:, j + 1:, j] * scale[:, None]
            col = np.where(tiny[:, None] & ~zero[:, None], lu[:, j + 1:, j] / pivot[:, None], col)
            lu[:, j + 1:, j] = np.where(zero[:, None], lu[:, j + 1:, j], col)
            if j + 1 < n:
                lu[:, j + 1:, j + 1:] = _trailing_update(lu[:, j + 1:, j + 1:], lu[:, j + 1:, j], lu[:, j, j + 1:])


def pivots_parity(pivots: np.ndarray) -> np.ndarray:
    """det(P) of the row interchanges: -1 for an odd number of actual swaps, else 1 (PyTorch's lu_det_P)."""
    swaps = (pivots != np.arange(1, pivots.shape[-1] + 1, dtype=pivots.dtype)).sum(axis=-1)
    return 1 - 2 * (swaps % 2)


def permute_rows(x: np.ndarray, pivots: np.ndarray, inverse: bool) -> np.ndarray:
    """Apply the interchanges to the rows of ``x`` (batch broadcast with ``pivots``'s): P^T x in getrs's
    forward order, or P x (``inverse``) in reverse order."""
    batch = np.broadcast_shapes(x.shape[:-2], pivots.shape[:-1])
    count = int(np.prod(batch, dtype=np.int64))
    out = np.array(np.broadcast_to(x, batch + x.shape[-2:]), copy=True).reshape((count,) + x.shape[-2:])
    piv = np.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape(count, pivots.shape[-1]) - 1
    every = np.arange(out.shape[0])
    order = range(piv.shape[1] - 1, -1, -1) if inverse else range(piv.shape[1])
    for j in order:
        p = piv[:, j]
        rows_j, rows_p = out[every, j].copy(), out[every, p].copy()
        out[every, j], out[every, p] = rows_p, rows_j
    return out.reshape(batch + x.shape[-2:])
