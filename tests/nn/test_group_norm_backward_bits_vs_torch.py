"""native_group_norm_backward gives PyTorch's CPU bits (one thread) for float and double, contiguous and
channels-last: the gradients of input, weight and bias. Group counts leave channels past whole vectors (8
floats, 4 doubles) in a group, positions past whole vectors in a plane, and single positions; channels-last
takes its few-positions (< 2048) and its many-positions kernels."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

# ((N, C, *spatial), groups)
SHAPES = [
    ((4, 24, 5, 7), 2),     # 12 channels a group: a vector and 4 more
    ((3, 40, 9, 1), 4),     # 10 channels: 2 past the vector
    ((2, 13, 3, 1), 1),     # 13 channels, 3 positions (shorter than a vector)
    ((3, 16, 17, 2), 2),    # whole vectors of channels, 34 positions
    ((2, 48, 31, 3), 3),
    ((2, 30, 11, 1), 2),    # 15 channels: 7 past the vector
    ((4, 44, 1, 1), 2),     # a single position
    ((5, 6, 4, 4), 3),      # 2 channels a group
    ((2, 64, 9, 9), 8),
    ((2, 20, 46, 46), 4),   # 2116 positions: channels-last's many-positions kernel
    ((2, 12, 3, 4, 5), 3),  # 5-d (channels_last_3d)
    ((3, 10, 7), 5),        # 3-d
    ((6, 9), 3),            # 2-d: a single position
    ((40, 1, 7), 1),        # one channel: the samples' sums in order
]

LAYOUTS = ["contiguous", "channels_last"]  # (channels_last_3d for 5-d inputs; others stay contiguous)


def _data(seed: int, shape: tuple, dtype, affine: bool) -> tuple:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3 + 0.7).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    weight = rng.standard_normal(shape[1]).astype(dtype) if affine else None
    return x, dy, weight


def _in(module, a: np.ndarray | None, fmt: str):
    if a is None:
        return None
    t = module.tensor(a)
    if fmt == "channels_last" and a.ndim in (4, 5):
        t = t.contiguous(memory_format=module.channels_last if a.ndim == 4 else module.channels_last_3d)
    return t


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("shape", "groups"), SHAPES)
@pytest.mark.parametrize("affine", [True, False])
def test_native_group_norm_backward_is_torchs(dtype, layout, shape, groups, affine):
    x, dy, weight = _data(len(shape) + groups + shape[1], shape, dtype, affine)
    n, c = shape[:2]
    hxw = int(np.prod(shape[2:]))
    # (PyTorch refuses a bias gradient without weight; its statistics feed both kernels)
    mask = [True, affine, affine]
    tx, tdy, tw = (_in(torch, a, layout) for a in (x, dy, weight))
    _, mean, rstd = torch.native_group_norm(tx, tw, None, n, c, hxw, groups, 1e-5)
    theirs = torch.ops.aten.native_group_norm_backward(tdy, tx, mean, rstd, tw, n, c, hxw, groups, mask)
    ox, ody, ow = (_in(tg, a, layout) for a in (x, dy, weight))
    ours = tg.ops.aten.native_group_norm_backward(ody, ox, tg.tensor(mean.numpy()), tg.tensor(rstd.numpy()), ow,
                                                  n, c, hxw, groups, mask)
    assert ours[0].stride() == theirs[0].stride()
    for asked, o, t in zip(mask, ours, theirs, strict=True):
        if asked:
            assert_same_bits(o, t)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "groups"), [((4, 24, 5, 7), 2), ((2, 13, 3, 1), 1), ((3, 10, 7), 5)])
def test_group_norm_autograd_gradients_are_torchs(dtype, shape, groups):
    """Through F.group_norm (contiguous input, whose forward statistics are PyTorch's too): every gradient."""
    x, dy, weight = _data(11, shape, dtype, True)
    bias = np.random.default_rng(12).standard_normal(shape[1]).astype(dtype)
    grads = []
    for lib in (tg, torch):
        leaves = [lib.tensor(a, requires_grad=True) for a in (x, weight, bias)]
        lib.nn.functional.group_norm(leaves[0], groups, leaves[1], leaves[2]).backward(lib.tensor(dy))
        grads.append([leaf.grad for leaf in leaves])
    for o, t in zip(*grads, strict=True):
        assert_same_bits(o, t)


def test_group_norm_module_weight_grad_is_torchs():
    x, dy, _ = _data(13, (8, 64, 28, 28), np.float32, False)
    grads = []
    for lib in (tg, torch):
        module = lib.nn.GroupNorm(8, 64)
        leaf = lib.tensor(x, requires_grad=True)
        module(leaf).backward(lib.tensor(dy))
        grads.append([leaf.grad, module.weight.grad, module.bias.grad])
    for o, t in zip(*grads, strict=True):
        assert_same_bits(o, t)
