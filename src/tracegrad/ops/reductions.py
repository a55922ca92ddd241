"""Reductions over dimensions (``dim``/``keepdim``). The core set; more live in reductions_extra.py."""

from __future__ import annotations

import math

import numpy as np

from ._util import wrap_dims
from .registry import defop


def _dims_arg(dim, ndim: int):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    if not ndim:
        wrap_dims(dim, 0)  # (a 0-d tensor takes dim 0 or -1 only: anything else is PyTorch's IndexError)
        return None
    return wrap_dims(dim, ndim)


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


def sum(self, dim=None, keepdim: bool = False, dtype=None):
    """The sum backward formulas call (``dtype`` positional), recorded as the public ``sum``: SumBackward0
    for a full sum, SumBackward1 (``sum.dim_IntList``) over dimensions, as in PyTorch."""
    from .reductions_extra import _sum_dim, _sum_full

    if dim is None and not keepdim:
        return _sum_full(self, dtype=dtype)
    return _sum_dim(self, dim, keepdim, dtype=dtype)


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
             _mean_kernel, vjp=_mean_vjp, attrs=("dim", "keepdim"), meta=("self_sym_numel", "self_sym_sizes"),
             jvp=lambda args, outs, ts: mean(ts[0], *args[1:]))


def sum_to_size(self, size) -> object:
    """``self`` summed down to ``size`` as PyTorch's ``sum_to`` does, and so recorded as in PyTorch: a sum over
    the broadcast dimensions kept as size 1 (SumBackward1), then a view dropping the leading ones
    (ViewBackward0); a full sum (SumBackward0) for size ``()``; ``self`` itself when nothing is reduced. The
    engine reduces broadcast gradients with it, as PyTorch's engine does with ``sum_to``."""
    shape = tuple(size)
    have = self._data.shape
    lead = len(have) - len(shape)
    if lead < 0 or any(s != 1 and s != h for s, h in zip(shape, have[lead:])):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(have)}}}.")
    from .reductions_extra import sum as public_sum  # (this module's ``sum`` is not named as PyTorch's)
    from .views import view

    if not shape:
        return public_sum(self)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and have[lead + i] != 1)
    out = public_sum(self, dims, True) if dims else self
    return view(out, shape) if lead else out


METHODS = {"sum": sum, "mean": mean, "sum_to_size": lambda self, *size: sum_to_size(self, _sizes(size))}


def _sizes(size):
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
