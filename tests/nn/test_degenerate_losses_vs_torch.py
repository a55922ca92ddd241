"""Losses and reductions on degenerate inputs, as torch has them: nll_loss / cross_entropy over zero classes with
every target ignored, the NaN a mean over no element gives (its sign bit included), reductions over ``dim=()``,
empty reductions of integer and bool tensors, 0-d selections, and which of two errors an empty input raises
first."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, tg, torch


def _result(value):
    """A comparable form of a program's output: tensors as (dtype, shape, bits), the sign of NaN included."""
    if isinstance(value, (tuple, list)):
        return tuple(_result(v) for v in value)
    if not hasattr(value, "detach"):
        return value
    a = np.array(value.detach().numpy())  # (a copy, contiguous, of the same shape: 0-d stays 0-d)
    floats = a.reshape(-1).view(a.real.dtype) if a.dtype.kind == "c" else a  # (complex: both parts)
    bits = floats.view(f"u{floats.itemsize}") if floats.dtype.kind == "f" else floats
    return str(value.dtype).split(".")[-1], a.shape, bits.ravel().tolist()


def _outcome(lib, program):
    """``program(lib)``'s result, or its error (type and message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        error = raised(lib, program)
        return error if error is not None else _result(program(lib))


def assert_same_outcome(program) -> None:
    assert _outcome(tg, program) == _outcome(torch, program)


# ---- nll_loss / cross_entropy over zero classes ----------------------------------------------------------------

# (scores' shape, targets' shape): each target is ignored, so no class is ever read
ZERO_CLASSES = [((3, 0), (3,)), ((0,), ()), ((2, 0, 3, 4), (2, 3, 4)), ((0, 0), (0,))]


EXTRAS = [{}, {"weight": True}, {"ignore_index": 5}]
EXTRAS_BY_FN = [("nll_loss", e) for e in EXTRAS] + [("cross_entropy", e) for e in EXTRAS + [{"label_smoothing": 0.25}]]


@pytest.mark.parametrize(("fn", "extra"), EXTRAS_BY_FN)
@pytest.mark.parametrize("shapes", ZERO_CLASSES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_zero_classes_every_target_ignored(fn, extra, shapes, reduction):
    shape, target_shape = shapes

    def program(lib):
        x = lib.zeros(shape, dtype=lib.float64).requires_grad_()
        kw = {k: (lib.ones(0, dtype=lib.float64) if k == "weight" else v) for k, v in extra.items()}
        target = lib.full(target_shape, kw.get("ignore_index", -100))
        loss = getattr(lib.nn.functional, fn)(x, target, reduction=reduction, **kw)
        loss.sum().backward()
        return loss, x.grad

    assert_same_outcome(program)


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("dtype", ["int64", "uint8"])
def test_zero_classes_target_not_ignored(reduction, dtype):
    # (unreduced, a uint8 target is streamed as a raw byte: byte 0 ends the message)
    def program(lib):
        return lib.nn.functional.nll_loss(lib.zeros(3, 0), lib.zeros(3, dtype=getattr(lib, dtype)),
                                          reduction=reduction)

    assert raised(tg, program) == raised(torch, program)


# ---- the mean over no element: 0 / 0, a NaN with its sign bit set -------------------------------------------

EMPTY_MEAN_LOSSES = {
    "mse_loss": lambda F, x, t: F.mse_loss(x, t),
    "huber_loss": lambda F, x, t: F.huber_loss(x, t),
    "smooth_l1_loss": lambda F, x, t: F.smooth_l1_loss(x, t),
    "binary_cross_entropy": lambda F, x, t: F.binary_cross_entropy(x, t),
    "binary_cross_entropy_with_logits": lambda F, x, t: F.binary_cross_entropy_with_logits(x, t),
    "soft_margin_loss": lambda F, x, t: F.soft_margin_loss(x, t),
    "cross_entropy (probabilities)": lambda F, x, t: F.cross_entropy(x, t),
    "cross_entropy (probabilities, smoothed)": lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.2),
}


@pytest.mark.parametrize("name", list(EMPTY_MEAN_LOSSES))
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0)])
def test_mean_loss_of_empty_input(name, shape):
    def program(lib):
        x = lib.zeros(shape).requires_grad_()
        loss = EMPTY_MEAN_LOSSES[name](lib.nn.functional, x, lib.zeros(shape))
        loss.backward()
        return loss, x.grad, loss.grad_fn.name()

    assert_same_outcome(program)


# ---- reductions over dim=() ------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["all", "any"])
@pytest.mark.parametrize("shape", [(2, 3), (0,), ()])
@pytest.mark.parametrize("dtype", ["float32", "uint8"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logical_reduction_over_no_dim(op, shape, dtype, keepdim):
    def program(lib):
        x = lib.tensor(np.arange(np.prod(shape, dtype=int)).reshape(shape) % 2).to(getattr(lib, dtype))
        return getattr(lib, op)(x, (), keepdim), getattr(x, op)(dim=[], keepdim=keepdim)

    assert_same_outcome(program)


@pytest.mark.parametrize("op", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dim", [(), 0, -1])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("shape", [(2, 3), (1,)])
def test_variance_gradients(op, dim, correction, shape):
    # dim=(): PyTorch's backward counts one element (over no dim) against the mean over all; a correction beyond
    # the count divides by a negative number
    def program(lib):
        # (small integers: every sum exact, so that no order of additions shows in the bits)
        x = lib.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape)).requires_grad_()
        out = getattr(lib, op)(x, dim, correction=correction)
        sum(o.sum() for o in (out if isinstance(out, tuple) else (out,))).backward()
        return out, x.grad

    assert_same_outcome(program)


@pytest.mark.parametrize("op", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize(("shape", "dim"), [((0,), None), ((0, 3), 0), ((3, 0), -1), ((0, 3), ())])
def test_variance_of_no_element(op, shape, dim):
    def program(lib):
        x = lib.zeros(shape).requires_grad_()
        out = getattr(lib, op)(x, dim)
        sum(o.sum() for o in (out if isinstance(out, tuple) else (out,))).backward()
        return out, x.grad

    assert_same_outcome(program)


@pytest.mark.parametrize("shape", [(1,), (2, 3), (0, 3), ()])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp_over_no_dim(shape, keepdim):
    def program(lib):
        return lib.logsumexp(lib.zeros(shape), (), keepdim).shape

    assert_same_outcome(program)


# ---- selections: median, kthvalue, topk ------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "bool", "complex64"])
def test_median_of_empty_tensor(op, dtype):
    def program(lib):
        return getattr(lib, op)(lib.zeros(0, 2, dtype=getattr(lib, dtype)))

    assert_same_outcome(program)


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize(("shape", "dim"), [((0,), 0), ((3, 0), 1), ((2, 0), 0), ((), 0)])
@pytest.mark.parametrize("dtype", ["bool", "float32"])
def test_median_along_empty_dim(op, shape, dim, dtype):
    def program(lib):
        return getattr(lib, op)(lib.zeros(shape, dtype=getattr(lib, dtype)), dim)

    assert_same_outcome(program)


@pytest.mark.parametrize("dtype", ["bool", "complex64", "float32"])
def test_kthvalue_of_0d_tensor(dtype):
    def program(lib):
        return lib.kthvalue(lib.ones((), dtype=getattr(lib, dtype)), 1)

    assert_same_outcome(program)


@pytest.mark.parametrize("k", [0, 1, 2])
def test_topk_of_0d_tensor(k):
    def program(lib):
        x = lib.tensor(2.5).requires_grad_()
        values, indices = lib.topk(x, k)
        values.sum().backward()
        return values, indices, x.grad

    assert_same_outcome(program)


# ---- amax / amin: an empty dim is named before repeated dims are refused ------------------------------------


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize(("shape", "dim"), [((0, 3), (0, 0)), ((3, 0), (1, -1)), ((3, 0), -1), ((3, 0), (0, -1, 1)),
                                            ((2, 0, 3), (2, 5)), ((0, 3), ()), ((2, 3), (1, 1))])
def test_amax_checks_empty_dims_first(op, shape, dim):
    def program(lib):
        return getattr(lib, op)(lib.zeros(shape), dim)

    assert_same_outcome(program)


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_aminmax_gradient_with_nan(dim):
    # a NaN extreme selects no input (amax/amin's rule): its slice's gradient is NaN
    def program(lib):
        x = lib.tensor([[1.0, float("nan"), 3.0], [4.0, 5.0, -1.0]]).requires_grad_()
        low, high = lib.aminmax(x, dim=dim)
        (low.sum() + high.sum()).backward()
        return np.isnan(x.grad.numpy()).tolist(), np.nan_to_num(x.grad.numpy()).tolist()

    assert_same_outcome(program)


# ---- dtypes: which check comes first, and the loss's dtype -----------------------------------------------------


@pytest.mark.parametrize(("shape", "target"), [((3,), ("float32", (2,))), ((3,), ("int64", (2,))),
                                               ((2, 3, 4, 4), ("float32", (2, 4, 5))), ((2, 3), ("float32", (2, 2))),
                                               ((2, 3, 4, 4), ("float32", (2, 4, 4)))])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_target_dtype_checked_before_sizes(shape, target, weighted):
    # the target's dtype is refused before a 1-D target of the wrong size, a spatial size mismatch or a weight
    # of the wrong size
    dtype, target_shape = target

    def program(lib):
        weight = lib.ones(4) if weighted else None
        return lib.nn.functional.nll_loss(lib.zeros(shape), lib.zeros(target_shape, dtype=getattr(lib, dtype)),
                                          weight=weight)

    assert raised(tg, program) == raised(torch, program)


LOSS_DTYPES = ["float32", "float64", "int64", "bool"]


@pytest.mark.parametrize("name", ["huber_loss", "binary_cross_entropy", "margin_ranking_loss"])
@pytest.mark.parametrize("input_dtype", LOSS_DTYPES)
@pytest.mark.parametrize("target_dtype", LOSS_DTYPES)
def test_loss_dtypes(name, input_dtype, target_dtype):
    # huber_loss keeps the input's dtype; binary_cross_entropy compares the dtypes before its dispatch;
    # margin_ranking_loss adds a double margin (an integer loss turns float). (huber_loss's backward of mixed
    # dtypes, which torch refuses, is differentiated on purpose: test_user_mistakes_losses_vs_torch.py)
    differentiated = name != "huber_loss" or input_dtype == target_dtype
    shape = (2,)

    def program(lib):
        x = lib.linspace(0.25, 0.75, shape[0]).to(getattr(lib, input_dtype))
        t = lib.ones(shape, dtype=getattr(lib, target_dtype))
        for operand in (x, t):
            if operand.is_floating_point():
                operand.requires_grad_()
        F = lib.nn.functional
        loss = (F.margin_ranking_loss(x, t, lib.ones(shape, dtype=getattr(lib, target_dtype)))
                if name == "margin_ranking_loss" else getattr(F, name)(x, t))
        if loss.requires_grad and differentiated:
            loss.backward()
        return loss, x.grad, t.grad

    assert_same_outcome(program)


def test_margin_ranking_loss_takes_the_difference_first():
    def program(lib):
        x, y, t = (lib.ones(2, requires_grad=True) for _ in range(3))
        node = lib.nn.functional.margin_ranking_loss(x, y, t).grad_fn.next_functions[0][0]  # ClampMinBackward0
        product = node.next_functions[0][0].next_functions[0][0]  # MulBackward0
        return [f.name() for f, _ in product.next_functions], [f._sequence_nr() for f, _ in product.next_functions]

    ours, theirs = program(tg), program(torch)
    assert ours[0] == theirs[0] and np.argsort(ours[1]).tolist() == np.argsort(theirs[1]).tolist()


@pytest.mark.parametrize("shape", [(0, 0), (0,), (3, 0)])
@pytest.mark.parametrize("p", [float("inf"), -1.0, 0.0])
def test_pairwise_distance_over_an_empty_dim(shape, p):
    # (the norms without an identity refuse an empty dim in PyTorch's words)
    def program(lib):
        return lib.nn.functional.pairwise_distance(lib.zeros(shape), lib.zeros(shape), p=p)

    assert_same_outcome(program)


@pytest.mark.parametrize("op", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize(("shape", "dim"), [((0, 3), 0), ((0, 3), ()), ((2, 3), ()), ((1,), -1), ((), None)])
@pytest.mark.parametrize("correction", [0, 2])
def test_variance_tangents(op, shape, dim, correction):
    # forward mode: the backward formula applied to the tangent, summed (its degenerate cases included)
    def program(lib):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(lib.arange(float(np.prod(shape))).reshape(shape), lib.ones(shape))
            out = getattr(lib, op)(x, dim, correction=correction)
            return tuple(fa.unpack_dual(o).tangent for o in (out if isinstance(out, tuple) else (out,)))

    assert_same_outcome(program)
