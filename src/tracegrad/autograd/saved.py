"""Saved tensors (PyTorch's SavedVariable): version checks, freeing, and pack/unpack hooks.

An input is saved by reference. An output is saved without its ``grad_fn`` (data, version counter and
flags) so that a node never holds a reference cycle through its own output; unpacking rebuilds an equal
tensor whose ``grad_fn`` is the node being run.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from .._events import emit as _emit_event
from .._state import STATE
from .._tensor import Tensor, _wrap
from ..backend.dtypes import scalar_type_name, tensor_type_string
from ..ops.aten_vec import as_caller
from .edges import grad_accumulator

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward."
)


def type_string(t: Tensor) -> str:
    """PyTorch's legacy type name, e.g. ``torch.FloatTensor``."""
    return f"torch.{scalar_type_name(t._data.dtype)}Tensor"


_DETACHED_IN_PLACE = ("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
                      "not supported, please use out-of-place `.detach()` instead")

_INPUT, _OUTPUT, _HOOKED, _FREED, _NONE, _VIEW_OUTPUT = 0, 1, 2, 3, 4, 5
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


class SavedTensor:
    """One saved value of a node (PyTorch's SavedVariable). ``unpack(node)`` returns the tensor, checking that
    it is still valid. Cannot be created from Python (``_make`` is the internal constructor).

    Kept small because one is made for most recorded operators: ``_kind`` says what ``_ref`` and ``_extra``
    hold. Input: the tensor itself and whether it had a grad_fn. Output: its array and (output_nr,
    requires_grad). Hooked: the packed object and (unpack_fn, is_output, output_nr, requires_grad, grad_fn,
    accumulator ref). None: a saved ``None`` (an absent optional tensor), which unpacks to None forever.
    View output: the result of an in-place op on a view; its array and (output_nr, weakref to the view's
    grad_fn at save time).
    Under forward AD, an output's (or a hooked tensor's) tangents are appended to ``_extra`` as a dict
    level -> tangent, so the unpacked tensor carries them (an input is returned itself, with its own).
    """

    __slots__ = ("_ref", "_vc", "_version", "_kind", "_extra")

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def _make(cls, tensor: Tensor, is_output: bool = False) -> SavedTensor:
        if tensor._inference and not STATE.inference:
            raise RuntimeError("Inference tensors cannot be saved for backward. Please do not use Tensors created in "
                               "inference mode in computation tracked by autograd. To work around this, you can make "
                               "a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` "
                               "instead of `torch.inference_mode()`.")
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
            self._extra = tensor._gfn is not None
        return self

    @classmethod
    def _make_inplace_view_output(cls, tensor: Tensor) -> SavedTensor:
        """The output of an in-place op on a view (PyTorch's ``is_inplace_on_view``): it unpacks with the view's
        grad_fn at save time (held weakly: it leads back to this node through CopySlices), never with the
        in-place node itself, which only its CopySlices may run."""
        self = cls._make(tensor, True)
        fn = tensor._gfn
        ref = weakref.ref(fn) if fn is not None else None
        if self._kind == _OUTPUT:
            self._kind = _VIEW_OUTPUT
            self._extra = (tensor._output_nr, ref)
        else:  # hooked: the grad_fn slot of an output holds the weak reference
            self._extra = self._extra[:4] + (ref,) + self._extra[5:]
        return self

    @classmethod
    def _make_unhooked(cls, tensor: Tensor) -> SavedTensor:
        """An input kept without any pack hook: what ``_raw_saved_<name>`` shows for a number a node keeps as
        it is (PyTorch holds its wrapped-number tensor in a SavedVariable)."""
        hooks, STATE.saved_hooks = STATE.saved_hooks, []
        try:
            return cls._make(tensor)
        finally:
            STATE.saved_hooks = hooks

    @classmethod
    def _make_none(cls) -> SavedTensor:
        self = _new_saved(cls)
        self._kind = _NONE
        self._ref = self._vc = self._extra = None
        self._version = 0
        return self

    @classmethod
    def _make_freed(cls) -> SavedTensor:
        """A value already released by backward (what a saved Python number becomes, see
        ``OpNode.release_variables``)."""
        self = _new_saved(cls)
        self._kind = _FREED
        self._ref = self._vc = self._extra = None
        self._version = 0
        return self

    def _pack(self, pack, unpack, tensor: Tensor, is_output: bool, given: Tensor | None = None) -> None:
        """Run ``pack`` on ``given`` (default ``tensor``) and keep its result with ``tensor``'s history."""
        version = self._vc[0]
        # PyTorch runs pack hooks under no_grad, so ops inside a hook record (and save) nothing.
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        if STATE.observed:  # a hook event: hook observers keep the fast paths, so not behind STATE.special
            _emit_event("hook", kind="pack", node=None, hook=pack, output_nr=None, tensor=tensor)
        try:
            packed = as_caller(pack, tensor if given is None else given)
        finally:
            STATE.grad_enabled = prev
        if self._vc[0] != version:
            raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors provided as "
                               "input to pack hook cannot be modified by in-place operations as this can lead to "
                               "unexpected side-effects. Please open an issue if you need to perform in-place "
                               "operations on the input to a pack hook.")
        self._kind = _HOOKED
        self._ref = packed
        acc = None
        if not is_output and tensor._rg and tensor._gfn is None and tensor._base is None:
            # A leaf: its AccumulateGrad, held (as PyTorch's SavedVariable holds a saved leaf's grad accumulator),
            # so the unpacked tensor sends its gradient to the leaf even when no graph holds that node any more
            # (a leaf saved by a custom Function that does not take it as an input), and keeps the leaf alive.
            acc = grad_accumulator(tensor)
        self._extra = (unpack, is_output, tensor._output_nr, tensor._rg,
                       None if is_output else tensor._gfn, acc)
        if tensor._fw_grads:
            self._extra += (dict(tensor._fw_grads),)
        if STATE.special and STATE.observed:
            _emit_event("saved_packed", tensor=tensor)

    def _binding_refusal(self, args: tuple, kwargs: dict) -> str:
        """The words of pybind11, PyTorch's binding layer, for a ``register_hooks`` call it cannot match."""
        given = ", ".join(repr(a) for a in (self, *args))
        if kwargs:
            given += "; kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        return ("register_hooks(): incompatible function arguments. The following argument types are supported:\n"
                f"    1. (self: {type(self).__module__}.SavedTensor, arg0: collections.abc.Callable, "
                f"arg1: collections.abc.Callable) -> None\n\nInvoked with: {given}")

    # ---- PyTorch's _raw_saved_* API --------------------------------------------------------------------

    def register_hooks(self, *args, **kwargs) -> None:
        # (PyTorch's binding takes exactly two positional callables and refuses anything else before running)
        if kwargs or len(args) != 2 or not all(callable(hook) for hook in args):
            raise TypeError(self._binding_refusal(args, kwargs))
        pack_hook, unpack_hook = args
        if self._kind == _HOOKED:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only "
                               "one pair of hooks is allowed at a time.")
        if self._kind == _NONE:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        if self._kind == _FREED:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
                "to backward through the graph a second time or if you need to access saved variables after calling "
                "backward.")
        # PyTorch's pack hook gets the saved data without history here (a saved input detached, an output's
        # tensor data); the history goes back on when the unpacked value is handed out.
        if self._kind == _INPUT:
            original = self._ref
            self._pack(pack_hook, unpack_hook, original, False, _detached_like(original))
        else:
            extra = self._extra
            view = self._kind == _VIEW_OUTPUT
            original = self._detached()
            original._output_nr, original._rg = extra[0], True if view else extra[1]
            if len(extra) > 2:
                original.__dict__["_fw_grads"] = extra[2]
            self._pack(pack_hook, unpack_hook, original, True, self._detached())
            if view:
                self._extra = self._extra[:4] + (extra[1],) + self._extra[5:]

    @property
    def data(self):
        """The packed object (with hooks), the saved input itself, or a detached output."""
        if self._kind == _HOOKED:
            return self._ref
        if self._kind == _INPUT:
            return self._ref
        if self._kind == _NONE:
            return None
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
        if STATE.special and STATE.observed:
            _emit_event("saved_unpacked", saved=self, node=node)
        if kind == _INPUT:
            t = self._ref
            if self._extra and t._gfn is None:
                raise RuntimeError(_DETACHED_IN_PLACE)
            if self._vc[0] != self._version:
                self._version_error(t, node)
            return t
        if kind == _OUTPUT:
            out = _wrap(self._ref)
            out._vc = self._vc
            extra = self._extra
            if extra[1] and node is not None:
                out._rg = True
                out._gfn = node
                if extra[0]:
                    out._output_nr = extra[0]
            if self._vc[0] != self._version:
                self._version_error(out, node)
            if len(extra) > 2:
                _restore_tangents(out, extra[2])
            return out
        if kind == _HOOKED:
            return self._unpack_with_hooks(node)
        if kind == _NONE:
            return None
        if kind == _VIEW_OUTPUT:
            out = _wrap(self._ref)
            out._vc = self._vc
            extra = self._extra
            fn = extra[1]() if extra[1] is not None else None
            out._rg = True
            if fn is not None:
                out._gfn = fn
                out._output_nr = extra[0]
            else:
                out._gfn = node
            if self._vc[0] != self._version:
                self._version_error(out, node)
            if len(extra) > 2:
                _restore_tangents(out, extra[2])
            return out
        raise RuntimeError(FREED_MESSAGE)

    def _unpack_with_hooks(self, node) -> Tensor:
        # Like PyTorch: the hook's result is rewrapped with the saved history (no version check, since the
        # hook may legitimately hand back a copy).
        unpack, is_output, out_nr, rg, grad_fn, acc = self._extra[:6]
        fw = self._extra[6] if len(self._extra) > 6 else None
        if STATE.observed:
            _emit_event("hook", kind="unpack", node=node, hook=unpack, output_nr=None, tensor=None)
        formula, STATE.in_formula = STATE.in_formula, False  # user code: its numbers are Python's again
        try:
            result = as_caller(unpack, self._ref)
        finally:
            STATE.in_formula = formula
        if not isinstance(result, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(result).__name__}")
        if is_output:  # the node itself, or the weakly held grad_fn of an in-place-modified view
            grad_fn = (grad_fn() if grad_fn is not None else None) or node
        if not rg and not result._rg and not fw:
            return result  # nothing to attach: PyTorch hands back the hook's result itself
        out = _wrap(result._data)
        out._vc = result._version_counter()
        if grad_fn is not None and rg:
            out._gfn = grad_fn
            out._output_nr = out_nr
            out._rg = True
        elif rg:
            out._rg = True
            if acc is not None:
                out._acc_ref = weakref.ref(acc)
        if fw:
            _restore_tangents(out, fw)
        return out

    def _version_error(self, tensor: Tensor, node) -> None:
        current = self._vc[0]
        from .node import forward_name

        if self._kind == _OUTPUT and node is not None:
            fn, output_nr = node, self._extra[0]
        else:
            # PyTorch reads the tensor's grad_fn: a stale view's is regenerated first (AsStridedBackward0), or
            # raises the view's own error when it may not be.
            fn = tensor.grad_fn
            output_nr = tensor._output_nr
        where = f", which is output {output_nr} of {forward_name(fn)}," if fn is not None else ""
        # (PyTorch saves the index tensor a caller gave, unconverted: it names that one)
        shown = tensor if tensor._converted_from is None else tensor._converted_from
        raise version_error(shown._data.shape, shown._data.dtype, where, current, self._version)

    def release(self) -> None:
        if self._kind == _NONE:
            return  # like PyTorch's default-constructed SavedVariable: still None after backward
        if STATE.special and STATE.observed and self._kind != _FREED:
            _emit_event("saved_freed", saved=self)
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
        if self._kind == _OUTPUT or self._kind == _VIEW_OUTPUT:
            return self._ref.nbytes
        return 0


