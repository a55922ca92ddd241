"""The observation event bus (its core lives in ``tracegrad._events``, below every layer that emits).

The engine checks one flag (``STATE.observed``) before calling :func:`emit`, so with no subscriber an event
costs nothing but that check. A subscriber is called as ``fn(kind, payload)`` synchronously, at the point where
the event happens; it should record cheaply (references, counters) and format later, because it runs inside
the engine's inner loop. ``subscribe(fn, kinds)`` limits it to some kinds, and that matters for speed: the
kinds in ``GENERAL_PATH_KINDS`` (every operator call, the saved-tensor events) are only emitted by the general
path, so wanting them turns the eager fast paths off; nodes, hooks and backward runs keep them on.

Event kinds and their payloads (objects are passed as they are, never copied or formatted):

``op``
    A forward operator ran (every call, recorded or not): ``op`` (operator or custom ``Function`` name),
    ``outputs`` (tuple of output tensors; ``t._gfn`` of each is the new node, if any).
``node_created``
    A graph node was recorded: ``node``, ``op`` (the forward operator or custom ``Function`` name). The source
    tracker (``viz.sources``) records the user's line and notebook cell here.
``backward_started``
    A ``backward()`` / ``autograd.grad()`` call begins: ``task`` (the engine's ``GraphTask``; ``task.captures``
    is non-empty for ``autograd.grad``), ``roots`` (list of ``(node, output_nr)`` gradient edges).
``backward_finished``
    That call ended (also when it raised): ``task``.
``node_executed``
    The engine is about to run a node (after its tensor and pre hooks): ``node``.
``hook``
    A hook is about to be called: ``kind``, ``node`` (the node it belongs to or runs inside, or None),
    ``hook`` (the callable), ``output_nr`` (for tensor / retain_grad hooks), ``tensor`` (the gradient a
    tensor / retain_grad hook receives, the leaf for post_accumulate, the tensor being packed for pack,
    else None) and, for module hooks only, ``module``. ``kind`` is one of:

    - ``tensor``: ``Tensor.register_hook`` (also on a leaf's AccumulateGrad);
    - ``retain_grad``: the hook installed by ``Tensor.retain_grad()``;
    - ``pre`` / ``post``: ``grad_fn.register_prehook`` / ``grad_fn.register_hook``;
    - ``post_accumulate``: ``Tensor.register_post_accumulate_grad_hook``;
    - ``pack`` / ``unpack``: a ``saved_tensors_hooks`` pack / unpack function;
    - ``module_pre`` / ``module_post``: ``Module.register_full_backward_pre_hook`` / ``..._hook``;
    - ``module_forward_pre`` / ``module_forward``: ``Module.register_forward_pre_hook`` / ``..._hook``.
``saved_packed``
    A tensor was packed by a saved-tensor pack hook: ``tensor``.
``saved_unpacked``
    A saved tensor is being unpacked (by backward or by ``grad_fn._saved_*``): ``saved`` (the
    ``SavedTensor``), ``node`` (the node unpacking it, or None).
``saved_freed``
    A saved tensor is released after a backward without ``retain_graph``: ``saved``.
"""

from __future__ import annotations

from .._events import GENERAL_PATH_KINDS, Subscriber, emit, subscribe, subscribers

__all__ = ["EVENT_KINDS", "GENERAL_PATH_KINDS", "HOOK_KINDS", "Subscriber", "emit", "subscribe", "subscribers"]

EVENT_KINDS = ("op", "node_created", "backward_started", "backward_finished", "node_executed", "hook", "saved_packed",
               "saved_unpacked", "saved_freed")
HOOK_KINDS = ("tensor", "retain_grad", "pre", "post", "post_accumulate", "pack", "unpack", "module_pre",
              "module_post", "module_forward_pre", "module_forward")
