"""Forward-mode formulas reading a tangent of another dtype than its primal, against torch.

torch's forward formula of an operator runs ordinary operators on the tangents: where they compute in a complex
dtype, a complex tangent of a real input keeps its imaginary part (renorm_jvp's norm tangent is real, the rest
is not); where they run a kernel that refuses operands of two dtypes, the formula refuses, and of two refusals
in ``a + b`` the right operand's is raised (GCC evaluates it first). The kernels' own refusals (gelu_backward's,
a complex convolution's) are compared where they are called directly too.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch

# (primal dtype, tangent dtype)
PAIRS = [("float32", "float64"), ("float32", "float16"), ("float32", "complex128"), ("float64", "float32"),
         ("complex64", "float32")]


def _values(lib, dtype: str, seed: int, shape=(2, 3)):
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.2, 0.8, shape) + (0.3j * rng.uniform(-1, 1, shape) if "complex" in dtype else 0)
    return lib.tensor(values.astype(dtype))


def _tangent(lib, program, primal: str, tangent: str | None, other: str | None = None):
    """``program(lib, d, e)`` of a dual ``d`` (primal dtype ``primal``, tangent ``tangent``) and ``e`` (a dual with a
    tangent of ``other``, or a plain tensor where None): the result's tangent as (dtype, values), or the error."""
    fwad = lib.autograd.forward_ad
    try:
        with fwad.dual_level(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = fwad.make_dual(_values(lib, primal, 1), _values(lib, tangent, 2))
            e = _values(lib, primal, 3)
            if other is not None:
                e = fwad.make_dual(e, _values(lib, other, 4))
            t = fwad.unpack_dual(program(lib, d, e)).tangent
            values = t.detach().resolve_conj().numpy().astype("complex128")
            return str(t.dtype).split(".")[-1], values
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return f"{type(exc).__name__}: {exc}"


def _assert_same(program, primal: str, tangent: str, other: str | None = None) -> None:
    want, got = (_tangent(lib, program, primal, tangent, other) for lib in (torch, tg))
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
        return
    assert got[0] == want[0]
    half = "float16" in (primal, tangent, other)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-2 if half else 1e-5, atol=1e-2 if half else 1e-6)


def _F(lib):
    return lib.nn.functional


# programs of one dual d and a tensor e: the formula's complex computation keeps the imaginary part, or its
# kernel refuses the tangent
ONE_DUAL = {
    "renorm_p1": lambda L, d, e: d.renorm(1, 1, 0.5),
    "renorm_p3": lambda L, d, e: d.renorm(3, 0, 0.5),
    "renorm_inf": lambda L, d, e: d.renorm(float("inf"), 0, 0.5),
    "renorm_unscaled": lambda L, d, e: d.renorm(2, 0, 5.0),
    "renorm_": lambda L, d, e: d.clone().renorm_(2, 0, 0.5),
    "frac": lambda L, d, e: (d * 3).frac(),
    "fmod_number": lambda L, d, e: d.fmod(0.25),
    "remainder_number": lambda L, d, e: d.remainder(0.25),
    "logaddexp_other": lambda L, d, e: L.logaddexp(e, d),
    "var_mean_dim": lambda L, d, e: L.var_mean(d, 1)[0],
    "var_mean_keepdim": lambda L, d, e: L.var_mean(d, 0, keepdim=True)[0],
    "var_mean_mean": lambda L, d, e: L.var_mean(d, 1)[1],
    "soft_margin_none": lambda L, d, e: _F(L).soft_margin_loss(d, e, reduction="none"),
    "soft_margin_sum": lambda L, d, e: _F(L).soft_margin_loss(d, e, reduction="sum"),
    "gelu_tanh": lambda L, d, e: _F(L).gelu(d, approximate="tanh"),
    "gelu_one_element": lambda L, d, e: _F(L).gelu(d[:1, :1]),
    "cross_other": lambda L, d, e: L.linalg.cross(e, d),
    "cdist_p1": lambda L, d, e: L.cdist(d, e, p=1),
    "cdist_negative_p": lambda L, d, e: L.cdist(d, e, p=-1),
    "max_pool1d_padded": lambda L, d, e: _F(L).max_pool1d(d.unsqueeze(0), 2, padding=1),
    "conv2d": lambda L, d, e: _F(L).conv2d(d.view(1, 1, 2, 3), e[:1, :2].reshape(1, 1, 1, 2)),
}


@pytest.mark.parametrize("primal,tangent", PAIRS)
@pytest.mark.parametrize("name", ONE_DUAL)
def test_one_mixed_tangent_as_torch(name, primal, tangent):
    _assert_same(ONE_DUAL[name], primal, tangent)


