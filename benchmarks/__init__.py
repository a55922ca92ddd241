"""Benchmarks of tracegrad against NumPy and PyTorch (run with ``python -m benchmarks.run``).

Importing this package pins every BLAS/OpenMP pool to one thread. That has to happen before NumPy or
torch is first imported, and ``python -m benchmarks.run`` imports this package first, so it does.
"""

from __future__ import annotations

import os
import sys

THREAD_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                   "NUMEXPR_NUM_THREADS")

# Forced, not setdefault: the published targets are single-thread ratios, and a stray OMP_NUM_THREADS=8
# in the caller's shell would silently change what is being compared.
for _var in THREAD_ENV_VARS:
    os.environ[_var] = "1"

# Remembered so the runner can warn: if NumPy was loaded before us, its BLAS pool is already sized.
NUMPY_PRELOADED = "numpy" in sys.modules
