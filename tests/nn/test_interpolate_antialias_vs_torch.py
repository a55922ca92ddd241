"""``F.interpolate(..., antialias=True)`` in the bilinear, bicubic and lanczos modes gives PyTorch's CPU results
bit for bit: forward and backward, float32 and float64, downscaling (integer and fractional factors) and
upscaling, sizes and scale factors (recomputed or not), both align_corners, contiguous, channels-last and
strided inputs, an empty batch, torch's quirk of a height pass over a single column; with torch's result strides,
node names, saved values and errors.

The weights, the window bounds and the sums follow torch's kernels operation for operation (see
``tracegrad.ops.nn_ops.interp_aa_cpu``).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from _lib import assert_same_bits, raised, tg, torch

MODES = ("bilinear", "bicubic", "lanczos")
# (input shape, sizing): downscales by 2, 3 and 1.7, a non-integer 17 -> 5, upscales, a 1x1 output, one dim kept
SIZINGS = [
    ((2, 3, 16, 18), dict(scale_factor=0.5)),
    ((1, 2, 18, 21), dict(scale_factor=1 / 3)),
    ((1, 3, 17, 20), dict(scale_factor=1 / 1.7)),
    ((1, 3, 17, 20), dict(scale_factor=1 / 1.7, recompute_scale_factor=True)),
    ((2, 2, 17, 17), dict(size=(5, 5))),
    ((1, 4, 13, 9), dict(size=(4, 7))),
    ((1, 2, 5, 7), dict(scale_factor=2.5)),
    ((1, 2, 6, 5), dict(size=(11, 13))),
    ((2, 3, 9, 11), dict(size=(1, 1))),
    ((1, 2, 10, 12), dict(size=(10, 5))),
    ((1, 2, 12, 7), dict(size=(5, 7))),
    ((1, 1, 8, 8), dict(size=(8, 8))),
]
LAYOUTS = ("contiguous", "channels_last", "strided")


def _view(lib, x, layout: str):
    if layout == "channels_last":
        return x.contiguous(memory_format=lib.channels_last)
    if layout == "strided":
        return x.transpose(-1, -2)
    return x


def _run(lib, data: np.ndarray, mode: str, layout: str, align_corners: bool, kwargs: dict):
    """The output, its strides and the input's gradient for a fixed random upstream gradient."""
    x = lib.tensor(data, requires_grad=True)
    y = lib.nn.functional.interpolate(_view(lib, x, layout), mode=mode, antialias=True,
                                      align_corners=align_corners, **kwargs)
    upstream = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(data.dtype)
    (grad,) = lib.autograd.grad(y, x, lib.tensor(upstream))
    return y, y.stride(), grad


