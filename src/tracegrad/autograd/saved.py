"""Saved tensors (PyTorch's SavedVariable): version checks, freeing, and pack/unpack hooks.

An input is saved by reference. An output is saved without its ``grad_fn`` (data, version counter and
flags) so that a node never holds a reference cycle through its own output; unpacking rebuilds an equal
tensor whose ``grad_fn`` is the node being run.
"""

from __future__ import annotations

from .._state import STATE
from .._tensor import Tensor, _wrap

_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
               "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
               "complex128": "ComplexDouble"}

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward."
)


def type_string(t: Tensor) -> str:
    """PyTorch's legacy type name, e.g. ``torch.FloatTensor``."""
    return f"torch.{_TYPE_NAMES.get(t._data.dtype.name, 'Float')}Tensor"


class SavedTensor:
    """One saved value of a node. ``unpack(node)`` returns the tensor, checking it is still valid."""

    __slots__ = ("_tensor", "_data", "_vc", "_version", "_is_output", "_output_nr", "_rg", "_packed",
                 "_unpack_fn", "_freed", "_is_leaf_out", "_hooks_registered", "_meta")

    def __init__(self, tensor: Tensor, is_output: bool = False) -> None:
        vc = tensor._vc
        if vc is None:
            vc = tensor._vc = [0]
        self._vc = vc
        self._version = vc[0]
        self._is_output = is_output
        self._freed = False
        self._packed = None
        self._unpack_fn = None
        self._hooks_registered = False
        if STATE.saved_hooks and not STATE.saved_hooks_disabled:
            pack, unpack = STATE.saved_hooks[-1]
            self._tensor = None
            self._data = None
            self._output_nr = tensor._output_nr
            self._rg = tensor._rg
            self._meta = tensor
            self._run_pack(pack, unpack, tensor)
            self._meta = None
            return
        if is_output:
            self._tensor = None
            self._data = tensor._data
            self._output_nr = tensor._output_nr
            self._rg = tensor._rg
        else:
            self._tensor = tensor

    def _run_pack(self, pack, unpack, tensor: Tensor) -> None:
        from ..viz import events

        self._packed = pack(tensor)
        self._unpack_fn = unpack
        self._hooks_registered = True
        if STATE.observed:
            events.emit("saved_packed", tensor=tensor)

    # ---- PyTorch's _raw_saved_* API --------------------------------------------------------------------

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("Expected pack_hook and unpack_hook to be callables")
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if self._hooks_registered:
            raise RuntimeError("SavedTensor hooks have already been set. Calling register_hooks twice is "
                               "not allowed.")
        original = self._tensor if self._tensor is not None else _wrap(self._data)
        self._tensor = None
        self._data = None
        self._run_pack(pack_hook, unpack_hook, original)

    # ---- unpacking -----------------------------------------------------------------------------------

    def unpack(self, node=None) -> Tensor:
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if self._unpack_fn is not None:
            result = self._unpack_fn(self._packed)
            if not isinstance(result, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result "
                                f"of type {type(result).__name__}")
            self._check_version(result, node)
            if self._is_output and node is not None and self._rg and result._grad_fn is None:
                out = _wrap(result._data)
                out._vc = result._vc
                out._rg = True
                out._grad_fn = node
                out._output_nr = self._output_nr
                return out
            return result
        if self._tensor is not None:
            self._check_version(self._tensor, node)
            return self._tensor
        out = _wrap(self._data)
        out._vc = self._vc
        if self._rg and node is not None:
            out._rg = True
            out._grad_fn = node
            out._output_nr = self._output_nr
        self._check_version(out, node)
        return out

    def _check_version(self, tensor: Tensor, node) -> None:
        current = self._vc[0]
        if current != self._version:
            if self._is_output and node is not None:
                where = f", which is output {self._output_nr} of {node.name()},"
            elif tensor._grad_fn is not None:
                where = f", which is output {tensor._output_nr} of {tensor._grad_fn.name()},"
            else:
                where = ""
            shape = list(tensor._data.shape)
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{type_string(tensor)} {shape}]{where} is at version {current}; expected version "
                f"{self._version} instead. Hint: enable anomaly detection to find the operation that failed to "
                "compute its gradient, with torch.autograd.set_detect_anomaly(True)."
            )

    def release(self) -> None:
        self._tensor = None
        self._data = None
        self._packed = None
        self._freed = True

    @property
    def data_nbytes(self) -> int:
        if self._tensor is not None:
            return self._tensor._data.nbytes
        if self._data is not None:
            return self._data.nbytes
        return 0


def save(value, is_output: bool = False):
    """Save a tensor (or pass through ``None``) for backward."""
    if value is None:
        return None
    return SavedTensor(value, is_output)
