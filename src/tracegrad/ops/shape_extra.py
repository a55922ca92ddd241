"""More shape and indexing operators: stacking helpers, repeat/flip/roll, gather/scatter and the index_*
family, masks, splits, and the sorting-free set utilities (unique, bincount, histc, searchsorted).

Kernels are NumPy; backward rules use dispatched ops only, so every rule is differentiable again:
``gather`` and ``scatter_add`` are each other's backward, as are ``index_select`` and ``index_add``.
Index and mask arguments never get gradient edges.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import operator
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from .._arg_parser import (
    argument_error,
    guard_errors,
    refuse_arrays_among,
    refuse_as_torch,
    refuse_non_tensors_among,
    tensors_as_one_argument,
)
from .._jit_internal import boolean_dispatch, renamed
from .._strides import contiguous_as_torch, copy_preserving_layout, like_self, with_strides
from .._tensor import Tensor, _wrap
from .._warnings import warn_once_at_caller
from ..backend.dtypes import (
    BAREBONES_UNSIGNED_CHARS,
    cpp_type_name,
    from_numpy_dtype,
    kind_of,
    result_type_of,
    scalar_type_name,
)
from ._jvp import set_self_tangent_rules
from ._util import result_dtype, unsupported, wrap_dim, wrap_dims
from .accumulate import add_rows_at
from .aten_sum import running
from .bfloat16_in_float import computes_bfloat16, seen_dtype
from .pointwise import writes_last
from .registry import check_no_internal_overlap, defop, defop_without_derivative, not_implemented
from .scalar_fill import as_scalar, scalar_for, written_value
from .views import narrow_start, normalize_shape, sliced

# ---- helpers -----------------------------------------------------------------------------------------------


def _tname(np_dtype) -> str:
    """PyTorch's ScalarType name (``Float``, ``Long``) of a NumPy dtype."""
    from ..backend.dtypes import scalar_type_name

    return scalar_type_name(np_dtype)




def _idx(index) -> np.ndarray:
    return index if isinstance(index, np.ndarray) else np.asarray(index)


def _check_index_dtype(index: np.ndarray, message: str) -> None:
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(message)


def _check_bounds(index: np.ndarray, size: int, dim: int, prefix: str = "", exc=RuntimeError) -> None:
    if index.size:
        bad = index[(index < 0) | (index >= size)]
        if bad.size:
            raise exc(f"{prefix}index {int(bad.flat[0])} is out of bounds for dimension {dim} "
                      f"with size {size}")


def _coords(index: np.ndarray, dim: int) -> tuple:
    """Advanced-indexing key: for each entry of ``index``, its own position with ``dim`` replaced."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _as_1d(a: np.ndarray) -> np.ndarray:
    return a.reshape(1) if a.ndim == 0 else a


def _zeros(like: Tensor, shape) -> Tensor:
    from .creation import new_zeros

    return new_zeros(like, tuple(shape))


def _call(op, *args, out=None, **kwargs):
    """Call an op, passing ``out=`` only when given (the registry derives the out= variant)."""
    if out is None:
        return op(*args, **kwargs)
    return op(*args, out=out, **kwargs)


# ---- stacking ----------------------------------------------------------------------------------------------


def _tensor_seq(tensors, name: str) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' must be tuple of Tensors, not Tensor")
    seq = list(tensors)
    if not seq:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return seq


def atleast_1d(*tensors):
    """Views with at least one dimension; one tensor in, one out, else a tuple."""
    return _atleast(tensors, _one_1d, "atleast_1d")


def atleast_2d(*tensors):
    return _atleast(tensors, _one_2d, "atleast_2d")


def atleast_3d(*tensors):
    return _atleast(tensors, _one_3d, "atleast_3d")


def _atleast(tensors: tuple, fn, name: str):
    # torch's Python passes a lone argument on as it is (a tensor or a sequence of them), several as a tuple, to
    # its C++ operator, whose parser refuses anything else
    given = tensors[0] if len(tensors) == 1 else tensors
    try:
        if isinstance(given, (list, tuple)):
            refuse_arrays_among(given)  # (``fn`` hands a tensor of enough dims back as given: an array too)
            return tuple(fn(t) for t in given)
        refuse_arrays_among(tensors)
        return fn(given)
    except Exception:
        refuse_as_torch(name, (given,), {})
        raise


def _one_1d(t: Tensor) -> Tensor:
    from .views import reshape

    return reshape(t, (1,)) if t.ndim == 0 else t


def _one_2d(t: Tensor) -> Tensor:
    from .views import reshape, unsqueeze

    if t.ndim == 0:
        return reshape(t, (1, 1))
    return unsqueeze(t, 0) if t.ndim == 1 else t


def _one_3d(t: Tensor) -> Tensor:
    from .views import reshape, unsqueeze

    if t.ndim == 0:
        return reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return unsqueeze(unsqueeze(t, 0), -1)
    return unsqueeze(t, -1) if t.ndim == 2 else t


def hstack(tensors, *, out=None) -> Tensor:
    from .shape import cat

    seq = [_one_1d(t) for t in _tensor_seq(tensors, "hstack")]
    return _call(cat, seq, 0 if seq[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None) -> Tensor:
    from .shape import cat

    return _call(cat, [_one_2d(t) for t in _tensor_seq(tensors, "vstack")], 0, out=out)


def dstack(tensors, *, out=None) -> Tensor:
    from .shape import cat

    return _call(cat, [_one_3d(t) for t in _tensor_seq(tensors, "dstack")], 2, out=out)


def column_stack(tensors, *, out=None) -> Tensor:
    from .views import reshape

    seq = [reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in _tensor_seq(tensors, "column_stack")]
    return hstack(seq, out=out)


# ---- reshaping copies --------------------------------------------------------------------------------------


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    from .views import infer_size, view

    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if (-1 in sizes and (known == 0 or n % known)) or (-1 not in sizes and known != n):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of "
                           f"dim {d} ({n}) in the input tensor")
    sizes = infer_size(sizes, n)
    shape = tuple(input.shape)
    return view(input, shape[:d] + sizes + shape[d + 1:])  # splitting a dim always has a view (PyTorch views)


def _repeat_kernel(a, repeats):
    repeats = tuple(int(r) for r in repeats)
    if len(repeats) < a.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                           "of tensor")
    padded = (1,) * (len(repeats) - a.ndim) + a.shape
    target = [r * s for r, s in zip(repeats, padded)]
    for s in target:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {target}")
    tiled = np.tile(a.reshape(padded), repeats)
    return tiled if tiled.size else np.empty(tiled.shape, a.dtype)  # (NumPy's empty tile may view ``a``)


def _repeat_vjp(ctx, g):
    """PyTorch's repeat_backward: sum away the leading dims repeat() added, then fold each repeated dim into
    (repeat, size) with one reshape and sum the repeat axes in one sum, so the graph is PyTorch's."""
    from .creation import zeros_like
    from .reductions import sum as sum_op
    from .views import reshape

    (repeats,) = ctx.attrs
    shape = tuple(ctx.input_shapes[0])
    if 0 in repeats:
        return zeros_like(g).new_zeros(shape)
    added = len(repeats) - len(shape)
    for _ in range(added):
        g = sum_op(g, [0], False)
    grad_size, sum_dims = [], []
    for r, size in zip(repeats[added:], shape):
        if r != 1:
            grad_size.append(int(r))
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(size)
    if sum_dims:
        g = sum_op(reshape(g, tuple(grad_size)), sum_dims)
    return g


repeat = defop("repeat(Tensor self, SymInt[] repeats) -> Tensor", _repeat_kernel, vjp=_repeat_vjp,
               attrs=("repeats",), meta=("self_sym_sizes",))


def _repeat_method(self: Tensor, *sizes) -> Tensor:
    return repeat(self, normalize_shape(sizes))


def tile(input: Tensor, dims) -> Tensor:
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def _tile_method(self: Tensor, *dims) -> Tensor:
    return tile(self, normalize_shape(dims))


def _repeat_interleave_index_kernel(repeats, output_size=None):
    # (PyTorch dispatches on the dtype before it looks at the rank)
    if repeats.dtype not in (np.int64, np.int32):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_tname(repeats)}'")
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.size and repeats.min() < 0:
        raise RuntimeError("repeats can not be negative")
    out = np.repeat(np.arange(repeats.size, dtype=repeats.dtype), repeats)
    if output_size is not None and out.size != output_size:
        raise RuntimeError("allocated size does not match required size")
    return out


_repeat_interleave_index = defop(
    "repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor",
    _repeat_interleave_index_kernel, differentiable=())


def repeat_interleave(input: Tensor, repeats=None, dim: int | None = None, *, output_size=None) -> Tensor:
    """``repeat_interleave(x, 2)``, ``(x, repeats_tensor, dim)`` or ``repeat_interleave(repeats)``."""
    from .views import flatten

    if repeats is None:
        return _repeat_interleave_index(input, output_size=output_size)
    if isinstance(repeats, Tensor) and repeats.ndim > 1:  # (torch looks at the repeats before the dim)
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if dim is None:
        input, dim = flatten(input), 0
    d = wrap_dim(dim, input.ndim)
    if isinstance(repeats, Tensor):
        return _repeat_interleave_tensor(input, repeats, d, output_size)
    return _repeat_interleave_int(input, int(repeats), d, output_size)


def _repeat_interleave_int(input: Tensor, repeats: int, d: int, output_size) -> Tensor:
    # expand a new axis after `d`, copy contiguously, and merge with a view, as ATen does (so its layout and
    # graph): the gradient flows back through sum-over-expand
    from ..memory_format import contiguous_format
    from .creation import clone
    from .views import expand, reshape, unsqueeze, view

    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if input.ndim == 0:
        input = reshape(input, (1,))
    shape = tuple(input.shape)
    if output_size is not None and output_size != shape[d] * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {shape[d] * repeats} but got "
                           f"{output_size}")
    wide = expand(unsqueeze(input, d + 1), shape[:d + 1] + (repeats,) + shape[d + 1:])
    return view(clone(wide, memory_format=contiguous_format), shape[:d] + (shape[d] * repeats,) + shape[d + 1:])


def _repeat_interleave_tensor(input: Tensor, repeats: Tensor, d: int, output_size) -> Tensor:
    from .views import expand, reshape

    n = input.shape[d] if input.ndim else 1
    if repeats.numel() == 1:
        repeats = expand(reshape(repeats, (1,)), (n,))
    elif repeats.shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats.shape[0]} and input.size({d}) = {n}")
    index = _repeat_interleave_index(repeats, output_size=output_size)
    return index_select(input, d, index)


# ---- flip / roll / rot90 -----------------------------------------------------------------------------------


def _flip_kernel(a, dims):
    axes = wrap_dims(dims, a.ndim, one_by_one=True) if a.ndim else ()
    return like_self(np.flip(a, axes), a) if axes else copy_preserving_layout(a)  # (a new tensor, as a's)


flip = defop("flip(Tensor self, int[] dims) -> Tensor", _flip_kernel,
             vjp=lambda ctx, g: flip(g, ctx.attrs[0]), attrs=("dims",))


