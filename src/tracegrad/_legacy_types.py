"""PyTorch's legacy tensor constructors: ``torch.Tensor(...)``, ``torch.FloatTensor(...)`` and the other typed
classes, ``Tensor.new(...)``, and ``set_default_tensor_type``.

Old tutorials and code still write ``torch.FloatTensor(2, 3)`` or ``isinstance(x, torch.LongTensor)``. In
PyTorch the typed names are not subclasses of ``Tensor``: calling one makes an ordinary tensor of its dtype,
and ``isinstance`` checks the dtype (and that the tensor is on the CPU). All of them share one argument
rule, the legacy ``new()``: sizes, data, another tensor (aliased, which must have the same dtype) or nothing.
"""

from __future__ import annotations

import numpy as np

from . import _factories
from ._warnings import warn_once
from .backend import dtypes as _dt
from .backend.device import as_device
from .memory_format import strided
from .size import Size

_OVERLOADS = ("(*, torch.device device = None)", "(torch.Storage storage)", "(Tensor other)",
              "(tuple of ints size, *, torch.device device = None)", "(object data, *, torch.device device = None)")


def _kind(value) -> str:
    """How PyTorch's argument parser names a value's type in its messages."""
    from ._tensor import Tensor

    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, _dt.dtype):
        return "torch.dtype"
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def _invalid_combination(args: tuple, kwargs: dict) -> TypeError:
    from ._arg_parser import keyword_order, option_notes

    # (the keywords in the order of torch's C++ map of them)
    got = ", ".join([_kind(a) for a in args] + [f"{k}={_kind(kwargs[k])}" for k in keyword_order(kwargs)])
    if not args:
        got += ", "
    lines = [f"new() received an invalid combination of arguments - got ({got}), but expected one of:"]
    for overload in _OVERLOADS:
        lines.append(f" * {overload}")
        lines.extend(option_notes(overload, args, kwargs))
    return TypeError("\n".join(lines) + "\n")


def _options(dtype: _dt.dtype) -> str:
    return (f"TensorOptions(dtype={_dt.cpp_type_name(dtype)}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


def legacy_new(dtype: _dt.dtype, args: tuple, kwargs: dict, *, any_tensor_dtype: bool = False):
    """The legacy constructor: a tensor of ``dtype`` from ``args`` (sizes, data, a tensor, or nothing).
    ``any_tensor_dtype``: ``torch.Tensor``'s own, which aliases a tensor of any dtype (torch relaxed it for its
    base constructor only: ``torch.FloatTensor`` and ``Tensor.new`` refuse another dtype)."""
    from ._tensor import Tensor
    from .ops.views import alias
    from .storage import TypedStorage, UntypedStorage

    named = [k for k in kwargs if k != "device"]
    device = kwargs.get("device")
    if (named and (args or len(named) > 1 or named[0] not in _NAMED_ARGUMENTS)) or not _is_device(device):
        raise _invalid_combination(args, kwargs)
    if named:  # (an overload's argument given by its name: ``torch.Tensor(size=(2, 3))``, ``t.new(data=[1])``)
        name = named[0]
        value = kwargs[name]
        if name == "data":  # (never sizes, even an int or a torch.Size, as a positional one may be)
            _check_cpu(device)
            return _from_data(dtype, value)
        if name == "size" and isinstance(value, (tuple, list)) and all(_is_int(s) for s in value):
            args = (Size(value),)  # (sizes, never data: only a positional sequence is data)
        elif (name == "other" and isinstance(value, Tensor)) or (
                name == "storage" and device is None and isinstance(value, (TypedStorage, UntypedStorage))):
            args = (value,)
        else:
            raise _invalid_combination(args, kwargs)
    _check_cpu(device)
    if not args:
        return _factories.empty(0, dtype=dtype)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if device is not None:  # (torch's hidden overload ``new(Tensor other, *, Device? device=None)``)
            raise RuntimeError("Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is not "
                               "supported.  Use torch.tensor(...) or torch.as_tensor(...) instead.")
        if first.dtype is not dtype and not any_tensor_dtype:
            raise TypeError(f"expected {_options(dtype)} (got {_options(first.dtype)})")
        return alias(first)  # AliasBackward0, as in PyTorch
    if len(args) == 1 and isinstance(first, (TypedStorage, UntypedStorage)):
        return _factories.empty(0, dtype=dtype).set_(first)
    if len(args) == 1 and not isinstance(first, Size) and not _is_int(first):
        return _from_data(dtype, first)
    sizes = args if len(args) > 1 or _is_int(first) else tuple(first)
    for pos, s in enumerate(sizes, 1):
        if not _is_int(s):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos} with error "
                            f"\"type must be tuple of ints,but got {_kind(s)}\"")
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(sizes)}")
    return _factories.empty(sizes, dtype=dtype)  # (a tuple: ``torch.Size([])`` makes a 0-d tensor)


