"""The argument checks of the upsampling operators behind ``F.interpolate`` and ``nn.Upsample``, against
PyTorch: sizes that must be positive (worded per dimension count), inputs that must not be empty (an empty
batch passes, an empty channel dim does not), scale factors whose product overflows int64, the area mode's
adaptive pools (their empty-dim and negative-size checks, skipped by the mean an output of ones takes) and
``nn.Upsample``'s handling of its scale factor."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, tg, torch

# (mode, spatial dims) of every non-antialiased upsampling kernel
KERNELS = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1), ("nearest-exact", 2),
           ("nearest-exact", 3), ("linear", 1), ("bilinear", 2), ("bicubic", 2), ("trilinear", 3)]


def _shape_and_size(dims: int, case: str) -> tuple[list, list]:
    """An input shape and output size of ``dims`` spatial dims, one of them empty or zero as ``case`` says."""
    shape, size = [1, 1] + [4] * dims, [2] * dims
    if case == "zero output":
        size[0] = 0
    elif case == "empty spatial input":
        shape[2] = 0
    elif case == "empty batch":
        shape[0] = 0
    elif case == "empty channels":
        shape[1] = 0
    else:  # both empty
        shape[:2] = [0, 0]
    return shape, size


def _outcome(lib, program):
    """The error ``program(lib)`` raises, or the shape and strides of its result."""
    error = raised(lib, program)
    if error is not None:
        return error
    result = program(lib)
    return tuple(result.shape), result.stride()


@pytest.mark.parametrize("case", ["zero output", "empty spatial input", "empty batch", "empty channels",
                                  "empty batch and channels"])
@pytest.mark.parametrize("mode,dims", KERNELS)
def test_empty_sizes_refused_as_in_torch(mode, dims, case):
    shape, size = _shape_and_size(dims, case)

    def program(lib):
        return lib.nn.functional.interpolate(lib.ones(*shape), size=size, mode=mode)

    assert _outcome(tg, program) == _outcome(torch, program)


def test_scale_factor_giving_an_empty_output_refused_as_in_torch():
    def program(lib):
        return lib.nn.functional.interpolate(lib.ones(1, 1, 4), scale_factor=0.1, mode="linear")

    assert raised(tg, program) == raised(torch, program)
    assert "input (W: 4) and output (W: 0)" in raised(tg, program)[1]


def test_sizes_checked_before_the_dtype():
    def program(lib):
        return lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4, dtype=lib.int64), size=(0, 2), mode="bilinear")

    assert raised(tg, program) == raised(torch, program)


@pytest.mark.parametrize("case", ["zero output", "empty channels", "empty batch"])
def test_antialiased_shares_the_checks(case):
    shape, size = _shape_and_size(2, case)

    def program(lib):
        return lib.nn.functional.interpolate(lib.ones(*shape), size=size, mode="bilinear", antialias=True)

    assert _outcome(tg, program) == _outcome(torch, program)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), -float("inf"), 1e20])
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_scale_factor_overflowing_int64_refused_as_in_torch(mode, scale):
    def program(lib):
        return lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4), scale_factor=scale, mode=mode)

    assert raised(tg, program) == raised(torch, program)


AREA_CASES = [((1, 1, 0), 2), ((1, 0, 4), 2), ((1, 1, 0, 4), (2, 2)), ((1, 0, 4, 4), (2, 2)),
              ((1, 0, 4, 4, 4), (2, 2, 2)), ((0, 0, 4, 4, 4), (2, 2, 2)), ((1, 1, 4, 0, 4), (2, 2, 2)),
              ((1, 1, 0), 1), ((1, 1, 0, 4), (1, 1)), ((1, 0, 4, 4, 4), (1, 1, 1))]


@pytest.mark.parametrize("shape,size", AREA_CASES)
def test_area_mode_empty_inputs_as_in_torch(shape, size):
    def program(lib):
        return lib.nn.functional.interpolate(lib.ones(*shape), size=size, mode="area")

    assert _outcome(tg, program) == _outcome(torch, program)


@pytest.mark.parametrize("shape,pool", [((1, 0, 4), 2), ((4, 0), 1), ((4, 0, 4, 4), 3), ((0, 1, 4, 4), 3),
                                        ((1, 1, 4, 4, 0), 3), ((1, 0, 4, 4), 2)])
def test_adaptive_avg_pool_empty_dims_as_in_torch(shape, pool):
    def program(lib):
        functions = lib.nn.functional
        pool_fn = (functions.adaptive_avg_pool1d, functions.adaptive_avg_pool2d, functions.adaptive_avg_pool3d)
        return pool_fn[pool - 1](lib.ones(*shape), 2 if pool == 1 else [2] * pool)

    assert _outcome(tg, program) == _outcome(torch, program)


@pytest.mark.parametrize("shape,size", [((1, 1, 4, 4, 4), (1, -1, 1)), ((1, 0, 4, 4, 4), (-1, 2, 2)),
                                        ((1, 1, 0, 4), (-1, 2))])
def test_adaptive_avg_pool_negative_sizes_as_in_torch(shape, size):
    def program(lib):
        functions = lib.nn.functional
        pool_fn = functions.adaptive_avg_pool3d if len(size) == 3 else functions.adaptive_avg_pool2d
        return pool_fn(lib.ones(*shape), size)

    assert raised(tg, program) == raised(torch, program)


@pytest.mark.parametrize("scale_factor", [[2, 3], [2.0], 0, 0.0, (2, 3), "2"])
def test_upsample_module_scale_factor_as_in_torch(scale_factor):
    def program(lib):
        return repr(lib.nn.Upsample(scale_factor=scale_factor))

    assert raised(tg, program) == raised(torch, program)
    if raised(torch, program) is None:
        assert program(tg) == program(torch)


@pytest.mark.parametrize("scale_factor", ["tensor", "tensor first", "tensor second"])
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_tensor_scale_factor_as_in_torch(mode, scale_factor):
    # (torch's parser checks the type of the first factor only)
    def program(lib):
        factor = lib.tensor(2.0)
        given = {"tensor": factor, "tensor first": (factor, 2.0), "tensor second": (2.0, factor)}[scale_factor]
        return lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4), scale_factor=given, mode=mode)

    assert _outcome(tg, program) == _outcome(torch, program)


# (mode, shape, layout, output size, align_corners): half inputs through torch's channels-last kernel, its scalar
# tail (fewer channels than a vector of 16 halves holds: every channel summed in the scalar order)
HALF_CASES = [("bilinear", (2, 5, 3, 3), "channels_last", (3, 4), True),
              ("bilinear", (1, 9, 4, 4), "contiguous", (6, 4), True),
              ("bilinear", (2, 12, 3, 4), "channels_last", (4, 5), False),
              ("bilinear", (2, 5, 4, 1), "contiguous", (3, 5), False),
              ("trilinear", (2, 9, 3, 2, 2), "channels_last_3d", (3, 3, 6), True),
              ("trilinear", (1, 12, 4, 4, 1), "channels_last_3d", (5, 4, 4), False)]


@pytest.mark.parametrize("mode,shape,layout,size,align_corners", HALF_CASES)
def test_half_channels_last_kernel_bits_as_in_torch(one_thread, mode, shape, layout, size, align_corners):
    data = np.random.default_rng(7).random(shape).astype(np.float16)

    def program(lib):
        x = lib.tensor(data)
        if layout != "contiguous":
            x = x.contiguous(memory_format=getattr(lib, layout))
        y = lib.nn.functional.interpolate(x, size=size, mode=mode, align_corners=align_corners)
        return y.float().numpy()

    np.testing.assert_array_equal(program(tg), program(torch))


@pytest.mark.parametrize("shape,size", [((1, 1, 4, 4, 4), (0, 2, 2)), ((0, 1, 4, 4, 4), (2, 2, 2)),
                                        ((1, 1, 4, 4), (0, 2)), ((1, 4, 4), (0, 2)), ((2, 3, 4), (0,)),
                                        ((1, 0, 4, 4), (2, 2))])
def test_area_mode_backward_of_empty_outputs_as_in_torch(shape, size):
    def program(lib):
        x = lib.ones(*shape, requires_grad=True)
        lib.nn.functional.interpolate(x, size=size, mode="area").sum().backward()
        return x.grad

    assert _outcome(tg, program) == _outcome(torch, program)


@pytest.mark.parametrize("shape,size", [((1, 1, 2, 2), (0, 0)), ((0, 1, 2, 2), (1, 2)), ((1, 1, 2, 2), (1, 0)),
                                        ((1, 1, 2, 2, 2), (0, 1, 1)), ((1, 1, 2, 2), (2, 1))])
@pytest.mark.parametrize("dtype", ["uint8", "int32"])
def test_area_mode_integer_inputs_as_in_torch(dtype, shape, size):
    def program(lib):
        return lib.nn.functional.interpolate(lib.ones(*shape, dtype=getattr(lib, dtype)), size=size, mode="area")

    assert _outcome(tg, program) == _outcome(torch, program)
