"""Linear algebra: matrix products, contractions (einsum, tensordot, kron), triangular and diagonal parts,
norms, and the decompositions and solvers of ``torch.linalg``. All ops accept leading batch dimensions.

Backward rules of the decompositions (qr, eigh, svd, cholesky) follow the gauge-invariant forms of
PyTorch's FunctionsManual, written in dispatched ops so that they are differentiable again.
"""

from __future__ import annotations

import builtins
import functools
import math
import string
from typing import NamedTuple

import numpy as np

from .._arg_parser import refuse_as_torch, refuse_non_tensors_among
from .._state import STATE
from .._strides import contiguous_as_torch, dense_in_order, with_strides
from .._tensor import Tensor, _wrap
from ..backend import dtypes as _dt
from ..return_types import out_return, out_type, return_type
from . import aten_norm
from . import views as _views
from ._jvp import dense_product_rule, dense_product_terms, plus, scaled, self_term, zero_aware_product_rule
from ._util import broadcast_mismatch, opmath_dtype, refuse_half, result_dtype, unsupported, wrap_dim, wrap_dims
from .bfloat16_in_float import as_seen, seen_dtype, stands_for_bfloat16
from .complex_ops import input_is_real, real_part_for_real_inputs
from .linalg_core import _matmul_same_dtype, matmul, mm, same_matrix_dtypes
from .lu import lu_factor, permute_rows, pivots_parity
from .registry import REGISTRY, defop
from .scalar_fill import scalar_for


class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a numerical failure (singular or non positive-definite input). Named as
    PyTorch's class is, so a traceback ends in ``..._C._LinAlgError: linalg.inv: ...`` as it does there."""


_LinAlgError.__module__ = "tracegrad._C"
LinAlgError = _LinAlgError


# ---- helpers -----------------------------------------------------------------------------------------------


def _f_contiguous(x: np.ndarray) -> np.ndarray:
    """Each matrix column-major (the batch row-major): the layout LAPACK writes, which PyTorch's LU has, with
    PyTorch's strides for dims of size 1 too."""
    nd = x.ndim
    return with_strides(x, dense_in_order(x.shape, (nd - 2, nd - 1, *range(nd - 3, -1, -1))))


def _column_major(kernel, outputs: tuple[int, ...] | None = None, left_at: int | None = None):
    """``kernel`` with its matrix results (the ``outputs`` of a tuple, or the single result) laid out as LAPACK
    writes them and PyTorch returns them: each matrix column-major. It shows in ``stride()`` and
    ``is_contiguous()``, and in graphs: reshaping such a result copies (ReshapeAliasBackward0) where a row-major
    one is a view. Solving X A = B (``left`` false, the argument at ``left_at``) gives a row-major X: PyTorch
    solves the transposed system and transposes back."""
    def laid_out(*args):
        result = kernel(*args)
        if left_at is not None and len(args) > left_at and not args[left_at]:
            if outputs is None:
                return np.ascontiguousarray(result)
            return tuple(np.ascontiguousarray(r) if i in outputs else r for i, r in enumerate(result))
        if outputs is None:
            return _f_contiguous(result) if result.ndim >= 2 else result
        result = list(result)
        for i in outputs:
            if result[i].ndim >= 2:
                result[i] = _f_contiguous(result[i])
        return tuple(result)

    return laid_out


def _tname(np_dtype) -> str:
    from ..backend.dtypes import scalar_type_name

    return scalar_type_name(np_dtype)


def _check_float(name: str, a: np.ndarray, low_precision: bool = True) -> None:
    """PyTorch's checkFloatingOrComplex; ``low_precision=False`` refuses Half as well, in its words."""
    bfloat16 = a.dtype is _dt.bfloat16.np
    if a.dtype.kind not in "fc" and not bfloat16:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_tname(a.dtype)}")
    if not low_precision and (a.dtype.char == "e" or bfloat16 or stands_for_bfloat16(a.dtype)):
        got = "BFloat16" if a.dtype.char != "e" else _tname(a.dtype)
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {got}")


def _check_matrix(name: str, a: np.ndarray, arg: str = "A") -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def _check_square(name: str, a: np.ndarray, arg: str = "A") -> None:
    _check_matrix(name, a, arg)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")


def _batch_prefix(a: np.ndarray, index: int) -> str:
    return f"(Batch element {index}): " if a.ndim > 2 else ""


def _matrices(a: np.ndarray) -> np.ndarray:
    return a.reshape((-1,) + a.shape[-2:])


def _mT(t: Tensor) -> Tensor:
    from .views import transpose

    return transpose(t, -2, -1)


def _mH(t: Tensor) -> Tensor:
    """``t.mH`` as PyTorch's formulas take it: transpose, then conj (no node for a real t, so that real
    graphs are those of ``mT``)."""
    return _mT(t).conj()


def _t(m: Tensor) -> Tensor:
    """``m.t()`` (TBackward0), which PyTorch's matrix-product formulas use where the linalg ones use ``mT``."""
    from .views import t

    return t(m)


def _const(array: np.ndarray) -> Tensor:
    return _wrap(np.ascontiguousarray(array))


def _sgn(t: Tensor) -> Tensor:
    """sign(t) as a constant of t's dtype (the registry's ``sign`` when present); t / |t| (``sgn``, which
    PyTorch's formulas call) for complex t, where ``sign`` raises."""
    op = REGISTRY.get("sgn" if t.is_complex() else "sign")
    if op is not None:
        return op(t)
    from .creation import to_dtype
    from .pointwise import gt, lt, sub

    return sub(to_dtype(gt(t, 0), t.dtype), to_dtype(lt(t, 0), t.dtype))


def _abs(t: Tensor) -> Tensor:
    op = REGISTRY.get("abs")
    if op is not None:
        return op(t)
    from .pointwise import mul

    return mul(t, _sgn(t))


def _isnan(t: Tensor) -> Tensor:
    from .pointwise import ne

    return ne(t, t)


def _scaled(t: Tensor, s) -> Tensor:
    """A gradient times the conjugate of the scalar ``s`` (beta/alpha enter PyTorch's backward formulas as
    ``maybe_multiply(grad, beta.conj())``)."""
    from .pointwise import mul

    return t if s == 1 else mul(t, s.conjugate() if s.__class__ is complex else s)


def _eps(np_dtype) -> float:
    return float(np.finfo(np_dtype).eps)


def _into(result, out, name: str, copies: bool = False, out_op: str | None = None):
    """``out=`` for composite functions: the result stored into ``out``. Most refuse autograd, as the out=
    operator PyTorch's composite ends in does: ``name`` is that operator (``mm`` for ``linalg_multi_dot``),
    which refuses grad and tangents in its own words; with ``copies`` (tensordot, linalg.norm) PyTorch copies
    the recorded result in instead (see ``variants.copy_out``). ``out_op`` names the operator refusing
    tangents where the composite refuses grad itself first (``matmul``'s check, then ``mm_out``)."""
    if out is None:
        return result
    from .variants import _store, copy_out, out_with_grad_error

    results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if copies:
        copy_out(results, outs)
        return out
    if STATE.grad_enabled and builtins.any(t.requires_grad for t in results + outs):
        raise out_with_grad_error(name)
    for dst, src in zip(outs, results):
        _store(dst, src)
    if STATE.fw_grad_levels:
        from ..autograd.forward_ad import refuse_out_tangents

        refuse_out_tangents(out_op or name, results + outs)  # (the results carry the inputs' tangents)
    return out_return(result, outs, out)


# ---- matrix products ---------------------------------------------------------------------------------------


def check_solve_inputs(b: np.ndarray, A: np.ndarray, name: str) -> None:
    """ATen's linearSolveCheckInputs: ``b`` and ``A`` of one dtype, ``A`` square, and as many rows in ``b`` as
    ``A`` has columns."""
    if seen_dtype(b) != seen_dtype(A):
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_tname(b)} and A "
                           f"of type {_tname(A)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
                           "matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {A.shape[-1]} by "
                           f"{A.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")


def _same_dtype(a: np.ndarray, b: np.ndarray) -> None:
    a_dtype, b_dtype = seen_dtype(a), seen_dtype(b)
    if a_dtype != b_dtype:
        raise RuntimeError(f"expected scalar type {_tname(a_dtype)} but found {_tname(b_dtype)}")


def _bmm_check(a, b, name1: str = "batch1", name2: str = "batch2") -> None:
    if a.ndim != 3:
        raise RuntimeError(f"{name1} must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError(f"{name2} must be a 3D tensor")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, "
                           f"{a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")


def _bmm_kernel(a, b):
    _bmm_check(a, b)
    # (ATen allocates the result in batch2's dtype and returns it before any dtype check when the product is empty;
    # seen_dtype: a bfloat16 batch2 reaches here as a float32 copy, and a float32 batch1 would not round it back)
    if not a.size or not b.size:
        return np.zeros((a.shape[0], a.shape[1], b.shape[2]), seen_dtype(b))
    _bmm_dtypes(a, b, "bmm")
    return _matmul_same_dtype(a, b, "bmm")


# (float, double and the complex types, which ATen's batched gemm takes; half goes matrix by matrix)
_BATCHED_GEMM_TYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def _batch_items_contiguous_or_transposed(t: np.ndarray) -> bool:
    """ATen's test of whether a batch's matrices are row- or column-major (a dim of size 1's stride ignored)."""
    _, rows, cols = t.shape
    strides = [st // t.itemsize for st in t.strides]
    return (strides[2] == 1 and (rows == 1 or strides[1] >= cols)) or (
        strides[1] == 1 and (cols == 1 or strides[2] >= rows))


def _bmm_dtypes(a: np.ndarray, b: np.ndarray, loop_name: str, per_matrix_dtypes=same_matrix_dtypes) -> None:
    """bmm's and baddbmm's dtype checks, which depend on the path their CPU kernel takes: under 400 multiply-adds
    a loop dispatched on batch1's dtype (bool refused, as ``loop_name``) that reads the result (batch2's dtype) as
    batch1's; a batched gemm dispatched on the result's dtype that reads batch1 as it; else ``addmm_impl_cpu_``
    per matrix (``per_matrix_dtypes``: its check, or baddbmm's ``addmm_``'s)."""
    if a.shape[1] * a.shape[2] * b.shape[2] < 400:
        _refuse_bool(loop_name, a.dtype)
        _same_dtype(a, b)
    elif (seen_dtype(b) in _BATCHED_GEMM_TYPES and _batch_items_contiguous_or_transposed(a)
          and _batch_items_contiguous_or_transposed(b)):
        _same_dtype(b, a)
    else:
        per_matrix_dtypes(a, b)
        _refuse_bool("addmm_impl_cpu_", a.dtype)


def _bmm_vjp(ctx, g):
    a, b = ctx.saved_tensors
    need = ctx.needs_input_grad
    gb = bmm(_mT(a).conj(), g) if need[1] else None  # (inputs last to first, as PyTorch's generated backward)
    return (bmm(g, _mT(b).conj()) if need[0] else None, gb)


bmm = defop("bmm(Tensor self, Tensor mat2) -> Tensor", _bmm_kernel, vjp=_bmm_vjp, saves=("self", "mat2"),
            save_if={"self": "mat2", "mat2": "self"}, jvp=lambda args, outs, ts: dense_product_rule(args, ts, bmm))


def _mv_check(m, v, inp=None) -> None:
    """PyTorch's addmv meta checks (mv's too, with no self): self a vector of the result's length or a single
    element, even with beta=0."""
    self_ndim = 1 if inp is None else inp.ndim
    if m.ndim != 2 or v.ndim != 1 or self_ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self_ndim}, {m.ndim}, {v.ndim}")
    if m.shape[1] != v.shape[0] or (inp is not None and inp.size not in (1, m.shape[0])):
        rows = m.shape[0] if inp is None else dim_size(inp, 0)  # (a 0-d self fails reading it, an IndexError)
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({m.shape[0]}x{m.shape[1]}), "
                           f"vec ({v.shape[0]})")
    first, m_dtype, v_dtype = seen_dtype(v if inp is None else inp), seen_dtype(m), seen_dtype(v)
    if not (m_dtype == v_dtype == first):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_tname(first)}, "
                           f"{_tname(m_dtype)}, and {_tname(v_dtype)}")


def _mv_kernel(m, v):
    _mv_check(m, v)
    return _matmul_same_dtype(m, v, "addmv_impl_cpu", empty_allowed=True)


def _outer_grads(g: Tensor, a: Tensor, b: Tensor, need: tuple) -> tuple:
    """Gradients of outer(a, b) (written with sums so mixed dtypes promote as in the forward)."""
    from .pointwise import mul
    from .reductions_extra import sum as _sum
    from .views import unsqueeze

    ga = _sum(mul(g, unsqueeze(b.conj(), 0)), 1) if need[0] else None
    gb = _sum(mul(g, unsqueeze(a.conj(), 1)), 0) if need[1] else None
    return ga, gb


def _mv_vjp(ctx, g):
    m, v = ctx.saved_tensors
    need = ctx.needs_input_grad
    # PyTorch: grad.ger(vec.conj()), self.conj().t().mv(grad)
    return (outer(g, v.conj()) if need[0] else None, mv(_t(m.conj()), g) if need[1] else None)


mv = defop("mv(Tensor self, Tensor vec) -> Tensor", _mv_kernel, vjp=_mv_vjp, saves=("self", "vec"),
           save_if={"self": "vec", "vec": "self"}, jvp=lambda args, outs, ts: dense_product_rule(args, ts, mv))


def _dot_kernel(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        n, m = a.shape[0], b.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
                           f"number of elements, but got {n} and {m} elements respectively")
    a_dtype, b_dtype = seen_dtype(a), seen_dtype(b)
    if a_dtype != b_dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_tname(a_dtype)} and "
                           f"{_tname(b_dtype)}")
    return np.asarray(_matmul_same_dtype(a, b, "dot"))


def _dot_vjp(ctx, g):
    from .pointwise import mul
    from .views import reshape

    a, b = ctx.saved_tensors
    g = reshape(g, (1,))  # a 0-d g broadcast against vectors: see _full_evenly_distribute
    need = ctx.needs_input_grad
    return (mul(g, b.conj()) if need[0] else None, mul(g, a.conj()) if need[1] else None)


def _vdot_vjp(ctx, g):
    """PyTorch's: grad.conj() * other for self (vdot conjugates its first argument), grad * self for other."""
    from .pointwise import mul
    from .views import reshape

    a, b = ctx.saved_tensors
    g = reshape(g, (1,))
    need = ctx.needs_input_grad
    return (mul(g.conj(), b) if need[0] else None, mul(g, a) if need[1] else None)


def _vdot_kernel(a, b):
    # (a real operand as given: a conjugated copy would hide a float32 copy of a bfloat16 one from dot's checks)
    return _dot_kernel(np.conj(a) if a.dtype.kind == "c" else a, b)


dot = defop("dot(Tensor self, Tensor tensor) -> Tensor", _dot_kernel, vjp=_dot_vjp, saves=("self", "tensor"),
            save_if={"self": "tensor", "tensor": "self"},
            jvp=lambda args, outs, ts: zero_aware_product_rule(args, ts, dot))  # dot(self_t, tensor) + dot(self, t_t)
vdot = defop("vdot(Tensor self, Tensor other) -> Tensor", _vdot_kernel, vjp=_vdot_vjp, saves=("self", "other"),
             jvp=lambda args, outs, ts: zero_aware_product_rule(args, ts, vdot))


def check_dot_out(self: Tensor, out: Tensor) -> None:
    """dot_out's and vdot_out's check, before the product's own: out must already have self's dtype."""
    if out._data.dtype != self._data.dtype:
        raise RuntimeError(f"result dtype {_tname(out._data.dtype)} does not match input dtype "
                           f"{_tname(self._data.dtype)}")


dot.check_outs_before_kernel = vdot.check_outs_before_kernel = lambda bound, outs: check_dot_out(bound[0], outs[0])


def _check_outer(a: np.ndarray, b: np.ndarray) -> None:
    for name, x in (("self", a), ("vec2", b)):
        if x.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {x.ndim}-D")


def _outer_kernel(a, b):
    _check_outer(a, b)
    dt = result_dtype(a, b)
    return np.multiply.outer(a.astype(dt, copy=False), b.astype(dt, copy=False))


def outer(input: Tensor, vec2: Tensor, *, out=None) -> Tensor:
    """As PyTorch's composite: ``input.reshape(-1, 1) * vec2`` (a view and MulBackward0 in the graph)."""
    from .pointwise import mul
    from .views import reshape

    _check_outer(input._data, vec2._data)
    return _into(mul(reshape(input, (-1, 1)), vec2), out, "mul")


def ger(input: Tensor, vec2: Tensor, *, out=None) -> Tensor:
    """Deprecated ``torch.ger``: ``outer``, after TORCH_WARN_ONCE (one flag for ger and ger_out)."""
    from .._warnings import warn_once_at_caller

    warn_once_at_caller("ger", "torch.ger is deprecated and will be removed in a future PyTorch release. Use "
                               "torch.outer instead.")
    return outer(input, vec2) if out is None else outer(input, vec2, out=out)


def inner(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """Contraction over the last dims; a 0-d operand multiplies."""
    from .pointwise import mul

    # (PyTorch's inner_out: mul_out for a 0-d operand, else tensordot_out, which copies its recorded result in)
    if input.ndim == 0 or other.ndim == 0:
        return _into(mul(input, other), out, "mul")
    if input.shape[-1] != other.shape[-1]:  # (inner's own check, before tensordot's)
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    if input.dtype != other.dtype:  # (tensordot's check, before a vector pair goes to dot)
        raise RuntimeError("both inputs should have same dtype")
    return _into_tensordot(tensordot(input, other, ([-1], [-1])), out, "inner")


def _into_tensordot(result: Tensor, out, name: str) -> Tensor:
    """``tensordot_out`` (which ``inner``'s out= ends in) copies the result into ``out`` after checking that it
    already has the result's dtype (no cast)."""
    if out is not None and out._data.dtype != result._data.dtype:
        raise RuntimeError(f"tensordot: Expected the output tensor to have dtype {_tname(result._data.dtype)}, but "
                           f"got an output tensor with dtype {_tname(out._data.dtype)}")
    return _into(result, out, name, copies=True)


# ---- add + product family ----------------------------------------------------------------------------------


def _scalars_for(dt, beta, alpha):
    """beta and alpha as the kernel's type holds them: PyTorch converts each with ``Scalar::to``, which refuses
    what the type cannot hold (1j or 1e300 for float, 2.5e9 for int) and truncates a float for integers."""
    if beta.__class__ is int and alpha.__class__ is int and beta == alpha == 1:
        return 1, 1  # (the defaults: nothing to convert)
    return scalar_for(beta, dt), scalar_for(alpha, dt)


def _refuse_bool(kernel_name: str, dt: np.dtype) -> None:
    if dt.kind == "b":  # (PyTorch's CPU matrix products are not dispatched over bool)
        raise unsupported(kernel_name, dt)


def _bias(inp: np.ndarray, shape: tuple) -> np.ndarray:
    from .views import _expand_kernel

    return _expand_kernel(inp, shape)


def _combine(inp, prod, beta, alpha, opmath: bool = False):
    """``beta * inp + alpha * prod``; the scalars are converted to the operands' type (to float for half, where
    ``opmath``: the kernels that compute half in float; prod may be wider, as an integer batch sum is)."""
    beta, alpha = _scalars_for(opmath_dtype(inp.dtype) if opmath else inp.dtype, beta, alpha)
    scaled = prod if alpha == 1 else prod * alpha
    if beta == 0:  # self's values are ignored (its NaNs do not propagate), but PyTorch still expands it
        if inp.shape != prod.shape:
            _bias(inp, prod.shape)
        return np.ascontiguousarray(scaled).astype(prod.dtype, copy=False)
    bias = _bias(inp, prod.shape)
    return (scaled + (bias if beta == 1 else bias * beta)).astype(prod.dtype, copy=False)


def _self_in_result(inp, shape: tuple, dt: np.dtype) -> np.ndarray:
    """A new result of ``shape`` and ``dt`` holding self expanded (PyTorch's ``result.copy_(self)``)."""
    from .pointwise import copy_into

    result = np.empty(shape, dt)
    copy_into(result, _bias(inp, shape))
    return result


def _times_beta(result: np.ndarray, beta) -> np.ndarray:
    """``result.mul_(beta)``, or ``zero_()`` for beta == 0: a beta whose type promotes past the result's is
    refused as mul_ refuses it (``result type Long can't be cast to the desired output type Bool``)."""
    if beta == 0:
        result[...] = 0
        return result
    from .pointwise import mul_

    return mul_.kernel(result, beta)


def _empty_product_sum(inp, shape: tuple, dt: np.dtype, beta) -> np.ndarray:
    """``beta * self`` where the product sums over nothing: ATen's shortcut before its kernels dispatch (so bool
    passes), which leaves an empty result as it is and otherwise multiplies self's copy in place by beta."""
    if 0 in shape or beta == 0:  # (self's values ignored: its NaNs do not propagate)
        return np.zeros(shape, dt)
    return _times_beta(_self_in_result(inp, shape, dt), beta)


def _addmm_dtypes(inp, m1, m2) -> None:
    """addmm's dtype checks (addbmm's too, on its batches): self's against mat2's, then mat1's."""
    inp_dtype, m1_dtype, m2_dtype = seen_dtype(inp), seen_dtype(m1), seen_dtype(m2)
    if inp_dtype != m2_dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_tname(inp_dtype)} and "
                           f"{_tname(m2_dtype)}")
    if m1_dtype != m2_dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_tname(m1_dtype)} and "
                           f"{_tname(m2_dtype)}")


