"""``torch.save`` / ``torch.load``: checkpoints of tensors, parameters, state dicts and plain containers.

``save`` writes PyTorch's zip archive, as ``torch.save`` does, without torch (``_torch_archive_writer.py``): the
real ``torch.load`` reads it, weights-only too. ``load`` reads PyTorch's files without torch
(``_torch_archive.py``): its zip archive (what ``torch.save`` and ``tracegrad.save`` write) and its legacy format
(``_use_new_zipfile_serialization=False``), with their dtypes that tracegrad has (bfloat16, float8... are
refused with a clear error), strides, offsets, shared storages, parameters, attributes and containers; torch's
conjugate and negative bits are applied (such a tensor loads as a copy). What PyTorch users rely on is kept:

- ``load`` defaults to ``weights_only=True``, as PyTorch does since 2.6: unpickling may only rebuild tensors,
  parameters, dtypes, devices, sizes, the builtin containers and the builtins torch allows (sets, complex
  numbers, bytearrays), plus what ``add_safe_globals`` / ``safe_globals`` allow; not NumPy's arrays, scalars or
  dtypes, which torch refuses too. Anything else raises ``pickle.UnpicklingError`` in PyTorch's words, before
  any of it runs. ``weights_only=False`` unpickles anything (only for files you trust).
- tensors come back as leaves with their data, ``requires_grad`` and the attributes set on them (version 1, as
  torch's ``set_`` leaves them); a parameter as a ``Parameter``; a tensor's ``.grad`` is not saved.
- ``f`` is a path (str or ``os.PathLike``) or a binary file object; several checkpoints may follow one another
  in a seekable stream: each load reads the archive at the stream's position and leaves the stream after it
  (torch misreads all but the last; it refuses unseekable streams, which tracegrad reads into memory).
- storage sharing is kept: tensors viewing one storage load as views of one storage, with their strides
  (channels-last, transposed), offsets (empty views' too) and the whole storage; views of one storage as
  different dtypes are refused, as torch refuses them.
- ``mmap=True`` (a path only, as in torch) maps the file copy-on-write: the storages are not read until used
  (tracegrad's files and torch's zip archives; torch's legacy files are refused, as torch refuses them).
- ``weights_only`` judges torch's files as torch does: its rebuild functions, dtypes, storage classes and the
  rest of its allowlist pass (answered by tracegrad's equivalents); anything else is refused in torch's words.
  With ``weights_only=False`` a torch global is answered by tracegrad's of the same name (a saved
  ``torch.nn.Linear`` loads as ``tracegrad.nn.Linear``).
- files written by older tracegrad still load: its raw-storage format (described above ``_MAGIC``) and its
  single pickle with NumPy's arrays in it.
"""

from __future__ import annotations

import _compat_pickle
import contextlib
import functools
import io
import mmap as _mmap
import os
import pickle
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._tensor import Tensor as _Tensor
from ._tensor import _rebuild
from .backend import cupy_backend
from .backend.device import device
from .backend.dtypes import dtype as _dtype
from .storage import UntypedStorage, check_in_storage, mark_not_resizable, view_in_storage

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

DEFAULT_PROTOCOL = 2

