"""Linear algebra: products, contractions, triangular parts, norms and decompositions.

Decompositions whose outputs are defined only up to signs (qr, eigh, svd) are compared after a
sign normalisation written with dispatched ops, so gradients flow through a gauge-invariant function.
"""

from __future__ import annotations

from .core import COMPLEX, FLOATS, FLOATS_INT, Maker, OpInfo, SampleInput, is_complex, is_inexact

LINALG_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-7, 1e-9)}


# ------------------------------------------------------------------------------------------ products


def _matmul_samples(m: Maker):
    yield SampleInput("mat_vec", (m(3, 4), m(4)))
    yield SampleInput("batched_bcast_noncontig", (m(2, 3, 4, layout="T"), m(1, 4, 2)))
    yield SampleInput("vec_mat_strided", (m(3, layout="strided"), m(3, 4)),
                      skips={"out": "torch 2.13 resizes its own 1-D @ 2-D out= internally and warns"})


def _mm_samples(m: Maker):
    yield SampleInput("3x4_4x2", (m(3, 4), m(4, 2)))
    yield SampleInput("noncontig", (m(3, 4, layout="T"), m(4, 2, layout="strided")))


def _bmm_samples(m: Maker):
    yield SampleInput("2x3x4_2x4x2", (m(2, 3, 4), m(2, 4, 2)))
    yield SampleInput("noncontig", (m(2, 3, 4, layout="T"), m(2, 4, 2, layout="strided")))


def _mv_samples(m: Maker):
    yield SampleInput("3x4_4", (m(3, 4), m(4)))
    yield SampleInput("noncontig", (m(3, 4, layout="T"), m(4, layout="strided")))


def _dot_samples(m: Maker):
    yield SampleInput("4", (m(4), m(4)))
    yield SampleInput("noncontig_strided", (m(5, layout="strided"), m(5)))


def _outer_samples(m: Maker):
    yield SampleInput("3_4", (m(3), m(4)))
    yield SampleInput("noncontig_strided", (m(3, layout="strided"), m(2)))


def _beta_alpha(m: Maker) -> dict:
    """beta/alpha of the run's kind (complex ones for a complex run: their conjugates enter the backward)."""
    if is_complex(m.dtype):
        return dict(beta=0.5 - 0.5j, alpha=2.0 + 1.0j)
    return dict(beta=0.5, alpha=2.0) if is_inexact(m.dtype) else dict(beta=2, alpha=3)


def _addmm_samples(m: Maker):
    ab = _beta_alpha(m)
    yield SampleInput("full_input", (m(3, 2), m(3, 4), m(4, 2)))
    yield SampleInput("noncontig_beta_alpha", (m(3, 2, layout="T"), m(3, 4, layout="T"), m(4, 2, layout="strided")),
                      ab)
    yield SampleInput("bcast_input", (m(2), m(3, 4), m(4, 2)), ab)


def _baddbmm_samples(m: Maker):
    ab = _beta_alpha(m)
    yield SampleInput("full_input", (m(2, 3, 2), m(2, 3, 4), m(2, 4, 2)))
    yield SampleInput("noncontig_beta_alpha",
                      (m(2, 3, 2, layout="T"), m(2, 3, 4, layout="T"), m(2, 4, 2, layout="strided")), ab)
    yield SampleInput("bcast_input", (m(3, 1), m(2, 3, 4), m(2, 4, 2)), ab)


def _einsum_samples(m: Maker):
    yield SampleInput("matmul", ("ij,jk->ik", m(3, 4), m(4, 2)))
    yield SampleInput("batched_noncontig", ("bij,bkj->bik", m(2, 3, 4, layout="T"), m(2, 2, 4)))
    yield SampleInput("ellipsis_diag_strided", ("...ii->...i", m(2, 3, 3, layout="strided")))


def _tensordot_samples(m: Maker):
    yield SampleInput("dims2", (m(2, 3, 4), m(3, 4, 5)), {"dims": 2})
    yield SampleInput("dims_lists_noncontig", (m(3, 2, 4, layout="T"), m(2, 3, 5)), {"dims": ([0, 1], [1, 0])})
    yield SampleInput("dims0_outer", (m(2, layout="strided"), m(3)), {"dims": 0})


def _dist_samples(m: Maker):
    yield SampleInput("p2_broadcast", (m(3, 4), m(4)))
    yield SampleInput("p3_noncontig", (m(4, 3, layout="T"), m(4, 3)), {"p": 3})
    yield SampleInput("p1", (m(5, layout="strided"), m(5)), {"p": 1.0})


def _block_diag_samples(m: Maker):
    yield SampleInput("matrix_vector_scalar", (m(2, 3), m(3), m()))
    yield SampleInput("noncontig", (m(3, 2, layout="T"), m(1, 2)))


def _kron_samples(m: Maker):
    yield SampleInput("2x3_3x2", (m(2, 3), m(3, 2)))
    # torch.kron raises "view size is not compatible" for a transposed first argument (a torch bug
    # tracegrad need not copy): only the second argument is non-contiguous here
    yield SampleInput("noncontig", (m(3, 2), m(2, 2, layout="strided")))
    yield SampleInput("ndim_mismatch", (m(2), m(2, 3)))


