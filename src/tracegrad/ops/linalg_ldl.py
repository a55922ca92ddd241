"""``torch.linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve``: the Bunch–Kaufman LDLᵀ (LDLᴴ) factorisation
of a symmetric (Hermitian) indefinite matrix, in LAPACK's compact form, as torch returns it from ``?sytrf``.

tracegrad depends on NumPy only (no SciPy, whose ``scipy.linalg.ldl`` returns the factors unpacked anyway), so
LAPACK's unblocked algorithm is written out here for the lower triangle (torch factors with ``uplo='L'``):
``dsytf2``/``zsytf2`` for symmetric matrices and ``zhetf2`` for Hermitian ones, with the same pivot tests
(``alpha = (1 + sqrt(17)) / 8``, first maximum wins, |re| + |im| for complex magnitudes), the same
interchanges and updates, and the same ``ipiv`` encoding: 1-based, positive for a 1×1 block, ``-p`` twice for a
2×2 block whose second row was swapped with row ``p``. The blocked ``?sytrf`` makes the same pivot choices
(its panels use the same columns, updated later), so results agree with torch to rounding. The solve is
``?sytrs``/``?hetrs``. torch has no derivative for either operator: a backward through them raises its error.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ..return_types import out_type, return_type
from ._util import refuse_half
from .linalg import _check_float, _check_square, _f_contiguous, _out_of, _tname
from .registry import defop_without_derivative

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve", "LINALG_LDL"]

_LdlFactor = return_type("linalg_ldl_factor", ["LD", "pivots"])
_LdlFactorEx = return_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0  # Bunch–Kaufman's growth bound


def _cabs1(x) -> np.ndarray:
    """BLAS's complex magnitude for pivoting (|re| + |im|); the absolute value for reals."""
    x = np.asarray(x)
    return np.abs(x.real) + np.abs(x.imag) if x.dtype.kind == "c" else np.abs(x)


def _conj(x, hermitian: bool):
    return np.conj(x) if hermitian else x


def _choose_pivot(a: np.ndarray, k: int, hermitian: bool) -> tuple[int, int, bool]:
    """(kp, kstep, singular) for column ``k`` of the trailing matrix, by LAPACK's tests."""
    n = a.shape[0]
    absakk = abs(a[k, k].real) if hermitian else float(_cabs1(a[k, k]))
    if k + 1 < n:
        column = _cabs1(a[k + 1:, k])
        imax = k + 1 + int(np.argmax(column))
        colmax = float(column[imax - k - 1])
    else:
        imax, colmax = k, 0.0
    if max(absakk, colmax) == 0.0 or math.isnan(absakk):
        return k, 1, True
    if absakk >= _ALPHA * colmax:
        return k, 1, False
    # the largest off-diagonal magnitude in row/column imax of the trailing matrix
    row = _cabs1(a[imax, k:imax])
    rowmax = float(row.max())
    if imax + 1 < n:
        rowmax = max(rowmax, float(_cabs1(a[imax + 1:, imax]).max()))
    if absakk >= _ALPHA * colmax * (colmax / rowmax):
        return k, 1, False
    diag = abs(a[imax, imax].real) if hermitian else float(_cabs1(a[imax, imax]))
    if diag >= _ALPHA * rowmax:
        return imax, 1, False
    return imax, 2, False


def _interchange(a: np.ndarray, k: int, kk: int, kp: int, kstep: int, hermitian: bool) -> None:
    """Swap rows and columns ``kk`` and ``kp`` of the trailing lower triangle (columns from ``k``)."""
    if kp + 1 < a.shape[0]:
        a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    between = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = _conj(a[kp, kk + 1:kp], hermitian)
    a[kp, kk + 1:kp] = _conj(between, hermitian)
    if hermitian:
        a[kp, kk] = np.conj(a[kp, kk])
    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if hermitian:  # zhetf2 keeps the diagonal real
        a[kk, kk], a[kp, kp] = a[kk, kk].real, a[kp, kp].real
        if kstep == 2:
            a[k, k] = a[k, k].real
    if kstep == 2:
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _update_1x1(a: np.ndarray, k: int, hermitian: bool) -> None:
    """Rank-1 update of the trailing matrix (?syr / ?her), then column k scaled to hold L."""
    if hermitian:
        d11 = 1.0 / a[k, k].real
    else:
        d11 = 1.0 / a[k, k]
    x = a[k + 1:, k]
    scaled = (-d11) * _conj(x, hermitian)
    trailing = a[k + 1:, k + 1:]
    lower = np.tril(np.ones(trailing.shape, dtype=bool))
    trailing[lower] += np.multiply.outer(x, scaled)[lower]
    if hermitian:
        np.fill_diagonal(trailing, trailing.diagonal().real)
    a[k + 1:, k] = x * d11


