"""PyTorch's checkpoint archive, written without torch: what ``tracegrad.save`` writes, so that ``torch.load``
(weights-only too) reads what tracegrad saved, and ``tracegrad.load`` reads it back (``_torch_archive.py``).

The archive is what ``torch.save`` writes (torch/serialization.py ``_save``): a zip file of stored records under
``archive/`` (data.pkl, .format_version, .storage_alignment, byteorder, data/<key>..., version,
.data/serialization_id), each record's bytes 64-byte aligned through an ``FB`` extra field of ``Z`` padding, as
torch's writer pads them. The pickle names torch's globals (``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage``, ``torch.float32``...) as torch's own reductions do; torch is not imported to name them:
a ``_TorchGlobal`` stands for one and is written as its module and name.
"""

from __future__ import annotations

import functools
import io
import pickle
import secrets
import struct
import sys
import types
import zipfile
import zlib
from collections import OrderedDict
from typing import Any

import numpy as np

from ._factories import Generator
from ._strides import element_strides
from ._tensor import Tensor, user_state, warn_unserialized_hooks
from .backend import dtypes as _dtypes
from .backend.device import device
from .memory_format import layout
from .return_types import is_torch_return_type
from .size import Size
from .storage import TypedStorage, UntypedStorage, storage_place

ARCHIVE_NAME = "archive"
_ALIGNMENT = 64  # (torch's storage alignment, written in .storage_alignment)
_LOCAL_HEADER_SIZE = 30
_ZIP64_LOCAL_EXTRA = 20  # (the zip64 sizes zipfile adds to a big record's local header)
_FORMAT_VERSION = "3\n"  # (the ``version`` record torch writes for tensors and storages)


class _TorchGlobal:
    """torch's global ``module.name``, pickled as such (one object per name, so that the pickle memoizes it)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # (pickle's reductions must name a callable; this one is never called)
        raise TypeError(f"{self.module}.{self.name} is torch's: tracegrad only names it in checkpoints")


@functools.cache
def torch_global(module: str, name: str) -> _TorchGlobal:
    return _TorchGlobal(module, name)


# dtype name -> torch's legacy storage class naming it in a persistent id (``torch.FloatStorage``)
@functools.cache
def _storage_classes() -> dict[str, str]:
    from ._torch_archive import _STORAGE_DTYPES

    return {dtype_name: cls for cls, dtype_name in _STORAGE_DTYPES.items()}


class _StorageRecord:
    """A storage the pickle names (by persistent id) and the archive holds as ``data/<key>``."""

    __slots__ = ("key", "memory", "dtype", "location", "untyped")

    def __init__(self, key: str, memory: np.ndarray, dtype: Any, location: str) -> None:
        self.key, self.memory, self.dtype, self.location = key, memory, dtype, location
        self.untyped = dtype.name not in _storage_classes()  # (torch's newer dtypes: uint16... as bytes)

    def persistent_id(self, legacy: bool, untyped: bool = False) -> tuple:
        """torch's persistent id of the storage (the legacy format's adds the view a storage was, None); ``untyped``:
        as an ``UntypedStorage`` saved itself is named."""
        if self.untyped or untyped:
            named = ("storage", torch_global("torch.storage", "UntypedStorage"), self.key, self.location,
                     self.memory.nbytes)
        else:
            storage_class = torch_global("torch", _storage_classes()[self.dtype.name])
            named = ("storage", storage_class, self.key, self.location, self.numel)
        return (*named, None) if legacy else named

    @property
    def numel(self) -> int:
        return self.memory.nbytes // self.dtype.itemsize


def _host_array(data: Any) -> np.ndarray:
    """A tensor's array on the host (a device array is copied over)."""
    if isinstance(data, np.ndarray):
        return data
    return data.get() if hasattr(data, "get") else np.asarray(data)


_STORAGE_TYPES = frozenset({TypedStorage, UntypedStorage})


