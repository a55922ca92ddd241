"""glibc's malloc set up for an array library's working set, once, when tracegrad is imported.

NumPy takes every array's buffer from malloc. glibc serves a large request (128 KiB at first) with a fresh
``mmap`` and returns it to the system on free, and it gives back the free top of its heap once that exceeds a
trim threshold. It raises both limits as it sees large blocks freed, up to 32 MiB and 64 MiB, but only as far as
the largest block so far: an operation whose temporaries together outgrow twice its largest one (a backward
pass, a float64 scratch copy) hands its pages back at the end of each call and faults each of them in again on
the next. On a (1024, 1024) float32 tensor that is some 2,500 page faults per call: SiLU forward and backward
18 ms instead of 13, dropout 14 ms instead of 8 (see benchmarks/README.md).

``tune_host_allocator`` starts glibc where its own heuristic ends: blocks below 32 MiB come from the heap, and up
to 64 MiB of free heap is kept for the next call. Larger blocks are mapped and unmapped as before. A process
keeps at most those 64 MiB more than it otherwise would.

Left alone: other C libraries (musl, macOS), and a process whose user chose malloc settings in its environment
(any ``MALLOC_*_`` variable or a ``glibc.malloc`` tunable). Settings made with ``mallopt`` before the import
cannot be read back (glibc has no getter), so they are replaced: such a program sets ``TRACEGRAD_TUNE_MALLOC=0``.
"""

from __future__ import annotations

import ctypes
import os

MMAP_THRESHOLD = 32 * 1024 * 1024  # (glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems)
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # (the ratio glibc's own adjustment keeps)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # (mallopt's parameter numbers, <malloc.h>)
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_",
                  "MALLOC_ARENA_MAX")

tuned = False  # whether tune_host_allocator changed glibc's settings in this process


def reason_left_alone(environ=os.environ) -> str | None:
    """Why this process's malloc is left as it is, or None where tracegrad sets it up."""
    if environ.get("TRACEGRAD_TUNE_MALLOC", "1") == "0":
        return "TRACEGRAD_TUNE_MALLOC=0"
    chosen = [name for name in _USER_SETTINGS if name in environ]
    if "glibc.malloc" in environ.get("GLIBC_TUNABLES", ""):
        chosen.append("GLIBC_TUNABLES")
    if chosen:
        return f"the user's own settings ({', '.join(chosen)})"
    if not _glibc():
        return "not glibc"
    return None


def _glibc() -> bool:
    try:  # (confstr answers at once; platform.libc_ver reads the interpreter's binary)
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def tune_host_allocator() -> bool:
    """Set glibc's mmap and trim thresholds as the module's text explains (once; later calls do nothing).
    Returns whether this process now runs with them."""
    global tuned
    if tuned or reason_left_alone() is not None:
        return tuned
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # (mallopt returns 1 on success)
    tuned = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return tuned
