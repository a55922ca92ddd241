"""bfloat16 where torch 2.13's CPU kernels have no BFloat16 instantiation, against torch: the same error type and
message (``"lu_cpu" not implemented for 'BFloat16'``), forward and through backward; where torch does compute
(a pointwise operator promoted to float32, cdist through matrix products, pdist of one row) the same result.
Also the tests of a tensor's NumPy kind outside the kernels, which took ml_dtypes' bfloat16 (kind "V") for a
non-floating dtype (dropout, is_signed, cov's weights, clamp's complex bounds, sort's and max's backward).

``ops/bfloat16_in_float.py``'s ``REFUSED`` holds the operators torch refuses bfloat16 to, as data."""

from __future__ import annotations

import pytest
from _lib import bits_or_error, np, tg, torch

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.filterwarnings("ignore")]


def _same(program) -> None:
    assert bits_or_error(program, tg) == bits_or_error(program, torch)


def _bf(lib, *shape, seed=0, shift=0.0):
    return lib.tensor((np.random.RandomState(seed).randn(*shape) + shift).astype(np.float32)).bfloat16()


def _square(lib, seed=0):
    return lib.tensor((np.random.RandomState(seed).randn(3, 3) + 3 * np.eye(3)).astype(np.float32)).bfloat16()


def _grads(lib, function, *inputs):
    """The gradients of ``function``'s (first) output summed, for bfloat16 inputs that require grad."""
    leaves = [x.requires_grad_() for x in inputs]
    out = function(*leaves)
    out = out[0] if isinstance(out, (tuple, list)) else out
    return lib.autograd.grad(out.float().sum(), leaves)


