"""tracegrad.nn.functional against torch.nn.functional: values, gradients, graph structure, errors.

The OpInfo database (tests/opinfo/db_nn.py) already sweeps forward/gradcheck/gradgradcheck for every
operator; these tests cover what it does not: node names and saved values, the fused fast paths and their
create_graph fallbacks, in-place flags, running statistics, randomness, warnings and error messages.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import assert_close, np, run_both, tg, torch

F_TG = tg.nn.functional
F_T = torch.nn.functional


def _rand(*shape, seed=0, low=-2.0, high=2.0, dtype=np.float64):
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


def _leaf(lib, arr, requires_grad=True):
    return lib.tensor(arr, requires_grad=requires_grad)


def _chain(t) -> list[str]:
    """Node names along the first differentiable edge, as far as it goes."""
    names = []
    fn = t.grad_fn
    while fn is not None:
        names.append(fn.name())
        nxt = [f for f, _ in fn.next_functions if f is not None and "AccumulateGrad" not in f.name()]
        fn = nxt[0] if nxt else None
    return names


# ---- linear ------------------------------------------------------------------------------------------------


def test_linear_graph_matches_torch():
    """2-D input with bias: AddmmBackward0 whose edges are (bias, input, TBackward0 -> weight)."""

    def program(lib):
        x = _leaf(lib, _rand(4, 3))
        w = _leaf(lib, _rand(2, 3, seed=1))
        b = _leaf(lib, _rand(2, seed=2))
        y = lib.nn.functional.linear(x, w, b)
        fns = [f.name() if f is not None else None for f, _ in y.grad_fn.next_functions]
        t_next = y.grad_fn.next_functions[2][0].next_functions[0][0].name()
        no_bias = lib.nn.functional.linear(x, w).grad_fn.name()
        one_d = _chain(lib.nn.functional.linear(x[0], w, b))
        return y.grad_fn.name(), fns, t_next, no_bias, one_d

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("shape", [(5, 3), (3,), (2, 4, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_values_and_grads(shape, bias):
    def program(lib):
        x = _leaf(lib, _rand(*shape))
        w = _leaf(lib, _rand(2, 3, seed=1))
        b = _leaf(lib, _rand(2, seed=2)) if bias else None
        y = lib.nn.functional.linear(x, w, b)
        cot = lib.tensor(_rand(*y.shape, seed=3))
        grads = lib.autograd.grad(y, [x, w] + ([b] if bias else []), cot)
        return y, grads

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


def test_linear_saves_only_what_is_needed():
    """Like torch: mat1 is saved only when the weight needs a grad, the weight only when the input does."""

    def program(lib):
        x = lib.tensor(_rand(4, 3))
        w = _leaf(lib, _rand(2, 3, seed=1))
        b = _leaf(lib, _rand(2, seed=2))
        y = lib.nn.functional.linear(x, w, b)
        return y.grad_fn._saved_mat1 is None, y.grad_fn._saved_mat2 is None

    ours, theirs = run_both(program)
    assert ours == theirs == (False, True)


def test_linear_double_backward():
    def program(lib):
        x = _leaf(lib, _rand(4, 3))
        w = _leaf(lib, _rand(2, 3, seed=1))
        b = _leaf(lib, _rand(2, seed=2))
        y = lib.tanh(lib.nn.functional.linear(x, w, b)).sum()
        gx, gw = lib.autograd.grad(y, [x, w], create_graph=True)
        return lib.autograd.grad((gx * gx).sum() + (gw**3).sum(), [x, w, b])

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)


def test_linear_weight_grad_is_adopted_without_copy(monkeypatch):
    """The weight gradient computed by the fused backward becomes ``weight.grad`` itself (no copy)."""
    from tracegrad.ops.nn_ops import linear as fused

    produced = []
    kernel = fused.linear_backward.kernel

    def spy(*args):
        out = kernel(*args)
        produced.append(out[2].__array_interface__["data"][0])
        return out

    monkeypatch.setattr(fused.linear_backward, "kernel", spy)
    x = tg.tensor(_rand(6, 3, dtype=np.float32))
    lin = tg.nn.Linear(3, 5)
    lin(x).sum().backward()
    g = lin.weight.grad
    assert g._data.flags.c_contiguous and g._data.base is None and g._base is None
    assert produced == [g._data.__array_interface__["data"][0]]


def test_linear_errors():
    x = tg.ones(3, 4)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x2\)"):
        F_TG.linear(x, tg.ones(2, 5))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"):
        F_TG.linear(x, tg.ones(2, 4, dtype=tg.float64))


def test_bilinear_matches_torch():
    def program(lib):
        a = _leaf(lib, _rand(3, 2))
        b = _leaf(lib, _rand(3, 4, seed=1))
        w = _leaf(lib, _rand(5, 2, 4, seed=2))
        bias = _leaf(lib, _rand(5, seed=3))
        y = lib.nn.functional.bilinear(a, b, w, bias)
        return y, lib.autograd.grad(y.sum(), [a, b, w, bias])

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


# ---- activations -------------------------------------------------------------------------------------------

_ACTIVATIONS = [
    ("relu", {}),
    ("relu6", {}),
    ("leaky_relu", {"negative_slope": 0.2}),
    ("elu", {"alpha": 0.7}),
    ("selu", {}),
    ("celu", {"alpha": 1.3}),
    ("gelu", {}),
    ("gelu", {"approximate": "tanh"}),
    ("silu", {}),
    ("mish", {}),
    ("softplus", {"beta": 2.0, "threshold": 3.0}),
    ("hardtanh", {"min_val": -0.5, "max_val": 1.5}),
    ("hardswish", {}),
    ("hardsigmoid", {}),
    ("logsigmoid", {}),
    ("softsign", {}),
    ("tanhshrink", {}),
    ("hardshrink", {"lambd": 0.7}),
    ("softshrink", {"lambd": 0.7}),
    ("sigmoid", {}),
    ("tanh", {}),
]


@pytest.mark.parametrize("name,kwargs", _ACTIVATIONS, ids=[f"{n}-{k}" for n, k in _ACTIVATIONS])
def test_activation_values_grads_and_node_names(name, kwargs):
    def program(lib):
        x = _leaf(lib, _rand(3, 5, low=-4, high=4))
        y = getattr(lib.nn.functional, name)(x, **kwargs)
        (g,) = lib.autograd.grad(y, x, lib.tensor(_rand(3, 5, seed=1)), create_graph=True)
        gg = None
        if name != "hardsigmoid":  # torch has no double backward for hardsigmoid
            (gg,) = lib.autograd.grad(g.sum(), x, allow_unused=True)
        return y, g, gg if gg is not None else lib.zeros(3, 5, dtype=lib.float64), y.grad_fn.name()

    ours, theirs = run_both(program)
    assert ours[3] == theirs[3]  # the node's name
    assert_close(ours[:3], theirs[:3], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "name",
    [
        "relu",
        "leaky_relu",
        "elu",
        "selu",
        "celu",
        "hardtanh",
        "relu6",
        "silu",
        "mish",
        "hardswish",
        "hardsigmoid",
        "threshold",
    ],
)
def test_inplace_flag(name):
    def program(lib):
        x = _leaf(lib, _rand(4, 3, low=-3, high=3))
        y = x.clone()
        f = getattr(lib.nn.functional, name)
        out = f(y, 0.1, 0.0, inplace=True) if name == "threshold" else f(y, inplace=True)
        same = out is y
        (g,) = lib.autograd.grad(out, x, lib.tensor(_rand(4, 3, seed=1)))
        return same, y._version > 0, out, g

    ours, theirs = run_both(program)
    assert ours[0] and ours[1]
    assert_close(ours[2:], theirs[2:], rtol=1e-10, atol=1e-12)


def test_inplace_node_names():
    def program(lib):
        x = _leaf(lib, _rand(3))
        names = []
        for fn in ("relu_", "leaky_relu_", "elu_", "celu_", "selu_"):
            names.append(getattr(lib.nn.functional, fn)(x.clone()).grad_fn.name())
        names.append(lib.nn.functional.threshold_(x.clone(), 0.0, 0.0).grad_fn.name())
        return names

    ours, theirs = run_both(program)
    assert ours == theirs


def test_relu_method_and_top_level():
    x = tg.tensor([-1.0, 2.0])
    assert_close(x.relu(), np.array([0.0, 2.0]))
    assert_close(tg.relu(x), np.array([0.0, 2.0]))
    y = x.clone()
    assert y.relu_() is y


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin"])
def test_softmax_family(fn):
    def program(lib):
        x = _leaf(lib, _rand(2, 3, 4, low=-30, high=30))
        f = getattr(lib.nn.functional, fn)
        y = f(x, dim=1)
        y64 = f(x.float(), dim=-1, dtype=lib.float64)
        (g,) = lib.autograd.grad(y, x, lib.tensor(_rand(2, 3, 4, seed=1)), create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return y, y64.dtype == lib.float64, g, gg, _chain(y64)

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-9)


def test_softmax_implicit_dim_warns():
    x = tg.ones(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        y = F_TG.softmax(x)
    assert_close(y, np.full((2, 3), 1 / 3))


def test_softmax_int_input_errors():
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F_TG.softmax(tg.tensor([1, 2]), 0)


def test_gelu_bad_approximate():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F_TG.gelu(tg.ones(2), approximate="fast")


# ---- losses ------------------------------------------------------------------------------------------------


def _ce_case(lib, kind, reduction, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "kdim":
        x = _leaf(lib, _rand(3, 4, 2, 2, seed=seed))
        t = lib.tensor(rng.integers(0, 4, (3, 2, 2)))
    elif kind == "1d":
        x = _leaf(lib, _rand(4, seed=seed))
        t = lib.tensor(2)
    else:
        x = _leaf(lib, _rand(5, 4, seed=seed))
        t = lib.tensor(np.array([0, 3, 1, 1, 2]))
    return x, t


@pytest.mark.parametrize("kind", ["2d", "kdim", "1d"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    "extras",
    [
        {},
        {"weight": True},
        {"ignore_index": 1},
        {"label_smoothing": 0.2},
        {"weight": True, "ignore_index": 1, "label_smoothing": 0.1},
    ],
)
def test_cross_entropy_variants(kind, reduction, extras):
    def program(lib):
        x, t = _ce_case(lib, kind, reduction)
        kw = dict(extras)
        if kw.pop("weight", False):
            kw["weight"] = lib.tensor(_rand(4, seed=7, low=0.5, high=2.0))
        loss = lib.nn.functional.cross_entropy(x, t, reduction=reduction, **kw)
        (g,) = lib.autograd.grad(loss, x, lib.ones_like(loss), create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return loss, g, gg

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probability_targets(reduction):
    def program(lib):
        x = _leaf(lib, _rand(4, 3, 2))
        p = np.random.default_rng(1).uniform(0.1, 1.0, (4, 3, 2))
        target = _leaf(lib, p / p.sum(axis=1, keepdims=True))
        w = lib.tensor(_rand(3, seed=2, low=0.5, high=2))
        loss = lib.nn.functional.cross_entropy(x, target, weight=w, reduction=reduction, label_smoothing=0.1)
        return loss, lib.autograd.grad(loss, [x, target], lib.ones_like(loss))

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)


def test_cross_entropy_node_name_and_fused_float32():
    """The fused class-index path: float32 values and grads within float rounding of torch."""

    def program(lib):
        x = _leaf(lib, _rand(16, 10, dtype=np.float32))
        t = lib.tensor(np.random.default_rng(0).integers(0, 10, 16))
        loss = lib.nn.functional.cross_entropy(x, t)
        loss.backward()
        return loss, x.grad, loss.grad_fn.name(), loss.dtype == lib.float32

    ours, theirs = run_both(program)
    assert ours[2:] == theirs[2:]
    assert_close(ours[:2], theirs[:2], rtol=1e-6, atol=1e-7)


def _node_record(node) -> tuple:
    """What a loss node holds: class, edges' node classes, sizes, attributes and saved values."""
    saved = [s._data if isinstance(s, tg.Tensor) else s for s in node.saved_tensors]
    return (node.name(), [type(f).__name__ for f, _ in node.next_functions], node._in_meta, node._out_meta,
            node._attrs, saved)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_cross_entropy_inline_recording_matches_the_composed_operators(dtype, reduction, ignore_index):
    """cross_entropy records its two nodes inline for 2-D scores with class indices and no weight: the same
    values bit for bit, node classes, attributes, saved values, sequence order and gradients as
    ``nll_loss(log_softmax(x, 1))`` through the registered operators."""
    x = tg.tensor(_rand(6, 5, dtype=dtype), requires_grad=True)
    t = tg.tensor(np.array([0, 4, 2, 2, 1, 3]))
    inline = F_TG.cross_entropy(x, t, reduction=reduction, ignore_index=ignore_index)
    composed = F_TG.nll_loss(F_TG.log_softmax(x, 1), t, reduction=reduction, ignore_index=ignore_index)
    np.testing.assert_array_equal(inline._data, composed._data)
    assert inline.dtype == composed.dtype and inline.shape == composed.shape
    for a, b in [(inline.grad_fn, composed.grad_fn),
                 (inline.grad_fn.next_functions[0][0], composed.grad_fn.next_functions[0][0])]:
        ra, rb = _node_record(a), _node_record(b)
        assert ra[:5] == rb[:5]
        for sa, sb in zip(ra[5], rb[5]):
            np.testing.assert_array_equal(sa, sb)
    softmax_node = inline.grad_fn.next_functions[0][0]
    assert inline.grad_fn._sequence_nr() == softmax_node._sequence_nr() + 1
    assert inline.grad_fn._saved_self.grad_fn is softmax_node  # the saved log-probabilities keep their history
    seed = tg.ones_like(inline)
    for create_graph in (False, True):
        (g_inline,) = tg.autograd.grad(inline, x, seed, retain_graph=True, create_graph=create_graph)
        (g_composed,) = tg.autograd.grad(composed, x, seed, retain_graph=True, create_graph=create_graph)
        np.testing.assert_array_equal(g_inline._data, g_composed._data)


