"""Matrix products (the core set used by nn.Linear; the rest of linear algebra lives in linalg.py).

``matmul`` is not an operator of its own: as in PyTorch (``at::native::_matmul_impl``) it is a composite
that records ``dot``, ``mv``, ``mm`` or ``bmm`` plus the views that fold or broadcast batch dims, so the
graph has PyTorch's nodes by construction.
"""

from __future__ import annotations

import math

import numpy as np

from .._state import STATE
from .._tensor import Tensor
from ._jvp import dense_product_rule
from .bfloat16_in_float import FLOAT_COPIES, seen_dtype
from .registry import defop, recorded_strides


def _shape_error(a, b) -> RuntimeError:
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a2.shape[0]}x{a2.shape[1]} and "
                        f"{b2.shape[0]}x{b2.shape[1]})")


_BOOL = np.dtype(bool)


# ``np.dot`` first asks its arguments for ``__array_function__`` overrides (a Python dispatcher call, about a
# seventh of a small product's cost); a kernel's arguments are NumPy's own arrays, so the C function is called
# directly where NumPy exposes it.
_np_dot, _np_matmul = getattr(np.dot, "_implementation", np.dot), np.matmul
_F32 = np.dtype(np.float32)


def matrix_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul`` of two matrices of one dtype. Where both are laid out for BLAS (C or Fortran order), NumPy's
    ``dot`` makes the same BLAS call with less overhead of its own (a quarter of a small product's time) and gives
    the same result, laid out the same. Not for other layouts (matmul runs its own loop there), nor for complex
    matrices (their outer products, an inner size of 1, round differently in dot), which stay with matmul."""
    dt = a.dtype
    if (dt is _F32 or dt.kind != "c") and a.flags.forc and b.flags.forc:
        return _np_dot(a, b)
    return _np_matmul(a, b)


def real_matrix_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``matrix_product`` of two real floating matrices of one dtype (what mm's fast path hands it), without
    the dtype test."""
    if a.flags.forc and b.flags.forc:
        return _np_dot(a, b)
    return _np_matmul(a, b)


def _mm_kernel(a, b):
    # the hot case (not for float32 copies of bfloat16 operands: one may stand beside a float32 operand)
    if a.ndim == 2 and b.ndim == 2 and a.dtype is b.dtype and a.dtype is not _BOOL and not FLOAT_COPIES:
        try:
            return matrix_product(a, b)
        except ValueError:
            raise _shape_error(a, b) from None
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise _shape_error(a, b)
    same_matrix_dtypes(a, b)
    return _matmul_same_dtype(a, b, "addmm_impl_cpu_", empty_allowed=True)


def same_matrix_dtypes(a: np.ndarray, b: np.ndarray) -> None:
    """``addmm_impl_cpu_``'s check: PyTorch's mm does not promote."""
    a_dtype, b_dtype = seen_dtype(a), seen_dtype(b)
    if a_dtype != b_dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cpp_name(a_dtype)} != "
                           f"{_cpp_name(b_dtype)}")


def _matmul_same_dtype(a: np.ndarray, b: np.ndarray, kernel_name: str, empty_allowed: bool = False) -> np.ndarray:
    """np.matmul for operands of one dtype, refusing bool as PyTorch's CPU kernels do; with ``empty_allowed``
    not where an operand is empty (mm's and mv's kernels return an empty or zero result before they dispatch)."""
    if a.dtype.kind == "b" and not (empty_allowed and (not a.size or not b.size)):
        from .unary import unsupported

        raise unsupported(kernel_name, a.dtype)
    return np.matmul(a, b)


def _cpp_name(np_dtype) -> str:
    from ..backend.dtypes import cpp_type_name

    return cpp_type_name(np_dtype)


def column_major(node, k: int) -> bool:
    """Whether input ``k`` of an mm-like node was a column-major matrix when the node was made (PyTorch's test,
    on the sizes and strides its node recorded: ``strides[0] == 1 and strides[1] == sizes[0]``)."""
    strides = recorded_strides(node, k)
    return strides is not None and strides[0] == 1 and strides[1] == node._in_meta[k][0][0]


def mm_mat1_backward(g: Tensor, mat2: Tensor, mat1_column_major: bool) -> Tensor:
    """PyTorch's ``mm_mat1_backward``: a column-major mat1 gets a column-major gradient (conj: a no-op on
    real tensors)."""
    from .views import t

    if mat1_column_major:
        return t(mm(mat2.conj(), t(g)))
    return mm(g, t(mat2).conj())


