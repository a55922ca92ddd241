"""``F.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss``, ``nn.LinearCrossEntropyOptions`` and ``nn.grad``'s
convolution gradients, against torch 2.13.

linear_cross_entropy's reference path is ``cross_entropy(linear(...))``: the same graph as torch's, and values equal
to tracegrad's own composition (torch's within rounding, as tracegrad's matrix products are). Its chunked path (an
``options`` given) is torch's CPU loop operation for operation: half precision, whose products tracegrad computes as
torch does, gives torch's bits; every case gives torch's graph (the custom operator's node), ctx fields, warnings and
refusals. ``nn.grad.conv*d_input/_weight`` are one ``aten.convolution_backward`` call each, as torch's (whose
checks that operator now makes, in ATen's words, instead of failing in NumPy or computing from a wrong size).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_close, assert_same_bits, raised, recorded_graph, tg, torch, warning_texts

pytestmark = pytest.mark.usefixtures("one_thread")

RNG = np.random.default_rng(20)
N, IN, C = 7, 5, 6
X = RNG.standard_normal((N, IN))
W = RNG.standard_normal((C, IN))
B = RNG.standard_normal(C)
CLASS_WEIGHT = RNG.uniform(0.5, 2.0, C)
TARGET = np.array([2, 0, 5, 2, 1, 3, 4])
UPSTREAM = RNG.standard_normal(N)


def _leaf(lib, values, dtype: str, grad: bool = True):
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=grad)


def _lce_run(lib, dtype: str, reduction: str, options: dict | None, bias: bool = False, weighted: bool = False,
             unbatched: bool = False):
    """loss and the gradients of (input, linear_weight, linear_bias) after a backward with a fixed cotangent."""
    x = _leaf(lib, X[0] if unbatched else X, dtype)
    w = _leaf(lib, W, dtype)
    b = _leaf(lib, B, dtype) if bias else None
    kwargs = dict(linear_bias=b, reduction=reduction)
    if weighted:
        kwargs.update(weight=lib.tensor(CLASS_WEIGHT, dtype=getattr(lib, dtype)), ignore_index=2)
    if options is not None:
        kwargs["options"] = lib.nn.LinearCrossEntropyOptions(**options)
    target = lib.tensor(TARGET[0] if unbatched else TARGET)
    loss = lib.nn.functional.linear_cross_entropy(x, w, target, **kwargs)
    upstream = lib.tensor(UPSTREAM[:loss.numel()].reshape(loss.shape), dtype=loss.dtype)
    loss.backward(upstream)
    return [loss, x.grad, w.grad] + ([b.grad] if bias else [])


OPTIONS = [{}, {"batch_chunk_size": 3}, {"acc_policy": "accurate"}, {"acc_policy": "balanced", "batch_chunk_size": 2}]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("extras", [(False, False), (True, True)], ids=["plain", "bias_weight_ignore"])
def test_chunked_half_is_torch_bits(reduction, options, extras):
    """float16 (float32 accumulation): the loss and every gradient, torch's bits, for each policy and chunking.
    (The ignored row's input gradient is zeros whose signs come out of torch's float32 BLAS addmm, which tracegrad's
    addmm does not follow: zeros compared without their sign there.)"""
    ours = _lce_run(tg, "float16", reduction, options, *extras)
    theirs = _lce_run(torch, "float16", reduction, options, *extras)
    ours[1], theirs[1] = ours[1] + 0.0, theirs[1] + 0.0
    for a, b in zip(ours, theirs, strict=True):
        assert_same_bits(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", [None, {}, {"batch_chunk_size": 2, "acc_policy": "accurate"}], ids=str)
def test_values_and_gradients_match_torch(dtype, reduction, options):
    ours = _lce_run(tg, dtype, reduction, options, bias=True, weighted=True)
    theirs = _lce_run(torch, dtype, reduction, options, bias=True, weighted=True)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == getattr(tg, dtype)
        assert_close(a, b, **tol)


def test_reference_path_is_linear_then_cross_entropy_bit_for_bit():
    """K-dimensional out_features: the logits of one flat Linear reshaped to (N, C, *out_features)."""
    x, w, b = _leaf(tg, X, "float32"), _leaf(tg, RNG.standard_normal((C, 2, 3, IN)), "float32"), None
    target = tg.tensor(RNG.integers(0, C, (N, 2, 3)))
    loss = tg.nn.functional.linear_cross_entropy(x, w, target, linear_bias=b, reduction="none", label_smoothing=0.1)
    logits = tg.nn.functional.linear(x, w.reshape(C * 6, IN)).reshape(N, C, 2, 3)
    assert_same_bits(loss, tg.nn.functional.cross_entropy(logits, target, reduction="none", label_smoothing=0.1))


def _graph_case(lib, case: str):
    x = lib.ones(IN, requires_grad=True) if "unbatched" in case else lib.ones(3, IN, requires_grad=True)
    out_features = (2,) if "kdim" in case else ()
    w = lib.ones(C, *out_features, IN, requires_grad=True)
    b = lib.ones(C, *out_features, requires_grad=True) if "bias" in case else None
    if "probs" in case:
        target = lib.full((3, C), 1.0 / C)
    elif "kdim" in case:
        target = lib.zeros(3, 2, dtype=lib.int64)
    else:
        target = lib.tensor(1) if "unbatched" in case else lib.tensor([0, 1, 2])
    options = lib.nn.LinearCrossEntropyOptions() if "chunked" in case else None
    reduction = "none" if "none" in case else "mean"
    smoothing = 0.1 if "smoothing" in case else 0.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = lib.nn.functional.linear_cross_entropy(x, w, target, linear_bias=b, reduction=reduction,
                                                      label_smoothing=smoothing, options=options)
    return recorded_graph([loss]), tuple(loss.shape), warning_texts(caught)


GRAPH_CASES = ["plain", "unbatched_bias", "kdim_bias", "probs", "chunked_bias", "chunked_unbatched_bias",
               "chunked_unbatched_none", "chunked_none_bias", "chunked_kdim_bias", "chunked_smoothing", "chunked_probs"]


@pytest.mark.parametrize("case", GRAPH_CASES)
def test_graph_shape_and_warnings_match_torch(case):
    """The nodes torch records (the chunked custom operator's included), and its warning where options are
    ignored."""
    assert _graph_case(tg, case) == _graph_case(torch, case)


def test_chunked_node_fields_and_second_backward():
    def run(lib, retain: bool):
        x, w = _leaf(lib, X, "float32"), _leaf(lib, W, "float32")
        options = lib.nn.LinearCrossEntropyOptions(allow_retain_graph=retain)
        loss = lib.nn.functional.linear_cross_entropy(x, w, lib.tensor(TARGET), options=options)
        node = loss.grad_fn
        fields = (type(node).__name__, node.allow_retain_graph, node.compute_input_grad,
                  node.compute_linear_weight_grad, node.compute_linear_bias_grad, node._gb, tuple(node._gi.shape))
        loss.backward(retain_graph=True)
        return fields, raised(lib, lambda _: loss.backward()), x.grad

    for retain in (False, True):
        (ours, our_error, our_grad), (theirs, their_error, their_grad) = run(tg, retain), run(torch, retain)
        assert ours == theirs and our_error == their_error
        assert_close(our_grad, their_grad)


def test_chunked_none_saves_detached_inputs():
    def saved(lib):
        x, w = _leaf(lib, X, "float64"), _leaf(lib, W, "float64")
        loss = lib.nn.functional.linear_cross_entropy(x, w, lib.tensor(TARGET), reduction="none",
                                                      options=lib.nn.LinearCrossEntropyOptions())
        node = loss.grad_fn
        return ([None if t is None else (tuple(t.shape), t.requires_grad) for t in node.saved_tensors],
                node._ignore_index, node._batch_chunk_size, node._acc_policy, str(node._acc_dtype))

    assert saved(tg) == saved(torch)


def test_no_grad_chunked_records_nothing():
    def run(lib):
        with lib.no_grad():
            loss = lib.nn.functional.linear_cross_entropy(_leaf(lib, X, "float16"), _leaf(lib, W, "float16"),
                                                          lib.tensor(TARGET), options=lib.nn.LinearCrossEntropyOptions())
        return loss

    ours, theirs = run(tg), run(torch)
    assert ours.grad_fn is None and not ours.requires_grad
    assert_same_bits(ours, theirs)


ARGUMENT_MISTAKES = {
    "3-d input": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 3, 4), L.ones(5, 4), L.tensor([0])),
    "1-d weight": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 4), L.ones(4), L.tensor([0, 1])),
    "in_features": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 4), L.ones(5, 3), L.tensor([0, 1])),
    "bias shape": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 4), L.ones(5, 2, 4), L.zeros(2, 2).long(),
                                                                 linear_bias=L.ones(5)),
    "kdim unbatched": lambda L: L.nn.functional.linear_cross_entropy(L.ones(4), L.ones(5, 2, 4), L.tensor([0, 1])),
    "probs with ignore_index": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 4), L.ones(5, 4),
                                                                              L.ones(2, 5), ignore_index=1),
    "bad reduction": lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 4), L.ones(5, 4), L.tensor([0, 1]),
                                                                    reduction="avg"),
    "bad reduction, chunked": lambda L: L.nn.functional.linear_cross_entropy(
        L.ones(2, 4), L.ones(5, 4), L.tensor([0, 1]), reduction="avg", options=L.nn.LinearCrossEntropyOptions()),
    "conflicting chunk size": lambda L: L.nn.functional.linear_cross_entropy(
        L.ones(8, 4), L.ones(5, 4), L.zeros(8).long(),
        options=L.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio")),
    "half input, half acc_dtype wanted float64": lambda L: L.nn.functional.linear_cross_entropy(
        L.ones(2, 4, dtype=L.float16), L.ones(5, 4, dtype=L.float16), L.tensor([0, 1]),
        options=L.nn.LinearCrossEntropyOptions(acc_dtype=L.float64)),
    "module weight shape": lambda L: L.nn.LinearCrossEntropyLoss(4, 5, weight=L.ones(4)),
    "module label_smoothing": lambda L: L.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5),
    "options acc_policy": lambda L: L.nn.LinearCrossEntropyOptions(acc_policy="fast"),
    "options chunking_method": lambda L: L.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"),
    "options batch_chunk_size": lambda L: L.nn.LinearCrossEntropyOptions(batch_chunk_size=2.0),
    "options acc_dtype": lambda L: L.nn.LinearCrossEntropyOptions(acc_dtype=L.int64),
}


@pytest.mark.filterwarnings("ignore:linear_cross_entropy. ``options`` ignored")
@pytest.mark.parametrize("case", ARGUMENT_MISTAKES)
def test_argument_mistakes_refused_as_torch(case):
    ours, theirs = raised(tg, ARGUMENT_MISTAKES[case]), raised(torch, ARGUMENT_MISTAKES[case])
    assert theirs is not None and ours == theirs


def test_options_resolution_and_repr():
    def resolved(lib):
        default = lib.nn.LinearCrossEntropyOptions()
        return [repr(default), repr(default._adjust(100, 8, 1000, lib.float32, lib.device("cpu"))),
                repr(default._adjust(64, 16, 40, lib.float16, lib.device("cpu"))),
                repr(lib.nn.LinearCrossEntropyOptions(batch_chunk_size=5, acc_policy="balanced")._adjust(
                    9, 4, 5, lib.float64, lib.device("cpu"))),
                raised(lib, lambda _: setattr(default, "batch_chunk_size", 2))]

    assert resolved(tg) == resolved(torch)


def test_module_layout_repr_and_forward():
    def build(lib):
        lib.manual_seed(3)
        module = lib.nn.LinearCrossEntropyLoss(IN, C, out_features=(2,), bias=True, weight=lib.ones(C),
                                               ignore_index=1)
        x = lib.tensor(X, dtype=lib.float32)
        loss = module(x, lib.tensor(RNG_TARGET_2D))
        loss.backward()
        return module, loss

    RNG_TARGET_2D = np.random.default_rng(1).integers(0, C, (N, 2))
    (ours, our_loss), (theirs, their_loss) = build(tg), build(torch)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert ours.__constants__ == theirs.__constants__
    assert recorded_graph([our_loss]) == recorded_graph([their_loss])
    assert_same_bits(ours.linear.weight, theirs.linear.weight)
    assert_close(our_loss, their_loss)
    assert_close(ours.linear.weight.grad, theirs.linear.weight.grad)


def test_exported_names():
    for name in ("LinearCrossEntropyLoss", "LinearCrossEntropyOptions"):
        assert name in tg.nn.modules.__all__ and getattr(tg.nn, name) is getattr(tg.nn.modules, name)
    assert "linear_cross_entropy" in getattr(tg.nn.functional, "__all__", dir(tg.nn.functional))
    assert tg.nn.functional.grad is tg.nn.grad


# ---- nn.grad ---------------------------------------------------------------------------------------------------


def _conv_case(nd: int):
    x = RNG.standard_normal((2, 4) + (5,) * nd)
    w = RNG.standard_normal((6, 2) + (2,) * nd)
    params = dict(stride=2, padding=1, dilation=1, groups=2)
    out = torch.nn.functional.__dict__[f"conv{nd}d"](torch.tensor(x), torch.tensor(w), **params)
    return x, w, RNG.standard_normal(out.shape), params


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_grads_match_torch_and_autograd(nd):
    """conv*d_input/_weight: torch's values (within rounding, as tracegrad's convolution gradients are), node,
    strides and requires_grad; and tracegrad's own autograd gradients of the convolution, bit for bit."""
    x, w, g, params = _conv_case(nd)

    def run(lib):
        grad = lib.nn.grad
        gi = getattr(grad, f"conv{nd}d_input")(x.shape, lib.tensor(w, requires_grad=True),
                                              lib.tensor(g, requires_grad=True), **params)
        gw = getattr(grad, f"conv{nd}d_weight")(lib.tensor(x), w.shape, lib.tensor(g), **params)
        return gi, gw

    (gi, gw), (ti, tw) = run(tg), run(torch)
    assert_close(gi, ti, rtol=1e-12, atol=1e-12)
    assert_close(gw, tw, rtol=1e-12, atol=1e-12)
    assert recorded_graph([gi]) == recorded_graph([ti])
    assert (gi.stride(), gw.stride(), gi.requires_grad, gw.requires_grad) == (
        ti.stride(), tw.stride(), ti.requires_grad, tw.requires_grad)
    xt, wt = tg.tensor(x, requires_grad=True), tg.tensor(w, requires_grad=True)
    y = getattr(tg.nn.functional, f"conv{nd}d")(xt, wt, **params)
    auto_x, auto_w = tg.autograd.grad(y, (xt, wt), tg.tensor(g))
    assert_same_bits(gi, auto_x)
    assert_same_bits(gw, auto_w)


