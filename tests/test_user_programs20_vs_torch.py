"""A twentieth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: probabilistic-modelling notebooks. Bayesian linear regression
updated batch by batch in closed form (cholesky, cholesky_solve, cholesky_inverse, solve_triangular left and right,
unit-diagonal and transposed, the deprecated triangular_solve, a batched grid of prior precisions) with its
evidence as a MultivariateNormal's log_prob and its gradient; MultivariateNormal by scale_tril, covariance and
precision beside LowRankMultivariateNormal (moments, entropy, batch/event shapes, expand, rsample gradients, KLs
between the forms, the refusals of wrong arguments); a table of univariate families (Normal, Gamma, Beta, StudentT,
Laplace, Uniform, Exponential, Dirichlet: mean/mode/variance, cdf/icdf or their NotImplementedError, implicit
reparameterisation gradients); Categorical/Bernoulli/Poisson/OneHot/Binomial in a count-data notebook with a
Poisson regression fitted through log_prob; validate_args' messages for parameters and supports, switched off per
instance and globally, and a user's Distribution without arg_constraints/support (its warnings); a table of KL
divergences (infinite, batched, registered by the user, refused); change of variables with Exp/Affine/Sigmoid/
Compose transforms, caching, log_abs_det_jacobian and Independent; a Gaussian process with an ARD RBF kernel fitted
by the marginal likelihood with Adam; a hand-written HMC sampler and Langevin/MALA for a Bayesian logistic
regression against LBFGS's MAP and a Laplace approximation; mean-field variational inference with an ELBO,
score-function gradients and a Gamma-Poisson posterior; reproducible sampling (generators, fork_rng, RNG state,
each family's draws against torch's sampling functions); and a user's own Distribution, Transform and registered
KL. Everything is drawn from the seeded global generator (or seeded generators), which is torch's; values are
compared to a tolerance (matrix products and LAPACK are not bit for bit), and the samplers, the GP and the closed
forms work in float64, as careful users of them do.

Differences these programs found, now fixed (``tests/ops/test_program20_findings_vs_torch.py``):
- a cell ending in ``torch.manual_seed(0)`` showed ``<torch._factories.Generator object at 0x...>`` where torch
  shows ``<torch._C.Generator object at 0x...>``; ``type()`` of a Size, dtype, device, finfo, iinfo, layout or
  memory format printed the module of tracegrad's class (``<class 'torch.size.Size'>``) where torch's C types
  print as ``<class 'torch.Size'>``;
- ``torch.cholesky_solve`` of integer data solved in integer arithmetic where torch refuses it
  (``"cholesky_solve_cpu" not implemented for 'Long'``).

Left: ``torch.func`` (grad, vmap, jacrev, hessian, jvp) does not exist, so the samplers take gradients with
``torch.autograd.grad`` and run one chain at a time; a complex ``linalg.cholesky`` gives +0 for a real part torch's
LAPACK leaves -0 (``tensor([[2, 1j], [-1j, 2]])``); a Generator in Python's own messages is ``'Generator'`` where
torch's is ``'torch._C.Generator'`` (``torch.ones(2) + g``); functions print as Python functions, not built-ins
(``<function guard_errors.<locals>.guarded ...>`` for ``<built-in method cholesky_solve ...>``); ``dir()`` of a
distribution lists two helpers of tracegrad's (``_family``, ``_expand_params``).
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _online_bayesian_regression(lib, show):
    """Bayesian linear regression in closed form, updated batch by batch: the posterior precision's Cholesky
    factor, the mean by cholesky_solve, the covariance by cholesky_inverse and by triangular solves (left and
    right, transposed, unit-diagonal), a grid of prior precisions batched through one cholesky, the log evidence
    against a MultivariateNormal's log_prob, and its gradient with respect to the log noise precision."""
    torch = lib
    torch.manual_seed(200)
    dtype = torch.float64
    w_true = torch.tensor([0.5, -1.0, 2.0], dtype=dtype)
    X = torch.cat([torch.ones(30, 1, dtype=dtype), torch.randn(30, 2, dtype=dtype)], dim=1)
    y = X @ w_true + 0.3 * torch.randn(30, dtype=dtype)
    alpha, beta = 2.0, 1 / 0.09
    precision = alpha * torch.eye(3, dtype=dtype)
    shift = torch.zeros(3, 1, dtype=dtype)
    for batch in range(3):
        xb, yb = X[10 * batch:10 * (batch + 1)], y[10 * batch:10 * (batch + 1)]
        precision = precision + beta * xb.T @ xb
        shift = shift + beta * xb.T @ yb.unsqueeze(1)
        L = torch.linalg.cholesky(precision)
        mean = torch.cholesky_solve(shift, L)
        show(batch, mean.squeeze(1), L.diagonal())
    cov = torch.cholesky_inverse(L)
    L_inv = torch.linalg.solve_triangular(L, torch.eye(3, dtype=dtype), upper=False)
    show(cov, torch.allclose(cov, L_inv.T @ L_inv), torch.linalg.solve_triangular(L.T, L_inv, upper=True))
    right = torch.linalg.solve_triangular(L, torch.ones(2, 3, dtype=dtype), upper=False, left=False)
    show(right, torch.linalg.solve_triangular(L, torch.ones(3, 1, dtype=dtype), upper=False, unitriangular=True))
    show(torch.triangular_solve(torch.ones(3, 1, dtype=dtype), L, upper=False))
    U = torch.linalg.cholesky(precision, upper=True)
    show(torch.cholesky_solve(shift, U, upper=True).squeeze(1), torch.cholesky_inverse(U, upper=True).diagonal())
    alphas = torch.tensor([0.01, 1.0, 100.0], dtype=dtype)
    grid = alphas[:, None, None] * torch.eye(3, dtype=dtype) + beta * X.T @ X
    Ls = torch.linalg.cholesky(grid)
    means = torch.cholesky_solve((beta * X.T @ y).expand(3, 3).unsqueeze(-1), Ls).squeeze(-1)
    show(Ls.shape, means, 2 * Ls.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    log_beta = torch.tensor(math.log(beta), dtype=dtype, requires_grad=True)
    marginal_cov = X @ X.T / alpha + torch.eye(30, dtype=dtype) / log_beta.exp()
    evidence = torch.distributions.MultivariateNormal(torch.zeros(30, dtype=dtype), marginal_cov).log_prob(y)
    evidence.backward()
    K = torch.linalg.cholesky(marginal_cov.detach())
    z = torch.linalg.solve_triangular(K, y.unsqueeze(1), upper=False)
    by_hand = -0.5 * (z ** 2).sum() - K.diagonal().log().sum() - 15 * math.log(2 * math.pi)
    show(evidence, evidence.grad_fn.name(), log_beta.grad, torch.allclose(evidence, by_hand))
    show_outcome(show, lambda: torch.cholesky_solve(shift, L.unsqueeze(0).expand(2, 3, 3)).shape)
    show_outcome(show, lambda: torch.linalg.solve_triangular(L, torch.ones(3, dtype=dtype), upper=False))
    show_outcome(show, lambda: torch.linalg.solve_triangular(L, torch.ones(2, 1, dtype=dtype), upper=False))
    show_outcome(show, lambda: torch.linalg.solve_triangular(L, torch.ones(3, 1), upper=False))
    show_outcome(show, lambda: torch.linalg.cholesky(grid - 200 * torch.eye(3, dtype=dtype)))
    show_outcome(show, lambda: torch.cholesky_inverse(torch.ones(2, 3)))
    counts = torch.tensor([[4, 2, 0], [2, 5, 1], [0, 1, 3]])  # (integer data, before a .double())
    show_outcome(show, lambda: torch.cholesky_solve(counts[:, :1], torch.linalg.cholesky(counts.double()).long()))


def _multivariate_normal_forms(lib, show):
    """MultivariateNormal three ways (scale_tril, covariance_matrix, precision_matrix) and a low-rank one:
    means, variances, covariance/precision matrices, entropy, log_prob, batch and event shapes, rsample with its
    gradients to the parameters, KL divergences between the forms, and the refusals of wrong arguments."""
    torch = lib
    D = torch.distributions
    torch.manual_seed(201)
    A = torch.randn(3, 3)
    cov = A @ A.T + 0.5 * torch.eye(3)
    loc = torch.tensor([1.0, -1.0, 0.5], requires_grad=True)
    by_cov = D.MultivariateNormal(loc, covariance_matrix=cov)
    by_tril = D.MultivariateNormal(loc, scale_tril=torch.linalg.cholesky(cov))
    by_prec = D.MultivariateNormal(loc, precision_matrix=torch.linalg.inv(cov))
    x = torch.randn(4, 3)
    for d in (by_cov, by_tril, by_prec):
        show(d.batch_shape, d.event_shape, d.log_prob(x), d.entropy(), d.variance, d.stddev)
    show(by_prec.covariance_matrix, by_cov.precision_matrix, by_prec.scale_tril)
    show(D.kl_divergence(by_cov, by_prec), D.kl_divergence(by_tril, D.MultivariateNormal(torch.zeros(3), cov * 2)))
    batched = D.MultivariateNormal(torch.zeros(2, 1, 3), scale_tril=torch.linalg.cholesky(cov).expand(4, 3, 3))
    show(batched.batch_shape, batched.event_shape, batched.sample((5,)).shape, batched.log_prob(x).shape)
    show(batched.expand((3, 2, 4)).batch_shape, batched.mean.shape, batched.mode.shape)
    scale_tril = torch.linalg.cholesky(cov).clone().requires_grad_()
    d = D.MultivariateNormal(loc, scale_tril=scale_tril)
    sample = d.rsample((6,))
    show(sample, sample.grad_fn.name())
    sample.pow(2).sum().backward()
    show(loc.grad, scale_tril.grad)
    factor = torch.randn(3, 2, requires_grad=True)
    diag = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    low = D.LowRankMultivariateNormal(loc.detach(), factor, diag)
    dense = D.MultivariateNormal(loc.detach(), covariance_matrix=factor @ factor.T + torch.diag(diag))
    show(low.batch_shape, low.event_shape, low.variance, low.covariance_matrix, low.precision_matrix)
    show(low.log_prob(x), dense.log_prob(x), low.entropy(), dense.entropy())
    kl = D.kl_divergence(low, by_tril) + D.kl_divergence(low, D.LowRankMultivariateNormal(torch.zeros(3), factor * 2,
                                                                                           diag + 1))
    kl.backward()
    show(kl, factor.grad, diag.grad)
    show(low.rsample((2,)).shape, low.scale_tril.shape, D.kl_divergence(by_tril, low))
    show_outcome(show, lambda: D.MultivariateNormal(loc))
    show_outcome(show, lambda: D.MultivariateNormal(loc, covariance_matrix=cov, scale_tril=cov))
    show_outcome(show, lambda: D.MultivariateNormal(loc, covariance_matrix=torch.ones(3)))
    show_outcome(show, lambda: D.MultivariateNormal(torch.zeros(2), covariance_matrix=cov))
    show_outcome(show, lambda: D.MultivariateNormal(torch.zeros(3), covariance_matrix=-cov))
    show_outcome(show, lambda: D.MultivariateNormal(torch.zeros(3), scale_tril=-torch.eye(3)))
    show_outcome(show, lambda: D.LowRankMultivariateNormal(torch.zeros(3), torch.ones(3), diag))
    show_outcome(show, lambda: D.LowRankMultivariateNormal(torch.zeros(3), factor, -diag))
    show_outcome(show, lambda: by_tril.log_prob(torch.zeros(2)))


def _univariate_zoo(lib, show):
    """The univariate families side by side, as a notebook tabulates them: mean, mode, variance, stddev, entropy,
    log_prob, cdf and icdf where they exist (and NotImplementedError where not), support and constraints, batch
    shapes from broadcast parameters, and the gradient of a reparameterised sample to each parameter (the implicit
    ones of Gamma, Beta and Dirichlet included)."""
    torch = lib
    D = torch.distributions
    torch.manual_seed(202)
    families = {
        "Normal": lambda: D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5])),
        "Gamma": lambda: D.Gamma(torch.tensor([0.5, 3.0]), torch.tensor([1.0, 2.0])),
        "Beta": lambda: D.Beta(torch.tensor([0.5, 2.0]), torch.tensor([0.5, 5.0])),
        "StudentT": lambda: D.StudentT(torch.tensor([1.5, 4.0]), torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])),
        "Laplace": lambda: D.Laplace(torch.tensor([0.0, -1.0]), torch.tensor([1.0, 0.25])),
        "Uniform": lambda: D.Uniform(torch.tensor([0.0, -2.0]), torch.tensor([1.0, 3.0])),
        "Exponential": lambda: D.Exponential(torch.tensor([0.5, 4.0])),
    }
    value = torch.tensor([0.3, 0.7])
    for name, make in families.items():
        d = make()
        show(name, d, d.batch_shape, d.event_shape, d.support, d.has_rsample)
        show(d.mean, d.mode, d.variance, d.stddev, d.entropy(), d.log_prob(value))
        show_outcome(show, lambda d=d: d.cdf(value))
        show_outcome(show, lambda d=d: d.icdf(torch.tensor([0.1, 0.9])))
        show(d.sample((3,)), d.sample().shape, d.expand((4, 2)).sample().shape)
    show(sorted(D.Gamma.arg_constraints.items()), D.Beta.support, D.StudentT.arg_constraints["df"])
    rates = torch.tensor([1.0, 2.0], requires_grad=True)
    conc = torch.tensor([0.8, 3.0], requires_grad=True)
    g = D.Gamma(conc, rates).rsample((4,))
    g.sum().backward()
    show(g, g.grad_fn.name(), conc.grad, rates.grad)
    a = torch.tensor([2.0, 0.5], requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    beta_sample = D.Beta(a, b).rsample((3,))
    beta_sample.log().sum().backward()
    show(beta_sample, a.grad, b.grad)
    alpha = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    p = D.Dirichlet(alpha).rsample((2,))
    (p[:, 0] * 3 + p[:, 2]).sum().backward()
    show(p, p.sum(-1), alpha.grad, D.Dirichlet(alpha).entropy(), D.Dirichlet(alpha).mean, D.Dirichlet(alpha).mode)
    scale = torch.tensor(2.0, requires_grad=True)
    for make in (lambda s: D.Laplace(0.0, s), lambda s: D.StudentT(3.0, 0.0, s), lambda s: D.Uniform(-s, s),
                 lambda s: D.Exponential(s), lambda s: D.Normal(1.0, s)):
        d = make(scale)
        r = d.rsample((5,))
        grad, = torch.autograd.grad(r.abs().sum() + d.entropy().sum(), scale)
        show(type(d).__name__, r, grad, d.batch_shape)
    show(D.Normal(0.0, 1.0).batch_shape, D.Normal(torch.zeros(2, 1), torch.ones(3)).batch_shape)
    show(type(D.Normal(0.0, 1.0).batch_shape), type(value.dtype), type(value.device), torch.finfo(value.dtype).eps)
    show(D.Normal(0.0, 1.0).log_prob(torch.tensor(0.5)), D.Normal(0, 1).cdf(torch.tensor([-1.0, 0.0, 2.0])))


def _discrete_counts(lib, show):
    """Discrete families in a count-data notebook: Categorical from probs and from logits (normalised, with
    entropy, enumerate_support, sample shapes, log_prob of a batch of labels), Bernoulli from logits with its
    binary cross-entropy equivalence, Poisson regression fitted by gradient through log_prob, and OneHot and
    Binomial beside them."""
    torch, F = lib, lib.nn.functional
    D = torch.distributions
    torch.manual_seed(203)
    probs = torch.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    cat = D.Categorical(probs=probs * 4)
    show(cat, cat.probs, cat.logits, cat.param_shape, cat.batch_shape, cat.event_shape, cat.support)
    show(cat.entropy(), cat.mean, cat.mode, cat.variance, cat.log_prob(torch.tensor([2, 0])))
    show(cat.sample((4,)), cat.enumerate_support(), cat.enumerate_support(expand=False).shape)
    logits = torch.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
    by_logits = D.Categorical(logits=logits)
    labels = torch.tensor([3, 0, 3, 2, 1])
    nll = -by_logits.log_prob(labels).mean()
    nll.backward()
    show(by_logits.logits, by_logits.probs, nll, logits.grad, F.cross_entropy(logits.detach().expand(5, 4), labels))
    show(by_logits.perplexity(), D.Categorical(logits=torch.tensor([0.0, -math.inf, 1.0])).entropy())
    show(D.Categorical(logits=torch.tensor([0.0, -math.inf, 1.0])).log_prob(torch.tensor(1)))
    bern = D.Bernoulli(logits=torch.tensor([-1.0, 0.0, 2.0]))
    target = torch.tensor([0.0, 1.0, 1.0])
    show(bern.probs, bern.mean, bern.variance, bern.entropy(), bern.log_prob(target), bern.enumerate_support())
    show(F.binary_cross_entropy_with_logits(bern.logits, target, reduction="none"), bern.sample((2,)))
    show(D.Bernoulli(probs=torch.tensor([0.0, 1.0])).entropy(), D.Bernoulli(0.3).log_prob(torch.tensor(1.0)))
    x = torch.linspace(0, 1, 8).unsqueeze(1)
    counts = D.Poisson((1.0 + 2.0 * x).exp().squeeze(1)).sample()
    w = torch.zeros(2, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.002)
    for step in range(4):
        rate = (w[0] + w[1] * x.squeeze(1)).exp()
        loss = -D.Poisson(rate).log_prob(counts).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, w.detach().clone())
    poisson = D.Poisson(torch.tensor([0.5, 4.0]))
    show(counts, poisson.mean, poisson.mode, poisson.variance, poisson.log_prob(torch.tensor([0.0, 3.0])))
    show(poisson.sample((3,)), D.Poisson(torch.tensor(0.0)).log_prob(torch.tensor(0.0)))
    onehot = D.OneHotCategorical(probs=probs)
    show(onehot.sample(), onehot.log_prob(torch.eye(3)[[2, 1]]), onehot.entropy(), onehot.event_shape)
    binom = D.Binomial(total_count=torch.tensor([5.0, 10.0]), probs=torch.tensor([0.3, 0.9]))
    show(binom.mean, binom.variance, binom.mode, binom.log_prob(torch.tensor([2.0, 9.0])), binom.sample((2,)))
    homogeneous = D.Binomial(10, torch.tensor([0.3, 0.9]))
    show(homogeneous.entropy(), homogeneous.enumerate_support(expand=False).shape)
    show_outcome(show, lambda: D.Categorical(torch.tensor([0.1, 0.2]), logits=torch.tensor([1.0, 0.0])))
    show_outcome(show, lambda: D.Categorical(torch.tensor(0.5)))
    show_outcome(show, lambda: D.Binomial(torch.tensor([5.0, 10.0]), probs=torch.tensor([0.3, 0.9])).entropy())


