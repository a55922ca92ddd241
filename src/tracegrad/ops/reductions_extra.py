"""More reductions: prod, max/min, amax/amin, var/std, norm, logsumexp, scans, arg-reductions, all/any,
median, sort/topk/kthvalue and friends. Also the full PyTorch forms of ``sum`` and ``mean``.

``sum``/``mean`` are redeclared here (same schemas as reductions.py, plus the full-reduction overloads) so
that ``dtype=`` takes a tracegrad dtype and the node names follow PyTorch: a full reduction records
``SumBackward0``, a reduction over ``dim`` ``SumBackward1``.

Gradients of value-selecting reductions (``max(dim)``, ``sort``, ``topk``...) scatter the incoming
gradient into the selected positions; full ``max``/``min``/``median`` and ``amax``/``amin`` split it evenly
among ties, as PyTorch does.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .._runtime import get_num_threads
from .._strides import like_self
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import is_grad_enabled
from ..backend import dtypes as _dtypes
from ..backend.dtypes import cpp_type_name
from . import aten_prod, aten_sum, bfloat16_in_float, stl_order
from ._util import log_add_exp_complex, parsed_numbers, to_floating, unsupported, wrap_dim
from .aten_loops import GRAIN_SIZE
from .aten_sum import cast_as_aten, running
from .aten_vec import has_nan
from .reductions import _dims_arg
from .registry import REGISTRY, defdecomposition, defop

# ---- helpers -----------------------------------------------------------------------------------------------


def _np_dtype(dtype):
    """A ``dtype=`` argument (tracegrad dtype, Python type or None) as a NumPy dtype or None."""
    if dtype is None:
        return None
    from ..backend.dtypes import to_dtype

    return to_dtype(dtype).np


def _type_name(np_dtype) -> str:
    from ..backend.dtypes import scalar_type_name

    return scalar_type_name(np_dtype)


def _axes(dim, ndim: int):
    """Reduced axes as a tuple (all axes for ``None``/``[]``)."""
    axes = _dims_arg(dim, ndim)
    return tuple(range(ndim)) if axes is None else axes


def _no_dims(dim) -> bool:
    """Whether ``dim`` is an empty list of dims (``()`` / ``[]``), which some PyTorch operators read as no dim at
    all rather than every dim."""
    return isinstance(dim, (list, tuple)) and not dim


def _count(shape: tuple, dim) -> int:
    return math.prod(shape[d] for d in _axes(dim, len(shape)))


def keepdim_shape(shape: tuple, dim) -> tuple:
    out = list(shape)
    for d in _axes(dim, len(shape)):
        out[d] = 1
    return tuple(out)


def restore_dims(t: Tensor, input_shape: tuple, dim, keepdim: bool) -> Tensor:
    """A reduction's result (or its gradient) with the reduced dims back as size 1, so that it broadcasts
    against the input. As PyTorch's formulas (``unsqueeze_multiple``): one unsqueeze per reduced dim, in
    increasing order; the 0-d result of a full reduction broadcasts as it is."""
    if keepdim or not input_shape:
        return t
    axes = _dims_arg(dim, len(input_shape))
    if axes is None:
        return t
    from .views import unsqueeze

    for d in sorted(axes):
        t = unsqueeze(t, d)
    return t


def _reshaped_back(t: Tensor, dim, keepdim: bool) -> Tensor:
    """PyTorch's restore_reduced_dims (amax/amin's formulas): the reduced dims put back as size 1 by one reshape
    (ViewBackward0), not by unsqueezes; with no dim named, the 0-d result is reshaped to itself."""
    if keepdim:
        return t
    from .views import reshape

    dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
    total = t.ndim + len(dims)
    reduced = {d % total for d in dims}
    sizes = iter(t.shape)
    return reshape(t, tuple(1 if i in reduced else next(sizes) for i in range(total)))


def _expand_grad(g: Tensor, input_shape: tuple, dim, keepdim: bool) -> Tensor:
    from .views import expand, unsqueeze

    # PyTorch's sum_backward, so that double-backward graphs match: a full reduction's gradient is expanded
    # as is; the dims of a partial one come back through one unsqueeze each, in increasing order.
    if not keepdim and input_shape:
        axes = _dims_arg(dim, len(input_shape))
        if axes is not None:
            for d in sorted(axes):
                g = unsqueeze(g, d)
    return expand(g, input_shape)


def _const(array: np.ndarray) -> Tensor:
    """A constant tensor built inside a backward rule (index grids, identity masks)."""
    return _wrap(np.ascontiguousarray(array))


def _isnan(t: Tensor) -> Tensor:
    from .pointwise import ne

    return ne(t, t)


def zero_fill(mask: Tensor, t: Tensor) -> Tensor:
    """``t`` (a fresh tensor) with zeros where ``mask`` holds: PyTorch's ``masked_fill_(mask, 0)`` in backward
    formulas, recorded as MaskedFillBackward0, keeping ``t``'s layout as the in-place fill does."""
    from .shape_extra import masked_fill_scalar

    out = masked_fill_scalar(t, mask, 0)
    # (in place, PyTorch's fill keeps the fresh tensor's layout, where the out-of-place op is contiguous)
    out._data = like_self(out._data, t._data)
    return out


def _any_true(mask: Tensor) -> bool:
    # Data-dependent choice of formula, as in PyTorch's prod/cumprod backward.
    return bool(any(mask).item())


def flip(t: Tensor, dim: int) -> Tensor:
    """Reverse ``t`` along ``dim`` with a dispatched op (the registry's ``flip`` when present)."""
    op = REGISTRY.get("flip")
    if op is not None:
        return op(t, [dim])
    from .indexing import index

    d = wrap_dim(dim, t.ndim)
    n = t.shape[d]
    return index(t, [None] * d + [_const(np.arange(n - 1, -1, -1, dtype=np.int64))])


def scatter_into(shape: tuple, dim: int, indices: Tensor, src: Tensor) -> Tensor:
    """Zeros of ``shape`` with ``src`` written at ``indices`` along ``dim``: PyTorch's
    value_selecting_reduction_backward (``zeros.scatter_(dim, indices, grad)``; the indices of a selection
    never repeat), whose double-backward graph shows ScatterBackward0."""
    from .creation import new_zeros
    from .shape_extra import scatter_src
    from .views import reshape

    if not shape:
        return reshape(src, ())
    return scatter_src(new_zeros(src, shape), wrap_dim(dim, len(shape)), indices, src)


# ---- sum / mean --------------------------------------------------------------------------------------------


def _sum_kernel(a, dim=None, keepdim=False, dtype=None):
    dt = _np_dtype(dtype)
    if dt is None and a.dtype.kind in "bui":
        dt = np.dtype(np.int64)
    if a.__class__ is np.ndarray:
        axes = _dims_arg(dim, a.ndim)
        if aten_sum.supports(a.dtype if dt is None else dt):  # (floating sums: PyTorch's order, its bits)
            return aten_sum.sum_as_aten(a, axes, keepdim, dt)
        return np.asarray(_add_reduce(a, axis=axes, dtype=dt, keepdims=keepdim))
    return np.asarray(np.sum(a, axis=_dims_arg(dim, a.ndim), keepdims=keepdim, dtype=dt))


_add_reduce = np.add.reduce


def _sum_full_kernel(a, dtype=None):
    return _sum_kernel(a, None, False, dtype)


def _sum_vjp(ctx, g):
    dim, keepdim = ctx.attrs
    return _expand_grad(g, ctx.input_shapes[0], dim, keepdim)


def _sum_full_vjp(ctx, g):
    return _expand_grad(g, ctx.input_shapes[0], None, False)


_sum_full = defop("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", _sum_full_kernel,
                  vjp=_sum_full_vjp, node_name="SumBackward0", meta=("self_sym_sizes",),
                  jvp=lambda args, outs, ts: _sum_full(ts[0], *args[1:]))
_sum_dim = defop("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) "
                 "-> Tensor", _sum_kernel, vjp=_sum_vjp, attrs=("dim", "keepdim"), node_name="SumBackward1",
                 meta=("self_sym_sizes",),
                 jvp=lambda args, outs, ts: _sum_dim(ts[0], *args[1:]))


class _NoDim:
    """The default of ``dim`` when it is not given: PyTorch then picks the full reduction (SumBackward0), while
    ``dim=None`` given picks the dim overload (SumBackward1), which also reduces everything."""

    def __repr__(self) -> str:
        return "None"


_DIM_NOT_GIVEN = _NoDim()


def _keepdim_without_dim(name: str) -> TypeError:
    return TypeError(f"{name}() received an invalid combination of arguments - got (keepdim=bool, ), but expected "
                     "one of:\n * (*, torch.dtype dtype = None)\n * (tuple of ints dim, bool keepdim = False, *, "
                     "torch.dtype dtype = None)\n")


def sum(input: Tensor, dim=_DIM_NOT_GIVEN, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    extra = {} if out is None else {"out": out}
    if dim is _DIM_NOT_GIVEN:
        if keepdim:
            raise _keepdim_without_dim("sum")
        return _sum_full(input, dtype=dtype, **extra)
    return _sum_dim(input, dim, keepdim, dtype=dtype, **extra)


def _mean_kernel(a, dim=None, keepdim=False, dtype=None):
    dt = _np_dtype(dtype)
    if dt is None and a.dtype.kind not in "fc":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                           f"point or complex dtype. Got: {_type_name(a.dtype)}")
    if dt is not None and dt.kind not in "fc":
        raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating "
                           f"point or complex dtype. Got: {_type_name(dt)}")
    if a.__class__ is np.ndarray and aten_sum.supports(dt or a.dtype):  # (PyTorch's sum, then the division)
        return aten_sum.mean_as_aten(a, _dims_arg(dim, a.ndim), keepdim, dt or a.dtype)
    out = np.mean(a, axis=_dims_arg(dim, a.ndim), keepdims=keepdim, dtype=dt or a.dtype)
    return np.asarray(out, dtype=dt or a.dtype)


def _mean_full_kernel(a, dtype=None):
    return _mean_kernel(a, None, False, dtype)


def _mean_vjp(ctx, g):
    from .pointwise import div

    dim, keepdim = ctx.attrs
    shape = ctx.input_shapes[0]
    return div(_expand_grad(g, shape, dim, keepdim), _count(shape, dim))


def _mean_full_vjp(ctx, g):
    from .pointwise import div

    shape = ctx.input_shapes[0]
    return div(_expand_grad(g, shape, None, False), math.prod(shape))


_mean_full = defop("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", _mean_full_kernel,
                   vjp=_mean_full_vjp, meta=("self_sym_numel", "self_sym_sizes"), node_name="MeanBackward0",
                   jvp=lambda args, outs, ts: _mean_full(ts[0], *args[1:]))
_mean_dim = defop("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) "
                  "-> Tensor", _mean_kernel, vjp=_mean_vjp, attrs=("dim", "keepdim"),
                  meta=("self_sym_numel", "self_sym_sizes"),
                  node_name="MeanBackward1", jvp=lambda args, outs, ts: _mean_dim(ts[0], *args[1:]))