def mm_mat2_backward(g: Tensor, mat1: Tensor, mat2_column_major: bool) -> Tensor:
    """PyTorch's ``mm_mat2_backward``: a column-major mat2 gets a column-major gradient."""
    from .views import t

    if mat2_column_major:
        return t(mm(t(g), mat1.conj()))
    return mm(t(mat1).conj(), g)


def _mm_vjp(ctx, g):
    a, b = ctx.saved_tensors
    need = ctx.needs_input_grad
    # the inputs last to first, as PyTorch's generated backward
    gb = mm_mat2_backward(g, a, column_major(ctx, 1)) if need[1] else None
    return (mm_mat1_backward(g, b, column_major(ctx, 0)) if need[0] else None, gb)


# PyTorch's MmBackward0 keeps both operands' sizes, and the strides of each one whose gradient is computed.
MM_META = ("mat2_sym_sizes", "mat2_sym_strides", "self_sym_sizes", "self_sym_strides")

# Each operand is saved only when the other one needs a gradient; ``mm(a, b)`` and ``a @ b`` on matrices
# take the binary fast path.
mm = defop("mm(Tensor self, Tensor mat2) -> Tensor", _mm_kernel, vjp=_mm_vjp, saves=("self", "mat2"),
           save_if={"self": "mat2", "mat2": "self"}, fast="binary",
           meta=MM_META,
           jvp=lambda args, outs, ts: dense_product_rule(args, ts, mm))


# ---- matmul: PyTorch's composite -----------------------------------------------------------------------------


def _should_fold(t1: Tensor, t2: Tensor, has_out: bool = False) -> bool:
    """PyTorch's ``should_fold``: multiply a batched operand by a vector or matrix as one mm/mv over its
    flattened batch, when the other operand needs a gradient (a smaller backward; not for ``out=``) or the
    flattening is free (the batch dims of the larger operand are contiguous)."""
    a, b = t1._data, t2._data
    first_larger = a.ndim >= b.ndim
    big, small_nd = (a, b.ndim) if first_larger else (b, a.ndim)
    if not (big.ndim >= 3 and small_nd <= 2):
        return False
    if (t2 if first_larger else t1).requires_grad and not has_out:
        return True
    if a.ndim == 2:  # folding would need a copy of the transposed result
        return False
    if big.size == 0:
        return True
    shape, strides = list(big.shape), list(big.strides)
    if not first_larger:  # the larger operand enters transposed (mT)
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def _matmul_fold(t1: Tensor, t2: Tensor) -> Tensor:
    """A (..., n, k) operand against a vector or matrix: one mm/mv over the flattened batch."""
    from .linalg import mv
    from .views import _unsafe_view, reshape, t, transpose

    swap = t2.ndim > t1.ndim  # the batched operand is the second one: work on the transposed product
    big = transpose(t2, -2, -1) if swap else t1
    small = (t(t1) if t1.ndim == 2 else t1) if swap else t2
    lead = tuple(big.shape[:-1])
    folded = reshape(big, (math.prod(lead), big.shape[-1]))
    if small.ndim == 1:
        return _unsafe_view(mv(folded, small), lead)
    out = _unsafe_view(mm(folded, small), lead + (small.shape[1],))
    return transpose(out, -2, -1).contiguous() if swap else out


def _matmul_batched(t1: Tensor, t2: Tensor) -> Tensor:
    """Both operands broadcast to a common batch, flattened to 3-D, multiplied by bmm."""
    from .linalg import bmm
    from .shape_extra import _broadcast_shape
    from .views import _unsafe_view, expand, reshape, squeeze, unsqueeze

    s1, s2 = tuple(t1.shape), tuple(t2.shape)
    n, m1 = (s1[-2] if len(s1) > 1 else 1), s1[-1]
    m2, p = (s2[-2] if len(s2) > 1 else s2[0]), (s2[-1] if len(s2) > 1 else 1)
    b1, b2 = s1[:-2], s2[:-2]
    # a batch of one that needs a gradient is dropped, so the fold above applies (as in PyTorch)
    if len(s1) == 3 and len(s2) == 3 and b1[0] != b2[0]:
        if b1[0] == 1 and t1.requires_grad:
            return matmul(squeeze(t1, 0), t2)
        if b2[0] == 1 and t2.requires_grad:
            return matmul(t1, squeeze(t2, 0))
    batch = _broadcast_shape(b1, b2)
    count = math.prod(batch)
    e1 = reshape(expand(t1, batch + (n, m1)), (count, n, m1))
    if len(s2) == 1:
        e2 = unsqueeze(reshape(expand(t2, batch + (m2,)), (count, m2)), 2)
    else:
        e2 = reshape(expand(t2, batch + (m2, p)), (count, m2, p))
    out_shape = batch + ((n,) if len(s1) > 1 else ()) + ((p,) if len(s2) > 1 else ())
    out = bmm(e1, e2)
    if len(s2) == 1:
        out = squeeze(out, -1)
    return _unsafe_view(out, out_shape)


