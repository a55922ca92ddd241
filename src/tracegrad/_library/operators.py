"""Operators users define (``torch.library``): their schemas, their kernels per dispatch key, and the eager call.

A :class:`LibraryOp` is an :class:`~tracegrad.ops.registry.OpDef` whose kernels are Python functions of tensors
rather than of arrays: calling it goes through ``OpDef.__call__`` (``__torch_function__``, the profiler, op
interceptors, transforms) like any built-in operator, and its eager step picks a kernel as PyTorch's dispatcher
does for the keys tracegrad has (CPU / CUDA / CompositeExplicitAutograd below autograd, Autograd and
CompositeImplicitAutograd above it), then tells observers about the call under its qualified name (``ns::name``).

Library operators are kept apart from the built-in registry (``NAMESPACES``, keyed by namespace then by
``name.overload``): they are global, as PyTorch's are, but built-in tables and checks never see them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from .._events import emit_op_call
from .._state import STATE, next_sequence_nr
from .._tensor import Tensor
from .._warnings import warn_at_caller
from ..autograd.edges import NO_EDGE, gradient_edge
from ..autograd.node import Node
from ..autograd.node_meta import meta_record, outputs_meta
from ..backend.dtypes import kind_of
from ..ops.registry import OpDef
from ..ops.schema import Schema, _parse_default, _split_arrow, _split_top, parse_schema
from ..storage import _memory_owner
from . import arguments

# namespace -> {"name" or "name.overload" -> operator}
NAMESPACES: dict[str, dict[str, LibraryOp]] = {}

# The dispatch keys an implementation may be registered for, and the backend key of each device type
BACKEND_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}
AUTOGRAD_KEYS = ("Autograd", "AutogradCPU", "AutogradCUDA")
DISPATCH_KEYS = frozenset({*BACKEND_KEYS.values(), *AUTOGRAD_KEYS, "CompositeImplicitAutograd",
                           "CompositeExplicitAutograd", "Meta", "BackendSelect", "ADInplaceOrView"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_user_schema(namespace: str, schema: str) -> Schema:
    """``schema`` (``name.overload(args) -> returns``) parsed, its name checked as PyTorch's schema lexer checks it;
    the schema's name is qualified (``ns::name``), so that nothing keyed by built-in names mistakes it for one."""
    head = with_printed_defaults(schema.strip())
    name, _, overload = head.split("(", 1)[0].partition(".")
    for part, offset in ((name, 0), (overload, len(name) + 1)):
        if part:
            _check_identifier(head, part, offset)
    parsed = parse_schema(f"{namespace}::{head}")
    returns = parsed.returns
    if len(returns) == 1 and returns[0].type == "" and returns[0].alias:  # ``-> ((Tensor))``: one-element tuple
        parsed = parse_schema(f"{namespace}::{head.rsplit('->', 1)[0]}-> ({returns[0].alias})")
        parsed.one_tuple = True
    return parsed


def with_printed_defaults(schema: str) -> str:
    """``schema`` with its float, Scalar and str defaults written as PyTorch's schema printer writes them (``2.``
    for ``2.0``, ``0.001`` for ``1e-3``, 17 significant digits otherwise; strings in double quotes), so the
    operator's schema and its calls' error messages read as PyTorch's."""
    head, returns = _split_arrow(schema)
    arrow = "->" if len(head) < len(schema) else ""
    name, paren, args = head.partition("(")
    if not paren:
        return schema
    body, close, after = args.rpartition(")")
    printed = ", ".join(_with_printed_default(arg) for arg in _split_top(body))
    return f"{name}({printed}{close}{after}{arrow}{returns}"


def _with_printed_default(arg: str) -> str:
    decl, equals, default = arg.partition("=")
    type_text = decl.split()[0] if decl.split() else ""
    base_type = re.sub(r"\[\d*\]|\?|\(.*\)", "", type_text)
    if not equals or base_type not in ("float", "Scalar", "str", "int", "SymInt", "bool"):
        return arg
    value = _parse_default(default.strip())
    if base_type == "str":
        return f"{decl}={_quoted(value)}" if isinstance(value, str) else arg
    if isinstance(value, tuple) and all(_is_plain_number(v) or isinstance(v, bool) for v in value):
        if base_type == "int" and "[" in type_text and len(value) > 1 and len(set(value)) == 1:
            return f"{decl}={value[0]}"  # (c10 prints an int list of one repeated value as the value: int[2]=1)
        return f"{decl}=[{', '.join(_cpp_number(v, base_type) for v in value)}]"
    return f"{decl}={_cpp_number(value, base_type)}" if _is_plain_number(value) else arg


