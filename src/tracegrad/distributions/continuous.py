"""Univariate continuous distributions: Normal, Uniform, Exponential, Laplace, Cauchy, Gamma, Chi2, StudentT,
FisherSnedecor, GeneralizedPareto, ContinuousBernoulli, VonMises (formulas, constraints and shapes as in
PyTorch)."""

from __future__ import annotations

import math

import tracegrad as torch
from tracegrad import Tensor
from tracegrad.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import (
    _batch_shape_of,
    _BinaryProbs,
    _empty_like_shape,
    _set_probs_or_logits,
    _standard_normal,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
)

__all__ = ["Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "Gamma", "Chi2", "StudentT", "FisherSnedecor",
           "GeneralizedPareto", "ContinuousBernoulli", "VonMises"]


class _LocScale(Distribution):
    """Shared init / expand of the (loc, scale) families."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(type(self)._family, batch_shape, _instance, ("loc", "scale"))

    @property
    def mode(self) -> Tensor:
        return self.loc


class Normal(_LocScale, ExponentialFamily):
    """Normal (Gaussian) distribution with ``loc`` and ``scale``."""

    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=torch.Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + torch.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * torch.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + torch.log(self.scale)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * torch.log(-math.pi / y)


class Laplace(_LocScale):
    """Laplace distribution with ``loc`` and ``scale``."""

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=torch.Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        finfo = torch.finfo(self.loc.dtype)
        u = _empty_like_shape(self.loc, shape).uniform_(finfo.eps - 1, 1)
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * torch.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torch.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + torch.log(2 * self.scale)


class Cauchy(_LocScale):
    """Cauchy (Lorentz) distribution with ``loc`` and ``scale``."""

    @property
    def mean(self) -> Tensor:
        return torch.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def variance(self) -> Tensor:
        return torch.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=torch.Size()) -> Tensor:
        eps = _empty_like_shape(self.loc, self._extended_shape(sample_shape)).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return torch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


# the class whose ``expand`` builds instances (PyTorch names the concrete class in _get_checked_instance)
for _cls in (Normal, Laplace, Cauchy):
    _cls._family = _cls


class Uniform(Distribution):
    """Uniform distribution on the half-open interval [low, high)."""

    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def __init__(self, low: Tensor | float, high: Tensor | float, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(_batch_shape_of((low, high), self.low), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Uniform, batch_shape, _instance, ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=torch.Size()) -> Tensor:
        rand = torch.rand(self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return torch.log(lb.mul(ub)) - torch.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return torch.log(self.high - self.low)


class Exponential(ExponentialFamily):
    """Exponential distribution with ``rate``."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return torch.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_shape_of((rate,), self.rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, batch_shape, _instance, ("rate",))

    def rsample(self, sample_shape=torch.Size()) -> Tensor:
        return _empty_like_shape(self.rate, self._extended_shape(sample_shape)).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torch.exp(-self.rate * value)

    def icdf(self, value):
        return -torch.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - torch.log(self.rate)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -torch.log(-x)


