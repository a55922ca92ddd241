"""Indexing: ``__getitem__``/``__setitem__`` and the gather/scatter operators they lower to.

Basic indices (ints, slices, None, Ellipsis) become view operators (``select``, ``slice``, ``unsqueeze``),
so ``x[0] = v`` is ``x.select(0, 0).copy_(v)`` and autograd sees an in-place write through a view, as in
PyTorch. Advanced indices (integer/boolean tensors, lists) become ``index`` / ``index_put_``.
"""

from __future__ import annotations

import builtins
import operator
import re
import warnings
from collections.abc import Iterator, Sequence

import numpy as np

from .._arg_parser import non_tensor_element, tp_name
from .._nested_data import follows_sequence_protocol
from .._state import STATE
from .._tensor import Tensor, _wrap
from ..backend.dtypes import BAREBONES_UNSIGNED_CHARS, scalar_type_name
from . import views as _views
from ._jvp import set_self_tangent_rules
from ._util import expands_to, unsupported, wrap_dim
from .accumulate import add_rows_at
from .bfloat16_in_float import seen_dtype
from .registry import check_no_internal_overlap, defop
from .scalar_fill import scalar_for
from .views import _INT64_MAX


def index_tensor(array: np.ndarray) -> Tensor:
    """Wrap an integer array produced internally (index maps) as a tensor."""
    return _wrap(np.asarray(array, dtype=np.int64))


def _numpy_key(indices) -> tuple:
    key = []
    for ix in indices:
        if ix is None:
            key.append(builtins.slice(None))
        else:
            arr = np.asarray(ix)
            _check_index_dtypes((arr,))
            key.append(arr.astype(bool) if arr.dtype == np.uint8 else arr)  # (a byte index is a mask)
    return tuple(key)


def _index_kernel(a, indices):
    if len(indices) == 1 and a.ndim:  # (one leading long index: NumPy's take, far leaner than its fancy indexing)
        ix = indices[0]
        if ix.__class__ is np.ndarray and ix.dtype.kind == "i" and ix.dtype.itemsize >= 4 and ix.ndim:
            try:
                return np.take(a, ix, axis=0)
            except IndexError:
                pass  # (worded below)
    _warn_of_byte_masks(indices)  # (as expandTensors: also where a backward formula indexes through a byte mask)
    key = _numpy_key(indices)
    try:
        return np.ascontiguousarray(a[key])
    except IndexError as exc:
        message = _index_error_message(a, key, exc)
        if message is None:  # (an empty result: torch reads no index, so refuses none)
            return np.ascontiguousarray(a[_zeroed(key)])
        raise IndexError(message) from None


def _index_error_message(a, key, exc) -> str | None:
    """torch's words for what NumPy refused to index, in torch's order; None where torch refuses nothing (an
    index out of bounds, where the result is empty: torch's kernel reads no index then)."""
    message = str(exc)
    if message.startswith("shape mismatch: indexing arrays could not be broadcast together with shapes "):
        # NumPy lists the shapes as tuples; PyTorch as lists, and says tensors
        shapes = re.findall(r"\(([^)]*)\)", message.partition("shapes ")[2])
        listed = ", ".join("[" + ", ".join(d.strip() for d in shape.split(",") if d.strip()) + "]" for shape in shapes)
        return f"shape mismatch: indexing tensors could not be broadcast together with shapes {listed}"
    for d, k in enumerate(key):
        if isinstance(k, np.ndarray) and k.dtype.kind == "b" and k.shape != a.shape[d:d + k.ndim]:
            return (f"The shape of the mask {list(k.shape)} at index {d} does not match the shape of the indexed "
                    f"tensor {list(a.shape)} at index {d}")
    if _indexes_empty_dim(a.shape, key):
        return "index is out of bounds for dimension with size 0"
    if not a.size:
        return None
    return _out_of_bounds_message(a.shape, key) or message


def _indexes_empty_dim(shape: tuple, key: tuple) -> bool:
    """Whether a dim of size 0 is indexed by indices that are not empty (torch refuses that before it looks at
    any index's value). A mask indexes its dims with its nonzeros."""
    dims, index_shapes = _advanced_dims(key)
    if not builtins.any(shape[d] == 0 for d in dims if d < len(shape)):
        return False
    return 0 not in np.broadcast_shapes(*index_shapes)


def _advanced_dims(key: tuple) -> tuple:
    """The dims a key of whole slices and index arrays indexes with arrays (a mask covers as many as it has), and
    the shapes of the index arrays (a mask's: its count of nonzeros, as the ``nonzero()`` columns torch makes)."""
    dims, index_shapes, dim = [], [], 0
    for k in key:
        if k.__class__ is np.ndarray:
            mask = k.dtype.kind == "b"
            width = k.ndim if mask else 1
            dims.extend(range(dim, dim + width))
            index_shapes.append((int(np.count_nonzero(k)),) if mask else k.shape)
            dim += width
        else:
            dim += 1
    return dims, index_shapes


def _out_of_bounds_message(shape: tuple, key: tuple) -> str | None:
    """torch's kernel reads the indices element by element of the result (the index tensors broadcast together),
    each element's in their order: the first index out of bounds, named by its tensor's place among them."""
    dims = [d for d, k in enumerate(key) if isinstance(k, np.ndarray)]
    arrays = np.broadcast_arrays(*(np.flatnonzero(key[d]) if key[d].dtype.kind == "b" else key[d] for d in dims))
    bad = [(a >= shape[d]) | (a < -shape[d]) if key[d].dtype.kind != "b" else np.zeros(a.shape, bool)
           for d, a in zip(dims, arrays)]
    anywhere = np.logical_or.reduce(bad).reshape(-1)
    if not anywhere.any():
        return None
    first = int(anywhere.argmax())
    j = next(j for j, b in enumerate(bad) if b.reshape(-1)[first])
    value = int(arrays[j].reshape(-1)[first])
    return f"index {value} is out of bounds for dimension {j} with size {shape[dims[j]]}"


def _zeroed(key: tuple) -> tuple:
    """``key`` with its integer indices made 0 (the shape of the result, where no index is read)."""
    return tuple(np.zeros_like(k) if isinstance(k, np.ndarray) and k.dtype.kind in "iu" else k for k in key)


