"""Review of the fake quantization ops (277d460) against torch 2.13: a bfloat16 output's NaN (0 * inf of an infinite
scale) is c10's 0x7fc0; the learnable backward converts all four operands to float where the input is bfloat16 (a
double or half scale too) and hands back an empty input's operands as given; the tensor-qparams op converts its
scale and zero point checked (toFloat/toInt) and refuses a scale or zero point that requires grad."""

from __future__ import annotations

import pytest
from _lib import bits_or_error, tg, torch


def _same(program) -> None:
    assert bits_or_error(program, tg) == bits_or_error(program, torch)


VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, float("nan"), float("inf"), -float("inf"), 1e38, 300.0, -5.0]


@pytest.mark.parametrize("scale", [float("inf"), 1e39])
def test_bfloat16_nan_of_an_infinite_scale_per_tensor(scale):
    _same(lambda L: L.ops.aten.fake_quantize_per_tensor_affine_cachemask(
        L.tensor(VALUES, dtype=L.bfloat16), scale, 3, 0, 255))
    _same(lambda L: L.fake_quantize_per_tensor_affine(L.tensor(VALUES, dtype=L.bfloat16), L.tensor(scale),
                                                      L.tensor(0), -128, 127))


def test_bfloat16_nan_of_an_infinite_scale_per_channel():
    _same(lambda L: L.ops.aten.fake_quantize_per_channel_affine_cachemask(
        L.tensor([VALUES, VALUES], dtype=L.bfloat16), L.tensor([float("inf"), 0.1]),
        L.tensor([0.0, 2.0], dtype=L.float16), 0, -2**31, 2**31 - 1))


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("shape", [(7,), (0,)])
@pytest.mark.parametrize("param_dtype", ["float64", "float16"])
def test_learnable_backward_of_bfloat16_input_with_other_param_dtypes(per_channel, shape, param_dtype):
    def program(L):
        x = L.tensor([0.5, -1e30, 1e30, 3.3, -7.1, 12.0, 0.04][:shape[0]], dtype=L.bfloat16, requires_grad=True)
        dtype = getattr(L, param_dtype)
        n = shape[0] if per_channel else 1
        s = L.tensor([0.1] * n, dtype=dtype, requires_grad=True)
        z = L.tensor([2.5] * n, dtype=dtype, requires_grad=True)
        if per_channel:
            y = L._fake_quantize_learnable_per_channel_affine(x, s, z, 0, -128, 127, 0.7)
        else:
            y = L._fake_quantize_learnable_per_tensor_affine(x, s, z, -128, 127, 0.7)
        y.backward(L.ones_like(y))
        return y, x.grad, s.grad, z.grad

    _same(program)


@pytest.mark.parametrize("param_dtype", ["float64", "float16", "bfloat16"])
def test_learnable_backward_op_called_directly(param_dtype):
    def program(L):
        x = L.tensor([0.3, 1.2, 40.0], dtype=L.bfloat16)
        dtype = getattr(L, param_dtype)
        return L.ops.aten._fake_quantize_learnable_per_tensor_affine_backward(
            L.ones_like(x), x, L.tensor([0.1], dtype=dtype), L.tensor([1.0], dtype=dtype), 0, 255, 1.0)

    _same(program)


@pytest.mark.parametrize("scale, zero_point", [
    ((1e39, "float64"), (0, "int64")),
    ((0.1, "float32"), (3e9, "float64")),
    ((0.1, "float32"), (2**31, "int64")),
    ((0.1, "float32"), (-2**31 - 1, "int64")),
    ((0.1, "float32"), (float("nan"), "float32")),
    ((1e39, "float64"), (2**40, "int64")),
    ((0.1, "float32"), (-0.9, "float32")),
])
def test_tensor_qparams_checked_conversions(scale, zero_point):
    def program(L):
        s = L.tensor(scale[0], dtype=getattr(L, scale[1]))
        z = L.tensor(zero_point[0], dtype=getattr(L, zero_point[1]))
        return L._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
            L.tensor([0.3, 1.7, -2.0, 300.0]), s, z, L.tensor([1]), 0, 255)

    _same(program)


@pytest.mark.parametrize("which", ["scale", "zero_point"])
def test_tensor_qparams_refuses_parameters_requiring_grad(which):
    def program(L):
        s = L.tensor(0.1, requires_grad=which == "scale")
        z = L.tensor(1.0, requires_grad=which == "zero_point")
        return L._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
            L.tensor([0.3, 1.7]), s, z, L.tensor([1]), 0, 255)

    _same(program)
    assert tg._fake_quantize_per_tensor_affine_cachemask_tensor_qparams.__name__ == (
        torch._fake_quantize_per_tensor_affine_cachemask_tensor_qparams.__name__)
