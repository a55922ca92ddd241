"""PyTorch's ``__torch_function__`` protocol: Tensor subclasses, duck types and ``TorchFunctionMode``.

A call of a torch function, Tensor method, Python operator or property reaches the ``__torch_function__`` of its
arguments' types (subclasses before their bases, else left to right) and of the innermost active mode, as in
torch/overrides.py. The default ``Tensor.__torch_function__`` runs the function with subclass handling off and
gives Tensor results the subclass's class.

Zero cost while unused: nothing here runs until the protocol is *live*, that is while a Tensor subclass with a
``__torch_function__`` of its own exists (``Tensor.__init_subclass__`` notes it; a weak reference notices its
end) or a mode is entered. Going live sets ``STATE.torch_function`` (``OpDef.__call__`` then checks its arguments,
through ``STATE.op_call_checks``) and puts routing wrappers in place of the Tensor methods, operators and properties
and of the public Python functions of the torch namespaces; going dead puts the originals back. Plain tensors keep
the fused fast paths while only a subclass is live: those send other classes to ``OpDef.__call__``; a mode, or a
module's forward given a subclass instance (``GeneralPath``), sets ``STATE.special`` so that every operator does.
A non-Tensor object with a ``__torch_function__`` (a duck type) needs none of that: it is handled where the
argument parser would refuse it (``OpDef.__call__``'s error path, the operators' ``NotImplemented``).
"""

from __future__ import annotations

import inspect
import sys
import types
import warnings
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from . import _torch_function_facts as _facts
from ._state import STATE

# ---- state ------------------------------------------------------------------------------------------------------

_SUBCLASS_DISABLED = 1  # DisableTorchFunctionSubclass: modes still see calls
_ALL_DISABLED = 2  # DisableTorchFunction: neither subclasses nor modes
_disabled_level = 0
_modes: list = []  # TorchFunctionMode stack, innermost last
_general_depth = 0  # GeneralPath scopes entered
_live_subclasses: dict = {}  # id -> weakref of a Tensor subclass whose __torch_function__ is live
_originals: dict = {}  # (owner, name) -> the attribute the routing wrapper replaced


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """``torch._C._disabled_torch_function_impl``: a class whose ``__torch_function__`` is this one opts out
    (``nn.Parameter``): its instances are treated as plain tensors."""
    if kwargs is None:
        kwargs = {}
    return func(*args, **kwargs)


def _refresh() -> None:
    live = bool(_live_subclasses or _modes)
    if live != STATE.torch_function:
        _install_routing() if live else _remove_routing()
        STATE.torch_function = live
    STATE.torch_function_mode = bool(_modes) or _general_depth > 0
    STATE.refresh()


def note_subclass(cls: type) -> None:
    """A Tensor subclass was defined (``Tensor.__init_subclass__``): the protocol is live while it exists, unless
    it opts out or is one of tracegrad's own (``Buffer``, lazy parameters: never instantiated as such)."""
    if not defines_torch_function(cls) or cls.__module__.startswith("tracegrad."):
        return
    key = id(cls)
    _live_subclasses[key] = weakref.ref(cls, lambda _ref, key=key: _subclass_gone(key))
    _refresh()


def _subclass_gone(key: int) -> None:
    _live_subclasses.pop(key, None)
    _refresh()


def push_mode(mode) -> None:
    _modes.append(mode)
    _refresh()


def pop_mode():
    if not _modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = _modes.pop()
    _refresh()
    return mode


def mode_stack() -> list:
    return _modes


class _DisabledScope:
    """``with`` body run at a protocol level (``torch._C.DisableTorchFunction[Subclass]``)."""

    level = _SUBCLASS_DISABLED

    def __enter__(self):
        global _disabled_level
        self._saved = _disabled_level
        _disabled_level = max(_disabled_level, self.level)
        return self

    def __exit__(self, *exc: object) -> None:
        global _disabled_level
        _disabled_level = self._saved


class DisableTorchFunctionSubclass(_DisabledScope):
    """Subclasses' ``__torch_function__`` are not called inside (modes still are)."""


class DisableTorchFunction(_DisabledScope):
    """Neither subclasses' ``__torch_function__`` nor modes are called inside."""

    level = _ALL_DISABLED


