"""``torch.library``: defining operators of one's own, over tracegrad's operators (see ``_library/``).

``custom_op`` wraps a Python function into an operator (``torch.ops.<ns>.<name>``) with a schema inferred from its
type hints; ``Library`` defines schemas and registers implementations per dispatch key. Their operators are called
like built-in ones: observers, the graph view and op interceptors see them under ``ns::name``.

What tracegrad lacks, it says: there are no fake tensors (``register_fake`` keeps the function, which is never
called, and ``opcheck`` checks a fake implementation's result against the real one's on real tensors), no
``__torch_dispatch__`` (``register_torch_dispatch`` refuses) and no AOT compilation.
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ._library.custom_ops import OPDEFS, CustomOpDef, _dispatch_key_for_device, custom_op, make_autograd_impl
from ._library.infer_schema import infer_schema
from ._library.operators import (
    AUTOGRAD_KEYS,
    DISPATCH_KEYS,
    NAMESPACES,
    LibraryOp,
    parse_user_schema,
    with_printed_defaults,
)
from ._library.operators import check_no_aliasing as _check_no_aliasing

__all__ = ["Library", "custom_op", "define", "get_ctx", "impl", "infer_schema", "opcheck", "register_autograd",
           "register_fake", "register_kernel", "register_torch_dispatch"]

_KINDS = ("IMPL", "DEF", "FRAGMENT")
_DEF_LOCATIONS: dict[str, str] = {}  # namespace -> where its (single) DEF library was made
_PENDING_IMPLS: dict[tuple[str, str], dict[str, Callable]] = {}  # implementations given before their definition
_KEEP_ALIVE: list[Library] = []  # libraries made by the functional API (torch's _keep_alive)
_override_warned = [False]


class Library:
    """A set of definitions (``DEF``, ``FRAGMENT``) or implementations (``IMPL``) in namespace ``ns``."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        frame = traceback.extract_stack(limit=2)[0]
        self._location = f"{frame.filename}:{frame.lineno}"
        if kind == "DEF":
            if ns in _DEF_LOCATIONS:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of your "
                    "definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, "
                    "consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define "
                    "operators for a single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to "
                    "explicitly indicate this.  Previous registration of TORCH_LIBRARY was registered at "
                    f"{_DEF_LOCATIONS[ns]}; latest registration was registered at {self._location}")
            _DEF_LOCATIONS[ns] = self._location
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined: list[str] = []
        self._impls: list[tuple[LibraryOp, str]] = []

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def parse(self, schema: str):
        return parse_user_schema(self.ns, _without_namespace(schema, self.ns, self._location))

    def define(self, schema: str, alias_analysis: str = "", *, tags: Any = ()) -> str:
        """Define an operator from ``schema`` ("name.overload(args) -> returns"); return its name."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        text = with_printed_defaults(_without_namespace(schema, self.ns, self._location).strip())
        parsed = parse_user_schema(self.ns, text)
        key = parsed.full_name.partition("::")[2]
        table = NAMESPACES.setdefault(self.ns, {})
        if key in table:
            raise RuntimeError(
                f"Tried to register an operator ({self.ns}::{text}) with the same name and overload name multiple "
                "times. Each overload's schema should only be registered with a single call to def(). Duplicate "
                f"registration: registered at {self._location}. Original registration: registered at "
                f"{table[key]._location}")
        op = table[key] = LibraryOp(self.ns, parsed, text)
        op._location = self._location
        op.kernels.update(_PENDING_IMPLS.pop((self.ns, key), {}))
        self._defined.append(key)
        return key.partition(".")[0]

    def overload(self, name: str):
        """The ``torch.ops`` handle of operator ``name`` ("name" or "name.overload") of this namespace."""
        from ._ops import namespace

        base, _, overload = name.partition(".")
        return getattr(getattr(namespace(self.ns), base), overload or "default")

    def impl(self, op_name: Any, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = False) -> None:
        """Use ``fn`` as the kernel of ``op_name`` for ``dispatch_key`` (CPU, CompositeImplicitAutograd,
        Autograd...); the library's own key, or CompositeImplicitAutograd, where none is given."""
        if with_keyset:
            raise NotImplementedError("Library.impl(with_keyset=True): tracegrad has no dispatch key sets.")
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if key not in DISPATCH_KEYS:
            raise RuntimeError(f"could not parse dispatch key: {key}")
        name = op_name if isinstance(op_name, str) else op_name._full_name
        if self.ns == "aten":  # (PyTorch would replace the built-in kernel; tracegrad's kernels are not Python's)
            raise NotImplementedError(f"Library('aten', ...).impl({name!r}, ...): tracegrad's built-in operators take "
                                      "no registrations; use tracegrad.utils._python_dispatch.OpInterceptor to "
                                      "replace their calls.")
        op = NAMESPACES.get(self.ns, {}).get(name)
        if op is None:  # (PyTorch accepts an implementation before its definition)
            _PENDING_IMPLS.setdefault((self.ns, name), {})[key] = fn
            return
        if key in op.kernels and not allow_override:
            _warn_override(op, key)
        op.kernels[key] = fn
        self._impls.append((op, key))

    def _destroy(self) -> None:
        """Undo this library's registrations (what PyTorch does when a library is deleted)."""
        table = NAMESPACES.get(self.ns, {})
        for op, key in self._impls:
            op.kernels.pop(key, None)
        for key in self._defined:
            table.pop(key, None)
        if self.kind == "DEF" and _DEF_LOCATIONS.get(self.ns) == self._location:
            del _DEF_LOCATIONS[self.ns]
        self._impls, self._defined = [], []


