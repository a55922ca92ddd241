"""Parameterizable probability distributions and sampling functions (``torch.distributions``).

Samples come from tracegrad's generator (``manual_seed``); everything else (log_prob, entropy, cdf, KL,
shapes, constraints, validation messages) follows PyTorch.
"""

from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous import Cauchy, Chi2, Exponential, Gamma, Laplace, Normal, StudentT, Uniform
from .discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    Multinomial,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate import Beta, Dirichlet, MultivariateNormal
from .transformed_distribution import (
    ExpRelaxedCategorical,
    Gumbel,
    HalfNormal,
    LogitRelaxedBernoulli,
    LogNormal,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    TransformedDistribution,
)
from .transforms import *  # noqa: F403

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
    "ExpRelaxedCategorical", "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfNormal",
    "Independent", "Laplace", "LogNormal", "LogitRelaxedBernoulli", "Multinomial", "MultivariateNormal", "Normal",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "biject_to", "constraints",
    "kl_divergence", "register_kl", "transform_to", "transforms",
]
__all__.extend(transforms.__all__)
