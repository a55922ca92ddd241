"""PyTorch's Python argument parser, run when a call has failed: which argument was wrong, in torch's words.

torch binds every Python call of an operator against the operator's Python signatures before running anything,
so ``torch.add(x, "a")`` is refused with ``add(): argument 'other' (position 2) must be Tensor, not str`` and
``torch.sum(x, "a")`` with the list of the signatures it accepts. tracegrad runs its kernels on the arguments as
given, which makes the fast path free of that parsing; only when a call fails do the guards (``guard_errors``,
``OpDef.__call__``, the Tensor method wrappers) ask this module whether torch's parser would have refused the
arguments first, and raise its error instead of the kernel's.

The signatures are derived from the operators' schemas (``python_signatures``) by the rules torch's code
generator follows: ``self`` is ``input``, functional overloads take ``out=``, a few ``.Scalar`` overloads are not
bound, overloads are ordered so that a Tensor parameter is tried before a Number one.
"""

from __future__ import annotations

import builtins
import collections
import functools
import operator
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from . import _tensor  # (its Tensor read at call time: _tensor imports this module)
from ._torch_function import NOT_HANDLED, handle_refused
from .memory_format import refuse_unsupported_layout
from .return_types import is_return_type

# ---- parameter kinds and the names torch prints for them -------------------------------------------------------

_KIND_NAMES = {
    "TENSOR": "Tensor", "SCALAR": "Number", "INT64": "int", "SYM_INT": "int", "DOUBLE": "float",
    "COMPLEX": "complex", "TENSOR_LIST": "tuple of Tensors", "INT_LIST": "tuple of ints",
    "SYM_INT_LIST": "tuple of ints", "FLOAT_LIST": "tuple of floats", "GENERATOR": "torch.Generator",
    "BOOL": "bool", "PYOBJECT": "object", "SCALARTYPE": "torch.dtype", "LAYOUT": "torch.layout",
    "MEMORY_FORMAT": "torch.memory_format", "DEVICE": "torch.device", "STRING": "str", "DIMNAME": "name",
    "DIMNAME_LIST": "tuple of names", "SCALAR_LIST": "tuple of Scalars", "STORAGE": "torch.Storage",
}

# schema base type -> (kind, the C++ type torch's generator sorts overloads by)
_SCHEMA_KINDS = {
    "Tensor": ("TENSOR", "Tensor"), "Scalar": ("SCALAR", "Scalar"), "int": ("INT64", "int64_t"),
    "SymInt": ("SYM_INT", "SymInt"), "float": ("DOUBLE", "double"), "bool": ("BOOL", "bool"),
    "str": ("STRING", "c10::string_view"), "ScalarType": ("SCALARTYPE", "ScalarType"),
    "Generator": ("GENERATOR", "Generator"), "MemoryFormat": ("MEMORY_FORMAT", "MemoryFormat"),
    "Layout": ("LAYOUT", "Layout"), "Device": ("DEVICE", "Device"), "Any": ("PYOBJECT", "PyObject*"),
    "Dimname": ("DIMNAME", "Dimname"), "complex": ("COMPLEX", "c10::complex<double>"),
    "Storage": ("STORAGE", "Storage"),
}
_SCHEMA_LIST_KINDS = {
    "int": ("INT_LIST", "IntArrayRef"), "SymInt": ("SYM_INT_LIST", "SymIntArrayRef"),
    "Tensor": ("TENSOR_LIST", "TensorList"), "Tensor?": ("TENSOR_LIST", "c10::List<::std::optional<Tensor>>"),
    "float": ("FLOAT_LIST", "ArrayRef<double>"), "Scalar": ("SCALAR_LIST", "ScalarList"),
    "Dimname": ("DIMNAME_LIST", "DimnameList"), "bool": ("PYOBJECT", "std::array<bool>"),
}

# The functions whose Tensor parameters take a Python number too (torch's should_allow_numbers_as_tensors)
_NUMBERS_AS_TENSORS = frozenset({
    "add", "add_", "div", "div_", "divide", "divide_", "mul", "mul_", "multiply", "multiply_", "sub", "sub_",
    "subtract", "subtract_", "true_divide", "true_divide_", "to", "_to_copy", "copy_", "floor_divide",
    "floor_divide_",
})

# NumPy's spellings torch's parser also accepts as keywords
_NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"), "other": ("x2",)}

# Overloads torch's code generator does not bind in Python (a number reaches the Tensor overload instead)
_UNBOUND = frozenset({"add.Scalar", "add_.Scalar", "sub.Scalar", "sub_.Scalar", "mul.Scalar", "mul_.Scalar",
                      "div.Scalar", "div_.Scalar"})


@dataclass(frozen=True)
class PyParam:
    """One parameter of a Python signature, as torch's FunctionParameter holds it."""

    name: str
    kind: str
    size: int = 0  # int[2]: a single int is taken for the whole list
    allow_none: bool = False
    optional: bool = False  # has a default
    default: str = ""  # as torch prints it
    keyword_only: bool = False
    schema_type: str = ""  # for ordering overloads as torch's generator does
    cpp_type: str = ""

    @property
    def type_name(self) -> str:
        return _KIND_NAMES[self.kind]

    def text(self) -> str:
        return f"{self.type_name} {self.name}" + (f" = {self.default}" if self.optional else "")


@dataclass(frozen=True)
class PySignature:
    name: str
    params: tuple[PyParam, ...]
    hidden: bool = False

    @functools.cached_property
    def min_args(self) -> int:
        return sum(not p.optional for p in self.params)

    @functools.cached_property
    def max_pos_args(self) -> int:
        return sum(not p.keyword_only for p in self.params)

    @functools.cached_property
    def gathers_size(self) -> bool:
        """Whether positional ints make its one positional list (``view(2, 3)``, ``x.squeeze(0, 1)``): an unsized
        int list alone (an ``int[1]`` takes a single int as itself)."""
        first = self.params[0] if self.params else None
        return self.max_pos_args == 1 and first.kind in ("INT_LIST", "SYM_INT_LIST") and not first.size

    def _listed(self, write: Callable[[PyParam], str]) -> str:
        """The parameters as ``write`` writes each, a ``*`` before the first keyword-only one."""
        parts, keyword = [], False
        for p in self.params:
            if p.keyword_only and not keyword:
                parts.append("*")
                keyword = True
            parts.append(write(p))
        return ", ".join(parts)

    def text(self) -> str:
        """``(Tensor input, *, torch.dtype dtype = None)``, as torch lists a signature."""
        return f"({self._listed(PyParam.text)})"

    def sort_text(self) -> str:
        """The C++ signature torch's code generator sorts overloads by."""
        def cpp(p: PyParam) -> str:
            return f"{p.cpp_type} {p.name}" + (f"={p.default}" if p.optional else "")

        return f"{self.name}({self._listed(cpp)})"


# ---- what torch's parser accepts for each kind ---------------------------------------------------------------

def _is_tensor(obj: Any) -> bool:
    return isinstance(obj, _tensor.Tensor)


def _is_numpy_scalar(obj: Any) -> bool:
    return isinstance(obj, np.generic) and obj.dtype.kind in "biufc"


def _check_long(obj: Any) -> bool:
    return isinstance(obj, np.integer) or (isinstance(obj, int) and not isinstance(obj, bool))


def _check_double(obj: Any) -> bool:
    return _is_numpy_scalar(obj) or isinstance(obj, (float, int))


def _check_scalar(obj: Any) -> bool:
    return _is_numpy_scalar(obj) or isinstance(obj, (float, int, complex))


def _check_index(obj: Any) -> bool:
    if isinstance(obj, bool):
        return False
    if _check_long(obj):
        return True
    try:
        operator.index(obj)
    except Exception:
        return False
    return True


def _small_tensor(obj: Any, integral: bool = False) -> bool:
    """A 0-d tensor not requiring grad, which torch's parser reads as a number."""
    if not _is_tensor(obj) or obj.requires_grad or obj.dim() != 0:
        return False
    return not integral or obj._data.dtype.kind in "iu"


def _is_sequence(obj: Any) -> bool:
    return isinstance(obj, (tuple, list))


def _int_list(obj: Any, size: int) -> tuple[bool, int]:
    """(accepted, index of the offending element or -1): torch checks only a list's first element, and for a
    sized list (``int[1]``) takes one index alone, a 0-d NumPy array too, by ``__index__`` (its binding then fails
    to read the array: ``_read_single_ints``)."""
    if _is_sequence(obj):
        if not obj:
            return True, -1
        if _check_index(obj[0]):
            return True, -1
        return False, 0
    return size > 0 and _check_index(obj), -1


