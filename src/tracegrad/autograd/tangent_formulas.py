"""PyTorch's forward formulas of the operators of kind ``FORMULA`` in :mod:`.tangent_dtypes`, written out.

They run only where an input's tangent has another dtype than its primal, so that the result's tangent is computed
in the tangent's dtype (a complex tangent of a real input keeps its imaginary part) as PyTorch's formula computes it.
Each takes the call's arguments, its outputs and the inputs' tangents and gives one tangent (or None) per output.
"""

from __future__ import annotations

from .._tensor import Tensor


def _gathered_at_flat_indices(spatial_dims: int):
    """Max pooling's ``gather(self_t.flatten(-k), -1, result1.flatten(-k)).view_as(result1)``."""

    def formula(args: tuple, outs: tuple, tangents: list) -> list:
        indices = outs[1]
        flat = tangents[0].flatten(-spatial_dims)
        return [flat.gather(-1, indices.flatten(-spatial_dims)).view_as(indices), None]

    return formula


def _nansum(args: tuple, outs: tuple, tangents: list) -> list:
    """``at::where(self_p.isnan(), 0, self_t).sum(dim, keepdim, dtype)``."""
    self, dim, keepdim, dtype = args[:4]
    masked = tangents[0].masked_fill(self.isnan(), 0)
    return [masked.sum(dim=dim or None, keepdim=keepdim, dtype=dtype)]


def _aminmax(args: tuple, outs: tuple, tangents: list) -> list:
    """``aminmax_jvp(self_p, self_t, result, dim, keepdim)`` for both results: the mean of the tangent over the
    positions where the input equals the result, ``where(mask, self_t, 0.).sum(dim, keepdim) / mask.sum(dim,
    keepdim)``."""
    self, dim, keepdim = args[:3]
    dims = () if dim is None else (dim,)
    return [_mean_at(self, tangents[0], result, dims, keepdim) for result in outs]


def _mean_at(self: Tensor, tangent: Tensor, result: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    mask = self == (result.unsqueeze(dims[0]) if dims and not keepdim else result)
    picked = tangent.masked_fill(mask.logical_not(), 0)
    dim, keep = dims or None, keepdim and bool(dims)
    return picked.sum(dim=dim, keepdim=keep) / mask.sum(dim=dim, keepdim=keep)


FORMULAS = {
    "max_pool2d_with_indices": _gathered_at_flat_indices(2),
    "adaptive_max_pool2d": _gathered_at_flat_indices(2),
    "max_pool3d_with_indices": _gathered_at_flat_indices(3),
    "adaptive_max_pool3d": _gathered_at_flat_indices(3),
    "nansum": _nansum,
    "aminmax": _aminmax,
}
