"""ATen's ``RowwiseMoments``: the mean and variance layer and group normalisation compute, bit for bit.

PyTorch's CPU kernels get a row's moments from a Welford recurrence run in vector lanes: chunks of 16 vectors
update running moments lane by lane, finished chunks merge through a binary-counter cascade, the elements past the
last whole vector go through a scalar recurrence, and the lanes merge into it one by one. The kernels are
registered for AVX2 (not AVX-512), so a vector is 32 bytes on every x86 machine: 8 floats or 4 doubles, with fused
multiply-adds where the CPU has them; the compiler contracts the scalar code's multiply-adds too.

Here the same recurrence runs on all rows and lanes at once in NumPy (rows of one call share a length). The
cascade's merges of whole chunks run level by level over all chunk pairs at once (the binary counter merges
aligned blocks the same way whatever their position), the rest as the counter does it, merge after merge.

Short rows make this cost NumPy calls rather than arithmetic, so the float recurrences with FMA keep float64
twins of their running moments and widen operands by item assignment (a ufunc that casts its operands costs about
three times the plain one). Steps where two NaNs can meet keep the calls they had: which NaN a NumPy loop returns
depends on the loop it picks (in place, cast, broadcast), and the results are pinned bit for bit, NaNs included.
"""

from __future__ import annotations

import functools

import numpy as np

from ..aten_vec import cpu_has_fma, fma_if_available, vector_lanes

