"""Identity, Linear and Bilinear layers, initialised like PyTorch's."""

from __future__ import annotations

import math

from ..._factories import empty
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "NonDynamicallyQuantizableLinear"]


class Identity(Module):
    """Returns its input; accepts (and ignores) any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with weight (out_features, in_features)."""

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # kaiming_uniform with a=sqrt(5) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as does the bias
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        # (torch's F.linear: its errors are the operator's)
        params = self._plain_parameters()
        if params is not None:
            return F._linear_operator(input, params["weight"], params["bias"])
        return F._linear_operator(input, self.weight, self.bias)

    def _plain_parameters(self) -> dict | None:
        """The parameter dict where ``self.weight`` and ``self.bias`` read it (a plain Linear holding both, neither
        shadowed in its instance dict), else None. Reading it directly skips Module.__getattr__, which Python calls
        only after its own attribute look-up has failed: some 0.4 us a read, a tenth of a small layer's forward."""
        d = self.__dict__
        if self.__class__ is not Linear or "weight" in d or "bias" in d:
            return None  # (a subclass may define them otherwise: parametrize's properties)
        params = d["_parameters"]
        return params if "weight" in params and "bias" in params else None

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear by another name: MultiheadAttention's ``out_proj`` (PyTorch keeps it out of dynamic
    quantization under this name, which its repr shows)."""


class Bilinear(Module):
    """``y = x1^T A x2 + b`` with weight (out_features, in1_features, in2_features)."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:  # (torch's check, where 1 / sqrt(0) would fail)
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