def _addmm_checks(inp, m1, m2) -> None:
    # (the dtypes first, self's before mat1's, then the shapes: ATen's addmm's order)
    _addmm_dtypes(inp, m1, m2)
    if m1.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {m1.ndim}-D tensor")
    if m2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {m2.ndim}-D tensor")
    if m1.shape[1] != m2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m1.shape[0]}x{m1.shape[1]} and "
                           f"{m2.shape[0]}x{m2.shape[1]})")


def _addmm_kernel(inp, m1, m2, beta=1, alpha=1):
    _addmm_checks(inp, m1, m2)
    if not m1.shape[1] or not m1.shape[0] or not m2.shape[1]:
        return _empty_product_sum(inp, (m1.shape[0], m2.shape[1]), seen_dtype(m1), beta)
    _refuse_bool("addmm_impl_cpu_", m1.dtype)
    if m1.dtype == np.float16:  # (PyTorch's half gemm sums in float and adds self before its one rounding)
        single = np.float32
        return _combine(inp.astype(single), np.matmul(m1.astype(single), m2.astype(single)), beta,
                        alpha).astype(m1.dtype)
    return _combine(inp, np.matmul(m1, m2), beta, alpha)


def _addmm_inplace_checks(inp, m1, m2, *_) -> None:
    """addmm_ is structured: self is held to the result's sizes after the matrices' checks, before the kernel
    expands it (so in those words, whatever beta)."""
    if m1.ndim == m2.ndim == 2 and inp.shape == (m1.shape[0], m2.shape[1]):
        return  # (a valid call pays this comparison only)
    _addmm_checks(inp, m1, m2)
    _bad_inplace(inp.shape, (m1.shape[0], m2.shape[1]))


def _addmm_vjp(ctx, g):
    from .linalg_core import column_major, mm_mat1_backward, mm_mat2_backward

    m1, m2 = ctx.saved_tensors
    beta, alpha = ctx.attrs
    need = ctx.needs_input_grad
    # PyTorch's mm_mat1_backward / mm_mat2_backward: the branch follows each matrix's layout in the forward
    gi = _scaled(g, beta) if need[0] else None
    g1 = _scaled(mm_mat1_backward(g, m2, column_major(ctx, 1)), alpha) if need[1] else None
    g2 = _scaled(mm_mat2_backward(g, m1, column_major(ctx, 2)), alpha) if need[2] else None
    return gi, g1, g2


def _unexpanded_self_times_beta(inp, rows: int, beta) -> np.ndarray:
    """addmv's empty-matrix shortcut (before the kernel refuses bool) writes ``mul_out(result, self, beta)`` with
    self unexpanded: a 0-d or one-element self resizes the result to its own shape, with resize_output's warning."""
    from .variants import warn_out_resized

    warn_out_resized(np.empty((rows,)), inp.shape)
    beta_in_type, _ = _scalars_for(inp.dtype, beta, 1)
    return np.asarray(inp * beta_in_type).astype(inp.dtype, copy=False)


def _addmv_kernel(inp, m, v, beta=1, alpha=1):
    _mv_check(m, v, inp)
    if m.size:
        _refuse_bool("addmv_impl_cpu", m.dtype)
    elif m.shape[0] and beta != 0 and inp.shape != (m.shape[0],):
        return _unexpanded_self_times_beta(inp, m.shape[0], beta)
    return _combine(inp, np.matmul(m, v), beta, alpha)


def _addmv_vjp(ctx, g):
    m, v = ctx.saved_tensors
    beta, alpha = ctx.attrs
    need = ctx.needs_input_grad
    return (_scaled(g, beta) if need[0] else None,
            _scaled(outer(g, v.conj()), alpha) if need[1] else None,
            _scaled(mv(_t(m).conj(), g), alpha) if need[2] else None)


def _self_dtype_as_batch1(inp, b1, b2) -> None:
    """baddbmm's meta check: self's dtype against batch1's only (batch2's is the result's), all three named by
    their C++ types ('long int')."""
    if seen_dtype(inp) != seen_dtype(b1):
        name = _dt.cpp_type_name
        raise RuntimeError(f"Input dtypes must be the same, got: input {name(inp)}, batch1: {name(b1)}, "
                           f"batch2: {name(b2)}")


def dim_size(a: np.ndarray, dim: int) -> int:
    """``a.size(dim)`` with PyTorch's IndexError for a dim that is not there (its words differ for a 0-d one)."""
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return a.shape[wrap_dim(dim, a.ndim)]


def _self_fits(inp, b1, b2, batched: bool) -> None:
    """PyTorch's expand of self to the result's sizes, which it reads from batch1 and batch2 (a batch with too few
    dims fails that read, an IndexError)."""
    target = ((dim_size(b1, 0),) if batched else ()) + (dim_size(b1, 1), dim_size(b2, 2))
    if inp.shape != target:
        _bias(inp, target)


def _checked_after_self(inp, b1, b2, beta, batched: bool, own_checks) -> None:
    """The batches' checks as PyTorch orders them: after self is expanded to the result, so a self that does not
    fit is refused first, even with beta=0 (where the product alone is returned). A valid call pays nothing: a
    self that does not fit then fails the expand in ``_combine``, in the same words."""
    try:
        own_checks(inp, b1, b2)
    except RuntimeError:
        _self_fits(inp, b1, b2, batched)
        raise
    if beta == 0:
        _self_fits(inp, b1, b2, batched)


def _baddbmm_checks(inp, b1, b2) -> None:
    _self_dtype_as_batch1(inp, b1, b2)
    _bmm_check(b1, b2)


def _baddbmm_kernel(inp, b1, b2, beta=1, alpha=1):
    _checked_after_self(inp, b1, b2, beta, True, _baddbmm_checks)
    if not b1.size or not b2.size:  # (ATen's shortcut, before the batches' dtypes are compared)
        return _empty_product_sum(inp, (b1.shape[0], b1.shape[1], b2.shape[2]), seen_dtype(b2), beta)
    _bmm_dtypes(b1, b2, "baddbmm", lambda m1, m2: _addmm_dtypes(m2, m1, m2))  # (each result matrix is batch2's type)
    return _combine(inp, np.matmul(b1, b2), beta, alpha, opmath=True)


def _addbmm_checks(inp, b1, b2) -> None:
    # (addbmm's own checks and words, not bmm's)
    if b1.ndim != 3 or b2.ndim != 3:
        _bmm_check(b1, b2)
    if b1.shape[0] != b2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b1.shape[0]} and "
                           f"{b2.shape[0]}")
    if b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({b1.shape[1]}x{b1.shape[2]} and "
                           f"{b2.shape[1]}x{b2.shape[2]})")
    if b1.shape[0]:  # (each batch's addmm_ checks the dtypes: with none, nothing does)
        _addmm_dtypes(inp, b1, b2)


def _addbmm_empty_sum(inp, b1, b2, beta) -> np.ndarray:
    """addbmm over no batches or an empty inner dim: self copied into the result, then (ATen's addbmm_impl_) one
    ``mul_(beta)`` for no batches, else each batch's ``addmm_`` shortcut: nothing for an empty result, else a
    multiply by beta, then by 1 for every further batch (refused for a bool result)."""
    shape, batches, dt = (b1.shape[1], b2.shape[2]), b1.shape[0], seen_dtype(inp)  # (the result is self's type)
    result = _self_in_result(inp, shape, dt) if beta != 0 else np.zeros(shape, dt)
    if batches and 0 in shape:
        return result
    result = _times_beta(result, beta)
    return _times_beta(result, 1) if batches > 1 else result


def _addbmm_kernel(inp, b1, b2, beta=1, alpha=1):
    _checked_after_self(inp, b1, b2, beta, False, _addbmm_checks)
    if not b1.size or not b2.size:
        return _addbmm_empty_sum(inp, b1, b2, beta)
    _refuse_bool("addmm_impl_cpu_", b1.dtype)
    prod = np.matmul(b1, b2)
    # (integers sum in their own type, wrapping as PyTorch's; NumPy's sum would widen them to int64)
    summed = prod.sum(axis=0, dtype=prod.dtype if prod.dtype.kind in "iu" else None)
    return _combine(inp, summed, beta, alpha, opmath=True)


def _baddbmm_vjp(ctx, g):
    b1, b2 = ctx.saved_tensors
    beta, alpha = ctx.attrs
    need = ctx.needs_input_grad
    # baddbmm as PyTorch: grad.bmm(batch2.transpose(1, 2)), batch1.transpose(1, 2).bmm(grad); addbmm's 2-D
    # gradient broadcasts over the batch through matmul
    product = bmm if g.ndim == 3 else matmul
    return (_scaled(g, beta) if need[0] else None,
            _scaled(product(g, _mT(b2).conj()), alpha) if need[1] else None,
            _scaled(product(_mT(b1).conj(), g), alpha) if need[2] else None)


def _addr_vectors(v1, v2) -> None:
    for name, v in (("vec1", v1), ("vec2", v2)):  # (addr's own check, before outer's)
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")


def _addr_scalars(dt: np.dtype, beta, alpha) -> None:
    """addr's own checks of its scalars, beta's first (add's, but a complex one for integers is refused as a
    float)."""
    for name, value in (("beta", beta), ("alpha", alpha)):
        if value.__class__ is bool and dt.kind != "b":
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if dt.kind in "biu" and isinstance(value, (float, complex, np.inexact)):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")


def _addr_kernel(inp, v1, v2, beta=1, alpha=1):
    _addr_vectors(v1, v2)
    prod = _outer_kernel(v1, v2)
    if inp.shape != prod.shape:
        _bias(inp, prod.shape)  # (a self that does not expand is refused before the scalars)
    _addr_scalars(inp.dtype, beta, alpha)
    return _combine(inp, prod, beta, alpha)


def _addr_inplace_checks(inp, v1, v2, *_) -> None:
    """addr_ is PyTorch's addr_out with self as the result, which it does not expand: self must be 2-D and of the
    result's sizes, whatever beta."""
    _addr_vectors(v1, v2)
    if inp.ndim != 2:
        raise RuntimeError(f"2D tensor expected, got {inp.ndim}D tensor for input")
    if inp.shape != (v1.shape[0], v2.shape[0]):
        raise RuntimeError(f"size mismatch, input: {list(inp.shape)}, v1: {list(v1.shape)}, v2: {list(v2.shape)}")


def _addr_vjp(ctx, g):
    v1, v2 = ctx.saved_tensors
    beta, alpha = ctx.attrs
    need = ctx.needs_input_grad
    ga, gb = _outer_grads(g, v1, v2, need[1:])
    return (_scaled(g, beta) if need[0] else None,
            _scaled(ga, alpha) if ga is not None else None, _scaled(gb, alpha) if gb is not None else None)


def _bad_inplace(have: tuple, want: tuple) -> None:
    raise RuntimeError(f"Bad in-place call: input tensor size {list(have)} and output tensor size {list(want)} "
                       "should match")


class _SelfResized(Exception):  # noqa: N818 - a signal to _resizing_self, never seen outside this module
    def __init__(self, shape: tuple) -> None:
        super().__init__(shape)
        self.shape = shape


def _resizing_self(op):
    """addbmm_ is PyTorch's addbmm_out with self as the result: a self that expands to the result's sizes (checked
    by the kernel) is resized to them, holding its values expanded, and then written."""
    def inplace(self: Tensor, *args, **kwargs) -> Tensor:
        try:
            return op(self, *args, **kwargs)
        except _SelfResized as resized:
            self._before_write()
            self._data = np.ascontiguousarray(np.broadcast_to(self._data, resized.shape))
            return op(self, *args, **kwargs)

    inplace.__name__ = inplace.__qualname__ = op.name
    return inplace


# PyTorch's structured kernels, whose in-place form refuses a self of another shape than the result in its own words
_STRUCTURED = frozenset({"addmm", "addmv", "baddbmm"})


def _add_family(name: str, args: str, kernel, vjp, saves: tuple, jvp=None, meta: tuple = (), inplace_checks=None):
    from .pointwise import write_into

    schema = f"{args}, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
    # each factor is read only by the other one's gradient, so kept only when that one requires grad
    crossed = {saves[0]: saves[1], saves[1]: saves[0]}
    op = defop(f"{name}(Tensor self, {schema}", kernel, vjp=vjp, saves=saves, attrs=("beta", "alpha"),
               jvp=jvp, meta=meta, save_if=crossed)

    def inplace(a, *rest):
        if inplace_checks is not None:
            inplace_checks(a, *rest)
        result = kernel(a, *rest)
        if result.shape != a.shape:
            if name in _STRUCTURED:
                _bad_inplace(a.shape, result.shape)
            raise _SelfResized(result.shape)  # (addbmm_'s: addr_ holds self to the result's sizes first)
        write_into(a, result)
        return a

    inplace_schema = f"{name}_(Tensor(a!) self, {schema}".replace("-> Tensor", "-> Tensor(a!)")
    inplace_op = defop(inplace_schema, inplace, vjp=vjp, saves=saves, attrs=("beta", "alpha"),
                       node_name=op.node_class._name, jvp=jvp, meta=meta, save_if=crossed)
    return op, inplace_op


def _add_product_jvp(product):
    """The forward rule of ``addmm``/``baddbmm``, whose formulas read ``maybe_multiply(self_t, beta)
    + maybe_multiply(mat1_t.<product>(mat2_p), alpha) + maybe_multiply(mat1_p.<product>(mat2_t), alpha)``, added in
    that order (self_t * 0 when beta == 0)."""

    def jvp(args, outs, tangents):
        beta, alpha = args[3], args[4]
        first, second = dense_product_terms(args[1:], tangents[1:], product)
        return plus(plus(self_term(tangents, args, beta), scaled(first, alpha)), scaled(second, alpha))

    return jvp


# AddmmBackward0 keeps them as MmBackward0 does (linalg_core.MM_META).
ADDMM_META = ("mat1_sym_sizes", "mat1_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")
addmm, addmm_ = _add_family("addmm", "Tensor mat1, Tensor mat2", _addmm_kernel, _addmm_vjp, ("mat1", "mat2"),
                            jvp=_add_product_jvp(matmul), meta=ADDMM_META, inplace_checks=_addmm_inplace_checks)
addmv, addmv_ = _add_family("addmv", "Tensor mat, Tensor vec", _addmv_kernel, _addmv_vjp, ("mat", "vec"))
baddbmm, baddbmm_ = _add_family("baddbmm", "Tensor batch1, Tensor batch2", _baddbmm_kernel, _baddbmm_vjp,
                                ("batch1", "batch2"), jvp=_add_product_jvp(bmm))
addbmm, addbmm_ = _add_family("addbmm", "Tensor batch1, Tensor batch2", _addbmm_kernel, _baddbmm_vjp,
                              ("batch1", "batch2"),
                              meta=("batch1_sym_argsize_0", "batch1_sym_argsize_1", "batch2_sym_argsize_2"))
# (addbmm_out copies self into out, then runs each batch's addmm_ on out: its checks see out as self)
addbmm.check_outs_before_kernel = lambda bound, outs: _addbmm_checks(outs[0]._data, bound[1]._data, bound[2]._data)
addr, addr_ = _add_family("addr", "Tensor vec1, Tensor vec2", _addr_kernel, _addr_vjp, ("vec1", "vec2"),
                          inplace_checks=_addr_inplace_checks)


# ---- einsum ------------------------------------------------------------------------------------------------

_LETTERS = string.ascii_letters


_ELLIPSIS = "..."


def _read_ellipsis(text: str, i: int, repeated: bool, where: str, not_part: str) -> int:
    """The index of an ellipsis' last dot, given the index ``i`` of its first one; PyTorch's parser refuses a
    second ellipsis (``repeated``) and stray dots in its words."""
    if repeated:
        raise RuntimeError(f"einsum(): found '.' for {where}")
    if not (i + 2 < len(text) and text[i + 1] == "." and text[i + 2] == "."):
        raise RuntimeError(f"einsum(): found '.' for {not_part}")
    return i + 2


_LETTER_SET = frozenset(_LETTERS)


def _bad_label(index: int) -> RuntimeError:
    return RuntimeError(f"einsum(): invalid subscript given at index {index} in the equation string, "
                        "subscripts must be in [a-zA-Z]")


def _read_inputs(lhs: str, n_operands: int) -> list[list[str]]:
    """The left-hand side's labels per operand (``...`` as one item), read character by character as
    PyTorch's C++ parser does, so that its first complaint is PyTorch's."""
    terms: list[list[str]] = [[]]
    i = 0
    while i < len(lhs):
        ch = lhs[i]
        if ch == ".":
            op = len(terms) - 1
            i = _read_ellipsis(lhs, i, _ELLIPSIS in terms[-1], f"operand {op} for which an ellipsis was already "
                               "found", f"operand {op} that is not part of any ellipsis")
            terms[-1].append(_ELLIPSIS)
        elif ch == ",":
            if len(terms) == n_operands:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            terms.append([])
        elif ch != " ":
            if ch not in _LETTER_SET:  # (a test inline: this loop runs for every character of every call)
                raise _bad_label(i)
            terms[-1].append(ch)
        i += 1
    if len(terms) != n_operands:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return terms


def _read_output(rhs: str, offset: int, counts: dict[str, int]) -> list[str]:
    """The output's labels (``...`` as one item); ``offset`` is where ``rhs`` starts in the equation."""
    out: list[str] = []
    i = 0
    while i < len(rhs):
        ch = rhs[i]
        if ch == ".":
            i = _read_ellipsis(rhs, i, _ELLIPSIS in out, "output but an ellipsis (...) was already found",
                               "output that is not part of any ellipsis (...)")
            out.append(_ELLIPSIS)
        elif ch != " ":
            if ch not in _LETTER_SET:
                raise _bad_label(offset + i)
            if ch in out:
                raise RuntimeError(f"einsum(): output subscript {ch} appears more than once in the output")
            if ch not in counts:
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the equation for any "
                                   "input operand")
            out.append(ch)
        i += 1
    return out


def _spelt_equation(equation: str, ndims: tuple[int, ...]) -> tuple[list[list[str]], list[str]]:
    """Each operand's labels and the output's, each ellipsis spelt as letters the equation does not use."""
    lhs, arrow, rhs = equation.partition("->")
    labelled = _read_inputs(lhs, len(ndims))
    ell = []
    counts: dict[str, int] = {}
    for i, (term, ndim) in enumerate(zip(labelled, ndims)):
        dots = _ELLIPSIS in term
        n = len(term) - dots
        for ch in term:
            if ch != _ELLIPSIS:
                counts[ch] = counts.get(ch, 0) + 1
        if (dots and n > ndim) or (not dots and n != ndim):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) "
                               + ("is more than" if dots else "does not match")
                               + f" the number of dimensions ({ndim}) for operand {i}"
                               + ("" if dots else " and no ellipsis was given"))
        ell.append(ndim - n if dots else 0)
    n_ell = builtins.max(ell, default=0)
    fresh = [c for c in _LETTERS if c not in counts][:n_ell]

    def spelt(term: list[str], n_dims: int) -> list[str]:  # each ellipsis as the last n_dims fresh letters
        return [c for ch in term for c in ((fresh[n_ell - n_dims:] if n_dims else []) if ch == _ELLIPSIS else [ch])]

    terms = [spelt(term, e) for term, e in zip(labelled, ell)]
    if arrow:
        out = spelt(_read_output(rhs, len(lhs) + 2, counts), n_ell)
    else:
        out = fresh + sorted(ch for ch, c in counts.items() if c == 1)  # (A-Z, then a-z: PyTorch's order)
    return terms, out