def _without_namespace(schema: str, ns: str, location: str) -> str:
    head = schema.split("(", 1)[0]
    if "::" not in head:
        return schema.strip()
    given, _, rest = schema.strip().partition("::")
    if given != ns:
        raise RuntimeError(
            f"Explicitly provided namespace ({given}) in schema string does not match namespace of enclosing "
            f"TORCH_LIBRARY block ({ns}).  Move this definition to the (unique) TORCH_LIBRARY block corresponding to "
            "this namespace (and consider deleting the namespace from your schema string.)  (Error occurred while "
            f"processing TORCH_LIBRARY block at {location})")
    return rest


def _warn_override(op: LibraryOp, key: str) -> None:
    if _override_warned[0]:
        return
    _override_warned[0] = True
    warnings.warn("Warning only once for all operators,  other operators may also be overridden.\n"
                  "  Overriding a previously registered kernel for the same operator and the same dispatch key\n"
                  f"  operator: {op.declaration()}\n  dispatch key: {key}", UserWarning, stacklevel=3)


# ---- the functional API -----------------------------------------------------------------------------------------

def _parse_namespace(qualname: str) -> tuple[str, str]:
    splits = qualname.split("::")
    if len(splits) != 2:
        raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got {qualname}. The qualname '
                         "passed to the torch.library APIs must consist of a namespace and a name, e.g. aten::sin")
    return splits[0], splits[1]


def _library_for(ns: str, lib: Library | None) -> Library:
    if lib is not None:
        return lib
    lib = Library(ns, "FRAGMENT")
    _KEEP_ALIVE.append(lib)
    return lib


def define(qualname: str, schema: str, *, lib: Library | None = None, tags: Any = ()) -> None:
    """Define operator ``qualname`` ("ns::name") with ``schema`` ("(Tensor x) -> Tensor")."""
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, got {type(qualname)}")
    ns, name = _parse_namespace(qualname)
    _library_for(ns, lib).define(name + schema, tags=tags)


def impl(qualname: str, types: str | Sequence[str], func: Callable | None = None, *,
         lib: Library | None = None) -> Callable | None:
    """Register ``func`` for ``qualname`` on device types ("cpu") or dispatch keys ("CompositeImplicitAutograd")."""
    ns, name = _parse_namespace(qualname)
    keys = [_key_for(t) for t in ((types,) if isinstance(types, str) else types)]

    def register(func: Callable) -> None:  # (None, as PyTorch's: even the decorator form leaves None behind)
        library = _library_for(ns, lib)
        for key in keys:
            library.impl(name, func, key)

    return register if func is None else register(func)


def _key_for(type_or_key: str) -> str:
    if type_or_key in DISPATCH_KEYS:
        return type_or_key
    if type_or_key == "default":
        return "CompositeExplicitAutograd"
    return _dispatch_key_for_device(type_or_key)


