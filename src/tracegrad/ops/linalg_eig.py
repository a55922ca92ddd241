"""``torch.linalg.eig`` and ``eigvals``: the eigendecomposition of general (non-Hermitian) matrices.

The results are complex whatever the input (complex64 for float32, complex128 for float64), eigenvectors of
unit norm as LAPACK's geev returns them (NumPy calls the same routine, so the order and the normalisation
agree), laid out column-major. One ``LinalgEigBackward0`` node saves eigenvalues and eigenvectors; its rule is
PyTorch's ``linalg_eig_backward`` (with its shortcut when only the eigenvalues have a gradient, which is what
``eigvals`` records, and its check that a loss does not depend on the eigenvectors' phases), and the gradient
of a real input is the real part, as PyTorch's ``handle_r_to_c``. Forward AD is PyTorch's ``linalg_eig_jvp``.
"""

from __future__ import annotations

import numpy as np

from .._state import STATE
from .._tensor import Tensor
from ..autograd.forward_ad import refuse_fallback_tangents
from ..backend import dtypes as _dt
from ._util import refuse_half
from .complex_ops import imag, real
from .linalg import _check_square, _column_major, _tname, linalg_solve
from .linalg_core import matmul
from .registry import defop
from .variants import check_out_count

__all__ = ["linalg_eig", "eig", "eigvals"]

_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
               np.dtype(np.complex64): np.complex64, np.dtype(np.complex128): np.complex128}


# c10's toComplexType, by name, for the dtypes whose out= checks name it (float16's ComplexHalf has no NumPy twin;
# bfloat16, whose range is float's, maps to ComplexFloat)
_COMPLEX_NAME = {_dt.float16: "ComplexHalf", _dt.bfloat16: "ComplexFloat", _dt.float32: "ComplexFloat",
                 _dt.float64: "ComplexDouble", _dt.complex64: "ComplexFloat", _dt.complex128: "ComplexDouble"}


def _refuse_non_finite(a) -> None:
    """linalg_eig's first check (geev's results on infinities and NaNs are undefined)."""
    if a.dtype.kind in "fc" and not np.isfinite(a).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")


def _eig_kernel(a):
    _refuse_non_finite(a)
    _check_square("linalg.eig", a)
    refuse_half("linalg_eig_out_cpu", a)
    complex_dtype = _COMPLEX_OF.get(a.dtype)
    if complex_dtype is None:
        raise RuntimeError(f"Unknown Complex ScalarType for {_tname(a.dtype)}")
    values, vectors = np.linalg.eig(a)
    return values.astype(complex_dtype, copy=False), vectors.astype(complex_dtype, copy=False)


def _eig_vjp(ctx, gL, gV):
    from .views import diagonal, unsqueeze

    L, V = ctx.saved_tensors
    if gL is None and gV is None:
        return None
    if gV is None:  # eigvals: V^-H diag(gL) V^H
        grad = linalg_solve(V.mH, unsqueeze(gL, -1) * V.mH)
    else:
        VhgV = matmul(V.mH, gV)
        diag_VhgV = diagonal(VhgV, 0, -2, -1)
        if not np.allclose(imag(diag_VhgV)._data, 0.0, rtol=1e-2, atol=1e-2):
            raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                               "so it is ill-defined.")
        # project onto the tangent space of matrices with unit-norm columns
        VhgV = VhgV - matmul(V.mH, V * unsqueeze(real(diag_VhgV), -2))
        Lconj = L.conj()
        gaps = unsqueeze(Lconj, -2) - unsqueeze(Lconj, -1)
        diagonal(gaps, 0, -2, -1).fill_(1.0)
        inner = VhgV.div_(gaps)
        if gL is not None:
            diagonal(inner, 0, -2, -1).copy_(gL)
        grad = linalg_solve(V.mH, matmul(inner, V.mH))
    return grad if ctx._in_meta[0][1].kind == "c" else real(grad)  # (a real input's gradient is real)


