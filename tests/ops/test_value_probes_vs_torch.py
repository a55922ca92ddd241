"""Every guarded name, called with the values a kernel would quietly read as numbers, answers as torch does.

The argument guard (``tracegrad._arg_parser``) refuses before running what no signature of a name takes where it
stands: a bool or a float for an int, None for a tensor, a list of bools for dims, a tensor for a number. The OpInfo
tests probe every argument of the database's samples; these probe the names the database has no samples for, the
same way for all: ``f(x, v)``, ``f(x, x, v)``, ``f(x, 1, v)`` and ``f(x, 1, 1, v)`` for a function, ``x.m(v)``,
``x.m(x, v)``, ``x.m(1, v)`` and ``x.m(1, 1, v)`` for a method, with ``v`` each of the probe values, and compare the
exception type and message, or that both accept. Then each keyword parameter is given each probe the same way.
"""

from __future__ import annotations

import pytest

from tests._lib import raised_quietly, tg, torch
from tests.ops.test_argument_errors_vs_torch import _guarded_functions, _guarded_methods
from tracegrad._arg_parser import python_signatures

PROBES = ("None", "1.5", "True", "[True]", "3")

# Methods that would change what the process can do, or take callables or storages
UNPROBED = {"set_", "resize_", "share_memory_", "storage", "untyped_storage", "numpy", "pin_memory", "cuda",
            "record_stream", "backward", "register_hook", "apply_", "map_", "data_ptr"}

# Where tracegrad still answers differently, and why (``Tensor.`` for a method). Each is checked to still differ in
# some call, so a fix shows; the name's other calls are then not compared.
KNOWN: dict[str, str] = {}


def _calls(path: str, method: bool) -> list[str]:
    head = f"x.{path}(" if method else "F(x, "
    return [head + before + v + ")" for before in ("", "x, ", "1, ", "1, 1, ") for v in PROBES]


def _keyword_calls(path: str, method: bool) -> list[str]:
    """Each keyword parameter of the name's signatures given each probe (and the tensor itself)."""
    from tests.ops.test_argument_errors_vs_torch import _operator_name

    name, _ = (path, True) if method else _operator_name(path)
    keys = sorted({p.name for sig in python_signatures(name, method) for p in sig.params} - {"input", "self", "out"})
    head = f"x.{path}(" if method else "F(x, "
    return [head + before + f"{key}={v})" for key in keys for before in ("", "x, ", "1, ") for v in (*PROBES, "x")]


def _outcome(lib, call: str, path: str, method: bool):
    from tests.opinfo.core import resolve

    env = {"x": lib.ones(2, 3), "F": None if method else resolve(lib, path)}
    return raised_quietly(lib, call, env)


def _check(path: str, method: bool, calls: list[str]) -> None:
    differ = []
    for call in calls:
        ours, theirs = _outcome(tg, call, path, method), _outcome(torch, call, path, method)
        if ours != theirs:
            differ.append((call.replace("F(", f"{path}("), ours, theirs))
    if ("Tensor." + path if method else path) not in KNOWN:
        assert not differ, differ


FUNCTIONS = _guarded_functions()
METHODS = [name for name in _guarded_methods() if name not in UNPROBED]


def test_known_differences_still_differ():
    """Each name in KNOWN still answers some probe otherwise than torch (then its entry can go)."""
    for key in KNOWN:
        method = key.startswith("Tensor.")
        path = key[len("Tensor."):] if method else key
        calls = _calls(path, method) + _keyword_calls(path, method)
        assert any(_outcome(tg, c, path, method) != _outcome(torch, c, path, method) for c in calls), key


CASES = [(path, False) for path in FUNCTIONS] + [(name, True) for name in METHODS]


@pytest.mark.parametrize("path,method", CASES)
def test_positional_probes_answered_as_torch(path, method):
    _check(path, method, _calls(path, method))


@pytest.mark.parametrize("path,method", CASES)
def test_keyword_probes_answered_as_torch(path, method):
    _check(path, method, _keyword_calls(path, method))