def mean(input: Tensor, dim=_DIM_NOT_GIVEN, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    extra = {} if out is None else {"out": out}
    if dim is _DIM_NOT_GIVEN:
        if keepdim:
            raise _keepdim_without_dim("mean")
        return _mean_full(input, dtype=dtype, **extra)
    return _mean_dim(input, dim, keepdim, dtype=dtype, **extra)


def _nansum_kernel(a, dim=None, keepdim=False, dtype=None):
    dt = _np_dtype(dtype)
    if dt is None and a.dtype.kind in "bui":
        dt = np.dtype(np.int64)
    axes = _dims_arg(dim, a.ndim, one_by_one=True)
    if a.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dt is not None and dt.kind == "c" and a.dtype.kind == "f" and a.size:  # (integers sum: no nansum kernel)
        raise unsupported("nansum_cpu", dt)
    if a.__class__ is np.ndarray and (a.dtype if dt is None else dt) in _NANSUM_AS_ATEN:  # (PyTorch's order)
        return aten_sum.nansum_as_aten(a, axes, keepdim, dt)
    return np.asarray(np.nansum(a, axis=axes, keepdims=keepdim, dtype=dt))


_NANSUM_AS_ATEN = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


def _nansum_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    dim, keepdim = ctx.attrs
    from .pointwise import logical_not, mul

    # PyTorch's nansum_backward: sum's gradient times ``~isnan(self)``
    return mul(_expand_grad(g, ctx.input_shapes[0], dim, keepdim), logical_not(_isnan(x)))


nansum = defop("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) "
               "-> Tensor", _nansum_kernel, vjp=_nansum_vjp, saves=("self",), attrs=("dim", "keepdim"))


def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """Mean of the non-NaN values (composite, as in PyTorch: nansum / count)."""
    from .pointwise import div, logical_not

    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_type_name(input.dtype.np)}")
    counts = sum(logical_not(_isnan(input)), dim, keepdim)  # (first, as torch: its dims' checks speak first)
    if out is not None and dtype is not None:  # (torch's nansum out= refuses it, in nansum's words)
        from .variants import check_out_dtype

        check_out_dtype("nansum", dtype, out)
    result = div(nansum(input, dim, keepdim, dtype=dtype), counts)
    return _store_out(result, out)


def _store_out(result: Tensor, out):
    if out is None:
        return result
    from .creation import copy_

    if tuple(out.shape) != tuple(result.shape):
        from .._strides import contiguous_strides
        from ..storage import laid_out_over_storage
        from .variants import warn_out_resized

        shape = tuple(result.shape)
        warn_out_resized(out._data, shape)
        out._data = laid_out_over_storage(out._data, shape, contiguous_strides(shape))
    copy_(out, result)
    return out


# ---- prod --------------------------------------------------------------------------------------------------


def _prod_kernel(a, dim=None, keepdim=False, dtype=None):
    dt = _np_dtype(dtype)
    if dt is None and a.dtype.kind in "bui":
        dt = np.dtype(np.int64)
    axis = None if dim is None else wrap_dim(dim, a.ndim)  # (a 0-d input takes dim 0 or -1)
    if not a.ndim:
        axis = None
    if aten_prod.supports(a.dtype if dt is None else dt):  # (ATen's order of the products: its bits)
        out = aten_prod.prod_as_aten(a if dt is None else cast_as_aten(a, dt), None if axis is None else (axis,))
        return np.expand_dims(out, axis) if keepdim and axis is not None else out
    out = np.prod(a, axis=axis, keepdims=keepdim and a.ndim > 0, dtype=dt)
    return np.asarray(out)


def _prod_full_kernel(a, dtype=None):
    return _prod_kernel(a, None, False, dtype)


def prod_safe_zeros_backward(g: Tensor, x: Tensor, dim: int) -> Tensor:
    """Gradient of prod along ``dim`` that is exact with zeros: g times the (conjugated, for complex input)
    product of all the *other* elements, formed from exclusive cumulative products from both ends (no
    division), with PyTorch's ops (cat of ones and a narrowed input, cumprod, flip), so its graph is torch's."""
    from .pointwise import mul
    from .views import expand, narrow

    if x._data.size == 0:
        return expand(g, tuple(x.shape))
    d = wrap_dim(dim, x.ndim)
    n = x.shape[d]
    if n == 1:  # (the gradient itself, as PyTorch's: no product, so no graph of x's when creating one)
        return g
    ones = _wrap(np.ones([1 if k == d else s for k, s in enumerate(x.shape)], g._data.dtype))
    left = exclusive_cumprod(ones, narrow(x, d, 0, n - 1), d)
    right = flip(exclusive_cumprod(ones, flip(narrow(x, d, 1, n - 1), d), d), d)
    others = mul(left, right)
    return mul(g, others.conj() if others.is_complex() else others)


def exclusive_cumprod(ones: Tensor, head: Tensor, dim: int) -> Tensor:
    """cumprod(cat([ones, head])) along ``dim``: [1, h0, h0 h1, ...], PyTorch's exclusive products."""
    from .shape import cat

    return cumprod(cat([ones, head], dim), dim)


def _prod_grad(g: Tensor, x: Tensor, result: Tensor, dim: int) -> Tensor:
    """``g`` and ``result`` already broadcast against ``x`` (keepdim form)."""
    from .pointwise import eq

    if not _any_true(eq(x, 0)):
        return _prod_grad_nonzero(g, x, result)
    return prod_safe_zeros_backward(g, x, dim)


def prod_backward_full(g: Tensor, x: Tensor, result: Tensor) -> Tensor:
    """PyTorch's prod_backward for a full product (also the core of its forward formula)."""
    from .views import reshape

    if x.ndim == 0:
        return g
    zeros = int(np.count_nonzero(x._data == 0))
    if not zeros:  # PyTorch's prod_backward without zeros: grad * (result / input)
        return _prod_grad_nonzero(g, x, result)
    if zeros > 1 and not is_grad_enabled():
        # every partial product holds a zero; PyTorch returns exact zeros here (no 0 * inf = NaN), but only
        # without grad mode: under create_graph or forward AD its differentiable formula below runs
        from .creation import zeros_like

        return zeros_like(x)
    flat = reshape(x, (-1,))
    return reshape(_prod_grad(reshape(g, (1,)), flat, reshape(result, (1,)), 0), tuple(x.shape))


def prod_backward_dim(g: Tensor, x: Tensor, result: Tensor, dim: int, keepdim: bool) -> Tensor:
    """PyTorch's prod_backward along ``dim``."""
    if x.ndim == 0:
        return g
    shape = tuple(x.shape)
    d = wrap_dim(dim, x.ndim)
    g, result = restore_dims(g, shape, d, keepdim), restore_dims(result, shape, d, keepdim)
    if not (x._data == 0).any():
        return _prod_grad_nonzero(g, x, result)
    return _prod_grad(g, x, result, d)


def _prod_full_vjp(ctx, g):
    x, result = ctx.saved_tensors
    return prod_backward_full(g, x, result)


def _prod_dim_vjp(ctx, g):
    x, result = ctx.saved_tensors
    dim, keepdim = ctx.attrs
    return prod_backward_dim(g, x, result, dim, keepdim)


def _prod_full_jvp(args, outs, tangents):
    """PyTorch: (prod_backward(ones, self, result) * self_t.conj()).sum().conj() (prod_backward's partials are
    conjugated for complex input; the outer conj undoes that; both are no-ops on real tensors)."""
    from .creation import ones_like
    from .pointwise import mul
    from .unary import conj

    result = outs[0]
    return conj(sum(mul(prod_backward_full(ones_like(result), args[0], result), conj(tangents[0]))))


def _prod_dim_jvp(args, outs, tangents):
    """PyTorch: (prod_backward(ones, self, result, dim, keepdim) * self_t.conj()).sum(dim, keepdim).conj()."""
    from .creation import ones_like
    from .pointwise import mul
    from .unary import conj

    x, dim, keepdim, result = args[0], args[1], args[2], outs[0]
    partials = prod_backward_dim(ones_like(result), x, result, dim, keepdim)
    product = mul(partials, conj(tangents[0]))
    return conj(sum(product, dim, keepdim) if x.ndim else product)


def _prod_grad_nonzero(g: Tensor, x: Tensor, result: Tensor) -> Tensor:
    from .pointwise import div, mul

    d = div(result, x)
    return mul(g, d if d._data.dtype.kind != "c" else d.conj())


_prod_full = defop("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", _prod_full_kernel,
                   vjp=_prod_full_vjp, saves=("self", "result"), node_name="ProdBackward0", jvp=_prod_full_jvp)
_prod_dim = defop("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) "
                  "-> Tensor", _prod_kernel, vjp=_prod_dim_vjp, saves=("self", "result"),
                  attrs=("dim", "keepdim"), node_name="ProdBackward1", jvp=_prod_dim_jvp)


