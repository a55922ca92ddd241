"""Where PyTorch's CPU sorting and selection kernels leave elements that compare equal.

``sort(stable=False)`` and ``mode`` run libstdc++'s ``std::sort`` (an introsort), ``topk`` runs
``std::partial_sort`` (a heap selection) or ``std::nth_element`` (an introselect) followed by ``std::sort``, and
``kthvalue`` runs PyTorch's own quickselect (Sedgewick's partition). None of them is stable, so among equal values
the index PyTorch returns is whichever one these algorithms happen to leave in place: deterministic, machine
independent, and not the first. tracegrad returns the same indices by running the same algorithms.

Every routine here works on integer *keys*: the element that must come first has the smaller key, and equal
values share a key (``order_keys`` builds them with PyTorch's NaN rules). The partitions of one recursion level
run for all segments of all rows at once in NumPy; only the rare heap-sort fallback of a too-deep recursion and
the heap selection run element by element. Callers use these only for rows where ties can change the answer;
elsewhere a stable sort gives the same result faster.
"""

from __future__ import annotations

import operator

import numpy as np

_INSERTION_THRESHOLD = 16  # libstdc++'s _S_threshold: introsort leaves segments this small to insertion sort
_SELECT_THRESHOLD = 3  # introselect insertion-sorts what is left once a segment is this small


def order_keys(values: np.ndarray, descending: bool) -> np.ndarray:
    """Integer keys in the order PyTorch's comparators put ``values`` in: equal values (NaNs among themselves,
    -0.0 and 0.0) share a key, NaN sorts above every number, and ``descending`` flips the order."""
    _, inverse = np.unique(values, return_inverse=True)  # (NaNs collapse to one, largest, value)
    keys = inverse.reshape(values.shape).astype(np.int64)
    return -keys if descending else keys


# ---- std::sort ---------------------------------------------------------------------------------------------


def introsort_order(keys: np.ndarray) -> np.ndarray:
    """For each row of ``keys`` (2-d): the permutation ``std::sort`` makes of (key, index) pairs compared by key."""
    rows, n = keys.shape
    flat_keys = keys.reshape(-1).copy()
    perm = np.tile(np.arange(n, dtype=np.int64), rows)
    boundary = np.zeros(rows * n + 1, dtype=bool)  # where a segment left to the final insertion sort starts
    firsts = np.arange(rows, dtype=np.int64) * n
    lasts = firsts + n
    boundary[firsts] = True
    depths = np.full(rows, 2 * _floor_log2(n), dtype=np.int64)
    while True:
        big = lasts - firsts > _INSERTION_THRESHOLD
        firsts, lasts, depths = firsts[big], lasts[big], depths[big]
        if not firsts.size:
            break
        exhausted = depths == 0
        for first, last in zip(firsts[exhausted].tolist(), lasts[exhausted].tolist(), strict=True):
            _heap_sort(flat_keys, perm, first, last)  # (introsort's fallback: the segment ends up sorted)
        firsts, lasts, depths = firsts[~exhausted], lasts[~exhausted], depths[~exhausted] - 1
        cuts = unguarded_partition_pivot(flat_keys, perm, firsts, lasts)
        boundary[cuts] = True
        firsts, lasts, depths = np.concatenate((firsts, cuts)), np.concatenate((cuts, lasts)), np.tile(depths, 2)
    # The final insertion sort cannot move an element past a smaller one, and every segment holds keys no larger
    # than the next segment's: it sorts each segment stably, on its own.
    segment = np.cumsum(boundary[:-1])
    order = np.lexsort((flat_keys, segment))
    return perm[order].reshape(rows, n)


