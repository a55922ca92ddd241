"""2-d adaptive average pooling as PyTorch's CPU kernels compute it (``AdaptiveAvgPoolKernel.cpp``), bit for bit.

Each output averages its window ``[floor(o * in / out), ceil((o + 1) * in / out))`` per axis: the window's
elements are added to a zero in the accumulate type (float for half and float), row after row, then divided by
the window's height and then by its width. A channels-last input is worked channel vector by channel vector (8
floats, 4 doubles): those channels divide once, by height times width, the leftover channels twice. The backward
adds ``grad / kh / kw`` (once by ``kh * kw`` for channels-last's vectors) into each window, window after window.
"""

from __future__ import annotations

import numpy as np

from ..aten_vec import vector_lanes


def windows(in_size: int, out_size: int) -> list[tuple[int, int]]:
    """Each output's ``(start, end)`` along one axis (ATen's ``start_index`` / ``end_index``)."""
    return [((o * in_size) // out_size, -(-((o + 1) * in_size) // out_size)) for o in range(out_size)]


def is_channels_last(x: np.ndarray) -> bool:
    """Whether a 4-d array is laid out channels-last (channels innermost), as ATen's suggested format tells."""
    n, c, h, w = x.shape
    if c == 1 or x.flags.c_contiguous:
        return False
    s = x.strides
    return s[1] == x.itemsize and s[3] == c * x.itemsize and s[2] == w * c * x.itemsize


def _accumulate_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _divided(sums: np.ndarray, kh, kw, kind: type, vectored: int) -> np.ndarray:
    """(..., channels) sums divided as the kernel divides them: by ``kh`` then by ``kw`` (numbers or arrays that
    broadcast), in ``kind``; the first ``vectored`` channels (channels-last's whole vectors) once, by
    ``kh * kw``."""
    kh, kw = np.asarray(kh), np.asarray(kw)
    out = sums / kh.astype(kind) / kw.astype(kind)
    if vectored:
        out[..., :vectored] = sums[..., :vectored] / (kh * kw).astype(kind)
    return out


def _vectored_channels(dtype: np.dtype, channels: int, channels_last: bool) -> int:
    """How many channels channels-last's kernel takes in whole vectors (none in the contiguous kernel)."""
    return channels - channels % vector_lanes(dtype) if channels_last else 0


def _by_window_size(bounds: list[tuple[int, int]]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The outputs along one axis grouped by window size: size -> (outputs, their windows' input indices)."""
    groups: dict[int, list[int]] = {}
    for o, (start, end) in enumerate(bounds):
        groups.setdefault(end - start, []).append(o)
    return {size: (np.array(outs), np.array([[bounds[o][0] + k for k in range(size)] for o in outs]).reshape(
        len(outs), size)) for size, outs in groups.items()}


def adaptive_avg_pool2d(x: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """PyTorch's ``_adaptive_avg_pool2d`` of a 3-d or 4-d float array, laid out as the input."""
    batched = x if x.ndim == 4 else x[None]
    n, c, h, w = batched.shape
    channels_last = is_channels_last(batched)
    # (channels last in both layouts here: one window's sums are a (batch, channels) block)
    data = np.moveaxis(batched, 1, -1).astype(_accumulate_dtype(x.dtype), copy=False)
    out = np.empty((n, out_h, out_w, c), x.dtype)
    for kh, (rows_out, rows) in _by_window_size(windows(h, out_h)).items():
        for kw, (cols_out, cols) in _by_window_size(windows(w, out_w)).items():
            # every window of this size at once, its elements added row after row to a +0 (so a window of -0s
            # sums to +0, as there)
            total = np.zeros((n, len(rows_out), len(cols_out), c), data.dtype)
            for di in range(kh):
                in_rows = data[:, rows[:, di]]
                for dj in range(kw):
                    total += in_rows[:, :, cols[:, dj]]
            out[:, rows_out[:, None], cols_out[None, :]] = _divided(
                total, kh, kw, _accumulate_dtype(x.dtype).type, _vectored_channels(x.dtype, c, channels_last))
    result = np.moveaxis(out, -1, 1)  # (channels-last memory)
    if not channels_last:
        result = np.ascontiguousarray(result)
    return result if x.ndim == 4 else result[0]


def _covering(bounds: list[tuple[int, int]], size: int) -> np.ndarray:
    """(size, most) array: for each input index the outputs whose windows cover it, in order, padded with -1."""
    cover: list[list[int]] = [[] for _ in range(size)]
    for o, (start, end) in enumerate(bounds):
        for i in range(start, end):
            cover[i].append(o)
    most = max((len(c) for c in cover), default=0)
    return np.array([c + [-1] * (most - len(c)) for c in cover], dtype=np.int64).reshape(size, most)


def adaptive_avg_pool2d_backward(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PyTorch's ``_adaptive_avg_pool2d_backward``: the gradient of ``x`` (3-d or 4-d) from ``g``. Each input
    element adds the deltas of the windows covering it in the kernel's order (window after window, row-major),
    all elements at once."""
    batched_g = g if g.ndim == 4 else g[None]
    n, c, h, w = (x if x.ndim == 4 else x[None]).shape
    out_h, out_w = batched_g.shape[2:]
    channels_last = is_channels_last(x if x.ndim == 4 else x[None]) and is_channels_last(batched_g)
    grad = np.moveaxis(batched_g, 1, -1)
    bounds_h, bounds_w = windows(h, out_h), windows(w, out_w)
    kh = np.array([end - start for start, end in bounds_h])[None, :, None, None]
    kw = np.array([end - start for start, end in bounds_w])[None, None, :, None]
    # (in the tensors' dtype: half rounds each step, as its scalar_t arithmetic does)
    deltas = _divided(grad.astype(x.dtype, copy=False), kh, kw, x.dtype.type,
                      _vectored_channels(x.dtype, c, channels_last))
    cover_h, cover_w = _covering(bounds_h, h), _covering(bounds_w, w)
    out = np.zeros((n, h, w, c), x.dtype)
    for a in range(cover_h.shape[1]):  # (the covering windows in row-major order)
        in_rows = np.flatnonzero(cover_h[:, a] >= 0)  # (the input rows an a-th window covers)
        rows = deltas[:, cover_h[in_rows, a]]
        for b in range(cover_w.shape[1]):
            in_cols = np.flatnonzero(cover_w[:, b] >= 0)
            term = rows[:, :, cover_w[in_cols, b]]
            if in_rows.size == h and in_cols.size == w:
                out += term
            else:  # (only the elements a second window covers: no index repeats, so += adds each once)
                out[:, in_rows[:, None], in_cols[None, :]] += term
    result = np.moveaxis(out, -1, 1)
    if not channels_last:
        result = np.ascontiguousarray(result)
    return result if x.ndim == 4 else result[0]
