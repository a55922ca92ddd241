"""The distributions, transforms, constraints and KL pairs added after the first batch (ContinuousBernoulli,
Pareto, Weibull, Kumaraswamy, VonMises, Wishart, LKJCholesky, LowRankMultivariateNormal, MixtureSameFamily,
NegativeBinomial, FisherSnedecor, InverseGamma, HalfCauchy, LogisticNormal, GeneralizedPareto), PyTorch's
submodule paths and the Dirichlet pathwise gradient, against torch.distributions."""

from __future__ import annotations

import importlib
import math
import os
import warnings

import numpy as np
import pytest
import torch

import tracegrad as tg

from .test_distributions_vs_torch import CASES as BASE_CASES
from .test_distributions_vs_torch import _close, _grads_match, _pair

TD, GD = torch.distributions, tg.distributions

# NumPy's RuntimeWarnings (the unselected branch of a where, e.g. the generalized Pareto support's scale / 0)
# are silenced by tracegrad's own filter, which pytest resets per test
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

_CORR_L = np.linalg.cholesky(np.array([[1.0, 0.3, -0.2], [0.3, 1.0, 0.4], [-0.2, 0.4, 1.0]]))


def _gpd(d, loc, scale, conc):
    # float32 parameters: PyTorch's log_prob compares them with a float32 zero (isclose), which raises for
    # float64 ones (checked in test_generalized_pareto_float64_error_matches_torch)
    return d.GeneralizedPareto(loc.float(), scale.float(), conc.float())


def _mix_mvn(d, w, a, b):
    return d.MixtureSameFamily(d.Categorical(w), d.Independent(d.Normal(a, b), 1))


# name -> (param values, value to score, builder(lib, *params)), as in test_distributions_vs_torch
CASES = {
    # the second parameter lies in the unstable region around 1/2 (Taylor branches)
    "ContinuousBernoulli": ([[0.3, 0.4995]], [0.2, 0.5], lambda d, a: d.ContinuousBernoulli(a)),
    "ContinuousBernoulliLogits": ([[-0.8, 0.001]], [0.9, 0.5], lambda d, a: d.ContinuousBernoulli(logits=a)),
    "Pareto": ([[1.0, 2.0], [2.5, 3.0]], [1.5, 4.0], lambda d, a, b: d.Pareto(a, b)),
    "Weibull": ([[1.0, 2.0], [0.5, 3.0]], [0.3, 1.5], lambda d, a, b: d.Weibull(a, b)),
    "Kumaraswamy": ([[0.5, 2.0], [1.5, 3.0]], [0.2, 0.9], lambda d, a, b: d.Kumaraswamy(a, b)),
    "VonMises": ([[0.3, -1.0], [1.5, 5.0]], [0.2, 0.9], lambda d, a, b: d.VonMises(a, b)),
    "Wishart": ([4.0, [[2.0, 0.3], [0.3, 1.0]]], [[1.0, 0.2], [0.2, 0.5]],
                lambda d, a, b: d.Wishart(a, covariance_matrix=b)),
    # tril(): tracegrad's cholesky_solve gives no gradient to the (unused) upper triangle of the factor,
    # PyTorch's does; the leaf sees only the lower triangle in both libraries this way
    "WishartScaleTril": ([[3.0, 5.0], [[1.5, 0.0], [0.3, 1.0]]], [[1.0, 0.2], [0.2, 0.5]],
                         lambda d, a, b: d.Wishart(a, scale_tril=b.tril())),
    "WishartPrecision": ([4.5, [[2.0, 0.3], [0.3, 1.0]]], [[1.0, 0.2], [0.2, 0.5]],
                         lambda d, a, b: d.Wishart(a, precision_matrix=b)),
    "LKJCholesky": ([[0.5, 2.0]], _CORR_L.tolist(), lambda d, a: d.LKJCholesky(3, a)),
    "LowRankMVN": ([[0.3, -1.0], [[1.0, 0.5], [0.2, -0.3]], [1.0, 0.5]], [0.2, 0.9],
                   lambda d, a, b, c: d.LowRankMultivariateNormal(a, b, c)),
    "LowRankMVNBatched": ([[[0.3, -1.0, 0.5], [0.1, 0.2, 0.3]], [[1.0], [0.2], [-0.4]], [1.0, 0.5, 2.0]],
                          [0.2, 0.9, 0.1], lambda d, a, b, c: d.LowRankMultivariateNormal(a, b, c)),
    "MixtureSameFamily": ([[0.3, 0.7], [0.3, -1.0], [1.5, 0.7]], [0.2],
                          lambda d, w, a, b: d.MixtureSameFamily(d.Categorical(w), d.Normal(a, b))),
    "MixtureOfMVN": ([[0.2, 0.5, 0.3], [[0.3, -1.0], [1.0, 0.0], [0.5, 0.5]], [[1.5, 0.7], [1.0, 2.0], [0.3, 0.4]]],
                     [0.2, 0.9], _mix_mvn),
    "NegativeBinomial": ([[3.0, 5.5], [0.3, 0.6]], [2.0, 0.0], lambda d, a, b: d.NegativeBinomial(a, b)),
    "NegativeBinomialLogits": ([[3.0, 5.5], [0.3, -0.6]], [2.0, 7.0],
                               lambda d, a, b: d.NegativeBinomial(a, logits=b)),
    "FisherSnedecor": ([[3.0, 6.0], [5.0, 10.0]], [0.5, 1.5], lambda d, a, b: d.FisherSnedecor(a, b)),
    "InverseGamma": ([[2.5, 3.0], [1.5, 0.7]], [0.5, 1.5], lambda d, a, b: d.InverseGamma(a, b)),
    "HalfCauchy": ([[1.5, 0.7]], [0.2, 0.9], lambda d, a: d.HalfCauchy(a)),
    "LogisticNormal": ([[0.3, -1.0], [1.5, 0.7]], [0.2, 0.3, 0.5], lambda d, a, b: d.LogisticNormal(a, b)),
    "GeneralizedPareto": ([[0.1, 0.0, 0.0], [2.0, 1.0, 0.5], [0.4, 0.0, 0.2]], [0.5, 1.5, 0.3],
                          _gpd),
    "GeneralizedParetoBounded": ([[0.0], [1.0], [-0.5]], [0.5], _gpd),
    "UniformUnit": ([[0.1, 0.2], [0.5, 0.9]], [0.3, 0.5], lambda d, a, b: d.Uniform(a, b)),
    "UniformAbove": ([[2.5, 3.0], [4.0, 5.0]], [3.0, 4.0], lambda d, a, b: d.Uniform(a, b)),
}
ALL_CASES = {**BASE_CASES, **CASES}