def _validation_errors(lib, show):
    """What validate_args says, in torch's words: parameters outside their constraints, values outside the
    support, a user's own distribution without arg_constraints or support, validation switched off per instance and
    globally, and the parameters a cell gets wrong most often."""
    torch = lib
    D = torch.distributions
    torch.manual_seed(204)
    show(D.Distribution._validate_args)
    show_outcome(show, lambda: D.Normal(0.0, -1.0))
    show_outcome(show, lambda: D.Normal(torch.zeros(2), torch.tensor([1.0, 0.0])))
    show_outcome(show, lambda: D.Normal(torch.tensor([0.0, math.nan]), 1.0))
    show_outcome(show, lambda: D.Gamma(torch.tensor([1.0, 0.0]), 1.0))
    show_outcome(show, lambda: D.Beta(-1.0, 2.0))
    show_outcome(show, lambda: D.Uniform(torch.tensor([0.0, 2.0]), torch.tensor([1.0, 1.0])))
    show_outcome(show, lambda: D.Dirichlet(torch.tensor([1.0, -0.5])))
    show_outcome(show, lambda: D.Categorical(probs=torch.tensor([0.5, -0.1, 0.6])))
    show_outcome(show, lambda: D.Bernoulli(probs=1.5))
    show_outcome(show, lambda: D.Poisson(-2.0))
    show_outcome(show, lambda: D.StudentT(df=0.0))
    show_outcome(show, lambda: D.Laplace(0.0, torch.tensor([-1.0, 1.0])))
    show_outcome(show, lambda: D.Exponential(torch.tensor([[1.0, -1.0]])))
    show_outcome(show, lambda: D.Beta(0.5, 0.5).log_prob(torch.tensor([0.2, 1.5])))
    show_outcome(show, lambda: D.Exponential(1.0).log_prob(torch.tensor(-1.0)))
    show_outcome(show, lambda: D.Poisson(2.0).log_prob(torch.tensor([1.0, 2.5])))
    show_outcome(show, lambda: D.Categorical(logits=torch.zeros(3)).log_prob(torch.tensor([0, 3])))
    show_outcome(show, lambda: D.Bernoulli(0.4).log_prob(torch.tensor([0.5])))
    show_outcome(show, lambda: D.Dirichlet(torch.ones(3)).log_prob(torch.tensor([0.5, 0.6, -0.1])))
    show_outcome(show, lambda: D.Uniform(0.0, 1.0).log_prob(torch.tensor([0.5, 1.0, 2.0])))
    show_outcome(show, lambda: D.Gamma(2.0, 1.0).log_prob(torch.tensor([-1.0])))
    show_outcome(show, lambda: D.Normal(0.0, 1.0).log_prob(torch.ones(2, 3)).shape)
    show_outcome(show, lambda: D.Normal(torch.zeros(3), 1.0).log_prob(torch.ones(2)))
    show(D.Normal(0.0, -1.0, validate_args=False).scale, D.Beta(0.5, 0.5, validate_args=False).log_prob(
        torch.tensor(1.5)), D.Uniform(0.0, 1.0, validate_args=False).log_prob(torch.tensor(2.0)))
    D.Distribution.set_default_validate_args(False)
    try:
        show(D.Exponential(-1.0).rate, D.Exponential(1.0).log_prob(torch.tensor(-1.0)))
    finally:
        D.Distribution.set_default_validate_args(True)
    show_outcome(show, lambda: D.Distribution.set_default_validate_args("yes"))

    class Coin(D.Distribution):
        def __init__(self, p, validate_args=None):
            self.p = torch.as_tensor(p)
            super().__init__(self.p.shape, validate_args=validate_args)

        def log_prob(self, value):
            if self._validate_args:
                self._validate_sample(value)
            return value * self.p.log() + (1 - value) * (1 - self.p).log()

    coin = Coin(torch.tensor([0.3, 0.8]))
    show(coin.batch_shape, coin.event_shape)
    show_outcome(show, lambda: coin.log_prob(torch.tensor([1.0, 0.0])))
    show_outcome(show, lambda: coin.mean)
    show_outcome(show, lambda: coin.sample())
    show_outcome(show, lambda: coin.entropy())
    show_outcome(show, lambda: repr(coin))
    show(Coin(0.5, validate_args=False).log_prob(torch.tensor(1.0)))


