"""The envelope of the notebook protocol (viz/protocol/README.md) and the messages only the kernel side makes."""

from __future__ import annotations

from typing import Any

from ..viz.protocol_meta import PROTOCOL, VERSION

COMM_TARGET = "tracegrad.inspector"

MIME_GRAPH = "application/vnd.tracegrad.graph+json"
MIME_HOOKS = "application/vnd.tracegrad.hooks+json"
MIME_SAVED = "application/vnd.tracegrad.saved+json"

# What this kernel side can do, announced in ``hello`` so a frontend can adapt to older kernels.
CAPABILITIES = ("cells", "graph", "hooks_fired", "saved_tensors", "batch", "set_live", "request_state", "sources")


def envelope(kind: str, **fields: Any) -> dict[str, Any]:
    """A protocol message of type ``kind`` with ``fields``."""
    return {"protocol": PROTOCOL, "version": VERSION, "type": kind, **fields}


def hello(*, live: bool) -> dict[str, Any]:
    from .. import __version__

    return envelope("hello", tracegrad_version=__version__, live=live, capabilities=list(CAPABILITIES))


def error(message: str, *, cell_id: str | None = None) -> dict[str, Any]:
    return envelope("error", cell_id=cell_id, message=one_line(message))


def one_line(text: str, limit: int = 300) -> str:
    """The first non-empty line of ``text``, shortened to ``limit`` characters."""
    line = next((part.strip() for part in str(text).splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def describe_exception(exc: BaseException) -> str:
    """``TypeName: first line of the message``, the way a notebook sidebar shows an error."""
    text = one_line(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
