"""Int arguments given as something else than a Python int, against torch: a 0-d NumPy int array, a NumPy int, a bool
and a float at every int position of the operator database's samples, and the calls the database does not make.

torch's parser reads a 0-d NumPy int array through ``__index__`` where the schema says ``SymInt`` (``kthvalue``'s
``k``, ``tril``'s ``diagonal``) and refuses it where it says ``int`` (``Tensor.unflatten``'s ``dim``,
``embedding_bag``'s ``padding_idx``); a sized int list (``int[1] dim``) takes it too, and then fails its binding's
internal assertion; a float list (``interpolate``'s scale factors) refuses it. tracegrad's schemas said ``int``
where torch's say ``SymInt``, and its kernels took the arrays as they came.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from _lib import tg, torch
from opinfo import op_db
from opinfo.core import Call, flatten_outputs, resolve

from tracegrad._python_overloads import DEPRECATED_OVERLOADS, EXTRA_OVERLOADS, METHOD_OVERLOADS, REPLACED_OVERLOADS
from tracegrad.ops.nn_ops.misc import _antialiased_ops as antialiased_ops
from tracegrad.ops.registry import DECLARED
from tracegrad.ops.schema import parse_schema

# ---- the schemas: int parameters typed as torch types them ---------------------------------------------------------


def _torch_schema(name: str, overload: str):
    packet = getattr(torch.ops.aten, name, None)
    try:
        schema = getattr(packet, overload or "default")._schema
    except AttributeError:
        return None
    return parse_schema(str(schema).split("::", 1)[1])


def _int_type_differences(schema) -> list[str]:
    theirs = _torch_schema(schema.name, schema.overload)
    if theirs is None:
        return []
    types = {p.name: p.type for p in theirs.params}
    return [f"{schema.full_name}: {p.name} is {p.type}, torch's {types[p.name]}" for p in schema.params
            if p.name in types and "int" in types[p.name].lower() and p.type != types[p.name]]


def test_int_parameters_typed_as_torch_types_them():
    """``int`` or ``SymInt``, and a list's size (``int[1]`` or ``int[]``), for every declared schema and every overload
    written for the parser, as in torch's own schema of that name."""
    for mode in ("bilinear", "bicubic"):  # (declared at their first use: declared here whatever ran before)
        antialiased_ops(mode)
    texts = [*EXTRA_OVERLOADS, *DEPRECATED_OVERLOADS, *REPLACED_OVERLOADS.values(),
             *(text for texts in METHOD_OVERLOADS.values() for text in texts)]
    # (a declared schema the parser reads through another is that other's business)
    declared = [ops[0].schema for key, ops in DECLARED.items() if key not in REPLACED_OVERLOADS]
    schemas = declared + [parse_schema(text) for text in texts]
    differences = [d for schema in schemas for d in _int_type_differences(schema)]
    assert not differences, "\n".join(differences)


# ---- the operator database: each int given otherwise ----------------------------------------------------------------

_INT_STAND_INS = {"0-d array": np.array, "NumPy int": np.int64, "float": float, "bool": bool}

# Functions that call torch.ops.aten in torch, whose dispatcher refuses a float for an int in its own words (each
# overload's schema, the value's repr), which tracegrad's ops.aten does not reproduce
_THROUGH_TORCH_OPS = {"nn.grad.conv2d_input", "nn.grad.conv2d_weight"}


def _int_places(sample) -> list[tuple[object, int]]:
    """(where, value) for each int of a sample: a position, a keyword, or (position, 0) for a list's first int."""
    places = []
    for where, value in [*enumerate(sample.args), *sample.kwargs.items()]:
        if value.__class__ is int:
            places.append((where, value))
        elif isinstance(value, (list, tuple)) and value and value[0].__class__ is int:
            places.append(((where, 0), value[0]))
    return places


def _with(args: tuple, kwargs: dict, where, value) -> tuple[tuple, dict]:
    if isinstance(where, tuple):
        position, _ = where
        listed = args[position] if isinstance(position, int) else kwargs[position]
        value = type(listed)([value, *listed[1:]])
        where = position
    if isinstance(where, int):
        return args[:where] + (value,) + args[where + 1:], kwargs
    return args, dict(kwargs, **{where: value})


def _outcome(lib, op, sample, where, value) -> tuple:
    """The call's results (dtype, shape, values) or its error (type, message)."""
    call = Call(lib, op, sample, requires_grad=False)
    args, kwargs = _with(call.args, call.kwargs, where, value)
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = resolve(lib, op.name)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            return type(exc).__name__, str(exc).replace("tracegrad", "torch")
    return tuple((str(t.dtype).replace("tracegrad", "torch"), tuple(t.shape), np.array(t.detach().tolist()))
                 for t in flatten_outputs(result))


def _same(ours: tuple, theirs: tuple) -> bool:
    if isinstance(ours[0], str) or isinstance(theirs[0], str):
        return ours == theirs
    return len(ours) == len(theirs) and all(
        a[:2] == b[:2] and np.allclose(a[2], b[2], rtol=1e-6, atol=1e-6, equal_nan=True) for a, b in zip(ours, theirs))