def _kl_table(lib, show):
    """A table of KL divergences between pairs of families (closed forms, infinite where supports do not nest,
    batched and broadcast), checked against Monte-Carlo estimates, with gradients to the parameters, a KL the user
    registers for a pair torch lacks, and the refusal of an unregistered pair."""
    torch = lib
    D = torch.distributions
    torch.manual_seed(205)
    pairs = [
        (D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])), D.Normal(0.5, 1.5)),
        (D.Gamma(torch.tensor([2.0, 0.5]), 1.0), D.Gamma(3.0, torch.tensor([2.0, 0.5]))),
        (D.Beta(2.0, 3.0), D.Beta(torch.tensor([1.0, 4.0]), 2.0)),
        (D.Dirichlet(torch.tensor([1.0, 2.0, 3.0])), D.Dirichlet(torch.ones(2, 3))),
        (D.Categorical(logits=torch.tensor([0.0, 1.0, -1.0])), D.Categorical(probs=torch.tensor([0.5, 0.5, 0.0]))),
        (D.Bernoulli(torch.tensor([0.2, 0.0])), D.Bernoulli(torch.tensor([0.5, 0.3]))),
        (D.Poisson(torch.tensor([1.0, 3.0])), D.Poisson(2.0)),
        (D.Laplace(0.0, 1.0), D.Laplace(1.0, torch.tensor([0.5, 2.0]))),
        (D.Exponential(torch.tensor([1.0, 2.0])), D.Exponential(3.0)),
        (D.Uniform(0.0, 1.0), D.Uniform(torch.tensor([-1.0, 0.5]), 2.0)),
        (D.Exponential(2.0), D.Gamma(torch.tensor([1.0, 2.0]), 2.0)),
        (D.Uniform(0.0, 1.0), D.Normal(0.0, torch.tensor([1.0, 2.0]))),
        (D.Uniform(0.5, 2.0), D.Gamma(2.0, 1.0)),
        (D.Normal(0.0, 1.0), D.Laplace(0.0, 2.0)),
        (D.Exponential(1.0), D.Normal(1.0, 2.0)),
        (D.Gamma(2.0, 3.0), D.Normal(0.0, 1.0)),
        (D.Beta(2.0, 2.0), D.Uniform(0.0, torch.tensor([1.0, 0.5]))),
        (D.Laplace(0.0, 1.0), D.Normal(torch.tensor([0.0, 1.0]), 1.0)),
    ]
    for p, q in pairs:
        kl = D.kl_divergence(p, q)
        show(type(p).__name__, type(q).__name__, kl, kl.shape)
    p, q = D.Normal(0.3, 1.2), D.Normal(-0.2, 0.8)
    x = p.sample((2000,))
    show(D.kl_divergence(p, q), (p.log_prob(x) - q.log_prob(x)).mean())
    mu = torch.tensor([0.5, -0.5], requires_grad=True)
    log_sigma = torch.tensor([0.0, 0.3], requires_grad=True)
    kl = D.kl_divergence(D.Normal(mu, log_sigma.exp()), D.Normal(0.0, 1.0)).sum()
    kl.backward()
    show(kl, kl.grad_fn.name(), mu.grad, log_sigma.grad)
    conc = torch.tensor([2.0, 3.0, 0.5], requires_grad=True)
    kl_dir = D.kl_divergence(D.Dirichlet(conc), D.Dirichlet(torch.ones(3)))
    show(kl_dir, torch.autograd.grad(kl_dir, conc)[0])
    ind = D.kl_divergence(D.Independent(D.Normal(torch.zeros(2, 3), 1.0), 1),
                          D.Independent(D.Normal(torch.ones(2, 3), 2.0), 1))
    show(ind, ind.shape)
    show_outcome(show, lambda: D.kl_divergence(D.StudentT(3.0), D.Normal(0.0, 1.0)))
    show_outcome(show, lambda: D.kl_divergence(D.Poisson(1.0), D.Categorical(torch.ones(3))))

    class Triangle(D.Uniform):
        pass

    @D.register_kl(Triangle, D.Normal)
    def _kl_triangle_normal(p, q):
        return torch.full(torch.broadcast_shapes(p.batch_shape, q.batch_shape), 42.0)

    show(D.kl_divergence(Triangle(0.0, 1.0), D.Normal(torch.zeros(2), 1.0)), D.kl_divergence(Triangle(0.0, 1.0),
                                                                                              D.Gamma(2.0, 1.0)))
    show_outcome(show, lambda: D.register_kl(Triangle, int))