def _build(name, scale=1.0):
    params, value, make = ALL_CASES[name]
    pairs = [_pair(np.asarray(p, dtype=np.float64) * scale) for p in params]
    ours = make(GD, *[p[0] for p in pairs])
    ref = make(TD, *[p[1] for p in pairs])
    return ours, ref, [p[0] for p in pairs], [p[1] for p in pairs], value


def _values(value):
    return tg.tensor(value, dtype=tg.float64), torch.tensor(value, dtype=torch.float64)


NEW = sorted(n for n in CASES if not n.startswith("Uniform"))


@pytest.mark.parametrize("name", NEW)
def test_log_prob_entropy_moments_and_grads(name):
    ours, ref, p1, p2, value = _build(name)
    assert ours.batch_shape == ref.batch_shape and ours.event_shape == ref.event_shape
    v1, v2 = _values(value)
    lp1, lp2 = ours.log_prob(v1), ref.log_prob(v2)
    _close(lp1, lp2)
    _grads_match(lp1, lp2, p1, p2)
    try:
        h2 = ref.entropy()
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.entropy()
    else:
        h1 = ours.entropy()
        _close(h1, h2)
        _grads_match(h1, h2, p1, p2)
    for attr in ("mean", "variance", "mode", "stddev"):
        try:
            want = getattr(ref, attr)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(ours, attr)
            continue
        got = getattr(ours, attr)
        _close(got, want)
        if want.requires_grad and np.isfinite(want.detach().numpy()).all():
            _grads_match(got, want, p1, p2)
    assert ours.has_rsample == ref.has_rsample
    assert repr(ours.support) == repr(ref.support)
    assert repr(ours) == repr(ref)


@pytest.mark.parametrize("name", ["ContinuousBernoulli", "ContinuousBernoulliLogits", "Pareto", "Weibull",
                                  "Kumaraswamy", "HalfCauchy", "InverseGamma", "GeneralizedPareto",
                                  "GeneralizedParetoBounded", "MixtureSameFamily"])