def test_cross_entropy_inline_recording_only_when_needed():
    x = tg.tensor(_rand(4, 3, dtype=np.float32))
    t = tg.tensor(np.array([0, 2, 1, 1]))
    assert F_TG.cross_entropy(x, t).grad_fn is None
    with tg.no_grad():
        assert F_TG.cross_entropy(x.requires_grad_(), t).grad_fn is None


def test_no_grad_view_of_a_leaf_is_recorded_by_the_fused_paths():
    """A view made under no_grad of a tensor that requires grad requires grad itself: linear, relu and
    cross_entropy record a node for it, as in PyTorch (and, as there, nothing reaches the base's .grad)."""

    def program(lib):
        base = lib.tensor(_rand(8, 3, dtype=np.float32), requires_grad=True)
        with lib.no_grad():
            view = base[:4]
        h = lib.nn.functional.relu(lib.nn.functional.linear(view, lib.ones(3, 3), lib.ones(3)))
        loss = lib.nn.functional.cross_entropy(h, lib.tensor([0, 2, 1, 1]))
        loss.backward()
        return [loss.grad_fn.name(), h.grad_fn.name(), h.grad_fn.next_functions[0][0].name(), base.grad is None]

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_unit_weights_path_is_bit_identical(dtype, reduction):
    """Without a class weight and with nothing ignored, nll_loss skips its row weights; the loss and the
    gradient are the very values an explicit weight of ones gives."""
    lp = tg.tensor(_rand(7, 4, dtype=dtype), requires_grad=True)
    t = tg.tensor(np.array([3, 0, 1, 1, 2, 0, 3]))
    plain = F_TG.nll_loss(lp, t, reduction=reduction)
    weighted = F_TG.nll_loss(lp, t, weight=tg.ones(4, dtype=lp.dtype), reduction=reduction)
    np.testing.assert_array_equal(plain._data, weighted._data)
    seed = tg.tensor(_rand(*plain.shape, seed=3, dtype=dtype))
    (g_plain,) = tg.autograd.grad(plain, lp, seed)
    (g_weighted,) = tg.autograd.grad(weighted, lp, seed)
    np.testing.assert_array_equal(g_plain._data, g_weighted._data)