def _eig_jvp(args, outs, tangents):
    from .creation import to_dtype
    from .views import diagonal, unsqueeze

    dA = tangents[0]
    if dA is None:
        return None, None
    L, V = outs
    dP = linalg_solve(V, matmul(to_dtype(dA, V.dtype) if not dA.is_complex() else dA, V))
    dL = diagonal(dP, 0, -2, -1)
    dX = dP / (unsqueeze(L, -2) - unsqueeze(L, -1))
    diagonal(dX, 0, -2, -1).zero_()
    dX = matmul(V, dX)
    dV = dX - V * unsqueeze(real(diagonal(matmul(V.mH, dX), 0, -2, -1)), -2)
    return dL, dV


linalg_eig = defop("linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)",
                   _column_major(_eig_kernel, (1,)), vjp=_eig_vjp, jvp=_eig_jvp,
                   saves=("result0", "result1"), node_name="LinalgEigBackward0")
linalg_eig.materialize_grads = False  # (the eigvals shortcut needs to know gV is undefined)


def _eigvals_kernel(a):
    _check_square("linalg.eigvals", a)
    if a.dtype.kind in "fc":
        finite = np.isfinite(a).all(axis=(-2, -1))
        if not finite.all():
            # (torch's eigvals skips eig's check and hands geev each matrix as it is; its answer for one holding
            # an infinity is all NaN, the other matrices of the batch keep their eigenvalues)
            refuse_half("linalg_eig_out_cpu", a)
            values = np.full(a.shape[:-1], np.nan * (1 + 1j), dtype=_COMPLEX_OF[a.dtype])
            if finite.any():
                values[finite] = _eig_kernel(a[finite])[0]
            return values
    return _eig_kernel(a)[0]


_eigvals_values = defop("_linalg_eigvals(Tensor self) -> Tensor", _eigvals_kernel, differentiable=())


def _check_out_dtypes(name: str, A: Tensor, outs: tuple, out_names: tuple) -> None:
    """ATen's checkLinalgCompatibleDtype on each out= tensor: it must hold the complex type of the result (a cast
    from complex is safe into complex alone). Half and bfloat16 are checked too, before the kernel refuses them."""
    from ..backend.dtypes import scalar_type_name

    complex_name = _COMPLEX_NAME.get(A.dtype)
    if complex_name is None:  # (an integer input is refused by the kernel, in its own words)
        return
    for out, out_name in zip(outs, out_names):
        if isinstance(out, Tensor) and not out.dtype.is_complex:
            raise RuntimeError(f"{name}: Expected {out_name} to be safely castable from {complex_name} dtype, but "
                               f"got {out_name} with dtype {scalar_type_name(out._data.dtype)}")


def eig(A: Tensor, *, out=None):
    """``linalg_eig``, with its out= checks in PyTorch's order: finite values, square matrices, then dtypes."""
    if out is None:
        return linalg_eig(A)
    check_out_count(2, out, "linalg_eig")
    _refuse_non_finite(A._data)
    _check_square("linalg.eig", A._data)
    _check_out_dtypes("torch.linalg.eig", A, tuple(out), ("eigenvalues", "eigenvectors"))
    return linalg_eig(A, out=out)


def eigvals(A: Tensor, *, out=None) -> Tensor:
    """PyTorch's composite: the eigenvalues of ``linalg_eig`` where a gradient may be needed (so its node is
    LinalgEigBackward0), the values alone otherwise."""
    if out is not None:
        _check_square("linalg.eigvals", A._data)
        _check_out_dtypes("torch.linalg.eigvals", A, (out,), ("eigenvalues",))
        # (its out= form has no autograd kernel: torch's fallback refuses a tangent, before the kernel)
        refuse_fallback_tangents("linalg_eigvals", (A, out))
    if out is None and (A.requires_grad and STATE.grad_enabled or STATE.fw_grad_levels):
        _check_square("linalg.eigvals", A._data)
        return linalg_eig(A)[0]
    return _eigvals_values(A, **({} if out is None else {"out": out}))


LINALG_EIG = {"eig": eig, "eigvals": eigvals}
