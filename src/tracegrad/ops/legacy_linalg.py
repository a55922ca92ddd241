"""PyTorch's older linear-algebra names outside ``torch.linalg``: ``cholesky_inverse``, ``triangular_solve``,
``geqrf``, ``ormqr``, the deprecated ``torch.lu`` / ``torch.lu_solve`` wrappers, ``frobenius_norm``,
``nuclear_norm``, ``adjoint``, and the removed functions (``torch.solve``, ``eig``, ``symeig``, ``lstsq``,
``matrix_rank``) that PyTorch keeps only to raise an error pointing at their replacement.

Backward rules follow PyTorch's FunctionsManual (cholesky_inverse_backward, triangular_solve_backward,
ormqr_backward through householder_product_backward) in dispatched ops.
"""

from __future__ import annotations

import numpy as np

from .._jit_internal import boolean_dispatch, renamed
from .._tensor import Tensor
from ..autograd.forward_ad import not_implemented_jvp
from ..return_types import return_type
from ._jvp import check_tangent_size
from .bfloat16_in_float import seen_dtype
from .linalg import (
    _check_invertible,
    _check_square,
    _f_contiguous,
    _tname,
    _triangular_solve,
    check_solve_inputs,
    dim_size,
    matrix_norm,
)
from .linalg_extra import householder_product_backward, householder_q, linalg_lu_factor_ex, linalg_lu_solve
from .nn_ops._basic import norm as _aten_norm
from .registry import defop, not_implemented
from .shape_extra import _not_bools, refuse_if
from .unary import unsupported

_LuWithInfo = return_type("_lu_with_info", ["LU", "pivots", "info"])


def _warn_once(key: str, message: str) -> None:
    """ATen's TORCH_WARN_ONCE, shown at the user's line (a fixed stacklevel named tracegrad's own wrappers: the
    autocast policy's, the torch.jit boolean dispatch's)."""
    from .._warnings import warn_once_at_caller  # (imported late: the package's ``_warnings`` name is the stdlib's)

    warn_once_at_caller(key, message)


def _require_float(kernel_name: str, *arrays: np.ndarray) -> None:
    for a in arrays:
        if a.dtype.kind not in "fc" or a.dtype.char == "e":  # (no Half kernel either)
            raise unsupported(kernel_name, a.dtype)


def _mH(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


# ---- cholesky_inverse ----------------------------------------------------------------------------------------


def _cholesky_inverse_kernel(a, upper=False):
    _check_square("cholesky_inverse", a)
    _require_float("cholesky_inverse_out_cpu", a)
    _check_invertible("cholesky_inverse", a, _first_zero_on_diagonal(a))
    n = a.shape[-1]
    # (L L^H)^-1 = L^-H L^-1 with L^-1 by substitution (U^H U for the upper factor)
    L = _mH(np.triu(a)) if upper else np.tril(a)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        Linv = _triangular_solve(L, np.broadcast_to(np.eye(n, dtype=a.dtype), a.shape), False, False)
        return _f_contiguous(_mH(Linv) @ Linv)


def _first_zero_on_diagonal(a: np.ndarray) -> np.ndarray:
    """LAPACK potri's info for each factor in ``a``: the 1-based place of its first exactly zero diagonal element
    (whose triangular inverse does not exist), 0 where there is none (NaNs pass, as in potri)."""
    zero = np.diagonal(a, axis1=-2, axis2=-1) == 0
    if zero.shape[-1] == 0:
        return np.zeros(zero.shape[:-1], np.int64)
    return np.where(zero.any(-1), zero.argmax(-1) + 1, 0)


def _cholesky_inverse_vjp(ctx, g):
    L, inverse = ctx.saved_tensors
    (upper,) = ctx.attrs
    common = inverse.matmul((g + g.mH).matmul(inverse))
    return -(L.matmul(common) if upper else common.matmul(L))


def _cholesky_inverse_jvp(args, outs, tangents):
    """The true derivative: only the factor's triangle moves (the vjp is not projected, so the JVP is not its
    adjoint). torch 2.13's forward value disagrees with finite differences, for triangular tangents too (its own
    gradcheck fails on it): kept deliberately (tests/opinfo/db_tensor_extras.py)."""
    F, upper = args[0], args[1] if len(args) > 1 else False
    (dF,) = tangents
    X = outs[0] if isinstance(outs, (tuple, list)) else outs
    CF, dCF = (F.mH, dF.mH.tril()) if upper else (F, dF.tril())
    partial = -X.matmul(dCF).matmul(X.matmul(CF).mH)
    return partial + partial.mH


cholesky_inverse = defop("cholesky_inverse(Tensor self, bool upper=False) -> Tensor", _cholesky_inverse_kernel,
                         vjp=_cholesky_inverse_vjp, jvp=_cholesky_inverse_jvp, saves=("self", "result"),
                         attrs=("upper",))


# ---- triangular_solve ----------------------------------------------------------------------------------------


def _triangular_solve_kernel(b, A, upper=True, transpose=False, unitriangular=False):
    for name, x in (("b", b), ("A", A)):
        if x.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 dimensions, but it has "
                               f"{x.ndim} dimensions instead")
    check_solve_inputs(b, A, "triangular_solve")
    _require_float("triangular_solve_cpu", A)
    batch = np.broadcast_shapes(A.shape[:-2], b.shape[:-2])
    coefficient = _f_contiguous(np.broadcast_to(A, batch + A.shape[-2:]))
    op = np.swapaxes(A, -1, -2) if transpose else A  # transpose= solves A^T X = b (no conjugation)
    solution = _triangular_solve(op, b, upper != transpose, unitriangular)
    return _f_contiguous(solution), coefficient


