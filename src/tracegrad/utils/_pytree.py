"""Nested Python containers as trees of leaves (PyTorch's pure-Python ``torch.utils._pytree``).

A *pytree* is a nest of registered containers (tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque, the
``torch.return_types`` structseqs, and whatever ``register_pytree_node`` adds) whose other values are leaves;
``None`` is a leaf. ``tree_flatten`` gives the leaves in order and a ``TreeSpec`` describing the containers,
``tree_unflatten`` rebuilds the nest, ``tree_map`` applies a function to each leaf.

Everything a user can observe is torch's: dicts keep their insertion order (unlike the C++ pytree, which sorts
keys), every namedtuple class has node type ``namedtuple`` with the class as its context, the specs print, compare
and hash as torch's, and the errors for mismatched structures use torch's words. tracegrad's return types are named
tuples where torch's are C structseqs; they are registered as torch registers its structseqs (each class its own
node type, no context, not a namedtuple).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import threading
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from enum import Enum
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from .. import return_types as _return_types
from ..size import Size

__all__ = [
    "PyTree",
    "Context",
    "FlattenFn",
    "UnflattenFn",
    "DumpableContext",
    "ToDumpableContextFn",
    "FromDumpableContextFn",
    "PyTreeSpec",
    "TreeSpec",
    "LeafSpec",
    "keystr",
    "key_get",
    "register_pytree_node",
    "tree_is_leaf",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_unflatten",
    "tree_iter",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_structure",
    "tree_map",
    "tree_map_with_path",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "tree_all",
    "tree_any",
    "tree_all_only",
    "tree_any_only",
    "treespec_dumps",
    "treespec_loads",
    "treespec_pprint",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedtuple_instance",
    "is_structseq",
    "is_structseq_class",
    "is_structseq_instance",
]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
DumpableContext = Any  # anything json can dump
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
FlattenWithKeysFn = Callable[[PyTree], tuple[list[tuple[Any, Any]], Any]]
FlattenFunc, UnflattenFunc, FlattenWithKeysFunc = FlattenFn, UnflattenFn, FlattenWithKeysFn  # (older names)

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


class KeyEntry(Protocol):
    """One step of a key path: hashable, comparable, printable, and able to fetch its child from a parent."""

    def __hash__(self) -> int: ...

    def __eq__(self, other: object) -> bool: ...

    def __str__(self) -> str: ...

    def get(self, parent: Any) -> Any: ...


KeyPath = tuple[KeyEntry, ...]


# ---- the registry -------------------------------------------------------------------------------------------------


class NodeDef(NamedTuple):
    """How to take a container type apart (``flatten_fn``: children and a context) and put it back together."""

    type: type[Any]
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: FlattenWithKeysFn | None


class _SerializeNodeDef(NamedTuple):
    """How a container type's specs are written as JSON: its name there, and its context's converters."""

    typ: type[Any]
    serialized_type_name: str
    to_dumpable_context: ToDumpableContextFn | None
    from_dumpable_context: FromDumpableContextFn | None


_NODE_REGISTRY_LOCK = threading.RLock()
SUPPORTED_NODES: dict[type[Any], NodeDef] = {}
SUPPORTED_SERIALIZED_TYPES: dict[type[Any], _SerializeNodeDef] = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict[str, type[Any]] = {}
CONSTANT_NODES: set[type] = set()
# tracegrad's torch.return_types classes: named tuples that play torch's structseqs
_STRUCTSEQ_STAND_INS: set[type] = set()


def register_pytree_node(cls: type[Any], flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                         serialized_type_name: str | None = None,
                         to_dumpable_context: ToDumpableContextFn | None = None,
                         from_dumpable_context: FromDumpableContextFn | None = None,
                         flatten_with_keys_fn: FlattenWithKeysFn | None = None) -> None:
    """Make ``cls`` a container: ``flatten_fn(node) -> (children, context)``, ``unflatten_fn(children, context)``;
    ``flatten_with_keys_fn`` (children as ``(key, child)`` pairs) serves the key-path functions, the other keywords
    ``treespec_dumps``/``treespec_loads``. A type registers once."""
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls: type[Any], flatten_fn: FlattenFn, unflatten_fn: UnflattenFn,
                          to_str_fn: Callable | None = None, maybe_from_str_fn: Callable | None = None, *,
                          serialized_type_name: str | None = None,
                          to_dumpable_context: ToDumpableContextFn | None = None,
                          from_dumpable_context: FromDumpableContextFn | None = None,
                          flatten_with_keys_fn: FlattenWithKeysFn | None = None) -> None:
    """The older, deprecated spelling (still used by libraries): registers again with a warning instead of
    refusing."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. "
                  "Please use `torch.utils._pytree.register_pytree_node` instead.", FutureWarning, stacklevel=2)
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. "
                      "Please use `to_dumpable_context` and `from_dumpable_context` instead.",
                      FutureWarning, stacklevel=2)
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _private_register_pytree_node(cls: type[Any], flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                                  serialized_type_name: str | None = None,
                                  to_dumpable_context: ToDumpableContextFn | None = None,
                                  from_dumpable_context: FromDumpableContextFn | None = None,
                                  flatten_with_keys_fn: FlattenWithKeysFn | None = None) -> None:
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous registration.",
                          stacklevel=2)
        # (torch records the node before it checks the converters: a refused pair still leaves cls registered)
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) ^ (from_dumpable_context is None):
            raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must "
                             "be None or registered.")
        name = NO_SERIALIZED_TYPE_NAME_FOUND if serialized_type_name is None else serialized_type_name
        SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context, from_dumpable_context)
        SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def _deregister_pytree_node(cls: type[Any]) -> None:
    with _NODE_REGISTRY_LOCK:
        del SUPPORTED_NODES[cls]
        serialize_def = SUPPORTED_SERIALIZED_TYPES.pop(cls)
        del SERIALIZED_TYPE_TO_PYTHON_TYPE[serialize_def.serialized_type_name]
        CONSTANT_NODES.discard(cls)


