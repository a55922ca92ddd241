"""PyTorch's checkpoint archive, read without torch: what ``torch.save`` writes (``_use_new_zipfile_serialization``,
its default since 1.6), for ``tracegrad.load``.

The archive is a zip file of uncompressed records under one folder (``<name>/``): ``data.pkl``, a pickle of the
saved object; ``data/<key>``, each storage's raw bytes (aligned to 64 bytes in the file, so that a memory map
serves aligned arrays); ``byteorder``, ``version``, ``.format_version``, ``.storage_alignment`` and
``.data/serialization_id``. The pickle names each storage by a persistent id ``("storage", storage class, key,
location, numel)``: a legacy class (``torch.FloatStorage``) gives the storage's dtype, ``torch.storage.
UntypedStorage`` a storage of bytes (then ``_rebuild_tensor_v3`` names the tensor's dtype). Tensors are rebuilt
through ``torch._utils``'s functions, which this module stands in for (``_TORCH_STAND_INS``): a torch global is
answered by tracegrad's equivalent, so torch need not be installed. Weights-only loading allows what torch's own
weights-only unpickler allows (that tracegrad has), and refuses everything else in torch's words.
"""

from __future__ import annotations

import _compat_pickle
import contextlib
import contextvars
import functools
import importlib
import io
import pickle
import struct
import zipfile
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from . import serialization as _serialization
from ._tensor import Tensor, _rebuild, set_user_state
from .backend import dtypes as _dtypes
from .backend.device import device
from .size import Size
from .storage import TypedStorage, UntypedStorage, mark_not_resizable

ZIP_MAGIC = b"PK\x03\x04"
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # (a zip local file header: signature ... name length, extra length)

# torch's dtypes that tracegrad does not have: their tensors (or the dtypes themselves) cannot be loaded.
_TORCH_ONLY_DTYPES = frozenset({
    "complex32", "qint8", "quint8", "qint32", "quint4x2", "quint2x4", "float8_e5m2", "float8_e4m3fn",
    "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits8", "bits16", "bits1x8",
    "bits2x4", "bits4x2", *(f"uint{n}" for n in range(1, 8)), *(f"int{n}" for n in range(1, 8)),
})
# torch's legacy storage classes: the dtype of their elements (None: one tracegrad does not have)
_STORAGE_DTYPES = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16", "LongStorage": "int64",
    "IntStorage": "int32", "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexDoubleStorage": "complex128", "ComplexFloatStorage": "complex64",
    "BFloat16Storage": "bfloat16", "QInt8Storage": "qint8", "QInt32Storage": "qint32", "QUInt8Storage": "quint8",
    "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
}
# torch's rebuild functions for tensors tracegrad cannot hold (quantized, sparse, nested, meta, wrapper subclasses)
_UNSUPPORTED_REBUILDS = frozenset({
    "_rebuild_qtensor", "_rebuild_sparse_tensor", "_rebuild_meta_tensor_no_storage", "_rebuild_nested_tensor",
    "_rebuild_wrapper_subclass", "_rebuild_device_tensor_from_numpy", "_rebuild_device_tensor_from_cpu_tensor",
})


def _unsupported_dtype(name: str) -> RuntimeError:
    return RuntimeError(f"tracegrad cannot load this checkpoint: it holds torch.{name}, a dtype tracegrad does not "
                        f"have (convert those tensors in PyTorch first, e.g. with .float())")


class _StorageClass(NamedTuple):
    """A torch storage class named in a persistent id: ``dtype`` None for ``UntypedStorage`` (bytes)."""

    dtype: Any


_UNTYPED = _StorageClass(None)


class _DeviceStorage(NamedTuple):
    """A storage ``map_location`` put on a GPU (a CuPy array): tracegrad's storage objects hold host memory."""

    memory: Any
    dtype: Any


# ---- the tensors: torch._utils' rebuild functions ----------------------------------------------------------------

def _memory_and_dtype(storage: Any) -> tuple[Any, Any]:
    """A loaded storage's array (its memory) and its dtype (uint8 for bytes)."""
    if isinstance(storage, TypedStorage):
        return storage._untyped_storage._root, storage.dtype
    if isinstance(storage, _DeviceStorage):
        return storage.memory, storage.dtype or _dtypes.uint8
    raise pickle.UnpicklingError(f"a tensor's storage must be a storage, not {type(storage).__name__}")