def _resolve(op) -> tuple[CustomOpDef | None, LibraryOp]:
    """The custom op (if ``op`` is one) and the operator behind ``op``: a CustomOpDef, a handle or "ns::name"."""
    if isinstance(op, CustomOpDef):
        return op, op._op
    from ._ops import OpOverload, namespace

    if isinstance(op, OpOverload):
        qualname, handle = f"{op.namespace}::{op._opname}", op
    else:
        ns, name = _parse_namespace(op)
        qualname = op
        base, _, overload = name.partition(".")
        handle = getattr(getattr(namespace(ns), base), overload or "default")
    if not isinstance(handle._op, LibraryOp):
        raise NotImplementedError(f"{qualname}: tracegrad's built-in operators take no registrations.")
    return OPDEFS.get(qualname), handle._op


def register_kernel(op, device_types: str | Sequence[str] | None, func: Callable | None = None, /, *,
                    lib: Library | None = None) -> Callable:
    custom, _ = _resolve(op)
    if custom is not None:
        return custom.register_kernel(device_types, func)
    return impl(op if isinstance(op, str) else f"{op.namespace}::{op._full_name}",
                "default" if device_types is None else device_types, func, lib=lib)


class _Info:
    """What an operator's generated autograd kernel reads: its backward and setup_context functions."""

    def __init__(self, backward: Callable, setup_context: Callable | None) -> None:
        self._backward_fn = backward
        self._setup_context_fn = setup_context


def register_autograd(op, backward: Callable, /, *, setup_context: Callable | None = None,
                      lib: Library | None = None) -> None:
    """Register ``backward`` (and ``setup_context``) as ``op``'s autograd formula."""
    custom, library_op = _resolve(op)
    if custom is not None:
        custom.register_autograd(backward, setup_context=setup_context)
        return
    if library_op.mutated_idx or any(r.alias for r in library_op.schema.returns):
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator {op} with schema "
                           f"{library_op.declaration()}. Please create a functional operator and register an "
                           "autograd formula for that.")
    library_op.kernels["Autograd"] = make_autograd_impl(library_op, _Info(backward, setup_context))


def register_fake(op, func: Callable | None = None, /, *, lib: Library | None = None, _stacklevel: int = 1,
                  allow_override: bool = False) -> Callable:
    """Keep ``func`` as ``op``'s fake implementation. tracegrad has no fake tensors: it is never called, except by
    :func:`opcheck`, which compares its result's shapes and dtypes with the real kernel's."""

    def register(func: Callable) -> Callable:
        custom, library_op = _resolve(op)
        if custom is not None:
            return custom.register_fake(func)
        library_op.fake = func
        return func

    return register if func is None else register(func)


def register_torch_dispatch(op, torch_dispatch_class: Any, func: Callable | None = None, /, *,
                            lib: Library | None = None) -> Callable:
    raise NotImplementedError(
        f"register_torch_dispatch({op}): tracegrad has no __torch_dispatch__ (no tensor subclasses or "
        "TorchDispatchModes below autograd); use tracegrad.utils._python_dispatch.OpInterceptor to see or replace "
        "operator calls.")


def get_ctx() -> None:
    """The fake-implementation context: None, as in PyTorch outside a fake implementation (tracegrad never runs one
    inside a fake mode)."""
    return None


# ---- opcheck ----------------------------------------------------------------------------------------------------

class OpCheckError(Exception):
    pass


OpCheckError.__module__ = "tracegrad.testing._internal.optests.generate_tests"

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


def opcheck(op, args: tuple, kwargs: dict | None = None, *, test_utils: str | Sequence[str] = DEFAULT_TEST_UTILS,
            raise_exception: bool = True, atol: float | None = None, rtol: float | None = None) -> dict[str, str]:
    """PyTorch's operator checks, those that make sense without fake tensors or compilation: the schema (declared
    mutations and no aliasing results), an autograd kernel where inputs require grad, and the fake implementation's
    result metadata (called on real tensors). ``test_aot_dispatch_dynamic`` passes where those three do (tracegrad
    compiles nothing). Returns ``{test: "SUCCESS" | exception}`` as PyTorch's."""
    kwargs = kwargs or {}
    custom, library_op = _resolve(op)
    tests = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    checks = {"test_schema": _check_schema, "test_autograd_registration": _check_autograd_registration,
              "test_faketensor": _check_fake, "test_aot_dispatch_static": _check_aot,
              "test_aot_dispatch_dynamic": _check_aot}
    if not set(tests) <= set(checks):
        raise ValueError(f"opcheck(op, ..., test_utils={tests}), expected test_utils to be subset of "
                         f"{tuple(checks)} but it was not")
    results: dict[str, Any] = {}
    for name in tests:
        try:
            checks[name](custom, library_op, args, kwargs)
        except Exception as exc:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {exc} (scroll up for stack trace)") from exc
            results[name] = exc
        else:
            results[name] = "SUCCESS"
    return results