def _triangular_solve_vjp(ctx, g_x, g_m):
    b, A, x = ctx.saved_tensors
    upper, transpose, unitriangular = ctx.attrs
    need_b, need_A = ctx.needs_input_grad
    grad_b = triangular_solve_op(g_x, A.conj(), upper, not transpose, unitriangular)[0]
    grad_A = None
    if need_A:
        grad_A = -x.conj().matmul(grad_b.mT) if transpose else -grad_b.matmul(x.mH)
        grad_A = grad_A.triu(int(unitriangular)) if upper else grad_A.tril(-int(unitriangular))
        grad_A = grad_A + g_m
    return (grad_b if need_b else None), grad_A


def _triangular_solve_jvp(args, outs, tangents):
    """PyTorch's triangular_solve_jvp (generic_solve_jvp): dX solves op(A) dX = dB - dA X, with dA whole and
    untransposed as PyTorch has it; the coefficient's tangent is dA itself."""
    A, upper, transpose, unitriangular = (list(args[1:]) + [True, False, False][len(args) - 2:])[:4]
    db, dA = tangents
    X = outs[0]
    if dA is not None:
        # PyTorch's cloned_coefficient tangent is A_t.clone(): for an A broadcast over B's batch, its shape is
        # not the output's, which PyTorch refuses
        check_tangent_size(outs[1], dA)
    rhs = db
    if dA is not None:
        rhs = -dA.matmul(X) if rhs is None else rhs - dA.matmul(X)
    return triangular_solve_op(rhs, A, upper, transpose, unitriangular)[0], dA


triangular_solve_op = defop("triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, "
                            "bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)",
                            _triangular_solve_kernel, vjp=_triangular_solve_vjp, jvp=_triangular_solve_jvp,
                            saves=("self", "A", "result0"), attrs=("upper", "transpose", "unitriangular"))


_TRIANGULAR_SOLVE_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a future "
    "PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a copy of one "
    "of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
    "torch.linalg.solve_triangular(A, B).")


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,  # noqa: A002
                     unitriangular: bool = False, *, out=None):
    if out is None:
        _warn_once("triangular_solve", _TRIANGULAR_SOLVE_DEPRECATED)
        return triangular_solve_op(input, A, upper, transpose, unitriangular)
    # (torch's structured kernel resizes ``out`` in its meta function, before the kernel warns)
    result = triangular_solve_op(input, A, upper, transpose, unitriangular, out=out)
    _warn_once("triangular_solve", _TRIANGULAR_SOLVE_DEPRECATED)
    return result


# ---- geqrf / ormqr -------------------------------------------------------------------------------------------


def _geqrf_kernel(a):
    if a.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _require_float("geqrf_cpu", a)
    m, n = a.shape[-2:]
    flat = a.reshape((-1, m, n))
    packed = np.empty_like(flat)
    tau = np.empty((flat.shape[0], min(m, n)), dtype=a.dtype)
    for i, matrix in enumerate(flat):  # NumPy's raw QR is LAPACK's geqrf, its result transposed
        h, tau[i] = np.linalg.qr(matrix, mode="raw")
        packed[i] = h.T
    return _f_contiguous(packed.reshape(a.shape)), tau.reshape(a.shape[:-2] + (min(m, n),))


geqrf_op = defop("geqrf(Tensor self) -> (Tensor a, Tensor tau)", _geqrf_kernel, vjp=not_implemented("geqrf"))


def geqrf(input: Tensor, *, out=None):  # noqa: A002
    return geqrf_op(input) if out is None else geqrf_op(input, out=out)  # (a geqrf, or geqrf_out)


