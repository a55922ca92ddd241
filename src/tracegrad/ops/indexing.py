"""Indexing: ``__getitem__``/``__setitem__`` and the gather/scatter operators they lower to.

Basic indices (ints, slices, None, Ellipsis) become view operators (``select``, ``slice``, ``unsqueeze``),
so ``x[0] = v`` is ``x.select(0, 0).copy_(v)`` and autograd sees an in-place write through a view, as in
PyTorch. Advanced indices (integer/boolean tensors, lists) become ``index`` / ``index_put_``.
"""

from __future__ import annotations

import builtins
import re
import warnings
from collections.abc import Sequence

import numpy as np

from .._arg_parser import tp_name
from .._state import STATE
from .._tensor import Tensor, _wrap
from ..backend.dtypes import scalar_type_name
from . import views as _views
from .accumulate import add_rows_at
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
            if arr.dtype.kind not in "biu":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            key.append(arr)
    return tuple(key)


def _index_kernel(a, indices):
    if len(indices) == 1 and a.ndim:  # (one leading long index: NumPy's take, far leaner than its fancy indexing)
        ix = indices[0]
        if ix.__class__ is np.ndarray and ix.dtype.kind == "i" and ix.ndim:
            try:
                return np.take(a, ix, axis=0)
            except IndexError:
                pass  # (worded below)
    key = _numpy_key(indices)
    try:
        return np.ascontiguousarray(a[key])
    except IndexError as exc:
        raise IndexError(_index_error_message(a, key, exc)) from None


def _index_error_message(a, key, exc) -> str:
    for d, k in enumerate(key):
        if isinstance(k, np.ndarray) and k.dtype.kind in "iu" and k.size:
            n = a.shape[d]
            bad = k[(k >= n) | (k < -n)]
            if bad.size:
                return f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {n}"
        if isinstance(k, np.ndarray) and k.dtype.kind == "b":
            expect = a.shape[d:d + k.ndim]
            if k.shape != expect:
                return (f"The shape of the mask {list(k.shape)} at index {d} does not match the shape of the indexed "
                        f"tensor {list(a.shape)} at index {d}")
    message = str(exc)
    if message.startswith("shape mismatch: indexing arrays could not be broadcast together with shapes "):
        # NumPy lists the shapes as tuples; PyTorch as lists, and says tensors
        shapes = re.findall(r"\(([^)]*)\)", message.partition("shapes ")[2])
        listed = ", ".join("[" + ", ".join(d.strip() for d in shape.split(",") if d.strip()) + "]" for shape in shapes)
        return f"shape mismatch: indexing tensors could not be broadcast together with shapes {listed}"
    return message


def _index_vjp(ctx, g):
    (indices,) = ctx.saved_tensors
    from .creation import new_zeros

    zeros = new_zeros(g, ctx.attrs[0])
    return index_put(zeros, indices, g, accumulate=True)


index = defop("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", _index_kernel, vjp=_index_vjp,
              saves=("indices",), attrs=("self_sym_sizes",), differentiable=("self",))


def _index_put_kernel(a, indices, values, accumulate=False):
    out = a.copy()
    _index_put_into(out, indices, values, accumulate)
    return out


def _index_put_into(out, indices, values, accumulate):
    key = _numpy_key(indices)
    values = np.asarray(values)
    if values.dtype != out.dtype:
        if values.ndim and values.dtype.kind != out.dtype.kind and not (out.dtype.kind == "f" and
                                                                       values.dtype.kind in "biu"):

            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{scalar_type_name(out.dtype)} for the destination and "
                               f"{scalar_type_name(values.dtype)} for the source.")
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
        raise IndexError(_index_error_message(out, key, exc)) from None
    except (ValueError, TypeError) as exc:  # (NumPy raises TypeError for a mask given a value of 2+ dims)
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(out[key].shape)}") from exc



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

            vals_shape = index(g, indices).shape
            ga = index_put(g, indices, new_zeros(g, tuple(vals_shape)))
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


def _take_kernel(a, index):
    idx = np.asarray(index)
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {scalar_type_name(idx.dtype)}")
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

def _split_key(key):
    if not isinstance(key, tuple):
        key = (key,)
    return key


def _spans_dim(start, stop, step: int, size: int) -> bool:
    return step == 1 and (start is None or start == 0) and (stop is None or stop >= size)


def _apply_basic(t: Tensor, key: tuple, keep_full_slices: bool = False):
    """Apply ints/slices/None/Ellipsis as views; return the view and the per-dim advanced index list.

    Like PyTorch, a slice spanning its whole dim records no ``slice`` unless ``keep_full_slices`` (a bare
    slice ``x[a:b]`` in ``__getitem__``)."""
    from .views import select, unsqueeze
    from .views import slice as slice_op

    n_consumed = builtins.sum(1 if not (k is None or k is Ellipsis or isinstance(k, bool)) else 0 for k in key)
    for k in key:
        if isinstance(k, Tensor) and k.dtype.name == "bool":
            n_consumed += k.ndim - 1
    if builtins.sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_consumed > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim}")
    out = t
    dim = 0
    advanced: list = []
    for real_dim, k in enumerate(key):  # (torch's errors name a key by its place in the index tuple)
        if k is Ellipsis:
            skip = t.ndim - n_consumed
            advanced.extend([None] * skip)
            dim += skip
        elif k is None:
            out = unsqueeze(out, dim)
            advanced.append(None)
            dim += 1
        elif isinstance(k, bool):
            out = unsqueeze(out, dim)
            advanced.append(np.array([True]) if k else np.array([False]))
            dim += 1
        elif isinstance(k, (int, np.integer)) or (isinstance(k, Tensor) and k.ndim == 0 and
                                                  k.dtype.name in ("int64", "int32")):
            k = int(k)
            size = out.shape[dim]
            if k < -size or k >= size:
                raise IndexError(f"index {k} is out of bounds for dimension {real_dim} with size {size}")
            out = select(out, dim, k)
        elif isinstance(k, builtins.slice):
            start, stop, step = k.start, k.stop, k.step
            step = 1 if step is None else int(step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if keep_full_slices or not _spans_dim(start, stop, step, out.shape[dim]):
                # as PyTorch's indexing: a missing start is 0, a missing stop INT64_MAX (SliceBackward0 shows them)
                out = slice_op(out, dim, 0 if start is None else start, _INT64_MAX if stop is None else stop, step)
            advanced.append(None)
            dim += 1
        else:
            _check_index_type(k)
            arr = k._data if isinstance(k, Tensor) else np.asarray(k)
            if isinstance(k, Tensor) and arr.dtype == np.uint8:  # a byte tensor is a (deprecated) mask
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=4)
                arr = arr.astype(bool)
            if arr.dtype.kind == "b":
                _check_mask_shape(arr, out.shape, dim)
                advanced.append(arr)
                dim += builtins.max(arr.ndim, 1)
            else:
                if arr.dtype.kind not in "iu":
                    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
                advanced.append(arr.astype(np.int64, copy=False))
                dim += 1
    return out, advanced


