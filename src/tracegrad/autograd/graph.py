"""``torch.autograd.graph``: the graph API (Node, GradientEdge), saved-tensor hooks, multi-grad hooks."""

from __future__ import annotations

import abc
import functools
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple

from .._state import STATE
from .._tensor import Tensor
from . import engine
from . import node as _node
from .accumulate import AccumulateGrad
from .edges import gradient_edge
from .node import RemovableHandle

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "allow_mutation_on_saved_tensors"]


class Node(abc.ABC):  # noqa: B024 - a virtual base: membership comes from __subclasshook__
    """Virtual base class of every backward node: ``isinstance(t.grad_fn, Node)`` holds, although the node
    classes do not inherit from it (as in PyTorch, where nodes are C++ objects)."""

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node:
            # (a node PyTorch binds no Python class to, a CppFunction, is none)
            return (issubclass(subclass, _node.Node) and subclass._python_bound) or NotImplemented
        return NotImplemented

    name = _node.Node.name
    next_functions = _node.Node.next_functions
    metadata = _node.Node.metadata
    register_hook = _node.Node.register_hook
    register_prehook = _node.Node.register_prehook


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: ``(node, output_nr)``, and what keeps that graph alive."""

    node: Node
    output_nr: int
    # PyTorch's Python nodes do not own their graph; a second node that does travels with the edge.
    ownership_token: Node | None = None


def _get_grad_fn_or_grad_acc(t) -> Node:
    """The node that receives ``t``'s gradient (its AccumulateGrad for a leaf), as PyTorch finds it."""
    if isinstance(t, GradientEdge):
        return t.node
    if t._rg and t.grad_fn is None:
        fn = gradient_edge(t)[0]
    else:
        fn = t.grad_fn
    if fn is None:
        raise AssertionError("Expected gradient function to be set")
    return fn


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    if not tensor._rg:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    fn, nr = gradient_edge(tensor)
    token = None
    from .function import BackwardCFunction

    if isinstance(fn, BackwardCFunction):
        # PyTorch's token for a custom Function's node: the grad_fn of a fresh view of the tensor.
        from .grad_mode import enable_grad

        with enable_grad():
            token = tensor.view_as(tensor).grad_fn
    return GradientEdge(fn, nr, ownership_token=token)


def increment_version(tensor) -> None:
    for t in tensor if isinstance(tensor, (list, tuple)) else (tensor,):
        t._bump_version()


class saved_tensors_hooks:
    """Run ``pack_hook`` on every tensor saved for backward inside the block, ``unpack_hook`` on access."""

    def __init__(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if not callable(self.pack_hook) or not callable(self.unpack_hook):
            # PyTorch's binding refuses them when the hooks are pushed, in its binding layer's words
            raise TypeError(
                "_push_saved_tensors_default_hooks(): incompatible function arguments. The following argument "
                "types are supported:\n    1. (arg0: collections.abc.Callable, arg1: collections.abc.Callable) -> "
                f"None\n\nInvoked with: {self.pack_hook!r}, {self.unpack_hook!r}")
        if STATE.saved_hooks_disabled:
            raise RuntimeError(STATE.saved_hooks_disabled)
        STATE.saved_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        # Remove our own entry, tolerating unbalanced enter/exit calls made during backward.
        pair = (self.pack_hook, self.unpack_hook)
        for i in range(len(STATE.saved_hooks) - 1, -1, -1):
            if STATE.saved_hooks[i] == pair:
                del STATE.saved_hooks[i]
                break


class save_on_cpu(saved_tensors_hooks):
    """Offload saved tensors to (pinned) CPU memory; brings them back to their device on unpack."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor):
            from .. import _functional_core as F

            return (t.device, F.to_cpu_copy(t))

        def unpack(packed):
            device, cpu_tensor = packed
            return cpu_tensor.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Forbid ``saved_tensors_hooks`` inside the block, with ``error_message`` as the error."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message
        self.prev = None

    def __enter__(self) -> None:
        if STATE.saved_hooks:
            raise RuntimeError(self.error_message)
        self.prev = STATE.saved_hooks_disabled
        STATE.saved_hooks_disabled = self.error_message

    def __exit__(self, *exc) -> None:
        STATE.saved_hooks_disabled = self.prev

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(self.error_message):
                return func(*args, **kwargs)

        return wrapper


class _MultiHandle(RemovableHandle):
    __slots__ = ("handles",)

    def __init__(self, handles) -> None:
        super().__init__()
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable, *, mode: str = "all") -> RemovableHandle:
    """``mode="all"``: call ``fn(grads)`` once per backward after every tensor's gradient is computed
    (``None`` for those not reached). ``mode="any"``: call ``fn(grad)`` on the first gradient.

    Written as PyTorch's: with ``"all"``, the first hook to fire of a backward call asks
    ``_will_engine_execute_node`` how many will fire (so a leaf among them is refused under ``grad()``)."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    lock = threading.Lock()
    if mode == "all":
        grad_fns = [_get_grad_fn_or_grad_acc(t) for t in tensors]
        count: dict = {}
        buffer: dict = {}
        nb_calls = None

        def make_hook(idx: int):
            def hook(grad):
                nonlocal nb_calls
                task_id = _current_graph_task_id()
                if task_id == -1:
                    raise AssertionError("expected this hook to be called inside a backward call")
                count[task_id] = count.get(task_id, 0)
                buffer[task_id] = buffer.get(task_id, [None] * len(grad_fns))
                with lock:
                    curr_count, count[task_id] = count[task_id], count[task_id] + 1
                    if curr_count == 0:
                        nb_calls = sum(map(_will_engine_execute_node, grad_fns))
                buffer[task_id][idx] = grad
                if curr_count == nb_calls - 1:
                    fn(buffer[task_id])
                    del count[task_id]
                    del buffer[task_id]

            return hook

        return _MultiHandle(tuple(t.register_hook(make_hook(i)) for i, t in enumerate(tensors)))

    ran: set = set()

    @functools.wraps(fn)
    def any_hook(grad):
        task_id = _current_graph_task_id()
        if task_id == -1:
            raise AssertionError("expected this hook to be called inside a backward call")
        with lock:
            if task_id in ran:
                return
            ran.add(task_id)
        fn(grad)

    return _MultiHandle(tuple(t.register_hook(any_hook) for t in tensors if t._rg))


def _current_graph_task_id() -> int:
    task = engine.current_graph_task()
    return -1 if task is None else task.id


def _will_engine_execute_node(node) -> bool:
    if not isinstance(node, _node.Node):
        raise RuntimeError(f"_will_engine_execute_node expects an grad_fn, but got {type(node).__name__}")
    task = engine.current_graph_task()
    if task is None:
        raise RuntimeError("_get_should_execute_nodes should only be called during the backward pass")
    if isinstance(node, AccumulateGrad) and task.exec_info is not None and not task.exec_info.get(node, False) \
            and node in task.captures:
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    return task.will_execute(node)


# (at the end: that module builds on saved_tensors_hooks above)
from .mutation_on_saved import allow_mutation_on_saved_tensors  # noqa: E402