def _index_vjp(ctx, g):
    (indices,) = ctx.saved_tensors
    from .creation import new_zeros

    zeros = new_zeros(g, ctx.attrs[0])
    return index_put(zeros, indices, g, accumulate=True)


index = defop("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", _index_kernel, vjp=_index_vjp,
              saves=("indices",), attrs=("self_sym_sizes",), differentiable=("self",))


def _index_put_kernel(a, indices, values, accumulate=False):
    out = a.copy()
    _index_put_into(out, indices, values, accumulate, seen_dtype(a))  # (the copy hides a bfloat16 self's dtype)
    return out


def _index_put_into(out, indices, values, accumulate, out_dtype=None):
    """``out_dtype``: the dtype ``out`` stands for (bfloat16 for a float32 copy of a bfloat16 tensor), by default
    its own."""
    if len(indices) > out.ndim:  # (torch counts the entries, a mask as one)
        raise IndexError(f"too many indices for tensor of dimension {out.ndim} (got {len(indices)})")
    values = np.asarray(values)
    if not accumulate and values.size == 1:
        _check_masked_fill_dispatch(indices, out.shape)
    filled = not accumulate and fills_through_mask(indices, values.size)
    if filled:
        _check_byte_mask_fill(indices, values.size)
        check_no_internal_overlap(out, "masked_fill_")  # (torch's index_put_ hands this write to masked_fill_)
        # (torch's masked_fill_: the one value is read as a number, which any dtype takes where it fits)
        values = np.asarray(scalar_for(values.item(), out.dtype), dtype=out.dtype)
    else:
        _check_index_dtypes(indices)
        _check_masks(out.shape, indices)
    key = _numpy_key(indices)
    if values.ndim or 0 in out.shape:  # (a 0-d value expands to any result)
        _check_put_shapes(out.shape, key, values.shape)
    out_dtype = seen_dtype(out) if out_dtype is None else out_dtype
    if not filled and seen_dtype(values) != out_dtype:  # (a filled value is of out's dtype now)
        _check_value_dtype(out, out_dtype, key, values)
        values = values.astype(out.dtype)
    try:
        if accumulate and len(key) == 1 and key[0].__class__ is np.ndarray and key[0].dtype.kind in "iu":
            rows = np.broadcast_to(values, key[0].shape + out.shape[1:])
            add_rows_at(out, key[0], rows.reshape((key[0].size,) + out.shape[1:]))
        elif accumulate:
            np.add.at(out, key, values)
        else:
            out[key] = values
    except IndexError as exc:
        message = _index_error_message(out, key, exc)
        if message is not None:  # (else an empty result: nothing to write)
            raise IndexError(message) from None
    except (ValueError, TypeError) as exc:  # (NumPy raises TypeError for a mask given a value of 2+ dims)
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(out[key].shape)}") from exc



def _check_masked_fill_dispatch(indices: Sequence, shape: tuple) -> None:
    """torch's index_put_ of one value (not accumulating) first looks for a lone mask to hand to ``masked_fill_``
    (canDispatchToMaskedFill): it checks the shape of the first mask it meets, without warning of a byte one,
    unless an index of another kind comes before it (a second index of any kind ends the search)."""
    dim = 0
    for k in indices:
        if k is None:
            dim += 1
            continue
        if _is_mask(k):
            _check_mask_shape(k, shape, dim)
        return


def _check_put_shapes(shape: tuple, key: tuple, value_shape: tuple) -> None:
    """index_put_'s refusals before it reads an index, in torch's order: indices into an empty dim, then a value
    that does not broadcast to the indexing result, with no more dims than it (NumPy's assignment drops extra
    leading 1s; torch's setitem drops them before, index_put_ itself does not). Indices that do not broadcast
    together are left to the write, which words that refusal first."""
    result = _indexing_result_shape(shape, key)
    if result is None:
        return
    if 0 in shape and _indexes_empty_dim(shape, key):
        raise IndexError("index is out of bounds for dimension with size 0")
    if value_shape != result[len(result) - len(value_shape):] and not expands_to(value_shape, result):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value_shape)} cannot be broadcast to "
                           f"indexing result of shape {list(result)}")


def _indexing_result_shape(shape: tuple, key: tuple) -> tuple | None:
    """The shape of ``a[key]`` for an array of ``shape`` and a key of whole slices and index arrays (a mask
    counts as its nonzeros), without indexing: the indexed dims give way to the indices' broadcast shape, in
    place where the indices are next to each other, else in front. None where the indices do not broadcast."""
    taken, index_shapes = _advanced_dims(key)
    if not taken:  # (no index arrays, or 0-d masks only: torch's nonzero() of one gives no index, so none is read)
        return shape
    try:
        middle = index_shapes[0] if len(index_shapes) == 1 else np.broadcast_shapes(*index_shapes)
    except ValueError:
        return None
    first, last = taken[0], taken[-1]
    if last - first + 1 == len(taken):  # (next to each other)
        return shape[:first] + middle + shape[last + 1:]
    return middle + tuple(n for d, n in enumerate(shape) if d not in taken)


def fills_through_mask(indices: Sequence, value_size: int) -> bool:
    """Whether torch's index_put_ writes through ``masked_fill_``: one value, through a lone mask index."""
    given = [a for a in indices if a is not None]
    return value_size == 1 and len(given) == 1 and np.asarray(given[0]).dtype in (np.bool_, np.uint8)


def _check_fill_through_mask(t: Tensor, advanced: list, value: Tensor) -> bool:
    """A value written through a lone mask index: torch's index_put_ then writes it with ``masked_fill_``, as a
    number that ``t``'s dtype takes where it fits (refused here where it does not). The value itself, of any
    dtype, is index_put_'s, which records IndexPutBackward0 with an edge to it: an integer ``t`` then requires grad,
    and a complex ``t``'s gradient reaches a real value complex, which the engine refuses, as PyTorch's. Returns
    whether the value is written so."""
    if not fills_through_mask(advanced, value._data.size):
        return False
    _check_byte_mask_fill(advanced, value._data.size)
    if value._data.dtype == t._data.dtype:
        return True
    if t._data.dtype.char in BAREBONES_UNSIGNED_CHARS:  # (masked_fill_'s dispatch refuses them before converting)
        raise unsupported("masked_fill", t._data.dtype)
    scalar_for(value._data.item(), t._data.dtype)
    return True