def _transformed_densities(lib, show):
    """Change of variables by hand and by TransformedDistribution: ExpTransform (a log-normal, against LogNormal),
    AffineTransform with event_dim, SigmoidTransform (a logit-normal), a ComposeTransform and its inverse, their
    log_abs_det_jacobian, signs, domains and codomains, caching, and Independent's reinterpreted batch dimensions
    with their refusals."""
    torch = lib
    D, T = torch.distributions, torch.distributions.transforms
    torch.manual_seed(206)
    base = D.Normal(torch.tensor([0.0, 0.5]), torch.tensor([1.0, 0.3]))
    lognormal = D.TransformedDistribution(base, [T.ExpTransform()])
    value = torch.tensor([0.5, 2.0])
    show(lognormal.log_prob(value), D.LogNormal(base.loc, base.scale).log_prob(value), lognormal.batch_shape)
    show(lognormal.support, lognormal.has_rsample, lognormal.sample((3,)).shape, lognormal.cdf(value))
    show_outcome(show, lambda: lognormal.mean)
    show_outcome(show, lambda: lognormal.entropy())
    affine = T.AffineTransform(loc=torch.tensor([1.0, -1.0]), scale=torch.tensor([2.0, -0.5]))
    x = torch.tensor([0.2, 0.4])
    y = affine(x)
    show(y, affine.inv(y), affine.log_abs_det_jacobian(x, y), affine.sign, affine.event_dim, affine)
    event_affine = T.AffineTransform(0.0, torch.tensor([2.0, 3.0]), event_dim=1)
    show(event_affine.log_abs_det_jacobian(x, event_affine(x)), event_affine.domain, event_affine.codomain)
    sig = T.SigmoidTransform()
    logit_normal = D.TransformedDistribution(D.Normal(0.0, 1.0), [sig])
    u = torch.tensor([0.1, 0.5, 0.9])
    show(logit_normal.log_prob(u), sig.inv(u), sig.log_abs_det_jacobian(sig.inv(u), u), sig.sign)
    show(logit_normal.support, logit_normal.icdf(torch.tensor([0.25, 0.75])), logit_normal.cdf(u))
    chain = T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.ExpTransform(), T.AffineTransform(0.0, -1.0)])
    z = torch.tensor([-1.0, 0.0, 0.5])
    out = chain(z)
    show(out, chain.inv(out), chain.log_abs_det_jacobian(z, out), chain.sign, chain.domain, chain.codomain)
    show(chain.inv, chain.inv.inv is chain, chain.event_dim, chain.bijective, T.ExpTransform().inv.inv)
    cached = T.ExpTransform(cache_size=1)
    first = cached(z)
    show(cached.inv(first) is z, T.ExpTransform()(z) is first, cached.with_cache(0)._cache_size)
    show_outcome(show, lambda: T.ExpTransform(cache_size=2))
    scale = torch.tensor([1.5], requires_grad=True)
    flow = D.TransformedDistribution(D.Normal(torch.zeros(1), torch.ones(1)),
                                     [T.AffineTransform(0.5, scale), T.SigmoidTransform()])
    sample = flow.rsample((4,))
    nll = -flow.log_prob(torch.tensor([[0.2], [0.7]])).sum()
    nll.backward()
    show(sample, sample.grad_fn.name(), nll, scale.grad, flow.event_shape, flow.batch_shape)
    diag = D.Independent(D.Normal(torch.zeros(3, 2), torch.ones(3, 2)), 1)
    show(diag, diag.batch_shape, diag.event_shape, diag.log_prob(torch.ones(3, 2)), diag.entropy(), diag.support)
    show(D.Independent(diag.base_dist, 2).log_prob(torch.ones(3, 2)), diag.sample((5,)).shape, diag.mean.shape)
    show_outcome(show, lambda: D.Independent(diag.base_dist, 3))
    show_outcome(show, lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), [T.AffineTransform(0.0, 1.0,
                                                                                                   event_dim=1)]))
    show_outcome(show, lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), sig).log_prob(torch.tensor(1.5)))
    show_outcome(show, lambda: T.ComposeTransform([T.ExpTransform(), "log"]))


