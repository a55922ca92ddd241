"""How a DataLoader turns a list of samples into a batch (PyTorch's ``default_collate``)."""

from __future__ import annotations

import collections.abc
import numbers
from typing import Any

import numpy as np

from ..._tensor import Tensor


def default_convert(data: Any) -> Any:
    """Without batching: NumPy arrays become tensors, containers are converted element by element."""
    from ... import as_tensor

    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OUS":
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()}) if not isinstance(data, dict) \
            else {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(d) for d in data)
    return data


def default_collate(batch: list) -> Any:
    """Stack tensors (and NumPy arrays) along a new first dimension, turn numbers into 1-D tensors, keep strings
    as lists, and collate mappings, named tuples and sequences field by field."""
    from ... import as_tensor, float64, int64, stack, tensor

    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "OUS":
        return stack([as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic):
        return as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):
        return tensor(batch, dtype=int64)
    if isinstance(elem, numbers.Number):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(samples)) for samples in zip(*batch)]  # a list, for tuples too (PyTorch's)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(elem)}")
