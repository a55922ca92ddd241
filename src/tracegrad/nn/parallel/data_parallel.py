"""``DataParallel``. torch splits each batch across its GPUs; with none available it keeps the module and calls
it directly (``device_ids`` is empty), which is what happens here on the CPU. Splitting across CuPy GPUs is not
implemented: with a GPU visible, construction raises rather than silently running on one device."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...autograd.profiler import record_function
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _gpu_available() -> bool:
    from ... import cuda

    return cuda.is_available()


def _refuse_gpus() -> None:
    raise NotImplementedError("tracegrad's DataParallel does not split batches across GPUs; move the module and "
                              "its inputs to the GPU with .to('cuda') instead")


class DataParallel(Module):
    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        if _gpu_available():
            _refuse_gpus()
        # torch's path when no accelerator is found: no dim/output_device attributes, no device ids
        self.module = module
        self.device_ids: list = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        with record_function("DataParallel.forward"):
            return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                  dim: int = 0, module_kwargs: Any | None = None) -> Any:
    """The functional form, which torch refuses outright without an accelerator."""
    if _gpu_available():
        _refuse_gpus()
    raise RuntimeError("device type could not be determined")
