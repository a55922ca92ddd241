"""Window functions: hann, hamming, blackman, bartlett, kaiser (PyTorch's TensorFactories.cpp formulas).

A periodic window of length N is the symmetric window of length N + 1 without its last value. The arithmetic
runs in the requested dtype, step by step as PyTorch's in-place chain does, so float32 windows round alike.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor


def _resolve(name: str, window_length: int, dtype) -> np.dtype:
    from ..backend.dtypes import get_default_dtype, to_dtype

    d = get_default_dtype() if dtype is None else to_dtype(dtype)
    if not d.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={_c_type(d.np)}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), "
                           "pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    return d.np


def _c_type(np_dtype) -> str:
    """The C++ type name PyTorch's TensorOptions printer uses."""
    return {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}.get(np.dtype(np_dtype).name, np.dtype(np_dtype).name)


def _finish(values: np.ndarray, dtype: np.dtype, requires_grad: bool, device) -> Tensor:
    from .._factories import _finish as finish

    return finish(np.ascontiguousarray(values, dtype=dtype), requires_grad, device)


def _window(name: str, window_length: int, periodic: bool, dtype, requires_grad: bool, device, body) -> Tensor:
    np_dtype = _resolve(name, window_length, dtype)
    if window_length == 0:
        return _finish(np.empty(0), np_dtype, requires_grad, device)
    if window_length == 1:
        return _finish(np.ones(1), np_dtype, requires_grad, device)
    n = window_length + 1 if periodic else window_length
    with np.errstate(all="ignore"):
        values = body(np.arange(n, dtype=np_dtype), n, np_dtype.type)
    return _finish(values[:window_length], np_dtype, requires_grad, device)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    def body(k, n, s):
        return np.cos(k * s(np.pi * 2.0 / (n - 1))) * s(-beta) + s(alpha)

    return _window("hamming_window", window_length, periodic, dtype, requires_grad, device, body)


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                requires_grad: bool = False) -> Tensor:
    # PyTorch: hamming_window with alpha = beta = 0.5, and its own name in errors
    def body(k, n, s):
        return np.cos(k * s(np.pi * 2.0 / (n - 1))) * s(-0.5) + s(0.5)

    return _window("hann_window", window_length, periodic, dtype, requires_grad, device, body)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    def body(k, n, s):
        w = k * s(np.pi / (n - 1))
        return np.cos(w * s(4)) * s(0.08) - np.cos(w * s(2)) * s(0.5) + s(0.42)

    return _window("blackman_window", window_length, periodic, dtype, requires_grad, device, body)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    def body(k, n, s):
        w = k * s(2.0 / (n - 1))
        first_half = ((n - 1) >> 1) + 1
        w[first_half:] = w[first_half:] * s(-1) + s(2)
        return w

    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, device, body)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, layout=None,
                  device=None, requires_grad: bool = False) -> Tensor:
    def body(k, n, s):
        # i0(beta * sqrt(1 - ((k - alpha) / alpha)^2)) / i0(beta), alpha = (n - 1) / 2
        alpha = (n - 1) / 2.0
        x = np.sqrt(np.abs(1 - ((k.astype(np.float64) - alpha) / alpha) ** 2))
        return (np.i0(beta * x) / np.i0(beta)).astype(k.dtype)

    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, device, body)


PUBLIC = {
    "hann_window": hann_window, "hamming_window": hamming_window, "blackman_window": blackman_window,
    "bartlett_window": bartlett_window, "kaiser_window": kaiser_window,
}

METHODS: dict = {}
