"""``MixtureSameFamily``: a Categorical mixture over the rightmost batch dim of one component distribution."""

from __future__ import annotations

import tracegrad as torch
from tracegrad import Tensor

from . import constraints
from .discrete import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """Mixture of the components ``component_distribution`` (its rightmost batch dim indexes them) weighted by
    ``mixture_distribution``."""

    arg_constraints: dict[str, constraints.Constraint] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(self._mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(self._component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        mdbs = self._mixture_distribution.batch_shape
        cdbs = self._component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = self._mixture_distribution.logits.shape[-1]
        kc = self._component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = self._component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = torch.Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape=batch_shape, event_shape=new._component_distribution.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return torch.sum(probs * self.component_distribution.mean, dim=-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        # law of total variance
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = torch.sum(probs * self.component_distribution.variance, dim=-1 - self._event_ndims)
        var_cond_mean = torch.sum(probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0),
                                  dim=-1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return torch.sum(cdf_x * self.mixture_distribution.probs, dim=-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix_prob = torch.log_softmax(self.mixture_distribution.logits, dim=-1)
        return torch.logsumexp(log_prob_x + log_mix_prob, dim=-1)

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = self.event_shape
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = mix_sample.shape
            comp_samples = self.component_distribution.sample(sample_shape)
            # the chosen component index, broadcast over the event dims
            mix_sample_r = mix_sample.reshape(mix_shape + torch.Size([1] * (len(es) + 1)))
            mix_sample_r = mix_sample_r.repeat(torch.Size([1] * len(mix_shape)) + torch.Size([1]) + es)
            return torch.gather(comp_samples, gather_dim, mix_sample_r).squeeze(gather_dim)

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = x.shape
        return x.reshape(xs[:-1] + torch.Size(pad_ndims * [1]) + xs[-1:] + torch.Size(self._event_ndims * [1]))

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
