"""``max_unpool2d`` / ``max_unpool3d`` (the partial inverses of max pooling) and ``_weight_norm_interface``
(the fused weight normalisation ``nn.utils.weight_norm`` records on the CPU for float weights).

Unpooling scatters each input value to the flat position its index names within the output plane; the
other positions are zero. Its derivative is max_pool_double_backward (gather the gradient at the indices).
"""

from __future__ import annotations

import math

import numpy as np

from ..._tensor import Tensor
from ...autograd.forward_ad import refuse_unformulated, unformulated_refusal
from ...backend.dtypes import float32, float64
from .._util import wrap_dim
from ..registry import defop
from ._common import type_name
from .pool import max_pool_double_backward


def _unpool_kernel(x, indices, output_size, n: int):
    if indices.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {type_name(indices)}")
    if x.shape != indices.shape:
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor ({list(x.shape)}) but got "
            f"indices tensor with shape: {list(indices.shape)}"
        )
    lead = x.shape[:-n]
    plane = math.prod(output_size)
    out = np.zeros(lead + tuple(output_size), dtype=x.dtype)
    flat_out = out.reshape(math.prod(lead), plane)
    flat_idx = indices.reshape(flat_out.shape[0], math.prod(indices.shape[-n:]))
    bad = (flat_idx < 0) | (flat_idx >= plane)  # (PyTorch reports the last bad index it meets)
    if bad.any():
        raise RuntimeError(
            f"Found an invalid max index: {flat_idx[bad][-1]} (output volumes are of size "
            f"{'x'.join(map(str, output_size))})"
        )
    np.put_along_axis(flat_out, flat_idx, x.reshape(flat_idx.shape), axis=1)
    return out


def _check_sizes(name: str, values, n: int, dims: str, colon: str) -> None:
    if len(values) != n:
        raise RuntimeError(
            f"There should be exactly {'two' if n == 2 else 'three'} elements ({dims}) in {name}, but got"
            f"{colon} {len(values)} elements."
        )


def _max_unpool2d_kernel(x, indices, output_size):
    _check_sizes("output_size", output_size, 2, "height, width", "")
    if x.ndim not in (3, 4):
        raise RuntimeError(
            f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with {x.ndim} dimensions."
        )
    return _unpool_kernel(x, indices, tuple(output_size), 2)


def _max_unpool3d_kernel(x, indices, output_size, stride, padding):
    dims = "depth, height, width"
    _check_sizes("output_size", output_size, 3, dims, "")
    _check_sizes("stride", stride, 3, dims, ":")
    _check_sizes("padding", padding, 3, dims, ":")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    if x.ndim not in (4, 5):
        raise RuntimeError(
            f"Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with {x.ndim} dimensions."
        )
    return _unpool_kernel(x, indices, tuple(output_size), 3)


def _unpool_vjp(n: int):
    def vjp(ctx, g):
        (indices,) = ctx.saved_tensors
        return max_pool_double_backward(g, indices, n)

    return vjp


max_unpool2d = defop(
    "max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor",
    _max_unpool2d_kernel,
    vjp=_unpool_vjp(2),
    saves=("indices",),
    differentiable=("self",),
    node_name="MaxUnpool2DBackward0",
)

max_unpool3d = defop(
    "max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, int[3] padding) -> Tensor",
    _max_unpool3d_kernel,
    vjp=_unpool_vjp(3),
    saves=("indices",),
    differentiable=("self",),
    node_name="MaxUnpool3DBackward0",
)


# ---- weight normalisation ----------------------------------------------------------------------------------


def _norm_except_dim_array(v: np.ndarray, dim: int) -> np.ndarray:
    axes = tuple(a for a in range(v.ndim) if a != dim)
    return np.sqrt(np.sum(v.astype(np.float64) ** 2, axis=axes, keepdims=True)).astype(v.dtype)


def _weight_norm_interface_kernel(v, g, dim=0):
    norms = _norm_except_dim_array(v, dim)
    return (v * (g / norms)).astype(v.dtype, copy=False), norms.reshape(-1)


def _weight_norm_interface_vjp(ctx, grad_w, _grad_norms=None):
    # differentiable form of PyTorch's _weight_norm_differentiable_backward: w = v * g / |v|, so
    # dg = sum(grad_w * v) / |v| and dv = g / |v| * (grad_w - v * dg / |v|)
    v, g, norms = ctx.saved_tensors
    (dim,) = ctx.attrs
    axes = [a for a in range(v.ndim) if a != dim]
    shape = [1] * v.ndim
    shape[dim] = v.shape[dim]
    norms = norms.view(shape)
    dot = (grad_w * v).sum(axes, keepdim=True) if axes else grad_w * v
    need = ctx.needs_input_grad
    grad_v = (g / norms) * (grad_w - v * (dot / (norms * norms))) if need[0] else None
    grad_g = (dot / norms) if need[1] else None
    return grad_v, grad_g


_weight_norm_interface = defop(
    "_weight_norm_interface(Tensor v, Tensor g, int dim=0) -> (Tensor, Tensor)",
    _weight_norm_interface_kernel,
    vjp=_weight_norm_interface_vjp,
    saves=("v", "g", "result1"),
    attrs=("dim",),
    node_name="WeightNormInterfaceBackward0",
)
# (PyTorch has no forward formula for it, and its autograd kernel refuses a tangent before the kernel's checks)
_weight_norm_interface.forward_ad_refusal = unformulated_refusal("_weight_norm_interface")


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """``torch.norm_except_dim``: the ``pow``-norm over every dim but ``dim`` (kept as size-1 dims); over
    all elements when ``dim == -1``."""
    if dim == -1:
        return v.norm(pow)
    dim = wrap_dim(dim, v.ndim)  # (torch moves ``dim`` to the front with transpose, which wraps and checks it)
    axes = [a for a in range(v.ndim) if a != dim]
    if not axes:
        return v.abs() if pow != 0 else (v != 0).to(v.dtype)
    return v.norm(pow, dim=axes, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``torch._weight_norm``: the fused interface for float/double weights normalised over the first or
    last dim (as PyTorch's CPU dispatch), else the composite ``v * (g / norm_except_dim(v, 2, dim))``. PyTorch
    takes the fused interface for half precision too, so a tangent there is refused whatever the dtype."""
    if dim == 0 or dim == v.ndim - 1:
        refuse_unformulated("_weight_norm_interface", (v, g))
    if (dim == 0 or dim == v.ndim - 1) and v.dtype in (float32, float64):
        return _weight_norm_interface(v.contiguous(), g.contiguous(), dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))
