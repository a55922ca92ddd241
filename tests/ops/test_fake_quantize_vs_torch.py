"""Fake quantization as torch 2.13 computes it: ``torch.fake_quantize_per_tensor_affine`` (both overloads),
``torch.fake_quantize_per_channel_affine``, the learnable ``_fake_quantize_learnable_per_{tensor,channel}_affine`` and
the ``*_cachemask`` operators they run: values and masks bit for bit (ties at .5, the clamp's edges, NaN and inf,
non-contiguous, 0-d, empty inputs, every float dtype), gradients and grad_fn names, errors, forward AD's refusal
and a short quantization-aware training loop."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import bits_or_error, tg, torch

SPECIALS = [float("nan"), float("inf"), -float("inf"), 1e30, -1e30, 3e9, -3e9, 0.0, -0.0]


def _inputs(lib, dtype: str = "float32", shape=(6, 40)):
    """Random values, exact ties of the scales used (multiples of 0.125 / 2), the clamp's edges and specials."""
    rng = np.random.default_rng(0)
    values = rng.standard_normal(shape[0] * shape[1]) * 4
    values[:64] = np.arange(-32, 32) * 0.0625 + 0.03125 * (np.arange(64) % 2)
    values[64:64 + len(SPECIALS)] = SPECIALS
    values[80:90] = [15.9375, 16.0, 16.0625, -16.0, -16.0625, 12.75, -12.85, 12.7, 127.5 * 0.1, -128.5 * 0.1]
    return lib.tensor(values.reshape(shape), dtype=getattr(lib, dtype))


DTYPES = ["float32", "float64", "float16", "bfloat16"]

FORWARD = {
    "per_tensor": lambda L, x: L.fake_quantize_per_tensor_affine(x, 0.125, 3, -128, 127),
    "per_tensor_odd_scale": lambda L, x: L.fake_quantize_per_tensor_affine(x, 0.1, -2, -8, 7),
    "per_tensor_tensor_qparams": lambda L, x: L.fake_quantize_per_tensor_affine(
        x, L.tensor(0.0625), L.tensor(5), 0, 255),
    "cachemask": lambda L, x: L.ops.aten.fake_quantize_per_tensor_affine_cachemask(x, 0.1, 0, -128, 127),
    "tensor_qparams_disabled": lambda L, x: L._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
        x, L.tensor(0.1), L.tensor(0), L.tensor(0), -128, 127),
    "tensor_qparams_float_zero_point": lambda L, x: L._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
        x, L.tensor([0.1]), L.tensor([-2.7]), L.tensor([1]), -128, 127),
    "per_channel_int": lambda L, x: L.fake_quantize_per_channel_affine(
        x, L.tensor([0.1, 0.125, 0.3, 1.0, 0.0625, 0.7]), L.tensor([0, 3, -4, 1, 0, 2], dtype=L.int32), 0, -8, 7),
    "per_channel_float_zero_point": lambda L, x: L.ops.aten.fake_quantize_per_channel_affine_cachemask(
        x, L.tensor([0.1, 0.125, 0.3, 1.0, 0.0625, 0.7]), L.tensor([0.0, 3.5, -4.25, 1.0, 0.5, 2.0]), 0, -128, 127),
    "per_channel_half_zero_point": lambda L, x: L.fake_quantize_per_channel_affine(
        x.t(), L.tensor([0.1, 0.125, 0.3, 1.0, 0.0625, 0.7]), L.tensor([0.0, 3.5, -4.25, 1.0, 0.5, 2.0],
                                                                       dtype=L.float16), 1, -128, 127),
    "learnable_per_tensor": lambda L, x: L._fake_quantize_learnable_per_tensor_affine(
        x, L.tensor([0.125]), L.tensor([2.5]), -128, 127),
    "learnable_per_channel": lambda L, x: L._fake_quantize_learnable_per_channel_affine(
        x, L.tensor([0.1, 0.125, 0.3, 1.0, 0.0625, 0.7]), L.tensor([0.0, 3.5, -4.5, 200.0, 0.5, -2.0]), 0, -8, 7),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(FORWARD))
def test_values_and_masks_bit_for_bit(name, dtype):
    program = FORWARD[name]
    assert bits_or_error(lambda L: program(L, _inputs(L, dtype)), tg) == bits_or_error(
        lambda L: program(L, _inputs(L, dtype)), torch)


