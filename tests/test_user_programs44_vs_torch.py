"""A forty-fourth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

The torch.distributions catalogue as a statistics course walks through it: each family's batch_shape/event_shape
and ``expand()``, seeded sample/rsample with a sample_shape, log_prob inside and outside the support (with
validate_args on and off), the moments, entropy, cdf/icdf and the NotImplementedError where a family has none,
supports and constraints' ``check()``, enumerate_support, KL pairs (and an unregistered one), reprs, transformed
distributions (Exp/Affine/Sigmoid/Compose/Stack transforms and their log-det-Jacobians), and gradients of log_prob
with respect to the parameters. Everything works in float64 (special functions and LAPACK are involved) and is
drawn from the seeded global generator, which is torch's; values are compared to a tight tolerance (1e-12). Two
wider programs walk the later weeks' families (HalfNormal to LKJCholesky) and transforms (Power to Cat) row by row,
and a table of edge cases (support boundaries, infinite and refused KL pairs, malformed constructions, structured
constraints, biject_to/transform_to).

Differences these programs found: none (every value, draw, message and warning already agreed with torch).
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _describe(show, name, d):
    show(name, d.batch_shape, d.event_shape, d.has_rsample, d.support)


def _shapes_and_expand(lib, show):
    """The shapes table of a lecture: scalar, batched and event-carrying families, expanded to a larger batch."""
    torch, D = lib, lib.distributions
    f64 = torch.float64
    families = {
        "Normal": D.Normal(torch.zeros(3, dtype=f64), torch.ones(3, dtype=f64)),
        "Bernoulli": D.Bernoulli(probs=torch.tensor([0.2, 0.7], dtype=f64)),
        "Categorical": D.Categorical(probs=torch.tensor([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]], dtype=f64)),
        "Binomial": D.Binomial(10, torch.tensor([0.5, 0.25], dtype=f64)),
        "Poisson": D.Poisson(torch.tensor([2.0], dtype=f64)),
        "Gamma": D.Gamma(torch.tensor(2.0, dtype=f64), torch.tensor(3.0, dtype=f64)),
        "Dirichlet": D.Dirichlet(torch.tensor([[1.0, 2.0, 3.0]], dtype=f64)),
        "MultivariateNormal": D.MultivariateNormal(torch.zeros(2, dtype=f64), torch.eye(2, dtype=f64)),
        "StudentT": D.StudentT(torch.tensor([3.0, 5.0], dtype=f64)),
    }
    for name, d in families.items():
        _describe(show, name, d)
        show(repr(d))
        wide = d.expand(torch.Size([4]) + d.batch_shape)
        show(name, "expanded", wide.batch_shape, wide.event_shape, type(wide).__name__)
    show_outcome(show, lambda: families["Normal"].expand((2, 2)))
    indep = D.Independent(families["Normal"], 1)
    show(repr(indep), indep.batch_shape, indep.event_shape, indep.expand((5,)).batch_shape)
    show_outcome(show, lambda: D.Independent(families["Normal"], 2))


def _seeded_sampling(lib, show):
    """Draws with sample shapes under manual_seed: sample and rsample of every family in the course."""
    torch, D = lib, lib.distributions
    f64 = torch.float64
    torch.manual_seed(44)
    t = lambda *v: torch.tensor(v, dtype=f64)  # noqa: E731
    dists = [
        D.Normal(t(0.0, 2.0), t(1.0, 0.5)),
        D.Bernoulli(logits=t(-1.0, 0.0, 2.0)),
        D.Categorical(logits=t(0.1, 0.5, -0.3, 1.0)),
        D.Binomial(7, t(0.3, 0.9)),
        D.Poisson(t(0.5, 4.0)),
        D.Geometric(t(0.2, 0.6)),
        D.Exponential(t(1.5)),
        D.Gamma(t(0.5, 3.0), t(2.0, 1.0)),
        D.Beta(t(2.0), t(5.0)),
        D.Dirichlet(t(1.0, 1.0, 2.0)),
        D.Uniform(t(-1.0), t(3.0)),
        D.Laplace(t(0.0), t(2.0)),
        D.Cauchy(t(1.0), t(0.5)),
        D.StudentT(t(4.0), t(1.0), t(2.0)),
        D.LogNormal(t(0.0), t(0.25)),
    ]
    for d in dists:
        s = d.sample((2,))
        show(type(d).__name__, s, s.dtype)
        if d.has_rsample:
            show(d.rsample(torch.Size([3])))
        else:
            show_outcome(show, d.rsample)


def _log_prob_and_support(lib, show):
    """log_prob in and out of the support, validate_args on and off, and the constraints' check()."""
    torch, D = lib, lib.distributions
    f64 = torch.float64
    t = lambda *v: torch.tensor(v, dtype=f64)  # noqa: E731
    cases = [
        (lambda va: D.Normal(t(0.0), t(1.0), validate_args=va), t(0.5, -1.0)),
        (lambda va: D.Bernoulli(probs=t(0.3), validate_args=va), t(0.0, 1.0, 0.5)),
        (lambda va: D.Poisson(t(3.0), validate_args=va), t(2.0, -1.0)),
        (lambda va: D.Geometric(t(0.25), validate_args=va), t(0.0, 3.0, 1.5)),
        (lambda va: D.Exponential(t(2.0), validate_args=va), t(1.0, -0.5)),
        (lambda va: D.Gamma(t(2.0), t(1.0), validate_args=va), t(1.0, -2.0)),
        (lambda va: D.Beta(t(2.0), t(3.0), validate_args=va), t(0.25, 1.5)),
        (lambda va: D.Uniform(t(0.0), t(2.0), validate_args=va), t(1.0, 3.0)),
        (lambda va: D.Binomial(5, t(0.4), validate_args=va), t(2.0, 6.0)),
        (lambda va: D.Categorical(probs=t(0.2, 0.8), validate_args=va), torch.tensor([0, 1, 2])),
        (lambda va: D.Dirichlet(t(1.0, 2.0), validate_args=va), t(0.3, 0.7)),
        (lambda va: D.Dirichlet(t(1.0, 2.0), validate_args=va), t(0.3, 0.8)),
    ]
    for make, value in cases:
        for va in (True, False):
            d = make(va)
            show_outcome(show, lambda d=d, value=value: d.log_prob(value))
        show(type(d).__name__, d.support, d.support.check(value))
    C = D.constraints
    show(C.positive.check(t(-1.0, 0.0, 2.0)), C.unit_interval.check(t(0.0, 1.0, 1.1)))
    show(C.simplex.check(t(0.5, 0.5)), C.interval(0.0, 2.0).check(t(2.0, 2.5)), C.nonnegative_integer)
    show(C.greater_than(1.0), C.integer_interval(0, 4), C.real_vector, C.positive_definite)
    show_outcome(show, lambda: D.Normal(t(0.0), t(-1.0), validate_args=True))
    show_outcome(show, lambda: D.Bernoulli(probs=t(1.5), validate_args=True))
    show_outcome(show, lambda: D.Bernoulli(probs=t(0.5), logits=t(0.0)))