# (the overloads' arguments that may be given by name, each alone: ``new(Storage storage)``, ``new(Tensor other)``,
# ``new(SymIntArrayRef size, *, Device? device=None)``, ``new(PyObject* data, *, Device? device=None)``)
_NAMED_ARGUMENTS = frozenset({"storage", "other", "size", "data"})


def _is_device(value) -> bool:
    """Whether torch's parser reads ``value`` as a ``Device?``: None, a device, a string or an int (not a bool)."""
    from .backend.device import device

    return value is None or isinstance(value, (device, str)) or _is_int(value)


def _check_cpu(device) -> None:
    if device is not None and as_device(device).type != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                           f"{as_device(device).type} was passed")


def _from_data(dtype: _dt.dtype, data):
    """``new(data)``: a tensor of ``dtype`` with the values of the sequence ``data``."""
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if not isinstance(data, (list, tuple, np.ndarray)):
        raise TypeError(f"new(): data must be a sequence (got {_kind(data)})")
    if isinstance(data, np.ndarray):  # (torch's legacy constructor does not copy an array: as_tensor's)
        return _factories.as_tensor(data, dtype=dtype)
    return _factories.tensor(data, dtype=dtype)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


class _LegacyTensorType(type):
    """The metaclass of ``FloatTensor`` and friends: calling one constructs, ``isinstance`` checks the dtype."""

    dtype: _dt.dtype

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.dtype, args, kwargs)

    def __instancecheck__(cls, obj) -> bool:
        from ._tensor import Tensor

        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __getattr__(cls, name: str):
        from ._tensor import Tensor

        return getattr(Tensor, name)  # (``torch.FloatTensor.add(a, b)``: the Tensor methods, unbound)


def _legacy_type(name: str, dtype: _dt.dtype) -> type:
    cls = _LegacyTensorType(name, (), {"dtype": dtype, "is_cuda": False, "is_sparse": False,
                                       "layout": strided, "__module__": "torch"})
    cls.__module__ = "torch"
    return cls


FloatTensor = _legacy_type("FloatTensor", _dt.float32)
DoubleTensor = _legacy_type("DoubleTensor", _dt.float64)
HalfTensor = _legacy_type("HalfTensor", _dt.float16)
ByteTensor = _legacy_type("ByteTensor", _dt.uint8)
CharTensor = _legacy_type("CharTensor", _dt.int8)
ShortTensor = _legacy_type("ShortTensor", _dt.int16)
IntTensor = _legacy_type("IntTensor", _dt.int32)
LongTensor = _legacy_type("LongTensor", _dt.int64)
BoolTensor = _legacy_type("BoolTensor", _dt.bool_)

LEGACY_TYPES = {cls.__name__: cls for cls in (FloatTensor, DoubleTensor, HalfTensor, ByteTensor, CharTensor,
                                              ShortTensor, IntTensor, LongTensor, BoolTensor)}


def legacy_type_dtype(t) -> _dt.dtype | None:
    """The dtype a legacy type (class or ``'torch.FloatTensor'`` string) stands for; None if ``t`` is neither."""
    if isinstance(t, _LegacyTensorType):
        return t.dtype
    if isinstance(t, str) and t.startswith("torch.") and t[6:] in LEGACY_TYPES:
        return LEGACY_TYPES[t[6:]].dtype
    return None


def set_default_tensor_type(t) -> None:
    """Deprecated since PyTorch 2.1: sets the default floating-point dtype from a legacy tensor type."""
    warn_once("set_default_tensor_type", "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
              "use torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    if isinstance(t, str):
        if t.startswith("torch.cuda."):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        if legacy_type_dtype(t) is None:
            raise AttributeError(f"module 'torch' has no attribute '{t.split('.')[-1]}'")
    dtype = legacy_type_dtype(t)
    if dtype is None:
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    _dt.set_default_dtype(dtype)  # (which refuses the integer and bool types in PyTorch's words)
