"""Backward graph nodes (PyTorch's ``torch.autograd.graph.Node``), hook storage and handles.

A node's ``_edges`` are its ``next_functions``: one ``(node, output_nr)`` pair per differentiable
forward input, ``(None, 0)`` for inputs that need no gradient. ``_in_meta`` holds the (shape, dtype) of
each forward input so the engine can reduce broadcast gradients and cast them, as PyTorch's engine does
when it validates a node's outputs.
"""

from __future__ import annotations

import itertools
import re

from .._state import STATE

_handle_ids = itertools.count()

UINT64_MAX = (1 << 64) - 1


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` detaches the hook (idempotent)."""

    __slots__ = ("_dicts", "id")

    def __init__(self, *dicts: dict) -> None:
        self.id = next(_handle_ids)
        self._dicts = dicts

    def remove(self) -> None:
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


RemovableHandle.__module__ = "tracegrad.utils.hooks"  # where PyTorch's lives (and where ours is exported too)


def not_writable(node, attribute: str) -> AttributeError:
    """CPython's refusal to write or delete a read-only attribute of torch's C node classes (a custom Function's
    node has them from ``torch._C._FunctionBase``)."""
    owner = type(node).__name__ if node._c_method_owner is None else f"torch._C.{node._c_method_owner}"
    return AttributeError(f"attribute '{attribute}' of '{owner}' objects is not writable")


def read_only_property(getter, attribute: str) -> property:
    """A node attribute read through ``getter`` that refuses writes and deletions in CPython's words (a plain
    property would say "property ... has no setter")."""
    def refuse(node, *value):
        raise not_writable(node, attribute)

    return property(getter, refuse, refuse)


class Node:
    """Base of every backward node. Subclasses implement ``apply(grads) -> tuple of grads``."""

    __slots__ = ("_edges", "_in_meta", "_seq", "__weakref__", "__dict__")

    _name = "Node"
    _n_out = 1  # number of forward outputs = number of gradients this node receives
    # Rare attributes live in the instance dict only when set.
    _pre_hooks = None
    _post_hooks = None
    _tensor_pre_hooks = None  # dict output_nr -> dict handle_id -> fn
    _retains_grad_hooks = None  # dict output_nr -> fn
    # True once any of the four hook dicts above was created (never reset): the engine's one-read check for
    # its hook-free fast path. Whoever creates one of those dicts sets it (``register_*``, ``set_retains_grad_hook``).
    _hooked = False
    # It hands a gradient to a node whose output ``.data = ...`` reshaped (reshaped_outputs.py): set with _hooked, so
    # that the engine's checked path (validate_outputs) checks its gradients against their receivers.
    _checks_receivers = False
    # ``(node, grad_array) -> gradient arrays`` for a plain backward, set on some operators' node classes by
    # ops/raw_backward.py; the engine runs chains of such nodes on the arrays (array_chain.py).
    _array_rule = None
    _keeps_meta = False  # its array rule returns a gradient of its input's shape and dtype (raw_backward.KEEPS_META)
    _needs = None  # set by the engine when only some input gradients are wanted
    _masks_unneeded = True  # a built-in formula leaves the unwanted ones undefined (not a custom Function)
    _user_backward = False  # a custom Function's backward (user code): __torch_function__ sees its calls
    _metadata = None
    _python_bound = True  # PyTorch binds a Python class to it (see graph.Node)
    _c_method_owner: str | None = None  # the class CPython names in its C methods' errors (None: the node's own)

    def __init__(self) -> None:
        self._edges = ()
        self._in_meta = ()
        self._seq = STATE.next_sequence_nr

    # ---- public graph API --------------------------------------------------------------------------------

    def name(self, *args, **kwargs) -> str:
        if args or kwargs:
            raise TypeError(f"{self._c_method_name('name')} takes "
                            + ("no keyword arguments" if kwargs else f"no arguments ({len(args)} given)"))
        return self._name

    def __dir__(self) -> list:
        # ``_saved`` is the slot of an operator node's saved values: PyTorch's nodes list only their
        # ``_saved_<name>`` attributes, which code finds with ``startswith("_saved")``.
        return sorted(set(super().__dir__()) - {"_saved"})

    def _next_functions(self) -> tuple:
        return self._edges

    def _metadata_dict(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    next_functions = read_only_property(_next_functions, "next_functions")
    metadata = read_only_property(_metadata_dict, "metadata")
    # (torch's nodes all say True: a node exists only where a gradient is wanted)
    requires_grad = read_only_property(lambda self: True, "requires_grad")

    def __reduce_ex__(self, protocol):
        # (torch's nodes are C++ objects without pickling: pickle, copy and deepcopy refuse them in CPython's words;
        # tracegrad's would be pickled slot by slot, or fail remaking a class that refuses to be called)
        raise TypeError(f"cannot pickle '{type(self).__name__}' object")

    def _sequence_nr(self) -> int:
        return self._seq

    def _set_sequence_nr(self, value: int) -> None:
        self._seq = value

    @property
    def _input_metadata(self) -> list:
        """Shape/dtype of each gradient this node receives (its forward outputs), as PyTorch's InputMetadata."""
        from .input_metadata import InputMetadata

        meta = getattr(self, "_out_meta", None) or ()
        return [InputMetadata(shape, dtype) for shape, dtype in meta]

    def _c_method_name(self, method: str) -> str:
        """``method`` as CPython names a C method in its argument errors: with the class torch defines it on."""
        owner = type(self).__name__ if self._c_method_owner is None else self._c_method_owner
        return f"{owner}.{method}()"

    def _one_hook_argument(self, method: str, args: tuple, kwargs: dict):
        """The one hook of ``register_hook``/``register_prehook``, refused in CPython's words for a C method that
        takes one argument (named by the class torch defines it on: a custom Function's ``_FunctionBase``)."""
        where = self._c_method_name(method)
        if kwargs:
            raise TypeError(f"{where} takes no keyword arguments")
        if len(args) != 1:
            raise TypeError(f"{where} takes exactly one argument ({len(args)} given)")
        return args[0]

    def register_hook(self, *args, **kwargs) -> RemovableHandle:
        """A post-hook ``fn(grad_inputs, grad_outputs)`` that may return replacement ``grad_inputs``."""
        fn = args[0] if len(args) == 1 and not kwargs else self._one_hook_argument("register_hook", args, kwargs)
        if self._post_hooks is None:
            self._post_hooks = {}
            self._hooked = True
        handle = RemovableHandle(self._post_hooks)
        self._post_hooks[handle.id] = fn
        return handle

    def register_prehook(self, *args, **kwargs) -> RemovableHandle:
        """A pre-hook ``fn(grad_outputs)`` that may return replacement ``grad_outputs``."""
        fn = args[0] if len(args) == 1 and not kwargs else self._one_hook_argument("register_prehook", args, kwargs)
        if self._pre_hooks is None:
            self._pre_hooks = {}
            self._hooked = True
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = fn
        return handle

    def _register_tensor_pre_hook(self, output_nr: int, fn) -> RemovableHandle:
        hooks = self._tensor_pre_hooks
        if hooks is None:
            hooks = self._tensor_pre_hooks = {}
            self._hooked = True
        per_output = hooks.get(output_nr)
        if per_output is None:
            per_output = hooks[output_nr] = {}
        handle = RemovableHandle(per_output)
        per_output[handle.id] = fn
        return handle

    def _get_tensor_pre_hooks(self):
        return self._tensor_pre_hooks

    @property
    def needs_input_grad(self) -> tuple:
        needs = self._needs
        if needs is not None:
            return needs
        edges = self._edges
        if len(edges) == 2:
            return (edges[0][0] is not None, edges[1][0] is not None)
        return tuple([e[0] is not None for e in edges])

    def should_compute_output(self, i: int) -> bool:
        return self.needs_input_grad[i]

    def apply(self, *grads):
        raise NotImplementedError

    def __call__(self, *grads):
        if len(grads) != self._n_out:
            raise TypeError(f"expected {self._n_out} arguments, got {len(grads)} instead")
        out = self.apply(list(grads))
        return out[0] if len(out) == 1 else tuple(out)

    def release_variables(self) -> None:
        """Free saved tensors after a backward without ``retain_graph``."""

    def __repr__(self) -> str:
        # PyTorch's C++ nodes print their Python type's name, which drops the ``torch::autograd::`` prefix of
        # ``name()`` (``<AccumulateGrad object at ...>``).
        return f"<{self.name().rpartition('::')[2]} object at {hex(id(self))}>"

class GraphRoot(Node):
    """The engine's entry node: its outputs are the root gradients."""

    __slots__ = ("_grads",)
    _name = "GraphRoot"

    def __init__(self, edges, grads) -> None:
        self._edges = tuple(edges)
        self._in_meta = ()
        # PyTorch makes a root node (taking a sequence number) only for several roots; with one, the engine
        # starts from the root's own node, and the next operator's node gets the number this one would have.
        self._seq = STATE.next_sequence_nr if len(self._edges) != 1 else UINT64_MAX
        self._grads = grads

    def apply(self, grads):
        return list(self._grads)


class Error(Node):
    """A node whose backward always raises (PyTorch's ``Error`` / ``NotImplemented`` nodes)."""

    __slots__ = ("_message", "_exc")
    _name = "Error"

    def __init__(self, message: str, edges=(), exc_type=RuntimeError, name: str | None = None) -> None:
        super().__init__()
        self._message = message
        self._edges = tuple(edges)
        self._exc = exc_type
        if name:
            self._name = name

    def apply(self, grads):
        raise self._exc(self._message)


def set_retains_grad_hook(node: Node, output_nr: int, fn) -> None:
    """Install ``retain_grad``'s hook for one output of ``node`` (at most one per output)."""
    if node._retains_grad_hooks is None:
        node._retains_grad_hooks = {}
        node._hooked = True
    node._retains_grad_hooks[output_nr] = fn


def collect_hook_fns(hook_dict: dict | None) -> list:
    """Snapshot a hook dict: removing a handle inside a hook must not affect the current pass."""
    return list(hook_dict.values()) if hook_dict else []


_BACKWARD_SUFFIX = re.compile(r"Backward(\d*)$")


def forward_name(fn: Node) -> str:
    """How PyTorch's error messages name the operator of a node: a custom Function's class name, else the
    node's name without its ``Backward`` suffix, keeping an overload number other than 0 (MulBackward0 is
    ``Mul``, SqueezeBackward3 ``Squeeze3``, SliceBackwardBackward0 ``SliceBackward``; CopySlices unchanged)."""
    forward_cls = getattr(fn, "_forward_cls", None)
    if forward_cls is not None:
        return forward_cls.__name__
    return _BACKWARD_SUFFIX.sub(lambda m: "" if m.group(1) in ("", "0") else m.group(1), fn.name())
