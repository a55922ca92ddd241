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
from .node import Node

# Creation metadata of views, as in PyTorch: where the view came from decides whether an in-place
# operation on it is allowed.
# IN_CUSTOM_FUNCTION: returned by a custom Function (in-place would bypass its backward).
DEFAULT, NO_GRAD_MODE, MULTI_OUTPUT_NODE, INFERENCE_MODE, IN_CUSTOM_FUNCTION = 0, 1, 2, 3, 4


def make_view(out: Tensor, src: Tensor, op, args: tuple, index: int) -> None:
    """Mark ``out`` as the ``index``-th output of view op ``op`` applied to ``src``."""
    base = src._base if src._base is not None else src
    vc = src._vc
    if vc is None:
        vc = src._vc = [0]
    out._vc = vc
    out._base = base
    out._view_replay = (src._view_replay or ()) + ((op, args[1:], index),)
    out._view_version = vc[0]
    meta = src._creation_meta
    if not STATE.grad_enabled and base._rg:
        meta = NO_GRAD_MODE
    elif STATE.inference:
        meta = INFERENCE_MODE
    elif op.multi_output_view:
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

def check_inplace(t: Tensor, will_record: bool) -> None:
    """PyTorch's check_inplace, in PyTorch's order: leaf errors, then (for views) creation-meta errors,
    then the view-of-leaf error. Only an in-place op that will be recorded can break autograd."""
    base = t._base
    if base is None:
        if t._rg and t._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        return
    if not will_record:
        if t._creation_meta == INFERENCE_MODE and not STATE.inference:
            raise RuntimeError(view_rebase_error(t))
        return
    check_view_rebase(t)


_REBASE_SUFFIX = {
    MULTI_OUTPUT_NODE: (
        " This view is the output of a function that returns multiple views. Such functions do not allow "
        "the output views to be modified inplace. You should replace the inplace operation by an "
        "out-of-place one."),
    NO_GRAD_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
        "by moving both the view and the inplace either both inside the no_grad block (if you don't want "
        "the inplace to be tracked) or both outside (if you want the inplace to be tracked)."),
    IN_CUSTOM_FUNCTION: (
        " This view was created inside a custom Function (or because an input was returned as-is) and the "
        "autograd logic to handle view+inplace would override the custom backward associated with the "
        "custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
        "cloning the output of the custom Function."),
}


def view_rebase_error(var: Tensor) -> str | None:
    """PyTorch's ``handle_view_on_rebase``: why an in-place op may not rewrite this view's history, or None.

    The first sentence depends on whether the view has a ``grad_fn`` (else it reads as made in no_grad
    mode), the rest on its creation meta."""
    meta = var._creation_meta
    if meta == DEFAULT:
        return None
    if meta == INFERENCE_MODE:
        if STATE.inference:
            return None
        return "A view was created in inference mode and is being modified inplace outside inference mode."
    fn = var._grad_fn
    if fn is not None:
        forward_cls = getattr(fn, "_forward_cls", None)
        name = forward_cls.__name__ if forward_cls is not None else re.sub(r"Backward\d*$", "", fn.name())
        prefix = f"Output {var._output_nr} of {name} is a view and is being modified inplace."
    else:
        prefix = "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
    return prefix + _REBASE_SUFFIX.get(meta, "")


def check_view_rebase(var: Tensor) -> None:
    """PyTorch's checks before rewriting a view's history: creation-meta errors, then view-of-leaf."""
    message = view_rebase_error(var)
    if message is not None:
        raise RuntimeError(message)
    if var._rg and var._base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                           "operation.")



# ---- rebasing history ------------------------------------------------------------------------------------

def _move_retains_grad_hook(t: Tensor, old_fn, old_nr: int, new_fn: Node) -> None:
    if not t._retains_grad or old_fn is None or new_fn is old_fn:
        return
    hooks = old_fn._retains_grad_hooks
    fn = hooks.pop(old_nr, None) if hooks else None
    if fn is not None:
        if new_fn._retains_grad_hooks is None:
            new_fn._retains_grad_hooks = {}
        new_fn._retains_grad_hooks[0] = fn


def rebase_history(target: Tensor, node: Node) -> None:
    """After an in-place op on a non-view: the tensor's history is now ``node``."""
    old_fn, old_nr = target._grad_fn, target._output_nr
    target._grad_fn = node
    target._output_nr = 0
    target._rg = True
    _move_retains_grad_hook(target, old_fn, old_nr, node)


