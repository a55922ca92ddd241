"""``torch.backends.openmp``: torch's CPU build is compiled with OpenMP."""

from __future__ import annotations


def is_available() -> bool:
    return True