def _flip_method(self: Tensor, *dims) -> Tensor:
    return flip(self, normalize_shape(dims))


def fliplr(input: Tensor) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _as_tuple(x) -> tuple:
    if x is None:  # (torch's parser gives None for an int list whose default is empty: ``roll(x, 1, None)``)
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _roll_kernel(a, shifts, dims=()):
    shifts, dims = _as_tuple(shifts), _as_tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return np.roll(a, shifts[0]).copy()
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    axes = tuple(wrap_dim(d, a.ndim) for d in dims)
    return np.roll(a, shifts, axes).copy()


def _roll_vjp(ctx, g):
    shifts, dims = ctx.attrs
    return roll(g, tuple(-int(s) for s in _as_tuple(shifts)), dims)


roll = defop("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", _roll_kernel, vjp=_roll_vjp,
             attrs=("shifts", "dims"))


def _rot90_kernel(a, k=1, dims=(0, 1)):
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if a.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {a.ndim}")
    d0, d1 = wrap_dim(dims[0], a.ndim), wrap_dim(dims[1], a.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    # PyTorch's rot90 is a flip (laid out as ``a``) then, for a quarter turn, a transposed view of it
    turns = k % 4
    if turns == 0:
        return contiguous_as_torch(np.array(a, order="C"))
    if turns == 2:
        return _flip_kernel(a, (d0, d1))
    return _flip_kernel(a, (d1 if turns == 1 else d0,)).swapaxes(d0, d1)


rot90 = defop("rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor", _rot90_kernel,
              vjp=lambda ctx, g: rot90(g, -ctx.attrs[0], ctx.attrs[1]), attrs=("k", "dims"))


# ---- gather / scatter --------------------------------------------------------------------------------------


def _gather_kernel(a, dim, index, sparse_grad=False):
    idx = _idx(index)
    d = wrap_dim(dim, a.ndim)  # (torch's order: the dim, then the index's dtype)
    _check_index_dtype(idx, "gather(): Expected dtype int32/int64 for index")
    a1, i1 = _as_1d(a), _as_1d(idx)
    if a1.ndim != i1.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(a1.ndim):
        if k != d and i1.shape[k] > a1.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(idx.shape)} to "
                               f"be no larger than self {list(a.shape)} apart from dimension {d}")
    _check_bounds(i1, a1.shape[d], d)
    return a1[_coords(i1, d)].reshape(idx.shape)


def _gather_vjp(ctx, g):
    dim, _sparse_grad = ctx.attrs
    # PyTorch saves self (gather_backward reads its sizes): unpacking it raises if it was modified in place
    _self, index = ctx.saved_tensors
    return scatter_add(_zeros(g, ctx.input_shapes[0]), dim, index, g)


gather = defop("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
               _gather_kernel, vjp=_gather_vjp, attrs=("dim", "sparse_grad"), saves=("self", "index"),
               differentiable=("self",))


def _scatter_prepare(a, dim, index, src):
    """Validate a scatter-family call; return (self as >=1-d array, wrapped dim, index, src or None)."""
    idx = _idx(index)
    _check_index_dtype(idx, "scatter(): Expected dtype int32/int64 for index")
    has_src = isinstance(src, np.ndarray)
    if has_src and seen_dtype(src) != seen_dtype(a):
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = wrap_dim(dim, a.ndim)
    a1, i1 = _as_1d(a), _as_1d(idx)
    s1 = _as_1d(src) if has_src else None
    if i1.ndim != a1.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if has_src and s1.ndim != a1.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    too_big = any(i1.shape[k] > a1.shape[k] for k in range(a1.ndim) if k != d)
    if has_src:
        too_big = too_big or any(i1.shape[k] > s1.shape[k] for k in range(a1.ndim))
    if too_big:
        tail = f" and to be no larger size than src {list(src.shape)}" if has_src else ""
        raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self {list(a.shape)} "
                           f"apart from dimension {d}{tail}")
    _check_bounds(i1, a1.shape[d], d)
    if has_src:
        s1 = s1[tuple(builtins.slice(0, n) for n in i1.shape)]
    return a1, d, i1, s1


_SCATTER_REDUCE_LEGACY = {"add": np.add, "multiply": np.multiply}


def _check_legacy_reduce(reduce) -> None:
    if reduce is not None and reduce not in _SCATTER_REDUCE_LEGACY:
        raise RuntimeError("reduce argument must be either add or multiply.")


def _scatter_into(out1, dim, index, values, reduce=None) -> None:
    key = _coords(index, dim)
    if reduce is None:
        out1[key] = values
        return
    _check_legacy_reduce(reduce)
    values = np.broadcast_to(np.asarray(values, dtype=out1.dtype), index.shape)
    _SCATTER_REDUCE_LEGACY[reduce].at(out1, key, values)


def _scatter_src_kernel(a, dim, index, src, reduce=None):
    a1, d, i1, s1 = _scatter_prepare(a, dim, index, src)
    out = a1.copy()
    _scatter_into(out, d, i1, s1, reduce)
    return out.reshape(a.shape)


def _scatter_value_kernel(a, dim, index, value, reduce=None):
    a1, d, i1, _ = _scatter_prepare(a, dim, index, None)
    out = a1.copy()
    _check_legacy_reduce(reduce)
    if i1.size:  # (for an empty index ATen returns before it converts the value)
        _scatter_into(out, d, i1, written_value(value, a.dtype), reduce)
    return out.reshape(a.shape)


def _inplace(functional):
    """In-place kernel from a functional one whose result has self's shape and dtype. An error the functional
    raises may carry ``written_before``: what torch's loop had written into self before it met the bad argument,
    which stays written."""

    def kernel(a, *rest):
        try:
            result = functional(a, *rest)
        except Exception as error:
            written = getattr(error, "written_before", None)
            if written is not None:
                np.copyto(a, written)
            raise
        np.copyto(a, result)
        return a

    return kernel


def _scatter_src_vjp(ctx, g):
    (dim,) = ctx.attrs
    (index,) = ctx.saved_tensors
    need = ctx.needs_input_grad
    return (scatter_value(g, dim, index, 0) if need[0] else None,
            gather(g, dim, index) if need[1] else None)


def _scatter_value_vjp(ctx, g):
    (dim,) = ctx.attrs
    (index,) = ctx.saved_tensors
    return scatter_value(g, dim, index, 0)


_SRC = "(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"
_VALUE = "(Tensor self, int dim, Tensor index, Scalar value) -> Tensor"
_SRC_IP = "(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)"
_VALUE_IP = "(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)"
_src_rules = dict(vjp=_scatter_src_vjp, attrs=("dim",), saves=("index",), differentiable=("self", "src"))
_value_rules = dict(vjp=_scatter_value_vjp, attrs=("dim",), saves=("index",), differentiable=("self",))

scatter_src = defop("scatter.src" + _SRC, _scatter_src_kernel, **_src_rules)
scatter_value = defop("scatter.value" + _VALUE, _scatter_value_kernel, node_name="ScatterBackward1",
                      **_value_rules)
scatter_src_ = defop("scatter_.src" + _SRC_IP, _inplace(_scatter_src_kernel), node_name="ScatterBackward0",
                     **_src_rules)
scatter_value_ = defop("scatter_.value" + _VALUE_IP, _inplace(_scatter_value_kernel),
                       node_name="ScatterBackward1", **_value_rules)
# the legacy reduce= forms have no derivative in PyTorch: its autograd fallback's node, backward error and forward-AD
# refusal (before the kernel's checks)
_REDUCE_TAIL = ", *, str reduce) -> Tensor"
scatter_reduce_src = defop_without_derivative("scatter.reduce(Tensor self, int dim, Tensor index, Tensor src"
                                              + _REDUCE_TAIL, _scatter_src_kernel, differentiable=("self", "src"))
scatter_reduce_value = defop_without_derivative("scatter.value_reduce(Tensor self, int dim, Tensor index, "
                                                "Scalar value" + _REDUCE_TAIL, _scatter_value_kernel,
                                                differentiable=("self",))
scatter_reduce_src_ = defop_without_derivative("scatter_.reduce(Tensor(a!) self, int dim, Tensor index, Tensor src"
                                               + _REDUCE_TAIL + "(a!)", _inplace(_scatter_src_kernel),
                                               differentiable=("self", "src"))
scatter_reduce_value_ = defop_without_derivative("scatter_.value_reduce(Tensor(a!) self, int dim, Tensor index, "
                                                 "Scalar value" + _REDUCE_TAIL + "(a!)",
                                                 _inplace(_scatter_value_kernel), differentiable=("self",))
set_self_tangent_rules(scatter_src, scatter_src_)
set_self_tangent_rules(scatter_value, scatter_value_, zeroed=(3,))

_SCATTER_OPS = {  # (has tensor src, legacy reduce, in place) -> op
    (True, False, False): scatter_src, (False, False, False): scatter_value,
    (True, False, True): scatter_src_, (False, False, True): scatter_value_,
    (True, True, False): scatter_reduce_src, (False, True, False): scatter_reduce_value,
    (True, True, True): scatter_reduce_src_, (False, True, True): scatter_reduce_value_,
}


def _scatter_dispatch(inplace: bool, input, dim, index, src, value, reduce, out):
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    payload = src if src is not None else value
    is_tensor = isinstance(payload, Tensor)
    if reduce is not None and is_tensor:
        from ..autograd.forward_ad import refuse_fallback_tangents

        # (the warning is its kernel's: the autograd fallback's refusal of a tangent comes first)
        refuse_fallback_tangents("scatter_" if inplace else "scatter", (input, payload, out))
        # (torch's TORCH_WARN_ONCE: once a process, for scatter and scatter_ alike)
        warn_once_at_caller("scatter reduce with tensor src",
                            "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                            "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
                            "reduction options.")
    op = _SCATTER_OPS[(is_tensor, reduce is not None, inplace)]
    extra = {"reduce": reduce} if reduce is not None else {}
    return _call(op, input, dim, index, payload, out=out, **extra)


def scatter(input: Tensor, dim: int, index: Tensor, src=None, value=None, *, reduce: str | None = None,
            out=None) -> Tensor:
    """``scatter(input, dim, index, src)`` with a tensor ``src`` or a scalar ``value``."""
    return _scatter_dispatch(False, input, dim, index, src, value, reduce, out)


def scatter_(self: Tensor, dim: int, index: Tensor, src=None, value=None, *,
             reduce: str | None = None) -> Tensor:
    return _scatter_dispatch(True, self, dim, index, src, value, reduce, None)


def _scatter_add_kernel(a, dim, index, src):
    a1, d, i1, s1 = _scatter_prepare(a, dim, index, src)
    out = a1.copy()
    np.add.at(out, _coords(i1, d), s1)
    return out.reshape(a.shape)


def _scatter_add_vjp(ctx, g):
    (dim,) = ctx.attrs
    (index,) = ctx.saved_tensors
    need = ctx.needs_input_grad
    return (g if need[0] else None, gather(g, dim, index) if need[1] else None)


_scatter_add_rules = dict(vjp=_scatter_add_vjp, attrs=("dim",), saves=("index",), save_if={"index": "src"},
                          differentiable=("self", "src"))
