"""More of ``torch.linalg``: LU factorisation and solves, lstsq, matrix_exp, householder_product, and the
composites built on them (tensorinv, tensorsolve, vander, cond).

Backward rules follow PyTorch's FunctionsManual (linalg_lu_backward, linalg_lu_solve_LU, lstsq through pinv,
the block-matrix Fréchet derivative of exp, householder_product_backward), written with dispatched ops so that
gradients are differentiable again and record PyTorch's nodes. Composites call the same operators as PyTorch's
C++ composites, so their graphs have PyTorch's nodes by construction.
"""

from __future__ import annotations

import math

import numpy as np

from .._strides import contiguous_as_torch
from .._tensor import Tensor
from ..return_types import out_type, return_type
from ._jvp import check_tangent_size, minus, or_zero, plus, recording, zero_product
from ._util import refuse_half
from .bfloat16_in_float import seen_dtype
from .linalg import (
    _FLOAT_DOUBLE_OR_COMPLEX,
    LinAlgError,
    _batch_prefix,
    _check_float,
    _check_square,
    _column_major,
    _f_contiguous,
    _linalg_solve_ex,
    _out_of,
    _tname,
    linalg_inv_ex,
    linalg_lu_solve,
    linalg_pinv,
    linalg_solve,
    linalg_solve_triangular,
    matrix_norm,
    pinv_backward,
)
from .linalg import (
    svdvals_composite as _svdvals,
)
from .lu import lu_factor as _getrf
from .lu import permute_rows
from .registry import defop
from .shape_extra import _broadcast_shape
from .unary import unsupported

_LuFactor = return_type("linalg_lu_factor", ["LU", "pivots"])
_LuFactorEx = return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_Lu = return_type("linalg_lu", ["P", "L", "U"])
_LuUnpack = return_type("lu_unpack", ["P", "L", "U"])
_SolveEx = return_type("linalg_solve_ex", ["result", "info"])
_Lstsq = return_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


# ---- LU factorisation --------------------------------------------------------------------------------------


def _zero_pivot_message(name: str, a: np.ndarray, info: np.ndarray) -> str:
    first = int(np.flatnonzero(info.reshape(-1))[0])
    i = int(info.reshape(-1)[first])
    return (f"{name}: {_batch_prefix(a, first)}U[{i},{i}] is zero and using it on lu_solve would result in a "
            "division by zero. If you still want to perform the factorization, consider calling "
            "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _lu_checks(name: str, a: np.ndarray, pivot: bool) -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(a.shape)} instead")
    # (no Half or BFloat16 kernel either: torch dispatches on the dtype before the pivot check)
    if a.dtype.kind not in "fc" or a.dtype.char == "e" or seen_dtype(a) != a.dtype:
        raise unsupported("lu_cpu", a)
    if not pivot:  # PyTorch's CPU backend (LAPACK getrf) always pivots
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _lu_factor_ex_kernel(a, pivot=True, check_errors=False):
    # torch names this check after the old torch.lu_factor
    _lu_checks("torch.lu_factor", a, pivot)
    lu, pivots, info = _getrf(a)
    if check_errors and info.any():
        raise RuntimeError(_zero_pivot_message("torch.linalg.lu_factor_ex", a, info))
    return _f_contiguous(lu), pivots, info


def _unpack(lu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L, U) of a packed factorisation: L unit lower m x k, U upper k x n."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = np.tril(lu[..., :, :k], -1)
    L[..., range(k), range(k)] = 1
    return L, np.triu(lu[..., :k, :])


def _perm_matrix(pivots: np.ndarray, m: int, dtype) -> np.ndarray:
    """P with A = P L U: the interchanges applied in reverse order to the identity's rows."""
    eye = np.broadcast_to(np.eye(m, dtype=dtype), pivots.shape[:-1] + (m, m))
    if pivots.shape[-1] < m:  # wide A: the rows past min(m, n) are never pivot rows
        pivots = np.concatenate([pivots, np.broadcast_to(np.arange(pivots.shape[-1] + 1, m + 1, dtype=pivots.dtype),
                                                         pivots.shape[:-1] + (m - pivots.shape[-1],))], -1)
    return permute_rows(eye, pivots, inverse=True)


def lu_unpack_backward(gL: Tensor, gU: Tensor, m: int, n: int) -> Tensor:
    """PyTorch's lu_unpack_backward: L's strict lower part and U's upper part, padded to LU's m x n."""
    if m == n:
        return gL.tril(-1) + gU.triu()
    if m < n:
        return _pad_cat(gL.tril(-1), n - m, -1) + gU.triu()
    return gL.tril(-1) + _pad_cat(gU.triu(), m - n, -2)


def _pad_cat(x: Tensor, extra: int, dim: int) -> Tensor:
    from .shape import cat

    shape = list(x.shape)
    shape[dim] = extra
    return cat([x, x.new_zeros(tuple(shape))], dim)


def _lu_unpack_kernel(lu, pivots, unpack_data=True, unpack_pivots=True):
    if lu.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {list(lu.shape)} "
                           "instead")
    if unpack_pivots and pivots.dtype != np.int32:  # (lu_factor's pivots, as LAPACK gives them)
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    m = lu.shape[-2]
    empty = np.empty((0,), dtype=lu.dtype)
    L, U = _unpack(lu) if unpack_data else (empty, empty)
    P = _perm_matrix(pivots, m, lu.dtype) if unpack_pivots else empty
    return P, L, U


def _lu_unpack_vjp(ctx, gL, gU):  # (P has no gradient, nor a place in the node's outputs)
    m, n = ctx.input_shapes[0][-2:]
    return lu_unpack_backward(gL, gU, m, n)


