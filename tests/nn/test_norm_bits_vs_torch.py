"""layer_norm and group_norm give PyTorch's CPU bits: ATen's RowwiseMoments (a lane-wise Welford recurrence with a
cascade), then the kernels' own output formulas with their fused multiply-adds."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg
from tracegrad.ops import aten_vec
from tracegrad.ops.nn_ops import aten_moments

LENGTHS = [1, 2, 3, 7, 8, 9, 16, 31, 127, 128, 129, 300, 2048, 2049, 5000]


def _data(seed: int, shape: tuple, dtype) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 3 + 0.7).astype(dtype)


def _optional(module, value):
    return None if value is None else module.tensor(value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("length", LENGTHS)
def test_rowwise_moments_are_atens(dtype, length):
    rows = _data(length, (40, length), dtype)
    _, mean, rstd = torch.ops.aten.native_layer_norm(torch.tensor(rows), [length], None, None, 1e-5)
    ours_mean, ours_var = aten_moments.rowwise_moments(rows)
    assert np.array_equal(ours_mean, mean.numpy().ravel())
    assert np.array_equal(dtype(1) / np.sqrt(ours_var + dtype(1e-5)), rstd.numpy().ravel())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "normalized"), [((64, 300), (300,)), ((4, 7, 33), (7, 33)), ((5, 3), (3,)),
                                                   ((2, 3, 768), (768,)), ((3, 1), (1,)), ((2, 9), (2, 9))])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm_forward_is_torchs(dtype, shape, normalized, affine):
    x = _data(len(shape), shape, dtype)
    rng = np.random.default_rng(1)
    weight = rng.standard_normal(normalized).astype(dtype) if affine in ("weight", "both") else None
    bias = rng.standard_normal(normalized).astype(dtype) if affine in ("bias", "both") else None
    theirs = torch.native_layer_norm(torch.tensor(x), list(normalized), _optional(torch, weight),
                                     _optional(torch, bias), 1e-5)
    ours = tg.native_layer_norm(tg.tensor(x), list(normalized), _optional(tg, weight), _optional(tg, bias), 1e-5)
    for t, o in zip(theirs, ours, strict=True):  # (the output, and the mean and rstd its node saves)
        assert np.array_equal(t.numpy(), o.numpy())
    functional = tg.nn.functional.layer_norm(tg.tensor(x), normalized, _optional(tg, weight), _optional(tg, bias))
    assert np.array_equal(theirs[0].numpy(), functional.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "groups"), [((4, 8, 100), 4), ((2, 6, 7, 7), 3), ((3, 4), 2),
                                               ((2, 32, 16, 16), 8), ((2, 4, 3, 2, 5), 2), ((1, 3, 1), 1)])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_group_norm_forward_is_torchs(dtype, shape, groups, affine):
    x = _data(len(shape) + groups, shape, dtype)
    rng = np.random.default_rng(2)
    weight = rng.standard_normal(shape[1]).astype(dtype) if affine in ("weight", "both") else None
    bias = rng.standard_normal(shape[1]).astype(dtype) if affine in ("bias", "both") else None
    theirs = torch.nn.functional.group_norm(torch.tensor(x), groups, _optional(torch, weight), _optional(torch, bias))
    ours = tg.nn.functional.group_norm(tg.tensor(x), groups, _optional(tg, weight), _optional(tg, bias))
    assert np.array_equal(theirs.numpy(), ours.numpy())


def test_modules_and_group_statistics_agree_with_torch():
    x = _data(0, (6, 4, 10), np.float32)
    t_ln, o_ln = torch.nn.LayerNorm(10), tg.nn.LayerNorm(10)
    assert np.array_equal(t_ln(torch.tensor(x)).detach().numpy(), o_ln(tg.tensor(x)).detach().numpy())
    t_gn, o_gn = torch.nn.GroupNorm(2, 4), tg.nn.GroupNorm(2, 4)
    assert np.array_equal(t_gn(torch.tensor(x)).detach().numpy(), o_gn(tg.tensor(x)).detach().numpy())
    theirs = torch.native_group_norm(torch.tensor(x), None, None, 6, 4, 10, 2, 1e-5)
    ours = tg.native_group_norm(tg.tensor(x), None, None, 6, 4, 10, 2, 1e-5)
    for t, o in zip(theirs, ours, strict=True):
        assert np.array_equal(t.numpy(), o.numpy())


def test_double_fma_rounds_once():
    """The emulated double fma equals the exactly computed a * b + c, rounded once."""
    from fractions import Fraction

    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(300) * 10.0 ** rng.integers(-3, 4, 300) for _ in range(3))
    ours = aten_vec.fma(a, b, c)
    exact = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c, strict=True)]
    assert np.array_equal(ours, np.array(exact))


def _layer_norm_grads(module, x, dy, weight, bias, normalized, transpose: bool):
    leaf = module.tensor(x, requires_grad=True)
    params = [None if v is None else module.tensor(v, requires_grad=True) for v in (weight, bias)]
    inp = leaf.transpose(0, 1) if transpose else leaf
    out = module.nn.functional.layer_norm(inp, normalized, *params)
    out.backward(module.tensor(dy))
    return [leaf.grad.numpy()] + [p.grad.numpy() for p in params if p is not None]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "normalized"), [((32, 300), (300,)), ((4, 7, 33), (7, 33)), ((5, 3), (3,)),
                                                   ((6, 13), (13,)), ((3, 8), (8,)), ((5, 4, 21), (21,))])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm_backward_is_torchs(dtype, shape, normalized, affine):
    x = _data(7, shape, dtype)
    rng = np.random.default_rng(3)
    dy = rng.standard_normal(shape).astype(dtype)
    weight = rng.standard_normal(normalized).astype(dtype) if affine in ("weight", "both") else None
    bias = rng.standard_normal(normalized).astype(dtype) if affine in ("bias", "both") else None
    transpose = len(shape) == 3 and len(normalized) == 1  # (a non-contiguous input too)
    if transpose:
        dy = dy.transpose(1, 0, 2).copy()
    theirs = _layer_norm_grads(torch, x, dy, weight, bias, normalized, transpose)
    ours = _layer_norm_grads(tg, x, dy, weight, bias, normalized, transpose)
    for t, o in zip(theirs, ours, strict=True):
        assert np.array_equal(t, o)


def test_map_reduce_sum_adds_vectors_in_order():
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal((3, 1003)).astype(np.float32) for _ in range(2))
    lanes = (a * b)[:, :1000].reshape(3, -1, 8)
    acc = lanes[:, 0]
    for j in range(1, lanes.shape[1]):
        acc = acc + lanes[:, j]
    acc[:, :3] = aten_vec.fma(a[:, 1000:], b[:, 1000:], acc[:, :3])
    folded = acc + acc[:, [4, 5, 6, 7, 0, 1, 2, 3]]
    folded = folded + folded[:, [2, 3, 0, 1, 6, 7, 4, 5]]
    folded = folded + folded[:, [1, 0, 3, 2, 5, 4, 7, 6]]
    assert np.array_equal(aten_vec.map_reduce_sum([a, b]), folded[:, 0])


def _layouts(shape: tuple) -> list:
    """Contiguous, and the channels-last format of 4-d and 5-d shapes."""
    return [None] + (["channels_last"] if len(shape) == 4 else ["channels_last_3d"] if len(shape) == 5 else [])


def _all_equal(theirs: list, ours: list) -> None:
    for t, o in zip(theirs, ours, strict=True):
        assert np.array_equal(t, o)


BATCH_SHAPES = [(16, 8, 100), (4, 16, 8, 8), (3, 5, 7), (64, 32), (7, 5), (4, 6, 1, 1), (2, 3, 4, 5, 6)]


def _batch_norm_run(module, x, weight, bias, running, train: bool, layout):
    inp = module.tensor(x)
    if layout is not None:
        inp = inp.contiguous(memory_format=getattr(module, layout))
    stats = [module.tensor(v) for v in running]
    params = [None if v is None else module.tensor(v) for v in (weight, bias)]
    out = module.native_batch_norm(inp, *params, *stats, train, 0.1, 1e-5)
    return [t.numpy() for t in (*out, *stats)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", BATCH_SHAPES)
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_forward_and_running_stats_are_torchs(dtype, shape, train, affine):
    rng = np.random.default_rng(len(shape))
    x = _data(len(shape) + 11, shape, dtype)
    c = shape[1]
    weight, bias = (rng.standard_normal(c).astype(dtype) for _ in range(2)) if affine else (None, None)
    running = (rng.standard_normal(c).astype(dtype), (rng.random(c) + 0.5).astype(dtype))
    for layout in _layouts(shape):
        _all_equal(_batch_norm_run(torch, x, weight, bias, running, train, layout),
                   _batch_norm_run(tg, x, weight, bias, running, train, layout))


def _batch_norm_grads(module, x, dy, weight, running, train: bool, layout):
    leaf = module.tensor(x, requires_grad=True)
    inp, grad = leaf, module.tensor(dy)
    if layout is not None:  # (input and gradient in the same layout, as a channels-last network passes them)
        fmt = getattr(module, layout)
        inp, grad = leaf.contiguous(memory_format=fmt), grad.contiguous(memory_format=fmt)
    w = module.tensor(weight, requires_grad=True)
    b = module.tensor(weight[::-1].copy(), requires_grad=True)
    out = module.nn.functional.batch_norm(inp, *(module.tensor(v) for v in running), w, b, training=train)
    out.backward(grad)
    return [leaf.grad.numpy(), w.grad.numpy(), b.grad.numpy()]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", BATCH_SHAPES + [(5, 33), (3, 17, 2, 2)])
@pytest.mark.parametrize("train", [True, False])
def test_batch_norm_backward_is_torchs(dtype, shape, train):
    rng = np.random.default_rng(len(shape) + 20)
    x = _data(len(shape) + 21, shape, dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    c = shape[1]
    weight = rng.standard_normal(c).astype(dtype)
    running = (rng.standard_normal(c).astype(dtype), (rng.random(c) + 0.5).astype(dtype))
    for layout in _layouts(shape):
        _all_equal(_batch_norm_grads(torch, x, dy, weight, running, train, layout),
                   _batch_norm_grads(tg, x, dy, weight, running, train, layout))
