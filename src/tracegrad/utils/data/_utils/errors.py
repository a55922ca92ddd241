"""How an exception raised in a worker reaches the main process: its type and formatted traceback cross the
process boundary (a traceback object cannot be pickled) and are raised again there, as PyTorch's
``ExceptionWrapper`` does."""

from __future__ import annotations

import sys
import traceback


class KeyErrorMessage(str):
    """A message whose repr is itself: ``KeyError`` shows its argument's repr, which would print the carried
    traceback as one line full of ``\\n``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """The exception being handled (or ``exc_info``), kept as its type and traceback text; ``reraise`` raises
    ``"Caught <Type> <where>.\\nOriginal Traceback ..."`` as that type."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))  # (not exc_info: a frame cycle)
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):  # (exceptions built from a message= keyword)
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # (a type whose constructor takes other arguments)
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            del exception  # (this frame, in the traceback, must not hold the exception: a cycle outliving it)