def _element_tuple(values: Any, what: str) -> tuple:
    if not isinstance(values, (tuple, list)) or not all(type(v) is int for v in values):
        raise pickle.UnpicklingError(f"a tensor's {what} must be a tuple of ints")
    return tuple(values)


def _tensor_over(storage: Any, dtype: Any, storage_offset: int, size: Any, stride: Any, requires_grad: bool,
                 metadata: Any) -> Tensor:
    """A leaf tensor over ``storage`` (elements of ``dtype``), as torch's ``set_`` lays it out."""
    memory, _ = _memory_and_dtype(storage)
    if not isinstance(dtype, _dtypes.dtype) or type(storage_offset) is not int:
        raise pickle.UnpicklingError("a tensor's dtype or storage offset is not valid")
    shape, strides = _element_tuple(size, "size"), _element_tuple(stride, "stride")
    itemsize = dtype.itemsize
    array = _serialization._view(memory, storage_offset * itemsize, shape, dtype.np,
                                 tuple(s * itemsize for s in strides))
    return _rebuild(_with_bits(array, metadata), bool(requires_grad), None, None)


# A legacy file's storages are filled only after its pickle (they follow it): while one loads, the copies that
# torch's bits call for are made empty and listed here, to be computed once the storages hold their bytes.
_unfilled_bit_copies: contextvars.ContextVar[list | None] = contextvars.ContextVar("_unfilled_bit_copies",
                                                                                   default=None)


def _with_bits(array: Any, metadata: Any) -> Any:
    """torch's lazy conjugate and negative bits (``metadata``), applied: tracegrad has no such bits, so such a
    tensor loads as a copy holding the values torch shows (it no longer shares its storage)."""
    if not metadata:
        return array
    if not isinstance(metadata, dict):
        raise pickle.UnpicklingError("a tensor's metadata must be a dict")
    conj, neg = bool(metadata.get("conj")), bool(metadata.get("neg"))
    if not (conj or neg):
        return array
    pending = _unfilled_bit_copies.get()
    if pending is None:
        return _bits_applied(array, conj, neg)
    copy = np.empty_like(array)
    pending.append((copy, array, conj, neg))
    return copy


def _bits_applied(array: Any, conj: bool, neg: bool) -> Any:
    if conj:
        array = array.conj()
    return -array if neg else array


@contextlib.contextmanager
def _bit_copies_after_filling() -> Iterator[None]:
    """Within: torch's bits are applied when the block ends (after a legacy file's storages are filled)."""
    pending: list = []
    token = _unfilled_bit_copies.set(pending)
    try:
        yield
    finally:
        _unfilled_bit_copies.reset(token)
    for copy, array, conj, neg in pending:
        copy[...] = _bits_applied(array, conj, neg)


def _rebuild_tensor(storage: Any, storage_offset: int, size: Any, stride: Any) -> Tensor:
    return _tensor_over(storage, _memory_and_dtype(storage)[1], storage_offset, size, stride, False, None)


def _rebuild_tensor_v2(storage: Any, storage_offset: int, size: Any, stride: Any, requires_grad: bool,
                       backward_hooks: Any, metadata: Any = None) -> Tensor:
    dtype = _memory_and_dtype(storage)[1]
    return _tensor_over(storage, dtype, storage_offset, size, stride, requires_grad, metadata)


def _rebuild_tensor_v3(storage: Any, storage_offset: int, size: Any, stride: Any, requires_grad: bool,
                       backward_hooks: Any, dtype: Any, metadata: Any = None) -> Tensor:
    return _tensor_over(storage, dtype, storage_offset, size, stride, requires_grad, metadata)


def _rebuild_parameter(data: Any, requires_grad: bool, backward_hooks: Any) -> Tensor:
    from .nn.parameter import _rebuild_parameter as rebuild

    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError("a parameter's data must be a tensor")
    return rebuild(data, bool(requires_grad))


