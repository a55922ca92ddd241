"""``torch.nn.modules.padding``: the padding layers, where torch defines them (tracegrad writes them beside the
pooling layers; ``_torch_homes`` says they live here, as torch's classes print)."""

from __future__ import annotations

from .pooling import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
    _CircularPadNd,
    _ConstantPadNd,
    _ReflectionPadNd,
    _ReplicationPadNd,
)

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]

PRIVATE_BASES = (_CircularPadNd, _ConstantPadNd, _ReflectionPadNd, _ReplicationPadNd)