def _update_2x2(a: np.ndarray, k: int, hermitian: bool) -> None:
    """The trailing matrix updated with the 2×2 block's inverse; columns k, k+1 then hold L."""
    n = a.shape[0]
    if hermitian:
        d = abs(a[k + 1, k])
        d11 = a[k + 1, k + 1].real / d
        d22 = a[k, k].real / d
        tt = 1.0 / (d11 * d22 - 1.0)
        d21 = a[k + 1, k] / d
        d = tt / d
    else:
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        t = 1.0 / (d11 * d22 - 1.0)
        d21 = t / d21
    for j in range(k + 2, n):
        if hermitian:
            wk = d * (d11 * a[j, k] - d21 * a[j, k + 1])
            wkp1 = d * (d22 * a[j, k + 1] - np.conj(d21) * a[j, k])
            a[j:, j] = a[j:, j] - a[j:, k] * np.conj(wk) - a[j:, k + 1] * np.conj(wkp1)
        else:
            wk = d21 * (d11 * a[j, k] - a[j, k + 1])
            wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
            a[j:, j] = a[j:, j] - a[j:, k] * wk - a[j:, k + 1] * wkp1
        a[j, k] = wk
        a[j, k + 1] = wkp1
        if hermitian:
            a[j, j] = a[j, j].real


def _sytf2_lower(m: np.ndarray, hermitian: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """One matrix: (LD with a zero upper triangle, 1-based pivots, info)."""
    a = np.tril(m).astype(m.dtype, copy=True)
    n = a.shape[0]
    ipiv = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0
    while k < n:
        kp, kstep, singular = _choose_pivot(a, k, hermitian)
        if singular:
            info = info or k + 1  # the first exactly singular block; the column is left as it is
            if hermitian:
                a[k, k] = a[k, k].real
        else:
            kk = k + kstep - 1
            if kp != kk:
                _interchange(a, k, kk, kp, kstep, hermitian)
            elif hermitian:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1 and k + 1 < n:
                _update_1x1(a, k, hermitian)
            elif kstep == 2 and k + 2 < n:
                _update_2x2(a, k, hermitian)
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return a, ipiv, info


def _factor_kernel(a: np.ndarray, hermitian: bool = False, check_errors: bool = False):
    name = "torch.linalg.ldl_factor_ex"
    _check_square(name, a)
    _check_float(name, a)
    if a.dtype == np.float16:
        raise NotImplementedError("\"ldl_factor_kernel_cpu\" not implemented for 'Half'")
    hermitian = hermitian and a.dtype.kind == "c"
    batch = a.shape[:-2]
    n = a.shape[-1]
    LD = np.zeros(a.shape, dtype=a.dtype)
    pivots = np.zeros(batch + (n,), dtype=np.int32)
    info = np.zeros(batch, dtype=np.int32)
    for index in np.ndindex(*batch):
        LD[index], pivots[index], info[index] = _sytf2_lower(a[index], hermitian)
    if check_errors and info.any():
        raise RuntimeError(_unknown_error(name, int(info.reshape(-1)[np.flatnonzero(info)[0]])))
    return _f_contiguous(LD), pivots, info


def _unknown_error(name: str, code: int) -> str:
    # torch reports a singular block through an internal assertion (its error check has no case for it)
    return ('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp":'
            f"1642, please report a bug to PyTorch. {name}: Unknown error code: {code}.")


_linalg_ldl_factor_ex = defop_without_derivative(
    "linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> "
    "(Tensor LD, Tensor pivots, Tensor info)", _factor_kernel, nondiff_outputs=(1, 2))


# ---- the solve ---------------------------------------------------------------------------------------------


def _sytrs_lower(ld: np.ndarray, ipiv: np.ndarray, b: np.ndarray, hermitian: bool) -> np.ndarray:
    """Solve A X = B for one matrix from its factorisation (LAPACK's ?sytrs / ?hetrs, lower)."""
    b = b.copy()
    n = ld.shape[0]
    k = 0
    while k < n:  # L D Y = B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.multiply.outer(ld[k + 1:, k], b[k])
            b[k] = b[k] * (1.0 / (ld[k, k].real if hermitian else ld[k, k]))
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            if k + 2 < n:
                b[k + 2:] -= np.multiply.outer(ld[k + 2:, k], b[k])
                b[k + 2:] -= np.multiply.outer(ld[k + 2:, k + 1], b[k + 1])
            akm1k = ld[k + 1, k]
            akm1 = ld[k, k] / _conj(akm1k, hermitian)
            ak = ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = b[k] / _conj(akm1k, hermitian)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # Lᵀ X = Y (Lᴴ)
        if ipiv[k] > 0:
            if k + 1 < n:
                b[k] -= _conj(ld[k + 1:, k], hermitian) @ b[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k + 1 < n:
                b[k] -= _conj(ld[k + 1:, k], hermitian) @ b[k + 1:]
                b[k - 1] -= _conj(ld[k + 1:, k - 1], hermitian) @ b[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _batch_mismatch(a: tuple, b: tuple) -> RuntimeError | None:
    """torch's broadcasting error for the batch shapes (``a``: B's, ``b``: LD's), or None if they broadcast."""
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            dim = max(len(a), len(b)) - i
            return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                                f"non-singleton dimension {dim}")
    return None


def _solve_kernel(ld: np.ndarray, pivots: np.ndarray, b: np.ndarray, hermitian: bool = False) -> np.ndarray:
    name = "torch.linalg.ldl_solve"
    _check_square(name, ld)
    _check_float(name, ld)
    if b.dtype != ld.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_tname(b.dtype)} and A "
                           f"of type {_tname(ld.dtype)} instead.")
    if b.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(b.ndim, 1)}, "
                         f"{max(b.ndim, 1) - 1}], but got -2)")
    n = ld.shape[-1]
    if n != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b matrix is "
                           f"{b.shape[-2]} by {b.shape[-1]}")
    if pivots.shape != ld.shape[:-1]:
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape [{', '.join(map(str, pivots.shape))}] instead")
    if pivots.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {_tname(pivots.dtype)}")
    error = _batch_mismatch(b.shape[:-2], ld.shape[:-2])
    if error is not None:
        raise error
    if pivots.size and (pivots == 0).any():  # (the lower bound checked first)
        raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| >= 1. Did you properly pass the "
                           "result of ldl_factor?")
    if pivots.size and np.abs(pivots).max() > n:
        raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). Did you properly "
                           "pass the result of ldl_factor?")
    refuse_half("ldl_solve_kernel_cpu", b)  # (after the pivots' values, as torch)
    hermitian = hermitian and ld.dtype.kind == "c"
    batch = np.broadcast_shapes(b.shape[:-2], ld.shape[:-2])
    lds = np.broadcast_to(ld, batch + ld.shape[-2:])
    pivs = np.broadcast_to(pivots, batch + pivots.shape[-1:])
    bs = np.broadcast_to(b, batch + b.shape[-2:])
    out = np.empty(batch + b.shape[-2:], dtype=b.dtype)
    for index in np.ndindex(*batch):
        out[index] = _sytrs_lower(lds[index], pivs[index].astype(np.int64), bs[index], hermitian)
    return _f_contiguous(out)


