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


_INPUT, _OUTPUT, _HOOKED, _FREED = 0, 1, 2, 3


class SavedTensor:
    """One saved value of a node (PyTorch's SavedVariable). ``unpack(node)`` returns the tensor, checking that
    it is still valid. Cannot be created from Python (``_make`` is the internal constructor).

    Kept small because one is made for most recorded operators: ``_kind`` says what ``_ref`` and ``_extra``
    hold. Input: the tensor itself and whether it had a grad_fn. Output: its array and (output_nr,
    requires_grad). Hooked: the packed object and (unpack_fn, is_output, output_nr, requires_grad, grad_fn,
    accumulator ref).
    """

    __slots__ = ("_ref", "_vc", "_version", "_kind", "_extra")

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def _make(cls, tensor: Tensor, is_output: bool = False) -> SavedTensor:
        if tensor._inference and not STATE.inference:
            raise RuntimeError("Inference tensors cannot be saved for backward. To work around you can make a clone to "
                               "get a normal tensor and use it in autograd.")
        self = _new_saved(cls)
        vc = tensor._vc
        if vc is None:
            vc = tensor._vc = [0]
        self._vc = vc
        self._version = vc[0]
        if STATE.saved_hooks and not STATE.saved_hooks_disabled:
            pack, unpack = STATE.saved_hooks[-1]
            self._pack(pack, unpack, tensor, is_output)
        elif is_output:
            self._kind = _OUTPUT
            self._ref = tensor._data
            self._extra = (tensor._output_nr, tensor._rg)
        else:
            self._kind = _INPUT
            self._ref = tensor
            self._extra = tensor._grad_fn is not None
        return self

    def _pack(self, pack, unpack, tensor: Tensor, is_output: bool) -> None:
        version = self._vc[0]
        # PyTorch runs pack hooks under no_grad, so ops inside a hook record (and save) nothing.
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            packed = pack(tensor)
        finally:
            STATE.grad_enabled = prev
        if self._vc[0] != version:
            raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors provided as "
                               "input to pack hook can not be modified by in-place operations as this can lead to "
                               "unexpected side-effects. Please open an issue if you need to perform in-place "
                               "operations on the input to a pack hook.")
        self._kind = _HOOKED
        self._ref = packed
        self._extra = (unpack, is_output, tensor._output_nr, tensor._rg,
                       None if is_output else tensor._grad_fn, None if is_output else tensor._acc_ref)
        if STATE.observed:
            from ..viz import events

            events.emit("saved_packed", tensor=tensor)

    # ---- PyTorch's _raw_saved_* API --------------------------------------------------------------------

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("Expected pack_hook and unpack_hook to be callables")
        if self._kind == _FREED:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
                "to backward through the graph a second time or if you need to access saved variables after calling "
                "backward.")
        if self._kind == _HOOKED:
            raise RuntimeError("SavedTensor hooks have already been set. Calling register_hooks twice is "
                               "not allowed.")
        if self._kind == _INPUT:
            self._pack(pack_hook, unpack_hook, self._ref, False)
        else:
            out_nr, rg = self._extra
            original = self._detached()
            original._output_nr, original._rg = out_nr, rg
            self._pack(pack_hook, unpack_hook, original, True)

    @property
    def data(self):
        """The packed object (with hooks), the saved input itself, or a detached output."""
        if self._kind == _HOOKED:
            return self._ref
        if self._kind == _INPUT:
            return self._ref
        return self._detached()

    @property
    def unpack_hook(self):
        return self._extra[0] if self._kind == _HOOKED else None

    def _detached(self) -> Tensor:
        out = _wrap(self._ref)
        out._vc = self._vc
        return out

    # ---- unpacking -----------------------------------------------------------------------------------

    def unpack(self, node=None) -> Tensor:
        kind = self._kind
        if kind == _INPUT:
            t = self._ref
            if self._extra and t._grad_fn is None:
                raise RuntimeError("Trying to use a saved tensor that has been detached in-place, i.e. with "
                                   ".detach_().This is not supported, please use out-of-place `.detach()` instead")
            if self._vc[0] != self._version:
                self._version_error(t, node)
            return t
        if kind == _OUTPUT:
            out = _wrap(self._ref)
            out._vc = self._vc
            out_nr, rg = self._extra
            if rg and node is not None:
                out._rg = True
                out._grad_fn = node
                if out_nr:
                    out._output_nr = out_nr
            if self._vc[0] != self._version:
                self._version_error(out, node)
            return out
        if kind == _HOOKED:
            return self._unpack_with_hooks(node)
        raise RuntimeError(FREED_MESSAGE)

    def _unpack_with_hooks(self, node) -> Tensor:
        # Like PyTorch: the hook's result is rewrapped with the saved history (no version check, since the
        # hook may legitimately hand back a copy).
        unpack, is_output, out_nr, rg, grad_fn, acc_ref = self._extra
        result = unpack(self._ref)
        if not isinstance(result, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(result).__name__}")
        out = _wrap(result._data)
        if is_output:
            grad_fn = node
        if grad_fn is not None and rg:
            out._grad_fn = grad_fn
            out._output_nr = out_nr
            out._rg = True
        elif rg:
            out._rg = True
            out._acc_ref = acc_ref
        return out

    def _version_error(self, tensor: Tensor, node) -> None:
        current = self._vc[0]
        if self._kind == _OUTPUT and node is not None:
            where = f", which is output {self._extra[0]} of {node.name()},"
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
        self._kind = _FREED
        self._ref = None
        self._extra = None

    @property
    def is_freed(self) -> bool:
        return self._kind == _FREED

    @property
    def data_nbytes(self) -> int:
        if self._kind == _INPUT:
            return self._ref._data.nbytes
        if self._kind == _OUTPUT:
            return self._ref.nbytes
        return 0


_new_saved = object.__new__


def save(value, is_output: bool = False):
    """Save a tensor (or pass through ``None``) for backward."""
    if value is None:
        return None
    return SavedTensor._make(value, is_output)
