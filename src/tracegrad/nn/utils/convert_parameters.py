"""Flatten parameters into one vector and back."""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor


def _check_type(p) -> None:
    if not isinstance(p, Tensor):
        from ..modules.module import typename

        raise TypeError(f"expected torch.Tensor, but got: {typename(p)}")


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated (differentiable)."""
    from ...ops.shape import cat
    from ...ops.views import reshape

    vec = []
    for p in parameters:
        _check_type(p)
        vec.append(reshape(p, (-1,)))
    return cat(vec, 0)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into the parameters' data (no autograd)."""
    if not isinstance(vec, Tensor):
        from ..modules.module import typename

        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    pointer = 0
    flat = vec._data.reshape(-1)
    for p in parameters:
        _check_type(p)
        n = p.numel()
        p._data = flat[pointer : pointer + n].reshape(p._data.shape).astype(p._data.dtype, copy=False)
        pointer += n
