"""Views and in-place operations in eager autograd (PyTorch's view tracking and CopySlices).

A view remembers its root ``_base``, shares the base's version counter, and keeps the chain of view
operators that produced it (``_view_replay``). Replaying that chain's kernels over ``arange(base.numel())``
gives, for every element of the view, its flat position in the base: one index map that serves

* ``CopySlices``: an in-place op on a view rewrites the base's history; the gradient for the base is the
  incoming gradient with the view's positions replaced by the in-place node's gradient;
* regenerating a stale view's ``grad_fn`` after its base changed (PyTorch's ``AsStridedBackward0``).
"""

from __future__ import annotations

import re

import numpy as np

from .._state import STATE
from .._tensor import Tensor
from .node import Node, set_retains_grad_hook

# Creation metadata of views, as in PyTorch: where the view came from decides whether an in-place
# operation on it is allowed.
# IN_CUSTOM_FUNCTION: returned by a custom Function (in-place would bypass its backward).
DEFAULT, NO_GRAD_MODE, MULTI_OUTPUT_NODE, INFERENCE_MODE, IN_CUSTOM_FUNCTION = 0, 1, 2, 3, 4


def make_view(out: Tensor, src: Tensor, op, args: tuple, index: int) -> None:
    """Mark ``out`` as the ``index``-th output of view op ``op`` applied to ``src``."""
    if src._inference:
        out._inference = True  # as PyTorch: a view of an inference tensor is a plain inference tensor
        return
    base = src._base if src._base is not None else src
    vc = src._vc
    if vc is None:
        vc = src._vc = [0]
    out._vc = vc
    out._base = base
    out._view_replay = (src._view_replay or ()) + ((op, args[1:], index),)
    out._view_version = vc[0]
    # PyTorch's creation meta, propagated from a view's view: a special mode of the new view wins, except
    # over an inference-mode one.
    meta = src._creation_meta
    if STATE.inference:
        out.__dict__.pop("_inference", None)  # a view of a normal tensor is not an inference tensor
        meta = INFERENCE_MODE
    elif not STATE.grad_enabled:
        if meta != INFERENCE_MODE:
            meta = NO_GRAD_MODE
    elif op.multi_output_view and meta != INFERENCE_MODE:
        meta = MULTI_OUTPUT_NODE
    if meta:
        out._creation_meta = meta


def view_index_map(view: Tensor) -> np.ndarray:
    """Flat positions in ``view._base`` of every element of ``view`` (an int64 array of the view's shape)."""
    cached = view.__dict__.get("_view_index_cache")
    if cached is not None and cached[0] is view._view_replay:
        return cached[1]
    base = view._base
    xp = np
    idx = xp.arange(base._data.size, dtype=np.int64).reshape(base._data.shape)
    for op, rest, k in view._view_replay:
        out = op.kernel(idx, *rest)
        idx = out[k] if isinstance(out, (tuple, list)) else out
    idx = np.array(idx, order="C")  # (ascontiguousarray would make a 0-d map 1-d)
    view.__dict__["_view_index_cache"] = (view._view_replay, idx)
    return idx


# ---- checks --------------------------------------------------------------------------------------------

def check_inplace(t: Tensor, will_record: bool) -> bool:
    """PyTorch's check_inplace (called with grad mode on), in PyTorch's order: leaf errors, then (for views)
    creation-meta errors, then the view-of-leaf error. Only an in-place op that will be recorded can break
    autograd. Returns whether it is recorded: a view requires grad through its base, as in PyTorch, even
    when it was made in no_grad mode or before its base required grad."""
    base = t._base
    if base is None:
        if t._rg and t._gfn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        return will_record
    if not (will_record or base._rg):
        return False
    refresh_view_grad_fn(t)
    check_view_rebase(t)
    return True


_REBASE_SUFFIX = {
    MULTI_OUTPUT_NODE: (
        " This view is the output of a function that returns multiple views. Such functions do not allow "
        "the output views to be modified inplace. You should replace the inplace operation by an "
        "out-of-place one."),
    NO_GRAD_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
        "by moving both the view and the inplace either both inside the no_grad block (if you don't want "
        "the inplace to be tracked) or both outside (if you want the inplace to be tracked)."),
    INFERENCE_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
        "by moving both the view and the inplace either both inside the inference_mode block (if you don't "
        "want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."),
    IN_CUSTOM_FUNCTION: (
        " This view was created inside a custom Function (or because an input was returned as-is) and the "
        "autograd logic to handle view+inplace would override the custom backward associated with the "
        "custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
        "cloning the output of the custom Function."),
}


