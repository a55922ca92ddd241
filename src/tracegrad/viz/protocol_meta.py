"""The protocol's envelope and its JSON Schemas (``viz/protocol/*.schema.json``)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

PROTOCOL = "tracegrad"
VERSION = 1
SCHEMA_DIR = Path(__file__).parent / "protocol"

# message type -> schema file stem
SCHEMA_OF_TYPE = {"graph": "graph", "hooks_fired": "hooks", "saved_tensors": "saved", "memory": "memory",
                  "batch": "batch", "hello": "hello", "error": "error", "cell_started": "cell",
                  "cell_finished": "cell", "set_live": "client", "request_state": "client"}


def envelope(kind: str) -> dict:
    return {"protocol": PROTOCOL, "version": VERSION, "type": kind}


@functools.cache
def _load(name: str) -> str:
    stem = SCHEMA_OF_TYPE.get(name, name)
    path = SCHEMA_DIR / f"{stem}.schema.json"
    if not path.is_file():
        raise ValueError(f"no protocol schema named {name!r} (known: {', '.join(sorted(SCHEMA_OF_TYPE))})")
    return path.read_text()


def load_schema(name: str) -> dict:
    """The JSON Schema for a message type (``"graph"``, ``"hooks_fired"``...) or file stem (``"hooks"``)."""
    return json.loads(_load(name))


@functools.cache
def _validator(name: str):
    import jsonschema

    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate(message: dict) -> None:
    """Validate a message against its schema (raises ``jsonschema.ValidationError``); a ``batch`` has each
    inner message validated too."""
    import jsonschema

    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in SCHEMA_OF_TYPE:
        raise jsonschema.ValidationError(f"unknown message type {kind!r}")
    _validator(kind).validate(message)
    if kind == "batch":
        for inner in message["messages"]:
            validate(inner)