scatter_add = defop("scatter_add" + _SRC, _scatter_add_kernel, **_scatter_add_rules)
scatter_add_ = defop("scatter_add_" + _SRC_IP, _inplace(_scatter_add_kernel), **_scatter_add_rules)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
# ATen's get_reduction_enum also reads the old names; its backward and forward-mode formulas know only the new ones.
_REDUCTION_ALIASES = {"max": "amax", "min": "amin"}


def scatter_reduction(reduce: str) -> str:
    """The reduction ``scatter_reduce``'s kernel runs for ``reduce`` (``"max"`` is ``"amax"``), or ATen's error."""
    kind = _REDUCTION_ALIASES.get(reduce, reduce)
    if kind not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return kind
_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _scatter_reduce_kernel(a, dim, index, src, reduce, include_self=True):
    reduce = scatter_reduction(reduce)
    if reduce in ("amax", "amin") and a.dtype.kind == "c":  # complex numbers have no order
        raise unsupported(f"scatter_gather_tensor_cpu_reduce_{reduce}", a.dtype)
    a1, d, i1, s1 = _scatter_prepare(a, dim, index, src)
    if reduce == "mean" and a.dtype.kind == "b":  # (ATen's mean kernel, or the division it ends with, refuses bool)
        raise unsupported("scatter_gather_tensor_cpu_reduce_mean" if index.size else "div_floor_cpu", a.dtype)
    key = _coords(i1, d)
    out = a1.copy()
    if not include_self:
        out[key] = _identity(reduce, out.dtype)
    _UFUNC[reduce].at(out, key, s1)
    if reduce == "mean":
        out = _divided_by_count(out, key, include_self)
    return out.reshape(a.shape)


def _divided_by_count(total: np.ndarray, key: tuple, include_self: bool) -> np.ndarray:
    """scatter_reduce's mean from its sums: ATen counts the scattered elements in the result's own dtype (an int8
    count wraps as the int8 sum does) and floor-divides integers, keeping their dtype."""
    count = np.full(total.shape, 1 if include_self else 0, dtype=total.dtype)
    np.add.at(count, key, 1)
    count[count == 0] = 1
    if total.dtype.kind in "iu":
        return total // count
    return (total / count).astype(total.dtype)


def _scatter_reduce_vjp(ctx, g):
    dim, reduce, include_self = ctx.attrs
    self_, index, src, result = ctx.saved_tensors
    need = ctx.needs_input_grad
    if reduce not in _SCATTER_REDUCE_GRADS:  # the old names "max"/"min" run forward but have no formula
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got {reduce}.")
    grad_self, grad_src = _SCATTER_REDUCE_GRADS[reduce](g, dim, index, self_, src, result, include_self)
    if need[0] and not include_self:
        grad_self = scatter_value(grad_self, dim, index, 0)  # overwritten positions took no part
    return (grad_self if need[0] else None, grad_src if need[1] else None)


def _sr_sum(g, dim, index, self_, src, result, include_self):
    return g, gather(g, dim, index)


def _sr_mean(g, dim, index, self_, src, result, include_self):
    from .pointwise import div

    count = _zeros(g, self_.shape)
    if include_self:
        count = count + 1
    count = scatter_add(count, dim, index, _zeros(g, src.shape) + 1)
    count = masked_fill(count, count == 0, 1)
    return div(g, count), div(gather(g, dim, index), gather(count, dim, index))


def _sr_extreme(g, dim, index, self_, src, result, include_self):
    # ties share the gradient evenly, as in PyTorch
    from .creation import to_dtype
    from .pointwise import div, eq, mul

    picked = gather(result, dim, index)
    self_hit = to_dtype(eq(self_, result), g.dtype)
    src_hit = to_dtype(eq(src, picked), g.dtype)
    share = div(g, scatter_add(self_hit, dim, index, src_hit))
    return mul(self_hit, share), mul(src_hit, gather(share, dim, index))


def _sr_prod(g, dim, index, self_, src, result, include_self):
    # exclusive products without dividing by zero: mask zeros to one, and recompute where one zero was hit
    from .creation import to_dtype
    from .pointwise import div, eq, logical_and, mul, where

    self_safe = masked_fill(self_, eq(self_, 0), 1)
    others = scatter_reduce(self_safe, dim, index, src, "prod", include_self=include_self)
    grad_self = div(mul(g, others), self_safe)
    src_zero = eq(src, 0)
    zero_count = scatter_add(_zeros(g, self_.shape), dim, index, to_dtype(src_zero, g.dtype))
    single = logical_and(src_zero, eq(gather(zero_count, dim, index), 1))
    without_it = scatter_reduce(self_, dim, index, masked_fill(src, single, 1), "prod",
                                include_self=include_self)
    grad_src = where(single, gather(mul(g, without_it), dim, index),
                     div(gather(mul(g, result), dim, index), masked_fill(src, src_zero, 1)))
    return grad_self, grad_src


_SCATTER_REDUCE_GRADS = {"sum": _sr_sum, "mean": _sr_mean, "prod": _sr_prod, "amax": _sr_extreme,
                         "amin": _sr_extreme}

def _scatter_reduce_jvp(inplace: bool):
    """PyTorch's scatter_reduce_jvp: linear for sum/mean, tie-averaged for amax/amin, and no tangent for
    prod (PyTorch has no formula there and leaves the result without one; its in-place form then fails)."""

    def rule(args, outs, tangents):
        from .creation import to_dtype, zeros_like
        from .pointwise import div, eq, where

        self_, dim, index, src, reduce, include_self = args
        self_t, src_t = tangents
        if reduce not in ("sum", "mean", "amax", "amin"):  # prod, and the old names "max"/"min"
            if inplace and self_t is not None:
                raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in C++) "
                                   "for argument #1 'src'")
            return None
        self_t = zeros_like(self_) if self_t is None else self_t
        src_t = zeros_like(src) if src_t is None else src_t
        if reduce in ("sum", "mean"):
            return scatter_reduce(self_t, dim, index, src_t, reduce, include_self=include_self)
        result = outs[0]
        mask_self = eq(self_, result)
        mask_src = eq(src, gather(result, dim, index))
        dt = self_t.dtype
        count = scatter_reduce(to_dtype(mask_self, dt), dim, index, to_dtype(mask_src, dt), "sum",
                               include_self=include_self)
        picked = scatter_reduce(where(mask_self, self_t, 0.0), dim, index, where(mask_src, src_t, 0.0), "sum",
                                include_self=include_self)
        return div(picked, count)

    return rule


_scatter_reduce_rules = dict(vjp=_scatter_reduce_vjp, attrs=("dim", "reduce", "include_self"),
                             saves=("self", "index", "src", "result"), differentiable=("self", "src"))
scatter_reduce = defop("scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
                       "bool include_self=True) -> Tensor", _scatter_reduce_kernel, **_scatter_reduce_rules,
                       jvp=_scatter_reduce_jvp(False), complex_grad=False)
scatter_reduce_ = defop("scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, "
                        "*, "
                        "bool include_self=True) -> Tensor(a!)", _inplace(_scatter_reduce_kernel),
                        node_name="ScatterReduceBackward0", **_scatter_reduce_rules,
                        jvp=_scatter_reduce_jvp(True))


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *, out=None) -> Tensor:
    from .views import expand, view

    if dim is None:
        # PyTorch's ``self.view(-1).gather(0, indices.view(-1))``: a layout that cannot be viewed raises there too,
        # and the indices' dtype is gather's to check
        return _call(gather, view(input, (-1,)), 0, view(indices, (-1,)), out=out)
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {input.ndim} dimensions for input, and {indices.ndim} "
                           f"dimensions for indices")
    if indices.dtype.name != "int64":
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_tname(indices.dtype.np)}")
    d = wrap_dim(dim, input.ndim)
    self_sizes = list(input.shape)
    self_sizes[d] = indices.shape[d]
    shape = list(broadcast_shapes(tuple(self_sizes), tuple(indices.shape)))
    idx = expand(indices, tuple(shape))
    shape[d] = input.shape[d]
    return _call(gather, expand(input, tuple(shape)), d, idx, out=out)


# ---- index_* -----------------------------------------------------------------------------------------------


def _index_vector(index, message_dim) -> np.ndarray:
    idx = _idx(index)
    if idx.ndim > 1:
        raise IndexError(message_dim(idx))
    return idx.reshape(-1)


def _index_select_kernel(a, dim, index):
    idx = _idx(index)
    d = wrap_dim(dim, a.ndim)  # (torch's order: the dim, the index's dims, then its dtype)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    a1, flat = _as_1d(a), idx.reshape(-1)
    if a.ndim == 0 and flat.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {flat.size} value(s)")
    n = a1.shape[d]
    if flat.size and (flat.min() < 0 or flat.max() >= n):
        _refuse_index_select(a, d, n, flat)
    out = np.take(a1, flat, axis=d)
    return out.reshape(()) if a.ndim == 0 else out


def _refuse_index_select(a, d: int, n: int, flat: np.ndarray) -> None:
    """Raise torch's CPU error for an out-of-range index into ``n`` slices (a 0-d tensor's one): its kernel
    words it by the path it takes. A tensor of two or more dims that is empty, or selected along dim 1 (its fast
    path), has its indices checked by one loop with its own message; every other selection fails in the gather
    itself."""
    if a.ndim > 1 and a.size == 0 and n == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if a.ndim > 1 and (a.size == 0 or d == 1):
        bad = int(flat[_first_out_of_range(flat, n)])
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
    raise IndexError("index out of range in self")


def _index_select_vjp(ctx, g):
    (dim,) = ctx.attrs
    (index,) = ctx.saved_tensors
    shape = ctx.input_shapes[0]
    if not shape:  # a 0-dim input: its single element was picked index.numel() times
        from .reductions import sum as sum_op

        return sum_op(g)
    return index_add(_zeros(g, shape), dim, index, g)


index_select = defop("index_select(Tensor self, int dim, Tensor index) -> Tensor", _index_select_kernel,
                     vjp=_index_select_vjp, attrs=("dim",), saves=("index",), differentiable=("self",),
                     meta=("self_sym_sizes",))


def _slices_first(a: np.ndarray, d: int) -> np.ndarray:
    """``a`` with dim ``d`` moved to the front (a view, so writes reach ``a``)."""
    return np.moveaxis(_as_1d(a), d, 0)


def _check_source_shape(a, src, d, message) -> None:
    a1, s1 = _as_1d(a), _as_1d(src)
    if a1.ndim != s1.ndim or any(a1.shape[k] != s1.shape[k] for k in range(a1.ndim) if k != d):
        raise RuntimeError(message)


