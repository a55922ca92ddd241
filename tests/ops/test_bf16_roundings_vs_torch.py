"""Reduced-precision results that PyTorch's CPU kernels round more than once, compared bit for bit with torch.

* log_softmax of bfloat16 and float16 along the last dim keeps each row's sum of exponentials and its log in the
  tensor's own type (two roundings before ``x - max - log``); along another dim it computes in float and rounds once,
  with vectors and blocks counted in two-byte elements. tracegrad computed the float32 kernel and rounded once.
* nll_loss (and so cross_entropy) of a reduced input sums its cascade, its class weights and its count in the
  tensor's own type, and divides the mean there; its backward divides the gradient there too.
* binary_cross_entropy_with_logits of bfloat16 logits is a composite of tensor operations, each rounding to its own
  dtype (log_sigmoid's bfloat16 result before anything else); its backward without create_graph writes each step
  into sigmoid's bfloat16 result, even beside a float32 target.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")

REDUCED = ["bfloat16", "float16"]
# (sizes around the vector widths, 16 and 32 two-byte elements, and long rows; a 3-d shape for the other dims)
SHAPES = [(1,), (5, 1), (3, 15), (3, 16), (3, 17), (2, 31), (2, 32), (2, 33), (4, 48), (3, 65), (2, 100), (1, 1000),
          (2, 5000), (300, 40), (2, 3, 37)]


def _scores(shape, scale: float, seed: int) -> np.ndarray:
    values = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    if values.size > 4 and seed % 3 == 2:  # (a non-finite score in some rows)
        values.flat[[1, values.size // 2]] = [np.inf, np.nan][seed % 2], -np.inf
    return values


def _as_float(t):
    """A reduced result as float32 (exact), beside its dtype's name."""
    return str(t.dtype).split(".")[-1], t.detach().float()


def _same(ours, theirs) -> None:
    (our_dtype, our_values), (their_dtype, their_values) = _as_float(ours), _as_float(theirs)
    assert our_dtype == their_dtype
    assert_same_bits(our_values, their_values)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_log_softmax_of_reduced_input(shape, dtype, transposed):
    for seed, scale in enumerate((1.0, 8.0, 60.0)):
        x = _scores(shape, scale, seed)
        for dim in range(len(shape)):
            ours, theirs = (lib.tensor(x).to(getattr(lib, dtype)) for lib in (tg, torch))
            if transposed:
                ours, theirs = ours.transpose(0, -1), theirs.transpose(0, -1)
            _same(tg.log_softmax(ours, dim), torch.log_softmax(theirs, dim))


def _nll_program(lib, x, target, weight, dtype: str, loss: str, **kwargs):
    scores = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
    w = None if weight is None else lib.tensor(weight).to(getattr(lib, dtype))
    fn = getattr(lib.nn.functional, loss)
    value = fn(scores, lib.tensor(target), weight=w, **kwargs)
    (grad,) = lib.autograd.grad(value.sum(), scores)
    return value, grad


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("shape", [(7,), (4, 7), (300, 5), (3, 5, 4), (2, 3, 4, 5), (5000, 3)], ids=str)
def test_nll_loss_of_reduced_input(shape, dtype, reduction, weighted):
    rng = np.random.default_rng(len(shape))
    x = _scores(shape, 3.0, 0)
    classes = shape[1] if len(shape) > 1 else shape[0]
    target = rng.integers(0, classes, () if len(shape) == 1 else (shape[0],) + shape[2:])
    weight = rng.random(classes).astype(np.float32) if weighted else None
    for ignore_index in (-100, 1):
        ours = _nll_program(tg, x, target, weight, dtype, "nll_loss", reduction=reduction, ignore_index=ignore_index)
        theirs = _nll_program(torch, x, target, weight, dtype, "nll_loss", reduction=reduction,
                              ignore_index=ignore_index)
        for a, b in zip(ours, theirs):
            _same(a, b)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("shape", [(4, 7), (8, 40), (16, 33), (5, 1000), (64, 10)], ids=str)
def test_cross_entropy_of_bfloat16_logits(shape, reduction, weighted, label_smoothing):
    rng = np.random.default_rng(shape[1])
    x = _scores(shape, 3.0, 1)
    target = rng.integers(0, shape[1], shape[0])
    weight = rng.random(shape[1]).astype(np.float32) if weighted else None
    kwargs = {"reduction": reduction, "label_smoothing": label_smoothing}
    ours = _nll_program(tg, x, target, weight, "bfloat16", "cross_entropy", **kwargs)
    theirs = _nll_program(torch, x, target, weight, "bfloat16", "cross_entropy", **kwargs)
    for a, b in zip(ours, theirs):
        _same(a, b)


def _bce_logits_program(lib, x, target, target_dtype: str, extras: dict, reduction: str, create_graph: bool):
    logits = lib.tensor(x).to(lib.bfloat16).requires_grad_()
    t = lib.tensor(target).to(getattr(lib, target_dtype))
    kwargs = {name: lib.tensor(v).to(getattr(lib, dtype)) for name, (v, dtype) in extras.items()}
    value = lib.nn.functional.binary_cross_entropy_with_logits(logits, t, reduction=reduction, **kwargs)
    (grad,) = lib.autograd.grad(value.sum(), logits, create_graph=create_graph)
    return value, grad


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("extras", ["", "pos_weight", "weight", "both", "float32 pos_weight"])
@pytest.mark.parametrize("target_dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("shape", [(4, 7), (8, 40), (3, 100)], ids=str)
def test_binary_cross_entropy_with_logits_of_bfloat16_logits(shape, target_dtype, extras, reduction, create_graph):
    rng = np.random.default_rng(shape[1])
    x = _scores(shape, 3.0, 0)
    target = rng.random(shape).astype(np.float32)
    given = {}
    if "pos_weight" in extras or extras == "both":
        given["pos_weight"] = (rng.random(shape[1]).astype(np.float32) * 3, extras.split()[0] if " " in extras
                               else "bfloat16")
    if extras in ("weight", "both"):
        given["weight"] = (rng.random(shape[1]).astype(np.float32), "bfloat16")
    ours = _bce_logits_program(tg, x, target, target_dtype, given, reduction, create_graph)
    theirs = _bce_logits_program(torch, x, target, target_dtype, given, reduction, create_graph)
    for a, b in zip(ours, theirs):
        _same(a, b)
