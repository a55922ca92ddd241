"""``torch._C._group_tensors_by_device_and_dtype``: ATen's ``_group_tensors_by_first_tensors_device_and_dtype``
(the optimizers' foreach paths group their lists with it), with its pybind11 binding's argument conversion."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._state import STATE
from .._tensor import Tensor
from .._torch_function import DisableTorchFunction

_NAME = "_group_tensors_by_device_and_dtype"
_SIGNATURE = ("(arg0: collections.abc.Sequence[collections.abc.Sequence[torch.Tensor | None]], arg1: bool) -> "
              "dict[tuple[torch.device, torch.dtype], tuple[list[list[torch.Tensor | None]], list[int]]]")
_TORCH_CHECK_TAIL = (" to be true, but got false.  (Could this error message be improved?  If so, please report an "
                     "enhancement request to PyTorch.)")
_SAME_LENGTHS = ("std::all_of( nested_tensorlist.cbegin(), nested_tensorlist.cend(), [&](const auto& tensorlist) -> "
                 "bool { return tensorlist.size() == num_tensors || tensorlist.size() == 0; })")


def _group_tensors_by_device_and_dtype(*args, **kwargs) -> dict:
    if STATE.torch_function:  # (torch's C++ grouping reads devices and dtypes out of the handlers' sight)
        with DisableTorchFunction():
            return _grouped(*args, **kwargs)
    return _grouped(*args, **kwargs)


def _grouped(*args, **kwargs) -> dict:
    tensorlistlist, with_indices = _converted(args, kwargs)
    if not tensorlistlist:
        raise RuntimeError("Expected !nested_tensorlist.empty()" + _TORCH_CHECK_TAIL)
    if not tensorlistlist[0]:
        raise RuntimeError("Expected !nested_tensorlist[0].empty()" + _TORCH_CHECK_TAIL)
    count = len(tensorlistlist[0])
    if any(len(tensors) not in (count, 0) for tensors in tensorlistlist):
        raise RuntimeError(f"Expected {_SAME_LENGTHS}" + _TORCH_CHECK_TAIL)
    groups: dict = {}
    for k in range(count):
        first = tensorlistlist[0][k]
        if first is None:
            raise RuntimeError("Tensors of the first list of nested Tensor lists are supposed to be defined but the "
                               f"{k}-th Tensor is not.")
        key = (first.device, first.dtype)
        if not all(_matches(tensors[k], first) for tensors in tensorlistlist if tensors):
            raise RuntimeError("Tensors of the same index must be on the same device and the same dtype except `step` "
                               "tensors that can be CPU and float32/64, and optimizer states that can be bfloat16 for "
                               "mixed-precision training")
        if key not in groups:
            groups[key] = ([[] for _ in tensorlistlist], [])
        lists, indices = groups[key]
        for tensors, grouped in zip(tensorlistlist, lists):
            if tensors:
                grouped.append(tensors[k])
        if with_indices:
            indices.append(k)
    # (ATen's std::unordered_map, whose keys on one device libstdc++ iterates newest first)
    return dict(reversed(groups.items()))


def _matches(tensor: Tensor | None, first: Tensor) -> bool:
    """Whether ``tensor`` may share ``first``'s group: its dtype, or a float32/float64 (a ``step``) or bfloat16 (a
    mixed-precision state) one, on the one device tracegrad has."""
    return tensor is None or tensor.dtype == first.dtype or str(tensor.dtype) in (
        "torch.float32", "torch.float64", "torch.bfloat16")


def _converted(args: tuple, kwargs: dict) -> tuple[list, bool]:
    """pybind11's conversion of ``(tensorlistlist, with_indices=False)``, and its refusals in its words."""
    if len(args) > 2:
        raise TypeError(f"{_NAME}() takes from 1 to 2 positional arguments but {len(args)} were given")
    names = ("tensorlistlist", "with_indices")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{_NAME}() got an unexpected keyword argument '{key}'")
        if key in bound:
            raise TypeError(f"{_NAME}() got multiple values for argument '{key}'")
        bound[key] = value
    if "tensorlistlist" not in bound:
        raise TypeError(f"{_NAME}() missing 1 required positional argument: 'tensorlistlist'")
    given, flag = bound["tensorlistlist"], bound.get("with_indices", False)
    lists = _sequence(given)
    lists = None if lists is None else [_sequence(tensors) for tensors in lists]
    with_indices = _boolean(flag)
    if lists is None or any(t is None for t in lists) or with_indices is None or any(
            not (item is None or isinstance(item, Tensor)) for tensors in lists for item in tensors):
        raise TypeError(f"{_NAME}(): incompatible function arguments. The following argument types are supported:\n"
                        f"    1. {_SIGNATURE}\n\nInvoked with: {given!r}, {flag!r}")
    return lists, with_indices


def _sequence(value) -> list | None:
    """pybind11's ``Sequence`` caster: any sequence but a string or bytes (a tensor is none)."""
    if isinstance(value, (str, bytes, Tensor)) or not isinstance(value, Sequence):
        return None
    return list(value)


def _boolean(value) -> bool | None:
    """pybind11's ``bool`` caster (converting): True/False, None as False, else the value's ``__bool__``."""
    if value is None:
        return False
    if isinstance(value, (bool, np.bool_)) or hasattr(type(value), "__bool__"):
        return bool(value)
    return None
