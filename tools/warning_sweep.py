"""Sweep: the warnings tracegrad raises against torch's, with where they are shown.

Runs every OpInfo sample (function, aliases, in-place and ``out=`` forms, the latter with a wrongly shaped ``out``
so that the resize warning fires) and a list of known warning triggers (``TRIGGERS``, one short program per
warning tracegrad can emit) in both libraries, recording warnings with ``simplefilter("always")``. For each
program it compares the category, the message's first line, how often it is raised, and where it is shown:
``user`` (the program's own line), ``torch:<file>`` or ``tracegrad:<file>``. A location is a bug where torch
shows the warning at the user's line and tracegrad inside its own files; torch's own Python files against either
the user's line or tracegrad's own are both fine.

    PYTHONPATH=src .venv/bin/python tools/warning_sweep.py [--opinfo] [--triggers] [-v]
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import tracegrad as tg

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _ROOT)
_DIRS = {"torch": os.path.dirname(torch.__file__) + os.sep, "tracegrad": os.path.dirname(tg.__file__) + os.sep}

Record = tuple[str, str, str]  # (category, first line of the message, location)


def where(filename: str) -> str:
    for name, prefix in _DIRS.items():
        if filename.startswith(prefix):
            return f"{name}:{filename[len(prefix):]}"
    return "user"


def recorded(program: Callable[[], Any]) -> tuple[list[Record], str | None]:
    """The warnings ``program`` raises (and the type of the exception it ends with, if any)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            program()
            error = None
        except Exception as exc:  # noqa: BLE001 - the sweep records every outcome
            error = type(exc).__name__
    return [(w.category.__name__, _first_words(str(w.message)), where(w.filename)) for w in caught], error


def _first_words(message: str) -> str:
    """The message's first line, without the C++ source location torch appends to its own warnings."""
    return message.split(" (Triggered internally at ")[0].split("\n")[0][:90]


def differences(ours: list[Record], theirs: list[Record]) -> list[str]:
    """What differs between tracegrad's warnings and torch's; an empty list where they agree."""
    if len(ours) != len(theirs):
        return [f"count {len(ours)} vs torch {len(theirs)}: {ours} vs {theirs}"]
    found = []
    for (cat, msg, loc), (tcat, tmsg, tloc) in zip(ours, theirs):
        if (cat, msg) != (tcat, tmsg):
            found.append(f"{cat} {msg!r} vs torch {tcat} {tmsg!r}")
        elif tloc == "user" and loc != "user":
            found.append(f"shown at {loc}, torch at the user's line: {msg!r}")
        elif tloc.startswith("tracegrad") or (loc.startswith("torch")):
            found.append(f"odd location {loc} vs torch {tloc}: {msg!r}")
    return found


def compare(name: str, run: Callable[[Any], Any], verbose: bool) -> list[str]:
    (ours, err), (theirs, terr) = recorded(lambda: run(tg)), recorded(lambda: run(torch))
    found = differences(ours, theirs)
    if (err is None) != (terr is None) and (ours or theirs):
        found.append(f"raised {err} vs torch {terr}")
    if verbose and (ours or theirs):
        print(f"  {name}: {ours} | torch {theirs}")
    return [f"{name}: {d}" for d in found]


# ------------------------------------------------------------------------------------------------- OpInfo


def _opinfo_runs():
    from tests.opinfo import op_db
    from tests.opinfo.core import Call, flatten_outputs, resolve

    def form(op, sample, path, **extra):
        def run(lib):
            return Call(lib, op, sample, requires_grad=False).run(resolve(lib, path), **extra)
        return run

    def wrongly_shaped_out(op, sample):
        def run(lib):
            call = Call(lib, op, sample, requires_grad=False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                raw = call.run(resolve(lib, op.name))
            outs = tuple(lib.empty(1, dtype=t.dtype) for t in flatten_outputs(raw))
            return call.run(resolve(lib, op.name), out=outs[0] if hasattr(raw, "shape") else outs)
        return run

    for op in op_db:
        for dtype in op.dtypes:
            for sample in op.samples(dtype):
                key = f"{op.id}/{dtype}/{sample.name}"
                for path in (op.name, *op.aliases, *([op.inplace] if op.inplace else [])):
                    yield f"{key}/{path}", form(op, sample, path)
                if op.supports_out:
                    yield f"{key}/out", wrongly_shaped_out(op, sample)


# ------------------------------------------------------------------------------------------------- triggers

from tools.warning_triggers import TRIGGERS  # noqa: E402


def _trigger_runs():
    for name, source in TRIGGERS.items():
        code = compile(source, f"<trigger {name}>", "exec")

        def run(lib, code=code):
            exec(code, {"torch": lib, "np": np, "__name__": "__trigger__"})
        yield name, run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--opinfo", action="store_true")
    parser.add_argument("--triggers", action="store_true")
    parser.add_argument("-k", default="")
    parser.add_argument("-v", action="store_true")
    parser.add_argument("--always", action="store_true", help="set_warn_always(True) in both: every location")
    args = parser.parse_args()
    if args.always:
        tg.set_warn_always(True)
        torch.set_warn_always(True)
    runs = []
    if args.opinfo or not args.triggers:
        runs.append(_opinfo_runs())
    if args.triggers or not args.opinfo:
        runs.append(_trigger_runs())
    problems = []
    for source in runs:
        for name, run in source:
            if args.k in name:
                problems += compare(name, run, args.v)
    print("\n".join(problems) or "no differences")


if __name__ == "__main__":
    main()
