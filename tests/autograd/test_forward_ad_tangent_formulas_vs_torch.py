"""Forward-mode tangents computed with torch's own formulas: values, the tangent's backward, its graph, its errors.

With inputs that require grad, a tangent has a graph of its own (forward-over-reverse). tracegrad's rules for these
operators now run torch's formulas op for op (derivatives.yaml's ``result:`` lines, FunctionsManual's ``norm_jvp``,
``logcumsumexp_jvp``, ``amaxamin_jvp``, the losses' ``apply_loss_reduction(backward(self_t) + ...)``), so the
tangent, the gradients through it and the in-place errors its backward meets are torch's, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, raised, recorded_graph, tg, torch

_X = np.array([[0.3, -1.2, 2.5], [0.7, 1.9, -0.4]])
_Y = np.array([[1.1, 0.2, -0.6], [-1.5, 0.8, 2.2]])
_TX = np.array([[0.5, -0.25, 1.5], [2.0, -1.0, 0.75]])
_TY = np.array([[-0.3, 0.9, 0.1], [1.2, 0.4, -2.0]])
_PROBS = np.array([[0.2, 0.7, 0.45], [0.9, 0.05, 0.6]])
_TARGET = np.array([[0.0, 1.0, 0.3], [1.0, 0.5, 0.0]])
_WEIGHTS = np.array([[0.8, -0.6, 1.3], [0.2, 1.7, -0.9]])


def _tangent_and_grads(lib, fn, *values, tangents=(_TX, _TY), requires_grad=True):
    """fn's output tangent for duals of ``values`` (leaves requiring grad) and the gradient of ``sum(tangent * w)``
    with respect to those leaves."""
    fw = lib.autograd.forward_ad
    leaves = [lib.tensor(v, requires_grad=requires_grad) for v in values]
    with fw.dual_level():
        duals = [fw.make_dual(x, lib.tensor(t)) for x, t in zip(leaves, tangents)]
        tangent = fw.unpack_dual(fn(lib, *duals)).tangent
    if not tangent.requires_grad:
        return tangent, ()
    weights = lib.tensor(np.resize(_WEIGHTS, tuple(tangent.shape)))
    grads = lib.autograd.grad((tangent * weights).sum(), leaves, allow_unused=True)
    return tangent, [None if g is None else _dense(g) for g in grads]


def _dense(grad):
    """torch's zero tensor (a gradient no formula term reached) as the zeros it stands for."""
    zero_tensor = getattr(grad, "_is_zerotensor", None)
    return np.zeros(tuple(grad.shape)) if zero_tensor is not None and zero_tensor() else grad.detach().numpy()


