"""Top-level constants and build answers of the ``torch`` namespace (``torch.pi``, ``torch.has_lapack``...).

The ``has_*`` flags describe what the backend can do, and agree with ``tracegrad.backends``: NumPy's linear
algebra is LAPACK (bundled or via its BLAS library), its FFT gives the spectral operators, and
``backends.mkl``/``backends.openmp`` already answer as torch's x86 CPU build does, which tracegrad reproduces
(MKL's and OpenMP's presence only selects kernels there; scripts branch on them to pick the same paths).
"""

from __future__ import annotations

import math

from .backends import mkl as _mkl
from .backends import openmp as _openmp

__all__ = ["pi", "e", "inf", "nan", "newaxis", "has_lapack", "has_mkl", "has_openmp", "has_spectral"]

# Python floats, as in torch (``type(torch.pi) is float``)
pi: float = math.pi
e: float = math.e
inf: float = math.inf
nan: float = math.nan
newaxis: None = None

has_lapack: bool = True  # numpy.linalg
has_spectral: bool = True  # numpy.fft
has_mkl: bool = _mkl.is_available()
has_openmp: bool = _openmp.is_available()