class _OperandSteps(NamedTuple):
    """How ``_einsum`` aligns one operand to the plan's labels, and what it checks of its sizes."""
    repeats: tuple[tuple[str, int, int], ...]  # (label, dim, the label's previous dim) of each repeated label
    firsts: tuple[tuple[int, int], ...]  # (label index, dim) of each label's first occurrence
    diagonals: tuple[tuple[int, int], ...]  # (first dim, repeated dim) of each repeated label, in turn
    unsqueezes: tuple[int, ...]  # where each label the operand lacks is inserted, in turn
    perm: tuple[int, ...]  # the permute to the labels' order
    where: tuple[int, ...]  # the aligned position of each of the operand's dims (perm's inverse)


class _EinsumPlan(NamedTuple):
    """What einsum derives from its equation and its operands' dims alone: the aligned labels (the output's,
    then the contracted ones) and each operand's steps."""
    labels: tuple[str, ...]
    n_out: int
    ellipsis_letters: frozenset[str]
    operands: tuple[_OperandSteps, ...]


@functools.lru_cache(maxsize=256)
def _einsum_plan(equation: str, ndims: tuple[int, ...]) -> _EinsumPlan:
    """A pure function of the equation and the operands' dims, cached: a model calls one equation again and
    again. An equation refused is not cached, so each call raises again from the same check."""
    terms, out = _spelt_equation(equation, ndims)
    # letters standing for ellipsis dims are the ones the equation does not spell; they come first among
    # the contracted dims, the other contracted labels follow in PyTorch's order (A-Z, then a-z)
    used = {c for term in terms for c in term}
    ell = sorted(used - set(equation), key=_LETTERS.index)
    labels = out + [c for c in ell if c not in out]
    labels += sorted(c for c in used if c not in labels)
    index = {c: k for k, c in enumerate(labels)}
    steps = tuple(_operand_steps(term, index) for term in terms)
    return _EinsumPlan(tuple(labels), len(out), frozenset(ell), steps)


def _operand_steps(term: list[str], index: dict[str, int]) -> _OperandSteps:
    """One operand's alignment: a repeated label's diagonal takes its first occurrence's place (so the operand's
    dim ``dim`` is then the term's ``j``-th), each missing label is unsqueezed at the end, then one permute."""
    perm = [-1] * len(index)
    previous: dict[str, int] = {}
    repeats, firsts, diagonals = [], [], []
    dim = 0
    for j, c in enumerate(term):
        k = index[c]
        if c in previous:
            repeats.append((c, j, previous[c]))
            diagonals.append((perm[k], dim))
        else:
            firsts.append((k, j))
            perm[k] = dim
            dim += 1
        previous[c] = j
    unsqueezes = []
    for k in range(len(index)):
        if perm[k] == -1:
            unsqueezes.append(dim)
            perm[k] = dim
            dim += 1
    where = [0] * len(perm)
    for k, d in enumerate(perm):
        where[d] = k
    return _OperandSteps(tuple(repeats), tuple(firsts), tuple(diagonals), tuple(unsqueezes), tuple(perm),
                         tuple(where))


def _check_repeated_sizes(plan: _EinsumPlan, shapes: list[tuple]) -> None:
    """A label repeated within one operand must have one size (checked for every operand before any view, as
    PyTorch's parser does; sizes across operands are checked once each operand is aligned)."""
    for i, (steps, shape) in enumerate(zip(plan.operands, shapes)):
        for label, dim, previous in steps.repeats:
            if shape[dim] != shape[previous]:
                raise RuntimeError(f"einsum(): subscript {label} is repeated for operand {i} but the sizes "
                                   f"don't match, {shape[dim]} != {shape[previous]}")


# einsum, tensordot and kron are composites, as in PyTorch (aten/src/ATen/native/Linear.cpp): they record
# the permutes, views, sums and bmm/mm/mul that PyTorch's implementations call, so the graph is PyTorch's.


def _sum_keep(t: Tensor, dims: list) -> Tensor:
    from .reductions_extra import sum as sum_dims  # the public sum: sum.dim_IntList records SumBackward1

    return sum_dims(t, dims, True)


def _right_first(lo: list, ro: list) -> bool:
    """Whether PyTorch's ``sumproduct_pair`` multiplies the right operand first: when every dim only the left
    operand has comes after every dim only the right one has (the bmm's result then lies in the output's order)."""
    return bool(lo) and bool(ro) and lo[0] > ro[-1]


def _unseen(operands) -> bool:
    """Whether nothing sees the views einsum aligns its operands with: no node is recorded for them (no grad), no
    transform, profiler or observer watches (``views.plain``), and they are consumed by the products, whose results
    are fresh tensors. There the views are made as arrays (``_Aligner``)."""
    if len(operands) < 2:  # (one operand: the result may be its view)
        return False
    recorded = STATE.grad_enabled and any(t.requires_grad for t in operands)
    return not recorded and all(_views.plain(t) for t in operands)


class _Aligner:
    """einsum's intermediate views (permutes, unsqueezes, reshapes of its operands). Recorded or watched, each is
    its operator (by the views' lean path, which records the same nodes); unseen (``_unseen``), each is its
    kernel's array wrapped as a fresh tensor: the same arrays, so the products give the same bits, without the
    views' bookkeeping, which nothing reads."""

    def __init__(self, unseen: bool):
        self.unseen = unseen

    def view_op(self, op, t: Tensor, *rest) -> Tensor:
        return _wrap(op.kernel(t._data, *rest)) if self.unseen else _views.call_plain(op, t, *rest)

    def reshape(self, t: Tensor, shape: tuple) -> Tensor:
        if self.unseen:  # (as ``views.reshape``: a view where the strides allow one, else its copy)
            a = t._data
            viewed = _views.view.kernel(a, shape) if a.flags.c_contiguous else _views.viewed_as(a, shape)
            if viewed is not None:
                return _wrap(viewed)
        return _views.reshape(t, shape)


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list, align: _Aligner) -> Tensor:
    """PyTorch's ``sumproduct_pair`` (keepdim): ``(left * right).sum(sum_dims, keepdim=True)`` for operands
    aligned dim by dim, by permuting to (batch, rows, summed) x (batch, summed, cols) and one bmm; ``align`` makes
    the operands' permutes and reshapes (the result's view and permute are always recorded: they may be seen)."""
    from .pointwise import mul

    call_plain, permute, view = _views.call_plain, _views.permute, _views.view
    if not sum_dims:
        return mul(left, right)
    # (the sizes read once: summing a dim of one operand below leaves the other dims' sizes as they are)
    ls, rs = tuple(left.shape), tuple(right.shape)
    lro, lo, ro = [], [], []
    sum_size = 1
    for i in range(len(ls)):
        sl, sr = ls[i] != 1, rs[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= ls[i]
            elif sl:  # summed in one operand only: sum it right away
                left = _sum_keep(left, [i])
            elif sr:
                right = _sum_keep(right, [i])
        elif sl and sr:
            lro.append(i)
        elif sl:
            lo.append(i)
        else:
            ro.append(i)
    if _right_first(lo, ro):
        left, right, lo, ro, ls, rs = right, left, ro, lo, rs, ls
    lro_size = math.prod(ls[d] for d in lro)
    lo_size = math.prod(ls[d] for d in lo)
    ro_size = math.prod(rs[d] for d in ro)
    out_size = [ls[d] for d in lro + lo] + [1] * len(sum_dims) + [rs[d] for d in ro]
    order = lro + lo + sum_dims + ro
    inverse = [0] * len(order)
    for k, d in enumerate(order):
        inverse[d] = k
    # (the views by their lean path, which records the same nodes: a small einsum is mostly their dispatch)
    left = align.reshape(align.view_op(permute, left, tuple(order)), (lro_size, lo_size, sum_size))
    right = align.reshape(align.view_op(permute, right, tuple(lro + sum_dims + ro + lo)),
                          (lro_size, sum_size, ro_size))
    return call_plain(permute, call_plain(view, bmm(left, right), tuple(out_size)), tuple(inverse))


def _check_broadcast(shape: tuple, where: tuple, plan: _EinsumPlan, label_sizes: list, operand: int) -> None:
    """Record an aligned operand's sizes, refusing one that does not broadcast with the earlier operands', in
    PyTorch's words and in its order (the operand's own dims, after the views, whose nodes it has made by then)."""
    labels = plan.labels
    for dim, k in enumerate(where):
        size = shape[k]
        if size == 1:
            continue
        if label_sizes[k] not in (1, size):
            if labels[k] in plan.ellipsis_letters:
                raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {operand}has size "
                                   f"{size} which does not broadcast with previously seen ellipsis with size "
                                   f"{label_sizes[k]} for the respective dimension")
            raise RuntimeError(f"einsum(): subscript {labels[k]} has size {size} for operand {operand} "
                               f"which does not broadcast with previously seen size {label_sizes[k]}")
        label_sizes[k] = size


def _einsum(equation: str, operands: list) -> Tensor:
    """PyTorch's einsum without a contraction path: align every operand to (output dims, contracted dims)
    (diagonals for repeated labels, unsqueezes for missing ones, one permute), then contract left to right
    with ``_sumproduct_pair``."""
    diagonal, movedim, permute, unsqueeze, view = (_views.diagonal, _views.movedim, _views.permute, _views.unsqueeze,
                                                   _views.view)
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    # (no dtype check of its own: PyTorch's bmm refuses mixed dtypes, in the order sumproduct_pair hands it the
    # operands, while a product without contracted dims is a ``mul``, which promotes)
    shapes = [tuple(t.shape) for t in operands]
    plan = _einsum_plan(equation, tuple(len(shape) for shape in shapes))
    _check_repeated_sizes(plan, shapes)
    labels, n_out = plan.labels, plan.n_out
    counts = [0] * len(labels)  # how many operands have each dim with a size other than 1
    label_sizes = [1] * len(labels)
    ops = []
    align = _Aligner(_unseen(operands))
    for op, shape, steps in zip(operands, shapes, plan.operands):
        for k, j in steps.firsts:
            counts[k] += shape[j] != 1
        for first, repeated in steps.diagonals:
            op = movedim(diagonal(op, 0, first, repeated), -1, first)
        for dim in steps.unsqueezes:
            op = align.view_op(unsqueeze, op, dim)
        op = align.view_op(permute, op, tuple(steps.perm))
        _check_broadcast(op.shape, steps.where, plan, label_sizes, len(ops))
        ops.append(op)
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        a_shape, b_shape = tuple(a.shape), tuple(b.shape)
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(n_out, len(labels)):
            if a_shape[d] != 1 and b_shape[d] != 1:
                counts[d] -= 1
                if counts[d] == 1:  # no later operand has it: contract it in this product
                    sum_dims.append(d)
                    counts[d] = 0
            elif counts[d] == 1:  # only one of the pair has it and no later operand: sum it first
                if a_shape[d] != 1:
                    a_sum.append(d)
                    counts[d] = 0
                elif b_shape[d] != 1:
                    b_sum.append(d)
                    counts[d] = 0
        if a_sum:
            a = _sum_keep(a, a_sum)
        if b_sum:
            b = _sum_keep(b, b_sum)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims, align))
    if len(labels) > n_out:  # the contracted dims are of size 1 now, or still to be summed (one operand)
        if len(operands) > 1:
            return view(ops[0], tuple(ops[0].shape[:n_out]))
        from .reductions_extra import sum as sum_dims

        return sum_dims(ops[0], list(range(n_out, len(labels))))
    return ops[0]


def _subscript(n) -> str:
    """One label of einsum's sublist form, as torch's Python reads it (0-25: A-Z, 26-51: a-z)."""
    if n == Ellipsis:
        return "..."
    if n >= 0 and n < 26:
        return chr(ord("A") + n)
    if n >= 26 and n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def _sublist_equation(args: tuple) -> tuple[str, tuple]:
    """``einsum(op1, [0, 1], op2, [1, 2], [0, 2])`` -> ("AB,BC->AC", (op1, op2)): an odd count of arguments ends
    in the output's subscripts (torch's reading, whatever the last argument is)."""
    equation = ",".join("".join(_subscript(s) for s in sub) for sub in args[1::2])
    if len(args) % 2 == 1:
        return equation + "->" + "".join(_subscript(s) for s in args[-1]), args[:-1:2]
    return equation, args[::2]


def einsum(*args) -> Tensor:
    """``einsum(equation, *operands)``, ``einsum(equation, [operands])`` or the sublist form."""
    if STATE.profiler is not None:
        return STATE.profiler.composite("aten::einsum", args, _einsum_call)
    return _einsum_call(*args)


def _einsum_call(*args) -> Tensor:
    # torch's Python reads the form, then passes (equation, operands) to its C++ einsum, whose parser refuses a
    # non-str equation or a non-tensor operand
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least "
                         "one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    try:
        if isinstance(equation, bytes):  # (torch's parser takes bytes for a str)
            equation = equation.decode()
        if not isinstance(equation, str):  # (a kernel would read a list of letters as well)
            raise TypeError("einsum's equation")
        return _einsum(equation, list(operands))
    except Exception:
        refuse_as_torch("einsum", (equation, operands), {})
        raise


# ---- tensordot / kron --------------------------------------------------------------------------------------


def _tensordot(a: Tensor, b: Tensor, dims_a: list, dims_b: list) -> Tensor:
    """PyTorch's tensordot: sum broadcast (size-1) contracted dims, permute the contracted dims last (first)
    and flatten each operand to a matrix, one mm, reshape to the free dims."""
    from .views import permute, reshape

    x, y = a._data, b._data
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if x.dtype != y.dtype:
        raise RuntimeError("both inputs should have same dtype")
    da, db = list(wrap_dims(dims_a, x.ndim)), list(wrap_dims(dims_b, y.ndim))
    t1, t2, csize = a, b, 1
    for i, j, oi, oj in zip(da, db, dims_a, dims_b):
        if y.shape[j] == 1:
            t1 = _sum_keep(t1, [i])
        elif x.shape[i] == 1:
            t2 = _sum_keep(t2, [j])
        elif x.shape[i] != y.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {x.shape[i]} in dim "
                               f"{oi} and second has size {y.shape[j]} in dim {oj}")
        else:
            csize *= x.shape[i]
    free_a = [i for i in range(x.ndim) if i not in da]
    free_b = [j for j in range(y.ndim) if j not in db]
    rows = [t1.shape[i] for i in free_a]
    cols = [t2.shape[j] for j in free_b]
    # the contracted dims as the caller gave them (negative ones too): PermuteBackward0 keeps them so in PyTorch
    size1, size2 = math.prod(rows), math.prod(cols)
    # a single number: PyTorch flattens both operands and takes their dot (each operand permuted, then shaped)
    as_vectors = size1 == 1 and size2 == 1
    m1 = _contraction_operand(permute(t1, free_a + list(dims_a)), (csize,) if as_vectors else (size1, csize))
    m2 = _contraction_operand(permute(t2, list(dims_b) + free_b), (csize,) if as_vectors else (csize, size2))
    return reshape(dot(m1, m2) if as_vectors else mm(m1, m2), tuple(rows + cols))


def _contraction_operand(t: Tensor, shape: tuple) -> Tensor:
    """``t`` reshaped to ``shape``, where a 1-d ``t`` flattened stays as it is (``flatten`` records no
    ViewBackward0 for it in PyTorch)."""
    from .views import reshape

    return t if len(shape) == 1 and t.ndim == 1 else reshape(t, shape)


def _tensordot_dims(a: Tensor, b: Tensor, dims) -> tuple:
    """The two dim lists torch's Python makes of ``dims`` (an int, a pair of lists, or a tensor of either)."""
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
        return dims_a, dims_b
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            if dims.size()[0] != 2:
                raise AssertionError(f"dims tensor must have size 2 in first dimension, got {dims.size()[0]}")
            return dims[0].tolist(), dims[1].tolist()
        count = int(dims.item())
        if count < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        return list(range(-count, 0)), list(range(count))
    if dims < 0:
        raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
    if dims > builtins.min(a.dim(), b.dim()):
        raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
    return list(range(-dims, 0)), list(range(dims))


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """Contract the last ``dims`` dims of ``a`` with the first of ``b``, or the listed dims pairwise: torch's
    Python makes the two dim lists, then its C++ ``tensordot`` parses them (lists of ints only)."""
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    try:
        return _into_tensordot(_tensordot(a, b, dims_a, dims_b), out, "tensordot")
    except Exception:
        refuse_as_torch("tensordot", (a, b, dims_a, dims_b), {} if out is None else {"out": out})
        raise


