"""``tracegrad.special``: PyTorch's ``torch.special`` namespace.

Most entries are the operators of the main namespace under their SciPy-style names (``expit`` is
``sigmoid``, ``gammaln`` is ``lgamma``...), recording the same graph nodes as in PyTorch; the functions of
their own live in ``ops/special_fns.py``, the Bessel and Airy functions in ``ops/special_bessel.py`` and the
orthogonal polynomials in ``ops/special_polynomials.py`` (neither family is differentiable, as in PyTorch).
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
from .ops import special_bessel as _bessel
from .ops import special_fns as _special
from .ops import special_polynomials as _poly
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
chebyshev_polynomial_t = _poly.chebyshev_polynomial_t
chebyshev_polynomial_u = _poly.chebyshev_polynomial_u
chebyshev_polynomial_v = _poly.chebyshev_polynomial_v
chebyshev_polynomial_w = _poly.chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = _poly.shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _poly.shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _poly.shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _poly.shifted_chebyshev_polynomial_w
hermite_polynomial_h = _poly.hermite_polynomial_h
hermite_polynomial_he = _poly.hermite_polynomial_he
laguerre_polynomial_l = _poly.laguerre_polynomial_l
legendre_polynomial_p = _poly.legendre_polynomial_p
airy_ai = _bessel.airy_ai
bessel_j0 = _bessel.bessel_j0
bessel_j1 = _bessel.bessel_j1
bessel_y0 = _bessel.bessel_y0
bessel_y1 = _bessel.bessel_y1
modified_bessel_i0 = _bessel.modified_bessel_i0
modified_bessel_i1 = _bessel.modified_bessel_i1
modified_bessel_k0 = _bessel.modified_bessel_k0
modified_bessel_k1 = _bessel.modified_bessel_k1
scaled_modified_bessel_k0 = _bessel.scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _bessel.scaled_modified_bessel_k1
spherical_bessel_j0 = _bessel.spherical_bessel_j0


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """``torch.special.softmax`` (``dim`` is required here; torch binds it in C++, ``dtype`` positional too, where
    its ``log_softmax`` is Python's with ``dtype`` keyword-only)."""
    return _nn.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """``torch.special.log_softmax`` (``dim`` is required here)."""
    return _nn.log_softmax(input, dim, dtype=dtype)


__all__ = sorted(name for name in dir() if not name.startswith("_") and name not in ("annotations", "Tensor"))
