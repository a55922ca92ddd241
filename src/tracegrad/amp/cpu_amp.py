"""``torch.cpu.amp``: deprecated aliases of ``torch.amp`` for the CPU."""

from .autocast_mode import _deprecated_device_autocast
from .grad_scaler import _deprecated_device_grad_scaler

autocast = _deprecated_device_autocast("cpu")
GradScaler = _deprecated_device_grad_scaler("cpu")
