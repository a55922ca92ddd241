"""Shared memory under tensors: ``share_memory_()``, ``is_shared()`` and the handles ``torch.multiprocessing`` sends.

A storage moves into shared memory in place, as torch's does: a new buffer mapped ``MAP_SHARED`` (an anonymous
memfd for the 'file_descriptor' strategy, a file under /dev/shm for 'file_system') takes its bytes, and every
tensor over the old buffer is rebound to the same place in the new one, its storage object too. Values, strides,
versions and autograd state are untouched. Views share a root NumPy array, not a Python object listing them, so
the tensors over a buffer (and the saved outputs autograd keeps as arrays) are found among the objects the
garbage collector tracks (slow, but sharing is rare), unless the tensor moved is plainly the buffer's only user.

Forked children inherit the mapping; other processes attach to it through its ``Segment``, which pickles as a
file descriptor (passed as ``multiprocessing`` passes them) or a file name. A buffer attached twice in a process
is mapped once (the tensors received share a storage, as torch's shared cache makes them). Nothing is registered
with multiprocessing's resource tracker: a memfd vanishes with its last descriptor and mapping, and a /dev/shm file
is removed by the process that made it once its buffer is freed (or at exit).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import mmap
import os
import sys
import weakref
from collections.abc import Iterable

import numpy as np

from ._strides import data_address
from .storage import _BY_BUFFER, _bytes_of, _memory_owner, view_in_storage

# the strategy new segments use ('file_descriptor' or 'file_system'), set by tracegrad.multiprocessing
SHARING_STRATEGY = ["file_descriptor"]

_BY_ROOT: dict[int, Segment] = {}  # id of a shared buffer -> its segment
_BY_KEY: dict[tuple, Segment] = {}  # how another process names a buffer -> its segment here


class Segment:
    """One shared buffer of this process: its bytes (the storage root of every tensor over it, held weakly) and
    how another process reaches it: a file descriptor kept open, or a file's name; neither for an empty one."""

    def __init__(self, memory: np.ndarray, key: tuple | None, fd: int | None = None,
                 filename: str | None = None, owns_file: bool = False) -> None:
        self.memory_ref = weakref.ref(memory)
        self.nbytes = memory.nbytes
        self.key, self.fd, self.filename, self.owns_file = key, fd, filename, owns_file
        _BY_ROOT[id(memory)] = self
        if key is not None:
            _BY_KEY[key] = self
        weakref.finalize(memory, _release, self, id(memory), os.getpid())

    def __reduce__(self):
        if self.fd is not None:
            from multiprocessing.reduction import DupFd

            return _attach_fd, (DupFd(self.fd), self.nbytes)
        if self.filename is not None:
            return _attach_file, (self.filename, self.nbytes)
        return _empty_memory, ()


def _release(segment: Segment, root_id: int, creator_pid: int) -> None:
    """Once a shared buffer is freed: forget it, close its descriptor, remove its file if this process made it."""
    if _BY_ROOT.get(root_id) is segment:
        del _BY_ROOT[root_id]
    if segment.key is not None and _BY_KEY.get(segment.key) is segment:
        del _BY_KEY[segment.key]
    if segment.fd is not None:
        os.close(segment.fd)
    if segment.owns_file and os.getpid() == creator_pid:  # (not a forked child's copy of the segment)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(segment.filename)


def segment_of(root: np.ndarray) -> Segment | None:
    """The segment of ``root`` (a storage's owning array) where it is shared memory."""
    segment = _BY_ROOT.get(id(root))
    return segment if segment is not None and segment.memory_ref() is root else None


def is_shared_array(data) -> bool:
    """Whether ``data`` (a tensor's array) lies in shared memory."""
    return isinstance(data, np.ndarray) and segment_of(_memory_owner(data)) is not None


# ---- making and attaching segments ------------------------------------------------------------------------------


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


_LIBC = _libc()


