"""Flatten and Unflatten."""

from __future__ import annotations

from ..._tensor import Tensor
from ...ops import views
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return views.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim: int | str, unflattened_size) -> None:
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)) or not all(
                isinstance(s, int) for s in unflattened_size
            ):
                raise TypeError(
                    "unflattened_size must be tuple of ints, but found type "
                    f"{type(unflattened_size).__name__}"
                )
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        from ...ops._util import wrap_dim

        shape = tuple(input.shape)
        d = wrap_dim(self.dim, len(shape))
        new = shape[:d] + tuple(self.unflattened_size) + shape[d + 1 :]
        return views.reshape(input, new)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