def view_rebase_error(var: Tensor, indirect: bool = False) -> str | None:
    """PyTorch's ``handle_view_on_rebase``: why an in-place op may not rewrite this view's history, or None.

    The first sentence depends on the view's ``grad_fn`` (without one, the view reads as made in no_grad
    mode) and on whether the view itself (or its base or another view, ``indirect``) is modified; the rest
    on its creation meta."""
    meta = var._creation_meta
    if meta == DEFAULT or (meta == INFERENCE_MODE and STATE.inference):
        return None
    modified = "its base or another view of its base has been" if indirect else "is being"
    fn = var._gfn
    name = None
    if fn is not None:
        forward_cls = getattr(fn, "_forward_cls", None)
        name = forward_cls.__name__ if forward_cls is not None else re.sub(r"Backward\d*$", "", fn.name())
    if meta in (INFERENCE_MODE, NO_GRAD_MODE) or fn is None:
        # A view of a view made in a special mode, or a view without grad_fn (so made in no_grad mode).
        prefix = ("A view was created in" if fn is None
                  else f"Output {var._output_nr} of {name} is a view of a view which was created in")
        if meta == INFERENCE_MODE:
            msg = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"Output {var._output_nr} of {name} is a view and {modified} modified inplace."
    return msg + _REBASE_SUFFIX.get(meta, "")


def check_view_rebase(var: Tensor) -> None:
    """PyTorch's checks before rewriting a view's history: creation-meta errors, then view-of-leaf."""
    message = view_rebase_error(var)
    if message is not None:
        raise RuntimeError(message)
    if (var._rg or var._base._rg) and var._base._gfn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                           "operation.")



# ---- rebasing history ------------------------------------------------------------------------------------

def _move_retains_grad_hook(t: Tensor, old_fn, old_nr: int, new_fn: Node, new_nr: int = 0) -> None:
    if not t._retains_grad or old_fn is None or new_fn is old_fn:
        return
    hooks = old_fn._retains_grad_hooks
    fn = hooks.pop(old_nr, None) if hooks else None
    if fn is not None:
        set_retains_grad_hook(new_fn, new_nr, fn)


def rebase_history(target: Tensor, node: Node) -> None:
    """After an in-place op on a non-view: the tensor's history is now ``node``."""
    old_fn, old_nr = target._gfn, target._output_nr
    target._gfn = node
    target._output_nr = 0
    target._rg = True
    _move_retains_grad_hook(target, old_fn, old_nr, node)


class CopySlices(Node):
    """Gradient of an in-place op applied to a view, seen from the view's base.

    Written as PyTorch's ``CopySlices::apply`` with dispatched ops, so that under ``create_graph`` the
    gradient's own graph has PyTorch's shape: a copy of the incoming gradient, whose view's slice is
    replaced (in place, hence a CopySlices again) by the in-place node's gradient of a clone of that slice.
    """

    __slots__ = ("fn", "_geometry", "_replay", "_base_shape", "_base_dtype")
    _name = "torch::autograd::CopySlices"

    def __init__(self, base: Tensor, view: Tensor, fn: Node) -> None:
        from .edges import gradient_edge

        super().__init__()
        self.fn = fn
        # PyTorch uses as_strided when it can, else replays the view ops (its view_fn).
        self._replay = view._view_replay if changes_dtype(view) else None
        self._geometry = None if self._replay else _strided_geometry(view_index_map(view))
        self._base_shape = base._data.shape
        self._base_dtype = base._data.dtype
        self._edges = (gradient_edge(base),) + tuple(fn._edges[1:])
        self._in_meta = ((base._data.shape, base._data.dtype),) + tuple(fn._in_meta[1:])

    def apply(self, grads):
        from .. import _functional_core as F
        from ..ops import creation
        from ..ops.views import as_strided

        grad = grads[0]
        if grad is None:
            return [None] * len(self._edges)
        if self.fn is None:
            from .saved import FREED_MESSAGE

            raise RuntimeError(FREED_MESSAGE)
        result = F.copy_to_new(grad)
        if self._replay is not None:
            grad_slice = replay_views(result, self._replay)
        else:
            size, stride, offset = self._geometry
            grad_slice = as_strided(result, size, stride, offset)
        res = list(self.fn.apply([creation.clone(grad_slice)]))
        inner = res[0]
        if inner is None:
            creation.zero_(grad_slice)
        else:
            creation.copy_(grad_slice, inner)
        return [result] + res[1:]

    def release_variables(self) -> None:
        # As PyTorch, drop the in-place node rather than its saved values: a double-backward graph built
        # through this node's gradient may still run that node directly.
        self.fn = None

    @property
    def next_functions(self) -> tuple:
        return self._edges


def changes_dtype(view: Tensor) -> bool:
    """Whether a view's chain has an op that reinterprets the dtype (``view_as_real``...): no strides over
    the base's elements describe it."""
    return any(getattr(op, "view_changes_dtype", False) for op, _, _ in view._view_replay or ())


def replay_views(base: Tensor, chain: tuple) -> Tensor:
    """Apply a view chain (``Tensor._view_replay``) to another tensor of the base's shape."""
    out = base
    for op, rest, k in chain:
        res = op(out, *rest)
        out = res[k] if isinstance(res, (tuple, list)) else res
    return out