class _Storages:
    """The storages of one save, each once (by the array owning its memory), keyed "0", "1"... as torch's archive
    keys them (the legacy format by the storage's address)."""

    def __init__(self, legacy: bool = False) -> None:
        self.legacy = legacy
        self.records: dict[int, tuple[np.ndarray, _StorageRecord]] = {}  # id(root) -> (root, its record)

    def record_of(self, data: np.ndarray, dtype: Any, location: str) -> tuple[_StorageRecord, int]:
        """``data``'s storage record and its byte offset in it."""
        root, memory, offset = storage_place(data)
        entry = self.records.get(id(root))
        if entry is None:
            key = str(id(root) if self.legacy else len(self.records))
            entry = self.records[id(root)] = (root, _StorageRecord(key, memory, dtype, location))
        elif entry[1].dtype != dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        return entry[1], offset

    def persistent_id(self, obj: Any) -> tuple | None:
        """The persistent id torch's pickler gives ``obj``: a storage's (a storage saved itself, as torch's
        ``_save`` names it: a typed one by its dtype's class, an untyped one as bytes); None for anything else."""
        kind = type(obj)
        if kind is _StorageRecord:
            return obj.persistent_id(self.legacy)
        if kind not in _STORAGE_TYPES:  # (the common case, asked of every object pickled: one test only)
            return None
        if kind is TypedStorage:
            record, _ = self.record_of(obj._untyped_storage._root, obj.dtype, str(obj.device))
            return record.persistent_id(self.legacy)
        record, _ = self.record_of(obj._root, _dtypes.uint8, str(obj.device))
        return record.persistent_id(self.legacy, untyped=True)


@functools.cache
def _plain_reductions() -> tuple:
    from .nn.parameter import Parameter

    return (Tensor.__reduce_ex__, Parameter.__reduce_ex__)


def _reduce_tensor(t: Tensor, storages: _Storages) -> Any:
    """torch's reduction of ``t`` (``Tensor.__reduce_ex__`` / ``Parameter.__reduce_ex__``), naming torch's
    rebuild functions."""
    if type(t).__reduce_ex__ not in _plain_reductions():  # (uninitialized parameters reduce themselves)
        return NotImplemented
    from .nn.parameter import Parameter

    state = user_state(t)
    if issubclass(type(t), Parameter):  # (torch saves a parameter's ``.data`` and drops its hooks silently)
        if not state:
            return (torch_global("torch._utils", "_rebuild_parameter"), (t.data, t.requires_grad, OrderedDict()))
        return (torch_global("torch._utils", "_rebuild_parameter_with_state"),
                (t.data, t.requires_grad, OrderedDict(), state))
    warn_unserialized_hooks(t)
    rebuild, args = _rebuild_args(t, storages)
    if type(t) is Tensor and not state:
        return (rebuild, args)
    return (torch_global("torch._tensor", "_rebuild_from_type_v2"), (rebuild, type(t), args, state))


def _rebuild_args(t: Tensor, storages: _Storages) -> tuple[_TorchGlobal, tuple]:
    data = _host_array(t._data)
    record, byte_offset = storages.record_of(data, t.dtype, str(t.device))
    args = (record, byte_offset // t.dtype.itemsize, tuple(data.shape), element_strides(data), t.requires_grad,
            OrderedDict())  # (element_strides: an empty array's NumPy strides of 0 are contiguous ones to torch)
    if record.untyped:
        return torch_global("torch._utils", "_rebuild_tensor_v3"), (*args, t.dtype)
    return torch_global("torch._utils", "_rebuild_tensor_v2"), args


def _torch_class(obj: type) -> Any:
    """torch's name for tracegrad's tensor classes (a user's subclass keeps its own)."""
    from .nn.parameter import Parameter

    if obj is Tensor:
        return torch_global("torch", "Tensor")
    if obj is Parameter:
        return torch_global("torch.nn.parameter", "Parameter")
    return obj


def _python_pickler(pickle_module: Any) -> type:
    """A Python-level Pickler of ``pickle_module`` (its globals can be written by name, which C pickle's
    cannot without importing their module): its own where it is one, else the standard library's."""
    base = getattr(pickle_module, "Pickler", None)
    return base if isinstance(getattr(base, "dispatch", None), dict) else pickle._Pickler