# ---- key entries --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey(Generic[T]):
    """The position of a child in a sequence: prints as ``[0]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Sequence[T]) -> T:
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey(Generic[K, T]):
    """The key of a child in a mapping: prints as ``['a']``."""

    key: K

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Mapping[K, T]) -> T:
        return mapping[self.key]


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """The attribute holding a child (a namedtuple field, a dataclass field): prints as ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        return getattr(obj, self.name)


def _sequence_keys(flatten_fn: FlattenFn) -> FlattenWithKeysFn:
    """A ``flatten_with_keys_fn`` that names each child by its position."""
    def flatten_with_keys(node: Any) -> tuple[list[tuple[Any, Any]], Context]:
        children, context = flatten_fn(node)
        return [(SequenceKey(i), child) for i, child in enumerate(children)], context
    return flatten_with_keys


# ---- namedtuples and structseqs -----------------------------------------------------------------------------------


def is_namedtuple_class(cls: type) -> bool:
    """Whether ``cls`` is a namedtuple class (tuple with string ``_fields``, ``_make`` and ``_asdict``); tracegrad's
    return types answer False, as torch's structseqs do."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(field) is str for field in cls._fields)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None))
            and cls not in _STRUCTSEQ_STAND_INS)


def is_namedtuple(obj: object | type) -> bool:
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj: object) -> bool:
    return is_namedtuple_class(type(obj))


_TPFLAGS_BASETYPE = 1 << 10  # (CPython: the type may be subclassed; a structseq type may not)


def is_structseq_class(cls: type) -> bool:
    """Whether ``cls`` is a CPython structseq type (``os.stat_result``...) or one of tracegrad's return types."""
    if not isinstance(cls, type):
        return False
    if cls in _STRUCTSEQ_STAND_INS:
        return True
    return (cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, name, None), int)
                    for name in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))
            and not cls.__flags__ & _TPFLAGS_BASETYPE)


def is_structseq(obj: object | type) -> bool:
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj: object) -> bool:
    return is_structseq_class(type(obj))


# ---- the built-in containers --------------------------------------------------------------------------------------


def _tuple_flatten(node: tuple) -> tuple[list[Any], Context]:
    return list(node), None


def _tuple_unflatten(values: Iterable[Any], context: Context) -> tuple:
    return tuple(values)


def _list_flatten(node: list) -> tuple[list[Any], Context]:
    return node, None


def _list_unflatten(values: Iterable[Any], context: Context) -> list:
    return list(values)


def _dict_flatten(node: dict) -> tuple[list[Any], Context]:
    return list(node.values()), list(node.keys())


def _dict_flatten_with_keys(node: dict) -> tuple[list[tuple[Any, Any]], Context]:
    values, keys = _dict_flatten(node)
    return [(MappingKey(k), v) for k, v in zip(keys, values, strict=True)], keys


def _dict_unflatten(values: Iterable[Any], context: Context) -> dict:
    return dict(zip(context, values, strict=True))