# (module, name) pairs that a weights-only load may rebuild: tensors and parameters, dtypes, devices and sizes,
# ordered dicts and counters, and the builtins torch allows. Not NumPy's arrays, scalars nor dtypes: torch refuses
# them (naming the global, as any other).
_ALLOWED: frozenset[tuple[str, str]] = frozenset({
    ("tracegrad.serialization", "_load_tensor"),
    ("tracegrad.serialization", "_load_parameter"),
    ("tracegrad.backend.dtypes", "_lookup_by_name"),
    ("tracegrad.backend.device", "device"),
    ("tracegrad.size", "Size"),
    ("collections", "OrderedDict"),
    ("collections", "Counter"),
    ("builtins", "set"),  # (torch's builtins: not frozenset, slice, range, nor bytes, which only b'' needs)
    ("builtins", "complex"),
    ("builtins", "bytearray"),
    ("_codecs", "encode"),  # how protocol 2 pickles bytes
})
# Files written before the raw-storage format held tensors as NumPy arrays (under NumPy 1's and 2's module names;
# NumPy 2 pickles each dtype through its class, numpy.dtypes.Float32DType...): their loads allow those too.
_ALLOWED_IN_LEGACY_FILES: frozenset[tuple[str, str]] = _ALLOWED | {
    ("tracegrad._tensor", "_rebuild"),
    ("tracegrad._tensor", "_ArrayIn"),
    ("tracegrad.nn.parameter", "_rebuild_parameter"),
    ("tracegrad.serialization", "_transposed"),
    ("tracegrad.serialization", "_empty"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
}
_LEGACY_DTYPE_MODULES = frozenset({"numpy.dtypes"})
_user_safe_globals: list = []


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes or functions in weights-only loads (as ``torch.serialization.add_safe_globals``)."""
    _user_safe_globals.extend(safe_globals)


def get_safe_globals() -> list:
    return list(_user_safe_globals)


def clear_safe_globals() -> None:
    _user_safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list) -> Iterator[None]:
    """Allow these globals in weights-only loads inside the ``with`` block only."""
    n = len(_user_safe_globals)
    _user_safe_globals.extend(safe_globals)
    try:
        yield
    finally:
        del _user_safe_globals[n:]


def _user_allowed(module: str, name: str):
    for obj in _user_safe_globals:
        if getattr(obj, "__module__", None) == module and getattr(obj, "__qualname__", None) == name:
            return obj
    return None


_WEIGHTS_ONLY_HELP = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, \033[1mdo those "
    "steps only if you trust the source of the checkpoint\033[0m. \n\t(1) In PyTorch 2.6, we changed the default "
    "value of the "
    "`weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` "
    "set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check the "
    "recommended steps in the following error message.\n\tWeightsUnpickler error: "
)


_WEIGHTS_ONLY_DOCS = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default "
                      "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


def _numpy_dtype_class(module: str, name: str) -> Any:
    """A dtype class NumPy 2 pickles its dtypes through (``numpy.dtypes.Float32DType``), or None. Only a class of
    the module itself: pickle's own ``find_class`` follows a dotted name (protocol 4) through attributes, and
    ``numpy.dtypes``' attributes reach its globals and builtins (``eval``)."""
    if "." in name or name.startswith("_"):
        return None
    import importlib

    try:
        found = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None
    return found if isinstance(found, type) and issubclass(found, np.dtype) else None


class _WeightsUnpickler(pickle.Unpickler):
    allowed = _ALLOWED
    allowed_modules: frozenset[str] = frozenset()  # (modules whose NumPy dtype classes are allowed)

    def find_class(self, module: str, name: str) -> Any:
        # Protocol 2 names builtins under Python 2's names (``__builtin__ set``): judged under Python 3's, as
        # torch's unpickler does (pickle's own ``find_class`` maps them the same way).
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        else:
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if (module, name) in self.allowed:
            return super().find_class(module, name)
        if module in self.allowed_modules:
            dtype_class = _numpy_dtype_class(module, name)
            if dtype_class is not None:
                return dtype_class
        allowed = _user_allowed(module, name)
        if allowed is not None:
            return allowed
        path = name if module == "builtins" else f"{module}.{name}"  # (torch names builtins bare)
        raise pickle.UnpicklingError(
            _WEIGHTS_ONLY_HELP + f"Unsupported global: GLOBAL {path} was not an allowed global by default. "
            f"Please use `torch.serialization.add_safe_globals([{path}])` or the "
            f"`torch.serialization.safe_globals([{path}])` context manager to allowlist this global if "
            "you trust this class/function." + _WEIGHTS_ONLY_DOCS)


class _LegacyWeightsUnpickler(_WeightsUnpickler):
    allowed = _ALLOWED_IN_LEGACY_FILES
    allowed_modules = _LEGACY_DTYPE_MODULES


@contextlib.contextmanager
def _opened(f, mode: str) -> Iterator[io.IOBase]:
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as handle:
            yield handle
    else:
        yield f


def _transposed(array: np.ndarray, axes: tuple) -> np.ndarray:
    return array.transpose(axes)


def _empty(shape: tuple, dtype: np.dtype, strides: tuple) -> np.ndarray:
    check_in_storage(0, 0, shape, dtype, strides)  # (an empty array only: NumPy reads past a buffer of no bytes)
    return np.ndarray(shape, dtype, np.empty(0, np.uint8), 0, strides)


# ---- tracegrad's older file format (read only) ------------------------------------------------------------------
#
# Before it wrote torch's archive, a tracegrad checkpoint was a header, a pickle and the storages' raw bytes, as
# torch's archive keeps them (about the size of the data, whatever the pickle protocol):
#   _MAGIC | pickle length (u64 LE) | data section length (u64 LE) | pickle | padding | storage | padding | ...
# The data section starts at the first multiple of _ALIGN after the pickle; each storage at a multiple of _ALIGN
# in it (so a memory map serves aligned arrays). The pickle names each storage by a persistent id,
# ("storage", its number, offset in the data section, byte count, dtype, device), which the loader turns into
# an array of those bytes (on the device ``map_location`` maps that one to): loading raw bytes runs no global,
# so weights-only safety rests on the pickle's globals alone.
# Storages come in the order the pickle first names them, so a stream is read straight through.

_MAGIC = b"\x00tracegrad-save\x01"  # (\x00 is no pickle opcode: older files, pickles, never start so)
_HEADER = struct.Struct("<QQ")
_ALIGN = 64


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def _load_tensor(storage: Any, dtype: Any, offset: int, shape: tuple, strides: tuple, requires_grad: bool,
                 state: dict) -> _Tensor:
    return _rebuild(_view(storage, offset, shape, dtype.np, strides), requires_grad, None, state)


def _load_parameter(storage: Any, dtype: Any, offset: int, shape: tuple, strides: tuple,
                    requires_grad: bool, state: dict) -> _Tensor:
    from .nn.parameter import _rebuild_parameter

    return _rebuild_parameter(_view(storage, offset, shape, dtype.np, strides), requires_grad, state)


def _view(storage: Any, offset: int, shape: tuple, dtype: np.dtype, strides: tuple) -> Any:
    """A tensor's array over its loaded storage (host or device memory)."""
    if isinstance(storage, np.ndarray):
        return view_in_storage(storage, offset, shape, dtype, strides)
    xp = cupy_backend.xp  # (a storage mapped to a GPU)
    if xp is None or not isinstance(storage, xp.ndarray):
        raise pickle.UnpicklingError(f"a tensor's storage must be a storage, not {type(storage).__name__}")
    return xp.ndarray(tuple(shape), dtype, memptr=storage.data + offset, strides=tuple(strides))


def _placed(storage: np.ndarray, location: str, map_location: Any) -> Any:
    """A loaded storage on the device ``map_location`` maps its saved ``location`` to, as torch's ``load`` reads
    ``map_location``: a device (or its name), a dict from saved locations to them, or a function of the (host)
    storage and the saved location returning the storage to use (None: the saved location)."""
    if map_location is None:
        target = location
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif isinstance(map_location, (str, device)):
        target = map_location
    else:
        result = map_location(UntypedStorage._over(storage), location)
        if isinstance(result, UntypedStorage):
            return result._bytes
        target = location if result is None else "cpu"
    return _on_device(storage, device(target))


def _on_device(storage: np.ndarray, target: device) -> Any:
    if target.type == "cpu":
        return storage
    if target.type != "cuda":
        raise RuntimeError(f"Attempting to deserialize object on {target.type}, but tracegrad has no {target.type} "
                           "device")
    if not cupy_backend.available():
        raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                           "False. If you are running on a CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")
    with cupy_backend.xp.cuda.Device(target.index or 0):
        return cupy_backend.xp.asarray(storage)


