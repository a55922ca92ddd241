"""``torch.nn.attention``: choosing which back ends ``scaled_dot_product_attention`` may use.

On the CPU two back ends exist, the fused kernel (``FLASH_ATTENTION``) and the composite ``MATH`` path; the
selection prefers the fused kernel whenever it is allowed and can run, and ignores ``set_priority`` (as
PyTorch's CPU selection does). Restricting the choice to a back end that cannot run raises PyTorch's error,
after its warnings saying why.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterable, Iterator

from ...ops.nn_ops.attention import ENABLED_BACKENDS

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# PyTorch's switch for warning whenever a call does not take a fused kernel (off by default there too).
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The back ends of scaled_dot_product_attention, with PyTorch's values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCHES = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash_attention",
             SDPBackend.EFFICIENT_ATTENTION: "efficient_attention", SDPBackend.CUDNN_ATTENTION: "cudnn_attention",
             SDPBackend.OVERRIDEABLE: "overrideable"}


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend, set_priority: bool = False) -> Iterator[None]:
    """Within the block, scaled_dot_product_attention may use only ``backends`` (the others are switched
    off, and every switch is restored on exit). Also usable as a decorator."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    chosen: Iterable[SDPBackend] = [backends] if isinstance(backends, SDPBackend) else backends
    allowed = {_SWITCHES[b] for b in chosen if b in _SWITCHES}
    saved = dict(ENABLED_BACKENDS)
    try:
        for name in ENABLED_BACKENDS:
            ENABLED_BACKENDS[name] = name in allowed
        yield
    finally:
        ENABLED_BACKENDS.update(saved)
