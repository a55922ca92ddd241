"""Optimizer steps and the fused elementwise updates they are made of give torch's CPU bits.

PyTorch's ``add(alpha=)``, ``lerp`` and ``addcmul`` are one fused multiply-add per element; the optimizers are
written with them, so their trajectories match torch's step after step. (Square roots go through MKL in torch's
CPU build and may differ in the last bit; the optimizers that take one are checked with a tolerance of a few
dozen ulps on the few elements where that last bit propagated.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg


def _operands(dtype, n: int = 5003):
    rng = np.random.default_rng(n)
    return [rng.standard_normal(n).astype(dtype) for _ in range(3)]


ELEMENTWISE = {
    "add alpha": lambda m, a, b, c: m.add(a, b, alpha=0.37),
    "sub alpha": lambda m, a, b, c: m.sub(a, b, alpha=-1.3),
    "rsub alpha": lambda m, a, b, c: m.rsub(a, b, alpha=0.7),
    "add_ alpha": lambda m, a, b, c: a.clone().add_(b, alpha=-0.01),
    "add alpha broadcast": lambda m, a, b, c: m.add(a.reshape(-1, 1)[:7], b[:5], alpha=0.3),
    "add scalar alpha": lambda m, a, b, c: m.add(a, 2.5, alpha=0.1),
    "add 0-d alpha": lambda m, a, b, c: m.add(a, b[0], alpha=0.1),
    "0-d add alpha": lambda m, a, b, c: m.add(a[0], b, alpha=0.1),
    "rsub scalar alpha": lambda m, a, b, c: m.rsub(a[0], b, alpha=0.3),
    "lerp small": lambda m, a, b, c: m.lerp(a, b, 0.1),
    "lerp large": lambda m, a, b, c: m.lerp(a, b, 0.8),
    "lerp tensor": lambda m, a, b, c: m.lerp(a, b, c),
    "lerp_": lambda m, a, b, c: a.clone().lerp_(b, 0.25),
    "addcmul": lambda m, a, b, c: m.addcmul(a, b, c, value=0.001),
    "addcmul_": lambda m, a, b, c: a.clone().addcmul_(b, c, value=-2.0),
    "addcdiv": lambda m, a, b, c: m.addcdiv(a, b, c.abs() + 0.5, value=-0.01),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_fused_elementwise_updates_are_torchs(dtype, name):
    arrays = _operands(dtype)
    theirs = ELEMENTWISE[name](torch, *(torch.tensor(x) for x in arrays)).numpy()
    ours = ELEMENTWISE[name](tg, *(tg.tensor(x) for x in arrays)).numpy()
    if name in SCALAR_OTHER:  # (the last, partial vector blocks: see pointwise._fused_alpha)
        theirs, ours = theirs[:-16], ours[:-16]
    assert np.array_equal(theirs, ours, equal_nan=True)


SCALAR_OTHER = ("add scalar alpha", "add 0-d alpha", "rsub scalar alpha")


def test_fused_updates_keep_infinities():
    inf = np.array([np.inf, -np.inf, np.inf, 1.0], dtype=np.float64)
    one = np.array([1.0, 2.0, -0.5, np.inf], dtype=np.float64)
    for m_args in ((inf, one, 0.3), (one, inf, 0.3)):
        theirs = torch.add(torch.tensor(m_args[0]), torch.tensor(m_args[1]), alpha=m_args[2]).numpy()
        ours = tg.add(tg.tensor(m_args[0]), tg.tensor(m_args[1]), alpha=m_args[2]).numpy()
        assert np.array_equal(theirs, ours, equal_nan=True)


OPTIMIZERS = [
    ("SGD", dict(lr=0.01), True),
    ("SGD", dict(lr=0.01, momentum=0.9), True),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-4), True),
    ("SGD", dict(lr=0.01, momentum=0.9, dampening=0.1, maximize=True), True),
    ("ASGD", dict(lr=0.01, weight_decay=0.01), True),
    ("Adamax", dict(lr=1e-3, weight_decay=0.01), True),
    ("Adam", dict(lr=1e-3, weight_decay=0.01), False),
    ("AdamW", dict(lr=1e-3), False),
    ("NAdam", dict(lr=1e-3, weight_decay=0.01), False),
    ("RAdam", dict(lr=1e-3, weight_decay=0.01), False),
    ("RMSprop", dict(lr=1e-3, centered=True, momentum=0.9, weight_decay=0.01), False),
    ("Adagrad", dict(lr=1e-2, weight_decay=0.01), False),
    ("Adadelta", dict(weight_decay=0.01), False),
]


def _trajectory(module, name: str, options: dict, dtype, steps: int = 4) -> np.ndarray:
    rng = np.random.default_rng(11)
    start = rng.standard_normal((40, 30)).astype(dtype)
    param = module.tensor(start, requires_grad=True)
    opt = getattr(module.optim, name)([param], **options)
    for _ in range(steps):
        param.grad = module.tensor(rng.standard_normal(start.shape).astype(dtype))
        opt.step()
    return param.detach().numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "options", "exact"), OPTIMIZERS)
def test_optimizer_trajectories_are_torchs(dtype, name, options, exact):
    theirs = _trajectory(torch, name, options, dtype)
    ours = _trajectory(tg, name, options, dtype)
    if exact:
        assert np.array_equal(theirs, ours)
    else:
        # torch's square roots are MKL's, which picks its code by processor: on Intel's they were correctly
        # rounded but for about 1% of inputs, on AMD's 17% were an ulp off. The optimizer's state carries such an
        # ulp on: after four steps at most 3% of the parameters differ, by at most 40 ulps (centered RMSprop).
        differ = theirs != ours
        assert differ.mean() < 0.05
        np.testing.assert_allclose(ours, theirs, rtol=64 * np.finfo(dtype).eps, atol=0)
