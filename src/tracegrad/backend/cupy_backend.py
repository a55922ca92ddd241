"""The GPU back end: CuPy arrays. Importing this module never fails; ``available()`` says whether it works."""

from __future__ import annotations

try:  # CuPy is an optional extra (``tracegrad[cuda]``); CI has no GPU.
    import cupy as xp  # type: ignore[import-not-found]
except Exception:  # pragma: no cover - depends on the machine
    xp = None

name = "cuda"


def available() -> bool:
    if xp is None:
        return False
    try:
        return xp.cuda.runtime.getDeviceCount() > 0
    except Exception:  # pragma: no cover - no driver
        return False