def kron(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """PyTorch's KronImpl: ``_unsafe_view`` each operand to interleaved (a_i, 1) / (1, b_i) dims, multiply,
    ``_unsafe_view`` the product to (a_i * b_i)."""
    from .pointwise import mul
    from .views import _unsafe_view

    nd = builtins.max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    a4 = tuple(s for n in sa for s in (n, 1))
    b4 = tuple(s for n in sb for s in (1, n))
    product = mul(_unsafe_view(input, a4), _unsafe_view(other, b4))
    return _into(_unsafe_view(product, tuple(x * y for x, y in zip(sa, sb))), out, "mul")


# ---- diagonal and triangular parts -------------------------------------------------------------------------


def _trace_kernel(a):
    if a.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {a.ndim}")
    if a.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    dt = np.int64 if a.dtype.kind in "iu" else a.dtype
    return np.asarray(np.trace(a, dtype=dt))


def _trace_vjp(ctx, g):
    """PyTorch's trace_backward: zeros of n * m elements, the gradient filled in place at every (m + 1)-th
    (IndexFillBackward1), viewed as the matrix."""
    from .. import _factories
    from .creation import new_zeros
    from .shape_extra import index_fill_tensor_
    from .views import view

    rows, cols = ctx.input_shapes[0]
    flat = new_zeros(g, (rows * cols,))
    diagonal_positions = _factories.arange(0, rows * cols, cols + 1, dtype=_dt.int64)
    return view(index_fill_tensor_(flat, 0, diagonal_positions, g), (rows, cols))


trace = defop("trace(Tensor self) -> Tensor", _trace_kernel, vjp=_trace_vjp, meta=("self_sym_sizes",))


def _tri(name: str, np_fn):
    def kernel(a, diagonal=0):
        if a.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return np_fn(a, diagonal)

    def vjp(ctx, g):
        (diagonal,) = ctx.attrs
        return op(g, diagonal)

    def inplace(a, diagonal=0):
        a[...] = kernel(a, diagonal)
        return a

    op = defop(f"{name}(Tensor self, SymInt diagonal=0) -> Tensor", kernel, vjp=vjp, attrs=("diagonal",))
    inplace_op = defop(f"{name}_(Tensor(a!) self, SymInt diagonal=0) -> Tensor(a!)", inplace, vjp=vjp,
                       attrs=("diagonal",), node_name=op.node_class._name)
    return op, inplace_op


tril, tril_ = _tri("tril", np.tril)
triu, triu_ = _tri("triu", np.triu)


def _diag_kernel(a, diagonal=0):
    if a.ndim == 1:
        return np.diag(a, diagonal)
    if a.ndim == 2:
        return np.diagonal(a, diagonal).copy()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")


def _diag_vjp(ctx, g):
    from .creation import new_zeros
    from .views import diagonal, diagonal_scatter

    (offset,) = ctx.attrs
    shape = ctx.input_shapes[0]
    if len(shape) == 1:
        return diagonal(g, offset)
    return diagonal_scatter(new_zeros(g, shape), g, offset)


# (torch's diag.out; the function below computes as torch's composite diag does)
_diag_out = defop("diag(Tensor self, int diagonal=0) -> Tensor", _diag_kernel, vjp=_diag_vjp, attrs=("diagonal",))


def diag(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """torch's composite: a vector's diagonal matrix is ``diag_embed`` (DiagEmbedBackward0), a matrix's diagonal is
    ``diagonal_copy`` (DiagonalBackward0_copy)."""
    from .namespace_extras import diagonal_copy

    ndim = input.ndim
    if out is not None:
        return _diag_into(input, diagonal, out)
    if ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")
    return diag_embed(input, diagonal) if ndim == 1 else diagonal_copy(input, diagonal)


def _diag_into(input: Tensor, diagonal: int, out: Tensor) -> Tensor:  # noqa: A002
    """torch's diag_out: its own checks of the dims and, for a vector, that the result casts to out's dtype; then
    out's dtype must be the result's (diag_embed's and diagonal_copy's out= checks)."""
    from ..backend.dtypes import scalar_type_name
    from .pointwise import _can_cast_like_torch

    if input.ndim not in (1, 2):
        raise RuntimeError(f"Supports 1D or 2D tensors. Got {input.ndim}D")
    have, want = out._data.dtype, input._data.dtype
    if input.ndim == 1 and isinstance(out, Tensor) and not _can_cast_like_torch(want, have):
        raise RuntimeError(f"diag: result type {scalar_type_name(want)} can't be cast to the desired out= type "
                           f"{scalar_type_name(have)}")
    return _diag_out(input, diagonal, out=out)


def _diag_embed_kernel(a, offset=0, dim1=-2, dim2=-1):
    nd = a.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (a.shape[-1] if a.ndim else 1) + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    view = np.diagonal(out, offset, -2, -1)
    view.setflags(write=True)
    view[...] = a
    return np.ascontiguousarray(np.moveaxis(out, (-2, -1), (d1, d2)))


def _diag_embed_vjp(ctx, g):
    from .views import diagonal

    offset, dim1, dim2 = ctx.attrs
    return diagonal(g, offset, dim1, dim2)


diag_embed = defop("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
                   _diag_embed_kernel, vjp=_diag_embed_vjp, attrs=("offset", "dim1", "dim2"))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    from .views import reshape

    return diag_embed(reshape(input, (-1,)), offset)


def _cross_kernel(a, b, dim=-1):
    """PyTorch's checks in its order: as many dims (only the others broadcast), both of length 3 along ``dim``
    before broadcasting, the batch dims broadcasting, then one dtype."""
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    lengths = dim_size(a, dim), dim_size(b, dim)
    if lengths != (3, 3):
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {lengths[0]} and "
                           f"{lengths[1]}")
    mismatch = broadcast_mismatch([a.shape, b.shape])
    if mismatch is not None:
        raise mismatch
    _same_dtype(a, b)
    if a.dtype == np.bool_:  # (its kernel's dispatch: all types and complex, half and bfloat16, not bool)
        raise unsupported("cross", a.dtype)
    shape = np.broadcast_shapes(a.shape, b.shape)
    return np.cross(np.broadcast_to(a, shape), np.broadcast_to(b, shape), axis=wrap_dim(dim, len(shape)))


def _cross_vjp(ctx, g):
    a, b = ctx.saved_tensors
    (dim,) = ctx.attrs
    need = ctx.needs_input_grad
    # PyTorch's: other.conj().cross(grad), grad.cross(self.conj()) (conj: a no-op on real tensors)
    return (linalg_cross(b.conj(), g, dim=dim) if need[0] else None,
            linalg_cross(g, a.conj(), dim=dim) if need[1] else None)


# (its formula, linalg_cross(self_t, other_p, dim) + linalg_cross(self_p, other_t, dim), runs the kernel, which
# refuses a tangent of another dtype than the other operand's)
linalg_cross = defop("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor", _cross_kernel,
                     vjp=_cross_vjp, saves=("self", "other"), attrs=("dim",),
                     jvp=lambda args, outs, ts: zero_aware_product_rule(
                         args, ts, lambda a, b: linalg_cross(a, b, dim=args[2])))


def cross(input: Tensor, other: Tensor, dim=None, *, out=None) -> Tensor:
    """``torch.cross``: without ``dim``, the first dimension of size 3 (deprecated in PyTorch)."""
    if dim is None:
        if out is None:  # (torch's cross warns once a process; its cross_out says nothing)
            from .._warnings import warn_once_at_caller

            warn_once_at_caller("cross without dim", "Using torch.cross without specifying the dim arg is deprecated."
                                "\nPlease either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                                "default value of dim will change to agree with that of linalg.cross in a future "
                                "release.")
        # (the first dim of size 3 of ``input``, not of the broadcast shape)
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    extra = {} if out is None else {"out": out}
    return linalg_cross(input, other, dim=dim, **extra)


# ---- norms -------------------------------------------------------------------------------------------------


def _check_norm_dtype_widens(source: np.dtype, asked: np.dtype) -> None:
    """vector_norm's ``dtype=`` must hold the input's dtype (checked on the dtypes the float32 copies of a bfloat16
    call stand for: ``dtype=torch.bfloat16`` of a float32 input is refused, as torch refuses it)."""
    if _dt.promote_types(_dt.from_numpy_dtype(source), _dt.from_numpy_dtype(asked)).np != asked:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_tname(source)}) should be "
                           f"convertible without narrowing to the specified dtype ({_tname(asked)})")


def _vector_norm_kernel(a, ord=2, dim=None, keepdim=False, dtype=None):
    """``linalg.vector_norm`` (``torch.norm``, ``Tensor.norm``): float16/32/64 with ATen's CPU bits
    (``aten_norm``), complex inputs in NumPy's order."""
    if isinstance(ord, str):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not {type(ord).__name__}")
    _check_float("linalg.vector_norm", a)
    if dtype is not None:
        from ..backend.dtypes import to_dtype
        from .aten_sum import cast_as_aten

        dt = to_dtype(dtype).np
        if (dt.kind == "c") != (a.dtype.kind == "c"):
            kind = "complex" if a.dtype.kind == "c" else "real"
            raise RuntimeError(f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got {_tname(dt)}")
        _check_norm_dtype_widens(seen_dtype(a), as_seen(dt))
        a = cast_as_aten(a, dt)  # (laid out as ATen's ``self.to(dtype)``: the layout decides the order)
    axes = wrap_dims(dim, a.ndim) if dim is not None else None  # (a 0-d input takes dim 0 or -1 only)
    if not a.ndim:
        axes = None
    if axes == ():
        axes = None
    _check_norm_identity(a, ord, dim, axes)
    if aten_norm.supports(a.dtype):
        out = aten_norm.vector_norm_as_aten(a, float(ord), axes)
        return _norm_keepdim(out, a.shape, axes, keepdim)
    return vector_norm_numpy(a, ord, axes, keepdim)


def _check_norm_identity(a: np.ndarray, ord, dim, axes) -> None:
    """PyTorch's refusal of the norms without an identity (ord < 0 or inf) over nothing: the whole of an empty
    tensor, or an empty dim (named as the caller wrote it)."""
    if a.size or not (ord < 0 or ord == math.inf):
        return
    if axes is None:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty tensor because the "
                           "operation does not have an identity")
    for d in [dim] if isinstance(dim, int) else dim:
        if a.shape[wrap_dim(d, a.ndim)] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on the dimension {d}because "
                               "this dimension is empty and the operation does not have an identity")


def _norm_keepdim(out: np.ndarray, shape: tuple, axes, keepdim: bool) -> np.ndarray:
    """The reduced array with the reduced dims kept as 1s if asked. A ``keepdim`` that is no bool (nor int) is
    refused with a TypeError, which the argument guard turns into torch's message."""
    if not isinstance(keepdim, (builtins.bool, builtins.int, np.bool_)):
        raise TypeError(f"keepdim must be bool, not {type(keepdim).__name__}")
    if not keepdim:
        return np.asarray(out)
    return np.asarray(out).reshape(tuple(1 if axes is None or d in axes else s for d, s in enumerate(shape)))


def vector_norm_numpy(a: np.ndarray, ord, axes, keepdim: bool) -> np.ndarray:
    """The norm in NumPy's own order (complex inputs: their magnitudes' norm)."""
    x = np.abs(a)
    if np.isinf(ord):
        out = (np.max if ord > 0 else np.min)(x, axis=axes, keepdims=keepdim)
    elif ord == 0:
        out = np.sum(x != 0, axis=axes, keepdims=keepdim).astype(x.dtype)  # (real: a complex input's norm too)
    elif ord == 1:
        out = np.sum(x, axis=axes, keepdims=keepdim)
    elif ord == 2:
        out = np.sqrt(np.sum(x * x, axis=axes, keepdims=keepdim))
    else:
        with np.errstate(divide="ignore"):
            out = np.power(np.sum(np.power(x, ord), axis=axes, keepdims=keepdim), 1.0 / ord)
    return np.asarray(out, dtype=x.dtype)


def _vector_norm_vjp(ctx, g):
    x, norm = ctx.saved_tensors
    ord, dim, keepdim, _dtype = ctx.attrs
    return norm_backward(g, x, norm, ord, dim, keepdim)


def norm_backward(g: Tensor, x: Tensor, norm: Tensor, ord, dim, keepdim: bool):
    """PyTorch's norm_backward: the gradient of a vector p-norm (None for p = 0, as PyTorch's undefined one), with
    its ``self.sgn()`` (SgnBackward0 in a double backward's graph, for real inputs too)."""
    from .pointwise import div, eq, logical_or, mul, pow
    from .reductions_extra import zero_fill

    shape = tuple(x.shape)
    from .reductions_extra import restore_dims
    from .reductions_extra import sum as _sum

    dims = None if dim is None or (not isinstance(dim, int) and len(dim) == 0) else dim
    g = restore_dims(g, shape, dims, keepdim)
    norm = restore_dims(norm, shape, dims, keepdim)
    if ord == 0:
        return None  # piecewise constant: no gradient (PyTorch returns an undefined one)
    if ord == 1:
        return mul(_sgn_op(x), g)
    if ord == 2:
        return mul(g, zero_fill(eq(norm, 0), div(x, norm)))
    if np.isinf(ord):
        ax = _abs(x)
        mask = logical_or(eq(ax, norm), _isnan(ax))
        red = list(range(len(shape))) if dims is None else dims
        return mul(_sgn_op(x), mul(div(g, _sum(mask, red, True)), mask))
    if ord < 1:
        scaled = mul(_sgn_op(x), zero_fill(eq(x, 0), pow(_abs(x), ord - 1)))
        return mul(mul(scaled, g), pow(norm, 1 - ord))
    base = mul(_sgn_op(x), pow(_abs(x), ord - 1)) if ord < 2 else mul(x, pow(_abs(x), ord - 2))
    return mul(base, zero_fill(eq(norm, 0), div(g, pow(norm, ord - 1))))


def norm_jvp(x: Tensor, t: Tensor, ord, norm: Tensor, dim, keepdim: bool) -> Tensor:
    """PyTorch's norm_jvp, op for op (its in-place steps included: a tangent's backward through the 1-norm then
    finds sgn's saved result modified, as torch's does). ``dim`` None or empty: every dim."""
    from .complex_ops import real
    from .creation import zeros_like
    from .reductions_extra import sum as _sum

    dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if ord == 0:
        return zeros_like(norm)
    if ord == 1:
        return _sum(real(_mul_inplace(_sgn_op(x), t.conj())), dims, keepdim)
    if ord == 2:
        return _zero_where_norm_zero(_div_inplace(_sum(real(_mul(x, t.conj())), dims, keepdim), norm), norm)
    if np.isinf(ord):
        return _inf_norm_jvp(x, t, norm, dims, keepdim)
    from .binary import pow, pow_

    magnitude = _abs_op(x)
    if ord < 1:
        weight = _masked_fill_inplace(pow_(magnitude, ord - 1), _eq(x, 0))
        return _mul(_sum(_mul(weight, real(_mul(_sgn_op(x), t.conj()))), dims, keepdim), pow(norm, 1 - ord))
    if ord < 2:
        summed = _sum(_mul(pow_(magnitude, ord - 1), real(_mul(_sgn_op(x), t.conj()))), dims, keepdim)
    else:
        summed = _sum(_mul(pow_(magnitude, ord - 2), real(_mul(x, t.conj()))), dims, keepdim)
    from .pointwise import div

    return _zero_where_norm_zero(div(summed, pow(norm, ord - 1)), norm)


def _inf_norm_jvp(x: Tensor, t: Tensor, norm: Tensor, dims: list, keepdim: bool) -> Tensor:
    """norm_jvp's ord = ±inf: the tangent averaged over the entries whose magnitude is the norm (or NaN with it)."""
    from .binary import logical_and_, logical_or_
    from .complex_ops import real
    from .pointwise import div
    from .reductions_extra import count_nonzero, restore_dims
    from .reductions_extra import sum as _sum
    from .unary import isnan

    if not keepdim and x.ndim:
        norm = restore_dims(norm, tuple(x.shape), dims or None, keepdim)
    both_nan = logical_and_(isnan(x), isnan(norm))
    is_eq_max = _type_as(logical_or_(_eq(_abs_op(x), norm), both_nan), norm)
    nb_max = count_nonzero(is_eq_max, dims or None)
    if x.ndim:
        nb_max = restore_dims(nb_max, tuple(x.shape), dims or None, False)
    return _sum(div(_mul(real(_mul(_sgn_op(x), t.conj())), is_eq_max), nb_max), dims, keepdim)


def _type_as(t: Tensor, other: Tensor) -> Tensor:
    from .creation import to_dtype

    return to_dtype(t, other.dtype)


def _sgn_op(t: Tensor) -> Tensor:
    from .unary import sgn

    return sgn(t)


def _abs_op(t: Tensor) -> Tensor:
    from .unary import abs as abs_op

    return abs_op(t)


def _mul(a: Tensor, b: Tensor) -> Tensor:
    from .pointwise import mul

    return mul(a, b)


def _mul_inplace(a: Tensor, b: Tensor) -> Tensor:
    from .pointwise import mul_

    return mul_(a, b)


def _div_inplace(a: Tensor, b: Tensor) -> Tensor:
    from .pointwise import div_

    return div_(a, b)


def _eq(a: Tensor, b) -> Tensor:
    from .pointwise import eq

    return eq(a, b)


def _masked_fill_inplace(t: Tensor, mask: Tensor) -> Tensor:
    from .shape_extra import masked_fill_scalar_

    return masked_fill_scalar_(t, mask, 0)


def _zero_where_norm_zero(t: Tensor, norm: Tensor) -> Tensor:
    """``t.masked_fill_(norm == 0, 0)``: a zero norm's tangent is 0, not the 0 / 0 of the formula."""
    return _masked_fill_inplace(t, _eq(norm, 0))


def _vector_norm_jvp(args, outs, tangents):
    return norm_jvp(args[0], tangents[0], args[1], outs[0], args[2], args[3])


linalg_vector_norm = defop("linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, "
                           "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", _vector_norm_kernel,
                           vjp=_vector_norm_vjp, jvp=_vector_norm_jvp,
                           saves=("self", "result"), attrs=("ord", "dim", "keepdim", "dtype"), hidden=("dtype",))


def _dist_kernel(a, b, p=2):
    from .pointwise import _check_bool_subtraction

    _check_bool_subtraction(a, b)  # (torch's dist subtracts first: a bool operand is refused in sub's words)
    if a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
        bad = a if a.dtype.kind not in "fc" else b
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{_tname(bad.dtype)} instead.")
    return _vector_norm_kernel(np.subtract(a, b), p)


def _dist_vjp(ctx, g):
    """PyTorch: norm_backward(grad, self - other, p, result) for self, its negative for other."""
    from .pointwise import sub

    a, b, result = ctx.saved_tensors
    (p,) = ctx.attrs
    need = ctx.needs_input_grad
    # (other's first, as PyTorch's generated backward goes through the inputs last to first; each recomputes
    # self - other, as PyTorch's formulas do)
    gb = _negated_or_refused(norm_backward(g, sub(a, b), result, p, None, False)) if need[1] else None
    ga = norm_backward(g, sub(a, b), result, p, None, False) if need[0] else None
    return ga, gb


def _negated_or_refused(grad: Tensor | None) -> Tensor:
    """``-grad`` for dist's other operand. PyTorch's norm_backward gives no tensor for p = 0, whose negation its
    generated code then refuses (only self's gradient, left undefined, is taken for zeros)."""
    from .pointwise import neg

    if grad is None:
        raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 "
                           "'self'")
    return neg(grad)


def _dist_jvp(args, outs, tangents):
    """PyTorch's: norm_jvp(self - other, self_t - other_t, p, result, {}, false)."""
    from ._jvp import minus
    from .pointwise import sub

    return norm_jvp(sub(args[0], args[1]), minus(*tangents), args[2], outs[0], None, False)


dist = defop("dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", _dist_kernel, vjp=_dist_vjp, jvp=_dist_jvp,
             saves=("self", "other", "result"), attrs=("p",))


def _block_shape(shape: tuple) -> tuple:
    """How block_diag places a tensor: a 0-d one as 1 x 1, a 1-d one as one row."""
    return (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape


def _block_diag_kernel(tensors):
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
    from ._util import result_dtype

    if not tensors:
        return np.empty((1, 0), dtype=np.float32)  # (PyTorch's result for no tensors)
    dt = result_dtype(*tensors)
    shapes = [_block_shape(t.shape) for t in tensors]
    out = np.zeros((sum(s[0] for s in shapes), sum(s[1] for s in shapes)), dtype=dt)
    r = c = 0
    for t, (h, w) in zip(tensors, shapes):
        out[r:r + h, c:c + w] = t.reshape(h, w)
        r, c = r + h, c + w
    return out


def _block_diag_vjp(ctx, g):
    """PyTorch's block_diag_backward: each input's block of the gradient (two slices), reshaped back for 0-d
    and 1-d inputs."""
    from .views import reshape
    from .views import slice as slice_op

    grads, r, c = [], 0, 0
    (shapes,) = ctx.attrs  # every input's shape: those without a gradient still take their place
    need = ctx.needs_input_grad
    real_g = real_part_for_real_inputs(ctx, g)  # (a real input's block is taken from it)
    for k, shape in enumerate(shapes):
        h, w = _block_shape(shape)
        if not need[k]:
            grads.append(None)
            r, c = r + h, c + w
            continue
        source = real_g if real_g is not None and input_is_real(ctx, k) else g
        block = slice_op(slice_op(source, 0, r, r + h, 1), 1, c, c + w, 1)
        grads.append(reshape(block, shape) if len(shape) < 2 else block)
        r, c = r + h, c + w
    return tuple(grads)


block_diag = defop("block_diag(Tensor[] tensors) -> Tensor", _block_diag_kernel, vjp=_block_diag_vjp,
                   attrs=("tensors_sizes",))


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    extra = {} if out is None else {"out": out}
    return linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype, **extra)


def _check_matrix_norm_ord(ord) -> None:
    """PyTorch checks the order before A (whose dtype check depends on it), a number printed as C++ does."""
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {float(ord):g} not supported.")


def _check_norm_dtype(name: str, have: np.dtype, want: np.dtype) -> None:
    """PyTorch's check_linalg_norm_dtype of a dtype= asked for."""
    if want.kind not in "fc":
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got {_tname(want)}")
    if (have.kind == "c") != (want.kind == "c"):
        kind = "complex" if have.kind == "c" else "real"
        raise RuntimeError(f"{name}: dtype should be {kind} for {kind} inputs, but got {_tname(want)}")
    if np.promote_types(have, want) != want:
        raise RuntimeError(f"{name}: the dtype of the input ({_tname(have)}) should be convertible without "
                           f"narrowing to the specified dtype ({_tname(want)})")


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """Frobenius, nuclear, 1/-1 (column sums), inf/-inf (row sums) and 2/-2 (singular values) norms."""
    from .reductions_extra import amax, amin
    from .reductions_extra import sum as _sum
    from .views import movedim, unsqueeze

    _check_matrix_norm_ord(ord)
    _check_matrix("linalg.matrix_norm", A._data)
    # (A itself, before dim and dtype; the singular-value orders take no Half)
    _check_float("linalg.matrix_norm", A._data, low_precision=ord not in ("nuc", 2, -2))
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    if len(dims) != 2:  # (before the dims are wrapped, as PyTorch checks)
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    d = [wrap_dim(x, A.ndim) for x in dims]
    if d[0] == d[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d[0]}, {d[1]})")
    if dtype is not None:
        from ..backend.dtypes import to_dtype as _resolve
        from .creation import to_dtype

        target = _resolve(dtype)
        _check_norm_dtype("linalg.matrix_norm", A._data.dtype, target.np)
        A = to_dtype(A, target)
    if ord == "fro":
        result = linalg_vector_norm(A, 2, d, keepdim)
    elif ord in ("nuc", 2, -2):
        s = svdvals_composite(movedim(A, d, [-2, -1]))
        red = _sum(s, -1) if ord == "nuc" else (amax(s, -1) if ord == 2 else amin(s, -1))
        result = red
        if keepdim:
            for ax in sorted(d):
                result = unsqueeze(result, ax)
    elif ord in (1, -1, float("inf"), float("-inf")):
        summed, reduced = (d[0], d[1]) if ord in (1, -1) else (d[1], d[0])
        sums = linalg_vector_norm(A, 1.0, [summed], keepdim)  # a double in PyTorch (the node shows 1.0)
        if not keepdim and reduced > summed:
            reduced -= 1
        result = (amax if ord > 0 else amin)(sums, [reduced], keepdim)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return _into_norm(result, out, "linalg_matrix_norm")