class Gamma(ExponentialFamily):
    """Gamma distribution with ``concentration`` and ``rate``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration: Tensor | float, rate: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_batch_shape_of((concentration, rate), self.concentration), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    def rsample(self, sample_shape=torch.Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = torch._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=torch.finfo(value.dtype).tiny)  # keep samples positive (log_prob finite)
        return value

    def log_prob(self, value):
        value = torch.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate) + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - torch.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - torch.log(self.rate) + torch.lgamma(self.concentration)
                + (1.0 - self.concentration) * torch.digamma(self.concentration))

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.special.gammainc(self.concentration, self.rate * value)


class Chi2(Gamma):
    """Chi-squared distribution with ``df`` degrees of freedom (Gamma(df / 2, 1 / 2))."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class StudentT(Distribution):
    """Student's t-distribution with ``df``, ``loc`` and ``scale``."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        m = self.loc.clone(memory_format=torch.contiguous_format)
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        m = self.df.clone(memory_format=torch.contiguous_format)
        big = self.df > 2
        m[big] = self.scale[big].pow(2) * self.df[big] / (self.df[big] - 2)
        m[(self.df <= 2) & (self.df > 1)] = math.inf
        m[self.df <= 1] = math.nan
        return m

    def __init__(self, df: Tensor | float, loc: Tensor | float = 0.0, scale: Tensor | float = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(StudentT, batch_shape, _instance, ("df", "loc", "scale"), children=("_chi2",))

    def rsample(self, sample_shape=torch.Size()) -> Tensor:
        # X ~ Normal(0, 1), Z ~ Chi2(df): Y = X / sqrt(Z / df) ~ StudentT(df)
        x = _standard_normal(self._extended_shape(sample_shape), dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * torch.rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + torch.lgamma(0.5 * self.df)
             - torch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torch.log1p(y**2.0 / self.df) - z

    def entropy(self):
        lbeta = torch.lgamma(0.5 * self.df) + math.lgamma(0.5) - torch.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (torch.digamma(0.5 * (self.df + 1))
                                                          - torch.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class FisherSnedecor(Distribution):
    """Fisher-Snedecor (F) distribution with ``df1`` and ``df2``: a ratio of scaled chi-squared draws."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Tensor | float, df2: Tensor | float, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(_batch_shape_of((df1, df2), self.df1), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(FisherSnedecor, batch_shape, _instance, ("df1", "df2"),
                                   children=("_gamma1", "_gamma2"))

    @property
    def mean(self) -> Tensor:
        df2 = self.df2.clone(memory_format=torch.contiguous_format)
        df2[df2 <= 2] = math.nan
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        mode[self.df1 <= 2] = math.nan
        return mode

    @property
    def variance(self) -> Tensor:
        df2 = self.df2.clone(memory_format=torch.contiguous_format)
        df2[df2 <= 4] = math.nan
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=torch.Size(())) -> Tensor:
        shape = self._extended_shape(sample_shape)
        X1 = self._gamma1.rsample(sample_shape).view(shape)
        X2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = torch.finfo(X2.dtype).tiny
        X2.clamp_(min=tiny)  # keep the ratio finite and positive
        Y = X1 / X2
        Y.clamp_(min=tiny)
        return Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * torch.log(value)
        t3 = (ct1 + ct2) * torch.log1p(ct3 * value)
        return t1 + t2 - t3


