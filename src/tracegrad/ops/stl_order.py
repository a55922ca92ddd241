"""Where PyTorch's CPU sorting and selection kernels leave elements that compare equal.

``sort(stable=False)`` and ``mode`` run libstdc++'s ``std::sort`` (an introsort), ``topk`` runs
``std::partial_sort`` (a heap selection) or ``std::nth_element`` (an introselect) followed by ``std::sort``, and
``kthvalue`` runs PyTorch's own quickselect (Sedgewick's partition). None of them is stable, so among equal values
the index PyTorch returns is whichever one these algorithms happen to leave in place: deterministic, machine
independent, and not the first. tracegrad returns the same indices by running the same algorithms.

Every routine here works on integer *keys*: the element that must come first has the smaller key, and equal
values share a key (``order_keys`` builds them with PyTorch's NaN rules). The partitions of one recursion level
run for all segments of all rows at once in NumPy, on packed arrays that hold only the segments still being
partitioned (back to back); the heap selection runs for all rows at once too, one heap operation per step. Only
the rare heap-sort fallback of a too-deep recursion, and heap selections over a few rows, run element by element.
Callers use these only for rows where ties can change the answer; elsewhere a stable sort gives the same result
faster.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

_INSERTION_THRESHOLD = 16  # libstdc++'s _S_threshold: introsort leaves segments this small to insertion sort
_SELECT_THRESHOLD = 3  # introselect insertion-sorts what is left once a segment is this small
_BIG = np.iinfo(np.int64).max


def order_keys(values: np.ndarray, descending: bool) -> np.ndarray:
    """Integer keys in the order PyTorch's comparators put ``values`` in: equal values (NaNs among themselves,
    -0.0 and 0.0) share a key, NaN sorts above every number, and ``descending`` flips the order (``-keys``)."""
    kind, size = values.dtype.kind, values.dtype.itemsize
    if kind == "f" and size in (2, 4, 8):
        keys = _float_keys(values)
    elif kind == "b" or (kind in "iu" and size < 8) or (
            kind == "i" and (not values.size or values.min() > np.iinfo(np.int64).min)):  # (-keys must not wrap)
        keys = values.astype(np.int64)
    else:  # (uint64, and int64 holding its minimum)
        _, inverse = np.unique(values, return_inverse=True)
        keys = inverse.reshape(values.shape).astype(np.int64)
    return -keys if descending else keys


def _float_keys(values: np.ndarray) -> np.ndarray:
    """The bits of a float as an integer count up with non-negative floats and down with negative ones, so
    negating the negatives' magnitudes orders them all without a sort. Both zeros become 0; NaNs go above +inf."""
    values = values.astype(values.dtype.newbyteorder("="), copy=False)  # (the bits in this machine's order)
    as_int = np.dtype(f"i{values.dtype.itemsize}")
    bits = values.view(as_int).astype(np.int64)
    magnitude = bits & np.iinfo(as_int).max
    keys = np.where(bits < 0, -magnitude, magnitude)
    keys[np.isnan(values)] = int(np.array(np.inf, dtype=values.dtype).view(as_int)) + 1
    return keys


