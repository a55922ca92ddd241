"""cumsum and cumprod carry their running value as PyTorch's CPU kernels do: in double for float32, in float for
half, so long scans and scans through cancellation give torch's bits, not NumPy's float32 drift."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg


def _sample(dtype, shape=(8, 700)) -> np.ndarray:
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-50, 50, size=shape).astype(dtype)
    x = rng.standard_normal(shape) * 0.999  # (|x| < 1 keeps long products finite)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape) * 0.5
    return x.astype(dtype)


def _bits_equal(theirs: np.ndarray, ours: np.ndarray) -> bool:
    return theirs.dtype == ours.dtype and np.array_equal(theirs, ours, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.complex64, np.int32, np.uint8])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dim", [0, 1])
def test_scans_accumulate_as_torch(dtype, op, dim):
    x = _sample(dtype)
    theirs = getattr(torch, op)(torch.tensor(x), dim).numpy()
    ours = getattr(tg, op)(tg.tensor(x), dim).numpy()
    assert _bits_equal(theirs, ours)


@pytest.mark.parametrize(("source", "target"), [(np.float16, "float32"), (np.float32, "float64"),
                                                (np.float64, "float32"), (np.int64, "float16")])
def test_scan_with_dtype_converts_then_accumulates(source, target):
    x = _sample(source, (300,))
    theirs = torch.cumsum(torch.tensor(x), 0, dtype=getattr(torch, target)).numpy()
    ours = tg.cumsum(tg.tensor(x), 0, dtype=getattr(tg, target)).numpy()
    assert _bits_equal(theirs, ours)


def test_in_place_and_method_scans_and_gradients():
    x = _sample(np.float32, (4, 300))
    t, o = torch.tensor(x, requires_grad=True), tg.tensor(x, requires_grad=True)
    assert _bits_equal(t.detach().clone().cumsum_(1).numpy(), o.detach().clone().cumsum_(1).numpy())
    t.cumsum(1).sum().backward()
    o.cumsum(1).sum().backward()
    assert _bits_equal(t.grad.numpy(), o.grad.numpy())


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_with_dtype_sums_the_gradient_in_the_input_dtype(op):
    """torch's backward converts the gradient to the input's dtype before its reversed scan."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=(20, 30))
    dy = rng.standard_normal((20, 30)).astype(np.float32)
    grads = []
    for m in (torch, tg):
        leaf = m.tensor(x, requires_grad=True)
        getattr(m, op)(leaf, 1, dtype=m.float32).backward(m.tensor(dy))
        grads.append(leaf.grad.numpy())
    assert _bits_equal(*grads)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize(("shape", "dim", "layout"), [
    ((6, 50, 70), 1, "contiguous"), ((6, 50, 70), 0, "contiguous"), ((300, 64), 0, "contiguous"),
    ((70, 300), 1, "transposed"), ((40, 5, 80), -3, "contiguous"),
])
def test_scans_along_outer_dims_as_torch(dtype, op, shape, dim, layout):
    """A scan along an outer dim steps one whole slice at a time (reductions_extra._running): torch's bits and
    strides, forward and backward."""
    x = _sample(dtype, shape)
    results = []
    for lib in (torch, tg):
        t = lib.tensor(x)
        t = t.t() if layout == "transposed" else t
        out = getattr(lib, op)(t, dim)
        grads = None
        if np.dtype(dtype).kind == "f":
            leaf = t.detach().requires_grad_()
            getattr(lib, op)(leaf, dim).sum().backward()
            grads = leaf.grad.numpy()
        results.append((out.numpy(), tuple(out.stride()), grads))
    (theirs, their_strides, their_grad), (ours, our_strides, our_grad) = results
    assert _bits_equal(theirs, ours) and their_strides == our_strides
    if their_grad is not None:
        assert _bits_equal(their_grad, our_grad)
