"""The handful of operators that autograd internals call (accumulation, casts, scatter of views).

Importing them through this module keeps the autograd layer free of import cycles with ``ops/``.
"""

from __future__ import annotations

import numpy as np

from ._tensor import Tensor, _wrap
from .ops.creation import clone, full_like, new_zeros, ones_like, to_dtype, zeros_like  # noqa: F401
from .ops.creation import detach as detach  # noqa: F401
from .ops.indexing import index_put, index_tensor, take  # noqa: F401
from .ops.pointwise import add, add_  # noqa: F401
from .ops.reductions import sum_to_size  # noqa: F401
from .ops.shape import stack  # noqa: F401
from .ops.views import reshape, select  # noqa: F401


def real(t: Tensor) -> Tensor:
    from .ops.complex_ops import real as real_part

    return real_part(t)


def add_inplace(dst: Tensor, src: Tensor) -> None:
    add_(dst, src)


def _empty_laid_out(t: Tensor, layout) -> np.ndarray:
    """An uninitialised array for a copy of ``t``: with the strides of the array ``layout`` (a dense one), or of
    ``t`` itself for None (as ``new_empty_strided``), or C-contiguous for ``layout=False``."""
    from .autograd.grad_layout import empty_strided_as

    if layout is False:
        return np.empty_like(t._data, order="C")
    return empty_strided_as(t._data if layout is None else layout, t._data.dtype)


def detach_copy(t: Tensor, layout=None) -> Tensor:
    """A copy of ``t``'s values outside any graph, with the strides ``layout`` says (``_empty_laid_out``)."""
    out = _empty_laid_out(t, layout)
    np.copyto(out, t._data)
    return _wrap(out)


def copy_to_new(t: Tensor, layout=None) -> Tensor:
    """PyTorch's ``new_empty_strided(...).copy_(t)``: a copy recorded (under grad mode) as CopyBackwards
    (``layout``: as ``_empty_laid_out``)."""
    from .ops.creation import copy_

    return copy_(_wrap(_empty_laid_out(t, layout)), t)


def to_numpy_dtype(t: Tensor, np_dtype) -> Tensor:
    from .backend.dtypes import from_numpy_dtype

    return to_dtype(t, from_numpy_dtype(np_dtype))


def to_cpu_copy(t: Tensor) -> Tensor:
    data = t._data
    if not isinstance(data, np.ndarray):
        data = data.get()
    out = _wrap(np.array(data, copy=True))
    out._rg = False
    return out