def _lu_unpack_jvp(args, outs, tangents):
    """derivatives.yaml's formulas: L's tangent is dLU's strictly lower part (its first m columns when LU is wide),
    U's its upper part (its first n rows when LU is tall); P has none. A rule of its own: the derived one would
    differentiate the VJP, which takes no gradient for P (see ``_lu_unpack_vjp``)."""
    dLU = tangents[0]
    if dLU is None:
        return None, None, None
    m, n = dLU.shape[-2], dLU.shape[-1]
    dL = dLU.tril(-1) if m >= n else dLU.narrow(-1, 0, m).tril(-1)
    check_tangent_size(outs[1], dL)  # (unpack_data=False: L and U are empty)
    dU = dLU.triu() if n >= m else dLU.narrow(-2, 0, n).triu()
    return None, dL, dU


lu_unpack = defop("lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) -> "
                  "(Tensor P, Tensor L, Tensor U)", _lu_unpack_kernel, vjp=_lu_unpack_vjp, jvp=_lu_unpack_jvp,
                  differentiable=("LU_data",), nondiff_outputs=(0,),
                  meta=("LU_data_sym_argsize_minus_2", "LU_data_sym_argsize_minus_1"))


def linalg_lu_backward(gL: Tensor, gU: Tensor, P: Tensor, L: Tensor, U: Tensor, pivot: bool) -> Tensor:
    """PyTorch's linalg_lu_backward: gA = P L^-H [L^H gL o 1_L + gU U^H o 1_U] U^-H (square case; the wide
    and tall cases add the blocks of U or L outside the square part)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    Lh, Uh = L.mH, U.mH
    if m == n:
        gA = Lh.matmul(gL).tril(-1) + gU.matmul(Uh).triu()
        gA = linalg_solve_triangular(U.mH, gA, upper=False, left=False)
        gA = linalg_solve_triangular(L.mH, gA, upper=True, left=True, unitriangular=True)
    elif m < n:
        from .shape import cat

        U1 = U.narrow(-1, 0, k)
        gA = (Lh.matmul(gL) - gU.triu().matmul(Uh)).tril(-1)
        gA = linalg_solve_triangular(U1.mH, gA, upper=False, left=False)
        gA = cat([gA + gU.narrow(-1, 0, k).triu(), gU.narrow(-1, k, n - k)], -1)
        gA = linalg_solve_triangular(L.mH, gA, upper=True, left=True, unitriangular=True)
    else:
        from .shape import cat

        L1 = L.narrow(-2, 0, k)
        gA = (gU.matmul(Uh) - Lh.matmul(gL.tril(-1))).triu()
        gA = linalg_solve_triangular(L1.mH, gA, upper=True, left=True, unitriangular=True)
        gA = cat([gA + gL.narrow(-2, 0, k).tril(-1), gL.narrow(-2, k, m - k)], -2)
        gA = linalg_solve_triangular(U.mH, gA, upper=False, left=False)
    return P.matmul(gA) if pivot else gA


def _lu_factor_ex_vjp(ctx, g, _g_pivots=None, _g_info=None):
    LU, pivots = ctx.saved_tensors
    (pivot,) = ctx.attrs
    P, L, U = lu_unpack(LU, pivots, True, pivot)
    m, n = LU.shape[-2:]
    k = min(m, n)
    return linalg_lu_backward(g.narrow(-1, 0, k), g.narrow(-2, 0, k), P, L, U, pivot)


def linalg_lu_jvp(dA: Tensor, P: Tensor, L: Tensor, U: Tensor, pivot: bool) -> tuple[Tensor, Tensor]:
    """PyTorch's linalg_lu_jvp: with dK = L1^-1 P^T dA1 U1^-1 (A1, L1, U1 the leading k x k blocks), dL1 = L1
    tril(dK, -1) and dU1 = triu(dK) U1; a wide A adds dU2 = L1^-1 P^T dA2 - tril(dK, -1) U2, a tall one dL2 =
    P^T dA2 U1^-1 - L2 triu(dK)."""
    from .shape import cat

    m, n = dA.shape[-2], dA.shape[-1]
    k = min(m, n)
    PdA = P.mT.matmul(dA) if pivot else dA
    PdA1 = PdA.narrow(-2, 0, k).narrow(-1, 0, k)
    L1 = L.narrow(-2, 0, k).narrow(-1, 0, k)
    U1 = U.narrow(-2, 0, k).narrow(-1, 0, k)
    dK = linalg_solve_triangular(L1, PdA1, upper=False, left=True, unitriangular=True)
    dK = linalg_solve_triangular(U1, dK, upper=True, left=False)
    dL1 = L1.matmul(dK.tril(-1))
    dU1 = dK.triu().matmul(U1)
    if m == n:
        return dL1, dU1
    if m < n:
        dU2 = (linalg_solve_triangular(L1, PdA.narrow(-1, k, n - k), upper=False, left=True, unitriangular=True)
               - dK.tril(-1).matmul(U.narrow(-1, k, n - k)))
        return dL1, cat([dU1, dU2], -1)
    dL2 = (linalg_solve_triangular(U1, PdA.narrow(-2, k, m - k), upper=True, left=False)
           - L.narrow(-2, k, m - k).matmul(dK.triu()))
    return cat([dL1, dL2], -2), dU1


def _lu_factor_ex_jvp(args, outs, tangents):
    """PyTorch's lu_factor_ex_jvp: linalg_lu_jvp on the unpacked factors, dU added in place into dL's top block
    (tall or square A) or dL into dU's left block (wide A)."""
    dA, pivot = tangents[0], args[1]
    if dA is None:
        return None, None, None
    LU, pivots = outs[0], outs[1]
    P, L, U = lu_unpack(LU, pivots, True, pivot)
    dL, dU = linalg_lu_jvp(dA, P, L, U, pivot)
    m, n = dA.shape[-2], dA.shape[-1]
    if m >= n:
        dL.narrow(-2, 0, n).add_(dU)
        return dL, None, None
    dU.narrow(-1, 0, m).add_(dL)
    return dU, None, None