def _rebuild_parameter_with_state(data: Any, requires_grad: bool, backward_hooks: Any, state: Any) -> Tensor:
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _set_obj_state(obj: Any, state: Any) -> Any:
    """torch's ``_set_obj_state``: a ``__dict__`` state, or a (``__dict__``, slots) pair, set as attributes."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        parts = state
    else:
        parts = (state, None)
    for part in parts:
        if part and not isinstance(part, dict):
            raise pickle.UnpicklingError("a tensor's state must be a dict")
        set_user_state(obj, part)  # (never tracegrad's own attributes, whatever the file says)
    return obj


def _rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    """A tensor rebuilt by ``func``, of class ``new_type``, with its attributes (torch's ``Tensor.__reduce_ex__``
    for a tensor with attributes set on it, or of a subclass)."""
    result = func(*args)
    if type(result) is not new_type:
        result = result.as_subclass(new_type)
    if getattr(type(result), "__setstate__", None) is not None:  # (a subclass's own; Tensor has none)
        result.__setstate__(state)
        return result
    return _set_obj_state(result, state)


def _get_layout(name: str) -> Any:
    import tracegrad

    layout = getattr(tracegrad, name.removeprefix("torch."), None) if isinstance(name, str) else None
    if not isinstance(layout, tracegrad.layout):
        raise RuntimeError(f"Unknown layout: {name}")
    return layout


def _refused_rebuild(name: str) -> Any:
    def refuse(*args: Any) -> Any:
        raise RuntimeError(f"tracegrad cannot load this checkpoint: it holds a tensor torch rebuilds with "
                           f"torch._utils.{name} (quantized, sparse, nested, meta or subclass tensors), which "
                           "tracegrad does not have")
    return refuse


# ---- torch's globals, answered by tracegrad's ---------------------------------------------------------------------

@functools.cache
def _torch_stand_ins() -> dict[tuple[str, str], Any]:
    """(module, name) of the globals torch's weights-only unpickler allows -> what tracegrad rebuilds them with."""
    from .nn.parameter import Parameter

    rebuilds = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
                _rebuild_parameter_with_state)
    found: dict[tuple[str, str], Any] = {("torch._utils", f.__name__): f for f in rebuilds}
    found.update({("torch._utils", name): _refused_rebuild(name) for name in _UNSUPPORTED_REBUILDS})
    found.update({
        ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
        ("torch", "Tensor"): Tensor,
        ("torch.nn.parameter", "Parameter"): Parameter,
        ("torch", "Size"): Size,
        ("torch", "device"): device,
        ("torch.serialization", "_get_layout"): _get_layout,
        ("torch.storage", "UntypedStorage"): _UNTYPED,
    })
    for d in _dtypes.ALL_DTYPES:
        found[("torch", d.name)] = d
    for module in ("torch", "torch.cuda"):
        for name, dtype_name in _STORAGE_DTYPES.items():
            if dtype_name not in _TORCH_ONLY_DTYPES and dtype_name != "bfloat16":
                found[(module, name)] = _StorageClass(_dtypes._lookup_by_name(dtype_name))
    return found


