"""The nn.functional operators as registered ops (activations, losses, linear, normalisation, convolution,
pooling, embedding, padding, resampling). ``tracegrad.nn.functional`` is the public, PyTorch-signature layer
on top; ``PUBLIC``/``METHODS`` put the ones PyTorch also has at the top level (``torch.relu``,
``Tensor.softmax``...) in place.
"""

from __future__ import annotations

from . import activation, conv, distance, linear, loss, misc, norm, pixel_shuffle, pool, resample
from .public import METHODS, PUBLIC

__all__ = ["activation", "conv", "distance", "linear", "loss", "misc", "norm", "pixel_shuffle", "pool",
           "resample", "PUBLIC", "METHODS"]
