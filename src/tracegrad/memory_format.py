"""Memory formats (``torch.contiguous_format``, ``torch.channels_last``, ...): the element order of a dense tensor;
and the layouts (``torch.strided``, ...), of which tracegrad's tensors have the one.

A tensor's layout is its NumPy array's strides. ``contiguous_format`` is C order; ``channels_last`` orders a 4-D
(N, C, H, W) tensor as N, H, W, C in memory (``channels_last_3d``: 5-D, N, D, H, W, C); ``preserve_format``, the
default of ``clone`` and the ``*_like`` factories, keeps the input's strides when it is dense and non-overlapping
and otherwise the order of its strides, as PyTorch does.
"""

from __future__ import annotations

import numpy as np

from ._strides import (
    contiguous_strides,
    copy_preserving_layout,
    dense_in_order,
    element_strides,
    empty_strided,
    preserve_format_strides,
)
from ._transposing_copy import copy_into


class _NamedOption:
    """An option object of torch's named by its attribute in the ``torch`` namespace (``torch.channels_last``):
    shown and pickled by that name, so unpickling gives the module's own object."""

    __slots__ = ("_name",)

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:
        return self._name


class memory_format(_NamedOption):  # noqa: N801 - PyTorch's class name
    __slots__ = ()
    __module__ = "tracegrad"  # (torch's C type prints as <class 'torch.memory_format'>)

    def __init__(self, name: str) -> None:
        self._name = name


class layout(_NamedOption):  # noqa: N801 - PyTorch's class name
    """A tensor layout (``torch.strided``, ``torch.sparse_coo``, ...): one object per name, compared by identity.
    tracegrad's tensors are all strided; the other layouts exist to be named (in ``layout=`` arguments)."""

    __slots__ = ()
    __module__ = "tracegrad"  # (torch's C type prints as <class 'torch.layout'>)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.layout' instances")


def _named_layout(name: str) -> layout:
    made = object.__new__(layout)  # (past ``layout.__new__``, which refuses as torch's does)
    made._name = name
    return made


strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn, jagged = (
    _named_layout(name) for name in
    ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged"))


def refuse_unsupported_layout(value: object) -> None:
    """tracegrad's tensors are all strided: a call asking for another layout (``zeros(2, layout=torch.sparse_coo)``)
    is refused rather than answered with a strided tensor."""
    if value.__class__ is layout and value is not strided:
        raise NotImplementedError(f"tracegrad has strided tensors only: layout={value!r} is not supported")


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

# channels_last(_3d): the axes in memory order (channels last), for a tensor of that many dimensions
_CHANNELS_LAST_ORDER = {4: (0, 2, 3, 1), 5: (0, 2, 3, 4, 1)}


def format_required(fn: str) -> TypeError:
    """torch's parser error for ``memory_format=None`` where the schema's memory format is not optional (its
    default, contiguous_format, is no None)."""
    return TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not NoneType")


def _format_ndim(fmt: memory_format) -> int:
    return 4 if fmt is channels_last else 5


def is_in_format(a: np.ndarray, fmt: memory_format | None) -> bool:
    """``Tensor.is_contiguous(memory_format=fmt)`` for the array ``a``."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return bool(a.flags.c_contiguous)
    if a.ndim != _format_ndim(fmt):
        return False
    if a.size == 0:  # (NumPy calls any empty array contiguous; torch's channels-last test reads the strides)
        return _dense_from_fastest(a.shape, element_strides(a), _CHANNELS_LAST_ORDER[a.ndim][::-1])
    return bool(a.transpose(_CHANNELS_LAST_ORDER[a.ndim]).flags.c_contiguous)


def _dense_from_fastest(shape: tuple, strides: tuple, order: tuple) -> bool:
    """Whether the dims longer than 1, taken from the fastest in ``order``, each step over the ones before."""
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def format_strides(shape: tuple, fmt: memory_format) -> tuple:
    """PyTorch's element strides for a new tensor of ``shape`` in ``fmt`` (contiguous or channels-last)."""
    if fmt is contiguous_format:
        return contiguous_strides(shape)
    if len(shape) != _format_ndim(fmt):
        raise RuntimeError(f"required rank {_format_ndim(fmt)} tensor to use {fmt._name} format")
    memory_order = _CHANNELS_LAST_ORDER[len(shape)]
    # (c10's channels-last strides multiply by an empty dim's 0, where its contiguous ones step over it as 1)
    return dense_in_order(shape, memory_order[::-1], empty_dims_as_one=False)


def like_strides(a: np.ndarray, fmt: memory_format | None) -> tuple:
    """The element strides of ``torch.empty_like(a, memory_format=fmt)`` (``None`` means ``preserve_format``)."""
    if fmt is None or fmt is preserve_format:
        return preserve_format_strides(a)
    return format_strides(a.shape, fmt)


def copy_in_format(a: np.ndarray, fmt: memory_format | None, dtype=None) -> np.ndarray:
    """A copy of ``a`` (cast to ``dtype``) laid out as ``torch.empty_like(a, memory_format=fmt)``."""
    if fmt is None or fmt is preserve_format:
        return copy_preserving_layout(a, dtype)
    fresh = empty_strided(a.shape, format_strides(a.shape, fmt), a.dtype if dtype is None else dtype)
    copy_into(fresh, a)  # (= np.copyto, by cache lines for a transpose)
    return fresh


def suggests_channels_last(a: np.ndarray) -> bool:
    """Whether PyTorch's ``suggest_memory_format()`` names channels_last (4-D) or channels_last_3d (5-D) for an
    array with ``a``'s strides: c10's ``is_channels_last_strides_2d``/``_3d`` heuristic, which the CPU kernels
    with a channels-last variant dispatch on (and name their dtype errors after)."""
    if a.ndim not in (4, 5):
        return False
    sizes, strides = a.shape, [s // a.itemsize for s in a.strides]
    if strides[1] == 0:  # a trivial channel dim: NCHW by default
        return False
    least = 0
    for d in (1, 4, 3, 2, 0) if a.ndim == 5 else (1, 3, 2, 0):  # from the fastest dim of channels-last order
        if sizes[d] == 0 or strides[d] < least:
            return False
        if d == 0 and least == strides[1]:  # ambiguous (N111-like): NCHW, as c10 falls back
            return False
        least = strides[d] * sizes[d] if sizes[d] > 1 else strides[d]
    return True


def suggested_format(a: np.ndarray) -> memory_format:
    """PyTorch's ``suggest_memory_format()`` for an array with ``a``'s strides."""
    if not suggests_channels_last(a):
        return contiguous_format
    return channels_last if a.ndim == 4 else channels_last_3d