def _cloned(args):
    from ._tensor import Tensor

    if isinstance(args, Tensor):
        return args.detach().clone().requires_grad_(args.requires_grad)
    if isinstance(args, (list, tuple)):
        return type(args)(_cloned(a) for a in args)
    if isinstance(args, dict):
        return {k: _cloned(v) for k, v in args.items()}
    return args


def _call(library_op: LibraryOp, args: tuple, kwargs: dict):
    from ._state import STATE

    prev = STATE.grad_enabled
    STATE.grad_enabled = False
    try:
        return library_op(*args, **kwargs)
    finally:
        STATE.grad_enabled = prev


def _check_schema(custom, library_op: LibraryOp, args: tuple, kwargs: dict) -> None:
    """Inputs the schema does not declare mutated keep their values; no result aliases an input."""
    args, kwargs = _cloned(args), _cloned(kwargs)
    bound = library_op.bind(args, kwargs)
    before = [(i, _cloned(bound[i])) for i in library_op.tensor_idx if i not in library_op.mutated_idx]
    result = _call(library_op, args, kwargs)
    for i, old in before:
        value = bound[i]
        if value is not None and not (value.shape == old.shape and bool((value == old).all())):
            raise RuntimeError(f"Argument {library_op.param_names[i]} is not defined as mutable but was mutated")
    _check_no_aliasing(library_op, bound, result)


def _check_autograd_registration(custom, library_op: LibraryOp, args: tuple, kwargs: dict) -> None:
    from ._library.operators import any_requires_grad

    if not any_requires_grad(tuple(args) + tuple(kwargs.values())):
        return
    kernels = library_op.kernels
    if any(k in kernels for k in (*AUTOGRAD_KEYS, "CompositeImplicitAutograd")):
        return
    raise AssertionError(
        f"{library_op.qualname}: at least one output of this operator has requires_grad=True but the operator does "
        "not have an autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd). This could mean that "
        "you have incorrectly registered an autograd kernel to a non-Autograd DispatchKey, which may lead to "
        "silently incorrect results. If your operator consists of regular PyTorch operations, consider not using an "
        "operator at all or registering your autograd kernel to DispatchKey::CompositeImplicitAutograd. If you have "
        "an operator with requires_grad=True outputs, please use the torch.autograd.Function to register an "
        "autograd kernel.")


def _check_fake(custom, library_op: LibraryOp, args: tuple, kwargs: dict) -> None:
    """The fake implementation, run on real tensors, gives results of the real kernel's shapes and dtypes."""
    from ._library.operators import _tensors_of

    if library_op.fake is None:
        if not library_op.schema.returns:  # (PyTorch generates a trivial one for an operator returning nothing)
            return
        if custom is not None:
            raise RuntimeError(
                f"There was no fake impl registered for {custom}. This is necessary for torch.compile/export/fx "
                f"tracing to work. Please use `{custom._init_fn.__name__}.register_fake` to add an fake impl.")
        raise RuntimeError(f"{library_op.qualname}: tensor with a meta device has no fake implementation "
                           "(tracegrad has no fake tensors: register one with torch.library.register_fake)")
    real = _tensors_of(_call(library_op, _cloned(args), _cloned(kwargs)))
    positional, keywords = library_op.split_arguments(library_op.bind(_cloned(args), _cloned(kwargs)))
    fake = _tensors_of(library_op.fake(*positional, **keywords))
    for r, f in zip(real, fake, strict=False):
        if r.shape != f.shape or r.dtype != f.dtype:
            raise RuntimeError(f"{library_op.qualname}: the fake implementation gives a result of shape {f.shape} "
                               f"and dtype {f.dtype} where the kernel gives {r.shape} and {r.dtype}")
    if len(real) != len(fake):
        raise RuntimeError(f"{library_op.qualname}: the fake implementation gives {len(fake)} tensors where the "
                           f"kernel gives {len(real)}")


def _check_aot(custom, library_op: LibraryOp, args: tuple, kwargs: dict) -> None:
    _check_fake(custom, library_op, args, kwargs)
    _check_autograd_registration(custom, library_op, args, kwargs)