def test_cross_entropy_all_ignored_is_nan():
    def program(lib):
        return lib.nn.functional.cross_entropy(lib.ones(2, 3), lib.tensor([1, 1]), ignore_index=1)

    ours, theirs = run_both(program)
    assert np.isnan(ours.item()) and np.isnan(theirs.item())


def test_loss_errors():
    x = tg.ones(3, 4)
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F_TG.nll_loss(x, tg.tensor([0, 1, 5]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)."):
        F_TG.cross_entropy(x, tg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        F_TG.cross_entropy(x, tg.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F_TG.mse_loss(x, x, reduction="foo")
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F_TG.binary_cross_entropy(x * 2, x)
    with pytest.raises(ValueError, match="that is different to the input size"):
        F_TG.binary_cross_entropy(x * 0.5, x[0])
    w = tg.ones(4, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="'binary_cross_entropy_with_logits' is not differentiable with respect to argument 'weight'",
    ):
        F_TG.binary_cross_entropy_with_logits(x, x, weight=w)
    with pytest.raises(RuntimeError, match="'nll_loss_forward' is not differentiable with respect to argument"):
        F_TG.cross_entropy(x, tg.tensor([0, 1, 2]), weight=w)


def test_mse_broadcast_warning():
    x = tg.ones(3, 4)
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[4\]\)\) that is different"):
        F_TG.mse_loss(x, tg.zeros(4))


def test_legacy_size_average_reduce():
    def program(lib):
        x = _leaf(lib, _rand(3, 4))
        y = lib.tensor(_rand(3, 4, seed=1))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss = lib.nn.functional.mse_loss(x, y, size_average=False)
        return loss, any("size_average and reduce args will be deprecated" in str(m.message) for m in w)

    ours, theirs = run_both(program)
    assert ours[1] and theirs[1]
    assert_close(ours[0], theirs[0])


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("mse_loss", {}),
        ("l1_loss", {}),
        ("smooth_l1_loss", {"beta": 0.3}),
        ("smooth_l1_loss", {"beta": 0.0}),
        ("huber_loss", {"delta": 0.4}),
        ("mse_loss", {"weight": True}),
        ("l1_loss", {"weight": True}),
        ("huber_loss", {"weight": True}),
    ],
)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(name, kwargs, reduction):
    def program(lib):
        x = _leaf(lib, _rand(3, 4))
        y = _leaf(lib, _rand(3, 4, seed=1))
        kw = dict(kwargs)
        if kw.pop("weight", False):
            kw["weight"] = lib.tensor(_rand(3, 4, seed=2, low=0.1, high=1.0))
        loss = getattr(lib.nn.functional, name)(x, y, reduction=reduction, **kw)
        return loss, lib.autograd.grad(loss, [x, y], lib.ones_like(loss))

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