def _moments_and_cdfs(lib, show):
    """mean/mode/variance/stddev/entropy/cdf/icdf where each family defines them, and its refusal where not."""
    torch, D = lib, lib.distributions
    f64 = torch.float64
    t = lambda *v: torch.tensor(v, dtype=f64)  # noqa: E731
    dists = [
        D.Normal(t(1.0), t(2.0)), D.Exponential(t(0.5)), D.Uniform(t(0.0), t(4.0)), D.Laplace(t(1.0), t(3.0)),
        D.Cauchy(t(0.0), t(1.0)), D.Gamma(t(3.0), t(2.0)), D.Beta(t(2.0), t(2.0)), D.StudentT(t(3.0)),
        D.LogNormal(t(0.0), t(1.0)), D.Bernoulli(probs=t(0.3)), D.Geometric(t(0.4)), D.Poisson(t(2.5)),
        D.Binomial(6, t(0.5)), D.Categorical(probs=t(0.2, 0.5, 0.3)), D.Dirichlet(t(2.0, 3.0)),
        D.StudentT(t(1.5)),
    ]
    x = t(0.5)
    q = t(0.9)
    for d in dists:
        for what in ("mean", "mode", "variance", "stddev"):
            show_outcome(show, lambda d=d, what=what: (type(d).__name__, what, getattr(d, what)))
        show_outcome(show, lambda d=d: (type(d).__name__, "entropy", d.entropy()))
        show_outcome(show, lambda d=d: (type(d).__name__, "cdf", d.cdf(x)))
        show_outcome(show, lambda d=d: (type(d).__name__, "icdf", d.icdf(q)))


def _enumerate_and_kl(lib, show):
    """enumerate_support of the discrete families, and a table of KL divergences with an unregistered pair."""
    torch, D = lib, lib.distributions
    f64 = torch.float64
    t = lambda *v: torch.tensor(v, dtype=f64)  # noqa: E731
    bern = D.Bernoulli(probs=t(0.1, 0.6))
    show(bern.has_enumerate_support, bern.enumerate_support(), bern.enumerate_support(expand=False))
    cat = D.Categorical(logits=t(0.0, 1.0, 2.0))
    show(cat.enumerate_support(), cat.enumerate_support(expand=False).shape)
    binom = D.Binomial(3, t(0.2, 0.5))
    show(binom.enumerate_support())
    show_outcome(show, lambda: D.Poisson(t(1.0)).enumerate_support())
    show_outcome(show, lambda: D.Normal(t(0.0), t(1.0)).enumerate_support())
    support = cat.enumerate_support()
    show(cat.log_prob(support).exp().sum())
    kl = D.kl_divergence
    pairs = [
        (D.Normal(t(0.0), t(1.0)), D.Normal(t(1.0), t(2.0))),
        (D.Bernoulli(probs=t(0.3)), D.Bernoulli(probs=t(0.6))),
        (D.Categorical(probs=t(0.5, 0.5)), D.Categorical(probs=t(0.9, 0.1))),
        (D.Poisson(t(2.0)), D.Poisson(t(3.0))),
        (D.Exponential(t(1.0)), D.Gamma(t(2.0), t(1.0))),
        (D.Gamma(t(2.0), t(1.0)), D.Gamma(t(3.0), t(2.0))),
        (D.Beta(t(2.0), t(3.0)), D.Beta(t(1.0), t(1.0))),
        (D.Dirichlet(t(1.0, 2.0)), D.Dirichlet(t(2.0, 2.0))),
        (D.Uniform(t(0.0), t(1.0)), D.Normal(t(0.0), t(1.0))),
        (D.Uniform(t(0.0), t(2.0)), D.Uniform(t(0.5), t(1.0))),
        (D.Laplace(t(0.0), t(1.0)), D.Laplace(t(1.0), t(2.0))),
        (D.Geometric(t(0.3)), D.Geometric(t(0.5))),
        (D.Normal(t(0.0), t(1.0)), D.Laplace(t(0.0), t(1.0))),
        (D.Cauchy(t(0.0), t(1.0)), D.Normal(t(0.0), t(1.0))),
        (D.Normal(t(0.0), t(1.0)), D.StudentT(t(3.0))),
    ]
    for p, q in pairs:
        show_outcome(show, lambda p=p, q=q: (type(p).__name__, type(q).__name__, kl(p, q)))
    mvn_p = D.MultivariateNormal(t(0.0, 0.0), torch.eye(2, dtype=f64))
    mvn_q = D.MultivariateNormal(t(1.0, -1.0), t(2.0, 0.5, 0.5, 1.0).reshape(2, 2))
    show(kl(mvn_p, mvn_q))
    show(kl(D.Independent(D.Normal(t(0.0, 1.0), t(1.0, 1.0)), 1), D.Independent(D.Normal(t(1.0, 1.0), t(2.0, 1.0)), 1)))