@pytest.mark.parametrize("which", ["input", "weight"])
def test_conv_grads_differentiate_again(which):
    """Double backward through the ConvolutionBackwardBackward0 node, as torch's."""
    x, w, g, params = _conv_case(2)

    def run(lib):
        w_t, g_t, x_t = (lib.tensor(a, requires_grad=True) for a in (w, g, x))
        if which == "input":
            out = lib.nn.grad.conv2d_input(x.shape, w_t, g_t, **params)
            leaves = (w_t, g_t)
        else:
            out = lib.nn.grad.conv2d_weight(x_t, w.shape, g_t, **params)
            leaves = (x_t, g_t)
        return lib.autograd.grad((out * out).sum(), leaves)

    for a, b in zip(run(tg), run(torch), strict=True):
        assert_close(a, b, rtol=1e-10, atol=1e-10)
    w_t = tg.tensor(w, requires_grad=True)
    g_t = tg.tensor(g, requires_grad=True)
    assert tg.autograd.gradgradcheck(lambda a, b: tg.nn.grad.conv2d_input(x.shape, a, b, **params), (w_t, g_t))


def _grad_call(nd: int, fn: str, **changes):
    x, w, g, params = _conv_case(nd)
    args = dict(input_size=x.shape, weight_size=w.shape)
    params.update(changes.pop("params", {}))
    g_shape, x_shape = changes.pop("g_shape", g.shape), changes.pop("input_size", x.shape)
    w_shape = changes.pop("weight_size", w.shape)
    del args

    def call(lib):
        grad_output = lib.tensor(RNG_FIXED.standard_normal(g_shape))
        if fn == "input":
            return getattr(lib.nn.grad, f"conv{nd}d_input")(x_shape, lib.tensor(np.ones(w_shape)), grad_output,
                                                           **params)
        return getattr(lib.nn.grad, f"conv{nd}d_weight")(lib.tensor(np.ones(x_shape)), w_shape, grad_output,
                                                        **params)
    return call


