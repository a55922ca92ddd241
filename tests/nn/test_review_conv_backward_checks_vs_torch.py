"""``aten.convolution_backward``'s refusals against torch 2.13, kernel by kernel: the shape checks of the dilated,
plain and transposed CPU kernels (which of them run depends on the output mask), the dtype each gradient dispatches
on and the operands read as it, a zero dilation (the kernels' words, in the forward convolution too) and the
groups message's doubled brackets. Before this file, a transposed convolution's grad_output of the wrong size was
computed from silently or failed in NumPy, mixed dtypes were computed, and a dilated kernel's refusals were
worded as the plain kernel's."""

from __future__ import annotations

import pytest
from _lib import raised, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")

MASKS = [(True, False, False), (False, True, False), (False, False, True), (False, False, False)]


def _ones(lib, shape, dtype="float64"):
    return lib.ones(*shape, dtype=getattr(lib, dtype))


def _backward(g, x, w, dilation=1, transposed=False, groups=1, mask=(True, True, True), dtypes=("float64",) * 3):
    """A program calling convolution_backward on ones of the given shapes and dtypes (g, x, w)."""
    def program(lib):
        args = [_ones(lib, shape, dtype) for shape, dtype in zip((g, x, w), dtypes, strict=True)]
        return lib.ops.aten.convolution_backward(*args, None, [1], [0], [dilation], transposed, [0], groups,
                                                 list(mask))
    return program


SHAPE_CASES = {
    # transposed: the slow_conv_transpose kernels check grad_output's channels and sizes (the 3-d one for a bias
    # gradient too); its batch is not checked
    "transposed_size_2d": ((1, 3, 8, 8), (1, 2, 5, 5), (2, 3, 3, 3), 1, True),
    "transposed_channels_2d": ((1, 4, 7, 7), (1, 2, 5, 5), (2, 3, 3, 3), 1, True),
    "transposed_size_1d": ((1, 3, 8), (1, 2, 5), (2, 3, 3), 1, True),
    "transposed_size_3d": ((1, 3, 8, 7, 7), (1, 2, 5, 5, 5), (2, 3, 3, 3, 3), 1, True),
    "transposed_dilated_size": ((1, 3, 8, 8), (1, 2, 5, 5), (2, 3, 3, 3), 2, True),
    "transposed_zero_dilation": ((1, 3, 5, 5), (1, 2, 5, 5), (2, 3, 3, 3), 0, True),
    "transposed_zero_dilation_1d": ((1, 3, 5), (1, 2, 5), (2, 3, 3), 0, True),
    "transposed_zero_dilation_3d": ((1, 3, 5, 5, 5), (1, 2, 5, 5, 5), (2, 3, 3, 3, 3), 0, True),
    # dilated: slow_conv_dilated_shape_check, whatever the mask
    "dilated_batch": ((2, 3, 1, 1), (1, 2, 5, 5), (3, 2, 3, 3), 2, False),
    "dilated_channels_3d": ((1, 4, 1, 1, 1), (1, 2, 5, 5, 5), (3, 2, 3, 3, 3), 2, False),
    "dilated_size_1d": ((1, 3, 2), (1, 2, 5), (3, 2, 3), 2, False),
    "dilated_size_3d": ((1, 3, 1, 2, 1), (1, 2, 5, 5, 5), (3, 2, 3, 3, 3), 2, False),
    "zero_dilation": ((1, 3, 5, 5), (1, 2, 5, 5), (3, 2, 3, 3), 0, False),
    "zero_dilation_1d": ((1, 3, 3), (1, 2, 5), (3, 2, 3), 0, False),
    "negative_dilation": ((1, 3, 3, 3), (1, 2, 5, 5), (3, 2, 3, 3), -1, False),
    # plain: slow_conv2d/3d check grad_output only for an input or weight gradient
    "plain_size_3d": ((1, 3, 4, 3, 3), (1, 2, 5, 5, 5), (3, 2, 3, 3, 3), 1, False),
    "plain_size_2d": ((1, 3, 2, 2), (1, 2, 5, 5), (3, 2, 3, 3), 1, False),
}


