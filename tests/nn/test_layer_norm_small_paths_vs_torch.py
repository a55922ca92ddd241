"""The cheaper steps of ``aten_moments`` (float64 twins of the running float moments, the lane merge's terms for
all lanes at once) give ATen's statistics bit for bit, on few and many rows, and the same bits (NaNs' signs too) as
the step-by-step emulation through ``aten_vec.fma_into`` they replace."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg
from tracegrad.ops import aten_vec
from tracegrad.ops.nn_ops import aten_moments

# (rows shorter than a vector, a vector plus a tail, one short chunk, whole chunks, whole chunks plus a tail)
LENGTHS = [1, 5, 8, 10, 13, 37, 64, 128, 131, 256, 1029]
ROWS = [1, 2, 3, 16, 40]
SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, 1e30, -1e30, 0.0, -0.0])


def _data(seed: int, shape: tuple, dtype) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 3 + 0.7).astype(dtype)


def _with_specials(seed: int, shape: tuple, dtype) -> np.ndarray:
    """Data with NaNs of both signs, infinities and huge values: where two NaNs meet, the emulation must keep
    the one its reference keeps."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    where = rng.integers(0, x.size, max(1, x.size // 4))
    x.flat[where] = SPECIALS[rng.integers(0, SPECIALS.size, where.size)]
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("length", LENGTHS)
def test_layer_norm_statistics_are_atens(dtype, rows, length):
    x = _data(rows * 1000 + length, (rows, length), dtype)
    _, mean, rstd = torch.ops.aten.native_layer_norm(torch.tensor(x), [length], None, None, 1e-5)
    _, ours_mean, ours_rstd = tg.native_layer_norm(tg.tensor(x), [length], None, None, 1e-5)
    assert np.array_equal(ours_mean.numpy(), mean.numpy())
    assert np.array_equal(ours_rstd.numpy(), rstd.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "normalized"), [((1, 1), (1,)), ((16, 10), (10,)), ((2, 3, 5), (3, 5)),
                                                   ((1, 37), (37,)), ((128, 256), (256,))])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_small_layer_norm_forward_and_backward_are_torchs(dtype, shape, normalized, affine):
    x = _data(len(shape), shape, dtype)
    rng = np.random.default_rng(9)
    dy = rng.standard_normal(shape).astype(dtype)
    weight = rng.standard_normal(normalized).astype(dtype) if affine != "none" else None
    bias = rng.standard_normal(normalized).astype(dtype) if affine == "both" else None
    results = []
    for module in (torch, tg):
        leaf = module.tensor(x, requires_grad=True)
        params = [None if v is None else module.tensor(v, requires_grad=True) for v in (weight, bias)]
        out = module.nn.functional.layer_norm(leaf, normalized, *params)
        out.backward(module.tensor(dy))
        results.append([out.detach().numpy(), leaf.grad.numpy()] + [p.grad.numpy() for p in params if p is not None])
    for theirs, ours in zip(*results, strict=True):
        assert np.array_equal(theirs, ours)


# ---- the same bits as the step-by-step emulation -------------------------------------------------------------


def _fused_reference(a, b, c) -> np.ndarray:
    """``fma_if_available`` with float32 on an FMA machine through ``aten_vec.fma_into``, called as the
    emulation was before it kept float64 twins (fresh operands, a fresh result)."""
    if np.result_type(a, b, c) != np.float32 or not aten_vec.cpu_has_fma():
        return aten_vec.fma_if_available(a, b, c)
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
    return aten_vec.fma_into(np.full(shape, a) if np.ndim(a) == 0 else a, b, c, np.empty(shape, np.float32))


