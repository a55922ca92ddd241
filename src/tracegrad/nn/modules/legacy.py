"""Layers torch keeps for old code: the deprecated ``Container`` and ``NLLLoss2d``, Torch7's ``CrossMapLRN2d``,
and ``SyncBatchNorm``, which without an initialised process group (always, here: tracegrad has no
``torch.distributed``) runs as plain batch norm, exactly as torch's does then."""

from __future__ import annotations

import warnings
from typing import Any

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ._functions import CrossMapLRN2d as _cross_map_lrn2d
from .loss import NLLLoss
from .module import Module
from .normalization import _BatchNorm

__all__ = ["Container", "NLLLoss2d", "CrossMapLRN2d", "SyncBatchNorm"]


def _warn_on_new(cls: type, message: str) -> None:
    """What typing_extensions.deprecated does to a class: a FutureWarning each time one (or a subclass's
    instance) is made, pointing at the caller."""
    original_new = cls.__new__

    def __new__(klass, *args: Any, **kwargs: Any):
        warnings.warn(message, FutureWarning, stacklevel=2)
        if original_new is object.__new__:
            return original_new(klass)
        return original_new(klass, *args, **kwargs)

    cls.__new__ = staticmethod(__new__)


class Container(Module):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


_warn_on_new(Container, "`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                        "Subclass that instead.")


class NLLLoss2d(NLLLoss):
    def __init__(self, weight: Tensor | None = None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


_warn_on_new(NLLLoss2d, "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and "
                        "see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.")


class CrossMapLRN2d(Module):
    """Local response normalisation across channels, Torch7's formulation (see ``_functions.CrossMapLRN2d``)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class SyncBatchNorm(_BatchNorm):
    """Batch norm over any input with a channel dim; statistics would be synchronised across processes in a
    distributed run, which tracegrad cannot start, so it always normalises with the local batch as torch does
    outside one."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any | None = None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any | None = None) -> Module:
        """A copy of ``module``'s tree with every batch norm replaced by a SyncBatchNorm sharing its parameters and
        running statistics."""
        output = module
        if isinstance(module, _BatchNorm):
            output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                   module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    output.weight = module.weight
                    output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
            if hasattr(module, "qconfig"):
                output.qconfig = module.qconfig
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return output