def _trace_samples(m: Maker):
    yield SampleInput("square", (m(3, 3),))
    yield SampleInput("noncontig_wide", (m(3, 4, layout="T"),))


def _tri_samples(m: Maker):
    yield SampleInput("3x4", (m(3, 4),))
    yield SampleInput("noncontig_diag1", (m(4, 3, layout="T"),), {"diagonal": 1})
    yield SampleInput("batched_strided_diag_neg", (m(2, 3, 4, layout="strided"), -1))


# ------------------------------------------------------------------------------------------ norms


def _linalg_norm_samples(m: Maker):
    yield SampleInput("vector_default", (m(5),))
    yield SampleInput("matrix_fro_noncontig_keepdim", (m(4, 3, layout="T"),), {"ord": "fro", "keepdim": True})
    yield SampleInput("batched_inf_strided", (m(2, 3, 4, layout="strided"),), {"ord": float("inf"),
                                                                                "dim": (-2, -1)})


def _vector_norm_samples(m: Maker):
    yield SampleInput("full_l2", (m(3, 4),))
    yield SampleInput("l1_dim_keepdim_noncontig", (m(4, 3, layout="T"),), {"ord": 1, "dim": 1, "keepdim": True})
    yield SampleInput("inf_dims_strided", (m(2, 3, 4, layout="strided"),), {"ord": float("inf"), "dim": (0, 2)})


# ------------------------------------------------------------------------------------------ decompositions


def _square_samples(m: Maker):
    yield SampleInput("3x3", (m.well_conditioned(3, 3),))
    yield SampleInput("batched_noncontig", (m.well_conditioned(2, 3, 3, layout="T"),))
    yield SampleInput("strided_2x2", (m.well_conditioned(2, 2, layout="strided"),))


def _solve_samples(m: Maker):
    yield SampleInput("matrix_rhs", (m.well_conditioned(3, 3), m(3, 2)))
    yield SampleInput("batched_bcast_noncontig", (m.well_conditioned(2, 3, 3, layout="T"), m(3, 1, layout="strided")))
    yield SampleInput("left_false", (m.well_conditioned(3, 3), m(2, 3)), {"left": False})


def _cholesky_samples(m: Maker):
    yield SampleInput("spd3", (m.spd(3, 3),))
    yield SampleInput("batched_noncontig", (m.spd(2, 3, 3, layout="T"),))
    yield SampleInput("upper", (m.spd(3, 3),), {"upper": True})


def _qr_samples(m: Maker):
    yield SampleInput("tall_4x3", (m.distinct_singular(4, 3),))
    yield SampleInput("square_noncontig", (m.distinct_singular(3, 3, layout="T"),))
    yield SampleInput("batched_strided", (m.distinct_singular(2, 4, 3, layout="strided"),))


def _eigh_samples(m: Maker):
    yield SampleInput("3x3", (m.symmetric_distinct_eig(3, 3),))
    yield SampleInput("batched_noncontig", (m.symmetric_distinct_eig(2, 3, 3, layout="T"),))
    yield SampleInput("upper", (m.symmetric_distinct_eig(4, 4),), {"UPLO": "U"})


def _svd_samples(m: Maker):
    yield SampleInput("wide_3x4", (m.distinct_singular(3, 4),), {"full_matrices": False})
    yield SampleInput("tall_noncontig", (m.distinct_singular(4, 3, layout="T"),), {"full_matrices": False})
    yield SampleInput("batched_strided", (m.distinct_singular(2, 3, 3, layout="strided"),), {"full_matrices": False})


def _adjoint(a):
    """The conjugate transpose of the last two dims (the plain transpose for real input, recorded as such)."""
    return a.mH if a.is_complex() else a.transpose(-2, -1)