def _check(param: PyParam, obj: Any, argnum: int, numbers_as_tensors: bool) -> tuple[bool, int]:
    kind = param.kind
    if kind == "TENSOR":
        return _is_tensor(obj) or (numbers_as_tensors and _check_scalar(obj)), -1
    if kind in ("SCALAR", "COMPLEX", "DOUBLE"):
        accepted = (kind == "SCALAR" and _check_scalar(obj)) or (kind != "DOUBLE" and isinstance(obj, complex))
        return accepted or _check_double(obj) or _small_tensor(obj), -1
    if kind == "INT64":
        return _check_long(obj) or _small_tensor(obj, integral=True), -1
    if kind == "SYM_INT":
        return _check_index(obj), -1
    if kind in ("INT_LIST", "SYM_INT_LIST"):
        return _int_list(obj, param.size)
    if kind == "TENSOR_LIST":
        if not _is_sequence(obj):
            return False, -1
        for idx, item in enumerate(obj):
            if not _is_tensor(item) and not (item is None and param.schema_type.startswith("Tensor?")):
                # (torch raises this one at once, whichever overload it was trying)
                raise non_tensor_element(idx, argnum, item)
        return True, -1
    if kind == "FLOAT_LIST":
        return _is_sequence(obj) and (not obj or _check_double(obj[0]) or isinstance(obj[0], complex)), -1
    if kind == "SCALAR_LIST":
        return _is_sequence(obj) and all(_check_scalar(o) for o in obj), -1
    if kind == "BOOL":
        return isinstance(obj, bool), -1
    if kind == "STRING":
        return isinstance(obj, str), -1
    if kind == "DEVICE":
        from .backend.device import device

        return _check_long(obj) or isinstance(obj, (str, device)), -1
    if kind == "SCALARTYPE":
        from .backend.dtypes import dtype

        # (Python's number types by identity: a NumPy dtype compares equal to its Python type, and torch refuses it)
        return isinstance(obj, dtype) or any(obj is t for t in (builtins.float, builtins.complex, builtins.bool,
                                                                 builtins.int)), -1
    if kind == "DIMNAME":
        return obj is None or isinstance(obj, str), -1
    if kind == "DIMNAME_LIST":
        return (_is_sequence(obj) and all(o is None or isinstance(o, str) for o in obj)) or (
            param.size == 1 and (obj is None or isinstance(obj, str))), -1
    return _CLASS_CHECKS.get(kind, lambda _obj: True)(obj), -1


def _generator(obj: Any) -> bool:
    from ._factories import Generator

    return isinstance(obj, Generator)


def _memory_format(obj: Any) -> bool:
    from .memory_format import memory_format

    return isinstance(obj, memory_format)


def _layout(obj: Any) -> bool:
    from .memory_format import layout

    return isinstance(obj, layout)


def _storage(obj: Any) -> bool:
    from .storage import TypedStorage, UntypedStorage

    return isinstance(obj, (TypedStorage, UntypedStorage))


_CLASS_CHECKS: dict[str, Callable[[Any], bool]] = {
    "GENERATOR": _generator, "MEMORY_FORMAT": _memory_format, "LAYOUT": _layout, "STORAGE": _storage,
}


# ---- the names torch prints for the types of the values it got ------------------------------------------------

_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python, whose tp_name is its bare name


@functools.cache
def _torch_type_names() -> dict[type, str]:
    """tracegrad's classes standing for torch's C types, under the names torch's types print."""
    from ._factories import Generator
    from ._type_info import finfo, iinfo
    from .backend.device import device
    from .backend.dtypes import dtype
    from .memory_format import layout, memory_format
    from .size import Size
    from .storage import TypedStorage, UntypedStorage

    return {dtype: "torch.dtype", device: "torch.device", Generator: "torch._C.Generator", Size: "torch.Size",
            memory_format: "torch.memory_format", layout: "torch.layout", finfo: "torch.finfo", iinfo: "torch.iinfo",
            UntypedStorage: "torch.storage.UntypedStorage", TypedStorage: "torch.storage.TypedStorage"}


def non_tensor_element(position: int, argnum: int, item: Any) -> TypeError:
    """torch's parser error for a list of tensors holding something else at ``position``."""
    return TypeError(f"expected Tensor as element {position} in argument {argnum}, but got {tp_name(item)}")


def tp_name(obj: Any) -> str:
    """The name CPython's ``tp_name`` gives the type of ``obj`` in torch: builtins bare, C types
    module-qualified (``numpy.float64``), classes defined in Python bare (``Tensor``, a user's ``Foo``)."""
    kind = type(obj)
    known = _torch_type_names().get(kind)
    if known is not None:
        return known
    if is_return_type(kind):  # (torch's C structseqs are named qualified; ours answer __name__ bare)
        return f"torch.return_types.{kind.__name__}"
    if kind.__module__ == "builtins" or kind.__flags__ & _HEAP_TYPE:
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


# ---- parsing one signature (torch's FunctionSignature::parse) --------------------------------------------------

def _extra_args(sig: PySignature, nargs: int) -> TypeError:
    if sig.min_args != sig.max_pos_args:
        return TypeError(f"{sig.name}() takes from {sig.min_args} to {sig.max_pos_args} positional arguments but "
                         f"{nargs} were given")
    plural = "" if sig.max_pos_args == 1 else "s"
    return TypeError(f"{sig.name}() takes {sig.max_pos_args} positional argument{plural} but {nargs} "
                     f"{'was' if nargs == 1 else 'were'} given")


def _missing_args(sig: PySignature, idx: int) -> TypeError:
    names = [f'"{p.name}"' for p in sig.params[idx:] if not p.optional]
    # (torch's plural ending is the other way round: "1 required positional arguments")
    return TypeError(f"{sig.name}() missing {len(names)} required positional argument"
                     f"{'s' if len(names) == 1 else ''}: {', '.join(names)}")


def _extra_kwargs(sig: PySignature, kwargs: dict, nargs: int) -> TypeError:
    names = [p.name for p in sig.params]
    for key in kwargs:
        if not isinstance(key, str):
            return TypeError("keywords must be strings")
        if key not in names:
            return TypeError(f"{sig.name}() got an unexpected keyword argument '{key}'")
        if names.index(key) < nargs:
            return TypeError(f"{sig.name}() got multiple values for argument '{key}'")
    return TypeError("invalid keyword arguments")


def _parse(sig: PySignature, args: tuple, kwargs: dict, raise_error: bool) -> bool:
    """Whether ``args``/``kwargs`` bind to ``sig``; with ``raise_error``, raise torch's error where they do not."""
    nargs = len(args)
    remaining = len(kwargs)
    first = sig.params[0] if sig.params else None
    # ``view(2, 3)``: a single positional int list may come as separate ints, if the first one is an int
    varargs_list = (sig.max_pos_args == 1 and first is not None and first.kind in ("INT_LIST", "SYM_INT_LIST")
                    and nargs > 0 and _check_index(args[0]))
    if nargs > sig.max_pos_args and not varargs_list:
        if raise_error:
            raise _extra_args(sig, nargs)
        return False
    numbers_as_tensors = sig.name in _NUMBERS_AS_TENSORS
    arg_pos = 0
    for i, param in enumerate(sig.params):
        obj, present, is_kwd = None, False, False
        if arg_pos < nargs:
            if param.keyword_only:  # extra positional arguments after a single positional int list
                if raise_error:
                    raise _extra_args(sig, nargs)
                return False
            obj, present = args[arg_pos], True
        elif kwargs:
            is_kwd = True
            for key in (param.name, *_NUMPY_NAMES.get(param.name, ())):
                if key in kwargs:
                    obj, present = kwargs[key], True
                    break
        if (not present and param.optional) or (present and obj is None and param.allow_none):
            pass
        elif not present:
            if raise_error:
                raise _missing_args(sig, i)
            return False
        else:
            accepted, failed_idx = _check(param, obj, i, numbers_as_tensors)
            if not accepted and varargs_list and arg_pos == 0 and not is_kwd:
                arg_pos = nargs  # every positional argument makes the list
                continue
            if not accepted:
                if raise_error:
                    raise _type_error(sig, param, obj, is_kwd, arg_pos, failed_idx)
                return False
        if not is_kwd:
            arg_pos += 1
        elif present:
            remaining -= 1
    if remaining > 0:
        if raise_error:
            raise _extra_kwargs(sig, kwargs, nargs)
        return False
    return True