def prod(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    extra = {} if out is None else {"out": out}
    if dim is None:
        return _prod_full(input, dtype=dtype, **extra)
    return _prod_dim(input, dim, keepdim, dtype=dtype, **extra)


# ---- max / min / amax / amin -------------------------------------------------------------------------------


def _evenly_distribute(g: Tensor, x: Tensor, value: Tensor, dim=None, nan_selects: bool = True) -> Tensor:
    """PyTorch's evenly_distribute_backward: the gradient split among the elements equal to ``value``
    (``value`` broadcast against ``x``). With ``nan_selects`` a NaN result selects the NaN inputs; without
    (amax/amin, PyTorch's scale_grad_by_count) nothing matches a NaN and the gradient is NaN."""
    from .pointwise import div, eq, logical_and, logical_or, mul

    mask = eq(x, value)
    if nan_selects:
        mask = logical_or(mask, logical_and(_isnan(x), _isnan(value)))
    counts = sum(mask, dim, True) if dim is not None else sum(mask)
    return mul(div(g, counts), mask)


def _full_evenly_distribute(g: Tensor, x: Tensor, value: Tensor) -> Tensor:
    """PyTorch's CPU evenly_distribute_backward for a whole-tensor max/min/median: zeros with ``g / count``
    filled in where ``x`` equals ``value`` (a NaN result selects the NaN inputs), so that a double-backward
    graph shows torch's MaskedFillBackward1 (with the division behind its value) and the result is contiguous."""
    from .creation import new_zeros
    from .pointwise import div, eq
    from .shape_extra import masked_fill

    mask = _isnan(x) if bool(_isnan(value)._data) else eq(x, value)
    return masked_fill(new_zeros(g, tuple(x.shape)), mask, div(g, sum(mask)))


def evenly_read_jvp(args, outs, tangents):
    """PyTorch's tangent of a full max/min/median: the mean of the tangents of the elements equal to the
    result. Unlike the backward rule, a NaN result selects nothing, so its tangent is 0 / 0 = NaN."""
    from .pointwise import div, eq, mul

    mask = eq(args[0], outs[0])
    return sum(mul(mask, div(tangents[0], sum(mask))))


# ---- the NaN a max/min returns ---------------------------------------------------------------------------------
#
# NumPy hands back one of the input's NaNs; torch's kernels make their own. A full max/min/aminmax of a float or
# double tensor runs a vector loop whose maximum ORs in the all-ones mask of an unordered compare (a NaN with every
# bit set; a half tensor's, reduced in float, converts to the negative default NaN), unless the tensor is split over
# threads (more than GRAIN_SIZE elements), whose results a scalar max combines into the default quiet NaN; a
# one-element tensor's is its element read through another type (see _lone_nan). amax/amin's scalar max_impl
# returns the default quiet NaN (their vector loops over an output's contiguous lanes can leave the all-ones one:
# not followed). max/min/aminmax along a dim keep the first NaN of each row.

_QUIET_BIT = {np.dtype(np.float16): np.uint16(1 << 9), np.dtype(np.float32): np.uint32(1 << 22),
              np.dtype(np.float64): np.uint64(1 << 51)}


def _torch_full_extreme_nan(result: np.ndarray, a: np.ndarray) -> np.ndarray:
    """A full max/min/aminmax ``result`` of ``a`` (0-d) with the bits of torch's NaN, where it is one."""
    if result.dtype.kind != "f":
        return result
    value = result.item()
    if value == value:  # (not NaN: a Python float's test, a fraction of np.isnan's call on a 0-d array)
        return result
    if a.size > GRAIN_SIZE and get_num_threads() > 1:
        return np.asarray(np.nan, result.dtype)
    quiet = _QUIET_BIT.get(result.dtype)
    if quiet is None:
        return result
    if a.size == 1:
        return _lone_nan(result, quiet)
    if result.dtype.itemsize == 2:  # (half: reduced in float, whose all-ones NaN converts to the negative default)
        return np.asarray(np.copysign(np.nan, -1), result.dtype)
    return np.invert(np.zeros_like(result.view(quiet.dtype))).view(result.dtype)


def _lone_nan(value: np.ndarray, quiet) -> np.ndarray:
    """The NaN torch's full max/min returns for a one-element tensor holding ``value``: a double as it is, a float
    quieted (read through a double), a half the default NaN of its sign (read through a float)."""
    if value.dtype.itemsize == 8:
        return value
    if value.dtype.itemsize == 2:
        return np.asarray(np.copysign(np.asarray(np.nan, value.dtype), value), value.dtype)
    return (value.view(quiet.dtype) | quiet).view(value.dtype)


def _default_nans(result: np.ndarray) -> np.ndarray:
    """``result`` (a new array) with its NaNs made the default quiet NaN, as amax/amin's scalar max_impl makes
    them."""
    if result.dtype.kind != "f":
        return result
    if not result.ndim:
        value = result.item()
        return result if value == value else np.asarray(np.nan, result.dtype)
    if has_nan(result):
        np.copyto(result, np.asarray(np.nan, result.dtype), where=np.isnan(result))
    return result


def _first_nans(values: np.ndarray, x: np.ndarray, d: int) -> np.ndarray:
    """``values`` (a new array, reduced over dim ``d`` of ``x`` with the dim kept) with each NaN replaced by the
    first NaN of its row of ``x``."""
    if values.dtype.kind == "f":
        nans = np.isnan(values)
        if nans.any():
            first = np.take_along_axis(x, np.argmax(np.isnan(x), axis=d, keepdims=True), d)
            np.copyto(values, first, where=nans)
    return values


def _full_extreme(name: str, np_fn):
    def kernel(a):
        if a.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        if a.dtype.kind == "c":
            raise unsupported(f"{name}_all", a.dtype)
        return _torch_full_extreme_nan(np.asarray(np_fn(a)), a)

    def vjp(ctx, g):
        x, result = ctx.saved_tensors
        return _full_evenly_distribute(g, x, result)

    return defop(f"{name}(Tensor self) -> Tensor", kernel, vjp=vjp, saves=("self", "result"),
                 node_name=f"{name.capitalize()}Backward1", jvp=evenly_read_jvp)


_max_full = _full_extreme("max", np.max)
_min_full = _full_extreme("min", np.min)


def _along(a: np.ndarray, dim: int):
    """(array with at least one dim, wrapped axis): 0-d tensors reduce over dim 0 or -1 as a 1-element dim."""
    d = wrap_dim(dim, a.ndim)
    return (a.reshape(1) if a.ndim == 0 else a), d


def _finish_along(arrays: tuple, ndim: int, d: int, keepdim: bool) -> tuple:
    if ndim == 0:
        return tuple(x.reshape(()) for x in arrays)
    if not keepdim:
        return tuple(np.squeeze(x, axis=d) for x in arrays)
    return arrays


def _check_nonempty(name: str, x: np.ndarray, d: int) -> None:
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _dim_extreme(name: str, arg_fn):
    def kernel(a, dim, keepdim=False):
        x, d = _along(a, dim)
        _check_nonempty(name, x, d)
        if a.dtype.kind == "c":
            raise RuntimeError(f"{name}(): does not support complex input")
        idx = arg_fn(x, axis=d, keepdims=True)
        vals = np.take_along_axis(x, idx, d)
        return _finish_along((vals, idx.astype(np.int64)), a.ndim, d, keepdim)

    def vjp(ctx, g, _gi):
        (indices,) = ctx.saved_tensors
        dim, keepdim = ctx.attrs
        shape = ctx.input_shapes[0]
        return _value_selecting_backward(g, indices, shape, dim, keepdim)

    return defop(f"{name}.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                 kernel, vjp=vjp, saves=("result1",), attrs=("dim", "keepdim"),
                 node_name=f"{name.capitalize()}Backward0", meta=("self_sym_sizes",))


def _value_selecting_backward(g: Tensor, indices: Tensor, shape: tuple, dim: int, keepdim: bool) -> Tensor:
    if not shape:
        return g
    d = wrap_dim(dim, len(shape))
    index = restore_dims(indices, shape, d, keepdim)
    return scatter_into(shape, d, index, restore_dims(g, shape, d, keepdim))


_max_dim = _dim_extreme("max", np.argmax)
_min_dim = _dim_extreme("min", np.argmin)


def _extreme(binary: str, full, along_dim):
    """``max``/``min``: the whole tensor's extreme, (values, indices) along ``dim``, or the elementwise extreme
    with a tensor ``other``. ``keepdim`` defaults to None, which tells "not given" apart: a tensor in ``dim``'s
    place takes no ``keepdim`` (the argument guard then refuses the call in the parser's words)."""

    def extreme(input: Tensor, dim=None, keepdim: bool | None = None, *, other=None, out=None):
        extra = {} if out is None else {"out": out}
        if isinstance(dim, Tensor) or other is not None:
            if keepdim is not None or (other is not None and dim is not None):
                raise TypeError(f"{binary}: a tensor to compare with takes no dim or keepdim")
            op = REGISTRY.get(binary)
            if op is None:
                raise NotImplementedError(f"torch.{binary} is not available yet")
            return op(input, other if other is not None else dim, **extra)
        if dim is None:
            if keepdim is not None:
                raise TypeError(f"{binary}: keepdim without dim")
            return full(input, **extra)
        return along_dim(input, dim, bool(keepdim), **extra)

    return extreme


max = _extreme("maximum", _max_full, _max_dim)
max.__name__ = max.__qualname__ = "max"
max.__doc__ = "``max(input)``, ``max(input, dim, keepdim)`` -> (values, indices), or ``max(input, other)``."
min = _extreme("minimum", _min_full, _min_dim)
min.__name__ = min.__qualname__ = "min"
min.__doc__ = "``min(input)``, ``min(input, dim, keepdim)`` -> (values, indices), or ``min(input, other)``."


def _declare_extreme_overloads(name: str, binary: str, full, along_dim, indices_out: str) -> None:
    """ATen's other overloads of max/min, in torch's order: ``other`` (the elementwise ``binary``) first, then
    the ``out=`` ones; without them a packet call ``aten.max(x, y)`` with a 0-d ``y`` took it for ``dim``."""

    def elementwise(*args, **kwargs):  # (looked up on call: maximum/minimum are declared by a later module)
        return REGISTRY[binary](*args, **kwargs)

    defdecomposition(f"{name}.other(Tensor self, Tensor other) -> Tensor", elementwise, before="default")
    defdecomposition(f"{name}.dim_{name}(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) {name}, "
                     f"Tensor(b!) {indices_out}) -> (Tensor(a!) values, Tensor(b!) indices)",
                     lambda self, dim, keepdim, values, indices: along_dim(self, dim, keepdim, out=(values, indices)))
    defdecomposition(f"{name}.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
                     lambda self, out: full(self, out=out))
    defdecomposition(f"{name}.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
                     lambda self, other, out: elementwise(self, other, out=out))


_declare_extreme_overloads("max", "maximum", _max_full, _max_dim, "max_values")
_declare_extreme_overloads("min", "minimum", _min_full, _min_dim, "min_indices")


def _check_reduced_dims_nonempty(name: str, shape: tuple, dim) -> None:
    """PyTorch's check that an empty tensor's reduction names its dims, none of them empty: each dim as given,
    wrapped one at a time (before repeated dims are looked for), its message naming the dim as given."""
    dims = () if dim is None else dim if isinstance(dim, (list, tuple)) else (dim,)
    if not dims:  # (a full reduction of an empty tensor: no dim to name)
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                           "the reduction dim with the 'dim' argument.")
    for d in dims:
        if shape[wrap_dim(d, len(shape))] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _amax_kernel_for(name: str, np_fn):
    def kernel(a, dim=(), keepdim=False):
        if a.size == 0:
            _check_reduced_dims_nonempty(name, a.shape, dim)
        axes = _dims_arg(dim, a.ndim)
        if a.dtype.kind == "c" and a.size:  # (an empty result runs no kernel, so nothing refuses the dtype)
            raise unsupported(f"{name[1:]}_values_cpu", a.dtype)
        return _default_nans(np.asarray(np_fn(a, axis=axes, keepdims=keepdim)))

    def vjp(ctx, g):
        x, result = ctx.saved_tensors
        dim, keepdim = ctx.attrs
        shape = ctx.input_shapes[0]
        dims = _axes(dim, len(shape))
        value = _reshaped_back(result, dim, keepdim)
        return _evenly_distribute(_reshaped_back(g, dim, keepdim), x, value, list(dims), False)

    return kernel, vjp


def _amaxamin_jvp(args, outs, tangents):
    """PyTorch's amaxamin_jvp: where(self == result, self_t, 0.).sum(dim, keepdim) / (self == result).sum(dim,
    keepdim), the tangent averaged over the extreme's ties."""
    from .pointwise import div, eq, where

    x, dim, keepdim = args[0], args[1], args[2]
    mask = eq(x, restore_dims(outs[0], tuple(x.shape), dim, keepdim))
    return div(sum(where(mask, tangents[0], 0.0), dim, keepdim), sum(mask, dim, keepdim))


# (complex_grad: an empty complex result, which no kernel refuses, is refused by autograd as PyTorch's is)
amax = defop("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
             *_amax_kernel_for("amax", np.max), saves=("self", "result"), attrs=("dim", "keepdim"), complex_grad=False,
             jvp=_amaxamin_jvp)