class GeneralPath:
    """A body whose operators all take the general path, where ``OpDef.__call__`` checks each for the protocol:
    code that hands a subclass instance to tracegrad's internal fast paths, past the routing wrappers (an
    ``nn.Module``'s forward; torch's modules call the routed ``torch.nn.functional`` instead)."""

    def __enter__(self) -> GeneralPath:
        global _general_depth
        _general_depth += 1
        _refresh()
        return self

    def __exit__(self, *exc: object) -> None:
        global _general_depth
        _general_depth -= 1
        _refresh()


def is_torch_function_enabled() -> bool:
    return _disabled_level == 0


def is_torch_function_mode_enabled() -> bool:
    return bool(_modes) and _disabled_level < _ALL_DISABLED


# ---- which arguments take part --------------------------------------------------------------------------------------

def defines_torch_function(kind: type) -> bool:
    """Whether ``kind`` has a ``__torch_function__`` that is not the opt-out."""
    method = getattr(kind, "__torch_function__", None)
    return method is not None and getattr(method, "__func__", method) is not _disabled_torch_function_impl


def _takes_part(kind: type) -> bool:
    """A type whose ``__torch_function__`` is called: not a plain Tensor (torch's C++ checks skip it), not a
    builtin scalar."""
    return kind not in _NEVER and kind is not list and kind is not tuple and defines_torch_function(kind)


_PLAIN = frozenset({int, float, bool, complex, str, type(None), tuple, list, dict, slice, type(Ellipsis)})
# types that never take part, whose instances need no look inside: the plain Tensor joins them when the wrappers go
# in place (a set: one hash per argument on the wrappers' path, which every plain-tensor call takes while live)
_NEVER: set = set(_PLAIN - {tuple, list})


def relevant_args(args: tuple, kwargs: dict | None) -> Iterable:
    """The arguments a parser looks at: positional and keyword values, and the items of lists and tuples among
    them (Tensor[] arguments, indices)."""
    for value in (*args, *(kwargs.values() if kwargs else ())):
        if value.__class__ is list or value.__class__ is tuple:
            yield from value
        else:
            yield value


def overloaded_args(values: Iterable, takes_part: Callable[[type], bool] = _takes_part) -> list:
    """One argument per overloading type: subclasses before their base classes, otherwise left to right (torch's
    ``_get_overloaded_args``)."""
    found: list = []
    kinds: set = set()
    for value in values:
        kind = type(value)
        if kind in kinds or not takes_part(kind):
            continue
        kinds.add(kind)
        index = next((i for i, old in enumerate(found) if issubclass(kind, type(old))), len(found))
        found.insert(index, value)
    return found


# Types whose instances never take part (set when the routing goes in): a call with only these among its arguments
# and the items of its list and tuple arguments, and no mode, runs its original at once.
_plain_kinds: frozenset = frozenset()


def _plain_kinds_now() -> frozenset:
    from ._tensor import Tensor
    from .backend.device import device
    from .backend.dtypes import dtype
    from .nn.parameter import Parameter
    from .size import Size

    kinds = {Tensor, Parameter, dtype, device, Size}
    return _PLAIN | {kind for kind in kinds if not defines_torch_function(kind) or kind is Tensor}


def _plain_values(values: Iterable) -> bool:
    plain = _plain_kinds
    for value in values:
        kind = value.__class__
        if kind in plain:
            if kind is list or kind is tuple:
                for item in value:
                    if item.__class__ not in plain:
                        return False
            continue
        return False
    return True


def forward_needs_general_path(args: tuple, kwargs: dict) -> bool:
    """While the protocol is live without a mode: an ``nn.Module`` is called with a subclass instance (or duck)."""
    return STATE.torch_function and not STATE.special and not _plain_call(args, kwargs)


def _plain_call(args: tuple, kwargs: dict) -> bool:
    """The common call while the protocol is live: plain tensors and numbers only, no mode (tested with a loop of
    type lookups before any of ``wants``' work)."""
    return not _modes and _plain_values(args) and (not kwargs or _plain_values(kwargs.values()))


def wants(args: tuple, kwargs: dict | None) -> list | None:
    """The overloaded arguments of a call when the protocol applies to it (a mode is active, or an argument's type
    overrides and subclasses are not disabled), else None."""
    if _disabled_level >= _ALL_DISABLED:
        return None
    found = _overloaded_in_call(args, kwargs) if _disabled_level == 0 else []
    if found or _modes:
        return found
    return None