def _ordereddict_unflatten(values: Iterable[Any], context: Context) -> OrderedDict:
    return OrderedDict(zip(context, values, strict=True))


def _namedtuple_flatten(node: tuple) -> tuple[list[Any], Context]:
    return list(node), type(node)


def _namedtuple_flatten_with_keys(node: tuple) -> tuple[list[tuple[Any, Any]], Context]:
    values, cls = _namedtuple_flatten(node)
    return [(GetAttrKey(field), v) for field, v in zip(cls._fields, values, strict=True)], cls


def _namedtuple_unflatten(values: Iterable[Any], context: Context) -> tuple:
    return context(*values)


def _namedtuple_serialize(context: Context) -> DumpableContext:
    serialize_def = SUPPORTED_SERIALIZED_TYPES.get(context)
    if serialize_def is None:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we "
                                  "didn't register a serializated_type_name. Please register using "
                                  "`_register_namedtuple`.")
    if serialize_def.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we "
                                  "couldn't find a serializated_type_name. Please register using "
                                  "`_register_namedtuple`.")
    return serialize_def.serialized_type_name


def _namedtuple_deserialize(dumpable_context: DumpableContext) -> Context:
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class {dumpable_context} "
                                  "because we couldn't find a serializated name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _defaultdict_flatten(node: defaultdict) -> tuple[list[Any], Context]:
    values, keys = _dict_flatten(node)
    return values, [node.default_factory, keys]


def _defaultdict_flatten_with_keys(node: defaultdict) -> tuple[list[tuple[Any, Any]], Context]:
    values, context = _defaultdict_flatten(node)
    return [(MappingKey(k), v) for k, v in zip(context[1], values, strict=True)], context


def _defaultdict_unflatten(values: Iterable[Any], context: Context) -> defaultdict:
    default_factory, keys = context
    return defaultdict(default_factory, _dict_unflatten(values, keys))


def _defaultdict_serialize(context: Context) -> DumpableContext:
    default_factory, keys = context
    return {"default_factory_module": default_factory.__module__,
            "default_factory_name": default_factory.__qualname__, "dict_context": keys}


def _defaultdict_deserialize(dumpable_context: DumpableContext) -> Context:
    if not isinstance(dumpable_context, dict):
        raise AssertionError("dumpable_context must be a dict")
    expected_keys = {"default_factory_module", "default_factory_name", "dict_context"}
    if set(dumpable_context) != expected_keys:
        raise AssertionError(f"dumpable_context keys must be {expected_keys}, got {set(dumpable_context)}")
    module_name, factory_name = dumpable_context["default_factory_module"], dumpable_context["default_factory_name"]
    if not isinstance(module_name, str):
        raise AssertionError("default_factory_module must be a string")
    if not isinstance(factory_name, str):
        raise AssertionError("default_factory_name must be a string")
    default_factory = getattr(importlib.import_module(module_name), factory_name)
    return [default_factory, dumpable_context["dict_context"]]


def _deque_flatten(node: deque) -> tuple[list[Any], Context]:
    return list(node), node.maxlen


def _deque_unflatten(values: Iterable[Any], context: Context) -> deque:
    return deque(values, maxlen=context)


def _register_builtin_containers() -> None:
    """The containers torch registers, under torch's serialized names."""
    def register(cls, flatten_fn, unflatten_fn, name, with_keys, to_dumpable=None, from_dumpable=None) -> None:
        _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=name,
                                      to_dumpable_context=to_dumpable, from_dumpable_context=from_dumpable,
                                      flatten_with_keys_fn=with_keys)

    register(tuple, _tuple_flatten, _tuple_unflatten, "builtins.tuple", _sequence_keys(_tuple_flatten))
    register(list, _list_flatten, _list_unflatten, "builtins.list", _sequence_keys(_list_flatten))
    register(dict, _dict_flatten, _dict_unflatten, "builtins.dict", _dict_flatten_with_keys)
    register(namedtuple, _namedtuple_flatten, _namedtuple_unflatten, "collections.namedtuple",
             _namedtuple_flatten_with_keys, _namedtuple_serialize, _namedtuple_deserialize)
    register(OrderedDict, _dict_flatten, _ordereddict_unflatten, "collections.OrderedDict", _dict_flatten_with_keys)
    register(defaultdict, _defaultdict_flatten, _defaultdict_unflatten, "collections.defaultdict",
             _defaultdict_flatten_with_keys, _defaultdict_serialize, _defaultdict_deserialize)
    register(deque, _deque_flatten, _deque_unflatten, "collections.deque", _sequence_keys(_deque_flatten))


