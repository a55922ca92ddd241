"""The interpreter stack (layer 3).

Every operator call is ``dispatch(op, args, kwargs)``. The bottom of the stack is the eager interpreter
(kernel + eager autograd recording); it is implicit and inlined in ``OpDef.__call__`` so the common case
costs one list check. A transform pushes an :class:`Interpreter` with a level that is never reused; its
``process`` handles the op at that level and re-dispatches inner work inside ``lower()``.
"""

from __future__ import annotations

import contextlib
import itertools

from ._state import STATE

_levels = itertools.count(1)


class Interpreter:
    """One active transform. Subclasses implement :meth:`process`."""

    kind = "base"

    def __init__(self) -> None:
        self.level = next(_levels)

    def process(self, op, args: tuple, kwargs: dict):
        raise NotImplementedError

    @contextlib.contextmanager
    def lower(self):
        """Run the body with this interpreter (and everything above it) popped."""
        stack = STATE.stack
        index = stack.index(self)
        saved = stack[index:]
        del stack[index:]
        STATE.refresh()
        try:
            yield
        finally:
            stack.extend(saved)
            STATE.refresh()

    def __enter__(self):
        STATE.stack.append(self)
        STATE.refresh()
        return self

    def __exit__(self, *exc) -> None:
        STATE.stack.remove(self)
        STATE.refresh()


def dispatch(op, args: tuple, kwargs: dict):
    """Send ``op(*args, **kwargs)`` to the top interpreter, or run it eagerly."""
    stack = STATE.stack
    if stack:
        return stack[-1].process(op, args, kwargs)
    from .ops._util import parsed_numbers

    bound = op.bind(args, kwargs) if kwargs or len(args) != op.n_params else args
    return op._eager(parsed_numbers(bound, op.number_idx, op.float_idx))  # (numbers read as OpDef.__call__ reads them)


def current_level() -> int:
    return STATE.stack[-1].level if STATE.stack else 0