def _gp_marginal_likelihood(lib, show):
    """Gaussian-process regression with an ARD RBF kernel whose hyperparameters (log lengthscales, log outputscale,
    log noise) are fitted by the marginal likelihood, written as a MultivariateNormal's log_prob, with Adam; then the
    posterior predictive through cholesky and cholesky_solve, samples from it with a jitter, and the predictive's
    own log likelihood of held-out points."""
    torch = lib
    D = torch.distributions
    torch.manual_seed(207)
    dtype = torch.float64
    x = torch.rand(16, 2, dtype=dtype) * 4 - 2
    y = torch.sin(2 * x[:, 0]) * torch.cos(x[:, 1]) + 0.05 * torch.randn(16, dtype=dtype)
    params = {
        "log_lengthscale": torch.zeros(2, dtype=dtype, requires_grad=True),
        "log_outputscale": torch.tensor(0.0, dtype=dtype, requires_grad=True),
        "log_noise": torch.tensor(-2.0, dtype=dtype, requires_grad=True),
    }

    def rbf(a, b):
        ls = params["log_lengthscale"].exp()
        sq = ((a.unsqueeze(-2) - b.unsqueeze(-3)) / ls).pow(2).sum(-1)
        return params["log_outputscale"].exp() * torch.exp(-0.5 * sq)

    def marginal():
        K = rbf(x, x) + params["log_noise"].exp() * torch.eye(16, dtype=dtype)
        return D.MultivariateNormal(torch.zeros(16, dtype=dtype), covariance_matrix=K)

    opt = torch.optim.Adam(params.values(), lr=0.05)
    for step in range(25):
        loss = -marginal().log_prob(y) / 16
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 6 == 0:
            show(step, loss, {k: [round(v, 5) for v in p.grad.reshape(-1).tolist()] for k, p in params.items()})
    show({k: p.detach().clone() for k, p in params.items()}, loss.grad_fn.name())
    with torch.no_grad():
        x_test = torch.stack(torch.meshgrid(torch.linspace(-1, 1, 3, dtype=dtype), torch.tensor([0.0, 1.0],
                                            dtype=dtype), indexing="ij"), -1).reshape(-1, 2)
        K = rbf(x, x) + params["log_noise"].exp() * torch.eye(16, dtype=dtype)
        L = torch.linalg.cholesky(K)
        k_star = rbf(x_test, x)
        mean = k_star @ torch.cholesky_solve(y.unsqueeze(-1), L).squeeze(-1)
        v = torch.linalg.solve_triangular(L, k_star.T, upper=False)
        cov = rbf(x_test, x_test) - v.T @ v
        show(x_test, mean, cov.diagonal(), torch.linalg.eigvalsh(cov).min() > -1e-8)
        predictive = D.MultivariateNormal(mean, covariance_matrix=cov + 1e-6 * torch.eye(6, dtype=dtype))
        draws = predictive.sample((3,))
        truth = torch.sin(2 * x_test[:, 0]) * torch.cos(x_test[:, 1])
        show(draws.shape, predictive.log_prob(truth), D.Normal(mean, cov.diagonal().clamp_min(1e-9).sqrt())
             .log_prob(truth).sum())
        batch_gp = D.MultivariateNormal(torch.zeros(3, 16, dtype=dtype), scale_tril=L.expand(3, 16, 16))
        show(batch_gp.log_prob(torch.stack([y, -y, 2 * y])), batch_gp.batch_shape)
    show_outcome(show, lambda: D.MultivariateNormal(torch.zeros(6, dtype=dtype), covariance_matrix=cov - torch.eye(
        6, dtype=dtype)))


