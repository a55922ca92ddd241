"""The training step the MLP and CNN rows time, as a user writes it for a torch-like library."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from benchmarks.libs import tensor


def sgd_step(lib: ModuleType, model: Any, x_np: Any, y_np: Any, lr: float, device: str = "cpu") -> Callable[[], Any]:
    """``zero_grad(); cross_entropy(model(x), y).backward(); step()`` with ``optim.SGD(lr)`` as a zero-argument
    function returning the loss tensor (``model`` already holds its starting weights)."""
    if device != "cpu":
        model = model.to(device)
    x, y = tensor(lib, x_np, device), tensor(lib, y_np, device)
    opt = lib.optim.SGD(model.parameters(), lr=lr)
    cross_entropy = lib.nn.functional.cross_entropy

    def step() -> Any:
        opt.zero_grad()
        loss = cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step