linalg_lu_factor_ex = defop("linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> "
                            "(Tensor LU, Tensor pivots, Tensor info)", _lu_factor_ex_kernel, vjp=_lu_factor_ex_vjp,
                            jvp=_lu_factor_ex_jvp,
                            saves=("result0", "result1"), attrs=("pivot",), nondiff_outputs=(1, 2))


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out=None):
    """(LU, pivots, info): the packed factorisation P L U = A, as LAPACK's getrf returns it."""
    if out is not None:
        return _out_of(linalg_lu_factor_ex, (A, pivot, check_errors), out, (0, 1, 2), _LuFactorEx)
    return _LuFactorEx(tuple(linalg_lu_factor_ex(A, pivot=pivot, check_errors=check_errors)))


def lu_factor(A: Tensor, *, pivot: bool = True, out=None):
    """(LU, pivots); raises for an exactly singular matrix (a zero pivot), as PyTorch's composite does."""
    if out is not None:
        from .variants import check_out_count

        check_out_count(2, out, "linalg_lu_factor")
        LU, pivots, info = lu_factor_ex(A, pivot=pivot, out=(*out, A.new_empty((0,), dtype=_int32())))
    else:
        LU, pivots, info = linalg_lu_factor_ex(A, pivot=pivot)
    if bool(info.any()):
        raise RuntimeError(_zero_pivot_message("torch.linalg.lu_factor", A._data, info._data))
    return out_type(_LuFactor)(tuple(out)) if out is not None else _LuFactor((LU, pivots))


def _int32():
    from ..backend.dtypes import int32

    return int32


def _lu_kernel(a, pivot=True):
    _lu_checks("linalg.lu", a, pivot)
    lu, pivots, _ = _getrf(a)
    L, U = _unpack(lu)
    P = _perm_matrix(pivots, a.shape[-2], a.dtype)
    return contiguous_as_torch(P), contiguous_as_torch(L), contiguous_as_torch(U)  # (fresh, as torch's)


def _lu_vjp(ctx, gL, gU):  # (P has no gradient, nor a place in the node's outputs)
    L, P, U = ctx.saved_tensors  # in the order of ``saves``, PyTorch's
    return linalg_lu_backward(gL, gU, P, L, U, ctx.attrs[0])


def _lu_jvp(args, outs, tangents):
    """PyTorch's linalg_lu_jvp (P has no tangent)."""
    dA, pivot = tangents[0], args[1]
    if dA is None:
        return None, None, None
    P, L, U = outs
    return (None, *linalg_lu_jvp(dA, P, L, U, pivot))


linalg_lu = defop("linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)", _lu_kernel,
                  vjp=_lu_vjp, jvp=_lu_jvp, saves=("result1", "result0", "result2"), attrs=("pivot",),
                  nondiff_outputs=(0,))


def lu(A: Tensor, *, pivot: bool = True, out=None):
    """(P, L, U) with A = P L U."""
    if out is not None:
        return _out_of(linalg_lu, (A, pivot), out, (0, 1, 2), _Lu)
    return _Lu(tuple(linalg_lu(A, pivot=pivot)))


# ---- lu_solve with a gradient for LU -----------------------------------------------------------------------


def linalg_lu_solve_LU(gX: Tensor, LU: Tensor, pivots: Tensor, X: Tensor, left: bool, adjoint: bool) -> Tensor:
    """PyTorch's linalg_lu_solve_LU: the adjoint of X's JVP in (dL, dU), packed as one LU-shaped gradient."""
    P, L, U = lu_unpack(LU, pivots, True, left == adjoint)
    if left != adjoint:
        rhs = -(gX if left else gX.mH).matmul(X.mH if left else X)
        gR = linalg_solve_triangular(U.mH, rhs, upper=False)
        gL = linalg_solve_triangular(L.mH, gR.matmul(U.mH), upper=True, left=True, unitriangular=True).tril(-1)
        return gL + gR.triu()
    gR = -P.mT.matmul(X if left else X.mH).matmul(gX.mH if left else gX).matmul(P)  # P: a real permutation
    gR = linalg_solve_triangular(L.mH, gR, upper=True, left=False, unitriangular=True)
    gU = linalg_solve_triangular(U.mH, L.mH.matmul(gR), upper=False, left=False).triu()
    return gR.tril(-1) + gU


def linalg_lu_solve_jvp(X: Tensor, LU: Tensor, pivots: Tensor, dLU: Tensor, dB: Tensor, left: bool,
                        adjoint: bool) -> Tensor:
    """PyTorch's linalg_lu_solve_jvp: S = lu_solve(LU, dB) plus the factors' term, -U^-1 (dU + L^-1 dL U) X when
    left != adjoint, else from -op(X)^H P (L dU U^-1 + dL) L^-1 P^T."""
    S = linalg_lu_solve(LU, pivots, dB, left=left, adjoint=adjoint)
    if left != adjoint:
        R = linalg_solve_triangular(LU, dLU.tril(-1), upper=False, left=True, unitriangular=True)
        U = LU.triu()
        R = -linalg_solve_triangular(U, dLU.triu() + R.matmul(U), upper=True)
        return (R.matmul(X) if left else X.matmul(R.mH)) + S
    P, L, U = lu_unpack(LU, pivots)
    V = X.mH if left else X
    R = linalg_solve_triangular(U, L.matmul(dLU.triu()), upper=True, left=False) + dLU.tril(-1)
    R = linalg_solve_triangular(L, -V.matmul(P).matmul(R), upper=False, left=False, unitriangular=True).matmul(P.mT)
    return (R.mH if left else R) + S


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out=None):
    """(result, info) of A X = B, without raising for a singular A unless ``check_errors``."""
    if out is not None:
        return _out_of(_linalg_solve_ex, (A, B, left, check_errors), out, (0, 3), _SolveEx)
    result, _, _, info = _linalg_solve_ex(A, B, left=left, check_errors=False)
    if check_errors and bool(info.any()):
        index = int(np.flatnonzero(info._data.reshape(-1))[0])
        raise LinAlgError(f"torch.linalg.solve_ex: {_batch_prefix(A._data, index)}The solver failed because the "
                          "input matrix is singular.")
    return _SolveEx((result, info))


