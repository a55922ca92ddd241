"""Identities shown to the frontend: node ids (``"n17"``) and storage ids (``"s7f3a..."``).

A node id lives in the node's own instance dict, so it is stable while the node is alive, costs one dict
lookup to read, and dies with the node (no global table keeps graphs alive). A storage id names the memory
block an array views: the identity of the base array that owns it, never ``id()`` of a tensor wrapper.
"""

from __future__ import annotations

import itertools

_node_counter = itertools.count(1)
_ID_KEY = "_viz_id"


def node_id(node) -> str:
    """The node's id, the same in every message while the node is alive."""
    d = node.__dict__
    nid = d.get(_ID_KEY)
    if nid is None:
        nid = d[_ID_KEY] = f"n{next(_node_counter)}"
    return nid


def base_array(arr):
    """The array that owns the memory ``arr`` views (NumPy's or CuPy's ``.base`` chain)."""
    base = arr
    while True:
        parent = getattr(base, "base", None)
        # NumPy's as_strided (which expand uses) puts a bare interface holder between a view and its base;
        # look through it, or every expanded view would count as a storage of its own
        while parent is not None and not hasattr(parent, "shape") and hasattr(parent, "base"):
            parent = parent.base
        if parent is None or not hasattr(parent, "nbytes") or not hasattr(parent, "shape"):
            return base
        base = parent


def storage_of(arr) -> tuple[str, int]:
    """``(storage id, storage bytes)`` of the memory ``arr`` views: the identity of its base array, which
    every view of that memory shares (two tensors wrapping the same memory get the same id)."""
    base = arr if arr.base is None else base_array(arr)
    return f"s{id(base):x}", int(base.nbytes)