# c10's printQuotedString: these characters escaped, other unprintable ones in octal
_ESCAPES = {"\\": "\\\\", "'": "\\'", '"': '\\"', "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n",
            "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _quoted(value: str) -> str:
    """``value`` in double quotes, escaped as c10's schema printer escapes a string default (``"a\\'b"``)."""
    return '"' + "".join(_ESCAPES.get(c) or (c if c.isprintable() else f"\\{ord(c):03o}") for c in value) + '"'


def _is_plain_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _cpp_number(value: float, base_type: str) -> str:
    """How c10's IValue printer writes a double: integral values below 2**63 as ``12.``, others with 17 digits."""
    if isinstance(value, int) and base_type != "float":
        return str(value)  # (an int, bool or Scalar default keeps its integer literal)
    if float(value).is_integer() and abs(value) < 2.0 ** 63:
        return f"{int(value)}."
    return f"{value:.17g}"


def _check_identifier(schema: str, part: str, offset: int) -> None:
    match = _IDENT.match(part)
    if match is None:
        found = "number" if part[0].isdigit() else part[0]
        raise RuntimeError(f"expected ident but found '{found}' here:\n{schema}\n{' ' * offset}~ <--- HERE\n")
    end = match.end()
    if end < len(part):
        raise RuntimeError(f"expected eof but found '{part[end]}' here:\n{schema}\n{' ' * (offset + end)}~ <--- HERE\n")


def find(namespace: str, full_name: str) -> LibraryOp | None:
    return NAMESPACES.get(namespace, {}).get(full_name)


class LibraryOp(OpDef):
    """One overload of a user-defined operator (``ns::name.overload``) and its kernels by dispatch key."""

    # Set by custom_op: whether the backend kernel's result may not alias the inputs (PyTorch refuses it there)
    refuses_aliases = False
    # custom_op's ADInplaceOrView kernel: the version of each mutated input is bumped once before the kernel runs
    bumps_mutated = False

    def __init__(self, namespace: str, schema: Schema, text: str) -> None:  # (no built-in registration)
        self.schema = schema
        self.text = text  # the schema as given, without the namespace
        self.namespace = namespace
        self.name = schema.name
        self.qualname = schema.name
        self.public_name = schema.name
        self.__name__ = schema.full_name.partition("::")[2]
        params = schema.params
        self.param_names = tuple(p.name for p in params)
        # (never a call's argument count: the callers' shortcut for a full positional call skips ``bind``, and
        # PyTorch's parser checks every call of a library operator, its values' types included)
        self.n_params = -1
        self.n_positional = len(schema.positional)
        self.defaults = tuple(p.default for p in params)
        self.required = tuple(not p.has_default for p in params)
        self.tensor_idx = tuple(i for i, p in enumerate(params) if p.is_tensor)
        self.list_idx = tuple(i for i, p in enumerate(params) if p.is_tensor_list)
        self.number_idx = tuple(i for i, p in enumerate(params) if p.type.rstrip("?") == "Scalar")
        self.float_idx = ()
        self.mutated_idx = tuple(i for i, p in enumerate(params) if p.is_write)
        self.kwarg_names = tuple(p.name for p in params if p.kwarg_only)
        self.kernels: dict[str, Callable] = {}
        self.fake: Callable | None = None

    def __repr__(self) -> str:
        return f"<LibraryOp {self.schema.full_name}>"

    # ---- calling ------------------------------------------------------------------------------------------

    def bind(self, args: tuple, kwargs: dict) -> tuple:
        """The full positional argument tuple, checked and refused as PyTorch's boxed-call parser does."""
        return arguments.bind(self, args, kwargs)

    def _call_with_out(self, args: tuple, kwargs: dict):
        return self._eager(self.bind(args, kwargs))  # (``out`` is an ordinary argument name here, if declared)

    def declaration(self) -> str:
        return f"{self.namespace}::{self.text}"

    def split_arguments(self, args: tuple) -> tuple[tuple, dict]:
        """The bound arguments as a kernel takes them: positional, and keyword-only ones by name."""
        n = self.n_positional
        return args[:n], dict(zip(self.param_names[n:], args[n:]))

    def _eager(self, args: tuple):
        kernels = self.kernels
        autograd = next((kernels[k] for k in AUTOGRAD_KEYS if k in kernels), None)
        if autograd is None:
            autograd = kernels.get("CompositeImplicitAutograd")
        if autograd is not None:
            positional, keywords = self.split_arguments(args)
            result = autograd(*positional, **keywords)
            recorded = STATE.grad_enabled and any_requires_grad(args)
        else:
            result, recorded = self._backend_with_fallback(args)
        if STATE.observed:
            emit_op_call(self.qualname, _tensors_of(result), recorded)
        return result

    def run_backend(self, args: tuple):
        """The kernel below autograd (grad mode off): the version bumps of mutated inputs, the backend kernel
        for the inputs' device, and the aliasing check of custom ops."""
        if self.bumps_mutated:
            for i in self.mutated_idx:
                _bump_versions(args[i])
        positional, keywords = self.split_arguments(args)
        kernel = self.backend_kernel(args)
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            result = kernel(*positional, **keywords)
        finally:
            STATE.grad_enabled = prev
        if self.refuses_aliases:
            check_no_aliasing(self, args, result)
        return result

    def backend_kernel(self, args: tuple) -> Callable:
        kernels = self.kernels
        key = BACKEND_KEYS.get(_device_type(args), "CPU")
        kernel = kernels.get(key) or kernels.get("CompositeExplicitAutograd")
        if kernel is None:
            raise NotImplementedError(
                f"Could not run '{self.qualname}' with arguments from the '{key}' backend. This could be because the "
                "operator doesn't exist for this backend, or was omitted during the selective/custom build process "
                f"(if using custom build). '{self.qualname}' is only available for these backends: "
                f"[{', '.join(sorted(kernels))}].")
        return kernel

    def _backend_with_fallback(self, args: tuple):
        """A backend kernel with no autograd kernel: PyTorch's autograd fallback (its default "warn" mode). The
        kernel runs with grad mode as it is; an output its operations recorded warns when backward reaches it,
        and one they did not gets a node that warns and gives no gradient."""
        positional, keywords = self.split_arguments(args)
        result = self.backend_kernel(args)(*positional, **keywords)
        if not (STATE.grad_enabled and any_requires_grad(args)):
            return result, False
        _warn_at_backward(self, args, _tensors_of(result))
        return result, True


def _warn_at_backward(op: LibraryOp, args: tuple, outputs: tuple) -> None:
    message = (f"{op.qualname}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
               "backprop through it. This may lead to silently incorrect behavior. This behavior is deprecated and "
               "will be removed in a future version of PyTorch. If your operator is differentiable, please ensure "
               "you have registered an autograd kernel to the correct Autograd key (e.g. DispatchKey::Autograd, "
               "DispatchKey::CompositeImplicitAutograd). If your operator is not differentiable, or to squash this "
               "warning and use the previous behavior, please register torch::CppFunction::makeFallthrough() to "
               "DispatchKey::Autograd.")

    def warn(grad):
        warn_at_caller(message, UserWarning)
        return grad

    untracked = []
    for out in outputs:
        if out._grad_fn is not None:
            out._grad_fn._register_tensor_pre_hook(out._output_nr, warn)
        elif kind_of(out._data.dtype) in "fc":
            untracked.append(out)
    if untracked:
        _attach_warning_node(args, untracked, message)


class WarnNotImplemented(Node):
    """PyTorch's node for outputs of an operator without an autograd kernel that did not record history: backward
    through it warns and gives its inputs no gradient."""

    _name = "torch::autograd::WarnNotImplemented"

    def apply(self, grads):
        warn_at_caller(self._message, UserWarning)
        return [None] * len(self._edges)


def _attach_warning_node(args: tuple, outputs: list, message: str) -> None:
    node = WarnNotImplemented()
    node._seq = next_sequence_nr()
    inputs = [t for t in _tensors_of(args) if t._rg]
    node._edges = tuple(gradient_edge(t) if t._rg else NO_EDGE for t in inputs)
    node._in_meta = tuple(meta_record(t._data.shape, t._data.dtype) for t in inputs)
    node._message = message
    node._n_out = len(outputs)
    node._out_meta = outputs_meta([o._data for o in outputs])
    for nr, out in enumerate(outputs):
        out._gfn = node
        out._output_nr = nr
        out._rg = True


def check_no_aliasing(op: LibraryOp, args: tuple, result) -> None:
    """PyTorch's refusal of a custom op's output that is, or shares storage with, an input or another output."""
    seen = {id(_memory_owner(t._data)) for t in _tensors_of(args)}
    for out in _tensors_of(result):
        root = id(_memory_owner(out._data))
        if root in seen:
            from . import custom_ops

            raise RuntimeError(
                f"{op.__name__.partition('.')[0]} (with implementation in {custom_ops.__module_repr__()}): The output "
                "of this custom operator (1) must not also be an input to this custom operator and (2) may not alias "
                "any inputs to this custom operator or other returns. The most common way to trigger this error is "
                "if we have y = custom_op(x) and y and x are the same Tensor. Please instead return a clone of the "
                "offending output tensor(s) (e.g. return x.clone()) or refactor the custom operator to not return y.")
        seen.add(root)


def _tensors_of(value) -> tuple:
    """The tensors in ``value``: a tensor, or a tuple/list of tensors and lists of tensors (None skipped)."""
    if isinstance(value, Tensor):
        return (value,)
    if isinstance(value, (tuple, list)):
        return tuple(t for item in value for t in _tensors_of(item))
    return ()


def any_requires_grad(args: tuple) -> bool:
    return any(t.requires_grad for t in _tensors_of(args))


def _device_type(args: tuple) -> str:
    tensors = _tensors_of(args)
    return tensors[0].device.type if tensors else "cpu"


def _bump_versions(value) -> None:
    for t in _tensors_of(value):
        t._bump_version()
