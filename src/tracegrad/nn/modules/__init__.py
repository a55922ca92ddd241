"""The layer classes of ``tracegrad.nn``."""

from __future__ import annotations

from .activation import (
                         CELU,
                         ELU,
                         GELU,
                         GLU,
                         SELU,
                         Hardshrink,
                         Hardsigmoid,
                         Hardswish,
                         Hardtanh,
                         LeakyReLU,
                         LogSigmoid,
                         LogSoftmax,
                         Mish,
                         PReLU,
                         ReLU,
                         ReLU6,
                         Sigmoid,
                         SiLU,
                         Softmax,
                         Softmin,
                         Softplus,
                         Softshrink,
                         Softsign,
                         Tanh,
                         Tanhshrink,
                         Threshold,
)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d
from .flatten import Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .loss import (
                         BCELoss,
                         BCEWithLogitsLoss,
                         CrossEntropyLoss,
                         HuberLoss,
                         KLDivLoss,
                         L1Loss,
                         MSELoss,
                         NLLLoss,
                         SmoothL1Loss,
)
from .module import Module
from .normalization import (
                         BatchNorm1d,
                         BatchNorm2d,
                         BatchNorm3d,
                         GroupNorm,
                         InstanceNorm1d,
                         InstanceNorm2d,
                         LayerNorm,
)
from .pooling import (
                         AdaptiveAvgPool1d,
                         AdaptiveAvgPool2d,
                         AvgPool1d,
                         AvgPool2d,
                         CircularPad1d,
                         CircularPad2d,
                         ConstantPad1d,
                         ConstantPad2d,
                         MaxPool1d,
                         MaxPool2d,
                         ReflectionPad1d,
                         ReflectionPad2d,
                         ReplicationPad1d,
                         ReplicationPad2d,
                         Upsample,
                         ZeroPad2d,
)
from .sparse import Embedding

__all__ = [
    "Module", "Identity", "Linear", "Bilinear", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "LayerNorm", "GroupNorm",
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Embedding", "Flatten", "Unflatten",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "ReLU", "ReLU6", "LeakyReLU", "ELU",
    "SELU", "CELU", "GELU", "SiLU", "Mish", "Softplus", "Hardtanh", "Hardswish", "Hardsigmoid", "Sigmoid", "Tanh",
    "Softmax", "LogSoftmax", "Softmin", "Threshold", "LogSigmoid", "Softsign", "Tanhshrink", "GLU", "PReLU",
    "Hardshrink", "Softshrink", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
    "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Upsample", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d",
    "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d",
]
