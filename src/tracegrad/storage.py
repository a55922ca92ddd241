"""Storages: the memory under tensors (``Tensor.untyped_storage()``, the deprecated ``Tensor.storage()``).

A tensor's storage is the NumPy array that owns its memory (views share it). ``untyped_storage()`` shows it as
bytes, ``storage()`` as elements of the tensor's dtype; both read and write the tensor's memory, and, as in
PyTorch, writing through a storage does not bump any tensor's version. One storage object stands for each
buffer while it is referenced, so ``x.untyped_storage() is x[1].untyped_storage()``, as in PyTorch.
"""

from __future__ import annotations

import copy
import functools
import weakref
from typing import Any

import numpy as np

from ._strides import data_address, offset_in, storage_extent
from ._warnings import warn_once_at_caller

_BY_BUFFER: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class _StorageBase:
    """What both storage classes do alike: casts to a typed storage of another dtype, the device questions a CPU
    storage answers, pinning (refused as torch's CPU build refuses it) and copies."""

    is_sparse = False
    is_sparse_csr = False

    def _elements_array(self) -> np.ndarray:
        raise NotImplementedError

    def _wrapping(self, untyped: UntypedStorage):
        """A storage of this kind over ``untyped`` (typed storages keep their dtype)."""
        raise NotImplementedError

    def _elements_tensor(self):
        from ._tensor import _wrap

        return _wrap(self._elements_array())

    def _to(self, dtype) -> TypedStorage:
        """A new typed storage of ``dtype`` holding this storage's elements (an untyped one's bytes) cast, as
        torch's ``_to`` (a tensor over the storage, ``.to(dtype)``): a copy even where the dtype is the same."""
        from .backend.dtypes import dtype as dtype_class

        if not isinstance(dtype, dtype_class):
            raise TypeError(f"Argument 'dtype' must be torch.dtype, not {type(dtype)}")
        source = self._elements_tensor()
        cast = source.to(dtype)
        return TypedStorage(UntypedStorage._of(cast._data.copy() if cast is source else cast._data), dtype)

    def get_device(self) -> int | None:
        return self.device.index  # (torch's: None for the CPU)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_hpu(self) -> bool:
        return self.device.type == "hpu"

    @property
    def filename(self) -> str | None:
        """The file a storage made by ``from_file(..., shared=True)`` maps, else None."""
        return self.untyped()._filename

    def is_pinned(self, device=None) -> bool:
        return self._elements_tensor().is_pinned(device)

    def pin_memory(self, device=None):
        pinned = self._elements_tensor().pin_memory(device)  # (the CPU build refuses, in torch's words)
        return self._wrapping(UntypedStorage._of(pinned._data))

    def to(self, *, device, non_blocking: bool = False):
        """This storage on ``device``: the CPU is the only device a storage lives on here (another one is refused
        as a tensor's move there is)."""
        from .backend.device import device as device_class

        target = device if isinstance(device, device_class) else device_class(device)
        if target.type != "cpu":
            self._elements_tensor().to(target)
            raise RuntimeError(f"tracegrad's storages live on the CPU: cannot move one to {target}")
        return self._wrapping(self.untyped())

    def cuda(self, device=None, non_blocking: bool = False):
        from .backend.device import device as device_class

        return self.to(device=device_class("cuda", device) if device else device_class("cuda"),
                       non_blocking=non_blocking)

    def __copy__(self):
        return self.clone()


def _cast_method(name: str, dtype_name: str):
    def cast(self) -> TypedStorage:
        from .backend import dtypes

        return self._to(dtypes.bfloat16_in_use() if dtype_name == "bfloat16" else getattr(dtypes, dtype_name))

    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"Casts this storage to {name.replace('_', ' ')} type."
    return cast


def _missing_dtype_method(name: str):
    def cast(self) -> TypedStorage:
        raise RuntimeError(f"storage.{name}(): tracegrad has no {name} dtype (NumPy has no such type)")

    cast.__name__ = cast.__qualname__ = name
    return cast


# the casts, method name -> tracegrad dtype name; the dtypes tracegrad lacks are refused in words
_CASTS = {"double": "float64", "float": "float32", "half": "float16", "long": "int64", "int": "int32",
          "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool_", "complex_double": "complex128",
          "complex_float": "complex64", "bfloat16": "bfloat16"}
_MISSING_DTYPES = ("float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz", "float8_e4m3fnuz")
for _name, _dtype_name in _CASTS.items():
    setattr(_StorageBase, _name, _cast_method(_name, _dtype_name))