def version_error(shape: tuple, dtype: np.dtype, where: str, current: int, expected: int) -> RuntimeError:
    """PyTorch's error for a saved tensor of ``shape`` and ``dtype`` written in place since it was saved; ``where``
    names the node it is an output of (", which is output 0 of Exp,"), or is empty."""
    kind = tensor_type_string(dtype)  # (Tensor::toString: CPUBoolType where no legacy class)
    if STATE.anomaly:  # anomaly mode has just shown (above) the forward trace of the failing node
        hint = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. "
                "The variable in question was changed in there or anywhere later. Good luck!")
    else:
        hint = ("Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                "with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{kind} {list(shape)}]{where} is at version {current}; expected version {expected} instead. "
        f"{hint}"
    )


SavedTensor.__module__ = "tracegrad._C._autograd"  # where PyTorch's class lives (and is exported here too)

_new_saved = object.__new__


def _detached_like(t: Tensor) -> Tensor:
    """``t.detach()`` without recording anything: same data and version counter, no history."""
    out = _wrap(t._data)
    out._vc = t._version_counter()
    return out


# ---- compact saved values: what the operator fast paths keep -------------------------------------------------
#
# Making and freeing a SavedTensor object costs about three times what a tuple does, and most recorded nodes
# save one or two plain inputs or their fresh output. While nothing special is on (no pack hooks, observer of
# saved tensors, transform, forward AD or inference mode), the fast paths keep those in the node's ``_saved``
# as tuples ("records") holding exactly what the SavedTensor would hold:
#   an input:        (tensor, version counter, version when saved, whether it had a grad_fn)
#   a fresh output:  (array, version counter)    (output 0, requires grad, saved at version 0)
# and once freed by backward, the same with None for the tensor or array (the version counter and version stay,
# as they stay on a freed SavedTensor). ``saved_object`` makes the very SavedTensor that ``SavedTensor._make``
# (and ``release``) would have made. Readers that hand the object out or emit an event with it
# (``_raw_saved_<name>``, the inspector, anything while ``STATE.special``) put it in the node's place first
# (``saved_objects``); unpacking, freeing and the raw backward rules read the records as they are. No other
# value a node saves is a tuple (a saved ``Tensor[]`` is a list).

