"""Shared ``(shape, dtype)`` records for the metadata nodes keep of their inputs and outputs.

A node holds each differentiable input's and output's shape and dtype (``_in_meta``, ``_out_meta``: a tuple
with one ``(shape, dtype)`` record or None per input or output). Made afresh for every node, those small tuples
are separate objects the node points to, and each full run of Python's cyclic garbage collector visits every
object a node points to: on a graph of 40,000 small ops, that made a training step take more than twice as long
as with the collector off (torch's nodes are C++ objects, out of its sight). Nodes of one shape and dtype share
the records and the usual tuples of them instead, which is also cheaper than building them (one dict lookup).

The records are immutable, so sharing them changes nothing a reader sees.
"""

from __future__ import annotations

import numpy as np

# The positions in a shape's ``forms`` tuple: the record itself and the node metadata tuples made of it (the
# fast paths of ops/fastpath.py read them as literal indices).
RECORD, ONLY, FIRST_OF_TWO, SECOND_OF_TWO, BOTH_OF_TWO = range(5)

# Forms per shape, one table per dtype; float32's is bound by the fast paths, which look it up directly.
F32_FORMS: dict[tuple, tuple] = {}
_TABLES: dict[np.dtype, dict[tuple, tuple]] = {np.dtype(np.float32): F32_FORMS}
_TABLE_LIMIT = 4096  # shapes per dtype kept before a table starts afresh (a program of ever-new shapes)


def meta_forms(shape: tuple, dtype: np.dtype) -> tuple:
    """``(record, (record,), (record, None), (None, record), (record, record))`` with ``record = (shape,
    dtype)``, the same objects for every call with an equal shape and dtype."""
    table = _TABLES.get(dtype)
    if table is None:
        table = _TABLES.setdefault(dtype, {})
    forms = table.get(shape)
    if forms is None:
        if len(table) >= _TABLE_LIMIT:
            table.clear()
        record = (shape, dtype)
        forms = table[shape] = (record, (record,), (record, None), (None, record), (record, record))
    return forms


def meta_record(shape: tuple, dtype: np.dtype) -> tuple:
    """The shared ``(shape, dtype)`` record."""
    return meta_forms(shape, dtype)[RECORD]


def outputs_meta(arrays) -> tuple:
    """A node's ``_out_meta`` for its output arrays: the shared one-record tuple for a single output."""
    if len(arrays) == 1:
        a = arrays[0]
        return meta_forms(a.shape, a.dtype)[ONLY]
    return tuple([meta_forms(a.shape, a.dtype)[RECORD] for a in arrays])