for _name in _MISSING_DTYPES:
    setattr(_StorageBase, _name, _missing_dtype_method(_name))


class UntypedStorage(_StorageBase):
    """The bytes of one buffer."""

    _filename: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """torch's constructor: ``UntypedStorage()``, ``UntypedStorage(size)`` (bytes left as zeros: torch leaves
        them uninitialised) or ``UntypedStorage(sequence of ints)`` (each kept modulo 256), with the keywords
        ``device`` (the CPU only) and ``allocator`` (None only)."""
        root = _constructed_bytes(args, kwargs)
        self._attach(root)
        _BY_BUFFER[id(root)] = self

    def _attach(self, root: np.ndarray) -> None:
        self._root = root  # (keeps the buffer alive)
        self._bytes = _bytes_of(root)

    @classmethod
    def _over(cls, root: np.ndarray) -> UntypedStorage:
        """A storage over ``root``'s memory, not copied (tracegrad's own way in: no argument parsing)."""
        storage = cls.__new__(cls)
        storage._attach(root)
        return storage

    @classmethod
    def _of(cls, data: np.ndarray) -> UntypedStorage:
        root = _memory_owner(data)
        storage = _BY_BUFFER.get(id(root))
        if storage is None or storage._root is not root:
            storage = cls._over(root)
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
        return self._bytes.__array_interface__["data"][0] if self._bytes.size else 0  # (torch: 0 when empty)

    def __getitem__(self, index: int | slice) -> int | UntypedStorage:
        if isinstance(index, slice):  # (as torch: a storage over the same bytes)
            if index.step not in (None, 1):
                raise RuntimeError(f"Trying to slice with a step of {index.step}, but only a step of 1 is "
                                   "supported")
            return UntypedStorage._over(self._bytes[index])
        if not isinstance(index, int):
            raise TypeError(f"can't index a torch.UntypedStorage with {type(index).__name__}")
        return int(self._bytes[_element_index(index, self._bytes.size)])

    def __setitem__(self, index: int | slice, value: int) -> None:
        if isinstance(index, int) and not 0 <= index < self._bytes.size:  # (torch: no negative index here)
            raise RuntimeError("out of bounds")
        self._bytes[index] = value

    def tolist(self) -> list:
        return self._bytes.tolist()

    def fill_(self, value: int) -> UntypedStorage:
        self._bytes[...] = value
        return self

    def copy_(self, source: UntypedStorage, non_blocking: bool | None = None) -> UntypedStorage:
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src was "
                               f"{source.nbytes()} bytes")
        self._bytes[...] = source.untyped()._bytes
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage._over(self._bytes.copy())

    def cpu(self) -> UntypedStorage:
        return self

    def untyped(self) -> UntypedStorage:
        return self

    def is_shared(self) -> bool:
        from ._shared_memory import is_shared_array

        return is_shared_array(self._root)

    def resizable(self) -> bool:
        return is_resizable(self._root)

    def share_memory_(self) -> UntypedStorage:
        """Moves this storage into shared memory, in place, with every tensor over it (see _shared_memory.py)."""
        from ._shared_memory import share_storage_memory

        share_storage_memory(self)
        return self

    def _elements_array(self) -> np.ndarray:
        return self._bytes

    def __deepcopy__(self, memo: dict) -> UntypedStorage:
        """The storage over this deepcopy's one copy of these bytes: the copies of tensors and storages sharing
        them share it, as torch's (its memo maps storages for both)."""
        return UntypedStorage._of(deepcopied_root(self._root, self._bytes, memo))

    def _wrapping(self, untyped: UntypedStorage) -> UntypedStorage:
        return untyped

    def new(self) -> UntypedStorage:
        """An empty storage of the same kind."""
        return UntypedStorage._over(np.empty(0, np.uint8))

    def resize_(self, nbytes: int) -> UntypedStorage:
        """This storage, now of ``nbytes`` bytes: the first ones kept, new ones zero (torch leaves them
        uninitialised). Tensors over the old memory keep it (NumPy cannot grow memory under them)."""
        nbytes = int(nbytes)
        if not self.resizable():
            raise RuntimeError("Trying to resize storage that is not resizable")
        grown = _allocated(nbytes)
        kept = min(nbytes, self._bytes.size)
        grown[:kept] = self._bytes[:kept]
        self._root = self._bytes = grown
        _BY_BUFFER[id(grown)] = self
        return self

    def byteswap(self, dtype) -> None:
        """Reverse the bytes of each element of ``dtype`` in place (each part of a complex number on its own)."""
        from .backend.dtypes import dtype as dtype_class

        if not isinstance(dtype, dtype_class):
            raise RuntimeError(f"expected torch.dtype, but got {type(dtype)}")
        width = dtype.itemsize // 2 if dtype.is_complex else dtype.itemsize
        if self._bytes.size % width:
            raise RuntimeError(f"the length of data is not a multiple of {width}")
        if width > 1:
            words = self._bytes.reshape(-1, width)
            words[...] = words[:, ::-1].copy()

    @classmethod
    def from_buffer(cls, buffer, byte_order: str | None = None, count: int = -1, offset: int = 0, *,
                    dtype=None) -> UntypedStorage:
        """A new storage holding a copy of ``count`` elements of ``dtype`` (all where negative) read from the
        bytes-like ``buffer`` from byte ``offset``, in ``byte_order`` (needed for elements wider than a byte)."""
        if dtype is None:
            raise RuntimeError("argument 'dtype' cannot be None")
        width = dtype.itemsize
        if width > 1:
            _check_byte_order(byte_order)
        data = _buffer_bytes(buffer)
        offset, count = int(offset), int(count)
        if not 0 <= offset <= data.size:
            raise ValueError(f"offset must be non-negative and no greater than buffer length ({offset}) , but got "
                             f"{data.size}")
        if count < 0:
            if (data.size - offset) % width:
                raise ValueError(f"buffer size ({data.size - offset}) must be a multiple of element size ({width})")
            count = (data.size - offset) // width
        if offset + count * width > data.size:
            raise ValueError(f"buffer has only {data.size - offset} elements after offset {offset}, but specified a "
                             f"size of {count}")
        storage = cls._over(data[offset:offset + count * width].copy())
        if width > 1 and byte_order == "big":
            storage.byteswap(dtype)
        return storage

    @classmethod
    def from_file(cls, filename: str, shared: bool = False, nbytes: int = 0) -> UntypedStorage:
        """A storage over the first ``nbytes`` of the file, memory-mapped: privately (changes stay in memory)
        unless ``shared``, where changes go to the file, created or grown as needed."""
        filename, nbytes = str(filename), int(nbytes)
        if shared:
            memory = _shared_file_map(filename, nbytes)
        else:
            memory = _private_file_map(filename, nbytes)
        storage = cls._over(memory)
        if shared:
            storage._filename = filename
        return storage

    def type(self) -> str:
        return "torch.storage.UntypedStorage"

    def __repr__(self) -> str:
        return _listing(self.tolist(), f"[torch.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]")


