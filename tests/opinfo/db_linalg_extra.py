"""More torch.linalg: the LU family, solve_ex, lstsq, matrix_exp, householder_product and the composites
tensorinv, tensorsolve, vander and cond. Samples are well-conditioned float64 matrices (batched too)."""

from __future__ import annotations

import numpy as np

from .core import COMPLEX, FLOATS, Arr, Maker, OpInfo, SampleInput
from .db_linalg import LINALG_TOL


def _tall(m: Maker, *shape: int, layout: str = "contig"):
    """A full-column-rank tall matrix: the identity's first columns plus a small perturbation."""
    v = m.well_conditioned(*shape[:-2], shape[-2], shape[-2]).values[..., : shape[-1]]
    return Arr(np.ascontiguousarray(v), layout)


def _lu_samples(m: Maker):
    yield SampleInput("3x3", (m.well_conditioned(3, 3),))
    yield SampleInput("batched_noncontig", (m.well_conditioned(2, 3, 3, layout="T"),))
    yield SampleInput("tall_strided", (_tall(m, 4, 3, layout="strided"),))


def _drop_p(lib, out):
    return out[1], out[2]


def _lu_solve_samples(m: Maker):
    piv = np.array([2, 2, 3], dtype=np.int32)
    yield SampleInput("left", (m.well_conditioned(3, 3), piv, m(3, 2)))
    yield SampleInput("adjoint_noncontig", (m.well_conditioned(3, 3, layout="T"), piv, m(3, 2)), {"adjoint": True})
    yield SampleInput("right_batched", (m.well_conditioned(2, 3, 3), np.stack([piv, piv]), m(2, 2, 3)),
                      {"left": False})


def _solve_ex_samples(m: Maker):
    yield SampleInput("matrix_rhs", (m.well_conditioned(3, 3), m(3, 2)))
    yield SampleInput("batched_noncontig", (m.well_conditioned(2, 3, 3, layout="T"), m(2, 3, 1)))
    yield SampleInput("left_false", (m.well_conditioned(3, 3), m(2, 3)), {"left": False})


def _lstsq_samples(m: Maker):
    yield SampleInput("square", (m.well_conditioned(3, 3), m(3, 2)))
    yield SampleInput("tall_noncontig", (_tall(m, 4, 3, layout="T"), m(4, 2)))
    yield SampleInput("batched_vector", (_tall(m, 2, 4, 3), m(2, 4)))


def _matrix_exp_samples(m: Maker):
    yield SampleInput("3x3", (m(3, 3),))
    yield SampleInput("batched_noncontig", (m(2, 3, 3, layout="T"),))
    yield SampleInput("large_norm_strided", (m(2, 2, low=2, high=3, layout="strided"),))


def _tensorinv_samples(m: Maker):
    yield SampleInput("ind2", (Arr(m.well_conditioned(4, 4).values.reshape(2, 2, 2, 2)),), {"ind": 2})
    yield SampleInput("ind1_noncontig", (Arr(m.well_conditioned(4, 4).values.reshape(4, 2, 2), "T"),), {"ind": 1})


def _tensorsolve_samples(m: Maker):
    a = m.well_conditioned(6, 6).values
    yield SampleInput("2x3", (Arr(a.reshape(2, 3, 6), "contig"), m(2, 3)))
    yield SampleInput("dims_noncontig", (Arr(a.reshape(6, 2, 3), "T"), m(2, 3)), {"dims": (0,)})


def _vander_samples(m: Maker):
    yield SampleInput("vector", (m(4),))
    yield SampleInput("batched_N", (m(2, 3, layout="strided"),), {"N": 4})


def _cond_samples(m: Maker):
    yield SampleInput("default", (m.well_conditioned(3, 3),))
    yield SampleInput("nuc_batched_noncontig", (m.well_conditioned(2, 3, 3, layout="T"), "nuc"))
    yield SampleInput("minus2_tall", (_tall(m, 4, 3), -2))


def _householder_samples(m: Maker):
    yield SampleInput("4x3_k2", (m(4, 3), m(2, low=0.2, high=0.8)))
    yield SampleInput("batched_noncontig", (m(2, 3, 3, layout="T"), m(2, 3, low=0.2, high=0.8)))
    yield SampleInput("tall_strided", (m(5, 2, layout="strided"), m(2, low=0.2, high=0.8)))


# complex64 and complex128 too: torch's LU family, lstsq, matrix_exp and householder_product take complex input
F_C = FLOATS + COMPLEX
OPS = [
    OpInfo("linalg.lu_factor", _lu_samples, dtypes=F_C, tol=LINALG_TOL, domain="well-conditioned or full column rank"),
    OpInfo("linalg.lu_factor_ex", _lu_samples, dtypes=F_C, tol=LINALG_TOL, supports_out=True,
           domain="well-conditioned or full column rank"),
    # P is float but has no gradient (torch's output_differentiability): as torch's own OpInfo, the
    # gradient tests see (L, U) only, since fast gradcheck pairs float outputs with differentiable ones
    OpInfo("linalg.lu", _lu_samples, dtypes=F_C, tol=LINALG_TOL, supports_out=True, output_process=_drop_p,
           domain="well-conditioned or full column rank"),
    OpInfo("linalg.lu_solve", _lu_solve_samples, dtypes=F_C, tol=LINALG_TOL, domain="LU with a nonzero diagonal"),
    OpInfo("linalg.solve_ex", _solve_ex_samples, dtypes=F_C, tol=LINALG_TOL, supports_out=True,
           domain="well-conditioned A"),
    OpInfo("linalg.lstsq", _lstsq_samples, dtypes=F_C, tol=LINALG_TOL, domain="full column rank A"),
    OpInfo("linalg.matrix_exp", _matrix_exp_samples, dtypes=F_C, tol=LINALG_TOL,
           aliases=("matrix_exp", "Tensor.matrix_exp")),
    OpInfo("linalg.tensorinv", _tensorinv_samples, dtypes=F_C, tol=LINALG_TOL, domain="well-conditioned as a matrix"),
    OpInfo("linalg.tensorsolve", _tensorsolve_samples, dtypes=F_C, tol=LINALG_TOL,
           domain="well-conditioned as a matrix"),
    OpInfo("linalg.vander", _vander_samples, dtypes=F_C, tol=LINALG_TOL),
    OpInfo("linalg.cond", _cond_samples, dtypes=F_C, tol=LINALG_TOL, domain="distinct singular values (None/±2/nuc: "
           "the other orders' backward raises in torch)"),
    OpInfo("linalg.householder_product", _householder_samples, dtypes=F_C, tol=LINALG_TOL, aliases=("orgqr",),
           domain="tau away from the values that make a reflector singular"),
]