def _into_norm(result: Tensor, out, name: str):
    """linalg.norm and matrix_norm copy their result into ``out``, which must already have its dtype (torch
    checks rather than casting)."""
    if out is not None:
        from .variants import check_out_dtype

        check_out_dtype(name, result.dtype, out)
    return _into(result, out, name, copies=True)


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, out=None, dtype=None) -> Tensor:
    """``torch.linalg.norm``: a vector norm over one dim (or all, without ``ord``), a matrix norm over two."""
    if isinstance(dim, int):
        dim = [dim]
    if dim is not None:
        dim = list(dim)
    if ord is None:
        result = vector_norm(A, 2.0, dim, keepdim, dtype=dtype) if dim is None or len(dim) != 2 \
            else matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
        return _into_norm(result, out, "linalg_norm")
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.ndim}D.")
        dim = list(range(A.ndim))
    if isinstance(ord, str) or len(dim) == 2:
        result = matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    else:  # linalg.norm's numeric ord is a double (the node shows 1.0 for ord=1)
        result = vector_norm(A, float(ord), dim, keepdim, dtype=dtype)
    return _into_norm(result, out, "linalg_norm")


# ---- inverse, determinant, solve ---------------------------------------------------------------------------


def _inverse_and_info(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's inv_ex: the LU factorisation of A (its ``info``: the first zero pivot of each matrix) and the
    solution of A X = I with it, where a zero pivot leaves what LAPACK's substitution leaves (inf and NaN where it
    divides by zero). LAPACK's inverse through NumPy where no matrix can meet a zero pivot (ten times faster than
    the factorisation here); NumPy's succeeding is no proof of that, as its LAPACK rounds differently from
    PyTorch's: the matrices singular at working precision are factorised here to find out."""
    with np.errstate(all="ignore"):
        try:
            inverse = np.linalg.inv(a)
        except np.linalg.LinAlgError:  # (some matrix is singular: every one through the factorisation)
            lu, pivots, info = lu_factor(a)
            identity = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
            return _lu_solve_kernel(lu, pivots, identity), info
        info = np.zeros(a.shape[:-2], np.int32)
        suspect = np.flatnonzero(_maybe_singular(a, inverse))
        if suspect.size:  # (their factorisation, on a flat batch; the substitution for those it finds singular)
            n = a.shape[-1]
            flat_inverse, flat_info = inverse.reshape(-1, n, n), info.reshape(-1)
            lu, pivots, found = lu_factor(a.reshape(-1, n, n)[suspect])
            flat_info[suspect] = found
            singular = found != 0
            if singular.any():
                identity = np.broadcast_to(np.eye(n, dtype=a.dtype), lu[singular].shape)
                flat_inverse[suspect[singular]] = _lu_solve_kernel(lu[singular], pivots[singular], identity)
        return inverse, info


def _maybe_singular(a: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """Which matrices could meet an exactly zero pivot in another LAPACK's factorisation: those whose condition
    number (1-norm, with NumPy's inverse) times n times the dtype's epsilon reaches 1, where the inverse has no
    correct digit left. (A zero pivot makes A plus a rounding error of about n eps |A| singular; the exactly
    singular matrices NumPy still inverts measured 20 and more, random 64x64 float32 ones 0.2 at most.)"""
    n = a.shape[-1]
    if n == 0:
        return np.zeros(a.shape[:-2], bool)
    measure = np.abs(a).sum(-2).max(-1) * np.abs(inverse).sum(-2).max(-1) * (n * np.finfo(a.dtype).eps)
    return ~(measure < 1)  # (NaN and inf too)


def _check_invertible(name: str, a: np.ndarray, info: np.ndarray) -> None:
    """PyTorch's _linalg_check_errors for an inverse: the first matrix with a zero pivot, in ``name``'s words."""
    if info.any():
        first = int(np.flatnonzero(info)[0])
        raise LinAlgError(f"{name}: {_batch_prefix(a, first)}The diagonal element {info.reshape(-1)[first]} is "
                          "zero, the inversion could not be completed because the input matrix is singular.")


def _inv_kernel(a):
    _check_square("linalg.inv", a)
    _check_float("linalg.inv", a, low_precision=False)
    inverse, info = _inverse_and_info(a)
    _check_invertible("linalg.inv", a, info)
    return inverse


def inv_backward(g: Tensor, inverse: Tensor) -> Tensor:
    """d(A^-1) = -A^-1 dA A^-1, so gA = -A^-H g A^-H."""
    from .pointwise import neg

    inner = matmul(g, _mH(inverse))  # PyTorch transposes twice (two TransposeBackward0 nodes), inner first
    return neg(matmul(_mH(inverse), inner))


def _inv_vjp(ctx, g):
    (inverse,) = ctx.saved_tensors
    return inv_backward(g, inverse)


def inv_jvp(A_t: Tensor, inverse: Tensor) -> Tensor:
    """derivatives.yaml's linalg_inv_ex: ``-at::matmul(at::matmul(inverse, A_t), inverse)``."""
    from .pointwise import neg

    return neg(matmul(matmul(inverse, A_t), inverse))


def _inv_jvp(args, outs, tangents):
    return inv_jvp(tangents[0], outs[0])


def _inv_ex_jvp(args, outs, tangents):
    return inv_jvp(tangents[0], outs[0]), None


# The output is named as linalg_inv_ex's, whose node this records (``_saved_inverse``).
linalg_inv = defop("linalg_inv(Tensor A) -> Tensor inverse", _column_major(_inv_kernel), vjp=_inv_vjp,
                   jvp=_inv_jvp, saves=("result",),
                   node_name="LinalgInvExBackward0")


def _inv_ex_kernel(a, check_errors=False):
    _check_square("linalg.inv", a)  # (torch's inv_ex checks under inv's name)
    _check_float("linalg.inv", a, low_precision=False)
    inverse, info = _inverse_and_info(a)
    if check_errors:
        _check_invertible("linalg.inv_ex", a, info)
    return inverse, info


def _inv_ex_vjp(ctx, g, _ginfo):
    (inverse,) = ctx.saved_tensors
    return inv_backward(g, inverse)


linalg_inv_ex = defop("linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)",
                      _column_major(_inv_ex_kernel, (0,)), vjp=_inv_ex_vjp, jvp=_inv_ex_jvp, saves=("result0",),
                      node_name="LinalgInvExBackward0")


# PyTorch's det, slogdet and solve are composites over native operators that also return the LU factorisation
# (``_linalg_det``, ``_linalg_slogdet``, ``_linalg_solve_ex``): their nodes save LU and pivots, and the
# first-order backward solves with them instead of factorising again.


def _uses_transpose(A) -> bool:
    """Whether _linalg_det factors A^T: for a contiguous real A, A^T is the column-major matrix LAPACK takes
    without a copy, and det A^T = det A. Its backward reads the same flag from the saved A, as PyTorch's."""
    data = A._data if isinstance(A, Tensor) else A
    return bool(data.flags["C_CONTIGUOUS"]) and data.dtype.kind != "c"


def _factor_for_det(name: str, a: np.ndarray, low_precision: bool = True) -> tuple[np.ndarray, np.ndarray]:
    _check_square(name, a)
    _check_float(name, a, low_precision)
    refuse_half("lu_cpu", a)  # (det takes Half as far as the LU kernel)
    lu, pivots, _ = lu_factor(np.swapaxes(a, -1, -2) if _uses_transpose(a) else a)
    return _f_contiguous(lu), pivots


def _lu_solve_kernel(LU, pivots, B, left=True, adjoint=False):
    if not left:  # X A = B  <=>  A^H X^H = B^H
        Bh = np.conj(np.swapaxes(B, -1, -2))
        return np.conj(np.swapaxes(_lu_solve_kernel(LU, pivots, Bh, True, not adjoint), -1, -2))
    if adjoint:  # A^H X = B with A = P L U: U^H (L^H (P^T X)) = B
        LUh = np.conj(np.swapaxes(LU, -1, -2))
        y = _triangular_solve(LUh, B, upper=False, unit=False)
        return permute_rows(_triangular_solve(LUh, y, upper=True, unit=True), pivots, inverse=True)
    y = _triangular_solve(LU, permute_rows(B, pivots, inverse=False), upper=False, unit=True)
    return _triangular_solve(LU, y, upper=True, unit=False)


def _lu_solve_checked(LU, pivots, B, left=True, adjoint=False):
    """linalg.lu_solve's kernel with PyTorch's argument checks, in its order and words: the dtypes first, then
    the shapes of LU, B and pivots."""
    _check_float("torch.linalg.lu_solve", LU)
    if seen_dtype(LU) != seen_dtype(B):
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_tname(LU)} and B of type {_tname(B)} instead")
    if pivots.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    _check_square("torch.linalg.lu_solve", LU)
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    if dim_size(pivots, -1) != n:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the "
                           "matrix")
    if pivots.shape != LU.shape[:-1]:
        raise RuntimeError("linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {list(pivots.shape)} instead")
    _check_batches_broadcast(B, LU)
    refuse_half("linalg.lu_solve_cpu", LU)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _lu_solve_kernel(LU, pivots, B, left, adjoint)


def _lu_solve_vjp(ctx, g):
    from .linalg_extra import linalg_lu_solve_LU

    LU, pivots, X = ctx.saved_tensors
    left, adjoint = ctx.attrs
    need = ctx.needs_input_grad
    # PyTorch's generated backward makes the inputs' gradients last to first
    gB = linalg_lu_solve(LU, pivots, g, left=left, adjoint=not adjoint) if need[1] else None
    gLU = linalg_lu_solve_LU(g, LU, pivots, X, left, adjoint) if need[0] else None
    return gLU, gB


def _lu_solve_jvp(args, outs, tangents):
    """PyTorch's linalg_lu_solve_jvp (ops/linalg_extra.py); where a graph records, a missing tangent is its zero
    tensor, whose terms keep their nodes."""
    from ._jvp import or_zero, recording
    from .linalg_extra import linalg_lu_solve_jvp

    LU, pivots, B, left, adjoint = args[:5]
    dLU, dB = tangents
    if dLU is None and dB is None:
        return None
    if recording(args, tangents) or (dLU is not None and dB is not None):
        dLU, dB = or_zero(dLU, LU, tangents, negative=False), or_zero(dB, B, tangents, negative=False)
        return linalg_lu_solve_jvp(outs[0], LU, pivots, dLU, dB, left, adjoint)
    if dLU is None:  # (the factors' term vanishes)
        return linalg_lu_solve(LU, pivots, dB, left=left, adjoint=adjoint)
    return linalg_lu_solve_jvp(outs[0], LU, pivots, dLU, or_zero(None, B, tangents, negative=False), left, adjoint)


# X = A^-1 B from A's LU factorisation. det and solve call it with the LU of a non-differentiable output; the
# LU's own gradient is linalg_lu_solve_LU (ops/linalg_extra.py).
linalg_lu_solve = defop("linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, "
                        "bool adjoint=False) -> Tensor", _column_major(_lu_solve_checked, left_at=3),
                        vjp=_lu_solve_vjp, jvp=_lu_solve_jvp,
                        saves=("LU", "pivots", "result"), attrs=("left", "adjoint"), differentiable=("LU", "B"))


def _lu_perturbed(LU: Tensor) -> Tensor:
    """PyTorch's ``LU + diag_embed(where(LU.diagonal() == 0, eps, 0))``: a non-singular stand-in whose solve
    stays finite (det is C^1, so the gradient is approximated there)."""
    from .creation import to_dtype
    from .pointwise import add, eq, mul
    from .views import diagonal

    zero = to_dtype(eq(diagonal(LU, 0, -2, -1), 0), LU.dtype)
    return add(LU, diag_embed(mul(zero, _eps(LU.dtype.np))))


def _trace_of(M: Tensor) -> Tensor:
    from .reductions_extra import sum as _sum
    from .views import diagonal

    return _sum(diagonal(M, 0, -2, -1), -1)


def _out_of(op, args: tuple, out, picks: tuple, result_type=None):
    """``out=`` of a function that returns some of a native operator's results (det of ``_linalg_det``):
    PyTorch's checks, named after the native operator, then those results copied into ``out``."""
    from ..autograd.grad_mode import no_grad
    from ..backend.dtypes import cpp_type_name
    from .registry import NoDerivativeOp
    from .variants import _store, check_out_count, out_with_grad_error

    check_out_count(len(picks), out, op.name.lstrip("_"))  # (a guarded caller's parser names its own function)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    tensors = [a for a in args if isinstance(a, Tensor)] + list(outs)
    if STATE.grad_enabled and builtins.any(t.requires_grad for t in tensors):
        raise out_with_grad_error(op.name)
    if STATE.fw_grad_levels and isinstance(op, NoDerivativeOp):  # (torch's autograd fallback: before the kernel)
        from ..autograd.forward_ad import refuse_fallback_tangents

        refuse_fallback_tangents(op.name, tensors)
    levels, STATE.fw_grad_levels = STATE.fw_grad_levels, []  # (an out= function computes no tangent)
    try:
        with no_grad():
            results = op(*args)
    finally:
        STATE.fw_grad_levels = levels
    for dst, i in zip(outs, picks):
        src = results[i]
        if dst._data.dtype != src._data.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {cpp_type_name(src._data.dtype)}, but got "
                               f"{cpp_type_name(dst._data.dtype)} instead")
        _store(dst, src)
    if levels:  # (after the write, as torch's out= functions refuse a tangent of an input or out)
        from ..autograd.forward_ad import refuse_out_tangents

        refuse_out_tangents(op.name, tensors)
    return out_type(result_type)(tuple(outs)) if result_type is not None else out


def _det_kernel(a):
    lu, pivots = _factor_for_det("linalg.det", a)
    det = pivots_parity(pivots) * np.prod(np.diagonal(lu, 0, -2, -1), axis=-1)
    return np.asarray(det, dtype=a.dtype), lu, pivots


def _diag_of(x: Tensor, n: int) -> Tensor:
    """A batch of n x n matrices with ``x`` (one value per matrix) on the diagonal."""
    from .views import expand, unsqueeze

    return diag_embed(expand(unsqueeze(x, -1), tuple(x.shape) + (n,)))


def det_backward(g: Tensor, det: Tensor, A: Tensor, LU: Tensor, pivots: Tensor) -> Tensor:
    """PyTorch's linalg_det_backward: the cofactor matrix g det A^-T. Without a graph, one solve with the
    saved LU (exact zero pivots perturbed by eps, so 0 where det is exactly 0); with one, a fresh solve (so
    that it is differentiable) and, for nearly singular A, the SVD form (det U det Vh prod S, no division)."""
    from .creation import new_zeros
    from .pointwise import lt, mul, where
    from .reductions_extra import all as _all
    from .reductions_extra import any as _any
    from .views import expand, unsqueeze

    n = A.shape[-1]
    if A.numel() == 0:
        return new_zeros(g, tuple(A.shape))
    if n == 1:
        return expand(unsqueeze(unsqueeze(g, -1), -1), tuple(A.shape))
    d = _diag_of(mul(g, det.conj()), n)  # A^H G = conj(det) g I

    def singular(M):
        from .reductions_extra import prod_safe_zeros_backward

        U, S, Vh = linalg_svd(M, False)
        alpha = mul(mul(linalg_det(U), linalg_det(Vh)).conj(), g)
        D = prod_safe_zeros_backward(unsqueeze(alpha, -1), S, S.ndim - 1)
        return matmul(mul(U, unsqueeze(D, -2)), Vh)

    if not STATE.grad_enabled:
        # The saved factorisation is A's or A^T's: solve A^H X = d either way. PyTorch takes this solve even
        # where det is exactly zero: d = 0 there, so its gradient is 0 (signed as the solve leaves it), not
        # the cofactor matrix, the true gradient for rank n-1 (which the graph-building path below gives).
        return linalg_lu_solve(_lu_perturbed(LU), pivots, _mT(d), left=True, adjoint=not _uses_transpose(A))

    def nonsingular(M):
        return linalg_solve(_mH(M), _mT(d))  # PyTorch solves A^H X = d (d made F-contiguous by mT)

    is_singular = lt(_abs(det), 100.0 * _eps(A.dtype.np))
    if not bool(_any(is_singular).item()):
        return nonsingular(A)
    if bool(_all(is_singular).item()):
        return singular(A)
    # A batch of both kinds: each path runs on harmless stand-ins for the matrices it does not own.
    mask = unsqueeze(unsqueeze(is_singular, -1), -1)
    eye = _const(np.eye(n, dtype=A.dtype.np))
    distinct = _const(np.diag(np.arange(1, n + 1)).astype(A.dtype.np))
    return where(mask, singular(where(mask, A, distinct)), nonsingular(where(mask, eye, A)))


def _det_vjp(ctx, g, _g_LU=None, _g_pivots=None):
    A, LU, pivots, det = ctx.saved_tensors
    return det_backward(g, det, A, LU, pivots)


def _det_jvp(args, outs, tangents):
    """PyTorch's linalg_det_jvp: det tr(A^-1 dA), solved with the (perturbed) saved factorisation."""
    from .pointwise import mul

    A, (tA,) = args[0], tangents
    det, LU, pivots = outs
    if tA is None:
        return [None, None, None]
    AinvE = linalg_lu_solve(_lu_perturbed(LU), pivots, tA, left=True, adjoint=_uses_transpose(A))
    return [mul(_trace_of(AinvE), det), None, None]


_linalg_det = defop("_linalg_det(Tensor A) -> (Tensor result, Tensor LU, Tensor pivots)", _det_kernel,
                    vjp=_det_vjp, jvp=_det_jvp, saves=("A", "result1", "result2", "result0"),
                    nondiff_outputs=(1, 2), node_name="LinalgDetBackward0")


def linalg_det(A: Tensor, *, out=None) -> Tensor:
    """det A = det(P) prod(diag U) from the LU factorisation that ``_linalg_det`` keeps for the backward."""
    if out is not None:
        return _out_of(_linalg_det, (A,), out, (0,))
    return _linalg_det(A)[0]


def _slogdet_kernel(a):
    lu, pivots = _factor_for_det("linalg.slogdet", a, low_precision=False)
    diag = np.diagonal(lu, 0, -2, -1)
    absdiag = np.abs(diag)
    with np.errstate(divide="ignore", invalid="ignore"):
        # the sign of a complex determinant is its phase det / |det|; log|det| is real for complex A too
        unit = np.where(absdiag == 0, 0, diag / np.where(absdiag == 0, 1, absdiag)) if a.dtype.kind == "c" \
            else np.sign(diag)
        logabs = np.sum(np.log(absdiag), axis=-1)
    sign = pivots_parity(pivots) * np.prod(unit, axis=-1)
    return np.asarray(sign, dtype=a.dtype), np.asarray(logabs, dtype=absdiag.dtype), lu, pivots


def _slogdet_vjp(ctx, g_sign, g_logabs, _g_LU=None, _g_pivots=None):
    """PyTorch's slogdet_backward: (g_logabsdet - i Im(conj(g_sign) sign)) A^-H, from the saved LU without a
    graph (the sign's gradient only counts for complex A, where the sign moves)."""
    from .complex_ops import imag
    from .creation import to_dtype
    from .pointwise import mul, sub

    A, sign, LU, pivots = ctx.saved_tensors
    g = g_logabs
    if A.is_complex():
        if g_sign is not None:
            phase = mul(imag(mul(g_sign.conj(), sign)), 1j)
            g = mul(phase, -1) if g is None else sub(g, phase)
        elif g is not None:
            g = to_dtype(g, A.dtype)
    if g is None:
        return None
    d = _diag_of(g, A.shape[-1])
    if not STATE.grad_enabled:
        return linalg_lu_solve(LU, pivots, _mT(d), left=True, adjoint=not _uses_transpose(A))
    return linalg_solve(_mH(A), d)  # a fresh factorisation, so that the gradient is differentiable


def _slogdet_jvp(args, outs, tangents):
    """PyTorch's slogdet_jvp: logabsdet moves by Re tr(A^-1 dA), the sign by i Im tr(A^-1 dA) sign (zero for
    real A)."""
    from .complex_ops import imag, real
    from .creation import zeros_like
    from .pointwise import mul

    A, (tA,) = args[0], tangents
    sign, _logabs, LU, pivots = outs
    if tA is None:
        return [None, None, None, None]
    trace = _trace_of(linalg_lu_solve(LU, pivots, tA, left=True, adjoint=_uses_transpose(A)))
    if A.is_complex():
        return [mul(imag(trace), mul(sign, 1j)), real(trace), None, None]
    return [zeros_like(sign), trace, None, None]


