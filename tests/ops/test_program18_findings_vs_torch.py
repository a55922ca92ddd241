"""Differences that the programs of ``tests/test_user_programs18_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch: the second-order graph (what a ``create_graph=True`` gradient's
``grad_fn`` is named, and what it is built from) and its values.

- the gradient of ``F.linear``'s bias recorded ``SumBackward1`` alone (tracegrad's fused linear summed the rows
  itself); torch's AddmmBackward0 hands the whole gradient on and the engine's ``sum_to`` reduces it, so the bias's
  gradient is a ``ViewBackward0`` over a ``SumBackward1`` (a MAML inner step's ``head.bias`` gradient);
- ``elu``/``selu``/``celu``'s double backward ended in ``WhereBackward0``; torch's ``elu_double_backward`` multiplies
  by the mask ``(x < 0)`` in the gradient's dtype (``MulBackward0``), after an ``elu_backward`` of its own; and
  ``elu_backward`` of doubles multiplied by alpha and scale one after the other where ATen multiplies by their
  product (an ulp off in a selu Hessian);
- bilinear (and nearest, bicubic, ...) upsampling's gradient with create_graph was a ``SeparableLinearBackward0``
  (``IndexMapBackwardBackward0`` for nearest); torch's is ``UpsampleBilinear2DBackwardBackward0``, whose own
  gradient is the upsampling again (``UpsampleBilinear2DBackward0``);
- ``cumprod``'s gradient with a zero in the input, recorded, was a ``PermuteBackward0`` of a matrix formulation;
  torch's O(n^2) loop writes each slice of a zero tensor by ``copy_`` (``CopySlices``);
- ``stack``'s gradients were views from ``unbind`` (``UnbindBackward0``); torch's ``stack_tensors_backward`` selects
  each one (``SelectBackward0``).
"""

from __future__ import annotations

import pytest
from _lib import assert_close, assert_same_bits, tg, torch


def _second_order(lib, program) -> tuple:
    """``program(lib)`` gives (a create_graph gradient, the tensor it is taken with respect to); returns the gradient,
    the names of its node and of that node's next ones, and the gradient of the gradient's squared norm."""
    g, wrt = program(lib)
    names = (g.grad_fn.name(), [n.name() if n is not None else None for n, _ in g.grad_fn.next_functions])
    gg, = lib.autograd.grad(g.pow(2).sum(), wrt)
    return g, names, gg


def _assert_same_second_order(program, rtol: float = 1e-6, atol: float = 1e-7) -> None:
    ours, theirs = _second_order(tg, program), _second_order(torch, program)
    assert ours[1] == theirs[1]
    assert_close(ours[0], theirs[0], rtol=rtol, atol=atol)
    assert_close(ours[2], theirs[2], rtol=rtol, atol=atol)


def _linear_bias_gradient(input_shape: tuple, anomaly: bool):
    def program(lib):
        lib.manual_seed(0)
        x, w = lib.randn(*input_shape), lib.randn(3, 4, requires_grad=True)
        b = lib.randn(3, requires_grad=True)
        with lib.autograd.detect_anomaly(check_nan=False) if anomaly else lib.autograd.set_grad_enabled(True):
            out = lib.nn.functional.linear(x, w, b)
            g, = lib.autograd.grad((out * out.detach()).sum() + out.pow(3).sum(), b, create_graph=True)
        return g, b

    return program


@pytest.mark.parametrize("anomaly", [False, True], ids=["fused", "anomaly"])
@pytest.mark.parametrize("input_shape", [(6, 4), (2, 5, 4), (4,)], ids=str)
def test_linear_bias_gradient_reduced_by_the_engine_as_torch(input_shape, anomaly):
    _assert_same_second_order(_linear_bias_gradient(input_shape, anomaly), rtol=1e-5, atol=1e-5)


