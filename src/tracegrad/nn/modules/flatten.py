"""Flatten and Unflatten."""

from __future__ import annotations

from ..._state import STATE
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
        if not isinstance(input, Tensor) or STATE.torch_function:
            # (torch's is ``input.flatten(...)``: Python's error for anything else, the method for handlers)
            return input.flatten(self.start_dim, self.end_dim)
        return views.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        _require_tuple_int(unflattened_size)  # (torch 2.13 checks the sizes only: the dim is checked by forward)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _require_tuple_int(sizes) -> None:
    """torch's check of Unflatten's sizes, element by element."""
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(sizes).__name__}")
    for pos, size in enumerate(sizes):
        if not isinstance(size, int):
            raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                            f"{type(size).__name__} at pos {pos}")
