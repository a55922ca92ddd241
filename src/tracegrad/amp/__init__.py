"""``torch.amp``: gradient scaling, and autocast (the CPU's casts as torch's; CUDA's disabled only)."""

from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler, OptState

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler", "OptState"]