def _check_index_type(k) -> None:
    """What torch's indexing refuses before reading an index: a float or any object that is not a tensor, a
    sequence (a ``range`` or a deque as well: torch reads any Python sequence as an index tensor) or a NumPy
    array, and text (which torch tries to read as a tensor's data)."""
    if isinstance(k, (float, np.floating)) or not isinstance(k, (Tensor, Sequence, np.ndarray, np.generic, bool)):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         f"indices (got {tp_name(k)})")
    text = k if isinstance(k, (str, bytes)) else next(
        (v for v in k if isinstance(v, (str, bytes))), None) if isinstance(k, (list, tuple)) else None
    if text is not None:
        raise TypeError(f"new(): invalid data type '{type(text).__name__}'")


def _check_mask_shape(mask: np.ndarray, shape: tuple, dim: int) -> None:
    """A boolean mask must have the shape of the dims it covers (PyTorch's error names the first that differs)."""
    for j, size in enumerate(mask.shape):
        if dim + j < len(shape) and size != shape[dim + j]:
            mask_shape = ", ".join(str(s) for s in mask.shape)
            full = ", ".join(str(s) for s in shape)
            raise IndexError(f"The shape of the mask [{mask_shape}] at index {j} does not match the shape of the "
                             f"indexed tensor [{full}] at index {dim + j}")


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
            elif step.__class__ is not int or step <= 0:
                return None
            if not (start is None or start.__class__ is int) or not (stop is None or stop.__class__ is int):
                return None
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
    return index(t, [_wrap(arr.astype(np.int64, copy=False))])


def getitem(t: Tensor, key):
    if key.__class__ is Tensor:
        out = _index_rows(t, key)
        if out is not None:
            return out
    out = _basic_views(t, key, key.__class__ is _Slice)
    if out is not None:
        return _views.alias(t) if out is t else out
    out, advanced = _apply_basic(t, _split_key(key), keep_full_slices=isinstance(key, builtins.slice))
    if any(a is not None for a in advanced):
        # Boolean masks over several dims consume that many dims at once.
        indices = _expand_bool_masks(advanced)
        return index(out, indices)
    if out is t:
        from .views import _view_alias

        return _view_alias(t)
    return out


def _expand_bool_masks(advanced: list) -> list:
    """Index arrays as tensors (saved by the index nodes); multi-dim boolean masks become their nonzeros."""
    indices = []
    for a in advanced:
        if a is not None and a.dtype.kind == "b" and a.ndim > 1:
            indices.extend(_wrap(np.asarray(ix)) for ix in np.nonzero(a))
        else:
            indices.append(None if a is None else _wrap(a))
    while indices and indices[-1] is None:
        indices.pop()
    return indices


def setitem(t: Tensor, key, value) -> None:
    """PyTorch's ``__setitem__``: the value becomes a tensor of ``t``'s dtype, written by ``index_put_``
    (advanced indices), ``copy_`` (same shape, or broadcast) or ``fill_`` (a 0-d value)."""
    creation = _creation or _bind_creation()
    number = not isinstance(value, Tensor)
    if number:
        _check_assignable(t, value)
        if _set_number_plain(t, key, value):
            return
    target = _basic_views(t, key, False)
    advanced = ()
    if target is None:
        target, advanced = _apply_basic(t, _split_key(key))
    if number:  # (converted as torch's Scalar::to: refused where the dtype cannot hold it)
        dtype = t._data.dtype
        value = _wrap(np.asarray(scalar_for(value, dtype, 1), dtype=dtype))  # (a 0-d tensor)
    if advanced and any(a is not None for a in advanced):
        index_put_(target, _expand_bool_masks(advanced), _without_leading_ones(value))
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
    target[...] = np.asarray(scalar_for(value, dtype, 1), dtype=dtype)
    t._bump_version()
    return True


_creation = None  # (ops.creation, which imports this module: bound at the first assignment)


def _bind_creation():
    global _creation
    from . import creation

    _creation = creation
    return creation


def _check_assignable(t: Tensor, value) -> None:
    """torch's setitem takes a tensor or a Python number (NumPy integers too): a list, an array or None is
    refused rather than converted."""
    if isinstance(value, (bool, int, float, complex, np.integer, np.bool_)):
        return
    from ..autograd.saved import type_string

    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    raise TypeError(f"can't assign a {name} to a {type_string(t)}")


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


