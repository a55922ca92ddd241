"""``nn.functional.embedding_bag`` and ``nn.functional.ctc_loss``: PyTorch's Python-level argument handling
(2-D input as fixed-length bags, the deprecated argument order, max_norm renormalisation, mode strings); the
operators are in ``ops/nn_ops/bag_ctc.py``."""

from __future__ import annotations

import warnings

from .._tensor import Tensor
from ..backend.dtypes import int64
from ..ops.nn_ops import bag_ctc as _bag_ctc
from ..ops.nn_ops import misc as _misc

_MODES = {"sum": _bag_ctc.MODE_SUM, "mean": _bag_ctc.MODE_MEAN, "max": _bag_ctc.MODE_MAX}


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxima of bags of embedding rows, without building the per-index embeddings."""
    if weight.dtype == int64 and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, ...)` "
            "is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must have the "
            f"same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                f"sequences. However, found offsets of type {_class_repr(offsets)}"
            )
        from .. import arange

        # each row a bag of the same length (a zero-length row makes arange's step zero, as in PyTorch)
        offsets = arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        from ..autograd.grad_mode import no_grad

        with no_grad():  # renormalises the looked-up rows of weight in place, outside autograd
            _misc.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    return _bag_ctc.embedding_bag(weight, input, offsets, scale_grad_by_freq, _MODES[mode], sparse,
                                  per_sample_weights, include_last_offset, padding_idx)[0]


def _class_repr(value) -> str:
    """``repr(type(value))``, a tensor's class named as torch's (tracegrad's Tensor is torch.Tensor to a user)."""
    from .._tensor import Tensor

    return "<class 'torch.Tensor'>" if type(value) is Tensor else repr(type(value))
