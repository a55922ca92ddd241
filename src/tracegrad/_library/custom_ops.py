"""``torch.library.custom_op`` and its :class:`CustomOpDef` (PyTorch's ``torch._library.custom_ops``).

A custom op is a :class:`~tracegrad._library.operators.LibraryOp` with three kernels, as in PyTorch: the user's
function as its backend kernel (which may not return an alias of an input), an Autograd kernel that records a
``GeneratedBackwardFor_<ns>_<name>_<overload>`` node (a custom ``autograd.Function``) whenever an input requires
grad, and version bumps of the inputs it declares mutated."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._tensor import Tensor
from ..autograd.function import Function
from .infer_schema import infer_schema
from .operators import LibraryOp, any_requires_grad

log = logging.getLogger(__name__)

# qualname -> the CustomOpDef that defined it (a later definition of the same name replaces it, as in PyTorch)
OPDEFS: dict[str, CustomOpDef] = {}


def __module_repr__() -> str:
    """How PyTorch's aliasing refusal names the module of a custom op's kernel: its own wrapper's module."""
    return repr(sys.modules[__name__])


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args: str | Iterable[str],
              device_types: str | Sequence[str] | None = None, schema: str | None = None,
              tags: Any = None) -> Callable | CustomOpDef:
    """Wrap ``fn`` into an operator ``name`` ("namespace::opname"), as a decorator or a call."""

    def inner(fn: Callable) -> CustomOpDef:
        schema_str = infer_schema(fn, mutates_args=mutates_args) if schema is None else schema
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_str, fn)
        if schema is not None:
            expected = {p.name for p in result._op.schema.params if p.is_write}
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and `schema={schema}. The "
                    f"schema suggests that the op mutates {expected}which is different from what was provided to us "
                    "in `mutates_args`. Please make these consistent.")
        result.register_kernel(device_types)(fn)
        return result

    return inner if fn is None else inner(fn)


class CustomOpDef:
    """What ``custom_op`` returns: callable as the operator, with its registration methods."""

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable) -> None:
        from .. import library

        self._namespace = namespace
        self._name = name
        self._schema = schema
        self._init_fn = fn
        self._backend_fns: dict[str | None, Callable] = {}
        self._abstract_fn: Callable | None = None
        self._setup_context_fn: Callable | None = None
        self._backward_fn: Callable | None = None
        self._disabled_kernel: set = set()
        old = OPDEFS.pop(self._qualname, None)
        if old is not None:  # (PyTorch destroys the previous definition's library, then defines the name anew)
            old._lib._destroy()
        self._lib = library.Library(namespace, "FRAGMENT")
        self._register_to_dispatcher()
        OPDEFS[self._qualname] = self

    @property
    def _qualname(self) -> str:
        return f"{self._namespace}::{self._name}"

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._opoverload(*args, **kwargs)

    def _register_to_dispatcher(self) -> None:
        schema_str = self._name + self._schema
        if any(p.kwarg_only and (p.is_tensor or p.is_tensor_list)
               for p in self._lib.parse(schema_str).params):
            raise NotImplementedError("custom_op with kwarg-only Tensor args. Please make your tensors not "
                                      f"kwarg-only. Got: {schema_str}")
        self._lib.define(schema_str)
        self._opoverload = self._lib.overload(self._name)
        op = self._op
        op.refuses_aliases = True
        op.bumps_mutated = True
        op.kernels["Autograd"] = make_autograd_impl(op, self)

    @property
    def _op(self) -> LibraryOp:
        return self._opoverload._op

    # ---- registrations ------------------------------------------------------------------------------------

    def register_kernel(self, device_types: str | Sequence[str] | None, fn: Callable | None = None, /) -> Callable:
        """Use ``fn`` as the kernel for ``device_types`` (None: every device)."""

        def inner(fn: Callable) -> Callable:
            types = [device_types] if device_types is None or isinstance(device_types, str) else list(device_types)
            for device_type in types:
                key = "CompositeExplicitAutograd" if device_type is None else _dispatch_key_for_device(device_type)
                self._backend_fns[device_type] = fn
                self._op.kernels[key] = self._enabled_kernel(device_type)
            return fn

        return inner if fn is None else inner(fn)

    def _enabled_kernel(self, device_type: str | None) -> Callable:
        def kernel(*args: Any, **kwargs: Any) -> Any:
            if device_type in self._disabled_kernel:
                return self._init_fn(*args, **kwargs)
            return self._backend_fns[device_type](*args, **kwargs)

        return kernel

    def register_fake(self, fn: Callable, /) -> Callable:
        """Kept for code that registers one; tracegrad has no fake tensors, so it is never called."""
        self._abstract_fn = fn
        self._op.fake = fn
        return fn

    def register_autograd(self, backward: Callable, /, *, setup_context: Callable | None = None) -> None:
        """``backward(ctx, *grads)`` gives the inputs' gradients; ``setup_context(ctx, inputs, output)`` saves
        what it needs. Only for functional operators, as in PyTorch."""
        op = self._op
        if op.mutated_idx or any(r.alias for r in op.schema.returns):
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self} with schema "
                f"{op.declaration()}. Please create a functional operator and register an autograd formula for "
                "that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_torch_dispatch(self, torch_dispatch_class: Any, fn: Callable | None = None, /) -> Callable:
        raise NotImplementedError(
            f"register_torch_dispatch({self}): tracegrad has no __torch_dispatch__ (no tensor subclasses or "
            "TorchDispatchModes below autograd); use tracegrad.utils._python_dispatch.OpInterceptor to see or "
            "replace operator calls.")

    def register_vmap(self, func: Callable | None = None) -> Callable:
        raise NotImplementedError(f"register_vmap({self}): tracegrad's vmap does not dispatch custom operators yet.")

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type: str, enabled: bool = True):
        """Within the block, the kernel registered for ``device_type`` is (not) used in place of the original."""
        action = "enable" if enabled else "disable"
        originally_disabled = device_type in self._disabled_kernel
        if device_type not in self._backend_fns:
            log.warning("Attempted to %s kernel for %s but no kernel was registered for this device type.",
                        action, device_type)
        if not enabled:
            if originally_disabled:
                log.warning("Attempted to disable kernel for %s but it was already disabled.", device_type)
            else:
                self._disabled_kernel.add(device_type)
        elif not originally_disabled:
            log.warning("Attempted to enable kernel for  %s but it was already enabled.", device_type)
        else:
            self._disabled_kernel.remove(device_type)
        try:
            yield
        finally:
            if originally_disabled:
                self._disabled_kernel.add(device_type)
            else:
                self._disabled_kernel.discard(device_type)


_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


def _dispatch_key_for_device(device_type: str) -> str:
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")
    return {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}.get(device_type, device_type.upper())


# ---- autograd ---------------------------------------------------------------------------------------------------

class _Metadata:
    """The trailing argument of the generated Function: keyword-only arguments and how lists were flattened (its
    input is why ``ctx.needs_input_grad`` has one more entry, which the backward formula never sees)."""

    __slots__ = ("keywords", "input_spec", "output_spec")

    def __init__(self, keywords: dict, input_spec: tuple) -> None:
        self.keywords = keywords
        self.input_spec = input_spec
        self.output_spec = None


def make_autograd_impl(op: LibraryOp, info: Any) -> Callable:
    """The Autograd kernel of ``op``: with an input requiring grad, the kernel runs inside a generated Function
    whose backward is ``info._backward_fn`` (or PyTorch's refusal, at backward time, where none was registered)."""
    overload = op.schema.overload or "default"
    name = f"GeneratedBackwardFor_{op.namespace}_{op.__name__.partition('.')[0]}_{overload}"
    # (PyTorch flattens tensor lists, in inputs and in gradients, only for an operator with a tensor list)
    lists = any(p.is_tensor_list for p in op.schema.params) or any(r.type.startswith("Tensor[]")
                                                                 for r in op.schema.returns)

    def forward(ctx, *flat):
        meta = flat[-1]
        ctx._tg_metadata = meta
        args = _unflatten(flat[:-1], meta.input_spec)
        positional = args + tuple(meta.keywords.values())
        result = op.run_backend(positional)
        if info._setup_context_fn and op.kwarg_names:  # (keyword-only arguments come apart, as in PyTorch)
            info._setup_context_fn(ctx=ctx, inputs=args, keyword_only_inputs=meta.keywords, output=result)
        elif info._setup_context_fn:
            info._setup_context_fn(ctx=ctx, inputs=args, output=result)
        flat_result, meta.output_spec = _flatten_result(result)
        return flat_result

    def backward(ctx, *grads):
        meta = ctx._tg_metadata
        if info._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {op.namespace}.{op.__name__.partition('.')[0]}.{overload} "
                               "but no autograd formula was "
                               "registered. Please use register_autograd to add one.")
        prev = ctx.needs_input_grad
        try:
            ctx.needs_input_grad = _unflatten(prev[:-1], meta.input_spec)
            result = info._backward_fn(ctx, *_unflatten_grads(grads, meta.output_spec))
        finally:
            ctx.needs_input_grad = prev
        if not lists:  # (PyTorch's plain generated Function: a tuple is the gradients, anything else is one)
            return (*result, None) if isinstance(result, tuple) else (result, None)
        return (*_flatten_grads(result), None)

    generated = type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                         "_tg_quiet": True})

    def autograd_impl(*args: Any, **keywords: Any) -> Any:
        from .._state import STATE

        if not (STATE.grad_enabled and any_requires_grad(args)):
            return op.run_backend(args + tuple(keywords.values()))
        flat, spec = _flatten_args(args)
        meta = _Metadata(keywords, spec)
        outputs = generated.apply(*flat, meta)
        return _unflatten_result(outputs, meta.output_spec)

    return autograd_impl


def _flatten_args(args: tuple) -> tuple[list, tuple]:
    """Tensor lists spread into their tensors (the Function's inputs); the spec is each argument's length or None."""
    flat, spec = [], []
    for a in args:
        if isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) for t in a):
            flat.extend(a)
            spec.append(len(a))
        else:
            flat.append(a)
            spec.append(None)
    return flat, tuple(spec)


def _unflatten(flat: Sequence, spec: tuple) -> tuple:
    out, k = [], 0
    for n in spec:
        if n is None:
            out.append(flat[k])
            k += 1
        else:
            out.append(list(flat[k:k + n]))
            k += n
    return tuple(out)


def _flatten_grads(result) -> list:
    grads = result if isinstance(result, tuple) else (result,)
    return [g for item in grads for g in (item if isinstance(item, list) else (item,))]


def _flatten_result(result) -> tuple[tuple, Any]:
    """The outputs as the Function returns them, and how to rebuild the operator's result."""
    if isinstance(result, list):
        return tuple(result), ("list", len(result))
    if isinstance(result, tuple):
        return result, ("tuple", len(result))
    return (result,), ("one", 1)


def _unflatten_result(outputs, spec):
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    kind = spec[0]
    if kind == "list":
        return list(outputs)
    if kind == "tuple":
        return tuple(outputs)
    return outputs[0]


def _unflatten_grads(grads: tuple, spec) -> tuple:
    return (list(grads),) if spec[0] == "list" else grads