def _mapped(fd: int, nbytes: int) -> np.ndarray:
    """``nbytes`` of ``fd`` mapped ``MAP_SHARED``, unmapped once the bytes are freed. By mmap(2) itself, not
    Python's ``mmap.mmap``, which keeps a duplicate of ``fd`` open as long as the mapping lives: one descriptor
    more for every shared storage (none at all is needed under 'file_system', whose point is to spare them)."""
    address = _LIBC.mmap(None, nbytes, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
    if address in (None, ctypes.c_void_p(-1).value):  # (MAP_FAILED)
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    mapping = (ctypes.c_char * nbytes).from_address(address)
    # (not at exit: arrays over the mapping may still be read then; the process's end unmaps it anyway)
    weakref.finalize(mapping, _LIBC.munmap, address, nbytes).atexit = False
    return np.frombuffer(mapping, np.uint8)


def _fd_key(fd: int) -> tuple:
    status = os.fstat(fd)
    return ("fd", status.st_ino, status.st_dev)


def _empty_memory() -> np.ndarray:
    """A shared buffer of no bytes (nothing to map: torch's empty storages are sent as new empty ones)."""
    memory = np.empty(0, np.uint8)
    Segment(memory, None)
    return memory


def new_shared_memory(nbytes: int) -> np.ndarray:
    """A new zeroed shared buffer of ``nbytes`` bytes, by the current sharing strategy."""
    if nbytes == 0:
        return _empty_memory()
    if SHARING_STRATEGY[0] == "file_system":
        filename = f"/dev/shm/tracegrad_{os.getpid()}_{os.urandom(8).hex()}"
        fd = os.open(filename, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, nbytes)
            memory = _mapped(fd, nbytes)
        finally:
            os.close(fd)
        Segment(memory, ("file", filename), filename=filename, owns_file=True)
        return memory
    fd = os.memfd_create("tracegrad_shared_storage")  # (close-on-exec: children get it only as sent)
    os.ftruncate(fd, nbytes)
    memory = _mapped(fd, nbytes)
    Segment(memory, _fd_key(fd), fd=fd)
    return memory


def _attached(key: tuple) -> np.ndarray | None:
    segment = _BY_KEY.get(key)
    return None if segment is None else segment.memory_ref()


def _attach_fd(duplicate, nbytes: int) -> np.ndarray:
    """The shared buffer a received descriptor maps (the one already mapped here, where it is)."""
    fd = duplicate.detach()
    key = _fd_key(fd)
    memory = _attached(key)
    if memory is not None:
        os.close(fd)
        return memory
    memory = _mapped(fd, nbytes)
    Segment(memory, key, fd=fd)
    return memory


def _attach_file(filename: str, nbytes: int) -> np.ndarray:
    """The shared buffer a received /dev/shm file name maps (the one already mapped here, where it is)."""
    memory = _attached(("file", filename))
    if memory is not None:
        return memory
    fd = os.open(filename, os.O_RDWR)
    try:
        memory = _mapped(fd, nbytes)
    finally:
        os.close(fd)
    Segment(memory, ("file", filename), filename=filename)
    return memory


# ---- moving tensors into shared memory ----------------------------------------------------------------------------


class _Move:
    """One buffer moving into shared memory: its old bytes (in address order) and the new shared ones."""

    def __init__(self, root: np.ndarray) -> None:
        self.root = root
        self.old = _bytes_of(root)
        self.new = new_shared_memory(self.old.nbytes)
        self.new[...] = self.old

    def moved(self, data: np.ndarray) -> np.ndarray:
        """``data``, an array over the old buffer, as the same place in the new one."""
        offset = data_address(data) - data_address(self.old) if self.old.size else 0
        moved = view_in_storage(self.new, offset, data.shape, data.dtype, data.strides)
        if not data.flags.writeable:
            moved.flags.writeable = False
        return moved

    def carry_storage(self) -> None:
        """The storage object of the old buffer (``untyped_storage()`` keeps its identity) now over the new one."""
        storage = _BY_BUFFER.get(id(self.root))
        if storage is not None and storage._root is self.root:
            storage._root = storage._bytes = self.new
            _BY_BUFFER[id(self.new)] = storage


def _is_only_user(tensor) -> bool:
    """Whether nothing but ``tensor`` and its storage object holds its buffer (no view, no other tensor): the
    common case of a fresh tensor sent to another process, which spares a scan of every object."""
    data = tensor._data
    if data.base is not None:
        return False
    known = 1  # (tensor._data)
    storage = _BY_BUFFER.get(id(data))
    if storage is not None and storage._root is data:
        known += 1 + (storage._bytes is not data and storage._bytes.base is data)
    return sys.getrefcount(data) - 2 == known  # (-2: getrefcount's argument and the local name)


def _move_over(moves: dict[int, _Move], data) -> _Move | None:
    """The move of the buffer ``data`` (an array) lies in, if that buffer is moving."""
    if not isinstance(data, np.ndarray):
        return None
    root = _memory_owner(data)
    move = moves.get(id(root))
    return move if move is not None and move.root is root else None


def _move_users(moves: dict[int, _Move]) -> None:
    """Rebind every live user of the buffers moving: the tensors over them, and what autograd saved of them as
    arrays (a saved output keeps its array, not its tensor: backward must read the new memory, as torch's does)."""
    from ._tensor import Tensor
    from .autograd.saved import SavedTensor, moved_saved_array, with_saved_arrays_moved
    from .ops.registry import OpNode

    def moved(data):
        move = _move_over(moves, data)
        return None if move is None else move.moved(data)

    for obj in gc.get_objects():
        cls = type(obj)  # (not isinstance: an object's ``__class__`` may be a property that raises)
        if issubclass(cls, Tensor):
            data = moved(getattr(obj, "_data", None))
            if data is not None:
                obj._data = data
        elif cls is SavedTensor:
            moved_saved_array(obj, moved)
        elif issubclass(cls, OpNode) and getattr(obj, "_saved", None).__class__ is tuple:
            obj._saved = with_saved_arrays_moved(obj._saved, moved)


def share_memory_of(tensors: Iterable) -> None:
    """Move the storages of ``tensors`` not yet shared into shared memory, in place (``share_memory_()``)."""
    tensors = list(tensors)
    moves: dict[int, _Move] = {}
    for tensor in tensors:
        data = tensor._data
        if isinstance(data, np.ndarray):
            root = _memory_owner(data)
            if id(root) not in moves and segment_of(root) is None:
                moves[id(root)] = _Move(root)
    if not moves:
        return
    if len(tensors) == 1 and _is_only_user(tensors[0]):
        tensors[0]._data = next(iter(moves.values())).moved(tensors[0]._data)
    else:
        _move_users(moves)
    for move in moves.values():
        move.carry_storage()


def share_storage_memory(storage) -> None:
    """``UntypedStorage.share_memory_()``: its buffer, and every tensor over it, moved into shared memory."""
    root = _memory_owner(storage._root)
    if segment_of(root) is not None:
        return
    move = _Move(root)
    _move_users({id(root): move})
    if storage._root is not root:  # (a slice of another storage's bytes)
        storage._root = storage._bytes = move.moved(storage._bytes)
    move.carry_storage()