def _hamiltonian_monte_carlo(lib, show):
    """A hand-written HMC sampler for a correlated 2-d Gaussian and a banana-shaped density: the potential's
    gradient by autograd.grad, leapfrog steps, a Metropolis correction with torch.rand, the acceptance rate and
    the sample moments, plus the energy error of a too-large step."""
    torch = lib
    D = torch.distributions
    torch.manual_seed(208)
    dtype = torch.float64
    target = D.MultivariateNormal(torch.tensor([1.0, -1.0], dtype=dtype),
                                  covariance_matrix=torch.tensor([[1.0, 0.8], [0.8, 1.0]], dtype=dtype))

    def potential_and_grad(q, log_density):
        q = q.detach().requires_grad_()
        u = -log_density(q)
        g, = torch.autograd.grad(u, q)
        return u.detach(), g

    def hmc_step(q, log_density, step_size, n_leapfrog):
        p = torch.randn_like(q)
        u, g = potential_and_grad(q, log_density)
        h0 = u + 0.5 * p @ p
        q_new, p_new = q.clone(), p - 0.5 * step_size * g
        for i in range(n_leapfrog):
            q_new = q_new + step_size * p_new
            u_new, g = potential_and_grad(q_new, log_density)
            if i < n_leapfrog - 1:
                p_new = p_new - step_size * g
        p_new = p_new - 0.5 * step_size * g
        h1 = u_new + 0.5 * p_new @ p_new
        accept = torch.rand((), dtype=dtype) < torch.exp(h0 - h1).clamp(max=1.0)
        return (q_new if accept else q), bool(accept), (h1 - h0).item()

    q = torch.zeros(2, dtype=dtype)
    samples, accepted, errors = [], 0, []
    for _ in range(60):
        q, ok, err = hmc_step(q, target.log_prob, 0.25, 8)
        samples.append(q)
        accepted += ok
        errors.append(err)
    chain = torch.stack(samples[10:])
    show(accepted, chain.mean(0), torch.cov(chain.T), round(max(abs(e) for e in errors), 6))

    def banana(q):
        return D.Normal(0.0, 1.0).log_prob(q[0]) + D.Normal(q[0] ** 2, 0.5).log_prob(q[1])

    q, banana_draws, flags = torch.tensor([0.0, 0.0], dtype=dtype), [], []
    for _ in range(30):
        q, ok, err = hmc_step(q, banana, 0.1, 10)
        banana_draws.append(q)
        flags.append(ok)
    show(sum(flags), torch.stack(banana_draws).mean(0), banana_draws[-1])
    _, _, big_error = hmc_step(torch.zeros(2, dtype=dtype), target.log_prob, 1.5, 3)
    show(round(big_error, 4))
    q = torch.tensor([0.5, 0.5], dtype=dtype, requires_grad=True)
    hessian = torch.autograd.functional.hessian(lambda z: -target.log_prob(z), q.detach())
    show(hessian, target.precision_matrix)
    show_outcome(show, lambda: torch.autograd.grad(target.log_prob(q.detach()), q))