def _packed(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``keys`` (2-d) back to back, with the index within its row of each element: the narrowest
    integers that hold them (less memory to move on every level)."""
    rows, n = keys.shape
    flat = keys.reshape(-1)
    low, high = (int(flat.min()), int(flat.max())) if flat.size else (0, 0)
    key = (flat - low).astype(np.int32) if high - low < 2**31 else flat.astype(np.int64)
    perm = np.tile(np.arange(n, dtype=np.int32 if n < 2**31 else np.int64), rows)
    return key, perm


# ---- Hoare partitions of many segments at once --------------------------------------------------------------


class _Stops(NamedTuple):
    """Where the left scan (``left_at``) and the right scan (``right_at``) of each segment may stop, as packed
    positions in increasing order; a segment's own stops are ``left_at[left_from:left_to]`` and
    ``right_at[right_from:right_to]``."""
    left_at: np.ndarray
    right_at: np.ndarray
    left_from: np.ndarray
    left_to: np.ndarray
    right_from: np.ndarray
    right_to: np.ndarray

    @classmethod
    def find(cls, left: np.ndarray, right: np.ndarray, starts: np.ndarray) -> _Stops:
        left_at, right_at = np.flatnonzero(left), np.flatnonzero(right)
        left_from, right_from = np.searchsorted(left_at, starts), np.searchsorted(right_at, starts)
        # (the segments lie back to back: one's stops end where the next one's begin)
        return cls(left_at, right_at, left_from, np.append(left_from[1:], left_at.size),
                   right_from, np.append(right_from[1:], right_at.size))

    def left(self, m: np.ndarray, fill: int) -> np.ndarray:
        """The m-th stop of each segment's left scan (from its start), or ``fill`` where there is none."""
        return _pick(self.left_at, self.left_from + m, (m >= 0) & (m < self.left_to - self.left_from), fill)

    def right(self, m: np.ndarray, fill: int) -> np.ndarray:
        """The m-th stop of each segment's right scan (from its end), or ``fill`` where there is none."""
        return _pick(self.right_at, self.right_to - 1 - m, (m >= 0) & (m < self.right_to - self.right_from), fill)

    def crossing(self) -> np.ndarray:
        """Per segment: for how many m the m-th left stop lies before the m-th right stop (a prefix of the m:
        the left stops go up and the right ones down), found by bisection for all segments at once."""
        low = np.zeros_like(self.left_from)
        high = np.minimum(self.left_to - self.left_from, self.right_to - self.right_from)
        open_ = np.flatnonzero(low < high)  # (the segments whose count is not known yet)
        while open_.size:
            mid = (low[open_] + high[open_] + 1) // 2  # (1 <= mid <= high: both stops exist)
            ok = self.left_at[self.left_from[open_] + mid - 1] < self.right_at[self.right_to[open_] - mid]
            low[open_[ok]] = mid[ok]
            high[open_[~ok]] = mid[~ok] - 1
            open_ = open_[low[open_] < high[open_]]
        return low

    def pairs(self, n_pairs: np.ndarray) -> _Swaps:
        """The swaps of each segment's m-th left stop with its m-th right stop, for m < ``n_pairs``."""
        pair_start = np.cumsum(n_pairs) - n_pairs
        m = np.arange(int(n_pairs.sum()))
        return _Swaps(self.left_at[m + np.repeat(self.left_from - pair_start, n_pairs)],
                      self.right_at[np.repeat(self.right_to - 1 + pair_start, n_pairs) - m])


class _Swaps(NamedTuple):
    """Swaps of the positions ``left`` with the positions ``right`` (all different)."""
    left: np.ndarray
    right: np.ndarray

    def apply(self, key: np.ndarray, perm: np.ndarray) -> None:
        _swap(key, perm, self.left, self.right)

    def as_gather(self, size: int) -> np.ndarray:
        """``order`` such that ``key[order]`` is ``key`` after the swaps: it can be applied, together with
        dropping finished segments, in one pass (worth it where few are dropped)."""
        order = np.arange(size)
        order[self.left], order[self.right] = self.right, self.left
        return order


def _pick(at: np.ndarray, index: np.ndarray, valid: np.ndarray, fill: int) -> np.ndarray:
    return np.where(valid, at[np.clip(index, 0, max(at.size - 1, 0))], fill)


def _unguarded_partition_pivot(key: np.ndarray, perm: np.ndarray, starts: np.ndarray,
                               lengths: np.ndarray) -> tuple[np.ndarray, _Swaps]:
    """libstdc++'s ``__unguarded_partition_pivot`` on the back-to-back segments ``[starts, starts + lengths)``
    that make up ``key`` (``perm`` moves with it), all at once; returns the cuts and the swaps of the scans,
    which the caller applies.

    The median of the second, middle and last elements moves to the front and becomes the pivot. Then a left scan
    stops at keys not below the pivot and a right scan at keys not above it, and the two swap until the scans
    cross. Every scan reads a position once, so the swaps pair the m-th left stop with the m-th right stop in
    the original keys, for as long as the left one lies before the right one."""
    ends = starts + lengths
    _move_median_to_first(key, perm, starts, starts + 1, starts + lengths // 2, ends - 1)
    pivot = np.repeat(key[starts], lengths)
    left = key >= pivot
    left[starts] = False  # (the left scan starts after the pivot; the right scan can stop at the pivot itself)
    stops = _Stops.find(left, key <= pivot, starts)
    swaps = stops.crossing()
    # The left scan that ends it stops at the next left stop, or earlier at the last swapped right stop (which now
    # holds a key not below the pivot).
    cuts = np.minimum(stops.left(swaps, _BIG), stops.right(swaps - 1, _BIG))
    return cuts, stops.pairs(swaps)


def _move_median_to_first(keys, perm, result, a, b, c) -> None:
    """libstdc++'s ``__move_median_to_first`` for many segments: the median of keys at a, b, c swaps to result."""
    ka, kb, kc = keys[a], keys[b], keys[c]
    chosen = np.where(ka < kb,
                      np.where(kb < kc, b, np.where(ka < kc, c, a)),
                      np.where(ka < kc, a, np.where(kb < kc, c, b)))
    _swap(keys, perm, result, chosen)


def _swap(keys, perm, i, j) -> None:
    """Swap positions (or arrays of positions) ``i`` and ``j`` of ``keys`` and ``perm``."""
    keys[i], keys[j] = keys[j], keys[i]
    perm[i], perm[j] = perm[j], perm[i]


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.cumsum(lengths) - lengths


def _flat_positions(firsts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Every position of the ranges ``[firsts, firsts + lengths)``, range after range."""
    firsts, lengths = firsts[lengths > 0], lengths[lengths > 0]
    if not lengths.size:
        return np.zeros(0, dtype=np.int64)
    starts = _starts(lengths)
    step = np.ones(int(lengths.sum()), dtype=np.int64)
    step[starts[1:]] = firsts[1:] - (firsts[:-1] + lengths[:-1]) + 1
    step[0] = firsts[0]
    return np.cumsum(step)


def _pieces(lengths: np.ndarray, keep_from: np.ndarray, keep_lengths: np.ndarray) -> np.ndarray:
    """Over back-to-back segments: which elements lie in ``[keep_from, keep_from + keep_lengths)`` of theirs."""
    pieces = np.column_stack((keep_from, keep_lengths, lengths - keep_from - keep_lengths)).ravel()
    return np.repeat(np.tile(np.array([False, True, False]), lengths.size), pieces)


# ---- std::sort ---------------------------------------------------------------------------------------------


def introsort_order(keys: np.ndarray) -> np.ndarray:
    """For each row of ``keys`` (2-d): the permutation ``std::sort`` makes of (key, index) pairs compared by key."""
    rows, n = keys.shape
    out_key, out_perm = _packed(keys)  # (segments that are done land here, where they lie in their row)
    key, perm = out_key, out_perm  # (the segments still to partition, back to back; the first gather copies)
    firsts = np.arange(rows, dtype=np.int64) * n  # (where each of those lies in out_key)
    lengths = np.full(rows, n, dtype=np.int64)
    depths = np.full(rows, 2 * _floor_log2(n), dtype=np.int64)
    moved = np.arange(key.size)  # (the swaps of the last level, as a gather not yet applied)
    while lengths.size:
        done = lengths <= _INSERTION_THRESHOLD  # (left to the final insertion sort)
        key, perm = _settle(key, perm, moved, out_key, out_perm, firsts, lengths, done)
        firsts, lengths, depths = firsts[~done], lengths[~done], depths[~done]
        exhausted = depths == 0
        if exhausted.any():  # (introsort's fallback: the segment ends up sorted, and is done)
            starts = _starts(lengths)
            for start, length in zip(starts[exhausted].tolist(), lengths[exhausted].tolist(), strict=True):
                _heap_sort(key, perm, start, start + length)
            key, perm = _settle(key, perm, np.arange(key.size), out_key, out_perm, firsts, lengths, exhausted)
            firsts, lengths, depths = firsts[~exhausted], lengths[~exhausted], depths[~exhausted]
        if not lengths.size:
            break
        starts = _starts(lengths)
        cuts, swaps = _unguarded_partition_pivot(key, perm, starts, lengths)
        moved = swaps.as_gather(key.size)
        left_lengths = cuts - starts
        firsts = np.column_stack((firsts, firsts + left_lengths)).ravel()
        lengths = np.column_stack((left_lengths, lengths - left_lengths)).ravel()
        depths = np.repeat(depths - 1, 2)
    # The final insertion sort cannot move an element past a smaller one, and every segment holds keys no larger
    # than the next segment's: it is a stable sort of each row (which NumPy does fast on rows this nearly sorted).
    order = np.argsort(out_key.reshape(rows, n), axis=1, kind="stable")
    return np.take_along_axis(out_perm.reshape(rows, n), order, 1).astype(np.int64)


def _settle(key: np.ndarray, perm: np.ndarray, moved: np.ndarray, out_key: np.ndarray, out_perm: np.ndarray,
            firsts: np.ndarray, lengths: np.ndarray, done: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Apply the gather ``moved`` to the back-to-back segments in ``key`` and ``perm``: the segments marked
    ``done`` go to ``out_key`` and ``out_perm`` (where they lie in their rows), the others stay back to back."""
    if done.any():
        gone = np.repeat(done, lengths)
        at = _flat_positions(firsts[done], lengths[done])
        out_key[at], out_perm[at] = key[moved[gone]], perm[moved[gone]]
        moved = moved[~gone]
    return key[moved], perm[moved]


# ---- std::nth_element and the topk that uses it ------------------------------------------------------------


def introselect_order(keys: np.ndarray, nth: int) -> np.ndarray:
    """For each row of ``keys`` (2-d): the permutation ``std::nth_element(first, first + nth, last)`` leaves."""
    rows, n = keys.shape
    key, perm = _packed(keys)
    out = perm.copy()  # (what no longer moves lands here, where it lies in its row)
    firsts = np.arange(rows, dtype=np.int64) * n  # (where each row's remaining segment lies in out)
    lengths = np.full(rows, n, dtype=np.int64)
    targets = np.full(rows, nth, dtype=np.int64)  # (nth, from the segment's start)
    depths = np.full(rows, 2 * _floor_log2(n), dtype=np.int64)
    while lengths.size:
        starts = _starts(lengths)
        small = lengths <= _SELECT_THRESHOLD
        exhausted = (depths == 0) & ~small
        for start, length, target in zip(starts[exhausted].tolist(), lengths[exhausted].tolist(),
                                         targets[exhausted].tolist(), strict=True):
            _heap_select(key, perm, start, start + target + 1, start + length)  # (too deep: a heap selection)
            _swap(key, perm, start, start + target)
        _stable_sort_ranges(key, perm, starts[small], lengths[small])  # (the final insertion sort: stable)
        done = small | exhausted
        if done.any():
            gone = np.repeat(done, lengths)
            out[_flat_positions(firsts[done], lengths[done])] = perm[gone]
            key, perm = key[~gone], perm[~gone]
            firsts, lengths, targets, depths = firsts[~done], lengths[~done], targets[~done], depths[~done]
            if not lengths.size:
                break
            starts = _starts(lengths)
        cuts, swaps = _unguarded_partition_pivot(key, perm, starts, lengths)
        swaps.apply(key, perm)
        cuts -= starts
        right = cuts <= targets  # (the part that holds nth goes on; the other one is done)
        keep_from, keep_lengths = np.where(right, cuts, 0), np.where(right, lengths - cuts, cuts)
        kept = _pieces(lengths, keep_from, keep_lengths)
        out[_flat_positions(firsts + np.where(right, 0, cuts), lengths - keep_lengths)] = perm[~kept]
        key, perm = key[kept], perm[kept]
        firsts, targets, lengths, depths = firsts + keep_from, targets - keep_from, keep_lengths, depths - 1
    return out.reshape(rows, n).astype(np.int64)


def _stable_sort_ranges(keys: np.ndarray, perm: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> None:
    """Sort each ``[starts[s], starts[s] + lengths[s])`` of the flat ``keys`` stably, ``perm`` alongside."""
    if not starts.size:
        return
    pos = _flat_positions(starts, lengths)
    order = pos[np.lexsort((keys[pos], np.repeat(np.arange(starts.size), lengths)))]
    perm[pos], keys[pos] = perm[order], keys[order]


def _floor_log2(n: int) -> int:
    return max(int(n).bit_length() - 1, 0)


# ---- heaps (std::partial_sort, and the fallbacks of a too-deep recursion) -------------------------------------


def _adjust_heap(keys, perm, first: int, hole: int, length: int, value_key, value_index, less=operator.lt) -> None:
    """libstdc++'s ``__adjust_heap`` then ``__push_heap``: sift the hole down by larger children, then the value
    up. Positions are relative to ``first``."""
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(keys[first + child], keys[first + child - 1]):
            child -= 1
        keys[first + hole], perm[first + hole] = keys[first + child], perm[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        keys[first + hole], perm[first + hole] = keys[first + child - 1], perm[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(keys[first + parent], value_key):
        keys[first + hole], perm[first + hole] = keys[first + parent], perm[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    keys[first + hole], perm[first + hole] = value_key, value_index


def _make_heap(keys, perm, first: int, middle: int, less=operator.lt) -> None:
    length = middle - first
    if length < 2:
        return
    for parent in range((length - 2) // 2, -1, -1):
        _adjust_heap(keys, perm, first, parent, length, keys[first + parent], perm[first + parent], less)


def _pop_heap(keys, perm, first: int, last: int, result: int, less=operator.lt) -> None:
    value_key, value_index = keys[result], perm[result]
    keys[result], perm[result] = keys[first], perm[first]
    _adjust_heap(keys, perm, first, 0, last - first, value_key, value_index, less)


def _sort_heap(keys, perm, first: int, last: int, less=operator.lt) -> None:
    while last - first > 1:
        last -= 1
        _pop_heap(keys, perm, first, last, last, less)


def _heap_select(keys, perm, first: int, middle: int, last: int, less=operator.lt) -> None:
    """libstdc++'s ``__heap_select``: keep the ``middle - first`` smallest keys in a heap, scanning the rest.

    On key arrays the heap's top only ever gets smaller, so a key not below the top at the start of a block never
    enters during it: each block is filtered in NumPy first and only its candidates go through the heap."""
    _make_heap(keys, perm, first, middle, less)
    block = 4096 if isinstance(keys, np.ndarray) else last - middle
    for start in range(middle, last, max(block, 1)):
        stop = min(start + block, last)
        candidates = (np.flatnonzero(keys[start:stop] < keys[first]) + start).tolist() \
            if isinstance(keys, np.ndarray) else range(start, stop)
        for i in candidates:
            if less(keys[i], keys[first]):
                _pop_heap(keys, perm, first, middle, i, less)


def _heap_sort(keys, perm, first: int, last: int, less=operator.lt) -> None:
    """Introsort's fallback, ``std::__partial_sort(first, last, last)``."""
    _heap_select(keys, perm, first, last, last, less)
    _sort_heap(keys, perm, first, last, less)


_VECTOR_HEAP_ROWS = 32  # from this many rows on, the heap selection runs for all rows at once


def partial_sort_order(keys: np.ndarray, k: int) -> np.ndarray:
    """For each row of ``keys`` (2-d): the first ``k`` of the permutation ``std::partial_sort`` makes."""
    rows, n = keys.shape
    if rows >= _VECTOR_HEAP_ROWS:
        return _partial_sort_rows(keys, k)
    out = np.empty((rows, k), dtype=np.int64)
    for r in range(rows):  # (a heap operation costs a few NumPy calls per step: few rows go element by element)
        row_keys = keys[r].copy()
        perm = np.arange(n, dtype=np.int64)
        _heap_select(row_keys, perm, 0, k, n)
        _sort_heap(row_keys, perm, 0, k)
        out[r] = perm[:k]
    return out


def _partial_sort_rows(keys: np.ndarray, k: int) -> np.ndarray:
    """``partial_sort_order`` with one heap per row, all stepping together: ``make_heap`` on the first ``k``,
    then each later key below its heap's top replaces the top, then ``sort_heap``."""
    rows, n = keys.shape
    heap_keys = keys[:, :k].copy()
    heap_perm = np.tile(np.arange(k, dtype=np.int64), (rows, 1))
    every = np.arange(rows)
    for parent in range((k - 2) // 2, -1, -1):  # make_heap
        _adjust_heaps(heap_keys, heap_perm, every, np.full(rows, parent), k,
                      heap_keys[:, parent].copy(), heap_perm[:, parent].copy())
    _select_into_heaps(keys, heap_keys, heap_perm)
    for last in range(k - 1, 0, -1):  # sort_heap: pop the top to the back, one position at a time
        value_key, value_perm = heap_keys[:, last].copy(), heap_perm[:, last].copy()
        heap_keys[:, last], heap_perm[:, last] = heap_keys[:, 0], heap_perm[:, 0]
        _adjust_heaps(heap_keys, heap_perm, every, np.zeros(rows, dtype=np.int64), last, value_key, value_perm)
    return heap_perm


def _select_into_heaps(keys: np.ndarray, heap_keys: np.ndarray, heap_perm: np.ndarray) -> None:
    """The scan of ``__heap_select``: in each row, every key below its heap's top at the time replaces the top.

    Each step looks at a window of the rest of every row for its next such key; the window grows while few rows
    find one (the tops only get smaller) and shrinks while most do."""
    n, k = keys.shape[1], heap_keys.shape[1]
    flat_keys = np.ascontiguousarray(keys).reshape(-1)  # (flat positions index faster than pairs)
    live = np.arange(keys.shape[0])
    at = np.full(live.size, k)
    window = 32
    while live.size:
        cols = at[:, None] + np.arange(window)
        window_keys = flat_keys[live[:, None] * n + np.minimum(cols, n - 1)]
        below = (window_keys < heap_keys[live, :1]) & (cols < n)
        found = below.any(axis=1)
        hit = at + np.argmax(below, axis=1)
        rows, hit_col = live[found], hit[found]
        _adjust_heaps(heap_keys, heap_perm, rows, np.zeros(rows.size, dtype=np.int64), k,
                      flat_keys[rows * n + hit_col], hit_col)
        at = np.where(found, hit + 1, at + window)
        share = found.mean()
        window = min(2 * window, n) if share < 0.25 else max(window // 2, 16) if share > 0.5 else window
        more = at < n
        live, at = live[more], at[more]


def _adjust_heaps(heap_keys: np.ndarray, heap_perm: np.ndarray, rows: np.ndarray, hole: np.ndarray, length: int,
                  value_key: np.ndarray, value_perm: np.ndarray) -> None:
    """``_adjust_heap`` on the heaps (columns ``[0, length)``) of ``rows``, all at once: each row's hole sifts
    down by larger children, then its value sifts up from there."""
    keys, perm = heap_keys.reshape(-1), heap_perm.reshape(-1)  # (flat positions index faster than pairs)
    base = rows * heap_keys.shape[1]
    top, hole, child = hole, hole.copy(), hole.copy()
    while (down := child < (length - 1) // 2).any():
        b = base[down]
        c = 2 * (child[down] + 1)
        c -= keys[b + c] < keys[b + c - 1]
        h, c_at = b + hole[down], b + c
        keys[h], perm[h] = keys[c_at], perm[c_at]
        hole[down] = child[down] = c
    if length % 2 == 0:  # (a last parent with one child)
        last = child == (length - 2) // 2
        b, c = base[last], 2 * child[last] + 1
        h, c_at = b + hole[last], b + c
        keys[h], perm[h] = keys[c_at], perm[c_at]
        hole[last] = c
    while True:  # (__push_heap)
        parent = (hole - 1) // 2
        up = (hole > top) & (keys[base + np.maximum(parent, 0)] < value_key)
        if not up.any():
            break
        b, p = base[up], parent[up]
        h, p_at = b + hole[up], b + p
        keys[h], perm[h] = keys[p_at], perm[p_at]
        hole[up] = p
    keys[base + hole], perm[base + hole] = value_key, value_perm


# ---- PyTorch's quickselect (kthvalue) -------------------------------------------------------------------------


def torch_quickselect_index(keys: np.ndarray, k: int) -> np.ndarray:
    """For each row of ``keys`` (2-d): the index ``kthvalue`` reports, from PyTorch's ``quick_select_template``
    (median of three, then Sedgewick's partition) selecting position ``k - 1``, all rows at once."""
    rows, n = keys.shape
    key, perm = _packed(keys)
    out = np.empty(rows, dtype=np.int64)
    row = np.arange(rows)  # (the rows still selecting, each with one segment [lo, hi] in key)
    lengths = np.full(rows, n, dtype=np.int64)
    targets = np.full(rows, k - 1, dtype=np.int64)  # (position k - 1, from the segment's start)
    while row.size:
        starts = _starts(lengths)
        small = lengths <= 2  # (hi <= lo + 1: at most a compare and swap is left)
        if small.any():
            lo = starts[small]
            pair = lo[lengths[small] == 2]
            _swap_where(key, perm, key[pair] > key[pair + 1], pair, pair + 1)
            out[row[small]] = perm[lo + targets[small]]
            gone = np.repeat(small, lengths)
            key, perm = key[~gone], perm[~gone]
            row, lengths, targets = row[~small], lengths[~small], targets[~small]
            if not row.size:
                break
            starts = _starts(lengths)
        lo, hi = starts, starts + lengths - 1
        i, j = _sedgewick_partition(key, perm, lo, hi, lengths)
        at = lo + targets
        new_lo, new_hi = np.where(j < at, i, lo), np.where(j > at, j - 1, hi)
        # Done where the pivot landed on k - 1, or where the scans met on a key equal to the pivot there and
        # stepped past it (PyTorch goes on with a part that no longer holds k - 1).
        done = (j == at) | (at < new_lo)
        out[row[done]] = perm[at[done]]
        live = ~done
        kept = np.repeat(live, lengths)
        kept[kept] = _pieces(lengths[live], (new_lo - lo)[live], (new_hi - new_lo + 1)[live])
        key, perm = key[kept], perm[kept]
        row, targets, lengths = row[live], (at - new_lo)[live], (new_hi - new_lo + 1)[live]
    return out


def _sedgewick_partition(key: np.ndarray, perm: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                         lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step of ``quick_select_template`` on the back-to-back segments ``[lo, hi]`` (at least three long) of
    ``key``: the median of three to ``lo`` (the pivot), then the scans; returns where they ended, (i, j), after
    the pivot has moved to j.

    The left scan starts at lo + 2 and stops at keys not below the pivot (``hi`` holds one), the right scan starts
    at hi - 1 and stops at keys not above it (``lo + 1`` holds one); they swap while j >= i. As in libstdc++'s
    partition, the m-th stops of the original keys pair up while the left one lies before the right one, and
    where the two then coincide (a key equal to the pivot, swapped with itself) the scans take one more step."""
    _swap(key, perm, (lo + hi) >> 1, lo + 1)
    _swap_where(key, perm, key[lo + 1] > key[hi], lo + 1, hi)
    _swap_where(key, perm, key[lo] > key[hi], lo, hi)
    _swap_where(key, perm, key[lo + 1] > key[lo], lo + 1, lo)
    pivot = np.repeat(key[lo], lengths)
    left, right = key >= pivot, key <= pivot
    left[lo] = left[lo + 1] = right[lo] = right[hi] = False
    stops = _Stops.find(left, right, lo)
    swaps = stops.crossing()
    met = (stops.left(swaps, -1) == stops.right(swaps, -2)).astype(np.int64)
    # After the last swap its right stop holds a key not below the pivot and its left stop one not above it.
    i = np.minimum(stops.left(swaps + met, _BIG), stops.right(swaps - 1, _BIG))
    j = np.maximum(stops.right(swaps + met, -1), stops.left(swaps - 1, -1))
    stops.pairs(swaps).apply(key, perm)
    _swap(key, perm, lo, j)
    return i, j


def _swap_where(keys, perm, where, i, j) -> None:
    _swap(keys, perm, i[where], j[where])


# ---- std::sort with any comparator, element by element --------------------------------------------------------


def introsort_literal(values: list, less) -> list[int]:
    """The permutation ``std::sort`` makes of ``values`` under ``less``, step by step in Python.

    For comparators that are not a strict weak order, such as ``<`` on floats with NaN (``mode``'s), where keys
    cannot stand in for the values. Raises IndexError where libstdc++'s unguarded scans would leave the range."""
    items, perm = list(values), list(range(len(values)))
    if len(items) > 1:
        _introsort_loop_literal(items, perm, 0, len(items), 2 * _floor_log2(len(items)), less)
        _final_insertion_sort_literal(items, perm, len(items), less)
    return perm


def _introsort_loop_literal(items: list, perm: list, first: int, last: int, depth: int, less) -> None:
    while last - first > _INSERTION_THRESHOLD:
        if depth == 0:
            _heap_sort(items, perm, first, last, less)
            return
        depth -= 1
        a, b, c = first + 1, first + (last - first) // 2, last - 1
        if less(items[a], items[b]):
            chosen = b if less(items[b], items[c]) else c if less(items[a], items[c]) else a
        else:
            chosen = a if less(items[a], items[c]) else c if less(items[b], items[c]) else b
        _swap(items, perm, first, chosen)
        lo, hi = first + 1, last
        while True:
            while less(items[lo], items[first]):
                lo += 1
                _check_inside(lo, first, last)
            hi -= 1
            while less(items[first], items[hi]):
                hi -= 1
                _check_inside(hi, first, last)
            if lo >= hi:
                break
            _swap(items, perm, lo, hi)
            lo += 1
        _introsort_loop_literal(items, perm, lo, last, depth, less)
        last = lo


def _final_insertion_sort_literal(items: list, perm: list, n: int, less) -> None:
    """A guarded insertion sort of the first 16, then unguarded linear insertions of the rest."""
    for i in range(1, n):
        if i < _INSERTION_THRESHOLD and less(items[i], items[0]):
            value, index = items[i], perm[i]
            items[1:i + 1], perm[1:i + 1] = items[:i], perm[:i]
            items[0], perm[0] = value, index
            continue
        value, index, hole = items[i], perm[i], i
        while less(value, items[hole - 1]):
            items[hole], perm[hole] = items[hole - 1], perm[hole - 1]
            hole -= 1
            _check_inside(hole - 1, 0, n)
        items[hole], perm[hole] = value, index


def _check_inside(position: int, first: int, last: int) -> None:
    if not first <= position < last:
        raise IndexError("an unguarded scan of std::sort left its range")