_OUTPUT_EXTRA = (0, True)  # (output_nr, requires_grad) of a fresh single output


def save_input(tensor: Tensor):
    """What a fast path keeps of an input it saves: a record, or ``SavedTensor._make(tensor)`` where one is needed
    (pack hooks, an inference tensor, anything special on)."""
    if tensor._inference or STATE.saved_hooks or STATE.special:
        return SavedTensor._make(tensor)
    vc = tensor._vc
    if vc is None:
        vc = tensor._vc = [0]
    return (tensor, vc, vc[0], tensor._gfn is not None)


def save_input_pair(a: Tensor, b: Tensor) -> tuple:
    """``(save_input(a), save_input(b))`` for a binary fast path whose operands both need a gradient (each is
    saved for the other's): one call for the two, ``b`` first as PyTorch packs them (see ``OpDef.pack_order``)."""
    if a._inference or b._inference or STATE.saved_hooks or STATE.special:
        saved_b = SavedTensor._make(b)
        return SavedTensor._make(a), saved_b
    vb = b._vc
    if vb is None:
        vb = b._vc = [0]
    va = a._vc
    if va is None:
        va = a._vc = [0]
    return (a, va, va[0], a._gfn is not None), (b, vb, vb[0], b._gfn is not None)


def save_fresh_output(out: Tensor):
    """What a fast path keeps of the single output it has just made (output 0, requires grad, no version counter
    yet): a record, or ``SavedTensor._make(out, True)`` where one is needed."""
    if STATE.saved_hooks or STATE.special:
        return SavedTensor._make(out, True)
    vc = out._vc = [0]
    return (out._data, vc)


