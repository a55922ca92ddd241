"""SparseAdam: Adam for dense parameters whose gradients have a sparse layout (``nn.Embedding(sparse=True)``).

tracegrad has no sparse layout, so every gradient this optimizer meets is dense, which PyTorch's SparseAdam
refuses at ``step``; what it checks when it is built (hyperparameters, complex parameters) is PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable

import tracegrad as _tg

from .._tensor import Tensor
from ._refusals import unpack_betas
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    _step_switches_grad_mode = False  # (PyTorch's step is in torch.no_grad())

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        _check_hparams(lr, betas, eps)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        complex_params = [[g, i] for g, group in enumerate(self.param_groups)
                          for i, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             f"parameters")

    def step(self, closure: Callable | None = None):
        loss = None
        if closure is not None:
            with _tg.enable_grad():
                loss = closure()
        for group in self.param_groups:
            unpack_betas(group)
            if any(p.grad is not None for p in group["params"]):
                # (a sparse gradient is the only kind PyTorch's SparseAdam updates with; tracegrad makes none)
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        return loss


def _check_hparams(lr, betas: tuple[float, float], eps: float) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    # (``0.0 < x`` as torch writes it, NaN refused too: a value that is no number fails with the TypeError naming
    # float first)
    if not 0.0 < lr:  # noqa: SIM300
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 < eps:  # noqa: SIM300
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