def _python3_name(module: str, name: str) -> tuple[str, str]:
    """A global as Python 3 names it (protocol 2 pickles name builtins as Python 2 did)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _stand_in(module: str, name: str) -> Any:
    """tracegrad's answer to torch's global ``module.name``, or None where it has none to give."""
    found = _torch_stand_ins().get((module, name))
    if found is None and module in ("torch", "torch.cuda") and name in ("bfloat16", "BFloat16Storage"):
        # (bfloat16 comes into use only when a checkpoint holds it: ml_dtypes is imported then)
        found = _dtypes.bfloat16_in_use() if name == "bfloat16" else _StorageClass(_dtypes.bfloat16_in_use())
    if found is not None:
        if found is _dtypes.uint16 or found is _dtypes.uint32 or found is _dtypes.uint64:
            _dtypes.barebones_in_use()
        return found
    if module in ("torch", "torch.cuda") and (name in _TORCH_ONLY_DTYPES or name in _STORAGE_DTYPES):
        raise _unsupported_dtype(_STORAGE_DTYPES.get(name, name))
    return None


class _ArchiveWeightsUnpickler(_serialization._WeightsUnpickler):
    """Weights-only: torch's allowed globals through tracegrad's stand-ins; anything else as tracegrad's own
    weights-only loads judge it (the globals a user allowed, under torch's name or tracegrad's, else torch's
    refusal)."""

    def find_class(self, module: str, name: str) -> Any:
        module, name = _python3_name(module, name)
        found = _stand_in(module, name)
        if found is None and module.startswith("torch."):
            found = _serialization._user_allowed("tracegrad" + module.removeprefix("torch"), name)
        return found if found is not None else super().find_class(module, name)


@functools.cache
def _full_unpickler(base: type) -> type:
    """``base`` (a pickle module's Unpickler) loading anything, torch's globals as tracegrad's: a stand-in, else
    the same name under ``tracegrad`` (``torch.nn.modules.linear.Linear``)."""

    def find_class(self: Any, module: str, name: str) -> Any:
        module, name = _python3_name(module, name)
        found = _stand_in(module, name)
        if found is not None:
            return found
        if module == "torch" or module.startswith("torch."):
            return _tracegrad_global(module, name)
        return base.find_class(self, module, name)

    return type("_ArchiveUnpickler", (base,), {"find_class": find_class})


def _tracegrad_global(module: str, name: str) -> Any:
    """torch's ``module.name`` as tracegrad names it: in the same module, else in the nearest package above it
    that has it (tracegrad lays some modules out otherwise: ``torch.nn.modules.batchnorm.BatchNorm2d`` is
    ``tracegrad.nn.modules.normalization``'s, exported by ``tracegrad.nn.modules``)."""
    parts = ("tracegrad" + module.removeprefix("torch")).split(".")
    for end in range(len(parts), 1, -1):  # (not tracegrad itself: torch.nn's classes are not top-level names)
        try:
            found = importlib.import_module(".".join(parts[:end]))
            for part in name.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError):
            continue
        return found
    raise pickle.UnpicklingError(f"tracegrad has no {module}.{name}, which this checkpoint needs")


# ---- the archive ------------------------------------------------------------------------------------------------

class _ArchiveStorages:
    """The storages of one archive, as its pickle names them: each record read (or mapped) once, placed where
    ``map_location`` says."""

    def __init__(self, archive: zipfile.ZipFile, prefix: str, mapped: Any, map_location: Any) -> None:
        self.archive, self.prefix, self.mapped, self.map_location = archive, prefix, mapped, map_location
        self.big_endian = self._byteorder() == "big"
        self.loaded: dict[str, Any] = {}

    def _byteorder(self) -> str:
        try:
            order = self.archive.read(self.prefix + "byteorder").decode()
        except KeyError:
            return "little"  # (torch's default for files without the record)
        if order not in ("little", "big"):
            raise ValueError("Unknown endianness type: " + order)
        return order

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        _, storage_class, key, location, numel = pid
        if not (isinstance(storage_class, _StorageClass) and isinstance(key, str) and isinstance(location, str)
                and type(numel) is int and numel >= 0):
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        if key not in self.loaded:
            self.loaded[key] = self._storage(storage_class.dtype, key, location, numel)
        return self.loaded[key]

    def _storage(self, dtype: Any, key: str, location: str, numel: int) -> Any:
        memory = self._record(f"{self.prefix}data/{key}", (dtype or _dtypes.uint8).np, numel)
        placed = _serialization._placed(memory, location, self.map_location)
        if not isinstance(placed, np.ndarray):
            return _DeviceStorage(placed, dtype)
        return _typed(placed, dtype)

    def _record(self, name: str, dtype: np.dtype, numel: int) -> np.ndarray:
        try:
            info = self.archive.getinfo(name)
        except KeyError:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found") from None
        if info.file_size != numel * dtype.itemsize:
            raise RuntimeError(f"the checkpoint's record {name} holds {info.file_size} bytes, not the "
                               f"{numel * dtype.itemsize} its storage needs. The file might be corrupted.")
        memory = self._mapped_record(info, dtype, numel) if self.mapped is not None else self._read(info, dtype)
        if self.big_endian and dtype.itemsize > 1:
            memory.byteswap(inplace=True)
        return memory

    def _read(self, info: zipfile.ZipInfo, dtype: np.dtype) -> np.ndarray:
        memory = np.empty(info.file_size // dtype.itemsize, dtype)
        with self.archive.open(info) as record:
            _serialization._read_into(record, memory.view(np.uint8))
        mark_not_resizable(memory)  # (torch's storages read from a record cannot grow)
        return memory

    def _mapped_record(self, info: zipfile.ZipInfo, dtype: np.dtype, numel: int) -> np.ndarray:
        if info.compress_type != zipfile.ZIP_STORED:
            raise RuntimeError(f"mmap cannot serve the compressed record {info.filename}: load without mmap")
        header = bytes(memoryview(self.mapped)[info.header_offset:info.header_offset + _LOCAL_HEADER.size])
        signature, name_length, extra_length = _LOCAL_HEADER.unpack(header)
        if signature != ZIP_MAGIC:
            raise RuntimeError(f"the checkpoint's record {info.filename} has no valid header. The file might be "
                               "corrupted.")
        start = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        return np.frombuffer(self.mapped, dtype, numel, start)


def _typed(memory: np.ndarray, dtype: Any) -> TypedStorage:
    """A loaded storage, as torch's ``load`` gives it: typed (bytes, uint8, where the file names none)."""
    return TypedStorage(UntypedStorage._of(memory), dtype or _dtypes.uint8)


_MINIZ_ADVICE = (". This is an internal miniz error. If you are seeing this error, there is a high likelihood that "
                 "your checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, was "
                 "transferred incorrectly, or the file was modified after saving.")
_END_RECORD_SIZE = 22  # (a zip file's end of central directory record, without a comment)


def _zip_error(what: str) -> RuntimeError:
    """torch's error for an archive its zip reader (miniz) cannot read."""
    return RuntimeError(f"PytorchStreamReader failed reading zip archive: {what}{_MINIZ_ADVICE}")


def _opened_archive(handle: Any) -> zipfile.ZipFile:
    """The zip archive starting at ``handle``'s position. Python's zipfile finds an archive by its end record,
    the last one in the file: where that archive starts later (another checkpoint written after this one in
    the stream), this one is refused, as torch's reader refuses it, rather than the later one read."""
    origin = handle.tell()
    try:
        archive = zipfile.ZipFile(handle)
    except zipfile.BadZipFile:
        size = handle.seek(0, io.SEEK_END) - origin
        raise _zip_error("not a ZIP archive" if size < _END_RECORD_SIZE else "failed finding central directory") \
            from None
    entries = archive.infolist()
    if not entries or min(entry.header_offset for entry in entries) != origin:
        archive.close()
        raise _zip_error("invalid header or archive is corrupted")
    return archive


def _record_prefix(archive: zipfile.ZipFile) -> str:
    """The folder the archive's records lie in (torch names it after the file: ``archive/``)."""
    names = archive.namelist()
    if not names or "/" not in names[0]:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory")
    prefix = names[0].split("/", 1)[0] + "/"
    if prefix + "version" not in names and prefix + ".data/version" not in names:  # (torch's reader reads it first)
        raise RuntimeError('Expected hasRecord("version") to be true, but got false.  (Could this error message be '
                           'improved?  If so, please report an enhancement request to PyTorch.)')
    if prefix + "data.pkl" not in names:
        if prefix + "constants.pkl" in names:
            raise RuntimeError("tracegrad cannot load TorchScript archives (torch.jit.save): save the model's "
                               "state_dict() with torch.save instead")
        raise RuntimeError(f"PytorchStreamReader failed locating file data.pkl: file not found{_MINIZ_ADVICE}")
    return prefix


def seekable_archive(handle: Any, start: bytes) -> Any:
    """``handle`` from the archive's first byte (``start`` already read), as zipfile needs it: seekable."""
    if getattr(handle, "seekable", lambda: False)():
        return _serialization._rewound(handle, start)
    return io.BytesIO(start + handle.read())


def load_archive(handle: Any, map_location: Any, unpickler_base: type | None, mmap: bool,
                 pickle_load_args: dict) -> Any:
    """What ``torch.save`` wrote to the zip archive ``handle`` (seekable, at its start); ``unpickler_base`` None
    for a weights-only load."""
    mapped = _serialization._mapped(handle) if mmap else None
    with _opened_archive(handle) as archive:
        prefix = _record_prefix(archive)
        storages = _ArchiveStorages(archive, prefix, mapped, map_location)
        unpickler_class = _ArchiveWeightsUnpickler if unpickler_base is None else _full_unpickler(unpickler_base)
        unpickler = unpickler_class(io.BytesIO(archive.read(prefix + "data.pkl")), **pickle_load_args)
        unpickler.persistent_load = storages.persistent_load
        return unpickler.load()


# ---- the legacy format (``_use_new_zipfile_serialization=False``) ---------------------------------------------
#
# Five pickles in a row: torch's magic number, its protocol version (1001), a dict of the saving system's byte
# order and type sizes, the object (storages named by ``("storage", storage class, key, location, numel,
# view metadata)``), and the sorted list of the storages' keys; then, in that order, each storage as its element
# count (int64) and its bytes.

_LEGACY_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL_VERSION = 1001
LEGACY_MAGIC = b"\x8a\x0a" + _LEGACY_MAGIC_NUMBER.to_bytes(10, "little")  # (how pickle writes the number)


class _LegacyStorages:
    """The storages a legacy file's object names: allocated as its pickle names them (the tensors view them),
    filled from the bytes that follow the pickle."""

    def __init__(self, map_location: Any) -> None:
        self.map_location = map_location
        self.loaded: dict[str, tuple[np.ndarray, Any]] = {}  # key -> (host memory, the storage object)

    def persistent_load(self, pid: Any) -> Any:
        if isinstance(pid, tuple) and len(pid) == 4 and pid[0] == "module":  # (a saved module's class)
            return pid[1]
        if not (isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage"):
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        _, storage_class, key, location, numel, view = pid
        if not (isinstance(storage_class, _StorageClass) and isinstance(key, str) and isinstance(location, str)
                and type(numel) is int and numel >= 0):
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        if view is not None:
            raise RuntimeError("tracegrad cannot load storage views from legacy checkpoints (written by PyTorch "
                               "before 1.0): load and save the file again with PyTorch")
        if key not in self.loaded:
            self.loaded[key] = self._storage(storage_class.dtype, location, numel)
        return self.loaded[key][1]

    def _storage(self, dtype: Any, location: str, numel: int) -> tuple[np.ndarray, Any]:
        memory = np.empty(numel, (dtype or _dtypes.uint8).np)
        placed = _serialization._placed(memory, location, self.map_location)
        if not (isinstance(placed, np.ndarray) and (not memory.size or np.shares_memory(placed, memory))):
            raise RuntimeError("tracegrad loads legacy PyTorch checkpoints (_use_new_zipfile_serialization=False) "
                               "to the CPU only: pass map_location='cpu'")
        return memory, _typed(memory, dtype)

    def fill(self, stream: Any, keys: Any, little_endian: bool) -> None:
        if not (isinstance(keys, list) and all(isinstance(key, str) for key in keys)):
            raise pickle.UnpicklingError("a legacy checkpoint's storage keys must be a list of str")
        for key in keys:
            memory = self.loaded[key][0] if key in self.loaded else None
            (numel,) = struct.unpack("<q", _serialization._read_exactly(stream, 8))
            if memory is None or numel != memory.size:
                raise RuntimeError(f"the checkpoint's storage {key} does not match what its pickle says. The "
                                   "file might be corrupted.")
            _serialization._read_into(stream, memory.view(np.uint8))
            if not little_endian and memory.itemsize > 1:
                memory.byteswap(inplace=True)
            # (torch allocates these storages anew: unlike an archive's records, they can grow)


def load_legacy(stream: Any, map_location: Any, unpickler_base: type | None, pickle_load_args: dict) -> Any:
    """What ``torch.save(..., _use_new_zipfile_serialization=False)`` wrote to ``stream`` (at its start);
    ``unpickler_base`` None for a weights-only load."""
    header = _serialization._WeightsUnpickler  # (the first pickles hold numbers and a dict only)
    if header(stream).load() != _LEGACY_MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol_version = header(stream).load()
    if protocol_version != _LEGACY_PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol_version}")
    sys_info = header(stream).load()
    little_endian = not isinstance(sys_info, dict) or sys_info.get("little_endian", True)
    storages = _LegacyStorages(map_location)
    unpickler_class = _ArchiveWeightsUnpickler if unpickler_base is None else _full_unpickler(unpickler_base)
    unpickler = unpickler_class(stream, **pickle_load_args)
    unpickler.persistent_load = storages.persistent_load
    with _bit_copies_after_filling():
        result = unpickler.load()
        storages.fill(stream, header(stream).load(), little_endian)
    return result
