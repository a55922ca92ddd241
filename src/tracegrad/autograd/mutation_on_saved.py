"""``torch.autograd.graph.allow_mutation_on_saved_tensors``: saved tensors are cloned when written in place.

Normally, writing in place into a tensor saved for backward makes that backward fail ("one of the variables
needed for gradient computation has been modified by an inplace operation"). Inside this context the saved
tensors are packed into handles (a ``saved_tensors_hooks`` pair), and an in-place write into memory a
handle refers to first clones the saved tensor, so backward reads the values the forward saw.

As in PyTorch, a saved tensor is found by its data pointer and version (a write through a view that starts
elsewhere in the storage clones nothing), the clone is taken without autograd history, it is made just
before the kernel writes (after autograd's own in-place bookkeeping, before the version bump), and the
state is cleared when the context exits: unpacking afterwards raises. Batch norm's update of its running
statistics clones nothing, as in PyTorch, whose ``native_batch_norm`` schema does not mark them written (a
training node never reads them back, so no gradient changes). The write sites call
``STATE.before_write(tensor)`` while a context is active; otherwise that slot is None and costs one check.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator, MutableMapping
from weakref import WeakKeyDictionary, WeakValueDictionary

from .._state import STATE
from .._tensor import Tensor
from .graph import saved_tensors_hooks

_TID = tuple[int, int, int]
_SID = tuple[int, int]

_BACKWARD_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                     "in which the graph was originally recorded.")  # (PyTorch's words, missing space included)

_enabled = False


def _tid(t: Tensor) -> _TID:
    return id(t), t.data_ptr(), t._version


def _sid(t: Tensor) -> _SID:
    return t.data_ptr(), t._version


class _Handle:
    """What the pack hook hands autograd; the context maps it (weakly) to the saved tensor or its clone."""


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block (returned by it, for debugging)."""

    def __init__(self) -> None:
        self.cloned: MutableMapping[_Handle, Tensor] = WeakKeyDictionary()
        self.original: MutableMapping[_Handle, Tensor] = WeakKeyDictionary()
        self.tid_to_weakhandle: MutableMapping[_TID, _Handle] = WeakValueDictionary()
        self.sid_to_tid: dict[_SID, set[_TID]] = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


class _swap_with_cloned(saved_tensors_hooks):
    """Pack a saved tensor into a handle; unpack it as its clone if it was written meanwhile."""

    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        def pack_hook(tensor: Tensor) -> _Handle:
            tid = _tid(tensor)
            ctx.sid_to_tid[_sid(tensor)].add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)  # the same tensor, same version, saved again: one handle
            if handle is None:
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = tensor
            return handle

        def unpack_hook(handle: _Handle) -> Tensor:
            if not _enabled:
                raise AssertionError(_BACKWARD_OUTSIDE)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(_BACKWARD_OUTSIDE)
            return ctx.original[handle]

        super().__init__(pack_hook, unpack_hook)


def _clone_saved_before_write(ctx: _AllowMutationOnSavedContext):
    """The ``before_write`` callback: clone every still-saved tensor that shares ``t``'s data pointer and version."""

    def before_write(t: Tensor) -> None:
        tids = ctx.sid_to_tid.get(_sid(t))
        if not tids:
            return
        for tid in tids:
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None or handle in ctx.cloned:  # freed by a backward already, or cloned already
                continue
            ctx.cloned[handle] = _untracked_clone(ctx.original.pop(handle))

    return before_write


def _untracked_clone(t: Tensor) -> Tensor:
    """``t.clone()`` as PyTorch's dispatch mode takes it, below autograd: no history, no write callback."""
    from ..ops.creation import clone
    from .grad_mode import no_grad

    with no_grad():
        return clone(t)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Context manager under which tensors saved for backward may be written in place: they are cloned on
    the first write, and backward uses the clone. Run both the forward and the backward inside it."""
    global _enabled
    ctx = _AllowMutationOnSavedContext()
    outer_write_hook = STATE.before_write
    with _swap_with_cloned(ctx):
        STATE.before_write = _clone_saved_before_write(ctx)
        try:
            if _enabled:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _enabled = True
            yield ctx
        finally:
            STATE.before_write = outer_write_hook
            ctx.clear()
            _enabled = False  # (also after a refused nested block, which so ends the outer one too, as in PyTorch)