_linalg_slogdet = defop("_linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet, Tensor LU, Tensor pivots)",
                        _slogdet_kernel, vjp=_slogdet_vjp, jvp=_slogdet_jvp,
                        saves=("A", "result0", "result2", "result3"), nondiff_outputs=(2, 3),
                        node_name="LinalgSlogdetBackward0")
# (a real A's sign alone gives no gradient, as PyTorch's: a zero g_logabsdet would be 0 * A^-H, NaN if singular)
_linalg_slogdet.materialize_grads = False

_Slogdet = return_type("linalg_slogdet", ["sign", "logabsdet"])


def linalg_slogdet(A: Tensor, *, out=None):
    """(sign, log|det A|) from the LU factorisation that ``_linalg_slogdet`` keeps for the backward."""
    if out is not None:
        return _out_of(_linalg_slogdet, (A,), out, (0, 1), _Slogdet)
    sign, logabs, _, _ = _linalg_slogdet(A)
    return _Slogdet((sign, logabs))


def slogdet(input: Tensor, *, out=None):  # noqa: A002
    """``torch.slogdet``: linalg.slogdet's result as a ``slogdet`` (a ``slogdet_out`` into ``out``)."""
    return _renamed(linalg_slogdet(input, out=out), "slogdet", out)


def logdet(input: Tensor) -> Tensor:
    """log det A; NaN for a negative determinant, log(sign) + log|det A| for complex A (composite, as in
    PyTorch)."""
    from .pointwise import add, eq, where

    _check_square("logdet", input._data)  # (under its own name, before slogdet's)
    _check_float("logdet", input._data, low_precision=False)
    sign, logabs = linalg_slogdet(input)
    if input.is_complex():
        return add(sign.log(), logabs)
    return where(eq(sign, -1), float("nan"), logabs)


def _is_vector_rhs(a_shape: tuple, b_shape: tuple) -> bool:
    return len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and b_shape == a_shape[:-1])


def _check_batches_broadcast(b: np.ndarray, a: np.ndarray) -> None:
    """PyTorch's _linalg_broadcast_batch_dims(B, A): the right-hand side's batch is "tensor a" in its refusal."""
    error = broadcast_mismatch([b.shape[:-2], a.shape[:-2]])
    if error is not None:
        raise error


def _solve_kernel(a, b, left=True, check_errors=False):
    _check_square("linalg.solve", a)
    _check_float("linalg.solve", a)
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_tname(a.dtype)} and B of type {_tname(b.dtype)} instead")
    vector = _is_vector_rhs(a.shape, b.shape)
    bm = b[..., None] if vector else b
    n = a.shape[-1]
    if (bm.shape[-2] if left else bm.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{bm.shape[-2]}x{bm.shape[-1]})")
    _check_batches_broadcast(bm, a)
    refuse_half("lu_cpu", a)
    lu, pivots, info = lu_factor(a)  # of A itself: PyTorch's solve no longer factors A^T
    if check_errors and info.any():
        where = _batch_prefix(a, int(np.flatnonzero(info)[0]))
        raise LinAlgError(f"torch.linalg.solve: {where}The solver failed because the input matrix is "
                          "singular.")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = _lu_solve_kernel(lu, pivots, bm, left, False)
    return x[..., 0] if vector else x, _f_contiguous(lu), pivots, info


def _solve_vjp(ctx, g, _g_LU=None, _g_pivots=None, _g_info=None):
    """PyTorch's linalg_solve_backward: gB = A^-H gX (the saved LU without a graph, a fresh solve with one),
    gA = -gB X^H (left) or -X^H gB."""
    from .pointwise import neg
    from .views import squeeze, unsqueeze

    A, LU, pivots, X = ctx.saved_tensors
    (left,) = ctx.attrs
    need = ctx.needs_input_grad
    vector = X.ndim == A.ndim - 1  # the vector case (B's shape is not kept when B needs no grad)
    gm = unsqueeze(g, -1) if vector else g
    if STATE.grad_enabled:
        gB = linalg_solve(_mH(A), gm, left=left)
    else:
        gB = linalg_lu_solve(LU, pivots, gm, left=left, adjoint=True)
    gA = None
    if need[0]:
        Xm = unsqueeze(X, -1) if vector else X
        gA = neg(matmul(gB, _mH(Xm)) if left else matmul(_mH(Xm), gB))
    return gA, ((squeeze(gB, -1) if vector else gB) if need[1] else None)


def _solve_jvp(args, outs, tangents):
    """PyTorch's linalg_solve_jvp: dX = A^-1 (dB - dA X) (left) or (dB - X dA) A^-1, with the saved LU."""
    from .pointwise import neg, sub
    from .views import squeeze, unsqueeze

    A, B, left = args[0], args[1], args[2]
    tA, tB = tangents
    X, LU, pivots, _info = outs
    vector = _is_vector_rhs(tuple(A.shape), tuple(B.shape))
    Xm = unsqueeze(X, -1) if vector else X
    rhs = None if tB is None else (unsqueeze(tB, -1) if vector else tB)
    if tA is not None:
        term = matmul(tA, Xm) if left else matmul(Xm, tA)
        rhs = neg(term) if rhs is None else sub(rhs, term)
    if rhs is None:
        return [None, None, None, None]
    dX = linalg_lu_solve(LU, pivots, rhs, left=left, adjoint=False)
    return [squeeze(dX, -1) if vector else dX, None, None, None]


_linalg_solve_ex = defop("_linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> "
                         "(Tensor result, Tensor LU, Tensor pivots, Tensor info)",
                         _column_major(_solve_kernel, (0,), left_at=2), vjp=_solve_vjp,
                         jvp=_solve_jvp, saves=("A", "result1", "result2", "result0"), attrs=("left",),
                         nondiff_outputs=(1, 2, 3), node_name="LinalgSolveExBackward0")


def linalg_solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """X with A X = B (or X A = B), from A's LU factorisation, which ``_linalg_solve_ex`` keeps."""
    if out is not None:
        return _out_of(_linalg_solve_ex, (A, B, left, True), out, (0,))
    return _linalg_solve_ex(A, B, left=left, check_errors=True)[0]


