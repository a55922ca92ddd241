"""Forward-mode tangents by torch's own formulas (second part): products ending in a view, the normalisations,
sums with a zero tensor.

With inputs that require grad a tangent records a graph of its own. tracegrad's rules for these operators run
torch's formulas op for op: ``_unsafe_view``'s auto_linear (batched matmul, linear, kron, SDPA), baddbmm's and
_trilinear's sums of products, ``safe_logsumexp_jvp``, FunctionsManual's ``layer_norm_jvp``, ``group_norm_jvp``
(with its statistics' ``group_norm_mean_jvp``/``group_norm_invstd_jvp``) and ``batch_norm_jvp``, and ATen's
``add_zerotensor`` (a sum with PyTorch's zero tensor keeps the other term's layout). So the tangent, its graph and
the gradients through it are torch's; bit for bit except where a product goes through BLAS, whose last bits
NumPy's does not share (compared to 1e-12 there).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, raised, recorded_graph, tg, torch

_RNG = np.random.default_rng(20261128)


def _normal(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape)


def _tangent(lib, fn, values, tangents, dual: tuple | None = None):
    """(leaves requiring grad, fn's output tangent) where the inputs in ``dual`` (all by default) are duals of
    the leaves."""
    fw = lib.autograd.forward_ad
    leaves = [lib.tensor(v, requires_grad=True) for v in values]
    dual = range(len(values)) if dual is None else dual
    with fw.dual_level():
        args = [fw.make_dual(x, lib.tensor(t)) if i in dual else x for i, (x, t) in enumerate(zip(leaves, tangents))]
        return leaves, fw.unpack_dual(fn(lib, *args)).tangent


def _tangent_and_grads(lib, fn, values, tangents, dual: tuple | None = None):
    """fn's output tangent (see ``_tangent``) and the gradients of ``sum(tangent * w)`` with respect to every leaf
    (None where unreached)."""
    leaves, tangent = _tangent(lib, fn, values, tangents, dual)
    if tangent is None:
        return None, ()
    weights = lib.tensor(np.resize(np.linspace(-1.5, 2.0, 7), tuple(tangent.shape)))
    grads = lib.autograd.grad((tangent * weights).sum(), leaves, allow_unused=True)
    return tangent, [None if g is None else _dense(g) for g in grads]


def _dense(grad) -> np.ndarray:
    """torch's zero tensor (a gradient no formula term reached) as the zeros it stands for."""
    zero_tensor = getattr(grad, "_is_zerotensor", None)
    return np.zeros(tuple(grad.shape)) if zero_tensor is not None and zero_tensor() else grad.detach().numpy()


def _assert_same(ours, theirs, bits: bool) -> None:
    if bits:
        assert_same_bits(ours, theirs)
    else:  # (a product through BLAS: NumPy's last bits are not MKL's)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-12, atol=1e-12)


def _values(*shapes) -> tuple:
    return tuple(_normal(*s) for s in shapes)


_F = "nn.functional"
# name -> (program, input shapes, bit for bit)
CASES = {
    "matmul_folded": (lambda lib, a, b: lib.matmul(a.transpose(1, 2), b), ((2, 4, 3), (1, 4, 2)), False),
    "linear_batched_no_bias": (lambda lib, x, w: lib.nn.functional.linear(x.transpose(0, 1), w), ((3, 2, 4), (5, 4)),
                               False),
    "kron": (lambda lib, a, b: lib.kron(a, b), ((2, 3), (3, 2)), True),
    "addmm": (lambda lib, s, a, b: lib.addmm(s, a, b), ((2, 2), (2, 3), (3, 2)), False),
    "baddbmm": (lambda lib, s, a, b: lib.baddbmm(s, a, b, beta=0.5, alpha=2.0), ((2, 3, 2), (2, 3, 4), (2, 4, 2)),
                False),
    "bilinear": (lambda lib, x1, x2, w, b: lib.nn.functional.bilinear(x1, x2, w, b), ((2, 3), (2, 4), (5, 3, 4), (5,)),
                 False),
    "logsigmoid_transposed": (lambda lib, a: lib.nn.functional.logsigmoid(a.t()), ((4, 3),), True),
    "mul_number_transposed": (lambda lib, a: (a.t() * a.t()).mul(3), ((4, 3),), True),
    "layer_norm": (lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (3, 4), w, b), ((2, 3, 4), (3, 4), (3, 4)),
                   True),
    "layer_norm_no_affine": (lambda lib, x: lib.nn.functional.layer_norm(x, (4,)), ((3, 4),), True),
    "group_norm": (lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w, b), ((2, 4, 3), (4,), (4,)), True),
    "group_norm_statistics": (lambda lib, x, w, b: lib.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5)[2],
                              ((2, 4, 3), (4,), (4,)), True),
    "batch_norm_train": (lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
                         ((4, 3, 2), (3,), (3,)), True),
    "batch_norm_eval": (lambda lib, x, w, b: lib.nn.functional.batch_norm(
        x, lib.tensor([0.1, -0.2, 0.3], dtype=lib.float64), lib.tensor([0.5, 1.5, 2.0], dtype=lib.float64), w, b),
                        ((4, 3, 2), (3,), (3,)), True),
    "instance_norm": (lambda lib, x, w, b: lib.nn.functional.instance_norm(x, weight=w, bias=b),
                      ((2, 3, 4), (3,), (3,)), True),
    "conv2d": (lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, padding=1), ((1, 2, 4, 4), (3, 2, 3, 3), (3,)),
               False),
    "conv_transpose1d": (lambda lib, x, w, b: lib.nn.functional.conv_transpose1d(x, w, b, stride=2),
                         ((2, 2, 5), (2, 3, 3), (3,)), False),
    "conv2d_input_grad": (lambda lib, w, g: lib.nn.grad.conv2d_input((1, 2, 4, 4), w, g, padding=1),
                          ((3, 2, 3, 3), (1, 3, 4, 4)), False),
    "conv2d_weight_grad": (lambda lib, x, g: lib.nn.grad.conv2d_weight(x, (3, 2, 3, 3), g, padding=1),
                           ((1, 2, 4, 4), (1, 3, 4, 4)), False),
    # (the input's zero tangent is contiguous: the tangent, not channels-last, is copied into the output's layout)
    "conv2d_channels_last": (lambda lib, x, w, b: lib.nn.functional.conv2d(
        x.contiguous(memory_format=lib.channels_last), w, b), ((2, 2, 4, 4), (3, 2, 3, 3), (3,)), False),
    # (matmul, then the bias added in place unless it has a tangent: the tangent copied into the output's)
    "linear_transposed_bias": (lambda lib, x, w, b: lib.nn.functional.linear(x.transpose(0, 1), w, b),
                               ((3, 2, 4), (5, 4), (5,)), False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_tangent_its_gradients_and_graph_as_torch(name):
    fn, shapes, bits = CASES[name]
    values = _values(*shapes)
    tangents = _values(*shapes)
    (ours, our_grads), (theirs, their_grads) = (_tangent_and_grads(lib, fn, values, tangents) for lib in (tg, torch))
    assert recorded_graph([ours]) == recorded_graph([theirs])
    _assert_same(ours.detach().numpy(), theirs.detach().numpy(), bits)
    for mine, want in zip(our_grads, their_grads):
        assert (mine is None) == (want is None)
        if want is not None:
            _assert_same(mine, want, bits)


_PARTIAL = ["bilinear", "addmm", "baddbmm", "layer_norm", "group_norm", "group_norm_statistics", "batch_norm_train",
            "batch_norm_eval", "instance_norm", "conv2d", "conv2d_channels_last"]


@pytest.mark.parametrize("name, which", [(name, which) for name in _PARTIAL for which in (0, 1, 2)]
                         + [("linear_transposed_bias", 0), ("linear_transposed_bias", 1)])
def test_one_input_with_tangent_as_torch(name, which):
    """The other inputs (requiring grad) have none: PyTorch's zero tensor takes part in the formula, out of place
    where the formula tells it apart."""
    fn, shapes, bits = CASES[name]
    values = _values(*shapes)
    tangents = _values(*shapes)
    (ours, our_grads), (theirs, their_grads) = (_tangent_and_grads(lib, fn, values, tangents, (which,))
                                                for lib in (tg, torch))
    assert (ours is None) == (theirs is None)
    if theirs is None:
        return
    assert recorded_graph([ours]) == recorded_graph([theirs])
    _assert_same(ours.detach().numpy(), theirs.detach().numpy(), bits)
    for mine, want in zip(our_grads, their_grads):
        if want is not None and mine is not None:
            # (a gradient only zero-tensor terms reached is torch's zero tensor; tracegrad's zeros are -0.)
            _assert_same(mine + 0.0, want + 0.0, bits)


def _sdpa_math(lib, q, k, v):
    return lib.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.0, is_causal=True)