class _StorageReader:
    """The storages of one record, as the pickle names them: read from the stream in order, or served from a
    memory map of the file (``mmap=True``; copy-on-write, as torch's private maps)."""

    def __init__(self, handle: Any, data_start: int, data_length: int, mapped: Any,
                 map_location: Any) -> None:
        self.handle, self.data_start, self.data_length, self.mapped = handle, data_start, data_length, mapped
        self.map_location = map_location
        self.loaded: dict[int, np.ndarray] = {}
        self.position = 0  # (bytes of the data section read so far)

    def persistent_load(self, pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage"):
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        _, key, offset, nbytes, dtype, location = pid
        if not (isinstance(dtype, _dtype) and isinstance(location, str)):
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        if key not in self.loaded:
            storage = self._read(int(offset), int(nbytes), dtype.np)
            self.loaded[key] = _placed(storage, location, self.map_location)
        return self.loaded[key]

    def _read(self, offset: int, nbytes: int, dtype: np.dtype) -> np.ndarray:
        if offset < 0 or nbytes < 0 or offset + nbytes > self.data_length:
            raise pickle.UnpicklingError("storage out of the file's data section")
        typed = dtype if nbytes % dtype.itemsize == 0 else np.dtype(np.uint8)
        if self.mapped is not None:
            return np.frombuffer(self.mapped, typed, nbytes // typed.itemsize, self.data_start + offset)
        if offset < self.position:
            raise pickle.UnpicklingError("storages out of order")
        self._skip(offset - self.position)
        storage = np.empty(nbytes // typed.itemsize, typed)
        _read_into(self.handle, storage.view(np.uint8))
        self.position = offset + nbytes
        mark_not_resizable(storage)  # (torch's storages read from a zip record cannot grow, as a map's cannot)
        return storage

    def finish(self) -> None:
        """Read the stream to the record's end (a stream may hold more records after it)."""
        if self.mapped is None:
            self._skip(self.data_length - self.position)
            self.position = self.data_length

    def _skip(self, n: int) -> None:
        if n:
            _read_into(self.handle, np.empty(n, np.uint8))


def _read_into(handle: Any, buffer: np.ndarray) -> None:
    view, done = memoryview(buffer).cast("B"), 0
    while done < len(view):
        if hasattr(handle, "readinto"):
            n = handle.readinto(view[done:])
        else:
            chunk = handle.read(len(view) - done)
            n = len(chunk)
            view[done:done + n] = chunk
        if not n:
            raise _truncated(len(view) - done)
        done += n


def _truncated(missing: int) -> RuntimeError:
    """torch's error for a checkpoint that ends before what it says it holds."""
    return RuntimeError(f"unexpected EOF, expected {missing} more bytes. The file might be corrupted.")


_CHUNK = 1 << 26  # (a stream of unknown length is read so many bytes at a time: a lying length allocates no more)


def _read_exactly(handle: Any, n: int) -> bytes:
    parts = []
    while n > 0:
        buffer = np.empty(min(n, _CHUNK), np.uint8)
        _read_into(handle, buffer)
        parts.append(buffer.tobytes())
        n -= buffer.size
    return b"".join(parts)


def _read_start(stream: Any, n: int) -> bytes:
    """The first ``n`` bytes of ``stream`` (fewer at its end), however few each read returns (a raw stream's)."""
    start = b""
    while len(start) < n:
        chunk = stream.read(n - len(start))
        if not chunk:
            break
        start += chunk
    return start


def _remaining(stream: Any) -> int | None:
    """The bytes left in ``stream`` after its position, where it can tell (None for a pipe or socket)."""
    try:
        if not getattr(stream, "seekable", lambda: False)():
            return None
        position = stream.tell()
        end = stream.seek(0, os.SEEK_END)
        stream.seek(position)
        return end - position
    except (OSError, ValueError, AttributeError):
        return None


def save(obj: object, f, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Write ``obj`` (tensors, state dicts, containers of them...) to the path or binary file ``f`` as PyTorch's
    zip archive, which ``torch.load`` reads (``_torch_archive_writer.py``); ``_use_new_zipfile_serialization=
    False``: torch's legacy format."""
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):  # (before anything is pickled)
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    with _opened(f, "wb") as handle:
        from ._torch_archive_writer import save_archive, save_legacy

        if _use_new_zipfile_serialization:
            save_archive(obj, handle, pickle_module, pickle_protocol, _disable_byteorder_record)
        else:
            save_legacy(obj, handle, pickle_module, pickle_protocol)


def load(f, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read what ``save`` wrote (or tracegrad's older single-pickle files, or PyTorch's checkpoints: its zip archive
    and its legacy format). ``map_location``, as torch reads it: a
    device (or its name), a dict from saved locations to devices, or a function of a storage and its saved
    location (see ``_placed``); CUDA needs CuPy and a GPU."""
    if weights_only is None:
        weights_only = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") not in ("1", "true", "True")
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    unpickler_class = _WeightsUnpickler if weights_only else (pickle_module or pickle).Unpickler
    with _opened(f, "rb") as handle:
        # (the header and the pickle are read from the stream; with mmap, the storages come from a map of the file)
        start = _read_start(handle, len(_MAGIC))
        if start.startswith(_PICKLE_PROTOCOL_2_OR_LATER):  # (torch's legacy files: a pickled number, maybe framed)
            start += _read_start(handle, _SNIFFED - len(start))
        torch_format = _torch_format(start)
        if mmap:
            _check_mappable(f, start, torch_format)
        if torch_format is not None:
            return _load_torch_format(torch_format, handle, start, map_location, weights_only, pickle_module, mmap,
                                      pickle_load_args)
        if not start and weights_only:  # (torch's weights-only unpickler, Python code, gives a bare EOFError)
            raise EOFError
        if start != _MAGIC and start and _MAGIC.startswith(start):  # (cut off within the header)
            raise _truncated(len(_MAGIC) + _HEADER.size - len(start))
        if weights_only and start != _MAGIC:
            _refuse_first_opcode_as_torch(start)
        if start != _MAGIC:
            return _load_legacy(_rewound(handle, start), unpickler_class, weights_only, pickle_load_args)
        pickle_length, data_length = _HEADER.unpack(_read_exactly(handle, _HEADER.size))
        # The lengths the header claims, checked against the file before anything is allocated for them
        header_end = len(_MAGIC) + _HEADER.size
        data_start = _aligned(header_end + pickle_length)
        claimed = data_start - header_end + data_length
        remaining = _remaining(handle)
        if remaining is not None and claimed > remaining:
            raise _truncated(claimed - remaining)
        pickled = _read_exactly(handle, pickle_length)
        _read_exactly(handle, data_start - header_end - pickle_length)
        mapped = _mapped(handle) if mmap else None
        storages = _StorageReader(handle, data_start, data_length, mapped, map_location)
        unpickler = unpickler_class(io.BytesIO(pickled), **pickle_load_args)
        unpickler.persistent_load = storages.persistent_load
        result = unpickler.load()
        storages.finish()
        return result


_PICKLE_PROTOCOL_2_OR_LATER = b"\x80"
_SNIFFED = 32  # (bytes enough to see torch's legacy magic number after a protocol 4 frame header)


def _torch_archive() -> Any:
    from . import _torch_archive as module  # (it builds on this module's reader)

    return module


def _torch_format(start: bytes) -> str | None:
    """Which of PyTorch's formats a file starting with ``start`` is in: "zip" (its archive), "legacy" (the
    pickles of ``_use_new_zipfile_serialization=False``) or None (tracegrad's own)."""
    if start.startswith(_torch_archive().ZIP_MAGIC):
        return "zip"
    return "legacy" if _torch_archive().LEGACY_MAGIC in start else None


def _load_torch_format(torch_format: str, handle: Any, start: bytes, map_location: Any, weights_only: bool,
                       pickle_module: Any, mmap: bool | None, pickle_load_args: dict) -> Any:
    """``load`` of a file PyTorch wrote (``handle`` past its first bytes, ``start``)."""
    unpickler_base = None if weights_only else (pickle_module or pickle).Unpickler
    if torch_format == "zip":
        archive = _torch_archive().seekable_archive(handle, start)
        return _torch_archive().load_archive(archive, map_location, unpickler_base, bool(mmap), pickle_load_args)
    with _ends_as_torchs_unpickler(weights_only):
        return _torch_archive().load_legacy(_rewound(handle, start), map_location, unpickler_base, pickle_load_args)


@contextlib.contextmanager
def _ends_as_torchs_unpickler(weights_only: bool) -> Iterator[None]:
    """A weights-only load's pickle cut off (or missing) as torch's weights-only unpickler, Python code, meets it:
    it reads on to the stream's end and raises a bare EOFError, where C pickle's words differ."""
    try:
        yield
    except (pickle.UnpicklingError, EOFError) as exc:
        if weights_only and str(exc) in ("pickle data was truncated", "Ran out of input"):
            raise EOFError from None
        raise


# The opcodes torch's weights-only unpickler reads (torch/_weights_only_unpickler.py); any other byte where an
# opcode is expected is refused as an "Unsupported operand".
_TORCH_WEIGHTS_ONLY_OPCODES = frozenset(b"c\x81Rbaesu(t\x85\x86\x87N\x89\x88)]}\x8fJKMGXUQhjqr\x8a\x80.")
_BINGET, _LONG_BINGET = ord("h"), ord("j")


def _refuse_first_opcode_as_torch(start: bytes) -> None:
    """What torch's weights-only load of a file that is neither archive nor tracegrad's own raises at its first
    opcode (its legacy load unpickles the magic number first): a byte it does not read, in its wrapped words;
    a one-byte protocol mark; a memo read of an empty memo (a text file starting with "h" or "j")."""
    opcode = start[0]
    if opcode not in _TORCH_WEIGHTS_ONLY_OPCODES:
        raise pickle.UnpicklingError(_weights_only_failure(f"Unsupported operand {opcode}"))
    if opcode == pickle.PROTO[0] and len(start) == 1:
        raise IndexError("index out of range")  # (its read(1)[0] past the end)
    if opcode == _BINGET:
        if len(start) < 2:
            raise IndexError("index out of range")
        raise KeyError(start[1])
    if opcode == _LONG_BINGET:
        if len(start) < 5:
            raise struct.error("unpack requires a buffer of 4 bytes")
        raise KeyError(struct.unpack("<I", start[1:5])[0])


def _weights_only_failure(message: str) -> str:
    """torch.load's wrapping of a weights-only unpickling error that names no global."""
    return ("Weights only load failed. In PyTorch 2.6, we changed the default value of the `weights_only` argument "
            "in `torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
            "likely succeed, but it can result in arbitrary code execution. Do it only if you got the file from a "
            "trusted source.\nPlease file an issue with the following so that we can make `weights_only=True` "
            "compatible with your use case: WeightsUnpickler error: \n\n" + message + _WEIGHTS_ONLY_DOCS)


def _check_mappable(f, start: bytes, torch_format: str | None) -> None:
    """torch's order for ``mmap=True``: a file that is no archive is refused first (whatever ``f`` is), then an
    archive given as a stream rather than a path."""
    if start != _MAGIC and torch_format != "zip":
        raise _mmap_refused(f if isinstance(f, str) else None)
    if not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")


def _mmap_refused(path: str | None) -> RuntimeError:
    named = f"{path}, " if path is not None else ""  # (torch names a str path only)
    return RuntimeError(f"mmap can only be used with files saved with `torch.save({named}"
                        "_use_new_zipfile_serialization=True), please torch.save your checkpoint with this "
                        "option in order to use mmap.")


def _mapped(handle: Any) -> Any:
    """The file mapped copy-on-write (writes to loaded tensors stay in memory) as a buffer; None for an empty
    file. As torch's map, it holds no file descriptor: Python's ``mmap`` keeps a duplicate of one open for as
    long as it lives (before Python 3.13), so that many loaded checkpoints would exhaust the process's limit."""
    fd = handle.fileno()
    size = os.fstat(fd).st_size
    if not size:
        return None
    try:
        return _mmap.mmap(fd, 0, access=_mmap.ACCESS_COPY, trackfd=False)  # (Python 3.13 and later)
    except TypeError:
        pass
    private = _private_map(fd, size)
    return private if private is not None else _mmap.mmap(fd, 0, access=_mmap.ACCESS_COPY)


@functools.cache
def _libc_mapping() -> tuple | None:
    """libc's ``mmap`` and ``munmap`` through ctypes (None where there are none: then Python's ``mmap``)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        map_, unmap = libc.mmap, libc.munmap
        flags = _mmap.PROT_READ | _mmap.PROT_WRITE, _mmap.MAP_PRIVATE
    except (OSError, AttributeError, TypeError):
        return None
    map_.restype = ctypes.c_void_p
    map_.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    unmap.restype = ctypes.c_int
    unmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    return map_, unmap, flags, ctypes.c_void_p(-1).value  # (MAP_FAILED)


def _private_map(fd: int, size: int) -> Any:
    """A private (copy-on-write) map of ``size`` bytes of ``fd`` as a ctypes buffer, unmapped when the last array
    over it goes; None if it cannot be made."""
    calls = _libc_mapping()
    if calls is None:
        return None
    import ctypes
    import weakref

    map_, unmap, (prot, flags), failed = calls
    address = map_(None, size, prot, flags, fd, 0)
    if address is None or address == failed:
        return None
    mapping = (ctypes.c_char * size).from_address(address)
    weakref.finalize(mapping, unmap, address, size).atexit = False  # (arrays may outlive the exit handlers)
    return mapping


def _load_legacy(handle: Any, unpickler_class: type, weights_only: bool, pickle_load_args: dict) -> Any:
    """A file written before the raw-storage format: one pickle with NumPy's arrays in it, which weights-only
    loading allows there (tracegrad's tensors were made of them)."""
    if weights_only:
        with _ends_as_torchs_unpickler(weights_only):
            return _LegacyWeightsUnpickler(handle, **pickle_load_args).load()
    return unpickler_class(handle, **pickle_load_args).load()


def _rewound(stream: Any, start: bytes) -> Any:
    """``stream`` from before ``start``, its bytes already read."""
    if getattr(stream, "seekable", lambda: True)():
        stream.seek(-len(start), os.SEEK_CUR)
        return stream
    return io.BufferedReader(_Prefixed(start, stream))


class _Prefixed(io.RawIOBase):
    """A stream whose first bytes were already read (the format test): serves them again, then the stream."""

    def __init__(self, prefix: bytes, stream: Any) -> None:
        self.prefix, self.stream = prefix, stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.prefix:
            n = min(len(buffer), len(self.prefix))
            buffer[:n], self.prefix = self.prefix[:n], self.prefix[n:]
            return n
        data = self.stream.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)
