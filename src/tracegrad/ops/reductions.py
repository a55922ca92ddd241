"""Reductions over dimensions (``dim``/``keepdim``). The core set; more live in reductions_extra.py."""

from __future__ import annotations

import math

import numpy as np

from ._util import sum_to_shape, wrap_dims
from .registry import defop


def _dims_arg(dim, ndim: int):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    return wrap_dims(dim, ndim) if ndim else None


def _sum_kernel(a, dim=None, keepdim=False, dtype=None):
    axes = _dims_arg(dim, a.ndim)
    if dtype is None and a.dtype.kind in "bui":
        dtype = np.int64
    if a.__class__ is np.ndarray:  # what np.sum runs for an ndarray, minus its Python-level dispatch
        return _add_reduce(a, axis=axes, dtype=dtype, keepdims=keepdim)
    return np.sum(a, axis=axes, keepdims=keepdim, dtype=dtype)


_add_reduce = np.add.reduce


def expand_reduced_grad(g, input_shape: tuple, dim, keepdim: bool):
    """Bring the gradient of a reduction back to the input's shape (unsqueeze reduced dims, expand)."""
    from .views import expand, reshape

    nd = len(input_shape)
    axes = _dims_arg(dim, nd)
    if not keepdim and nd:
        axes_all = range(nd) if axes is None else axes
        shape = list(input_shape)
        for ax in axes_all:
            shape[ax] = 1
        g = reshape(g, tuple(shape))
    return expand(g, input_shape)


def _sum_vjp(ctx, g):
    dim, keepdim = ctx.attrs
    return expand_reduced_grad(g, ctx.input_shapes[0], dim, keepdim)


sum = defop("sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
            _sum_kernel, vjp=_sum_vjp, attrs=("dim", "keepdim"),
            jvp=lambda args, outs, ts: sum(ts[0], *args[1:]))


def _mean_kernel(a, dim=None, keepdim=False, dtype=None):
    if dtype is None and a.dtype.kind not in "fc":
        from ..backend.dtypes import from_numpy_dtype

        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {from_numpy_dtype(a.dtype).name.capitalize()}")
    axes = _dims_arg(dim, a.ndim)
    return np.mean(a, axis=axes, keepdims=keepdim, dtype=dtype)


def _mean_vjp(ctx, g):
    dim, keepdim = ctx.attrs
    shape = ctx.input_shapes[0]
    axes = _dims_arg(dim, len(shape))
    count = math.prod(shape) if axes is None else math.prod(shape[d] for d in axes)
    from .pointwise import div

    return div(expand_reduced_grad(g, shape, dim, keepdim), count)


mean = defop("mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
             _mean_kernel, vjp=_mean_vjp, attrs=("dim", "keepdim"),
             jvp=lambda args, outs, ts: mean(ts[0], *args[1:]))


def _sum_to_size_kernel(a, size):
    return sum_to_shape(a, tuple(size))


def _sum_to_size_vjp(ctx, g):
    from .views import expand

    return expand(g, ctx.input_shapes[0])


sum_to_size = defop("sum_to_size(Tensor self, SymInt[] size) -> Tensor", _sum_to_size_kernel, vjp=_sum_to_size_vjp)


METHODS = {"sum": sum, "mean": mean, "sum_to_size": lambda self, *size: sum_to_size(self, _sizes(size))}


def _sizes(size):
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
