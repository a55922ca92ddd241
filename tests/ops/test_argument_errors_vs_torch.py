"""Argument mistakes are refused as torch's Python argument parser refuses them, in its words.

torch binds every call of an operator against the operator's Python signatures before running it. tracegrad runs
the kernel on the arguments as given and, only when the call fails, asks its copy of the parser
(``tracegrad._arg_parser``) for torch's verdict. These tests call every operator of the OpInfo database, as a
function and as a Tensor method, with the mistakes users make — one positional argument too many, a keyword
the function does not take, a string where a number or a tensor goes, and the values NumPy would quietly read as
numbers (a bool or a float for an int, None for a tensor) — and compare the exception type and the whole message
with torch's (or that both accept the call). A first test checks the other side: every valid sample of the database binds to
one of the signatures, so no correct call is ever refused.
"""

from __future__ import annotations

import functools
import warnings

import pytest

from tests._lib import Unknown, raised, tg, torch
from tests.opinfo import op_db
from tests.opinfo.core import Call, resolve
from tracegrad._arg_parser import parse_error, python_signatures
from tracegrad._python_overloads import NN_FUNCTIONAL_IN_CPP, PYTHON_IN_TORCH, PYTHON_IN_TORCH_METHODS

# the prefix torch's messages give the operators of a Python namespace (``linalg_inv()``)
_PREFIXES = {"linalg.": "linalg_", "special.": "special_", "fft.": "fft_", "nn.functional.": ""}

# Where tracegrad still answers differently, and why (none now). Each entry is checked to still differ, so a fix
# shows.
KNOWN: dict[tuple[str, str], str] = {}


def _operator_name(path: str) -> tuple[str, bool]:
    if path.startswith("Tensor."):
        return path[len("Tensor."):], True
    for prefix, aten in _PREFIXES.items():
        if path.startswith(prefix):
            return aten + path[len(prefix):], False
    return path, False


def _bound_in_cpp(path: str, name: str, method: bool) -> bool:
    """Whether torch binds ``path`` in C++ (its argument errors are its parser's, not Python's)."""
    if method:
        return name not in PYTHON_IN_TORCH_METHODS
    if path.startswith("nn.functional."):
        return path[len("nn.functional."):] in NN_FUNCTIONAL_IN_CPP
    return name not in PYTHON_IN_TORCH


def _paths() -> dict[str, object]:
    """Every public path of the database with a parser guard, and one OpInfo for it."""
    paths: dict[str, object] = {}
    for op in op_db:
        for path in (op.name, *op.aliases):
            name, method = _operator_name(path)
            if path not in paths and python_signatures(name, method) and _bound_in_cpp(path, name, method):
                paths[path] = op
    return paths


PATHS = _paths()


def _caller(path: str):
    """The call as a user writes it. CPython names a C method by where the call found it: ``x.acos(1)`` says
    ``TensorBase.acos()`` in its errors, ``f = x.acos; f(*args)`` says ``Tensor.acos()``; the source written here
    is the first kind."""
    if not path.startswith("Tensor."):
        return lambda lib, args, kwargs: resolve(lib, path)(*args, **kwargs)
    method = path[len("Tensor."):]

    def call(lib, args, kwargs):
        listed = [f"a[{i}]" for i in range(1, len(args))] + [f"{key}=k[{key!r}]" for key in kwargs]
        source = f"lambda a, k: a[0].{method}({', '.join(listed)})"
        return eval(source)(args, kwargs)  # noqa: S307 - the source is built here from the database's names
    return call


def _valid_calls(op) -> list[tuple[tuple, dict]]:
    calls = []
    for dtype in ("float32", "int64"):
        if dtype in op.dtypes:
            for sample in op.samples(dtype):
                call = Call(tg, op, sample, requires_grad=False)
                calls.append((tuple(call.args), dict(call.kwargs)))
    return calls


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_valid_sample_binds_to_a_signature(path):
    name, method = _operator_name(path)
    sigs = list(python_signatures(name, method))
    for args, kwargs in _valid_calls(PATHS[path]):
        assert parse_error(sigs, args[1:] if method else args, kwargs) is None, (args, kwargs)


