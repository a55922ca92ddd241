"""``torch.version``: what the running build is.

torch's CPU wheel answers ``cuda = hip = rocm = xpu = None`` (no GPU toolkit compiled in) and ``debug = False``;
tracegrad answers the same for those, since it has no compiled part at all. ``__version__`` is tracegrad's own
version (so ``torch.__version__`` in a script names the library actually running), and ``git_version`` is
``"Unknown"``, the value torch's build scripts write when the source tree's commit cannot be determined: a
pure-Python package installed from a wheel or sdist has no commit of its own to report.
"""

from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"
debug = False
cuda: str | None = None
git_version = "Unknown"
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