class TypedStorage(_StorageBase):
    """The elements of one buffer in a tensor's dtype (deprecated in PyTorch, with its warning)."""

    def __init__(self, untyped: UntypedStorage, dtype) -> None:
        self._untyped_storage = untyped
        self.dtype = dtype

    @property
    def _elements(self) -> np.ndarray:
        """The untyped storage's bytes as elements (read afresh: ``resize_`` replaces them)."""
        memory = self._untyped_storage._bytes
        whole = memory.size - memory.size % self.dtype.itemsize
        return memory[:whole].view(self.dtype.np) if whole else np.empty(0, self.dtype.np)

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
        if isinstance(index, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._elements[_element_index(index, self._elements.size, name_as_counted=False)].item()

    def __setitem__(self, index: int, value: Any) -> None:
        if isinstance(index, int) and not -self._elements.size <= index < self._elements.size:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {self._elements.size}")
        self._elements[index] = value

    def tolist(self) -> list:
        return self._elements.tolist()

    def fill_(self, value: Any) -> TypedStorage:
        self._elements[...] = value
        return self

    def copy_(self, source: TypedStorage | UntypedStorage, non_blocking: bool | None = None) -> TypedStorage:
        self._untyped_storage.copy_(source.untyped())
        return self

    def clone(self) -> TypedStorage:
        return TypedStorage(self._untyped_storage.clone(), self.dtype)

    def type(self) -> str:
        from ._legacy_storages import legacy_storage_class

        return f"torch.{legacy_storage_class(self.dtype).__name__}"

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def _elements_array(self) -> np.ndarray:
        return self._elements

    def __deepcopy__(self, memo: dict) -> TypedStorage:
        return TypedStorage(copy.deepcopy(self._untyped_storage, memo), self.dtype)

    def _wrapping(self, untyped: UntypedStorage) -> TypedStorage:
        return TypedStorage(untyped, self.dtype)

    def cpu(self) -> TypedStorage:
        return self._wrapping(self._untyped_storage.cpu())

    def to(self, *, device, non_blocking: bool = False) -> TypedStorage:  # (its own, as torch's: its name in errors)
        return super().to(device=device, non_blocking=non_blocking)

    def resizable(self) -> bool:
        return self._untyped_storage.resizable()

    def resize_(self, size: int) -> None:
        self._untyped_storage.resize_(int(size) * self.dtype.itemsize)

    def share_memory_(self) -> TypedStorage:
        self._untyped_storage.share_memory_()
        return self

    def pickle_storage_type(self) -> str:
        from ._legacy_storages import legacy_storage_class

        return legacy_storage_class(self.dtype).__name__

    @classmethod
    def from_buffer(cls, *args: Any, dtype=None, device=None, **kwargs: Any) -> TypedStorage:
        """``UntypedStorage.from_buffer``'s bytes as a typed storage: of ``dtype`` (the default dtype where not
        given) on TypedStorage itself, of the class's own dtype on a legacy class (which takes no ``dtype``)."""
        if cls is TypedStorage:
            from .backend.device import device as device_class
            from .backend.dtypes import get_default_dtype

            dtype = get_default_dtype() if dtype is None else dtype
            place = device_class("cpu" if device is None else device)
            if place.type != "cpu":
                raise RuntimeError(f"TypedStorage.from_buffer: Not available for device {place.type}")
        else:
            for name, given in (("dtype", dtype is not None or len(args) == 5), ("device", device is not None)):
                if given:
                    raise RuntimeError(f"from_buffer: '{name}' can only be specified in UntypedStorage.from_buffer "
                                       "and TypedStorage.from_buffer")
            dtype = cls.dtype
        return TypedStorage(UntypedStorage.from_buffer(*args, dtype=dtype, **kwargs), dtype)

    @classmethod
    def from_file(cls, filename: str, shared: bool, size: int) -> TypedStorage:
        """A legacy class's storage of ``size`` elements over a file (``UntypedStorage.from_file``)."""
        if cls is TypedStorage:
            raise RuntimeError("from_file can only be called on derived classes")
        return TypedStorage(UntypedStorage.from_file(filename, shared, int(size) * cls.dtype.itemsize), cls.dtype)

    def __repr__(self) -> str:
        return _listing(self.tolist(), f"[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size "
                                       f"{self.size()}]")


def _check_byte_order(byte_order) -> None:
    """``from_buffer``'s ``byte_order``, needed for elements wider than a byte, in torch's words."""
    if byte_order is None:
        raise RuntimeError("function missing required argument 'byte_order' (pos 2)")
    if not isinstance(byte_order, str):
        raise TypeError(f"argument 2 must be str, not {type(byte_order).__name__}")
    if byte_order not in ("big", "little", "native"):
        raise ValueError(f"invalid byte_order '{byte_order}' (expected 'big', 'little', or 'native')")


def _buffer_bytes(buffer) -> np.ndarray:
    """The bytes of a bytes-like object (read, not copied)."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise TypeError(f"a bytes-like object is required, not '{type(buffer).__name__}'") from None
    if not view.c_contiguous:
        raise BufferError("memoryview: underlying buffer is not C-contiguous")
    return np.frombuffer(view.cast("B") if view.ndim else view, np.uint8) if view.nbytes else np.empty(0, np.uint8)


def _private_file_map(filename: str, nbytes: int) -> np.ndarray:
    """The file's first ``nbytes`` mapped copy-on-write (torch's MAP_PRIVATE), refused in torch's words."""
    import os

    try:
        size = os.path.getsize(filename)
    except OSError as exc:
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: {exc.strerror} ({exc.errno})") \
            from None
    if nbytes < 0:
        raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: Cannot allocate memory (12)")
    if size < nbytes:
        raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the required mapping size <{nbytes}>")
    return np.memmap(filename, np.uint8, mode="c", shape=(nbytes,)) if nbytes else np.empty(0, np.uint8)


