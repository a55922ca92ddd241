"""``torch.amp``: gradient scaling, and autocast as far as tracegrad can honour it (disabled only: there is no
bfloat16 and no low-precision kernel selection yet)."""

from .autocast_mode import autocast, is_autocast_available
from .grad_scaler import GradScaler, OptState

__all__ = ["autocast", "is_autocast_available", "GradScaler", "OptState"]
