"""The nn operators PyTorch also exposes as ``torch.<name>`` and ``Tensor.<name>``, with those signatures."""

from __future__ import annotations

import warnings

from ..._tensor import Tensor
from ...backend.dtypes import to_dtype
from ..creation import to_dtype as cast
from . import activation as act


def _maybe_cast(input: Tensor, dtype) -> Tensor:
    return cast(input, to_dtype(dtype)) if dtype is not None else input


def implicit_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return act.softmax(_maybe_cast(input, dtype), dim, False)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return act.log_softmax(_maybe_cast(input, dtype), dim, False)


def relu(input: Tensor) -> Tensor:
    return act.relu(input)


def relu_(input: Tensor) -> Tensor:
    return act.relu_(input)


PUBLIC = {
    "relu": relu, "relu_": relu_, "softmax": softmax, "log_softmax": log_softmax,
    "selu": act.selu, "selu_": act.selu_, "celu": lambda input, alpha=1.0: act.celu(input, alpha),
    "celu_": lambda input, alpha=1.0: act.celu_(input, alpha),
    "threshold": lambda input, threshold, value: act.threshold(input, threshold, value),
    "threshold_": lambda input, threshold, value: act.threshold_(input, threshold, value),
}

METHODS = {
    "relu": relu, "relu_": relu_, "softmax": softmax, "log_softmax": log_softmax,
}
