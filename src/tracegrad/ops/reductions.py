"""Reductions over dimensions (``dim``/``keepdim``). The core set; more live in reductions_extra.py."""

from __future__ import annotations

from ._util import wrap_dims


def _dims_arg(dim, ndim: int, one_by_one: bool = False):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    if not ndim:
        wrap_dims(dim, 0)  # (a 0-d tensor takes dim 0 or -1 only: anything else is PyTorch's IndexError)
        return None
    return wrap_dims(dim, ndim, one_by_one)


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


def mean(self, dim=None, keepdim: bool = False, dtype=None):
    """The mean backward formulas call (``dtype`` positional), recorded as PyTorch's ``mean.dim``
    (MeanBackward1). The operator is declared in reductions_extra.py, which imports this module."""
    from .reductions_extra import _mean_dim

    return _mean_dim(self, dim, keepdim, dtype=dtype)


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
    from .views import normalize_shape

    return normalize_shape(size)