RNG_FIXED = np.random.default_rng(7)
CONV_MISTAKES = {
    f"{nd}d {name}": (nd, fn, changes)
    for nd in (1, 2, 3)
    for name, fn, changes in (
        ("input size giving another output size", "input", dict(input_size=(2, 4) + (9,) * nd)),
        ("weight of other channels", "weight", dict(weight_size=(6, 3) + (2,) * nd)),
        ("groups not dividing", "input", dict(params=dict(groups=3))),
        ("negative padding", "input", dict(params=dict(padding=-1))),
        ("zero stride", "weight", dict(params=dict(stride=0))),
        ("zero groups", "input", dict(params=dict(groups=0))),
        ("stride of the wrong length", "input", dict(params=dict(stride=[2] * (nd + 1)))),
        ("grad_output without batch", "input", dict(g_shape=(6,) + (3,) * nd)),
        ("grad_output of other channels", "input", dict(params=dict(groups=1), weight_size=(6, 4) + (2,) * nd,
                                                        g_shape=(2, 5) + (3,) * nd)),
        ("input size without batch", "input", dict(input_size=(4,) + (5,) * nd)),
    )
}


@pytest.mark.parametrize("case", CONV_MISTAKES)
def test_conv_grad_mistakes_refused_as_torch(case):
    program = _grad_call(*CONV_MISTAKES[case][:2], **CONV_MISTAKES[case][2])
    ours, theirs = raised(tg, program), raised(torch, program)
    assert theirs is not None and ours == theirs


def test_nn_grad_names():
    names = sorted(n for n in vars(torch.nn.grad) if not n.startswith("__") and n != "torch")
    assert all(hasattr(tg.nn.grad, n) for n in names)
    for parse in ("_single", "_pair", "_triple"):
        for value in (3, (1, 2), [4], "ab"):
            assert getattr(tg.nn.grad, parse)(value) == getattr(torch.nn.grad, parse)(value)