def saved_object(value):
    """The SavedTensor a record stands for (made now, equal to the one ``SavedTensor._make`` made, or ``release``
    left, when the value was saved or freed); any other saved value as it is."""
    if value.__class__ is not tuple:
        return value
    self = _new_saved(SavedTensor)
    self._ref, self._vc = value[0], value[1]
    if value[0] is None:
        self._kind = _FREED
        self._version = value[2] if len(value) == 4 else 0
        self._extra = None
    elif len(value) == 4:
        self._kind = _INPUT
        self._version, self._extra = value[2], value[3]
    else:
        self._kind = _OUTPUT
        self._version = 0
        self._extra = _OUTPUT_EXTRA
    return self


def saved_objects(node) -> tuple:
    """``node._saved`` with each record replaced by its SavedTensor, in the node's place for good (so the object
    handed out is the one the node unpacks, hooks registered on it included)."""
    saved = node._saved
    for s in saved:
        if s.__class__ is tuple:
            saved = node._saved = tuple([saved_object(v) for v in saved])
            break
    return saved


def unpack_record(record: tuple, node) -> Tensor:
    """``saved_object(record).unpack(node)`` without making the object (nothing special is on: no event to emit)."""
    if record[0] is None:
        raise RuntimeError(FREED_MESSAGE)
    if len(record) == 4:
        t, vc, version, had_grad_fn = record
        if had_grad_fn and t._gfn is None:
            raise RuntimeError(_DETACHED_IN_PLACE)
        if vc[0] != version:
            saved_object(record)._version_error(t, node)
        return t
    data, vc = record
    out = _wrap(data)
    out._vc = vc
    if node is not None:
        out._rg = True
        out._gfn = node
    if vc[0]:
        saved_object(record)._version_error(out, node)
    return out


