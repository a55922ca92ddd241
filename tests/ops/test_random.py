"""Random operators of ops/random_ops.py.

Values are checked statistically here (means within a few standard errors) and by their support (the
seeded streams themselves are compared with torch's bit for bit in test_random_streams_vs_torch.py); shapes, dtypes, autograd behaviour (which outputs require grad, node names, zero
gradients) and error messages are compared with torch directly.
"""

from __future__ import annotations

import math

import pytest
from _lib import assert_close, np, tg, torch

N = 20000


def _close_mean(values: np.ndarray, mean: float, std: float, k: float = 5.0) -> None:
    err = std / math.sqrt(values.size)
    assert abs(values.mean() - mean) < k * err + 1e-12, (values.mean(), mean, err)


def same_error(fn):
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(tg)
    assert isinstance(got.value, type(want.value)), f"{type(got.value)} vs {type(want.value)}"
    assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


# ---------------------------------------------------------------------------------------------- reproducibility


def test_manual_seed_and_generators_reproduce():
    def draw(gen=None):
        p = tg.full((50,), 0.3)
        return [tg.bernoulli(p, generator=gen), tg.normal(tg.zeros(5), 1.0, generator=gen),
                tg.zeros(5).uniform_(generator=gen), tg.multinomial(tg.ones(6), 3, generator=gen),
                tg.poisson(tg.full((5,), 4.0), generator=gen), tg.zeros(4, dtype=tg.int64).random_(9, generator=gen)]

    tg.manual_seed(123)
    first = draw()
    tg.manual_seed(123)
    assert_close(draw(), first)
    g1, g2 = tg.Generator().manual_seed(7), tg.Generator().manual_seed(7)
    assert_close(draw(g1), draw(g2))


# ---------------------------------------------------------------------------------------------- bernoulli


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bernoulli_tensor_probabilities(dtype):
    tg.manual_seed(0)
    p = tg.full((N,), 0.3, dtype=getattr(tg, dtype))
    out = tg.bernoulli(p)
    assert out.dtype == p.dtype and tuple(out.shape) == (N,)
    v = out.numpy()
    assert set(np.unique(v)) <= {0.0, 1.0}
    _close_mean(v, 0.3, math.sqrt(0.3 * 0.7))
    edge = tg.bernoulli(tg.tensor([0.0, 1.0, 0.0, 1.0]))
    assert_close(edge, np.array([0.0, 1.0, 0.0, 1.0]))


def test_bernoulli_float_p_and_methods():
    tg.manual_seed(1)
    out = tg.bernoulli(tg.zeros(N, dtype=tg.float64), 0.8)
    assert out.dtype == tg.float64
    _close_mean(out.numpy(), 0.8, 0.4)
    x = tg.zeros(N)
    assert x.bernoulli_(0.25) is x
    _close_mean(x.numpy(), 0.25, math.sqrt(0.25 * 0.75))
    probs = np.where(np.arange(N) % 2 == 0, 1.0, 0.0).astype(np.float32)
    y = tg.zeros(N, dtype=tg.int64).bernoulli_(tg.tensor(probs))
    assert y.dtype == tg.int64
    assert_close(y, probs)
    assert_close(tg.ones(3).bernoulli(), np.ones(3))


def test_bernoulli_autograd_matches_torch():
    for lib in (tg, torch):
        p = lib.full((3,), 0.5, requires_grad=True)
        b = lib.bernoulli(p)
        assert b.requires_grad and b.grad_fn.name() == "BernoulliBackward0"
        (g,) = lib.autograd.grad(b.sum(), p)
        assert_close(g, np.zeros(3))
        c = p.clone().bernoulli_(0.5)
        assert c.grad_fn.name() == "BernoulliBackward2"
        (g,) = lib.autograd.grad(c.sum(), p)
        assert_close(g, np.zeros(3))
        d = p.clone().bernoulli_(lib.full((3,), 0.5))
        assert d.grad_fn.name() == "BernoulliBackward1"
    for lib in (tg, torch):  # (bernoulli.p has no formula: torch's autograd fallback's node and error)
        q = lib.full((3,), 0.5, requires_grad=True)
        e = lib.bernoulli(q, 0.3)
        assert e.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="^derivative for aten::bernoulli is not implemented$"):
            e.sum().backward()


