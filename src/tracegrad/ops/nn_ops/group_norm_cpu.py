"""ATen's CPU ``native_group_norm`` on channels-last inputs and ``native_group_norm_backward``, for float and
double (the forward for half too), bit for bit.

The kernels (``group_norm_kernel.cpp``) are registered for the AVX2 build only, so a vector is 8 floats or 4
doubles. They first reduce each (sample, channel) to ``ds = sum(dy * x)`` and ``db = sum(dy)``, then per (sample,
group) fold those over the group's channels, weighted by gamma, into the constants of
``dx = c1 * dy + c2 * x + c3``; ``dgamma`` and ``dbeta`` add ``ds`` and ``db`` down the samples.

Contiguous inputs reduce each channel's plane with ``vec::map2_reduce_all`` / ``reduce_all``. Channels-last
inputs add channel vectors position after position; with fewer than 2048 positions a group's ``ds`` and ``db``
are folded per vector of channels (``vec_reduce_all``), otherwise channel after channel.

Which multiply-adds GCC 13 fused (-O2, FMA) was found by comparing with PyTorch's results; each step names it.

The channels-last forward (``GroupNormKernelImplChannelsLastInternal``) forms the statistics from the sums of x
and of x * x (not Welford's): ``mean = sum * s`` and ``var = max(fma(sum_sq, s, -mean * mean), 0)`` with
``s = 1 / (D * positions)``; ``rstd = 1 / sqrt(var + eps)`` in double (eps is a double). With fewer than 1024
positions each (sample, group) adds its vectors of channels position after position into one vector
(``ColumnwiseMoments``, squares unfused) and folds it; otherwise every position adds its channels into a buffer
per thread and sample (``CalcMeanVar``, squares fused), whose channels a group then adds in turn. Then
``y = fma(x, scale, fma(-scale, mean, beta))`` per channel, ``scale = rstd * gamma`` (half: all in float, the
shift unfused, and y, mean and rstd rounded to half).
"""

from __future__ import annotations

import numpy as np

from ..._runtime import get_num_threads
from .. import aten_vec
from ..aten_loops import thread_chunks
from ..aten_sum import ordered_sum


def _sum_from_zero(a: np.ndarray, axis: int) -> np.ndarray:
    """The sum over ``axis``, element after element from zero (adding the zero last gives the same bits)."""
    return ordered_sum(a, axis) + a.dtype.type(0)

