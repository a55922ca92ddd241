"""PyTorch's ``torch.utils.data._utils`` path, kept so that ``from ..._utils.collate import collate,
default_collate_fn_map`` (the documented way to extend ``default_collate``) works unchanged."""

from __future__ import annotations

from . import collate

__all__ = ["collate"]
