"""``torch.cuda.amp``: deprecated aliases of ``torch.amp`` for CUDA."""

from .autocast_mode import _deprecated_device_autocast
from .grad_scaler import _deprecated_device_grad_scaler

autocast = _deprecated_device_autocast("cuda")
GradScaler = _deprecated_device_grad_scaler("cuda")