REFUSED = {
    # linear algebra
    "linalg.lu": lambda L: L.linalg.lu(_square(L)),
    "linalg.lu_factor": lambda L: L.linalg.lu_factor(_square(L)),
    "linalg.lu_factor_ex": lambda L: L.linalg.lu_factor_ex(_square(L)),
    "linalg.lu_factor singular": lambda L: L.linalg.lu_factor(L.zeros(3, 3, dtype=L.bfloat16)),
    "lu": lambda L: _square(L).lu(),
    "linalg.lu 1-d (the shape first)": lambda L: L.linalg.lu(_bf(L, 3)),
    "triangular_solve": lambda L: L.triangular_solve(_square(L), _square(L, 1)),
    "triangular_solve 1-d b": lambda L: L.triangular_solve(_bf(L, 3), _square(L)),
    "solve_triangular": lambda L: L.linalg.solve_triangular(_square(L), _square(L, 1), upper=True),
    "cholesky_inverse": lambda L: L.cholesky_inverse(_square(L)),
    "cholesky_inverse not square": lambda L: L.cholesky_inverse(_bf(L, 2, 3)),
    "ormqr": lambda L: L.ormqr(_square(L), _bf(L, 3), _square(L, 1)),
    "geqrf": lambda L: L.geqrf(_square(L)),
    "ldl_factor": lambda L: L.linalg.ldl_factor(_square(L)),
    "pinv": lambda L: L.linalg.pinv(_square(L)),
    "pinv 1-d": lambda L: L.linalg.pinv(_bf(L, 3)),
    "lstsq": lambda L: L.linalg.lstsq(_square(L), _square(L, 1)),
    "lstsq 1-d": lambda L: L.linalg.lstsq(_bf(L, 3), _square(L)),
    "matrix_rank atol": lambda L: L.linalg.matrix_rank(_square(L), atol=0.1),
    "matrix_rank hermitian atol": lambda L: L.linalg.matrix_rank(_square(L), atol=0.1, hermitian=True),
    # distances, pooling, losses
    "cdist": lambda L: L.cdist(_bf(L, 3, 4), _bf(L, 5, 4, seed=1)),
    "cdist p=1": lambda L: L.cdist(_bf(L, 3, 4), _bf(L, 5, 4, seed=1), p=1.0),
    "cdist bfloat16 and float32": lambda L: L.cdist(_bf(L, 3, 4), _bf(L, 5, 4, seed=1).float()),
    "cdist columns differ": lambda L: L.cdist(_bf(L, 3, 4), _bf(L, 5, 2, seed=1)),
    "pdist": lambda L: L.nn.functional.pdist(_bf(L, 4, 3)),
    "avg_pool3d": lambda L: L.nn.functional.avg_pool3d(_bf(L, 1, 2, 4, 4, 4), 2),
    "avg_pool3d kernel too large": lambda L: L.nn.functional.avg_pool3d(_bf(L, 1, 1, 3, 3, 3), 5),
    "lp_pool3d": lambda L: L.nn.functional.lp_pool3d(_bf(L, 1, 2, 4, 4, 4), 2.0, 2),
    "local_response_norm": lambda L: L.nn.functional.local_response_norm(_bf(L, 2, 4, 3, 3), 2),
    "ctc_loss": lambda L: L.nn.functional.ctc_loss(_bf(L, 5, 2, 4).log_softmax(2), L.tensor([[1, 2], [3, 1]]),
                                                 L.tensor([5, 5]), L.tensor([2, 2])),
    "ctc_loss lengths too long (the dtype first)": lambda L: L.nn.functional.ctc_loss(
        _bf(L, 5, 2, 4).log_softmax(2), L.tensor([[1, 2], [3, 1]]), L.tensor([9, 5]), L.tensor([2, 2])),
    "multi_margin_loss": lambda L: L.nn.functional.multi_margin_loss(_bf(L, 3, 4), L.tensor([0, 3, 1])),
    "multi_margin_loss target size": lambda L: L.nn.functional.multi_margin_loss(_bf(L, 3, 4), L.tensor([0, 3])),
    "multilabel_margin_loss": lambda L: L.nn.functional.multilabel_margin_loss(
        _bf(L, 2, 4), L.tensor([[1, 3, -1, 0], [0, -1, 2, 2]])),
    # special functions, random draws, complex tensors of two real ones, stft
    "erfcx": lambda L: L.special.erfcx(_bf(L, 3)),
    "log_ndtr": lambda L: L.special.log_ndtr(_bf(L, 3)),
    "ndtri": lambda L: L.special.ndtri(_bf(L, 3).sigmoid()),
    "zeta": lambda L: L.special.zeta(_bf(L, 3, shift=3), 2.0),
    "zeta of a number": lambda L: L.special.zeta(2.0, _bf(L, 3, shift=3)),
    "zeta shapes (the shapes first)": lambda L: L.special.zeta(_bf(L, 3), _bf(L, 2)),
    "bessel_j0": lambda L: L.special.bessel_j0(_bf(L, 3)),
    "modified_bessel_k1": lambda L: L.special.modified_bessel_k1(_bf(L, 3).abs()),
    "airy_ai": lambda L: L.special.airy_ai(_bf(L, 3)),
    "chebyshev_polynomial_t": lambda L: L.special.chebyshev_polynomial_t(_bf(L, 3), 2),
    "hermite_polynomial_he of a number": lambda L: L.special.hermite_polynomial_he(0.5, _bf(L, 3)),
    "binomial": lambda L: L.binomial(_bf(L, 3).abs() + 2, _bf(L, 3).sigmoid()),
    "complex": lambda L: L.complex(_bf(L, 3), _bf(L, 3, seed=1)),
    "complex bfloat16 and float32": lambda L: L.complex(_bf(L, 3), _bf(L, 3, seed=1).float()),
    "polar": lambda L: L.polar(_bf(L, 3).abs(), _bf(L, 3, seed=1)),
    "stft": lambda L: L.stft(_bf(L, 32), 8, return_complex=True),
    "histogram of a bin count (its range's extrema)": lambda L: L.histogram(_bf(L, 50), 5),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refused_like_torch(name):
    _same(REFUSED[name])


BACKWARD = {
    "linalg.lu": lambda L: _grads(L, lambda a: L.linalg.lu(a)[1], _square(L)),
    "linalg.lu_factor": lambda L: _grads(L, lambda a: L.linalg.lu_factor(a)[0], _square(L)),
    "triangular_solve": lambda L: _grads(L, L.triangular_solve, _square(L), _square(L, 1)),
    "cdist": lambda L: _grads(L, L.cdist, _bf(L, 3, 4), _bf(L, 5, 4, seed=1)),
    "log_ndtr": lambda L: _grads(L, L.special.log_ndtr, _bf(L, 3)),
    "pdist of one row": lambda L: _grads(L, L.nn.functional.pdist, _bf(L, 1, 3)),
    "avg_pool3d": lambda L: _grads(L, lambda a: L.nn.functional.avg_pool3d(a, 2), _bf(L, 1, 2, 4, 4, 4)),
}


@pytest.mark.parametrize("name", BACKWARD)
def test_backward_refused_like_torch(name):
    _same(BACKWARD[name])


COMPUTED = {
    # a pointwise operator promoted to float32 computes; so do cdist's matrix products and pdist of one row
    "zeta bfloat16 and float32": lambda L: L.special.zeta(_bf(L, 3, shift=3), _bf(L, 3, seed=1).abs().float() + 1),
    "log_ndtr of float32 into bfloat16 out=": lambda L: L.special.log_ndtr(
        _bf(L, 3).float(), out=L.empty(3, dtype=L.bfloat16)),
    # (the matrix products' values: a bfloat16 ulp apart at places)
    "cdist use_mm": lambda L: str(L.cdist(_bf(L, 3, 4), _bf(L, 5, 4, seed=1), compute_mode="use_mm_for_euclid_dist")
                                  .dtype),
    "cdist of 26 rows": lambda L: str(L.cdist(_bf(L, 26, 3), _bf(L, 4, 3, seed=1)).dtype),
    "pdist of one row": lambda L: L.nn.functional.pdist(_bf(L, 1, 3)),
    "matrix_exp": lambda L: str(L.linalg.matrix_exp(_square(L) / 4).dtype),
    # index_put's dtype check saw the float32 copy of a copied bfloat16 self (sort, max... backward through it)
    "index_put": lambda L: L.index_put(_bf(L, 3, 4), (L.tensor([0, 2]), L.tensor([1, 3])), _bf(L, 2, seed=1)),
    "index_put of a mask and a 0-d value": lambda L: L.index_put(_bf(L, 3, 4), (_bf(L, 3, 4) > 0,),
                                                                 _bf(L, seed=1)),
    "sort backward": lambda L: _grads(L, lambda a: a.sort(1)[0] * L.arange(4.0), _bf(L, 3, 4)),
    "max.dim backward": lambda L: _grads(L, lambda a: a.max(1)[0], _bf(L, 3, 4)),
    "topk backward": lambda L: _grads(L, lambda a: a.topk(2)[0], _bf(L, 3, 4)),
    "kthvalue backward": lambda L: _grads(L, lambda a: a.kthvalue(2, 0)[0], _bf(L, 3, 4)),
    "median.dim backward": lambda L: _grads(L, lambda a: a.median(1)[0], _bf(L, 3, 4)),
    # tests of NumPy's kind that took bfloat16 (kind "V") for something else than a floating dtype
    "dropout": lambda L: L.nn.functional.dropout(_bf(L, 4, 5), 0.3),
    "alpha_dropout": lambda L: L.nn.functional.alpha_dropout(_bf(L, 4, 5), 0.3, True),
    "dropout2d": lambda L: L.nn.functional.dropout2d(_bf(L, 2, 3, 4, 4), 0.5),
    "histogram of bin edges": lambda L: L.histogram(_bf(L, 50), L.tensor([-1.0, 0.0, 0.5, 2.0]).bfloat16(),
                                                    weight=_bf(L, 50, seed=1).abs()),
    "is_signed": lambda L: _bf(L, 3).is_signed(),
    "isclose equal_nan version": lambda L: L.isclose(_bf(L, 3), _bf(L, 3), equal_nan=True)._version,
    "cov aweights": lambda L: L.cov(_bf(L, 2, 3), aweights=_bf(L, 3, seed=1).abs()),
    "clamp complex bounds": lambda L: L.clamp(_bf(L, 2, 3), 0j, 1 + 0j),
    "storage_type": lambda L: _bf(L, 3).storage_type().__name__,
    "BFloat16Storage": lambda L: [str(L.BFloat16Storage([1.5, 2]).dtype), isinstance(_bf(L, 2).storage(),
                                                                                       L.BFloat16Storage)],
}


@pytest.mark.parametrize("name", COMPUTED)
def test_computed_like_torch(name):
    _same(COMPUTED[name])
