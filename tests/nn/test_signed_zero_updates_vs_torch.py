"""The sign of a zero that a float64 multiply-add leaves, against torch: ``p.add_(g, alpha=a)`` (SGD's update,
Adadelta's, ASGD's) is one std::fma per element in torch, and a sum that is exactly zero keeps the sign IEEE
gives it (-0 + -0 is -0: a -0.0 parameter with lr=0, or with a zero gradient, stays -0.0)."""

from __future__ import annotations

import math

import pytest
from _lib import tg, torch

OPTIMIZERS = {
    "SGD": {}, "SGD momentum": {"momentum": 0.9}, "SGD maximize": {"maximize": True}, "SGD foreach": {"foreach": True},
    "Adam": {}, "AdamW": {}, "RMSprop": {}, "Adagrad": {}, "Adamax": {}, "NAdam": {}, "RAdam": {}, "Adadelta": {},
    "ASGD": {}, "ASGD foreach": {"foreach": True}, "Rprop": {},
}


def _signs(lib, name: str, dtype: str, lr: float) -> list[float]:
    p = lib.tensor([-0.0] * 4, dtype=getattr(lib, dtype), requires_grad=True)
    optimizer = getattr(lib.optim, name.split()[0])([p], lr=lr, **OPTIMIZERS[name])
    p.grad = lib.tensor([0.0, -0.0, 1.0, -1.0], dtype=getattr(lib, dtype))
    optimizer.step()
    optimizer.step()
    return [math.copysign(1.0, v) for v in p.detach().tolist()]


@pytest.mark.parametrize("lr", [0, 0.0, -0.0, 0.1])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_a_zero_parameters_sign_after_steps(name: str, dtype: str, lr: float) -> None:
    assert _signs(tg, name, dtype, lr) == _signs(torch, name, dtype, lr)


@pytest.mark.parametrize("alpha", [0, 0.0, -0.0, -0.1])
@pytest.mark.parametrize("inplace", [False, True])
def test_add_with_alpha_keeps_a_negative_zero(alpha: float, inplace: bool) -> None:
    def program(lib):
        x = lib.tensor([-0.0, -0.0, 0.0, 0.0] * 5, dtype=lib.float64)
        y = lib.tensor([0.0, -0.0, 0.0, -0.0] * 5, dtype=lib.float64)
        out = x.add_(y, alpha=alpha) if inplace else x.add(y, alpha=alpha)
        return [math.copysign(1.0, v) for v in out.tolist()]
    assert program(tg) == program(torch)