# What goes in each argument's place: a string, and the values a kernel would read as numbers where torch's
# parser refuses them (a bool for an int, a float for an int, None for a tensor or a non-optional int)
_WRONG_VALUES = {"str": "a", "None": None, "float": 1.5, "bool": True}


def _mistakes(args: tuple, kwargs: dict, method: bool):
    """(label, args, kwargs) of the mistaken calls made from one valid call."""
    yield "extra", args + (Unknown(),), kwargs
    yield "bogus keyword", args, {**kwargs, "bogus": 1}
    if not method:  # (whether the function takes ``out=`` at all shows in the answer)
        yield "object for out", args, {**kwargs, "out": Unknown()}
    for label, wrong in _WRONG_VALUES.items():
        for i in range(2 if method else 1, len(args)):
            yield f"{label} at {i}", args[:i] + (wrong,) + args[i + 1:], kwargs
        for key in kwargs:
            yield f"{label} for {key}", args, {**kwargs, key: wrong}


def _materialized(lib, op) -> tuple[tuple, dict]:
    call = Call(lib, op, op.samples("float32")[0], requires_grad=False)
    return tuple(call.args), dict(call.kwargs)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_argument_mistakes_refused_as_torch(path):
    op = PATHS[path]
    method = path.startswith("Tensor.")
    ours_valid, theirs_valid = _materialized(tg, op), _materialized(torch, op)
    mistakes = zip(_mistakes(*ours_valid, method), _mistakes(*theirs_valid, method), strict=True)
    call = _caller(path)
    for (label, our_args, our_kwargs), (_, their_args, their_kwargs) in mistakes:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = raised(tg, functools.partial(call, args=our_args, kwargs=our_kwargs))
            theirs = raised(torch, functools.partial(call, args=their_args, kwargs=their_kwargs))
        if (path, label) in KNOWN:
            assert ours != theirs, f"{path} {label} now matches torch: drop it from KNOWN"
        else:
            assert ours == theirs, (path, label)


# ---- every guarded name, not only the database's: what torch says to a call with one unknown keyword ----------
#
# With no other argument, torch lists every signature of a name with several (or names the arguments a single
# one is missing, or the keyword it does not take), so comparing that message compares the whole signature table.

def _guarded_functions() -> list[str]:
    from tracegrad._python_overloads import NN_FUNCTIONAL_IN_CPP
    from tracegrad.ops.registry import OpDef

    found = []
    for path, prefix in (("", ""), ("linalg.", "linalg_"), ("special.", "special_"), ("fft.", "fft_"),
                         ("nn.functional.", "")):
        ours, theirs = resolve(tg, path[:-1]) if path else tg, resolve(torch, path[:-1]) if path else torch
        for name in dir(ours):
            value = getattr(ours, name)
            if name.startswith("_") or not hasattr(theirs, name) or (prefix + name) in PYTHON_IN_TORCH:
                continue
            if path == "nn.functional." and name not in NN_FUNCTIONAL_IN_CPP:
                continue
            if (hasattr(value, "argument_guard") or isinstance(value, OpDef)) and python_signatures(prefix + name,
                                                                                                     False):
                found.append(path + name)
    return found


def _guarded_methods() -> list[str]:
    return [name for name in dir(tg.Tensor) if not name.startswith("__") and hasattr(torch.Tensor, name)
            and hasattr(getattr(tg.Tensor, name), "argument_guard")]


@pytest.mark.parametrize("path", _guarded_functions())
def test_function_signatures_as_torch(path):
    ours = raised(tg, lambda lib: resolve(lib, path)(bogus=1))
    theirs = raised(torch, lambda lib: resolve(lib, path)(bogus=1))
    assert ours == theirs


@pytest.mark.parametrize("name", _guarded_methods())
def test_method_signatures_as_torch(name):
    call = eval(f"lambda lib: lib.ones(2).{name}(bogus=1)")  # noqa: S307 - a name of dir(Tensor)
    assert raised(tg, call) == raised(torch, call)