# programs of two duals: both tangents of another dtype, the right operand of the formula's ``+`` refused first
TWO_DUALS = {
    "mm": lambda L, d, e: d.mm(e.t()),
    "bmm": lambda L, d, e: d.unsqueeze(0).bmm(e.t().unsqueeze(0)),
    "mv": lambda L, d, e: d.mv(e[0]),
    "dot": lambda L, d, e: d[0].dot(e[0]),
    "vdot": lambda L, d, e: L.vdot(d[0], e[0]),
    "cross": lambda L, d, e: L.linalg.cross(d, e),
    "conv1d": lambda L, d, e: _F(L).conv1d(d.unsqueeze(0), e[:, :2].unsqueeze(1).expand(2, 2, 2).contiguous()),
}


@pytest.mark.parametrize("tangents", [("float64", "float16"), ("float32", "float64"), ("complex64", "float32"),
                                      ("float32", "float32")])
@pytest.mark.parametrize("name", TWO_DUALS)
def test_two_tangents_refused_right_operand_first(name, tangents):
    _assert_same(TWO_DUALS[name], "float32", *tangents)


def test_cross_tangent_without_nan_from_a_missing_tangent():
    """A missing tangent's term is torch's zero tensor, left out: an infinite primal makes no NaN."""
    def program(L, d, e):
        return L.linalg.cross(e * L.tensor([float("inf"), 1.0, 1.0]), d)

    _assert_same(program, "float32", "float32")


def _kernel_outcome(lib, program) -> str:
    try:
        return str(program(lib).dtype).split(".")[-1]
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("grad,self", [("float64", "float32"), ("float16", "float32"), ("complex128", "float32"),
                                       ("float32", "float64"), ("complex64", "float64"), ("float32", "complex64"),
                                       ("complex64", "float16")])
def test_gelu_backward_refuses_as_torch(grad, self, approximate):
    """oneDNN (exact GELU of a float32 input) refuses a gradient neither float32 nor float16; the ATen kernel a
    complex one (was: computed, in the promoted dtype)."""
    def program(L):
        return L.ops.aten.gelu_backward(_values(L, grad, 1), _values(L, self, 2), approximate=approximate)

    assert _kernel_outcome(tg, program) == _kernel_outcome(torch, program)


_CONVOLUTIONS = {  # input shape, weight shape, stride, padding, dilation, transposed, output_padding, groups
    "1d": ((1, 2, 5), (2, 2, 2), [1], [0], [1], False, [0], 1),
    "3d": ((1, 2, 4, 4, 4), (2, 2, 2, 2, 2), [1, 1, 1], [0, 0, 0], [1, 1, 1], False, [0, 0, 0], 1),
    "2d_dilated": ((1, 2, 5, 5), (2, 2, 2, 2), [1, 1], [0, 0], [2, 2], False, [0, 0], 1),
    "2d_transposed": ((1, 2, 5, 5), (2, 2, 2, 2), [1, 1], [0, 0], [1, 1], True, [0, 0], 1),
    "3d_transposed": ((1, 2, 4, 4, 4), (2, 2, 2, 2, 2), [1, 1, 1], [0, 0, 0], [1, 1, 1], True, [0, 0, 0], 1),
    "2d_groups": ((1, 2, 5, 5), (2, 1, 2, 2), [1, 1], [0, 0], [1, 1], False, [0, 0], 2),
}


@pytest.mark.parametrize("dtypes", [("complex64", "complex64"), ("complex128", "float32"), ("float32", "complex64")])
@pytest.mark.parametrize("name", _CONVOLUTIONS)
def test_convolution_operator_refuses_complex_as_torch(name, dtypes):
    """aten.convolution has no complex kernel (F.conv*d split a complex convolution into real ones first): the
    kernel's dispatch error, before the weight's dtype is compared (was: a complex result, or 'expected scalar
    type')."""
    x_shape, w_shape, *params = _CONVOLUTIONS[name]

    def program(L):
        x, w = (_values(L, dtype, seed, shape) for dtype, seed, shape in zip(dtypes, (1, 2), (x_shape, w_shape)))
        return L.ops.aten.convolution(x, w, None, *params)

    assert _kernel_outcome(tg, program) == _kernel_outcome(torch, program)


def test_complex_conv1d_still_runs_as_torch():
    def program(L):
        x, w = _values(L, "complex64", 1, (1, 2, 5)), _values(L, "complex64", 2, (2, 2, 2))
        return _F(L).conv1d(x, w)

    got, want = program(tg), program(torch)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("way", ["plain", "requires_grad", "dual"])
def test_max_pool1d_of_complex_names_the_kernel_as_torch(way):
    """A tangent sends max_pool1d through max_pool1d_with_indices as requires_grad does (was: 'max_pool1d_impl')."""
    def program(L):
        x = _values(L, "complex64", 1, (1, 2, 4))
        with L.autograd.forward_ad.dual_level():
            if way == "requires_grad":
                x.requires_grad_()
            elif way == "dual":
                x = L.autograd.forward_ad.make_dual(x, _values(L, "complex64", 2, (1, 2, 4)))
            return _F(L).max_pool1d(x, 2)

    assert _kernel_outcome(tg, program) == _kernel_outcome(torch, program)