amin = defop("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
             *_amax_kernel_for("amin", np.min), saves=("self", "result"), attrs=("dim", "keepdim"), complex_grad=False,
             jvp=_amaxamin_jvp)


def _aminmax_kernel(a, dim=None, keepdim=False):
    if dim is None:
        if a.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                               "has no identity.")
        if a.dtype.kind == "c":
            raise unsupported("aminmax_cpu", a.dtype)
        lo, hi = (_torch_full_extreme_nan(np.asarray(v), a) for v in (np.min(a), np.max(a)))
        if keepdim:
            shape = (1,) * a.ndim
            return np.asarray(lo).reshape(shape), np.asarray(hi).reshape(shape)
        return np.asarray(lo), np.asarray(hi)
    x, d = _along(a, dim)
    if x.shape[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    if a.dtype.kind == "c":  # (PyTorch's kernel copies a 0-d tensor itself, with words of its own for complex)
        if a.ndim == 0:
            raise RuntimeError(f"aminmax not implemented for {_type_name(a.dtype)}")
        raise unsupported("aminmax_cpu", a.dtype)
    lo, hi = (_first_nans(v, x, d) for v in (np.min(x, axis=d, keepdims=True), np.max(x, axis=d, keepdims=True)))
    return _finish_along((lo, hi), a.ndim, d, keepdim)


def _aminmax_vjp(ctx, g_min, g_max):
    from .pointwise import add

    x, lo, hi = ctx.saved_tensors
    dim, keepdim = ctx.attrs
    shape = ctx.input_shapes[0]
    dims = _axes(dim, len(shape)) if dim is not None else tuple(range(len(shape)))
    # (PyTorch's scale_grad_by_count, as amax/amin: a NaN result selects no input, its gradient is NaN)
    parts = [_evenly_distribute(restore_dims(gv, shape, dims, keepdim), x,
                                restore_dims(v, shape, dims, keepdim), list(dims), False)
             for gv, v in ((g_min, lo), (g_max, hi))]
    return add(parts[0], parts[1])


aminmax = defop("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
                _aminmax_kernel, vjp=_aminmax_vjp, saves=("self", "result0", "result1"),
                attrs=("dim", "keepdim"))


# ---- arg reductions, all / any, count_nonzero --------------------------------------------------------------


def _arg_kernel_for(name: str, np_fn):
    def kernel(a, dim=None, keepdim=False):
        if a.dtype.kind in "bc":
            raise RuntimeError(f"{name}(): does not support {'bool' if a.dtype.kind == 'b' else 'complex'} input")
        if dim is None:
            if a.size == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            idx = np.asarray(np_fn(a), dtype=np.int64)
            return idx.reshape((1,) * a.ndim) if keepdim else idx
        x, d = _along(a, dim)
        _check_nonempty(name, x, d)
        idx = np_fn(x, axis=d, keepdims=True).astype(np.int64)
        return _finish_along((idx,), a.ndim, d, keepdim)[0]

    return kernel


argmax = defop("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
               _arg_kernel_for("argmax", np.argmax), differentiable=())
argmin = defop("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
               _arg_kernel_for("argmin", np.argmin), differentiable=())


def _logical_reduce(np_fn):
    def kernel(a, dim=None, keepdim=False):
        # (``dim=()`` reduces over no dim: PyTorch's all.dims / any.dims test each element alone)
        axes = () if _no_dims(dim) else _dims_arg(dim, a.ndim)
        out = np_fn(a, axis=axes, keepdims=keepdim)
        # uint8 inputs keep their dtype (a legacy PyTorch rule); everything else gives bool.
        return np.asarray(out, dtype=np.uint8 if a.dtype == np.uint8 else np.bool_)

    def full(a):
        return kernel(a)

    return kernel, full


_all_dims_k, _all_full_k = _logical_reduce(np.all)
_any_dims_k, _any_full_k = _logical_reduce(np.any)
_all_full = defop("all(Tensor self) -> Tensor", _all_full_k, differentiable=())
_all_dims = defop("all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor", _all_dims_k,
                  differentiable=())
_any_full = defop("any(Tensor self) -> Tensor", _any_full_k, differentiable=())
_any_dims = defop("any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor", _any_dims_k,
                  differentiable=())


def all(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    extra = {} if out is None else {"out": out}
    if dim is None and not keepdim:
        return _all_full(input, **extra)
    return _all_dims(input, dim, keepdim, **extra)


def any(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    extra = {} if out is None else {"out": out}
    if dim is None and not keepdim:
        return _any_full(input, **extra)
    return _any_dims(input, dim, keepdim, **extra)


def _count_nonzero_kernel(a, dim=None):
    return np.asarray(np.count_nonzero(a, axis=_dims_arg(dim, a.ndim)), dtype=np.int64)


count_nonzero = defop("count_nonzero(Tensor self, int[1]? dim=None) -> Tensor", _count_nonzero_kernel,
                      differentiable=())


# ---- var / std ---------------------------------------------------------------------------------------------


def _welford_mean_real(x: np.ndarray, axes, plain: np.ndarray) -> np.ndarray:
    """The mean of Welford's update (``mean += (v - mean) / k``, torch's var_mean/std_mean) where the plain mean
    ``plain`` (kept dims) is not finite. An infinity makes the next update inf - inf, so a row holding an
    infinity is NaN unless that infinity is alone and the last element (every stride is non-negative in torch,
    so the last in its memory order too), where it is the mean; NaN stays NaN. A finite row whose plain sum
    overflowed (float64 near its maximum) keeps Welford's finite mean, approached by summing ``x / n``."""
    axes = tuple(range(x.ndim)) if axes is None else axes
    no_nan = ~np.isnan(x).any(axis=axes, keepdims=True)
    n_inf = np.sum(np.isinf(x), axis=axes, keepdims=True)
    last = x[tuple(slice(-1, None) if d in axes else slice(None) for d in range(x.ndim))]
    lone_last_inf = no_nan & (n_inf == 1) & np.isinf(last)
    with np.errstate(invalid="ignore", over="ignore"):
        finite_mean = np.sum(x / (x.size // plain.size), axis=axes, keepdims=True)
        welford = np.where(no_nan & (n_inf == 0), finite_mean, np.where(lone_last_inf, last, np.nan))
    return np.where(np.isfinite(plain), plain, welford)


def _welford_mean(x: np.ndarray, axes, plain: np.ndarray) -> np.ndarray:
    """``_welford_mean_real``; torch takes a complex tensor's real and imaginary parts separately."""
    if x.dtype.kind != "c":
        return _welford_mean_real(x, axes, plain)
    mean = np.empty_like(plain)
    mean.real = _welford_mean_real(x.real, axes, plain.real)
    mean.imag = _welford_mean_real(x.imag, axes, plain.imag)
    return mean


def _sum_squares(x: np.ndarray, axes) -> np.ndarray:
    return np.sum(np.square(x), axis=axes, keepdims=True)


def _squared_deviation(dev: np.ndarray, axes, dof) -> np.ndarray:
    """``sum(|dev|^2) / dof`` (kept dims), squaring a real ``dev`` in place (a fresh array). With ``dof <= 0``
    torch's complex variance, var(real) + var(imag), divides each part's sum by 0 apart: a constant part gives
    0 / 0, NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if dev.dtype.kind == "c":
            if dof <= 0:
                return _sum_squares(dev.real, axes) / 0.0 + _sum_squares(dev.imag, axes) / 0.0
            return _sum_squares(np.abs(dev), axes) / dof
        # (in place: one temporary the size of the input. A second and third made a large input's working set
        # outgrow what glibc's malloc keeps, so every call faulted its pages in afresh: 12x slower at 256 x 1024)
        return np.sum(np.square(dev, out=dev), axis=axes, keepdims=True) / builtins.max(dof, 0)


def _var_parts(a, dim, correction, name: str, welford: bool = False):
    if a.dtype.kind not in "fc":
        what = "std and var" if name in ("std", "var") else name
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    axes = _dims_arg(dim, a.ndim, one_by_one=True)  # (var/std mark their dims one by one)
    corr = 1 if correction is None else correction
    n = _count(a.shape, dim)
    # (torch's reduction factor is numel(input) / numel(output), 0 for an empty input even where the reduced
    # dims are not empty)
    if (n if a.size else 0) - corr <= 0:
        from .._warnings import warn_at_caller

        warn_at_caller(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                       "reduction factor (input numel divided by output numel).", UserWarning)
    # PyTorch accumulates float32/float16 in double: squares of large values do not overflow
    x = a.astype(np.float64) if a.dtype.kind == "f" and a.dtype.itemsize < 8 else a
    if x.size:
        mean = np.mean(x, axis=axes, keepdims=True)
        if welford and not np.isfinite(mean).all():  # (var/std take the plain two-pass mean, as torch's)
            mean = _welford_mean(x, axes, mean)
    else:
        mean = np.full(keepdim_shape(x.shape, dim), np.nan, x.dtype)
    if not n:  # (PyTorch fills a variance over no element with NaN, a positive one, not 0 / 0's negative NaN)
        return np.full(mean.shape, np.nan, _real_dtype(x)), mean.astype(a.dtype, copy=False)
    # (var still in the accumulation dtype: std's root first)
    dev = np.subtract(x, mean, out=x) if x is not a else np.asarray(x - mean)  # (x: a's float64 copy, or a)
    return _squared_deviation(dev, axes, n - corr), mean.astype(a.dtype, copy=False)


def _real_dtype(a: np.ndarray) -> np.dtype:
    return a.real.dtype if a.dtype.kind == "c" else a.dtype


def _squeeze_dims(x: np.ndarray, ndim: int, dim, keepdim: bool) -> np.ndarray:
    """A keepdims=True result in the requested form."""
    if ndim == 0:
        return x.reshape(())
    return x if keepdim else np.squeeze(x, axis=_axes(dim, ndim))


def _var_kernel(a, dim=None, correction=None, keepdim=False):
    var, _ = _var_parts(a, dim, correction, "var")
    return _squeeze_dims(var.astype(_real_dtype(a), copy=False), a.ndim, dim, keepdim)


def _std_kernel(a, dim=None, correction=None, keepdim=False):
    var, _ = _var_parts(a, dim, correction, "std")
    return np.sqrt(_squeeze_dims(var, a.ndim, dim, keepdim)).astype(_real_dtype(a), copy=False)


def _var_mean_kernel(a, dim=None, correction=None, keepdim=False, name: str = "var_mean", root: bool = False):
    var, mean = _var_parts(a, dim, correction, name, welford=True)
    spread = np.sqrt(var) if root else var
    return (np.asarray(_squeeze_dims(spread, a.ndim, dim, keepdim).astype(_real_dtype(a), copy=False)),
            _squeeze_dims(mean, a.ndim, dim, keepdim))


def _std_mean_kernel(a, dim=None, correction=None, keepdim=False):
    return _var_mean_kernel(a, dim, correction, keepdim, "std_mean", root=True)


def _var_backward(g: Tensor, x: Tensor, dim, correction, keepdim: bool) -> Tensor:
    """d var / dx = 2 (x - mean) / (N - correction), composed as PyTorch's var_backward: ``(2 / dof) * g``
    (a C++ Scalar: MulBackward1) times the centred input; a full reduction (or a 0-d input) uses the full mean,
    a reduction over ``dim`` brings ``g`` back with one unsqueeze per dim (only for inputs of 2+ dims: a 0-d
    gradient broadcasts) and the mean over ``dim`` kept."""
    from .pointwise import eq, mul, sub, where

    shape = tuple(x.shape)
    corr = 1 if correction is None else correction
    no_dims = _no_dims(dim)
    if not shape or (_dims_arg(dim, len(shape)) is None and not no_dims):
        dof = math.prod(shape) - corr
        if dof <= 0:  # 2 / 0: infinite, or NaN where x equals its mean (inf * 0), as PyTorch
            return mul(g, where(eq(x, mean(x)), math.nan, math.inf))
        return mul(mul(g, 2.0 / dof), sub(x, mean(x)))
    # ``dim=()``: PyTorch's formula counts the elements over no dim (1) but takes the mean over all of them
    if not keepdim and len(shape) > 1 and not no_dims:
        g = restore_dims(g, shape, dim, keepdim)
    dof = (1 if no_dims else _count(shape, dim)) - corr
    scale = 2.0 / dof if dof else math.inf  # (PyTorch's SymFloat division: 2 / 0 is inf, 2 / -1 is -2)
    return mul(mul(g, scale), sub(x, mean(x, dim, True)))


def _std_to_var_grad(g: Tensor, std: Tensor) -> Tensor:
    """PyTorch's std_backward: ``(g / (std * 2)).masked_fill_(std == 0, 0)``, then var's backward."""
    from .pointwise import div, eq, mul

    return zero_fill(eq(std, 0), div(g, mul(std, 2.0)))


def _var_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    dim, correction, keepdim = ctx.attrs
    return _var_backward(g, x, dim, correction, keepdim)


def _std_vjp(ctx, g):
    x, result = ctx.saved_tensors
    dim, correction, keepdim = ctx.attrs
    return _var_backward(_std_to_var_grad(g, result), x, dim, correction, keepdim)


def _mean_part(g_mean: Tensor, shape: tuple, dim, keepdim: bool) -> Tensor:
    from .pointwise import div

    return div(_expand_grad(g_mean, shape, dim, keepdim), builtins.max(_count(shape, dim), 1))


def _var_tangent(x: Tensor, t: Tensor, dim, correction, keepdim: bool) -> Tensor:
    """PyTorch's var tangent: ``var_backward(t.conj(), x, dim, correction, keepdim=True)`` summed over ``dim``
    (every dim for none or ``()``), its real part: the backward's degenerate cases (no element, ``dim=()``,
    ``correction`` at or beyond the count) included."""
    from .complex_ops import real
    from .unary import conj

    spread = _var_backward(conj(t), x, dim, correction, True)
    return real(sum(spread, () if dim is None else dim, keepdim))


def _var_jvp(args, outs, tangents):
    x, dim, correction, keepdim = args
    (t,) = tangents
    return None if t is None else _var_tangent(x, t, dim, correction, keepdim)


def _std_jvp(args, outs, tangents):
    """PyTorch's std tangent: var's over ``2 * std``, 0 where std is 0 (a constant input: without the mask,
    0 / 0)."""
    from .pointwise import div, eq, mul

    x, dim, correction, keepdim = args
    (t,) = tangents
    if t is None:
        return None
    std = outs[0]
    return zero_fill(eq(std, 0), div(_var_tangent(x, t, dim, correction, keepdim), mul(std, 2.0)))


def _var_mean_jvp(args, outs, tangents):
    """var's tangent and the mean's (PyTorch's ``mean(t, dim or [], keepdim)``: ``()`` means every dim)."""
    x, dim, correction, keepdim = args
    (t,) = tangents
    if t is None:
        return None, None
    return _var_tangent(x, t, dim, correction, keepdim), mean(t, () if dim is None else dim, keepdim)


def _std_mean_jvp(args, outs, tangents):
    """std's tangent (masked where std is 0, as PyTorch's std_mean formula) and mean's."""
    x, dim, _, keepdim = args
    (t,) = tangents
    if t is None:
        return None, None
    return _std_jvp(args, outs, tangents), mean(t, () if dim is None else dim, keepdim)


def _with_mean_grad(g_self: Tensor | None, g_mean: Tensor | None, ctx) -> Tensor | None:
    """PyTorch's var_mean/std_mean backward adds each output's part only where its gradient is defined (zeros
    for an unused var would give 0 * inf = NaN at infinities, and an extra node under create_graph)."""
    from .pointwise import add

    if g_mean is None:
        return g_self
    dim, _, keepdim = ctx.attrs
    part = _mean_part(g_mean, ctx.input_shapes[0], dim, keepdim)
    return part if g_self is None else add(g_self, part)


def _var_mean_vjp(ctx, g_var, g_mean):
    (x,) = ctx.saved_tensors
    dim, correction, keepdim = ctx.attrs
    g_self = None if g_var is None else _var_backward(g_var, x, dim, correction, keepdim)
    return _with_mean_grad(g_self, g_mean, ctx)


def _std_mean_vjp(ctx, g_std, g_mean):
    x, std = ctx.saved_tensors
    dim, correction, keepdim = ctx.attrs
    g_self = None if g_std is None else _var_backward(_std_to_var_grad(g_std, std), x, dim, correction, keepdim)
    return _with_mean_grad(g_self, g_mean, ctx)


_VAR_ARGS = "(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)"
_var = defop(f"var.correction{_VAR_ARGS} -> Tensor", _var_kernel, vjp=_var_vjp, saves=("self",),
             attrs=("dim", "correction", "keepdim"), jvp=_var_jvp)
_std = defop(f"std.correction{_VAR_ARGS} -> Tensor", _std_kernel, vjp=_std_vjp, saves=("self", "result"),
             attrs=("dim", "correction", "keepdim"), jvp=_std_jvp)
_var_mean = defop(f"var_mean.correction{_VAR_ARGS} -> (Tensor, Tensor)", _var_mean_kernel, vjp=_var_mean_vjp,
                  saves=("self",), attrs=("dim", "correction", "keepdim"), jvp=_var_mean_jvp)
_std_mean = defop(f"std_mean.correction{_VAR_ARGS} -> (Tensor, Tensor)", _std_mean_kernel, vjp=_std_mean_vjp,
                  saves=("self", "result0"), attrs=("dim", "correction", "keepdim"), jvp=_std_mean_jvp)
_var_mean.materialize_grads = _std_mean.materialize_grads = False  # (their rules skip an undefined gradient)


def _correction(dim, unbiased, correction):
    """PyTorch's overloads: ``var(x, unbiased)``, ``var(x, dim, unbiased, keepdim)``, ``correction=``."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError("Cannot specify both unbiased and correction")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


_NO_DIM = object()


def _var_family(op):
    def fn(input: Tensor, dim=_NO_DIM, unbiased=None, keepdim: bool = False, *, correction=None, out=None):
        # ``var(x)`` alone is PyTorch's var(self, unbiased=True) overload, whose node keeps correction=None
        bare = dim is _NO_DIM and unbiased is None and correction is None
        dim, correction = _correction(None if dim is _NO_DIM else dim, unbiased, correction)
        extra = {} if out is None else {"out": out}
        return op(input, dim, correction=None if bare else correction, keepdim=keepdim, **extra)

    fn.__name__ = op.name
    return fn


var = _var_family(_var)
std = _var_family(_std)
var_mean = _var_family(_var_mean)
std_mean = _var_family(_std_mean)


def _declare_unbiased_overloads(op) -> None:
    """ATen's other overloads of var/std/var_mean/std_mean, composites that call ``.correction`` with
    ``correction=unbiased`` (0 or 1), in torch's order: ``default``, ``dim`` before it, the ``out=`` ones after
    (var_mean and std_mean have no ``.out``). The ``names_*`` ones take named dims, which tracegrad has not."""
    name, pair = op.name, op.n_returns == 2
    returns = "(Tensor, Tensor)" if pair else "Tensor"
    outs = "Tensor(a!) out0, Tensor(b!) out1" if pair else "Tensor(a!) out"
    out_returns = "(Tensor(a!), Tensor(b!))" if pair else "Tensor(a!)"
    # (torch reads a None for ``bool unbiased`` as false)
    defdecomposition(f"{name}(Tensor self, bool unbiased=True) -> {returns}",
                     lambda self, unbiased: op(self, correction=int(bool(unbiased))), before="correction")
    defdecomposition(f"{name}.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> {returns}",
                     lambda self, dim, unbiased, keepdim: op(self, dim, correction=int(bool(unbiased)),
                                                             keepdim=keepdim), before="correction")
    defdecomposition(f"{name}.correction_out{_VAR_ARGS[:-1]}, {outs}) -> {out_returns}",
                     lambda self, dim, correction, keepdim, *outs: _correction_out(op, self, dim, correction,
                                                                                   keepdim, outs))
    if not pair:
        defdecomposition(f"{name}.out(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False, *, "
                         f"Tensor(a!) out) -> Tensor(a!)",
                         lambda self, dim, unbiased, keepdim, out: op(self, dim, correction=int(bool(unbiased)),
                                                                      keepdim=keepdim, out=out))


def _correction_out(op, x: Tensor, dim, correction, keepdim: bool, outs: tuple):
    """``<op>.correction_out``: ``op`` written into ``outs``."""
    if len(outs) == 1:
        return op(x, dim, correction=correction, keepdim=keepdim, out=outs[0])
    # (var_mean/std_mean take no out= in Python: NO_OUT_OVERLOAD refuses it there, so the write is asked for here)
    from .variants import write_out

    bound = parsed_numbers(op.bind((x, dim), {"correction": correction, "keepdim": keepdim}), op.number_idx,
                           op.float_idx)
    return write_out(op, bound, outs)


for _variance in (_var, _std, _var_mean, _std_mean):
    _declare_unbiased_overloads(_variance)


# ---- norm / logsumexp --------------------------------------------------------------------------------------


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, out=None, dtype=None) -> Tensor:
    """``torch.norm``: a vector norm, or the matrix norm named by a string ``p`` ('fro', 'nuc'), through the public
    functions torch's Python calls (which refuse a ``dim`` of ``True``, made ``[True]`` here, in their words)."""
    from ..linalg import matrix_norm, vector_norm

    if not isinstance(input, Tensor):
        input.layout  # noqa: B018 - torch's Python reads it first: what a non-tensor raises
    extra = {} if out is None else {"out": out}
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, **extra)
        if dim is None:
            dim = list(range(input.ndim))
        return matrix_norm(input, p, dim, keepdim, dtype=dtype, **extra)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype, **extra)


def _norm_method(self: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    return norm(self, p, dim, keepdim, dtype=dtype)


_norm_method.__qualname__ = "Tensor.norm"  # (torch writes the method in Python: its errors name it so)


def _logsumexp_kernel(a, dim, keepdim=False):
    a = to_floating(a)
    axes = _dims_arg(dim, a.ndim)
    if a.size == 0:
        return np.asarray(np.log(np.sum(np.exp(a), axis=axes, keepdims=keepdim)))
    if _no_dims(dim) and not keepdim and a.ndim:
        # PyTorch adds the shift, reduced over all dims but kept as size 1 (none is squeezed for ``()``), in place
        # into the fully reduced 0-d sum
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * a.ndim}")
    # the shift is the largest real part (ATen's logsumexp): for complex input the imaginary part of the result
    # then stays the principal value of log(sum(exp(a)))
    m = np.max(a.real if a.dtype.kind == "c" else a, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)  # all -inf (or inf) slices: keep them out of the shift
    if a.dtype == np.float32:
        return _squeeze_dims(_logsumexp_float32(a, m, axes), a.ndim, dim, keepdim)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axes, keepdims=True)) + m
    return _squeeze_dims(out.astype(a.dtype, copy=False), a.ndim, dim, keepdim)


def _logsumexp_float32(a: np.ndarray, shift: np.ndarray, axes) -> np.ndarray:
    """ATen's float32 logsumexp: ``sum(exp(a - max)).log() + max`` through its sum kernel's order of additions
    (aten_sum). Its exp and log are MKL's, within half an ulp or so: the correctly rounded values stand in
    for them (they agree on some 99% of elements; the sum mostly absorbs the rest)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.exp(np.subtract(a, shift, dtype=np.float32), dtype=np.float64).astype(np.float32)
        total = aten_sum.sum_as_aten(e, axes, True)
        return np.log(total, dtype=np.float64).astype(np.float32) + shift


def _logsumexp_vjp(ctx, g):
    from .pointwise import exp, mul, sub
    from .unary import conj

    x, result = ctx.saved_tensors
    dim, keepdim = ctx.attrs
    shape = tuple(x.shape)
    # PyTorch: grad * (self - result).exp().conj()
    return mul(restore_dims(g, shape, dim, keepdim), conj(exp(sub(x, restore_dims(result, shape, dim, keepdim)))))


def logsumexp_jvp(self_p: Tensor, self_t: Tensor, dim, keepdim: bool) -> Tensor:
    """PyTorch's ``logsumexp_jvp`` (FunctionsManual), which softmax's and log_softmax's formulas share, with its
    operators (a max shift, in-place ``*=`` and ``/=``): the tangent's graph and bits are torch's."""
    from .pointwise import div_, exp, mul_, sub
    from .reductions import sum as sum_dims

    if self_p._data.size > 0:
        shift_of = self_p
        if self_p._data.dtype.kind == "c":  # (the max of the real parts, as torch's)
            from .complex_ops import real

            shift_of = real(self_p)
        self_p_exp = exp(sub(self_p, amax(shift_of, dim, True)))
    else:
        self_p_exp = exp(self_p)
    sumexp_p = sum_dims(self_p_exp, dim, keepdim)
    mul_(self_p_exp, self_t)
    return div_(sum_dims(self_p_exp, dim, keepdim), sumexp_p)


def _logsumexp_jvp(args, outs, tangents):
    return logsumexp_jvp(args[0], tangents[0], args[1], args[2])  # (derivatives.yaml's result formula)


logsumexp = defop("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", _logsumexp_kernel,
                  vjp=_logsumexp_vjp, jvp=_logsumexp_jvp, saves=("self", "result"), attrs=("dim", "keepdim"))


# ---- cumulative ops ----------------------------------------------------------------------------------------


def _scan_dtype(a, dtype):
    dt = _np_dtype(dtype)
    if dt is None:
        dt = np.dtype(np.int64) if a.dtype.kind in "bui" else a.dtype
    return dt


def _scan_accumulator(dt: np.dtype) -> np.dtype:
    """PyTorch's CPU scans carry their running value in the CPU accumulate type: double for float, float for half
    (and the complex counterparts), rounding each output from it. (A bfloat16 operand's float32 copy stays in
    float64, as before: its outputs are rounded to bfloat16 afterwards.)"""
    if dt.kind not in "fc":
        return dt
    return _dtypes.cpu_accumulate_type(_dtypes.from_numpy_dtype(dt)).np


def _scan(step: np.ufunc, a, dim, dtype, kernel_name: str):
    dt = _scan_dtype(a, dtype)
    x, d = _along(a, dim)
    if dt == np.bool_ and a.ndim and a.size:  # (ATen's scans dispatch over every type but Bool; a 0-d or empty
        raise unsupported(kernel_name, dt)    # input is copied or left without dispatch)
    acc = _scan_accumulator(dt)
    if x.dtype != dt:  # (the input is converted to the result's dtype first)
        x = x.astype(dt)
    return running(step, x, d, acc).astype(dt, copy=False).reshape(a.shape)


def _cumsum_kernel(a, dim, dtype=None):
    return _scan(np.add, a, dim, dtype, "cumsum_out_cpu")


def _cumprod_kernel(a, dim, dtype=None):
    return _scan(np.multiply, a, dim, dtype, "cumprod_out_cpu")


def reversed_cumsum(t: Tensor, dim: int) -> Tensor:
    return flip(cumsum(flip(t, dim), dim), dim)


def _grad_as_input(ctx, g):
    """The gradient in the input's dtype: PyTorch's scans convert it first (``grad.to(self.scalar_type())``),
    so a float64 input scanned with ``dtype=float32`` gets its gradient summed in double."""
    meta = ctx._in_meta[0]
    if meta is None or g._data.dtype == meta[1]:
        return g
    from ..backend.dtypes import from_numpy_dtype

    return g.to(from_numpy_dtype(meta[1]))


def _cumsum_vjp(ctx, g):
    (dim, _dtype) = ctx.attrs
    g = _grad_as_input(ctx, g)
    if g.ndim == 0:
        return g
    return reversed_cumsum(g, wrap_dim(dim, g.ndim))


def _cumprod_vjp(ctx, g):
    from .pointwise import div, eq, mul
    from .unary import conj

    x, result = ctx.saved_tensors
    (dim, _dtype) = ctx.attrs
    g = _grad_as_input(ctx, g)
    # PyTorch's cumprod_backward hands a gradient along a dim of one element on as it is, before any zero test
    # (the zero-free rule's result * g / x can be an ulp off g)
    if x.numel() <= 1:
        return g
    d = wrap_dim(dim, x.ndim)
    if x.shape[d] == 1:
        return g
    # PyTorch's cumprod_backward works on input.conj() and output.conj() throughout (complex support; the
    # zero tests are unaffected, and real tensors are returned as they are)
    x, result = conj(x), conj(result)
    if not _any_true(eq(x, 0)):
        return div(reversed_cumsum(mul(result, g), d), x)  # PyTorch's operand order
    if not is_grad_enabled():
        return _cumprod_grad_with_zeros_first_order(g, x, result, d)
    return _cumprod_grad_with_zeros(g, x, d)


def _cumprod_jvp(args, outs, tangents):
    """PyTorch's cumprod_jvp: cumsum(t / x) * result, and from the first zero of a slice on, the cumulative
    product of the input with that zero replaced by its tangent (exact where t / x would be 0 / 0)."""
    from .pointwise import div, eq, logical_and, mul, ne, where

    x, dim, result, t = args[0], args[1], outs[0], tangents[0]
    gradient = mul(cumsum(div(t, x), dim), result)
    zeros = eq(x, 0)
    if x.ndim == 0:
        return where(zeros, t, gradient)
    first_zero = logical_and(zeros, eq(cumsum(zeros, dim), 1))
    after_zero = cumprod(where(first_zero, t, x), dim)
    return where(ne(cumsum(first_zero, dim), 0), after_zero, gradient)


def _cumprod_grad_with_zeros_first_order(g: Tensor, x: Tensor, result: Tensor, d: int) -> Tensor:
    """PyTorch's O(n) gradient of cumprod with zeros, used when no graph is built. Along ``d`` only the
    elements before the first zero z1 and z1 itself have a nonzero gradient: before z1 the zero-free rule;
    at z1 the products of the elements between z1 and the next zero, times the output just before z1.
    Everything else is an exact zero (the O(n^2) formula would give 0 * inf = NaN there)."""
    from .creation import zeros_like
    from .pointwise import div, eq, logical_and, logical_not, mul, ne, sub, where
    from .shape_extra import gather, masked_fill, scatter
    from .unary import clamp_min

    w = mul(result, g)
    zeros_seen = cumsum(eq(x, 0), d)
    before = eq(zeros_seen, 0)
    grad = where(before, div(reversed_cumsum(masked_fill(w, logical_not(before), 0.0), d), x), 0.0)
    between = eq(zeros_seen, 1)
    first = max(between, d, keepdim=True).indices  # index of z1 (0 where a slice has no zero)
    at_first = logical_and(scatter(zeros_like(between), d, first, value=True), between)
    between = logical_and(between, logical_not(at_first))
    products = cumprod(masked_fill(x, logical_not(between), 1.0), d)
    summed = sum(mul(products, masked_fill(g, ne(zeros_seen, 1), 0.0)), d, keepdim=True)
    previous = masked_fill(gather(result, d, clamp_min(sub(first, 1), 0)), eq(first, 0), 1.0)
    return where(at_first, mul(summed, previous), grad)


def _cumprod_grad_with_zeros(g: Tensor, x: Tensor, d: int) -> Tensor:
    """PyTorch's O(n^2) gradient of cumprod with zeros, differentiable again, op for op (so the graph is its:
    slice k of a zero tensor written by ``copy_``, a CopySlices node): dL/dx_k = sum_{j>=k} g_j prod_{l<=j, l!=k}
    x_l, where the omitted product is prod(x[:k]) times cumprod(x[k+1:]) (a one first)."""
    from .creation import copy_
    from .pointwise import mul
    from .shape import cat
    from .views import expand, narrow, select

    n = x.shape[d]
    grad_input = _const(np.zeros(tuple(x.shape), dtype=g._data.dtype))
    ones_size = list(x.shape)
    ones_size[d] = 1
    first = expand(_const(np.ones(1, dtype=g._data.dtype)), ones_size)
    for k in range(n):
        if k == 0:
            omitted = cat([first, cumprod(narrow(x, d, 1, n - 1), d)], d)
        else:
            until_k = prod(narrow(x, d, 0, k), d, True)
            omitted = until_k
            if k < n - 1:
                from_k_plus_1 = cumprod(narrow(x, d, k + 1, n - k - 1), d)
                omitted = cat([until_k, mul(expand(until_k, from_k_plus_1.shape), from_k_plus_1)], d)
        copy_(select(grad_input, d, k), sum(mul(narrow(g, d, k, n - k), omitted), d))
    return grad_input


_SCAN_SIG = "(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"
cumsum = defop(f"cumsum{_SCAN_SIG}", _cumsum_kernel, vjp=_cumsum_vjp, attrs=("dim", "dtype"), hidden=("dtype",),
               jvp=lambda args, outs, tangents: cumsum(tangents[0], args[1], dtype=args[2]))  # (auto_linear)
cumprod = defop(f"cumprod{_SCAN_SIG}", _cumprod_kernel, vjp=_cumprod_vjp, saves=("self", "result"),
                attrs=("dim", "dtype"), hidden=("dtype",), jvp=_cumprod_jvp)


def _scan_inplace(kernel):
    def inplace(a, dim, dtype=None):
        from .pointwise import write_into

        dt = _np_dtype(dtype)
        if dt is not None and dt != a.dtype:
            have, want = cpp_type_name(a.dtype), cpp_type_name(dt)  # (caffe2's names: "long int")
            raise RuntimeError(f"Bad in-place call: input tensor dtype {have} and output tensor dtype {want} "
                               "should match")
        write_into(a, kernel(a, dim, _type_of(a)))
        return a

    return inplace


def _type_of(a):
    from ..backend.dtypes import from_numpy_dtype

    return from_numpy_dtype(a.dtype)


_INPLACE_SIG = "(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)"
cumsum_ = defop(f"cumsum_{_INPLACE_SIG}", _scan_inplace(_cumsum_kernel), vjp=_cumsum_vjp,
                attrs=("dim", "dtype"), hidden=("dtype",), node_name="CumsumBackward0")
cumprod_ = defop(f"cumprod_{_INPLACE_SIG}", _scan_inplace(_cumprod_kernel), vjp=_cumprod_vjp,
                 saves=("self", "result"), attrs=("dim", "dtype"), hidden=("dtype",), node_name="CumprodBackward0",
                 jvp=_cumprod_jvp)


# ---- sorting and order statistics --------------------------------------------------------------------------


def sort_indices(x: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """Stable argsort along ``d``; NaN counts as the largest value, ties keep their input order."""
    if not descending:
        return np.argsort(x, axis=d, kind="stable")
    n = x.shape[d]
    rev = np.argsort(np.flip(x, d), axis=d, kind="stable")
    return (n - 1) - np.flip(rev, d)


def _selection(rows: np.ndarray, k: int, largest: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row of ``rows`` in ``sort_indices``'s order (NaN counts as the largest value): which values come
    before the k-th, which tie with it, and how many of those ties (the first ones by index) complete ``k``.
    One partition, no sort."""
    n = rows.shape[1]
    kth = np.partition(rows, n - k if largest else k - 1, axis=1)[:, [n - k if largest else k - 1]]
    before = rows > kth if largest else rows < kth
    ties = rows == kth
    if rows.dtype.kind in "fc":  # (comparisons with NaN are false: NaN sorts after every number)
        nan, kth_nan = np.isnan(rows), np.isnan(kth)
        before |= (nan & ~kth_nan) if largest else (~nan & kth_nan)
        ties |= nan & kth_nan
    return before, ties, k - before.sum(axis=1, keepdims=True)


