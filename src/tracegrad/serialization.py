"""``torch.save`` / ``torch.load``: checkpoints of tensors, parameters, state dicts and plain containers.

The file is tracegrad's own format, a pickle: PyTorch's zip archive is not reproduced, so neither library
reads the other's files. What PyTorch users rely on is kept:

- ``load`` defaults to ``weights_only=True``, as PyTorch does since 2.6: unpickling may only rebuild tensors,
  parameters, NumPy arrays, dtypes, the builtin containers and the builtins torch allows (sets, complex numbers,
  bytearrays), plus what ``add_safe_globals`` / ``safe_globals`` allow. Anything else raises
  ``pickle.UnpicklingError`` in PyTorch's words, before any of it runs. ``weights_only=False`` unpickles
  anything (only for files you trust).
- tensors come back as leaves with their data and ``requires_grad``; a parameter as a ``Parameter``.
- ``f`` is a path (str or ``os.PathLike``) or a binary file object.
- storage sharing is kept: views of one tensor load as views of one buffer, with their strides (channels-last,
  transposed) and offsets; empty tensors load with weights-only too; a tensor's ``.grad`` is not saved.
- ``mmap`` needs a path, as in torch (the file is read whole: there is no zip archive to map).
"""

from __future__ import annotations

import _compat_pickle
import contextlib
import io
import os
import pickle
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._strides import offset_in
from ._tensor import Tensor as _Tensor
from .storage import _memory_owner

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

DEFAULT_PROTOCOL = 2