LAYOUTS = {
    "transposed": lambda x: x.t(),
    "strided": lambda x: x[:, ::3],
    "zero_dim": lambda x: x[1, 7],
    "empty": lambda x: x[:0],
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_layouts(layout):
    def program(L):
        x = LAYOUTS[layout](_inputs(L))
        y, mask = L.ops.aten.fake_quantize_per_tensor_affine_cachemask(x, 0.1, 1, -128, 127)
        return y, mask, y.stride(), mask.stride()

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


def _per_channel_layout(L):
    x = _inputs(L).t()  # (40, 6), channels along the contiguous axis
    return L.fake_quantize_per_channel_affine(x, L.tensor([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]),
                                              L.zeros(6, dtype=L.int32), 1, -128, 127).stride()


def test_per_channel_layout():
    assert _per_channel_layout(tg) == _per_channel_layout(torch)


# ---- gradients ----------------------------------------------------------------------------------------------------


def _grads(L, make, dtype="float32"):
    x = _inputs(L, dtype).requires_grad_()
    y = make(L, x)
    weights = L.linspace(-2, 3, y.numel()).reshape(y.shape).to(y.dtype)
    (y * weights).sum().backward()
    return [y, x.grad, type(y.grad_fn).__name__]


GRADS = {
    "per_tensor": lambda L, x: L.fake_quantize_per_tensor_affine(x, 0.1, 3, -128, 127),
    "tensor_qparams": lambda L, x: L.fake_quantize_per_tensor_affine(x, L.tensor(0.1), L.tensor(3), -8, 7),
    "per_channel": lambda L, x: L.fake_quantize_per_channel_affine(
        x, L.tensor([0.1, 0.125, 0.3, 1.0, 0.0625, 0.7]), L.tensor([0, 3, -4, 1, 0, 2], dtype=L.int32), 0, -8, 7),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(GRADS))
def test_cachemask_gradients(name, dtype):
    assert bits_or_error(lambda L: _grads(L, GRADS[name], dtype), tg) == bits_or_error(
        lambda L: _grads(L, GRADS[name], dtype), torch)


def _learnable_grads(L, per_channel: bool, grad_factor: float, dtype="float32", quant=(-8, 7)):
    x = _inputs(L, dtype).requires_grad_()
    if per_channel:
        scale = L.tensor([0.1, 0.125, 0.3, 1.0, 0.0625, 0.7], requires_grad=True)
        zero_point = L.tensor([0.0, 3.5, -4.5, 2.5, 0.4, -2.0], requires_grad=True)
        y = L._fake_quantize_learnable_per_channel_affine(x, scale, zero_point, 0, *quant, grad_factor)
    else:
        scale = L.tensor([0.1], requires_grad=True)
        zero_point = L.tensor([2.5], requires_grad=True)
        y = L._fake_quantize_learnable_per_tensor_affine(x, scale, zero_point, *quant, grad_factor)
    weights = L.linspace(-2, 3, y.numel()).reshape(y.shape).to(y.dtype)
    (y * weights).sum().backward()
    node = y.grad_fn
    saved = [node._saved_quant_min, node._saved_quant_max, node._saved_grad_factor]
    return [y, x.grad, scale.grad, zero_point.grad, type(node).__name__, *saved]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64", "float16"])
@pytest.mark.parametrize("grad_factor", [1.0, 0.37])
@pytest.mark.parametrize("per_channel", [False, True])
def test_learnable_gradients(per_channel, grad_factor, dtype):
    def program(L):
        return _learnable_grads(L, per_channel, grad_factor, dtype)

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


@pytest.mark.parametrize("per_channel", [False, True])
def test_learnable_range_without_zero_is_refused_at_backward(per_channel):
    def program(L):
        return _learnable_grads(L, per_channel, 1.0, quant=(1, 7))

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


def _learnable_empty(L):
    x = L.zeros(2, 0, requires_grad=True)
    scale = L.tensor([0.1, 0.2], requires_grad=True)
    zero_point = L.tensor([0.0, 1.0], requires_grad=True)
    L._fake_quantize_learnable_per_channel_affine(x, scale, zero_point, 0, -10, 10).sum().backward()
    return [x.grad, scale.grad, zero_point.grad]  # (ATen returns the scale itself as its "gradient")


def test_learnable_empty_gradients():
    assert bits_or_error(_learnable_empty, tg) == bits_or_error(_learnable_empty, torch)


def _double_backward(L):
    x = L.linspace(-2, 2, 7, requires_grad=True)
    y = L._fake_quantize_learnable_per_tensor_affine(x, L.tensor([0.1]), L.tensor([0.0]), -8, 7)
    (g,) = L.autograd.grad(y.sum(), x, create_graph=True)
    return [type(g.grad_fn).__name__, g.grad_fn.name()] + [L.autograd.grad(g.sum(), x)]


def test_learnable_double_backward_is_not_implemented():
    assert bits_or_error(_double_backward, tg) == bits_or_error(_double_backward, torch)


def _gradcheck_per_channel(L):
    """A step function: its numerical Jacobian is zero where the mask's is one, so torch's gradcheck fails too."""
    x = L.linspace(-1.03, 1.01, 12, dtype=L.float64).reshape(3, 4).requires_grad_()
    scale, zero_point = L.tensor([0.1, 0.2, 0.3, 0.4]), L.tensor([0, 1, -1, 2], dtype=L.int32)
    return L.autograd.gradcheck(lambda t: L.fake_quantize_per_channel_affine(t, scale, zero_point, 1, -128, 127), (x,))


def test_gradcheck_fails_as_torch_does():
    ours, theirs = bits_or_error(_gradcheck_per_channel, tg), bits_or_error(_gradcheck_per_channel, torch)
    assert ours == theirs and ours[0] == "GradcheckError"


# ---- errors and forward AD ------------------------------------------------------------------------------------------

S4, Z4 = "L.tensor([0.1, 0.2, 0.3, 0.4])", "L.zeros(4, dtype=L.int32)"
ERRORS = {
    "range_order": "L.fake_quantize_per_tensor_affine(x, 0.1, 0, 5, -5)",
    "zero_point_range": "L.fake_quantize_per_tensor_affine(x, 0.1, 10, -5, 5)",
    "tensor_qparams_unchecked_zero_point": "L.fake_quantize_per_tensor_affine(x, L.tensor(0.1), L.tensor(10), -5, 5)",
    "tensor_qparams_two_scales": "L.fake_quantize_per_tensor_affine(x, L.tensor([0.1, 0.2]), L.tensor(0), -5, 5)",
    "tensor_qparams_scale_requires_grad":
        "L.fake_quantize_per_tensor_affine(x, L.tensor(0.1, requires_grad=True), L.tensor(0), -5, 5)",
    "integer_input": "L.fake_quantize_per_tensor_affine(x.int(), 0.1, 0, -5, 5)",
    "integer_input_per_channel": f"L.fake_quantize_per_channel_affine(x.int(), {S4}, {Z4}, 1, -5, 5)",
    "double_scale": f"L.fake_quantize_per_channel_affine(x, {S4}.double(), {Z4}, 1, -5, 5)",
    "long_zero_point": f"L.fake_quantize_per_channel_affine(x, {S4}, {Z4}.long(), 1, -5, 5)",
    "double_zero_point": f"L.fake_quantize_per_channel_affine(x, {S4}, {Z4}.double(), 1, -5, 5)",
    "scale_2d": f"L.fake_quantize_per_channel_affine(x, {S4}.reshape(2, 2), {Z4}, 1, -5, 5)",
    "zero_point_2d": f"L.fake_quantize_per_channel_affine(x, {S4}, {Z4}.reshape(2, 2), 1, -5, 5)",
    "lengths_differ": f"L.fake_quantize_per_channel_affine(x, {S4}, {Z4}[:3], 1, -5, 5)",
    "channels_differ": f"L.fake_quantize_per_channel_affine(x, {S4}[:3], {Z4}[:3], 1, -5, 5)",
    "per_channel_range_order": f"L.fake_quantize_per_channel_affine(x, {S4}, {Z4}, 1, 5, -5)",
    "per_channel_zero_point_range": f"L.fake_quantize_per_channel_affine(x, {S4}, {Z4} + 10, 1, -5, 5)",
    "axis_out_of_range": f"L.fake_quantize_per_channel_affine(x, {S4}, {Z4}, 2, -5, 5)",
    "negative_axis": f"L.fake_quantize_per_channel_affine(x, {S4}, {Z4}, -1, -5, 5)",
    "per_channel_scale_requires_grad":
        f"L.fake_quantize_per_channel_affine(x, {S4}.requires_grad_(), {Z4}, 1, -5, 5)",
    "learnable_zero_dim_scale": "L._fake_quantize_learnable_per_tensor_affine(x, L.tensor(0.1), L.tensor(0.), -5, 5)",
    "learnable_range_order": "L._fake_quantize_learnable_per_tensor_affine(x, L.tensor([0.1]), L.tensor([0.]), 5, -5)",
    "learnable_axis": f"L._fake_quantize_learnable_per_channel_affine(x, {S4}, L.zeros(4), 3, -5, 5)",
    "backward_double_scale": "L.ops.aten._fake_quantize_learnable_per_tensor_affine_backward("
                             "x, x, L.tensor([0.1]).double(), L.tensor([0.]), -5, 5)",
    "backward_int_zero_point": "L.ops.aten._fake_quantize_learnable_per_tensor_affine_backward("
                               "x, x, L.tensor([0.1]), L.tensor([0]), -5, 5)",
    "backward_sizes": "L.ops.aten._fake_quantize_learnable_per_tensor_affine_backward("
                      "x[0], x, L.tensor([0.1]), L.tensor([0.]), -5, 5)",
    "channel_backward_range": "L.ops.aten._fake_quantize_learnable_per_channel_affine_backward("
                              f"x, x, {S4}, L.zeros(4), 1, 1, 5)",
    "channel_backward_axis": "L.ops.aten._fake_quantize_learnable_per_channel_affine_backward("
                             f"x, x, {S4}, L.zeros(4), -1, -5, 5)",
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    def program(L):
        x = L.linspace(-1, 1, 12).reshape(3, 4)
        return eval(ERRORS[name], {"L": L, "x": x})  # noqa: S307 - the same call for both libraries

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


@pytest.mark.parametrize("name", sorted(GRADS) + ["learnable"])
def test_forward_ad_is_refused(name):
    def program(L):
        make = GRADS.get(name) or (lambda L, x: L._fake_quantize_learnable_per_tensor_affine(
            x, L.tensor([0.1]), L.tensor([0.0]), -8, 7))
        with L.autograd.forward_ad.dual_level():
            dual = L.autograd.forward_ad.make_dual(_inputs(L), L.ones(6, 40))
            return make(L, dual)

    ours, theirs = bits_or_error(program, tg), bits_or_error(program, torch)
    assert ours == theirs and ours[0] == "NotImplementedError"


# ---- a quantization-aware training loop -------------------------------------------------------------------------


def _qat(L):
    """A bias-free Linear whose weight goes through per-channel fake quantization (scales of powers of two, kept
    fixed but given gradients, so that the matmul of quarter-step inputs is exact whatever its order of additions)
    and whose activations go through learnable and fixed per-tensor fake quantization; SGD with momentum."""
    rng = np.random.default_rng(1)
    layer = L.nn.Linear(8, 4, bias=False)
    with L.no_grad():
        layer.weight.copy_(L.tensor(rng.standard_normal((4, 8)), dtype=L.float32))
    w_scale = L.nn.Parameter(L.tensor([0.0625, 0.125, 0.0625, 0.25]))
    w_zero = L.nn.Parameter(L.tensor([0.0, 1.0, -2.0, 0.0]))
    a_scale = L.nn.Parameter(L.tensor([0.1]))
    a_zero = L.nn.Parameter(L.tensor([3.0]))
    opt = L.optim.SGD([layer.weight, a_scale, a_zero], lr=0.05, momentum=0.9)
    x = L.tensor(np.round(rng.standard_normal((16, 8)) * 4) / 4, dtype=L.float32)
    target = L.tensor(np.round(rng.standard_normal((16, 4)) * 4) / 4, dtype=L.float32)  # (exact gradients too)
    seen = []
    for _ in range(4):
        opt.zero_grad()
        w_scale.grad = w_zero.grad = None
        w = L._fake_quantize_learnable_per_channel_affine(layer.weight, w_scale, w_zero, 0, -128, 127, 0.5)
        h = L._fake_quantize_learnable_per_tensor_affine(x @ w.t(), a_scale, a_zero, 0, 255)
        h = L.fake_quantize_per_tensor_affine(h, 0.125, 0, -128, 127)
        loss = L.nn.functional.mse_loss(h, target)
        loss.backward()
        seen += [loss.detach(), w_scale.grad, w_zero.grad]
        opt.step()
    return seen + [p.detach() for p in (layer.weight, a_scale, a_zero)]


def test_quantization_aware_training_loop(one_thread):
    assert bits_or_error(_qat, tg) == bits_or_error(_qat, torch)
