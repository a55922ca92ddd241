"""``cdist`` (p-norm distances between the rows of two batches of matrices) and ``pdist`` (between the rows of
one matrix) as PyTorch computes them.

PyTorch takes one of two routes, and the graph shows which:

- Euclidean distances (p = 2) of more than 25 rows (or always, with ``use_mm_for_euclid_dist``) go through one
  matrix product, ``_euclidean_dist`` (EuclideanDistBackward0, a differentiable composite backward), viewed to
  the output shape;
- everything else through ``_cdist_forward`` (CdistBackward0), whose backward operator ``_cdist_backward``
  has no derivative of its own.
"""

from __future__ import annotations

import math

import numpy as np

from ..._arg_parser import refuse_arrays_among, refuse_as_torch
from ..._autocast_policies import with_autocast
from ..._tensor import Tensor
from ...autograd.forward_ad import not_implemented_jvp, refuse_unformulated
from ...backend.dtypes import scalar_type_name
from .._util import unsupported
from ..aten_sum import ordered_sum
from ..aten_vec import compiled_multiply_add_loop, map_reduce_sum
from ..bfloat16_in_float import seen_dtype
from ..glibc_scalar import c_pow
from ..registry import defop, not_implemented
from .glibc_powf import pow_to_float
from .sleef_pow import sleef_powf

_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}
_MM_THRESHOLD = 25  # rows above which the default mode takes the matrix-product route