def _index_add_kernel(a, dim, index, source, alpha=1):
    idx = _idx(index)
    # (torch's order: the index's dims, then its dtype)
    flat = _index_vector(idx, lambda i: f"index_add_(): Index is supposed to be a vector, but got dim: "
                                        f"{i.ndim} with type: {_tname(i.dtype)} and size: {list(i.shape)}")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {_tname(idx)}")
    d = wrap_dim(dim, a.ndim)
    src = np.asarray(source)
    if seen_dtype(src) != seen_dtype(a):
        raise RuntimeError(f"index_add_(): self ({_tname(seen_dtype(a))}) and source ({_tname(seen_dtype(src))}) must "
                           f"have the same scalar type")
    n_src = _as_1d(src).shape[d] if _as_1d(src).ndim > d else 1
    if flat.size != n_src:
        raise RuntimeError(f"index_add_(): Number of indices ({flat.size}) should be equal to "
                           f"source.size(dim): ({n_src}), for dim: {d}")
    _check_source_shape(a, src, d, f"source tensor shape must match self tensor shape, excluding the "
                                   f"specified dimension. Got self.shape = {list(a.shape)} "
                                   f"source.shape = {list(src.shape)}")
    if a.ndim > 1 and a.size == 0:  # (torch returns before it looks at the index)
        return a.copy()
    bad = _first_out_of_range(flat, _as_1d(a).shape[d])
    if bad is not None:
        _refuse_index_add(a, d, flat, src, alpha, bad)
    return _index_added(a, d, flat, src, alpha)


def _first_out_of_range(flat: np.ndarray, size: int) -> int | None:
    """The position of the first index outside ``[0, size)``, or None."""
    bad = np.flatnonzero((flat < 0) | (flat >= size))
    return int(bad[0]) if bad.size else None


def _index_add_takes_scatter_path(a: np.ndarray, d: int, flat: np.ndarray, alpha) -> bool:
    """torch's CPU index_add_ hands a tensor of two or more dims to scatter_add_ (so its error and its order of
    writing) when adding along the first or the last dim, with alpha 1 and an int64 index; otherwise it loops
    over the index itself."""
    return a.ndim > 1 and d in (0, a.ndim - 1) and alpha == 1 and flat.dtype == np.int64


def _refuse_index_add(a, d, flat, src, alpha, bad: int) -> None:
    """Raise index_add_'s error for the out-of-range index at ``bad``, carrying (as ``written_before``) what
    torch's loop had added by then: the rows before it, or, in scatter_add_'s loop along the last dim, only those
    of the first line (scatter_add_ adds half and bfloat16 through a float buffer, so writes nothing)."""
    n = _as_1d(a).shape[d]
    if not _index_add_takes_scatter_path(a, d, flat, alpha):
        error = IndexError("index out of range in self")
        error.written_before = _index_added(a, d, flat[:bad], _slices_first(src, d)[:bad], alpha, moved=True)
        raise error
    error = RuntimeError(f"index {int(flat[bad])} is out of bounds for dimension {d} with size {n}")
    written = a.copy()
    if seen_dtype(a).name not in ("float16", "bfloat16"):
        first_line = (slice(None),) + (0,) * (a.ndim - 1)
        lines = (slice(None),) * a.ndim if d == 0 else first_line
        add_rows_at(_slices_first(written, d)[lines], flat[:bad], _slices_first(src, d)[lines][:bad])
    error.written_before = written
    raise error


def _index_added(a, d, flat, src, alpha, moved: bool = False):
    """``a`` with ``alpha * src``'s slices along ``d`` added at ``flat`` (``src`` has ``d`` first if ``moved``)."""
    if alpha.__class__ is not int or alpha != 1:
        alpha = scalar_for(alpha, a.dtype)  # (PyTorch's Scalar::to: 1j or 1e300 refused for float)
    if not moved:
        src = _slices_first(src, d)
    if a.dtype == np.float16 and alpha == 1:  # (PyTorch adds half rows in float and rounds once at the end;
        wide = a.astype(np.float32)           # with an alpha, it scales and adds in half, as below)
        add_rows_at(_slices_first(wide, d), flat, src.astype(np.float32))
        return wide.astype(np.float16)
    out = a.copy()
    values = src if alpha == 1 else (src * alpha).astype(a.dtype)
    add_rows_at(_slices_first(out, d), flat, values)
    return out


def _index_add_vjp(ctx, g):
    dim, alpha = ctx.attrs
    index, _source = ctx.saved_tensors  # (source is saved, as PyTorch's expand_as(source), when it needs a gradient)
    need = ctx.needs_input_grad
    grad_src = None
    if need[1]:
        from .pointwise import mul

        grad_src = index_select(g, dim, index)
        if alpha != 1:
            # grad * conj(alpha), the gradient of source * alpha (torch 2.13 multiplies by alpha itself, which
            # its own gradcheck rejects for a complex alpha; a real alpha gives the same either way)
            grad_src = mul(grad_src, alpha.conjugate() if alpha.__class__ is complex else alpha)
        if not ctx.input_shapes[1]:  # a 0-dim source
            from .views import reshape

            grad_src = reshape(grad_src, ())
    return (g if need[0] else None, grad_src)


_index_add_rules = dict(vjp=_index_add_vjp, attrs=("dim", "alpha"), saves=("index", "source"),
                        save_if={"index": "source", "source": "source"}, differentiable=("self", "source"),
                        meta=("source_dim",))
index_add = defop("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
                  _index_add_kernel, **_index_add_rules)
index_add_ = defop("index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> "
                   "Tensor(a!)",
                   _inplace(_index_add_kernel), **_index_add_rules)


def _index_copy_kernel(a, dim, index, source):
    idx = _idx(index)
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    if idx.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_tname(idx)}")
    flat = idx.reshape(-1)
    d = wrap_dim(dim, a.ndim)
    src = np.asarray(source)
    if seen_dtype(src) != seen_dtype(a):
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_tname(seen_dtype(a))} and (source) {_tname(seen_dtype(src))}")
    n_src = _as_1d(src).shape[d] if _as_1d(src).ndim > d else 1
    if flat.size != n_src:
        raise IndexError(f"index_copy_(): Number of indices ({flat.size}) should be equal to "
                         f"source.size(dim) ({n_src})")
    a1, s1 = _as_1d(a), _as_1d(src)
    for k in range(a1.ndim):
        if k != d and (s1.ndim <= k or a1.shape[k] != s1.shape[k]):
            j = k if k < d else k - 1  # PyTorch numbers the dims of the slices, without `dim`
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. "
                               f"Destination slice shape: {a1.shape[k]} at dimension {j} and source slice "
                               f"shape: {s1.shape[k] if s1.ndim > k else 1} at dimension {j}.")
    _check_bounds(flat, a1.shape[d], d, "index_copy_(): ", IndexError)
    out = a.copy()
    _slices_first(out, d)[flat] = _slices_first(src, d)
    return out


def _index_copy_vjp(ctx, g):
    (dim,) = ctx.attrs
    index, _source = ctx.saved_tensors  # (source is saved, as PyTorch's, when it needs a gradient)
    need = ctx.needs_input_grad
    grad_src = None
    if need[1]:
        from .views import reshape

        grad_src = reshape(index_select(g, dim, index), ctx.input_shapes[1])
    return (index_fill_value(g, dim, index, 0) if need[0] else None, grad_src)


_index_copy_rules = dict(vjp=_index_copy_vjp, attrs=("dim",), saves=("index", "source"),
                         save_if={"source": "source"}, differentiable=("self", "source"), meta=("source_dim",))
index_copy = defop("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor",
                   _index_copy_kernel, **_index_copy_rules)
index_copy_ = defop("index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)",
                    _inplace(_index_copy_kernel), **_index_copy_rules)
set_self_tangent_rules(index_copy, index_copy_)


def _index_fill_checked(a, dim, index, value) -> tuple:
    """index_fill_'s checks, in torch's order: (dim, flat index, value) to write. Into an expanded tensor it warns
    after the index's dtype check, before the others (as torch's ``index_fill_``)."""
    # (the Tensor-value overload checks its value, then calls the Scalar one, which checks the index)
    if isinstance(value, np.ndarray) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    idx = _idx(index)
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    check_no_internal_overlap(a, "index_fill_")  # (its warning; the out-of-place copy has no 0 stride)
    value = as_scalar(value)  # (the Tensor overload hands ``value.item()`` on)
    if isinstance(value, complex) and a.dtype.kind != "c":  # (its own refusal, before any conversion)
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    d = wrap_dim(dim, a.ndim)
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    flat = idx.reshape(-1)
    n = _as_1d(a).shape[d]
    bad = flat[(flat < -n) | (flat >= n)]
    if bad.size:
        raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {d} with size {n}")
    return d, flat, scalar_for(value, a.dtype)


def _index_fill_kernel(a, dim, index, value):
    return _index_fill_inplace_kernel(a.copy(), dim, index, value)


def _index_fill_inplace_kernel(a, dim, index, value):
    # (writes the filled positions alone: into an expanded tensor, which PyTorch allows here, all of them land)
    d, flat, fill = _index_fill_checked(a, dim, index, value)
    _slices_first(a, d)[flat] = fill
    return a


def _index_fill_vjp(ctx, g):
    (dim,) = ctx.attrs
    (index,) = ctx.saved_tensors
    need = ctx.needs_input_grad
    grad_self = index_fill_value(g, dim, index, 0) if need[0] else None
    if len(need) == 1:
        return grad_self
    grad_value = None
    if need[1]:  # every filled position once, however often the index repeats it
        from .pointwise import mul
        from .reductions import sum as sum_op

        filled = index_fill_value(_zeros(g, g.shape), dim, index, 1)
        grad_value = sum_op(mul(g, filled))
    return grad_self, grad_value


def _index_fill_rules(differentiable, node):
    return dict(vjp=_index_fill_vjp, attrs=("dim",), saves=("index",), differentiable=differentiable,
                node_name=node)


index_fill_value = defop("index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
                         _index_fill_kernel, **_index_fill_rules(("self",), "IndexFillBackward0"))
index_fill_tensor = defop("index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
                          _index_fill_kernel, **_index_fill_rules(("self", "value"), "IndexFillBackward1"))
index_fill_value_ = defop("index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> "
                          "Tensor(a!)",
                          _index_fill_inplace_kernel, **_index_fill_rules(("self",), "IndexFillBackward0"))
index_fill_tensor_ = defop("index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) -> "
                           "Tensor(a!)", _index_fill_inplace_kernel,
                           **_index_fill_rules(("self", "value"), "IndexFillBackward1"))
set_self_tangent_rules(index_fill_value, index_fill_value_, zeroed=(3,))
set_self_tangent_rules(index_fill_tensor, index_fill_tensor_)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    op = index_fill_tensor if isinstance(value, Tensor) else index_fill_value
    return op(input, dim, index, value)


