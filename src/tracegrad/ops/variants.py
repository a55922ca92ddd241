"""Derived operator variants (seed 003): the ``out=`` form of every functional operator."""

from __future__ import annotations

import warnings

import numpy as np

from .._state import STATE
from .._tensor import Tensor


def _requires_grad_anywhere(op, bound: tuple) -> bool:
    for i in op.tensor_idx:
        a = bound[i]
        if isinstance(a, Tensor) and a._rg:
            return True
    for i in op.list_idx:
        for t in bound[i] or ():
            if isinstance(t, Tensor) and t._rg:
                return True
    return False


def write_out(op, bound: tuple, out):
    """Run ``op`` and store its result(s) in ``out`` (a tensor or a tuple of tensors); return ``out``."""
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if STATE.grad_enabled and (_requires_grad_anywhere(op, bound) or any(o._rg for o in outs)):
        raise RuntimeError(f"{op.name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    _check_out_overlap(op, bound, outs)
    prev = STATE.grad_enabled
    STATE.grad_enabled = False
    try:
        result = op._eager(bound)
    finally:
        STATE.grad_enabled = prev
    results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(results) != len(outs):
        raise RuntimeError(f"{op.name}(): expected {len(results)} output tensors in out=, got {len(outs)}")
    for dst, src in zip(outs, results):
        _store(dst, src)
    return out


def _check_out_overlap(op, bound: tuple, outs: tuple) -> None:
    """PyTorch's refusal of an ``out=`` tensor sharing memory with an input (see mem_overlap.py)."""
    from .mem_overlap import check_overlap, out_check
    from .registry import BinaryPointwiseOp, UnaryPointwiseOp

    check = out_check(op.name, isinstance(op, (UnaryPointwiseOp, BinaryPointwiseOp)))
    inputs = [v._data if isinstance(v, Tensor) else [t._data for t in v if isinstance(t, Tensor)]
              for v in bound if isinstance(v, (Tensor, list, tuple))]
    for dst in outs:
        if isinstance(dst, Tensor):
            check_overlap(check, dst._data, inputs)


def _store(dst: Tensor, src: Tensor) -> None:
    from ..backend.dtypes import scalar_type_name
    from .pointwise import _can_cast_like_torch
    from .registry import check_no_internal_overlap

    check_no_internal_overlap(dst._data)
    dst._before_write()
    data = src._data
    if data.dtype != dst._data.dtype and not _can_cast_like_torch(data.dtype, dst._data.dtype):
        raise RuntimeError(f"result type {scalar_type_name(data.dtype)} can't be cast to the "
                           f"desired output type {scalar_type_name(dst._data.dtype)}")
    if dst._data.shape != data.shape:
        if dst._data.size != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(dst._data.shape)}, which "
                f"does not match the required output shape {list(data.shape)}. This behavior is deprecated, and in "
                "a future PyTorch release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                UserWarning, stacklevel=4)
        dst._data = np.array(data, dtype=dst._data.dtype, copy=True)
    else:
        np.copyto(dst._data, data, casting="unsafe")
    dst._bump_version()
