"""How a user's code called a Tensor method, read from its bytecode: CPython words a builtin method's argument
errors by the object it called.

torch's Tensor methods are C methods of ``torch._C.TensorBase``. Called by a method lookup (``t.abs(1)``,
``torch.Tensor.abs(t, 1)``), CPython calls the method descriptor, whose errors name its class (``TensorBase.abs()``);
called through a bound method object (``getattr(t, "abs")(1)``, ``f = t.abs; f(1)``, ``map(t.abs, ...)``), the
errors name the bound object's class (``Tensor.abs()``, ``Parameter.abs()``). tracegrad's methods are Python
functions, called alike either way: only the caller's bytecode tells the forms apart. Read on the error path only.
"""

from __future__ import annotations

import dis
import os
import sys
from types import FrameType

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# (the instructions a call starts with before its CALL, in Python 3.11)
_CALL_PREFIX = frozenset({"PRECALL", "KW_NAMES"})


def called_by_method_lookup() -> bool:
    """Whether the user's call now failing inside tracegrad took its callable from a method lookup (True also
    where the bytecode does not say: the common ``t.abs(1)``)."""
    frame = _user_frame()
    return frame is None or _callable_loader(frame) in (None, "method")


def _user_frame() -> FrameType | None:
    """The innermost frame outside tracegrad's package: the user's call."""
    frame = sys._getframe(1)
    while frame is not None and _in_package(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _in_package(filename: str) -> bool:
    folder = os.path.dirname(os.path.abspath(filename))
    return folder == _PACKAGE_DIR or folder.startswith(_PACKAGE_DIR + os.sep)


def _callable_loader(frame: FrameType) -> str | None:
    """'method' where the callable of the call at ``frame.f_lasti`` was loaded by a method lookup, 'object' where by
    anything else, None where a jump between the two makes it unclear (or the instruction is no plain call)."""
    instructions = list(dis.get_instructions(frame.f_code))
    # (``f_lasti`` may point into the call's inline cache, past the instruction itself)
    at = max((k for k, ins in enumerate(instructions) if ins.offset <= frame.f_lasti), default=None)
    if at is not None and instructions[at].opname == "CALL_FUNCTION_EX":
        return "object"  # (``f(*args)``: an attribute load, no method lookup, makes the callable a bound method)
    if at is None or instructions[at].opname != "CALL":
        return None
    pending = instructions[at].arg  # the values above the callable: its arguments, keywords included
    start = at
    while start and instructions[start - 1].opname in _CALL_PREFIX:  # (this call's own; a nested call's count)
        start -= 1
    for ins in reversed(instructions[:start]):
        if ins.is_jump_target or "JUMP" in ins.opname:
            return None
        if pending == 0:
            return "method" if ins.opname == "LOAD_METHOD" or (ins.opname == "LOAD_ATTR" and ins.arg & 1) else "object"
        pending -= dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None, jump=False)
        if pending < 0:
            return None
    return None
