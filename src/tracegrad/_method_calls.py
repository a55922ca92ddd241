"""How a user's code called a Tensor method, read from its bytecode: CPython words a builtin method's argument
errors by the object it called.

torch's Tensor methods are C methods of ``torch._C.TensorBase``. Called by a method lookup (``t.abs(1)``,
``torch.Tensor.abs(t, 1)``), CPython calls the method descriptor, whose errors name its class (``TensorBase.abs()``);
called through a bound method object (``getattr(t, "abs")(1)``, ``f = t.abs; f(1)``, ``map(t.abs, ...)``), the
errors name the bound object's class (``Tensor.abs()``, ``Parameter.abs()``). tracegrad's methods are Python
functions, called alike either way: only the caller's bytecode tells the forms apart. Read on the error path only.
Not told apart (the common wording, or the tensor's class): a call from C (``map``, ``functools.partial``) of
``torch.Tensor.abs`` itself, a stored ``f = torch.Tensor.abs; f(t, 1)``, a callable or arguments with a jump.
"""

from __future__ import annotations

import dis
import os
import sys
from types import FrameType

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# (the instructions a call starts with before its CALL: 3.11's PRECALL, 3.11/3.12's KW_NAMES)
_CALL_PREFIX = frozenset({"PRECALL", "KW_NAMES"})
# (the loads of an attribute that is the callable: 3.11's LOAD_METHOD, LOAD_ATTR (3.12 on, with its low bit set,
# a method's load; without it, as in 3.11, the load of a name an import bound: ``from torch import Tensor``,
# ``Tensor.abs(t, 1)``))
_ATTRIBUTE_LOADS = frozenset({"LOAD_METHOD", "LOAD_ATTR"})


def called_by_method_lookup(name: str) -> bool:
    """Whether the user's call now failing inside tracegrad took its callable, the method ``name``, from a method
    lookup (True also where the bytecode does not say: the common ``t.abs(1)``). Never raises: a wording is no
    reason to fail otherwise."""
    try:
        frame = _user_frame()
        return frame is None or _callable_loader(frame, name) in (None, "method")
    except Exception:  # noqa: BLE001 - (bytecode this module does not know: the common wording)
        return True


def _user_frame() -> FrameType | None:
    """The innermost frame outside tracegrad's package: the user's call."""
    frame = sys._getframe(1)
    while frame is not None and _in_package(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _in_package(filename: str) -> bool:
    folder = os.path.dirname(os.path.abspath(filename))
    return folder == _PACKAGE_DIR or folder.startswith(_PACKAGE_DIR + os.sep)


def _callable_loader(frame: FrameType, name: str) -> str | None:
    """'method' where the callable of the call at ``frame.f_lasti`` was loaded as the attribute ``name``,
    'object' where by anything else, None where a jump between the two makes it unclear (or the instruction is no
    plain call)."""
    instructions = list(dis.get_instructions(frame.f_code))
    # (``f_lasti`` may point into the call's inline cache, past the instruction itself)
    at = max((k for k, ins in enumerate(instructions) if ins.offset <= frame.f_lasti), default=None)
    if at is not None and instructions[at].opname == "CALL_FUNCTION_EX":
        return "object"  # (``f(*args)``: an attribute load, no method lookup, makes the callable a bound method)
    if at is None or instructions[at].opname not in ("CALL", "CALL_KW"):
        return None
    # the values above the callable: its arguments, keywords included (and 3.13's CALL_KW's tuple of their names)
    pending = instructions[at].arg + (instructions[at].opname == "CALL_KW")
    start = at
    while start and instructions[start - 1].opname in _CALL_PREFIX:  # (this call's own; a nested call's count)
        start -= 1
    for ins in reversed(instructions[:start]):
        if ins.is_jump_target or "JUMP" in ins.opname:
            return None
        if pending == 0 and ins.opname == "PUSH_NULL":
            continue  # (3.13 on: pushed after the callable that is no method)
        if pending == 0:
            # (a lookup of another name found a bound method: ``a.f(1)`` with ``a.f = t.abs``, ``t.abs.__call__(1)``)
            return "method" if ins.opname in _ATTRIBUTE_LOADS and ins.argval == name else "object"
        pending -= dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None, jump=False)
        if pending < 0:
            return None
    return None
