"""Max unpooling layers: the partial inverses of ``MaxPool1d/2d/3d`` given the indices they returned."""

from __future__ import annotations

from ..._tensor import Tensor
from ...ops.nn_ops._common import expand_param
from .. import functional as F
from .module import Module, own_methods

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


class _MaxUnpoolNd(Module):
    _n: int

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = expand_param(kernel_size, self._n)
        self.stride = expand_param(stride if stride is not None else kernel_size, self._n)
        self.padding = expand_param(padding, self._n)

    def forward(self, input: Tensor, indices: Tensor, output_size: list[int] | None = None) -> Tensor:
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._n - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _n = 3


# (torch's classes define these methods each: Python's errors for a wrong call name them so)
own_methods((MaxUnpool1d, MaxUnpool2d, MaxUnpool3d), "__init__", "forward")