def test_cdf_icdf(name):
    ours, ref, p1, p2, value = _build(name)
    v1, v2 = _values(value)
    c1, c2 = ours.cdf(v1), ref.cdf(v2)
    _close(c1, c2)
    try:
        torch.autograd.grad(c2.sum(), p2, allow_unused=True, retain_graph=True)
    except NotImplementedError as err:  # the Gamma cdf (igamma) has no derivative in its first argument
        with pytest.raises(NotImplementedError, match=str(err)):
            tg.autograd.grad(c1.sum(), p1, allow_unused=True, retain_graph=True)
    else:
        _grads_match(c1, c2, p1, p2)
    q1, q2 = _values([0.1, 0.75, 0.4][: len(value)])
    try:
        want = ref.icdf(q2)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.icdf(q1)
        return
    got = ours.icdf(q1)
    _close(got, want)
    _grads_match(got, want, p1, p2)


def test_generalized_pareto_float64_error_matches_torch():
    def make(d, t):
        return d.GeneralizedPareto(t.tensor([0.1], dtype=t.float64), t.tensor([2.0], dtype=t.float64),
                                   t.tensor([0.4], dtype=t.float64)).log_prob(t.tensor([0.5], dtype=t.float64))

    assert _error(RuntimeError, lambda: make(GD, tg)) == _error(RuntimeError, lambda: make(TD, torch))


def test_generalized_pareto_log_survival_and_log_cdf():
    ours, ref, p1, p2, value = _build("GeneralizedPareto")
    v1, v2 = _values(value)
    for fn in ("log_survival_function", "log_cdf"):
        a, b = getattr(ours, fn)(v1), getattr(ref, fn)(v2)
        _close(a, b)
        _grads_match(a, b, p1, p2)


@pytest.mark.parametrize("name", NEW)
def test_sample_and_expand_shapes(name):
    tg.manual_seed(0)
    ours, ref, *_ = _build(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Wishart's sampler warns (as PyTorch's does), tested below
        assert ours.sample((4, 3)).shape == ref.sample((4, 3)).shape
        if ref.has_rsample:
            assert ours.rsample((5,)).shape == ref.rsample((5,)).shape
        new_batch = (3,) + tuple(ref.batch_shape)
        e1, e2 = ours.expand(new_batch), ref.expand(new_batch)
        assert type(e1).__name__ == type(e2).__name__
        assert e1.batch_shape == e2.batch_shape and e1.event_shape == e2.event_shape
        assert e1.sample((2,)).shape == e2.sample((2,)).shape
    v1, v2 = _values(ALL_CASES[name][1])
    _close(e1.log_prob(v1), e2.log_prob(v2))


def _circular_stats(draws, loc):
    return np.cos(draws - loc).mean(0), np.sin(draws - loc).mean(0)