def _unpack_int_lists(sig: PySignature, args: tuple, kwargs: dict) -> None:
    """After binding, torch reads an int list element by element (its parser looked at the first only)."""
    for k, param in enumerate(sig.params):
        if param.kind not in ("INT_LIST", "SYM_INT_LIST"):
            continue
        if k == 0 and sig.max_pos_args == 1 and len(args) > 1:
            value = args  # ``view(2, "a")``: the positional arguments are the list
        else:
            value = args[k] if k < len(args) else kwargs.get(param.name)
        if not _is_sequence(value):
            continue
        for pos, item in enumerate(value):
            # (an element is read with ``__index__``, which a bool has: only the first was checked by type)
            if not (item.__class__ is bool or _check_index(item)):
                raise TypeError(f"{sig.name}(): argument '{param.name}' failed to unpack the object at pos {pos + 1} "
                                f"with error \"type must be tuple of ints,but got {tp_name(item)}\"")


def _type_error(sig: PySignature, param: PyParam, obj: Any, is_kwd: bool, arg_pos: int,
                failed_idx: int) -> TypeError:
    if is_kwd:
        return TypeError(f"{sig.name}(): argument '{param.name}' must be {param.type_name}, not {tp_name(obj)}")
    where = f"{sig.name}(): argument '{param.name}' (position {arg_pos + 1}) must be {param.type_name}"
    if failed_idx != -1:
        return TypeError(f"{where}, but found element of type {tp_name(obj[failed_idx])} at pos {failed_idx}")
    return TypeError(f"{where}, not {tp_name(obj)}")


# ---- the message for several signatures (torch's format_invalid_args) ----------------------------------------

# torch's message formatter copies the keywords into a ``std::unordered_map<std::string, PyObject*>`` and lists
# them in its iteration order: libstdc++'s, computed here (its string hash, prime bucket counts and the order in
# which it links nodes), so that ``np.var(t)``'s "got (ddof=int, dtype=NoneType, out=NoneType, axis=NoneType, )"
# names them as torch does.

_MASK64 = (1 << 64) - 1
_MURMUR_MUL = (0xC6A4A793 << 32) + 0x5BD1E995
_STD_HASH_SEED = 0xC70F6907
_FAST_BUCKET_COUNTS = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)  # (libstdc++'s for fewer than 14 wanted)
_PRIME_BUCKET_COUNTS = (17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 103, 109, 113,
                        127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313, 337, 359)


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


@functools.lru_cache(maxsize=256)
def _std_string_hash(key: str) -> int:
    """``std::hash<std::string>`` of libstdc++ on 64 bits: ``_Hash_bytes`` (a MurmurHash2 variant) of the UTF-8."""
    data = key.encode()
    whole = len(data) & ~7
    h = _STD_HASH_SEED ^ (len(data) * _MURMUR_MUL & _MASK64)
    for at in range(0, whole, 8):
        word = _shift_mix(int.from_bytes(data[at:at + 8], "little") * _MURMUR_MUL & _MASK64) * _MURMUR_MUL & _MASK64
        h = (h ^ word) * _MURMUR_MUL & _MASK64
    if len(data) & 7:
        h = (h ^ int.from_bytes(data[whole:], "little")) * _MURMUR_MUL & _MASK64
    return _shift_mix(_shift_mix(h) * _MURMUR_MUL & _MASK64)


def _bucket_count_for(wanted: int) -> int:
    if wanted < len(_FAST_BUCKET_COUNTS):
        return _FAST_BUCKET_COUNTS[wanted]
    return next((p for p in _PRIME_BUCKET_COUNTS if p >= wanted), wanted | 1)  # (beyond any real call's keywords)


def keyword_order(keys) -> list[str]:
    """The order in which a libstdc++ ``std::unordered_map`` into which ``keys`` were emplaced one by one lists
    them. Its nodes form one list; a key whose bucket holds nodes goes first among them, a key in an empty bucket
    goes first in the whole list; growing the table (its first insertion makes 13 buckets, then more than
    twice as many at each load factor of 1) relinks the nodes bucket by bucket as they are met."""
    order: list[str] = []
    buckets = 1
    for count, key in enumerate(keys):
        if count + 1 > (buckets if buckets > 1 else 0):
            buckets = _bucket_count_for(max(max(count + 1, 11 if count == 0 else 0) + 1, buckets * 2))
            order = _relinked(order, buckets)
        order = _linked(order, key, buckets)
    return order


def _bucket(key: str, buckets: int) -> int:
    return _std_string_hash(key) % buckets


def _linked(order: list[str], key: str, buckets: int) -> list[str]:
    """``order`` with ``key`` inserted as libstdc++ inserts a node: before the first node of its bucket, or at the
    front of the list when its bucket is empty."""
    bucket = _bucket(key, buckets)
    at = next((i for i, other in enumerate(order) if _bucket(other, buckets) == bucket), 0)
    return order[:at] + [key] + order[at:]


def _relinked(order: list[str], buckets: int) -> list[str]:
    """The list after a rehash into ``buckets``: each node, in the old order, linked in as a new one is."""
    relinked: list[str] = []
    for key in order:
        relinked = _linked(relinked, key, buckets)
    return relinked


def _described(obj: Any) -> str:
    if _is_sequence(obj):
        items = ", ".join(tp_name(o) for o in obj)
        if isinstance(obj, tuple):
            return f"tuple of ({items}{',' if len(obj) == 1 else ''})"
        return f"list of [{items}]"
    return tp_name(obj)


def _got(args: tuple, kwargs: dict) -> str:
    parts = [tp_name(a) for a in args] + [f"{k}={tp_name(kwargs[k])}" for k in keyword_order(kwargs)]
    text = ", ".join(parts)
    return f"({text}, )" if kwargs and not args else f"({text})"


class _LegacyOption:
    """A listed signature as torch's message formatter re-reads it from its text: an entry per ``", "``-separated
    part (the ``*`` included), typed by the words before the part's last space. A parameter printed with its
    default therefore never matches; the message keeps torch's quirk."""

    def __init__(self, text: str) -> None:
        self.entries: list[tuple[str, str]] = []
        for part in text[1:-1].split(", "):
            space = part.rfind(" ")
            self.entries.append((part[space + 1:], part[:space] if space >= 0 else part))

    def matches(self, index: int, obj: Any) -> bool:
        type_name = self.entries[index][1]
        accepted = {"float": ("float", "int", "long"), "int": ("int", "long")}.get(type_name, (type_name,))
        return tp_name(obj) in accepted

    def count_matches(self, args: tuple, kwargs: dict) -> bool:
        return len(args) + len(kwargs) == len(self.entries)

    def unmatched_keywords(self, kwargs: dict) -> list[str]:
        start = max(len(self.entries) - len(kwargs), 0)
        names = [name for name, _ in self.entries[start:]]
        return [key for key in keyword_order(kwargs) if key not in names]

    def marked(self, args: tuple, kwargs: dict) -> str:
        """``(Tensor, !float!)``: the values given, the mismatching ones between exclamation marks."""
        parts = []
        for i, obj in enumerate(args):
            parts.append(_described(obj) if self.matches(i, obj) else f"!{_described(obj)}!")
        for i in range(len(args), len(args) + len(kwargs)):
            name = self.entries[i][0]
            obj = kwargs[name]
            text = f"{name}={_described(obj)}"
            parts.append(text if self.matches(i, obj) else f"!{text}!")
        return f"({', '.join(parts)}{', ' if kwargs and not args else ''})"


def _invalid_combination(name: str, sigs: list[PySignature], args: tuple, kwargs: dict) -> TypeError:
    shown = [sig for sig in sigs if not sig.hidden]
    head = f"{name}() received an invalid combination of arguments - got "
    if len(shown) == 1:  # (the others are deprecated: torch words it for one signature)
        option = _LegacyOption(shown[0].text())
        unmatched = option.unmatched_keywords(kwargs) if kwargs else []
        if unmatched:
            return TypeError(f"{head}unrecognized keyword arguments: {', '.join(unmatched)}")
        got = option.marked(args, kwargs) if option.count_matches(args, kwargs) else _got(args, kwargs)
        return TypeError(f"{head}{got}, but expected {shown[0].text()}")
    lines = [f"{head}{_got(args, kwargs)}, but expected one of:"]
    for sig in shown:
        text = sig.text()
        lines.append(f" * {text}")
        lines.extend(option_notes(text, args, kwargs))
    return TypeError("\n".join(lines) + "\n")


def option_notes(text: str, args: tuple, kwargs: dict) -> list[str]:
    """The line torch's formatter puts under a listed signature ``text`` that takes as many arguments as were
    given: the keywords it does not know, else the arguments marked where their types differ; none otherwise."""
    option = _LegacyOption(text)
    if not option.count_matches(args, kwargs):
        return []
    unmatched = option.unmatched_keywords(kwargs) if kwargs else []
    if unmatched:
        return [f"      didn't match because some of the keywords were incorrect: {', '.join(unmatched)}"]
    return [f"      didn't match because some of the arguments have invalid types: {option.marked(args, kwargs)}"]