def _check_value_dtype(out: np.ndarray, out_dtype: np.dtype, key: tuple, values: np.ndarray) -> None:
    """index_put_ writes no value of another dtype; torch checks the value's shape first (the write below words
    that refusal, and any of the indices)."""
    try:
        shape = out[_zeroed(key)].shape
        np.broadcast_to(values, shape)
    except (IndexError, ValueError):
        return
    raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                       f"{scalar_type_name(out_dtype)} for the destination and "
                       f"{scalar_type_name(seen_dtype(values))} for the source.")


def _index_put_vjp(ctx, g):
    (indices,) = ctx.saved_tensors
    (accumulate,) = ctx.attrs
    need = ctx.needs_input_grad
    ga = gv = None
    if need[0]:
        if accumulate:
            ga = g
        else:
            from .creation import new_zeros

            # (the shape of the values written, read without indexing: torch's formula indexes nothing here, so
            # warns of no byte mask)
            key = _numpy_key([None if i is None else i._data for i in indices])
            ga = index_put(g, indices, new_zeros(g, _indexing_result_shape(tuple(g.shape), key)))
    if need[1]:
        gv = index(g, indices)
    return ga, gv


index_put = defop("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
                  _index_put_kernel, vjp=_index_put_vjp, saves=("indices",), attrs=("accumulate",),
                  differentiable=("self", "values"))


def _index_put_inplace_kernel(a, indices, values, accumulate=False):
    _index_put_into(a, indices, values, accumulate)
    return a


index_put_ = defop("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
                   _index_put_inplace_kernel, vjp=_index_put_vjp, saves=("indices",), attrs=("accumulate",),
                   differentiable=("self", "values"), node_name="IndexPutBackward0")
set_self_tangent_rules(index_put, index_put_)


def refuse_non_tensor_indices(indices, argument: int) -> None:
    """torch's parser takes tensors only among index_put's indices (a None too, unlike ``x[None, i]``), naming
    the element and the argument (0 for the method, whose tensor is not counted; 1 for the function)."""
    if isinstance(indices, (list, tuple)):
        for position, index in enumerate(indices):
            if not isinstance(index, Tensor):
                raise non_tensor_element(position, argument, index)


def _public_index_put(op):
    """``torch.index_put`` / ``torch.index_put_``: the operator behind torch's parser check of the indices (the
    operator itself takes a None for a full slice, as tracegrad's indexing and backward formulas hand it)."""
    def call(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
        refuse_non_tensor_indices(indices, 1)
        return op(input, indices, values, accumulate)

    call.__name__ = call.__qualname__ = op.name
    return call


public_index_put, public_index_put_ = _public_index_put(index_put), _public_index_put(index_put_)


def _take_kernel(a, index):
    idx = np.asarray(index)
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {scalar_type_name(idx)}")
    flat = np.ascontiguousarray(a).reshape(-1)
    n = flat.size
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = idx[(idx >= n) | (idx < -n)].flat[0]
        raise IndexError(f"out of range: tried to access index {int(bad)} on a tensor of {n} elements.")
    return flat[idx]


def _take_vjp(ctx, g):
    _self, idx = ctx.saved_tensors  # (self is saved as PyTorch's: unpacking it checks its version)
    from .creation import zeros_like
    from .extra_math import put

    # PyTorch's take_backward: zeros_like(self).put_(index, grad, accumulate=True), laid out as self
    return put(zeros_like(_self), idx, g, accumulate=True)


take = defop("take(Tensor self, Tensor index) -> Tensor", _take_kernel, vjp=_take_vjp, saves=("self", "index"),
             differentiable=("self",))


# ---- Python indexing ---------------------------------------------------------------------------------------------

_SEQUENCE_AS_TUPLE_LIMIT = 32  # (NumPy's legacy rule, kept by torch: only a sequence shorter than this is a tuple)


# (torch 2.13 still reads such a sequence as a tuple, and says it will not)
_NON_TUPLE_SEQUENCE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; use "
    "x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
    "which will result either in an error or a different result"
)


def _split_key(key) -> tuple:
    """The items of an index. As torch (after NumPy's legacy rule), a short sequence that is not a tensor or a
    NumPy array, holding a tensor, a sequence, a slice, ``...`` or None, is read as a tuple of items (with torch's
    deprecation warning)."""
    if isinstance(key, tuple):
        return key
    if _reads_as_tuple(key):
        from .._warnings import warn_at_caller

        warn_at_caller(_NON_TUPLE_SEQUENCE_WARNING, UserWarning)
        return _numpy_items(tuple(key))  # (its NumPy items then read as a tuple's: a 0-d array an integer)
    return (key,)


def _spans_dim(start, stop, step: int, size: int) -> bool:
    return step == 1 and (start is None or start == 0) and (stop is None or stop >= size)


def _reads_as_tuple(key) -> bool:
    """torch's treatSequenceAsTuple: a sequence (by Python's protocol) of fewer than 32 items, one of them a
    tensor, a sequence, a slice, ``...`` or None. A sequence whose length or items cannot be read is not one
    (torch clears the error)."""
    if key.__class__ is list:
        items = key
        if len(items) >= _SEQUENCE_AS_TUPLE_LIMIT:
            return False
    else:
        items = _sequence_items(key)
        if items is None:
            return False
    for item in items:
        if item.__class__ is not int and (item is None or item is Ellipsis or isinstance(item, (
                Tensor, builtins.slice)) or follows_sequence_protocol(item)):
            return True
    return False


def _sequence_items(key) -> list | None:
    """The items of a key that is a sequence of fewer than 32 items, read as PySequence_GetItem reads them, or
    None (for a sequence whose length or items cannot be read, too: torch clears the error)."""
    if isinstance(key, (Tensor, np.ndarray)) or not follows_sequence_protocol(key):
        return None
    try:
        length = len(key)
        return None if length >= _SEQUENCE_AS_TUPLE_LIMIT else [key[i] for i in range(length)]
    except Exception:  # noqa: BLE001 - torch clears whatever error reading the sequence raised
        return None