def index_fill_(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    op = index_fill_tensor_ if isinstance(value, Tensor) else index_fill_value_
    return op(self, dim, index, value)


def _narrow_copy_kernel(a, dim, start, length):
    # PyTorch's narrow_copy_dense_cpu_out checks, in its words (not narrow's)
    if a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= a.ndim:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")
    d = wrap_dim(dim, a.ndim)
    start = narrow_start(int(start), length, a.shape[d])
    return np.take(a, np.arange(start, start + length), axis=d)


def _narrow_copy_vjp(ctx, g):
    from .views import slice_backward

    dim, start, length = ctx.attrs
    shape = ctx.input_shapes[0]
    d = wrap_dim(dim, len(shape))
    start = int(start)
    if start < 0:
        start += shape[d]
    # PyTorch's slice_backward_wrapper (slice_scatter would refuse a complex gradient under create_graph)
    return slice_backward(g, shape, d, start, start + length, 1)


narrow_copy = defop("narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor",
                    _narrow_copy_kernel, vjp=_narrow_copy_vjp, attrs=("dim", "start", "length"),
                    meta=("self_sym_sizes",))


# ---- masks -------------------------------------------------------------------------------------------------


def _broadcast_shape(*shapes) -> tuple:
    """Broadcast shapes with PyTorch's message (tensor a is the first shape, b the later one)."""
    out: tuple = ()
    for shape in shapes:
        out = _broadcast_pair(out, tuple(shape))
    return out


def _broadcast_pair(a: tuple, b: tuple) -> tuple:
    n = builtins.max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    res = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {i}")
        res.append(y if x == 1 else x)
    return tuple(res)


def _check_bool_mask(mask: np.ndarray, name: str, capital: bool = False) -> None:
    if mask.dtype != np.bool_:
        got = _tname(mask.dtype) if capital else cpp_type_name(mask.dtype)
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype {got}")


def _inplace_target_check(a, shape) -> None:
    if tuple(shape) != a.shape:
        raise RuntimeError(f"output with shape {list(a.shape)} doesn't match the broadcast shape "
                           f"{list(shape)}")


def _copy_into(a, result):
    """An in-place kernel's last step: ``result`` (broadcast to ``a``'s shape, or an error) copied into ``a``."""
    _inplace_target_check(a, result.shape)
    np.copyto(a, result)
    return a


def _masked_fill_arguments_checked(mask: np.ndarray, value) -> None:
    """masked_fill_'s first checks: the value's dims (torch checks the value before the mask), the mask's dtype."""
    if isinstance(value, np.ndarray) and value.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    _check_bool_mask(mask, "masked_fill_")


def _masked_fill_value(a, value):
    # (a 0-d tensor's value is read as a Scalar, ``value.item()``, and converted with the checks of one: 1j or
    # 1e300 refused for a float tensor)
    return scalar_for(as_scalar(value), a.dtype)


def _masked_fill_kernel(a, mask, value):
    # (torch's masked_fill broadcasts the mask and the tensor, then calls masked_fill_ on the copy)
    mask = np.asarray(mask)
    shape = _broadcast_shape(mask.shape, a.shape)
    _masked_fill_arguments_checked(mask, value)
    fill = _masked_fill_value(a, value)
    out = np.array(np.broadcast_to(a, shape))
    out[np.broadcast_to(mask, shape)] = fill
    return out


@writes_last
def _masked_fill_inplace_kernel(a, mask, value):
    mask = np.asarray(mask)
    _masked_fill_arguments_checked(mask, value)
    check_no_internal_overlap(a, "masked_fill_")  # (its warning: after the mask's dtype check, before the others)
    shape = _broadcast_shape(a.shape, mask.shape)  # (the written tensor comes first in the in-place error)
    _inplace_target_check(a, shape)
    fill = _masked_fill_value(a, value)
    a[np.broadcast_to(mask, shape)] = fill  # (the masked positions alone: into an expanded tensor, all land)
    return a


def _masked_fill_vjp(ctx, g):
    (mask,) = ctx.saved_tensors
    need = ctx.needs_input_grad
    grad_self = masked_fill(g, mask, 0) if need[0] else None
    if len(need) == 1:
        return grad_self
    grad_value = None
    if need[1]:
        from .pointwise import where
        from .reductions import sum as sum_op

        grad_value = sum_op(where(mask, g, _zeros(g, ())))
    return grad_self, grad_value


def _masked_fill_rules(differentiable, node):
    return dict(vjp=_masked_fill_vjp, saves=("mask",), differentiable=differentiable, node_name=node)


masked_fill_scalar = defop("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
                           _masked_fill_kernel,
                           **_masked_fill_rules(("self",), "MaskedFillBackward0"))
masked_fill_tensor = defop("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
                           _masked_fill_kernel,
                           **_masked_fill_rules(("self", "value"), "MaskedFillBackward1"))
masked_fill_scalar_ = defop("masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
                            _masked_fill_inplace_kernel,
                            **_masked_fill_rules(("self",), "MaskedFillBackward0"))
masked_fill_tensor_ = defop("masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)",
                            _masked_fill_inplace_kernel,
                            **_masked_fill_rules(("self", "value"), "MaskedFillBackward1"))
set_self_tangent_rules(masked_fill_scalar, masked_fill_scalar_, zeroed=(2,))
set_self_tangent_rules(masked_fill_tensor, masked_fill_tensor_)


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """``value`` (a number or a 0-dim tensor) where ``mask`` is True; ``mask`` and ``input`` broadcast."""
    op = masked_fill_tensor if isinstance(value, Tensor) else masked_fill_scalar
    return op(input, mask, value)


def masked_fill_(self: Tensor, mask: Tensor, value) -> Tensor:
    op = masked_fill_tensor_ if isinstance(value, Tensor) else masked_fill_scalar_
    return op(self, mask, value)


def _masked_scatter_kernel(a, mask, source):
    mask = np.asarray(mask)
    _check_bool_mask(mask, "masked_scatter_", capital=True)
    if seen_dtype(source) != seen_dtype(a):
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_tname(seen_dtype(a))} and {_tname(seen_dtype(source))}")
    shape = _broadcast_shape(mask.shape, a.shape)
    m = np.broadcast_to(mask, shape)
    n = int(m.sum())
    if source.size < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = np.array(np.broadcast_to(a, shape))
    out[m] = source.reshape(-1)[:n]
    return out


@writes_last
def _masked_scatter_inplace_kernel(a, mask, source):
    return _copy_into(a, _masked_scatter_kernel(a, mask, source))


def _masked_scatter_vjp(ctx, g):
    (mask,) = ctx.saved_tensors
    need = ctx.needs_input_grad
    grad_self = masked_fill(g, mask, 0) if need[0] else None
    grad_src = None
    if need[1]:
        from .shape import cat
        from .views import reshape

        shape = ctx.input_shapes[1]
        picked = masked_select(g, mask)
        missing = math.prod(shape) - picked.shape[0]
        if missing:
            picked = cat([picked, _zeros(g, (missing,))])
        grad_src = reshape(picked, shape)
    return grad_self, grad_src


_masked_scatter_rules = dict(vjp=_masked_scatter_vjp, saves=("mask",), differentiable=("self", "source"),
                             meta=("source_sym_sizes",))
masked_scatter = defop("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
                       _masked_scatter_kernel, **_masked_scatter_rules)
masked_scatter_ = defop("masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)",
                        _masked_scatter_inplace_kernel, **_masked_scatter_rules)
set_self_tangent_rules(masked_scatter, masked_scatter_)


def _masked_select_kernel(a, mask):
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast_shape(mask.shape, a.shape)
    return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)]


def _masked_select_vjp(ctx, g):
    (mask,) = ctx.saved_tensors
    shape = _broadcast_shape(ctx.input_shapes[0], tuple(mask.shape))
    return masked_scatter(_zeros(g, shape), mask, g)  # the engine sums a broadcast input's gradient back


masked_select = defop("masked_select(Tensor self, Tensor mask) -> Tensor", _masked_select_kernel,
                      vjp=_masked_select_vjp, saves=("mask",), differentiable=("self",))


def _nonzero_kernel(a):
    found = np.argwhere(a).astype(np.int64)
    # (torch fills an (ndim, count) buffer and returns it transposed: strides (1, count), whatever the count)
    return with_strides(found, (1, found.shape[0]))


_nonzero = defop("nonzero(Tensor self) -> Tensor", _nonzero_kernel, differentiable=())


def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    if not as_tuple:
        return _call(_nonzero, input, out=out)
    from .views import reshape, unbind

    if input.ndim == 0:
        input = reshape(input, (1,))
    return unbind(_nonzero(input), 1)  # (views of nonzero's column-major result, as torch's nonzero_numpy)


def argwhere(input: Tensor) -> Tensor:
    return _nonzero(input)


# ---- broadcasting ------------------------------------------------------------------------------------------


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to: torch's Python (``_refs._broadcast_shapes``) step for step, so a
    wrong shape fails as there. An int is a shape of one dim; None is skipped."""
    from ..size import Size

    given = tuple((shape,) if isinstance(shape, int) else shape for shape in shapes if shape is not None)
    for shape in given:
        if not isinstance(shape, Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    if not given:
        return Size([])
    common = [1] * builtins.max(len(shape) for shape in given)
    for i, shape in enumerate(given):
        for k in range(-1, -1 - len(shape), -1):  # trailing dims first, as PyTorch reports the partial result
            if shape[k] == common[k]:
                continue
            if common[k] == 1:
                if shape[k] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[k] = shape[k]
            if shape[k] != 1 and common[k] != shape[k]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[k]} at {k}! Mismatching "
                                   f"argument at index {i} had {shape}; but expected shape should be broadcastable "
                                   f"to {common}")
    return Size(common)


def broadcast_to(input: Tensor, size) -> Tensor:
    from .views import expand, normalize_shape

    return expand(input, normalize_shape((size,)))  # (one int is a size of one dim, as torch's parser reads it)


@tensors_as_one_argument("broadcast_tensors")
def broadcast_tensors(tensors: tuple) -> tuple:
    """The tensors expanded to their common shape."""
    from .views import expand

    shape = _broadcast_shape(*(tuple(t.shape) for t in tensors))
    # PyTorch's expand_outplace returns a tensor that already has the shape as is (no ExpandBackward0)
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


def meshgrid(*tensors, indexing: str | None = None):
    """Coordinate grids (torch's Python takes one list of the tensors too, and passes ``indexing`` only when
    given to its C++ operator, whose parser refuses a non-str one)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    try:
        return _meshgrid(tuple(tensors), indexing)
    except Exception:
        refuse_as_torch("meshgrid", (tensors,), {} if indexing is None else {"indexing": indexing})
        raise