BERNOULLI_ERRORS = {
    "int_input": lambda L: L.bernoulli(L.tensor([1, 0])),
    "p_tensor_range": lambda L: L.bernoulli(L.tensor([1.5])),
    "p_float_range": lambda L: L.zeros(3).bernoulli_(1.5),
    "p_float_range_functional": lambda L: L.bernoulli(L.zeros(3), -0.5),
}


@pytest.mark.parametrize("name", sorted(BERNOULLI_ERRORS))
def test_bernoulli_errors(name):
    same_error(BERNOULLI_ERRORS[name])


# ---------------------------------------------------------------------------------------------- normal


def test_normal_overloads_shapes_dtypes_and_statistics():
    tg.manual_seed(2)
    mean = tg.full((N,), 3.0, dtype=tg.float64)
    out = tg.normal(mean, 2.0)
    assert out.dtype == tg.float64
    _close_mean(out.numpy(), 3.0, 2.0)
    assert abs(out.numpy().std() - 2.0) < 0.05
    out = tg.normal(-1.0, tg.full((N,), 0.5))
    assert out.dtype == tg.float32
    _close_mean(out.numpy(), -1.0, 0.5)
    out = tg.normal(tg.zeros(N, 1), tg.ones(1, 2))
    assert tuple(out.shape) == (N, 2)
    out = tg.normal(2.0, 3.0, (N,))
    assert out.dtype == tg.float32
    _close_mean(out.numpy(), 2.0, 3.0)
    assert tg.normal(0, 1, size=(2,), dtype=tg.float64).dtype == tg.float64
    assert tg.normal(mean=tg.ones(2), std=tg.ones(2)).shape == (2,)
    for m, s in [(tg.ones(2), tg.ones(2, dtype=tg.float64)), (tg.ones(2, dtype=tg.float64), tg.ones(2)),
                 (0.0, tg.ones(2, dtype=tg.float64))]:
        tm = torch.tensor(m.numpy()) if isinstance(m, tg.Tensor) else m
        ts = torch.tensor(s.numpy()) if isinstance(s, tg.Tensor) else s
        assert str(tg.normal(m, s).dtype) == str(torch.normal(tm, ts).dtype)


def test_normal_inplace():
    tg.manual_seed(3)
    x = tg.zeros(N, dtype=tg.float64)
    assert x.normal_(5.0, 0.1) is x
    _close_mean(x.numpy(), 5.0, 0.1)


def test_normal_autograd_matches_torch():
    """normal(mean, std) is not reparameterised: recorded, with zero gradients (PyTorch's choice)."""
    names = {}
    for lib in (tg, torch):
        p = lib.full((3,), 0.5, requires_grad=True)
        outs = {"tt": lib.normal(p, p * 2), "tf": lib.normal(p, 1.0), "ft": lib.normal(0.0, p),
                "inplace": p.clone().normal_()}
        names[lib] = {k: o.grad_fn.name() for k, o in outs.items()}
        for o in outs.values():
            (g,) = lib.autograd.grad(o.sum(), p)
            assert_close(g, np.zeros(3))
    assert names[tg] == names[torch]


NORMAL_ERRORS = {
    "std_negative": lambda L: L.normal(L.ones(3), -1.0),
    "std_tensor_negative": lambda L: L.normal(L.ones(3), L.tensor([-1.0, 1, 1])),
    "broadcast": lambda L: L.normal(L.ones(3), L.ones(2)),
    "int_mean": lambda L: L.normal(L.tensor([1, 2]), 1.0),
    "int_std": lambda L: L.normal(0.0, L.tensor([1, 2])),
    "inplace_std": lambda L: L.zeros(3).normal_(1, -1),
    "inplace_int": lambda L: L.zeros(3, dtype=L.int64).normal_(),
}


@pytest.mark.parametrize("name", sorted(NORMAL_ERRORS))
def test_normal_errors(name):
    same_error(NORMAL_ERRORS[name])


# ---------------------------------------------------------------------------------------------- other samplers