def parse_error(sigs: list[PySignature], args: tuple, kwargs: dict) -> TypeError | None:
    """torch's error for a call its parser refuses, or None where one of ``sigs`` accepts the arguments."""
    if not sigs:
        return None
    try:
        if len(sigs) == 1:
            _parse(sigs[0], args, kwargs, raise_error=True)
            _read_bound(sigs[0], args, kwargs)
            return None
        for sig in sigs:
            if _parse(sig, args, kwargs, raise_error=False):
                _read_bound(sig, args, kwargs)
                return None
        count = len(args) + len(kwargs)
        plausible = [s for s in sigs if s.min_args <= count <= len(s.params) and not s.hidden]
        if len(plausible) == 1:
            _parse(plausible[0], args, kwargs, raise_error=True)
    except (TypeError, RuntimeError, AssertionError) as exc:  # (the last two: a device's, ``_read_device``)
        return exc
    return _invalid_combination(sigs[0].name, sigs, args, kwargs)


def bind(sigs: tuple[PySignature, ...], args: tuple, kwargs: dict) -> tuple[PySignature, dict[str, Any]]:
    """For a constructor parsed as torch parses it: the first of ``sigs`` taking the call, with the values it binds
    by parameter name; or torch's error for the call."""
    error = parse_error(list(sigs), args, kwargs)
    if error is not None:
        raise error
    sig = next(s for s in sigs if _parse(s, args, kwargs, raise_error=False))
    return sig, _bound(sig, args, kwargs)


def _read_bound(sig: PySignature, args: tuple, kwargs: dict) -> None:
    """What torch's binding reads of the arguments its parser took, before the kernel runs: the device first
    (the options are made before the size), then the int lists element by element."""
    _read_device(sig, args, kwargs)
    _read_single_ints(sig, args, kwargs)
    _unpack_int_lists(sig, args, kwargs)


# the line of torch 2.13's python_arg_parser.h whose assertion a sized int list given one non-int fails, by kind
_LIST_READER_LINES = {"INT_LIST": 658, "SYM_INT_LIST": 573}


def _read_single_ints(sig: PySignature, args: tuple, kwargs: dict) -> None:
    """A sized int list (``int[1] dim``) given one value its parser took by ``__index__`` (a 0-d NumPy array): torch's
    binding reads a lone int or tensor only, and takes anything else for a tuple, failing its internal assertion."""
    if sig.gathers_size:
        return
    bound = _bound(sig, args, kwargs)
    for param in sig.params:
        value = bound.get(param.name)
        if (param.size and param.kind in _LIST_READER_LINES and value is not None and not _is_sequence(value)
                and not _check_long(value) and not _is_tensor(value)):
            raise RuntimeError(
                'PyList_Check(arg) INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/torch/csrc/utils/python_arg_'
                f'parser.h":{_LIST_READER_LINES[param.kind]}, please report a bug to PyTorch. expected tuple or list')


def _read_device(sig: PySignature, args: tuple, kwargs: dict) -> None:
    """A device given is made (an index or a string torch refuses raises), and CUDA initialized for it, as torch's
    binding does before anything else: ``zeros(1, None, device=3)`` and ``linspace(x, x, 3, device=3)`` are
    refused for the device."""
    if not any(p.kind == "DEVICE" for p in sig.params):
        return
    value = _bound(sig, args, kwargs).get("device")
    if value is None:
        return
    from .backend import cupy_backend
    from .backend.device import as_device

    # (asarray moves its data with ``to`` and does not initialize CUDA: torch refuses a cuda device there later)
    if as_device(value).type == "cuda" and sig.name != "asarray" and not cupy_backend.available():
        raise AssertionError("Torch not compiled with CUDA enabled")


# ---- the signatures, derived from the operators' schemas --------------------------------------------------------

def _default_text(value: Any, schema_type: str) -> str:
    """A default as torch prints it: its code generator's C++ text for lists and reductions."""
    if schema_type == "MemoryFormat" and value is None:  # (the schema's ``contiguous_format``, read as None)
        return "torch.contiguous_format"
    if value is None or value == ():
        return "None"
    if isinstance(value, str):
        # (ATen's ``int reduction=Mean``, which the schema parser reads as "mean")
        return "at::Reduction::Mean" if schema_type == "int" and value == "mean" else f'"{value}"'
    if isinstance(value, tuple):
        return f"{{{','.join(str(v) for v in value)}}}"  # ``dim={-2,-1}``, a C++ initializer list
    return str(value)


def _py_param(p: Any, name: str, keyword_only: bool) -> PyParam:
    schema_type = p.type
    base = schema_type.rstrip("?")
    # (torch's parser takes None for a parameter whose printed default is None: ``int[1] dim=[]`` too)
    allow_none = schema_type.endswith("?") or (p.has_default and _default_text(p.default, schema_type) == "None")
    size = 0
    if "[" in base:
        element, _, rest = base.partition("[")
        size = int(rest[:-1] or 0)
        kind, cpp = _SCHEMA_LIST_KINDS[element]
        cpp = f"{cpp}[{size}]" if size and kind.endswith("INT_LIST") else cpp
    else:
        kind, cpp = _SCHEMA_KINDS[base]
    return PyParam(name=name, kind=kind, size=size, allow_none=allow_none, optional=p.has_default,
                   default=_default_text(p.default, schema_type) if p.has_default else "", keyword_only=keyword_only,
                   schema_type=schema_type, cpp_type=cpp + ("?" if allow_none else ""))


def _from_schema(schema: Any, method: bool, with_out: bool, hidden: bool = False) -> PySignature | None:
    params = []
    for k, p in enumerate(schema.params):
        is_self = p.name == "self" and p.type.startswith("Tensor")
        if method and is_self and (k == 0 or hidden):  # (a deprecated order may put the tensor second)
            continue
        if method and k == 0 and not hidden:
            return None  # an overload whose first argument is not the tensor: no method form
        # (a Tensor ``self`` is ``input`` in Python, wherever it stands: ``where(condition, input, other)``)
        name = "input" if p.name == "self" and p.type == "Tensor" else p.name
        params.append(_py_param(p, name, p.kwarg_only))
    options = next((k for k, p in enumerate(params) if p.name == "dtype" and p.keyword_only), None)
    factory = options is not None and {"layout", "device", "pin_memory"} <= {p.name for p in params[options:]}
    if with_out:
        many = len(schema.returns) > 1
        out = PyParam(name="out", kind="TENSOR_LIST" if many else "TENSOR", allow_none=True, optional=True,
                      default="None", keyword_only=True, schema_type="Tensor[]" if many else "Tensor",
                      cpp_type="TensorList" if many else "Tensor")
        params.insert(options if factory else len(params), out)  # (a factory's ``out`` precedes its options)
    if factory:  # torch's Python factories: ``pin_memory`` is a bool, and ``requires_grad`` ends the list
        params = [replace(p, default="False") if p.name == "pin_memory" else p for p in params]
        # (an optional bool in torch's code generator, so None passes)
        params.append(PyParam(name="requires_grad", kind="BOOL", allow_none=True, optional=True, default="False",
                              keyword_only=True, schema_type="bool", cpp_type="bool"))
    return PySignature(schema.name, tuple(params), hidden)


def _arg_smaller(t1: str, t2: str) -> bool:
    """torch's generator ranks a Scalar parameter below a Tensor one (and a few more pairs): the overload whose
    parameters all rank at or below another's is tried after it."""
    return ((t1 == "Scalar" and t2 == "Tensor") or (t1 == "Scalar?" and t2 == "Tensor?")
            or ("Dimname" in t1 and "Dimname" not in t2) or (t1 == "int[]" and t2 in ("int", "int?"))
            or (t1 == "Tensor[]" and "[]" in t2) or (t1 == "SymInt[]" and t2 == "int[]")
            or (t1 in ("SymInt", "int") and t2 == "Tensor"))


def _smaller(s1: PySignature, s2: PySignature) -> bool:
    a1 = [p.schema_type for p in s1.params if p.name != "out"]
    a2 = [p.schema_type for p in s2.params if p.name != "out"]
    if len(a1) != len(a2) or a1 == a2:
        return False
    return all(t1 == t2 or _arg_smaller(t1, t2) for t1, t2 in zip(a1, a2))