def _is_mask_tensor(k) -> bool:
    """A bool or byte tensor: torch's indexing reads it as a mask over as many dims as it has."""
    return isinstance(k, Tensor) and k._data.dtype in (np.bool_, np.uint8)


def _specified_dims(key: tuple) -> int:
    """The dims a key indexes, counted as torch counts them: None, ``...`` and Python bools none, a mask tensor
    as many as it has, anything else one."""
    count = 0
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, bool):
            continue
        count += k._data.ndim if _is_mask_tensor(k) else 1
    return count


_INLINE_DIMS = 5  # (c10's SizesAndStrides keeps the sizes of up to 5 dims in place, then as many strides)


def _size_read_at(t: Tensor, dim: int) -> int:
    """The size torch's indexing reads for dim ``dim`` of ``t``. Two ellipses each skip the unindexed dims, so
    ``dim`` can pass ``t``'s last dim; torch then reads on, unchecked, past the sizes: the unused size slots hold
    0, the strides follow them (what a freshly made tensor holds there)."""
    shape = t._data.shape
    if dim < len(shape):
        return shape[dim]
    past = dim - builtins.max(len(shape), _INLINE_DIMS)
    return t.stride()[past] if 0 <= past < len(shape) else 0


def _slice_index(value) -> int:
    """A slice bound or step read as Python reads it (``__index__``), clamped to int64 as Python's slices clamp
    it (torch's clamp to the least SymInt is ``_truncated_to_symint``'s)."""
    if not hasattr(type(value), "__index__"):  # (an ``__index__`` that refuses words its own refusal)
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    number = operator.index(value)
    return builtins.min(builtins.max(number, -_INT64_MAX - 1), _INT64_MAX)


_SLICE_MIN = -(2 ** 62)  # (torch's smallest slice bound: the least SymInt it represents)


def _truncated_to_symint(start: int, stop: int, step: int) -> tuple:
    """torch clamps a slice's start, stop and step below its least SymInt up to it, with a warning."""
    if start >= _SLICE_MIN and stop >= _SLICE_MIN and step >= _SLICE_MIN:
        return start, stop, step
    warnings.warn("Truncating the start/stop/step of slice. This is likely because of saved old models when the "
                  "start/stop/step were larger.", UserWarning, stacklevel=5)  # (at the user's indexing line)
    return builtins.max(start, _SLICE_MIN), builtins.max(stop, _SLICE_MIN), builtins.max(step, _SLICE_MIN)