def _triangular_solve(A: np.ndarray, B: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """Solve A X = B by substitution (zero pivots give inf/NaN, as LAPACK's trsm does)."""
    n = A.shape[-1]
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = np.broadcast_to(A, batch + A.shape[-2:])
    X = np.array(np.broadcast_to(B, batch + B.shape[-2:]), dtype=np.result_type(A, B))
    rows = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in rows:
            done = slice(i + 1, n) if upper else slice(0, i)
            acc = X[..., i, :] - np.matmul(A[..., i:i + 1, done], X[..., done, :])[..., 0, :]
            X[..., i, :] = acc if unit else _substitution_quotient(acc, A[..., i, i, None])
    return X


def _substitution_quotient(x: np.ndarray, pivot: np.ndarray) -> np.ndarray:
    """``x / pivot`` as LAPACK's trsm divides: a complex division by zero gives NaN in both parts (NumPy's gives
    inf + nanj), a real one inf or NaN as NumPy's."""
    quotient = x / pivot
    if quotient.dtype.kind == "c":
        quotient = np.where(pivot == 0, complex(np.nan, np.nan), quotient)
    return quotient


def _copied_into_result(b: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``B`` as PyTorch's solve_triangular copies it into its result (of ``A``'s dtype), which it then solves in
    place: cast, a complex ``B``'s imaginary part dropped with the copy's warning."""
    if b.dtype == dtype:
        return b
    if b.dtype.kind == "c" and dtype.kind != "c":
        from .._warnings import complex_to_real

        complex_to_real()
        b = b.real
    return b.astype(dtype)


def _solve_triangular_kernel(a, b, upper, left=True, unitriangular=False):
    _check_matrix("linalg.solve_triangular", a)
    _check_matrix("linalg.solve_triangular", b, "B")
    _check_square("linalg.solve_triangular", a)
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    _check_batches_broadcast(b, a)
    if a.dtype.kind not in "fc":  # (B is copied into a result of A's dtype, which has no kernel)
        raise unsupported("triangular_solve_cpu", a.dtype)
    refuse_half("triangular_solve_cpu", a)
    b = _copied_into_result(b, a.dtype)
    if left:
        return _triangular_solve(a, b, upper, unitriangular)
    at, bt = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    return np.swapaxes(_triangular_solve(at, bt, not upper, unitriangular), -1, -2)


def _solve_triangular_vjp(ctx, g):
    from .pointwise import neg

    A, X = ctx.saved_tensors
    upper, left, unit = ctx.attrs
    need = ctx.needs_input_grad
    gB = linalg_solve_triangular(_mH(A), g, upper=not upper, left=left, unitriangular=unit)
    gA = None
    if need[0]:
        gA = neg(matmul(gB, _mH(X)) if left else matmul(_mH(X), gB))
        gA = triu(gA, 1 if unit else 0) if upper else tril(gA, -1 if unit else 0)
    return gA, (gB if need[1] else None)


linalg_solve_triangular = defop("linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, "
                                "bool left=True, bool unitriangular=False) -> Tensor",
                                _column_major(_solve_triangular_kernel), vjp=_solve_triangular_vjp,
                                saves=("self", "result"),
                                attrs=("upper", "left", "unitriangular"))


def _cholesky_solve_kernel(b, u, upper=False):
    if b.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions instead")
    if u.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {u.ndim} dimensions instead")
    check_solve_inputs(b, u, "cholesky_solve")
    if b.dtype.kind not in "fc":  # (LAPACK's potrs only: integers and bools have no kernel, even when empty)
        raise unsupported("cholesky_solve_cpu", b.dtype)
    refuse_half("cholesky_solve_cpu", b)
    batch = np.broadcast_shapes(b.shape[:-2], u.shape[:-2])
    b, u = np.broadcast_to(b, batch + b.shape[-2:]), np.broadcast_to(u, batch + u.shape[-2:])
    low = np.conj(np.swapaxes(np.triu(u), -1, -2)) if upper else np.tril(u)  # A = L L^H (U = L^H)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y = _triangular_solve(low, b, upper=False, unit=False)
        return _triangular_solve(np.conj(np.swapaxes(low, -1, -2)), y, upper=True, unit=False)


def _cholesky_solve_vjp(ctx, g):
    """PyTorch's cholesky_solve_backward: gB = A^-1 g; gF = -(gB X^H + X gB^H) F (F U for upper), the
    gradient of A = F F^H not projected onto F's triangle."""
    from .pointwise import add, neg

    B, F, X = ctx.saved_tensors
    (upper,) = ctx.attrs
    gB = cholesky_solve(g, F, upper)
    gF = None
    if ctx.needs_input_grad[1]:
        common = matmul(gB, _mH(X))
        common = add(common, _mH(common))
        gF = neg(matmul(F, common) if upper else matmul(common, F))
    return (gB if ctx.needs_input_grad[0] else None), gF


def _cholesky_solve_jvp(args, outs, tangents):
    """PyTorch's cholesky_solve_jvp: dX = A^-1 (dB - dA X) with dA = dF F^H + F dF^H (dF^H F + ... for
    upper)."""
    from .pointwise import add, neg, sub

    F, upper = args[1], (args[2] if len(args) > 2 else False)
    dB, dF = tangents
    X = outs[0] if isinstance(outs, (tuple, list)) else outs
    rhs = dB
    if dF is not None:
        dK = matmul(_mH(dF), F) if upper else matmul(dF, _mH(F))
        term = matmul(add(dK, _mH(dK)), X)
        rhs = neg(term) if rhs is None else sub(rhs, term)
    return [None if rhs is None else cholesky_solve(rhs, F, upper)]


# X with (F F^H) X = B (F^H F for upper), as LAPACK's potrs: its own node, CholeskySolveBackward0.
cholesky_solve = defop("cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor",
                       _column_major(_cholesky_solve_kernel), vjp=_cholesky_solve_vjp, jvp=_cholesky_solve_jvp,
                       saves=("self", "input2", "result"), attrs=("upper",))


# ---- factorizations ---------------------------------------------------------------------------------------


def _potf2(m: np.ndarray) -> tuple[np.ndarray, int]:
    """LAPACK's unblocked Cholesky (potf2) of the lower triangle of one matrix, as far as it gets: (the lower
    factor, 0), or, at the first pivot ``j`` that is not positive (NaN included), the matrix as LAPACK leaves it
    (columns before ``j`` factored, row ``j`` updated, the failing pivot in place, the rest untouched) and
    ``j + 1``."""
    a = np.tril(m)
    for j in range(a.shape[0]):
        row = a[j, :j]
        pivot = (a[j, j] - np.vdot(row, row)).real
        if not pivot > 0:
            a[j, j] = pivot
            return a, j + 1
        a[j, j] = pivot = np.sqrt(pivot)
        a[j + 1:, j] = (a[j + 1:, j] - a[j + 1:, :j] @ row.conj()) / pivot
    return a, 0


def _cholesky_factor(a: np.ndarray, upper: bool, name: str, raising: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(factor, info) of linalg_cholesky_ex: the triangle LAPACK reads (the upper one for ``upper``), where a
    factorisation fails LAPACK's partial result and the order of the failing minor. The input is checked in
    ``name``'s words; where ``raising`` names an operator, the first failure raises in its words (the checks are
    linalg.cholesky's even for linalg.cholesky_ex(check_errors=True), whose own name only its failure shows)."""
    _check_square(name, a)
    _check_float(name, a)
    refuse_half("cholesky_cpu", a)
    src = np.conj(np.swapaxes(a, -1, -2)) if upper else a  # (upper: U^H is the lower factor of A^H)
    sym = np.tril(src) + np.conj(np.swapaxes(np.tril(src, -1), -1, -2))
    info = np.zeros(a.shape[:-2], dtype=np.int32)
    try:
        with np.errstate(invalid="ignore"):
            L = np.linalg.cholesky(sym)
        failed = not np.isfinite(L).all()  # (LAPACK stops at a NaN pivot, NumPy's does not)
    except np.linalg.LinAlgError:
        L, failed = np.zeros_like(sym), True
    if failed:
        L, flat = np.empty((info.size,) + a.shape[-2:], dtype=a.dtype), info.reshape(-1)
        for b, (m, m_sym) in enumerate(zip(_matrices(src), _matrices(sym))):
            factor, flat[b] = _potf2(m)
            L[b] = factor if flat[b] else np.linalg.cholesky(m_sym)
        L = L.reshape(a.shape)
        if raising is not None and flat.any():
            b = int(np.flatnonzero(flat)[0])
            raise LinAlgError(f"{raising}: {_batch_prefix(a, b)}The factorization could not be completed because the "
                              f"input is not positive-definite (the leading minor of order {flat[b]} is not "
                              "positive-definite).")
    return (_conj_transposed(L) if upper else L), info


def _conj_transposed(L: np.ndarray) -> np.ndarray:
    """L^H as LAPACK's upper factorisation writes it: its zero imaginary parts are +0, not conj's -0."""
    U = np.ascontiguousarray(np.conj(np.swapaxes(L, -1, -2)))
    if U.dtype.kind == "c":
        U.imag += 0.0
    return U


def _cholesky_kernel(a, upper=False):
    return _cholesky_factor(a, upper, "linalg.cholesky", raising="linalg.cholesky")[0]


def _legacy_cholesky_kernel(a, upper=False):
    """torch.cholesky's own checks: an empty input comes back as an empty tensor like it (any shape, any dtype)
    before any check; a dtype other than float or complex is refused by the kernel's dispatch, not by
    linalg's check."""
    if a.size == 0:
        return contiguous_as_torch(np.empty_like(a, order="C"))
    _check_square("cholesky", a)
    if a.dtype.kind not in "fc" and a.dtype is not _dt.bfloat16.np:
        raise unsupported("cholesky_cpu", a.dtype)
    return _f_contiguous(_cholesky_factor(a, upper, "cholesky", raising="cholesky")[0])


def _cholesky_ex_kernel(a, upper=False, check_errors=False):
    return _cholesky_factor(a, upper, "linalg.cholesky", raising="linalg.cholesky_ex" if check_errors else None)


def cholesky_backward(gL: Tensor, L: Tensor, upper: bool) -> Tensor:
    """gA = L^-H Phi(L^H gL) L^-1, made Hermitian, where Phi takes the lower triangle with half its diagonal."""
    from .pointwise import add, mul

    if upper:
        L, gL = _mH(L), _mH(gL)
    gA = tril(matmul(_mH(L), gL))
    gA = mul(add(gA, _mH(tril(gA, -1))), 0.5)
    gA = linalg_solve_triangular(_mH(L), gA, upper=True, left=True)
    return linalg_solve_triangular(L, gA, upper=False, left=False)


def _cholesky_vjp(ctx, g):
    (L,) = ctx.saved_tensors
    (upper,) = ctx.attrs
    return cholesky_backward(g, L, upper)


def _cholesky_jvp(args, outs, tangents):
    """FunctionsManual's cholesky_jvp: dL = L Phi(L^-1 dA L^-H), Phi the lower triangle with half its diagonal."""
    from .pointwise import sub
    from .scalar_overloads import mul_scalar
    from .views import diagonal

    upper = args[1]
    L = _mH(outs[0]) if upper else outs[0]
    dL = linalg_solve_triangular(L, tangents[0], upper=False, left=True)
    dL = linalg_solve_triangular(_mH(L), dL, upper=True, left=False)
    dL = sub(tril(dL), diag_embed(mul_scalar(diagonal(dL, 0, -2, -1), 0.5)))
    dL = matmul(L, dL)
    return _mH(dL) if upper else dL


# The output is named as linalg_cholesky_ex's, whose node this records (``_saved_L``).
linalg_cholesky = defop("linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor L",
                        _column_major(_cholesky_kernel),
                        vjp=_cholesky_vjp, jvp=_cholesky_jvp, saves=("result",), attrs=("upper",),
                        node_name="LinalgCholeskyExBackward0")


_cholesky_ex_op = defop("linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> "
                        "(Tensor L, Tensor info)", _column_major(_cholesky_ex_kernel, (0,)),
                        vjp=lambda ctx, g, _ginfo: _cholesky_vjp(ctx, g), jvp=_cholesky_jvp, saves=("result0",),
                        attrs=("upper",), node_name="LinalgCholeskyExBackward0")


# (torch.cholesky is an operator of its own: its node and its errors are named after it)
_legacy_cholesky_op = defop("cholesky(Tensor self, bool upper=False) -> Tensor", _legacy_cholesky_kernel,
                            vjp=_cholesky_vjp, saves=("result",), attrs=("upper",))


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out=None):
    """(L, info) with info = 0 on success, else the order of the failing minor (L then holds what LAPACK left)."""
    if out is not None:
        return _cholesky_ex_op(A, upper=upper, check_errors=check_errors, out=out)
    return _CholeskyEx(tuple(_cholesky_ex_op(A, upper=upper, check_errors=check_errors)))


_CholeskyEx = return_type("linalg_cholesky_ex", ["L", "info"])


_CHOLESKY_DEPRECATED = "\n".join([
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch "
    "release.", "L = torch.cholesky(A)", "should be replaced with", "L = torch.linalg.cholesky(A)", "and",
    "U = torch.cholesky(A, upper=True)", "should be replaced with", "U = torch.linalg.cholesky(A).mH",
    "This transform will produce equivalent results for all valid (symmetric positive definite) inputs."])


def cholesky(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """Legacy ``torch.cholesky`` (deprecated in PyTorch, which warns once a process at the user's line, and once
    more for the first ``out=``: two ``TORCH_WARN_ONCE`` of its C++ code)."""
    from .._warnings import warn_once_at_caller
    from ..autograd.forward_ad import refuse_unformulated

    if out is None:  # (torch's cholesky has no forward formula, linalg_cholesky has: refused before its kernel)
        refuse_unformulated("cholesky", (input,))
    warn_once_at_caller("cholesky" if out is None else "cholesky_out", _CHOLESKY_DEPRECATED)
    extra = {} if out is None else {"out": out}
    return _legacy_cholesky_op(input, upper=upper, **extra)


_QR_MODES = ("reduced", "complete", "r")


def _qr_kernel(a, mode="reduced"):
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    _check_matrix("linalg.qr", a)
    _check_float("linalg.qr", a)
    refuse_half("geqrf_cpu", a)
    if mode == "r":
        return np.zeros((0,), dtype=a.dtype), np.linalg.qr(a, mode="r").astype(a.dtype, copy=False)
    q, r = np.linalg.qr(a, mode=mode)
    return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)


def _sym_from_upper(X: Tensor) -> Tensor:
    """triu(X) + triu(X)^T with the diagonal counted once: PyTorch's syminvadj, which halves the diagonal of
    the sum in place (a CopySlices node under create_graph)."""
    from .pointwise import add
    from .scalar_overloads import mul_scalar_
    from .views import diagonal

    up = triu(X)
    sym = add(up, _mH(up))
    mul_scalar_(diagonal(sym, 0, -2, -1), 0.5)
    return sym


def qr_backward(gQ: Tensor, gR: Tensor, Q: Tensor, R: Tensor, mode: str) -> Tensor:
    from .creation import new_zeros
    from .pointwise import add, neg, sub
    from .scalar_overloads import mul_scalar_
    from .shape import cat
    from .views import diagonal, narrow

    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                           "through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    M = sub(matmul(gR, _mH(R)), matmul(_mH(Q), gQ))
    if m >= n:
        gA = add(matmul(Q, _sym_from_upper(M)), gQ)
        return linalg_solve_triangular(_mH(R), gA, upper=False, left=False)
    # Wide A = [X | Y] with X = Q U square: the gradient of Y is Q gV, X's comes through the square rule.
    X = neg(M)
    skew = tril(sub(X, _mH(X)))
    if skew.is_complex():  # PyTorch's trilImInvAdjSkew halves the (imaginary) diagonal of the skew part
        mul_scalar_(diagonal(skew, 0, -2, -1), 0.5)
    gA = linalg_solve_triangular(_mH(narrow(R, -1, 0, m)), matmul(Q, skew), upper=False, left=False)
    pad = new_zeros(gA, tuple(R.shape[:-1]) + (n - m,))
    return add(cat([gA, pad], -1), matmul(Q, gR))


def _qr_vjp(ctx, gQ, gR):
    Q, R = ctx.saved_tensors
    (mode,) = ctx.attrs
    return qr_backward(gQ, gR, Q, R, mode)


def _qr_jvp(args, outs, tangents):
    """FunctionsManual's linalg_qr_jvp: for m >= n, dR = syminv(sym(Q^H dA R^-1)) R and dQ = dA R^-1 - Q (that
    before R); for m < n, dQ = Q triliminv(trilim(Q^H dA_1 R_1^-1)) and dR = Q^H dA - dQ R."""
    from .pointwise import add, sub
    from .scalar_overloads import mul_scalar_
    from .views import diagonal, narrow

    dA, mode = tangents[0], args[1]
    Q, R = outs
    m, n = dA.shape[-2], dA.shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                           "through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if m >= n:
        dARinv = linalg_solve_triangular(R, dA, upper=True, left=False)
        QhdARinv = matmul(_mH(Q), dARinv)
        dR = triu(add(QhdARinv, _mH(QhdARinv)))
        mul_scalar_(diagonal(dR, 0, -2, -1), 0.5)  # (C++'s mul_(0.5): the Scalar overload)
        dQ = sub(dARinv, matmul(Q, dR))
        return dQ, matmul(dR, R)
    QHdA = matmul(_mH(Q), dA)
    X = linalg_solve_triangular(narrow(R, -1, 0, m), narrow(QHdA, -1, 0, m), upper=True, left=False)
    if X.is_complex():
        from .complex_ops import real

        dQ = tril(X)
        real(diagonal(dQ, 0, -2, -1)).zero_()
        dQ = sub(dQ, _mH(dQ))
        mul_scalar_(diagonal(dQ, 0, -2, -1), 0.5)
    else:
        dQ = tril(X, -1)
        dQ = sub(dQ, _mT(dQ))
    dR = sub(QHdA, matmul(dQ, R))
    return matmul(Q, dQ), dR


linalg_qr = defop("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)",
                  _column_major(_qr_kernel, (0, 1)), vjp=_qr_vjp, jvp=_qr_jvp,
                  saves=("result0", "result1"), attrs=("mode",))


_QR_DEPRECATED = "\n".join([
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.",
    "The boolean parameter 'some' has been replaced with a string parameter 'mode'.", "Q, R = torch.qr(A, some)",
    "should be replaced with", "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')"])


def qr(input: Tensor, some: bool = True, *, out=None):
    """Legacy ``torch.qr``: linalg.qr's result as a ``qr`` (a ``qr_out`` into ``out``). Deprecated in PyTorch,
    which warns once a process for each of the two (``TORCH_WARN_ONCE`` in qr and in qr_out)."""
    from .._warnings import warn_once_at_caller

    warn_once_at_caller("qr" if out is None else "qr_out", _QR_DEPRECATED)
    extra = {} if out is None else {"out": out}
    return _renamed(linalg_qr(input, "reduced" if some else "complete", **extra), "qr", out)


def _renamed(result: tuple, name: str, out) -> tuple:
    """``result`` as the return type ``name`` (``name``_out for an out= call): a legacy function's, over the
    ``linalg`` one that computes it."""
    return return_type(name if out is None else f"{name}_out")(tuple(result))


def _eigh_meta(a: np.ndarray, UPLO: str) -> str:
    """The checks of PyTorch's structured ``_linalg_eigh`` before its outputs are set: UPLO, then the shape.
    Returns the triangle, upper-cased (PyTorch takes 'l' and 'u' too)."""
    triangle = UPLO.upper()
    if triangle not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check_square("linalg.eigh", a)
    return triangle


def _outs_checked_before_kernel(meta, order: tuple):
    """An out= check as a structured kernel's meta function makes it, before the kernel's dtype dispatch (so an
    integer input's out= is refused first): ``meta(bound)`` runs the checks that come earlier and returns A's
    array; then each result in ``order`` (its index, and whether it is real where A is complex) must already
    have its dtype. ``outs`` holds None for a result the caller allocates itself."""
    from .variants import _expected_dtype

    def check(bound: tuple, outs: tuple) -> None:
        a = meta(bound)
        for index, real in order:
            want, have = a.real.dtype if real else a.dtype, outs[index]
            if have is not None and have._data.dtype != want:
                raise RuntimeError(_expected_dtype(want, have._data.dtype, index))

    return check


def _eigh_meta_of(bound: tuple) -> np.ndarray:
    _eigh_meta(bound[0]._data, bound[1] if len(bound) > 1 else "L")
    return bound[0]._data


# (the eigenvectors' dtype is checked first, then the eigenvalues')
_check_eigh_outs = _outs_checked_before_kernel(_eigh_meta_of, ((1, False), (0, True)))


def _eigh_kernel(a, UPLO="L"):
    triangle = _eigh_meta(a, UPLO)
    if a.size == 0:  # (PyTorch returns before its kernel's dispatch: empty results of any dtype, Long, Half too)
        return np.empty(a.shape[:-1], dtype=a.real.dtype), np.empty(a.shape, dtype=a.dtype)
    if a.dtype.kind not in "fc":  # (torch checks no dtype up front: its CPU kernel's dispatch refuses the rest)
        raise unsupported("linalg_eigh_cpu", a)
    refuse_half("linalg_eigh_cpu", a)
    w, v = np.linalg.eigh(a, UPLO=triangle)
    # (the eigenvalues of a Hermitian matrix are real, also for complex input)
    return w.astype(a.real.dtype, copy=False), v.astype(a.dtype, copy=False)


def _gap_matrix(values: Tensor) -> Tensor:
    """E_ij = values_j - values_i, with ones on the diagonal (safe to divide by), written as PyTorch's: the
    diagonal filled in place."""
    from .pointwise import sub
    from .views import diagonal, unsqueeze

    gaps = sub(unsqueeze(values, -2), unsqueeze(values, -1))
    diagonal(gaps, 0, -2, -1).fill_(1.0)
    return gaps


def eigh_backward(gL: Tensor, gV: Tensor, L: Tensor, V: Tensor) -> Tensor:
    """gA = V (diag(gL) + skew(V^H gV) / E) V^H with E_ij = L_j - L_i, as PyTorch's linalg_eig_backward: the
    division in place, then gL copied onto the diagonal. For complex V the loss must not depend on the
    eigenvectors' phases (Im diag(V^H gV) = 0), which PyTorch checks."""
    from .pointwise import mul, sub
    from .views import diagonal, unsqueeze

    if gV is None:  # eigvalsh, or a loss of the eigenvalues alone: no division (finite at repeated eigenvalues)
        return None if gL is None else matmul(mul(V, unsqueeze(gL, -2)), _mH(V))
    VhgV = matmul(_mH(V), gV)
    if V.is_complex():
        _check_phase_invariance(diagonal(VhgV, 0, -2, -1), "linalg_eigh_backward")
    inner = mul(sub(VhgV, _mH(VhgV)), 0.5)
    inner.div_(_gap_matrix(L))
    if gL is not None:
        diagonal(inner, 0, -2, -1).copy_(gL)
    return matmul(V, matmul(inner, _mH(V)))


def _check_phase_invariance(diag: Tensor, name: str) -> None:
    """PyTorch's lax allclose(Im diag(V^H gV), 0, rtol=1e-2, atol=1e-2): no false positives from rounding."""
    if not bool(np.all(np.abs(diag._data.imag) <= 1e-2)):
        raise RuntimeError(f"{name}: The eigenvectors in the complex case are specified up to multiplication by "
                           "e^{i phi}. The specified loss function depends on this quantity, so it is "
                           "ill-defined.")


def _eigh_vjp(ctx, gL, gV):
    L, V = ctx.saved_tensors
    return eigh_backward(gL, gV, L, V)


def _eigh_jvp(args, outs, tangents):
    """FunctionsManual's linalg_eig_jvp (is_hermitian): dP = V^H dA V, dL = diag(dP) (its real part for complex
    dA), dV = V (dP / E) with E_ij = L_j - L_i and the quotient's diagonal zeroed in place."""
    from .complex_ops import real
    from .pointwise import div, sub
    from .views import diagonal, unsqueeze

    dA = tangents[0]
    L, V = outs
    dP = matmul(matmul(_mH(V), dA), V)
    dL = diagonal(dP, 0, -2, -1)
    if dA.is_complex():
        dL = real(dL)
    dX = div(dP, sub(unsqueeze(L, -2), unsqueeze(L, -1)))
    diagonal(dX, 0, -2, -1).zero_()
    return dL, matmul(V, dX)


linalg_eigh = defop("linalg_eigh(Tensor self, str UPLO=\"L\") -> (Tensor eigenvalues, Tensor eigenvectors)",
                    _column_major(_eigh_kernel, (1,)), vjp=_eigh_vjp, jvp=_eigh_jvp, saves=("result0", "result1"),
                    attrs=("UPLO",), hidden=("UPLO",))
linalg_eigh.materialize_grads = False  # (the eigvalsh shortcut needs to know gV is undefined)
linalg_eigh.check_outs_before_kernel = _check_eigh_outs


def eigvalsh(A: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    if isinstance(out, Tensor):
        _check_eigh_outs((A, UPLO), (out, None))
    return _into(linalg_eigh(A, UPLO)[0], out, "_linalg_eigh")


def _svd_checks(a, driver) -> None:
    """PyTorch's _linalg_svd checks (svdvals' too, in svd's name): A, then a driver, which only cuSOLVER takes (an
    empty A returns before that check)."""
    _check_svd_input(a)
    if driver is not None and a.size:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")
    refuse_half("linalg_svd_cpu", a)


def _check_svd_input(a: np.ndarray) -> None:
    _check_matrix("linalg.svd", a)
    _check_float("linalg.svd", a)


def _svd_meta_of(bound: tuple) -> np.ndarray:
    """_linalg_svd's meta checks: A, not yet the driver."""
    _check_svd_input(bound[0]._data)
    return bound[0]._data


def _refuse_nan_for_svd(a: np.ndarray) -> None:
    """MKL's ?gesdd fails on a matrix with a NaN, and PyTorch names the cause (NumPy's LAPACK fails too, in its
    own words). The first such matrix of a batch is the one reported."""
    nan = np.isnan(a)
    if nan.any():
        index = int(np.argmax(nan.reshape(-1, a.shape[-2] * a.shape[-1]).any(-1)))
        raise LinAlgError(f"linalg.svd: {_batch_prefix(a, index)}The algorithm failed to converge because the "
                          "input matrix contained non-finite values.")


def _svd_kernel(a, full_matrices=True, driver=None):
    _svd_checks(a, driver)
    _refuse_nan_for_svd(a)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    # (singular values are real, also for complex input)
    return u.astype(a.dtype, copy=False), s.astype(a.real.dtype, copy=False), vh.astype(a.dtype, copy=False)


def svd_backward(gU: Tensor | None, gS: Tensor | None, gVh: Tensor | None, U: Tensor, S: Tensor,
                 Vh: Tensor) -> Tensor | None:
    """PyTorch's gauge-invariant SVD rule (U, Vh reduced to k = min(m, n) columns / rows), for real and complex
    input, told which gradients are undefined (None) as PyTorch's is: its formula, its branches, its order."""
    from .complex_ops import imag
    from .pointwise import add, div, mul, sub
    from .views import diagonal, unsqueeze

    if gS is None and gU is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:  # svdvals: U diag(gS) Vh
        return matmul(U, unsqueeze(gS, -1) * Vh) if m >= n else matmul(U * unsqueeze(gS, -2), Vh)
    is_complex = U.is_complex()
    UhgU = _skew(matmul(U.mH, gU)) if gU is not None else None
    VhgV = _skew(matmul(Vh, gVh.mH)) if gVh is not None else None
    if is_complex:
        im_u = imag(diagonal(UhgU, 0, -2, -1)) if UhgU is not None else S.new_zeros(S.shape)
        im_v = imag(diagonal(VhgV, 0, -2, -1)) if VhgV is not None else S.new_zeros(S.shape)
        if not np.allclose(im_u._data, -im_v._data, rtol=1e-2, atol=1e-2):
            raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this phase "
                               "term, making it ill-defined.")
    E = _gap_matrix(mul(S, S))
    if UhgU is not None and VhgV is not None:
        gA = div(add(mul(UhgU, unsqueeze(S, -2)), mul(unsqueeze(S, -1), VhgV)), E)
    elif UhgU is not None:
        gA = mul(div(UhgU, E), unsqueeze(S, -2))
    else:
        gA = mul(unsqueeze(S, -1), div(VhgV, E))
    if gS is not None:
        gA = add(gA, diag_embed(gS))
    if is_complex and UhgU is not None and VhgV is not None:
        gA = add(gA, diag_embed(div(diagonal(UhgU, 0, -2, -1), mul(S, 2.0))))
    if m > n and gU is not None:
        gA = matmul(U, gA)
        gUSinv = div(gU, unsqueeze(S, -2))
        gA = sub(add(gA, gUSinv), matmul(U, matmul(U.mH, gUSinv)))  # (gA + gU S^-1) - U U^H gU S^-1
        return matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = matmul(gA, Vh)
        SinvgVh = div(gVh, unsqueeze(S, -1))
        gA = sub(add(gA, SinvgVh), matmul(matmul(SinvgVh, Vh.mH), Vh))
        return matmul(U, gA)
    return matmul(U, matmul(gA, Vh)) if m >= n else matmul(matmul(U, gA), Vh)


def _skew(X: Tensor) -> Tensor:
    """X - X^H."""
    from .pointwise import sub

    return sub(X, X.mH)


def _svd_vjp(ctx, gU, gS, gVh):
    from .views import narrow

    U, S, Vh = ctx.saved_tensors
    (full_matrices,) = ctx.attrs
    if full_matrices:
        k = S.shape[-1]
        U, Vh = narrow(U, -1, 0, k), narrow(Vh, -2, 0, k)
        gU = narrow(gU, -1, 0, k) if gU is not None else None
        gVh = narrow(gVh, -2, 0, k) if gVh is not None else None
    return svd_backward(gU, gS, gVh, U, S, Vh)


def _svd_jvp(args, outs, tangents):
    """FunctionsManual's linalg_svd_jvp, op for op: with dP = U^H dA V, dS = Re diag(dP) and dX = dP - diag(dS),
    dU = U (sym(dX S) / E) (+ (I - U U^H) dA V S^-1 when m > n) and dVh = (sym(-S dX) / E) Vh (+ S^-1 U^H dA
    (I - V V^H) when m < n), the complex case adding i Im diag(dX) / (2S) to both; E_jk = S_k^2 - S_j^2 (ones on
    its diagonal). With full_matrices the extra columns of U (rows of Vh) get zero tangents."""
    from .complex_ops import real
    from .pointwise import add, div, mul, neg, sub
    from .scalar_overloads import mul_scalar
    from .views import diagonal, narrow, unsqueeze

    dA, full_matrices = tangents[0], args[1]
    U, S, Vh = outs
    if dA is None:
        return None, None, None
    is_complex = dA.is_complex()
    m, n, k = dA.shape[-2], dA.shape[-1], S.shape[-1]
    if full_matrices:
        U, Vh = narrow(U, -1, 0, k), narrow(Vh, -2, 0, k)
    V = _mH(Vh)
    # (U^H dA) V, or U^H (dA V) when m < n: the cheaper order
    dP = matmul(_mH(U), matmul(dA, V)) if m < n else matmul(matmul(_mH(U), dA), V)
    dS = real(diagonal(dP, 0, -2, -1)) if is_complex else diagonal(dP, 0, -2, -1)
    dP = sub(dP, diag_embed(dS))
    E = _gap_matrix(mul(S, S))
    diag_over_2S = div(diagonal(dP, 0, -2, -1), mul_scalar(S, 2.0)) if is_complex else None

    dU_inner = div(_sym(mul(dP, unsqueeze(S, -2))), E)
    if is_complex:
        dU_inner = add(dU_inner, diag_embed(diag_over_2S))
    dU = matmul(U, dU_inner)
    if m > n:
        dAVSinv = matmul(dA, div(V, unsqueeze(S, -2)))
        dU = sub(add(dU, dAVSinv), matmul(U, matmul(_mH(U), dAVSinv)))
        if full_matrices:
            dU = _zero_padded(dU, -1, m - n)

    dVh_inner = div(_sym(mul(dP, unsqueeze(neg(S), -1))), E)  # (-S: the smallest tensor negated)
    if is_complex:
        dVh_inner = add(dVh_inner, diag_embed(diag_over_2S))
    dVh = matmul(dVh_inner, Vh)
    if m < n:
        UHdASinv = matmul(div(_mH(U), unsqueeze(S, -1)), dA)
        dVh = sub(add(dVh, UHdASinv), matmul(matmul(UHdASinv, V), Vh))
        if full_matrices:
            dVh = _zero_padded(dVh, -2, n - m)
    return dU, dS, dVh


def _sym(X: Tensor) -> Tensor:
    """X + X^H."""
    from .pointwise import add

    return add(X, _mH(X))


def _zero_padded(t: Tensor, dim: int, extra: int) -> Tensor:
    """``t`` with ``extra`` zero slices appended along ``dim`` (torch's cat with ``new_zeros``)."""
    from .creation import new_zeros
    from .shape import cat

    shape = list(t.shape)
    shape[dim] = extra
    return cat([t, new_zeros(t, shape)], dim)


linalg_svd = defop("linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> "
                   "(Tensor U, Tensor S, Tensor Vh)", _column_major(_svd_kernel, (0, 2)),
                   vjp=_svd_vjp, jvp=_svd_jvp,
                   saves=("result0", "result1", "result2"), attrs=("full_matrices",),
                   meta=("S_sym_argsize_minus_1",))
linalg_svd.materialize_grads = False
linalg_svd.check_outs_before_kernel = _outs_checked_before_kernel(_svd_meta_of, ((0, False), (2, False), (1, True)))


def _svdvals_kernel(a, driver=None):
    _svd_checks(a, driver)
    _refuse_nan_for_svd(a)
    return np.linalg.svd(a, compute_uv=False).astype(a.real.dtype, copy=False)


def _svdvals_vjp(ctx, gS):
    from .pointwise import mul
    from .views import unsqueeze

    (A,) = ctx.saved_tensors
    U, _, Vh = linalg_svd(A, False)  # recomputed, dispatched: the rule stays differentiable
    return matmul(mul(U, unsqueeze(gS, -2)), Vh)


linalg_svdvals = defop("linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor", _svdvals_kernel,
                       vjp=_svdvals_vjp, saves=("A",), node_name="LinalgSvdBackward0")


def svdvals_composite(A: Tensor, *, driver: str | None = None, out=None) -> Tensor:
    """``linalg.svdvals`` as PyTorch's composite runs it: where a gradient may be needed, S of the reduced SVD,
    so its LinalgSvdBackward0 saves (and packs) U, S and Vh; otherwise the values alone."""
    if out is None and STATE.grad_enabled and A.requires_grad:
        return linalg_svd(A, False, driver=driver)[1]
    return linalg_svdvals(A, driver=driver, out=out)


_Svd = return_type("svd", ["U", "S", "V"])


def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None):
    """Legacy ``torch.svd``: returns V (not Vh); ``some=False`` gives full U and V."""
    from .creation import new_zeros
    from .variants import check_out_count

    if out is not None:
        check_out_count(3, out, "svd")
    if input.ndim < 2:  # (its own check, before linalg's)
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.ndim} dimensions "
                           "instead")
    if compute_uv:
        U, S, Vh = linalg_svd(input, not some)
    else:  # the values alone, U and Vh full-sized zeros whatever ``some``, as PyTorch's
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        S = svdvals_composite(input)
        U, Vh = new_zeros(input, batch + (m, m)), new_zeros(input, batch + (n, n))
    # V = Vh.mH(): a transposed view, conjugated (lazily) for complex input
    return _into(_Svd((U, S, _mT(Vh).conj())), out, "_linalg_svd")


