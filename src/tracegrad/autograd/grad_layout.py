"""PyTorch's gradient layout contract: a leaf's ``.grad`` is laid out as the leaf (its strides, where the leaf
fills its memory exactly once), else contiguous. AccumulateGrad adopts a gradient that obeys it and copies one
that does not."""

from __future__ import annotations

import numpy as np

from .._strides import element_strides, empty_strided, is_non_overlapping_and_dense


def obeys_layout_contract(grad: np.ndarray, variable: np.ndarray) -> bool:
    """PyTorch's obeys_layout_contract: for a dense leaf, the gradient has the leaf's strides in every dim longer
    than 1 (a size-1 dim of stride 0 is a broadcast view); for any other leaf, the gradient is contiguous."""
    if not is_non_overlapping_and_dense(variable):
        return bool(grad.flags.c_contiguous)
    return all(gs == vs if n != 1 else gs != 0 for n, gs, vs in zip(grad.shape, grad.strides, variable.strides))


def empty_strided_as(a: np.ndarray, dtype=None) -> np.ndarray:
    """An uninitialised array with ``a``'s shape and exactly its strides, size-1 dims included (PyTorch's
    ``new_empty_strided``), where ``a`` is dense; NumPy's nearest layout (``empty_like``) otherwise."""
    dtype = a.dtype if dtype is None else np.dtype(dtype)
    if a.size == 0:  # (NumPy's empty_like gives an empty array zero strides, read as contiguous: kept here)
        return empty_strided(a.shape, element_strides(a), dtype)
    nearest = np.empty_like(a, dtype=dtype)
    if (nearest.strides == a.strides or dtype != a.dtype or not is_non_overlapping_and_dense(a)
            or any(s < 0 for s in a.strides)):
        return nearest
    # (NumPy lays out size-1 dims as it likes; PyTorch keeps the strides asked for)
    return empty_strided(a.shape, element_strides(a), dtype)