def _ordered(sigs: list[PySignature]) -> list[PySignature]:
    """Alphabetical by the C++ signature text, then a topological sort by ``_smaller`` (torch's order)."""
    sigs = sorted(sigs, key=PySignature.sort_text)
    larger_than = {i: {j for j, s2 in enumerate(sigs) if _smaller(s1, s2)} for i, s1 in enumerate(sigs)}
    larger_than = {i: js for i, js in larger_than.items() if js}
    order = [i for i in range(len(sigs)) if i not in larger_than]
    for idx in range(len(sigs)):
        done = order[idx]
        for j in sorted(larger_than):
            larger_than[j].discard(done)
            if not larger_than[j]:
                del larger_than[j]
                order.append(j)
    ordered = [sigs[i] for i in order]
    return [s for s in ordered if not s.hidden] + [s for s in ordered if s.hidden]  # (deprecated ones last)


@functools.cache
def _schemas_by_name() -> dict[str, list]:
    """Every declared schema, and every overload only torch's Python layer adds, by operator name."""
    from ._python_overloads import DEPRECATED_OVERLOADS, EXTRA_OVERLOADS, REPLACED_OVERLOADS
    from .ops.registry import DECLARED
    from .ops.schema import parse_schema

    by_name: dict[str, list] = {}
    for key, ops in DECLARED.items():
        if key not in _UNBOUND and not ops[0].schema.overload.endswith("out"):
            schema = parse_schema(REPLACED_OVERLOADS[key]) if key in REPLACED_OVERLOADS else ops[0].schema
            by_name.setdefault(schema.name, []).append((schema, False))
    for texts, hidden in ((EXTRA_OVERLOADS, False), (DEPRECATED_OVERLOADS, True)):
        for text in texts:
            schema = parse_schema(text)
            by_name.setdefault(schema.name, []).append((schema, hidden))
    return by_name


@functools.cache
def python_signatures(name: str, method: bool) -> tuple[PySignature, ...]:
    """The Python signatures torch binds for the operator ``name`` (a function, or with ``method`` a Tensor
    method): one per schema overload of that name, in torch's order."""
    from ._python_overloads import FUNCTION_ONLY, METHOD_OVERLOADS, WITHOUT_OUT
    from .ops.registry import NO_OUT_OVERLOAD
    from .ops.schema import parse_schema

    if method and name in METHOD_OVERLOADS:
        entries = [(parse_schema(text), False) for text in METHOD_OVERLOADS[name]]
    else:
        entries = _schemas_by_name().get(name, [])
    sigs: list[PySignature] = []
    for schema, hidden in entries:
        if method and schema.full_name in FUNCTION_ONLY:
            continue
        with_out = (not method and not name.endswith("_") and name not in NO_OUT_OVERLOAD
                    and schema.full_name not in WITHOUT_OUT and f"{name}.*" not in WITHOUT_OUT
                    and bool(schema.returns) and all(r.type == "Tensor" for r in schema.returns))
        sig = _from_schema(schema, method, with_out, hidden)
        if sig is not None and sig.text() not in {s.text() for s in sigs if s.hidden == hidden}:
            sigs.append(sig)
    return tuple(_ordered(sigs))


def argument_error(name: str, args: tuple, kwargs: dict, method: bool = False, owner: type | None = None
                   ) -> TypeError | None:
    """torch's parser error for a failed call of the operator ``name``, or None where torch's parser accepts the
    arguments (the call's own error then stands). ``owner``: the class of a method's tensor, where known."""
    try:
        sigs = python_signatures(name, method)
    except (KeyError, ValueError):  # a schema type the parser has no kind for: no verdict
        return None
    if method and sigs and all(not sig.params for sig in sigs):
        # a method without parameters is a plain CPython method in torch (METH_NOARGS), with CPython's words
        where = f"{_c_method_class(owner, name)}.{name}()"
        if kwargs:
            return TypeError(f"{where} takes no keyword arguments")
        return TypeError(f"{where} takes no arguments ({len(args)} given)") if args else None
    return parse_error(list(sigs), args, kwargs)


def one_argument_error(name: str, args: tuple, kwargs: dict, owner: type) -> TypeError | None:
    """CPython's refusal of a call of the C method ``name`` that takes exactly one argument (METH_O: ``apply_``),
    or None where the call has just one, given by position."""
    where = f"{_c_method_class(owner, name)}.{name}()"
    if kwargs:
        return TypeError(f"{where} takes no keyword arguments")
    return None if len(args) == 1 else TypeError(f"{where} takes exactly one argument ({len(args)} given)")


def _c_method_class(owner: type | None, name: str) -> str:
    """The class CPython names in a C method's argument errors: the method descriptor's (TensorBase) where the call
    looked the method up (``t.abs(1)``), the tensor's own where it called a bound method (``getattr(t, "abs")(1)``:
    Tensor, Parameter)."""
    from ._method_calls import called_by_method_lookup

    return "TensorBase" if owner is None or called_by_method_lookup(name) else owner.__qualname__


