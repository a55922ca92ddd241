"""Parameterizable probability distributions and sampling functions (``torch.distributions``).

Samples come from tracegrad's generator (``manual_seed``); everything else (log_prob, entropy, cdf, KL,
shapes, constraints, validation messages) follows PyTorch.

The code lives in grouped modules (continuous, discrete, multivariate, transformed_distribution, mixture);
PyTorch's one-module-per-distribution paths (``tracegrad.distributions.normal``, ``.dirichlet``, ...) are
registered below as thin alias modules re-exporting those objects.
"""

import sys
from types import ModuleType

from . import constraints, transforms  # noqa: F401 - (submodules, attributes as in PyTorch)
from .constraint_registry import biject_to, transform_to
from .continuous import (
    Cauchy,
    Chi2,
    ContinuousBernoulli,
    Exponential,
    FisherSnedecor,
    Gamma,
    GeneralizedPareto,
    Laplace,
    Normal,
    StudentT,
    Uniform,
    VonMises,
)
from .discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    Multinomial,
    NegativeBinomial,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .independent import Independent
from .kl import kl_divergence, register_kl
from .mixture import MixtureSameFamily
from .multivariate import Beta, Dirichlet, LKJCholesky, LowRankMultivariateNormal, MultivariateNormal, Wishart

# (ExpRelaxedCategorical and LogitRelaxedBernoulli are not here: as in PyTorch, only their modules,
# relaxed_categorical and relaxed_bernoulli, hold them)
from .transformed_distribution import (
    Gumbel,
    HalfCauchy,
    HalfNormal,
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    LogNormal,
    Pareto,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    TransformedDistribution,
    Weibull,
)
from .transforms import *  # noqa: F403

__all__ = [  # (PyTorch's order)
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric",
    "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace",
    "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Pareto", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "Poisson", "Uniform", "VonMises", "Weibull",
    "Wishart", "TransformedDistribution", "biject_to", "kl_divergence", "register_kl", "transform_to",
]
__all__.extend(transforms.__all__)

# PyTorch's module path -> (grouped module here, public names, private helpers other code imports from it)
_ALIAS_MODULES = {
    "bernoulli": ("discrete", ["Bernoulli"], []),
    "beta": ("multivariate", ["Beta"], []),
    "binomial": ("discrete", ["Binomial"], []),
    "categorical": ("discrete", ["Categorical"], []),
    "cauchy": ("continuous", ["Cauchy"], []),
    "chi2": ("continuous", ["Chi2"], []),
    "continuous_bernoulli": ("continuous", ["ContinuousBernoulli"], []),
    "dirichlet": ("multivariate", ["Dirichlet"], ["_Dirichlet", "_Dirichlet_backward"]),
    "exponential": ("continuous", ["Exponential"], []),
    "fishersnedecor": ("continuous", ["FisherSnedecor"], []),
    "gamma": ("continuous", ["Gamma"], []),
    "generalized_pareto": ("continuous", ["GeneralizedPareto"], []),
    "geometric": ("discrete", ["Geometric"], []),
    "gumbel": ("transformed_distribution", ["Gumbel"], []),
    "half_cauchy": ("transformed_distribution", ["HalfCauchy"], []),
    "half_normal": ("transformed_distribution", ["HalfNormal"], []),
    "inverse_gamma": ("transformed_distribution", ["InverseGamma"], []),
    "kumaraswamy": ("transformed_distribution", ["Kumaraswamy"], []),
    "laplace": ("continuous", ["Laplace"], []),
    "lkj_cholesky": ("multivariate", ["LKJCholesky"], []),
    "log_normal": ("transformed_distribution", ["LogNormal"], []),
    "logistic_normal": ("transformed_distribution", ["LogisticNormal"], []),
    "lowrank_multivariate_normal": ("multivariate", ["LowRankMultivariateNormal"],
                                    ["_batch_capacitance_tril", "_batch_lowrank_logdet",
                                     "_batch_lowrank_mahalanobis"]),
    "mixture_same_family": ("mixture", ["MixtureSameFamily"], []),
    "multinomial": ("discrete", ["Multinomial"], []),
    "multivariate_normal": ("multivariate", ["MultivariateNormal"],
                            ["_batch_mahalanobis", "_batch_mv", "_precision_to_scale_tril"]),
    "negative_binomial": ("discrete", ["NegativeBinomial"], []),
    "normal": ("continuous", ["Normal"], []),
    "one_hot_categorical": ("discrete", ["OneHotCategorical", "OneHotCategoricalStraightThrough"], []),
    "pareto": ("transformed_distribution", ["Pareto"], []),
    "poisson": ("discrete", ["Poisson"], []),
    "relaxed_bernoulli": ("transformed_distribution", ["LogitRelaxedBernoulli", "RelaxedBernoulli"], []),
    "relaxed_categorical": ("transformed_distribution", ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"], []),
    "studentT": ("continuous", ["StudentT"], []),
    "uniform": ("continuous", ["Uniform"], []),
    "von_mises": ("continuous", ["VonMises"], ["_log_modified_bessel_fn", "_rejection_sample"]),
    "weibull": ("transformed_distribution", ["Weibull"], []),
    "wishart": ("multivariate", ["Wishart"], ["_mvdigamma", "_clamp_above_eps"]),
}


def _register_alias_modules() -> None:
    # real module objects in sys.modules, so `import` / `from ... import` of these paths work as in PyTorch
    for alias, (home, names, helpers) in _ALIAS_MODULES.items():
        source = sys.modules[f"{__name__}.{home}"]
        module = ModuleType(f"{__name__}.{alias}", f"Alias of ``torch.distributions.{alias}`` (code in "
                                                   f"``{source.__name__}``).")
        for name in names + helpers:
            setattr(module, name, getattr(source, name))
        for name in names:
            # the class is PyTorch's path's: its repr (and the "does not implement mode" message) reads as
            # torch's, and pickle finds it there too
            getattr(source, name).__module__ = module.__name__
        module.__all__ = list(names)
        module.__file__ = source.__file__  # (inspect finds the classes' source through it)
        sys.modules[module.__name__] = module
        globals()[alias] = module


_register_alias_modules()