# ---- lstsq -------------------------------------------------------------------------------------------------


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_kernel(a, b, rcond=None, driver=None):
    if a.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if b.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if seen_dtype(a) != seen_dtype(b):  # (torch compares the two dtypes first)
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {_tname(a)} and other's dtype {_tname(b)}")
    if seen_dtype(a) not in _FLOAT_DOUBLE_OR_COMPLEX:  # (nor bfloat16, which a float32 copy may stand for)
        raise RuntimeError("This function doesn't handle types other than float and double")
    if not 0 <= a.ndim - b.ndim <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = _is_vector_rhs(a.shape, b.shape)
    bm = b[..., None] if vector else b
    if a.shape[-2] != bm.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if vector else -2})")
    driver = "gelsy" if driver is None else driver  # the CPU default
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    m, n = a.shape[-2:]
    batch = _lstsq_batch(a.shape, b.shape, bm.shape)
    b_b = np.broadcast_to(bm, batch + bm.shape[-2:])
    real = np.finfo(a.dtype).dtype
    if rcond is None:
        rcond = float(np.finfo(a.dtype).eps) * max(m, n)
    # The minimum-norm solution through the SVD, singular values below rcond * s_max dropped: what gelsy's
    # complete orthogonal factorisation and gelsd/gelss compute (gels assumes full rank and drops none). The
    # rank and singular values keep input's own batch shape, as torch's do.
    U, S, Vh = np.linalg.svd(a, full_matrices=False)
    keep = (rcond if driver != "gels" else 0.0) * S[..., :1] < S
    inv_s = np.where(keep, 1 / np.where(keep, S, 1), 0).astype(real)
    Uh_b = np.conj(np.swapaxes(U, -1, -2)) @ b_b
    x = np.conj(np.swapaxes(Vh, -1, -2)) @ (inv_s[..., None] * Uh_b)
    rank = keep.sum(-1).astype(np.int64)
    residuals = np.empty((0,), dtype=real)
    if m > n and driver != "gelsy" and (driver == "gels" or bool((rank == n).all())):
        residuals = (np.abs(np.broadcast_to(a, batch + a.shape[-2:]) @ x - b_b) ** 2).sum(-2).astype(real)
    if driver == "gels":
        rank = np.empty((0,), dtype=np.int64)
    singular_values = S.astype(real) if driver in ("gelsd", "gelss") else np.empty((0,), dtype=real)
    # LAPACK's drivers solve in place in a column-major buffer of max(m, n) rows; PyTorch returns the first n
    # rows of it, so its strides show that buffer
    buffer = np.swapaxes(np.empty(batch + (x.shape[-1], max(m, n)), a.dtype), -1, -2)[..., :n, :]
    buffer[...] = x
    return (buffer[..., 0] if vector else buffer), residuals, rank, singular_values


def _is_vector_rhs(a_shape: tuple, b_shape: tuple) -> bool:
    """ATen's linalg_solve_is_vector_rhs: other is a (batch of) vector(s) when it is 1-d or has input's shape
    without the last dimension."""
    return len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and tuple(b_shape) == tuple(a_shape[:-1]))


def _lstsq_batch(a_shape: tuple, b_shape: tuple, bm_shape: tuple) -> tuple:
    """The solution's batch shape as torch's lstsq forms it: other with one dimension fewer than input first
    broadcasts its leading dimensions against input's batch as if it were a batch of vectors (whether or not it is
    read as one), then the matrix it is read as broadcasts its own batch."""
    batch = tuple(a_shape[:-2])
    if len(b_shape) == len(a_shape) - 1:
        batch = _broadcast_shape(batch, b_shape[:-1])
    return _broadcast_shape(batch, bm_shape[:-2])


def _lstsq_vjp(ctx, gX, g_res=None, _g_rank=None, _g_sv=None):
    """PyTorch's linalg_lstsq_backward: X = pinv(A) B, so gA through pinv's backward and gB = pinv(A)^H gX;
    the residuals ||A X - B||^2 (whose derivative through X vanishes, A^H (A X - B) = 0) add 2 R gres."""
    A, B, X = ctx.saved_tensors
    need = ctx.needs_input_grad
    vector = _is_vector_rhs(A.shape, B.shape)
    gXm, Bm = (gX.unsqueeze(-1), B.unsqueeze(-1)) if vector else (gX, B)
    pinvA = linalg_pinv(A)
    gA = pinv_backward(gXm.matmul(Bm.mH), pinvA, A) if need[0] else None
    gB = None
    if need[1]:
        gB = pinvA.mH.matmul(gXm)
    if g_res is not None and g_res.numel() > 0:
        Xm = X.unsqueeze(-1) if vector else X
        weighted = (A.matmul(Xm) - Bm) * g_res.unsqueeze(-2) * 2
        gA = None if gA is None else gA + weighted.matmul(Xm.mH)
        gB = None if gB is None else gB - weighted
    if gB is not None and vector:
        gB = gB.squeeze(-1)
    return gA, gB


