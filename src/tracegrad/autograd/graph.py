"""``torch.autograd.graph``: the graph API (Node, GradientEdge), saved-tensor hooks, multi-grad hooks."""

from __future__ import annotations

import abc
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
            return issubclass(subclass, _node.Node) or NotImplemented
        return NotImplemented

    name = _node.Node.name
    next_functions = _node.Node.next_functions
    metadata = _node.Node.metadata
    register_hook = _node.Node.register_hook
    register_prehook = _node.Node.register_prehook


class GradientEdge(NamedTuple):
    """Where a tensor's gradient enters the graph: ``(node, output_nr)``."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    if not tensor._rg:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    fn, nr = gradient_edge(tensor)
    return GradientEdge(fn, nr)


def increment_version(tensor) -> None:
    for t in tensor if isinstance(tensor, (list, tuple)) else (tensor,):
        t._bump_version()


class saved_tensors_hooks:
    """Run ``pack_hook`` on every tensor saved for backward inside the block, ``unpack_hook`` on access."""

    def __init__(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
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
    (``None`` for those not reached). ``mode="any"``: call ``fn(grad)`` on the first gradient."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    if mode == "all":
        state: dict = {}

        def make_hook(idx: int):
            def hook(grad):
                task = engine.current_graph_task()
                key = task.id if task is not None else None
                with lock:
                    entry = state.get(key)
                    if entry is None:
                        expected = sum(1 for t in tensors if task is None or task.will_execute(gradient_edge(t)[0]))
                        entry = state[key] = [expected, [None] * len(tensors)]
                    entry[1][idx] = grad
                    entry[0] -= 1
                    done = entry[0] == 0
                    if done:
                        del state[key]
                if done:
                    fn(list(entry[1]))

            return hook

        handles = [t.register_hook(make_hook(i)) for i, t in enumerate(tensors) if t._rg]
        return _MultiHandle(handles)

    fired: set = set()

    def any_hook(grad):
        task = engine.current_graph_task()
        key = task.id if task is not None else None
        with lock:
            if key in fired:
                return
            fired.add(key)
        fn(grad)

    handles = [t.register_hook(any_hook) for t in tensors if t._rg]
    return _MultiHandle(handles)


def _will_engine_execute_node(node) -> bool:
    if not isinstance(node, _node.Node):
        raise RuntimeError(f"_will_engine_execute_node expects an grad_fn, but got {type(node).__name__}")
    task = engine.current_graph_task()
    if task is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    if isinstance(node, AccumulateGrad) and task.exec_info is not None and not task.exec_info.get(node, False) \
            and node in task.captures:
        raise RuntimeError("The gradients are being computed with respect to the following inputs which are leaf "
                           "tensors: _will_engine_execute_node cannot tell whether their AccumulateGrad nodes run "
                           "because we are currently running autograd.grad()")
    return task.will_execute(node)


# (at the end: that module builds on saved_tensors_hooks above)
from .mutation_on_saved import allow_mutation_on_saved_tensors  # noqa: E402