def _shared_file_map(filename: str, nbytes: int) -> np.ndarray:
    """The file's first ``nbytes`` mapped for writing (MAP_SHARED); the file created or grown to hold them."""
    import os

    with open(filename, "ab") as file:  # (creates it; appends nothing)
        if os.path.getsize(filename) < nbytes:
            file.truncate(nbytes)
    return np.memmap(filename, np.uint8, mode="r+", shape=(nbytes,)) if nbytes else np.empty(0, np.uint8)


def _listing(values: list, info: str) -> str:
    """A storage's repr as torch writes it: each value on a line after a space (a lone space when there are
    none), then ``info``."""
    return " " + "\n ".join(str(v) for v in values) + "\n" + info


def _allocated(nbytes: int) -> np.ndarray:
    """``nbytes`` zero bytes, a size torch's CPU allocator refuses refused in its words."""
    if nbytes < 0:
        raise RuntimeError(f"[enforce fail at alloc_cpu.cpp:98] ((ptrdiff_t)nbytes) >= 0. alloc_cpu() seems to "
                           f"have been called with negative number: {nbytes % (1 << 64)}")
    try:
        return np.zeros(nbytes, np.uint8)
    except MemoryError:
        raise RuntimeError(f"[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                           f"memory: you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)"
                           ) from None