def test_bce_and_logits_with_weights():
    def program(lib):
        p = _leaf(lib, _rand(3, 4, low=0.05, high=0.95))
        z = _leaf(lib, _rand(3, 4, seed=3))
        t = _leaf(lib, _rand(3, 4, seed=1, low=0, high=1))
        w = lib.tensor(_rand(4, seed=2, low=0.5, high=2))
        pw = lib.tensor(_rand(4, seed=4, low=0.5, high=3))
        a = lib.nn.functional.binary_cross_entropy(p, t, weight=w)
        b = lib.nn.functional.binary_cross_entropy_with_logits(z, t, weight=w, pos_weight=pw, reduction="sum")
        return a, b, lib.autograd.grad(a + b, [p, z, t])

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    def program(lib):
        x = _leaf(lib, np.log(_rand(3, 4, low=0.1, high=1)))
        t = _rand(3, 4, seed=1, low=0.0, high=1)
        t[0, 0] = 0.0
        t = _leaf(lib, np.log(t + 0.5) if log_target else t)
        loss = lib.nn.functional.kl_div(x, t, reduction=reduction, log_target=log_target)
        return loss, lib.autograd.grad(loss, [x, t], lib.ones_like(loss))

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss by both the batch size"):
        F_TG.kl_div(tg.zeros(2, 2), tg.ones(2, 2) * 0.5)


# ---- dropout -----------------------------------------------------------------------------------------------


def test_dropout_reproducible_with_manual_seed():
    tg.manual_seed(123)
    a = F_TG.dropout(tg.ones(100), 0.3)
    tg.manual_seed(123)
    b = F_TG.dropout(tg.ones(100), 0.3)
    assert_close(a, b)
    assert np.all(np.isclose(a.numpy(), 0.0) | np.isclose(a.numpy(), 1 / 0.7))


def test_dropout_identity_cases_and_errors():
    x = tg.ones(3)
    assert F_TG.dropout(x, 0.5, training=False) is x
    assert F_TG.dropout(x, 0.0, training=True) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F_TG.dropout(x, 1.5)
    y = tg.ones(4, 4)
    assert F_TG.dropout(y, 0.5, inplace=True) is y and y._version == 1
    assert F_TG.dropout(tg.ones(2, 3, requires_grad=True), 0.5).grad_fn.name() == "MulBackward0"


def test_dropout2d_zeroes_whole_channels():
    tg.manual_seed(0)
    out = F_TG.dropout2d(tg.ones(8, 16, 3, 3), 0.5).numpy()
    per_channel = out.reshape(8, 16, -1)
    assert np.all((per_channel == 0).all(axis=2) | (per_channel == 2.0).all(axis=2))


# ---- normalisation -----------------------------------------------------------------------------------------


def test_batch_norm_training_updates_running_stats():
    def program(lib):
        x = _leaf(lib, _rand(4, 3, 2, 2))
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        w, b = _leaf(lib, _rand(3, seed=1)), _leaf(lib, _rand(3, seed=2))
        y = lib.nn.functional.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3)
        grads = lib.autograd.grad(y, [x, w, b], lib.tensor(_rand(4, 3, 2, 2, seed=3)))
        y_eval = lib.nn.functional.batch_norm(x, rm, rv, w, b, training=False)
        g_eval = lib.autograd.grad(y_eval.sum(), [x, w, b])
        return y, grads, rm, rv, y_eval, g_eval, y.grad_fn.name()

    ours, theirs = run_both(program)
    assert ours[-1] == theirs[-1]
    assert_close(ours[:-1], theirs[:-1], rtol=1e-9, atol=1e-12)