def _transformed_distributions(lib, show):
    """Change of variables: Exp/Affine/Sigmoid/Compose/Stack transforms, their inverses and log-det-Jacobians."""
    torch, D = lib, lib.distributions
    T = D.transforms
    f64 = torch.float64
    t = lambda *v: torch.tensor(v, dtype=f64)  # noqa: E731
    base = D.Normal(t(0.0, 0.0), t(1.0, 1.0))
    lognormal = D.TransformedDistribution(base, [T.ExpTransform()])
    x = t(0.5, 2.0)
    show(lognormal.log_prob(x), D.LogNormal(t(0.0, 0.0), t(1.0, 1.0)).log_prob(x))
    affine = T.AffineTransform(loc=t(1.0), scale=t(3.0))
    show(repr(affine), affine(t(2.0)), affine.inv(t(7.0)), affine.log_abs_det_jacobian(t(2.0), t(7.0)))
    sig = T.SigmoidTransform()
    y = sig(t(0.0, 2.0, -3.0))
    show(y, sig.inv(y), sig.log_abs_det_jacobian(t(0.0, 2.0, -3.0), y))
    compose = T.ComposeTransform([affine, T.ExpTransform()])
    z = compose(t(0.5))
    show(repr(compose), z, compose.inv(z), compose.log_abs_det_jacobian(t(0.5), z))
    show(compose.domain, compose.codomain, compose.bijective, compose.sign)
    logit_normal = D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), [sig])
    show(logit_normal.log_prob(t(0.3)), logit_normal.support, logit_normal.batch_shape, logit_normal.has_rsample)
    show(logit_normal.cdf(t(0.3)), logit_normal.icdf(t(0.3)))
    stack = T.StackTransform([T.ExpTransform(), affine], dim=1)
    grid = t(0.0, 1.0, 2.0, 3.0).reshape(2, 2)
    out = stack(grid)
    show(out, stack.inv(out), stack.log_abs_det_jacobian(grid, out))
    cat_tr = T.CatTransform([T.ExpTransform(), sig], dim=0, lengths=[1, 1])
    show(cat_tr(t(0.0, 0.0)))
    show(T.ExpTransform().inv, T.ExpTransform() == T.ExpTransform(), T.identity_transform)
    torch.manual_seed(3)
    show(lognormal.sample((2,)).dtype, lognormal.rsample().shape)
    show_outcome(show, lambda: lognormal.log_prob(t(-1.0, 1.0)))
    show_outcome(show, lambda: lognormal.entropy())


def _log_prob_gradients(lib, show):
    """Gradients of log_prob with respect to each family's parameters (a maximum likelihood lecture)."""
    torch, D = lib, lib.distributions
    f64 = torch.float64

    def param(*v):
        return torch.tensor(v, dtype=f64, requires_grad=True)

    data = torch.tensor([0.2, 1.5, 0.7, 2.4], dtype=f64)
    makers = {
        "Normal": (lambda a, b: D.Normal(a, b.exp())),
        "Gamma": (lambda a, b: D.Gamma(a.exp(), b.exp())),
        "LogNormal": (lambda a, b: D.LogNormal(a, b.exp())),
        "Laplace": (lambda a, b: D.Laplace(a, b.exp())),
        "Cauchy": (lambda a, b: D.Cauchy(a, b.exp())),
        "StudentT": (lambda a, b: D.StudentT(b.exp() + 2, a)),
        "Weibull": (lambda a, b: D.Weibull(a.exp(), b.exp())),
    }
    for name, make in makers.items():
        a, b = param(0.3), param(-0.2)
        d = make(a, b)
        loss = -d.log_prob(data).sum()
        loss.backward()
        show(name, loss, loss.grad_fn.name(), a.grad, b.grad)
    p = param(0.35)
    counts = torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0], dtype=f64)
    nll = -D.Bernoulli(probs=p).log_prob(counts).sum()
    nll.backward()
    show(nll, p.grad)
    lam = param(1.2)
    nll = -D.Poisson(lam).log_prob(torch.tensor([0.0, 2.0, 3.0], dtype=f64)).sum()
    nll.backward()
    show(nll, lam.grad)
    conc = param(1.5, 2.0, 0.5)
    obs = torch.tensor([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]], dtype=f64)
    nll = -D.Dirichlet(conc).log_prob(obs).sum()
    nll.backward()
    show(nll, conc.grad)
    alpha, beta = param(2.0), param(3.0)
    nll = -D.Beta(alpha, beta).log_prob(torch.tensor([0.1, 0.4, 0.35], dtype=f64)).sum()
    nll.backward()
    show(nll, alpha.grad, beta.grad)
    logits = param(0.2, -0.1, 0.4)
    nll = -D.Categorical(logits=logits).log_prob(torch.tensor([0, 2, 2, 1])).sum()
    nll.backward()
    show(nll, logits.grad)
    probs = param(0.3)
    nll = -D.Binomial(8, probs).log_prob(torch.tensor([3.0, 5.0], dtype=f64)).sum()
    nll.backward()
    show(nll, probs.grad)


