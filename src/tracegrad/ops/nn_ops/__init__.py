"""The nn.functional operators as registered ops (activations, losses, linear, normalisation, convolution,
pooling, embedding, padding, resampling). ``tracegrad.nn.functional`` is the public, PyTorch-signature layer
on top; ``PUBLIC``/``METHODS`` put the ones PyTorch also has at the top level (``torch.relu``,
``Tensor.softmax``...) in place.
"""

from __future__ import annotations

# (fractional_pool too, though only nn.functional calls it: its schemas are among those torch's parser knows)
from . import activation, conv, distance, fractional_pool, linear, loss, misc, norm, pixel_shuffle, pool, resample
from .public import METHODS, PUBLIC

__all__ = ["activation", "conv", "distance", "fractional_pool", "linear", "loss", "misc", "norm", "pixel_shuffle",
           "pool", "resample", "PUBLIC", "METHODS"]