def test_batch_norm_single_value_per_channel_errors():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F_TG.batch_norm(tg.ones(1, 3), None, None, training=True)


@pytest.mark.parametrize("fn", ["layer_norm", "group_norm", "instance_norm"])
def test_norm_double_backward(fn):
    def program(lib):
        x = _leaf(lib, _rand(2, 4, 3))
        w = _leaf(lib, _rand(4, seed=1) if fn != "layer_norm" else _rand(3, seed=1))
        b = _leaf(lib, _rand(*w.shape, seed=2))
        f = lib.nn.functional
        if fn == "layer_norm":
            y = f.layer_norm(x, (3,), w, b)
        elif fn == "group_norm":
            y = f.group_norm(x, 2, w, b)
        else:
            y = f.instance_norm(x, weight=w, bias=b)
        gs = lib.autograd.grad((y * y * y).sum(), [x, w, b], create_graph=True)
        return y, gs, lib.autograd.grad(sum((g * g).sum() for g in gs), [x, w, b])

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-8, atol=1e-10)


def test_instance_norm_running_stats():
    def program(lib):
        x = lib.tensor(_rand(2, 3, 5))
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        y = lib.nn.functional.instance_norm(x, rm, rv, use_input_stats=True, momentum=0.2)
        return y, rm, rv

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


def test_layer_norm_shape_error():
    with pytest.raises(
        RuntimeError,
        match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but "
        r"got input of size\[3, 5\]",
    ):
        F_TG.layer_norm(tg.ones(3, 5), (4,))


# ---- convolution -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"stride": 2, "padding": 1},
        {"dilation": 2, "padding": 2},
        {"groups": 2},
        {"padding": "same"},
        {"padding": "same", "dilation": 2},
        {"padding": "valid", "stride": (1, 2)},
    ],
)
def test_conv2d(kwargs):
    def program(lib):
        x = _leaf(lib, _rand(2, 4, 7, 6))
        k = 4 if "same" in kwargs.values() else 3
        w = _leaf(lib, _rand(6, 4 // kwargs.get("groups", 1), k, 3, seed=1))
        b = _leaf(lib, _rand(6, seed=2))
        y = lib.nn.functional.conv2d(x, w, b, **kwargs)
        gs = lib.autograd.grad(y, [x, w, b], lib.tensor(_rand(*y.shape, seed=3)), create_graph=True)
        return y, gs, lib.autograd.grad(sum((g * g).sum() for g in gs[:2]), [x, w]), y.grad_fn.name()

    ours, theirs = run_both(program)
    assert ours[-1] == theirs[-1] == "ConvolutionBackward0"
    assert_close(ours[:-1], theirs[:-1], rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"stride": 2, "padding": 1, "output_padding": 1},
        {"groups": 2, "dilation": 2},
        {"stride": (2, 3), "output_padding": (1, 2)},
    ],
)
def test_conv_transpose2d(kwargs):
    def program(lib):
        x = _leaf(lib, _rand(2, 4, 3, 4))
        w = _leaf(lib, _rand(4, 3, 3, 2, seed=1))
        b = _leaf(lib, _rand(3 * kwargs.get("groups", 1), seed=2))
        y = lib.nn.functional.conv_transpose2d(x, w, b, **kwargs)
        gs = lib.autograd.grad(y, [x, w, b], lib.tensor(_rand(*y.shape, seed=3)), create_graph=True)
        return y, gs, lib.autograd.grad(sum((g * g).sum() for g in gs), [x, w])

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
def test_conv1d_unbatched_and_conv_transpose1d():
    def program(lib):
        x = _leaf(lib, _rand(3, 9))
        w = _leaf(lib, _rand(2, 3, 4, seed=1))
        y = lib.nn.functional.conv1d(x, w, padding="same")
        z = lib.nn.functional.conv_transpose1d(y.unsqueeze(0), w, stride=2)
        return y, z, lib.autograd.grad(z.sum(), [x, w])

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-9, atol=1e-10)


def test_conv_errors():
    with pytest.raises(
        RuntimeError,
        match=r"Given groups=1, weight of size \[4, 3, 2, 2\], expected input\[1, 5, 4, 4\] "
        "to have 3 channels, but got 5 channels instead",
    ):
        F_TG.conv2d(tg.ones(1, 5, 4, 4), tg.ones(4, 3, 2, 2))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F_TG.conv2d(tg.ones(1, 1, 2, 2), tg.ones(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        F_TG.conv2d(tg.ones(1, 1, 4, 4), tg.ones(1, 1, 3, 3), stride=2, padding="same")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kernel_size": 2},
        {"kernel_size": (2, 3), "padding": 1, "stride": 2},
        {"kernel_size": 2, "dilation": 2},
    ],
)
def test_unfold_fold_roundtrip(kwargs):
    def program(lib):
        x = _leaf(lib, _rand(2, 3, 5, 6))
        cols = lib.nn.functional.unfold(x, **kwargs)
        back = lib.nn.functional.fold(cols, (5, 6), **kwargs)
        return cols, back, lib.autograd.grad((back * back).sum(), x), cols.grad_fn.name(), back.grad_fn.name()

    ours, theirs = run_both(program)
    assert ours[3:] == theirs[3:]
    assert_close(ours[:3], theirs[:3], rtol=1e-10, atol=1e-12)