def _welford_reference(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    dtype = steps.dtype.type
    m1 = np.zeros(steps.shape[1:], dtype)
    m2 = np.zeros(steps.shape[1:], dtype)
    for j, x in enumerate(steps):
        delta = x - m1
        wide = np.empty(delta.shape)  # (fma_into's widened path, as the recurrence called it)
        if dtype is np.float32 and aten_vec.cpu_has_fma():
            aten_vec.fma_into(dtype(dtype(1) / dtype(j + 1)), delta, m1, m1, wide)
            aten_vec.fma_into(delta, x - m1, m2, m2, wide)
        else:
            m1 = _fused_reference(dtype(dtype(1) / dtype(j + 1)), delta, m1)
            m2 = _fused_reference(delta, x - m1, m2)
    return m1, m2


def _lane_merge_reference(tail, per_lane: int, lane_m1, lane_m2, length: int):
    dtype = tail.dtype.type
    m1 = np.zeros(tail.shape[0], dtype)
    m2 = np.zeros(tail.shape[0], dtype)
    m0 = 0
    for i in range(tail.shape[1]):
        x = tail[:, i]
        delta = x - m1
        m0 += 1
        m1 = m1 + delta / dtype(m0)
        m2 = m2 + delta * (x - m1)
    for lane_mean, lane_sq in zip(np.ascontiguousarray(lane_m1.T), np.ascontiguousarray(lane_m2.T), strict=True):
        total = m0 + per_lane
        weight = dtype(dtype(per_lane) / dtype(total))
        delta = lane_mean - m1
        m1 = _fused_reference(np.full_like(delta, weight), delta, m1)
        m2 = m2 + _fused_reference(delta * delta * weight, np.full_like(delta, dtype(m0)), lane_sq)
        m0 = total
    return m1, m2 / dtype(length)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("seed", range(6))
def test_welford_steps_keep_the_reference_bits(dtype, rows, seed):
    lanes = aten_vec.vector_lanes(dtype)
    steps = _with_specials(seed, (1 + seed * 3, rows, lanes), dtype)
    with np.errstate(all="ignore"):
        ours = aten_moments._welford_steps(steps, aten_moments._Fused(np.dtype(dtype)))
        reference = _welford_reference(steps)
    assert [_bits(v) for v in ours] == [_bits(v) for v in reference]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("tail", [0, 1, 3])
@pytest.mark.parametrize("seed", range(4))
def test_lane_merge_keeps_the_reference_bits(dtype, rows, tail, seed):
    lanes = aten_vec.vector_lanes(dtype)
    data = _with_specials(100 + seed, (3, rows, lanes), dtype)
    lane_m2 = np.abs(data[2])
    with np.errstate(all="ignore"):
        ours = aten_moments._merge_lanes_into_tail(data[0][:, :tail], 5, data[1], lane_m2, 5 * lanes + tail,
                                                   aten_moments._Fused(np.dtype(dtype)))
        reference = _lane_merge_reference(data[0][:, :tail], 5, data[1], lane_m2, 5 * lanes + tail)
    assert [_bits(v) for v in ours] == [_bits(v) for v in reference]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fma", [True, False])
def test_moments_without_fma_keep_the_reference_bits(dtype, fma, monkeypatch):
    """The plain multiply-add path (a CPU without FMA) and the fused one, against the references."""
    monkeypatch.setattr(aten_vec, "cpu_has_fma", lambda: fma)
    monkeypatch.setattr(aten_moments, "cpu_has_fma", lambda: fma)
    lanes = aten_vec.vector_lanes(dtype)
    fused = aten_moments._Fused(np.dtype(dtype))
    for seed in range(4):
        data = _with_specials(200 + seed, (9, 3, lanes), dtype)
        with np.errstate(all="ignore"):
            assert [_bits(v) for v in aten_moments._welford_steps(data, fused)] == \
                [_bits(v) for v in _welford_reference(data)]
            ours = aten_moments._merge_lanes_into_tail(data[0][:, :2], 9, data[1], np.abs(data[2]), 9 * lanes + 2,
                                                       fused)
            reference = _lane_merge_reference(data[0][:, :2], 9, data[1], np.abs(data[2]), 9 * lanes + 2)
        assert [_bits(v) for v in ours] == [_bits(v) for v in reference]