def _langevin_posterior(lib, show):
    """Bayesian logistic regression sampled by unadjusted Langevin dynamics and by MALA: the log posterior from a
    Normal prior and a Bernoulli likelihood on logits, its gradient by autograd.grad, proposals scored by Normal
    log densities, the acceptance rate, and the posterior predictive against the MAP estimate from LBFGS."""
    torch = lib
    D = torch.distributions
    torch.manual_seed(209)
    dtype = torch.float64
    X = torch.randn(40, 2, dtype=dtype)
    w_true = torch.tensor([1.5, -2.0], dtype=dtype)
    y = D.Bernoulli(logits=X @ w_true).sample()
    prior = D.Independent(D.Normal(torch.zeros(2, dtype=dtype), 2.0 * torch.ones(2, dtype=dtype)), 1)

    def log_posterior(w):
        return prior.log_prob(w) + D.Bernoulli(logits=X @ w).log_prob(y).sum()

    def value_and_grad(w):
        w = w.detach().requires_grad_()
        lp = log_posterior(w)
        g, = torch.autograd.grad(lp, w)
        return lp.detach(), g

    eps = 0.05
    w = torch.zeros(2, dtype=dtype)
    ula = []
    for _ in range(40):
        _, g = value_and_grad(w)
        w = w + 0.5 * eps ** 2 * g + eps * torch.randn(2, dtype=dtype)
        ula.append(w)
    show(torch.stack(ula[10:]).mean(0), ula[-1])
    w, accepted = torch.zeros(2, dtype=dtype), 0
    lp, g = value_and_grad(w)
    mala = []
    for _ in range(40):
        mean_fwd = w + 0.5 * eps ** 2 * g
        proposal = D.Independent(D.Normal(mean_fwd, eps), 1).sample()
        lp_new, g_new = value_and_grad(proposal)
        mean_back = proposal + 0.5 * eps ** 2 * g_new
        log_ratio = (lp_new - lp + D.Independent(D.Normal(mean_back, eps), 1).log_prob(w)
                     - D.Independent(D.Normal(mean_fwd, eps), 1).log_prob(proposal))
        if torch.log(torch.rand((), dtype=dtype)) < log_ratio:
            w, lp, g, accepted = proposal, lp_new, g_new, accepted + 1
        mala.append(w)
    draws = torch.stack(mala[10:])
    show(accepted, draws.mean(0), draws.std(0), lp)
    w_map = torch.zeros(2, dtype=dtype, requires_grad=True)
    opt = torch.optim.LBFGS([w_map], lr=1.0, max_iter=50, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = -log_posterior(w_map)
        loss.backward()
        return loss

    final = opt.step(closure)
    show(w_map.detach(), final, opt.state[w_map]["n_iter"])
    x_new = torch.tensor([[0.5, 0.5], [-1.0, 1.0]], dtype=dtype)
    predictive = torch.sigmoid(x_new @ draws.T).mean(1)
    show(predictive, torch.sigmoid(x_new @ w_map.detach()), D.Bernoulli(predictive).entropy())
    hessian = torch.autograd.functional.hessian(lambda v: -log_posterior(v), w_map.detach())
    laplace = D.MultivariateNormal(w_map.detach(), precision_matrix=hessian)
    show(hessian, laplace.covariance_matrix, laplace.entropy(), laplace.log_prob(draws).mean())


def _variational_inference(lib, show):
    """Mean-field variational inference with the reparameterisation trick: a Gaussian posterior over a regression's
    weights with softplus scales, the ELBO as expected log likelihood minus an analytic KL (and a Monte-Carlo KL
    beside it), Adam on the variational parameters, score-function gradients with a Categorical beside the
    pathwise ones, and a Gamma-Poisson model with a reparameterised Gamma posterior."""
    torch, F = lib, lib.nn.functional
    D = torch.distributions
    torch.manual_seed(210)
    X = torch.randn(50, 3)
    y = X @ torch.tensor([1.0, 0.0, -1.0]) + 0.5 * torch.randn(50)
    q_loc = torch.zeros(3, requires_grad=True)
    q_raw = torch.full((3,), -1.0, requires_grad=True)
    prior = D.Normal(torch.zeros(3), torch.ones(3))
    opt = torch.optim.Adam([q_loc, q_raw], lr=0.1)
    for step in range(30):
        q = D.Normal(q_loc, F.softplus(q_raw))
        w = q.rsample((8,))
        log_lik = D.Normal(w @ X.T, 0.5).log_prob(y).sum(-1).mean()
        kl = D.kl_divergence(q, prior).sum()
        elbo = log_lik - kl
        opt.zero_grad()
        (-elbo).backward()
        opt.step()
        if step % 10 == 0:
            show(step, elbo, kl, q_loc.grad, q_raw.grad)
    q = D.Normal(q_loc.detach(), F.softplus(q_raw.detach()))
    w = q.sample((1000,))
    show(q.loc, q.scale, D.kl_divergence(q, prior), (q.log_prob(w) - prior.log_prob(w)).sum(-1).mean())
    theta = torch.zeros(4, requires_grad=True)
    reward = torch.tensor([1.0, 0.0, 2.0, -1.0])
    cat = D.Categorical(logits=theta)
    a = cat.sample((200,))
    surrogate = (cat.log_prob(a) * reward[a]).mean()
    score_grad, = torch.autograd.grad(surrogate, theta, retain_graph=True)
    exact_grad, = torch.autograd.grad((cat.probs * reward).sum(), theta)
    show(score_grad, exact_grad, torch.bincount(a, minlength=4))
    counts = torch.tensor([3.0, 5.0, 4.0, 6.0, 2.0])
    a_raw = torch.tensor(0.0, requires_grad=True)
    b_raw = torch.tensor(0.0, requires_grad=True)
    gamma_prior = D.Gamma(2.0, 0.5)
    opt = torch.optim.Adam([a_raw, b_raw], lr=0.1)
    for step in range(20):
        q_rate = D.Gamma(a_raw.exp(), b_raw.exp())
        lam = q_rate.rsample((16,))
        elbo = (D.Poisson(lam.unsqueeze(-1)).log_prob(counts).sum(-1) + gamma_prior.log_prob(lam)
                - q_rate.log_prob(lam)).mean()
        opt.zero_grad()
        (-elbo).backward()
        opt.step()
        if step % 5 == 0:
            show(step, elbo, a_raw.grad, b_raw.grad)
    exact = D.Gamma(2.0 + counts.sum(), 0.5 + len(counts))
    q_rate = D.Gamma(a_raw.exp(), b_raw.exp())
    show(q_rate.mean, q_rate.stddev, exact.mean, exact.stddev, D.kl_divergence(q_rate, exact))


def _seeded_sampling(lib, show):
    """Reproducible sampling in a notebook: the generator manual_seed returns (a cell's last expression), a
    separate Generator for data, fork_rng around a draw, saving and restoring the RNG state, samples drawn with
    each family's sample against torch's own functions (normal, poisson, bernoulli, multinomial,
    _standard_gamma) under the same seed, and sample_n's deprecation."""
    torch = lib
    D = torch.distributions
    show(torch.manual_seed(211), type(torch.Generator()))
    g = torch.Generator().manual_seed(5)
    show(g, g.initial_seed(), torch.randn(3, generator=g), torch.default_generator.initial_seed())
    state = torch.get_rng_state()
    first = D.Normal(torch.zeros(3), 1.0).sample()
    torch.set_rng_state(state)
    show(first, D.Normal(torch.zeros(3), 1.0).sample(), torch.equal(first, torch.normal(torch.zeros(3), 1.0)))
    with torch.random.fork_rng():
        inside = D.Gamma(torch.tensor([0.5, 5.0]), 1.0).sample()
    show(inside, D.Gamma(torch.tensor([0.5, 5.0]), 1.0).sample())
    torch.manual_seed(212)
    a = D.Poisson(torch.tensor([0.5, 3.0, 50.0])).sample()
    torch.manual_seed(212)
    show(a, torch.poisson(torch.tensor([0.5, 3.0, 50.0])))
    torch.manual_seed(213)
    b = D.Bernoulli(torch.tensor([0.1, 0.5, 0.9])).sample((2,))
    torch.manual_seed(213)
    show(b, torch.bernoulli(torch.tensor([0.1, 0.5, 0.9]).expand(2, 3)))
    torch.manual_seed(214)
    c = D.Categorical(torch.tensor([0.2, 0.3, 0.5])).sample((6,))
    torch.manual_seed(214)
    show(c, torch.multinomial(torch.tensor([0.2, 0.3, 0.5]), 6, True))
    torch.manual_seed(215)
    d = D.Gamma(torch.tensor([0.5, 2.0]), torch.tensor([1.0, 4.0])).sample()
    torch.manual_seed(215)
    show(d, torch._standard_gamma(torch.tensor([0.5, 2.0])) / torch.tensor([1.0, 4.0]))
    show(D.Dirichlet(torch.tensor([[1.0, 1.0], [0.1, 0.1]])).sample((2,)), D.Beta(0.5, 0.5).sample((3,)))
    show(D.Uniform(torch.tensor([0.0, 5.0]), 6.0).sample((2,)), D.Laplace(0.0, 1.0).sample((3,)))
    show(D.StudentT(torch.tensor([1.0, 30.0])).sample(), D.Exponential(torch.tensor([0.1, 10.0])).sample())
    show(D.Normal(0.0, 1.0).sample_n(2), D.Poisson(4.0).sample((2, 2)).dtype)
    show_outcome(show, lambda: torch.Generator().manual_seed(-1))
    show_outcome(show, lambda: torch.Generator("cuda"))
    show(torch.Generator().seed() != torch.Generator().seed(), torch.Generator().device, g.get_state().shape)


def _custom_families(lib, show):
    """A user's own families on torch's extension points: a Distribution subclass with arg_constraints, support,
    rsample, expand through _get_checked_instance and validation; a Transform subclass (a sinh-arcsinh flow step)
    with _call/_inverse/log_abs_det_jacobian used in a TransformedDistribution, its cache and its inverse; an
    ExponentialFamily's entropy by Bregman divergence; and a KL registered between the user's classes."""
    torch = lib
    D, C, T = torch.distributions, torch.distributions.constraints, torch.distributions.transforms
    torch.manual_seed(216)

    class Logistic(D.Distribution):
        arg_constraints = {"loc": C.real, "scale": C.positive}
        support = C.real
        has_rsample = True

        def __init__(self, loc, scale, validate_args=None):
            self.loc, self.scale = D.utils.broadcast_all(loc, scale)
            super().__init__(self.loc.shape, validate_args=validate_args)

        def expand(self, batch_shape, _instance=None):
            new = self._get_checked_instance(Logistic, _instance)
            new.loc = self.loc.expand(batch_shape)
            new.scale = self.scale.expand(batch_shape)
            super(Logistic, new).__init__(batch_shape, validate_args=False)
            new._validate_args = self._validate_args
            return new

        @property
        def mean(self):
            return self.loc

        def rsample(self, sample_shape=torch.Size()):
            u = torch.rand(self._extended_shape(sample_shape)).clamp(1e-6, 1 - 1e-6)
            return self.loc + self.scale * (u.log() - (-u).log1p())

        def log_prob(self, value):
            if self._validate_args:
                self._validate_sample(value)
            z = (value - self.loc) / self.scale
            return -z - 2 * torch.nn.functional.softplus(-z) - self.scale.log()

        def cdf(self, value):
            return torch.sigmoid((value - self.loc) / self.scale)

    loc = torch.tensor([0.0, 1.0], requires_grad=True)
    d = Logistic(loc, 2.0)
    x = d.rsample((3,))
    x.sum().backward()
    show(d, d.batch_shape, x, loc.grad, d.log_prob(torch.tensor([0.5, 0.5])), d.cdf(torch.tensor(0.0)))
    wide = d.expand(torch.Size([4, 2]))
    show(type(wide).__name__, wide.batch_shape, wide.sample().shape, wide.mean.shape, wide._validate_args)
    show_outcome(show, lambda: Logistic(0.0, -1.0))
    show_outcome(show, lambda: d.log_prob(torch.ones(3)))
    show_outcome(show, lambda: d.entropy())
    show_outcome(show, lambda: d.expand((3,)))

    class SinhArcsinh(T.Transform):
        domain = C.real
        codomain = C.real
        bijective = True
        sign = +1

        def __init__(self, skew, tail, cache_size=0):
            super().__init__(cache_size=cache_size)
            self.skew, self.tail = skew, tail

        def __eq__(self, other):
            return isinstance(other, SinhArcsinh) and self.skew is other.skew and self.tail is other.tail

        def _call(self, x):
            return torch.sinh((torch.asinh(x) + self.skew) * self.tail)

        def _inverse(self, y):
            return torch.sinh(torch.asinh(y) / self.tail - self.skew)

        def log_abs_det_jacobian(self, x, y):
            inner = (torch.asinh(x) + self.skew) * self.tail
            return (torch.cosh(inner) * self.tail).log() - 0.5 * torch.log1p(x ** 2)

    skew = torch.tensor(0.3, requires_grad=True)
    tail = torch.tensor(1.5, requires_grad=True)
    step = SinhArcsinh(skew, tail, cache_size=1)
    flow = D.TransformedDistribution(D.Normal(0.0, 1.0), [step, T.AffineTransform(1.0, 2.0)])
    data = torch.tensor([-1.0, 0.5, 2.0, 4.0])
    nll = -flow.log_prob(data).mean()
    nll.backward()
    show(nll, skew.grad, tail.grad, flow.support, flow.rsample((2,)).shape)
    z = torch.tensor([0.1, -0.7])
    y = step(z)
    show(y, step.inv(y) is z, step.inv(y.clone()), step.inv, step.inv.inv is step, step == step.inv.inv)
    show_outcome(show, lambda: step.with_cache(0))
    show(T.ComposeTransform([step, step.inv])(z), step.inv.sign)
    show_outcome(show, lambda: T.Transform()(z))
    show_outcome(show, lambda: T.Transform().log_abs_det_jacobian(z, z))

    class Pareto2(D.Distribution):
        arg_constraints = {"alpha": C.positive}

        def __init__(self, alpha):
            self.alpha = torch.as_tensor(alpha)
            super().__init__(self.alpha.shape)

    @D.register_kl(Logistic, Logistic)
    def _kl_logistic(p, q):
        z = torch.linspace(-10, 10, 2001)
        x = p.loc.unsqueeze(-1) + p.scale.unsqueeze(-1) * z
        density = p.log_prob(x.movedim(-1, 0)).exp()
        return ((density * (p.log_prob(x.movedim(-1, 0)) - q.log_prob(x.movedim(-1, 0)))).sum(0)
                * 0.01 * p.scale)

    show(D.kl_divergence(Logistic(torch.zeros(2), 1.0), Logistic(torch.tensor([0.0, 1.0]), 1.5)))
    show_outcome(show, lambda: D.kl_divergence(Logistic(0.0, 1.0), D.Normal(0.0, 1.0)))
    show(Pareto2(2.0).batch_shape, Pareto2(torch.ones(3)).event_shape)
    show_outcome(show, lambda: Pareto2(-1.0))
    show_outcome(show, lambda: Pareto2(2.0).support)


PROGRAMS = [
    _online_bayesian_regression,
    _multivariate_normal_forms,
    _univariate_zoo,
    _discrete_counts,
    _validation_errors,
    _kl_table,
    _transformed_densities,
    _gp_marginal_likelihood,
    _hamiltonian_monte_carlo,
    _langevin_posterior,
    _variational_inference,
    _seeded_sampling,
    _custom_families,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
