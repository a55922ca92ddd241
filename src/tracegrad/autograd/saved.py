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
    """One saved value of a node (PyTorch's SavedVariable). ``unpack(node)`` returns the tensor, checking that
    it is still valid. Cannot be created from Python (``_make`` is the internal constructor)."""

    __slots__ = ("_tensor", "_data", "_vc", "_version", "_is_output", "_output_nr", "_rg", "_packed",
                 "_unpack_fn", "_freed", "_grad_fn", "_acc_ref", "_was_non_leaf", "_hooks_registered")

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def _make(cls, tensor: Tensor, is_output: bool = False) -> SavedTensor:
        if tensor._inference and not STATE.inference:
            raise RuntimeError("Inference tensors cannot be saved for backward. To work around you can make a clone to "
                               "get a normal tensor and use it in autograd.")
        self = object.__new__(cls)
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
        self._output_nr = tensor._output_nr
        self._rg = tensor._rg
        # An input's history is kept so an unpacked copy can be reattached to it; an output's is the node itself.
        self._grad_fn = None if is_output else tensor._grad_fn
        self._acc_ref = None if is_output else tensor._acc_ref
        self._was_non_leaf = tensor._grad_fn is not None
        if STATE.saved_hooks and not STATE.saved_hooks_disabled:
            pack, unpack = STATE.saved_hooks[-1]
            self._tensor = None
            self._data = None
            self._run_pack(pack, unpack, tensor)
        elif is_output:
            self._tensor = None
            self._data = tensor._data
        else:
            self._tensor = tensor
            self._data = None
        return self

    def _run_pack(self, pack, unpack, tensor: Tensor) -> None:
        version = self._vc[0]
        # PyTorch runs pack hooks under no_grad, so ops inside a hook record (and save) nothing.
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            self._packed = pack(tensor)
        finally:
            STATE.grad_enabled = prev
        if self._vc[0] != version:
            raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors provided as "
                               "input to pack hook can not be modified by in-place operations as this can lead to "
                               "unexpected side-effects. Please open an issue if you need to perform in-place "
                               "operations on the input to a pack hook.")
        self._unpack_fn = unpack
        self._hooks_registered = True
        if STATE.observed:
            from ..viz import events

            events.emit("saved_packed", tensor=tensor)

    # ---- PyTorch's _raw_saved_* API --------------------------------------------------------------------

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("Expected pack_hook and unpack_hook to be callables")
        if self._freed:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
                "to backward through the graph a second time or if you need to access saved variables after calling "
                "backward.")
        if self._hooks_registered:
            raise RuntimeError("SavedTensor hooks have already been set. Calling register_hooks twice is "
                               "not allowed.")
        original = self._tensor if self._tensor is not None else self._detached()
        self._tensor = None
        self._data = None
        self._run_pack(pack_hook, unpack_hook, original)

    @property
    def data(self):
        """The packed object (with hooks), the saved input itself, or a detached output."""
        if self._hooks_registered:
            return self._packed
        if self._tensor is not None:
            return self._tensor
        return self._detached()

    @property
    def unpack_hook(self):
        return self._unpack_fn

    def _detached(self) -> Tensor:
        out = _wrap(self._data)
        out._vc = self._vc
        return out

    # ---- unpacking -----------------------------------------------------------------------------------

    def unpack(self, node=None) -> Tensor:
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if self._unpack_fn is not None:
            return self._unpack_with_hooks(node)
        if self._tensor is not None:
            t = self._tensor
            if self._was_non_leaf and t._grad_fn is None:
                raise RuntimeError("Trying to use a saved tensor that has been detached in-place, i.e. with "
                                   ".detach_().This is not supported, please use out-of-place `.detach()` instead")
            self._check_version(t, node)
            return t
        out = self._detached()
        if self._rg and node is not None:
            out._rg = True
            out._grad_fn = node
            out._output_nr = self._output_nr
        self._check_version(out, node)
        return out

    def _unpack_with_hooks(self, node) -> Tensor:
        # Like PyTorch: the hook's result is rewrapped with the saved history (no version check, since the
        # hook may legitimately hand back a copy).
        result = self._unpack_fn(self._packed)
        if not isinstance(result, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(result).__name__}")
        out = _wrap(result._data)
        grad_fn = node if self._is_output else self._grad_fn
        if grad_fn is not None and self._rg:
            out._grad_fn = grad_fn
            out._output_nr = self._output_nr
            out._rg = True
        elif self._rg:
            out._rg = True
            out._acc_ref = self._acc_ref
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
        self._unpack_fn = None
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
    return SavedTensor._make(value, is_output)
