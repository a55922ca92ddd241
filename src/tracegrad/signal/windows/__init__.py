"""``tracegrad.signal.windows``: window functions (PyTorch's ``torch.signal.windows``)."""

from . import windows as windows
from .windows import *  # noqa: F403 - the package re-exports its module's windows, as torch's does
from .windows import __all__ as __all__