# ---- pooling -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kernel_size": 2},
        {"kernel_size": 3, "stride": 2, "padding": 1},
        {"kernel_size": (2, 3), "ceil_mode": True},
        {"kernel_size": 2, "dilation": 2},
    ],
)
def test_max_pool2d_with_indices(kwargs):
    def program(lib):
        x = _leaf(lib, _rand(2, 3, 7, 6))
        y, idx = lib.nn.functional.max_pool2d(x, return_indices=True, **kwargs)
        cot = _leaf(lib, _rand(*y.shape, seed=1))
        (g,) = lib.autograd.grad(y, x, cot, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), cot)
        return y, idx, g, gg, y.grad_fn.name()

    ours, theirs = run_both(program)
    assert ours[-1] == theirs[-1]
    assert_close(ours[:-1], theirs[:-1], rtol=1e-10, atol=1e-12)


def test_max_pool1d_and_avg_pool1d():
    def program(lib):
        x = _leaf(lib, _rand(2, 3, 9))
        a, ia = lib.nn.functional.max_pool1d(x, 3, stride=2, padding=1, return_indices=True)
        b = lib.nn.functional.avg_pool1d(x, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True)
        return a, ia, b, lib.autograd.grad((a * a).sum() + (b * b).sum(), x), _chain(a)[1]

    ours, theirs = run_both(program)
    assert ours[-1] == theirs[-1]
    assert_close(ours[:-1], theirs[:-1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kernel_size": 2},
        {"kernel_size": 3, "stride": 2, "padding": 1},
        {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True},
        {"kernel_size": (2, 3), "divisor_override": 5},
    ],
)
def test_avg_pool2d(kwargs):
    def program(lib):
        x = _leaf(lib, _rand(2, 3, 7, 6))
        y = lib.nn.functional.avg_pool2d(x, **kwargs)
        (g,) = lib.autograd.grad(y, x, lib.tensor(_rand(*y.shape, seed=1)), create_graph=True)
        (gg,) = lib.autograd.grad((g * g * x).sum(), x)
        return y, g, gg

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("size", [3, (2, 4), (None, 3), (7, 6)])
def test_adaptive_avg_pool2d(size):
    def program(lib):
        x = _leaf(lib, _rand(2, 3, 7, 6))
        y = lib.nn.functional.adaptive_avg_pool2d(x, size)
        return y, lib.autograd.grad(y, x, lib.tensor(_rand(*y.shape, seed=1))), y.grad_fn.name()

    ours, theirs = run_both(program)
    assert ours[-1] == theirs[-1]
    assert_close(ours[:-1], theirs[:-1], rtol=1e-10, atol=1e-12)


def test_pool_errors():
    with pytest.raises(
        RuntimeError,
        match="pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1",
    ):
        F_TG.max_pool2d(tg.ones(1, 1, 4, 4), 2, padding=2)


# ---- embedding, padding, resampling, misc ------------------------------------------------------------------


def test_embedding_padding_idx_and_freq():
    def program(lib):
        w = _leaf(lib, _rand(6, 3))
        idx = lib.tensor([[0, 2, 2], [5, 0, 1]])
        y = lib.nn.functional.embedding(idx, w, padding_idx=2, scale_grad_by_freq=True)
        (g,) = lib.autograd.grad(y, w, lib.tensor(_rand(2, 3, 3, seed=1)))
        return y, g, y.grad_fn.name()

    ours, theirs = run_both(program)
    assert ours[-1] == theirs[-1]
    assert_close(ours[:-1], theirs[:-1], rtol=1e-10, atol=1e-12)


def test_embedding_max_norm_renormalises_in_place():
    def program(lib):
        w = lib.tensor(_rand(5, 4, low=-3, high=3))
        idx = lib.tensor([1, 3])
        y = lib.nn.functional.embedding(idx, w, max_norm=1.0)
        return y, w

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-7)


def test_embedding_index_error():
    with pytest.raises(IndexError, match="index out of range in self"):
        F_TG.embedding(tg.tensor([7]), tg.ones(3, 2))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_modes(mode):
    def program(lib):
        x = _leaf(lib, _rand(2, 3, 4, 5))
        kw = {"value": 1.5} if mode == "constant" else {}
        y = lib.nn.functional.pad(x, (1, 2, 2, 0), mode=mode, **kw)
        (g,) = lib.autograd.grad(y, x, lib.tensor(_rand(*y.shape, seed=1)), create_graph=True)
        (gg,) = lib.autograd.grad((g * g * x).sum(), x)
        return y, g, gg

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


def test_pad_negative_crops_and_names():
    def program(lib):
        x = _leaf(lib, _rand(2, 5))
        y = lib.nn.functional.pad(x, (-1, 2))
        r = lib.nn.functional.pad(x.unsqueeze(0), (2, 1), mode="reflect")
        return y, lib.autograd.grad(y.sum(), x), y.grad_fn.name(), r.grad_fn.name()

    ours, theirs = run_both(program)
    assert ours[2:] == theirs[2:]
    assert_close(ours[:2], theirs[:2])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"scale_factor": 2, "mode": "nearest"},
        {"size": (5, 7), "mode": "nearest"},
        {"size": (3, 2), "mode": "nearest"},
        {"scale_factor": 1.7, "mode": "nearest"},
        {"scale_factor": 2, "mode": "bilinear", "align_corners": False},
        {"size": (5, 7), "mode": "bilinear", "align_corners": True},
        {"size": (3, 2), "mode": "bilinear", "align_corners": False},
        {"scale_factor": (1.5, 0.7), "mode": "bilinear", "align_corners": False},
        {"scale_factor": 1.5, "mode": "bilinear", "recompute_scale_factor": True},
        {"size": (2, 3), "mode": "area"},
        {"scale_factor": 2, "mode": "nearest-exact"},
    ],
)
def test_interpolate(kwargs):
    def program(lib):
        x = _leaf(lib, _rand(2, 3, 4, 5))
        y = lib.nn.functional.interpolate(x, **kwargs)
        return y, lib.autograd.grad(y, x, lib.tensor(_rand(*y.shape, seed=1))), y.grad_fn.name()

    ours, theirs = run_both(program)
    assert ours[-1] == theirs[-1]
    assert_close(ours[:-1], theirs[:-1], rtol=1e-9, atol=1e-12)