# (module, name) pairs that a weights-only load may rebuild: tensors and parameters, NumPy arrays and dtypes
# (under both NumPy 1 and 2 module names), ordered dicts and counters, and the builtins torch allows.
_ALLOWED: set[tuple[str, str]] = {
    ("tracegrad._tensor", "_rebuild"),
    ("tracegrad._tensor", "_ArrayIn"),
    ("tracegrad.backend.dtypes", "_lookup_by_name"),  # dtypes, devices and sizes, as torch allows them
    ("tracegrad.backend.device", "device"),
    ("tracegrad.size", "Size"),
    ("tracegrad.nn.parameter", "_rebuild_parameter"),
    ("tracegrad.serialization", "_transposed"),
    ("tracegrad.serialization", "_empty"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("collections", "OrderedDict"),
    ("collections", "Counter"),
    ("builtins", "set"),  # (torch's builtins: not frozenset, slice, range, nor bytes, which only b'' needs)
    ("builtins", "complex"),
    ("builtins", "bytearray"),
    ("_codecs", "encode"),  # how protocol 2 pickles bytes
}
# NumPy 2 pickles each dtype through its class (numpy.dtypes.Float32DType, ...)
_ALLOWED_MODULE_PREFIXES = ("numpy.dtypes",)
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


class _WeightsUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        # Protocol 2 names builtins under Python 2's names (``__builtin__ set``): judged under Python 3's, as
        # torch's unpickler does (pickle's own ``find_class`` maps them the same way).
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        else:
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if (module, name) in _ALLOWED or module.startswith(_ALLOWED_MODULE_PREFIXES):
            return super().find_class(module, name)
        allowed = _user_allowed(module, name)
        if allowed is not None:
            return allowed
        path = name if module == "builtins" else f"{module}.{name}"  # (torch names builtins bare)
        raise pickle.UnpicklingError(
            _WEIGHTS_ONLY_HELP + f"Unsupported global: GLOBAL {path} was not an allowed global by default. "
            f"Please use `torch.serialization.add_safe_globals([{path}])` or the "
            f"`torch.serialization.safe_globals([{path}])` context manager to allowlist this global if "
            "you trust this class/function.\n\nCheck the documentation of torch.load to learn more about types "
            "accepted by default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


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
    return np.ndarray(shape, dtype, np.empty(0, np.uint8), 0, strides)


class _Pickler(pickle.Pickler):
    """pickle's, keeping arrays as weights-only loading can rebuild them and as torch keeps tensors: an empty
    array as its shape, dtype and strides (NumPy pickles its no bytes through ``builtins.bytes``, which torch's
    allow-list refuses); a dense array in another order than C's (a channels-last or transposed layout an
    elementwise result kept) as its C-ordered transpose, so that its strides come back (NumPy would pickle a
    C-ordered copy) and views of it still share it (``_tensor.pickled_array`` copies them, and views through
    ``as_strided``'s ``DummyArray``: ``unfold``'s). A tensor's ``.grad`` is left out, as torch leaves it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ordered: dict[int, tuple] = {}  # id(array) -> (array, its C-ordered transpose, axes back)

    def _c_ordered(self, a: np.ndarray) -> tuple | None:
        """``a``'s C-ordered transpose (one object per array, so that pickle writes it once) and the axes that
        turn it back, where ``a`` is dense in another order."""
        if a.ndim < 2 or a.size == 0 or a.flags.c_contiguous:
            return None
        if id(a) not in self._ordered:
            order = sorted(range(a.ndim), key=lambda d: -a.strides[d])
            ordered = a.transpose(order)
            axes = tuple(int(d) for d in np.argsort(order))
            self._ordered[id(a)] = (a, ordered, axes) if ordered.flags.c_contiguous else (a, None, None)
        _, ordered, axes = self._ordered[id(a)]
        return None if ordered is None else (ordered, axes)

    def _tensor(self, t: _Tensor) -> Any:
        from ._tensor import _ArrayIn, _rebuild
        from .nn.parameter import _rebuild_parameter

        reduced = t.__reduce_ex__(2)
        rebuild, args = reduced[0], reduced[1]
        if rebuild is not _rebuild and rebuild is not _rebuild_parameter:
            return NotImplemented  # (a Tensor's own reduction carries no .grad, as torch's: nothing to drop here)
        data = t._data
        if isinstance(data, np.ndarray) and data.size and not isinstance(args[0], _ArrayIn) and \
                min(data.strides, default=0) >= 0:
            owner = _memory_owner(data)  # (through as_strided's DummyArray too: unfold's views)
            if owner is not data:
                ordered = (owner,) if owner.flags.c_contiguous else self._c_ordered(owner)
                if ordered is not None:
                    args = (_ArrayIn(ordered[0], offset_in(ordered[0], data), data.shape, data.strides, data.dtype),
                            *args[1:])
        return (rebuild, args)

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is not np.ndarray:
            return self._tensor(obj) if isinstance(obj, _Tensor) else NotImplemented
        if obj.size == 0:
            return (_empty, (obj.shape, obj.dtype, obj.strides))
        ordered = self._c_ordered(obj)
        return NotImplemented if ordered is None else (_transposed, ordered)


def save(obj: object, f, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` (tensors, state dicts, containers of them...) to the path or binary file ``f``."""
    with _opened(f, "wb") as handle:
        if pickle_module is pickle:
            _Pickler(handle, protocol=pickle_protocol).dump(obj)
        else:
            pickle_module.dump(obj, handle, protocol=pickle_protocol)


def load(f, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read what ``save`` wrote. ``map_location`` may name the CPU (the only device tensors are saved from)."""
    if map_location is not None and not callable(map_location) and not isinstance(map_location, dict):
        from .backend.device import device

        if device(map_location).type != "cpu":
            raise RuntimeError(f"Attempting to deserialize object on {device(map_location).type}, but tracegrad "
                               "saves CPU tensors only")
    if weights_only is None:
        weights_only = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") not in ("1", "true", "True")
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if mmap and not isinstance(f, (str, os.PathLike)):  # (a path is read whole: there is no zip archive to map)
        raise ValueError("f must be a file path in order to use the mmap argument")
    with _opened(f, "rb") as handle:
        if weights_only:
            return _WeightsUnpickler(handle, **pickle_load_args).load()
        return (pickle_module or pickle).load(handle, **pickle_load_args)