# ---- UntypedStorage's constructor, parsed as torch parses it ----------------------------------------------------

_NAME = "torch.UntypedStorage"


@functools.cache
def _constructor_signatures() -> tuple:
    """torch's three: ``()``, ``(int size)``, ``(object sequence)``, each with ``allocator`` and ``device``."""
    from ._arg_parser import PyParam, PySignature

    keywords = (PyParam("allocator", "INT64", allow_none=True, optional=True, default="None", keyword_only=True),
                PyParam("device", "DEVICE", allow_none=True, optional=True, default="None", keyword_only=True))
    return tuple(PySignature(_NAME, (*first, *keywords))
                 for first in ((), (PyParam("size", "INT64"),), (PyParam("sequence", "PYOBJECT"),)))


def _constructed_bytes(args: tuple, kwargs: dict) -> np.ndarray:
    """The memory of a storage made by ``UntypedStorage(*args, **kwargs)``."""
    from ._arg_parser import bind

    _, bound = bind(_constructor_signatures(), args, kwargs)
    _check_storage_device(bound.get("device"))
    if bound.get("allocator") is not None:  # (torch takes the int for the address of a C++ allocator)
        raise NotImplementedError(f"{_NAME}(): tracegrad has no C++ allocators; pass allocator=None")
    if "size" in bound:
        size = int(bound["size"])
        if not -(1 << 63) <= size < 1 << 63:  # (torch's parser reads the size as an int64)
            raise ValueError("Overflow when unpacking long long")
        return _allocated(size)
    if "sequence" in bound:
        return _bytes_from_sequence(bound["sequence"])
    return np.empty(0, np.uint8)


def _check_storage_device(value) -> None:
    """The CPU is where tracegrad's storages live; the other devices are refused as torch's CPU build refuses
    them (the parser already refused cuda without a GPU), meta as tracegrad refuses meta tensors."""
    if value is None:
        return
    from .backend.device import _UNBUILT_BACKENDS, as_device, refuse_unsupported

    target = as_device(value)
    if target.type == "cpu":
        return
    if target.type == "meta" or target.type in _UNBUILT_BACKENDS:
        refuse_unsupported(target, moving=False)
    if target.type == "cuda":
        raise RuntimeError(f"tracegrad's storages live on the CPU: cannot make one on {target}")
    raise RuntimeError(f"{_NAME}(): Storage device not recognized: {target.type}")


def _is_python_sequence(value) -> bool:
    """CPython's ``PySequence_Check``: an item getter that is not a dict's (torch's Tensor, a C type, indexes
    through the mapping protocol only, so it is no sequence)."""
    from ._tensor import Tensor

    return hasattr(type(value), "__getitem__") and not isinstance(value, (dict, Tensor))


def _bytes_from_sequence(sequence) -> np.ndarray:
    """The ints of ``sequence`` as bytes (each modulo 256, as torch casts an int64 to uint8)."""
    from ._arg_parser import tp_name

    kind = tp_name(sequence)
    if not _is_python_sequence(sequence):
        raise RuntimeError(f"{_NAME}(): Expected a sequence type, but got {kind}")
    try:
        length = len(sequence)
    except TypeError:
        raise RuntimeError(f"{_NAME}(): Could not obtain the length of sequence of type {kind}") from None
    data = np.empty(length, np.uint8)
    for i in range(length):
        item = sequence[i]
        if not isinstance(item, int):
            raise RuntimeError(f"{_NAME}(): tried to construct a storage from a sequence ({kind}), but one of the "
                               f"items was of type {tp_name(item)} instead of int")
        if not -(1 << 63) <= item < 1 << 63:  # (torch's int64 read fails and leaves CPython this complaint)
            raise SystemError("<class 'torch.storage.UntypedStorage'> returned a result with an exception set")
        data[i] = item & 0xFF
    return data