def unguarded_partition_pivot(keys: np.ndarray, perm: np.ndarray, firsts: np.ndarray,
                              lasts: np.ndarray) -> np.ndarray:
    """libstdc++'s ``__unguarded_partition_pivot`` on the segments ``[firsts[s], lasts[s])`` of the flat ``keys``
    (``perm`` moves with them), all segments at once; returns the cuts.

    The median of the second, middle and last elements moves to the front and becomes the pivot. Then a left scan
    stops at keys not below the pivot and a right scan at keys not above it, and the two swap until the scans
    cross. Every scan reads a position once, so the swaps pair the m-th left stop with the m-th right stop in
    the original keys, for as long as the left one lies before the right one."""
    if not firsts.size:
        return firsts
    _move_median_to_first(keys, perm, firsts, firsts + 1, firsts + (lasts - firsts) // 2, lasts - 1)
    seg, pos = _segment_positions(firsts, lasts)
    pivot = keys[firsts][seg]
    key = keys[pos]
    left = (key >= pivot) & (pos > firsts[seg])  # (the left scan starts after the pivot ...)
    right = key <= pivot  # (... the right scan can stop at the pivot itself)
    left_pos, right_pos = pos[left], pos[right]
    n_left = np.bincount(seg[left], minlength=firsts.size)
    n_right = np.bincount(seg[right], minlength=firsts.size)
    left_start, right_start = np.cumsum(n_left) - n_left, np.cumsum(n_right) - n_right
    n_pairs = np.minimum(n_left, n_right)
    pair_seg = np.repeat(np.arange(firsts.size), n_pairs)
    m = np.arange(pair_seg.size) - np.repeat(np.cumsum(n_pairs) - n_pairs, n_pairs)
    lp = left_pos[left_start[pair_seg] + m]
    rp = right_pos[right_start[pair_seg] + n_right[pair_seg] - 1 - m]
    swap = lp < rp  # (a prefix of each segment's pairs)
    lp, rp = lp[swap], rp[swap]
    keys[lp], keys[rp] = keys[rp], keys[lp]
    perm[lp], perm[rp] = perm[rp], perm[lp]
    # The left scan that ends it stops at the next left stop, or earlier at the last swapped right stop (which now
    # holds a key not below the pivot).
    swaps = np.bincount(pair_seg[swap], minlength=firsts.size)
    big = np.iinfo(np.int64).max
    next_left = np.where(swaps < n_left, left_pos[np.minimum(left_start + swaps, left_pos.size - 1)], big)
    last_right = np.where(swaps > 0, right_pos[np.minimum(right_start + n_right - swaps, right_pos.size - 1)], big)
    return np.minimum(next_left, last_right)


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


# ---- std::nth_element and the topk that uses it ------------------------------------------------------------


def introselect_order(keys: np.ndarray, nth: int) -> np.ndarray:
    """For each row of ``keys`` (2-d): the permutation ``std::nth_element(first, first + nth, last)`` leaves."""
    rows, n = keys.shape
    flat_keys = keys.reshape(-1).copy()
    perm = np.tile(np.arange(n, dtype=np.int64), rows)
    firsts = np.arange(rows, dtype=np.int64) * n
    lasts, targets = firsts + n, firsts + nth
    depths = np.full(rows, 2 * _floor_log2(n), dtype=np.int64)
    finished_by_heap = np.zeros(rows, dtype=bool)
    live = np.arange(rows)
    while True:
        live = live[lasts[live] - firsts[live] > _SELECT_THRESHOLD]
        if not live.size:
            break
        for r in live[depths[live] == 0].tolist():  # (too deep: a heap selection finishes the row)
            _heap_select(flat_keys, perm, int(firsts[r]), int(targets[r]) + 1, int(lasts[r]))
            _swap(flat_keys, perm, firsts[r], targets[r])
            finished_by_heap[r] = True
        live = live[depths[live] > 0]
        depths[live] -= 1
        cuts = unguarded_partition_pivot(flat_keys, perm, firsts[live], lasts[live])
        below = cuts <= targets[live]
        firsts[live[below]] = cuts[below]
        lasts[live[~below]] = cuts[~below]
    rest = ~finished_by_heap  # (the final insertion sort of at most three elements: stable)
    _stable_sort_ranges(flat_keys, perm, firsts[rest], lasts[rest])
    return perm.reshape(rows, n)


def _stable_sort_ranges(keys: np.ndarray, perm: np.ndarray, firsts: np.ndarray, lasts: np.ndarray) -> None:
    """Sort each ``[firsts[s], lasts[s])`` of the flat ``keys`` stably, ``perm`` alongside."""
    seg, pos = _segment_positions(firsts, lasts)
    order = pos[np.lexsort((keys[pos], seg))]
    perm[pos], keys[pos] = perm[order], keys[order]


def _segment_positions(firsts: np.ndarray, lasts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(segment number, flat position) of every element of the segments ``[firsts[s], lasts[s])``, in order."""
    lengths = lasts - firsts
    seg = np.repeat(np.arange(firsts.size), lengths)
    return seg, firsts[seg] + (np.arange(seg.size) - np.repeat(np.cumsum(lengths) - lengths, lengths))


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


def partial_sort_order(keys: np.ndarray, k: int) -> np.ndarray:
    """For each row of ``keys`` (2-d): the first ``k`` of the permutation ``std::partial_sort`` makes."""
    rows, n = keys.shape
    out = np.empty((rows, k), dtype=np.int64)
    for r in range(rows):
        row_keys = keys[r].copy()
        perm = np.arange(n, dtype=np.int64)
        _heap_select(row_keys, perm, 0, k, n)
        _sort_heap(row_keys, perm, 0, k)
        out[r] = perm[:k]
    return out


# ---- PyTorch's quickselect (kthvalue) -------------------------------------------------------------------------


def torch_quickselect_index(keys: np.ndarray, k: int) -> np.ndarray:
    """For each row of ``keys`` (2-d): the index ``kthvalue`` reports, from PyTorch's ``quick_select_template``
    (median of three, then Sedgewick's partition) selecting position ``k - 1``."""
    rows, n = keys.shape
    out = np.empty(rows, dtype=np.int64)
    for r in range(rows):
        row_keys = keys[r].tolist()
        perm = list(range(n))
        _quickselect(row_keys, perm, k - 1)
        out[r] = perm[k - 1]
    return out


def _quickselect(a: list, perm: list, k: int) -> None:
    def swap(i: int, j: int) -> None:
        a[i], a[j] = a[j], a[i]
        perm[i], perm[j] = perm[j], perm[i]

    lo, hi = 0, len(a) - 1
    while hi > lo:
        if hi == lo + 1:
            if a[lo] > a[hi]:
                swap(lo, hi)
            return
        swap((lo + hi) >> 1, lo + 1)
        if a[lo + 1] > a[hi]:
            swap(lo + 1, hi)
        if a[lo] > a[hi]:
            swap(lo, hi)
        if a[lo + 1] > a[lo]:
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, a[lo]
        while True:
            i += 1
            while pivot > a[i]:
                i += 1
            j -= 1
            while a[j] > pivot:
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1



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