def _real_tolerances(name: str, **tolerances) -> None:
    for which, value in tolerances.items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "c":
            raise RuntimeError(f"{name}: {which} tensor of complex type is not supported. Got {_tname(value.dtype)}")


def _tolerance_operand(value):
    """A tolerance as an operand of the cutoff: a number, or a 0-d tensor's as one (PyTorch's 0-d tensors do not
    promote the singular values' dtype), or a tensor's values with a trailing dim, to broadcast with the batch."""
    if isinstance(value, np.ndarray):
        return value[..., None] if value.ndim else value.item()
    return value


def _above_cutoff(a: np.ndarray, s: np.ndarray, smax: np.ndarray, atol, rtol) -> np.ndarray:
    """``s > max(atol, rtol * smax)`` per matrix, as PyTorch's get_atol_rtol makes the tolerances: rtol's default
    is eps * max(m, n), or 0 where atol > 0. A tolerance of several values broadcasts with the batch dims (so may
    add dims to the result), or fails as PyTorch's steps do."""
    if rtol is None:
        default = _eps(a.dtype) * builtins.max(a.shape[-2:])
        rtol = default if atol is None else np.where(np.asarray(atol) > 0, 0.0, default)
    atol, rtol = _tolerance_operand(0.0 if atol is None else atol), _tolerance_operand(rtol)
    try:
        return s > np.maximum(atol, rtol * smax)
    except ValueError:  # (the first of PyTorch's three steps that does not broadcast, in its words)
        from .shape_extra import _broadcast_shape

        _broadcast_shape(s.shape, _broadcast_shape(np.shape(atol), _broadcast_shape(np.shape(rtol), smax.shape)))
        raise


def _mixed_tolerances(atol, rtol) -> None:
    """torch's parser takes atol and rtol both as tensors or both as numbers (a 0-d tensor reads as one): refused
    here, for the argument guard to word it as torch's parser does."""
    if atol is None or rtol is None:
        return
    if (isinstance(atol, Tensor) and (atol.ndim or atol.requires_grad)) != (
            isinstance(rtol, Tensor) and (rtol.ndim or rtol.requires_grad)):
        raise TypeError("tolerances given as a tensor and as a number")


_FLOAT_DOUBLE_OR_COMPLEX = frozenset(np.dtype(c) for c in "fdFD")


def _pinv_kernel(a, atol=None, rtol=None, hermitian=False):
    if rtol is None and atol is not None and a.__class__ is not atol.__class__:
        _default_rtol_checks(a)
    if a.ndim < 2 or seen_dtype(a) not in _FLOAT_DOUBLE_OR_COMPLEX:  # (nor bfloat16, which a float32 copy may be)
        raise RuntimeError(f"linalg.pinv({_tname(a)}{{{list(a.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    _real_tolerances("torch.linalg.pinv", atol=atol, rtol=rtol)
    if a.size == 0:  # (PyTorch's early return, where the tolerances are not read)
        atol = rtol = None
    if hermitian:
        _check_square("linalg.eigh", a)
        w, v = np.linalg.eigh(a)
        s, left, right = np.abs(w), v * np.sign(w)[..., None, :], v
    else:
        _refuse_nan_for_svd(a)
        left, s, vh = np.linalg.svd(a, full_matrices=False)
        right = np.conj(np.swapaxes(vh, -1, -2))
    smax = s.max(axis=-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), s.dtype)
    with np.errstate(divide="ignore"):
        sinv = np.where(_above_cutoff(a, s, smax, atol, rtol), 1.0 / s, 0.0)
    return np.matmul(right * sinv[..., None, :], np.conj(np.swapaxes(left, -1, -2))).astype(a.dtype, copy=False)


def _default_rtol_checks(a: np.ndarray) -> None:
    """pinv's overload of number tolerances computes the default rtol of an atol given alone (``eps * max(m, n)``)
    before any check: it reads the size of dim -2, then the epsilon of the real dtype (float or double only)."""
    if a.ndim < 2:
        raise IndexError("Dimension specified as -2 but tensor has no dimensions" if a.ndim == 0 else
                         "Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if seen_dtype(a) not in _FLOAT_DOUBLE_OR_COMPLEX:
        raise RuntimeError("This function doesn't handle types other than float and double")


def pinv_backward(g: Tensor, pinvA: Tensor, A: Tensor) -> Tensor:
    from .pointwise import add, neg, sub

    m, n = A.shape[-2], A.shape[-1]
    pinvAh, gh = _mH(pinvA), _mH(g)
    if m <= n:
        K = matmul(gh, pinvA)
        KpinvAh = matmul(K, pinvAh)
        out = add(neg(_mH(matmul(pinvA, K))), KpinvAh)
        out = sub(out, matmul(matmul(A, pinvA), KpinvAh))
        return add(out, matmul(matmul(pinvAh, pinvA), sub(gh, matmul(K, A))))
    K = matmul(pinvA, gh)
    pinvAhK = matmul(pinvAh, K)
    out = add(neg(_mH(matmul(K, pinvA))), matmul(matmul(sub(gh, matmul(A, K)), pinvA), pinvAh))
    return sub(add(out, pinvAhK), matmul(matmul(pinvAhK, pinvA), A))


def _pinv_vjp(ctx, g):
    A, pinvA = ctx.saved_tensors
    return pinv_backward(g, pinvA, A)


linalg_pinv = defop("linalg_pinv(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) "
                    "-> Tensor", _pinv_kernel, vjp=_pinv_vjp, saves=("self", "result"))
# (the overload of tolerances given as tensors; one of several values broadcasts with the batch of matrices)
_linalg_pinv_tensor_tol = defop(
    "linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) "
    "-> Tensor", _pinv_kernel, vjp=_pinv_vjp, saves=("self", "result"), differentiable=("self",),
    node_name=linalg_pinv.node_class._name)


def _older_tolerance(value, atol, rtol, absolute: bool) -> tuple:
    """(atol, rtol) for the single tolerance of torch's older overloads, which take neither of them beside it (a
    TypeError, which the argument guard words as torch does)."""
    if atol is not None or rtol is not None:
        raise TypeError("a tolerance given both by the older single argument and by atol/rtol")
    return (value, 0.0) if absolute else (0.0, value)


def pinv(A: Tensor, rcond=None, hermitian: bool = False, *, atol=None, rtol=None, out=None) -> Tensor:
    """The pseudo-inverse. ``rcond`` (torch's older overload, which takes it and ``hermitian`` by position) is
    a tolerance relative to the largest singular value."""
    _mixed_tolerances(atol, rtol)
    if rcond is not None:
        if isinstance(rcond, Tensor):
            _real_tolerances("torch.linalg.pinv", rcond=rcond._data)
        atol, rtol = _older_tolerance(rcond, atol, rtol, absolute=False)
    extra = {} if out is None else {"out": out}
    if isinstance(atol, Tensor) or isinstance(rtol, Tensor):
        for name, t in (("atol", atol), ("rtol", rtol)):  # (checked by PyTorch's autograd before the kernel)
            if isinstance(t, Tensor) and t.requires_grad and STATE.grad_enabled:
                raise RuntimeError(f"The function 'linalg_pinv' is not differentiable with respect to argument "
                                   f"'{name}'. This input cannot have requires_grad True.")
        atol, rtol = _as_tensor_tolerance(atol), _as_tensor_tolerance(rtol)
        return _linalg_pinv_tensor_tol(A, atol=atol, rtol=rtol, hermitian=hermitian, **extra)
    return linalg_pinv(A, atol=atol, rtol=rtol, hermitian=hermitian, **extra)


def _as_tensor_tolerance(value) -> Tensor | None:
    """A number beside a tensor tolerance, as the double tensor PyTorch makes of it."""
    return value if value is None or isinstance(value, Tensor) else _wrap(np.asarray(value, dtype=np.float64))


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    return linalg_pinv(input, rtol=rcond)


def matrix_power(A: Tensor, n: int, *, out=None) -> Tensor:
    """A^n as PyTorch's ``linalg_matrix_power_impl`` computes it: a copy for n = 0 or 1, inv for n = -1, a^2 and
    a^2 a for |n| = 2, 3, else repeated squaring. With ``out``, its last step writes ``out``: a copy (which
    carries grad and tangents), linalg_inv_ex's out= or matmul's (which refuse them)."""
    from ..memory_format import contiguous_format
    from .creation import clone, copy_

    a = A._data
    _check_matrix("linalg.matrix_power", a)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if n == 0:
        eye = _const(np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape))
        if out is not None:
            return _into(eye, out, "linalg_matrix_power", copies=True)
        return copy_(clone(A, memory_format=contiguous_format), eye)
    if n == 1:
        if out is not None:
            return _into(A, out, "linalg_matrix_power", copies=True)
        return clone(A, memory_format=contiguous_format)
    if n == -1:
        return linalg_inv(A) if out is None else linalg_inv(A, out=out)
    base = linalg_inv(A) if n < 0 else A
    n = abs(n)
    if n == 2:
        return matmul(base, base, out=out)
    if n == 3:
        return matmul(matmul(base, base), base, out=out)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = base if z is None else matmul(z, z)
        if bit:
            if out is not None and n == 0:  # (the last product writes out; a lone square is copied in)
                return _into(z, out, "linalg_matrix_power", copies=True) if result is None else \
                    matmul(result, z, out=out)
            result = z if result is None else matmul(result, z)
    return result


def _chain_order(shapes: list) -> list:
    """PyTorch's ``matrix_chain_order`` (CLRS 15.2): ``split[i][j]`` is where the optimal product of
    matrices i..j splits."""
    n = len(shapes)
    p = [shape[0] for shape in shapes] + [shapes[-1][1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain_product(ts: list, split: list, i: int, j: int) -> Tensor:
    if i == j:
        return ts[i]
    right = _chain_product(ts, split, split[i][j] + 1, j)  # PyTorch's C++ builds the right operand first
    return mm(_chain_product(ts, split, i, split[i][j]), right)


def multi_dot(tensors, *, out=None) -> Tensor:
    """PyTorch's ``multi_dot_impl``: 1-D ends viewed as a row / column, the ``mm`` chain in the cheapest
    order, then a ``view`` to the output shape (no squeeze)."""
    from ..backend.dtypes import cpp_type_name
    from .views import unsqueeze, view

    ts = list(tensors)
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    out_shape = []
    for k, (end, vector_dim) in enumerate((("first", 0), ("last", -1))):
        i = k * (n - 1)
        if ts[i].ndim == 1:
            ts[i] = unsqueeze(ts[i], vector_dim)
        elif ts[i].ndim == 2:
            out_shape.append(ts[i].shape[k])
        else:
            raise RuntimeError(f"multi_dot(): the {end} tensor must be 1D or 2D but got {ts[i].ndim}D")
    for i in range(1, n - 1):
        if ts[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {ts[i].ndim}D")
    dtype = ts[0]._data.dtype
    for i in range(1, n):
        if ts[i]._data.dtype != dtype:
            a, b = (cpp_type_name(d) for d in (dtype, ts[i]._data.dtype))
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is {a} and "
                               f"tensor {i} {b}")
        if ts[i - 1].shape[-1] != ts[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {list(tensors[i - 1].shape)} "
                               f"and {list(tensors[i].shape)} cannot be multiplied")
    if out is not None and out._data.dtype != dtype:
        raise RuntimeError(f"multi_dot(): expected out tensor to have dtype {cpp_type_name(dtype)} but got "
                           f"{cpp_type_name(out._data.dtype)}")
    if n == 2:
        result = mm(ts[0], ts[1])
    elif n == 3:
        a, b, c, d = ts[0].shape[0], ts[1].shape[0], ts[2].shape[0], ts[2].shape[1]
        if a * c * (b + d) > b * d * (a + c):
            result = mm(ts[0], mm(ts[1], ts[2]))
        else:
            result = mm(mm(ts[0], ts[1]), ts[2])
    else:
        result = _chain_product(ts, _chain_order([t.shape for t in ts]), 0, n - 1)
    return _into(view(result, tuple(out_shape)), out, "mm")


def chain_matmul(*matrices, out=None) -> Tensor:
    """Deprecated ``torch.chain_matmul``: ``multi_dot`` of matrices only (a single one is cloned). torch's Python
    passes the matrices on as one tuple, which its C++ operator's parser checks."""
    try:
        return _chain_matmul(matrices, out)
    except Exception:
        refuse_as_torch("chain_matmul", (matrices,), {} if out is None else {"out": out})
        raise


def _chain_matmul(matrices: tuple, out) -> Tensor:
    from .._warnings import warn_once_at_caller
    from .creation import clone

    refuse_non_tensors_among(matrices)  # (torch's parser refuses before its operator warns)
    # (TORCH_WARN_ONCE in chain_matmul and, another, in chain_matmul_out)
    warn_once_at_caller("chain_matmul" if out is None else "chain_matmul_out",
                        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                        "multiple parameters.")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return _into(clone(matrices[0]), out, "chain_matmul", copies=True)  # (PyTorch copies it into out)
    return multi_dot(matrices, out=out)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out=None) -> Tensor:
    from .pointwise import mul
    from .reductions_extra import sum as _sum

    _check_float("linalg.vecdot", x._data)
    if x._data.dtype != y._data.dtype:  # (mixed dtypes refused, a real and a complex operand among them)
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_tname(x._data.dtype)} and y of type {_tname(y._data.dtype)} instead")
    if out is not None and out._data.dtype != x._data.dtype:  # (checked before any shape: no cast into out)
        raise RuntimeError(f"linalg.vecdot: Expected out of dtype{_tname(x._data.dtype)} but found "
                           f"{_tname(out._data.dtype)}")
    if x.ndim == 1 and y.ndim == 1:  # (PyTorch's: vdot itself, whatever dim says: its node, its size refusal)
        return _into(vdot(x, y), out, "vdot")
    return _into(_sum(mul(x.conj(), y), dim), out, "sum")  # x conjugated, as PyTorch's (x^H y)


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None, out=None) -> Tensor:
    """The number of singular values above the tolerance. ``tol`` (torch's older overload, which takes it and
    ``hermitian`` by position) is an absolute one, as NumPy's."""
    _mixed_tolerances(atol, rtol)
    if tol is not None:
        atol, rtol = _older_tolerance(tol, atol, rtol, absolute=True)
    a = A._data
    if a.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    atol, rtol = (t._data if isinstance(t, Tensor) else t for t in (atol, rtol))
    _real_tolerances("torch.linalg.matrix_rank", atol=atol, rtol=rtol)
    if rtol is None and (a.dtype.kind not in "fc" or a.dtype.char == "e"):  # (the default rtol's epsilon)
        raise RuntimeError("This function doesn't handle types other than float and double")
    if a.size == 0:  # (PyTorch's early return: rank 0, the tolerances not read)
        return _into(_wrap(np.zeros(a.shape[:-2], dtype=np.int64)), out, "linalg_matrix_rank")
    if hermitian:
        _check_square("linalg.eigh", a)
        if not _dt.is_differentiable_np(a.dtype):  # (floating or complex)
            raise unsupported("linalg_eigh_cpu", a.dtype)
    else:
        _check_float("linalg.svd", a)
    refuse_half("linalg_eigh_cpu" if hermitian else "linalg_svd_cpu", a)
    if not hermitian:
        _refuse_nan_for_svd(a)
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    kept = _above_cutoff(a, s, s.max(axis=-1, keepdims=True), atol, rtol)
    rank = np.asarray(np.sum(kept, axis=-1), dtype=np.int64)
    if rank.shape != a.shape[:-2]:
        # (PyTorch sizes its result, or out, to the batch's shape before it sums into it: a tolerance that
        # broadcasts further resizes it again, with the out= warning)
        staged = _wrap(np.zeros(a.shape[:-2], dtype=np.int64))
        out = staged if out is None else _into(staged, out, "linalg_matrix_rank")
    return _into(_wrap(rank), out, "linalg_matrix_rank")


def linalg_matmul(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    return matmul(input, other) if out is None else matmul(input, other, out=out)


def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    from .views import diagonal

    return diagonal(A, offset, dim1, dim2)


# ---- exports -----------------------------------------------------------------------------------------------

# The ``torch.linalg`` namespace (tracegrad/linalg.py re-exports these names).
LINALG = {
    "norm": norm, "vector_norm": vector_norm, "matrix_norm": matrix_norm, "inv": linalg_inv,
    "inv_ex": linalg_inv_ex, "det": linalg_det, "slogdet": linalg_slogdet, "solve": linalg_solve,
    "solve_triangular": linalg_solve_triangular, "cholesky": linalg_cholesky, "cholesky_ex": cholesky_ex,
    "qr": linalg_qr, "eigh": linalg_eigh, "eigvalsh": eigvalsh, "svd": linalg_svd, "svdvals": svdvals_composite,
    "pinv": pinv, "matrix_power": matrix_power, "matrix_rank": matrix_rank, "multi_dot": multi_dot,
    "vecdot": vecdot, "cross": linalg_cross, "matmul": linalg_matmul, "diagonal": linalg_diagonal,
    "LinAlgError": LinAlgError,
}

def _block_diag_of_tensors(*tensors: Tensor) -> Tensor:
    """``torch.block_diag(a, b, ...)``: the tensors as separate arguments (torch's Python wrapper)."""
    return block_diag(list(tensors))


_block_diag_of_tensors.__name__ = _block_diag_of_tensors.__qualname__ = "block_diag"  # (as Python's errors name it)

PUBLIC = {
    "bmm": bmm, "mv": mv, "dot": dot, "vdot": vdot, "inner": inner, "outer": outer, "ger": ger,
    "addmm": addmm, "addmv": addmv, "addbmm": addbmm, "baddbmm": baddbmm, "addr": addr,
    "einsum": einsum, "tensordot": tensordot, "kron": kron, "trace": trace, "tril": tril, "triu": triu,
    "diag": diag, "diag_embed": diag_embed, "diagflat": diagflat, "cross": cross,
    "det": linalg_det, "slogdet": slogdet, "logdet": logdet, "inverse": linalg_inv,
    "cholesky": cholesky, "cholesky_solve": cholesky_solve, "pinverse": pinverse,
    "matrix_power": matrix_power,
    "svd": svd, "qr": qr, "chain_matmul": chain_matmul, "dist": dist, "block_diag": _block_diag_of_tensors,
}

METHODS = {
    "bmm": bmm, "mv": mv, "dot": dot, "vdot": vdot, "inner": inner, "outer": outer, "ger": ger,
    "addmm": addmm, "addmm_": addmm_, "addmv": addmv, "addmv_": addmv_, "addbmm": addbmm,
    "addbmm_": _resizing_self(addbmm_), "baddbmm": baddbmm, "baddbmm_": baddbmm_, "addr": addr, "addr_": addr_,
    "kron": kron, "trace": trace,
    "tril": tril, "tril_": tril_, "triu": triu, "triu_": triu_, "diag": diag, "diag_embed": diag_embed,
    "diagflat": diagflat, "cross": cross, "det": linalg_det, "slogdet": slogdet, "logdet": logdet,
    "inverse": linalg_inv, "cholesky": cholesky, "cholesky_solve": cholesky_solve, "pinverse": pinverse,
    "matrix_power": matrix_power, "svd": svd, "qr": qr, "dist": dist,
}


def _public_namespace() -> None:
    # ``torch.linalg`` must exist after a plain ``import tracegrad``; until tracegrad/__init__ imports the
    # namespace module itself, it is put in the package namespace through PUBLIC.
    import importlib

    PUBLIC["linalg"] = importlib.import_module("tracegrad.linalg")


_public_namespace()