def _element_index(index: int, size: int, name_as_counted: bool = True) -> int:
    """``index`` (negative: from the end) checked against a storage of ``size`` elements, in torch's words: an
    untyped storage names the index counted from the start, a typed one as given."""
    position = index + size if index < 0 else index
    if not 0 <= position < size:
        raise IndexError(f"index {position if name_as_counted else index} out of range for storage of size {size}")
    return position


def _memory_owner(a: np.ndarray) -> np.ndarray:
    """The array owning ``a``'s memory, followed through NumPy's bases, including the ``DummyArray`` that
    ``as_strided`` (``unfold``, ``expand``...) leaves between a view and its array."""
    while True:
        base = a.base
        if isinstance(base, np.ndarray):
            a = base
        elif hasattr(base, "__array_interface__") and isinstance(getattr(base, "base", None), np.ndarray):
            a = base.base
        else:
            return a


# The arrays owning their memory that a program handed to ``from_numpy`` / ``as_tensor``: id -> a weak reference
# (a WeakValueDictionary costs 1.5 us a call; dead entries are dropped in batches instead)
_SHARED_OWNERS: dict[int, weakref.ref] = {}
_PRUNE_AT = [4096]


def mark_not_resizable(owner: np.ndarray) -> None:
    """``owner``, an array that owns its memory, is a program's: its tensors' storage may not grow (torch's
    ``from_numpy`` storages are not resizable)."""
    _SHARED_OWNERS[id(owner)] = weakref.ref(owner)
    if len(_SHARED_OWNERS) > _PRUNE_AT[0]:
        for key in [key for key, ref in _SHARED_OWNERS.items() if ref() is None]:
            del _SHARED_OWNERS[key]
        _PRUNE_AT[0] = max(4096, 2 * len(_SHARED_OWNERS))


def is_resizable(root: np.ndarray) -> bool:
    """Whether a storage's memory (its owning array, ``_memory_owner``) may be replaced by a larger buffer: only
    memory tracegrad allocated itself. A NumPy array shared by ``from_numpy`` (marked, or under an array interface
    owner tracegrad laid over a view of one), a memory map or a buffer of bytes is not, as torch refuses to resize
    such storages."""
    return root.base is None and root.flags.owndata and _marked(root) is not root