def _unpack_slice(k: builtins.slice) -> tuple:
    """A slice's (start, stop, step), read in torch's order: the step first, a zero step refused, a missing start
    0 and a missing stop INT64_MAX (SliceBackward0 shows them)."""
    step = 1 if k.step is None else _slice_index(k.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    start = 0 if k.start is None else _slice_index(k.start)
    stop = _INT64_MAX if k.stop is None else _slice_index(k.stop)
    return _truncated_to_symint(start, stop, step)


def _apply_basic(t: Tensor, key: tuple, keep_full_slices: bool = False, sources: dict | None = None):
    """Apply ints/slices/None/Ellipsis as views; return the view and the advanced index list (None where a dim
    is not indexed), read item by item as torch's ``applySlicing`` reads them.

    Like PyTorch, a slice spanning its whole dim records no ``slice`` unless ``keep_full_slices`` (a bare
    slice ``x[a:b]`` in ``__getitem__``). Each ``...`` skips the dims no item indexes, so two of them skip
    twice (torch takes them so). ``sources`` (when given) maps each advanced index array read from a tensor, by
    its id, to that tensor."""
    from .views import slice as slice_op
    from .views import unsqueeze

    specified = _specified_dims(key)
    if specified > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
    out = t
    dim = 0
    advanced: list = []
    for real_dim, k in enumerate(key):  # (torch's errors name a key by its place in the index tuple)
        if k is Ellipsis:
            skip = t.ndim - specified
            advanced.extend([None] * skip)
            dim += skip
        elif k is None:
            out = unsqueeze(out, dim)
            advanced.append(None)
            dim += 1
        elif isinstance(k, bool) or (_is_mask_tensor(k) and k._data.ndim == 0):
            out = unsqueeze(out, dim)  # (True indexes the new dim whole, False empties it)
            advanced.append(np.array([True]) if bool(k) else np.array([False]))
            dim += 1
        elif isinstance(k, (int, np.integer)) or (isinstance(k, Tensor) and k._data.ndim == 0 and
                                                  k._data.dtype.kind in "iu"):
            out = _select_item(out, dim, _int64(k), real_dim)
        elif isinstance(k, builtins.slice):
            start, stop, step = _unpack_slice(k)
            if step < 0:
                raise ValueError("step must be greater than zero")
            full = start == 0 and step == 1 and _size_read_at(out, dim) <= stop and out._data.ndim
            if step > _LARGE_STEP:
                out = _slice_with_large_step(out, dim, start, stop, step)
            elif keep_full_slices or not full:
                out = slice_op(out, dim, start, stop, step)
            advanced.append(None)
            dim += 1
        else:
            arr = _index_array(k)
            advanced.append(arr)
            if sources is not None and isinstance(k, Tensor):
                sources[id(arr)] = k
            dim += arr.ndim if _is_mask(arr) else 1
    return out, advanced


_LARGE_STEP = 2 ** 31  # (beyond it a slice's size or strides may wrap in torch's int64 arithmetic)
_UINT64 = 2 ** 64


def _wrapped_int64(n: int) -> int:
    """``n`` as a C int64 holds it after an overflowing operation (two's complement)."""
    n %= _UINT64
    return n - _UINT64 if n > _INT64_MAX else n


def _c_division(n: int, d: int) -> int:
    """C's integer division (toward zero) of ``n`` by a positive ``d``."""
    return n // d if n >= 0 else -(-n // d)


def _clamped_bound(bound: int, size: int) -> int:
    """A slice bound as ATen's slice reads it: a negative one counted from the end, then clamped to the dim."""
    if bound < 0:
        bound += size
    return builtins.min(builtins.max(bound, 0), size)


def _slice_with_large_step(t: Tensor, dim: int, start: int, stop: int, step: int) -> Tensor:
    """``t``'s slice along ``dim`` with a step large enough for torch's int64 arithmetic to wrap: its size
    ``(length + step - 1) / step`` becomes 0 (an empty slice) or -1, and its stride ``stride * step`` may turn
    negative; ``as_strided`` then refuses the negative stride or the size."""
    from .views import slice as slice_op

    if dim >= t._data.ndim:
        return slice_op(t, dim, start, stop, step)  # (refused there)
    shape, item = t._data.shape, t._data.itemsize
    begin, end = _clamped_bound(start, shape[dim]), _clamped_bound(stop, shape[dim])
    length = builtins.max(end - begin, 0)
    size = _c_division(_wrapped_int64(length + step - 1), step)
    sizes, strides = list(shape), list(t.stride())
    sizes[dim], strides[dim] = size, _wrapped_int64(strides[dim] * step)
    _check_as_strided_geometry(sizes, strides, item)
    if t.stride()[dim] * step * item > _INT64_MAX:
        # a stride NumPy cannot hold in bytes: the same elements (none or one, so long a step is) with a step of 1
        # (torch makes a tensor of negative size where another dim is empty: the nearest is an empty one)
        return slice_op(t, dim, begin, begin + builtins.max(size, 0), 1)
    if size > 0:
        return slice_op(t, dim, start, stop, step)  # (nothing wrapped: NumPy's size agrees)
    return slice_op(t, dim, begin, begin, step)


def _check_as_strided_geometry(sizes: list, strides: list, itemsize: int) -> None:
    """``as_strided``'s refusals of a view's geometry: a stride below the least SymInt, a negative stride, then a
    storage size beyond int64 (computeStorageNbytes, which refuses nothing where a dim has size 0)."""
    for stride in strides:  # (an int64 beyond the least SymInt is refused as torch reads the list)
        if stride < _SLICE_MIN:
            raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a SymInt: {stride}")
    if builtins.min(strides) < 0:
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {strides}")
    if 0 in sizes:
        return
    extent = 1
    for size, stride in zip(sizes, strides):
        extent += stride * (size - 1)
        if size < 0 or extent * itemsize > _INT64_MAX:
            raise RuntimeError(f"Storage size calculation overflowed with sizes={sizes} and strides={strides}")


def _check_lone_item_of_0d(t: Tensor, key) -> None:
    """torch takes a lone integer or slice key (not in a tuple) straight to select or slice, on dim 0: of a 0-d
    tensor, with their own refusals (its size read as 0, past the sizes it has not)."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        key = _int64(key)
        if key == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                             "in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"index {int(key)} is out of bounds for dimension 0 with size 0")
    if isinstance(key, builtins.slice):
        if _unpack_slice(key)[2] < 0:
            raise ValueError("step must be greater than zero")
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def _int64(k) -> int:
    """An integer index as torch unpacks it: refused beyond int64."""
    k = int(k)
    if not -_INT64_MAX - 1 <= k <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return k


def _select_item(out: Tensor, dim: int, k: int, real_dim: int) -> Tensor:
    """``out.select(dim, k)`` for an integer item, its bound checked first (torch words the check)."""
    from .views import select

    size = _size_read_at(out, dim)
    if k < -size or k >= size:
        raise IndexError(f"index {k} is out of bounds for dimension {real_dim} with size {size}")
    return select(out, dim, k)


def _index_array(k) -> np.ndarray:
    """The array of an advanced index item. A tensor keeps its dtype (``index`` refuses the ones torch
    refuses); a byte tensor is a (deprecated) mask. A sequence or a NumPy array is read as torch reads it: bools
    and bytes as a mask, anything else as long integers (floats cut toward zero)."""
    _check_index_type(k)
    if isinstance(k, Tensor):
        arr = k._data  # (a byte mask kept: it is refused where a bool one is not, and warned of by index/index_put_)
        return arr.astype(np.int64) if arr.dtype == np.int32 else arr
    try:
        arr = np.asarray(k)
    except ValueError:  # (ragged)
        _raise_as_torch_reads(k)
        raise
    if _is_mask(arr):
        return arr
    if arr.dtype == object:
        _raise_as_torch_reads(k)  # (what NumPy keeps as objects: torch's error for it, if it has one)
    if arr.dtype == object or (arr.dtype == np.uint64 and arr.size and arr.max() > _INT64_MAX):
        raise ValueError("Overflow when unpacking long long")  # (ints beyond int64)
    if arr.dtype.kind == "c":
        raise TypeError("'complex' object cannot be interpreted as an integer")
    return arr.astype(np.int64, copy=False)


def _raise_as_torch_reads(data) -> None:
    """torch's error for index data NumPy cannot read as an array of numbers, from its passes over the data
    (indexing_tensor_from_data: the dtype, a long unless bool or byte, then the sizes, then each item)."""
    from .. import _nested_data as nested

    found = nested.infer_dtype(data).np
    target = found if found in (np.dtype(np.bool_), np.dtype(np.uint8)) else np.dtype(np.int64)
    nested.check_items(data, nested.sizes_of(data), target)


_INDEX_DTYPES = frozenset(np.dtype(d) for d in (np.int64, np.int32, np.uint8, np.bool_))


def _check_advanced(shape: tuple, advanced: list) -> None:
    """Tensor indexing's checks of the advanced indices against the (sliced) tensor they index, in torch's order:
    their number, their dtypes, then each mask as index's expandTensors reads it."""
    _check_index_count(shape, advanced)
    _check_index_dtypes(advanced)
    _check_masks_handed_on(shape, advanced)


def _check_index_count(shape: tuple, advanced: Sequence) -> None:
    """Python indexing's count of the indices, up to the last one given (a mask counts once here)."""
    given = len(advanced)
    while advanced[given - 1] is None:
        given -= 1
    if given > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {given})")


def _check_index_dtypes(indices: Sequence) -> None:
    """torch indexes through long, int, byte (a mask) and bool tensors only."""
    for a in indices:
        if a is not None and (a.dtype if a.__class__ is np.ndarray else np.asarray(a).dtype) not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _masks_with_dims(indices: Sequence) -> Iterator[tuple[np.ndarray, int]]:
    """Each mask among ``indices`` with the first dim it covers (a mask covers as many dims as it has, any other
    entry, None included, one)."""
    dim = 0
    for k in indices:
        if k is not None and _is_mask(k):
            yield k, dim
            dim += k.ndim
        else:
            dim += 1


