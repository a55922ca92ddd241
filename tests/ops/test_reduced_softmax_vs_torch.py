"""Reduced-precision softmax, its backward, acos' backward and the result dtypes of losses with mixed bfloat16 and
float32 operands, compared bit for bit (and dtype for dtype) with torch.

* softmax of float16 (any dim) and bfloat16 (along another dim than the last) computes in float as torch's
  reduced-type kernels do: along the last dim the exponentials of whole float vectors sum lane by lane and the
  leftover ones (glibc's ``expf``) after them; along another dim vectors count two-byte elements and the scalar
  columns round each exponential to the tensor's type before dividing. tracegrad computed float16 in NumPy's
  float16 (about half the elements off) and bfloat16's other dims with float vectors (a few in a hundred off).
* The backward computes ``(grad - sum(grad * out)) * out`` in float, the last dim's sum as ``map2_reduce_all``.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")

REDUCED = ["bfloat16", "float16"]
# (around the vector widths, 16 floats and 32 two-byte elements, and long rows; 3-d shapes for the other dims)
SHAPES = [(1,), (5, 1), (3, 7), (3, 15), (3, 16), (3, 17), (2, 31), (2, 32), (2, 33), (4, 48), (3, 65), (2, 100),
          (1, 1000), (300, 40), (2, 3, 37), (4, 40, 3), (3, 5, 70)]


def _scores(shape, scale: float, seed: int) -> np.ndarray:
    values = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    if values.size > 4 and seed % 3 == 2:  # (a non-finite score in some rows)
        values.flat[[1, values.size // 2]] = [np.inf, np.nan][seed % 2], -np.inf
    return values


def _same(ours, theirs) -> None:
    """Same dtype, same bits (compared as float32, which holds every reduced value exactly)."""
    assert str(ours.dtype) == str(theirs.dtype)
    assert_same_bits(ours.detach().float(), theirs.detach().float())


def _softmax_and_grad(lib, x, grad, dtype: str, dim: int, transposed: bool):
    t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
    seen = t.transpose(0, -1) if transposed else t
    y = lib.softmax(seen, dim)
    (g,) = lib.autograd.grad(y, t, lib.tensor(grad).to(getattr(lib, dtype)).reshape(y.shape))
    return y, g


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_softmax_of_reduced_input_and_its_gradient(shape, dtype, transposed):
    for seed, scale in enumerate((1.0, 8.0, 60.0)):
        x = _scores(shape, scale, seed)
        grad = np.random.default_rng(seed + 7).standard_normal(shape).astype(np.float32)
        for dim in range(len(shape)):
            ours = _softmax_and_grad(tg, x, grad, dtype, dim, transposed)
            theirs = _softmax_and_grad(torch, x, grad, dtype, dim, transposed)
            for a, b in zip(ours, theirs):
                _same(a, b)


@pytest.mark.parametrize("dtype", REDUCED)
def test_softmax_spellings_of_reduced_input(dtype):
    x = _scores((6, 45), 5.0, 3)

    def spellings(lib):
        t = lib.tensor(x)
        reduced = t.to(getattr(lib, dtype))
        return [lib.nn.functional.softmax(reduced, -1), reduced.softmax(1), lib.nn.Softmax(dim=0)(reduced),
                lib.nn.functional.softmax(t, 1, dtype=getattr(lib, dtype)), t.softmax(0, dtype=getattr(lib, dtype)),
                lib.softmax(reduced, 1, dtype=lib.float32)]

    for a, b in zip(spellings(tg), spellings(torch)):
        _same(a, b)


# ---- rsqrt of bfloat16, and the backward of acos (and asin) through it -------------------------------------------
# torch's scalar loop (the elements after the last whole block of two vectors) divides 1 by c10's bfloat16 sqrt,
# rounded to bfloat16 first; its vector code by the float root. tracegrad took the float root everywhere (about one
# element in 300 of acos' bfloat16 gradient off).


@pytest.mark.parametrize("size", [7, 33, 47, 100, 1000])
def test_rsqrt_of_every_bfloat16_stretch(size):
    every = (np.arange(2**16, dtype=np.uint32) << 16).view(np.float32)
    for start in range(0, every.size, 4099):
        x = every[start : start + size]
        _same(tg.tensor(x).bfloat16().rsqrt(), torch.tensor(x).bfloat16().rsqrt())


@pytest.mark.parametrize("function", ["acos", "asin"])
@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("size", [7, 40, 3000])
def test_inverse_trigonometric_gradient_of_reduced_input(size, dtype, function):
    rng = np.random.default_rng(size)
    x = rng.uniform(-0.999, 0.999, size).astype(np.float32)
    grad = rng.standard_normal(size).astype(np.float32)

    def program(lib):
        t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        return lib.autograd.grad(getattr(lib, function)(t), t, lib.tensor(grad).to(getattr(lib, dtype)))[0]

    _same(program(tg), program(torch))
