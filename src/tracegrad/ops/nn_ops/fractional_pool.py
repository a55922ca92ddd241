"""Fractional max pooling (Graham, 2014) as PyTorch's CPU kernels compute it.

Each plane draws one number in [0, 1) per pooled dim (``random_samples``, shape (N, C, dims)); it places the
output's windows at pseudo-random, non-uniformly spaced starts: ``int((i + u) * alpha) - int(u * alpha)`` with
``alpha = (in - k) / (out - 1)``, the last window pinned to the end. The arithmetic runs in the input's dtype,
as PyTorch's does, so the same samples give the same windows. Each window's maximum (the first on ties, a NaN
wins) and its flat index are returned; the backward is max pooling's scatter.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..._arg_parser import refuse_as_torch
from ..._tensor import Tensor
from ...backend.dtypes import scalar_type_name
from .pool import _with_indices_ops


def _window_starts(samples: np.ndarray, in_size: int, out_size: int, pool: int) -> np.ndarray:
    """(planes, out_size) first input position of each window along one dim."""
    dtype = samples.dtype.type
    starts = np.zeros((samples.shape[0], out_size), dtype=np.int64)
    if out_size > 1:
        alpha = dtype(in_size - pool) / dtype(out_size - 1)
        steps = np.arange(out_size).astype(samples.dtype)
        starts = ((steps + samples[:, None]) * alpha).astype(np.int64) - (samples[:, None] * alpha).astype(np.int64)
    if out_size > 0:
        starts[:, -1] = in_size - pool
    return starts


def _check(x: np.ndarray, kernel: tuple, output: tuple, samples: np.ndarray, name: str) -> None:
    n = len(kernel)
    if x.ndim not in (n + 1, n + 2) or any(s == 0 for s in x.shape[-n - 1:]):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: [{', '.join(map(str, x.shape))}]")
    if samples.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random samples to have 3 dimensions, got {samples.ndim}")
    batch = x.shape[0] if x.ndim == n + 2 else 1
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != x.shape[-n - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got {samples.shape[2]}.")
    names = ("time", "height", "width")[-n:]
    # (the 3-d kernel also refuses a last window that would end exactly at the border)
    limit = 0 if n == 2 else 1
    for axis, (k, o, size) in enumerate(zip(kernel, output, x.shape[-n:])):
        if o + k - 1 + limit > size:
            raise RuntimeError(f"{name}(): pool {names[axis]} {k} too large relative to input {names[axis]} {size}")


def _fractional_kernel(x: np.ndarray, kernel_size, output_size, random_samples: np.ndarray):
    n = len(kernel_size)
    name = f"fractional_max_pool{n}d"
    _check(x, tuple(kernel_size), tuple(output_size), random_samples, name if n == 2 else name + "_out")
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"{name}_out_frame\" not implemented for '{scalar_type_name(x.dtype)}'")
    lead = x.shape[:-n]
    in_sizes = x.shape[-n:]
    planes = math.prod(lead)
    samples = random_samples[: (x.shape[0] if x.ndim == n + 2 else 1)].reshape(planes, n)
    # PyTorch's samples run W, H (2-d) and T, H, W (3-d)
    order = (1, 0) if n == 2 else (0, 1, 2)
    starts = [_window_starts(samples[:, order[a]], in_sizes[a], output_size[a], kernel_size[a]) for a in range(n)]
    flat_x = x.reshape(planes, -1)
    candidates, positions = [], []
    for offset in np.ndindex(*kernel_size):  # the window's positions in PyTorch's loop order
        index = np.zeros((planes,) + (1,) * n, dtype=np.int64)
        for a in range(n):
            shape = [planes] + [1] * n
            shape[a + 1] = output_size[a]
            index = index * in_sizes[a] + (starts[a] + offset[a]).reshape(shape)
        index = np.broadcast_to(index, (planes, *output_size)).reshape(planes, -1)
        positions.append(index)
        candidates.append(np.take_along_axis(flat_x, index, axis=1))
    values, positions = np.stack(candidates), np.stack(positions)  # (K, planes, outputs)
    # the first strict maximum wins, and any NaN (the last one) beats it
    best = np.argmax(values, axis=0)
    nan = np.isnan(values)
    last_nan = values.shape[0] - 1 - np.argmax(nan[::-1], axis=0)
    best = np.where(nan.any(axis=0), last_nan, best)
    out = np.take_along_axis(values, best[None], axis=0)[0]
    indices = np.take_along_axis(positions, best[None], axis=0)[0]
    shape = tuple(lead) + tuple(output_size)
    return out.reshape(shape), indices.reshape(shape)


def _fractional_ops(n: int) -> tuple:
    return _with_indices_ops(
        n,
        f"fractional_max_pool{n}d(Tensor self, int[{n}] kernel_size, int[{n}] output_size, Tensor random_samples) "
        "-> (Tensor, Tensor)",
        _fractional_kernel,
        f"FractionalMaxPool{n}DBackward0",
        f"fractional_max_pool{n}d_backward",
        attrs=("kernel_size", "output_size"),
        differentiable=("self",),
    )


fractional_max_pool2d, fractional_max_pool2d_backward = _fractional_ops(2)
fractional_max_pool3d, fractional_max_pool3d_backward = _fractional_ops(3)


def sized_fractional_max_pool(input: Tensor, n: int, kernel_size, output_size, output_ratio,
                              random_samples: Tensor | None) -> tuple[Tensor, Tensor]:
    """PyTorch's Python layer: the output size from a ratio, samples drawn from the default generator."""
    from ..._factories import rand

    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        # (PyTorch takes len() of the ratio before expanding it, so a bare float fails with Python's TypeError)
        if len(output_ratio) > n:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio)
        output_size = [int(input.size(-n + a) * ratio[a]) for a in range(n)]
    if random_samples is None:
        batch = 1 if input.dim() == n + 1 else input.size(0)
        random_samples = rand(batch, input.size(-n - 1), n, dtype=input.dtype)
    try:
        kernel, size = _sizes(kernel_size, n), _sizes(output_size, n)
    except TypeError:  # (torch's Python passes both as given to its operator, whose parser refuses them)
        refuse_as_torch(name, (input, kernel_size, output_size, random_samples), {})
        raise
    for what, value in (("kernel_size", kernel), ("output_size", size)):
        if len(value) != n:
            raise RuntimeError(f"{name}: {what} must either be a single int or tuple of Ints")
    return fractional_max_pool2d(input, kernel, size, random_samples) if n == 2 else \
        fractional_max_pool3d(input, kernel, size, random_samples)


def _sizes(value, n: int) -> tuple:
    """An ``int[n]`` argument as a sequence: one int (a NumPy int too, not a 0-d array, which torch's binding
    cannot read) stands for all ``n``; anything else is a TypeError."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    if value.__class__ is bool or isinstance(value, np.ndarray):
        raise TypeError(f"an int argument must be an int, not {type(value).__name__}")
    return (operator.index(value),) * n