_F = "nn.functional"
CASES = {
    "hypot": (lambda lib, a, b: lib.hypot(a, b), (_X, _Y)),
    "atan2": (lambda lib, a, b: lib.atan2(a, b), (_X, _Y)),
    "remainder": (lambda lib, a, b: lib.remainder(a, b), (_X, _Y)),
    "dot": (lambda lib, a, b: lib.dot(a[0], b[1]), (_X, _Y)),
    "prelu": (lambda lib, a, b: lib.nn.functional.prelu(a, b[0, :1]), (_X, _Y)),
    "vector_norm_2": (lambda lib, a: lib.linalg.vector_norm(a), (_X,)),
    "vector_norm_3_dim": (lambda lib, a: lib.linalg.vector_norm(a, 3, dim=1), (_X,)),
    "vector_norm_inf": (lambda lib, a: lib.linalg.vector_norm(a, float("inf"), dim=0, keepdim=True), (_X,)),
    "vector_norm_half": (lambda lib, a: lib.linalg.vector_norm(a, 0.5), (_X,)),
    "norm_dim": (lambda lib, a: lib.norm(a, 2, dim=1), (_X,)),
    "dist": (lambda lib, a, b: lib.dist(a, b, 3), (_X, _Y)),
    "amax": (lambda lib, a: lib.amax(a, 1), (_X,)),
    "normalize": (lambda lib, a: lib.nn.functional.normalize(a, dim=1), (_X,)),
    "mse_mean": (lambda lib, a, b: lib.nn.functional.mse_loss(a, b), (_X, _Y)),
    "smooth_l1_sum": (lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b, reduction="sum"), (_X, _Y)),
    "huber_none": (lambda lib, a, b: lib.nn.functional.huber_loss(a, b, reduction="none", delta=0.5), (_X, _Y)),
    "bce_mean": (lambda lib, a, b: lib.nn.functional.binary_cross_entropy(a, b), (_PROBS, _TARGET)),
    "bce_logits_sum": (lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(a, b, reduction="sum"),
                       (_X, _TARGET)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_tangent_its_gradients_and_graph_as_torch(name):
    fn, values = CASES[name]
    (ours, our_grads), (theirs, their_grads) = (_tangent_and_grads(lib, fn, *values) for lib in (tg, torch))
    assert_same_bits(ours, theirs)
    assert recorded_graph([ours]) == recorded_graph([theirs])
    for mine, want in zip(our_grads, their_grads):
        assert (mine is None) == (want is None)
        if want is not None:
            assert_same_bits(mine, want)


_INPLACE_FORMULAS = {  # torch's formula writes in place into a value its own graph saved
    "logcumsumexp": (lambda lib, a: lib.logcumsumexp(a, 1), (_X,)),
    "vector_norm_1": (lambda lib, a: lib.linalg.vector_norm(a, 1, dim=1), (_X,)),
    "dist_1": (lambda lib, a, b: lib.dist(a, b, 1), (_X, _Y)),
}


@pytest.mark.parametrize("name", list(_INPLACE_FORMULAS))
def test_tangent_backward_meets_torch_inplace_error(name):
    fn, values = _INPLACE_FORMULAS[name]
    errors = [raised(lib, lambda lib: _tangent_and_grads(lib, fn, *values)) for lib in (tg, torch)]
    assert errors[1] is not None and "modified by an inplace operation" in errors[1][1]
    assert errors[0] == errors[1]


def _one_tangent_graph(lib, fn, values, dual_index: int, requires_grad: bool):
    """The tangent's graph where only input ``dual_index`` has a tangent: torch's zero tensor stands for the other."""
    fw = lib.autograd.forward_ad
    leaves = [lib.tensor(v, requires_grad=requires_grad) for v in values]
    with fw.dual_level():
        args = [fw.make_dual(x, lib.tensor(_TX if i == 0 else _TY)) if i == dual_index else x
                for i, x in enumerate(leaves)]
        tangent = fw.unpack_dual(fn(lib, *args)).tangent
    return recorded_graph([tangent]), tangent.tolist()


@pytest.mark.parametrize("name", ["dot", "prelu", "bce_logits_sum", "bce_mean", "mse_mean", "dist"])
@pytest.mark.parametrize("dual_index", [0, 1])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_missing_tangent_as_torch_zero_tensor(name, dual_index, requires_grad):
    fn, values = CASES[name]
    results = [_one_tangent_graph(lib, fn, values, dual_index, requires_grad) for lib in (tg, torch)]
    assert results[0] == results[1]


@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "soft_margin_loss", "binary_cross_entropy",
                                  "huber_loss", "l1_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_reduced_loss_storage_as_torch(loss, reduction):
    """ATen writes the mean or sum of some losses into the unreduced loss's buffer: the 0-d result keeps a storage of
    the loss's size (what forward AD's tangent layout check compares)."""
    sizes = []
    for lib in (tg, torch):
        out = getattr(lib.nn.functional, loss)(lib.tensor(_PROBS), lib.tensor(_TARGET), reduction=reduction)
        sizes.append((out.untyped_storage().nbytes(), out.storage_offset(), out.item()))
    assert sizes[0] == sizes[1]
