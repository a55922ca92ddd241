"""Decompositions built on ``linalg.svd`` against torch: legacy ``torch.svd`` (V = Vh^H, conjugated for complex
input; zeros laid out as torch's without U and V) and the low-rank helpers.

The signs (phases) of singular vector pairs are not compared: they follow the LAPACK build's path (MKL's real
``?gesdd`` bidiagonalises a wide A itself up to n < 20 m, where NumPy's OpenBLAS takes an LQ factorisation from
n >= 11m/6), and torch documents them as not unique across builds. An emulation of MKL's paths matched them
but cost 6-26x per call (``.notes/svd_signs_emulation``), so what is compared is what does not depend on
them: the rank-one terms ``s_k u_k v_k^H`` and the reconstruction."""

from __future__ import annotations

import pytest
from _lib import assert_close, np, raised, tg, torch

_TOL = {"float32": 2e-4, "float64": 1e-10, "complex64": 2e-4, "complex128": 1e-10}


def _matrix(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _rank_one_terms(U, S, V) -> np.ndarray:
    """``s_k u_k v_k^H`` for each k (batch..., k, m, n): the same whatever sign or phase each pair has."""
    u, s, v = (np.asarray(t.resolve_conj().numpy()) for t in (U, S, V))
    k = s.shape[-1]  # (some=False: U and V are square, the columns past k span the null spaces, any basis)
    return np.einsum("...ik,...k,...jk->...kij", u[..., :k], s, v[..., :k].conj())


def _assert_same_terms(ours, theirs, dtype: str) -> None:
    tol = _TOL[dtype]
    np.testing.assert_allclose(_rank_one_terms(*ours), _rank_one_terms(*theirs), rtol=tol, atol=tol)


@pytest.mark.parametrize("some", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 3, 4)], ids=str)
def test_legacy_svd_returns_v_as_vh_conjugate_transposed(shape, dtype, some):
    x = _matrix(shape, dtype, 1)
    ours, theirs = tg.svd(tg.from_numpy(x.copy()), some=some), torch.svd(torch.from_numpy(x.copy()), some=some)
    _assert_same_terms(ours, theirs, dtype)
    k = min(shape[-2:])  # (U S V^H is the input: V = Vh^T, unconjugated, was not a factor of complex input)
    U, S, V = (t.numpy() for t in ours)
    np.testing.assert_allclose((U[..., :k] * S[..., None, :]) @ V[..., :k].conj().swapaxes(-1, -2), x, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_legacy_svd_without_uv_gives_v_as_a_transposed_view(dtype):
    x = _matrix((2, 3, 4), dtype, 0)
    ours, theirs = tg.svd(tg.from_numpy(x), compute_uv=False), torch.svd(torch.from_numpy(x), compute_uv=False)
    assert [t.stride() for t in ours] == [t.stride() for t in theirs]
    assert_close(list(ours), [t.resolve_conj() for t in theirs], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("helper", ["svd_lowrank", "pca_lowrank"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lowrank_helpers_terms(helper, dtype):
    def program(lib, x):
        lib.manual_seed(0)
        return getattr(lib, helper)(x, q=3)

    for seed in range(3):
        x = _matrix((6, 10), dtype, seed)
        _assert_same_terms(program(tg, tg.from_numpy(x.copy())), program(torch, torch.from_numpy(x.copy())), dtype)


def test_wide_svd_of_infinite_input_gives_nan_as_torch():
    a = _matrix((3, 5), "float64", 0)
    a[1, 1] = np.inf
    ours, theirs = tg.linalg.svdvals(tg.from_numpy(a)), torch.linalg.svdvals(torch.from_numpy(a))
    assert np.isnan(ours.numpy()).all() and np.isnan(theirs.numpy()).all()


_SVD_PROGRAMS = {
    "linalg.svd": lambda lib, x: lib.linalg.svd(x),
    "linalg.svdvals": lambda lib, x: lib.linalg.svdvals(x),
    "svd": lambda lib, x: lib.svd(x),
    "pinv": lambda lib, x: lib.linalg.pinv(x),
    "matrix_rank": lambda lib, x: lib.linalg.matrix_rank(x),
    "nuclear norm": lambda lib, x: lib.linalg.matrix_norm(x, "nuc"),
    "2-norm": lambda lib, x: lib.linalg.matrix_norm(x, 2),
}


@pytest.mark.parametrize("shape", [(3, 5), (4, 4), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("name", list(_SVD_PROGRAMS))
def test_svd_of_nan_input_fails_as_torch(name, shape):
    a = _matrix(shape, "float64", 0)
    a[(-1,) * len(shape)] = np.nan
    program = _SVD_PROGRAMS[name]
    ours = raised(tg, lambda lib: program(lib, lib.from_numpy(a.copy())))
    assert ours == raised(torch, lambda lib: program(lib, lib.from_numpy(a.copy())))
    assert ours[0] == "_LinAlgError"