def _symmetrize(lib, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """(A + Aᴴ)/2 on the first argument: a no-op for the symmetric (Hermitian) samples, but it makes the finite
    differences of gradcheck agree with the symmetric gradient that cholesky/eigh backward return."""
    a = args[0]
    return ((a + _adjoint(a)) / 2, *args[1:]), kwargs


def _phase(x):
    """x / |x|: the sign of a real tensor, the unit phase of a complex one."""
    return x.sgn() if x.is_complex() else x.sign()


def _conj(x):
    return x.conj() if x.is_complex() else x


def _column_phases(v):
    """Phase (sign) of each column's largest-magnitude entry, shape (..., 1, k): a piecewise-constant gauge fix."""
    idx = v.abs().argmax(dim=-2, keepdim=True)
    return _phase(v.gather(-2, idx))


def _qr_process(lib, out):
    q, r = out
    s = _phase(r.diagonal(dim1=-2, dim2=-1))  # make diag(R) real positive: the unique QR of a full-rank matrix
    return q * s.unsqueeze(-2), r * _conj(s).unsqueeze(-1)


def _eigh_process(lib, out):
    lam, v = out
    return lam, v * _conj(_column_phases(v))


def _svd_process(lib, out):
    u, s, vh = out
    phase = _column_phases(u)
    return u * _conj(phase), s, vh * phase.transpose(-2, -1)


# complex64 and complex128 throughout (torch's linalg takes complex input everywhere here)
FI_C = FLOATS_INT + COMPLEX
F_C = FLOATS + COMPLEX
LINALG_OPS = [
    OpInfo("matmul", _matmul_samples, dtypes=FI_C, supports_out=True, aliases=("Tensor.matmul",),
           tol=LINALG_TOL),
    OpInfo("mm", _mm_samples, dtypes=FI_C, supports_out=True, aliases=("Tensor.mm",), tol=LINALG_TOL),
    OpInfo("bmm", _bmm_samples, dtypes=FI_C, supports_out=True, aliases=("Tensor.bmm",), tol=LINALG_TOL),
    OpInfo("mv", _mv_samples, dtypes=FI_C, supports_out=True, aliases=("Tensor.mv",), tol=LINALG_TOL),
    OpInfo("dot", _dot_samples, dtypes=FI_C, supports_out=True, aliases=("Tensor.dot", "inner"),
           tol=LINALG_TOL),
    OpInfo("outer", _outer_samples, dtypes=FI_C, supports_out=True, aliases=("Tensor.outer",)),
    OpInfo("addmm", _addmm_samples, dtypes=FI_C, supports_out=True, inplace="Tensor.addmm_",
           aliases=("Tensor.addmm",), tol=LINALG_TOL),
    OpInfo("baddbmm", _baddbmm_samples, dtypes=FI_C, supports_out=True, inplace="Tensor.baddbmm_",
           aliases=("Tensor.baddbmm",), tol=LINALG_TOL),
    OpInfo("einsum", _einsum_samples, dtypes=FI_C, tol=LINALG_TOL),
    OpInfo("tensordot", _tensordot_samples, dtypes=FI_C, supports_out=True, tol=LINALG_TOL),
    OpInfo("kron", _kron_samples, dtypes=FI_C, supports_out=True, aliases=("Tensor.kron",)),
    OpInfo("dist", _dist_samples, dtypes=F_C, aliases=("Tensor.dist",), tol=LINALG_TOL, domain="no zero differences"),
    OpInfo("block_diag", _block_diag_samples, dtypes=FI_C),
    OpInfo("trace", _trace_samples, dtypes=FI_C, aliases=("Tensor.trace",)),
    OpInfo("tril", _tri_samples, dtypes=FLOATS_INT + ("bool",) + COMPLEX, supports_out=True, inplace="Tensor.tril_",
           aliases=("Tensor.tril",)),
    OpInfo("triu", _tri_samples, dtypes=FLOATS_INT + ("bool",) + COMPLEX, supports_out=True, inplace="Tensor.triu_",
           aliases=("Tensor.triu",)),
    OpInfo("linalg.norm", _linalg_norm_samples, dtypes=F_C, supports_out=True, tol=LINALG_TOL),
    OpInfo("linalg.vector_norm", _vector_norm_samples, dtypes=F_C, supports_out=True, tol=LINALG_TOL),
    OpInfo("linalg.inv", _square_samples, dtypes=F_C, supports_out=True, aliases=("inverse",), tol=LINALG_TOL,
           domain="well-conditioned matrices (near ±I)"),
    OpInfo("linalg.det", _square_samples, dtypes=F_C, supports_out=True, aliases=("det", "Tensor.det"),
           tol=LINALG_TOL, domain="well-conditioned matrices (det far from 0)"),
    OpInfo("linalg.slogdet", _square_samples, dtypes=F_C, supports_out=True, aliases=("slogdet",), tol=LINALG_TOL,
           domain="well-conditioned matrices; sign is a non-differentiable output"),
    OpInfo("linalg.solve", _solve_samples, dtypes=F_C, supports_out=True, tol=LINALG_TOL,
           domain="well-conditioned A"),
    OpInfo("linalg.cholesky", _cholesky_samples, dtypes=F_C, supports_out=True, tol=LINALG_TOL,
           input_process=_symmetrize, domain="symmetric (Hermitian) positive definite (A Aᴴ + nI)"),
    OpInfo("linalg.qr", _qr_samples, dtypes=F_C, supports_out=True, tol=LINALG_TOL, output_process=_qr_process,
           domain="full column rank, m >= n (reduced mode)", notes="outputs compared with diag(R) real > 0"),
    OpInfo("linalg.eigh", _eigh_samples, dtypes=F_C, supports_out=True, tol=LINALG_TOL, input_process=_symmetrize,
           output_process=_eigh_process, domain="symmetric (Hermitian), eigenvalues >= 1 apart",
           notes="eigenvectors compared with each column's largest entry real positive"),
    OpInfo("linalg.svd", _svd_samples, dtypes=F_C, supports_out=True, tol=LINALG_TOL, output_process=_svd_process,
           domain="singular values distinct and away from 0; full_matrices=False (full U/V are not unique)",
           notes="U columns / Vh rows compared with U's largest entry per column real positive"),
]

OPS = LINALG_OPS
