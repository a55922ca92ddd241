"""torch's legacy typed storage classes (``torch.FloatStorage``, ``torch.LongStorage``...).

As in torch they are not classes of their own instances: calling one makes a ``TypedStorage`` of its dtype, and
``isinstance`` checks a ``TypedStorage``'s dtype. ``Tensor.storage_type()`` returns the one of a tensor's dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .backend import dtypes as _dt
from .storage import TypedStorage, UntypedStorage

__all__ = ["BoolStorage", "ByteStorage", "CharStorage", "ShortStorage", "IntStorage", "LongStorage", "HalfStorage",
           "BFloat16Storage", "FloatStorage", "DoubleStorage", "ComplexFloatStorage", "ComplexDoubleStorage",
           "legacy_storage_class"]


class _LegacyStorageMeta(type):
    dtype: _dt.dtype

    def __call__(cls, *args: Any, **kwargs: Any) -> TypedStorage:
        """``FloatStorage()``, ``FloatStorage(size)`` (zeros: torch leaves them uninitialised) or
        ``FloatStorage(sequence)``."""
        if kwargs or len(args) > 1:
            raise TypeError(f"{cls.__name__}() takes at most one positional argument (a size or a sequence)")
        if cls.dtype is _dt.bfloat16:
            _dt.bfloat16_in_use()  # (its NumPy dtype: ml_dtypes')
        if not args:
            data = np.empty(0, cls.dtype.np)
        elif isinstance(args[0], int):
            data = np.zeros(args[0], cls.dtype.np)
        else:
            data = np.array(list(args[0]), dtype=cls.dtype.np)
        return TypedStorage(UntypedStorage._over(data), cls.dtype)

    def __instancecheck__(cls, instance: Any) -> bool:
        return type(instance) is TypedStorage and instance.dtype is cls.dtype


def _make(name: str, dtype: _dt.dtype) -> type:
    cls = _LegacyStorageMeta(name, (TypedStorage,), {"__module__": "torch", "__qualname__": name})
    cls.dtype = dtype
    return cls


BoolStorage = _make("BoolStorage", _dt.bool_)
ByteStorage = _make("ByteStorage", _dt.uint8)
CharStorage = _make("CharStorage", _dt.int8)
ShortStorage = _make("ShortStorage", _dt.int16)
IntStorage = _make("IntStorage", _dt.int32)
LongStorage = _make("LongStorage", _dt.int64)
HalfStorage = _make("HalfStorage", _dt.float16)
BFloat16Storage = _make("BFloat16Storage", _dt.bfloat16)
FloatStorage = _make("FloatStorage", _dt.float32)
DoubleStorage = _make("DoubleStorage", _dt.float64)
ComplexFloatStorage = _make("ComplexFloatStorage", _dt.complex64)
ComplexDoubleStorage = _make("ComplexDoubleStorage", _dt.complex128)

_BY_DTYPE = {cls.dtype: cls for cls in (BoolStorage, ByteStorage, CharStorage, ShortStorage, IntStorage,
                                        LongStorage, HalfStorage, BFloat16Storage, FloatStorage, DoubleStorage,
                                        ComplexFloatStorage, ComplexDoubleStorage)}


def legacy_storage_class(dtype: _dt.dtype) -> type:
    return _BY_DTYPE[dtype]