def test_interpolate_linear_1d():
    def program(lib):
        x = _leaf(lib, _rand(2, 3, 6))
        y = lib.nn.functional.interpolate(x, size=9, mode="linear", align_corners=True)
        return y, lib.autograd.grad(y.sum(), x)

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


def test_one_hot():
    def program(lib):
        a = lib.nn.functional.one_hot(lib.tensor([[0, 2], [1, 3]]))
        b = lib.nn.functional.one_hot(lib.tensor([1, 0]), num_classes=4)
        return a, b, a.dtype == lib.int64

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F_TG.one_hot(tg.tensor([3]), 2)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F_TG.one_hot(tg.tensor([1.0]))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_normalize_cosine_pairwise(p):
    def program(lib):
        x = _leaf(lib, _rand(4, 5))
        y = _leaf(lib, _rand(4, 5, seed=1))
        n = lib.nn.functional.normalize(x, p=p, dim=1)
        c = lib.nn.functional.cosine_similarity(x, y, dim=1)
        d = lib.nn.functional.pairwise_distance(x, y, p=p, keepdim=True)
        return n, c, d, lib.autograd.grad(n.sum() + c.sum() + d.sum(), [x, y])

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)


def test_top_level_aliases():
    x = tg.randn(1, 2, 5, 5)
    w = tg.randn(3, 2, 3, 3)
    assert_close(tg.conv2d(x, w, padding=1), F_TG.conv2d(x, w, padding=1))
    assert_close(tg.softmax(x, 1), x.softmax(1))
    assert_close(tg.log_softmax(x, -1), x.log_softmax(-1))
    assert tg.dropout(x, 0.5, False) is x


# ---- fast paths vs the dispatched forms -------------------------------------------------------------------------


def _mlp_graph_and_grads():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2))
    x = tg.randn(5, 3, requires_grad=True)
    loss = F_TG.cross_entropy(model(x), tg.tensor([0, 1, 1, 0, 1]))
    names = _chain(loss)
    loss.backward()
    return names, [x.grad] + [p.grad for p in model.parameters()]


def test_observed_and_anomaly_runs_build_the_same_graph():
    """An observer or anomaly mode takes the dispatched path: same node names, same gradients."""
    from tracegrad.viz import events

    names, grads = _mlp_graph_and_grads()
    ops = []
    unsubscribe = events.subscribe(lambda kind, payload: ops.append(payload.get("op")) if kind == "op" else None)
    try:
        observed_names, observed_grads = _mlp_graph_and_grads()
    finally:
        unsubscribe()
    assert observed_names == names
    # PyTorch's graph for cross_entropy: NllLossBackward0 -> LogSoftmaxBackward0 -> the logits
    assert names == ["NllLossBackward0", "LogSoftmaxBackward0", "AddmmBackward0", "ReluBackward0", "AddmmBackward0",
                     "TBackward0"]
    assert "linear" in ops and "relu" in ops  # "op" events come from the dispatched path only
    assert_close(observed_grads, grads, rtol=1e-6, atol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tg.autograd.detect_anomaly():
            anomaly_names, anomaly_grads = _mlp_graph_and_grads()
    assert anomaly_names == names
    assert_close(anomaly_grads, grads, rtol=1e-6, atol=1e-7)


def test_fused_backward_respects_in_place_modification():
    """Saved inputs of the hand-built nodes keep PyTorch's version checks."""
    x = tg.randn(4, 3, requires_grad=True)
    lin = tg.nn.Linear(3, 2)
    h = x * 1.0
    y = lin(h)
    with tg.no_grad():
        h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    logits = tg.randn(4, 3, requires_grad=True)
    target = tg.tensor([0, 1, 2, 0])
    loss = F_TG.cross_entropy(logits * 1.0, target)
    target.add_(0)  # bumps the version of a saved input
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.mark.parametrize("bias", [True, False])
def test_linear_saved_mat2_is_the_transposed_weight_as_in_torch(bias):
    """The fused linear keeps the weight itself, but grad_fn._saved_mat2 (and viz) show weight.t() like torch."""
    from tracegrad import viz

    def program(lib):
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 2, bias=bias)
        x = lib.randn(5, 4, requires_grad=True)
        node = lin(x).grad_fn
        mat2 = node._saved_mat2
        is_weight_t = np.array_equal(mat2.detach().numpy(), lin.weight.detach().t().numpy())
        first = node._saved_mat1 if bias else node._saved_self
        return node.name(), tuple(mat2.shape), mat2.grad_fn.name(), is_weight_t, tuple(first.shape)

    ours, theirs = program(tg), program(torch)
    assert ours == theirs and ours[3]
    tg.manual_seed(0)
    lin = tg.nn.Linear(4, 2, bias=bias)
    graph = viz.graph_snapshot(lin(tg.randn(5, 4, requires_grad=True)))
    shapes = {e["name"]: e["shape"] for n in graph["nodes"] for e in n["saved"]}
    assert shapes == {"mat1": [5, 4], "mat2": [4, 2]} if bias else {"self": [5, 4], "mat2": [4, 2]}