@pytest.mark.parametrize("name,check_var", [
    ("ContinuousBernoulli", True), ("Pareto", False), ("Weibull", True), ("Kumaraswamy", True),
    ("NegativeBinomial", True), ("FisherSnedecor", False), ("InverseGamma", False), ("LogisticNormal", False),
    ("GeneralizedParetoBounded", True), ("LowRankMVN", True), ("MixtureSameFamily", True), ("Wishart", True),
    ("MixtureOfMVN", True),
])
def test_sample_statistics(name, check_var):
    tg.manual_seed(0)
    ours, ref, *_ = _build(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draws = ours.sample((20000,)).numpy()
    assert ref.support.check(torch.tensor(draws)).all()
    if name == "LogisticNormal":  # no closed-form mean: compare with torch's own draws
        with pytest.raises(NotImplementedError):
            ours.mean
        want_mean = ref.sample((20000,)).mean(0).numpy()
    else:
        want_mean = ref.mean.detach().numpy()
    if check_var:
        want_var = ref.variance.detach().numpy()
        np.testing.assert_allclose(draws.mean(0), want_mean, atol=5 * np.sqrt(want_var.max() / 20000) + 1e-3)
        np.testing.assert_allclose(draws.var(0), want_var, rtol=0.1, atol=2e-3)
    else:  # heavy tails: means only, loosely
        np.testing.assert_allclose(draws.mean(0), want_mean, rtol=0.06, atol=0.02)


def test_von_mises_and_lkj_sample_statistics():
    tg.manual_seed(0)
    vm = GD.VonMises(tg.tensor([0.3, -3.0, 1.0]), tg.tensor([1.5, 5.0, 1e-6]))
    draws = vm.sample((20000,))
    assert draws.dtype == tg.float32 and (draws.abs() <= math.pi).all()
    ref = TD.VonMises(torch.tensor([0.3, -3.0, 1.0]), torch.tensor([1.5, 5.0, 1e-6]))
    cos_mean, sin_mean = _circular_stats(draws.numpy().astype(np.float64), np.array([0.3, -3.0, 1.0]))
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - circular variance; E[sin(x - loc)] = 0
    np.testing.assert_allclose(cos_mean, 1 - ref.variance.numpy(), atol=0.02)
    np.testing.assert_allclose(sin_mean, 0.0, atol=0.02)
    lkj = GD.LKJCholesky(3, tg.tensor([0.5, 4.0]))
    L = lkj.sample((5000,))
    assert TD.constraints.corr_cholesky.check(torch.tensor(L.numpy())).all()
    corr = (L @ L.mT).numpy()
    np.testing.assert_allclose(corr.mean(0), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=0.04)
    # an off-diagonal correlation is Beta(c - 1 + d / 2, same) on (-1, 1): variance 1 / (2 c + d - 1)
    np.testing.assert_allclose(corr[:, :, 0, 1].var(0), 1 / (2 * np.array([0.5, 4.0]) + 2), rtol=0.1)


# ---- KL --------------------------------------------------------------------------------------------------

# (p case, q case, q param scale): q parameters are multiplied by the scale
KL_PAIRS = [
    ("ContinuousBernoulli", "ContinuousBernoulliLogits", 1.0), ("ContinuousBernoulli", "Exponential", 1.0),
    ("ContinuousBernoulli", "Normal", 1.0), ("ContinuousBernoulli", "Uniform", 1.0),
    ("ContinuousBernoulli", "Pareto", 1.0), ("Beta", "ContinuousBernoulli", 1.0), ("Beta", "Pareto", 1.0),
    ("Exponential", "ContinuousBernoulli", 1.0), ("Exponential", "Pareto", 1.0), ("Gamma", "Pareto", 1.0),
    ("Gamma", "ContinuousBernoulli", 1.0), ("Gumbel", "ContinuousBernoulli", 1.0), ("Gumbel", "Pareto", 1.0),
    ("Laplace", "ContinuousBernoulli", 1.0), ("Laplace", "Pareto", 1.0), ("Normal", "ContinuousBernoulli", 1.0),
    ("Normal", "Pareto", 1.0), ("Pareto", "Pareto", 1.3), ("Pareto", "Pareto", 0.7), ("Pareto", "Beta", 1.0),
    ("Pareto", "ContinuousBernoulli", 1.0), ("Pareto", "Exponential", 1.0), ("Pareto", "Gamma", 1.0),
    ("Pareto", "Normal", 1.0), ("Pareto", "Uniform", 1.0), ("Uniform", "Beta", 1.0), ("UniformUnit", "Beta", 1.0),
    ("UniformUnit", "ContinuousBernoulli", 1.0), ("Uniform", "ContinuousBernoulli", 1.0),
    ("Uniform", "Gamma", 1.0), ("UniformAbove", "Gamma", 1.0), ("Uniform", "Gumbel", 1.0),
    ("Uniform", "Pareto", 1.0), ("UniformAbove", "Pareto", 1.0), ("UniformUnit", "Uniform", 1.0),
    ("LowRankMVN", "LowRankMVN", 1.3), ("LowRankMVN", "MultivariateNormal", 1.3),
    ("MultivariateNormal", "LowRankMVN", 1.3), ("LowRankMVNBatched", "LowRankMVNBatched", 0.8),
    ("Wishart", "Wishart", 1.3), ("InverseGamma", "InverseGamma", 1.3), ("HalfCauchy", "HalfCauchy", 1.3),
    ("ContinuousBernoulliLogits", "ContinuousBernoulliLogits", 1.3), ("Weibull", "Weibull", 1.0),
]


@pytest.mark.parametrize("pn,qn,scale", KL_PAIRS)
def test_kl_divergence_and_grads(pn, qn, scale):
    p1, p2, pp1, pp2, _ = _build(pn)
    q1, q2, qp1, qp2, _ = _build(qn, scale)
    try:
        k2 = TD.kl_divergence(p2, q2)
    except NotImplementedError as err:
        with pytest.raises(NotImplementedError) as ours:
            GD.kl_divergence(p1, q1)
        assert str(ours.value) == str(err)
        return
    k1 = GD.kl_divergence(p1, q1)
    _close(k1, k2)
    assert k1.requires_grad == k2.requires_grad
    if k2.requires_grad and np.isfinite(k2.detach().numpy()).all():
        _grads_match(k1, k2, pp1 + qp1, pp2 + qp2)


def test_kl_registry_matches_torch():
    # (pairs the libraries define themselves: a test's own registered families, in one registry or both, are not)
    names = {(a.__name__, b.__name__) for a, b in TD.kl._KL_REGISTRY
             if a.__module__.startswith("torch.") and b.__module__.startswith("torch.")}
    ours = {(a.__name__, b.__name__) for a, b in GD.kl._KL_REGISTRY
            if a.__module__.startswith("tracegrad.") and b.__module__.startswith("tracegrad.")}
    assert names == ours


# ---- Dirichlet pathwise gradient ---------------------------------------------------------------------------


def test_dirichlet_grad_kernel_matches_aten():
    rng = np.random.default_rng(0)
    alpha, beta = np.exp(rng.uniform(-3, 4, 4000)), np.exp(rng.uniform(-3, 4, 4000))
    x = np.clip(rng.beta(alpha, beta), 1e-12, 1 - 1e-12)  # every branch of dirichlet_grad_one is hit
    args = (x, alpha, alpha + beta)
    _close(tg._dirichlet_grad(*map(tg.tensor, args)), torch._dirichlet_grad(*map(torch.tensor, args)), 1e-10)
    f32 = [a.astype(np.float32) for a in args]
    got = tg._dirichlet_grad(*map(tg.tensor, f32))
    assert got.dtype == tg.float32
    # ATen keeps the Taylor branches in float32: agreement to float32 rounding of the series
    np.testing.assert_allclose(got.numpy(), torch._dirichlet_grad(*map(torch.tensor, f32)).numpy(), rtol=2e-3,
                               atol=1e-6)

    def backward(t):
        x = t.tensor([0.3], requires_grad=True)
        t._dirichlet_grad(x, t.tensor([1.0]), t.tensor([2.0])).sum().backward()

    assert _error(RuntimeError, lambda: backward(tg)) == _error(RuntimeError, lambda: backward(torch))


@pytest.mark.parametrize("family", ["Dirichlet", "Beta"])
def test_dirichlet_rsample_graph_and_gradient(family):
    tg.manual_seed(3)
    conc = np.array([[1.5, 0.7, 3.0], [0.3, 8.0, 9.0]])
    c1 = tg.tensor(conc, requires_grad=True)
    if family == "Dirichlet":
        x = GD.Dirichlet(c1).rsample((4,))
        node = x.grad_fn
    else:
        x = GD.Beta(c1[:, 0], c1[:, 1]).rsample((4,))
        assert type(x.grad_fn).__name__ == "SelectBackward0"
        node = x.grad_fn.next_functions[0][0]
    assert node.name() == "_DirichletBackward" == type(node).__name__
    weights = np.random.default_rng(0).normal(size=tuple(x.shape))
    (x * tg.tensor(weights)).sum().backward()
    # torch's _Dirichlet backward on the very same sample
    c2 = torch.tensor(conc, requires_grad=True)
    if family == "Dirichlet":
        xs, cs = torch.tensor(x.detach().numpy()), c2.expand(4, 2, 3)
        g = torch.tensor(weights)
    else:
        both = torch.stack([c2[:, 0], c2[:, 1]], -1)
        cs = both.expand(4, 2, 2)
        xs = torch.tensor(np.stack([x.detach().numpy(), 1 - x.detach().numpy()], -1))
        g = torch.stack([torch.tensor(weights), torch.zeros(4, 2, dtype=torch.float64)], -1)
    want = TD.dirichlet._Dirichlet_backward(xs, cs.detach(), g)
    cs.backward(want)
    _close(c1.grad, c2.grad, 1e-9)


def test_dirichlet_reparameterized_gradient_is_unbiased():
    tg.manual_seed(1)
    conc = tg.tensor([2.0, 0.7, 4.0], requires_grad=True)
    x = GD.Dirichlet(conc).rsample((20000,))
    x[:, 0].mean().backward()
    # d E[x_0] / d conc = (delta_0j * total - conc_0) / total^2
    total = 6.7
    want = (np.array([total, 0.0, 0.0]) - 2.0) / total**2
    np.testing.assert_allclose(conc.grad.numpy(), want, atol=4e-3)


# ---- transforms, constraints, registries --------------------------------------------------------------------


def _check_transform(t1, t2, x):
    a1, a2 = _pair(x)
    y1, y2 = t1(a1), t2(a2)
    _close(y1, y2)
    _grads_match(y1, y2, [a1], [a2])
    assert t1.bijective == t2.bijective and repr(t1) == repr(t2)
    assert repr(t1.domain) == repr(t2.domain) and repr(t1.codomain) == repr(t2.codomain)
    assert t1.forward_shape(tg.Size(x.shape)) == t2.forward_shape(torch.Size(x.shape))
    assert t1.inverse_shape(tg.Size(y1.shape)) == t2.inverse_shape(torch.Size(y2.shape))
    b1, b2 = _pair(y2.detach().numpy())
    _close(t1.inv(b1), t2.inv(b2))
    if t2.bijective:
        j1, j2 = t1.log_abs_det_jacobian(a1, y1), t2.log_abs_det_jacobian(a2, y2)
        _close(j1, j2)
        _grads_match(j1, j2, [a1], [a2])
    assert t1.with_cache().__class__ is t1.__class__ and t1.with_cache()._cache_size == 1


def _transform_pair(name):
    def make(d, t):
        tr = d.transforms
        return {
            "CorrCholeskyTransform": lambda: tr.CorrCholeskyTransform(),
            "PositiveDefiniteTransform": lambda: tr.PositiveDefiniteTransform(),
            "CatTransform": lambda: tr.CatTransform([tr.ExpTransform(), tr.SigmoidTransform(),
                                                     tr.AffineTransform(1.0, 2.0)], dim=1, lengths=[1, 2, 1]),
            "CatTransformEvent": lambda: tr.CatTransform([tr.IndependentTransform(tr.ExpTransform(), 1),
                                                          tr.SigmoidTransform()], dim=-1, lengths=[2, 2]),
            "StackTransform": lambda: tr.StackTransform([tr.ExpTransform(), tr.TanhTransform(),
                                                         tr.SoftplusTransform()], dim=-1),
            "CumulativeDistributionTransform": lambda: tr.CumulativeDistributionTransform(
                d.Normal(t.tensor([0.3, -0.2, 0.0, 1.0], dtype=t.float64), t.tensor(1.5, dtype=t.float64))),
        }[name]()

    return make(GD, tg), make(TD, torch)


@pytest.mark.parametrize("name,shape", [
    ("CorrCholeskyTransform", (2, 6)), ("PositiveDefiniteTransform", (2, 3, 3)), ("CatTransform", (3, 4)),
    ("CatTransformEvent", (3, 4)), ("StackTransform", (2, 3)), ("CumulativeDistributionTransform", (2, 4)),
])
def test_new_transforms(name, shape):
    t1, t2 = _transform_pair(name)
    x = np.random.default_rng(2).normal(size=shape)
    _check_transform(t1, t2, x)
    if name == "CorrCholeskyTransform":
        assert t1 != GD.transforms.CorrCholeskyTransform()
        with pytest.raises(ValueError, match="Input is not a flattened lower-diagonal number"):
            t1.forward_shape((4,))
    if name == "PositiveDefiniteTransform":
        assert t1 == GD.transforms.PositiveDefiniteTransform()


def test_cat_stack_transform_errors_match_torch():
    def err(d, t, build, x):
        with pytest.raises(AssertionError) as info:
            build(d)(t.zeros(x))
        return str(info.value)

    cat = lambda d: d.transforms.CatTransform([d.transforms.ExpTransform()] * 2, dim=0)  # noqa: E731
    stack = lambda d: d.transforms.StackTransform([d.transforms.ExpTransform()] * 2, dim=0)  # noqa: E731
    for build in (cat, stack):
        assert err(GD, tg, build, (3,)) == err(TD, torch, build, (3,))
    with pytest.raises(AssertionError, match="All elements of tseq must be Transform instances"):
        GD.transforms.CatTransform([1])


@pytest.mark.parametrize("cname", ["corr_cholesky", "positive_definite", "positive_semidefinite", "cat", "stack"])
def test_biject_and_transform_to_new_constraints(cname):
    def constraint(c):
        if cname == "cat":
            return c.cat([c.positive, c.real, c.unit_interval], dim=-1, lengths=[1, 2, 1])
        if cname == "stack":
            return c.stack([c.positive, c.interval(-1.0, 2.0)], dim=-1)
        return getattr(c, cname)

    shape = {"corr_cholesky": (2, 3), "cat": (3, 4), "stack": (3, 2)}.get(cname, (2, 3, 3))
    x = np.random.default_rng(1).normal(size=shape)
    for reg1, reg2 in ((GD.transform_to, TD.transform_to), (GD.biject_to, TD.biject_to)):
        c1, c2 = constraint(GD.constraints), constraint(TD.constraints)
        try:
            t2 = reg2(c2)
        except NotImplementedError as err:
            with pytest.raises(NotImplementedError, match=str(err)):
                reg1(c1)
            continue
        t1 = reg1(c1)
        assert type(t1).__name__ == type(t2).__name__ and repr(t1) == repr(t2)
        a1, a2 = _pair(x)
        y1, y2 = t1(a1), t2(a2)
        _close(y1, y2)
        np.testing.assert_array_equal(c1.check(y1).numpy(), c2.check(y2).numpy())
        if t2.bijective:
            _close(t1.inv(y1), t2.inv(y2))
            _close(t1.log_abs_det_jacobian(a1, y1), t2.log_abs_det_jacobian(a2, y2))


def test_constraints_namespace_and_mixture_constraint():
    assert [n for n in dir(TD.constraints) if not n.startswith("__")] == \
        [n for n in dir(GD.constraints) if not n.startswith("__") and n in dir(TD.constraints)]
    assert set(TD.constraints.__all__) == set(GD.constraints.__all__)
    c1 = GD.constraints.MixtureSameFamilyConstraint(GD.constraints.positive)
    c2 = TD.constraints.MixtureSameFamilyConstraint(TD.constraints.positive)
    assert repr(c1) == repr(c2) and c1.event_dim == c2.event_dim and c1.is_discrete == c2.is_discrete
    v = np.array([[1.0, -2.0], [0.5, 3.0]])
    np.testing.assert_array_equal(c1.check(tg.tensor(v)).numpy(), c2.check(torch.tensor(v)).numpy())
    ours, ref, *_ = _build("MixtureOfMVN")
    assert repr(ours.support) == repr(ref.support)
    np.testing.assert_array_equal(ours.support.check(tg.tensor(v)).numpy(), ref.support.check(torch.tensor(v)).numpy())


# ---- validation, warnings, module paths ---------------------------------------------------------------------


def _error(exc, fn):
    with pytest.raises(exc) as info:
        fn()
    return str(info.value)


@pytest.mark.parametrize("exc,make", [
    (ValueError, lambda d, t: d.Wishart(t.tensor(0.5), t.eye(2))),
    (AssertionError, lambda d, t: d.Wishart(3.0, t.eye(2), scale_tril=t.eye(2))),
    (ValueError, lambda d, t: d.Wishart(3.0, t.ones(2))),
    (ValueError, lambda d, t: d.LKJCholesky(1)),
    (ValueError, lambda d, t: d.LKJCholesky(3, t.tensor([-1.0]))),
    (ValueError, lambda d, t: d.LowRankMultivariateNormal(t.zeros(3), t.ones(2, 1), t.ones(3))),
    (ValueError, lambda d, t: d.LowRankMultivariateNormal(t.zeros(3), t.ones(3), t.ones(3))),
    (ValueError, lambda d, t: d.LowRankMultivariateNormal(t.zeros(3), t.ones(3, 1), t.ones(2))),
    (ValueError, lambda d, t: d.LowRankMultivariateNormal(t.zeros(()), t.ones(3, 1), t.ones(3))),
    (ValueError, lambda d, t: d.LowRankMultivariateNormal(t.zeros(2, 3), t.ones(4, 3, 1), t.ones(3))),
    (ValueError, lambda d, t: d.MixtureSameFamily(d.Normal(0.0, 1.0), d.Normal(t.zeros(2), t.ones(2)))),
    (ValueError, lambda d, t: d.MixtureSameFamily(d.Categorical(t.ones(2)), 3)),
    (ValueError, lambda d, t: d.MixtureSameFamily(d.Categorical(t.ones(3)), d.Normal(t.zeros(2), t.ones(2)))),
    (ValueError, lambda d, t: d.MixtureSameFamily(d.Categorical(t.ones(3, 2)), d.Normal(t.zeros(4, 2),
                                                                                         t.ones(4, 2)))),
    (ValueError, lambda d, t: d.ContinuousBernoulli(t.tensor([1.5]), validate_args=False)),
    (ValueError, lambda d, t: d.ContinuousBernoulli(t.tensor([0.5]), t.tensor([0.5]))),
    (ValueError, lambda d, t: d.NegativeBinomial(t.tensor([2.0]), t.tensor([1.0]))),
    (ValueError, lambda d, t: d.NegativeBinomial(t.tensor([2.0]))),
    (ValueError, lambda d, t: d.NegativeBinomial(t.tensor([2.0]), t.tensor([0.3])).log_prob(t.tensor([0.5]))),
    (ValueError, lambda d, t: d.Pareto(t.tensor([1.0]), t.tensor([2.0])).log_prob(t.tensor([0.5]))),
    (ValueError, lambda d, t: d.GeneralizedPareto(0.0, 1.0, -0.5).log_prob(t.tensor(3.0))),
    (ValueError, lambda d, t: d.VonMises(t.tensor([0.0]), t.tensor([-1.0]))),
    (ValueError, lambda d, t: d.Kumaraswamy(t.tensor([1.0]), t.tensor([2.0])).log_prob(t.tensor([1.5]))),
    (ValueError, lambda d, t: d.LogisticNormal(t.zeros(2), t.ones(2)).log_prob(t.tensor([0.5, 0.6, 0.7]))),
    (ValueError, lambda d, t: d.Weibull(t.tensor([-1.0]), t.tensor([2.0]))),
    (ValueError, lambda d, t: d.FisherSnedecor(t.tensor([1.0]), t.tensor([0.0]))),
    (ValueError, lambda d, t: d.InverseGamma(t.tensor([1.0]), t.tensor([0.0]))),
    (ValueError, lambda d, t: d.HalfCauchy(t.tensor([1.0])).log_prob(t.tensor([-1.0]))),
    (AssertionError, lambda d, t: d.wishart._mvdigamma(t.tensor([0.2]), 3)),
])
def test_validation_errors_match_torch(exc, make):
    assert _error(exc, lambda: make(GD, tg)) == _error(exc, lambda: make(TD, torch))


def test_wishart_warnings_match_torch():
    for d, t in ((GD, tg), (TD, torch)):
        with pytest.warns(UserWarning, match="Low df values detected"):
            d.Wishart(t.tensor(1.5), t.eye(2))
        with pytest.warns(UserWarning, match="Singular sample detected."):  # PyTorch's check warns on every draw
            d.Wishart(t.tensor(4.0), t.eye(2)).rsample((2,))


def test_half_cauchy_accepts_numbers_and_mixture_repr():
    _close(GD.HalfCauchy(tg.tensor([1.5], dtype=tg.float64), validate_args=False).log_prob(0.5),
           TD.HalfCauchy(torch.tensor([1.5], dtype=torch.float64), validate_args=False).log_prob(0.5))
    assert repr(GD.GeneralizedPareto(0.0, 1.0, 0.2)) == repr(TD.GeneralizedPareto(0.0, 1.0, 0.2))
    assert repr(GD.LKJCholesky(3, 0.5)) == repr(TD.LKJCholesky(3, 0.5))


def test_torch_submodule_paths():
    tdir = os.path.dirname(TD.__file__)
    modules = sorted(f[:-3] for f in os.listdir(tdir) if f.endswith(".py") and f != "__init__.py")
    for mod in modules:
        ref = importlib.import_module(f"torch.distributions.{mod}")
        ours = importlib.import_module(f"tracegrad.distributions.{mod}")
        assert getattr(GD, mod) is ours
        for name in ref.__all__:
            obj = getattr(ours, name)
            if name in TD.__all__:
                assert getattr(GD, name) is obj  # the same object as the package-level name
    from tracegrad.distributions.normal import Normal
    from tracegrad.distributions.one_hot_categorical import OneHotCategoricalStraightThrough

    assert Normal is GD.Normal and OneHotCategoricalStraightThrough is GD.OneHotCategoricalStraightThrough
    assert sorted(n for n in dir(TD) if not n.startswith("_")) == sorted(
        n for n in dir(GD) if not n.startswith("_") and n in dir(TD))
    assert set(TD.__all__) <= set(GD.__all__)
