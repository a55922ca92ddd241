"""A float64 learning-rate tensor on float32 parameters (``lr=torch.tensor(0.01, dtype=torch.float64)``, or any
tensor lr under ``set_default_dtype(torch.float64)``): torch's step sizes are computed in float64 from the 0-d
tensor, but a 0-d tensor does not widen a float32 update, so the parameters' arithmetic stays float32. tracegrad
gives the same bits (it computed such updates in float64, an ulp off here and there).

torch's CPU square root is MKL's, not correctly rounded on every processor: torch gets a correctly rounded one
here, so that the rest of the arithmetic can be compared bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import correctly_rounded_torch_sqrt, tg, torch


@pytest.fixture(autouse=True)
def correct_torch_sqrt(monkeypatch):
    correctly_rounded_torch_sqrt(monkeypatch)


CASES = [
    ("AdamW", {}),
    ("Adam", {"weight_decay": 0.1}),
    ("Adamax", {}),
    ("Adagrad", {"lr_decay": 0.01}),
    ("Adagrad", {"foreach": True}),
    ("RMSprop", {}),
    ("RMSprop", {"momentum": 0.9, "centered": True, "foreach": True}),
    ("NAdam", {}),
    ("NAdam", {"foreach": True}),
    ("RAdam", {}),
    ("Adadelta", {}),
    ("ASGD", {"t0": 2}),
    ("SGD", {"momentum": 0.9}),
]


def _run(lib, name: str, options: dict, default_float64: bool) -> list:
    """A float32 parameter's values and its state after 7 steps of random gradients, with ``lr`` a float64
    tensor (the default dtype's where ``default_float64``)."""
    if default_float64:
        lib.set_default_dtype(lib.float64)
    try:
        rng = np.random.default_rng(2)
        param = lib.tensor(rng.standard_normal((6, 5)).astype(np.float32), requires_grad=True)
        lr = lib.tensor(0.01) if default_float64 else lib.tensor(0.01, dtype=lib.float64)
        opt = getattr(lib.optim, name)([param], lr=lr, **options)
        for _ in range(7):
            param.grad = lib.tensor(rng.standard_normal((6, 5)).astype(np.float32))
            opt.step()
        return [param.detach().numpy()] + [v.numpy() for v in opt.state[param].values()]
    finally:
        lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("default_float64", [False, True], ids=["float64_lr", "default_float64"])
@pytest.mark.parametrize(("name", "options"), CASES)
def test_float64_lr_tensor_on_float32_parameters(name, options, default_float64):
    ours, theirs = _run(tg, name, options, default_float64), _run(torch, name, options, default_float64)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