def _check_masks(shape: tuple, indices: Sequence) -> None:
    """The masks as index_put_'s expandTensors reads them, one after the other: a byte one warned of, then its
    shape checked, so that a refused mask is the last warned of."""
    for mask, dim in _masks_with_dims(indices):
        _warn_of_byte_masks([mask])
        _check_mask_shape(mask, shape, dim)


def _check_masks_handed_on(shape: tuple, advanced: list) -> None:
    """The masks of tensor indexing, checked before it hands them to index / index_put_, which warn of a 1-d byte
    mask themselves: a multi-dim one is expanded to indices first, so is warned of here, and where a mask is
    refused here all those before it are (torch's expandTensors warns of each mask it reads, then checks it)."""
    if not builtins.any(k is not None and _is_mask(k) for k in advanced):  # (the usual case: no mask)
        return
    masks = list(_masks_with_dims(advanced))
    errors = [_mask_shape_error(mask, shape, dim) for mask, dim in masks]
    refused = builtins.any(error is not None for error in errors)
    for (mask, _), error in zip(masks, errors):
        if refused or mask.ndim > 1:
            _warn_of_byte_masks([mask])
        if error is not None:
            raise error


def _warn_of_byte_masks(advanced: list) -> None:
    """torch's deprecation warning, once for each byte mask, at the user's indexing line."""
    for a in advanced:
        if a is not None and a.dtype == _UINT8:
            from .._warnings import warn_at_caller  # (here: the kernel calls this on every indexing)

            warn_at_caller("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                           "instead.", UserWarning)


_UINT8 = np.dtype(np.uint8)
_MASK_DTYPES = frozenset((np.dtype(np.bool_), _UINT8))


def _is_mask(a: np.ndarray) -> bool:
    return a.dtype in _MASK_DTYPES


def _check_byte_mask_fill(indices: Sequence, value_size: int) -> None:
    """torch writes one value through a lone mask index with ``masked_fill_``, which refuses a byte mask."""
    if fills_through_mask(indices, value_size) and np.asarray(next(a for a in indices if a is not None)).dtype \
            == np.uint8:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")


def _check_index_type(k) -> None:
    """What torch's indexing refuses before reading an index: a float or any object that is not a tensor, a
    sequence (a ``range`` or a deque as well: torch reads any Python sequence as an index tensor) or a NumPy
    array, and text (which torch tries to read as a tensor's data)."""
    if isinstance(k, (float, np.floating)) or not (isinstance(k, (list, Tensor, np.ndarray, np.generic, bool)) or
                                                   follows_sequence_protocol(k)):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         f"indices (got {tp_name(k)})")
    text = k if isinstance(k, (str, bytes)) else next(
        (v for v in k if isinstance(v, (str, bytes))), None) if isinstance(k, (list, tuple)) else None
    if text is not None:
        raise TypeError(f"new(): invalid data type '{type(text).__name__}'")


def _check_mask_shape(mask: np.ndarray, shape: tuple, dim: int) -> None:
    """Refuses a mask covering the dims of ``shape`` from ``dim`` on as torch does (``_mask_shape_error``)."""
    error = _mask_shape_error(mask, shape, dim)
    if error is not None:
        raise error


def _mask_shape_error(mask: np.ndarray, shape: tuple, dim: int) -> IndexError | None:
    """Why torch refuses a mask covering the dims of ``shape`` from ``dim`` on, or None: each of its sizes must be
    that of the dim it covers (the error names the first that differs); a dim past the last is out of range, as
    ``self.size(dim)`` words it."""
    for j, size in enumerate(mask.shape):
        if dim + j >= len(shape):
            try:
                wrap_dim(dim + j, len(shape))
            except IndexError as exc:
                return exc
        if size != shape[dim + j]:
            mask_shape = ", ".join(str(s) for s in mask.shape)
            full = ", ".join(str(s) for s in shape)
            return IndexError(f"The shape of the mask [{mask_shape}] at index {j} does not match the shape of the "
                              f"indexed tensor [{full}] at index {dim + j}")
    return None


# ---- the lean path of basic indexing -------------------------------------------------------------------------------
#
# ``x[0]``, ``x[:, 1]``, ``x[..., None]``: a key of ints, slices of ints, None and one Ellipsis is read here in one
# pass, the NumPy views taken directly and the tensors made by ``views.fresh_view``: the same views (values,
# strides, base, version counter, replay chain), nodes and events as ``_apply_basic``'s chain of operators. A key
# it does not take, or one the general path refuses, goes to that path, which words the error.

_Slice = builtins.slice


def _basic_steps(shape: tuple, key, keep_full_slices: bool) -> list | None:
    """The view operators ``_apply_basic`` applies for ``key`` on a tensor of ``shape``, as (operator, arguments
    after self) in order, or None where the key has anything but ints, int slices, None and one Ellipsis, or where
    the general path raises."""
    items = key if key.__class__ is tuple else (key,)
    consumed = 0
    ellipsis = False
    for k in items:
        c = k.__class__
        if c is int or c is _Slice:
            consumed += 1
        elif k is Ellipsis:
            if ellipsis:
                return None
            ellipsis = True
        elif k is not None:
            return None
    nd = len(shape)
    if consumed > nd:
        return None
    steps = []
    dim = 0  # (the dim of the view made so far that the next item indexes)
    src_dim = 0  # (the dim of ``shape`` it is)
    for k in items:
        c = k.__class__
        if c is int:
            size = shape[src_dim]
            if k < -size or k >= size:
                return None
            steps.append((_views.select, (dim, k)))
            src_dim += 1
        elif c is _Slice:
            start, stop, step = k.start, k.stop, k.step
            if step is None:
                step = 1
            elif step.__class__ is not int or step <= 0 or step > _LARGE_STEP:
                return None
            if not (start is None or start.__class__ is int and _SLICE_MIN <= start <= _INT64_MAX) or not (
                    stop is None or stop.__class__ is int and _SLICE_MIN <= stop <= _INT64_MAX):
                return None  # (bounds torch clamps: the general path)
            if keep_full_slices or not _spans_dim(start, stop, step, shape[src_dim]):
                steps.append((_views.slice, (dim, 0 if start is None else start,
                                             _INT64_MAX if stop is None else stop, step)))
            dim += 1
            src_dim += 1
        elif k is None:
            steps.append((_views.unsqueeze, (dim,)))
            dim += 1
        else:
            dim += nd - consumed
            src_dim += nd - consumed
    return steps