def _strided_geometry(index: np.ndarray) -> tuple:
    """(size, stride, storage_offset) of a view of a contiguous tensor, from its element positions."""
    size = tuple(index.shape)
    if index.size == 0:
        return size, tuple(0 for _ in size), 0
    first = index.reshape(-1)[0]
    stride = []
    for d, n in enumerate(size):
        if n > 1:
            step = [0] * len(size)
            step[d] = 1
            stride.append(int(index[tuple(step)] - first))
        else:
            stride.append(0)
    return size, tuple(stride), int(first)


class AsStridedBackward0(Node):
    """The regenerated ``grad_fn`` of a view whose base changed: scatter the view's gradient into the base
    (PyTorch's as_strided_backward: a copy into a strided view of zeros, or an indexed sum when elements
    of the view overlap)."""

    __slots__ = ("_index", "_geometry", "_base_shape")
    _name = "AsStridedBackward0"

    def __init__(self, base: Tensor, view: Tensor) -> None:
        from .edges import gradient_edge

        super().__init__()
        index = view_index_map(view)
        overlaps = np.unique(index).size != index.size
        self._index = index if overlaps else None
        self._geometry = None if overlaps else _strided_geometry(index)
        self._base_shape = base._data.shape
        self._edges = (gradient_edge(base),)
        self._in_meta = ((base._data.shape, base._data.dtype),)

    def apply(self, grads):
        from .. import _functional_core as F
        from ..ops import creation
        from ..ops.views import as_strided

        grad = grads[0]
        if grad is None:
            return [None]
        numel = int(np.prod(self._base_shape, dtype=np.int64))
        storage = F.new_zeros(grad, (numel,))
        if self._geometry is None:
            index = F.reshape(F.index_tensor(self._index), (-1,))
            storage = F.index_put(storage, (index,), F.reshape(grad, (-1,)), accumulate=True)
        else:
            size, stride, offset = self._geometry
            creation.copy_(as_strided(storage, size, stride, offset), grad)
            shape = self._base_shape
            strides = tuple(int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape)))
            return [as_strided(storage, shape, strides, 0)]
        return [F.reshape(storage, self._base_shape)]


def record_inplace_on_view(op, args: tuple, target: Tensor, node: Node) -> None:
    """``target`` is a view that ``node`` (op's backward, first edge = the view's old history) just wrote."""
    base = target._base
    copy_slices = CopySlices(base, target, node)
    old_fn, old_nr = base._gfn, base._output_nr
    base._gfn = copy_slices
    base._output_nr = 0
    base._rg = True
    _move_retains_grad_hook(base, old_fn, old_nr, copy_slices)
    old_view_fn, old_view_nr = target._gfn, target._output_nr
    target._rg = True
    # The view's own grad_fn is regenerated from the base on next use (its version is now stale).
    regenerate_view_grad_fn(target)
    _move_retains_grad_hook(target, old_view_fn, old_view_nr, target._gfn)


class _ViewReplay:
    """``autograd._force_original_view_tracking``: regenerate views by replaying their view ops."""

    enabled = False


def is_view_replay_enabled() -> bool:
    return _ViewReplay.enabled


class _force_original_view_tracking:
    def __init__(self, mode: bool) -> None:
        self.prev = _ViewReplay.enabled
        _ViewReplay.enabled = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _ViewReplay.enabled = self.prev


def _replayed_node(base: Tensor, view: Tensor) -> tuple:
    """The view's history rebuilt by re-running its view ops on the base (recording their nodes), as
    ``(node, output_nr)``."""
    prev = STATE.grad_enabled
    STATE.grad_enabled = True
    try:
        out = replay_views(base, view._view_replay)
    finally:
        STATE.grad_enabled = prev
    return out._gfn, out._output_nr


def regenerate_view_grad_fn(view: Tensor) -> None:
    base = view._base
    view._view_version = view._vc[0]
    if not (base._rg or view._rg):
        return
    old_fn, old_nr = view._gfn, view._output_nr
    replay = _ViewReplay.enabled or changes_dtype(view)
    node, nr = _replayed_node(base, view) if replay else (AsStridedBackward0(base, view), 0)
    view._gfn = node
    view._output_nr = nr
    view._rg = True
    _move_retains_grad_hook(view, old_fn, old_nr, node, nr)


def refresh_view_grad_fn(view: Tensor) -> None:
    """Regenerate a view's ``grad_fn`` if its base was modified in place since it was made (PyTorch's
    ``VariableHooks::grad_fn``); a view with a special creation meta may not be regenerated."""
    vc = view._vc
    stale = vc is not None and vc[0] != view._view_version
    # A view made before its base required grad (``requires_grad_()`` on the base) requires grad through it.
    orphan = not view._rg and view._base._rg and view._creation_meta == DEFAULT
    if not stale and not orphan:
        return
    if view._gfn is None and not view._base._rg:
        return
    message = view_rebase_error(view, indirect=True)
    if message is not None:
        raise RuntimeError(message)
    regenerate_view_grad_fn(view)
