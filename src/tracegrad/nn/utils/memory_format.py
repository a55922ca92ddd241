"""``tracegrad.nn.utils.memory_format``: re-lay convolution weights out in a memory format (channels_last)."""

from __future__ import annotations

from typing import TypeVar

from ...memory_format import memory_format as _memory_format
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

_M = TypeVar("_M", bound=Module)


def _convert(module: _M, memory_format: _memory_format, kinds: tuple) -> _M:
    if isinstance(module, kinds):
        # a copy in the new layout swapped in under the same Parameter object (optimizers keep it)
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module: _M, memory_format: _memory_format) -> _M:
    """Give every ``Conv2d``/``ConvTranspose2d`` weight in ``module`` the layout ``memory_format``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: _M, memory_format: _memory_format) -> _M:
    """Give every ``Conv3d``/``ConvTranspose3d`` weight in ``module`` the layout ``memory_format``."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
