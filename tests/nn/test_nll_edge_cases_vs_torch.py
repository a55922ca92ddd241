"""nll_loss / cross_entropy at their edges, as torch has them: no targets at all (the mean is a positive quiet
NaN), empty inputs along any dim, uint8 targets (refused by the spatial kernel; an out-of-bounds one worded as the
raw byte by the unreduced 2-d kernel), and softmax / log_softmax of empty and 0-d tensors."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, tg, torch

EMPTY = [((0, 3), (0,), {}), ((0, 3), (0,), {"weight": True}), ((0, 3, 2, 2), (0, 2, 2), {}),
         ((2, 3, 0, 2), (2, 0, 2), {}), ((0, 3, 2), (0, 2), {}), ((0, 3), (0,), {"reduction": "sum"}),
         ((0, 3), (0,), {"reduction": "none"})]
# (label smoothing's mean over no rows adds two NaNs of opposite signs, nll_loss's +nan and the smoothing's 0 / 0:
# torch keeps the second one's sign, -nan)
SMOOTHED = ([((0, 3), (0,), {"label_smoothing": 0.1, "reduction": r}) for r in ("mean", "sum", "none")]
            + [((0, 3), (0,), {"label_smoothing": 0.1, "weight": True}), ((2, 3, 0), (2, 0), {"label_smoothing": 0.5})])
CASES = [(fn, case) for fn in ("nll_loss", "cross_entropy") for case in EMPTY] + [("cross_entropy", c) for c in SMOOTHED]


@pytest.mark.parametrize(("fn", "case"), CASES)
def test_empty_inputs(fn, case):
    shape, target_shape, kw = case

    def program(lib):
        x = lib.zeros(*shape).requires_grad_()
        extra = {k: (lib.ones(3) if k == "weight" else v) for k, v in kw.items()}
        loss = getattr(lib.nn.functional, fn)(x, lib.zeros(*target_shape, dtype=lib.int64), **extra)
        loss.sum().backward()
        return np.asarray(loss.detach().numpy()).view(np.uint32).tolist(), tuple(loss.shape), tuple(x.grad.shape)

    assert program(tg) == program(torch)


@pytest.mark.parametrize("case", [((2, 3), (2,), "none", 4), ((2, 3), (2,), "none", 65), ((2, 3), (2,), "none", 200),
                                  ((2, 3), (2,), "none", 255), ((2, 3), (2,), "sum", 4), ((2, 3), (2,), "mean", 200),
                                  ((2, 3, 2, 2), (2, 2, 2), "none", 4), ((2, 3, 2, 2), (2, 2, 2), "mean", 1),
                                  ((2, 3, 2), (2, 2), "mean", 1), ((3,), (), "none", 4)])
def test_uint8_targets(case):
    shape, target_shape, reduction, value = case

    def program(lib):
        target = lib.full(target_shape, value, dtype=lib.uint8)
        return lib.nn.functional.nll_loss(lib.zeros(*shape), target, reduction=reduction).tolist()

    assert raised(tg, program) == raised(torch, program)
    if raised(torch, program) is None:
        assert program(tg) == program(torch)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(0, 3, 2), (2, 0, 2), (2, 3, 0), (0,)])
def test_softmax_of_empty_tensors(name, shape):
    def program(lib):
        x = lib.zeros(*shape).requires_grad_()
        y = getattr(lib, name)(x, 0 if len(shape) == 1 else 1)
        y.sum().backward()
        return tuple(y.shape), tuple(x.grad.shape), y.dtype == lib.float32

    assert program(tg) == program(torch)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), -float("nan"), 2.0, -0.0, 1e30])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_softmax_of_0d_tensors(value, dtype):
    """A 0-d softmax is the kernel's one-element row: 1 (log: 0), or NaN, with its sign, for inf and NaN."""

    def program(lib):
        x = lib.tensor(value, dtype=getattr(lib, dtype)).requires_grad_()
        out = []
        for name, g in (("softmax", 0.7), ("log_softmax", -1.3)):
            y = getattr(lib, name)(x, -1)
            (gx,) = lib.autograd.grad(y, x, lib.tensor(g, dtype=x.dtype))
            out += [y.detach().numpy().view(f"u{y.element_size()}").item(), gx.numpy().view(f"u{gx.element_size()}").item()]
        return out

    assert program(tg) == program(torch)