def _multivariate_and_mixtures(lib, show):
    """MultivariateNormal three ways, Independent, and a MixtureSameFamily of Gaussians with its gradients."""
    torch, D = lib, lib.distributions
    f64 = torch.float64
    torch.manual_seed(7)
    loc = torch.tensor([1.0, -1.0], dtype=f64)
    cov = torch.tensor([[2.0, 0.6], [0.6, 1.0]], dtype=f64)
    by_cov = D.MultivariateNormal(loc, covariance_matrix=cov)
    by_prec = D.MultivariateNormal(loc, precision_matrix=torch.linalg.inv(cov))
    by_tril = D.MultivariateNormal(loc, scale_tril=torch.linalg.cholesky(cov))
    x = torch.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=f64)
    for d in (by_cov, by_prec, by_tril):
        show(d.log_prob(x), d.entropy(), d.mean, d.mode, d.variance)
    show(repr(by_cov), by_cov.batch_shape, by_cov.event_shape, by_cov.scale_tril)
    show(by_tril.rsample((3,)), by_cov.expand((2,)).batch_shape)
    show_outcome(show, lambda: D.MultivariateNormal(loc))
    show_outcome(show, lambda: D.MultivariateNormal(loc, torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=f64),
                                                    validate_args=True))
    show_outcome(show, lambda: by_cov.cdf(x))
    weights = torch.tensor([0.3, 0.7], dtype=f64, requires_grad=True)
    means = torch.tensor([-1.0, 2.0], dtype=f64, requires_grad=True)
    scales = torch.tensor([0.5, 1.0], dtype=f64, requires_grad=True)
    mix = D.MixtureSameFamily(D.Categorical(probs=weights), D.Normal(means, scales))
    show(repr(mix), mix.batch_shape, mix.event_shape, mix.has_rsample)
    data = torch.tensor([-1.2, 0.3, 2.5, 1.9], dtype=f64)
    nll = -mix.log_prob(data).sum()
    nll.backward()
    show(nll, weights.grad, means.grad, scales.grad)
    show(mix.mean, mix.variance, mix.cdf(torch.tensor(0.5, dtype=f64)))
    show(mix.sample((4,)))
    show_outcome(show, lambda: mix.rsample())
    mix2d = D.MixtureSameFamily(D.Categorical(logits=torch.zeros(3, dtype=f64)),
                                D.Independent(D.Normal(torch.randn(3, 2, dtype=f64), torch.ones(3, 2, dtype=f64)), 1))
    show(mix2d.batch_shape, mix2d.event_shape, mix2d.log_prob(torch.zeros(2, dtype=f64)), mix2d.sample().shape)
    show_outcome(show, lambda: D.MixtureSameFamily(D.Categorical(logits=torch.zeros(2)), D.Normal(0.0, 1.0)))
    indep = D.Independent(D.Bernoulli(probs=torch.full((2, 3), 0.25, dtype=f64)), 1)
    show(indep.log_prob(torch.ones(2, 3, dtype=f64)), indep.entropy(), indep.mean, indep.support)
    show(math.isclose(float(indep.log_prob(torch.zeros(2, 3, dtype=f64))[0]), 3 * math.log(0.75)))


def _reparameterised_gradients(lib, show):
    """Pathwise gradients through rsample (Gamma/Beta/Dirichlet/StudentT use the implicit reparameterisation)."""
    torch, D = lib, lib.distributions
    f64 = torch.float64
    torch.manual_seed(11)

    def param(*v):
        return torch.tensor(v, dtype=f64, requires_grad=True)

    conc, rate = param(0.7, 2.5), param(1.5, 0.5)
    g = D.Gamma(conc, rate).rsample((3,))
    g.sum().backward()
    show(g, g.grad_fn.name(), conc.grad, rate.grad)
    a, b = param(2.0), param(0.5)
    x = D.Beta(a, b).rsample((4,))
    x.pow(2).mean().backward()
    show(x, a.grad, b.grad)
    alpha = param(1.0, 2.0, 3.0)
    s = D.Dirichlet(alpha).rsample()
    (s * torch.arange(3, dtype=f64)).sum().backward()
    show(s, alpha.grad)
    df, loc, scale = param(5.0), param(0.0), param(2.0)
    y = D.StudentT(df, loc, scale).rsample((2,))
    y.sum().backward()
    show(y, df.grad, loc.grad, scale.grad)
    mu, sigma = param(0.5), param(1.5)
    z = D.LogNormal(mu, sigma).rsample((3,))
    z.mean().backward()
    show(torch.round(z, decimals=10), torch.round(mu.grad, decimals=10), torch.round(sigma.grad, decimals=10))
    low, high = param(-1.0), param(2.0)
    u = D.Uniform(low, high).rsample((3,))
    u.sum().backward()
    show(u, low.grad, high.grad)
    lam = param(3.0)
    e = D.Exponential(lam).rsample((2,))
    e.sum().backward()
    show(e, lam.grad)
    with torch.no_grad():
        show(D.Normal(param(0.0), param(1.0)).rsample().requires_grad)
    show(D.Normal(param(0.0), param(1.0)).sample().requires_grad)