def _entries_with_ints() -> list:
    return [op for op in op_db if any(_int_places(s) for s in op.samples(op.dtypes[0])[:2])]


@pytest.mark.parametrize("op", _entries_with_ints(), ids=lambda op: op.id)
def test_database_ints_given_otherwise_as_torch(op):
    differ = []
    for sample in op.samples(op.dtypes[0])[:2]:
        for where, value in _int_places(sample):
            for label, make in _INT_STAND_INS.items():
                if (label == "bool" and value not in (0, 1)) or (label == "float" and op.name in _THROUGH_TORCH_OPS):
                    continue
                theirs = _outcome(torch, op, sample, where, make(value))
                ours = _outcome(tg, op, sample, where, make(value))
                if not _same(ours, theirs):
                    differ.append(f"{sample.name} @{where} as a {label}: torch {theirs[:2]}, tracegrad {ours[:2]}")
    assert not differ, "\n".join(differ)


# ---- calls the database does not make ------------------------------------------------------------------------------

A = np.array(1)

CALLS = {
    # SymInt parameters read the 0-d array as an int
    "kthvalue method": lambda L: L.arange(6.0).kthvalue(np.array(2)),
    "tril_ method": lambda L: L.ones(3, 3).tril_(np.array(1)),
    "triu method": lambda L: L.ones(3, 3).triu(diagonal=np.array(-1)),
    "multinomial": lambda L: L.multinomial(L.ones(3), np.array(2), generator=L.Generator().manual_seed(0)).shape,
    "zeros of a 0-d array": lambda L: L.zeros(np.array(2), A),
    "zeros of a list of 0-d arrays": lambda L: L.zeros([np.array(2), A]),
    "squeeze method": lambda L: L.ones(1, 3).squeeze(np.array(0)),
    "permute of 0-d arrays": lambda L: L.ones(2, 3).permute(np.array(1), 0),
    "movedim list": lambda L: L.ones(2, 3).movedim([np.array(1)], [0]),
    "roll lists": lambda L: L.roll(L.arange(4.0), [np.array(1)], [0]),
    # a one-element int tensor for a sized int list, and a bool after a list's first int
    "sum over a tensor dim": lambda L: L.ones(3, 3).sum(L.tensor(1)),
    "nuclear norm of dims with a bool": lambda L: L.ones(3, 3).norm(p="nuc", dim=(0, True)),
    # a sized int list given the array: torch's binding fails its assertion
    "sum over a 0-d array": lambda L: L.ones(3, 3).sum(np.array(1)),
    "roll by a 0-d array": lambda L: L.roll(L.arange(3.0), np.array(1)),
    "conv1d stride": lambda L: L.nn.functional.conv1d(L.ones(1, 1, 4), L.ones(1, 1, 2), stride=np.array(1)),
    "fractional_max_pool2d kernel": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 4), np.array(2), output_size=2),
    # int parameters refuse it
    "unflatten method dim": lambda L: L.ones(6).unflatten(np.array(0), (2, 3)),
    "unflatten method dim bool": lambda L: L.ones(6).unflatten(True, (2, 3)),
    "unflatten method empty sizes": lambda L: L.ones(6).unflatten(0, []),
    "embedding_bag padding_idx": lambda L: L.nn.functional.embedding_bag(
        L.tensor([[0, 1]]), L.ones(3, 2), padding_idx=np.array(0)),
    "all over a 0-d array": lambda L: L.ones(3, 3).all(np.array(1)),
    "all over a 0-d array, keepdim": lambda L: L.ones(3, 3).all(np.array(1), keepdim=True),
    "fractional_max_pool2d float kernel": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 4), 2.0, output_size=2),
    # float lists refuse it
    "interpolate scale": lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2), scale_factor=np.array(2.0)),
    "interpolate scale list": lambda L: L.nn.functional.interpolate(L.ones(1, 1, 2), scale_factor=[np.array(2.0)]),
    # the public functions torch's Python calls refuse a bool for an int
    "norm over dim True": lambda L: L.norm(L.ones(3), dim=True),
    "normalize over dim True": lambda L: L.nn.functional.normalize(L.ones(2, 2), dim=True),
    "split sizes with a bool": lambda L: L.ones(3).split([True, 2]),
    "split sizes, dim True": lambda L: L.ones(3).split([2, 1], True),
    "split sizes of a 0-d array": lambda L: L.ones(3).split([np.array(2), 1]),
}


def _described(result):
    if isinstance(result, (tuple, list)):
        return [_described(r) for r in result]
    return (str(result.dtype).replace("tracegrad", "torch"), result.tolist()) if hasattr(result, "dtype") else result


def _call_outcome(lib, program):
    try:
        return "ok", _described(program(lib))
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, re.sub(r"0x[0-9a-f]+", "0x?", str(exc))


@pytest.mark.parametrize("case", list(CALLS))
def test_ints_given_otherwise_as_torch(case):
    assert _call_outcome(tg, CALLS[case]) == _call_outcome(torch, CALLS[case])