def stale_input(value) -> tuple | None:
    """``(tensor, version now, version when saved)`` for a saved input (a record or a SavedTensor without hooks)
    whose unpacking raises the version error; None for any other value."""
    if value.__class__ is tuple:
        if len(value) != 4 or value[0] is None:
            return None
        t, vc, version, had_grad_fn = value
    elif value.__class__ is SavedTensor and value._kind == _INPUT:
        t, vc, version, had_grad_fn = value._ref, value._vc, value._version, value._extra
    else:
        return None
    if (had_grad_fn and t._gfn is None) or vc[0] == version:  # (detached in place: that error comes first)
        return None
    return t, vc[0], version


def released(saved: tuple) -> tuple:
    """A node's saved values once backward has freed them (PyTorch's release_variables, outside special mode):
    SavedTensors are marked freed in place, records replaced by freed records, and a number given for a Tensor (a
    wrapped-number tensor in PyTorch) by a freed SavedTensor, so a second backward through the node raises as for
    any saved tensor. (Runs for every node of a plain backward: the usual shapes unrolled, no calls.)"""
    if len(saved) == 1:
        s = saved[0]
        if s.__class__ is tuple:
            return ((None, s[1], s[2], False) if len(s) == 4 else (None, s[1]),)
    elif len(saved) == 2:
        s, t = saved
        if (s is None or s.__class__ is tuple) and t.__class__ is tuple:  # (mul's and mm's nodes)
            return (None if s is None else (None, s[1], s[2], False) if len(s) == 4 else (None, s[1]),
                    (None, t[1], t[2], False) if len(t) == 4 else (None, t[1]))
    kept = True
    for s in saved:
        if s.__class__ is SavedTensor:
            if s._kind != _NONE:  # SavedTensor.release, inlined: it runs for most saved values
                s._kind = _FREED
                s._ref = s._extra = None
        elif s.__class__ is list:
            for item in s:  # a saved Tensor[] / Tensor?[]
                if item.__class__ is SavedTensor:
                    item.release()
        elif s is not None:
            kept = False
    if kept:
        return saved
    return tuple([s if s is None or s.__class__ is SavedTensor or s.__class__ is list
                  else _FREED_NUMBER if s.__class__ is not tuple
                  else (None, s[1], s[2], False) if len(s) == 4 else (None, s[1]) for s in saved])