def _float32_course(lib, show):
    """The same catalogue in the default float32, as most students run it: dtypes, shapes, broadcasting of
    parameters given as Python numbers, and the global validate_args switch."""
    torch, D = lib, lib.distributions
    torch.manual_seed(5)
    n = D.Normal(0.0, 1.0)
    show(n.loc, n.scale, n.batch_shape, n.sample().dtype, n.sample((2, 3)).shape)
    show(n.cdf(torch.tensor([0.0, 1.0, -2.0])), n.icdf(torch.tensor([0.5, 0.975])))
    show(n.log_prob(torch.tensor(1.0)), n.entropy())
    b = D.Normal(torch.zeros(2), 1.0)
    show(b.scale, b.batch_shape, b.log_prob(torch.zeros(3, 1)).shape)
    show_outcome(show, lambda: b.log_prob(torch.zeros(3)))
    show(D.Bernoulli(0.3).probs, D.Bernoulli(logits=0.0).probs, D.Bernoulli(0.3).logits)
    show(D.Categorical(torch.tensor([1.0, 1.0, 2.0])).probs, D.Categorical(logits=torch.tensor([0.0, 0.0])).logits)
    show(D.Poisson(2.0).sample((4,)), D.Geometric(0.5).sample((4,)), D.Binomial(4, 0.5).sample((4,)))
    show(D.Uniform(0.0, 1.0).sample((3,)), D.Exponential(2.0).sample((3,)).dtype)
    show(D.Gamma(2.0, 1.0).sample((2,)), D.Beta(1.0, 1.0).sample((2,)))
    show_outcome(show, lambda: D.Poisson(-1.0))
    show_outcome(show, lambda: D.Uniform(1.0, 0.0))
    before = D.Distribution._validate_args
    D.Distribution.set_default_validate_args(False)
    try:
        show(D.Poisson(-1.0).rate, D.Uniform(1.0, 0.0).low)
        show(D.Exponential(1.0).log_prob(torch.tensor(-1.0)))
    finally:
        D.Distribution.set_default_validate_args(before)
    show_outcome(show, lambda: D.Exponential(1.0).log_prob(torch.tensor(-1.0)))
    show_outcome(show, lambda: D.Normal(torch.zeros(2), torch.ones(3)))
    show_outcome(show, lambda: D.Categorical(torch.tensor([])))
    show_outcome(show, lambda: D.Normal(0.0, 1.0).log_prob(1.0))
    show(D.Categorical(torch.tensor([[0.5, 0.5], [0.9, 0.1]])).entropy(),
         D.Categorical(torch.tensor([0.2, 0.8])).perplexity() if hasattr(D.Categorical, "perplexity") else "none")


def _wider_catalogue(lib, show):
    """The families and transforms a course's later weeks reach (HalfNormal to LKJCholesky, Power to CatTransform):
    shapes, reprs, draws, log_prob of a draw, moments, cdf/icdf, expand, enumerate_support and the refusals, then
    each transform's domain, codomain, sign, inverse, log-det-Jacobian and shape maps."""
    torch, D = lib, lib.distributions
    T = D.transforms
    f64 = torch.float64
    t = lambda *v: torch.tensor(v, dtype=f64)
    torch.manual_seed(1)
    fams = [
        lambda: D.HalfNormal(t(1.0, 2.0)), lambda: D.HalfCauchy(t(1.0)), lambda: D.Chi2(t(3.0)),
        lambda: D.Pareto(t(1.0), t(3.0)), lambda: D.Gumbel(t(0.0), t(2.0)), lambda: D.Weibull(t(1.0), t(1.5)),
        lambda: D.VonMises(t(0.0), t(2.0)), lambda: D.Kumaraswamy(t(2.0), t(3.0)),
        lambda: D.ContinuousBernoulli(probs=t(0.3)), lambda: D.FisherSnedecor(t(3.0), t(6.0)),
        lambda: D.Multinomial(5, probs=t(0.2, 0.3, 0.5)), lambda: D.NegativeBinomial(t(3.0), probs=t(0.4)),
        lambda: D.OneHotCategorical(probs=t(0.2, 0.8)), lambda: D.RelaxedBernoulli(t(0.5), probs=t(0.3)),
        lambda: D.RelaxedOneHotCategorical(t(0.5), probs=t(0.3, 0.7)),
        lambda: D.LowRankMultivariateNormal(t(0.0, 0.0), t(1.0, 0.5).reshape(2, 1), t(1.0, 1.0)),
        lambda: D.LogisticNormal(t(0.0, 0.0), t(1.0, 1.0)),
        lambda: D.Wishart(t(4.0), covariance_matrix=torch.eye(2, dtype=f64)),
        lambda: D.LKJCholesky(3, t(2.0)),
        lambda: D.Binomial(t(5.0, 10.0), logits=t(0.0, 1.0)),
        lambda: D.Geometric(logits=t(0.5)),
        lambda: D.Categorical(logits=t(0.0, 1.0)).expand((2,)),
        lambda: D.Independent(D.Normal(t(0.0,1.0), t(1.0,1.0)), 1).expand((3,)),
        lambda: D.MixtureSameFamily(D.Categorical(probs=t(0.5,0.5)), D.Normal(t(0.0,1.0), t(1.0,1.0))).expand((2,)),
        lambda: D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), T.ExpTransform()).expand((2,)),
    ]
    for make in fams:
        _show_family(lib, show, make())
    transforms = [
        T.PowerTransform(t(2.0)), T.TanhTransform(), T.SoftmaxTransform(), T.StickBreakingTransform(),
        T.ReshapeTransform((4,), (2, 2)), T.IndependentTransform(T.ExpTransform(), 1), T.AbsTransform(),
        T.LowerCholeskyTransform(), T.CorrCholeskyTransform(), T.SoftplusTransform(),
        T.CumulativeDistributionTransform(D.Normal(t(0.0), t(1.0))), T.PositiveDefiniteTransform(),
        T.ExpTransform().inv, T.AffineTransform(1.0, -2.0, event_dim=1), T.identity_transform,
        T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.0, 2.0)]).inv,
        T.StackTransform([T.ExpTransform(), T.TanhTransform()], dim=0),
        T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 2.0)], dim=0, lengths=[1, 3]),
    ]
    x = t(0.1, 0.2, -0.3, 0.4)
    inputs = {T.LowerCholeskyTransform: x.reshape(2, 2), T.PositiveDefiniteTransform: t(1.0, 0.0, 0.5, 1.0).reshape(2, 2),
              T.CorrCholeskyTransform: x[:3], T.StackTransform: x[:2], T.PowerTransform: x.abs()}
    for transform in transforms:
        _show_transform(show, transform, inputs.get(type(transform), x))


