"""``torch.library.infer_schema``: an operator schema from a function's type hints, in PyTorch's words.

The accepted hints and their schema types are PyTorch's (``Tensor``, ``Optional[Tensor]``, ``list[Tensor]``,
``int`` as ``SymInt``, ``Sequence[float]``...); so are the refusals, which name the function's signature."""

from __future__ import annotations

import collections.abc
import inspect
import typing
from collections.abc import Callable
from types import GenericAlias

from .._tensor import Tensor
from ..backend.device import device
from ..backend.dtypes import dtype

Number = int | float | bool  # PyTorch's torch.types.Number (a types.UnionType, as its messages print it)

_UNKNOWN_MUTATES = "unknown"


def _sequences_of(item) -> tuple:
    return (typing.Sequence[item], typing.List[item],  # noqa: UP006 - every spelling PyTorch accepts
            GenericAlias(collections.abc.Sequence, (item,)), GenericAlias(list, (item,)))


def _derived(base, schema_type: str, lists: bool, optional_items: bool, optional_list: bool) -> list:
    """``base`` and its spellings with Optional / lists, each with its schema type (PyTorch's derived_types)."""
    result = [(base, schema_type), (typing.Optional[base], f"{schema_type}?")]  # noqa: UP045
    if lists:
        result += [(seq, f"{schema_type}[]") for seq in _sequences_of(base)]
    if optional_items:
        result += [(seq, f"{schema_type}?[]") for seq in _sequences_of(typing.Optional[base])]  # noqa: UP045
    if optional_list:
        result += [(typing.Optional[seq], f"{schema_type}[]?") for seq in _sequences_of(base)]  # noqa: UP045
    return result


def _supported_param_types() -> dict:
    table = [(Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
             (float, "float", True, False, True), (bool, "bool", True, False, True), (str, "str", False, False, False),
             (Number, "Scalar", True, False, False), (dtype, "ScalarType", False, False, False),
             (device, "Device", False, False, False)]
    return dict(pair for row in table for pair in _derived(*row))


SUPPORTED_PARAM_TYPES = _supported_param_types()
SUPPORTED_RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",  # noqa: UP006
                          int: "SymInt", float: "float", bool: "bool", Number: "Scalar"}


_LAZY_HINT = ("If you are using 'from __future__ import annotations', note that annotations are evaluated lazily as "
              "strings; make sure all types referenced in annotations are importable at module scope, not only "
              "inside a local function.")


def infer_schema(prototype_function: Callable, /, *, mutates_args, op_name: str | None = None) -> str:
    """The schema of ``prototype_function`` from its type hints, as ``torch.library.infer_schema`` writes it."""
    sig = inspect.signature(prototype_function)
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)

    def error_fn(what: str):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolved(annotation):
        if isinstance(annotation, str):  # (``from __future__ import annotations``)
            try:
                return eval(annotation, prototype_function.__globals__)  # noqa: S307 - as PyTorch evaluates them
            except NameError as exc:  # (most often a name a local function imported, under lazy annotations)
                error_fn(f"Unsupported type annotation {annotation}. It is not a type. ({exc}). {_LAZY_HINT}")
            except Exception as exc:
                error_fn(f"Unsupported type annotation {annotation}. It is not a type. ({type(exc).__name__}: {exc})")
        return annotation

    params = []
    seen = set()
    kwarg_only_seen = False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY and not kwarg_only_seen:
            params.append("*")
            kwarg_only_seen = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        schema_type = _param_schema_type(name, param, resolved(param.annotation), error_fn)
        schema_type = _mutated(name, idx, schema_type, mutates_args, error_fn)
        seen.add(name)
        params.append(f"{schema_type} {name}" if param.default is inspect.Parameter.empty
                      else f"{schema_type} {name}={_default_repr(name, param.default, error_fn)}")
    if mutates_args != _UNKNOWN_MUTATES:
        unseen = set(mutates_args) - seen
        if unseen:
            error_fn(f"{unseen} in mutates_args were not found in the custom op's signature. mutates_args should "
                     "contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
                     "don't know.")
    ret = _return_schema(resolved(sig.return_annotation), error_fn)
    prefix = op_name if op_name is not None else ""
    return f"{prefix}({', '.join(params)}) -> {ret}"


def _param_schema_type(name: str, param: inspect.Parameter, annotation, error_fn) -> str:
    schema_type = SUPPORTED_PARAM_TYPES.get(annotation) if _hashable(annotation) else None
    if schema_type is not None:
        return schema_type
    if getattr(annotation, "__origin__", None) is tuple:
        args = typing.get_args(annotation)
        single = len(args) == 1 or (len(args) == 2 and args[1] is Ellipsis)
        as_list = list[args[0]] if single else list[typing.Union[args]] if args else list  # noqa: UP007
        example = f"For example, {as_list}.\n\n" if as_list in SUPPORTED_PARAM_TYPES else "\n\n"
        error_fn(f"Parameter {name} has unsupported type {param.annotation}. We do not support Tuple inputs in "
                 f"schema. As a workaround, please try to use List instead. {example}"
                 f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")
    error_fn(f"Parameter {name} has unsupported type {param.annotation}. "
             f"The valid types are: {SUPPORTED_PARAM_TYPES.keys()}.")


def _hashable(annotation) -> bool:
    try:
        hash(annotation)
    except TypeError:
        return False
    return True


def _mutated(name: str, idx: int, schema_type: str, mutates_args, error_fn) -> str:
    """``schema_type`` with PyTorch's write annotation (``Tensor(a<idx>!)``) where ``name`` is mutated."""
    if type(mutates_args) is str:
        if mutates_args != _UNKNOWN_MUTATES:
            raise ValueError("mutates_args must either be a sequence of the names of the arguments that are mutated "
                             "or the string 'unknown'. ")
        mutated = schema_type.startswith("Tensor")
    else:
        mutated = name in mutates_args
        if mutated and not schema_type.startswith("Tensor"):
            error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be mutated")
    return f"Tensor(a{idx}!){schema_type[len('Tensor'):]}" if mutated else schema_type


def _default_repr(name: str, default, error_fn) -> str:
    if default is None or isinstance(default, (int, float, bool)):
        return str(default)
    if isinstance(default, (str, device)):
        return f'"{default}"'
    if isinstance(default, dtype):
        return str(default).removeprefix("torch.").removeprefix("tracegrad.")
    error_fn(f"Parameter {name} has an unsupported default value type {type(default)}. "
             "Please file an issue on GitHub so we can prioritize this.")


def _return_schema(annotation, error_fn) -> str:
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    if typing.get_origin(annotation) is not tuple:
        if not _hashable(annotation) or annotation not in SUPPORTED_RETURN_TYPES:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
        return SUPPORTED_RETURN_TYPES[annotation]
    args = typing.get_args(annotation)
    if any(arg not in SUPPORTED_RETURN_TYPES for arg in args):
        error_fn(f"Return has unsupported type {annotation}. The valid types are: {SUPPORTED_RETURN_TYPES}.")
    listed = ", ".join(SUPPORTED_RETURN_TYPES[arg] for arg in args)
    return f"(({listed}))" if len(args) == 1 else f"({listed})"
