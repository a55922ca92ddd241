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


# ---- losses with mixed bfloat16 and float32 operands ---------------------------------------------------------
# soft_margin_loss and huber_loss write their loss into a tensor of the input's dtype (soft_margin step by step, in
# place), binary_cross_entropy_with_logits into ``1 - target``'s: a bfloat16 one keeps bfloat16 whatever the other
# operands promote to. binary_cross_entropy asks one dtype of all its operands. tracegrad
# promoted the float32 copies: float32 losses, and no refusal.

LOSSES = {
    "mse_loss": lambda F, x, t, r: F.mse_loss(x, t, reduction=r),
    "l1_loss": lambda F, x, t, r: F.l1_loss(x, t, reduction=r),
    "smooth_l1_loss": lambda F, x, t, r: F.smooth_l1_loss(x, t, reduction=r, beta=0.5),
    "huber_loss": lambda F, x, t, r: F.huber_loss(x, t, reduction=r, delta=0.7),
    "soft_margin_loss": lambda F, x, t, r: F.soft_margin_loss(x, t, reduction=r),
    "kl_div": lambda F, x, t, r: F.kl_div(x, t, reduction="batchmean" if r == "mean" else r),
    "binary_cross_entropy": lambda F, x, t, r: F.binary_cross_entropy(x.sigmoid(), t, reduction=r),
    "binary_cross_entropy_with_logits": lambda F, x, t, r: F.binary_cross_entropy_with_logits(x, t, reduction=r),
    "bce_with_logits_pos_weight": lambda F, x, t, r: F.binary_cross_entropy_with_logits(
        x, t, reduction=r, pos_weight=(t[0] * 2).float()),
    "poisson_nll_loss": lambda F, x, t, r: F.poisson_nll_loss(x, t, reduction=r),
    "gaussian_nll_loss": lambda F, x, t, r: F.gaussian_nll_loss(x, t, t.float() + 0.5, reduction=r),
}


def _dtypes_or_error(lib, program):
    """The dtypes of the tensors ``program(lib)`` gives, or its error's type and message."""
    try:
        return [str(v.dtype).split(".")[-1] for v in program(lib)]
    except RuntimeError as error:
        return "RuntimeError", str(error)


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("dtypes", [("bfloat16", "float32"), ("float32", "bfloat16"), ("bfloat16", "bfloat16"),
                                    ("float16", "float32")], ids=str)
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_loss_dtypes_of_mixed_operands(loss, dtypes, reduction):
    """The loss's and the input gradient's dtypes (or the refusal); the values' last bits are not all torch's yet."""
    rng = np.random.default_rng(len(loss))
    x, t = rng.standard_normal((6, 35)).astype(np.float32), rng.random((6, 35)).astype(np.float32)

    def program(lib):
        scores = lib.tensor(x).to(getattr(lib, dtypes[0])).requires_grad_()
        value = LOSSES[loss](lib.nn.functional, scores, lib.tensor(t).to(getattr(lib, dtypes[1])), reduction)
        if loss == "huber_loss":  # (torch's backward refuses mixed dtypes; tracegrad differentiates them on purpose:
            return (value,)       # tests/nn/test_user_mistakes_losses_vs_torch.py)
        return value, lib.autograd.grad(value.sum(), scores)[0]

    assert _dtypes_or_error(tg, program) == _dtypes_or_error(torch, program)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss", ["huber_loss", "binary_cross_entropy_with_logits", "bce_with_logits_pos_weight"])
def test_bfloat16_loss_values_of_mixed_operands(loss, reduction):
    """Where the loss takes bfloat16 beside a float32 operand, its value is torch's bit for bit."""
    rng = np.random.default_rng(len(loss))
    x, t = rng.standard_normal((6, 35)).astype(np.float32), rng.random((6, 35)).astype(np.float32)
    order = ("bfloat16", "float32") if loss == "huber_loss" else ("float32", "bfloat16")

    def program(lib):
        return LOSSES[loss](lib.nn.functional, lib.tensor(x).to(getattr(lib, order[0])),
                            lib.tensor(t).to(getattr(lib, order[1])), reduction)

    _same(program(tg), program(torch))
