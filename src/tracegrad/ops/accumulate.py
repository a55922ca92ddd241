"""Adding rows into an array at repeated indices, in PyTorch's order and fast.

``index_add``, ``index_put(..., accumulate=True)`` with one index array and the embedding's backward all add
``rows[i]`` into ``out[index[i]]`` one ``i`` after the other. ``np.add.at`` does exactly that, but with a cost
per row that makes long rows slow. Here the rows are grouped by how many earlier rows share their index (the
first occurrence of each index, then the second, ...): within a group the indices are distinct, so each
group is one fancy-indexed addition, and every destination still gets its rows in index order.
"""

from __future__ import annotations

import math

import numpy as np

# np.add.at stays the cheaper one below this many elements per row or this many rows, and above this many
# rows at one index (one pass per repetition).
_MIN_ROW = 8
_MIN_ROWS = 16
_MAX_PASSES = 32


def add_rows_at(out: np.ndarray, index: np.ndarray, rows: np.ndarray) -> None:
    """``out[index[i]] += rows[i]`` for every ``i`` in order, along ``out``'s first dim. ``index`` holds valid
    indices (negative ones count from the end); ``rows`` has ``index.size`` rows of ``out``'s row shape (or
    broadcasts to them)."""
    index = np.asarray(index).reshape(-1)
    if index.size < _MIN_ROWS or out.ndim < 2 or math.prod(out.shape[1:]) < _MIN_ROW:
        np.add.at(out, index, rows)
        return
    index = np.where(index < 0, index + out.shape[0], index)  # (two spellings of one row must meet)
    order = np.argsort(index, kind="stable")
    ordered = index[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    counts = np.diff(np.append(starts, index.size))
    if counts.max() > _MAX_PASSES:
        np.add.at(out, index, rows)
        return
    rows = np.broadcast_to(np.asarray(rows, dtype=out.dtype), (index.size,) + out.shape[1:])
    repetition = np.arange(index.size) - np.repeat(starts, counts)  # (0 for an index's first row, ...)
    for number in range(int(counts.max())):
        picked = order[repetition == number]
        out[index[picked]] += rows[picked]