_linalg_ldl_solve = defop_without_derivative(
    "linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor", _solve_kernel,
    differentiable=("LD", "B"))


# ---- the public functions ----------------------------------------------------------------------------------


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out=None):  # noqa: N803
    """(LD, pivots, info): the compact Bunch–Kaufman factorisation, ``info > 0`` for an exactly singular block."""
    if out is not None:
        return _out_of(_linalg_ldl_factor_ex, (A, hermitian, check_errors), out, (0, 1, 2), _LdlFactorEx)
    return _LdlFactorEx(tuple(_linalg_ldl_factor_ex(A, hermitian=hermitian, check_errors=check_errors)))


def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None):  # noqa: N803
    """(LD, pivots); an exactly singular block raises, in torch's words."""
    if out is not None:
        from ..backend.dtypes import int32
        from .variants import check_out_count

        check_out_count(2, out, "linalg_ldl_factor")
        LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian, out=(*out, A.new_empty((0,), dtype=int32)))
    else:
        LD, pivots, info = _linalg_ldl_factor_ex(A, hermitian=hermitian)
    if bool(info.any()):
        codes = info._data.reshape(-1)
        raise RuntimeError(_unknown_error("torch.linalg.ldl_factor", int(codes[np.flatnonzero(codes)[0]])))
    return out_type(_LdlFactor)(tuple(out)) if out is not None else _LdlFactor((LD, pivots))


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out=None) -> Tensor:  # noqa: N803
    """X with A X = B, from ``ldl_factor``'s results."""
    if out is not None:
        return _linalg_ldl_solve(LD, pivots, B, hermitian=hermitian, out=out)
    return _linalg_ldl_solve(LD, pivots, B, hermitian=hermitian)


LINALG_LDL = {"ldl_factor": ldl_factor, "ldl_factor_ex": ldl_factor_ex, "ldl_solve": ldl_solve}
