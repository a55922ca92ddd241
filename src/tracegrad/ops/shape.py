"""Joining and rearranging: cat, stack and friends (the core set; more in shape_extra.py)."""

from __future__ import annotations

import numpy as np

from .._state import STATE
from ._util import result_dtype, wrap_dim
from .complex_ops import input_is_real, real_for_real_input, real_part_for_real_inputs
from .registry import defop


def _cat_kernel(tensors, dim=0):
    joined = _cat_plain(tensors, dim)
    if joined is not None:
        return joined
    arrays = [a if a.__class__ is np.ndarray else np.asarray(a) for a in tensors]
    if not arrays:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # PyTorch skips legacy empty 1-D tensors of shape (0,) when concatenating.
    shaped = [a for a in arrays if not (a.ndim == 1 and a.size == 0)] or arrays
    ref = shaped[0]
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, ref.ndim)
    before, after = ref.shape[:d], ref.shape[d + 1:]
    for i, a in enumerate(shaped):
        if a.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}")
        if a.shape[:d] == before and a.shape[d + 1:] == after:
            continue
        for k in range(ref.ndim):
            if k != d and a.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list.")
    dt = _common_dtype(shaped)
    if dt is not None:
        return np.concatenate(shaped, axis=d)
    dt = result_dtype(*shaped)
    return np.concatenate([a.astype(dt, copy=False) for a in shaped], axis=d)


def _cat_plain(arrays, dim: int):
    """The usual ``cat``, in one pass: arrays of one dtype and one rank (1 or more), sizes that agree but along
    ``dim`` (in range), and no legacy empty 1-D array; None for anything else (the kernel's checks word it)."""
    if not arrays:
        return None
    ref = arrays[0]
    if ref.__class__ is not np.ndarray:
        return None
    nd = ref.ndim
    if not -nd <= dim < nd:
        return None
    d = dim + nd if dim < 0 else dim
    dt, shape = ref.dtype, ref.shape
    before, after = shape[:d], shape[d + 1:]
    for a in arrays:
        if a.__class__ is not np.ndarray or a.dtype != dt or a.ndim != nd or (nd == 1 and not a.size):
            return None
        s = a.shape
        if s[:d] != before or s[d + 1:] != after:
            return None
    return np.concatenate(arrays, axis=d)


def _common_dtype(arrays: list) -> np.dtype | None:
    """The dtype all of ``arrays`` share (their result type, with no cast to make), or None."""
    dt = arrays[0].dtype
    for a in arrays:
        if a.dtype != dt:
            return None
    return dt


def _cat_vjp(ctx, g):
    dim, sizes = ctx.attrs
    from .views import slice as slice_op

    grads = []
    start = 0
    d = wrap_dim(dim, g.ndim)
    need = ctx.needs_input_grad
    real_g = real_part_for_real_inputs(ctx, g)  # (a real input's part: PyTorch's cat_tensors_backward)
    for k, shape in enumerate(sizes):
        if len(shape) == 1 and shape[0] == 0 and g.ndim != 1:  # skipped legacy empty input
            grads.append(None)
            continue
        n = shape[d]
        source = real_g if real_g is not None and input_is_real(ctx, k) else g
        grads.append(slice_op(source, d, start, start + n, 1) if need[k] else None)
        start += n
    return grads


def _cat_jvp(args, outs, tangents):
    from .creation import zeros_like

    return cat([zeros_like(x) if t is None else t for x, t in zip(args[0], tangents)], args[1])


cat = defop("cat(Tensor[] tensors, int dim=0) -> Tensor", _cat_kernel, vjp=_cat_vjp,
            attrs=("dim", "tensors_sizes"), jvp=_cat_jvp)


def _stack_kernel(tensors, dim=0):
    arrays = [a if a.__class__ is np.ndarray else np.asarray(a) for a in tensors]
    if not arrays:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, a in enumerate(arrays):
        if a.shape != arrays[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(arrays[0].shape)} at "
                               "entry 0 "
                               f"and {list(a.shape)} at entry {i}")
    d = wrap_dim(dim, arrays[0].ndim + 1)
    if _common_dtype(arrays) is None:
        dt = result_dtype(*arrays)
        arrays = [a.astype(dt, copy=False) for a in arrays]
    # (np.stack's own steps, without its checks, made above: each array given a new dim, then concatenated)
    key = (_WHOLE,) * d + (None,)
    return np.concatenate([a[key] for a in arrays], axis=d)


_WHOLE = slice(None)


def _stack_vjp(ctx, g):
    (dim,) = ctx.attrs
    from .views import select, unbind

    d = wrap_dim(dim, g.ndim)
    # PyTorch's stack_tensors_backward is grad.select(dim, k) for each input (SelectBackward0s when recorded, and
    # aten::select in a profile). A plain backward nothing watches takes the same views from one unbind: a select
    # per input made a stack of 50's backward 29% slower. A real input's part is cut to its real part.
    if STATE.grad_enabled or STATE.special:
        parts = [select(g, d, k) for k in range(len(ctx.input_shapes))]
    else:
        parts = unbind(g, d)
    return [real_for_real_input(ctx, k, p) if s is not None else None
            for k, (p, s) in enumerate(zip(parts, ctx.input_shapes))]


stack = defop("stack(Tensor[] tensors, int dim=0) -> Tensor", _stack_kernel, vjp=_stack_vjp, attrs=("dim",))


def _unfold_backward_kernel(g, input_sizes, dim, size, step):
    out = np.zeros(tuple(input_sizes), dtype=g.dtype)
    d = wrap_dim(dim, len(input_sizes)) if len(input_sizes) else 0
    if not len(input_sizes):  # (a 0-d input's one window: of one element, or of none)
        return g.sum(dtype=g.dtype).reshape(())
    count = g.shape[d]
    moved = np.moveaxis(g, d, 0)  # (count, ..., size)
    target = np.moveaxis(out, d, 0)
    for i in range(count):
        window = np.moveaxis(moved[i], -1, 0)  # (size, ...)
        target[i * step:i * step + size] += window
    return out


def _unfold_backward_vjp(ctx, g):
    input_sizes, dim, size, step = ctx.attrs
    return g.unfold(dim, size, step)


unfold_backward_op = defop("unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, int step) "
                           "-> Tensor",
                           _unfold_backward_kernel, vjp=_unfold_backward_vjp,
                           attrs=("input_sizes", "dim", "size", "step"))


def unfold_backward(g, input_sizes, dim, size, step):
    return unfold_backward_op(g, tuple(input_sizes), dim, size, step)
