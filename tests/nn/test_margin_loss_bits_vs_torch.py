"""``multi_margin_loss`` and ``multilabel_margin_loss`` give PyTorch's CPU bits, loss and gradient, for every
reduction: each frame's hinge terms added in turn (multilabel's in double, rounded per frame), the frames
added in turn in double, and the gradients' steps added one at a time as the kernels do (a class's gradient is
the step added to itself as often as the class was touched, not a count times the step).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_all_same_bits, run_both

pytestmark = pytest.mark.usefixtures("one_thread")

SHAPES = [(64, 37), (5, 3), (200, 7), (3, 1), (4, 60)]
REDUCTIONS = ["none", "sum", "mean"]


def _loss_and_grad(lib, fn: str, x: np.ndarray, target: np.ndarray, reduction: str, **kwargs) -> tuple:
    xt = lib.tensor(x, requires_grad=True)
    kwargs = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    loss = getattr(lib.nn.functional, fn)(xt, lib.tensor(target), reduction=reduction, **kwargs)
    (loss.sum() if reduction == "none" else loss).backward()
    return loss, xt.grad


def _assert_same(fn: str, x: np.ndarray, target: np.ndarray, reduction: str, **kwargs) -> None:
    assert_all_same_bits(*run_both(_loss_and_grad, fn, x, target, reduction, **kwargs))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss(shape, reduction, p):
    rng = np.random.default_rng(sum(shape) + p)
    x = (rng.standard_normal(shape) * 2).astype(np.float32)
    target = rng.integers(0, shape[1], shape[0])
    weight = rng.uniform(0.5, 2, shape[1]).astype(np.float32)
    _assert_same("multi_margin_loss", x, target, reduction, p=p)
    _assert_same("multi_margin_loss", x, target, reduction, p=p, weight=weight, margin=0.7)


def _label_lists(rng: np.random.Generator, frames: int, classes: int) -> np.ndarray:
    """Each row lists some classes, then -1 (a row may list none, or all)."""
    target = np.full((frames, classes), -1, np.int64)
    for row in range(frames):
        count = rng.integers(0, classes + 1)
        target[row, :count] = rng.permutation(classes)[:count]
    return target


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(shape, reduction):
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 2).astype(np.float32)
    target = _label_lists(rng, *shape)
    if shape[1] > 1:
        target[0, :2] = 0  # (a class listed twice)
    _assert_same("multilabel_margin_loss", x, target, reduction)


def test_one_sample_without_a_batch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(9).astype(np.float32)
    _assert_same("multi_margin_loss", x[None], np.array([4]), "mean")
    _assert_same("multilabel_margin_loss", x, _label_lists(rng, 1, 9)[0], "none")
