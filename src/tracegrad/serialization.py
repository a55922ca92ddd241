"""``torch.save`` / ``torch.load``: checkpoints of tensors, parameters, state dicts and plain containers.

The file is tracegrad's own format, a pickle: PyTorch's zip archive is not reproduced, so neither library
reads the other's files. What PyTorch users rely on is kept:

- ``load`` defaults to ``weights_only=True``, as PyTorch does since 2.6: unpickling may only rebuild tensors,
  parameters, NumPy arrays, dtypes and the builtin containers, plus what ``add_safe_globals`` /
  ``safe_globals`` allow. Anything else raises ``pickle.UnpicklingError`` in PyTorch's words, before any of
  it runs. ``weights_only=False`` unpickles anything (only for files you trust).
- tensors come back as leaves with their data and ``requires_grad``; a parameter as a ``Parameter``.
- ``f`` is a path (str or ``os.PathLike``) or a binary file object.

Storage sharing between tensors is not kept: two views of one tensor load as two independent tensors.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
from collections.abc import Iterator
from typing import Any

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

DEFAULT_PROTOCOL = 2

# (module, name) pairs that a weights-only load may rebuild: tensors and parameters, NumPy arrays and dtypes
# (under both NumPy 1 and 2 module names), ordered dicts, and the few builtins pickle refers to by name.
_ALLOWED: set[tuple[str, str]] = {
    ("tracegrad._tensor", "_rebuild"),
    ("tracegrad._tensor", "_ArrayIn"),
    ("tracegrad.backend.dtypes", "_lookup_by_name"),  # dtypes, devices and sizes, as torch allows them
    ("tracegrad.backend.device", "device"),
    ("tracegrad.size", "Size"),
    ("tracegrad.nn.parameter", "_rebuild_parameter"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("collections", "OrderedDict"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "complex"),
    ("builtins", "slice"),
    ("builtins", "range"),
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
        if (module, name) in _ALLOWED or module.startswith(_ALLOWED_MODULE_PREFIXES):
            return super().find_class(module, name)
        allowed = _user_allowed(module, name)
        if allowed is not None:
            return allowed
        raise pickle.UnpicklingError(
            _WEIGHTS_ONLY_HELP + f"Unsupported global: GLOBAL {module}.{name} was not an allowed global by default. "
            f"Please use `torch.serialization.add_safe_globals([{module}.{name}])` or the "
            f"`torch.serialization.safe_globals([{module}.{name}])` context manager to allowlist this global if "
            "you trust this class/function.\n\nCheck the documentation of torch.load to learn more about types "
            "accepted by default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


@contextlib.contextmanager
def _opened(f, mode: str) -> Iterator[io.IOBase]:
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as handle:
            yield handle
    else:
        yield f


def save(obj: object, f, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` (tensors, state dicts, containers of them...) to the path or binary file ``f``."""
    with _opened(f, "wb") as handle:
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
    with _opened(f, "rb") as handle:
        if weights_only:
            return _WeightsUnpickler(handle, **pickle_load_args).load()
        return (pickle_module or pickle).load(handle, **pickle_load_args)