_MANY_POSITIONS = 2048  # feature_map_threshold of the channels-last backward
_FORWARD_MANY_POSITIONS = 1024  # and of the channels-last forward
# (the channels-last forward for half takes its weight and bias in half; a float weight with it is not done here)
CHANNELS_LAST_FORWARD_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def group_norm_forward_channels_last(x: np.ndarray, gamma: np.ndarray | None, beta: np.ndarray | None,
                                     groups: int, eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, mean, rstd) of an (N, C, *spatial) float16, float32 or float64 input (weight and bias of its dtype)
    whose suggested memory format is channels-last; ``y`` comes in that layout, the statistics as (N, groups).
    Half computes in float (its opmath type) and rounds y and the statistics to half at the end."""
    half = x.dtype == np.float16
    rows = _positions_by_channels(x)
    if half:
        rows = rows.astype(np.float32)
        gamma, beta = (None if p is None else p.astype(np.float32) for p in (gamma, beta))
    n, positions, c = rows.shape
    d = c // groups
    dtype = rows.dtype.type
    s = dtype(1) / dtype(d * positions)
    if positions < _FORWARD_MANY_POSITIONS:
        total, squares = _columnwise_moments(rows, groups, half)
    else:
        total, squares = _buffered_moments(rows, groups)
    mean = total * s
    var = np.maximum(aten_vec.fma(squares, np.full_like(squares, s), -(mean * mean)), 0)
    rstd = (1.0 / np.sqrt(var.astype(np.float64) + eps)).astype(dtype)
    scale = np.repeat(rstd, d, axis=1)
    if gamma is not None:
        scale = scale * gamma
    channel_mean = np.repeat(mean, d, axis=1)
    if beta is None:  # (a zero is added still: -0 comes out as +0)
        shift = -scale * channel_mean + dtype(0)
    elif half:  # (``-scale * mean + beta``: fused for float and double, not in half's instance)
        shift = -scale * channel_mean + beta
    else:
        shift = aten_vec.fma(-scale, channel_mean, np.broadcast_to(beta, scale.shape))
    y = _scale_and_shift(rows, scale, shift).reshape((n,) + x.shape[2:] + (c,))
    if half:
        y, mean, rstd = (a.astype(np.float16) for a in (y, mean, rstd))
    return np.moveaxis(y, -1, 1), mean, rstd


def _columnwise_moments(rows: np.ndarray, groups: int, half: bool) -> tuple[np.ndarray, np.ndarray]:
    """``ColumnwiseMoments`` per (sample, group) of (N, positions, C) rows: one vector from zero adds x and
    another the rounded x * x (GCC leaves that register chain unfused), each vector of the group's channels in
    turn (the last one padded with zeros), position after position; then ``vec_reduce_all`` of each. A vector
    of half holds 16 channels, whose two halves (in float) are added before the accumulator adds them."""
    n, positions, c = rows.shape
    d = c // groups
    lanes = aten_vec.vector_lanes(rows.dtype)
    width = 2 * lanes if half else lanes
    vectors = -(-d // width)
    if vectors * width == d:
        padded = rows.reshape(n, positions, groups, vectors, width)
    else:
        padded = np.zeros((n, positions, groups, vectors, width), rows.dtype)
        padded.reshape(n, positions, groups, -1)[..., :d] = rows.reshape(n, positions, groups, d)
    if half:  # (which of these squares GCC fused does not show in half's results: taken as written)
        low, high = padded[..., :lanes], padded[..., lanes:]
        values, squares = low + high, low * low + high * high
    else:
        values, squares = padded, padded * padded
    sums = []
    for steps in (values, squares):
        if vectors == 1:  # (a group's lanes are its channels: add down the positions)
            steps = steps.reshape(n, positions, groups * lanes)
        else:  # (each lane takes position after position, vector after vector within one)
            steps = np.ascontiguousarray(steps.transpose(0, 2, 1, 3, 4)).reshape(n * groups, -1, lanes)
        sums.append(aten_vec.fold_lanes(_sum_from_zero(steps, axis=1).reshape(n * groups, lanes)).reshape(n, groups))
    return sums[0], sums[1]


def _buffered_moments(rows: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """``CalcMeanVar`` into a zeroed buffer per thread and sample: each thread's range of the N * positions rows
    (``at::parallel_for``) adds x and ``fma(x, x, acc)`` per channel, row after row; then per (sample, group) a
    scalar from zero adds the buffers' channels of the group, channel after channel and thread after thread
    within one."""
    n, positions, c = rows.shape
    threads = get_num_threads()
    flat = rows.reshape(n * positions, c)
    starts = thread_chunks(n * positions, 1)
    ends = np.append(starts[1:], n * positions)
    # one run of rows per (thread, sample) it meets; the runs stand side by side, shorter ones after leading
    # zeros (which leave a sum from zero as it is), so that one pass adds them all
    runs = [(t, sample, lo, hi) for t, (begin, end) in enumerate(zip(starts, ends, strict=True))
            for sample in range(begin // positions, -(-end // positions))
            for lo, hi in [(max(begin, sample * positions), min(end, (sample + 1) * positions))]]
    longest = max(hi - lo for _, _, lo, hi in runs)
    side_by_side = np.zeros((longest, len(runs), c), rows.dtype)
    for k, (_, _, lo, hi) in enumerate(runs):
        side_by_side[longest - (hi - lo):, k] = flat[lo:hi]
    side_by_side = side_by_side.reshape(longest, -1)
    total_runs = _sum_from_zero(side_by_side, axis=0).reshape(len(runs), c)
    square_runs = aten_vec.fused_row_accumulation(side_by_side, side_by_side).reshape(len(runs), c)
    buffers = np.zeros((2, n, c, threads), rows.dtype)
    for k, (t, sample, _, _) in enumerate(runs):
        buffers[0, sample, :, t] = total_runs[k]
        buffers[1, sample, :, t] = square_runs[k]
    per_group = _sum_from_zero(buffers.reshape(2, n, groups, -1), axis=3)
    return per_group[0], per_group[1]


def _scale_and_shift(rows: np.ndarray, scale: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """``ApplyScaleBias``: ``fma(x, scale, shift)`` of (N, positions, C) rows with (N, C) ``scale`` and
    ``shift``, a sample at a time for float (its exact products in a float64 scratch)."""
    if rows.dtype != np.float32:
        return aten_vec.fma(rows, scale[:, None, :], shift[:, None, :])
    out = np.empty(rows.shape, rows.dtype)
    wide = np.empty(rows.shape[1:])
    scale, shift = scale.astype(np.float64), shift.astype(np.float64)
    for sample in range(rows.shape[0]):
        aten_vec.fma_into(rows[sample], scale[sample], shift[sample], out[sample], wide)
    return out


def group_norm_backward(dy: np.ndarray, x: np.ndarray, mean: np.ndarray, rstd: np.ndarray, gamma: np.ndarray | None,
                        groups: int, output_mask, channels_last: bool) -> tuple:
    """(dx, dgamma, dbeta) of an (N, C, *spatial) float32 or float64 input (all operands one dtype), the ones
    ``output_mask`` asks for (an empty array for the others). ``channels_last`` picks the kernel (the input's
    suggested memory format), and ``dx`` comes in that layout."""
    n, c = x.shape[:2]
    positions = x.size // (n * c)
    dtype = x.dtype.type
    kernel = _ChannelsLast if channels_last else _Contiguous
    sums = kernel(dy, x, groups)
    mean = mean.reshape(n, groups).astype(dtype, copy=False)
    rstd = rstd.reshape(n, groups).astype(dtype, copy=False)
    gammas = np.ones((groups, c // groups), dtype) if gamma is None else gamma.reshape(groups, -1)
    empty = np.empty((0,), dy.dtype)
    dx = dgamma = dbeta = empty
    if output_mask[0]:
        ds_gamma, db_gamma = sums.group_sums(gammas)
        scale = dtype(1) / dtype(c // groups * positions)
        c1 = (rstd[:, :, None] * gammas).reshape(n, c)
        c2, c3 = sums.constants(ds_gamma, db_gamma, mean, rstd, scale)
        dx = sums.input_grad(c1, np.repeat(c2, c // groups, axis=1), np.repeat(c3, c // groups, axis=1))
        dx = dx.reshape(x.shape)
    if output_mask[1]:
        dgamma = _gamma_backward(sums.ds, sums.db, mean, rstd, groups)
    if output_mask[2]:
        dbeta = _sum_from_zero(sums.db, axis=0)  # (BetaBackward adds the samples in turn)
    return dx, dgamma, dbeta


def _gamma_backward(ds: np.ndarray, db: np.ndarray, mean: np.ndarray, rstd: np.ndarray, groups: int) -> np.ndarray:
    """``GammaBackward``: ``acc = fma(fma(-db, mean, ds), rstd, acc)`` sample after sample, per channel."""
    n, c = ds.shape
    channel_mean = np.repeat(mean, c // groups, axis=1)
    channel_rstd = np.repeat(rstd, c // groups, axis=1)
    centred = aten_vec.fma(-db, channel_mean, ds)
    acc = np.zeros(c, ds.dtype)
    for sample in range(n):
        acc = aten_vec.fma(centred[sample], channel_rstd[sample], acc)
    return acc


class _Contiguous:
    """``GroupNormBackwardKernelImplInternal``: (N, C, positions) C-contiguous planes."""

    def __init__(self, dy: np.ndarray, x: np.ndarray, groups: int) -> None:
        n, c = x.shape[:2]
        self.groups = groups
        self.dy = np.ascontiguousarray(dy).reshape(n * c, -1)
        self.x = np.ascontiguousarray(x).reshape(n * c, -1)
        # ComputeInternalGradients: map2_reduce_all's leftover products are fused for double, not for float
        fused_tail = self.x.dtype != np.float32
        self.ds = aten_vec.map_reduce_sum([self.dy, self.x], fused_tail=fused_tail).reshape(n, c)
        self.db = aten_vec.map_reduce_sum([self.dy]).reshape(n, c)

    def group_sums(self, gammas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``CalcDsDb`` and its scalar tail: per (sample, group), ``sum(ds * gamma)`` and ``sum(db * gamma)``."""
        n, c = self.ds.shape
        per_group = (n, self.groups, c // self.groups)
        return tuple(_vector_then_tail_sum(v.reshape(per_group), gammas) for v in (self.ds, self.db))

    @staticmethod
    def constants(ds: np.ndarray, db: np.ndarray, mean: np.ndarray, rstd: np.ndarray, scale) -> tuple:
        """``c2 = (db * mean - ds) * rstd^3 * s`` and ``c3 = -c2 * mean - db * rstd * s`` as GCC contracts the
        scalar code: ``fma(db, mean, -ds)`` and ``fma(-(db * rstd), s, -c2 * mean)``."""
        c2 = aten_vec.fma(db, mean, -ds) * rstd * rstd * rstd * scale
        return c2, aten_vec.fma(-(db * rstd), np.full_like(c2, scale), -c2 * mean)

    def input_grad(self, c1: np.ndarray, c2: np.ndarray, c3: np.ndarray) -> np.ndarray:
        """``fma(c1, dy, c2 * x) + c3`` per (sample, channel) plane, a block of planes at a time."""
        rows = self.x.shape
        out = np.empty(rows, self.x.dtype)
        c1, c2, c3 = (v.reshape(-1, 1) for v in (c1, c2, c3))
        wide = np.empty((aten_vec.block_rows(*rows), rows[1])) if out.dtype == np.float32 else None
        for block in aten_vec.row_blocks(*rows):
            head = np.multiply(c2[block], self.x[block])
            scratch = None if wide is None else wide[:head.shape[0]]
            aten_vec.fma_into(np.broadcast_to(c1[block], head.shape), self.dy[block], head, out[block], scratch)
            out[block] += c3[block]
        return out


def _vector_then_tail_sum(values: np.ndarray, gammas: np.ndarray) -> np.ndarray:
    """``CalcDsDb`` over (N, G, D) ``values``: whole vectors of channels fused into lanes from zero, the lanes added
    in order from zero (``std::accumulate``), then the leftover channels (``compiled_multiply_add_loop``)."""
    lanes = aten_vec.vector_lanes(values.dtype)
    whole = values.shape[2] // lanes * lanes
    acc = np.zeros(values.shape[:2] + (lanes,), values.dtype)
    for j in range(0, whole, lanes):
        acc = aten_vec.fma(values[..., j:j + lanes], np.broadcast_to(gammas[:, j:j + lanes], acc.shape), acc)
    total = np.zeros(values.shape[:2], values.dtype)
    for lane in range(lanes):
        total = total + acc[..., lane]
    tail = values[..., whole:]
    return aten_vec.compiled_multiply_add_loop(total, tail, np.broadcast_to(gammas[:, whole:], tail.shape))


class _ChannelsLast:
    """``GroupNormBackwardKernelImplChannelsLastInternal``: (N, positions, C) rows in memory."""

    def __init__(self, dy: np.ndarray, x: np.ndarray, groups: int) -> None:
        self.groups = groups
        self.dy = _positions_by_channels(dy)
        self.x = _positions_by_channels(x)
        self.many_positions = self.x.shape[1] >= _MANY_POSITIONS
        self.ds, self.db = _channel_sums(self.dy, self.x, fused=self.many_positions)

    def group_sums(self, gammas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per (sample, group), ``sum(ds * gamma)`` and ``sum(db * gamma)``: with few positions, each vector of a
        group's channels (the last one padded with zeros) times gamma folded by ``vec_reduce_all`` and added
        in turn; otherwise channel after channel."""
        n, c = self.ds.shape
        d = c // self.groups
        per_group = (n, self.groups, d)
        if self.many_positions:
            return tuple(_channel_after_channel(v.reshape(per_group), gammas) for v in (self.ds, self.db))
        return tuple(_folded_vectors(v.reshape(per_group), gammas) for v in (self.ds, self.db))

    @staticmethod
    def constants(ds: np.ndarray, db: np.ndarray, mean: np.ndarray, rstd: np.ndarray, scale) -> tuple:
        """``c2`` and ``c3`` as the contiguous kernel's, but contracted as ``fma(db, mean, -ds)`` and
        ``fma(-c2, mean, -(db * rstd * s))``."""
        c2 = aten_vec.fma(db, mean, -ds) * rstd * rstd * rstd * scale
        return c2, aten_vec.fma(-c2, mean, -(db * rstd * scale))

    def input_grad(self, c1: np.ndarray, c2: np.ndarray, c3: np.ndarray) -> np.ndarray:
        """``fma(c2, x, c1 * dy) + c3`` per element (the vector code's contraction): an (N, C, positions) view
        of channels-last memory."""
        dx = aten_vec.fma(np.broadcast_to(c2[:, None, :], self.x.shape), self.x, c1[:, None, :] * self.dy)
        dx += c3[:, None, :]
        return dx.transpose(0, 2, 1)


def _positions_by_channels(a: np.ndarray) -> np.ndarray:
    """An (N, C, *spatial) array as (N, positions, C), C-contiguous (channels-last memory order)."""
    n, c = a.shape[:2]
    return np.ascontiguousarray(np.moveaxis(a, 1, -1)).reshape(n, -1, c)


def _channel_sums(dy: np.ndarray, x: np.ndarray, fused: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per (sample, channel) of (N, positions, C) arrays, ``ds += x * dy`` and ``db += dy`` position after
    position, from zero. The few-positions loop keeps its sums in registers, and GCC leaves that chain of
    multiply-adds unfused; the many-positions loop adds into a buffer in memory, fused."""
    n, positions, c = x.shape
    db = _sum_from_zero(dy, axis=1)
    if not fused:
        return _sum_from_zero(x * dy, axis=1), db
    by_position = [np.ascontiguousarray(a.transpose(1, 0, 2)).reshape(positions, n * c) for a in (x, dy)]
    return aten_vec.fused_row_accumulation(*by_position).reshape(n, c), db


def _folded_vectors(values: np.ndarray, gammas: np.ndarray) -> np.ndarray:
    """``CalcInternalGradientsChannelsLast``'s fold: per vector of a group's channels, ``vec_reduce_all`` of the
    rounded products with gamma (lanes past the group's channels are zero), added in turn to a zero."""
    lanes = aten_vec.vector_lanes(values.dtype)
    n, groups, d = values.shape
    padded = -(-d // lanes) * lanes
    products = np.zeros((n, groups, padded), values.dtype)
    products[..., :d] = values * gammas
    total = np.zeros((n, groups), values.dtype)
    for j in range(0, padded, lanes):
        vectors = products[..., j:j + lanes].reshape(-1, lanes)
        folded = aten_vec.fold_lanes(vectors)
        total = total + folded.reshape(n, groups)
    return total


def _channel_after_channel(values: np.ndarray, gammas: np.ndarray) -> np.ndarray:
    """The many-positions path: ``acc += value * gamma`` channel after channel (unfused), from zero."""
    total = np.zeros(values.shape[:2], values.dtype)
    for j in range(values.shape[2]):
        total = total + values[..., j] * gammas[:, j]
    return total