class CopySlices(Node):
    """Gradient of an in-place op applied to a view, seen from the view's base."""

    __slots__ = ("fn", "_index", "_base_shape", "_base_dtype")
    _name = "torch::autograd::CopySlices"

    def __init__(self, base: Tensor, view: Tensor, fn: Node) -> None:
        from .edges import gradient_edge

        super().__init__()
        self.fn = fn
        self._index = view_index_map(view)
        self._base_shape = base._data.shape
        self._base_dtype = base._data.dtype
        self._edges = (gradient_edge(base),) + tuple(fn._edges[1:])
        self._in_meta = ((base._data.shape, base._data.dtype),) + tuple(fn._in_meta[1:])

    def apply(self, grads):
        from .. import _functional_core as F

        grad = grads[0]
        if grad is None:
            return [None] * len(self._edges)
        index = F.index_tensor(self._index)
        flat = F.reshape(grad, (-1,))
        grad_slice = F.take(flat, index)
        res = list(self.fn.apply([grad_slice]))
        inner = res[0]
        if inner is None:
            inner = F.zeros_like(grad_slice)
        result = F.index_put(flat, (F.reshape(index, (-1,)),), F.reshape(inner, (-1,)))
        return [F.reshape(result, self._base_shape)] + res[1:]

    def release_variables(self) -> None:
        self.fn.release_variables()

    @property
    def next_functions(self) -> tuple:
        return self._edges


class AsStridedBackward0(Node):
    """The regenerated ``grad_fn`` of a view whose base changed: scatter the view's gradient into the base."""

    __slots__ = ("_index", "_base_shape")
    _name = "AsStridedBackward0"

    def __init__(self, base: Tensor, view: Tensor) -> None:
        from .edges import gradient_edge

        super().__init__()
        self._index = view_index_map(view)
        self._base_shape = base._data.shape
        self._edges = (gradient_edge(base),)
        self._in_meta = ((base._data.shape, base._data.dtype),)

    def apply(self, grads):
        from .. import _functional_core as F

        grad = grads[0]
        if grad is None:
            return [None]
        index = F.reshape(F.index_tensor(self._index), (-1,))
        zeros = F.new_zeros(grad, (int(np.prod(self._base_shape, dtype=np.int64)),))
        flat = F.index_put(zeros, (index,), F.reshape(grad, (-1,)), accumulate=True)
        return [F.reshape(flat, self._base_shape)]


def record_inplace_on_view(op, args: tuple, target: Tensor, node: Node) -> None:
    """``target`` is a view that ``node`` (op's backward, first edge = the view's old history) just wrote."""
    base = target._base
    copy_slices = CopySlices(base, target, node)
    old_fn, old_nr = base._grad_fn, base._output_nr
    base._grad_fn = copy_slices
    base._output_nr = 0
    base._rg = True
    _move_retains_grad_hook(base, old_fn, old_nr, copy_slices)
    old_view_fn, old_view_nr = target._grad_fn, target._output_nr
    target._rg = True
    # The view's own grad_fn is regenerated from the base on next use (its version is now stale).
    regenerate_view_grad_fn(target)
    _move_retains_grad_hook(target, old_view_fn, old_view_nr, target._grad_fn)


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


def _replayed_node(base: Tensor, view: Tensor) -> Node:
    """The view's history rebuilt by re-running its view ops on the base (recording their nodes)."""
    prev = STATE.grad_enabled
    STATE.grad_enabled = True
    try:
        out = base
        for op, rest, k in view._view_replay:
            res = op(out, *rest)
            out = res[k] if isinstance(res, (tuple, list)) else res
    finally:
        STATE.grad_enabled = prev
    return out._grad_fn


def regenerate_view_grad_fn(view: Tensor) -> None:
    base = view._base
    view._view_version = view._vc[0]
    if not (base._rg or view._rg):
        return
    old_fn, old_nr = view._grad_fn, view._output_nr
    node = _replayed_node(base, view) if _ViewReplay.enabled else AsStridedBackward0(base, view)
    view._grad_fn = node
    view._output_nr = 0
    view._rg = True
    _move_retains_grad_hook(view, old_fn, old_nr, node)


def refresh_view_grad_fn(view: Tensor) -> None:
    """Regenerate a view's ``grad_fn`` if its base was modified in place since it was made."""
    vc = view._vc
    if vc is None or vc[0] == view._view_version:
        return
    if view._creation_meta == NO_GRAD_MODE and view._base._rg:
        raise RuntimeError(
            "A view was created in no_grad mode and its base or another view of its base has been modified inplace "
            "with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You "
            "can clarify your code by moving both the view and the inplace either both inside the no_grad block (if "
            "you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).")
    regenerate_view_grad_fn(view)
