"""Activation layers: thin modules over ``nn.functional`` with PyTorch's constructor arguments and reprs."""

from __future__ import annotations

import warnings

from ..._factories import full
from ..._tensor import Tensor
from ...ops.nn_ops.activation import relu_ as _relu_
from ...ops.nn_ops.activation import relu_fast as _relu_fast
from ...ops.pointwise import sigmoid as _sigmoid
from ...ops.pointwise import tanh as _tanh
from .. import functional as F
from ..parameter import Parameter
from .module import Module, own_methods

__all__ = [
    "ReLU",
    "ReLU6",
    "LeakyReLU",
    "RReLU",
    "ELU",
    "SELU",
    "CELU",
    "GELU",
    "SiLU",
    "Mish",
    "Softplus",
    "Hardtanh",
    "Hardswish",
    "Hardsigmoid",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "LogSoftmax",
    "Softmin",
    "Softmax2d",
    "Threshold",
    "LogSigmoid",
    "Softsign",
    "Tanhshrink",
    "GLU",
    "PReLU",
    "Hardshrink",
    "Softshrink",
]


def _inplace_str(inplace: bool, before: str = "") -> str:
    """``extra_repr`` of options ``before`` then ``inplace``, which shows only when set."""
    if not inplace:
        return before
    return f"{before}, inplace=True" if before else "inplace=True"


class _Inplace(Module):
    """Base of activations whose only option is ``inplace``."""

    _fn = None

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class ReLU(_Inplace):
    _fn = staticmethod(F.relu)

    def forward(self, input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            return F.relu(input)  # (its refusal of a non-tensor, in torch's words)
        return _relu_(input) if self.inplace else _relu_fast(input)


class SELU(_Inplace):
    _fn = staticmethod(F.selu)


class SiLU(_Inplace):
    _fn = staticmethod(F.silu)


class Mish(_Inplace):
    _fn = staticmethod(F.mish)


class Hardswish(_Inplace):
    _fn = staticmethod(F.hardswish)


class Hardsigmoid(_Inplace):
    _fn = staticmethod(F.hardsigmoid)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, f"negative_slope={self.negative_slope}")


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn from U(lower, upper) in training, (lower + upper) / 2 in eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, f"lower={self.lower}, upper={self.upper}")


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, f"alpha={self.alpha}")


class CELU(ELU):
    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        # (the old names, still taken, with torch's warnings)
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, f"min_val={self.min_val}, max_val={self.max_val}")


class ReLU6(Hardtanh):
    """torch's: Hardtanh(0.0, 6.0), whose forward (F.hardtanh) it runs."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, f"threshold={self.threshold}, value={self.value}")


class _NoArgs(Module):
    _fn = None

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input)


class Sigmoid(_NoArgs):
    _fn = staticmethod(_sigmoid)  # (torch's module calls ``torch.sigmoid``: its errors are that function's)


class Tanh(_NoArgs):
    _fn = staticmethod(_tanh)


class LogSigmoid(_NoArgs):
    _fn = staticmethod(F.logsigmoid)


class Softsign(_NoArgs):
    _fn = staticmethod(F.softsign)


class Tanhshrink(_NoArgs):
    _fn = staticmethod(F.tanhshrink)


class _Shrink(Module):
    _fn = None

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    _fn = staticmethod(F.hardshrink)


class Softshrink(_Shrink):
    _fn = staticmethod(F.softshrink)


class _DimActivation(Module):
    _fn = None

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_DimActivation):
    _fn = staticmethod(F.softmax)


class LogSoftmax(_DimActivation):
    _fn = staticmethod(F.log_softmax)


class Softmin(_DimActivation):
    _fn = staticmethod(F.softmin)


class Softmax2d(Module):
    """Softmax over the channels of each location of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), float(init), dtype=dtype))

    def reset_parameters(self) -> None:
        from .. import init as nn_init

        nn_init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


# (torch's classes define these methods each: Python's errors for a wrong call name them so)
own_methods((ReLU, SELU, SiLU, Mish, Hardswish, Hardsigmoid, CELU, Hardshrink, Softshrink, Softmax, LogSoftmax,
             Softmin, Sigmoid, Tanh, LogSigmoid, Softsign, Tanhshrink), "__init__", "forward")