def _meshgrid(tensors: tuple, indexing: str | None) -> tuple:
    from .views import expand, reshape

    refuse_non_tensors_among(tensors)  # (torch's parser refuses before its operator warns)
    if indexing is None:  # (torch warns, then calls the indexing overload, which refuses an empty list)
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                      "argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:  # (PyTorch checks every dtype first, then the indexing, then every tensor's dims)
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    order = list(tensors)
    swap = indexing == "xy" and len(order) >= 2
    if swap:  # 'xy' is 'ij' over (y, x, ...), with the first two grids handed back in (x, y) order
        order[0], order[1] = order[1], order[0]
    for t in order:  # (in the swapped order: the first one refused is the one PyTorch names)
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    shape = tuple(t.numel() for t in order)
    n = len(order)
    grids = [expand(reshape(t, (1,) * i + (-1,) + (1,) * (n - i - 1)), shape) for i, t in enumerate(order)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ---- splitting ---------------------------------------------------------------------------------------------


def _split_with_sizes_kernel(a, split_sizes, dim=0):
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    sizes = [operator.index(s) for s in split_sizes]  # (a float size fails, refused in the parser's words)
    if builtins.sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                           f"size at dimension {d}), but got split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(sliced(a, d, start, start + s))  # (an empty piece placed as torch places it)
        start += s
    return tuple(out)


def _split_with_sizes_vjp(ctx, *grads):
    from .shape import cat

    return cat(list(grads), ctx.attrs[0])


split_with_sizes = defop("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> "
                         "Tensor(a)[]",
                         _split_with_sizes_kernel, vjp=_split_with_sizes_vjp, attrs=("dim", "split_sizes"),
                         multi_output_view=True, meta=("self_sym_sizes",))


def split(tensor: Tensor, split_size_or_sections, dim: int = 0):
    """``torch.split``: torch's Python calls the tensor's ``split`` method (so a str, say, splits as a str)."""
    if not isinstance(tensor, Tensor):
        return tensor.split(split_size_or_sections, dim)
    return _split_method(tensor, split_size_or_sections, dim)


def _split_method(self: Tensor, split_size, dim: int = 0):
    """An int size (``split.Tensor``) or a list of sizes (``split_with_sizes``), as torch's Python picks; each
    through its parser (``_VF.split``, ``_VF.split_with_sizes``), which refuses a bool for a size or ``dim``."""
    if isinstance(split_size, Tensor):
        with contextlib.suppress(ValueError):  # (a tensor of several sizes stays one)
            split_size = int(split_size)
    if isinstance(split_size, int):
        if split_size.__class__ is builtins.bool:  # (an int to Python, not to torch's parser)
            raise argument_error("split", (self, split_size, dim), {})
        return tuple(_split_parsed(self, split_size, dim))
    if isinstance(split_size, tuple):
        split_size = list(split_size)
    elif not isinstance(split_size, list):
        # (anything else goes to torch's parser for ``split_with_sizes``, which takes only a list or tuple of ints
        # (or one int) there: a NumPy array, a range or a tensor of sizes is refused, which the kernel would read)
        error = argument_error("split_with_sizes", (self, split_size, dim), {})
        if error is not None:
            raise error
    return tuple(_split_with_sizes_parsed(self, split_size, dim))


def _split_int(self: Tensor, split_size, dim: int = 0):
    from .views import split as split_int

    return split_int(self, split_size, dim)


_split_parsed = guard_errors("split", _split_int)
_split_with_sizes_parsed = guard_errors("split_with_sizes", split_with_sizes)


_split_method.__qualname__ = "Tensor.split"


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0):
    from .views import slice as slice_op

    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 "
                           "dims")
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.dtype.name != "int64":
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, "
                               f"but got {_tname(spec.dtype.np)}")
        if spec.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional "
                               f"or one-dimensional tensor, but got a tensor with {spec.ndim} dims")
        spec = int(spec.item()) if spec.ndim == 0 else [int(v) for v in spec.tolist()]
    d = wrap_dim(dim, input.ndim)  # (after a tensor's checks, before the sections')
    n = input.shape[d]
    if isinstance(spec, (list, tuple)):
        bounds = [0] + [int(i) for i in spec] + [None]
    else:
        sections = int(spec)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        size, extra = divmod(n, sections)
        bounds, start = [0], 0
        for k in range(sections):
            start += size + (1 if k < extra else 0)
            bounds.append(start)
    return tuple(slice_op(input, d, bounds[k], bounds[k + 1], 1) for k in range(len(bounds) - 1))


def _split_along(input: Tensor, spec, dim: int, name: str, min_dims: int) -> tuple:
    if input.ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a "
                           f"tensor with {input.ndim} dimensions!")
    if not isinstance(spec, (list, tuple, Tensor)):
        n = input.shape[dim]
        if spec == 0 or n % spec:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {n} is not divisible by the split_size {spec}!")
        return tensor_split(input, int(spec), dim)
    return tensor_split(input, spec, dim)


def _split_spec(positional: tuple, keywords: dict):
    """The one ``sections`` int or ``indices`` list of hsplit/vsplit/dsplit, given by position or by torch's
    keyword names. The method's ints after the first are more indices (torch's ``*indices``), each read by
    ``__index__``; another mistake raises a TypeError that the argument guard words as torch does."""
    if len(positional) > 1 and not keywords:
        return [operator.index(i) for i in positional]
    given = [*positional, *(keywords.pop(key) for key in ("sections", "indices") if key in keywords)]
    if len(given) != 1 or keywords:
        raise TypeError("a split takes either sections or indices")
    return given[0]


def hsplit(input: Tensor, *indices_or_sections, **keywords) -> tuple:
    spec = _split_spec(indices_or_sections, keywords)
    return _split_along(input, spec, 0 if input.ndim == 1 else 1, "hsplit", 1)


def vsplit(input: Tensor, *indices_or_sections, **keywords) -> tuple:
    return _split_along(input, _split_spec(indices_or_sections, keywords), 0, "vsplit", 2)


def dsplit(input: Tensor, *indices_or_sections, **keywords) -> tuple:
    return _split_along(input, _split_spec(indices_or_sections, keywords), 2, "dsplit", 3)


# ---- set-like utilities (not differentiable) ---------------------------------------------------------------


def _refuse_complex(a, kernel_name: str) -> None:
    """PyTorch's unique kernels are dispatched over real types only (NumPy orders complex numbers)."""
    if a.dtype.kind == "c":
        raise unsupported(kernel_name, a.dtype)


def _unique_kernel(a, sorted=True, return_inverse=False, return_counts=False):
    _refuse_complex(a, "unique")
    # (PyTorch sorts, then keeps each element unequal to the one before it: every NaN is a value of its own)
    values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
    inv = inverse.reshape(a.shape).astype(np.int64) if return_inverse else np.zeros(0, np.int64)
    cnt = counts.astype(np.int64) if return_counts else np.zeros(0, np.int64)
    return values, inv, cnt


_unique2 = defop("_unique2(Tensor self, bool sorted=True, bool return_inverse=False, "
                 "bool return_counts=False) -> (Tensor, Tensor, Tensor)", _unique_kernel,
                 vjp=not_implemented("_unique2"))


def _unique_dim_of(a, dim: int) -> int:
    """The wrapped dim of PyTorch's unique-by-dim kernels, which refuse what they cannot split into slices: a
    0-d tensor (read through ``size(dim)``), and a size-0 dim other than the one selected."""
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    zero_dims = a.shape.count(0)
    if a.shape[d] == 0 and zero_dims > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
    if a.shape[d] != 0 and zero_dims:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    return d


def _unique_dim_kernel(a, dim, sorted=True, return_inverse=False, return_counts=False):
    _refuse_complex(a, "unique_dim")
    d = _unique_dim_of(a, dim)
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=d)
    return values, inverse.reshape(-1).astype(np.int64), counts.astype(np.int64)


_unique_dim = defop("unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
                    "bool return_counts=False) -> (Tensor, Tensor, Tensor)", _unique_dim_kernel,
                    vjp=not_implemented("unique_dim"))


def refuse_if(suspect: bool, name: str, args: tuple, kwargs: dict) -> None:
    """Where a cheap check finds a call of the operator ``name`` suspect (a kernel would take a truthy object for a
    bool, say), torch's parser error for it, if its parser refuses the arguments."""
    if suspect:
        error = argument_error(name, args, kwargs)
        if error is not None:
            raise error


def _not_bools(*values) -> bool:
    return any(value.__class__ is not builtins.bool for value in values)


def _pick_unique(result, return_inverse: bool, return_counts: bool):
    values, inverse, counts = result
    if not return_inverse and not return_counts:
        return values
    picked = (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return picked


def _unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
            dim: int | None = None):
    """Sorted unique values (NumPy's order, which is PyTorch's on CPU even for ``sorted=False``); the operators
    called as torch's Python calls them, the flags by keyword."""
    flags = {"sorted": sorted, "return_inverse": return_inverse, "return_counts": return_counts}
    if dim is None:
        refuse_if(_not_bools(sorted, return_inverse, return_counts), "_unique2", (input,), flags)
        result = _unique2(input, **flags)
    else:
        refuse_if(_not_bools(sorted, return_inverse, return_counts), "unique_dim", (input, dim), flags)
        result = _unique_dim(input, dim, **flags)
    return _pick_unique(result, return_inverse, return_counts)


def _unique_consecutive_kernel(a, return_inverse=False, return_counts=False, dim=None):
    # (PyTorch's dim kernel, whose dtype dispatch comes before the dim's range check, but for dim 0 of a vector)
    _refuse_complex(a, "unique" if dim is None or (dim == 0 and a.ndim == 1) else "unique_dim")
    if dim is None:
        flat = a.reshape(-1)
        change = np.ones(flat.shape[0], dtype=bool)
        change[1:] = flat[1:] != flat[:-1]
        values, inv_shape = flat[change], a.shape
    else:
        d = _unique_dim_of(a, dim)
        moved = np.moveaxis(a, d, 0)
        change = np.ones(moved.shape[0], dtype=bool)
        if moved.shape[0] > 1:
            change[1:] = (moved[1:] != moved[:-1]).reshape(moved.shape[0] - 1, -1).any(axis=1)
        values, inv_shape = np.moveaxis(moved[change], 0, d), (moved.shape[0],)
    group = np.cumsum(change) - 1
    counts = np.bincount(group, minlength=int(change.sum())) if group.size else np.zeros(0, np.int64)
    return (np.ascontiguousarray(values), group.reshape(inv_shape).astype(np.int64), counts.astype(np.int64))


_unique_consecutive = defop("unique_consecutive(Tensor self, bool return_inverse=False, "
                            "bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)",
                            _unique_consecutive_kernel,
                            vjp=not_implemented("unique_consecutive"))


def _unique_consecutive_picked(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                               dim: int | None = None):
    kwargs = {"return_inverse": return_inverse, "return_counts": return_counts, "dim": dim}
    refuse_if(_not_bools(return_inverse, return_counts), "unique_consecutive", (input,), kwargs)
    result = _unique_consecutive(input, **kwargs)
    return _pick_unique(result, return_inverse, return_counts)


def _dispatch_on_flags(fn: Callable, names: tuple[str, str, str, str], counts_index: int) -> Callable:
    """torch's two-level dispatch of ``unique``/``unique_consecutive`` on ``return_inverse`` (argument 2) and
    ``return_counts``, to four functions named ``names`` (inverse and counts, inverse, counts, neither)."""
    both, inverse, counts, neither = (renamed(fn, name) for name in names)
    return boolean_dispatch("return_inverse", 2,
                            boolean_dispatch("return_counts", counts_index, both, inverse),
                            boolean_dispatch("return_counts", counts_index, counts, neither))


unique = _dispatch_on_flags(_unique, ("_return_inverse_and_counts", "_return_inverse", "_return_counts",
                                      "_return_output"), 3)
unique_consecutive = _dispatch_on_flags(
    _unique_consecutive_picked, ("_consecutive_return_inverse_and_counts", "_consecutive_return_inverse",
                                 "_consecutive_return_counts", "_consecutive_return_output"), 1)


def _unique_method(self: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
                   dim: int | None = None):
    return unique(self, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts, dim=dim)


def _unique_consecutive_method(self: Tensor, return_inverse: bool = False, return_counts: bool = False,
                               dim: int | None = None):
    return unique_consecutive(self, return_inverse=return_inverse, return_counts=return_counts, dim=dim)