_register_builtin_containers()


def _size_flatten(node: Size) -> tuple[list[Any], Context]:
    return list(node), None


# `import torch` imports torch.fx's proxy_tensor, which registers torch.Size: a node whose unflatten gives a tuple
register_pytree_node(Size, _size_flatten, lambda values, context: tuple(values),
                     flatten_with_keys_fn=_sequence_keys(_size_flatten), serialized_type_name="torch.Size")

STANDARD_DICT_TYPES: frozenset[type] = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES: frozenset[type] = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def _register_namedtuple(cls: type[Any], *, serialized_type_name: str) -> None:
    """Give a namedtuple class a serialized name, so that specs holding it can be dumped."""
    _private_register_pytree_node(cls, _namedtuple_flatten, _namedtuple_unflatten,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=_namedtuple_serialize,
                                  from_dumpable_context=_namedtuple_deserialize,
                                  flatten_with_keys_fn=_namedtuple_flatten_with_keys)


def _structseq_flatten(node: tuple) -> tuple[list[Any], Context]:
    return list(node), None


def register_structseq_node(cls: type) -> None:
    """``cls`` a node as torch registers its structseqs (``torch.return_types.pytree_register_structseq``): its own
    node type, no context, children keyed by position."""
    register_pytree_node(cls, _structseq_flatten, lambda values, context: cls(values),
                         flatten_with_keys_fn=_sequence_keys(_structseq_flatten))


def _register_return_type(cls: type) -> None:
    """A ``torch.return_types`` class: a structseq to the predicates, registered as torch registers them."""
    _STRUCTSEQ_STAND_INS.add(cls)
    register_structseq_node(cls)


_return_types.on_return_type(_register_return_type)


# ---- dataclasses and constants ------------------------------------------------------------------------------------


def _dataclass_field_names(cls: type[Any], field_names: list[str] | None, drop_field_names: list[str]) -> list[str]:
    """The fields ``register_dataclass`` flattens, checked against the dataclass's init fields as torch checks."""
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
        return field_names
    if field_names is None:
        return [f.name for f in dataclasses.fields(cls) if f.init]
    init_fields = {f.name for f in dataclasses.fields(cls) if f.init} - set(drop_field_names)
    if init_fields != set(field_names):
        message = "field_names does not include all dataclass fields.\n"
        if missing := init_fields - set(field_names):
            message += (f"Missing fields in `field_names`: {missing}. If you want to include these fields in the "
                        "pytree, please add them to `field_names`, otherwise please add them to "
                        "`drop_field_names`.\n")
        if unexpected := set(field_names) - init_fields:
            message += (f"Unexpected fields in `field_names`: {unexpected}. "
                        "Please remove these fields, or add them to `drop_field_names`.\n")
        raise ValueError(message)
    return field_names


def register_dataclass(cls: type[Any], *, field_names: list[str] | None = None,
                       drop_field_names: list[str] | None = None, serialized_type_name: str | None = None) -> None:
    """Register a class built from its fields (a dataclass, or any class given ``field_names``): the fields that
    are not None are its children, keyed by attribute."""
    names = _dataclass_field_names(cls, field_names, drop_field_names or [])

    def flatten(obj: Any) -> tuple[list[Any], Context]:
        present = [name for name in names if getattr(obj, name) is not None]
        absent = [name for name in names if getattr(obj, name) is None]
        return [getattr(obj, name) for name in present], [present, absent]

    def unflatten(values: Iterable[Any], context: Context) -> Any:
        present, absent = context
        return cls(**dict(zip(present, values, strict=True)), **dict.fromkeys(absent))

    def flatten_with_keys(obj: Any) -> tuple[list[tuple[Any, Any]], Context]:
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(k), v) for k, v in zip(present, values, strict=True)], present

    _private_register_pytree_node(cls, flatten, unflatten, serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=flatten_with_keys)


@dataclasses.dataclass(frozen=True, slots=True)
class ConstantNode(Generic[T]):
    value: T


def register_constant(cls: type[Any]) -> None:
    """Register a hashable, comparable type as a node without leaves: the instance rides in the spec."""
    if cls.__eq__ is object.__eq__:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` implementation.")
    if cls.__hash__ is None:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__hash__` implementation.")

    def flatten(obj: Any) -> tuple[list[Any], Context]:
        return [], ConstantNode(obj)

    with _NODE_REGISTRY_LOCK:
        _private_register_pytree_node(cls, flatten, lambda _, context: context.value, flatten_with_keys_fn=flatten)
        CONSTANT_NODES.add(cls)