_FREED_NUMBER = SavedTensor._make_freed()


def plain_array(saved, like=None) -> object:
    """The array of a saved input or output that ``unpack`` would hand back as is (no pack/unpack hooks, current
    version, not freed or detached in place), or None when unpacking must run (hooks, or an error to raise).
    With ``like`` (an array), also None unless the array has ``like``'s dtype and it is a float dtype.
    For raw-NumPy backward rules (ops/raw_backward.py)."""
    if saved.__class__ is tuple:  # a record
        if len(saved) == 4:
            t, vc, version, had_grad_fn = saved
            if t is None or vc[0] != version or (had_grad_fn and t._gfn is None):
                return None
            arr = t._data
        else:
            arr, vc = saved
            if arr is None or vc[0]:
                return None
    elif saved.__class__ is SavedTensor:
        kind = saved._kind
        if kind == _OUTPUT:
            if saved._vc[0] != saved._version:
                return None
            arr = saved._ref
        elif kind == _INPUT:
            t = saved._ref
            if saved._vc[0] != saved._version or (saved._extra and t._gfn is None):
                return None
            arr = t._data
        else:
            return None
    else:
        return None
    if like is not None:
        dt = arr.dtype  # (each ``.dtype`` read is a getter call, and so is ``.kind``: the usual dtypes first)
        if dt is not like.dtype or (dt is not _F32 and dt is not _F64 and dt.kind != "f"):
            return None
    return arr


def _restore_tangents(out: Tensor, fw: dict) -> None:
    """Give an unpacked tensor the tangents saved with it, for the dual levels still alive."""
    from . import forward_ad

    levels = STATE.fw_grad_levels
    for level, tangent in fw.items():
        if level in levels:
            forward_ad.set_tangent(out, tangent, level)


def attach_tangent(saved, out: Tensor, level: int, tangent: Tensor) -> None:
    """Record ``out``'s tangent on a saved value of ``out`` made before the tangent was known (an operator
    saves its outputs before forward AD computes their tangents)."""
    if saved.__class__ is not SavedTensor:
        return
    kind, extra = saved._kind, saved._extra
    if kind in (_OUTPUT, _VIEW_OUTPUT):
        if saved._ref is not out._data or extra[0] != out._output_nr:
            return
        base, n = extra[:2], 2
    elif kind == _HOOKED:
        if not extra[1] or extra[2] != out._output_nr:
            return
        base, n = extra[:6], 6
    else:
        return
    fw = dict(extra[n]) if len(extra) > n else {}
    fw[level] = tangent
    saved._extra = base + (fw,)


def save(value, is_output: bool = False) -> SavedTensor:
    """Save a tensor (or ``None``) for backward."""
    if value is None:
        return SavedTensor._make_none()
    return SavedTensor._make(value, is_output)


def moved_saved_array(saved: SavedTensor, moved: Callable[[np.ndarray], np.ndarray | None]) -> None:
    """Point a saved output (which holds its array, not its tensor) at ``moved(array)`` where that is not None:
    ``share_memory_()`` moving the memory under it, so that backward reads the memory its tensor now uses."""
    if saved._kind in (_OUTPUT, _VIEW_OUTPUT):
        array = moved(saved._ref)
        if array is not None:
            saved._ref = array


def with_saved_arrays_moved(saved: tuple, moved: Callable[[np.ndarray], np.ndarray | None]) -> tuple:
    """A node's ``_saved`` with each output record's array replaced by ``moved(array)`` where that is not None
    (records are tuples: see above; SavedTensors are moved by ``moved_saved_array``)."""
    def record(s):
        if s.__class__ is tuple and len(s) == 2 and s[0] is not None:
            array = moved(s[0])
            if array is not None:
                return array, s[1]
        return s

    return tuple(record(s) for s in saved)
