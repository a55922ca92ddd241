"""Running a program from PyTorch's tutorials and notes under both libraries, and comparing what it shows.

A program is ``program(lib, show)``. Wherever the tutorial prints, it calls ``show(*values)``: a tensor is
compared by value (with its shape, dtype, ``requires_grad`` and ``grad_fn`` name), anything else by its
``str``, with object addresses and the library's own name normalised (``<tracegrad.autograd.function.FBackward
object at 0x...>`` reads as torch's ``<torch.autograd.function.FBackward object at 0x...>``). The transcript
ends with the exception the program stopped on (type and message) and the warnings it raised.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Callable

import numpy as np
from _lib import tg, torch

__all__ = ["transcript", "assert_same_transcript", "normalised", "show_outcome"]

# Warnings torch's own Python internals raise along the way (not part of the behaviour under test).
TORCH_INTERNAL_WARNINGS = ("`torch.jit.script` is deprecated",)


def normalised(text: str) -> str:
    """``text`` with object addresses blanked and tracegrad's name spelt as torch's."""
    return re.sub(r"0x[0-9a-fA-F]+", "0x…", text).replace("tracegrad", "torch")


def _entry(value):
    if isinstance(value, (tg.Tensor, torch.Tensor)):
        grad_fn = value.grad_fn.name() if value.grad_fn is not None else None
        meta = (tuple(value.shape), str(value.dtype).replace("tracegrad", "torch"), value.requires_grad, grad_fn)
        return ("tensor", meta, value.detach().numpy())
    return ("text", normalised(str(value)))


def repr_or_error(f: Callable, lib) -> object:
    """What ``f(lib)`` gives, as comparable text (its repr, normalised), or its error, warnings ignored."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return normalised(repr(f(lib)))
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, normalised(str(e))


def transcript(lib, program: Callable) -> list:
    """What ``program(lib, show)`` shows, then how it ended, then its warnings (see the module docstring)."""
    log: list = []

    def show(*values) -> None:
        log.append(tuple(_entry(v) for v in values))

    # (warn-always: a once-a-process warning shows whether or not a test before this one used it up)
    always_before = lib.is_warn_always_enabled()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.set_warn_always(True)
        try:
            program(lib, show)
        except Exception as exc:  # noqa: BLE001 - how the program ends is part of the transcript
            log.append((("raised", type(exc).__name__, normalised(str(exc))),))
        finally:
            lib.set_warn_always(always_before)
    for w in caught:
        text = str(w.message).split(" (Triggered internally at")[0]
        if not text.startswith(TORCH_INTERNAL_WARNINGS):
            log.append((("warned", w.category.__name__, normalised(text)),))
    return log


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _skeleton(entry: tuple) -> tuple:
    """An entry without its values: a tensor's metadata, or a text with its numbers blanked."""
    return ("text", _NUMBER.sub("#", entry[1])) if entry[0] == "text" else entry[:2]


def assert_same_transcript(program: Callable, rtol: float = 1e-5, atol: float = 1e-6) -> list:
    """Run ``program`` under tracegrad and torch; their transcripts must agree (tensors, and the numbers in printed
    text, to the tolerance: a loss printed to six decimals can differ in its last digit where the matrix products
    do). Returns torch's transcript (for the test to check the program did what the tutorial says)."""
    ours, theirs = transcript(tg, program), transcript(torch, program)
    shape_ours = [tuple(_skeleton(e) for e in line) for line in ours]
    shape_theirs = [tuple(_skeleton(e) for e in line) for line in theirs]
    assert shape_ours == shape_theirs, "\n".join(
        difflib.unified_diff([str(x) for x in shape_theirs], [str(x) for x in shape_ours], "torch", "tracegrad",
                             lineterm=""))
    for line_ours, line_theirs in zip(ours, theirs):
        for a, b in zip(line_ours, line_theirs):
            if a[0] == "tensor":
                np.testing.assert_allclose(a[2], b[2], rtol=rtol, atol=atol)
            elif a[0] == "text":
                numbers_ours = [float(n) for n in _NUMBER.findall(a[1])]
                numbers_theirs = [float(n) for n in _NUMBER.findall(b[1])]
                np.testing.assert_allclose(numbers_ours, numbers_theirs, rtol=rtol, atol=atol, err_msg=a[1])
            else:
                assert a == b
    return theirs


def show_outcome(show: Callable, f: Callable) -> None:
    """Show what ``f()`` returns, or the error it raises (a program's step that may fail in either library)."""
    try:
        show("ok", f())
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        show(type(e).__name__, e)