def _bound(sig: PySignature, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The values of a call ``_parse`` accepted, by parameter name (positional ones first, in order)."""
    positional = [p for p in sig.params if not p.keyword_only]
    named = {p.name: value for p, value in zip(positional, args)}
    for p in sig.params:
        for key in (p.name, *_NUMPY_NAMES.get(p.name, ())):
            if key in kwargs:
                named[p.name] = kwargs[key]
    return named


def rebound_call(name: str, args: tuple, kwargs: dict, method: bool = False) -> tuple[tuple, dict] | None:
    """For a failed call torch's parser takes in a way tracegrad's function does not, the (positional, keyword)
    arguments to call it with again (the tensor itself not among them), or None:

    - one of torch's deprecated argument orders (``add(x, 2, y)``: input, alpha, other), after torch's warning
      (once per process, as its parser gives it): the values by name, the tensor first;
    - a method's ints read as one list (``x.squeeze(0, 1)``: ``dim=(0, 1)``), the parser's ``*size`` rule;
    - keywords that torch names otherwise than tracegrad's function, given by position (``_by_position``);
    - ints given as NumPy ints, 0-d arrays or one-element tensors, read as Python ints (``_with_ints_read``).
    The last three only for Python's refusal of the call (a TypeError), never to run a failed kernel again."""
    try:
        sigs = python_signatures(name, method)
    except (KeyError, ValueError):
        return None
    try:  # (the first signature that takes the call, as torch's parser tries them; a list's element may stop it)
        sig = next((sig for sig in sigs if not sig.hidden and _parse(sig, args, kwargs, False)), None)
    except TypeError:
        return None
    if sig is not None:
        # (only Python's refusal of a call is one to call again: a kernel's error stands, and is not paid twice)
        if not isinstance(sys.exc_info()[1], TypeError):
            return None
        try:
            _unpack_int_lists(sig, args, kwargs)
        except TypeError:  # (refused after all: ``view(2, 2.0)``)
            return None
        if method and len(args) > 1 and sig.gathers_size:
            return (tuple(_ints_read(args)),), kwargs
        read = _with_ints_read(sig, args, kwargs)
        if kwargs:
            return _by_position(sig, *(read or (args, kwargs))) or read
        return read
    return _deprecated_call(name, sigs, args, kwargs, method)


_INT_KINDS = frozenset({"INT64", "SYM_INT", "INT_LIST", "SYM_INT_LIST"})


def _read_as_int(value: Any) -> bool:
    """Whether torch's binding reads ``value``, given for an int its parser took, as an int it is not yet: a NumPy
    int, a 0-d NumPy int array, a one-element int tensor, a bool after a list's first element (by ``__index__``)."""
    return value.__class__ is not int and has_index(value)


def has_index(value: Any) -> bool:
    """Whether ``value`` has an ``__index__`` that gives an int (what Python's and torch's int slots read)."""
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _ints_read(value: Any) -> Any:
    """An int (or int list) argument with its indices made Python ints."""
    if _is_sequence(value):
        return value.__class__(operator.index(v) if _read_as_int(v) else v for v in value)
    return operator.index(value) if _read_as_int(value) else value


def _reads_ints(value: Any) -> bool:
    return any(_read_as_int(v) for v in value) if _is_sequence(value) else _read_as_int(value)


def _with_ints_read(sig: PySignature, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
    """A call torch's parser took, with its int arguments given otherwise (``x.squeeze(np.array(0))``) made Python
    ints, as torch's binding reads them before its kernel runs; None where there is none."""
    positional = [p for p in sig.params if not p.keyword_only]
    at = [k for k, p in enumerate(positional[:len(args)]) if p.kind in _INT_KINDS and _reads_ints(args[k])]
    names = {key for p in sig.params if p.kind in _INT_KINDS for key in (p.name, *_NUMPY_NAMES.get(p.name, ()))}
    keys = [key for key in names & kwargs.keys() if _reads_ints(kwargs[key])]
    if not at and not keys:
        return None
    read_args = tuple(_ints_read(a) if k in at else a for k, a in enumerate(args))
    return read_args, {key: _ints_read(v) if key in keys else v for key, v in kwargs.items()}


def _deprecated_call(name: str, sigs: tuple[PySignature, ...], args: tuple, kwargs: dict, method: bool
                     ) -> tuple[tuple, dict] | None:
    """The call as the first deprecated signature that takes it reads it, after torch's warning; None where none
    does."""
    try:
        sig = next((sig for sig in sigs if sig.hidden and _parse(sig, args, kwargs, False)), None)
    except TypeError:
        return None
    if sig is None:
        return None
    from ._warnings import warn_once

    current = "".join(f"\n\t{name}{other.text()}" for other in sigs if not other.hidden)
    warn_once("deprecated overload", f"This overload of {name} is deprecated:\n\t{name}{sig.text()}\n"
              f"Consider using one of the following signatures instead:{current}", stacklevel=5)
    named = _bound(sig, args, kwargs)
    return ((named.pop("input"),) if not method else ()), named


def deprecated_reading(name: str, args: tuple, kwargs: dict, method: bool = False) -> tuple[tuple, dict] | None:
    """For a call torch's parser takes by a deprecated signature only, the (positional, keyword) arguments as that
    signature reads them (``rebound_call``'s first case); None where a current signature takes it."""
    sigs = python_signatures(name, method)
    try:
        if any(_parse(sig, args, kwargs, False) for sig in sigs if not sig.hidden):
            return None
    except TypeError:
        return None
    return _deprecated_call(name, sigs, args, kwargs, method)


def _by_position(sig: PySignature, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
    """A call that torch's parser took, with its keywords for positional parameters given by position: where
    tracegrad's function names a parameter otherwise (``x.copy_(other=y)``, ``isin(x, test_element=3)``), Python
    refused the keyword. The positional parameters given up to the first one left out go by position (their
    defaults are only text here), the rest by keyword under torch's name (``embedding(w, indices=i,
    scale_grad_by_freq=True)``, NumPy's ``diff(x, axis=0)`` as ``dim=0``); None where that changes nothing."""
    named = _bound(sig, args, kwargs)
    positional = [p for p in sig.params if not p.keyword_only]
    count = next((k for k, p in enumerate(positional) if p.name not in named), len(positional))
    if count <= len(args) and named.keys() - {p.name for p in positional[:count]} == kwargs.keys():
        return None
    return tuple(named.pop(p.name) for p in positional[:count]), named


def tensors_as_one_argument(name: str) -> Callable[[Callable], Callable]:
    """For a function torch's Python writes as ``f(*tensors)`` and passes on as one tuple to its C++ operator
    (``broadcast_tensors``, ``cartesian_prod``): ``impl(tensors)`` made into ``f(*tensors)``, whose failure is
    refused as that operator's parser refuses the tuple (a list among the tensors, say)."""
    def wrap(impl: Callable) -> Callable:
        @functools.wraps(impl)
        def public(*tensors):
            try:
                refuse_arrays_among(tensors)  # (``impl`` may return a tensor as given: an array too)
                return impl(tensors)
            except Exception:
                refuse_as_torch(name, (tensors,), {})
                raise
        public.__name__ = public.__qualname__ = name
        return public
    return wrap


def refuse_arrays_among(values: tuple | list) -> None:
    """A TypeError for a NumPy array among ``values`` (a ``Tensor[]``'s elements, or the tensors of a Python
    implementation that may hand them back as given), in the words of torch's parser for a list's element; the
    caller's guard replaces it with the parser's own error, which numbers the argument. Nothing for tensors."""
    for k, value in enumerate(values):
        if isinstance(value, np.ndarray):
            raise non_tensor_element(k, 0, value)


def refuse_non_tensors_among(values: tuple | list, none_allowed: bool = False) -> None:
    """A TypeError for the first of ``values`` (a ``Tensor[]``'s elements) that is no tensor (nor None, where
    ``none_allowed``), in the words of torch's parser for a list's element: a check for the paths where such an
    element would otherwise be taken (NumPy takes a list or a number) or a warning be given before the parser's
    refusal. The caller's guard replaces it with the parser's own error, which numbers the argument."""
    for k, value in enumerate(values):
        if not (_is_tensor(value) or (none_allowed and value is None)):
            raise non_tensor_element(k, 0, value)


def refuse_as_torch(name: str, args: tuple, kwargs: dict, method: bool = False, owner: type | None = None) -> None:
    """Called while a call's error is being handled: raise torch's parser error instead where torch's parser
    refuses the arguments; return (the caller re-raises its own error) where it accepts them.

    Guards nest (a Tensor method calls an operator, which is guarded too): the outermost one, which sees the
    user's arguments, decides. An inner guard's parser error carries the error it replaced, which an outer
    guard that accepts its arguments raises again: the inner refusal judged tracegrad's own call, not the user's.
    """
    error = argument_error(name, args, kwargs, method, owner)
    current = sys.exc_info()[1]
    if error is not None:
        error.replaced_error = getattr(current, "replaced_error", current)
        raise error from None
    replaced = getattr(current, "replaced_error", None)
    if replaced is not None:
        raise replaced.with_traceback(replaced.__traceback__) from replaced.__cause__


@dataclass(frozen=True)
class _CallLimits:
    """What a guard looks at on a call, to catch the mistakes a kernel does not notice: more positional arguments
    than a listed signature takes, a keyword no signature names, a bool parameter given something else, a dtype
    keyword given a name (``dtype="float32"``), and a value of a class no signature takes where it stands (a
    bool for ``dim``, ``None`` for ``other``, 1.5 for ``k``, ``[True]`` for ``dims``, 3 for ``keepdim``: NumPy
    would read them all as numbers), among the signatures that take as many positional arguments and these
    keywords (``std(x, True, True)``: a bool ``unbiased`` comes alone). A call it finds suspect is parsed in full
    (a deprecated signature may still take it)."""

    positional: int | None  # None: a signature takes ``*size``
    keywords: frozenset[str]
    refused_positions: tuple[tuple[int, frozenset], ...]  # (position, the classes of _probes() none takes there)
    refused_keywords: dict[str, frozenset]
    sigs: tuple[PySignature, ...] = ()
    method: bool = False
    # (count, keywords) -> the test of the values that the signatures taking it refuse besides, False where there
    # is none (``_shape_test``)
    shapes: dict = field(default_factory=dict, compare=False)
    by_count: tuple[tuple[int, tuple[tuple[int, frozenset], ...]], ...] = ()  # (count, more refused positions)
    least: int = 0  # the fewest positional arguments a signature takes (a method's tensor counted)

    def __post_init__(self) -> None:
        object.__setattr__(self, "refused_classes",
                           _positional_test(self.refused_positions, self.by_count, self.least))
        object.__setattr__(self, "deprecated", any(sig.hidden for sig in self.sigs))

    def suspect(self, args: tuple, kwargs: dict) -> bool:
        # (plain loops: this runs on every call of a guarded name, where a generator costs more than the checks)
        if self.positional is not None and len(args) > self.positional:
            return True
        if self.refused_classes(args):
            return True
        if kwargs:
            if not self.keywords.issuperset(kwargs):
                return True
            # (which parameters a call gives, whatever their values: ``median(x, keepdim=True)`` has no dim)
            shape = (len(args) - self.method, tuple(kwargs))
            more = self.shapes.get(shape)
            if more is None:
                more = self.shapes[shape] = _shape_test(self, *shape)
            if more and more(args, kwargs):
                return True
            for key, value in kwargs.items():
                refused = self.refused_keywords.get(key)
                if refused is not None and _refused(value, refused):
                    return True
        return False


def _stricter(refused: frozenset, than: frozenset | None) -> bool:
    """Whether ``refused`` refuses a class ``than`` lets by."""
    if than is _ONLY_BOOL:
        return False
    return bool(refused) and (than is None or refused is _ONLY_BOOL or not refused <= than)


def _more_refused(sigs: list[PySignature], count: int, base: dict[int, frozenset]) -> tuple[tuple[int, frozenset], ...]:
    """The positions below ``count`` where ``sigs`` refuse more classes than ``base`` (position -> refused)."""
    more = []
    for i in range(count):
        refused = _refused_at(sigs, i)
        if _stricter(refused, base.get(i)):
            more.append((i, refused))
    return tuple(more)


def _refuse_all(args: tuple, kwargs: dict) -> bool:
    return True


def _shape_test(limits: _CallLimits, count: int, keywords: tuple[str, ...]) -> Callable[[tuple, dict], bool] | bool:
    """For a call of ``count`` positional arguments (the tensor of a method aside) and these keywords: the test of
    the values the signatures taking it refuse beyond what all signatures do (``std(x, True, keepdim=True)``:
    only those with a ``dim`` take ``keepdim``), one refusing all where none takes it, False where there is
    nothing more to test (a falsy value: the common call pays one truth test)."""
    fitting = [sig for sig in limits.sigs if _takes_shape(sig, count, keywords)]
    if not fitting:
        return _refuse_all
    offset = int(limits.method)
    base = {i - offset: refused for i, refused in limits.refused_positions}
    more = () if limits.positional is None else _more_refused(fitting, count, base)
    positions = tuple((i + offset, refused) for i, refused in more)
    named = {}
    for key in keywords:
        refused = _refused_keyword(fitting, _PARAM_NAMES.get(key, key))
        if _stricter(refused, limits.refused_keywords.get(key)):
            named[key] = refused
    if not positions and not named:
        return False

    def test(args: tuple, kwargs: dict) -> bool:
        return (any(_refused(args[i], refused) for i, refused in positions)
                or any(_refused(kwargs[key], refused) for key, refused in named.items()))
    return test


def _takes_shape(sig: PySignature, count: int, keywords: tuple[str, ...]) -> bool:
    """Whether ``sig`` takes ``count`` positional arguments and these keywords, each parameter once and every
    required one given (the values aside)."""
    positional = [p for p in sig.params if not p.keyword_only]
    if count > len(positional) and not sig.gathers_size:
        return False
    given = {p.name for p in positional[:count]}
    names = {key: p.name for p in sig.params for key in (p.name, *_NUMPY_NAMES.get(p.name, ()))}
    for key in keywords:
        name = names.get(key)
        if name is None or name in given:
            return False
        given.add(name)
    return all(p.optional or p.name in given for p in sig.params)


def _refused(value: Any, refused: frozenset) -> bool:
    cls = value.__class__
    if cls in refused:
        return True
    # (a list's first element is the one torch's parser checks by type)
    return (cls is list or cls is tuple) and len(value) > 0 and (cls, value[0].__class__) in refused


@functools.cache
def _probes() -> dict[Any, Any]:
    """One value of each class a kernel would silently take as a number (or an int or a tensor as a bool:
    ``max(x, y, 3)``, a string as a dtype's name, a NumPy array as a tensor), keyed as ``_refused`` looks them up.
    The tensor and the array have one dim: where only a number goes, torch takes a 0-d tensor, and where an int goes
    a 0-d int array (through ``__index__``), which the guard then sends to the full parse (rare, and accepted
    there); so does an array first in a list (an int list takes a 0-d one, a float list none: ``[np.array(2.0)]``
    for ``scale_factors``)."""
    from ._tensor import Tensor

    probes: dict[Any, Any] = {bool: True, int: 3, float: 1.5, type(None): None, list: [], tuple: (), str: "a",
                              Tensor: Tensor(np.zeros(2, np.float32)), np.ndarray: np.zeros(2)}
    probes.update({(seq, cls): seq([probe]) for seq in (list, tuple) for cls, probe in
                   ((bool, True), (float, 1.5), (type(None), None), (np.ndarray, np.zeros(2)))})
    # iterables that are no tuple or list, which torch's parser never takes for a list (``torch.stack(t for t in
    # ts)``, ``torch.cat(d.values())``) and a kernel iterating them would
    probes.update({type(it): it for it in ((x for x in ()), {}.values(), {}.keys(), range(0), collections.deque())})
    return probes


class _AllBut(frozenset):
    """The refused classes of a place only a bool goes: every class but bool (an object a kernel would test for
    truth, ``cholesky_inverse(A, object())``)."""

    def __contains__(self, key: object) -> bool:
        return key is not bool


_ONLY_BOOL = _AllBut({bool})


def _takes(sig: PySignature, param: PyParam, position: int, probe: Any) -> bool:
    if probe is None:
        return param.allow_none
    if position == 0 and probe.__class__ is int and sig.gathers_size:
        return True  # ``view(6)``: an int starts a ``*size``
    try:
        return _check(param, probe, 0, sig.name in _NUMBERS_AS_TENSORS)[0]
    except TypeError:  # a Tensor list's element
        return False


def _refused_probes(candidates: list[tuple[PySignature, PyParam]], position: int = -1) -> frozenset:
    return frozenset(key for key, probe in _probes().items()
                     if not any(_takes(sig, param, position, probe) for sig, param in candidates))


# (NumPy's spelling of a keyword -> torch's parameter)
_PARAM_NAMES = {alias: name for name, aliases in _NUMPY_NAMES.items() for alias in aliases}


def _refused_at(sigs: list[PySignature], i: int) -> frozenset:
    """The probe classes none of ``sigs`` takes as its ``i``-th positional argument."""
    at_i = [(s, s.params[i]) for s in sigs if i < s.max_pos_args]
    if not at_i:  # (ints gathered into a ``*size``: ``normalize_shape`` checks them)
        return frozenset()
    return _ONLY_BOOL if all(p.kind == "BOOL" for _, p in at_i) else _refused_probes(at_i, i)


def _refused_keyword(sigs: list[PySignature], name: str) -> frozenset:
    """The probe classes none of ``sigs`` takes for its parameter ``name``."""
    named = [(s, p) for s in sigs for p in s.params if p.name == name]
    if named and all(p.kind == "BOOL" for _, p in named):
        return _ONLY_BOOL
    return _refused_probes(named)


def _call_limits(name: str, method: bool) -> _CallLimits:
    sigs = python_signatures(name, method)
    varargs = any(s.gathers_size for s in sigs)
    names = {p.name for s in sigs for p in s.params}
    refused_keywords = {}
    for n in names:
        refused = _refused_keyword(list(sigs), n)
        for key in (n, *_NUMPY_NAMES.get(n, ())):
            if refused:
                refused_keywords[key] = refused
    names.update(alias for n in list(names) for alias in _NUMPY_NAMES.get(n, ()))
    positional = None if varargs else max(s.max_pos_args for s in sigs if not s.hidden) + method
    # (``view(2, True)``: the positional arguments after an int are read as one list, by ``__index__``)
    base = {i: refused for i in range(1 if varargs else positional - method) if (refused := _refused_at(sigs, i))}
    by_count = () if varargs else _refused_by_count(list(sigs), positional - method, base, method)
    refused_positions = tuple((i + method, refused) for i, refused in base.items())
    # (``x.flip()``, ``torch.histogramdd(x)``: a ``*dims`` method or a Python default would take too few)
    least = min(s.min_args for s in sigs) + method
    return _CallLimits(positional, frozenset(names), refused_positions, refused_keywords, sigs, method,
                       by_count=by_count, least=least)


def _refused_by_count(sigs: list[PySignature], most: int, base: dict[int, frozenset], method: bool
                      ) -> tuple[tuple[int, tuple[tuple[int, frozenset], ...]], ...]:
    """For each count of positional arguments up to ``most``, the positions where the signatures taking that many
    refuse more than all do (``nuclear_norm(x, True, True)``: a bool ``keepdim`` second takes no third)."""
    found = []
    for count in range(2, most + 1):
        more = _more_refused([s for s in sigs if count <= s.max_pos_args], count, base)
        if more:
            found.append((count + method, tuple((i + method, refused) for i, refused in more)))
    return tuple(found)


def _positional_test(checks: tuple[tuple[int, frozenset], ...],
                     by_count: tuple[tuple[int, tuple[tuple[int, frozenset], ...]], ...] = (), least: int = 0
                     ) -> Callable[[tuple], bool]:
    """``suspect``'s test of the positional arguments' classes as one expression compiled for the name, which
    costs a guarded call about half what the loop does (it runs on every call): ``len(args) > 1 and
    args[1].__class__ in r1 or ...``, with the first element's test only where some list is taken, then, for the
    few names whose signatures refuse more at a count of arguments, ``n == 3 and (args[1].__class__ in r3_1)``;
    first ``n < least``, fewer arguments than every signature requires (the functions behind ``*dims`` methods and
    Python defaults would take them), where a signature requires more than a method's tensor."""
    if not checks and not by_count and least <= 1:
        return lambda args: False
    scope: dict[str, Any] = {"_refused": _refused}

    def test(i: int, refused: frozenset, label: str) -> str:
        scope[label] = refused
        # (where lists are refused outright, or only a bool goes, the class says it all)
        lists_checked = (list not in refused or tuple not in refused) and any(isinstance(k, tuple) for k in refused)
        return f"_refused(args[{i}], {label})" if lists_checked else f"args[{i}].__class__ in {label}"

    tests = [f"n < {least}"] if least > 1 else []
    tests += [f"(n > {i} and {test(i, refused, f'r{i}')})" for i, refused in checks]
    for count, more in by_count:
        either = " or ".join(test(i, refused, f"r{count}_{i}") for i, refused in more)
        tests.append(f"(n == {count} and ({either}))")
    source = f"def test(args):\n    n = len(args)\n    return {' or '.join(tests)}\n"
    exec(source, scope)  # noqa: S102 - the source is built here from positions and names of sets
    return scope["test"]


def _with_autocast_if_listed(name: str, fn: Callable) -> Callable:
    """A function composing an operator CPU autocast casts the arguments of (``linear``, ``conv2d``, the losses):
    ``fn`` casting them while autocast is on (amp/cpu_policy.py). A declared operator casts in its own call."""
    from ._autocast_policies import composite_policy, with_autocast

    if hasattr(fn, "schema") or composite_policy(name) is None:  # (an OpDef: not imported here, ops import this)
        return fn
    return with_autocast(name, fn)


def guard_errors(name: str, fn: Callable, method: bool = False) -> Callable:
    """``fn`` raising torch's parser error where its failure came from arguments torch's parser refuses, and
    refusing, before running, the calls ``_CallLimits`` finds suspect. A wrapper runs on every call of a public
    name, so a call with positional arguments only, within the count, costs one comparison here; ``*size``
    functions check their sizes themselves (``views.normalize_shape``). The limits are worked out at the first
    call (about a thousand names are guarded; working them all out cost every import 0.15 s): until then the
    count is -1, so that call takes the branch that sets them up."""
    limits: _CallLimits | None = None
    positional = -1
    refused_classes: Callable[[tuple], bool] | None = None
    fn = _with_autocast_if_listed(name, fn)

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        nonlocal limits, positional, refused_classes
        if kwargs or len(args) > positional:
            if limits is None:
                limits = _call_limits(name, method)
                positional = sys.maxsize if limits.positional is None else limits.positional
                refused_classes = limits.refused_classes
            if limits.suspect(args, kwargs):
                handled = handle_refused(guarded, args, kwargs)
                if handled is not NOT_HANDLED:
                    return handled
                _refuse_call(name, args, kwargs, method)
                # (taken, but maybe as a deprecated order only, which tracegrad's function may read otherwise:
                # ``add(x, True, 1.5)`` is alpha=True, other=1.5)
                again = limits.deprecated and deprecated_reading(name, args[1:] if method else args, kwargs, method)
                if again:
                    return fn(*args[:1], *again[0], **again[1]) if method else fn(*again[0], **again[1])
            if "layout" in kwargs:  # (keyword-only wherever torch takes one; after the parser's own refusals)
                if not _layout(kwargs["layout"]) and kwargs["layout"] is not None:
                    # (the probes above are numbers, strings, lists and tensors: a dtype or device gets here)
                    _refuse_call(name, args, kwargs, method)
                refuse_unsupported_layout(kwargs["layout"])
        elif refused_classes(args):  # (the common call: positional arguments only)
            handled = handle_refused(guarded, args, kwargs)  # (a duck type's __torch_function__ takes it)
            if handled is not NOT_HANDLED:
                return handled
            _refuse_call(name, args, kwargs, method)
        try:
            return fn(*args, **kwargs)
        except Exception:
            given = args[1:] if method else args
            again = rebound_call(name, given, kwargs, method)
            if again is None:
                handled = handle_refused(guarded, args, kwargs)
                if handled is not NOT_HANDLED:
                    return handled
                _refuse_call(name, args, kwargs, method)
                raise
        return fn(*args[:1], *again[0], **again[1]) if method else fn(*again[0], **again[1])
    guarded.argument_guard = name
    return guarded


def _refuse_call(name: str, args: tuple, kwargs: dict, method: bool) -> None:
    """``refuse_as_torch`` for a guarded call's arguments, a method's tensor first."""
    if method:
        refuse_as_torch(name, args[1:], kwargs, True, owner=type(args[0]))
    else:
        refuse_as_torch(name, args, kwargs)


def guard_functions(namespace: dict, prefix: str = "", names: frozenset | None = None) -> None:
    """Put ``guard_errors`` around the public functions of a module namespace that torch binds in C++ (those with
    signatures; ``names``, where given, limits the choice). ``prefix`` turns the Python name into the operator's
    (``linalg.inv`` is ``linalg_inv``, the name torch's messages use)."""
    from ._python_overloads import PYTHON_IN_TORCH
    from .ops.registry import OpDef

    for name, value in list(namespace.items()):
        if name.startswith("_") or hasattr(value, "argument_guard"):
            continue
        # (an operator checks its own arguments' number, but takes a keyword-only one given positionally, as
        # tracegrad's code calls operators, and any object for a bool: such a public name gets a guard; so does
        # an alias, ``arccos`` for ``acos``, whose operator's own refusal would name the other operator)
        # an operator of more than one parameter too, whose kernel would read a bool, a float or None given for
        # an int or a tensor as a number (``torch.transpose(x, True, 0)``, ``torch.mul(x, None)``); a kernel of
        # one tensor parameter refuses them itself, and those (``torch.sin``) are the ones a chain calls
        if not isinstance(value, types.FunctionType) and not (isinstance(value, OpDef) and (
                value.n_positional < value.n_params or value.n_params > 1
                or value.schema.name != prefix + name)):
            continue
        if (names is not None and name not in names) or (prefix + name) in PYTHON_IN_TORCH:
            continue
        if python_signatures(prefix + name, False):
            namespace[name] = guard_errors(prefix + name, value)


def guard_methods(cls: type) -> None:
    """The same for the Tensor methods torch binds in C++."""
    from ._python_overloads import PYTHON_IN_TORCH_METHODS

    for name, value in list(vars(cls).items()):
        if name.startswith("__") or not isinstance(value, types.FunctionType) or hasattr(value, "argument_guard"):
            continue
        if name not in PYTHON_IN_TORCH_METHODS and python_signatures(name, True):
            setattr(cls, name, guard_errors(name, value, method=True))


# The parameter kinds whose check reads no more of an argument than ``_call_classes`` keeps: its class; for a
# tensor, whether it requires grad and is 0-d; for a list, the classes of its elements, every one of them read alike
# (an int list's or a float list's first element decides, so their kinds are not here). A ScalarType's check is the
# one that reads a value (``float`` is taken, ``np.float32`` not): ``_class_of`` gives up on classes themselves.
_CLASS_READ_KINDS = frozenset({"TENSOR", "SCALAR", "COMPLEX", "DOUBLE", "TENSOR_LIST", "SCALAR_LIST", "BOOL",
                               "STRING", "SCALARTYPE", "MEMORY_FORMAT", "LAYOUT", "GENERATOR"})

_MOST_REMEMBERED = 256  # calls of different classes remembered per function (a bound on odd callers' memory)


class OverloadChoice:
    """For a function whose overloads are separate operators (``_foreach_add``'s): the index, among the schemas it
    is made with, of the overload torch's parser binds a call to, trying them in torch's order; torch's TypeError
    where none takes it. The choice is remembered by the classes of the arguments (``_call_classes``) where the
    parameters' checks read nothing else, so that a call like an earlier one (an optimizer's next step) skips the
    parse; a call never seen, one that fails, or one whose classes are not enough is parsed in full."""

    def __init__(self, schemas: list) -> None:
        self.listed = tuple(_from_schema(schema, False, False) for schema in schemas)
        ordered = _ordered(list(self.listed))
        self.order = tuple(next(k for k, sig in enumerate(self.listed) if sig is s) for s in ordered)
        self.remembers = all(p.kind in _CLASS_READ_KINDS for sig in self.listed for p in sig.params)
        self.chosen: dict[tuple, int] = {}

    def __call__(self, args: tuple, kwargs: dict) -> int:
        classes = _call_classes(args, kwargs) if self.remembers else None
        if classes is not None:
            k = self.chosen.get(classes)
            if k is not None:
                return k
        for k in self.order:
            if _parse(self.listed[k], args, kwargs, raise_error=False):
                if classes is not None and len(self.chosen) < _MOST_REMEMBERED:
                    self.chosen[classes] = k
                return k
        raise parse_error([self.listed[k] for k in self.order], args, kwargs)


def _call_classes(args: tuple, kwargs: dict) -> tuple | None:
    """What the checks of ``_CLASS_READ_KINDS`` read of a call (keywords by name); None where a class is given."""
    classes = tuple(map(_class_of, args))
    if kwargs:
        classes += (*kwargs, *map(_class_of, kwargs.values()))
    return None if None in classes else classes


def _class_of(obj: Any) -> Any:
    cls = type(obj)
    if isinstance(obj, (list, tuple)):  # (a subclass too, a namedtuple: torch's parser reads it as a list)
        return cls, frozenset(map(type, obj))
    if isinstance(obj, _tensor.Tensor):  # (a 0-d tensor that needs no gradient is a Number: ``_small_tensor``)
        return cls, obj.requires_grad, obj.dim() == 0
    if isinstance(obj, type):
        return None
    return cls