def _compare(data, mode, layout, align_corners, kwargs):
    ours, theirs = (_run(lib, data, mode, layout, align_corners, kwargs) for lib in (tg, torch))
    assert ours[0].shape == theirs[0].shape
    assert_same_bits(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    assert_same_bits(ours[2], theirs[2])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, kwargs", SIZINGS)
@pytest.mark.parametrize("mode", MODES)
def test_values_and_gradients_bits(mode, shape, kwargs, dtype):
    data = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    for align_corners in (False,) if mode == "lanczos" else (False, True):
        _compare(data, mode, "contiguous", align_corners, kwargs)


@pytest.mark.parametrize("layout", LAYOUTS[1:])
@pytest.mark.parametrize("mode", MODES)
def test_layouts_keep_torch_strides_and_bits(mode, layout):
    data = np.random.default_rng(2).standard_normal((2, 5, 14, 11)).astype(np.float32)
    for kwargs in (dict(size=(6, 4)), dict(size=(14, 4)), dict(size=(14, 11)), dict(scale_factor=1.6)):
        _compare(data, mode, layout, False, kwargs)


@pytest.mark.parametrize("mode", MODES)
def test_gradient_layout_follows_torch(mode):
    """bilinear's gradient takes the upstream gradient's layout, bicubic's and lanczos' are contiguous."""
    def program(lib):
        x = lib.ones(1, 3, 9, 8, requires_grad=True)
        y = lib.nn.functional.interpolate(x, size=(4, 3), mode=mode, antialias=True)
        upstream = lib.ones(1, 3, 4, 3).contiguous(memory_format=lib.channels_last)
        return lib.autograd.grad(y, x, upstream)[0].stride()
    assert program(tg) == program(torch)


@pytest.fixture
def threads():
    """Both libraries on three threads (torch shares a pass's rows among them), restored after."""
    saved = torch.get_num_threads(), tg.get_num_threads()
    torch.set_num_threads(3)
    tg.set_num_threads(3)
    yield
    torch.set_num_threads(saved[0])
    tg.set_num_threads(saved[1])


@pytest.mark.parametrize("mode", MODES)
def test_single_column_height_pass_as_torch(mode):
    """With an output width of 1, torch's height pass takes each plane's first window for all its rows (unless
    the channels are innermost: channels-last with more than one channel)."""
    data = np.random.default_rng(6).standard_normal((2, 3, 13, 9)).astype(np.float32)
    for layout in ("contiguous", "channels_last"):
        for size in ((4, 1), (20, 1)):
            _compare(data, mode, layout, False, dict(size=size))
        _compare(data[:, :, :, :1], mode, layout, False, dict(size=(5, 1)))
    _compare(data[:, :1], mode, "channels_last", False, dict(size=(5, 1)))


def test_single_column_height_pass_shared_among_threads(threads):
    data = np.random.default_rng(7).standard_normal((2, 37, 30, 1)).astype(np.float32)
    _compare(data, "bilinear", "contiguous", False, dict(size=(1000, 1)))


@pytest.mark.parametrize("mode", MODES)
def test_empty_batch(mode):
    for size in ((4, 3), (4, 1)):
        ours, theirs = (_run(lib, np.zeros((0, 3, 9, 8), np.float32), mode, "contiguous", False, dict(size=size))
                        for lib in (tg, torch))
        assert ours[0].shape == theirs[0].shape and ours[1] == theirs[1]
        assert ours[2].shape == theirs[2].shape


def test_non_finite_values_spread_as_in_torch():
    """The forward skips a dim whose size is kept; the backward runs its weights anyway (0 * inf is NaN)."""
    data = np.random.default_rng(3).standard_normal((1, 1, 4, 6)).astype(np.float32)
    data[0, 0, 1, 2] = np.inf
    data[0, 0, 3, 0] = np.nan

    def program(lib):
        x = lib.tensor(data, requires_grad=True)
        y = lib.nn.functional.interpolate(x, size=(4, 3), mode="bicubic", antialias=True)
        upstream = lib.zeros(1, 1, 4, 3)
        upstream[0, 0, 0, 0] = float("inf")
        return y, lib.autograd.grad(y, x, upstream)[0]
    for ours, theirs in zip(program(tg), program(torch)):
        assert_same_bits(ours, theirs)


@pytest.mark.parametrize("mode", MODES)
def test_nodes_and_saved_values(mode):
    def program(lib):
        x = lib.randn(1, 2, 9, 9, requires_grad=True)
        y = lib.nn.functional.interpolate(x, scale_factor=0.5, mode=mode, antialias=True)
        node = y.grad_fn
        saved = {name: getattr(node, name) for name in dir(node) if name.startswith("_saved_")}
        upstream = lib.ones(tuple(y.shape), requires_grad=True)
        (grad,) = lib.autograd.grad(y, x, upstream, create_graph=True)
        again = {name: getattr(grad.grad_fn, name) for name in dir(grad.grad_fn) if name.startswith("_saved_")}
        return node.name(), saved, grad.grad_fn.name(), again, len(grad.grad_fn.next_functions)
    assert program(tg) == program(torch)


def test_input_modified_after_the_call_still_differentiates():
    """torch's node keeps the input's sizes, not the input: an in-place change afterwards is no error."""
    def program(lib):
        x = lib.ones(1, 1, 6, 6, requires_grad=True)
        source = x * 1
        y = lib.nn.functional.interpolate(source, size=(3, 3), mode="bilinear", antialias=True)
        source.add_(1)
        return lib.autograd.grad(y.sum(), x)[0]
    assert_same_bits(program(tg), program(torch))


@pytest.mark.parametrize("mode", MODES)
def test_gradcheck_and_gradgradcheck(mode):
    x = tg.tensor(np.random.default_rng(4).standard_normal((1, 1, 6, 5)), requires_grad=True)

    def fn(t):
        return tg.nn.functional.interpolate(t, size=(3, 7), mode=mode, antialias=True)
    assert tg.autograd.gradcheck(fn, (x,))
    assert tg.autograd.gradgradcheck(fn, (x,), fast_mode=True)


ERROR_PROGRAMS = {
    "int": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4, dtype=lib.int32), size=(2, 2),
                                                      mode="bilinear", antialias=True),
    "long lanczos": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4, dtype=lib.int64), size=(4, 2),
                                                              mode="lanczos", antialias=True),
    "half": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4, dtype=lib.float16), size=(2, 2),
                                                      mode="bicubic", antialias=True),
    "complex": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4, dtype=lib.complex64), size=(2, 2),
                                                         mode="bicubic", antialias=True),
    "int kept size": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4, dtype=lib.int32), size=(4, 4),
                                                               mode="bilinear", antialias=True),
    "output 0": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 6, 6), size=(0, 3), mode="bilinear",
                                                          antialias=True),
    "input 0": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 0, 6), size=(2, 3), mode="bicubic",
                                                         antialias=True),
    "no channels": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 0, 6, 6), size=(2, 3), mode="lanczos",
                                                             antialias=True),
    "negative scale": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 6, 6), scale_factor=-0.5,
                                                                mode="bilinear", antialias=True),
    "lanczos align_corners": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 6, 6), size=(2, 2),
                                                                       mode="lanczos", antialias=True,
                                                                       align_corners=True),
    "3-d": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 6), size=3, mode="bilinear", antialias=True),
    "5-d": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 6, 6, 6), size=3, mode="bicubic",
                                                     antialias=True),
    "nearest": lambda lib: lib.nn.functional.interpolate(lib.ones(1, 2, 6, 6), size=3, mode="nearest",
                                                         antialias=True),
}


@pytest.mark.parametrize("name", list(ERROR_PROGRAMS))
def test_errors_as_torch(name):
    assert raised(tg, ERROR_PROGRAMS[name]) == raised(torch, ERROR_PROGRAMS[name])


def test_downscale_of_an_image_is_fast():
    x = tg.tensor(np.random.default_rng(5).standard_normal((1, 3, 224, 224)).astype(np.float32))
    tg.nn.functional.interpolate(x, size=(112, 112), mode="bilinear", antialias=True)  # (weights made, warm)
    start = time.perf_counter()
    tg.nn.functional.interpolate(x, size=(112, 112), mode="bilinear", antialias=True)
    assert time.perf_counter() - start < 0.25
