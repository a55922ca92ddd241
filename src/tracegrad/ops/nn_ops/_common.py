"""Shared pieces of the nn operators: the fused-op recorder, reductions, dtype checks.

Fused operators (linear, cross-entropy) build their autograd node by hand on the eager fast path, so one
call costs one kernel plus the node, exactly like a registered op. When anything special is active (an
observer, anomaly or inference mode) they dispatch the same registered operators instead, so the graph is
the same one; under a transform or forward-mode AD they compose standard operators (``transforms_active``).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

import numpy as np

from ..._state import STATE
from ..._tensor import Tensor, _new
from ...autograd.edges import NO_EDGE, gradient_edge
from ...autograd.saved import SavedTensor
from ...backend import dtypes as _dt
from ...backend.dtypes import from_numpy_dtype, scalar_type_name
from .._util import broadcast_mismatch

REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def type_name(np_dtype) -> str:
    """PyTorch's scalar type name, as in its kernel errors ('Float', 'Long')."""
    return scalar_type_name(np_dtype)


def transforms_active() -> bool:
    """A transform interpreter or a forward-AD level is active: compose standard, batchable operators."""
    return bool(STATE.stack or STATE.fw_grad_levels)


def fast_path_ok() -> bool:
    """Whether a fused op may record its node by hand: nothing needs the general path (no transform,
    observer, anomaly mode, inference mode or forward-mode AD; ``STATE.special`` sums them up)."""
    return not STATE.special


def new_output(data: np.ndarray) -> Tensor:
    """A fresh non-view result (``_output_nr`` and ``_base`` keep their class defaults: no instance dict)."""
    out = _new(Tensor)
    out._data = data
    out._rg = False
    out._gfn = None
    out._vc = None
    return out


def edge_of(t) -> tuple:
    if t is not None and t._rg:
        return gradient_edge(t)
    return NO_EDGE


def meta_of(t):
    if t is not None and t._rg:
        return (t._data.shape, t._data.dtype)
    return None


def save(t):
    return SavedTensor._make(t) if t is not None else None


def check_float(a: np.ndarray, name: str, error: type[Exception] = NotImplementedError, *,
                complex_ok: bool = False) -> None:
    """PyTorch's dtype dispatch error for a kernel instantiated for floating types only (and complex ones where
    ``complex_ok``): integer, bool and complex input is refused before anything is computed, with ATen's dispatch
    error (a NotImplementedError unless ``error`` says otherwise)."""
    if a.dtype.kind not in ("fc" if complex_ok else "f") and a.dtype is not _dt.bfloat16.np:
        raise error(f"\"{name}\" not implemented for '{type_name(a.dtype)}'")


def check_mixed_dtype(x: np.ndarray, *params) -> bool:
    """ATen's CPU normalizations (mixed_data_type.h): the parameters are of a mixed type when the first one given
    is not of the input's dtype; then each must be float32 and the input bfloat16 or float16 (a double batch with a
    float model is refused, not silently computed). Otherwise a parameter of another dtype is refused as the
    kernel's typed pointer refuses it. Returns whether the call is a mixed one (its statistics stay float32)."""
    given = [p for p in params if p is not None]
    if not given or given[0].dtype == x.dtype:
        for p in given:
            if p.dtype != x.dtype:
                raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found {type_name(p.dtype)}")
        return False
    if any(p.dtype != np.float32 for p in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if x.dtype != np.float16 and x.dtype is not _dt.bfloat16.np:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return True


def reduce_array(loss: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == 1:
        return np.asarray(loss.mean(), dtype=loss.dtype)
    if reduction == 2:
        return np.asarray(loss.sum(), dtype=loss.dtype)
    return loss


def reduction_enum(reduction: str) -> int:
    try:
        return REDUCTIONS[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def dtype_of(a) -> object:
    return from_numpy_dtype(a.dtype)


def expand_grad_for_reduction(g, shape: tuple, reduction: int):
    """The incoming grad of a reduced loss, brought to the elementwise loss's shape as a scale factor.

    ``mean`` divides by the element count; ``sum`` broadcasts; ``none`` keeps the elementwise grad.
    """
    if reduction == 1:
        n = int(np.prod(shape)) if shape else 1
        return g / n if n else g
    return g


def as_int(value) -> int:
    """An int argument (a size or one of its elements, an index) as torch's parser takes it: what
    ``operator.index`` takes but a bool (``int()`` would also read 2.5 or "3"). Anything else is a TypeError, which
    the operator's guard words as torch's parser."""
    if value.__class__ is bool:
        raise TypeError("an int argument must be an int, not bool")
    return operator.index(value)


def as_long(value) -> int:
    """``as_int`` for a parameter the schema types ``int`` rather than ``SymInt``: torch's parser takes no 0-d
    NumPy array there (only a SymInt is read through ``__index__``)."""
    if isinstance(value, np.ndarray):
        raise TypeError("an int argument must be an int, not numpy.ndarray")
    return as_int(value)


def expand_param(value, n: int) -> tuple:
    """An int-or-sequence size argument as an ``n``-tuple (``2`` -> ``(2, 2)``, ``[3]`` -> ``(3, 3)``), as ATen
    expands an ``int[n]`` argument; anything but ints fails (a TypeError)."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return (as_int(value[0]),) * n
        return tuple(as_int(v) for v in value)
    return (as_int(value),) * n


def aten_sizes(value, n: int, message: str, allow_empty: bool = False) -> tuple:
    """An ``int[n]`` argument of a pooling operator as an ``n``-tuple of ints: a single int, or a sequence of 1 or
    ``n`` of them (empty too with ``allow_empty``: a stride left to the kernel size), else ATen's ``message``."""
    if isinstance(value, (tuple, list)) and len(value) not in (1, n) and not (allow_empty and not value):
        raise RuntimeError(message)
    return () if isinstance(value, (tuple, list)) and not value else expand_param(value, n)


def ntuple(value, n: int) -> tuple:
    """torch's ``_pair``/``_triple`` (``torch.nn.modules.utils``): an iterable as a tuple of its items, anything
    else repeated ``n`` times; nothing converted, so a wrong value reaches the operator that refuses it."""
    if isinstance(value, Iterable):
        return tuple(value)
    return (value,) * n


def run_op(op, *args):
    """``op(*args)`` with every argument given. During a plain ``backward()`` (no graph recorded) with nothing
    special active, the kernel runs directly: a dispatched call could not be observed or behave
    differently."""
    if STATE.grad_enabled or STATE.special:
        return op(*args)
    arrays = [a._data if isinstance(a, Tensor) else a for a in args]
    result = op.kernel(*arrays)
    layout = op.result_layout  # (PyTorch's layout for the results, as the dispatched call gives them)
    if result.__class__ is tuple:
        return tuple(new_output(r if layout is None else layout(r, arrays, op.layout_operands)) for r in result)
    return new_output(result if layout is None else layout(result, arrays, op.layout_operands))


def broadcast_shapes(*shapes: tuple) -> tuple:
    """The shapes broadcast together; PyTorch's error ("The size of tensor a ...") when they do not."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        error = broadcast_mismatch([tuple(s) for s in shapes])
        if error is None:
            raise
        raise error from None