def test_linear_saved_tensor_hooks_receive_weight_t_as_in_torch():
    """Under saved_tensors_hooks, linear's node packs PyTorch's mat2, the weight.t() view recorded by TBackward0
    (not the weight the fused fast path keeps), after mat1, and the gradients are unchanged."""

    def program(lib):
        x = lib.tensor(_rand(5, 4), requires_grad=True)
        w = lib.tensor(_rand(3, 4, seed=1), requires_grad=True)
        b = lib.tensor(_rand(3, seed=2), requires_grad=True)
        seen = []

        def pack(t):
            seen.append((tuple(t.shape), t.grad_fn.name() if t.grad_fn is not None else None, t.is_contiguous()))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = F_T.linear(x, w, b) if lib is torch else F_TG.linear(x, w, b)
        mat2 = y.grad_fn._saved_mat2
        grads = lib.autograd.grad(y.sin().sum(), (x, w, b))
        return seen, y.grad_fn.name(), tuple(mat2.shape), mat2.grad_fn.name(), [g.detach().numpy() for g in grads]

    ours, theirs = program(tg), program(torch)
    assert ours[:4] == theirs[:4]
    for a, b in zip(ours[4], theirs[4]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


_NLL_CASES = {
    "2d-mean": lambda L, x, t, w: L.nn.functional.nll_loss(x, t),
    "2d-weight-ignored-mean": lambda L, x, t, w: L.nn.functional.nll_loss(x, t, weight=w, ignore_index=1),
    "2d-weight-sum": lambda L, x, t, w: L.nn.functional.nll_loss(x, t, weight=w, reduction="sum"),
    "2d-none": lambda L, x, t, w: L.nn.functional.nll_loss(x, t, weight=w, reduction="none"),
    "1d": lambda L, x, t, w: L.nn.functional.nll_loss(x[0], t[0]),
    "4d-weight": lambda L, x, t, w: L.nn.functional.nll_loss(x.reshape(2, 5, 2, 1), t.reshape(2, 2, 1), weight=w),
    "3d-ignored": lambda L, x, t, w: L.nn.functional.nll_loss(x.reshape(2, 5, 2), t.reshape(2, 2), ignore_index=3),
    "cross_entropy": lambda L, x, t, w: L.nn.functional.cross_entropy(x, t, ignore_index=1),
    "cross_entropy-weight": lambda L, x, t, w: L.nn.functional.cross_entropy(x, t, weight=w, reduction="sum"),
}


@pytest.mark.parametrize("case", _NLL_CASES)
def test_nll_loss_saves_total_weight_as_torch(case):
    """PyTorch's nll_loss_forward returns (output, total_weight), a non-differentiable output that NllLossBackward0 /
    NllLoss2DBackward0 saves (and packs last); the node takes one gradient, as torch's."""

    def program(lib):
        x = lib.tensor(_rand(4, 5), requires_grad=True)
        t = lib.tensor(np.array([0, 1, 3, 1]))
        w = lib.tensor(_rand(5, low=0.5, high=1.5, seed=3))
        y = _NLL_CASES[case](lib, x, t, w)
        node = y.grad_fn
        while "Nll" not in node.name():  # (past the views around nll_loss2d)
            node = node.next_functions[0][0]
        total = node._saved_total_weight
        with pytest.raises(TypeError, match="expected 1 arguments"):
            node(lib.ones_like(y), None)
        (g,) = lib.autograd.grad(y.sum(), x)
        return node.name(), tuple(total.shape), str(total.dtype), total.requires_grad, total.item(), g.numpy()

    ours, theirs = program(tg), program(torch)
    assert ours[:4] == theirs[:4] and ours[4] == pytest.approx(theirs[4], rel=1e-12)
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-12)


@pytest.mark.parametrize("affine", [False, True])
def test_group_norm_saves_mean_rstd_and_differentiates_through_them_as_torch(affine):
    """native_group_norm's mean and rstd are outputs its node saves (``_saved_result1``/``_saved_result2``); with
    create_graph the gradient is composed from them, so its graph leads back to NativeGroupNormBackward0 and a
    second derivative flows into the statistics, as in PyTorch."""
    from _lib import recorded_graph

    def program(lib):
        x = lib.tensor(_rand(2, 4, 3), requires_grad=True)
        w = lib.tensor(_rand(4, seed=1), requires_grad=True) if affine else None
        b = lib.tensor(_rand(4, seed=2), requires_grad=True) if affine else None
        y = lib.nn.functional.group_norm(x, 2, w, b)
        node = y.grad_fn
        stats = [node._saved_result1.detach().numpy(), node._saved_result2.detach().numpy()]
        inputs = (x, w, b) if affine else (x,)
        seed = lib.tensor(_rand(2, 4, 3, seed=4))
        grads = lib.autograd.grad(y, inputs, seed, create_graph=True)
        graph = recorded_graph(list(grads))
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), inputs, allow_unused=True)
        return node.name(), graph, stats, [None if g is None else g.detach().numpy() for g in grads + second]

    ours, theirs = program(tg), program(torch)
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2] + ours[3], theirs[2] + theirs[3], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_composite_losses_use_scalar_overloads_as_torch():
    """Where PyTorch's C++ composites multiply, add or divide by a number they record the Scalar overloads
    (MulBackward1, AddBackward1, DivBackward1) and keep the number as ``_saved_other``: the same here."""

    def program(lib):
        x = lib.tensor(_rand(4, 5), requires_grad=True)
        p = lib.tensor(np.full((4, 5), 0.2), requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, p, label_smoothing=0.2)
        div_node = loss.grad_fn
        mul_node = div_node.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions[1][0]
        add_node = mul_node
        mul_node = add_node.next_functions[0][0]
        d = lib.nn.functional.pairwise_distance(x, p)
        return [div_node.name(), div_node._saved_other, add_node.name(), mul_node.name(), mul_node._saved_other,
                d.grad_fn.next_functions[0][0].name()]

    ours, theirs = run_both(program)
    assert ours == theirs
