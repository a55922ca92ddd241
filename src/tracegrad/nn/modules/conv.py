"""Convolution layers: Conv1d/2d/3d, ConvTranspose1d/2d/3d."""

from __future__ import annotations

import math

from ..._factories import empty
from ..._tensor import Tensor
from ...ops.nn_ops._common import ntuple
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module, own_methods

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    _nd = 2

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride,
        padding,
        dilation,
        transposed: bool,
        output_padding,
        groups: int,
        bias: bool,
        padding_mode: str,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        # (torch's _single/_pair/_triple: sizes kept as given, refused where they are used, by ``empty`` for the
        # kernel size and by the convolution for the others)
        kernel_size, stride, dilation = (ntuple(v, nd) for v in (kernel_size, stride, dilation))
        if isinstance(padding, str) and not transposed:
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = ntuple(padding, nd)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = ntuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * nd
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(nd - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        if transposed:
            shape = (in_channels, out_channels // groups) + kernel_size
        else:
            shape = (out_channels, in_channels // groups) + kernel_size
        self.weight = Parameter(empty(shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            False,
            0,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = type(self)._fn  # (torch's F.conv{n}d, whose errors are the operator's)
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, (0,) * self._nd, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    _nd = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    _nd = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    _nd = 3
    _fn = staticmethod(F.conv3d)


class _ConvTranspose(_ConvNd):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            True,
            output_padding,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        if output_size is None:
            return self.output_padding
        nd = self._nd
        non_spatial = 2 if input.dim() == nd + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + nd:
            output_size = output_size[non_spatial:]
        if len(output_size) != nd:
            raise ValueError(
                f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} or "
                f"{non_spatial + nd} elements (got {len(output_size)})"
            )
        mins, maxs = [], []
        for d in range(nd):
            size = (
                (input.size(d + non_spatial) - 1) * self.stride[d]
                - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1)
                + 1
            )
            mins.append(size)
            maxs.append(size + self.stride[d] - 1)
        for d in range(nd):
            if output_size[d] < mins[d] or output_size[d] > maxs[d]:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {mins} to "
                    f"{maxs} (for an input of {input.size()[2:]})"
                )
        return tuple(output_size[d] - mins[d] for d in range(nd))

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        # (a padding string is kept as its letters, as torch's _pair keeps it, which the operator refuses)
        output_padding = self._output_padding(input, output_size)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                              self.dilation)


class ConvTranspose1d(_ConvTranspose):
    _nd = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    _nd = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    _nd = 3
    _fn = staticmethod(F.conv_transpose3d)


# (torch's classes define these methods each: Python's errors for a wrong call name them so)
own_methods((Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d), "__init__", "forward")