def test_uniform_exponential_geometric_lognormal_cauchy():
    tg.manual_seed(4)
    u = tg.zeros(N, dtype=tg.float64).uniform_(2.0, 5.0)
    v = u.numpy()
    assert v.min() >= 2.0 and v.max() < 5.0
    _close_mean(v, 3.5, 3 / math.sqrt(12))
    w = tg.zeros(N).uniform_(**{"from": -1.0, "to": 0.0})
    assert w.numpy().max() < 0.0
    e = tg.zeros(N, dtype=tg.float64).exponential_(4.0).numpy()
    assert e.min() >= 0
    _close_mean(e, 0.25, 0.25)
    g = tg.zeros(N, dtype=tg.float64).geometric_(0.25).numpy()
    assert g.min() >= 1 and np.all(g == np.round(g))
    _close_mean(g, 4.0, math.sqrt(0.75) / 0.25)
    gi = tg.zeros(5, dtype=tg.int64).geometric_(0.5)
    assert gi.dtype == tg.int64 and gi.numpy().min() >= 1
    ln = tg.zeros(N, dtype=tg.float64).log_normal_(0.0, 0.5).numpy()
    assert ln.min() > 0
    _close_mean(np.log(ln), 0.0, 0.5)
    c = tg.zeros(N, dtype=tg.float64).cauchy_(2.0, 1.0).numpy()
    assert abs(np.median(c) - 2.0) < 0.1


def test_inplace_samplers_autograd_matches_torch():
    names = {}
    for lib in (tg, torch):
        p = lib.full((3,), 0.5, requires_grad=True)
        outs = {"uniform": p.clone().uniform_(), "exponential": p.clone().exponential_(),
                "geometric": p.clone().geometric_(0.5), "random": p.clone().random_(),
                "random_to": p.clone().random_(5), "random_from": p.clone().random_(1, 4),
                "log_normal": p.clone().log_normal_(), "cauchy": p.clone().cauchy_()}
        names[lib] = {k: o.grad_fn.name() for k, o in outs.items()}
        for o in outs.values():
            (g,) = lib.autograd.grad(o.sum(), p)
            assert_close(g, np.zeros(3))
    assert names[tg] == names[torch]


def test_inplace_sampler_on_leaf_requiring_grad_raises():
    x = tg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.uniform_()


def test_random_ranges():
    tg.manual_seed(5)
    a = tg.zeros(N, dtype=tg.int64).random_(5, 10).numpy()
    assert a.min() == 5 and a.max() == 9
    b = tg.zeros(N, dtype=tg.int32).random_(3)
    assert b.dtype == tg.int32 and set(np.unique(b.numpy())) == {0, 1, 2}
    c = tg.zeros(N).random_().numpy()
    assert c.min() >= 0 and c.max() <= 2 ** 24 and np.all(c == np.round(c)) and c.max() > 2 ** 20
    d = tg.zeros(N, dtype=tg.bool).random_().numpy()
    assert set(np.unique(d)) == {False, True}
    e = tg.zeros(N, dtype=tg.float64).random_(-3, -1).numpy()
    assert set(np.unique(e)) == {-3.0, -2.0}
    f = tg.zeros(100, dtype=tg.float64).random_(3, None).numpy()
    assert f.min() >= 3 and f.max() > 2 ** 40
    h = tg.zeros(N, dtype=tg.uint8).random_().numpy()
    assert h.max() > 250
    k = tg.zeros(10, dtype=tg.int64).random_(**{"from": 2, "to": 4}).numpy()
    assert set(np.unique(k)) <= {2, 3}
    wide = tg.zeros(N, dtype=tg.int64).random_(-5, None).numpy()  # a span wider than int64
    assert wide.min() >= -5 and wide.max() > 2 ** 60
    small = tg.zeros(N, dtype=tg.int8).random_(-128, None).numpy()
    assert small.min() == -128 and small.max() == 127


RANDOM_ERRORS = {
    "uniform_order": lambda L: L.zeros(3).uniform_(2, 1),
    "uniform_int": lambda L: L.zeros(3, dtype=L.int64).uniform_(),
    "exponential_lambda": lambda L: L.zeros(3).exponential_(-1),
    "exponential_zero": lambda L: L.zeros(3).exponential_(0),
    "exponential_int": lambda L: L.zeros(3, dtype=L.int64).exponential_(),
    "random_order": lambda L: L.zeros(3, dtype=L.int64).random_(5, 3),
    "random_to_negative": lambda L: L.zeros(2, dtype=L.float64).random_(-3),
    "random_uint8_bound": lambda L: L.zeros(3, dtype=L.uint8).random_(0, 300),
    "geometric_p": lambda L: L.zeros(3).geometric_(1.3),
    "poisson_int": lambda L: L.poisson(L.tensor([1, 2])),
    "poisson_negative": lambda L: L.poisson(L.tensor([-1.0, 2.0])),
}