_ELUS = {
    "elu": lambda F, t: F.elu(t, alpha=0.7),
    "selu": lambda F, t: F.selu(t),
    "celu": lambda F, t: F.celu(t, 1.3),
    "elu_inplace": lambda F, t: F.elu(t * 1, alpha=0.7, inplace=True),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", _ELUS)
def test_elu_double_backward_graph_as_torch(name, dtype):
    def program(lib):
        x = lib.tensor([-3.0, -1.5, -0.2, 0.0, 0.3, 2.0], dtype=getattr(lib, dtype), requires_grad=True)
        d1, = lib.autograd.grad(_ELUS[name](lib.nn.functional, x).pow(2).sum(), x, create_graph=True)
        d2, = lib.autograd.grad(d1.sum(), x, create_graph=True)
        return d2, x

    _assert_same_second_order(program)


_UPSAMPLINGS = {
    "bilinear": dict(scale_factor=1.6, mode="bilinear"),
    "bilinear_aligned": dict(size=(7, 3), mode="bilinear", align_corners=True),
    "bicubic": dict(scale_factor=1.5, mode="bicubic"),
    "nearest": dict(scale_factor=2, mode="nearest"),
    "nearest_exact": dict(size=(4, 7), mode="nearest-exact"),
    "linear_1d": dict(scale_factor=2.5, mode="linear"),
    "trilinear": dict(scale_factor=1.5, mode="trilinear"),
    "nearest_3d": dict(scale_factor=2, mode="nearest"),
}


@pytest.mark.parametrize("case", _UPSAMPLINGS)
def test_upsampling_gradient_named_as_torch_to_third_order(case):
    """The gradient's node is the backward op's (``...BackwardBackward0``); the gradient of that is the upsampling's
    own node again."""
    kwargs = _UPSAMPLINGS[case]
    shape = {"linear_1d": (2, 3, 5), "trilinear": (1, 2, 3, 4, 3), "nearest_3d": (1, 2, 3, 4, 3)}.get(case, (2, 3, 4, 5))

    def program(lib):
        lib.manual_seed(1)
        x = lib.randn(*shape, dtype=lib.float64, requires_grad=True)
        out = lib.nn.functional.interpolate(x, **kwargs)
        g, = lib.autograd.grad((out * lib.randn(out.shape, dtype=lib.float64)).sum() + out.pow(2).sum(), x,
                               create_graph=True)
        return g, x

    _assert_same_second_order(program)

    def third(lib):
        g, x = program(lib)
        g2, = lib.autograd.grad(g.pow(2).sum(), x, create_graph=True)
        return g2.grad_fn.name(), [n.name() for n, _ in g2.grad_fn.next_functions]

    assert third(tg) == third(torch)


@pytest.mark.parametrize("values", [[1.5, 0.0, 2.0, 0.75], [0.0, 3.0, 0.0, 2.0, -1.0]], ids=["one_zero", "two"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cumprod_with_zeros_double_backward_as_torch(values, dtype):
    def program(lib):
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        g, = lib.autograd.grad((x.cumprod(0) * lib.arange(len(values), dtype=x.dtype)).sum(), x, create_graph=True)
        return g, x

    _assert_same_second_order(program)


@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_with_zeros_of_a_matrix_double_backward_as_torch(dim):
    def program(lib):
        x = lib.tensor([[1.0, 0.0, 2.0], [0.5, 3.0, 0.0]], requires_grad=True)
        g, = lib.autograd.grad((x.cumprod(dim) * lib.tensor([[1.0, 2.0, 3.0]])).sum(), x, create_graph=True)
        return g, x

    _assert_same_second_order(program)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_stack_gradients_selected_as_torch(dim):
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, -4.0], requires_grad=True)
        s = lib.stack([a, lib.ones(2), b], dim)
        ga, gb = lib.autograd.grad(s.pow(3).sum(), (a, b), create_graph=True)
        return lib.cat([ga, gb]), a

    _assert_same_second_order(program)


@pytest.mark.parametrize("name", ["elu", "selu", "celu"])
def test_elu_backward_of_double_with_a_gradient_bit_for_bit(name):
    """ATen multiplies the gradient by the input scale, then by one coefficient ``alpha * scale`` (a selu Hessian's
    entries were an ulp off). Seven elements: all in the kernel's scalar loop (its vector blocks take Sleef's exp,
    which is not NumPy's)."""
    def gradient(lib):
        lib.manual_seed(3)
        x = (lib.randn(7, dtype=lib.float64) - 1).requires_grad_()
        y = _ELUS[name](lib.nn.functional, x)
        return lib.autograd.grad(y, x, lib.randn(7, dtype=lib.float64) * 3)[0]

    assert_same_bits(gradient(tg), gradient(torch))
