"""How a DataLoader turns a list of samples into a batch (PyTorch's ``default_collate`` / ``default_convert``).

``collate`` walks containers and hands leaves to the functions in ``collate_fn_map`` (exact type first, then
the first key the element is an instance of), so users extend ``default_collate`` exactly as in PyTorch.
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...._tensor import Tensor

# NumPy dtypes (strings, bytes, objects) that have no tensor counterpart
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                                  "lists; found {}")

CollateFnMap = dict[type | tuple[type, ...], Callable]


def _rebuild_mapping(template: collections.abc.Mapping, values: dict) -> Any:
    """``values`` in the mapping type of ``template`` (a copy, so defaultdict factories etc. survive); a plain
    dict when that type cannot be built from a dict."""
    try:
        if isinstance(template, collections.abc.MutableMapping):
            clone = copy.copy(template)
            clone.update(values)
            return clone
        return type(template)(values)
    except TypeError:
        return values


def _rebuild_sequence(template: collections.abc.Sequence, values: list) -> Any:
    """``values`` in the sequence type of ``template``, or a list when that type cannot hold them."""
    try:
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(template)(values)
    except TypeError:
        return values


def default_convert(data: Any) -> Any:
    """Without batching: NumPy arrays and scalars become tensors, containers are converted element by element
    (tuples become lists, as in PyTorch)."""
    from .... import as_tensor

    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(np.asarray(data))  # via an array: as_tensor widens NumPy scalars (int16 -> int64)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch: Sequence, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Collate ``batch`` field by field: mappings, named tuples and sequences recursively, leaves through the
    first matching entry of ``collate_fn_map``."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(e) == elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # columns stay tuples, as in PyTorch: a column of strings comes back as a tuple
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, for tuples too (PyTorch's backwards compatibility)
        return _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: Sequence, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    """The samples stacked. In a DataLoader worker torch stacks into an ``out=`` tensor of the first sample's
    dtype (its shared-memory buffer; here a plain one): other dtypes are cast to it or refused in ``cat``'s
    words, and samples that require grad are refused, as ``out=`` does not support autograd."""
    from .... import empty, stack
    from .worker import get_worker_info

    out = None
    if get_worker_info() is not None:
        elem = batch[0]
        out = empty((len(batch), *elem.shape), dtype=elem.dtype, device=elem.device)
    return stack(batch, 0, out=out)


def collate_numpy_array_fn(batch: Sequence, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    from .... import as_tensor

    if np_str_obj_array_pattern.search(batch[0].dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: Sequence, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    from .... import as_tensor

    return as_tensor(np.asarray(batch))  # via an array: as_tensor widens lists of NumPy scalars (int16 -> int64)


def collate_float_fn(batch: Sequence, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    from .... import float64, tensor

    return tensor(batch, dtype=float64)


def collate_int_fn(batch: Sequence, *, collate_fn_map: CollateFnMap | None = None) -> Tensor:
    from .... import tensor

    return tensor(batch)  # bools (an int subclass) give a bool tensor, as in PyTorch


def collate_str_fn(batch: Sequence, *, collate_fn_map: CollateFnMap | None = None) -> Sequence:
    return batch


# insertion order matters: np.float64 is a float, bool is an int
default_collate_fn_map: CollateFnMap = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list) -> Any:
    """Stack tensors (and NumPy arrays) along a new first dimension, turn numbers into 1-D tensors, keep strings
    as lists, and collate mappings, named tuples and sequences field by field."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
