"""The GPU back end: CuPy arrays. Importing this module never fails; ``available()`` says whether it serves tensors.

It serves none yet: every kernel in ``ops/`` is written for NumPy, and a tensor holding a CuPy array would fail
at its first operator (or, where NumPy hands the call on to CuPy, compute with other rounding than the CPU
kernels). So until the CuPy kernels land, tracegrad answers as PyTorch's CPU build does on every machine, with
or without a GPU: ``torch.cuda.is_available()`` is False, and the usual
``device = "cuda" if torch.cuda.is_available() else "cpu"`` picks the CPU, where the program runs.
"""

from __future__ import annotations

try:  # CuPy is an optional extra (``tracegrad[cuda]``); CI has no GPU.
    import cupy as xp  # type: ignore[import-not-found]
except Exception:  # pragma: no cover - depends on the machine
    xp = None

name = "cuda"

SERVES_TENSORS = False  # (True once ops/ has CuPy kernels; the device API below it is ready for that)


def gpu_present() -> bool:
    """Whether CuPy is installed and finds a GPU (whatever tracegrad can do with it)."""
    if xp is None:
        return False
    try:
        return xp.cuda.runtime.getDeviceCount() > 0
    except Exception:  # pragma: no cover - no driver
        return False


def available() -> bool:
    """Whether ``cuda`` tensors can be made and computed on."""
    return SERVES_TENSORS and gpu_present()