def _show_family(lib, show, d):
    """One row of the catalogue: a family's shapes, draws and each quantity it defines (or its refusal)."""
    name = type(d).__name__
    show(repr(d), d.batch_shape, d.event_shape, d.has_rsample, d.support, d.has_enumerate_support)
    show_outcome(show, lambda: d.sample((2,)))
    s = d.sample()
    show_outcome(show, lambda: d.log_prob(s))
    for what in ("mean", "mode", "variance", "stddev"):
        show_outcome(show, lambda what=what: (name, what, getattr(d, what)))
    show_outcome(show, d.entropy)
    show_outcome(show, lambda: d.cdf(s))
    show_outcome(show, lambda: d.icdf(lib.tensor(0.3, dtype=lib.float64)))
    show_outcome(show, lambda: d.expand((4,) + tuple(d.batch_shape)).batch_shape)
    show_outcome(show, d.enumerate_support)
    show_outcome(show, lambda: d.arg_constraints)


def _show_transform(show, transform, x):
    """A transform's spaces, sign, image of ``x``, inverse, log-det-Jacobian and shape maps."""
    show(repr(transform), transform.domain, transform.codomain, transform.bijective, transform.event_dim)
    show_outcome(show, lambda: transform.sign)
    try:
        y = transform(x)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        show(type(e).__name__, e)
        return
    show(y)
    show_outcome(show, lambda: transform.inv(y))
    show_outcome(show, lambda: transform.log_abs_det_jacobian(x, y))
    show_outcome(show, lambda: transform.forward_shape((3, 4)))
    show_outcome(show, lambda: transform.inverse_shape((3, 4)))