def _pinv_jvp(A: Tensor, pinvA: Tensor, dA: Tensor) -> Tensor:
    """PyTorch's pinv_jvp, arranged to form the smallest matrices."""
    m, n = A.shape[-2:]
    dAh, pinvAh = dA.mH, pinvA.mH
    if m <= n:
        K = pinvAh.matmul(dAh)
        return (pinvA.matmul(K - K.mH - K.matmul(A.matmul(pinvA)))
                + (dAh - pinvA.matmul(A.matmul(dAh))).matmul(pinvAh.matmul(pinvA)))
    K = pinvA.matmul(dA)
    Kh = K.mH
    return ((Kh - K - pinvA.matmul(A).matmul(Kh)).matmul(pinvA)
            + pinvA.matmul(pinvAh).matmul(dAh - dAh.matmul(A).matmul(pinvA)))


def _lstsq_jvp(args, outs, tangents):
    """PyTorch's linalg_lstsq_solution_jvp and linalg_lstsq_residuals_jvp; rank and the singular values have no
    tangent (torch 2.13's output_differentiability)."""
    A, B = args[0], args[1]
    vector = _is_vector_rhs(A.shape, B.shape)
    as_matrix = _unsqueeze_last if vector else _as_is
    dA, dB = tangents[0], tangents[1]
    if recording(args, tangents):  # (torch's zero tensor in a missing tangent's place keeps its terms' nodes)
        dA, dB = or_zero(dA, A, tangents, negative=False), or_zero(dB, B, tangents, negative=False)
    X, res = outs[0], outs[1]
    return [_lstsq_solution_jvp(A, as_matrix(B), dA, as_matrix(dB), vector),
            _lstsq_residuals_jvp(args, tangents, as_matrix(X), res), None, None]


def _unsqueeze_last(t: Tensor | None) -> Tensor | None:
    return None if t is None else t.unsqueeze(-1)


def _as_is(t: Tensor | None) -> Tensor | None:
    return t


def _lstsq_solution_jvp(A: Tensor, B: Tensor, dA: Tensor | None, dB: Tensor | None, vector: bool) -> Tensor:
    """dX = dpinv(A) B + pinv(A) dB, B and dB as matrices (the vector case squeezed back); a missing tangent's
    term is left out."""
    pinvA = linalg_pinv(A)
    dX = plus(None if dA is None else _pinv_jvp(A, pinvA, dA).matmul(B), None if dB is None else pinvA.matmul(dB))
    return dX.squeeze(-1) if vector else dX


def _lstsq_residuals_jvp(args, tangents, X: Tensor, res: Tensor) -> Tensor:
    """2 Re(r conj(dr)) summed over rows, with r = A X - B and dr = dA X - dB: X's own motion drops out (Danskin's
    theorem, A^H r = 0). Without residuals (a driver or a rank that gives none), a clone of the empty primal.
    Where a graph records, a missing tangent is torch's zero tensor: its product with X and the difference keep
    their nodes."""
    if res.numel() == 0:
        return res.clone()
    A, B = args[0], args[1]
    vector = X.ndim != B.ndim
    dA, dB = tangents[0], tangents[1]
    if recording(args, tangents):
        dB = or_zero(dB, B, tangents, negative=False)  # (x - +0. is x, -0. included)
    dAX = None
    if dA is not None:
        dAX = dA.matmul(X)
    elif recording(args, tangents):
        zA = or_zero(None, A, tangents)
        dAX = zero_product(zA, zA.matmul(X))
    dr = minus(dAX, None if dB is None else (dB.unsqueeze(-1) if vector else dB))
    r = A.matmul(X) - (B.unsqueeze(-1) if vector else B)
    product = (r * dr.conj()).real if r.is_complex() else r * dr
    return product.sum(-2) * 2


linalg_lstsq_op = defop("linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> "
                        "(Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)",
                        _lstsq_kernel, vjp=_lstsq_vjp, jvp=_lstsq_jvp,
                        saves=("self", "b", "result0"),
                        nondiff_outputs=(2, 3))


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None, out=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B||_F, with the CPU's default 'gelsy'."""
    if out is not None:
        return _out_of(linalg_lstsq_op, (A, B, rcond, driver), out, (0, 1, 2, 3), _Lstsq)
    return _Lstsq(tuple(linalg_lstsq_op(A, B, rcond, driver=driver)))


# ---- matrix_exp --------------------------------------------------------------------------------------------

# Padé coefficients of degrees 3, 5, 7, 9, 13 and the 1-norm bounds below which each is accurate to double
# precision (Higham 2005, "The scaling and squaring method for the matrix exponential revisited").
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0,
        90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0,
         960960.0, 16380.0, 182.0, 1.0),
}
_THETA = {3: 1.495585217958292e-2, 5: 2.539398330063230e-1, 7: 9.504178996162932e-1, 9: 2.097847961257068,
          13: 5.371920351148152}