def _overloaded_in_call(args: tuple, kwargs: dict | None) -> list:
    """``overloaded_args`` of a call's relevant arguments, at the cost of a set lookup per argument in the usual
    call (plain tensors and numbers: ``_plain_values``)."""
    if _plain_values(args) and (not kwargs or _plain_values(kwargs.values())):
        return []
    return overloaded_args(relevant_args(args, kwargs))


def duck_typed(args: tuple, kwargs: dict | None) -> list | None:
    """The overloaded non-Tensor arguments (duck types) of a call the parser refuses, where the protocol is on."""
    from ._tensor import Tensor

    if _disabled_level:
        return None
    found = overloaded_args(relevant_args(args, kwargs),
                            lambda kind: not issubclass(kind, Tensor) and kind not in _PLAIN
                            and defines_torch_function(kind))
    return found or None


def self_only(args: tuple, kwargs: dict | None) -> list | None:
    """The overloaded arguments of a C++ method that takes nothing but ``self`` (``x.sin()``) or a property:
    ``self`` whatever its class, when a mode is active or its class overrides (torch's
    ``handle_torch_function(self, name)``, which hands handlers ``types == (type(self),)``)."""
    if _disabled_level >= _ALL_DISABLED:
        return None
    self = args[0]
    if _modes or (_disabled_level == 0 and _takes_part(self.__class__)):
        return [self]
    return None


def python_search(args: tuple, kwargs: dict | None) -> list | None:
    """The overloaded arguments of a torch function or method written in Python: ``torch.overrides``' search, which
    counts a plain Tensor (its ``__torch_function__`` is the default one), none while subclasses are disabled."""
    if _disabled_level >= _ALL_DISABLED:
        return None
    if _disabled_level:
        return [] if _modes else None
    found = overloaded_args(relevant_args(args, kwargs), defines_torch_function)
    if _modes or any(_takes_part(arg.__class__) for arg in found):
        return found
    return None


def _finder_of(owner: str, name: str) -> Callable[[tuple, dict | None], list | None]:
    """How torch finds the overloaded arguments of ``owner.name``'s calls (``_torch_function_facts``)."""
    if owner == "torch.Tensor":
        if name in _facts.SELF_ONLY_METHODS:
            return self_only
        return python_search if name in _facts.PYTHON_METHODS else wants
    return python_search if name in _facts.PYTHON_FUNCTIONS.get(owner, ()) else wants


# ---- calling the handlers --------------------------------------------------------------------------------------