def is_constant_class(cls: type[Any]) -> bool:
    return isinstance(cls, type) and cls in CONSTANT_NODES


# ---- leaves and node types ----------------------------------------------------------------------------------------


def _get_node_type(tree: Any) -> Any:
    """The registry key of ``tree``: its type, except that every namedtuple class is ``namedtuple`` (even one
    registered itself, as torch's callers expect)."""
    node_type = type(tree)
    return namedtuple if is_namedtuple_class(node_type) else node_type


def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``tree`` is a leaf: ``is_leaf`` says so, or its type is not a registered container."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


def _is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    warnings.warn("torch.utils._pytree._is_leaf is private and will be removed in a future release. "
                  "Please use torch.utils._pytree.tree_is_leaf instead.", FutureWarning, stacklevel=2)
    return tree_is_leaf(tree, is_leaf=is_leaf)


# ---- TreeSpec -----------------------------------------------------------------------------------------------------


@dataclasses.dataclass(init=False, frozen=True, eq=True, repr=False, slots=True)
class TreeSpec:
    """The structure of a pytree: the root's node type and context, and one spec per child (``*`` a leaf)."""

    type: Any
    _context: Context
    _children: list[TreeSpec]
    num_nodes: int = dataclasses.field(init=False)
    num_leaves: int = dataclasses.field(init=False)
    num_children: int = dataclasses.field(init=False)

    def __init__(self, type: Any, context: Context, children_specs: list[TreeSpec]) -> None:  # noqa: A002
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_children", children_specs)
        self.__post_init__()

    def __post_init__(self) -> None:
        if self.type is None:  # (a leaf)
            if self._context is not None:
                raise AssertionError("leaf node should not have a context")
            if len(self._children) != 0:
                raise AssertionError("leaf node should not have children")
            counts = (1, 1, 0)
        else:
            counts = (1 + sum(child.num_nodes for child in self._children),
                      sum(child.num_leaves for child in self._children), len(self._children))
        for name, count in zip(("num_nodes", "num_leaves", "num_children"), counts):
            object.__setattr__(self, name, count)

    def __repr__(self, indent: int = 0) -> str:
        head = f"TreeSpec({self.type.__name__}, {self._context}, ["
        if not self._children:
            return head + "])"
        indent += 2
        first, *rest = self._children
        body = first.__repr__(indent) + ("," if rest else "")
        body += ",".join("\n" + " " * indent + child.__repr__(indent) for child in rest)
        return head + body + "])"

    def __eq__(self, other: Any) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        # (types compare by their str, as torch's do)
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self) -> int:
        return hash((self.type, self._hashable_context(), tuple(self._children)))

    def _hashable_context(self) -> Any:
        """The context, made hashable where torch makes it so; None for a user type's (which may not hash)."""
        if self.type is defaultdict:
            default_factory, keys = self._context
            return default_factory, tuple(keys)
        if self.type in (dict, OrderedDict):
            return tuple(self._context)
        if self.type is None or self.type in BUILTIN_TYPES:
            return self._context
        if isinstance(self._context, ConstantNode):
            return self._context.value
        return None

    @property
    def context(self) -> Context:
        return self._context

    @property
    def children_specs(self) -> list[TreeSpec]:
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to access a single "
                      "child, or `treespec.children()` to get all children.", FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self) -> bool:
        """Whether this spec is a single leaf."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list[TreeSpec]:
        return self._children.copy()

    def child(self, index: int) -> TreeSpec:
        return self._children[index]

    def flatten_up_to(self, tree: PyTree) -> list[PyTree]:
        """The subtrees of ``tree`` where this spec has its leaves (``tree`` must have this spec as a prefix)."""
        subtrees: list[PyTree] = []
        self._collect_subtrees(tree, subtrees)
        return subtrees

    def _collect_subtrees(self, node: PyTree, subtrees: list[PyTree]) -> None:
        if self.is_leaf():
            subtrees.append(node)
            return
        children = self._matching_children(node)
        for child, child_spec in zip(children, self._children, strict=True):
            child_spec._collect_subtrees(child, subtrees)

    def _matching_children(self, node: PyTree) -> list[PyTree]:
        """``node``'s children in this spec's order, after checking that ``node`` is the container this spec
        describes: exactly for a user type; for the built-in ones any of dict/OrderedDict/defaultdict stands for
        another (their keys must match, in any order) and a deque's maxlen is not compared."""
        node_type = _get_node_type(node)
        if self.type not in BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
            return children
        both_dicts = self.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
        if not both_dicts and node_type != self.type:
            raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node_type!r}.")
        if len(node) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(node)}.")
        if both_dicts:
            return self._values_by_key(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        if node_type is not deque and context != self._context:
            raise ValueError(f"Node context mismatch for node type {self.type!r}; "
                             f"expected {self._context!r}, but got {context!r}.")
        return children

    def _values_by_key(self, node: Mapping) -> list[PyTree]:
        keys = self._context[1] if self.type is defaultdict else self._context  # (any default_factory will do)
        got, expected = set(node), set(keys)
        if got != expected:
            missing, extra = expected.difference(got), got.difference(expected)
            message = f"; missing key(s): {missing}" if missing else ""
            message += f"; extra key(s): {extra}" if extra else ""
            raise ValueError(f"Node keys mismatch{message}.")
        return [node[key] for key in keys]

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """The pytree of this structure holding ``leaves`` in order."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        if self.is_leaf():
            return leaves[0]
        children, start = [], 0
        for child_spec in self._children:
            end = start + child_spec.num_leaves
            children.append(child_spec.unflatten(leaves[start:end]))
            start = end
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


@dataclasses.dataclass(init=False, frozen=True, eq=False, repr=False, slots=True)
class LeafSpec(TreeSpec):
    """The spec of a leaf, printed ``*`` (deprecated as a class: test ``spec.is_leaf()``)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> LeafSpec:
        # (in __new__, as torch's deprecation wrapper: copies and unpickled leaf specs warn too)
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, "
                      "use `isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.",
                      FutureWarning, stacklevel=2)
        return object.__new__(cls)

    def __init__(self) -> None:
        self._become_leaf()

    def _become_leaf(self) -> None:
        for name, value in (("type", None), ("_context", None), ("_children", []), ("num_nodes", 1),
                            ("num_leaves", 1), ("num_children", 0)):
            object.__setattr__(self, name, value)

    def __repr__(self, indent: int = 0) -> str:
        return "*"


