"""The warnings a notebook user meets (deprecated arguments, implicit dims, broadcasting losses, scheduler order,
degrees of freedom, scalar conversion of a tensor that requires grad...): the same categories and texts as torch.

Warnings PyTorch gives once per process (``.T`` of a 3-d tensor, ``float()`` of a tensor that requires grad,
``meshgrid`` without ``indexing``) are left out: which test meets them first decides. torch's C++ warnings end
with "(Triggered internally at <its source file>:<line>.)", which names a file of PyTorch's build; that suffix is
left out of the comparison.
"""

from __future__ import annotations

import re
import warnings

import pytest
from _lib import tg, torch


def _programs(lib) -> dict:
    nn, F = lib.nn, lib.nn.functional

    def nonleaf_grad():
        return (lib.ones(2, requires_grad=True) * 2).grad

    def scheduler_before_optimizer():
        optimizer = lib.optim.SGD([nn.Parameter(lib.ones(2))], lr=0.1)
        lib.optim.lr_scheduler.StepLR(optimizer, 1).step()

    def retain_grad_on_leaf():
        lib.ones(2, requires_grad=True).retain_grad()

    def clip_infinite_norm():
        p = nn.Parameter(lib.ones(2))
        p.grad = lib.tensor([float("inf"), 1.0])
        return nn.utils.clip_grad_norm_([p], 1.0)

    return {
        "grad of a non-leaf": nonleaf_grad,
        "tensor(tensor)": lambda: lib.tensor(lib.ones(2)),
        "softmax without dim": lambda: F.softmax(lib.ones(2, 3)),
        "log_softmax without dim": lambda: F.log_softmax(lib.ones(2, 3)),
        "mse_loss broadcasting": lambda: F.mse_loss(lib.ones(3, 1), lib.ones(3)),
        "l1_loss broadcasting": lambda: F.l1_loss(lib.ones(3, 1), lib.ones(3)),
        "torch.range": lambda: lib.range(0, 3),
        "F.sigmoid": lambda: F.sigmoid(lib.ones(2)),
        "F.tanh": lambda: F.tanh(lib.ones(2)),
        "scheduler before optimizer": scheduler_before_optimizer,
        "Dropout2d of a 2-d input": lambda: nn.Dropout2d()(lib.ones(2, 3)),
        "F.upsample": lambda: F.upsample(lib.ones(1, 1, 2, 2), scale_factor=2),
        "retain_grad on a leaf": retain_grad_on_leaf,
        "clip_grad_norm_ of an infinite norm": clip_infinite_norm,
        "reduce=": lambda: F.cross_entropy(lib.ones(2, 3), lib.tensor([0, 1]), reduce=False),
        "size_average=": lambda: nn.MSELoss(size_average=False),
        "LSTM dropout with one layer": lambda: nn.LSTM(2, 2, num_layers=1, dropout=0.5),
        "nn.init.normal": lambda: nn.init.normal(lib.empty(2)),
        "std of one element": lambda: lib.ones(1).std(),
        "var with no degrees of freedom": lambda: lib.ones(1, 3).var(0),
        "register_backward_hook": lambda: nn.Linear(2, 2).register_backward_hook(lambda *a: None),
        "scheduler get_lr": lambda: lib.optim.lr_scheduler.StepLR(
            lib.optim.SGD([nn.Parameter(lib.ones(2))], lr=0.1), 1).get_lr(),
        "torch.lu": lambda: lib.lu(lib.eye(2)),
        "chain_matmul": lambda: lib.chain_matmul(lib.eye(2), lib.eye(2)),
        "reduction='elementwise_mean'": lambda: F.nll_loss(lib.ones(2, 3), lib.tensor([0, 1]),
                                                         reduction="elementwise_mean"),
        "kl_div reduction mean": lambda: F.kl_div(lib.ones(2, 3).log_softmax(1), lib.ones(2, 3) / 3),
    }


_TRIGGERED = re.compile(r" \(Triggered internally at .*\)$", re.S)


def _warnings_of(lib, name: str) -> tuple[list[str], str | None]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            _programs(lib)[name]()
            error = None
        except Exception as exc:  # noqa: BLE001 - the error is part of what is compared
            error = f"{type(exc).__name__}: {exc}"
    texts = [f"{w.category.__name__}: {_TRIGGERED.sub('', str(w.message)).rstrip()}" for w in caught
             if "torch.jit.script" not in str(w.message)]
    return [t.replace("tracegrad", "torch") for t in texts], error


@pytest.mark.parametrize("name", list(_programs(torch)))
def test_warning_as_in_torch(name):
    assert _warnings_of(tg, name) == _warnings_of(torch, name)  # (some warn in neither: F.sigmoid no longer does)
