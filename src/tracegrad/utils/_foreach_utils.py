"""``torch.utils._foreach_utils``: which devices run foreach and fused kernels, and the grouping of tensor lists by
device and dtype that torch's optimizers do before a foreach call (PyTorch's file, on tracegrad's names)."""

from __future__ import annotations

from typing import TypeAlias

import tracegrad as torch

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad


def _get_foreach_kernels_supported_devices() -> list[str]:
    r"""Return the device type list that supports foreach kernels."""
    return ["cuda", "xpu", "mtia", torch._C._get_privateuse1_backend_name()]


def _get_fused_kernels_supported_devices() -> list[str]:
    r"""Return the device type list that supports fused kernels in optimizer."""
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", torch._C._get_privateuse1_backend_name()]


TensorListList: TypeAlias = list[list[Tensor | None]]
Indices: TypeAlias = list[int]
_foreach_supported_types = [Tensor]


@no_grad()
def _group_tensors_by_device_and_dtype(
    tensorlistlist: TensorListList,
    with_indices: bool = False,
) -> dict[tuple[torch.device, torch.dtype], tuple[TensorListList, Indices]]:
    """Split parallel tensor lists into groups of one device and dtype (see ``torch._C``'s function)."""
    return torch._C._group_tensors_by_device_and_dtype(tensorlistlist, with_indices)


def _device_has_foreach_support(device: torch.device) -> bool:
    # (torch also asks ``not torch.jit.is_scripting()``: tracegrad never scripts)
    return device.type in (_get_foreach_kernels_supported_devices() + ["cpu"])


def _has_foreach_support(tensors: list[Tensor], device: torch.device) -> bool:
    return _device_has_foreach_support(device) and all(
        t is None or type(t) in _foreach_supported_types for t in tensors
    )