def _first_k_indices(x: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """The indices of the first ``k`` of ``sort_indices(x, -1, largest)``, in that order: the selection, then a
    stable sort of those ``k`` alone."""
    rows = x.reshape(-1, x.shape[-1])
    before, ties, missing = _selection(rows, k, largest)
    chosen = before | (ties & (np.cumsum(ties, axis=1) <= missing))
    picked = np.nonzero(chosen)[1].reshape(-1, k)  # (row by row, in index order: exactly k per row)
    order = sort_indices(np.take_along_axis(rows, picked, 1), 1, largest)
    return np.take_along_axis(picked, order, 1).reshape(x.shape[:-1] + (k,)).astype(np.int64)


def _kth_index(x: np.ndarray, k: int) -> np.ndarray:
    """The index of ``sort_indices(x, -1, False)[..., k - 1]``: the tie that completes ``k``."""
    rows = x.reshape(-1, x.shape[-1])
    _, ties, missing = _selection(rows, k, False)
    return np.argmax(np.cumsum(ties, axis=1) == missing, axis=1).reshape(x.shape[:-1] + (1,))


def _same_values(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: do PyTorch's sorting comparators hold ``a`` and ``b`` equivalent (NaN ties with NaN)?"""
    same = a == b
    if a.dtype.kind == "f":
        same |= np.isnan(a) & np.isnan(b)
    return same


def _rows_along(x: np.ndarray, d: int) -> np.ndarray:
    """The slices along ``d`` as the rows of a 2-d array (a view where NumPy can)."""
    return np.moveaxis(x, d, -1).reshape(-1, x.shape[d])


def _unstable_sort(x: np.ndarray, d: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of ``sort(stable=False)``: libstdc++'s ``std::sort`` order, which leaves ties in an order
    of its own once a slice is longer than its insertion-sort threshold; elsewhere the stable order is the same."""
    idx = sort_indices(x, d, descending)
    vals = np.take_along_axis(x, idx, d)
    n = x.shape[d]
    if n <= 16 or x.size == 0 or x.strides[d] == 0:  # (PyTorch leaves a stride-0 dim's indices in order)
        return vals, idx
    in_order = _rows_along(vals, d)
    tied = (in_order[:, 1:] == in_order[:, :-1]).any(axis=1)
    if in_order.dtype.kind == "f":  # (sorted, a row's NaNs are together at its end: two of them tie there)
        tied |= np.isnan(in_order[:, 1 if descending else -2])
    tied = np.flatnonzero(tied)
    if not tied.size:
        return vals, idx
    rows_idx = _rows_along(idx, d).copy()
    rows_idx[tied] = stl_order.introsort_order(stl_order.order_keys(_rows_along(x, d)[tied], descending))
    idx = np.moveaxis(rows_idx.reshape(np.moveaxis(idx, d, -1).shape), -1, d)
    return np.take_along_axis(x, idx, d), idx


def _sort_kernel(a, stable=False, dim=-1, descending=False):
    x, d = _along(a, dim)
    if a.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU")  # (PyTorch's leading space)
    if stable:
        idx = sort_indices(x, d, descending)
        vals = np.take_along_axis(x, idx, d)
    else:
        vals, idx = _unstable_sort(x, d, descending)
    return vals.reshape(a.shape), idx.astype(np.int64).reshape(a.shape)


def _scatter_back_vjp(ctx, g, _gi):
    (indices,) = ctx.saved_tensors
    dim = ctx.attrs[0]
    shape = ctx.input_shapes[0]
    if not shape:
        return g
    return scatter_into(shape, dim, indices, g)


def _sort_plain_kernel(a, dim=-1, descending=False):
    return _sort_kernel(a, False, dim, descending)


# PyTorch records SortBackward0 for sort(dim, descending) and SortBackward1 once ``stable=`` is passed at all.
_sort = defop("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
              _sort_plain_kernel, vjp=_scatter_back_vjp, saves=("result1",), attrs=("dim",),
              meta=("self_sym_sizes",))
_sort_stable = defop("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
                     "(Tensor values, Tensor indices)", _sort_kernel, vjp=_scatter_back_vjp,
                     saves=("result1",), attrs=("dim",), node_name="SortBackward1", meta=("self_sym_sizes",))


def _sorted_after_a_recorded_copy(op):
    """sort's result for inference tensors alone, one requiring grad: torch's autograd kernel does not run, but its
    CPU kernel copies self into the (normal) values tensor with ``copy_``, which records a CopyBackwards, then sorts
    that in place below autograd: the values' history is the copy's."""
    def run(args: tuple):
        from .._state import STATE
        from .creation import copy_

        enabled, STATE.grad_enabled = STATE.grad_enabled, False
        try:
            result = op._eager(args)
        finally:
            STATE.grad_enabled = enabled
        values = result[0]
        in_order = values._data.copy()
        values._vc = None  # (the copy_ below is the one write counted)
        copy_(values, args[0])
        values._data[...] = in_order  # (the sort's own write, uncounted)
        return result

    return run


_sort.without_autograd_kernel = _sorted_after_a_recorded_copy(_sort)
_sort_stable.without_autograd_kernel = _sorted_after_a_recorded_copy(_sort_stable)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool | None = None, *, out=None):
    """``stable=None`` stands for "not passed" (the ``sort`` overload); any bool selects ``sort.stable``."""
    extra = {} if out is None else {"out": out}
    if stable is None:
        return _sort(input, dim, descending, **extra)
    return _sort_stable(input, stable=stable, dim=dim, descending=descending, **extra)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    return sort(input, dim, descending, stable)[1].detach()


def msort(input: Tensor, *, out=None) -> Tensor:
    if out is None:
        return sort(input, 0)[0]
    # torch's msort_out: sort_out into ``out`` with indices it throws away (so sort's out= checks apply)
    sort(input, 0, out=(out, _wrap(np.empty(0, dtype=np.int64))))
    return out


def _refuse_unordered(a, kernel_name: str) -> None:
    """PyTorch's CPU selection kernels (median, kthvalue) have no bool or complex implementation."""
    if a.dtype.kind in "bc":
        raise unsupported(kernel_name, a.dtype)


def topk_indices(x: np.ndarray, k: int, largest: bool, sorted: bool) -> np.ndarray:
    """topk's indices along the last axis, in PyTorch's order.

    PyTorch runs ``std::partial_sort`` when ``64 * k <= n``, and otherwise ``std::nth_element`` followed, when
    ``sorted``, by a ``std::sort`` of the first ``k - 1``. Without ties among the first ``k + 1`` values, every way
    gives the first ``k`` of a sort, in order, except that an unsorted ``nth_element`` leaves its own order."""
    n = x.shape[-1]
    if k == 0 or x.size == 0:
        return np.zeros(x.shape[:-1] + (k,), dtype=np.int64)
    rows = x.reshape(-1, n)
    partial = 64 * k <= n
    if not partial and not sorted:
        return _nth_element_topk(rows, k, largest, False).reshape(x.shape[:-1] + (k,))
    if 4 * k < n:  # (a few of many: select, then sort only those)
        idx = _first_k_indices(rows, k, largest)
    else:
        idx = sort_indices(rows, 1, largest)[:, :k].astype(np.int64)
    chosen = np.take_along_axis(rows, idx, 1)
    kth = chosen[:, -1:]
    tied = _same_values(chosen[:, 1:], chosen[:, :-1]).any(axis=1)
    tied |= _same_values(rows, kth).sum(axis=1) > _same_values(chosen, kth).sum(axis=1)
    tied = np.flatnonzero(tied)
    if tied.size:
        idx[tied] = (stl_order.partial_sort_order(stl_order.order_keys(rows[tied], largest), k) if partial
                     else _nth_element_topk(rows[tied], k, largest, True))
    return idx.reshape(x.shape[:-1] + (k,))


def _nth_element_topk(rows: np.ndarray, k: int, largest: bool, sorted: bool) -> np.ndarray:
    """PyTorch's topk through ``std::nth_element`` (and a ``std::sort`` of the first ``k - 1`` when ``sorted``)."""
    keys = stl_order.order_keys(rows, largest)
    perm = stl_order.introselect_order(keys, k - 1)[:, :k]
    if sorted and k > 2:
        head = perm[:, :k - 1]
        perm[:, :k - 1] = np.take_along_axis(head, stl_order.introsort_order(np.take_along_axis(keys, head, 1)), 1)
    return perm


def _topk_kernel(a, k, dim=-1, largest=True, sorted=True):
    x, d = _along(a, dim)  # (the dim is checked before the dtype, as PyTorch's)
    n = x.shape[d]
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if a.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if a.dtype.kind == "c":
        raise RuntimeError(" topk does not support complex dtypes on CPU")  # (PyTorch's leading space)
    if a.ndim == 0:  # PyTorch copies a 0-d input, for k = 0 too: its result keeps the 0-d shape
        return a.copy(), np.zeros((), np.int64)
    idx = np.ascontiguousarray(np.moveaxis(topk_indices(np.moveaxis(x, d, -1), k, largest, sorted), -1, d))
    vals = np.ascontiguousarray(np.take_along_axis(x, idx, d))  # (PyTorch's results are contiguous)
    return vals, idx


topk = defop("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
             "(Tensor values, Tensor indices)", _topk_kernel, vjp=_scatter_back_vjp,
             saves=("result1",), attrs=("dim",), meta=("self_sym_sizes",))


def _kthvalue_kernel(a, k, dim=-1, keepdim=False):
    x, d = _along(a, dim)  # (the dim is checked before the dtype, as PyTorch's)
    n = x.shape[d]
    if not n and a.ndim:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if a.ndim == 0:  # (PyTorch copies a 0-d input before its dtype dispatch: bool and complex ones too)
        return a.copy(), np.zeros((), np.int64)
    _refuse_unordered(a, "kthvalue_cpu")
    idx = np.moveaxis(_kthvalue_index(np.moveaxis(x, d, -1), k), -1, d)
    vals = np.take_along_axis(x, idx, d)
    return _finish_along((vals, idx.astype(np.int64)), a.ndim, d, keepdim)


def _kthvalue_index(x: np.ndarray, k: int) -> np.ndarray:
    """kthvalue's index along the last axis (keepdim): where a k-th value occurs more than once, the one
    PyTorch's quickselect leaves at position ``k - 1``."""
    idx = _kth_index(x, k)
    rows = x.reshape(-1, x.shape[-1])
    kth = np.take_along_axis(rows, idx.reshape(-1, 1), 1)
    tied = np.flatnonzero(_same_values(rows, kth).sum(axis=1) > 1)
    if tied.size:
        flat = idx.reshape(-1).copy()
        flat[tied] = stl_order.torch_quickselect_index(stl_order.order_keys(rows[tied], False), k)
        idx = flat.reshape(idx.shape)
    return idx


def _kth_vjp(ctx, g, _gi):
    (indices,) = ctx.saved_tensors
    dim, keepdim = ctx.attrs
    return _value_selecting_backward(g, indices, ctx.input_shapes[0], dim, keepdim)


kthvalue = defop("kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> "
                 "(Tensor values, Tensor indices)", _kthvalue_kernel, vjp=_kth_vjp, saves=("result1",),
                 attrs=("dim", "keepdim"), meta=("self_sym_sizes",))


def _median_index(x: np.ndarray, d: int) -> np.ndarray:
    """Index (keepdim) of the lower median along ``d``; a slice with NaN selects its first NaN."""
    order = sort_indices(x, d, False)
    n = x.shape[d]
    pos = np.full(keepdim_shape(x.shape, d), (n - 1) // 2, dtype=np.int64)
    if x.dtype.kind in "fc":
        nan_count = np.sum(np.isnan(x), axis=d, keepdims=True)
        pos = np.where(nan_count > 0, n - nan_count, pos)
    return np.take_along_axis(order, pos, d)


def select_along(a, dim, keepdim: bool, name: str, index_fn) -> tuple:
    """(values, indices) of the element ``index_fn(x, d)`` picks (keepdim) in each slice along ``dim``: the
    kernel of median.dim and nanmedian.dim."""
    x, d = _along(a, dim)  # (the dim and its size are checked before the dtype, as PyTorch's)
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    _refuse_unordered(a, "median_out")
    idx = index_fn(x, d)
    return _finish_along((np.take_along_axis(x, idx, d), idx.astype(np.int64)), a.ndim, d, keepdim)


def _median_dim_kernel(a, dim, keepdim=False):
    return select_along(a, dim, keepdim, "median", _median_index)


def _nan_as(dtype: np.dtype) -> np.ndarray:
    """A 0-d NaN in ``dtype``, as C++ casts one (x86): the lowest int32/int64 (the CPU's "integer indefinite"),
    0 in the narrower integers (through int32, then truncated), true in bool."""
    if dtype.kind in "fc":
        return np.asarray(np.nan, dtype=dtype)
    if dtype.kind == "b":
        return np.asarray(True)
    if dtype.kind == "i" and dtype.itemsize >= 4:
        return np.asarray(np.iinfo(dtype).min, dtype=dtype)
    return np.zeros((), dtype=dtype)


def median_of_empty(a: np.ndarray, kernel_name: str) -> np.ndarray | None:
    """The whole-tensor median (or nanmedian) of an empty input, PyTorch's NaN in its dtype, whatever the dtype
    (it checks for no element before the dtype); None for a non-empty input, once its dtype is known to sort."""
    if not a.size:
        return _nan_as(a.dtype)
    _refuse_unordered(a, kernel_name)
    return None


def _median_full_kernel(a):
    empty = median_of_empty(a, "median_cpu")
    if empty is not None:
        return empty
    flat = a.reshape(-1)
    return np.asarray(flat[_median_index(flat, 0)[0]])


def _median_full_vjp(ctx, g):
    x, result = ctx.saved_tensors
    return _full_evenly_distribute(g, x, result)


_median_full = defop("median(Tensor self) -> Tensor", _median_full_kernel, vjp=_median_full_vjp,
                     saves=("self", "result"), node_name="MedianBackward0", jvp=evenly_read_jvp)
_median_dim = defop("median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                    _median_dim_kernel, vjp=_kth_vjp, saves=("result1",), attrs=("dim", "keepdim"),
                    node_name="MedianBackward1", meta=("self_sym_sizes",))


def median(input: Tensor, dim=None, keepdim: bool = False, *, out=None):
    extra = {} if out is None else {"out": out}
    if dim is None:
        return _median_full(input, **extra)
    return _median_dim(input, dim, keepdim, **extra)


# ---- logcumsumexp ------------------------------------------------------------------------------------------


def _logcumsumexp_kernel(a, dim):
    x, d = _along(a, dim)  # (the dim is checked before the dtype, as PyTorch's)
    if a.dtype.kind not in "fc":
        raise unsupported("logcumsumexp_out_cpu", a.dtype)
    if a.dtype.kind == "c":
        # PyTorch's loop: cum = log_add_exp(x_i, cum) from cum = -inf (no complex logaddexp ufunc to accumulate)
        out = np.moveaxis(np.empty_like(x), d, 0)
        cum = np.full(out.shape[1:], -np.inf, dtype=a.dtype)
        for i, row in enumerate(np.moveaxis(x, d, 0)):
            cum = out[i] = log_add_exp_complex(row, cum)
        return np.moveaxis(out, 0, d).reshape(a.shape)
    with np.errstate(invalid="ignore"):
        return running(np.logaddexp, x, d, x.dtype).reshape(a.shape).astype(a.dtype, copy=False)


def _logcumsumexp_vjp(ctx, g):
    """PyTorch's logcumsumexp_backward: for real input the gradient split by sign, each part a reversed
    logcumsumexp in log space, so nothing overflows; for complex input one reversed logcumsumexp of log(conj g)."""
    from .pointwise import add, exp, gt, log, lt, sub, where

    x, result = ctx.saved_tensors
    (dim,) = ctx.attrs
    if g.ndim == 0 or g.numel() == 0:
        return g

    def reverse_logcumsumexp(t):
        return flip(logcumsumexp(flip(t, dim), dim), dim)

    if g.is_complex():  # no sign split: the complex log takes the gradient's phase along
        from .unary import conj

        return conj(exp(add(reverse_logcumsumexp(sub(log(conj(g)), result)), x)))
    np_dtype = g._data.dtype
    lowest = _wrap(np.array(bfloat16_in_float.finfo(np_dtype).min, dtype=np_dtype))  # (PyTorch's scalar_tensor)
    log_abs_grad = log(_abs(g))
    log_grad_positive = where(gt(g, 0), log_abs_grad, lowest)
    log_grad_negative = where(lt(g, 0), log_abs_grad, lowest)
    output_pos = exp(add(reverse_logcumsumexp(sub(log_grad_positive, result)), x))
    output_neg = exp(add(reverse_logcumsumexp(sub(log_grad_negative, result)), x))
    return sub(output_pos, output_neg)


def _abs(t):
    from .nn_ops._basic import abs as abs_op

    return abs_op(t)


def _logcumsumexp_jvp(args, outs, tangents):
    """PyTorch's logcumsumexp_jvp: cumsum(exp(x - max(x, dim).values) * t) / (cumsum(exp(x - max)) + 1e-13) (no
    max for complex input); the epsilon makes the leading -inf entries of a row give 0 rather than 0/0. Its
    product and sum are in place, as PyTorch's are: the tangent's backward then finds exp's saved result
    modified, as torch's does."""
    from .pointwise import div, exp, mul_, sub
    from .scalar_overloads import add_scalar_

    x, dim = args[0], args[1]
    t = tangents[0]
    if t is None:
        return None
    x_exp = exp(x) if x.is_complex() else exp(sub(x, _max_dim(x, dim, True)[0]))
    cumsum_exp = cumsum(x_exp, dim)
    mul_(x_exp, t)
    add_scalar_(cumsum_exp, 1e-13)
    return div(cumsum(x_exp, dim), cumsum_exp)


logcumsumexp = defop("logcumsumexp(Tensor self, int dim) -> Tensor", _logcumsumexp_kernel, vjp=_logcumsumexp_vjp,
                     jvp=_logcumsumexp_jvp, saves=("self", "result"), attrs=("dim",))


# ---- exports -----------------------------------------------------------------------------------------------


PUBLIC = {
    "sum": sum, "mean": mean, "nansum": nansum, "nanmean": nanmean, "prod": prod,
    "max": max, "min": min, "amax": amax, "amin": amin, "aminmax": aminmax,
    "argmax": argmax, "argmin": argmin, "all": all, "any": any, "count_nonzero": count_nonzero,
    "var": var, "std": std, "var_mean": var_mean, "std_mean": std_mean,
    "norm": norm, "logsumexp": logsumexp, "cumsum": cumsum, "cumprod": cumprod,
    "sort": sort, "argsort": argsort, "msort": msort, "topk": topk, "kthvalue": kthvalue, "median": median,
    "logcumsumexp": logcumsumexp,
}

METHODS = {
    **{name: fn for name, fn in PUBLIC.items() if name not in ("var_mean", "std_mean")},
    "cumsum_": cumsum_, "cumprod_": cumprod_, "norm": _norm_method,
}