def _ormqr_checks(a, tau, c, left):
    if a.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if c.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if c.shape[side] != a.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    # (LAPACK's requirement, which PyTorch checks before the ranks: tau's length read from a 0-d tau fails there)
    if dim_size(tau, -1) != min(c.shape[side], a.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    if a.ndim - tau.ndim != 1:
        raise RuntimeError(f"torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim "
                           f"equal to {tau.ndim} and input.ndim is equal to {a.ndim}")
    if a.ndim != c.ndim:
        raise RuntimeError(f"torch.ormqr: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {c.ndim} and input.ndim is equal to {a.ndim}")
    if a.ndim > 2:
        for name, shape in (("tau", tau.shape[:-1]), ("other", c.shape[:-2])):
            if shape != a.shape[:-2]:
                raise RuntimeError(f"torch.ormqr: Expected batch dimensions of {name} to be equal to "
                                   f"input.shape[:-2], but got {list(shape)}")
    for name, x in (("tau", tau), ("other", c)):
        if seen_dtype(x) != seen_dtype(a):  # (PyTorch's message lacks the space before the first dtype;
            # seen_dtype: a bfloat16 operand beside a float32 one, both float32 arrays here)
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, but input has "
                               f"dtype{_tname(a)} and {name} has dtype {_tname(x)}")
    _require_float("ormqr_cpu", a)


def _ormqr_kernel(a, tau, c, left=True, transpose=False):
    _ormqr_checks(a, tau, c, left)
    m, k = a.shape[-2], tau.shape[-1]
    # the full m x m Q = H_0 ... H_{k-1}: the reflectors' columns padded to a square matrix
    square = np.zeros(a.shape[:-1] + (m,), dtype=a.dtype)
    square[..., :, :k] = a[..., :, :k]
    q = householder_q(square, tau)  # (checked above, in ormqr's words)
    q = _mH(q) if transpose else q
    return _f_contiguous(q @ c if left else c @ q)


def _ormqr_vjp(ctx, g):
    """PyTorch's ormqr_backward: C's gradient is ormqr with op(Q) adjointed; A's and tau's come from
    householder_product's backward, given (G, result) when Q's reflectors act from the left (left != transpose,
    both adjointed for C Q^H), else (result^H, G^H) walked from the last reflector (not adjointed for Q^H C)."""
    A, tau, _C, result = ctx.saved_tensors
    left, transpose = ctx.attrs
    need_A, need_tau, need_C = ctx.needs_input_grad
    grad_C = ormqr(A, tau, g, left, not transpose) if need_C else None
    grad_A = grad_tau = None
    if need_A or need_tau:
        if left != transpose:
            grad_A, grad_tau = householder_product_backward(g.mH if transpose else g,
                                                            result.mH if transpose else result, A, tau)
        else:
            grad_A, grad_tau = householder_product_backward(result if transpose else result.mH,
                                                            g if transpose else g.mH, A, tau, flip_order=True)
    return grad_A, grad_tau, grad_C


# (a backward formula, no forward one in PyTorch: a tangent is refused before the kernel)
ormqr = defop("ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor",
              _ormqr_kernel, vjp=_ormqr_vjp, jvp=not_implemented_jvp("ormqr"),
              saves=("self", "input2", "input3", "result"), attrs=("left", "transpose"))


# ---- the deprecated torch.lu / torch.lu_solve ----------------------------------------------------------------


def _lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out=None):
    """``torch.lu``: ``_lu_with_info``, i.e. linalg_lu_factor_ex without its error check (PyTorch never passes
    ``check_errors`` on); (LU, pivots) as a plain tuple, or the named (LU, pivots, info) with ``get_infos``."""
    result = _lu_with_info(A, pivot, not get_infos)
    if out is not None:
        if len(out) - int(get_infos) != 2:
            raise TypeError(f"expected tuple of {2 + int(get_infos)} elements but got {len(out)}")
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        for dst, src in zip(out, result):
            dst.resize_as_(src).copy_(src)
        return out
    return _LuWithInfo(tuple(result)) if get_infos else (result[0], result[1])