# ---- mistakes outside the operators' parser: indexing, Python-level methods, sizes -------------------------------

SNIPPETS = [
    'x["a"]', 'x[1, "a"]', 'x[["a"]]', 'x[b"a"]', 'x[object()]', 'x[1, object()]', 'x[{1}]', 'x[1.5]',
    'x.__setitem__("a", 1)', 'x.__setitem__(object(), 1)',
    "x.view(2.0, 3)", "x.view(2, 3.0)", 'x.view("a")', 'x.view("a", 3)', 'x.reshape(6, -1, "a")', "x.expand(2, 3.5)",
    "x.permute(0, 1.0)", "x.repeat(2.0, 3)", "x.view((2, 3), 1)",
    "x.backward(1, 2, 3, 4, 5)", "x.register_hook(1, 2)", "x.register_post_accumulate_grad_hook(1, 2)",
    "torch.add(x, x, 2)", 'torch.add(x, 1, alpha="a")', "torch.max(x, x, 3)", "torch.max(x, x, keepdim=True)",
    "x.max(x, True)", "x.min(keepdim=True)", "torch.mul(x, None)", "x.mul(None)", "torch.eq(x, None)",
    "torch.transpose(x, True, 0)", "x.flip(True)", "x.flip([True])", "x.flip((0, True))", "x.expand(2, True, 3)",
    "x.expand(True, 3)", "torch.ones(2, True)", "x.new_zeros(2, True)", "x.view(3, True)", "x.permute(1, True)",
    "torch.polygamma(1.0, x)", "torch.roll(x, 1.5)", "torch.tril(x, True)", "torch.take(x, True)",
    "torch.count_nonzero(x, out=x)", "torch.relu(x, out=x)", 'torch.sum(x, "a")', "torch.sum(x, dim=1.5)",
    "torch.mm(x, 2)", "torch.cat(x)", "torch.cat([x, 1])", "torch.stack(x, 0)", "torch.exp(x, 1)",
    'torch.clamp(x, "a")', 'torch.where(x > 0, x, "a")', 'x.masked_fill(x > 0, "a")', "x.unsqueeze(1.0)",
    'x.sum(foo=1)', "x.std(unbiased=2)", "torch.nonzero(x, as_tuple=1)", "x.gather(0, x.long(), True, 1)",
    # constant padding narrows a negative pad away first, side by side, with narrow's error
    "torch.nn.functional.pad(x, (-2, -3))", "torch.nn.functional.pad(x, (5, -5))", "torch.nn.functional.pad(x, (2, -6))",
    "torch.nn.functional.pad(x, (-1, 3))", "torch.nn.functional.pad(x, (1.5, 1))",
    "torch.nn.functional.pad(x, torch.tensor([1, 1]))", 'torch.nn.functional.pad(x, (1, 1), "foo")',
    "torch.nn.functional.pad(x, (1, 1), value=None)", "torch.nn.functional.pad(x, [1, 1], 'reflect', 2)",
    # routed as torch's Python layer routes them, so the error is the same inner operator's
    'torch.nn.functional.softmax(x, dim="a")', "torch.nn.functional.log_softmax(x, 1.0)",
    'torch.nn.functional.softmax(x, 1, dtype="a")', "x.split(1.5)", "x.split([1, 1.5])", "torch.split(x, 1, 0.5)",
    # an int device is an accelerator's index; a dtype given by name is refused
    "x.to(5)", "torch.device(0)", 'x.to(dtype="float32")', 'torch.zeros(2, dtype="float32")',
    'x.sum(dtype="float64")', "torch.ones(2, 3, requires_grad=1)", "torch.full((2,), 'a')", 'torch.arange("a")',
    "torch.eye(2.5)", "torch.randint(5)", "torch.ones((2, 3), 4)", 'x.new_zeros("a")', 'x.new_full((2,), "a")',
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_snippet_refused_as_torch(snippet):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval(snippet, {"torch": lib, "x": lib.ones(2, 3)})  # noqa: S307 - the snippets above
    assert raised(tg, run) == raised(torch, run)
