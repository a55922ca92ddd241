"""``torch.utils.hooks``: the handle every ``register_*hook`` returns."""

from __future__ import annotations

from ..autograd.node import RemovableHandle

__all__ = ["RemovableHandle"]
