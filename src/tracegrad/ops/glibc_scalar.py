"""The C library's scalar math functions on NumPy arrays, where PyTorch's scalar CPU loops call them and their last
bits matter (``calc_igamma``'s ``std::exp``, ``std::lgamma``, ``std::erfc``...).

NumPy's float64 ``exp``/``log1p``/``expm1`` are its own SIMD builds, a last bit away from glibc's on a few percent of
inputs, and glibc's ``lgammaf``/``erfcf`` (fdlibm's, in float arithmetic) are not the correctly rounded values:
float64 goes element by element through Python's ``math`` (which calls the C library) and the functions NumPy has
no twin of through ``ctypes``; float32 takes the emulations of ``glibc_float_math`` where there are some.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
from collections.abc import Callable

import numpy as np


@functools.cache
def _c_function(name: str, single: bool) -> Callable[[float], float]:
    function = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name + ("f" if single else ""))
    c_type = ctypes.c_float if single else ctypes.c_double
    function.restype, function.argtypes = c_type, (c_type,)
    return function


def call_each(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's ``name`` (``namef`` for float32) of each element of the 1-d array ``x``, in x's dtype."""
    function = _c_function(name, x.dtype == np.float32)
    return np.fromiter(map(function, x.tolist()), x.dtype, x.size)


def _through_math(math_fn: Callable[[float], float], numpy_fn: Callable, x: np.ndarray) -> np.ndarray:
    """glibc's double function of each element where NumPy's is finite (``math`` raises where C overflows or
    leaves the domain; there NumPy's inf, NaN or 0 is C's too)."""
    out = numpy_fn(x)
    finite = np.flatnonzero(np.isfinite(out))
    out[finite] = np.fromiter(map(math_fn, x.take(finite).tolist()), np.float64, finite.size)
    return out


def _glibc_unary(name: str, math_fn: Callable[[float], float], numpy_fn: Callable) -> Callable:
    """glibc's ``name``: float32 through ``glibc_float_math``'s emulation of ``namef``, float64 through ``math``."""
    def function(x: np.ndarray) -> np.ndarray:
        if x.dtype == np.float32:
            from .nn_ops import glibc_float_math

            return getattr(glibc_float_math, f"{name}_float")(x)
        return _through_math(math_fn, numpy_fn, x)

    function.__name__ = f"c_{name}"
    return function


c_exp = _glibc_unary("exp", math.exp, np.exp)
c_log = _glibc_unary("log", math.log, np.log)
c_log1p = _glibc_unary("log1p", math.log1p, np.log1p)
c_expm1 = _glibc_unary("expm1", math.expm1, np.expm1)


def c_pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype == np.float32:
        from .nn_ops.glibc_powf import glibc_powf

        return glibc_powf(x, y)
    from .gamma import _glibc_pow

    return _glibc_pow(x, y)


def c_lgamma(x: np.ndarray) -> np.ndarray:
    return call_each("lgamma", x)


def c_erfc(x: np.ndarray) -> np.ndarray:
    return call_each("erfc", x)