def handle(func: Callable, overloaded: list, args: tuple, kwargs: dict | None, python_api: bool = False) -> Any:
    """Call the innermost mode's, then each overloaded argument's type's ``__torch_function__`` until one does not
    return NotImplemented (torch's ``handle_torch_function``). ``python_api``: the wording of torch's Python
    ``handle_torch_function`` for a refusal, else its C++ one."""
    kwargs = {} if kwargs is None else kwargs
    kinds = tuple(type(arg) for arg in overloaded)
    mode = None
    if is_torch_function_mode_enabled():
        mode = _modes.pop()  # (the mode sees its own calls of torch functions without itself)
        try:
            result = mode.__torch_function__(func, kinds, args, kwargs)
        finally:
            _modes.append(mode)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = type(arg).__torch_function__(func, kinds, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(_refusal(func, overloaded, mode, python_api))


def _refusal(func: Callable, overloaded: list, mode, python_api: bool) -> str:
    # (torch names an operator of torch.ops as its C++ does: "torch.ops" and "ns.name" run together)
    name = getattr(func, "_torch_refusal_name", None) or public_name(func)
    if python_api:
        message = (f"no implementation found for '{name}' on types that implement __torch_function__: "
                   f"{[type(arg) for arg in overloaded]}")
        return message + (f" nor in mode {mode}" if mode is not None else "")
    handlers = ([f"  - mode object {mode}"] if mode is not None else []) + [
        f"  - tensor subclass {type(arg)}" for arg in overloaded]
    return (f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned NotImplemented:\n\n"
            + "\n".join(handlers) + "\n\nFor more information, try re-running with TORCH_LOGS=not_implemented")


def public_name(func: Callable) -> str:
    """``torch.add``, ``torch.Tensor.add``, ``torch.nn.functional.relu``: the name torch's messages give."""
    from ._tensor import Tensor

    accessor = _property_accessor_name(func)
    if accessor is not None:
        return accessor
    name = getattr(func, "_torch_name", None) or getattr(func, "__name__", repr(func))
    owner = getattr(func, "_torch_owner", None) or (
        "torch.Tensor" if getattr(Tensor, name, None) is func else
        _NAMESPACES.get(getattr(func, "__module__", None), "torch"))
    return f"{owner}.{name}"


def _property_accessor_name(func: Callable) -> str | None:
    """``torch.Tensor.dtype.__get__`` for a Tensor property's ``__get__``/``__set__`` (what handlers get for an
    attribute read or write), as torch's ``resolve_name`` gives it; None for other functions."""
    from ._tensor import Tensor

    prop = getattr(func, "__self__", None)
    if prop.__class__ is not property or func.__name__ not in ("__get__", "__set__"):
        return None
    for kind in Tensor.__mro__:
        for name, value in vars(kind).items():
            if value is prop:
                return f"torch.Tensor.{name}.{func.__name__}"
    return None


def default_torch_function(cls: type, func: Callable, kinds: tuple, args: tuple = (), kwargs: dict | None = None):
    """``Tensor.__torch_function__``: run ``func`` with subclass handling off; Tensor results become ``cls``."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, kind) for kind in kinds):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        result = func(*args, **kwargs)
        if func in default_nowrap_functions():
            return result
        return convert(result, cls)


def convert(result: Any, cls: type) -> Any:
    """torch's ``_tensor._convert``: a Tensor that is not a ``cls`` becomes one (``as_subclass``), in tuples and
    lists too."""
    from ._tensor import Tensor

    if cls is Tensor:
        return result
    if isinstance(result, Tensor) and not isinstance(result, cls):
        result = result.as_subclass(cls)
    if isinstance(result, (tuple, list)):
        items = [convert(item, cls) for item in result]
        kind = type(result)
        result = kind(items) if kind in (tuple, list) or not hasattr(kind, "_make") else kind._make(items)
    return result


def default_nowrap_functions() -> set:
    """Functions whose Tensor results the default ``__torch_function__`` leaves as they are."""
    from ._tensor import Tensor

    return {Tensor.grad.__get__}


# ---- routing wrappers (in place only while the protocol is live) ----------------------------------------------------

# Tensor attributes torch does not route (machinery, and what the default handler itself calls)
_NOT_ROUTED = frozenset({"__init__", "__new__", "__init_subclass__", "__torch_function__", "__getattribute__",
                         "__getattr__", "__setattr__", "__delattr__", "__class__", "__subclasshook__", "__dir__",
                         "__reduce__", "__sizeof__", "__weakref__", "__dict__", "as_subclass", "_make_subclass"})
# Python protocol methods torch routes
_ROUTED_DUNDERS = frozenset({
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
    "__truediv__", "__rtruediv__", "__itruediv__", "__div__", "__idiv__", "__floordiv__", "__rfloordiv__",
    "__ifloordiv__", "__mod__", "__rmod__", "__imod__", "__pow__", "__rpow__", "__ipow__", "__matmul__",
    "__rmatmul__", "__and__", "__rand__", "__iand__", "__or__", "__ror__", "__ior__", "__xor__", "__rxor__",
    "__ixor__", "__lshift__", "__rlshift__", "__ilshift__", "__rshift__", "__rrshift__", "__irshift__",
    "__neg__", "__pos__", "__abs__", "__invert__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__getitem__", "__setitem__", "__len__", "__reversed__", "__contains__", "__bool__", "__float__",
    "__int__", "__index__", "__complex__", "__format__", "__repr__", "__array__", "__deepcopy__"})


def _routed_names(cls: type) -> list:
    names = []
    for name, value in vars(cls).items():
        if name in _NOT_ROUTED or (name.startswith("_") and name not in _ROUTED_DUNDERS):
            continue
        if isinstance(value, (types.FunctionType, property)) or (callable(value) and name in _ROUTED_DUNDERS
                                                                   and not isinstance(value, type)):
            names.append(name)
    return names


def _routing_function(original: Callable, name: str, owner: str, reflects_type_errors: bool,
                      func_of: Callable[[], Callable] | None = None) -> Callable:
    """``original`` behind the protocol's check; the wrapper is the ``func`` handlers see (``Tensor.add``), or
    what ``func_of()`` gives (an operator's method: ``x * y`` is ``Tensor.mul`` to handlers, as in torch)."""
    find = _finder_of(owner, name)
    if (owner, name) in _DATA_FACTORIES:
        return _routing_data_factory(original, name, owner, _DATA_FACTORIES[owner, name], find)

    def routed(*args, **kwargs):
        if _plain_call(args, kwargs):
            return original(*args, **kwargs)
        found = find(args, kwargs)
        if found is None:
            return original(*args, **kwargs)
        func = routed if func_of is None else func_of()
        if reflects_type_errors:  # (torch's operators: a TypeError of a handler is NotImplemented)
            try:
                return handle(func, found, args, kwargs)
            except TypeError:
                return NotImplemented
        return handle(func, found, args, kwargs)

    return _dressed(routed, original, name, owner)


def _dressed(routed: Callable, original: Callable, name: str, owner: str) -> Callable:
    """A routing wrapper named as torch's function it stands for (handlers read ``func.__name__``,
    ``__qualname__`` and ``__module__``) and documented as ``original``, noted as a wrapper (its frames are skipped
    by the warnings and the duck-type frame walk)."""
    routed.__name__, routed.__qualname__, routed.__module__ = torch_names(owner, name)
    routed._torch_name = name
    # (torch's resolve_name gives torch.functional's functions by that module: torch.functional.norm)
    routed._torch_owner = "torch.functional" if routed.__module__ == "torch.functional" else owner
    routed.__doc__ = getattr(original, "__doc__", None)
    routed.__wrapped__ = original
    _ROUTING_CODES.add(routed.__code__)
    return routed


# where torch keeps the builtins of its namespaces: (module, class, prefix of their names)
_BUILTIN_HOMES = {"torch": ("torch", "_VariableFunctionsClass.", ""),
                  "torch.linalg": ("torch._C._linalg", "", "linalg_"),
                  "torch.special": ("torch._C._special", "", "special_"), "torch.fft": ("torch._C._fft", "", "fft_")}


def torch_names(owner: str, name: str) -> tuple[str, str, str | None]:
    """``(__name__, __qualname__, __module__)`` of torch's ``owner.name``: ``TensorBase.add`` (a C++ method, no
    module), ``Tensor.__len__`` of torch._tensor, ``_VariableFunctionsClass.add`` of torch, ``relu`` of
    torch.nn.functional."""
    if owner == "torch.Tensor":
        if name not in _facts.PYTHON_METHODS:
            return name, f"TensorBase.{name}", None
        return (*_facts.PYTHON_METHOD_NAMES.get(name, (name, f"Tensor.{name}")), "torch._tensor")
    other = _facts.OTHER_NAMES.get((owner, name))
    if other is not None:
        return other
    module = _facts.PYTHON_FUNCTIONS.get(owner, {}).get(name)
    if module is not None:
        return name, name, module
    if owner == "torch.nn.functional":
        if name in _facts.NN_BUILTINS:
            return name, name, "torch._C._nn"
        owner = "torch"  # (its other builtins are torch's: F.conv2d is torch.conv2d)
    module, cls, prefix = _BUILTIN_HOMES.get(owner, (owner, "", ""))
    return prefix + name, cls + prefix + name, module


def _routing_data_factory(original: Callable, name: str, owner: str, relevant: int,
                          find: Callable[[tuple, dict | None], list | None]) -> Callable:
    """A factory whose data is any Python object to copy (torch's parser reads it as ``PyObject*``): a subclass
    instance given as the data takes no part, its copy is a plain Tensor; modes, and the ``relevant`` first
    arguments (``self`` of ``new_tensor``), still do."""
    def routed(*args, **kwargs):
        found = find(args[:relevant], None)
        if found is not None:
            return handle(routed, found, args, kwargs)
        with DisableTorchFunctionSubclass():
            return original(*args, **kwargs)

    return _dressed(routed, original, name, owner)


def _routing_property(original: property) -> property:
    def fget(self):
        if self.__class__ in _plain_kinds and not _modes:
            return original.fget(self)
        found = self_only((self,), None)
        if found is None:
            return original.fget(self)
        return handle(routed.__get__, found, (self,), None)

    def fset(self, value):
        # (torch's setters look at ``self`` only: ``p.grad = subclass_instance`` calls no handler, and the C++
        # setter's reads of the value call none either)
        found = None if self.__class__ in _plain_kinds and not _modes else self_only((self,), None)
        if found is not None:
            return handle(routed.__set__, found, (self, value), None)
        if value.__class__ in _plain_kinds:
            return original.fset(self, value)
        with DisableTorchFunctionSubclass():
            return original.fset(self, value)

    routed = property(fget, fset if original.fset is not None else None, original.fdel, original.__doc__)
    _ROUTING_CODES.update((fget.__code__, fset.__code__))
    return routed


# ---- warnings past the routing wrappers -----------------------------------------------------------------------

_ROUTING_CODES: set = set()  # the code of the wrappers' frames
_plain_warn = warnings.warn


def _warn_past_routing(message, category=None, stacklevel: int = 1, source=None):
    """``warnings.warn`` while the wrappers are in place: its ``stacklevel`` counts no wrapper's frame, so that a
    warning (tracegrad's, at the user's line) shows where it does without them, as torch's C++ entry points add no
    Python frame."""
    frame = sys._getframe(1)
    skipped = 0
    for _ in range(max(stacklevel, 1) - 1):
        frame = frame.f_back
        while frame is not None and frame.f_code in _ROUTING_CODES:
            frame = frame.f_back
            skipped += 1
        if frame is None:
            break
    return _plain_warn(message, category, stacklevel + skipped + 1, source)


def _install_routing() -> None:
    from ._tensor import Tensor

    _NEVER.add(Tensor)
    warnings.warn = _warn_past_routing
    global _plain_kinds
    _plain_kinds = _plain_kinds_now()

    wrappers: dict = {}  # id(original) -> its wrapper: an alias gets its first name's (see _route_aliases)
    for name in _routed_names(Tensor):
        original = Tensor.__dict__[name]
        _originals[(Tensor, name)] = original
        wrapper = wrappers.get(id(original))
        if wrapper is None:
            wrapper = wrappers[id(original)] = _routing_attribute(Tensor, name, original)
        setattr(Tensor, name, wrapper)
    _route_aliases(Tensor, wrappers)
    for module, owner in _routed_modules():
        only = _ROUTED_ONLY.get(module.__name__)
        for name, value in list(vars(module).items()):
            if name.startswith("_") or not isinstance(value, types.FunctionType) or name in _NOT_ROUTED_FUNCTIONS:
                continue
            if only is not None and name not in only:
                continue
            _originals[(module, name)] = value
            setattr(module, name, _routing_function(value, name, owner, False))
        for private, public in _PRIVATE_ENTRIES.get(module.__name__, {}).items():
            _originals[(module, private)] = original = vars(module)[private]
            setattr(module, private, _routing_function(original, public, owner, False,
                                                       lambda module=module, public=public: getattr(module, public)))
    _route_module_functions()
    _name_operators_as_torch()


def _routing_attribute(cls: type, name: str, original):
    """The routing wrapper of Tensor attribute ``name`` (a property's or a function's)."""
    if isinstance(original, property):
        return _routing_property(original)
    method = _METHOD_OF_OPERATOR.get(name)
    func_of = None if method is None else (lambda method=method: getattr(cls, method))
    return _routing_function(original, name, "torch.Tensor", name in _BINARY_OPERATORS, func_of)


def _route_aliases(cls: type, wrappers: dict) -> None:
    """Other names of routed functions (``__rdiv__``, ``__rtruediv__``'s) routed by the same wrapper: aliases stay
    one object while routing is live (``Tensor.__idiv__ is Tensor.__itruediv__``), and a handler sees the call by
    either name as torch reports it (``Tensor.__rdiv__``, not the reciprocal and product inside)."""
    for name, value in list(vars(cls).items()):
        wrapper = wrappers.get(id(value))
        if wrapper is not None and (cls, name) not in _originals and callable(value):
            _originals[(cls, name)] = value
            setattr(cls, name, wrapper)


def _name_operators_as_torch() -> None:
    """The operators of the torch namespaces, OpDef instances (never wrapped: ``OpDef.__call__`` hands them to
    handlers), named as torch's builtins (``torch.sin``: ``_VariableFunctionsClass.sin`` of module torch). Once:
    an operator held by two namespaces keeps the first's names (``_NAMESPACES``' order)."""
    from .ops.registry import OpDef

    for module, owner in _routed_modules():
        for name, value in vars(module).items():
            if isinstance(value, OpDef) and not name.startswith("_") and "_torch_owner" not in vars(value):
                value.__name__, value.__qualname__, value.__module__ = torch_names(owner, name)
                value._torch_owner, value._torch_name = owner, name


def _route_module_functions() -> None:
    """The nn modules' ``_fn`` (the functional a module's forward calls, held as a staticmethod so that the call
    costs no name lookup) replaced by its routing wrapper: torch's modules call ``F.relu``/``F.conv2d``, which
    handlers see as that one call, not as the functional's insides."""
    import sys

    nn = sys.modules.get("tracegrad.nn")
    if nn is None:
        return
    wrappers = {id(original): getattr(module, name) for (module, name), original in list(_originals.items())
                if isinstance(module, types.ModuleType)}
    for kind in vars(nn).values():
        held = vars(kind).get("_fn") if isinstance(kind, type) else None
        if isinstance(held, staticmethod) and id(held.__func__) in wrappers:
            _originals[(kind, "_fn")] = held
            kind._fn = staticmethod(wrappers[id(held.__func__)])


def _remove_routing() -> None:
    if warnings.warn is _warn_past_routing:
        warnings.warn = _plain_warn
    for (owner, name), original in _originals.items():
        setattr(owner, name, original)
    _originals.clear()
    _by_code.clear()  # (the namespaces hold other functions again)


# Python operators that torch's handlers see as a method (``x * y`` is ``Tensor.mul``; ``x ** y``, ``Tensor.pow``)
_METHOD_OF_OPERATOR = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__isub__": "sub_", "__mul__": "mul",
    "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div", "__itruediv__": "div_", "__div__": "div",
    "__idiv__": "div_", "__ifloordiv__": "floor_divide_", "__mod__": "remainder", "__imod__": "remainder_",
    "__matmul__": "matmul", "__rand__": "bitwise_and", "__ror__": "bitwise_or",
    "__rxor__": "bitwise_xor", "__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__ne__": "ne",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge"}
# binary operators, whose handler's TypeError becomes NotImplemented (torch's TypeError_to_NotImplemented_)
_BINARY_OPERATORS = frozenset(name for name in _ROUTED_DUNDERS if name not in {
    "__neg__", "__pos__", "__abs__", "__invert__", "__getitem__", "__setitem__", "__len__", "__iter__",
    "__reversed__", "__contains__", "__bool__", "__float__", "__int__", "__index__", "__complex__", "__format__",
    "__repr__", "__hash__", "__array__", "__deepcopy__"})
# namespace functions torch leaves out of the protocol (torch.overrides.get_ignored_functions' common ones)
_NOT_ROUTED_FUNCTIONS = frozenset({
    "is_tensor", "is_storage", "set_default_dtype", "get_default_dtype", "set_default_tensor_type", "manual_seed",
    "seed", "initial_seed", "set_printoptions", "compile", "is_grad_enabled", "is_inference_mode_enabled",
    "set_default_device", "get_default_device", "use_deterministic_algorithms", "typename", "is_anomaly_enabled",
    "set_anomaly_enabled", "get_rng_state", "set_rng_state", "load", "save", "has_torch_function",
    "has_torch_function_unary", "has_torch_function_variadic", "handle_torch_function", "is_tensor_like"})


# torch factories whose data argument is read as a Python object, not a Tensor
# (owner, name) -> how many leading arguments take part
_DATA_FACTORIES = {("torch", "tensor"): 0, ("torch", "as_tensor"): 0, ("torch", "asarray"): 0,
                   ("torch.Tensor", "new_tensor"): 1}
# namespaces of which only some functions go through the protocol (torch.autograd's two that call
# handle_torch_function)
_ROUTED_ONLY = {"tracegrad.autograd": frozenset({"grad", "backward"})}
# private names modules call where torch's modules call the public function (nn.Linear's forward: F.linear)
_PRIVATE_ENTRIES = {"tracegrad.nn.functional": {"_linear_operator": "linear"}}


# tracegrad's namespaces whose public functions are routed, and the names torch gives them
_NAMESPACES = {"tracegrad": "torch", "tracegrad.nn.functional": "torch.nn.functional", "tracegrad.linalg":
               "torch.linalg", "tracegrad.special": "torch.special", "tracegrad.fft": "torch.fft",
               "tracegrad.autograd": "torch.autograd"}


def _routed_modules() -> list:
    return [(sys.modules[name], owner) for name, owner in _NAMESPACES.items() if name in sys.modules]


# ---- entry points for operators ---------------------------------------------------------------------------------

def handle_operator(op, args: tuple, kwargs: dict) -> Any:
    """``OpDef.__call__`` while the protocol is live: the handlers' result, or ``_NOT_HANDLED``."""
    if _plain_call(args, kwargs):
        return NOT_HANDLED
    found = wants(args, kwargs)
    if found is None:
        return NOT_HANDLED
    return handle(op, found, args, kwargs)


def handle_refused(func: Callable, args: tuple, kwargs: dict | None) -> Any:
    """A call the parser refuses: its duck types' handlers' result, or ``_NOT_HANDLED``. The handlers get the
    user's call (``x.add(duck)`` is ``Tensor.add``, not the ``torch.add`` it delegates to), as the routing
    wrappers give it while the protocol is live."""
    found = duck_typed(args, kwargs)
    if found is None:
        return NOT_HANDLED
    entry = None if STATE.torch_function else _entry_call(sys._getframe(1))
    entry_found = None if entry is None else duck_typed(entry[1], entry[2])
    if entry_found:  # (the duck came in with the user's call)
        (func, args, kwargs), found = entry, entry_found
    return handle(func, found, args, kwargs)


def _entry_call(frame: types.FrameType) -> tuple | None:
    """``(func, args, kwargs)`` of the call user code made into tracegrad that led to ``frame``: the outermost
    tracegrad frame, when it runs a public name that takes ``(*args, **kwargs)`` or ``(self, *args, **kwargs)``
    (the argument checking wrappers, the Tensor methods delegating to functions), whose arguments are the user's
    as given. None for others (their refusal's own call is the best known)."""
    entry = None
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "tracegrad":
        entry, frame = frame, frame.f_back
    code = None if entry is None else entry.f_code
    if code is None or not (code.co_flags & inspect.CO_VARARGS and code.co_flags & inspect.CO_VARKEYWORDS) or (
            code.co_argcount > 1 or code.co_kwonlyargcount):
        return None
    func = _public_function_of(entry)
    if func is None:
        return None
    given = entry.f_locals
    names = code.co_varnames
    first = (given[names[0]],) if code.co_argcount else ()
    return func, first + tuple(given[names[code.co_argcount]]), dict(given[names[code.co_argcount + 1]])


def _public_function_of(frame: types.FrameType) -> Callable | None:
    """The Tensor attribute or namespace function whose call ``frame`` runs (closures that share code are told
    apart by their cells), as handlers see it: an operator is its method (``Tensor.mul`` for ``x * y``)."""
    from ._tensor import Tensor

    for rebuilt in (False, True):
        for owner, name, function in _functions_running(frame.f_code, rebuilt):
            if not _same_cells(function, frame):
                continue
            if getattr(owner, name, None) is not function:
                break  # (the index is out of date: its namespace holds another function now)
            method = _METHOD_OF_OPERATOR.get(name) if owner is Tensor else None
            return getattr(Tensor, method) if method else function
        else:
            return None
    return None


_by_code: dict = {}  # code object -> [(owner, name, function)]: an index of _public_functions()


def _functions_running(code: types.CodeType, rebuild: bool) -> list:
    """The public functions whose code is ``code`` (the argument guards' closures share one), from an index of
    ``_public_functions()`` (a scan of some 2,000 names costs ~150 us a refused call)."""
    if rebuild or not _by_code:
        _by_code.clear()
        for owner, name, function in _public_functions():
            _by_code.setdefault(function.__code__, []).append((owner, name, function))
    return _by_code.get(code, ())


def _same_cells(function: types.FunctionType, frame: types.FrameType) -> bool:
    cells = function.__closure__ or ()
    given = frame.f_locals
    return all(given.get(name) is cell.cell_contents for name, cell in zip(function.__code__.co_freevars, cells))


def _public_functions() -> Iterable:
    """``(owner, name, function)`` for the Tensor methods and operators and the public functions of the torch
    namespaces (as they are now: not routed, the protocol being dead)."""
    from ._tensor import Tensor

    for name in _routed_names(Tensor):
        value = Tensor.__dict__[name]
        if isinstance(value, types.FunctionType):
            yield Tensor, name, value
    for module, _owner in _routed_modules():
        for name, value in vars(module).items():
            if not name.startswith("_") and isinstance(value, types.FunctionType):
                yield module, name, value


def refused_operand(method: str, args: tuple) -> Any:
    """A Python operator given an operand it does not take: the handler of a duck type among them (``func`` is
    ``Tensor.<method>``), else NotImplemented (Python goes on to the reflected operator)."""
    found = duck_typed(args, None)
    if found is None:
        return NotImplemented
    from ._tensor import Tensor

    try:
        return handle(getattr(Tensor, method), found, args, None)
    except TypeError:
        return NotImplemented


NOT_HANDLED = object()


class BuiltinFormula(DisableTorchFunction):
    """Scope of a built-in backward formula: torch's run in C++, out of the protocol's sight."""