def _basic_arrays(a: np.ndarray, key, keep_full_slices: bool) -> tuple | None:
    """The steps of a basic ``key`` on ``a`` (see ``_basic_steps``) and the array each one gives, or None where
    the general path must index."""
    steps = _basic_steps(a.shape, key, keep_full_slices)
    if steps is None:
        return None
    arrays = []
    try:  # (NumPy's own refusals, of a slice bound beyond int64 say, are worded by the operators)
        for op, args in steps:
            a = op.kernel(a, *args)
            arrays.append(a)
    except Exception:
        return None
    return steps, arrays


def _basic_views(t: Tensor, key, keep_full_slices: bool):
    """``t`` indexed by a basic ``key`` (see ``_basic_steps``): the last view (``t`` itself for a key that makes
    none), or None where the general path must index (a key it does not take, or a call that is not plain)."""
    if not _views.plain(t):
        return None
    found = _basic_arrays(t._data, key, keep_full_slices)
    if found is None:
        return None
    steps, arrays = found
    if not steps:
        return t
    if STATE.grad_enabled and (t._rg or (t._base is not None and t._base._rg)):
        out = t  # every view of the chain, each with its node, as the general path makes them
        for (op, args), a in zip(steps, arrays):
            out = _views.fresh_view(op, out, a, (out, *args))
        return out
    # Without a graph the intermediate views are not seen: the last one is made at once, with the whole chain
    replay = (t._view_replay or ()) + tuple([(op, args, 0) for op, args in steps])
    op, args = steps[-1]
    return _views.fresh_view(op, t, arrays[-1], (t, *args), replay)


def _index_rows(t: Tensor, key):
    """``t[key]`` for an int64 or int32 tensor ``key`` of one dim or more, as the general path makes it (``index``
    with the key's values as an int64 tensor of their own), without its reading of the key; None for any other
    key."""
    if key.__class__ is not Tensor or not t._data.ndim:
        return None
    arr = key._data
    if not arr.ndim or arr.dtype.kind != "i" or arr.dtype.itemsize < 4:
        return None
    return index(t, [_index_tensor(arr.astype(np.int64, copy=False), key)])


def _numpy_item(k):
    """A NumPy item of a key as torch's indexing reads it (its tensor from the array's data): ``np.bool_``
    refused (no Python bool, and no ``__index__``); a 0-d array of bytes a 0-d bool (torch's 0-d mask, without
    the byte mask's warning), one of other numbers an int64 tensor (floats cut toward zero, complex numbers to
    their real part, with the warning of torch's copy), which indexes as an integer; an array of bytes a byte
    tensor, the deprecated mask (its warning, or masked_fill_'s refusal in an assignment)."""
    if k.__class__ is np.bool_:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         f"indices (got {tp_name(k)})")
    if k.__class__ is not np.ndarray:
        return k
    if k.dtype == np.uint8:
        return _wrap(k.copy()) if k.ndim else np.asarray(k, dtype=np.bool_)
    if not k.ndim and k.dtype.kind in "iufc":
        if k.dtype.kind == "c":  # (torch's copy warns once a process there, as tracegrad's casts do not)
            k = k.real
        return _wrap(np.asarray(k.astype(np.int64)))
    return k


def _numpy_items(key):
    """``key`` with its NumPy items read as torch reads them (see ``_numpy_item``)."""
    if key.__class__ is tuple:
        for k in key:
            if k.__class__ is np.ndarray or k.__class__ is np.bool_:
                return tuple([_numpy_item(k) for k in key])
        return key
    if key.__class__ is np.ndarray or key.__class__ is np.bool_:
        return _numpy_item(key)
    return key


def getitem(t: Tensor, key):
    key = _numpy_items(key)
    if key.__class__ is Tensor:
        out = _index_rows(t, key)
        if out is not None:
            return out
    out = _basic_views(t, key, key.__class__ is _Slice)
    if out is not None:
        return _views.alias(t) if out is t else out
    if not t._data.ndim:
        _check_lone_item_of_0d(t, key)
    sources: dict = {}
    out, advanced = _apply_basic(t, _split_key(key), isinstance(key, builtins.slice), sources)
    if any(a is not None for a in advanced):
        _check_advanced(out._data.shape, advanced)
        # Boolean masks over several dims consume that many dims at once.
        indices = _expand_bool_masks(advanced, sources)
        return index(out, indices)
    if out is t:
        from .views import _view_alias

        return _view_alias(t)
    return out


def _index_tensor(arr: np.ndarray, source) -> Tensor:
    """An index array as the tensor the index nodes save. PyTorch saves the caller's index tensor itself, so that
    writing into it in place before the backward fails there in its words (where it went on, the backward read
    the new indices): the tensor it was read from, or, converted (int32 to int64, a multi-dim mask to its
    nonzeros), a tensor sharing that one's version counter."""
    if source.__class__ is not Tensor:
        return _wrap(arr)
    if source._data is arr:
        return source
    out = _wrap(arr)
    out._vc = source._version_counter()
    out._converted_from = source
    if source._inference:  # (saved as the caller's inference tensor is, refused alike)
        out._inference = True
    return out


def _expand_bool_masks(advanced: list, sources: dict, expand: bool = True) -> list:
    """Index arrays as tensors (saved by the index nodes); multi-dim boolean masks become their nonzeros (unless
    not to ``expand``: a lone mask that one value fills, saved as torch saves it). ``sources``: the tensors the
    arrays were read from (``_apply_basic``)."""
    indices = []
    for a in advanced:
        if a is None:
            indices.append(None)
            continue
        source = sources.get(id(a)) if sources else None  # (none for lists and arrays: the lean path)
        if expand and a.ndim > 1 and _is_mask(a):
            indices.extend(_index_tensor(np.asarray(ix), source) for ix in np.nonzero(a))
        else:
            indices.append(_wrap(a) if source is None else _index_tensor(a, source))
    while indices and indices[-1] is None:
        indices.pop()
    return indices