def _matmul(t1: Tensor, t2: Tensor) -> Tensor:
    d1, d2 = t1._data.ndim, t2._data.ndim
    if d1 == 2 and d2 == 2:  # the hot case first
        return _mm_matrices(t1, t2)
    from .linalg import dot, mv

    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(t1, t2)
    if d1 == 2 and d2 == 1:
        return mv(t1, t2)
    if d1 == 1 and d2 == 2:
        from .views import squeeze_, unsqueeze

        return squeeze_(mm(unsqueeze(t1, 0), t2), 0)  # in place, as PyTorch: SqueezeBackward4
    if _should_fold(t1, t2):
        return _matmul_fold(t1, t2)
    return _matmul_batched(t1, t2)


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Matrix product with NumPy's broadcasting rules, decomposed as PyTorch decomposes it."""
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            from .._arg_parser import tp_name

            raise TypeError(f"matmul(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {tp_name(value)}")
    if STATE.special and STATE.autocast is not None:
        return _autocast_matmul(matmul, input, other, out)
    if out is None:
        if STATE.profiler is not None:
            return STATE.profiler.composite("aten::matmul", (input, other), _matmul)
        return _matmul(input, other)
    from .linalg import _into, check_dot_out

    if input._data.ndim == 1 and other._data.ndim == 1:  # (dot_out checks out's dtype before the product's shapes)
        check_dot_out(input, out)
    result = _matmul(input, other)
    if out._data.dtype != result._data.dtype:  # (the mm/mv/bmm out= it ends in checks out's dtype)
        from .variants import _expected_dtype

        raise RuntimeError(_expected_dtype(result._data.dtype, out._data.dtype, 0))
    return _into(result, out, "matmul", out_op=_matmul_out_op(input, other))


def _autocast_matmul(fn, input: Tensor, other: Tensor, out: Tensor | None = None) -> Tensor:
    """``fn`` (matmul, or ``a @ b``) as CPU autocast runs aten::matmul: on operands cast to its dtype."""
    from ..amp.cpu_policy import LOWER_PRECISION_FP, call_with_policy

    return call_with_policy(LOWER_PRECISION_FP, fn, (input, other), {} if out is None else {"out": out})


def _matmul_out_op(t1: Tensor, t2: Tensor) -> str:
    """The out= operator PyTorch's matmul ends in for these operands (``_matmul_impl`` with an out): dot, mv
    or mm for vectors and matrices, mv or mm over a folded batch where its layout allows, else bmm."""
    d1, d2 = t1.dim(), t2.dim()
    if d1 <= 2 and d2 <= 2:
        return "dot" if d1 == d2 == 1 else "mv" if d2 == 1 else "mm"
    if _should_fold(t1, t2, has_out=True):
        return "mv" if min(d1, d2) == 1 else "mm"
    return "bmm"


def _matmul_dunder_general(self: Tensor, other):
    """``a @ b`` for anything but two matrices (and whenever the fast path cannot run)."""
    if not isinstance(other, Tensor):
        if not isinstance(other, np.ndarray):
            return NotImplemented
        from .._factories import as_tensor

        other = as_tensor(other)
    if not isinstance(self, Tensor):
        return NotImplemented
    if STATE.autocast is not None:
        return _autocast_matmul(_matmul_dunder_general, self, other)
    if STATE.profiler is not None:  # named as PyTorch's profiler shows ``a @ b``
        return STATE.profiler.composite("aten::matmul", (self, other), _matmul_dunder_matrices)
    return _matmul_dunder_matrices(self, other)


def _matmul_dunder_matrices(self: Tensor, other: Tensor) -> Tensor:
    if self._data.ndim == 2 and other._data.ndim == 2:
        return mm(self, other)  # mm's general path: a transform or an observer is active
    return _matmul(self, other)


def _mm_fast_for_matrices():
    """``a @ b``: for two matrices, mm's eager fast path with the matrix product called directly for same-dtype
    float operands (as the fast path of a ufunc op does); everything else goes to the full matmul."""
    from . import fastpath

    return fastpath.binary(mm, dunder=True, ufunc=real_matrix_product, matrices=_matmul_dunder_general)


_mm_matrices = _mm_fast_for_matrices()


matmul.dunder = _mm_matrices