def _edge_cases_table(lib, show):
    """A students' table of edge cases: values on support boundaries, infinite and refused KL pairs, malformed
    constructions and the messages they give, and constraints' check() on the structured constraints."""
    torch, D = lib, lib.distributions
    T = D.transforms
    f64 = torch.float64
    t = lambda *v: torch.tensor(v, dtype=f64)
    torch.manual_seed(2)
    so = lambda f: show_outcome(show, f)
    so(lambda: D.Normal(t(0.0), t(1.0)).log_prob(torch.tensor([1, 2])))
    so(lambda: D.Normal(t(0.0, 1.0), t(1.0, 1.0)).sample(5))
    so(lambda: D.Normal(t(0.0), t(1.0)).sample([2, 1]).shape)
    so(lambda: D.Categorical(probs=t(0.2, 0.8)).sample((3,)).dtype)
    so(lambda: D.Categorical(probs=t(-0.2, 0.8)))
    so(lambda: D.Categorical(probs=t(0.2, 0.9)).probs)
    so(lambda: D.Categorical(logits=t(float('inf'), 0.0)).probs)
    so(lambda: D.Bernoulli(logits=t(50.0)).log_prob(t(0.0)))
    so(lambda: D.Bernoulli(probs=t(1.0)).entropy())
    so(lambda: D.Bernoulli(probs=t(0.0)).log_prob(t(0.0)))
    so(lambda: D.Binomial(t(-1.0), t(0.5)))
    so(lambda: D.Binomial(3, t(0.5)).log_prob(t(1.5)))
    so(lambda: D.Binomial(3, t(0.5), validate_args=False).log_prob(t(1.5)))
    so(lambda: D.Poisson(t(0.0)).log_prob(t(0.0)))
    so(lambda: D.Gamma(t(1.0), t(1.0)).log_prob(t(0.0)))
    so(lambda: D.Beta(t(1.0), t(1.0)).log_prob(t(0.0, 1.0)))
    so(lambda: D.Uniform(t(0.0), t(1.0), validate_args=False).log_prob(t(-1.0, 2.0)))
    so(lambda: D.Uniform(t(0.0), t(1.0)).cdf(t(2.0)))
    so(lambda: D.Uniform(t(0.0), t(1.0)).icdf(t(2.0)))
    so(lambda: D.Normal(t(0.0), t(1.0)).icdf(t(1.5)))
    so(lambda: D.Normal(t(0.0), t(1.0), validate_args=False).icdf(t(1.5)))
    so(lambda: D.Normal(t(0.0), t(1.0)).cdf(t(float('inf'))))
    so(lambda: D.Exponential(t(1.0)).icdf(t(0.5)))
    so(lambda: D.Exponential(t(1.0)).cdf(t(-1.0)))
    so(lambda: D.Laplace(t(0.0), t(1.0)).icdf(t(0.0, 1.0)))
    so(lambda: D.Cauchy(t(0.0), t(1.0)).cdf(t(1.0)))
    so(lambda: D.Dirichlet(t(0.5, 0.5)).mode)
    so(lambda: D.Beta(t(0.5), t(2.0)).mode)
    so(lambda: D.Gamma(t(0.5), t(2.0)).mode)
    so(lambda: D.StudentT(t(1.0)).variance)
    so(lambda: D.StudentT(t(1.0)).mean)
    so(lambda: D.Geometric(t(1.0)).entropy())
    so(lambda: D.Geometric(t(0.0)))
    so(lambda: D.kl_divergence(D.Normal(t(0.0), t(1.0)), D.Bernoulli(t(0.5))))
    so(lambda: D.kl_divergence(D.Uniform(t(0.0), t(2.0)), D.Uniform(t(0.5), t(3.0))))
    so(lambda: D.kl_divergence(D.Bernoulli(t(0.0)), D.Bernoulli(t(1.0))))
    so(lambda: D.kl_divergence(D.Normal(t(0.0), t(1.0)), D.Gumbel(t(0.0), t(1.0))))
    so(lambda: D.kl_divergence(D.Exponential(t(1.0)), D.Normal(t(0.0), t(1.0))))
    so(lambda: D.kl_divergence(D.Gamma(t(2.0),t(1.0)), D.Normal(t(0.0), t(1.0))))
    so(lambda: D.kl_divergence(D.Beta(t(2.0),t(1.0)), D.Normal(t(0.0), t(1.0))))
    so(lambda: D.kl_divergence(D.Beta(t(2.0),t(1.0)), D.Uniform(t(0.0), t(1.0))))
    so(lambda: D.kl_divergence(D.Laplace(t(2.0),t(1.0)), D.Normal(t(0.0), t(1.0))))
    so(lambda: D.kl_divergence(D.Poisson(t(2.0)), D.Bernoulli(t(0.3))))
    so(lambda: D.kl_divergence(D.Binomial(3, t(0.2)), D.Binomial(3, t(0.5))))
    so(lambda: D.kl_divergence(D.Binomial(3, t(0.2)), D.Binomial(4, t(0.5))))
    so(lambda: D.kl_divergence(D.Independent(D.Normal(t(0.0), t(1.0)),1), D.Normal(t(0.0), t(1.0))))
    so(lambda: D.kl_divergence(D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), T.ExpTransform()), D.TransformedDistribution(D.Normal(t(1.0), t(1.0)), T.ExpTransform())))
    so(lambda: D.kl_divergence(D.LogNormal(t(0.0), t(1.0)), D.LogNormal(t(1.0), t(2.0))))
    so(lambda: D.kl_divergence(D.StudentT(t(3.0)), D.StudentT(t(3.0))))
    so(lambda: D.kl_divergence(D.MultivariateNormal(t(0.0,0.0), torch.eye(2, dtype=f64)), D.MultivariateNormal(t(0.0,0.0,0.0), torch.eye(3, dtype=f64))))
    so(lambda: D.kl_divergence(D.Categorical(probs=t(0.5,0.5)), D.Categorical(probs=t(1.0,0.0))))
    so(lambda: D.kl_divergence(D.Categorical(probs=t(0.5,0.5)), D.Categorical(probs=t(0.3,0.3,0.4))))
    so(lambda: D.MixtureSameFamily(D.Categorical(probs=t(0.5,0.5)), D.Normal(t(0.0,1.0), t(1.0,1.0))).entropy())
    so(lambda: D.MixtureSameFamily(D.Categorical(probs=t(0.5,0.5)), D.Normal(t(0.0,1.0,2.0), t(1.0,1.0,1.0))))
    so(lambda: D.MixtureSameFamily(t(0.5,0.5), D.Normal(t(0.0,1.0), t(1.0,1.0))))
    so(lambda: D.MixtureSameFamily(D.Categorical(probs=t(0.5,0.5)), t(0.0)))
    so(lambda: D.MixtureSameFamily(D.Categorical(probs=t(0.5,0.5)), D.Normal(t(0.0,1.0), t(1.0,1.0)), validate_args=True).log_prob(t(float('nan'))))
    so(lambda: D.Independent(D.Normal(t(0.0,1.0), t(1.0,1.0)), 1, validate_args=True).log_prob(t(0.0)))
    so(lambda: D.Independent(D.Normal(t(0.0,1.0), t(1.0,1.0)), 1).rsample((2,)))
    so(lambda: D.Independent(D.Bernoulli(t(0.3,0.4)), 1).enumerate_support())
    so(lambda: D.Independent(D.Normal(t(0.0,1.0), t(1.0,1.0)), 1).cdf(t(0.0, 0.0)))
    so(lambda: D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), [T.AffineTransform(t(1.0), t(-2.0))]).cdf(t(0.5)))
    so(lambda: D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), [T.AffineTransform(t(1.0), t(-2.0))]).icdf(t(0.5)))
    so(lambda: D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), [T.TanhTransform()]).mean)
    so(lambda: D.TransformedDistribution(t(0.0), [T.TanhTransform()]))
    so(lambda: D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), [T.SoftmaxTransform()]))
    so(lambda: D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), [1]))
    so(lambda: D.TransformedDistribution(D.Normal(t(0.0,1.0), t(1.0,1.0)), [T.StickBreakingTransform()]).event_shape)
    so(lambda: D.LogNormal(t(0.0), t(1.0)).base_dist)
    so(lambda: D.LogNormal(t(0.0), t(1.0)).transforms)
    so(lambda: D.LogNormal(t(0.0), t(1.0)).entropy())
    so(lambda: D.LogNormal(t(0.0), t(1.0)).cdf(t(1.0)))
    so(lambda: D.Normal(t(0.0), t(1.0)).perplexity())
    so(lambda: D.MultivariateNormal(t(0.0,0.0), torch.eye(3, dtype=f64)))
    so(lambda: D.MultivariateNormal(t(0.0), torch.eye(1, dtype=f64)[0]))
    so(lambda: D.MultivariateNormal(t(0.0,0.0), torch.eye(2, dtype=f64)).log_prob(t(0.0)))
    so(lambda: D.MultivariateNormal(t(0.0,0.0), torch.eye(2, dtype=f64)).precision_matrix)
    so(lambda: D.MultivariateNormal(t(0.0,0.0), scale_tril=t(1.0,0.0,0.5,2.0).reshape(2,2)).covariance_matrix)
    so(lambda: D.MultivariateNormal(t(0.0,0.0), scale_tril=t(1.0,0.3,0.5,2.0).reshape(2,2), validate_args=True))
    so(lambda: D.MultivariateNormal(t(0.0,0.0), precision_matrix=t(1.0,0.3,0.5,2.0).reshape(2,2), validate_args=True))
    so(lambda: D.MultivariateNormal(t(0.0,0.0), torch.eye(2, dtype=f64)).stddev)
    so(lambda: D.Dirichlet(t(1.0)).log_prob(t(1.0)))
    so(lambda: D.Dirichlet(t(1.0, -1.0)))
    so(lambda: D.Dirichlet(t(1.0, 1.0)).icdf(t(0.5)))
    so(lambda: D.Categorical(probs=t(0.5,0.5)).cdf(t(0.0)))
    so(lambda: D.Bernoulli(t(0.5)).rsample())
    so(lambda: D.Normal(t(0.0), t(1.0)).support.event_dim)
    so(lambda: D.Dirichlet(t(1.0, 1.0)).support.event_dim)
    so(lambda: D.constraints.independent(D.constraints.real, 1).check(t(0.0, float('nan'))))
    so(lambda: D.constraints.cat([D.constraints.real, D.constraints.positive], lengths=[1,1]).check(t(-1.0, -1.0)))
    so(lambda: D.constraints.stack([D.constraints.real, D.constraints.positive]).check(t(-1.0, -1.0)))
    so(lambda: D.constraints.lower_cholesky.check(t(1.0,0.0,1.0,1.0).reshape(2,2)))
    so(lambda: D.constraints.corr_cholesky.check(torch.eye(2, dtype=f64)))
    so(lambda: D.constraints.positive_semidefinite.check(t(1.0,2.0,2.0,1.0).reshape(2,2)))
    so(lambda: D.constraints.boolean.check(t(0.0, 1.0, 0.5)))
    so(lambda: D.constraints.one_hot.check(t(0.0, 1.0)))
    so(lambda: D.constraints.half_open_interval(0.0, 1.0).check(t(0.0, 1.0)))
    so(lambda: D.constraints.integer_interval(0, 3).check(t(3.0, 3.5)))
    so(lambda: D.constraints.is_dependent(D.constraints.dependent))
    so(lambda: D.constraints.dependent.check(t(1.0)))
    so(lambda: D.constraints.multinomial(3).check(t(1.0, 2.0)))
    so(lambda: D.constraints.square.check(t(1.0,2.0,2.0,1.0).reshape(2,2)))
    so(lambda: D.constraints.symmetric.check(t(1.0,2.0,3.0,1.0).reshape(2,2)))
    so(lambda: D.biject_to(D.constraints.positive))
    so(lambda: D.transform_to(D.constraints.simplex))
    so(lambda: D.biject_to(D.constraints.simplex))
    so(lambda: D.biject_to(D.constraints.interval(0.0, 2.0))(t(0.0)))
    so(lambda: D.biject_to(D.constraints.integer_interval(0, 2)))


PROGRAMS = [
    _shapes_and_expand,
    _seeded_sampling,
    _log_prob_and_support,
    _moments_and_cdfs,
    _enumerate_and_kl,
    _transformed_distributions,
    _log_prob_gradients,
    _multivariate_and_mixtures,
    _reparameterised_gradients,
    _float32_course,
    _wider_catalogue,
    _edge_cases_table,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-12, atol=1e-12)