def _make_leaf_spec() -> LeafSpec:
    spec = object.__new__(LeafSpec)
    spec._become_leaf()
    return spec


_LEAF_SPEC = _make_leaf_spec()  # (all leaves share one spec)


def treespec_leaf() -> LeafSpec:
    return _LEAF_SPEC


def treespec_tuple(iterable: Iterable[TreeSpec] = (), /) -> TreeSpec:
    children = list(iterable)
    if any(not isinstance(child, TreeSpec) for child in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping: Mapping[Any, TreeSpec] | Iterable[tuple[Any, TreeSpec]] = (), /,
                  **kwargs: TreeSpec) -> TreeSpec:
    children = dict(mapping, **kwargs)
    if any(not isinstance(child, TreeSpec) for child in children.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {children!r}.")
    return TreeSpec(dict, list(children.keys()), list(children.values()))


# ---- flattening and mapping ---------------------------------------------------------------------------------------


def tree_flatten(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and the spec that ``tree_unflatten`` rebuilds it from."""
    leaves: list[Any] = []

    def spec_of(node: PyTree) -> TreeSpec:
        if tree_is_leaf(node, is_leaf=is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [spec_of(child) for child in children])

    return leaves, spec_of(tree)


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """The pytree of ``treespec``'s structure holding ``leaves`` (the two may come in either order)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of "
                            f"PyTreeSpec but got item of type {type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> Iterator[Any]:
    """The leaves of ``tree``, one at a time."""
    if tree_is_leaf(tree, is_leaf=is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf=is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list[Any]:
    return list(tree_iter(tree, is_leaf=is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf=is_leaf)[1]


def _leaves_and_matching(tree: PyTree, rests: tuple, is_leaf) -> tuple[TreeSpec, list[list[Any]]]:
    """``tree``'s spec, and per leaf position the leaf of ``tree`` and the subtree of each of ``rests`` there."""
    leaves, treespec = tree_flatten(tree, is_leaf=is_leaf)
    return treespec, [leaves] + [treespec.flatten_up_to(rest) for rest in rests]


def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """A new pytree of ``tree``'s structure holding ``func(leaf, *matching)`` at each leaf, ``matching`` the
    subtrees of ``rests`` at that position (each of ``rests`` must have ``tree``'s structure as a prefix)."""
    treespec, columns = _leaves_and_matching(tree, rests, is_leaf)
    return treespec.unflatten(map(func, *columns))


def tree_map_(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
              is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree_map`` for the side effects: calls ``func`` at each leaf and returns ``tree`` itself."""
    _, columns = _leaves_and_matching(tree, rests, is_leaf)
    for _ in map(func, *columns):
        pass
    return tree


def map_only(type_or_types_or_pred: Any, /) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Decorate a function to apply only to values of the given type(s), or for which the predicate holds, and
    to return any other value as it is."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(value: Any) -> bool:
            return isinstance(value, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func: Callable[[Any], Any]) -> Callable[[Any], Any]:
        @functools.wraps(func)
        def wrapped(value: Any) -> Any:
            return func(value) if pred(value) else value
        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred: Any, /, func: Callable[[Any], Any], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree_map`` of ``func`` over the leaves of the given type(s) (or satisfying the predicate) only."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred: Any, /, func: Callable[[Any], Any], tree: PyTree,
                   is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types: Any, /, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types: Any, /, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def arg_tree_leaves(*args: PyTree, **kwargs: PyTree) -> list[Any]:
    """``tree_leaves((args, kwargs))``, a little faster."""
    return [leaf for arg in (*args, *kwargs.values()) for leaf in tree_iter(arg)]


def _broadcast_to_and_flatten(tree: PyTree, treespec: TreeSpec,
                              is_leaf: Callable[[PyTree], bool] | None = None) -> list[Any] | None:
    """``tree`` (a prefix of ``treespec``'s structure, as vmap's ``in_dims``) repeated over the leaves under each
    of its leaves; None when it is no prefix."""
    full_tree = tree_unflatten([0] * treespec.num_leaves, treespec)
    result: list[Any] = []

    def repeat_over(value: Any, subtree: PyTree) -> None:
        result.extend([value] * tree_structure(subtree, is_leaf=is_leaf).num_leaves)

    try:
        tree_map_(repeat_over, tree, full_tree, is_leaf=is_leaf)
    except ValueError:
        return None
    return result


# ---- key paths ----------------------------------------------------------------------------------------------------


def _generate_key_paths(key_path: KeyPath, tree: PyTree,
                        is_leaf: Callable[[PyTree], bool] | None = None) -> Iterator[tuple[KeyPath, Any]]:
    if is_leaf and is_leaf(tree):
        yield key_path, tree
        return
    node_type = _get_node_type(tree)
    node_def = SUPPORTED_NODES.get(node_type)
    if not node_def:
        yield key_path, tree
        return
    if not node_def.flatten_with_keys_fn:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. "
                         "Please pass a flatten_with_keys_fn argument to register_pytree_node.")
    keyed_children, _ = node_def.flatten_with_keys_fn(tree)
    for key, child in keyed_children:
        yield from _generate_key_paths((*key_path, key), child, is_leaf)


def tree_flatten_with_path(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], TreeSpec]:
    """``tree_flatten`` with each leaf paired with its key path."""
    _, treespec = tree_flatten(tree, is_leaf)
    return list(_generate_key_paths((), tree, is_leaf)), treespec


def tree_leaves_with_path(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                          ) -> list[tuple[KeyPath, Any]]:
    return list(_generate_key_paths((), tree, is_leaf))


def tree_map_with_path(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
                       is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``tree_map`` whose ``func`` takes the leaf's key path first."""
    keyed_leaves, treespec = tree_flatten_with_path(tree, is_leaf)
    columns = list(zip(*keyed_leaves, strict=True)) + [treespec.flatten_up_to(rest) for rest in rests]
    return treespec.unflatten(func(*row) for row in zip(*columns, strict=True))


def keystr(kp: KeyPath) -> str:
    """A key path as Python would index it: ``[0]['a'].b``."""
    return "".join(str(key) for key in kp)


def key_get(obj: Any, kp: KeyPath) -> Any:
    """The value at key path ``kp`` inside ``obj``."""
    for key in kp:
        obj = key.get(obj)
    return obj


# ---- serialization ------------------------------------------------------------------------------------------------


class EnumEncoder(json.JSONEncoder):
    """JSON for contexts holding enum members: the member's class (module:qualname) and name."""

    def default(self, obj: object) -> Any:
        if isinstance(obj, Enum):
            cls = obj.__class__
            return {"__enum__": True, "fqn": f"{cls.__module__}:{cls.__qualname__}", "name": obj.name}
        return super().default(obj)


def enum_object_hook(obj: dict[str, Any]) -> Any:
    if "__enum__" not in obj:
        return obj
    module_name, _, qualname = obj["fqn"].partition(":")
    enum_cls = importlib.import_module(module_name)
    for attr in qualname.split("."):
        enum_cls = getattr(enum_cls, attr)
    return enum_cls[obj["name"]]


@dataclasses.dataclass
class _TreeSpecSchema:
    """A spec as JSON: the type's serialized name (None for a leaf), its dumped context, the children's."""

    type: str | None
    context: DumpableContext
    children_spec: list[_TreeSpecSchema]


def _treespec_to_json(treespec: TreeSpec) -> _TreeSpecSchema:
    if treespec.is_leaf():
        return _TreeSpecSchema(None, None, [])
    serialize_def = SUPPORTED_SERIALIZED_TYPES.get(treespec.type)
    if serialize_def is None:
        raise NotImplementedError(f"Serializing {treespec.type} in pytree is not registered.")
    if serialize_def.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"No registered serialization name for {treespec.type} found. "
                                  "Please update your _register_pytree_node call with a `serialized_type_name` "
                                  "kwarg.")
    if serialize_def.to_dumpable_context is not None:
        context = serialize_def.to_dumpable_context(treespec._context)
    else:
        try:
            context = json.dumps(treespec._context, cls=EnumEncoder)
        except TypeError as exc:
            raise TypeError("Unable to serialize context. Please make the context json dump-able, or register a "
                            "custom serializer using _register_pytree_node.") from exc
    children = [_treespec_to_json(child) for child in treespec._children]
    return _TreeSpecSchema(serialize_def.serialized_type_name, context, children)


def _json_to_treespec(json_schema: DumpableContext) -> TreeSpec:
    if json_schema["type"] is None and json_schema["context"] is None and len(json_schema["children_spec"]) == 0:
        return _LEAF_SPEC
    if json_schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {json_schema['type']} in pytree is not registered.")
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE[json_schema["type"]]
    serialize_def = SUPPORTED_SERIALIZED_TYPES[typ]
    if serialize_def.from_dumpable_context is not None:
        context = serialize_def.from_dumpable_context(json_schema["context"])
    else:
        try:
            context = json.loads(json_schema["context"], object_hook=enum_object_hook)
        except TypeError as exc:
            raise TypeError("Unable to deserialize context. Please make the context json load-able, or register a "
                            "custom serializer using _register_pytree_node.") from exc
    return TreeSpec(typ, context, [_json_to_treespec(child) for child in json_schema["children_spec"]])


class _ProtocolFn(NamedTuple):
    treespec_to_json: Callable[[TreeSpec], DumpableContext]
    json_to_treespec: Callable[[DumpableContext], TreeSpec]


_SUPPORTED_PROTOCOLS: dict[int, _ProtocolFn] = {1: _ProtocolFn(_treespec_to_json, _json_to_treespec)}


def _unknown_protocol(protocol: Any) -> ValueError:
    return ValueError(f"Unknown protocol {protocol}. Available protocols: {list(_SUPPORTED_PROTOCOLS.keys())}")


def treespec_dumps(treespec: TreeSpec, protocol: int | None = None) -> str:
    """``treespec`` as a JSON string (``[protocol, schema]``), for ``treespec_loads``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of "
                        f"PyTreeSpec but got item of type {type(treespec)}.")
    if protocol is None:
        protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise _unknown_protocol(protocol)
    schema = _SUPPORTED_PROTOCOLS[protocol].treespec_to_json(treespec)
    return json.dumps((protocol, dataclasses.asdict(schema)), cls=EnumEncoder)


@functools.lru_cache
def treespec_loads(serialized: str) -> TreeSpec:
    """The spec ``treespec_dumps`` wrote."""
    protocol, json_schema = json.loads(serialized)
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise _unknown_protocol(protocol)
    return _SUPPORTED_PROTOCOLS[protocol].json_to_treespec(json_schema)


class _Asterisk(str):
    """A ``*`` that prints without quotes, standing for a leaf in ``treespec_pprint``."""

    __slots__ = ()

    def __new__(cls) -> _Asterisk:
        return super().__new__(cls, "*")

    def __repr__(self) -> str:
        return "*"


_asterisk = _Asterisk()


def treespec_pprint(treespec: TreeSpec) -> str:
    """The pytree of ``treespec``'s structure with ``*`` for each leaf, printed."""
    return repr(tree_unflatten([_asterisk] * treespec.num_leaves, treespec))
