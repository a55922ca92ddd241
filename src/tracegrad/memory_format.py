"""Memory formats (``torch.contiguous_format``, ``torch.channels_last``, ...): the element order of a dense tensor.

A tensor's layout is its NumPy array's strides. ``contiguous_format`` is C order; ``channels_last`` orders a 4-D
(N, C, H, W) tensor as N, H, W, C in memory (``channels_last_3d``: 5-D, N, D, H, W, C); ``preserve_format``, the
default of ``clone`` and the ``*_like`` factories, keeps the input's order when it is dense and non-overlapping
and falls back to C order otherwise, as PyTorch does.
"""

from __future__ import annotations

import numpy as np


class memory_format:  # noqa: N801 - PyTorch's class name
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:
        return self._name  # pickled by name: unpickling gives the module's singleton


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


def is_dense_non_overlapping(a: np.ndarray) -> bool:
    """Whether ``a``'s elements fill its memory exactly once, in some order of its axes."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expected = a.itemsize
    for stride, size in sorted((s, n) for s, n in zip(a.strides, a.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def is_in_format(a: np.ndarray, fmt: memory_format | None) -> bool:
    """``Tensor.is_contiguous(memory_format=fmt)`` for the array ``a``."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return bool(a.flags.c_contiguous)
    if a.ndim != _format_ndim(fmt):
        return False
    return bool(a.transpose(_CHANNELS_LAST_ORDER[a.ndim]).flags.c_contiguous)


def copy_in_format(a: np.ndarray, fmt: memory_format | None) -> np.ndarray:
    """A copy of ``a`` laid out in ``fmt`` (``None`` means ``preserve_format``)."""
    if fmt is None or fmt is preserve_format:
        if a.flags.c_contiguous or not is_dense_non_overlapping(a) or min(a.strides, default=0) < 0:
            return np.array(a, copy=True, order="C")
        return np.array(a, copy=True, order="K")  # dense in another axis order: keep that order
    if fmt is contiguous_format:
        return np.array(a, copy=True, order="C")
    if a.ndim != _format_ndim(fmt):
        raise RuntimeError(f"required rank {_format_ndim(fmt)} tensor to use {fmt._name} format")
    order = _CHANNELS_LAST_ORDER[a.ndim]
    return np.ascontiguousarray(a.transpose(order)).transpose(np.argsort(order))


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