# (torch writes these methods in Python: its messages name them so)
_unique_method.__qualname__ = "Tensor.unique"
_unique_consecutive_method.__qualname__ = "Tensor.unique_consecutive"


@computes_bfloat16  # (bfloat16 weights are summed in double, as any other but float32: a float64 result)
def _bincount_kernel(a, weights=None, minlength=0):
    if a.dtype.kind not in "iu":  # (bool included: ATen's dispatch takes the integral types only)
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_tname(a)}'")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return np.bincount(a, minlength=minlength).astype(np.int64)
    w = np.asarray(weights)
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dt = np.float32 if w.dtype == np.float32 else np.float64
    return np.bincount(a, weights=w.astype(np.float64), minlength=minlength).astype(dt)


bincount = defop_without_derivative("bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
                                    _bincount_kernel, differentiable=("weights",))


def _c_double(x: float) -> str:
    """A double as C++'s stream prints it; the NaN aminmax makes of data holding one has its sign bit set."""
    return "-nan" if math.isnan(x) and math.copysign(1.0, x) < 0 else f"{x:g}"


def _histc_range(a, min, max) -> tuple[float, float]:
    """PyTorch's histc_select_outer_bin_edges, in doubles: the data's extrema for an empty range (an empty
    input's widened by one), checked before the input's dtype is."""
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        _refuse_complex(a, "aminmax_cpu")  # (PyTorch takes the extrema with aminmax, which refuses it first)
        lo, hi = float(a.min()), float(a.max())
        if a.dtype.name == "bfloat16":  # (its extrema come back rounded from float: every NaN is 0x7FC0, no sign)
            lo, hi = (math.nan if math.isnan(v) else v for v in (lo, hi))
        elif a.size > 1:  # (aminmax's comparisons make x86's default NaN, sign bit set; one element is itself)
            lo, hi = (-math.nan if math.isnan(v) else v for v in (lo, hi))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_c_double(lo)}, {_c_double(hi)}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return lo, hi


@computes_bfloat16  # (ATen bins bfloat16 in bfloat16 arithmetic, each step rounded: not in float)
def _histc_kernel(a, bins=100, min=0, max=0):
    from .statistics import check_bin_counts, refuse_unbinnable, thread_histograms

    check_bin_counts((bins,))  # (histogramdd's checks, in its words)
    lo, hi = _histc_range(a, min, max)
    if a.dtype.kind == "b":  # (torch's histc makes its bin edges with linspace in the input's dtype first)
        raise unsupported("linspace_cpu", a.dtype)
    refuse_unbinnable(a)
    scalar = a.dtype.type
    lo, hi = scalar(lo), scalar(hi)  # (the edges are in the input's dtype)
    flat = a.reshape(-1)
    in_range = (flat >= lo) & (flat <= hi)
    inside = flat[in_range]
    # (ATen's ((elt - lo) * bins) / (hi - lo), each step in the input's dtype with bins cast to it, truncated)
    pos = np.asarray((inside - lo) * scalar(bins) / (hi - lo), dtype=np.float64).astype(np.int64)
    pos[pos == bins] = bins - 1  # the right edge belongs to the last bin
    return thread_histograms(pos, in_range, bins, a.dtype)


_histc = defop("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor", _histc_kernel,
               differentiable=())


def histc(input: Tensor, bins: int = 100, min=0, max=0, *, out=None) -> Tensor:
    # histc has no gradient and its output never requires grad: run it on a detached input
    if not isinstance(out, Tensor) or not isinstance(input, Tensor):
        return _call(_histc, input.detach(), bins, min, max, out=out)
    from ..autograd.forward_ad import refuse_out_tangents

    if out.dtype != input.dtype:  # (torch's histc_out checks it before anything else, in histogram's words)
        raise RuntimeError(f"torch.histogram: input tensor and hist tensor should have the same dtype, but got input "
                           f"{cpp_type_name(input.dtype)} and hist {cpp_type_name(out.dtype)}")
    result = _call(_histc, input.detach(), bins, min, max, out=out)
    # (the detached input's tangent went unseen: torch's out= function refuses it after writing, as out's own)
    refuse_out_tangents("histc", (input,))
    return result


def _searchsorted_kernel(sorted_sequence, values, out_int32=False, right=False, side=None, sorter=None):
    seq = np.asarray(sorted_sequence)
    vals = np.asarray(values)
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side == "left" and right:
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of "
                           "left while right was True")
    if sorter is not None:
        sorter = np.asarray(sorter)
        _check_sorter(seq, sorter)
    if vals.ndim == 0 and seq.ndim != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({seq.ndim}) and input value's dim(0) numel(1)")
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but "
                           "got 0 dimension")
    if seq.ndim > 1 and (vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}")
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, axis=-1)
    how = "right" if (right or side == "right") else "left"
    dt = result_dtype(seq, vals) if seq.dtype != vals.dtype else seq.dtype
    if np.dtype(dt).kind in "bc":  # (its CPU kernel has no bool or complex instance)
        raise unsupported("searchsorted_out_cpu", dt)
    seq, vals = seq.astype(dt, copy=False), vals.astype(dt, copy=False)
    if vals.size == 0:  # (PyTorch returns early; rows of no values cannot be reshaped with -1)
        out = np.zeros(vals.shape)
    elif not _ascending(seq):  # (NaN among them, or unsorted: NumPy's search answers otherwise than ATen's)
        out = _aten_binary_search(*_search_rows(seq, vals), how == "right").reshape(vals.shape)
    elif seq.ndim == 1:
        out = np.searchsorted(seq, vals, side=how)
    else:
        rows_s, rows_v = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])
        out = np.stack([np.searchsorted(s, v, side=how) for s, v in zip(rows_s, rows_v)]).reshape(vals.shape)
    return np.asarray(out, dtype=np.int32 if out_int32 else np.int64)


def _ascending(seq: np.ndarray) -> bool:
    """Whether every row of boundaries is sorted and free of NaN: then NumPy's binary search and ATen's agree;
    otherwise their answers depend on how each walks the row."""
    if seq.dtype.kind == "f" and np.isnan(seq).any():
        return False
    return bool((seq[..., 1:] >= seq[..., :-1]).all())


def _search_rows(seq: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boundaries and values as matching rows: one row of boundaries for all values, or one per row."""
    if seq.ndim == 1:
        return seq[None], vals.reshape(1, -1)
    return seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])


def _aten_binary_search(seq_rows: np.ndarray, value_rows: np.ndarray, right: bool) -> np.ndarray:
    """ATen's lower/upper bound loop, every value at once, for boundaries that are not ascending: NumPy orders NaN
    after every number, where ATen's comparisons with NaN are false and send its search right, and NumPy starts
    each search of increasing values where the previous one ended."""
    n = seq_rows.shape[-1]
    rows = np.arange(seq_rows.shape[0])[:, None]
    start = np.zeros(value_rows.shape, dtype=np.int64)
    end = np.full(value_rows.shape, n, dtype=np.int64)
    searching = start < end
    while searching.any():
        mid = start + ((end - start) >> 1)
        mid_value = seq_rows[rows, np.minimum(mid, n - 1)]
        with np.errstate(invalid="ignore"):
            after_mid = ~(mid_value > value_rows) if right else ~(mid_value >= value_rows)
        start = np.where(searching & after_mid, mid + 1, start)
        end = np.where(searching & ~after_mid, mid, end)
        searching = start < end
    return start


def _check_sorter(seq: np.ndarray, sorter: np.ndarray) -> None:
    """PyTorch checks the sorter (shape, dtype, then its indices) before the boundaries and the values."""
    if sorter.shape != seq.shape:
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got "
                           f"boundary tensor {list(seq.shape)}and got sorter tensor {list(sorter.shape)}")
    if sorter.dtype != np.int64:
        raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{_tname(sorter.dtype)}")
    if sorter.size:
        if sorter.ndim == 0:  # (PyTorch reads the last size of a 0-d sorter)
            raise RuntimeError("ArrayRef: attempted to access back() of empty list")
        if sorter.min() < 0 or sorter.max() >= sorter.shape[-1]:
            raise RuntimeError("torch.searchsorted(): sorter index out of range")


_searchsorted = defop("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
                      "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor",
                      _searchsorted_kernel, differentiable=())


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter=None, out=None) -> Tensor:
    values = _value_tensor(input)
    kwargs = {"out_int32": out_int32, "right": right, "side": side, "sorter": sorter}
    if out is not None:
        _check_searchsorted_out(out, sorted_sequence, values, kwargs)
    return _searched(sorted_sequence, values, sorter, out, kwargs)


def _searched(boundaries: Tensor, values: Tensor, sorter, out, kwargs: dict) -> Tensor:
    """``searchsorted``'s result, with torch's warnings for non-contiguous inputs: its kernel copies them (and
    warns) after its checks, also where its dtype dispatch then refuses the common dtype."""
    try:
        result = _call(_searchsorted, boundaries, values, out=out, **kwargs)
    except NotImplementedError:
        _warn_noncontiguous_inputs(values, boundaries, sorter)
        raise
    _warn_noncontiguous_inputs(values, boundaries, sorter)
    return result


def _warn_noncontiguous_inputs(values: Tensor, boundaries: Tensor, sorter) -> None:
    """PyTorch's CPU kernel copies a non-contiguous values/boundaries/sorter tensor to a contiguous one, warning
    once a process for each (after its checks, and not for an empty input it returns early on)."""
    if values.numel() == 0:
        return
    for role, tensor in (("input value", values), ("boundary", boundaries), ("sorter", sorter)):
        if isinstance(tensor, Tensor) and not tensor.is_contiguous():
            warn_once_at_caller(f"searchsorted {role}", _NONCONTIGUOUS_SEARCH.format(role=role))


_NONCONTIGUOUS_SEARCH = (
    "torch.searchsorted(): {role} tensor is non-contiguous, this will lower the performance due to extra data copy "
    "when converting non-contiguous tensor to contiguous, please use contiguous {role} tensor if possible. This "
    "message will only appear once per program.")


def _check_searchsorted_out(out, boundaries: Tensor, values: Tensor, kwargs: dict) -> None:
    """PyTorch's searchsorted_pre_check holds out= to the index dtype out_int32 asks for, after its other checks
    (the op's own, run first where out= is refused)."""
    out_int32 = kwargs["out_int32"]
    if not isinstance(out, Tensor) or out._data.dtype == (np.int32 if out_int32 else np.int64):
        return
    _searchsorted(boundaries, values, **kwargs)
    raise RuntimeError(f"torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                       f"Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype "
                       f"{_tname(out._data.dtype)} and out_int32 flag is {bool(out_int32)}")


def _value_tensor(value):
    """A Python number as a 0-dim tensor of its natural dtype (searchsorted's Scalar overload)."""
    if isinstance(value, Tensor):
        return value
    from .._factories import tensor

    return tensor(value)


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False, out=None) -> Tensor:
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    values = _value_tensor(input)
    kwargs = {"out_int32": out_int32, "right": right}
    if out is not None:
        _check_searchsorted_out(out, boundaries, values, kwargs)
    return _searched(boundaries, values, None, out, kwargs)


# ---- cumulative extremes and differences -------------------------------------------------------------------


def _cum_extreme(a, dim, ufunc):
    name = "cummax" if ufunc is np.maximum else "cummin"
    if a.ndim == 0:
        if dim not in (0, -1):
            raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
        return a.copy(), np.zeros((), np.int64)
    if a.size == 0:  # (torch reads neither the dim nor the dtype of an empty input)
        return a.copy(), np.zeros(a.shape, np.int64)
    d = wrap_dim(dim, a.ndim)
    if a.dtype.kind == "c":  # (a 0-d input is copied without dispatch, as in PyTorch)
        raise unsupported(f"{name}_cpu", a.dtype)
    values = running(ufunc, a, d, a.dtype)
    positions = np.arange(a.shape[d], dtype=np.int64).reshape((-1,) + (1,) * (a.ndim - d - 1))
    # an element takes the lead when it equals the running extreme (latest wins on ties) or is NaN
    hit = (a == values) | (np.isnan(a) if a.dtype.kind == "f" else False)
    indices = running(np.maximum, np.where(hit, positions, 0), d, np.dtype(np.int64))
    return values, indices.astype(np.int64)


def _cummax_kernel(a, dim):
    return _cum_extreme(a, dim, np.maximum)


def _cummin_kernel(a, dim):
    return _cum_extreme(a, dim, np.minimum)


def _cum_extreme_vjp(ctx, g_values, g_indices):
    (dim,) = ctx.attrs
    (indices,) = ctx.saved_tensors
    shape = ctx.input_shapes[0]
    if not shape:
        return g_values
    if 0 in shape:  # (its dim is never checked: nothing to scatter)
        return _zeros(g_values, shape)
    return scatter_add(_zeros(g_values, shape), dim, indices, g_values)


cummax = defop("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)", _cummax_kernel,
               vjp=_cum_extreme_vjp, attrs=("dim",), saves=("result1",))
cummin = defop("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)", _cummin_kernel,
               vjp=_cum_extreme_vjp, attrs=("dim",), saves=("result1",))


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None, *, out: Tensor | None = None) -> Tensor:
    """``torch.diff``; with ``out=``, its last difference is written there by ``sub(..., out=)`` (or
    ``logical_xor``), as PyTorch's diff_out does, with that operator's refusals."""
    from .pointwise import logical_xor, sub
    from .shape import cat
    from .variants import copy_out
    from .views import narrow

    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    parts = []
    for extra in (prepend, append):
        if extra is not None and extra.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    if prepend is not None:
        parts.append(prepend)
    parts.append(input)
    if append is not None:
        parts.append(append)
    x = cat(parts, d) if len(parts) > 1 else input
    for step in range(n):
        length = x.shape[d]
        if length == 0:
            break
        hi, lo = narrow(x, d, 1, length - 1), narrow(x, d, 0, length - 1)
        difference = logical_xor if x.dtype.name == "bool" else sub
        if out is not None and step == n - 1:
            return difference(hi, lo, out=out)
        x = difference(hi, lo)
    if out is not None:
        copy_out((x,), (out,))
        return out
    return x


