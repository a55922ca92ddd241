"""The legacy linear-algebra operators outside torch.linalg (cholesky_inverse, triangular_solve, ormqr) and the
norms frobenius_norm / nuclear_norm (ops/legacy_linalg.py)."""

from __future__ import annotations

from .core import COMPLEX, FLOATS, Maker, OpInfo, SampleInput
from .db_linalg import LINALG_TOL


def _one_triangle(lib, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """cholesky_inverse reads one triangle of its factor and its backward (torch's formula) is not projected
    onto it: gradcheck sees the triangle only, as torch's own gradcheck wrapper for triangular inputs does."""
    a = args[0]
    factor = a.triu() if kwargs.get("upper", False) else a.tril()
    if factor.is_complex():
        # a Cholesky factor's diagonal is real: LAPACK's potri reads only its real part (zlauum), so the imaginary
        # part of the diagonal is projected out too
        diagonal = factor.diagonal(dim1=-2, dim2=-1)
        factor = factor - lib.diag_embed(diagonal - diagonal.real)
    return (factor, *args[1:]), kwargs


# torch's forward-mode value for cholesky_inverse agrees with neither finite differences nor its own formula
# written out (torch.autograd.gradcheck(..., check_forward_ad=True) fails on torch itself); tracegrad's is the
# true derivative, which its own forward-AD gradcheck confirms.
_FWD_AD = {"forward_ad": "torch's cholesky_inverse forward AD disagrees with finite differences"}


def _cholesky_inverse_samples(m: Maker):
    yield SampleInput("lower", (m.well_conditioned(3, 3),), skips=_FWD_AD)
    yield SampleInput("upper_batched_noncontig", (m.well_conditioned(2, 3, 3, layout="T"),), {"upper": True},
                      skips=_FWD_AD)


def _triangular_solve_samples(m: Maker):
    yield SampleInput("upper", (m(3, 2), m.well_conditioned(3, 3)))
    yield SampleInput("lower_transpose_noncontig", (m(3, 2, layout="T"), m.well_conditioned(3, 3)),
                      {"upper": False, "transpose": True})
    yield SampleInput("unit_broadcast", (m(2, 3, 2), m.well_conditioned(3, 3, layout="T")),
                      {"unitriangular": True})


def _ormqr_samples(m: Maker):
    yield SampleInput("left", (m(4, 3), m(3, low=0.5, high=1.5), m(4, 2)))
    yield SampleInput("left_transpose_noncontig", (m(4, 3, layout="T"), m(3, low=0.5, high=1.5), m(4, 2)),
                      {"transpose": True})
    yield SampleInput("right_batched", (m(2, 3, 3), m(2, 3, low=0.5, high=1.5), m(2, 2, 3)), {"left": False})


def _frobenius_samples(m: Maker):
    yield SampleInput("two_dims", (m(3, 4), (0, 1)))
    yield SampleInput("one_dim_keepdim_noncontig", (m(2, 3, 4, layout="T"), (1,), True))


def _nuclear_samples(m: Maker):
    yield SampleInput("matrix", (m.distinct_singular(3, 4),))
    # (not with dim/keepdim: linalg.matrix_norm's keepdim unsqueezes per dim where torch sums with keepdim,
    # so the graph and sequence numbers differ; values are compared in test_tensor_extras_vs_torch.py)
    yield SampleInput("noncontig", (m.distinct_singular(3, 3, layout="T"),))


F_C = FLOATS + COMPLEX
OPS: list[OpInfo] = [
    OpInfo("cholesky_inverse", _cholesky_inverse_samples, dtypes=F_C, tol=LINALG_TOL, supports_out=True,
           aliases=("Tensor.cholesky_inverse",), input_process=_one_triangle,
           domain="a triangular factor with a dominant (complex: real) diagonal"),
    OpInfo("triangular_solve", _triangular_solve_samples, dtypes=F_C, tol=LINALG_TOL, supports_out=True,
           aliases=("Tensor.triangular_solve",), domain="a triangle with a dominant diagonal"),
    OpInfo("ormqr", _ormqr_samples, dtypes=F_C, tol=LINALG_TOL, supports_out=True, aliases=("Tensor.ormqr",),
           domain="any reflectors (tau away from 0)"),
    OpInfo("frobenius_norm", _frobenius_samples, dtypes=F_C, tol=LINALG_TOL, supports_out=True, domain="away from 0"),
    OpInfo("nuclear_norm", _nuclear_samples, dtypes=F_C, tol=LINALG_TOL, supports_out=False,
           domain="distinct singular values"),
]