def _check_put_indices(shape: tuple, advanced: list, value_size: int) -> None:
    """setitem's checks of its advanced indices, in the order of torch's index_put_ (which it calls with them):
    the masked fill's look at the first mask, then their dtypes and each mask as expandTensors reads it."""
    _check_index_count(shape, advanced)
    if value_size == 1:
        _check_masked_fill_dispatch(advanced, shape)
        if fills_through_mask(advanced, value_size):  # (no expandTensors: its lone mask is checked above)
            return
    _check_index_dtypes(advanced)
    _check_masks_handed_on(shape, advanced)


def setitem(t: Tensor, key, value) -> None:
    """PyTorch's ``__setitem__``: the value becomes a tensor of ``t``'s dtype, written by ``index_put_``
    (advanced indices), ``copy_`` (same shape, or broadcast) or ``fill_`` (a 0-d value)."""
    creation = _creation or _bind_creation()
    number = not isinstance(value, Tensor)
    if number:
        check_assignable(t, value)
    key = _numpy_items(key)
    if number and _set_number_plain(t, key, value):
        return
    if key is False:  # (torch writes nothing there, and leaves the version counter as it is)
        return
    if key is True:  # (torch copies into ``t.unsqueeze(0)`` there, as for None: no index_put_)
        key = None
    target = _basic_views(t, key, False)
    advanced, sources = (), {}
    if target is None:
        if not t._data.ndim:
            _check_lone_item_of_0d(t, key)
        target, advanced = _apply_basic(t, _split_key(key), sources=sources)
    if number:  # (converted as torch's Scalar::to: refused where the dtype cannot hold it)
        dtype = t._data.dtype
        value = _wrap(np.asarray(_assigned_scalar(value, dtype), dtype=dtype))  # (a 0-d tensor)
    if advanced and any(a is not None for a in advanced):
        # (one value through a lone mask: torch checks the mask's shape, then masked_fill_ refuses a byte one)
        _check_put_indices(target._data.shape, advanced, value._data.size)
        if _check_fill_through_mask(t, advanced, value):  # (the mask as it is, which the masked fill reads)
            indices = _expand_bool_masks(advanced, sources, expand=False)
        else:
            indices = _expand_bool_masks(advanced, sources)
        index_put_(target, indices, _without_leading_ones(value))
    elif value._data.ndim == 0 and target._data.ndim != 0:
        creation._fill_tensor(target, value)  # PyTorch's fill_.Tensor: an edge for the value, node FillBackward3
    else:
        creation.copy_(target, _expanded_like(value, target._data.shape))


def _set_number_plain(t: Tensor, key, value) -> bool:
    """``t[key] = value`` for a basic ``key`` and a number where nothing records or watches the write (no graph,
    no special mode, observer or write hook): the value converted as below and written straight into the viewed
    array, and ``t``'s version counter bumped, as the views and the ``copy_``/``fill_`` below do. False (nothing
    done) for anything else, and for a write the operators refuse (they word it)."""
    if (STATE.special or STATE.observed or t._inference or STATE.before_write is not None or
            (STATE.grad_enabled and (t._rg or (t._base is not None and t._base._rg)))):
        return False
    if t._data.__class__ is not np.ndarray:
        return False
    found = _basic_arrays(t._data, key, False)
    if found is None:
        return False
    arrays = found[1]
    target = arrays[-1] if arrays else t._data
    if not target.flags.writeable:
        return False
    if target.ndim:
        try:  # (fill_'s check: an expanded target is refused)
            check_no_internal_overlap(target)
        except RuntimeError:
            return False
    dtype = target.dtype
    target[...] = np.asarray(_assigned_scalar(value, dtype), dtype=dtype)
    t._bump_version()
    return True


def _assigned_scalar(value, dtype: np.dtype):
    """A number assigned by setitem, converted as torch's scalarToTensor converts it: into a half tensor through a
    double (a complex number is refused in its words), then unchecked into the single element."""
    if dtype is _HALF:
        scalar_for(value, _DOUBLE)
    return scalar_for(value, dtype, 1)


_HALF, _DOUBLE = np.dtype(np.float16), np.dtype(np.float64)
_creation = None  # (ops.creation, which imports this module: bound at the first assignment)


def _bind_creation():
    global _creation
    from . import creation

    _creation = creation
    return creation


def check_assignable(t: Tensor, value) -> None:
    """torch's setitem takes a tensor or a Python number (NumPy integers too): a list, an array or None is
    refused rather than converted."""
    if isinstance(value, (bool, int, float, complex, np.integer, np.bool_)):
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            _int64(value)  # (torch unpacks an integer as a long long, whatever the tensor's dtype)
        return
    from ..autograd.saved import type_string

    raise TypeError(f"can't assign a {tp_name(value)} to a {type_string(t)}")  # (np.matrix: "matrix", as torch's)


def value_to_tensor(t: Tensor, value) -> Tensor:
    """torch's valueToTensor for a value written into ``t`` (setitem, the ``real``/``imag`` setters): a tensor as
    it is, a Python number as a 0-d tensor of ``t``'s dtype (refused where that dtype cannot hold it), anything
    else refused."""
    if isinstance(value, Tensor):
        return value
    check_assignable(t, value)
    dtype = t._data.dtype
    return _wrap(np.asarray(_assigned_scalar(value, dtype), dtype=dtype))


def _expanded_like(value: Tensor, shape: tuple) -> Tensor:
    """PyTorch's setitem ``copy_to``: the value without its leading size-1 dims (a view), expanded to the
    target's shape (its errors), so the graph has the ViewBackward0/ExpandBackward0 torch's has."""
    if value._data.shape == shape:
        return value
    from .views import expand

    value = _without_leading_ones(value)
    return value if value._data.shape == shape else expand(value, shape)


def _without_leading_ones(value: Tensor) -> Tensor:
    """PyTorch's slicePrefix1sDims: a value written by setitem loses its leading size-1 dims (a view)."""
    vshape = value._data.shape
    lead = 0
    while lead < len(vshape) and vshape[lead] == 1:
        lead += 1
    if not lead:
        return value
    from .views import view

    return view(value, vshape[lead:])