def _pairwise_differences(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """(..., P, R, M): x1's rows minus x2's rows."""
    return x1[..., :, None, :] - x2[..., None, :, :]


def _cdist_kernel(x1, x2, p, compute_mode=None):
    if x1.size and x2.size and x1.shape[-1]:  # (ATen returns empty or zero results before it dispatches)
        _check_cdist_dtypes(x1, x2)
    diff = np.abs(_pairwise_differences(x1, x2.astype(x1.dtype, copy=False)))  # (the result has x1's dtype)
    if diff.dtype in _ATEN_ORDER_DTYPES and diff.shape[-1]:
        return np.ascontiguousarray(_cdist_as_aten(diff.reshape(-1, diff.shape[-1]), p).reshape(diff.shape[:-1]))
    if p == 0:
        out = np.count_nonzero(diff, axis=-1).astype(x1.dtype)
    elif p == math.inf:
        out = diff.max(axis=-1) if diff.shape[-1] else np.zeros(diff.shape[:-1], x1.dtype)
    elif p == 1:
        out = diff.sum(axis=-1)
    elif p == 2:
        out = np.sqrt(np.einsum("...k,...k->...", diff, diff))
    else:
        out = np.power(np.power(diff, p).sum(axis=-1), 1.0 / p)
    return np.asarray(out, dtype=x1.dtype)


_ATEN_ORDER_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _check_cdist_dtypes(x1: np.ndarray, x2: np.ndarray) -> None:
    """ATen's cdist kernel dispatches on x1's dtype (float and double only) and reads x2 as that type: it
    neither promotes nor computes in half precision."""
    if seen_dtype(x1) not in _ATEN_ORDER_DTYPES:  # (nor bfloat16, which a float32 copy may stand for)
        raise unsupported("cdist", x1)
    if seen_dtype(x2) != seen_dtype(x1):
        raise RuntimeError(f"expected scalar type {scalar_type_name(x1)} but found {scalar_type_name(x2)}")


def _nonzero_terms(diff: np.ndarray) -> np.ndarray:
    """p = 0's ``min(ceil(|d|), 1)``: 1 for any nonzero difference, NaN kept."""
    return np.minimum(np.ceil(diff), diff.dtype.type(1))


def _cdist_as_aten(diff: np.ndarray, p: float) -> np.ndarray:
    """The distances of rows of ``|x1_i - x2_j|`` as ``run_parallel_cdist`` computes them: a scalar loop
    ``agg = red(agg, map(d))`` from 0 over the columns, then ``finish(agg)``. For p = 2, GCC squares whole groups
    of four floats (two doubles) with one 128-bit multiply, each square rounded before it is added; the squares
    after the last group are fused into the sum. For inf, ``std::max(agg, d)`` passes over NaN. Any other p
    takes the C library's ``std::pow(d, p)`` of each difference (p in the input's dtype)."""
    p = float(diff.dtype.type(p))  # (the kernel takes p in the input's dtype: 2.0000001 is 2 in float)
    if p == math.inf:
        return np.fmax.reduce(diff, axis=1, initial=0)
    if p == 2:
        return np.sqrt(compiled_multiply_add_loop(np.zeros(diff.shape[0], diff.dtype), diff, diff))
    terms = _nonzero_terms(diff) if p == 0 else diff if p == 1 else _c_pow_of_each(diff, p)
    total = np.add.accumulate(terms, axis=1)[:, -1]
    return total if p in (0, 1) else _root(total, p)


def _root(total: np.ndarray, p: float) -> np.ndarray:
    """The general p-norm's ``finish``: ``std::pow(agg, 1.0 / p)``, p (in the input's dtype) inverted in double, so
    a float sum takes the double power rounded to float."""
    reciprocal = 1.0 / p
    if total.dtype == np.float32:
        return pow_to_float(total, reciprocal)
    return _c_pow_of_each(total, reciprocal)


def _pdist_as_aten(diff: np.ndarray, p: float) -> np.ndarray:
    """The distances of rows of ``|x_i - x_j|`` as ``run_parallel_pdist`` sums them: each row one
    ``vec::map2_reduce_all`` (lane-wise sums of the mapped vectors, the last partial vector's lanes set apart,
    then the lanes folded), the square's product and sum rounded apart; p = 2 takes the square root, any other p
    the vector pow of each difference and the root of ``_root``. Its vector maximum, unlike cdist's scalar one,
    keeps NaN."""
    p = float(diff.dtype.type(p))
    if p == math.inf:
        return np.max(diff, axis=1)
    if p == 0:
        return map_reduce_sum([_nonzero_terms(diff)])
    if p == 1:
        return map_reduce_sum([diff])
    if p == 2:
        return np.sqrt(map_reduce_sum([diff, diff], fused_tail=False))
    return _root(map_reduce_sum([_vector_pow(diff, p)]), p)


def _vector_pow(diff: np.ndarray, p: float) -> np.ndarray:
    """``Vectorized::pow`` of the differences: Sleef's powf_u10 for floats; for doubles Sleef's powd4_u10, which is
    taken as the C library's (nearly correctly rounded) pow."""
    if diff.dtype == np.float32:
        return sleef_powf(diff, np.float32(p))
    return _c_pow_of_each(diff, p)


def _c_pow_of_each(x: np.ndarray, exponent: float) -> np.ndarray:
    """The C library's pow (powf for floats) of each element of ``x`` and one exponent, in x's dtype."""
    return c_pow(x.reshape(-1), np.full(x.size, exponent, x.dtype)).reshape(x.shape)


def _cdist_backward_kernel(grad, x1, x2, p, cdist):
    """d cdist / d x1, summed over x2's rows (PyTorch's _cdist_backward; 0 where the distance is 0)."""
    diff = _pairwise_differences(x1, x2)
    g = grad[..., None]
    dist = cdist[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            terms = np.zeros_like(diff)
        elif p == 1:
            terms = g * np.sign(diff)
        elif p == 2:
            terms = g * diff / dist
        elif p == math.inf:
            terms = g * np.sign(diff) * (np.abs(diff) == dist)
        elif p < 2:  # (ATen's Vec arithmetic: its operand order, Sleef's pow, p - 1 taken in the dtype)
            p1 = diff.dtype.type(p) - 1
            terms = np.sign(diff) * _vector_pow(np.abs(diff), p1) * g / _vector_pow(dist, p1)
            if p < 1:  # (ATen's lttdist_calc: a coordinate that does not differ takes 0, not 0 * inf)
                terms = np.where(diff == 0, 0, terms)
        else:
            pt = diff.dtype.type(p)
            terms = diff * _vector_pow(np.abs(diff), pt - 2) * g / _vector_pow(dist, pt - 1)
    terms = np.where(dist == 0, 0, terms)
    total = ordered_sum(terms, terms.ndim - 2) + terms.dtype.type(0)  # (x2's rows in turn, into a zero)
    return np.ascontiguousarray(total, dtype=x1.dtype)


_cdist_backward = defop("_cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist) -> Tensor",
                        _cdist_backward_kernel, vjp=not_implemented("_cdist_backward"))


def _cdist_vjp(ctx, g):
    from ..views import transpose

    x1, x2, result = ctx.saved_tensors
    (p,) = ctx.attrs
    need = ctx.needs_input_grad
    gx1 = _cdist_backward(g.contiguous(), x1, x2, p, result) if need[0] else None
    gx2 = _cdist_backward(transpose(g, -1, -2).contiguous(), x2, x1, p,
                          transpose(result, -1, -2).contiguous()) if need[1] else None
    return gx1, gx2


_cdist_forward = defop("_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor", _cdist_kernel,
                       vjp=_cdist_vjp, jvp=not_implemented_jvp("_cdist_forward"), saves=("x1", "x2", "result"),
                       attrs=("p",), node_name="CdistBackward0")


def _euclidean_dist_kernel(x1, x2):
    # PyTorch's formulation: [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, clamped at 0, square-rooted
    n1 = np.square(x1).sum(axis=-1, keepdims=True)
    n2 = np.square(x2).sum(axis=-1, keepdims=True)
    a = np.concatenate([x1 * -2, n1, np.ones_like(n1)], axis=-1)
    b = np.concatenate([x2, np.ones_like(n2), n2], axis=-1)
    if a.dtype != b.dtype:  # ATen's matmul of the padded operands refuses them, in mm's or bmm's words
        from ..linalg import _bmm_kernel
        from ..linalg_core import _mm_kernel

        (_mm_kernel if a.ndim == 2 else _bmm_kernel)(a, np.swapaxes(b, -1, -2))
    return np.sqrt(np.maximum(np.matmul(a, np.swapaxes(b, -1, -2)), 0)).astype(x1.dtype, copy=False)


def _euclidean_dist_vjp(ctx, g):
    """PyTorch's _euclidean_dist_backward: ratio = g / d (0 where d == 0); x1 * rowsum(ratio) - ratio @ x2 and
    x2 * colsum(ratio) - ratio^T @ x1."""
    from ..linalg_core import matmul
    from ..pointwise import div, eq, mul, sub
    from ..reductions_extra import sum as sum_dims
    from ..shape_extra import masked_fill_scalar_
    from ..views import transpose, unsqueeze

    x1, x2, result = ctx.saved_tensors
    ratio = div(g, result)
    masked_fill_scalar_(ratio, eq(result, 0), 0)
    # (C++ order: the braced pair left to right, each difference's right operand first)
    product = matmul(ratio, x2)
    gx1 = sub(mul(x1, sum_dims(ratio, -1, True)), product)
    product = matmul(transpose(ratio, -1, -2), x1)
    gx2 = sub(mul(x2, unsqueeze(sum_dims(ratio, -2, False), -1)), product)
    return gx1, gx2


_euclidean_dist = defop("_euclidean_dist(Tensor x1, Tensor x2) -> Tensor", _euclidean_dist_kernel,
                        vjp=_euclidean_dist_vjp, jvp=not_implemented_jvp("_euclidean_dist"),
                        saves=("x1", "x2", "result"))


def _batch_shape(a: tuple, b: tuple) -> tuple:
    from ..shape_extra import _broadcast_shape

    return tuple(_broadcast_shape(a, b))


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
          ) -> Tensor:
    """Distances between each row of ``x1`` (..., P, M) and each row of ``x2`` (..., R, M): (..., P, R).

    torch's Python maps ``compute_mode`` to a number, then its C++ ``cdist`` parses (x1, x2, p, mode)."""
    mode = next((number for name, number in _COMPUTE_MODES.items() if compute_mode == name), None)
    if mode is None:  # (compared, not looked up: a list is no valid mode either)
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    try:
        refuse_arrays_among((p,))  # (the kernel reads a 0-d one as its number; torch's parser takes no array)
        return _cdist_as_dispatched(x1, x2, p, mode)
    except Exception:
        refuse_as_torch("cdist", (x1, x2, p, mode or None), {})
        raise


def _cdist(x1: Tensor, x2: Tensor, p: float, mode: int) -> Tensor:
    from ..views import expand, view

    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    rows1, rows2, cols = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    use_mm = p == 2 and (mode == 1 or (mode == 0 and (rows1 > _MM_THRESHOLD or rows2 > _MM_THRESHOLD)))
    through_forward = x1.numel() == 0 or x2.numel() == 0 or not use_mm
    if through_forward:  # (_cdist_forward's autograd kernel refuses a tangent before its kernel checks the dtypes)
        refuse_unformulated("_cdist_forward", (x1, x2))
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            from ...backend.dtypes import scalar_type_name

            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{scalar_type_name(x._data.dtype)}")
    if not p >= 0:  # (ATen's TORCH_CHECK(p >= 0): a NaN p is refused too)
        raise RuntimeError("cdist only supports non-negative p values")
    p = float(p)
    batch = _batch_shape(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    if through_forward:
        # (the kernel broadcasts the batch dims itself; the engine sums a broadcast gradient back)
        return _cdist_forward(x1, x2, p, None if mode == 0 else mode)
    count = math.prod(batch)
    if count == 1:
        distances = _euclidean_dist(x1, x2)
    else:
        # (PyTorch: expand, contiguous - a clone unless already contiguous - and view to 3-D)
        distances = _euclidean_dist(view(expand(x1, batch + (rows1, cols)).contiguous(), (count, rows1, cols)),
                                    view(expand(x2, batch + (rows2, cols)).contiguous(), (count, rows2, cols)))
    return view(distances, batch + (rows1, rows2))


# torch's Python cdist calls the C++ operator, which CPU autocast casts to float32 (a float32 copy standing for
# bfloat16 would otherwise reach a kernel that refuses bfloat16)
_cdist_as_dispatched = with_autocast("cdist", _cdist)


# ---- pdist -------------------------------------------------------------------------------------------------
# PyTorch's pdist is _pdist_forward (PdistBackward0) over a contiguous input; its backward operator
# _pdist_backward, like _cdist_backward, has no derivative of its own.


def _pdist_kernel(x, p=2.0):
    if x.shape[0] > 1 and x.shape[1] and seen_dtype(x) not in _ATEN_ORDER_DTYPES:  # (as cdist's kernel)
        raise unsupported("pdist", x)
    rows, cols = np.triu_indices(x.shape[0], 1)  # pairs (i, j), i < j, in row-major order
    if x.dtype in _ATEN_ORDER_DTYPES and x.shape[1]:
        return np.ascontiguousarray(_pdist_as_aten(np.abs(x[rows] - x[cols]), p))
    return _cdist_kernel(x[rows][:, None, :], x[cols][:, None, :], p)[:, 0, 0]


def _pdist_backward_kernel(grad, x, p, pdist):
    # Each pair's term reaches row i with one sign and row j with the other: as cdist's backward of x against
    # itself, with the pair gradients and distances spread over a symmetric matrix (0 on the diagonal).
    n = x.shape[0]
    rows, cols = np.triu_indices(n, 1)
    g = np.zeros((n, n), dtype=grad.dtype)
    dist = np.zeros((n, n), dtype=pdist.dtype)
    g[rows, cols] = g[cols, rows] = grad
    dist[rows, cols] = dist[cols, rows] = pdist
    return _cdist_backward_kernel(g, x, x, p, dist)


_pdist_backward = defop("_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor",
                        _pdist_backward_kernel, vjp=not_implemented("_pdist_backward"))


def _pdist_vjp(ctx, g):
    x, result = ctx.saved_tensors
    (p,) = ctx.attrs
    return _pdist_backward(g, x, p, result)


_pdist_forward = defop("_pdist_forward(Tensor self, float p=2) -> Tensor", _pdist_kernel, vjp=_pdist_vjp,
                       jvp=not_implemented_jvp("_pdist_forward"), saves=("self", "result"), attrs=("p",),
                       node_name="PdistBackward0")


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """p-norm distances between each pair of rows of ``input`` (N, M): the N (N - 1) / 2 values above the
    diagonal of ``cdist(input, input)``, row by row."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if not p >= 0:  # (ATen's TORCH_CHECK(p >= 0): a NaN p is refused too)
        raise RuntimeError("pdist only supports non-negative p values")
    return _pdist_forward(input.contiguous(), float(p))