class GeneralizedPareto(Distribution):
    """Generalized Pareto distribution with ``loc``, ``scale`` and ``concentration`` (as in TensorFlow
    Probability; concentration 0 is the exponential limit)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(_batch_shape_of((loc, scale, concentration), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration"))

    def rsample(self, sample_shape=torch.Size()) -> Tensor:
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe_concentration(self) -> tuple[Tensor, Tensor]:
        # (concentration == 0, concentration with the zeros replaced by 1) so both branches stay finite
        eq_zero = torch.isclose(self.concentration, torch.tensor(0.0))
        return eq_zero, torch.where(eq_zero, torch.ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + torch.ones_like(z)
        where_nonzero = torch.where(y == 0, y, y * torch.log1p(safe_conc * z))
        return -self.scale.log() - torch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        return torch.where(eq_zero, -z, -torch.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value: Tensor) -> Tensor:
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero = torch.isclose(self.concentration, torch.zeros_like(self.concentration))
        safe_conc = torch.where(eq_zero, torch.ones_like(self.concentration), self.concentration)
        logu = torch.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * torch.expm1(-safe_conc * logu)
        return torch.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe_conc = torch.where(valid, self.concentration, 0.5)
        return torch.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe_conc = torch.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return torch.where(valid, result, math.nan)

    def entropy(self):
        return torch.broadcast_to(torch.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = torch.where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)


class ContinuousBernoulli(_BinaryProbs, ExponentialFamily):
    """Continuous Bernoulli distribution on [0, 1] with ``probs`` or ``logits`` (Loaiza-Ganem and Cunningham,
    2019); a Taylor expansion replaces the normalizer inside ``lims`` around 0.5, where it is unstable."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 lims: tuple[float, float] = (0.499, 0.501), validate_args: bool | None = None) -> None:
        raw = _set_probs_or_logits(self, probs, logits)
        if probs is not None:
            if validate_args is not None and not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(_batch_shape_of((raw,), self._param), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"),
                                   copies=("_lims",))

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self) -> Tensor:
        return torch.max(torch.le(self.probs, self._lims[0]), torch.gt(self.probs, self._lims[1]))

    def _cut_probs(self) -> Tensor:
        return torch.where(self._outside_unstable_region(), self.probs, self._lims[0] * torch.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        """The log normalizing constant as a function of ``probs``."""
        cut_probs = self._cut_probs()
        cut_probs_below_half = torch.where(torch.le(cut_probs, 0.5), cut_probs, torch.zeros_like(cut_probs))
        cut_probs_above_half = torch.where(torch.ge(cut_probs, 0.5), cut_probs, torch.ones_like(cut_probs))
        log_norm = torch.log(torch.abs(torch.log1p(-cut_probs) - torch.log(cut_probs))) - torch.where(
            torch.le(cut_probs, 0.5), torch.log1p(-2.0 * cut_probs_below_half),
            torch.log(2.0 * cut_probs_above_half - 1.0))
        x = torch.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return torch.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (torch.log1p(-cut_probs) - torch.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * torch.pow(x, 2)) * x
        return torch.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return torch.sqrt(self.variance)

    @property
    def variance(self) -> Tensor:
        cut_probs = self._cut_probs()
        vars = cut_probs * (cut_probs - 1.0) / torch.pow(1.0 - 2.0 * cut_probs, 2) + 1.0 / torch.pow(
            torch.log1p(-cut_probs) - torch.log(cut_probs), 2)
        x = torch.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return torch.where(self._outside_unstable_region(), vars, taylor)

    def sample(self, sample_shape=torch.Size()):
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        with torch.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=torch.Size()) -> Tensor:
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (torch.pow(cut_probs, value) * torch.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0) / (
            2.0 * cut_probs - 1.0)
        unbounded_cdfs = torch.where(self._outside_unstable_region(), cdfs, value)
        return torch.where(torch.le(value, 0.0), torch.zeros_like(value),
                           torch.where(torch.ge(value, 1.0), torch.ones_like(value), unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        inverse = (torch.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - torch.log1p(-cut_probs)) / (
            torch.log(cut_probs) - torch.log1p(-cut_probs))
        return torch.where(self._outside_unstable_region(), inverse, value)

    def entropy(self):
        log_probs0 = torch.log1p(-self.probs)
        log_probs1 = torch.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizing constant as a function of the natural parameter."""
        out_unst_reg = torch.max(torch.le(x, self._lims[0] - 0.5), torch.gt(x, self._lims[1] - 0.5))
        cut_nat_params = torch.where(out_unst_reg, x, (self._lims[0] - 0.5) * torch.ones_like(x))
        log_norm = torch.log(torch.abs(torch.special.expm1(cut_nat_params))) - torch.log(torch.abs(cut_nat_params))
        taylor = 0.5 * x + torch.pow(x, 2) / 24.0 - torch.pow(x, 4) / 2880.0
        return torch.where(out_unst_reg, log_norm, taylor)


# log I_0 and log I_1 of the von Mises normalizer: PyTorch's polynomial approximations (Abramowitz & Stegun
# 9.8.1-9.8.4), not the exact Bessel functions, so that log_prob agrees with PyTorch's to the last bits
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1,
                  0.2635537e-1, -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1,
                  -0.2895312e-1, 0.1787654e-1, -0.420059e-2]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _eval_poly(y: Tensor, coef: list[float]) -> Tensor:
    coef = list(coef)
    result = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """log(I_order(x)) for x > 0 and order 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    y = 3.75 / x
    large = x - 0.5 * x.log() + _eval_poly(y, _COEF_LARGE[order]).log()
    return torch.where(x < 3.75, small, large)


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor, x: Tensor) -> Tensor:
    # Best & Fisher (1979): wrapped-Cauchy proposals, uniforms from tracegrad's generator
    done = torch.zeros(x.shape, dtype=torch.bool, device=loc.device)
    while not done.all():
        u1, u2, u3 = torch.rand((3,) + x.shape, dtype=loc.dtype, device=loc.device).unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Circular von Mises distribution with ``loc`` (an angle in radians) and ``concentration``."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Tensor | float, concentration: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, torch.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * torch.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(torch.double)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(torch.double)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        _proposal_r = (1 + rho**2) / (2 * rho)
        return torch.where(kappa < 1e-5, 1 / kappa + kappa, _proposal_r)  # Taylor form for tiny kappa

    def sample(self, sample_shape=torch.Size()):
        # in double precision: single precision hangs the rejection loop for small concentrations
        with torch.no_grad():
            x = torch.empty(self._extended_shape(sample_shape), dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """The circular mean."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        """The circular variance."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