def _lu_with_info(A: Tensor, pivot: bool, check_errors: bool) -> tuple:
    """torch's ``_lu_with_info`` operator, called by keyword as torch's Python calls it (its parser's words for a
    mistake); computed without the error check."""
    kwargs = {"pivot": pivot, "check_errors": check_errors}
    refuse_if(not isinstance(A, Tensor) or _not_bools(pivot), "_lu_with_info", (A,), kwargs)
    # (torch's _lu_with_info warns, so Tensor.lu does too)
    _warn_once("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will "
                    "be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be "
                    "replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
                    "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                    "torch.linalg.lu_factor_ex(A, compute_pivots)")
    return linalg_lu_factor_ex(A, pivot=pivot, check_errors=False)


# (torch dispatches on ``get_infos`` to two Python functions, which its argument errors name)
lu = boolean_dispatch("get_infos", 2, renamed(_lu, "_lu_with_infos"), renamed(_lu, "_lu_no_infos"))


def _lu_method(self: Tensor, pivot: bool = True, get_infos: bool = False):
    """``Tensor.lu``: plain tuples either way (PyTorch's method unpacks ``_lu_with_info``)."""
    result = _lu_with_info(self, pivot, not get_infos)
    return tuple(result) if get_infos else (result[0], result[1])


_lu_method.__qualname__ = "Tensor.lu"


def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out=None) -> Tensor:  # noqa: A002
    _warn_once("lu_solve" if out is None else "lu_solve_out",
               "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
               "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, "
               "pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    extra = {} if out is None else {"out": out}
    return linalg_lu_solve(LU_data, LU_pivots, input, **extra)


# ---- norms and adjoint ---------------------------------------------------------------------------------------


def frobenius_norm(input: Tensor, dim, keepdim: bool = False, *, out=None) -> Tensor:  # noqa: A002
    """ATen's frobenius_norm: ``norm(self, 2, dim, keepdim)`` (NormBackward1), for at most two dims."""
    _warn_once("frobenius_norm" if out is None else "frobenius_norm_out",
               "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
               "future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead")
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    extra = {} if out is None else {"out": out}
    return _aten_norm(input, 2.0, dims, keepdim, **extra)


def nuclear_norm(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:  # noqa: A002
    """``nuclear_norm(input, keepdim=False)`` or ``nuclear_norm(input, dim, keepdim=False)``: the 'nuc' matrix
    norm over the last two dims, or over ``dim``."""
    _warn_once("nuclear_norm" if out is None else "nuclear_norm_out",
               "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
               "future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if isinstance(dim, bool):  # the (input, keepdim) overload
        dim, keepdim = None, dim
    elif isinstance(dim, int):  # (an int[2] to torch's parser: one int fills both)
        dim = (dim, dim)
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, out=out)


def adjoint(input: Tensor) -> Tensor:  # noqa: A002
    return input.adjoint()


# ---- removed functions: PyTorch keeps them only to raise --------------------------------------------------------

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "
_SOLVE = (_REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
          "arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see "
          "`torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, "
          "A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")
_LSTSQ = (_REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
          "reversed arguments and does not return the QR decomposition in the returned tuple (although it returns "
          "other information about the problem).\n\nTo get the QR decomposition consider using "
          "`torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of the solution in the "
          "last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the "
          "field 'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = "
          "torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_SYMEIG = (_REMOVED + "The default behavior has changed from using the upper triangular portion of the matrix by "
           "default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be "
           "replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
           "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if "
           "upper else 'L')")
_EIG = (_REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
        "tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
        "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)")
_MATRIX_RANK = ("This function was deprecated since version 1.9 and is now removed.\nPlease use the "
                "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
                "`torch.linalg.matrix_rank()` to 'hermitian'.")


def solve(input: Tensor, A: Tensor, *, out=None):  # noqa: A002
    raise RuntimeError(_SOLVE)


def lstsq(input: Tensor, A: Tensor, *, out=None):  # noqa: A002
    raise RuntimeError(_LSTSQ)


def symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True, *, out=None):  # noqa: A002
    raise RuntimeError(_SYMEIG)


def eig(self: Tensor, eigenvectors: bool = False, *, e=None, v=None):
    raise RuntimeError(_EIG)


def matrix_rank(input: Tensor, tol=None, symmetric: bool = False, *, out=None):  # noqa: A002
    raise RuntimeError(_MATRIX_RANK)


def _solve_method(self: Tensor, other: Tensor):
    raise RuntimeError(_SOLVE)


def _lstsq_method(self: Tensor, other: Tensor):
    raise RuntimeError(_LSTSQ)


def _eig_method(self: Tensor, eigenvectors: bool = False):
    raise RuntimeError(_EIG)


def _symeig_method(self: Tensor, eigenvectors: bool = False):
    raise RuntimeError(_SYMEIG)


PUBLIC = {
    "cholesky_inverse": cholesky_inverse, "triangular_solve": triangular_solve, "geqrf": geqrf, "ormqr": ormqr,
    "lu": lu, "lu_solve": lu_solve, "frobenius_norm": frobenius_norm, "nuclear_norm": nuclear_norm,
    "adjoint": adjoint, "solve": solve, "lstsq": lstsq, "symeig": symeig, "eig": eig, "matrix_rank": matrix_rank,
}
METHODS = {
    "cholesky_inverse": cholesky_inverse, "triangular_solve": triangular_solve, "geqrf": geqrf, "ormqr": ormqr,
    "lu": _lu_method, "lu_solve": lu_solve, "solve": _solve_method, "lstsq": _lstsq_method, "eig": _eig_method,
    "symeig": _symeig_method,
}