# ---- registration ------------------------------------------------------------------------------------------


def _cat_alias(tensors, dim: int = 0, *, out=None) -> Tensor:
    from .shape import cat

    return _call(cat, tensors, dim, out=out)


def _unflatten_method(self: Tensor, dim: int, sizes) -> Tensor:
    """torch's Python ``Tensor.unflatten``: the truth of ``sizes`` first (a NumPy array's or a tensor's of several
    elements is ambiguous, their error), then its parser's refusals (an array, a range: no list of ints; ``dim`` an
    int only)."""
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if not isinstance(sizes, (list, tuple)):
        error = argument_error("unflatten", (dim, sizes), {}, method=True)
        if error is not None:
            raise error
    return _unflatten_parsed(self, dim, sizes)


_unflatten_parsed = guard_errors("unflatten", unflatten, method=True)


PUBLIC = {
    "concat": _cat_alias, "concatenate": _cat_alias, "hstack": hstack, "vstack": vstack, "row_stack": vstack,
    "dstack": dstack, "column_stack": column_stack,
    "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "atleast_3d": atleast_3d,
    "unflatten": unflatten, "tile": tile, "repeat_interleave": repeat_interleave,
    "flip": flip, "fliplr": fliplr, "flipud": flipud, "roll": roll, "rot90": rot90,
    "gather": gather, "scatter": scatter, "scatter_add": scatter_add, "scatter_reduce": scatter_reduce,
    "index_select": index_select, "index_add": index_add, "index_copy": index_copy, "index_fill": index_fill,
    "masked_fill": masked_fill, "masked_scatter": masked_scatter, "masked_select": masked_select,
    "take_along_dim": take_along_dim, "narrow_copy": narrow_copy, "nonzero": nonzero, "argwhere": argwhere,
    "broadcast_to": broadcast_to, "broadcast_tensors": broadcast_tensors,
    "broadcast_shapes": broadcast_shapes, "meshgrid": meshgrid, "tensor_split": tensor_split, "split": split,
    "split_with_sizes": split_with_sizes,
    "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
    "unique": unique, "unique_consecutive": unique_consecutive, "bincount": bincount, "histc": histc,
    "searchsorted": searchsorted, "bucketize": bucketize, "cummax": cummax, "cummin": cummin, "diff": diff,
}

METHODS = {
    "unflatten": _unflatten_method, "repeat": _repeat_method, "tile": _tile_method,
    "repeat_interleave": repeat_interleave,
    "flip": _flip_method, "fliplr": fliplr, "flipud": flipud, "roll": roll, "rot90": rot90,
    "gather": gather, "scatter": scatter, "scatter_": scatter_, "scatter_add": scatter_add,
    "scatter_add_": scatter_add_, "scatter_reduce": scatter_reduce, "scatter_reduce_": scatter_reduce_,
    "index_select": index_select, "index_add": index_add, "index_add_": index_add_, "index_copy": index_copy,
    "index_copy_": index_copy_, "index_fill": index_fill, "index_fill_": index_fill_,
    "masked_fill": masked_fill, "masked_fill_": masked_fill_, "masked_scatter": masked_scatter,
    "masked_scatter_": masked_scatter_, "masked_select": masked_select, "take_along_dim": take_along_dim,
    "narrow_copy": narrow_copy, "nonzero": nonzero, "argwhere": argwhere, "broadcast_to": broadcast_to,
    "tensor_split": tensor_split, "split": _split_method, "split_with_sizes": split_with_sizes,
    "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit, "unique": _unique_method,
    "unique_consecutive": _unique_consecutive_method, "bincount": bincount, "histc": histc, "cummax": cummax,
    "cummin": cummin, "diff": diff,
}


# ---- small helpers PyTorch has as functions and Tensor methods ----------------------------------------------


def ravel(input: Tensor) -> Tensor:
    """``contiguous().view(-1)``: a view of a contiguous tensor, else a copy (CloneBackward0) viewed."""
    from .views import view

    return view(input.contiguous(), (-1,))


def is_nonzero(input: Tensor) -> bool:
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Tensor) -> bool:
    return kind_of(input._data.dtype) in "ifc"


def get_device(input: Tensor) -> int:
    """-1 for a CPU tensor, else the GPU's index (PyTorch's)."""
    device = input.device
    return -1 if device.type == "cpu" else (device.index or 0)


def _triangle_indices(upper: bool, row: int, col: int, offset: int, dtype) -> np.ndarray:
    from ..backend.dtypes import int64, to_dtype

    dt = to_dtype(dtype if dtype is not None else int64)
    name = "triu_indices" if upper else "tril_indices"
    for what, n in (("row", row), ("col", col)):
        if n < 0:  # (PyTorch's check_args, worded without a space)
            raise RuntimeError(f"{what} must be non-negative, got{n}")
    if dt.np not in (np.int32, np.int64):  # (PyTorch's kernel is dispatched over int and long only)
        raise unsupported(name, dt.np)
    mask = np.triu(np.ones((row, col), dtype=bool), offset) if upper else np.tril(np.ones((row, col), dtype=bool),
                                                                                  offset)
    return np.stack(np.nonzero(mask)).astype(dt.np)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None,
                 pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The (row, column) indices of the lower triangle of a ``row`` x ``col`` matrix, row by row."""
    from .._factories import _finish

    return _finish(_triangle_indices(False, row, col, offset, dtype), requires_grad, device, pin_memory)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None,
                 pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The (row, column) indices of the upper triangle of a ``row`` x ``col`` matrix, row by row."""
    from .._factories import _finish

    return _finish(_triangle_indices(True, row, col, offset, dtype), requires_grad, device, pin_memory)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a number)."""
    a, b = _isin_operand(elements), _isin_operand(test_elements)
    if a.dtype.char in BAREBONES_UNSIGNED_CHARS or b.dtype.char in BAREBONES_UNSIGNED_CHARS:
        _refuse_barebones_isin(test_elements, a, b)
    return _wrap(np.asarray(np.isin(a, b, invert=invert)))


def _refuse_barebones_isin(test_elements, a: np.ndarray, b: np.ndarray) -> None:
    """torch's isin with a tensor of test elements (``a``: the elements, a number being a 0-dim tensor of its
    type): against few test elements each element is checked in a kernel that promotes as ``result_type`` and has
    no barebones unsigned instantiation; against many both are concatenated (promoting as ``cat``: uint32 with
    int64 refused) and sorted, which works. A number as ``test_elements`` is an ``eq``, which takes them."""
    if not isinstance(test_elements, Tensor) or a.size == 0:
        return
    # (numpy's heuristic, as ATen takes it: 10 * n ** 0.145, truncated)
    if b.size < int(10.0 * a.size ** 0.145):
        common = result_dtype(a, b)
        if common.char in BAREBONES_UNSIGNED_CHARS:
            raise unsupported("isin_default_cpu", common)
    else:
        result_type_of([from_numpy_dtype(a.dtype), from_numpy_dtype(b.dtype)], [], [])


def _isin_operand(value) -> np.ndarray:
    """An operand's data; torch's isin has no kernel for bool or complex (a number counts as its default type)."""
    data = value._data if isinstance(value, Tensor) else np.asarray(value)
    if data.dtype.kind in "bc":
        raise RuntimeError(f"Unsupported input type encountered for isin(): {scalar_type_name(data.dtype)}")
    return data


def _scatter_views():
    from .views import as_strided_scatter, diagonal_scatter, select_scatter, slice_scatter

    return {"select_scatter": select_scatter, "slice_scatter": slice_scatter, "diagonal_scatter": diagonal_scatter,
            "as_strided_scatter": as_strided_scatter}


PUBLIC.update({"ravel": ravel, "is_nonzero": is_nonzero, "is_same_size": is_same_size, "is_signed": is_signed,
               "tril_indices": tril_indices, "triu_indices": triu_indices, "isin": isin})
METHODS.update({"ravel": ravel, "is_nonzero": is_nonzero, "is_same_size": is_same_size, "is_signed": is_signed,
                "get_device": get_device, **_scatter_views()})
