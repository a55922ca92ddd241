"""ATen's ``RowwiseMoments``: the mean and variance layer and group normalisation compute, bit for bit.

PyTorch's CPU kernels get a row's moments from a Welford recurrence run in vector lanes: chunks of 16 vectors
update running moments lane by lane, finished chunks merge through a binary-counter cascade, the elements past the
last whole vector go through a scalar recurrence, and the lanes merge into it one by one. The kernels are
registered for AVX2 (not AVX-512), so a vector is 32 bytes on every x86 machine: 8 floats or 4 doubles, with fused
multiply-adds where the CPU has them; the compiler contracts the scalar code's multiply-adds too.

Here the same recurrence runs on all rows and lanes at once in NumPy (rows of one call share a length). The
cascade's merges of whole chunks run level by level over all chunk pairs at once (the binary counter merges
aligned blocks the same way whatever their position), the rest as the counter does it, merge after merge.
"""

from __future__ import annotations

import numpy as np

from ..aten_vec import cpu_has_fma, fma_if_available, fma_into, vector_lanes

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
    float64, the sum rounded there and then to float (what ``aten_vec.fma32`` computes, without its temporaries)."""

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype.type
        self.in_place = dtype == _F32 and cpu_has_fma()

    def __call__(self, a, b, c, out: np.ndarray | None = None, wide: np.ndarray | None = None) -> np.ndarray:
        """``a * b + c`` (one rounding with FMA), into ``out`` when given (``out`` may be ``c``); ``wide`` is a
        float64 scratch array of the result's shape for the in-place path."""
        if self.in_place:
            if out is None:
                out = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c)), _F32)
            return fma_into(a, b, c, out, wide)
        result = fma_if_available(a, b, c)
        if out is None:
            return result
        out[...] = result
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
    dtype = fused.dtype
    shape = steps.shape[1:]
    m1 = np.zeros(shape, dtype)
    m2 = np.zeros(shape, dtype)
    delta = np.empty(shape, dtype)
    centred = np.empty(shape, dtype)
    wide = np.empty(shape, np.float64) if fused.in_place else None
    for j, x in enumerate(steps):
        np.subtract(x, m1, out=delta)
        fused(dtype(dtype(1) / dtype(j + 1)), delta, m1, out=m1, wide=wide)
        np.subtract(x, m1, out=centred)
        fused(delta, centred, m2, out=m2, wide=wide)
    return m1, m2


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
        dtype = self.fused.dtype
        total = m0 + m0_add
        weight = dtype(0) if total == 0 else dtype(dtype(m0_add) / dtype(total))
        delta = np.subtract(m1_add, m1)
        m2_sum = np.add(m2, m2_add)
        weighted = np.multiply(weight, delta)
        m1 = np.add(m1, weighted)
        delta *= dtype(m0)
        return m1, self.fused(delta, weighted, m2_sum, out=m2_sum)

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
    count = tail.shape[0]
    m1 = np.zeros(count, dtype)
    m2 = np.zeros(count, dtype)
    m0 = 0
    for i in range(tail.shape[1]):
        x = tail[:, i]
        delta = x - m1
        m0 += 1
        m1 = m1 + delta / dtype(m0)
        m2 = m2 + delta * (x - m1)
    per_lane = lane_m0  # (every lane saw the same number of vectors)
    lane_m1 = np.ascontiguousarray(lane_m1.T)  # (one row per lane)
    lane_m2 = np.ascontiguousarray(lane_m2.T)
    for lane in range(lane_m1.shape[0]):
        total = m0 + per_lane
        weight = dtype(0) if total == 0 else dtype(dtype(per_lane) / dtype(total))
        delta = lane_m1[lane] - m1
        m1 = fused(np.full_like(delta, weight), delta, m1)
        m2 = m2 + fused(delta * delta * weight, np.full_like(delta, dtype(m0)), lane_m2[lane])
        m0 = total
    return m1, m2 / dtype(length)