def test_attention_tangent_graph_and_inplace_error_as_torch():
    """The math attention's softmax tangent is safe_logsumexp_jvp's (DivBackward0 under WhereBackward0; before, a
    sum of products), and its backward meets torch's in-place error (logsumexp_jvp multiplies exp's saved result in
    place)."""
    values = _values((3, 4), (5, 4), (5, 2))
    tangents = _values((3, 4), (5, 4), (5, 2))
    ours, theirs = (_tangent(lib, _sdpa_math, values, tangents)[1] for lib in (tg, torch))
    assert recorded_graph([ours]) == recorded_graph([theirs])
    _assert_same(ours.detach().numpy(), theirs.detach().numpy(), bits=False)
    errors = [raised(lib, lambda lib: _tangent_and_grads(lib, _sdpa_math, values, tangents)) for lib in (tg, torch)]
    assert errors[1] is not None and "modified by an inplace operation" in errors[1][1]
    assert errors[0] == errors[1]


@pytest.mark.parametrize("ord", [1, float("inf"), 0.5])
def test_norm_gradient_graph_reads_sgn_as_torch(ord):
    """norm_backward's ``self.sgn()`` records SgnBackward0 for real inputs too (tracegrad's recorded
    SignBackward0), which forward-over-reverse and double backward show."""
    results = []
    for lib in (tg, torch):
        x = lib.tensor(np.array([[0.3, -1.2, 2.5], [0.7, 1.9, -0.4]]), requires_grad=True)
        (grad,) = lib.autograd.grad(lib.linalg.vector_norm(x, ord, dim=1).sum(), x, create_graph=True)
        results.append((recorded_graph([grad]), grad.detach().numpy()))
    assert results[0][0] == results[1][0]
    assert_same_bits(results[0][1], results[1][1])
