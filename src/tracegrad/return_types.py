"""Named tuples returned by multi-output operators (``torch.return_types.max`` and friends)."""

from __future__ import annotations

from collections import namedtuple

_CACHE: dict = {}


def make_return(schema, outs: tuple):
    names = tuple(r.name for r in schema.returns)
    if all(names):
        cls = _CACHE.get(schema.name)
        if cls is None:
            cls = _CACHE[schema.name] = namedtuple(schema.name.rstrip("_"), names)
            cls.__module__ = "torch.return_types"
        return cls(*outs)
    return tuple(outs)