_CHUNK = 16  # kChunkSize: vectors per Welford chunk
_F32 = np.dtype(np.float32)
def rowwise_moments(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, biased variance) of each row of a 2-d float32 or float64 array, as ATen's ``RowwiseMoments``."""
    rows = np.ascontiguousarray(rows)  # (its vectors are moved as whole items below)
    count, length = rows.shape
    lanes = vector_lanes(rows.dtype)
    vectors = length // lanes
    chunk_count = -(-vectors // _CHUNK)
    depth = (chunk_count - 1).bit_length() if chunk_count > 1 else 0  # utils::CeilLog2
    fused = _Fused(rows.dtype)
    stack = _CascadeStack(max(depth, 1), count, lanes, fused)
    whole, rest = _chunk_moments(rows[:, :vectors * lanes], lanes, fused)
    if whole is not None:
        stack.push_whole_chunks(*whole, depth)
    if rest is not None:
        stack.push(chunk_count - 1, *rest, depth)
    m0, m1, m2 = stack.collapse(depth)
    return _merge_lanes_into_tail(rows[:, vectors * lanes:], m0, m1, m2, length, fused)


class _Fused:
    """``fma_if_available`` for one dtype, with float32 on an FMA machine done in place: the exact product in
    float64, the sum rounded there and then to float (what ``aten_vec.fma_into`` computes)."""

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype.type
        self.in_place = dtype == _F32 and cpu_has_fma()

    def __call__(self, a, b, c, out: np.ndarray) -> np.ndarray:
        """``a * b + c`` (one rounding with FMA) into ``out`` (which may be ``c``)."""
        if self.in_place:
            # (``aten_vec.fma_into``'s steps for a whole first operand: which of two NaNs a NumPy loop returns
            # depends on its operands' dtypes and aliasing, so the same calls keep the same NaNs)
            wide = np.empty(out.shape)
            wide[...] = a
            wide *= b  # (exact: two floats' product)
            wide += c
            out[...] = wide
            return out
        out[...] = fma_if_available(a, b, c)
        return out


def _chunk_moments(body: np.ndarray, lanes: int, fused: _Fused) -> tuple:
    """``UpdateMomentsVec`` per chunk of 16 vectors: ((vector count, lane means, lane M2s) of the whole chunks,
    stacked on a leading axis, or None; the same of the short last chunk, or None)."""
    count = body.shape[0]
    vectors = body.shape[1] // lanes
    whole = vectors // _CHUNK
    if vectors == 0:
        return None, None
    # (vector j of every chunk and row side by side, so each step of the recurrence reads one block: the
    # 32-byte vectors moved as single items)
    as_vectors = body.view(np.dtype((np.void, lanes * body.itemsize))).reshape(count, vectors)
    whole_moments = rest_moments = None
    if whole:
        steps = as_vectors[:, :whole * _CHUNK].reshape(count, whole, _CHUNK).transpose(2, 1, 0)
        steps = np.ascontiguousarray(steps).view(body.dtype).reshape(_CHUNK, whole, count, lanes)
        whole_moments = (_CHUNK, *_welford_steps(steps, fused))
    if vectors > whole * _CHUNK:
        rest = np.ascontiguousarray(as_vectors[:, whole * _CHUNK:].T).view(body.dtype).reshape(-1, count, lanes)
        rest_moments = (rest.shape[0], *_welford_steps(rest, fused))
    return whole_moments, rest_moments


def _welford_steps(steps: np.ndarray, fused: _Fused) -> tuple[np.ndarray, np.ndarray]:
    """The lane-wise Welford recurrence over ``steps[0], steps[1], ...`` (each weighted by 1 / (j + 1))."""
    if fused.in_place:
        return _welford_steps_fma32(steps)
    dtype = fused.dtype
    m1, m2, centred = _first_welford_step(steps[0])
    delta = np.empty_like(m1)
    for j, x in enumerate(steps[1:], 1):
        np.subtract(x, m1, out=delta)
        fused(np.asarray(dtype(dtype(1) / dtype(j + 1))), delta, m1, out=m1)  # (0-d: cheaper)
        np.subtract(x, m1, out=centred)
        fused(delta, centred, m2, out=m2)
    return m1, m2


def _welford_steps_fma32(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_welford_steps`` for float32 with FMA: each fused step is the exact float64 product plus the addend,
    rounded once to float. The running moments keep float64 twins, and operands are widened by item assignment:
    a ufunc that casts its operands itself costs about three times the plain float64 one."""
    shape = steps.shape[1:]
    m1, m2, centred = _first_welford_step(steps[0])
    m1_wide, m2_wide = m1.astype(np.float64), m2.astype(np.float64)
    delta = np.empty(shape, np.float32)
    delta_wide, wide = np.empty(shape), np.empty(shape)
    for j, x in enumerate(steps[1:], 1):
        np.subtract(x, m1, out=delta)
        delta_wide[...] = delta
        np.multiply(np.float64(np.float32(1) / np.float32(j + 1)), delta_wide, out=wide)
        _round_sum_into(wide, m1_wide, m1)
        np.subtract(x, m1, out=centred)
        wide[...] = centred
        np.multiply(delta_wide, wide, out=wide)
        _round_sum_into(wide, m2_wide, m2)
    return m1, m2


def _first_welford_step(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(m1, m2, scratch) after the first step from zero moments, whose fused steps are exact: ``x - 0`` is ``x``,
    ``fma(1, x, 0)`` is ``x + 0``, and ``x - (x + 0)`` is a zero (or NaN), whose product with ``x`` is exact in
    float too (and in double: ``aten_vec.fma``'s error terms vanish there). Each NaN here comes from one operand,
    so plain calls keep the same NaNs."""
    zero = x.dtype.type(0)
    m1 = np.add(x, zero)
    centred = np.subtract(x, m1)
    m2 = np.multiply(x, centred)
    m2 += zero
    return m1, m2, centred


def _round_sum_into(wide: np.ndarray, acc_wide: np.ndarray, acc: np.ndarray) -> None:
    """``acc = float(wide + acc)``, with ``acc_wide`` the float64 twin of ``acc``, kept in step."""
    np.add(wide, acc_wide, out=wide)
    acc[...] = wide
    acc_wide[...] = acc


class _CascadeStack:
    """The stack of partial moments ``RowwiseMomentsImpl`` merges like a binary counter (``AddMomentsVec``).
    Levels' moments have a leading axis of one; the whole chunks' merges take many side by side."""

    def __init__(self, depth: int, count: int, lanes: int, fused: _Fused) -> None:
        self.fused = fused
        self.shape = (1, count, lanes)
        self.m0 = [0] * depth
        self.m1 = [np.zeros(self.shape, fused.dtype) for _ in range(depth)]
        self.m2 = [np.zeros(self.shape, fused.dtype) for _ in range(depth)]

    def merged(self, m0: int, m1: np.ndarray, m2: np.ndarray, m0_add: int, m1_add: np.ndarray,
               m2_add: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``AddMomentsVec`` of (m0_add, m1_add, m2_add) into (m0, m1, m2): the new (m1, m2), fresh arrays."""
        if m0 == 0 and m0_add:
            return self._into_empty(m1_add, m2_add)
        dtype = self.fused.dtype
        total = m0 + m0_add
        weight = dtype(0) if total == 0 else dtype(dtype(m0_add) / dtype(total))
        delta = np.subtract(m1_add, m1)
        m2_sum = np.add(m2, m2_add)
        weighted = np.multiply(weight, delta)
        m1 = np.add(m1, weighted)
        delta *= dtype(m0)
        return m1, self.fused(delta, weighted, m2_sum, out=m2_sum)

    def _into_empty(self, m1_add: np.ndarray, m2_add: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``merged`` into an empty level (zero moments, weight 1), whose steps but the last are exact:
        ``(m1_add - 0) * 1`` is ``m1_add``, ``0 + m1_add`` is ``m1_add + 0``, ``delta * 0`` is ``m1_add * 0``. Each
        NaN there comes from one operand; the fused step, where two can meet, keeps its calls."""
        zero = self.fused.dtype(0)
        m2_sum = np.add(m2_add, zero)
        return np.add(m1_add, zero), self.fused(np.multiply(m1_add, zero), m1_add, m2_sum, out=m2_sum)

    def add(self, level: int, m0_add: int, m1_add: np.ndarray, m2_add: np.ndarray) -> None:
        m0 = self.m0[level]
        self.m1[level], self.m2[level] = self.merged(m0, self.m1[level], self.m2[level], m0_add, m1_add, m2_add)
        self.m0[level] = m0 + m0_add

    def push(self, chunk: int, m0: int, m1: np.ndarray, m2: np.ndarray, depth: int) -> None:
        self.add(0, m0, m1[None], m2[None])
        mask = chunk + 1
        level = 1
        while level < depth and mask & 1 == 0:
            self.add(level, self.m0[level - 1], self.m1[level - 1], self.m2[level - 1])
            self._clear(level - 1)
            mask >>= 1
            level += 1

    def push_whole_chunks(self, m0: int, m1: np.ndarray, m2: np.ndarray, depth: int) -> None:
        """``push`` of the whole chunks 0, 1, ... (moments stacked on the leading axis), all at once: the counter
        merges each aligned pair of blocks of 2**j chunks by adding the first into an empty level and the second
        into that (and the top level adds whatever reaches it). Each level is left holding what the counter
        leaves there: the block of 2**j chunks that bit j of the chunk count stands for."""
        chunks = m1.shape[0]
        level, size = 0, 1
        blocks = (m1, m2)  # (complete aligned blocks of ``size`` chunks, merged)
        while blocks[0].shape[0]:
            top = level == max(depth, 1) - 1
            pairs = blocks[0].shape[0] // 2
            first = self.merged(0, *self._empty(blocks[0].shape[0]), m0 * size, *blocks)  # (into empty levels)
            if chunks & size:  # (a lone block: the level keeps it)
                self.m0[level] = m0 * size
                self.m1[level], self.m2[level] = first[0][-1:], first[1][-1:]
            if top:
                if pairs:  # (at most one pair reaches the top level, which keeps the merge)
                    self.m0[level] = 2 * m0 * size
                    self.m1[level], self.m2[level] = self.merged(m0 * size, first[0][:1], first[1][:1], m0 * size,
                                                                 blocks[0][1:2], blocks[1][1:2])
                return
            blocks = self.merged(m0 * size, first[0][0:2 * pairs:2], first[1][0:2 * pairs:2], m0 * size,
                                 blocks[0][1:2 * pairs:2], blocks[1][1:2 * pairs:2])
            level, size = level + 1, 2 * size

    def _empty(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        zeros = np.zeros((n,) + self.shape[1:], self.fused.dtype)
        return zeros, zeros

    def _clear(self, level: int) -> None:
        self.m0[level] = 0
        self.m1[level] = np.zeros(self.shape, self.fused.dtype)
        self.m2[level] = np.zeros(self.shape, self.fused.dtype)

    def collapse(self, depth: int) -> tuple[int, np.ndarray, np.ndarray]:
        for level in range(1, depth):
            self.add(0, self.m0[level], self.m1[level], self.m2[level])
        return self.m0[0], self.m1[0][0], self.m2[0][0]


def _merge_lanes_into_tail(tail: np.ndarray, lane_m0: int, lane_m1: np.ndarray, lane_m2: np.ndarray,
                           length: int, fused: _Fused) -> tuple[np.ndarray, np.ndarray]:
    """The scalar Welford recurrence over the elements past the last whole vector, then each lane merged into it
    (``AddMoments``, whose multiply-adds the compiler contracts; the recurrence's it does not)."""
    dtype = fused.dtype
    count, lanes = lane_m1.shape
    m1, m2 = _tail_moments(tail, dtype)
    weights, counts = _lane_merge_constants(tail.dtype, tail.shape[1], lane_m0, lanes)
    deltas = _merge_lane_means(np.ascontiguousarray(lane_m1.T), m1, weights, fused)
    for term in _lane_m2_terms(deltas, weights, counts, np.ascontiguousarray(lane_m2.T), fused):
        m2 = m2 + term
    return m1, m2 / np.asarray(dtype(length))


def _lane_m2_terms(deltas: np.ndarray, weights: np.ndarray, counts: np.ndarray, lane_m2: np.ndarray,
                   fused: _Fused) -> np.ndarray:
    """Each lane's ``fma(delta * delta * weight, count, lane_m2)``, one row per lane. The steps where only one
    operand can be NaN run for all lanes at once; the addition of ``lane_m2`` lane by lane, with the calls it had
    (which of two NaNs a NumPy loop returns depends on the loop it picks: in place, cast, broadcast...)."""
    squares = deltas * deltas  # (equal operands: one NaN)
    squares *= weights
    if not fused.in_place:
        return np.array([fma_if_available(*lane) for lane in zip(squares, counts, lane_m2)]).reshape(deltas.shape)
    wide = squares.astype(np.float64)
    wide *= counts  # (exact: the product of two floats)
    for row, addend in zip(wide, lane_m2):
        row += addend
    return wide.astype(np.float32)


def _merge_lane_means(lane_m1: np.ndarray, m1: np.ndarray, weights: np.ndarray, fused: _Fused) -> np.ndarray:
    """``m1 = fma(weight, lane_m1 - m1, m1)`` for the lanes (rows of ``lane_m1``) in turn, in place on ``m1``; the
    deltas, one row per lane. Float32 with FMA keeps a float64 twin of ``m1``, as ``_welford_steps_fma32``."""
    deltas = np.empty_like(lane_m1)
    if not fused.in_place:
        for lane, delta in enumerate(deltas):
            np.subtract(lane_m1[lane], m1, out=delta)
            fused(weights[lane], delta, m1, out=m1)
        return deltas
    m1_wide, wide_weights = m1.astype(np.float64), weights.astype(np.float64)
    wide = np.empty(m1.shape)
    for lane, delta in enumerate(deltas):
        np.subtract(lane_m1[lane], m1, out=delta)
        wide[...] = delta
        np.multiply(wide_weights[lane], wide, out=wide)
        _round_sum_into(wide, m1_wide, m1)
    return deltas


def _tail_moments(tail: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(mean, M2) of each row of ``tail`` by the scalar Welford recurrence (no fused steps). (Fresh results, not
    in place: which of two NaNs a NumPy loop returns can change with the output's aliasing.)"""
    m1 = np.zeros(tail.shape[0], dtype)
    m2 = np.zeros(tail.shape[0], dtype)
    for i in range(tail.shape[1]):
        x = tail[:, i]
        delta = x - m1
        m1 = m1 + delta / np.asarray(dtype(i + 1))
        m2 = m2 + delta * (x - m1)
    return m1, m2


@functools.lru_cache(maxsize=256)
def _lane_merge_constants(dtype: np.dtype, tail: int, per_lane: int, lanes: int) -> tuple[np.ndarray, np.ndarray]:
    """(weight, count before the merge) of each lane's ``AddMoments`` into the tail's moments, as (lanes, 1)
    columns of ``dtype`` (read-only: cached)."""
    scalar = np.dtype(dtype).type
    weights, counts = np.empty((lanes, 1), dtype), np.empty((lanes, 1), dtype)
    m0 = tail
    for lane in range(lanes):
        total = m0 + per_lane
        weights[lane] = scalar(0) if total == 0 else scalar(scalar(per_lane) / scalar(total))
        counts[lane] = scalar(m0)
        m0 = total
    weights.flags.writeable = counts.flags.writeable = False
    return weights, counts