def laid_out_over_storage(data: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """An array of ``shape`` and element ``strides`` at ``data``'s storage offset, over its storage, as torch's
    ``resize_`` (and an ``out=`` tensor's resize) lays a tensor out: the memory stays shared with every tensor over
    it where it is big enough. Where it is not, the storage grows: its bytes copied into a larger buffer, the new
    ones zero (torch leaves them uninitialised), refused for memory tracegrad does not own (``is_resizable``).
    Other tensors over the old buffer keep it (NumPy cannot grow memory in place, where torch's storage grows under
    all of them)."""
    storage = UntypedStorage._of(data)
    memory, itemsize = storage._bytes, data.itemsize
    offset = data_address(data) - data_address(memory) if memory.size else 0
    needed = 0 if 0 in shape else offset + storage_extent(shape, strides) * itemsize
    if needed > memory.size:
        if not is_resizable(storage._root):
            raise RuntimeError("Trying to resize storage that is not resizable")
        grown = np.zeros(needed, np.uint8)
        grown[:memory.size] = memory
        _fill_grown(grown, memory.size, data.dtype)
        memory = grown
    return np.ndarray(shape, data.dtype, memory, offset, tuple(s * itemsize for s in strides))


def _fill_grown(grown: np.ndarray, old_nbytes: int, dtype: np.dtype) -> None:
    """The elements of ``dtype`` past the old ``old_nbytes`` of a grown storage filled as torch's resize_ fills them
    under deterministic algorithms: its storage read as a flat tensor of that dtype from element
    ``old_nbytes // itemsize``, rounded down, so an element the old bytes only partly held is overwritten too."""
    from ._runtime import fills_uninitialized_memory, uninitialized_fill_value

    if not fills_uninitialized_memory():
        return
    start = old_nbytes // dtype.itemsize * dtype.itemsize
    count = (grown.size - start) // dtype.itemsize
    grown[start:start + count * dtype.itemsize] = np.full(count, uninitialized_fill_value(dtype), dtype).view(np.uint8)


def _marked(root: np.ndarray):
    ref = _SHARED_OWNERS.get(id(root))
    return None if ref is None else ref()


def _bytes_of(root: np.ndarray) -> np.ndarray:
    """``root``'s memory as bytes in address order: a C-contiguous root as it is; a dense root in another order
    (a ufunc's result that kept a channels-last or transposed input's layout) from its lowest address."""
    if root.nbytes == 0:
        return np.empty(0, np.uint8)
    if root.flags.c_contiguous:
        return np.ndarray((root.nbytes,), dtype=np.uint8, buffer=root)
    ascending = root[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in root.strides)]
    span = sum(s * (n - 1) for s, n in zip(ascending.strides, ascending.shape)) + root.itemsize
    elements = np.lib.stride_tricks.as_strided(ascending, (span // root.itemsize,), (root.itemsize,),
                                               writeable=root.flags.writeable)
    return elements.view(np.uint8)


def _cpu():
    from .backend.device import device

    return device("cpu")


def untyped_storage(tensor) -> UntypedStorage:
    """``Tensor.untyped_storage()``."""
    return UntypedStorage._of(tensor._data)


def typed_storage(tensor) -> TypedStorage:
    """``Tensor.storage()``: deprecated in PyTorch, which warns the first time in a process (whatever
    ``set_warn_always`` says: torch's own flag for it is another), at the caller's line."""
    warn_once_at_caller("typed_storage", "TypedStorage is deprecated. It will be removed in the future and "
                        "UntypedStorage will be the only storage class. This should only matter to you if you are "
                        "using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() "
                        "instead of tensor.storage()", UserWarning, repeat_under_warn_always=False)
    return TypedStorage(untyped_storage(tensor), tensor.dtype)


def array_for_set(tensor, source, storage_offset: int = 0, size=None, stride=None) -> np.ndarray:
    """The array ``tensor.set_(source, storage_offset, size, stride)`` makes ``tensor`` use: ``size`` elements of
    ``tensor``'s dtype from ``storage_offset`` of ``source``'s storage (a storage or a tensor's), ``stride``
    (contiguous where not given) in elements; a storage alone: all its elements, as one dim."""
    storage = source.untyped() if is_storage(source) else untyped_storage(source)
    itemsize = tensor._data.itemsize
    if size is None:
        size = (storage.nbytes() // itemsize,)
    size = tuple(size)
    if stride is None or len(stride) == 0:
        stride = tuple(int(np.prod(size[d + 1:], dtype=np.int64)) for d in range(len(size)))
    stride = tuple(stride)
    _check_set_geometry(size, stride, storage_offset, itemsize)
    needed = _storage_nbytes_for(size, stride, itemsize, storage_offset)
    if needed > storage.nbytes():  # (torch grows the storage to hold the view, as resize_ would)
        storage.resize_(needed)
    # (an empty view may start past the storage's end, which torch allows and NumPy does not)
    offset = min(storage_offset * itemsize, storage.nbytes()) if needed == 0 else storage_offset * itemsize
    return np.ndarray(size, tensor._data.dtype, buffer=storage._bytes, offset=offset,
                      strides=tuple(s * itemsize for s in _strides_as_set(size, stride)))


def _check_set_geometry(size: tuple, stride: tuple, storage_offset: int, itemsize: int) -> None:
    """ATen's checks of ``set_``'s storage offset, sizes and strides, in its order (checkSetStorage's, then
    resize_impl's: the number of elements, then the storage's bytes)."""
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if any(n < 0 for n in size):
        raise RuntimeError("numel: integer multiplication overflow")
    if _storage_nbytes_overflow(size, stride, storage_offset, itemsize):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")


def _storage_nbytes_overflow(size: tuple, stride: tuple, storage_offset: int, itemsize: int) -> bool:
    """Whether ATen's computeStorageNbytes refuses ``size`` and ``stride``: it works in unsigned 64 bits, so a
    negative stride over a dim of two or more elements wraps; none for an empty view (it returns at the first
    dim of 0), whatever its strides; a size of more bytes than an int64 holds. A negative stride over a dim of one
    element multiplies by 0 and passes."""
    if 0 in size:
        return False
    if any(s < 0 and n > 1 for n, s in zip(size, stride)):
        return True
    return (storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))) * itemsize > _INT64_MAX


_INT64_MAX = 2 ** 63 - 1


def _strides_as_set(size: tuple, stride: tuple) -> tuple:
    """The strides torch's set_sizes_and_strides gives a tensor: each negative one (allowed over a dim of one
    element or in an empty view) replaced by the contiguous stride over the dims after it."""
    result = list(stride)
    for d in reversed(range(len(size))):
        if result[d] < 0:
            result[d] = 1 if d == len(size) - 1 else max(size[d + 1], 1) * result[d + 1]
    return tuple(result)