def _expm_one(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    norm = np.abs(wide).sum(-2).max() if n else 0.0
    if not np.isfinite(norm):
        return np.full_like(a, np.nan)
    degree = next((d for d in (3, 5, 7, 9) if norm <= _THETA[d]), 13)
    squarings = 0 if degree < 13 else max(0, math.ceil(math.log2(norm / _THETA[13])))
    x = wide / (2.0 ** squarings)
    c = _PADE[degree]
    eye = np.eye(n, dtype=wide.dtype)
    powers = [eye, x @ x]
    if degree == 13:
        x2 = powers[1]
        x4, x6 = x2 @ x2, x2 @ x2 @ x2
        u = x @ (x6 @ (c[13] * x6 + c[11] * x4 + c[9] * x2) + c[7] * x6 + c[5] * x4 + c[3] * x2 + c[1] * eye)
        v = x6 @ (c[12] * x6 + c[10] * x4 + c[8] * x2) + c[6] * x6 + c[4] * x4 + c[2] * x2 + c[0] * eye
    else:
        for _ in range(2, degree // 2 + 1):
            powers.append(powers[-1] @ powers[1])
        u = x @ sum(c[2 * i + 1] * powers[i] for i in range(degree // 2 + 1))
        v = sum(c[2 * i] * powers[i] for i in range(degree // 2 + 1))
    r = np.linalg.solve(v - u, v + u)
    for _ in range(squarings):
        r = r @ r
    return r.astype(a.dtype)


def _matrix_exp_kernel(a):
    _check_square("linalg.matrix_exp", a)
    _check_float("linalg.matrix_exp", a)
    if not a.size:  # (no matrices, or empty ones: nothing to exponentiate)
        return a.copy()
    mats = a.reshape((-1,) + a.shape[-2:])
    return np.stack([_expm_one(m) for m in mats]).reshape(a.shape)


def matrix_exp_differential(A: Tensor, G: Tensor, adjoint: bool) -> Tensor:
    """PyTorch's linalg_matrix_exp_differential: exp([[A', G], [0, A']]) holds the Fréchet derivative of exp
    at A' (A^H for the backward, A for the JVP) in direction G as its top-right block."""
    n = A.shape[-1]
    M = A.mH if adjoint else A
    meta = G.new_zeros(tuple(G.shape[:-2]) + (2 * n, 2 * n))
    meta.narrow(-2, 0, n).narrow(-1, 0, n).copy_(M)
    meta.narrow(-2, n, n).narrow(-1, n, n).copy_(M)
    meta.narrow(-2, 0, n).narrow(-1, n, n).copy_(G)
    return linalg_matrix_exp(meta).narrow(-2, 0, n).narrow(-1, n, n)


def _matrix_exp_vjp(ctx, g):
    (A,) = ctx.saved_tensors
    return matrix_exp_differential(A, g, adjoint=True)


linalg_matrix_exp = defop("linalg_matrix_exp(Tensor self) -> Tensor", _matrix_exp_kernel, vjp=_matrix_exp_vjp,
                          saves=("self",), jvp=lambda args, outs, ts: [
                              None if ts[0] is None else matrix_exp_differential(args[0], ts[0], adjoint=False)])


def matrix_exp(A: Tensor) -> Tensor:
    return linalg_matrix_exp(A)


# ---- householder_product -----------------------------------------------------------------------------------


def _householder_checks(a: np.ndarray, tau: np.ndarray) -> None:
    name = "torch.linalg.householder_product"
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if a.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if a.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.ndim} and input.ndim is equal to {a.ndim}")
    if a.ndim > 2 and tau.shape[:-1] != a.shape[:-2]:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if seen_dtype(a) != seen_dtype(tau):  # (a bfloat16 input beside a float32 tau: both float32 arrays here)
        raise RuntimeError(f"{name}: tau dtype {_tname(tau)} does not match input dtype {_tname(a)}")


def _householder_kernel(a, tau):
    _householder_checks(a, tau)
    if a.dtype.kind not in "fc":  # (no dtype check up front in PyTorch: its orgqr kernel's dispatch refuses)
        raise unsupported("orgqr_cpu", a.dtype)
    refuse_half("orgqr_cpu", a)
    return householder_q(a, tau)


def householder_q(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The first n columns of H_0 H_1 ... H_{k-1}, the reflectors read from below a's diagonal (no checks)."""
    m, n = a.shape[-2:]
    V = np.tril(a, -1)
    V[..., range(n), range(n)] = 1
    q = np.array(np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape), copy=True)
    for i in range(tau.shape[-1] - 1, -1, -1):  # Q = H_0 H_1 ... H_{k-1} applied to the first n columns of I
        v = V[..., :, i:i + 1]
        q = q - tau[..., i, None, None] * (v @ (np.conj(np.swapaxes(v, -1, -2)) @ q))
    return q


def _reflect(v: Tensor, t: Tensor, K: Tensor, left: bool) -> Tensor:
    """(I - t v v^H) K, or K (I - t v v^H) when not ``left``: PyTorch's apply_simple_transformation out of place
    (its first-order path updates K in place, to the same values; here that saves no time)."""
    if left:
        return K - (t.unsqueeze(-1) * v) * v.mH.matmul(K)
    return K - K.matmul(t.unsqueeze(-1) * v) * v.mH


def _reflector_grads(i: int, m: int, v_full: Tensor, t: Tensor, K: Tensor) -> tuple[Tensor, Tensor]:
    """The gradients of v_i (a column) and tau_i read off K_i; v_i is zero above row i."""
    v = v_full.narrow(-2, i, m - i)
    vHK = v.mH.matmul(K.narrow(-2, i, m - i))
    Kv = K.narrow(-1, i, m - i).matmul(v)
    t = t.unsqueeze(-1)
    v_grad = (-t * vHK).conj().squeeze(-2) - (t * Kv).squeeze(-1)
    tau_grad = -(vHK.narrow(-1, i, m - i).matmul(v)).conj()
    return v_grad.unsqueeze(-1), tau_grad.squeeze(-1)


def householder_product_backward(grad: Tensor, result: Tensor, input_: Tensor, tau: Tensor,
                                 flip_order: bool = False) -> tuple[Tensor | None, Tensor | None]:
    """PyTorch's householder_product_backward, op for op, so that its graph under create_graph is PyTorch's.

    For Q = H_0 ... H_{k-1}, H_i = I - tau_i v_i v_i^H, the gradients of v_i and tau_i come from
    K_i = H_{i+1} ... H_{k-1} Q G^H H_0 ... H_{i-1}, carried as K_{i+1} = H_{i+1}^{-1} K_i H_i with
    H(tau)^{-1} = H(sigma), sigma = tau / (tau |v|^2 - 1) (so every H_i must be invertible, as geqrf's are).
    ``flip_order`` walks the reflectors from the last with the sides swapped (ormqr's other cases)."""
    from .creation import zeros_like

    if grad is None or input_.numel() == 0 or tau.numel() == 0:
        return None, None
    m, k = input_.shape[-2], tau.shape[-1]
    V = input_.tril(-1)  # the reflectors: unit diagonal, zero above it
    V.diagonal(0, -2, -1).fill_(1.0)
    first = V.narrow(-1, 0, k)
    sigma = tau / (tau * (first * first.conj()).sum(-2) - 1.0)
    K = result.matmul(grad.mH)
    order = range(k - 1, -1, -1) if flip_order else range(k)
    left = not flip_order
    K = _reflect(V.narrow(-1, order[0], 1), sigma.narrow(-1, order[0], 1), K, left)  # H_0^{-1} K
    input_grad, tau_grad = zeros_like(input_), zeros_like(tau)
    for i, i_next in zip(order, [*order[1:], None]):
        v_i, t_i = V.narrow(-1, i, 1), tau.narrow(-1, i, 1)
        v_grad, t_grad = _reflector_grads(i, m, v_i, t_i, K)
        input_grad.select(-1, i).copy_(v_grad.squeeze(-1))
        tau_grad.select(-1, i).copy_(t_grad.squeeze(-1))
        if i_next is not None:  # K <- H_{i+1}^{-1} K H_i
            K = _reflect(V.narrow(-1, i_next, 1), sigma.narrow(-1, i_next, 1), K, left)
            K = _reflect(v_i, t_i, K, not left)
    return input_grad.tril_(-1), tau_grad  # (only the strict lower part of the input enters the reflectors)


def _householder_vjp(ctx, g):
    A, tau, Q = ctx.saved_tensors
    return householder_product_backward(g, Q, A, tau)


def _simple_product(u: Tensor, v: Tensor, t: Tensor, K: Tensor) -> Tensor:
    """-t u v^H K: PyTorch's apply_simple_transformation without the identity (condition_with_I=false)."""
    return -((t.unsqueeze(-1) * u) * v.mH.matmul(K))


def householder_product_jvp(dV_: Tensor, dtau: Tensor, prod: Tensor, V_: Tensor, tau: Tensor) -> Tensor:
    """PyTorch's householder_product_jvp: dQ = sum_i H_0 ... H_{i-1} dH_i H_{i+1} ... H_{k-1}, with dH_i =
    -dtau_i v_i v_i^H - tau_i dv_i v_i^H - tau_i v_i dv_i^H; the trailing product H_{i+1} ... (applied to Q's
    columns) is Q with H_0 ... H_i undone through H(sigma_j) = H(tau_j)^-1, the leading one built up from I."""
    from .._factories import ones
    from .creation import zeros_like
    from .linalg import diag_embed

    k = tau.shape[-1]
    V = V_.tril(-1)
    V.diagonal(0, -2, -1).fill_(1.0)
    dV = dV_.tril(-1)
    first = V.narrow(-1, 0, k)
    sigma = tau / (tau * (first * first.conj()).sum(-2) - 1.0)
    H_plus = prod.detach().clone()
    H_minus = diag_embed(ones(1, dtype=V.dtype).expand(tuple(V.shape[:-1])))
    dprod = zeros_like(prod)
    for i in range(k):
        v_i, dv_i = V.narrow(-1, i, 1), dV.narrow(-1, i, 1)
        tau_i, dtau_i = tau.narrow(-1, i, 1), dtau.narrow(-1, i, 1)
        H_plus = _reflect(v_i, sigma.narrow(-1, i, 1), H_plus, True)
        dprod.add_(H_minus.matmul(_simple_product(v_i, v_i, dtau_i, H_plus) + _simple_product(dv_i, v_i, tau_i, H_plus)
                                  + _simple_product(v_i, dv_i, tau_i, H_plus)))
        H_minus = _reflect(v_i, tau_i, H_minus, False)
    return dprod


def _householder_jvp(args, outs, tangents):
    """householder_product_jvp, a missing tangent being its zeros (torch's zero tensor)."""
    dV, dtau = tangents
    if dV is None and dtau is None:
        return None
    V, tau = args[0], args[1]
    dV, dtau = or_zero(dV, V, tangents, negative=False), or_zero(dtau, tau, tangents, negative=False)
    return householder_product_jvp(dV, dtau, outs[0], V, tau)


linalg_householder_product = defop("linalg_householder_product(Tensor input, Tensor tau) -> Tensor",
                                   _column_major(_householder_kernel), vjp=_householder_vjp, jvp=_householder_jvp,
                                   saves=("input", "tau", "result"))


# ---- composites --------------------------------------------------------------------------------------------


def tensorinv(A: Tensor, ind: int = 2, *, out=None) -> Tensor:
    """The inverse of A seen as a matrix (prod(shape[:ind]) x prod(shape[ind:])), reshaped back."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    if ind > len(shape):  # (torch slices the sizes as a C++ ArrayRef, which refuses this)
        raise RuntimeError(f"ArrayRef: invalid slice, N = {ind}; size = {len(shape)}")
    end, start = shape[ind:], shape[:ind]
    p_end, p_start = math.prod(end), math.prod(start)
    if p_end != p_start:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {p_end} != {p_start}")
    inverse, info = linalg_inv_ex(A.reshape(p_end, p_end))
    if bool(info.any()):
        raise LinAlgError(f"inv: The diagonal element {int(info.item())} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")
    result = inverse.reshape(end + start)
    return result if out is None else _into_out(result, out, "linalg_tensorinv")


def _into_out(result: Tensor, out: Tensor, name: str) -> Tensor:
    from .linalg import _into

    return _into(result, out, name)


def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out=None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B, solved as one square system."""
    ndim = A.ndim
    if dims is not None:
        dims = list(dims)
        A = A.movedim(dims, list(range(ndim - len(dims), ndim)))
    result_shape = tuple(A.shape[B.ndim:])
    p_result, p_other = math.prod(result_shape), math.prod(tuple(B.shape))
    if p_result != p_other:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {p_result} != {p_other}")
    result = linalg_solve(A.reshape(p_result, p_result), B.flatten()).reshape(result_shape)
    return result if out is None else _into_out(result, out, "linalg_tensorsolve")


def vander(x: Tensor, N: int | None = None) -> Tensor:
    """Columns x^0, x^1, ..., x^(N-1): a row of ones and the cumulative product of x (PyTorch's composite)."""
    from .reductions_extra import cumprod
    from .shape import cat

    kind = x._data.dtype.kind
    if not (kind in "iuc" or x._data.dtype in (np.float32, np.float64)):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{_tname(x._data.dtype)}")
    x_ = x.unsqueeze(-1) if x.ndim == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    result = cumprod(x_.unsqueeze(-1).expand(tuple(shape) + (n - 1,)), -1)
    ones = result.new_ones(tuple(shape) + (1,))
    return cat([ones, result], -1)


def _ord_text(p) -> str:
    """The ord as PyTorch's C++ prints it: std::to_string for a float (``1.000000``), ``inf`` spelled out."""
    if isinstance(p, str):
        return p
    if isinstance(p, float):
        return ("-inf" if p < 0 else "inf") if math.isinf(p) else f"{p:.6f}"
    return str(p)


def cond(A: Tensor, p=None, *, out=None) -> Tensor:
    """The condition number in the norm ``p``: s_max / s_min from the singular values for None/±2 (also for
    non-square A), ``norm(A) * norm(A^-1)`` otherwise (inf for a singular A)."""
    result = _cond(A, p)
    return result if out is None else _into_out(result, out, "linalg_cond")


def _cond(A: Tensor, p) -> Tensor:
    if isinstance(p, str):
        _check_square(f"linalg.cond(ord={p})", A._data)
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
        if A.numel() == 0:
            return A.new_zeros(tuple(A.shape[:-2]))
        if p == "nuc":  # the definition, since matrix_norm('nuc') rejects infinities
            s = _svdvals(A)
            # PyTorch's C++ evaluates the right operand first (its nodes' sequence numbers show it)
            inverse_sum = s.reciprocal().sum(-1)
            return s.sum(-1) * inverse_sum
        return _cond_helper(A, p)
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord_ = 2 if p is None else int(p) if isinstance(p, bool) else p  # (torch's Scalar reads a bool as an int)
    if ord_ not in (1, -1, 2, -2, math.inf, -math.inf):
        # (printed as a C++ stream prints a Scalar: %g for a float)
        raise RuntimeError(f"linalg.cond got an invalid norm type: {f'{ord_:g}' if isinstance(ord_, float) else ord_}")
    if A.numel() == 0:
        real = np.finfo(A._data.dtype).dtype if A._data.dtype.kind in "fc" else A._data.dtype
        from .._factories import as_tensor

        return as_tensor(np.zeros(tuple(A.shape[:-2]), dtype=real))
    if abs(ord_) == 2:
        s = _svdvals(A)
        # at::narrow hands its dim to slice unwrapped (SliceBackward0 saves dim=-1)
        k = s.shape[-1]
        s_max, s_min = _slice(s, -1, 0, 1), _slice(s, -1, k - 1, k)
        return (s_min / s_max if ord_ == -2 else s_max / s_min).squeeze(-1)
    _check_square(f"linalg.cond(ord={_ord_text(ord_)})", A._data)
    return _cond_helper(A, ord_)


def _slice(t: Tensor, dim: int, start: int, end: int) -> Tensor:
    from .views import slice as slice_op

    return slice_op(t, dim, start, end, 1)


def _cond_helper(A: Tensor, ord_) -> Tensor:
    inverse, info = linalg_inv_ex(A)
    info = info.unsqueeze(-1).unsqueeze(-1)
    # in place, as PyTorch: its gradient then fails (the saved inverse was modified), as it does there
    inverse.masked_fill_(info > 0, math.inf)  # a singular matrix has condition number inf
    result = matrix_norm(A, ord_) * matrix_norm(inverse, ord_)
    return result.nan_to_num(math.inf, math.inf)  # 0 * inf (the zero matrix) is inf too


# ---- exports -----------------------------------------------------------------------------------------------

LINALG_EXTRA = {
    "lu_factor": lu_factor, "lu_factor_ex": lu_factor_ex, "lu": lu, "lu_solve": linalg_lu_solve,
    "solve_ex": solve_ex, "lstsq": lstsq, "matrix_exp": matrix_exp, "tensorinv": tensorinv,
    "tensorsolve": tensorsolve, "vander": vander, "cond": cond, "householder_product": linalg_householder_product,
}


def _lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True, *,
               out=None):
    if out is not None:
        return _out_of(lu_unpack, (LU_data, LU_pivots, unpack_data, unpack_pivots), out, (0, 1, 2), _LuUnpack)
    return _LuUnpack(tuple(lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)))


PUBLIC = {"matrix_exp": matrix_exp, "orgqr": linalg_householder_product, "lu_unpack": _lu_unpack}
METHODS = {"matrix_exp": matrix_exp, "orgqr": linalg_householder_product}
