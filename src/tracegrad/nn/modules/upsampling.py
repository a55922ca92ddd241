"""``torch.nn.modules.upsampling``: the upsampling layers, where torch defines them (tracegrad writes them beside
the pooling layers; ``_torch_homes`` says they live here, as torch's classes print)."""

from __future__ import annotations

from .pooling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]

PRIVATE_BASES = ()
