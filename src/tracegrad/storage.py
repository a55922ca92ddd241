"""Storages: the memory under tensors (``Tensor.untyped_storage()``, the deprecated ``Tensor.storage()``).

A tensor's storage is the NumPy array that owns its memory (views share it). ``untyped_storage()`` shows it as
bytes, ``storage()`` as elements of the tensor's dtype; both read and write the tensor's memory, and, as in
PyTorch, writing through a storage does not bump any tensor's version. One storage object stands for each
buffer while it is referenced, so ``x.untyped_storage() is x[1].untyped_storage()``, as in PyTorch.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ._strides import storage_root
from ._warnings import warn_once

_BY_BUFFER: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class UntypedStorage:
    """The bytes of one buffer."""

    def __init__(self, root: np.ndarray) -> None:
        self._root = root  # (keeps the buffer alive)
        self._bytes = np.ndarray((root.nbytes,), dtype=np.uint8, buffer=root) if root.nbytes else \
            np.empty(0, np.uint8)

    @classmethod
    def _of(cls, data: np.ndarray) -> UntypedStorage:
        root = storage_root(data)
        storage = _BY_BUFFER.get(id(root))
        if storage is None or storage._root is not root:
            storage = cls(root)
            _BY_BUFFER[id(root)] = storage
        return storage

    device = property(lambda self: _cpu())

    def nbytes(self) -> int:
        return self._bytes.size

    def size(self) -> int:
        return self._bytes.size

    def __len__(self) -> int:
        return self._bytes.size

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return self._root.__array_interface__["data"][0]

    def __getitem__(self, index: int) -> int:
        return int(self._bytes[index])

    def __setitem__(self, index: int, value: int) -> None:
        self._bytes[index] = value

    def tolist(self) -> list:
        return self._bytes.tolist()

    def fill_(self, value: int) -> UntypedStorage:
        self._bytes[...] = value
        return self

    def copy_(self, source: UntypedStorage, non_blocking: bool | None = None) -> UntypedStorage:
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, view was {self.nbytes()} bytes and source was "
                               f"{source.nbytes()} bytes")
        self._bytes[...] = source._bytes
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage(self._bytes.copy())

    def cpu(self) -> UntypedStorage:
        return self

    def untyped(self) -> UntypedStorage:
        return self

    def is_shared(self) -> bool:
        return False

    def share_memory_(self) -> UntypedStorage:
        return self

    def type(self) -> str:
        return "torch.storage.UntypedStorage"

    def __repr__(self) -> str:
        items = "".join(f" {v}\n" for v in self.tolist())
        return f"{items}[torch.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]"


class TypedStorage:
    """The elements of one buffer in a tensor's dtype (deprecated in PyTorch, with its warning)."""

    def __init__(self, untyped: UntypedStorage, dtype) -> None:
        self._untyped_storage = untyped
        self.dtype = dtype
        self._elements = untyped._bytes.view(dtype.np) if untyped.nbytes() else np.empty(0, dtype.np)

    device = property(lambda self: _cpu())

    def size(self) -> int:
        return self._elements.size

    def __len__(self) -> int:
        return self._elements.size

    def element_size(self) -> int:
        return self._elements.itemsize

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def __getitem__(self, index: int) -> Any:
        return self._elements[index].item()

    def __setitem__(self, index: int, value: Any) -> None:
        self._elements[index] = value

    def tolist(self) -> list:
        return self._elements.tolist()

    def fill_(self, value: Any) -> TypedStorage:
        self._elements[...] = value
        return self

    def is_shared(self) -> bool:
        return False

    def __repr__(self) -> str:
        items = "".join(f" {v}\n" for v in self.tolist())
        return f"{items}[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size {self.size()}]"


def _cpu():
    from .backend.device import device

    return device("cpu")


def untyped_storage(tensor) -> UntypedStorage:
    """``Tensor.untyped_storage()``."""
    return UntypedStorage._of(tensor._data)


def typed_storage(tensor) -> TypedStorage:
    """``Tensor.storage()``: deprecated in PyTorch, which warns the first time."""
    warn_once("typed_storage", "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
              "will be the only storage class. This should only matter to you if you are using storages directly.  "
              "To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")
    return TypedStorage(untyped_storage(tensor), tensor.dtype)


def is_storage(obj: object) -> bool:
    return isinstance(obj, (UntypedStorage, TypedStorage))
