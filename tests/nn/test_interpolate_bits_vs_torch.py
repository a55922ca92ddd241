"""``F.interpolate`` in the linear, bilinear, bicubic and trilinear modes gives PyTorch's CPU results bit for bit:
forward and backward, float32 and float64, both align_corners, sizes and scale factors (recomputed or not),
up and down, contiguous, channels-last and strided inputs, and each of torch's kernels (the generic one, the
vectorised channels-last one, chosen by layout, channel count, output size and thread count).

The weights and sums follow torch's kernels operation for operation, fused multiply-adds included (see
``tracegrad.ops.nn_ops.interp_cpu``). Half inputs match too, except bilinear's channels-last kernel in half,
whose vector code rounds differently in a few elements: there the values agree within one half ulp.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

SIZINGS = [dict(scale_factor=2), dict(scale_factor=1.7), dict(scale_factor=0.6),
           dict(scale_factor=3.3, recompute_scale_factor=True), "size"]

# mode -> (input shapes, layouts); the shapes cover 1, 3 and 4+ channels, narrow and wide inputs, and
# outputs on both sides of torch's height + width <= 128 rule for bilinear
CASES = {
    "linear": ([(2, 3, 9), (1, 2, 300)], ["contiguous", "strided"]),
    "bilinear": ([(2, 1, 9, 13), (1, 3, 11, 7), (2, 4, 6, 9), (1, 20, 5, 6), (1, 2, 40, 50)],
                 ["contiguous", "channels_last", "strided"]),
    "bicubic": ([(2, 1, 9, 13), (1, 3, 11, 7), (1, 4, 30, 20)], ["contiguous", "channels_last", "strided"]),
    "trilinear": ([(1, 2, 4, 5, 6), (1, 5, 3, 4, 5), (1, 12, 3, 4, 3)],
                  ["contiguous", "channels_last", "strided"]),
}
PARAMS = [(mode, shape, layout) for mode, (shapes, layouts) in CASES.items() for shape in shapes
          for layout in layouts]


@pytest.fixture
def threads(request):
    """Both libraries on the same thread count (torch's bilinear kernel choice depends on it), restored after."""
    saved = torch.get_num_threads(), tg.get_num_threads()
    count = getattr(request, "param", 1)
    torch.set_num_threads(count)
    tg.set_num_threads(count)
    yield count
    torch.set_num_threads(saved[0])
    tg.set_num_threads(saved[1])


def _results(lib, data: np.ndarray, weights_seed: int, mode: str, layout: str, kwargs: dict):
    """The output and the input's gradient of ``sum(interpolate(x) * r)`` for a random ``r``."""
    x = lib.tensor(data, requires_grad=True)
    source = x
    if layout == "channels_last":
        source = x.contiguous(memory_format=lib.channels_last if data.ndim == 4 else lib.channels_last_3d)
    elif layout == "strided":
        source = x.transpose(-1, -2)
    y = lib.nn.functional.interpolate(source, mode=mode, **kwargs)
    r = np.random.default_rng(weights_seed).standard_normal(tuple(y.shape)).astype(data.dtype)
    (y * lib.tensor(r)).sum().backward()
    return y.detach().numpy(), x.grad.numpy()


def _both(data, mode, layout, kwargs):
    return _results(torch, data, 1, mode, layout, kwargs), _results(tg, data, 1, mode, layout, kwargs)


def _kwargs(sizing, shape, align_corners: bool) -> dict:
    if sizing == "size":  # (an odd size, neither a multiple nor a divisor of the input's)
        sizing = dict(size=tuple(int(s * 1.45) + 1 for s in shape[2:]))
    return dict(sizing, align_corners=align_corners)


@pytest.mark.parametrize("mode,shape,layout", PARAMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_forward_and_backward_bits(threads, mode, shape, layout, dtype, align_corners):
    data = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    for sizing in SIZINGS:
        kwargs = _kwargs(sizing, shape, align_corners)
        (out_t, grad_t), (out_g, grad_g) = _both(data, mode, layout, kwargs)
        assert out_g.dtype == out_t.dtype and out_g.shape == out_t.shape
        assert np.array_equal(out_g, out_t), kwargs
        assert np.array_equal(grad_g, grad_t), kwargs


@pytest.mark.parametrize("threads", [1, 2, 4], indirect=True)
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_kernel_choice_follows_thread_count(threads, channels):
    """With one thread torch takes its channels-last kernel for 3 channels; with more, the generic one."""
    data = np.random.default_rng(2).standard_normal((2, channels, 30, 40)).astype(np.float32)
    for sizing in (dict(scale_factor=2), dict(size=(50, 70)), dict(size=(20, 30))):
        (out_t, grad_t), (out_g, grad_g) = _both(data, "bilinear", "contiguous", dict(sizing, align_corners=False))
        assert np.array_equal(out_g, out_t) and np.array_equal(grad_g, grad_t)


def test_wide_inputs(threads):
    """The float32 index and weight arithmetic matters most for wide inputs (tracegrad's float64 weights
    were hundreds of ulps off at 1000 wide)."""
    data = np.random.default_rng(3).standard_normal((1, 1, 1000)).astype(np.float32)
    for kwargs in (dict(scale_factor=1.7), dict(size=777), dict(size=1999, align_corners=True)):
        (out_t, grad_t), (out_g, grad_g) = _both(data, "linear", "contiguous", kwargs)
        assert np.array_equal(out_g, out_t) and np.array_equal(grad_g, grad_t)
    data = np.random.default_rng(3).standard_normal((1, 1, 3, 600)).astype(np.float32)
    for mode in ("bilinear", "bicubic"):
        (out_t, grad_t), (out_g, grad_g) = _both(data, mode, "contiguous", dict(size=(5, 1001)))
        assert np.array_equal(out_g, out_t) and np.array_equal(grad_g, grad_t)


HALF_CASES = [("linear", (2, 3, 9), "contiguous")] + [
    (mode, shape, layout) for mode, shape in [("bilinear", (1, 3, 40, 50)), ("bilinear", (1, 5, 11, 7)),
                                              ("bicubic", (1, 3, 11, 7)), ("trilinear", (1, 2, 4, 5, 6))]
    for layout in ("contiguous", "channels_last")]


@pytest.mark.parametrize("mode,shape,layout", HALF_CASES)
def test_half(threads, mode, shape, layout):
    data = np.random.default_rng(4).standard_normal(shape).astype(np.float16)
    kwargs = dict(scale_factor=1.7, align_corners=False)
    (out_t, grad_t), (out_g, grad_g) = _both(data, mode, layout, kwargs)
    assert np.array_equal(grad_g, grad_t)
    # bilinear's channels-last kernel (taken for a small output, 4+ channels channels-last, or 3 channels on one
    # thread) rounds a few half results differently: within one half ulp
    channels = shape[1]
    channels_last_kernel = mode == "bilinear" and (
        sum(out_t.shape[2:]) <= 128 or (layout == "channels_last" and channels > 3) or (channels == 3 and threads == 1))
    if channels_last_kernel:
        ulp = np.spacing(np.abs(out_t)).astype(np.float32)
        assert np.all(np.abs(out_g.astype(np.float32) - out_t.astype(np.float32)) <= ulp)
        assert np.mean(out_g == out_t) > 0.99
    else:
        assert np.array_equal(out_g, out_t)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_double_backward_bits(threads, mode):
    data = np.random.default_rng(5).standard_normal((1, 2, 5, 7))

    def run(lib):
        x = lib.tensor(data, requires_grad=True)
        y = lib.nn.functional.interpolate(x, scale_factor=1.7, mode=mode)
        g = lib.tensor(np.random.default_rng(6).standard_normal(tuple(y.shape)), requires_grad=True)
        (gx,) = lib.autograd.grad(y, x, g, create_graph=True)
        (gx * gx).sum().backward()
        return gx.detach().numpy(), g.grad.numpy()

    for ours, theirs in zip(run(tg), run(torch), strict=True):
        assert np.array_equal(ours, theirs)
