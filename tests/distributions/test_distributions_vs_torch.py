"""tracegrad.distributions against torch.distributions: everything deterministic (log_prob, entropy, cdf/icdf,
moments, KL and their gradients, shapes, reprs, validation errors) and seeded statistics of the samples."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg

TD, GD = torch.distributions, tg.distributions


def _pair(values):
    """The same float64 leaf in both libraries."""
    arr = np.asarray(values, dtype=np.float64)
    return tg.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)


def _close(a, b, tol=1e-6):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# name -> (param values, value to score, builder(lib, *params))
CASES = {
    "Normal": ([[0.3, -1.0], [1.5, 0.7]], [0.2, 0.9], lambda d, a, b: d.Normal(a, b)),
    "Laplace": ([[0.3, -1.0], [1.5, 0.7]], [0.2, 0.9], lambda d, a, b: d.Laplace(a, b)),
    "Cauchy": ([[0.3, -1.0], [1.5, 0.7]], [0.2, 0.9], lambda d, a, b: d.Cauchy(a, b)),
    "Uniform": ([[0.0, -1.0], [1.5, 0.7]], [0.2, 0.1], lambda d, a, b: d.Uniform(a, b)),
    "Exponential": ([[0.5, 2.0]], [0.2, 0.9], lambda d, a: d.Exponential(a)),
    "Gamma": ([[0.5, 2.0], [1.5, 0.7]], [0.2, 0.9], lambda d, a, b: d.Gamma(a, b)),
    "Chi2": ([[0.5, 3.0]], [0.2, 0.9], lambda d, a: d.Chi2(a)),
    "StudentT": ([[2.5, 3.0], [0.1, 0.2], [1.0, 2.0]], [0.2, 0.9], lambda d, a, b, c: d.StudentT(a, b, c)),
    "Beta": ([[0.5, 2.0], [1.5, 0.7]], [0.2, 0.9], lambda d, a, b: d.Beta(a, b)),
    "Dirichlet": ([[[0.5, 2.0, 1.0], [1.5, 0.7, 3.0]]], [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]],
                  lambda d, a: d.Dirichlet(a)),
    "LogNormal": ([[0.3, -1.0], [1.5, 0.7]], [0.2, 0.9], lambda d, a, b: d.LogNormal(a, b)),
    "HalfNormal": ([[1.5, 0.7]], [0.2, 0.9], lambda d, a: d.HalfNormal(a)),
    "Gumbel": ([[0.3, -1.0], [1.5, 0.7]], [0.2, 0.9], lambda d, a, b: d.Gumbel(a, b)),
    "Bernoulli": ([[0.3, 0.8]], [1.0, 0.0], lambda d, a: d.Bernoulli(a)),
    "BernoulliLogits": ([[0.3, -0.8]], [1.0, 0.0], lambda d, a: d.Bernoulli(logits=a)),
    "Geometric": ([[0.3, 0.8]], [3.0, 0.0], lambda d, a: d.Geometric(a)),
    "Poisson": ([[0.3, 4.0]], [3.0, 0.0], lambda d, a: d.Poisson(a)),
    "Binomial": ([[0.3, 0.6]], [3.0, 0.0], lambda d, a: d.Binomial(5, a)),
    "Categorical": ([[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]], [2.0, 0.0], lambda d, a: d.Categorical(a)),
    "CategoricalLogits": ([[[0.2, -0.3, 0.5]]], [2.0], lambda d, a: d.Categorical(logits=a)),
    "OneHotCategorical": ([[[0.2, 0.3, 0.5]]], [0.0, 1.0, 0.0], lambda d, a: d.OneHotCategorical(a)),
    "Multinomial": ([[[0.2, 0.3, 0.5]]], [1.0, 3.0, 0.0], lambda d, a: d.Multinomial(4, a)),
    "MultivariateNormal": ([[0.3, -1.0], [[2.0, 0.3], [0.3, 1.0]]], [0.2, 0.9],
                           lambda d, a, b: d.MultivariateNormal(a, covariance_matrix=b)),
    "MVNPrecision": ([[0.3, -1.0], [[2.0, 0.3], [0.3, 1.0]]], [[0.2, 0.9], [1.0, 1.0]],
                     lambda d, a, b: d.MultivariateNormal(a, precision_matrix=b)),
    "MVNScaleTril": ([[0.3, -1.0], [[2.0, 0.0], [0.3, 1.0]]], [0.2, 0.9],
                     lambda d, a, b: d.MultivariateNormal(a, scale_tril=b)),
    "Independent": ([[[0.3, -1.0]], [[1.5, 0.7]]], [[0.2, 0.9]], lambda d, a, b: d.Independent(d.Normal(a, b), 1)),
    "RelaxedBernoulli": ([[0.3, 0.8]], [0.2, 0.9], lambda d, a: d.RelaxedBernoulli(d_t(d), a)),
    "RelaxedOneHotCategorical": ([[[0.2, 0.3, 0.5]]], [0.2, 0.3, 0.5],
                                 lambda d, a: d.RelaxedOneHotCategorical(d_t(d), a)),
}


def d_t(d):
    """A 0.7 temperature tensor of the library ``d`` belongs to."""
    return (tg if d is GD else torch).tensor(0.7, dtype=(tg if d is GD else torch).float64)


def _build(name):
    params, value, make = CASES[name]
    pairs = [_pair(p) for p in params]
    ours = make(GD, *[p[0] for p in pairs])
    ref = make(TD, *[p[1] for p in pairs])
    return ours, ref, [p[0] for p in pairs], [p[1] for p in pairs], value


def _grads_match(out_ours, out_ref, ours_params, ref_params):
    g1 = tg.autograd.grad(out_ours.sum(), ours_params, allow_unused=True, retain_graph=True)
    g2 = torch.autograd.grad(out_ref.sum(), ref_params, allow_unused=True, retain_graph=True)
    for a, b in zip(g1, g2):
        if b is None:
            assert a is None or not a.numpy().any()
        else:
            _close(a, b)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_entropy_moments_and_grads(name):
    ours, ref, p1, p2, value = _build(name)
    assert ours.batch_shape == ref.batch_shape and ours.event_shape == ref.event_shape
    lp1, lp2 = ours.log_prob(tg.tensor(value, dtype=tg.float64)), ref.log_prob(torch.tensor(value, dtype=torch.float64))
    _close(lp1, lp2)
    _grads_match(lp1, lp2, p1, p2)
    try:
        h2 = ref.entropy()
    except NotImplementedError:
        h2 = None
    if h2 is not None:
        h1 = ours.entropy()
        _close(h1, h2)
        _grads_match(h1, h2, p1, p2)
    for attr in ("mean", "variance", "mode", "stddev"):
        try:
            want = getattr(ref, attr)
        except NotImplementedError:
            continue
        _close(getattr(ours, attr), want)
    assert ours.has_rsample == ref.has_rsample
    assert repr(ours.support) == repr(ref.support)


@pytest.mark.parametrize("name", ["Normal", "Laplace", "Cauchy", "Uniform", "Exponential", "HalfNormal",
                                  "LogNormal", "Gamma"])
def test_cdf_icdf(name):
    ours, ref, p1, p2, value = _build(name)
    v1, v2 = tg.tensor(value, dtype=tg.float64), torch.tensor(value, dtype=torch.float64)
    c1, c2 = ours.cdf(v1), ref.cdf(v2)
    _close(c1, c2)
    if name != "Gamma":
        _grads_match(c1, c2, p1, p2)
        q = [0.1, 0.75]
        _close(ours.icdf(tg.tensor(q, dtype=tg.float64)), ref.icdf(torch.tensor(q, dtype=torch.float64)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_and_expand_shapes(name):
    ours, ref, *_ = _build(name)
    assert ours.sample((4, 3)).shape == ref.sample((4, 3)).shape
    if ref.has_rsample:
        assert ours.rsample((5,)).shape == ref.rsample((5,)).shape
    new_batch = (3,) + tuple(ref.batch_shape)
    e1, e2 = ours.expand(new_batch), ref.expand(new_batch)
    assert type(e1).__name__ == type(e2).__name__
    assert e1.batch_shape == e2.batch_shape and e1.event_shape == e2.event_shape
    assert e1.sample((2,)).shape == e2.sample((2,)).shape
    assert repr(ours) == repr(ref)


def test_normal_rsample_graph_and_repr():
    loc, scale = tg.zeros(2, requires_grad=True), tg.ones(2, requires_grad=True)
    x = GD.Normal(loc, scale).rsample()
    assert type(x.grad_fn).__name__ == "AddBackward0"
    assert type(x.grad_fn.next_functions[1][0]).__name__ == "MulBackward0"
    assert repr(GD.Normal(tg.zeros(2), tg.ones(2))) == "Normal(loc: torch.Size([2]), scale: torch.Size([2]))"
    assert repr(GD.Normal(0.0, 1.0)) == repr(TD.Normal(0.0, 1.0))
    assert GD.Normal(loc, scale).sample().grad_fn is None


def test_gamma_rsample_grad_fn_and_standard_gamma_grad():
    x = GD.Gamma(tg.tensor([2.0], requires_grad=True), tg.tensor([1.0])).rsample()
    assert type(x.grad_fn.next_functions[0][0]).__name__ == "StandardGammaBackward0"
    alpha = np.array([0.3, 1.0, 2.5, 5.0, 9.0, 9.0, 20.0, 50.0, 0.5])
    xs = np.array([0.1, 0.5, 2.0, 7.0, 3.0, 20.0, 30.0, 48.0, 3.0])
    _close(tg._standard_gamma_grad(tg.tensor(alpha), tg.tensor(xs)),
           torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(xs)), 1e-10)


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Beta", "Exponential", "Poisson", "Binomial", "Geometric",
                                  "Laplace", "StudentT", "Dirichlet", "MultivariateNormal"])
def test_sample_statistics(name):
    tg.manual_seed(0)
    ours, ref, *_ = _build(name)
    draws = ours.sample((20000,)).numpy()
    want_mean, want_var = ref.mean.detach().numpy(), ref.variance.detach().numpy()
    if name == "StudentT":  # df 2.5 / 3: heavy tails, check the median
        np.testing.assert_allclose(np.median(draws, 0), want_mean, atol=0.05)
        return
    np.testing.assert_allclose(draws.mean(0), want_mean, atol=4 * np.sqrt(want_var.max() / 20000) + 1e-3)
    np.testing.assert_allclose(draws.var(0), want_var, rtol=0.1, atol=1e-3)


def test_reparameterized_gradients_are_unbiased():
    tg.manual_seed(1)
    conc = tg.tensor([2.0, 0.7], requires_grad=True)
    rate = tg.tensor([1.5, 3.0], requires_grad=True)
    GD.Gamma(conc, rate).rsample((20000,)).mean(0).sum().backward()
    # d E[x] / d conc = 1 / rate, d E[x] / d rate = -conc / rate^2
    np.testing.assert_allclose(conc.grad.numpy(), 1 / np.array([1.5, 3.0]), rtol=0.05)
    np.testing.assert_allclose(rate.grad.numpy(), -np.array([2.0, 0.7]) / np.array([1.5, 3.0]) ** 2, rtol=0.05)


KL_PAIRS = [("Normal", "Normal"), ("Laplace", "Laplace"), ("Exponential", "Exponential"), ("Gamma", "Gamma"),
            ("Beta", "Beta"), ("Dirichlet", "Dirichlet"), ("Bernoulli", "Bernoulli"), ("Poisson", "Poisson"),
            ("Geometric", "Geometric"), ("Categorical", "Categorical"), ("OneHotCategorical", "OneHotCategorical"),
            ("Uniform", "Uniform"), ("Gumbel", "Gumbel"), ("HalfNormal", "HalfNormal"), ("LogNormal", "LogNormal"),
            ("MultivariateNormal", "MVNScaleTril"), ("Independent", "Independent"), ("Cauchy", "Cauchy"),
            ("Binomial", "Binomial"), ("Normal", "Laplace"), ("Normal", "Gumbel"), ("Exponential", "Gamma"),
            ("Gamma", "Normal"), ("Laplace", "Normal"), ("Uniform", "Normal"), ("Normal", "Uniform"),
            ("Chi2", "Chi2")]


@pytest.mark.parametrize("pn,qn", KL_PAIRS)
def test_kl_divergence_and_grads(pn, qn):
    p1, p2, pp1, pp2, _ = _build(pn)
    q_params, _, make = CASES[qn]
    shifted = [np.asarray(v, dtype=np.float64) for v in q_params]
    if qn not in ("Dirichlet", "Categorical", "OneHotCategorical", "MVNScaleTril", "Bernoulli", "Geometric",
                  "Binomial", "Uniform"):
        shifted = [v * 1.3 for v in shifted]
    pairs = [_pair(v) for v in shifted]
    q1, q2 = make(GD, *[p[0] for p in pairs]), make(TD, *[p[1] for p in pairs])
    k1, k2 = GD.kl_divergence(p1, q1), TD.kl_divergence(p2, q2)
    _close(k1, k2)
    if np.isfinite(k2.detach().numpy()).all():
        _grads_match(k1, k2, pp1 + [p[0] for p in pairs], pp2 + [p[1] for p in pairs])


def test_kl_errors_and_register():
    for make in (lambda d: (d.Cauchy(0.0, 1.0), d.Normal(0.0, 1.0)), lambda d: (d.Poisson(1.0), d.Normal(0.0, 1.0))):
        with pytest.raises(NotImplementedError) as ours:
            GD.kl_divergence(*make(GD))
        with pytest.raises(NotImplementedError) as ref:
            TD.kl_divergence(*make(TD))
        assert str(ours.value) == str(ref.value)

    class MyNormal(GD.Normal):
        pass

    @GD.register_kl(MyNormal, GD.Normal)
    def _kl(p, q):
        return tg.tensor(42.0)

    assert GD.kl_divergence(MyNormal(0.0, 1.0), GD.Normal(0.0, 1.0)).item() == 42.0


def _error_text(fn):
    with pytest.raises(ValueError) as info:
        fn()
    return str(info.value)


def test_validation_errors_match_torch():
    assert (_error_text(lambda: GD.Normal(tg.tensor([0.0]), tg.tensor([-1.0])))
            == _error_text(lambda: TD.Normal(torch.tensor([0.0]), torch.tensor([-1.0]))))
    assert (_error_text(lambda: GD.Bernoulli(tg.tensor([0.3])).log_prob(tg.tensor([0.5])))
            == _error_text(lambda: TD.Bernoulli(torch.tensor([0.3])).log_prob(torch.tensor([0.5]))))
    assert (_error_text(lambda: GD.Normal(tg.zeros(2), tg.ones(2)).log_prob(tg.zeros(3)))
            == _error_text(lambda: TD.Normal(torch.zeros(2), torch.ones(2)).log_prob(torch.zeros(3))))
    assert (_error_text(lambda: GD.Categorical(tg.tensor(0.3)))
            == _error_text(lambda: TD.Categorical(torch.tensor(0.3))))
    assert (_error_text(lambda: GD.Bernoulli(0.3, 0.2)) == _error_text(lambda: TD.Bernoulli(0.3, 0.2)))
    assert (_error_text(lambda: GD.MultivariateNormal(tg.zeros(2)))
            == _error_text(lambda: TD.MultivariateNormal(torch.zeros(2))))
    assert (_error_text(lambda: GD.Uniform(tg.tensor([1.0]), tg.tensor([0.0])))
            == _error_text(lambda: TD.Uniform(torch.tensor([1.0]), torch.tensor([0.0]))))
    GD.Normal(tg.tensor([0.0]), tg.tensor([-1.0]), validate_args=False)  # no check
    try:
        GD.Distribution.set_default_validate_args(False)
        GD.Normal(tg.tensor([0.0]), tg.tensor([-1.0]))
    finally:
        GD.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        GD.Distribution.set_default_validate_args(3)


def test_sample_n_warns_and_enumerate_support():
    with pytest.warns(FutureWarning, match="`sample_n\\(n\\)` will be deprecated"):
        assert GD.Normal(0.0, 1.0).sample_n(3).shape == (3,)
    for make in (lambda d, t: d.Bernoulli(t.tensor([0.3, 0.4])), lambda d, t: d.Categorical(t.ones(2, 3)),
                 lambda d, t: d.OneHotCategorical(t.ones(2, 3)), lambda d, t: d.Binomial(3, t.tensor([0.3, 0.4]))):
        for expand in (True, False):
            a = make(GD, tg).enumerate_support(expand)
            b = make(TD, torch).enumerate_support(expand)
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]


CONSTRAINTS = ["real", "positive", "nonnegative", "unit_interval", "simplex", "boolean", "nonnegative_integer",
               "positive_integer", "real_vector", "lower_cholesky", "lower_triangular", "positive_definite",
               "one_hot", "symmetric", "square"]


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_constraints_check_and_repr(name):
    ours, ref = getattr(GD.constraints, name), getattr(TD.constraints, name)
    assert repr(ours) == repr(ref) and ours.event_dim == ref.event_dim and ours.is_discrete == ref.is_discrete
    rng = np.random.default_rng(0)
    for arr in (rng.normal(size=(3, 3)), np.abs(rng.normal(size=(3, 3))), np.eye(3), np.array([[0.2, 0.3, 0.5]] * 3),
                np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]]), np.tril(np.abs(rng.normal(size=(3, 3))))):
        np.testing.assert_array_equal(ours.check(tg.tensor(arr)).numpy(), ref.check(torch.tensor(arr)).numpy())
    assert repr(GD.constraints.interval(0.0, 2.0)) == repr(TD.constraints.interval(0.0, 2.0))
    assert repr(GD.constraints.independent(GD.constraints.real, 1)) == "IndependentConstraint(Real(), 1)"


@pytest.mark.parametrize("cname", ["positive", "unit_interval", "simplex", "real", "real_vector", "lower_cholesky"])
def test_biject_and_transform_to(cname):
    x = np.random.default_rng(1).normal(size=(2, 3))
    if cname == "lower_cholesky":
        x = np.random.default_rng(1).normal(size=(2, 3, 3))
    c1, c2 = getattr(GD.constraints, cname), getattr(TD.constraints, cname)
    for reg1, reg2 in ((GD.transform_to, TD.transform_to), (GD.biject_to, TD.biject_to)):
        try:
            t2 = reg2(c2)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                reg1(c1)
            continue
        t1 = reg1(c1)
        assert type(t1).__name__ == type(t2).__name__
        a1, a2 = _pair(x)
        y1, y2 = t1(a1), t2(a2)
        _close(y1, y2)
        if t2.bijective:
            _close(t1.inv(y1), t2.inv(y2))
            _close(t1.log_abs_det_jacobian(a1, y1), t2.log_abs_det_jacobian(a2, y2))


@pytest.mark.parametrize("tname", ["ExpTransform", "SigmoidTransform", "TanhTransform", "SoftplusTransform",
                                   "AbsTransform"])
def test_transforms(tname):
    t1, t2 = getattr(GD.transforms, tname)(), getattr(TD.transforms, tname)()
    a1, a2 = _pair([-0.7, 0.3, 1.2])
    y1, y2 = t1(a1), t2(a2)
    _close(y1, y2)
    assert repr(t1) == repr(t2) and repr(t1.inv) == repr(t2.inv) and t1 == getattr(GD.transforms, tname)()
    if t2.bijective:
        _close(t1.inv(y1), t2.inv(y2))
        _close(t1.log_abs_det_jacobian(a1, y1), t2.log_abs_det_jacobian(a2, y2))


def test_transformed_distribution_compose_and_affine():
    def build(d, t, loc, scale):
        trans = [d.transforms.AffineTransform(loc, scale), d.transforms.TanhTransform()]
        return d.TransformedDistribution(d.Normal(t.zeros(2, dtype=t.float64), t.ones(2, dtype=t.float64)), trans)

    (l1, l2), (s1, s2) = _pair([0.1, -0.2]), _pair([0.5, 0.8])
    p1, p2 = build(GD, tg, l1, s1), build(TD, torch, l2, s2)
    v = [0.3, -0.4]
    lp1, lp2 = p1.log_prob(tg.tensor(v, dtype=tg.float64)), p2.log_prob(torch.tensor(v, dtype=torch.float64))
    _close(lp1, lp2)
    _grads_match(lp1, lp2, [l1, s1], [l2, s2])
    assert p1.rsample((3,)).shape == p2.rsample((3,)).shape
    c1 = GD.transforms.ComposeTransform([GD.transforms.ExpTransform(), GD.transforms.AffineTransform(1.0, 2.0)])
    c2 = TD.transforms.ComposeTransform([TD.transforms.ExpTransform(), TD.transforms.AffineTransform(1.0, 2.0)])
    assert repr(c1) == repr(c2)
    a1, a2 = _pair([0.3, 0.4])
    _close(c1.log_abs_det_jacobian(a1, c1(a1)), c2.log_abs_det_jacobian(a2, c2(a2)))
    _close(c1.inv(c1(a1)), a2)
