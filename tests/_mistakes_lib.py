"""Shared runner of the "user mistakes" tests: one short program, run under a library, gives what the user sees.

What the user sees is the exception (type name and message, from ``_lib.raised``) or, for a program that runs,
a plain rendering of its result, together with the warnings it printed. Warn-once warnings are compared as if each
program were the process's first (``set_warn_always``), and torch's "(Triggered internally at ...)" C++ suffix is
dropped (``warning_texts``): neither is part of the user's mistake.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from _lib import raised, tg, torch, warning_texts

Program = Callable[[Any], Any]


def plain(result: Any) -> Any:
    """A program's result as comparable plain data: tensors as (dtype, shape, values), containers item by item."""
    if hasattr(result, "shape") and hasattr(result, "detach") and hasattr(result, "dtype"):
        return str(result.dtype), tuple(result.shape), _nan_as_text(result.detach().tolist())
    if isinstance(result, (tuple, list)):
        return type(result).__name__, [plain(r) for r in result]
    if isinstance(result, dict):
        return {k: plain(v) for k, v in result.items()}
    if isinstance(result, (str, int, float, bool, type(None))):
        return _nan_as_text(result)
    return type(result).__name__


def _nan_as_text(value: Any) -> Any:
    """NaN made comparable (NaN != NaN would fail a comparison of equal results)."""
    if isinstance(value, list):
        return [_nan_as_text(v) for v in value]
    if isinstance(value, float) and value != value:
        return "nan"
    return value


def outcome(lib: Any, program: Program) -> tuple[Any, list[str]]:
    """(the error ``raised`` reports, or ("ok", plain result)), and the texts of the warnings shown."""
    always = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    returned: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            error = raised(lib, lambda L: returned.append(program(L)))
    finally:
        lib.set_warn_always(always)
    return (error if error is not None else ("ok", plain(returned[0]))), warning_texts(caught)


def same(ours: Any, theirs: Any) -> bool:
    """Equal outcomes, floats equal to float32 rounding (the libraries sum in different orders)."""
    if isinstance(ours, float) and isinstance(theirs, float):
        return math.isclose(ours, theirs, rel_tol=1e-5, abs_tol=1e-6) or ours == theirs
    if isinstance(ours, (list, tuple)) and isinstance(theirs, (list, tuple)):
        return type(ours) is type(theirs) and len(ours) == len(theirs) and all(map(same, ours, theirs))
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(same(ours[k], theirs[k]) for k in ours)
    return ours == theirs


def is_a_mistake(theirs: tuple[Any, list[str]]) -> bool:
    """torch itself refuses the program or warns about it: the case really is a mistake torch reports."""
    result, shown = theirs
    return result[0] != "ok" or bool(shown)


# name -> (why tracegrad answers otherwise on purpose, the (type, message) tracegrad gives instead)
Known = dict[str, tuple[str, tuple[str, str]]]


def assert_as_torch(name: str, program: Program, silent: frozenset | set = frozenset(),
                    known: Known | None = None) -> None:
    """The case ``name`` gives torch's outcome and warnings; a case torch runs silently must be listed in
    ``silent`` (the others must really be mistakes torch reports), and a deliberate difference in ``known``."""
    ours, theirs = outcome(tg, program), outcome(torch, program)
    if known and name in known:
        reason, expected = known[name]
        assert ours[0] == expected, (reason, ours)
        assert not same(ours, theirs), f"tracegrad now answers as torch: drop the known difference ({reason})"
        return
    assert same(ours, theirs), (ours, theirs)
    assert is_a_mistake(theirs) != (name in silent), "a silent case must be listed in SILENT, and only those"
