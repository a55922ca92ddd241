"""The cascade sum of PyTorch's CPU ``nll_loss`` / ``nll_loss2d`` forward (aten/src/ATen/native/LossNLL.cpp,
LossNLL2d.cpp), reproduced in NumPy.

The kernel walks the targets in order and keeps 8 partial sums. Each counted element is added to level 0; after
element ``i`` (its index among all targets, ignored ones included), level ``j`` is flushed into level ``j + 1``
while ``i`` is a multiple of ``step ** (j + 1)`` (``step`` = 16 for up to 2**39 targets). Ignored elements are
skipped before that check, so they flush nothing. The result is the 8 levels added in order to zero.

Here each level is a segmented running sum: the elements between two flushes form a segment, summed in order
(vectorised across segments), and the segment sums are the next level's elements.
"""

from __future__ import annotations

import numpy as np

_LEVELS = 8


def _level_power(count: int) -> int:
    """log2 of the step: ``max(4, CeilLog2(count) / 8)``."""
    return max(4, (max(count, 1) - 1).bit_length() // _LEVELS)


def _flush_depth(index: np.ndarray, power: int) -> np.ndarray:
    """How many levels flush after element ``index``: the run of all-zero ``power``-bit digits at its low end,
    at most 7 (index 0 flushes them all)."""
    depth = np.zeros(index.shape, np.int64)
    mask = (1 << power) - 1
    live = np.ones(index.shape, bool)
    for level in range(_LEVELS - 1):
        live &= (index & (mask << (level * power))) == 0
        depth += live
    return depth


def _segment_sums(values: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Running sums from zero of the segments that ``ends`` closes (True at a segment's last element), and of
    the open run after the last end (zero if empty): (closed sums, residue as a 0-d array)."""
    closed = np.flatnonzero(ends)
    segment = np.cumsum(ends) - ends  # (the number of ends before each element)
    starts = np.concatenate(([0], closed + 1))
    position = np.arange(values.shape[0]) - starts[segment]
    padded = np.zeros((closed.shape[0] + 1, int(position.max()) + 1), values.dtype)
    padded[segment, position] = values  # (trailing zeros add nothing)
    sums = _running_totals(padded)
    return sums[:-1], sums[-1]


def _running_totals(rows: np.ndarray) -> np.ndarray:
    """Each row's elements added one after another (``accumulate`` keeps that order, ``reduce`` would pair
    them). A leading -0 would survive where the kernel's 0 + -0 gives +0; every such sum is later added to a
    zero, so the final value is the same."""
    if rows.shape[1] == 0:
        return np.zeros(rows.shape[0], rows.dtype)
    return np.add.accumulate(rows, axis=1)[:, -1]


def cascade_sum(values: np.ndarray, index: np.ndarray | None, count: int) -> np.ndarray:
    """The kernel's sum of ``values`` (in order) whose positions among all ``count`` targets are ``index``
    (None: all of them, none ignored)."""
    dtype = values.dtype
    if index is None:
        return _regular_cascade(values, 1 << _level_power(count))
    depth = _flush_depth(index, _level_power(count))
    residues = []
    for level in range(_LEVELS):
        if values.shape[0] == 0:
            residues.append(np.zeros((), dtype))
            continue
        ends = depth > level if level < _LEVELS - 1 else np.zeros(values.shape, bool)
        values, residue = _segment_sums(values, ends)
        residues.append(residue)
        depth = depth[ends]
    total = np.zeros((), dtype)
    for residue in residues:
        total = total + residue
    return np.asarray(total, dtype)


def _regular_cascade(values: np.ndarray, step: int) -> np.ndarray:
    """``cascade_sum`` when every target counts: each level a regular split into blocks. Element 0 flushes straight
    through to the top level; after it, each level's elements close a block at every multiple of ``step``, the
    block sums are the next level's elements, and what stays open is the level's residue."""
    total = np.zeros((), values.dtype)
    if not values.shape[0]:
        return total
    tail = values[1:]
    for _ in range(_LEVELS - 1):
        blocks = tail.shape[0] // step
        rest = tail[blocks * step:]
        if rest.shape[0]:  # (an empty residue adds zero)
            total = total + np.add.accumulate(rest)[-1]
        if not blocks:  # (nothing goes up: element 0 alone reaches the top)
            return np.asarray(total + values[0], values.dtype)
        tail = _running_totals(tail[:blocks * step].reshape(blocks, step))
    # (the top level never flushes: it sums element 0 and the block sums that reached it, in order)
    return np.asarray(total + _running_totals(np.concatenate((values[:1], tail))[None, :])[0], values.dtype)