@pytest.mark.parametrize("name", sorted(RANDOM_ERRORS))
def test_sampler_errors(name):
    same_error(RANDOM_ERRORS[name])


# ---------------------------------------------------------------------------------------------- poisson


def test_poisson():
    tg.manual_seed(6)
    rates = tg.full((N,), 4.0, dtype=tg.float64)
    out = tg.poisson(rates)
    assert out.dtype == tg.float64
    v = out.numpy()
    assert np.all(v == np.round(v)) and v.min() >= 0
    _close_mean(v, 4.0, 2.0)
    assert_close(tg.poisson(tg.zeros(3)), np.zeros(3))
    for lib in (tg, torch):
        p = lib.full((3,), 2.0, requires_grad=True)
        o = lib.poisson(p)
        assert o.grad_fn.name() == "PoissonBackward0"
        (g,) = lib.autograd.grad(o.sum(), p)
        assert_close(g, np.zeros(3))


# ---------------------------------------------------------------------------------------------- multinomial


def test_multinomial_without_replacement():
    tg.manual_seed(7)
    for _ in range(20):
        s = tg.multinomial(tg.tensor([0.1, 0.0, 0.5, 0.2, 0.2]), 4).numpy()
        assert s.dtype == np.int64 and len(set(s.tolist())) == 4 and 1 not in s.tolist()
    # once the non-zero categories are used up, zero-probability ones follow
    s = tg.multinomial(tg.tensor([0.0, 1.0, 0.0, 1.0]), 3).numpy()
    assert set(s[:2].tolist()) == {1, 3} and s[2] in (0, 2)
    two_d = tg.multinomial(tg.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]), 1)
    assert_close(two_d, np.array([[2], [0]]), check_dtype=True)


def test_multinomial_with_replacement_frequencies():
    tg.manual_seed(8)
    p = np.array([0.2, 0.0, 0.5, 0.3])
    s = tg.multinomial(tg.tensor(p * 3), N, replacement=True).numpy()
    assert s.shape == (N,) and 1 not in s
    for k in (0, 2, 3):
        _close_mean((s == k).astype(float), p[k], math.sqrt(p[k] * (1 - p[k])))
    many = tg.multinomial(tg.ones(2, 3), 7, True)
    assert tuple(many.shape) == (2, 7) and many.dtype == tg.int64


def test_multinomial_never_requires_grad():
    p = tg.full((4,), 0.25, requires_grad=True)
    assert not tg.multinomial(p, 2).requires_grad
    assert not p.multinomial(2, replacement=True).requires_grad


MULTINOMIAL_ERRORS = {
    "too_many": lambda L: L.multinomial(L.tensor([0.2, 0.8]), 3),
    "zero_samples": lambda L: L.multinomial(L.tensor([0.2, 0.8]), 0),
    "negative": lambda L: L.multinomial(L.tensor([0.2, -0.8]), 1),
    "inf": lambda L: L.multinomial(L.tensor([0.0, 1, float("inf")]), 1),
    "nan": lambda L: L.multinomial(L.tensor([0.0, 1, float("nan")]), 1),
    "zero_sum": lambda L: L.multinomial(L.tensor([0.0, 0.0]), 1),
    "0d": lambda L: L.multinomial(L.tensor(1.0), 1),
    "int": lambda L: L.multinomial(L.tensor([1, 2]), 1),
}


@pytest.mark.parametrize("name", sorted(MULTINOMIAL_ERRORS))
def test_multinomial_errors(name):
    same_error(MULTINOMIAL_ERRORS[name])


# ---------------------------------------------------------------------------------------------- out=


def test_out_variants():
    out = tg.empty(4)
    assert tg.bernoulli(tg.ones(4), out=out) is out
    assert_close(out, np.ones(4))
    out = tg.empty(3)
    assert tg.normal(tg.zeros(3), 0.0, out=out) is out
    assert_close(out, np.zeros(3))
    out = tg.empty(2, dtype=tg.int64)
    assert tg.multinomial(tg.tensor([0.0, 1.0, 1.0]), 2, out=out) is out
    assert sorted(out.tolist()) == [1, 2]
    out = tg.empty(2)
    assert tg.poisson(tg.zeros(2), out=out) is out
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tg.bernoulli(tg.full((2,), 0.5, requires_grad=True), out=tg.empty(2))
