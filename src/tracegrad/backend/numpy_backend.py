"""The CPU back end: plain NumPy arrays."""

from __future__ import annotations

import numpy as np

xp = np
name = "cpu"


def is_array(value) -> bool:
    return isinstance(value, np.ndarray)


def asarray(value, dtype=None) -> np.ndarray:
    return np.asarray(value, dtype=dtype)