def _raise_as_c_pickler(obj: Any, protocol: int, failure: Exception) -> None:
    """Raise what C pickle says of a global it cannot name (torch pickles with it: a notebook's local class or a
    lambda is an ``AttributeError`` "Can't pickle local object ..."), where the Python-level pickler standing in for
    it (``_python_pickler``) words the failure otherwise; ``failure`` where C pickle would write ``obj``."""
    try:
        pickle.dumps(obj, protocol=protocol)
    except (pickle.PicklingError, AttributeError) as error:
        raise error from None
    raise failure


@functools.cache
def _archive_pickler(base: type, stands_in_for_c: bool) -> type:
    """``base`` writing tracegrad's tensors, dtypes, devices and sizes as torch's (and, where it ``stands_in_for_c``
    pickle, failing to name a global in C pickle's words)."""

    def save_torch_global(self: Any, obj: _TorchGlobal) -> None:
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")
        self.memoize(obj)

    def save(self: Any, obj: Any, save_persistent_id: bool = True) -> None:
        if isinstance(obj, _dtypes.dtype):
            obj = torch_global("torch", obj.name)
        elif isinstance(obj, type):
            obj = _torch_class(obj)
        base.save(self, obj, save_persistent_id)

    def reducer_override(self: Any, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return _reduce_tensor(obj, self.storages)
        if type(obj) is device:
            return (torch_global("torch", "device"), (obj.type,) if obj.index is None else (obj.type, obj.index))
        if type(obj) is Size:
            return (torch_global("torch", "Size"), (tuple(obj),))
        if type(obj) is layout:  # (torch.serialization's reduction, which torch's weights-only loads allow)
            return (torch_global("torch.serialization", "_get_layout"), (repr(obj),))
        if is_torch_return_type(type(obj)):  # (torch's structseq reduction: the class by name, then the values)
            return (torch_global("torch.return_types", type(obj).__name__), (tuple(obj), {}))
        if type(obj) is Generator:  # (its reduction is torch's: the state loads into torch's class)
            _, args, state = obj.__reduce__()
            return (torch_global("torch._C", "Generator"), args, state)
        return NotImplemented

    def persistent_id(self: Any, obj: Any) -> Any:
        return self.storages.persistent_id(obj)

    def save_global(self: Any, obj: Any, name: Any = None) -> None:
        try:
            base.save_global(self, obj, name)
        except (pickle.PicklingError, AttributeError) as failure:
            if not stands_in_for_c:  # (a user's Python-level pickle module speaks for itself, in torch too)
                raise
            _raise_as_c_pickler(obj, self.proto, failure)

    dispatch = dict(base.dispatch)
    dispatch[_TorchGlobal] = save_torch_global
    dispatch[types.FunctionType] = save_global  # (the base's table holds its own save_global, not the override)
    return type("_ArchivePickler", (base,), {
        "dispatch": dispatch, "save": save, "save_global": save_global, "reducer_override": reducer_override,
        "persistent_id": persistent_id,
    })


# ---- the zip archive ---------------------------------------------------------------------------------------------

class _RelativeWriter:
    """A stream written from where the archive starts: zipfile's offsets count from there (as torch's writer's
    do, so that an archive following other data in a stream is read from its start)."""

    def __init__(self, handle: Any) -> None:
        self.handle, self.position = handle, 0

    def write(self, data: Any) -> int:
        self.handle.write(data)
        self.position += memoryview(data).nbytes
        return memoryview(data).nbytes

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        getattr(self.handle, "flush", lambda: None)()


class _ArchiveWriter:
    """Records written one after another into a zip archive, each record's bytes 64-byte aligned."""

    def __init__(self, handle: Any) -> None:
        self.stream = _RelativeWriter(handle)
        self.zip = zipfile.ZipFile(self.stream, "w", zipfile.ZIP_STORED, allowZip64=True)
        self.crc = 0  # (of all records' bytes: part of the serialization id)
        self.written: set[str] = set()

    def write_record(self, name: str, data: Any) -> None:
        view = memoryview(data).cast("B")
        info = zipfile.ZipInfo(f"{ARCHIVE_NAME}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.file_size = view.nbytes
        info.extra = self._padding(len(info.filename.encode()), view.nbytes)
        with self.zip.open(info, "w") as record:
            record.write(view)
        info.extra = b""  # (the padding aligns the local header's bytes only: torch's central directory has none)
        self.crc = zlib.crc32(view, self.crc)
        self.written.add(name)

    def _padding(self, name_length: int, size: int) -> bytes:
        """An ``FB`` extra field of ``Z``s bringing the record's bytes to the next multiple of the alignment."""
        start = self.stream.tell() + _LOCAL_HEADER_SIZE + name_length + 4
        if size * 1.05 > zipfile.ZIP64_LIMIT:  # (zipfile's own test for adding zip64 sizes to the header)
            start += _ZIP64_LOCAL_EXTRA
        padding = -start % _ALIGNMENT
        return b"FB" + padding.to_bytes(2, "little") + b"Z" * padding

    def close(self) -> None:
        self.write_record("version", _FORMAT_VERSION.encode())
        if "byteorder" not in self.written:  # (torch's writer adds it where ``_disable_byteorder_record`` left it out)
            self.write_record("byteorder", sys.byteorder.encode())
        serialization_id = f"{secrets.randbits(64):020d}{self.crc:020d}"
        self.write_record(".data/serialization_id", serialization_id.encode())
        self.zip.close()


def _pickled(obj: Any, stream: Any, pickle_module: Any, pickle_protocol: int, storages: _Storages) -> None:
    """``obj``'s pickle, naming torch's globals and the storages ``storages`` collects, written to ``stream``."""
    base = _python_pickler(pickle_module)
    stands_in_for_c = base is not getattr(pickle_module, "Pickler", None)
    pickler = _archive_pickler(base, stands_in_for_c)(stream, protocol=pickle_protocol)
    pickler.storages = storages
    pickler.dump(obj)


def save_archive(obj: Any, handle: Any, pickle_module: Any, pickle_protocol: int,
                 disable_byteorder_record: bool) -> None:
    """Write ``obj`` to ``handle`` as ``torch.save`` does (torch/serialization.py ``_save``)."""
    storages = _Storages()
    buffer = io.BytesIO()
    _pickled(obj, buffer, pickle_module, pickle_protocol, storages)
    writer = _ArchiveWriter(handle)
    writer.write_record("data.pkl", buffer.getbuffer())
    writer.write_record(".format_version", b"1")
    writer.write_record(".storage_alignment", str(_ALIGNMENT).encode())
    if not disable_byteorder_record:
        writer.write_record("byteorder", sys.byteorder.encode())
    for _, record in storages.records.values():
        writer.write_record(f"data/{record.key}", np.ascontiguousarray(record.memory))
    writer.close()


# ---- the legacy format (``_use_new_zipfile_serialization=False``) ---------------------------------------------

_LEGACY_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL_VERSION = 1001


def _system_info() -> dict:
    return {"protocol_version": _LEGACY_PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
            "type_sizes": {"short": struct.calcsize("=h"), "int": struct.calcsize("=i"),
                           "long": struct.calcsize("=l")}}


def save_legacy(obj: Any, handle: Any, pickle_module: Any, pickle_protocol: int) -> None:
    """Write ``obj`` to ``handle`` as ``torch.save(..., _use_new_zipfile_serialization=False)`` does
    (torch/serialization.py ``_legacy_save``): five pickles, then each storage's element count and bytes."""
    for header in (_LEGACY_MAGIC_NUMBER, _LEGACY_PROTOCOL_VERSION, _system_info()):
        pickle_module.dump(header, handle, protocol=pickle_protocol)
    storages = _Storages(legacy=True)
    _pickled(obj, handle, pickle_module, pickle_protocol, storages)
    records = sorted((record for _, record in storages.records.values()), key=lambda record: record.key)
    pickle_module.dump([record.key for record in records], handle, protocol=pickle_protocol)
    for record in records:
        handle.write(struct.pack("<q", record.numel))
        handle.write(memoryview(np.ascontiguousarray(record.memory)).cast("B"))