@pytest.mark.parametrize("mask", MASKS, ids=str)
@pytest.mark.parametrize("case", list(SHAPE_CASES))
def test_grad_output_shape_checks_as_torch(case, mask):
    g, x, w, dilation, transposed = SHAPE_CASES[case]
    program = _backward(g, x, w, dilation, transposed, mask=mask)
    assert raised(tg, program) == raised(torch, program)


@pytest.mark.parametrize("mask", MASKS[:3], ids=str)
@pytest.mark.parametrize("odd", [0, 1, 2], ids=["grad_output", "input", "weight"])
@pytest.mark.parametrize("kind", [(1, False), (2, False), (1, True), (2, True)], ids=["plain", "dilated",
                                                                                      "transposed", "transposed_dil"])
def test_mixed_dtypes_refused_as_torch(kind, odd, mask):
    """One operand float32, the others float64: each gradient's kernel reads it as the dtype it dispatched on."""
    dilation, transposed = kind
    grow = 2 * dilation if transposed else -2 * dilation
    w = (2, 3, 3, 3) if transposed else (3, 2, 3, 3)
    dtypes = tuple("float32" if i == odd else "float64" for i in range(3))
    program = _backward((1, 3, 5 + grow, 5 + grow), (1, 2, 5, 5), w, dilation, transposed, mask=mask, dtypes=dtypes)
    assert raised(tg, program) == raised(torch, program)


@pytest.mark.parametrize("mask", MASKS[:3], ids=str)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "complex64", "float16"])
@pytest.mark.parametrize("kind", [(2, 1, False), (1, 2, False), (3, 2, False), (2, 1, True), (3, 1, True),
                                  (1, 2, True)], ids=str)
def test_kernel_dtypes_refused_as_torch(kind, dtype, mask):
    nd, dilation, transposed = kind
    grow = 2 * dilation if transposed else -2 * dilation
    w = (2, 3) if transposed else (3, 2)
    program = _backward((1, 3) + (5 + grow,) * nd, (1, 2) + (5,) * nd, w + (3,) * nd, dilation, transposed,
                        mask=mask, dtypes=(dtype,) * 3)
    assert raised(tg, program) == raised(torch, program)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("groups", [2, 4])
def test_groups_refusal_as_torch(groups, transposed):
    """'divisible by' prints the weight's size in two pairs of brackets, 'at least' in one: backward and forward."""
    w = (3, 2, 3, 3)
    x = (1, 3 if transposed else 2 * groups, 5, 5)
    program = _backward((1, 3, 3, 3), x, w, transposed=transposed, groups=groups)
    assert raised(tg, program) == raised(torch, program)
    forward = (lambda lib: lib.nn.functional.conv_transpose2d(_ones(lib, x), _ones(lib, w), groups=groups)) \
        if transposed else (lambda lib: lib.nn.functional.conv2d(_ones(lib, x), _ones(lib, w), groups=groups))
    assert raised(tg, forward) == raised(torch, forward)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("dilation", ["zero", "last_zero", "negative"])
@pytest.mark.parametrize("call", ["conv", "conv_transpose", "conv_wrong_channels", "conv_wrong_bias",
                                  "conv_unbatched"])
def test_forward_zero_dilation_refused_as_torch(call, dilation, nd, dtype):
    """A zero dilation passes ATen's shape checks and is refused by the kernel, in its words, after them."""
    dil = {"zero": 0, "last_zero": [1] * (nd - 1) + [0], "negative": -1}[dilation]
    spatial, kernel = (5,) * nd, (3,) * nd

    def program(lib):
        F = lib.nn.functional
        ones = lambda *shape: _ones(lib, shape, dtype)  # noqa: E731
        conv, conv_transpose = getattr(F, f"conv{nd}d"), getattr(F, f"conv_transpose{nd}d")
        if call == "conv_transpose":
            return conv_transpose(ones(1, 2, *spatial), ones(2, 3, *kernel), dilation=dil)
        x = {"conv_wrong_channels": ones(1, 4, *spatial), "conv_unbatched": ones(2, *spatial)}.get(
            call, ones(1, 2, *spatial))
        bias = ones(4) if call == "conv_wrong_bias" else None
        return conv(x, ones(3, 2, *kernel), bias, dilation=dil)

    assert raised(tg, program) == raised(torch, program)
