"""ATen's ``RowwiseMoments``: the mean and variance layer and group normalisation compute, bit for bit.

PyTorch's CPU kernels get a row's moments from a Welford recurrence run in vector lanes: chunks of 16 vectors
update running moments lane by lane, finished chunks merge through a binary-counter cascade, the elements past the
last whole vector go through a scalar recurrence, and the lanes merge into it one by one. The kernels are
registered for AVX2 (not AVX-512), so a vector is 32 bytes on every x86 machine: 8 floats or 4 doubles, with fused
multiply-adds where the CPU has them; the compiler contracts the scalar code's multiply-adds too.

Here the same recurrence runs on all rows and lanes at once in NumPy (rows of one call share a length).
"""

from __future__ import annotations

import numpy as np

from ..aten_vec import fma_if_available, vector_lanes

_CHUNK = 16  # kChunkSize: vectors per Welford chunk


def rowwise_moments(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, biased variance) of each row of a 2-d float32 or float64 array, as ATen's ``RowwiseMoments``."""
    dtype = rows.dtype.type
    count, length = rows.shape
    lanes = vector_lanes(rows.dtype)
    vectors = length // lanes
    chunk_count = -(-vectors // _CHUNK)
    depth = (chunk_count - 1).bit_length() if chunk_count > 1 else 0  # utils::CeilLog2
    stack = _CascadeStack(max(depth, 1), count, lanes, dtype)
    for chunk, (m0, m1, m2) in enumerate(_chunk_moments(rows[:, :vectors * lanes], lanes, dtype)):
        stack.push(chunk, m0, m1, m2, depth)
    m0, m1, m2 = stack.collapse(depth)
    return _merge_lanes_into_tail(rows[:, vectors * lanes:], m0, m1, m2, length, dtype)


def _chunk_moments(body: np.ndarray, lanes: int, dtype):
    """Per chunk of 16 vectors, in order: (vector count, lane means, lane M2s) of ``UpdateMomentsVec``. The whole
    chunks run together, the short last one after them."""
    count = body.shape[0]
    vectors = body.shape[1] // lanes
    whole = vectors // _CHUNK
    if whole:
        # (vector j of every chunk and row side by side, so each step of the recurrence reads one block)
        steps = body[:, :whole * _CHUNK * lanes].reshape(count, whole, _CHUNK, lanes).transpose(2, 0, 1, 3)
        m1, m2 = _welford_steps(np.ascontiguousarray(steps), dtype)
        for chunk in range(whole):
            yield _CHUNK, m1[:, chunk], m2[:, chunk]
    if vectors > whole * _CHUNK:
        rest = body[:, whole * _CHUNK * lanes:vectors * lanes].reshape(count, -1, lanes).transpose(1, 0, 2)
        m1, m2 = _welford_steps(np.ascontiguousarray(rest), dtype)
        yield rest.shape[0], m1, m2


def _welford_steps(steps: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """The lane-wise Welford recurrence over ``steps[0], steps[1], ...`` (each weighted by 1 / (j + 1))."""
    m1 = np.zeros(steps.shape[1:], dtype)
    m2 = np.zeros(steps.shape[1:], dtype)
    for j, x in enumerate(steps):
        delta = x - m1
        m1 = fma_if_available(dtype(dtype(1) / dtype(j + 1)), delta, m1)
        m2 = fma_if_available(delta, x - m1, m2)
    return m1, m2


class _CascadeStack:
    """The stack of partial moments ``RowwiseMomentsImpl`` merges like a binary counter (``AddMomentsVec``)."""

    def __init__(self, depth: int, count: int, lanes: int, dtype) -> None:
        self.dtype = dtype
        self.m0 = [0] * depth
        self.m1 = [np.zeros((count, lanes), dtype) for _ in range(depth)]
        self.m2 = [np.zeros((count, lanes), dtype) for _ in range(depth)]

    def add(self, level: int, m0_add: int, m1_add: np.ndarray, m2_add: np.ndarray) -> None:
        dtype = self.dtype
        m0 = self.m0[level]
        total = m0 + m0_add
        weight = dtype(0) if total == 0 else dtype(dtype(m0_add) / dtype(total))
        delta = m1_add - self.m1[level]
        m2_sum = self.m2[level] + m2_add
        weighted = weight * delta
        self.m1[level] = self.m1[level] + weighted
        self.m2[level] = fma_if_available(delta * dtype(m0), weighted, m2_sum)
        self.m0[level] = total

    def push(self, chunk: int, m0: int, m1: np.ndarray, m2: np.ndarray, depth: int) -> None:
        self.add(0, m0, m1, m2)
        mask = chunk + 1
        level = 1
        while level < depth and mask & 1 == 0:
            self.add(level, self.m0[level - 1], self.m1[level - 1], self.m2[level - 1])
            self.m0[level - 1] = 0
            self.m1[level - 1] = np.zeros_like(self.m1[level - 1])
            self.m2[level - 1] = np.zeros_like(self.m2[level - 1])
            mask >>= 1
            level += 1

    def collapse(self, depth: int) -> tuple[int, np.ndarray, np.ndarray]:
        for level in range(1, depth):
            self.add(0, self.m0[level], self.m1[level], self.m2[level])
        return self.m0[0], self.m1[0], self.m2[0]


def _merge_lanes_into_tail(tail: np.ndarray, lane_m0: int, lane_m1: np.ndarray, lane_m2: np.ndarray,
                           length: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """The scalar Welford recurrence over the elements past the last whole vector, then each lane merged into it
    (``AddMoments``, whose multiply-adds the compiler contracts; the recurrence's it does not)."""
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
    for lane in range(lane_m1.shape[1]):
        total = m0 + per_lane
        weight = dtype(0) if total == 0 else dtype(dtype(per_lane) / dtype(total))
        delta = lane_m1[:, lane] - m1
        m1 = fma_if_available(np.full_like(delta, weight), delta, m1)
        m2 = m2 + fma_if_available(delta * delta * weight, np.full_like(delta, dtype(m0)), lane_m2[:, lane])
        m0 = total
    return m1, m2 / dtype(length)