def _storage_nbytes_for(size: tuple, stride: tuple, itemsize: int, storage_offset: int) -> int:
    """The bytes a storage needs to hold a view of ``size`` and ``stride`` from ``storage_offset`` (ATen's
    computeStorageNbytes): one past its last element; none for an empty view."""
    if any(n == 0 for n in size):
        return 0
    last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
    return (last + 1) * itemsize


def is_storage(obj: object) -> bool:
    return isinstance(obj, (UntypedStorage, TypedStorage))


# ---- storages of copies and checkpoints (copy.deepcopy, torch.save / torch.load) --------------------------------


def storage_place(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Where ``data`` lies in its storage: the array owning the memory, that memory as bytes in address order,
    and the byte offset of ``data``'s first element in those bytes (past their end for some empty views)."""
    root = _memory_owner(data)
    memory = _bytes_of(root)
    return root, memory, offset_in(memory if memory.size else root, data)


def copied_storage(root: np.ndarray, memory: np.ndarray) -> np.ndarray:
    """A new storage holding ``root``'s bytes: a copy of ``root`` where it is C-ordered (the common case), else of
    its ``memory`` (a dense root in another order keeps its layout so, as a byte buffer)."""
    return root.copy() if root.flags.c_contiguous else memory.copy()


_DEEPCOPY_MEMO = "tracegrad.storages"  # (deepcopy's memo entry: id(root) -> (root, its copy))


def deepcopied_root(root: np.ndarray, memory: np.ndarray, memo: dict) -> np.ndarray:
    """The copy of the storage owning ``root`` (its bytes ``memory``) made in this deepcopy (``memo``): one per
    storage, shared by the copies of every tensor and storage over it."""
    copies = memo.setdefault(_DEEPCOPY_MEMO, {})
    if id(root) not in copies:
        copies[id(root)] = (root, copied_storage(root, memory))  # (root kept: its id stays unique)
    return copies[id(root)][1]


def check_in_storage(nbytes: int, byte_offset: int, shape: tuple, dtype: np.dtype, byte_strides: tuple) -> None:
    """torch's ``set_`` refusal of a view reaching outside its storage of ``nbytes`` bytes (NumPy's own test
    takes a buffer of no bytes for one as large as needed: the view would read whatever memory follows)."""
    dtype = np.dtype(dtype)
    if dtype.hasobject:  # (pointers read from a file's bytes)
        raise RuntimeError(f"a tensor cannot hold {dtype}: no storage holds Python objects")
    if len(shape) != len(byte_strides) or any(int(n) < 0 for n in shape):
        raise RuntimeError(f"setStorage: sizes {list(shape)} and strides {list(byte_strides)} do not match")
    if any(int(n) == 0 for n in shape):
        return
    low = high = int(byte_offset)
    for n, step in zip(shape, byte_strides):
        reach = (int(n) - 1) * int(step)
        low, high = (low + reach, high) if reach < 0 else (low, high + reach)
    if low < 0 or high + dtype.itemsize > nbytes:
        size = dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(shape)}, strides {[int(st) // size for st in byte_strides]}, "
                           f"storage offset {int(byte_offset) // size}, and itemsize {size} requiring a storage "
                           f"size of {high + size} are out of bounds for storage of size {nbytes}")


def view_in_storage(storage: np.ndarray, byte_offset: int, shape: tuple, dtype: np.dtype,
                    byte_strides: tuple) -> np.ndarray:
    """An array over C-ordered ``storage``'s memory: ``shape`` and ``byte_strides`` from ``byte_offset``. An empty
    one keeps its offset and strides even past the storage's end, as torch's empty views do."""
    if not storage.nbytes or len(shape) != len(byte_strides):  # (NumPy's own bounds test holds otherwise)
        check_in_storage(storage.nbytes, byte_offset, shape, dtype, byte_strides)
    if 0 in shape:
        from .ops.views import empty_view_at

        start = np.ndarray((0,), dtype, buffer=storage.reshape(-1).view(np.uint8)[:0])
        return empty_view_at(start, tuple(shape), tuple(byte_strides), byte_offset)
    try:
        return np.ndarray(tuple(shape), dtype, buffer=storage, offset=byte_offset, strides=tuple(byte_strides))
    except ValueError:  # (out of the storage: torch's error)
        check_in_storage(storage.nbytes, byte_offset, shape, dtype, byte_strides)
        raise
