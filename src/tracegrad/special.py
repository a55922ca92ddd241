"""``tracegrad.special``: PyTorch's ``torch.special`` namespace.

Most entries are the operators of the main namespace under their SciPy-style names (``expit`` is
``sigmoid``, ``gammaln`` is ``lgamma``...), recording the same graph nodes as in PyTorch; the functions of
their own live in ``ops/special_fns.py``. Not provided: the Bessel functions of the first and second kind
(``bessel_j0``...), ``modified_bessel_k0``/``k1`` and their scaled forms, ``airy_ai``,
``spherical_bessel_j0`` and the orthogonal polynomials (``chebyshev_polynomial_t``...), none of which is
differentiable in PyTorch either.
"""

from __future__ import annotations

# (imported by the package after its namespace is filled: these are the main namespace's operators)
from . import (  # noqa: F401
    erf,
    erfc,
    erfinv,
    exp2,
    expm1,
    log1p,
    logit,
    logsumexp,
    round,  # noqa: A004, F401 - torch.special.round shadows the builtin too
    sinc,
)
from . import sigmoid as expit  # noqa: F401
from ._tensor import Tensor
from .ops import binary as _binary
from .ops import gamma as _gamma
from .ops import special_fns as _special
from .ops.nn_ops import public as _nn

entr = _special.entr
erfcx = _special.erfcx
i0 = _special.i0
i0e = _special.i0e
i1 = _special.i1
i1e = _special.i1e
log_ndtr = _special.log_ndtr
multigammaln = _special.multigammaln
ndtr = _special.ndtr
ndtri = _special.ndtri
xlog1py = _binary.xlog1py
zeta = _special.zeta
digamma = psi = _gamma.digamma
gammaln = _gamma.lgamma
polygamma = _gamma.polygamma
xlogy = _binary.xlogy
gammainc = _binary.igamma
gammaincc = _binary.igammac


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """``torch.special.softmax`` (``dim`` is required here)."""
    return _nn.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """``torch.special.log_softmax`` (``dim`` is required here)."""
    return _nn.log_softmax(input, dim, dtype=dtype)


__all__ = sorted(name for name in dir() if not name.startswith("_") and name not in ("annotations", "Tensor"))
