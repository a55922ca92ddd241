"""pdist, channel_shuffle, rrelu, gumbel_softmax, local_response_norm, lp_pool and their modules against torch.

Deterministic configurations (values, gradients, graphs, saved values, forward AD) are OpInfo entries in
tests/opinfo/db_nn.py. Here: what the database cannot hold - the random ones (rrelu in training, gumbel_softmax:
tracegrad's generator does not reproduce torch's stream, so their distributions and properties are compared,
and reproducibility under manual_seed), the recorded graphs of those, errors in torch's words, and the modules.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_close, recorded_graph, tg, to_numpy, torch


def _both(program):
    return program(tg), program(torch)


def _same_error(program) -> None:
    """Both libraries raise, with the same message; ours is an instance of torch's exception's base class
    (torch reports a dtype its kernel lacks as NotImplementedError, a RuntimeError subclass)."""
    with pytest.raises(Exception) as theirs:
        program(torch)
    expected = theirs.type if theirs.type is not NotImplementedError else RuntimeError
    with pytest.raises(expected) as ours:
        program(tg)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def _values(lib, shape, seed=0, low=-2.0, high=2.0, requires_grad=False, dtype="float64"):
    data = np.random.RandomState(seed).uniform(low, high, size=shape).astype(dtype)
    return lib.tensor(data, requires_grad=requires_grad)


# ---- rrelu in training: random slopes -----------------------------------------------------------------------


@pytest.mark.parametrize("lower,upper", [(1 / 8, 1 / 3), (0.05, 0.6)])
def test_rrelu_training_slopes_and_gradient(lower, upper):
    """Negative elements get a slope from U(lower, upper), positive ones 1: in both libraries the output is
    x * slope, the slopes spread over the interval with mean (lower + upper) / 2, and the gradient is the slope."""
    for lib in (tg, torch):
        x = _values(lib, (200, 100), requires_grad=True)
        y = lib.nn.functional.rrelu(x, lower, upper, training=True)
        (g,) = lib.autograd.grad(y.sum(), x)
        xv, yv, gv = to_numpy(x), to_numpy(y), to_numpy(g)
        neg = xv <= 0
        np.testing.assert_allclose(yv, xv * gv, rtol=1e-12)
        assert np.all(gv[~neg] == 1)
        slopes = gv[neg]
        assert slopes.min() >= lower and slopes.max() <= upper
        assert abs(slopes.mean() - (lower + upper) / 2) < 0.01 * (upper - lower) + 1e-3
        assert abs(slopes.std() - (upper - lower) / np.sqrt(12)) < 0.02 * (upper - lower)
        assert slopes.min() < lower + 0.01 * (upper - lower) and slopes.max() > upper - 0.01 * (upper - lower)


def test_rrelu_training_is_reproducible_under_manual_seed():
    x = _values(tg, (4, 5))
    tg.manual_seed(7)
    a = tg.nn.functional.rrelu(x, training=True)
    tg.manual_seed(7)
    b = tg.rrelu(x, training=True)
    c = tg.nn.functional.rrelu(x, training=True)  # the generator moved on
    assert np.array_equal(to_numpy(a), to_numpy(b))
    assert not np.array_equal(to_numpy(a), to_numpy(c))
    gen = tg.Generator()
    gen.manual_seed(3)
    d = tg.rrelu(x, training=True, generator=gen)
    gen.manual_seed(3)
    assert np.array_equal(to_numpy(d), to_numpy(tg.rrelu(x, training=True, generator=gen)))


def test_rrelu_inplace_training_writes_self_and_saves_result():
    def program(lib):
        x = _values(lib, (3, 4), requires_grad=True)
        c = x.clone()
        y = lib.nn.functional.rrelu(c, training=True, inplace=True)
        assert y is c
        (g,) = lib.autograd.grad(y.sum(), x)
        np.testing.assert_allclose(to_numpy(y), to_numpy(x) * to_numpy(g), rtol=1e-12)
        node = y.grad_fn
        return (recorded_graph([y]), sorted(a for a in dir(node) if a.startswith("_saved_")),
                node._saved_lower, node._saved_upper, node._saved_training)

    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("training", [True, False])
def test_rrelu_double_backward_graph_matches_torch(training):
    def program(lib):
        x = _values(lib, (3, 4), requires_grad=True)
        y = lib.nn.functional.rrelu(x, training=training)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, allow_unused=True)
        return (recorded_graph([y]), recorded_graph([g]), sorted(a for a in dir(g.grad_fn) if a.startswith("_saved_")),
                to_numpy(gg))

    ours, theirs = _both(program)
    assert ours[:3] == theirs[:3]
    assert_close(ours[3], theirs[3])


def test_rrelu_module_eval_matches_torch_and_training_is_random():
    x = np.random.RandomState(1).uniform(-2, 2, size=(3, 5)).astype("float32")
    ours, theirs = tg.nn.RReLU(0.1, 0.3), torch.nn.RReLU(0.1, 0.3)
    ours.eval()
    theirs.eval()
    assert_close(ours(tg.tensor(x)), theirs(torch.tensor(x)), rtol=1e-6, atol=1e-7)
    ours.train()
    y = to_numpy(ours(tg.tensor(x)))
    slopes = y[x < 0] / x[x < 0]
    assert np.all((slopes >= 0.1 - 1e-6) & (slopes <= 0.3 + 1e-6))
    assert np.array_equal(y[x > 0], x[x > 0])


@pytest.mark.parametrize("training", [True, False])
def test_rrelu_errors_match_torch(training):
    _same_error(lambda lib: lib.nn.functional.rrelu(lib.ones(3), 0.5, 0.1, training=training))
    _same_error(lambda lib: lib.nn.functional.rrelu(lib.ones(3, dtype=lib.int64), training=training))


# ---- gumbel_softmax ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dim,tau", [(-1, 1), (0, 0.5)])
def test_gumbel_softmax_graph_matches_torch(hard, dim, tau):
    def program(lib):
        logits = _values(lib, (3, 4), requires_grad=True)
        out = lib.nn.functional.gumbel_softmax(logits, tau=tau, hard=hard, dim=dim)
        return recorded_graph([out]), tuple(out.shape), out.requires_grad

    ours, theirs = _both(program)
    assert ours == theirs


def test_gumbel_softmax_samples_and_straight_through_gradient():
    logits = _values(tg, (5, 4), requires_grad=True)
    weights = _values(tg, (5, 4), seed=1)
    tg.manual_seed(3)
    soft = tg.nn.functional.gumbel_softmax(logits, tau=0.7)
    tg.manual_seed(3)
    hard = tg.nn.functional.gumbel_softmax(logits, tau=0.7, hard=True)
    s, h = to_numpy(soft), to_numpy(hard)
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-12)
    assert np.all(s > 0)
    assert np.array_equal(h, np.eye(4)[s.argmax(-1)])  # one-hot at the soft sample's largest entry
    (g_soft,) = tg.autograd.grad((soft * weights).sum(), logits)
    (g_hard,) = tg.autograd.grad((hard * weights).sum(), logits)
    assert_close(g_hard, g_soft, rtol=1e-12, atol=1e-12)  # straight through: the soft sample's gradient


def test_gumbel_softmax_hard_samples_follow_softmax_of_logits():
    """The Gumbel-max trick: the one-hot sample picks class i with probability softmax(logits)_i, in both."""
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    rows = np.tile(logits, (20000, 1))
    for lib in (tg, torch):
        lib.manual_seed(0)
        sample = to_numpy(lib.nn.functional.gumbel_softmax(lib.tensor(rows), hard=True))
        np.testing.assert_allclose(sample.mean(0), [0.1, 0.2, 0.3, 0.4], atol=0.015)


def test_gumbel_softmax_is_reproducible_and_warns_about_eps():
    logits = _values(tg, (2, 6))
    tg.manual_seed(11)
    a = tg.nn.functional.gumbel_softmax(logits)
    tg.manual_seed(11)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
        b = tg.nn.functional.gumbel_softmax(logits, eps=1e-3)
    assert np.array_equal(to_numpy(a), to_numpy(b))


# ---- channel_shuffle, pdist, local_response_norm, lp_pool: the rest ----------------------------------------


def test_native_channel_shuffle_has_no_derivative():
    def program(lib):
        x = _values(lib, (2, 6, 3), requires_grad=True)
        y = lib.nn.functional.native_channel_shuffle(x, 3)
        assert_close(y, lib.channel_shuffle(x, 3))
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        return y.grad_fn.name(), str(info.value), to_numpy(y)

    ours, theirs = _both(program)
    assert ours[:2] == theirs[:2]
    assert_close(ours[2], theirs[2])


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.functional.channel_shuffle(lib.ones(2, 5, 3), 2),
    lambda lib: lib.nn.functional.channel_shuffle(lib.ones(2, 6), 0),
    lambda lib: lib.nn.functional.channel_shuffle(lib.ones(2, 6, 3), 0),
    lambda lib: lib.nn.functional.native_channel_shuffle(lib.ones(2, 6, 3), -2),
    lambda lib: lib.pdist(lib.ones(2, 3, 4)),
    lambda lib: lib.nn.functional.pdist(lib.ones(3)),
    lambda lib: lib.pdist(lib.ones(3, 2, dtype=lib.int64)),
    lambda lib: lib.pdist(lib.ones(3, 2), p=-1),
    lambda lib: lib.nn.functional.local_response_norm(lib.ones(2, 3), 2),
    lambda lib: lib.nn.functional.lp_pool1d(lib.ones(1, 3, 8, 8), 2, 2),
    lambda lib: lib.nn.functional.lp_pool1d(lib.ones(1, 3, 8, 8), float("inf"), 2),
], ids=["cs_groups_divide", "cs_dims_first", "cs_groups_positive", "native_cs_negative", "pdist_3d", "pdist_1d",
        "pdist_int", "pdist_negative_p", "lrn_2d", "lp_pool1d_4d", "lp_pool1d_inf_4d"])
def test_errors_match_torch(program):
    _same_error(program)


def test_pdist_double_backward_raises_as_torch():
    def program(lib):
        x = _values(lib, (4, 3), requires_grad=True)
        (g,) = lib.autograd.grad(lib.pdist(x).sum(), x, create_graph=True)
        with pytest.raises(NotImplementedError) as info:
            lib.autograd.grad(g.sum(), x)
        return g.grad_fn.name(), str(info.value)

    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("shape", [(1, 3), (3, 0)])  # ((0, 3): torch 2.13's backward crashes the process)
def test_pdist_degenerate_shapes(shape):
    def program(lib):
        x = lib.zeros(*shape, requires_grad=True)
        y = lib.pdist(x)
        y.sum().backward()
        return to_numpy(y), to_numpy(x.grad), y.grad_fn.name()

    ours, theirs = _both(program)
    assert ours[2] == theirs[2]
    assert_close(ours[:2], theirs[:2])


def test_empty_inputs_match_torch():
    def program(lib):
        x = lib.ones(0, 6, 3, requires_grad=True)
        return (tuple(lib.channel_shuffle(x, 2).shape), lib.nn.functional.local_response_norm(x, 3) is x)

    ours, theirs = _both(program)
    assert ours == theirs


@pytest.mark.parametrize("norm_type", [float("inf"), -float("inf")])
@pytest.mark.parametrize("fn,shape", [("lp_pool1d", (1, 2, 8)), ("lp_pool2d", (1, 2, 4, 4))])
def test_lp_pool_infinite_norm_is_max_pool_of_abs(fn, shape, norm_type):
    def program(lib):
        x = _values(lib, shape, requires_grad=True)
        y = getattr(lib.nn.functional, fn)(x, norm_type, 2)
        (g,) = lib.autograd.grad(y.sum(), x)
        return recorded_graph([y]), to_numpy(y), to_numpy(g)

    ours, theirs = _both(program)
    assert ours[0] == theirs[0]
    assert_close(ours[1:], theirs[1:])


# ---- modules -----------------------------------------------------------------------------------------------

MODULES = [
    ("ChannelShuffle", (3,), {}, (2, 6, 2, 2)),
    ("RReLU", (), {}, (3, 4)),
    ("RReLU", (0.1, 0.3, True), {}, (3, 4)),
    ("LocalResponseNorm", (3,), {}, (2, 5, 4)),
    ("LocalResponseNorm", (2,), {"alpha": 0.5, "beta": 0.6, "k": 2.0}, (2, 4, 3, 3)),
    ("LPPool1d", (2, 3), {}, (2, 3, 7)),
    ("LPPool1d", (1.5, 2), {"stride": 1, "ceil_mode": True}, (3, 6)),
    ("LPPool2d", (2, (2, 3)), {"stride": 2}, (1, 2, 5, 6)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", MODULES,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_module_repr_and_forward_match_torch(name, args, kwargs, shape):
    def program(lib):
        module = getattr(lib.nn, name)(*args, **kwargs)
        module.eval()  # (RReLU: deterministic slopes)
        x = _values(lib, shape, low=0.1, requires_grad=True)  # (fractional powers of positive values)
        y = module(x.clone() if getattr(module, "inplace", False) else x)
        (g,) = lib.autograd.grad(y.sum(), x)
        return repr(module), recorded_graph([y]), to_numpy(y), to_numpy(g)

    ours, theirs = _both(program)
    assert ours[:2] == theirs[:2]
    assert_close(ours[2:], theirs[2:], rtol=1e-10, atol=1e-12)


def test_functions_are_where_torch_has_them():
    for name in ("pdist", "channel_shuffle", "native_channel_shuffle", "rrelu", "rrelu_"):
        assert callable(getattr(tg, name)) and callable(getattr(tg.nn.functional, name))
    for name in ("gumbel_softmax", "local_response_norm", "lp_pool1d", "lp_pool2d", "max_pool1d_with_indices",
                 "max_pool2d_with_indices", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices"):
        assert name in tg.nn.functional.__all__
    for name in ("ChannelShuffle", "RReLU", "LocalResponseNorm", "LPPool1d", "LPPool2d"):
        assert name in tg.nn.modules.__all__ and getattr(tg.nn, name) is getattr(tg.nn.modules, name)
