"""``ExponentialFamily``: entropy from the log normalizer (Bregman divergence), used by the generic KL."""

from __future__ import annotations

import tracegrad as torch
from tracegrad import Tensor

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Distributions p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = torch.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for param, grad in zip(nparams, gradients):
            result -= (param * grad).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
