"""cross_entropy / nll_loss / log_softmax on their fast paths and off them, against torch.

The fast paths: ``_nll_prepare``'s one-reduction check (2-D float scores, int64 class indices all in range, none
ignored, no weight), ``nll_loss``'s inline recording of its node for 2-D scores, and the log_softmax backward's
single block of rows. Every case here is also run where they do not apply (weights, ignored or out-of-range
targets, byte targets, 1-D and 4-D scores, many rows), and compared with torch: values and gradients bit for bit
for float32 where tracegrad picks torch's vector width (else within rounding), node names, errors, hook order and sequence
numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_close, assert_same_bits, raised, tg, torch

from tracegrad.ops.aten_vec import aten_float_lanes
from tracegrad.ops.nn_ops import loss as loss_ops

_LANES = {"AVX512": 16, "AVX2": 8, "DEFAULT": 0}
EXACT = _LANES.get(torch.backends.cpu.get_cpu_capability()) == aten_float_lanes() > 0
pytestmark = pytest.mark.usefixtures("one_thread")

SHAPES = ((1, 2), (16, 10), (128, 10), (33, 17), (4, 1000), (64, 600))  # (the last: several row blocks)


def _same(ours, theirs, exact: bool = True) -> None:
    if exact and EXACT and ours.dtype == tg.float32:
        assert_same_bits(ours, theirs)
    else:  # (float64's exp and log are NumPy's, float32 with another vector width has other lanes)
        assert_close(ours.detach().numpy(), theirs.detach().numpy(), rtol=2e-6, atol=1e-7)


def _both(x: np.ndarray):
    return tg.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()


def _targets(rows: int, classes: int, seed: int, kind: str) -> np.ndarray:
    t = np.random.default_rng(seed).integers(0, classes, rows)
    if kind == "ignored":  # (some at the default ignore_index: the general path)
        t[::3] = -100
    return t


def _run(fn: str, x: np.ndarray, t: np.ndarray, exact: bool = True, **kwargs) -> None:
    """Loss, gradient and node names of ``F.<fn>`` in both libraries (nll_loss on log_softmax's output)."""
    (xo, xt), results = _both(x), []
    for lib, leaf in ((tg, xo), (torch, xt)):
        scores = lib.log_softmax(leaf, 1) if fn == "nll_loss" else leaf
        weight = kwargs.get("weight")
        kw = dict(kwargs, weight=None if weight is None else lib.from_numpy(weight.copy()))
        loss = getattr(lib.nn.functional, fn)(scores, lib.from_numpy(t.copy()), **kw)
        seed = np.random.default_rng(1).standard_normal(loss.shape).astype(x.dtype)
        loss.backward(lib.from_numpy(seed))
        names = [loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name()]
        results.append((loss, leaf.grad, names))
    (lo, go, no), (lt, gt, nt) = results
    assert no == nt
    _same(lo, lt, exact)
    _same(go, gt, exact)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kind", ["plain", "ignored"])
def test_cross_entropy_and_nll_loss(dtype, shape, reduction, kind):
    x = (np.random.default_rng(0).standard_normal(shape) * 3).astype(dtype)
    t = _targets(shape[0], shape[1], 2, kind)
    assert loss_ops._every_row_counts(x, t, None, -100) == (kind == "plain")  # (which path this case takes)
    for fn in ("cross_entropy", "nll_loss"):
        _run(fn, x, t, reduction=reduction)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_general_path_cases(reduction):
    """Weights, an ignore_index that is a class, label smoothing, class probabilities: off the fast path."""
    x = (np.random.default_rng(3).standard_normal((16, 10)) * 3).astype(np.float32)
    t = _targets(16, 10, 4, "plain")
    weight = np.random.default_rng(5).random(10).astype(np.float32)
    _run("cross_entropy", x, t, reduction=reduction, weight=weight)
    _run("nll_loss", x, t, reduction=reduction, weight=weight)
    _run("cross_entropy", x, t, reduction=reduction, ignore_index=int(t[0]))
    _run("nll_loss", x, t, reduction=reduction, ignore_index=int(t[0]))
    # (the smoothing's own sums are not emulated bit for bit)
    _run("cross_entropy", x, t, exact=False, reduction=reduction, label_smoothing=0.1)


def test_nll_loss_byte_and_strided_targets():
    x = (np.random.default_rng(6).standard_normal((12, 7)) * 3).astype(np.float32)
    t = _targets(24, 7, 7, "plain")
    _run("nll_loss", x, t[::2].astype(np.uint8))
    xo, xt = _both(x)
    to, tt = tg.from_numpy(t)[::2], torch.from_numpy(t)[::2]  # (a strided target tensor)
    assert_same_bits(tg.nn.functional.cross_entropy(xo, to), torch.nn.functional.cross_entropy(xt, tt))


def test_non_contiguous_scores():
    base = (np.random.default_rng(8).standard_normal((10, 16)) * 3).astype(np.float32)
    t = _targets(16, 10, 9, "plain")
    (xo, xt) = _both(base)
    for fn in ("cross_entropy", "nll_loss"):
        lo = getattr(tg.nn.functional, fn)(xo.t(), tg.from_numpy(t))
        lt = getattr(torch.nn.functional, fn)(xt.t(), torch.from_numpy(t))
        _same(lo, lt)
        lo.backward()
        lt.backward()
        _same(xo.grad, xt.grad)


@pytest.mark.parametrize("shape", [(7,), (2, 5, 3, 4), (3, 5, 6)])
def test_other_ranks(shape):
    x = np.random.default_rng(10).standard_normal(shape).astype(np.float32)
    t_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = np.random.default_rng(11).integers(0, shape[0 if len(shape) == 1 else 1], t_shape)
    if len(shape) > 1:
        _run("cross_entropy", x, t)
    xo, xt = _both(x)
    lo = tg.nn.functional.cross_entropy(xo, tg.from_numpy(np.asarray(t)))
    lt = torch.nn.functional.cross_entropy(xt, torch.from_numpy(np.asarray(t)))
    _same(lo, lt)
    assert lo.grad_fn.name() == lt.grad_fn.name()


@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("case", ["too_big", "negative", "int32", "batch", "empty", "1d_target_2d"])
def test_errors(fn, case):
    x = np.random.default_rng(12).standard_normal((6, 4)).astype(np.float32)
    t = np.array([0, 3, 1, 2, 2, 1])
    if case == "too_big":
        t[2] = 4
    elif case == "negative":
        t[4] = -1
    elif case == "int32":
        t = t.astype(np.int32)
    elif case == "batch":
        t = t[:5]
    elif case == "empty":
        x, t = x[:0], t[:0]
    elif case == "1d_target_2d":
        t = t.reshape(2, 3)

    def program(lib):
        scores = lib.from_numpy(x.copy()).requires_grad_()
        return getattr(lib.nn.functional, fn)(scores, lib.from_numpy(t.copy())).sum().backward()

    assert raised(tg, program) == raised(torch, program)


@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_sequence_numbers_after_an_error(fn):
    """A kernel that raises still numbered its nodes, as torch's: the next node's number tells."""
    x = np.random.default_rng(13).standard_normal((3, 4)).astype(np.float32)
    numbers = []
    for lib in (tg, torch):
        leaf = lib.from_numpy(x.copy()).requires_grad_()
        before = (leaf * 1).grad_fn._sequence_nr()
        with pytest.raises(IndexError):
            getattr(lib.nn.functional, fn)(leaf, lib.tensor([0, 9, 1]))
        numbers.append((leaf * 1).grad_fn._sequence_nr() - before)
    assert numbers[0] == numbers[1]


def test_hook_order_and_node_numbers():
    x = np.random.default_rng(14).standard_normal((16, 10)).astype(np.float32)
    t = _targets(16, 10, 15, "plain")
    orders = []
    for lib in (tg, torch):
        leaf = lib.from_numpy(x.copy()).requires_grad_()
        calls = []
        lp = lib.log_softmax(leaf, 1)
        loss = lib.nn.functional.nll_loss(lp, lib.from_numpy(t)) + lib.nn.functional.cross_entropy(
            leaf, lib.from_numpy(t))
        nodes = [loss.grad_fn.next_functions[0][0], loss.grad_fn.next_functions[1][0], lp.grad_fn]
        for k, node in enumerate(nodes):
            node.register_prehook(lambda g, k=k, calls=calls: calls.append(("pre", k)))
            node.register_hook(lambda gi, go, k=k, calls=calls: calls.append(("post", k)))
        lp.register_hook(lambda g, calls=calls: calls.append(("tensor", "lp")))
        loss.backward()
        orders.append((calls, [n.name() for n in nodes],
                       [n._sequence_nr() - nodes[2]._sequence_nr() for n in nodes]))
    assert orders[0] == orders[1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_inline_nll_node_matches_the_registered_operator(dtype, reduction):
    """nll_loss's inline node holds what the registered operator's node holds, and both backwards agree."""
    lp = tg.tensor(np.random.default_rng(16).standard_normal((6, 5)).astype(dtype), requires_grad=True)
    t = tg.tensor(np.array([0, 4, 2, 2, 1, 3]))
    inline = loss_ops.nll_loss(lp, t, None, reduction)
    registered = loss_ops._nll_loss_1d2d(lp, t, None, reduction, -100)[0]
    assert_same_bits(inline, registered)
    a, b = inline.grad_fn, registered.grad_fn
    assert (a.name(), type(a), a._in_meta, a._out_meta, a._attrs) == (b.name(), type(b), b._in_meta, b._out_meta,
                                                                        b._attrs)
    assert a.next_functions == b.next_functions and b._sequence_nr() == a._sequence_nr() + 1
    assert a._saved_self is lp and a._saved_target is t and a._saved_weight is None
    assert_same_bits(a._saved_total_weight, b._saved_total_weight)
    seed = tg.ones_like(inline)
    for create_graph in (False, True):
        (g_inline,) = tg.autograd.grad(inline, lp, seed, retain_graph=True, create_graph=create_graph)
        (g_registered,) = tg.autograd.grad(registered, lp, seed, retain_graph=True, create_graph=create_graph)
        assert_same_bits(g_inline, g_registered)


def test_nll_loss_records_only_when_needed():
    lp = tg.tensor(np.random.default_rng(17).standard_normal((4, 3)).astype(np.float32))
    t = tg.tensor(np.array([0, 2, 1, 1]))
    assert tg.nn.functional.nll_loss(lp, t).grad_fn is None
    with tg.no_grad():
        assert tg.nn.functional.nll_loss(lp.requires_grad_(), t).grad_fn is None
    param = tg.nn.Parameter(lp.detach().clone())  # (a subclass: through the registered operator)
    assert tg.nn.functional.nll_loss(param, t).grad_fn.name() == "NllLossBackward0"
