"""``sleef_float.sleef_expf`` against Sleef's expf_u10 written out step by step, on each of its paths: small arrays
in their own layout, large ones in blocks, the in-range arrays (|d| <= 87) and the clamped ones (NaN, infinities,
the flush to zero below -104 and the overflow above 100). PyTorch's ``exp`` is MKL's, not Sleef's: the comparison
with torch goes through softmax, whose kernel calls Sleef."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tracegrad.ops.aten_vec import fma32
from tracegrad.ops.nn_ops import sleef_float
from tracegrad.ops.nn_ops.sleef_float import sleef_expf

_F32 = np.float32
_BLOCK = sleef_float._EXP_BLOCK


def _twice_rounded(a, b, c) -> np.ndarray:
    """``a * b + c`` summed in float64 and cast: how sleef_expf takes the last two fused steps (its docstring)."""
    return (np.multiply(a, b, dtype=np.float64) + np.asarray(c, np.float64)).astype(_F32)


def _reference(d: np.ndarray) -> np.ndarray:
    """Sleef's xexpf (FMA build), one line of it at a time: vrint, two fused steps for s, Horner's rule,
    ``1 + fma(s * s, u, s)``, vldexp2 (two halves of 2^q), the masks below -104 and above 100."""
    d = np.asarray(d, _F32)
    coefficients = sleef_float._SLEEF_EXP_POLY
    with np.errstate(all="ignore"):
        q = np.rint(np.clip(d, _F32(-110), _F32(110)) * sleef_float._R_LN2)  # (the clip only spares the int cast)
        s = fma32(q, -sleef_float._L2U, d)
        s = fma32(q, -sleef_float._L2L, s)
        u = np.full_like(s, coefficients[0])
        for c in coefficients[1:5]:
            u = fma32(u, s, c)
        u = _twice_rounded(u, s, coefficients[5])
        u = _twice_rounded(s * s, u, s) + _F32(1)
        qi = q.astype(np.int32)
        u = u * sleef_float._pow2i(qi >> 1) * sleef_float._pow2i(qi - (qi >> 1))
    u[d < -104] = 0
    u[d > 100] = np.inf
    return u


def _assert_same(ours: np.ndarray, wanted: np.ndarray) -> None:
    assert ours.dtype == _F32 and ours.shape == wanted.shape
    nan = np.isnan(wanted)
    assert np.array_equal(np.isnan(ours), nan)
    bad = ours.view(np.uint32)[~nan] != wanted.view(np.uint32)[~nan]
    assert not bad.any(), f"{int(bad.sum())} of {bad.size} differ"


def _samples(size: int, seed: int) -> np.ndarray:
    """Values spread over the whole range and its edges: random floats near 0, within the range, and near its ends
    (-104, -87.3 where results turn subnormal, 88.72 where they overflow, 100), specials and random bit patterns."""
    rng = np.random.default_rng(seed)
    edges = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-30, 87, -87, 87.0001, -87.0001, 88, 88.72283, 88.7229, 89, 100,
                      100.0001, 110, 111, -103.97, -104, -104.0001, -110, -111, 3e38, -3e38, np.inf, -np.inf,
                      np.nan], _F32)
    parts = [rng.uniform(-1, 1, size) * 10.0 ** rng.integers(-40, 2, size), rng.uniform(-120, 120, size),
             rng.choice([-104, -87.3, 88.72, 100], size) + rng.uniform(-0.5, 0.5, size)]
    values = np.concatenate([p.astype(_F32) for p in parts] + [rng.integers(0, 2**32, size, np.uint32).view(_F32)])
    return np.concatenate([edges, values])


@pytest.mark.parametrize("size", (1, 15, 160, 4099, _BLOCK, _BLOCK + 17, 3 * _BLOCK + 5))
def test_sleef_expf_follows_the_reference_mixed(size: int) -> None:
    """Arrays holding specials take the clamped path, in one block or several."""
    x = _samples(size, size)[:size]
    _assert_same(sleef_expf(x), _reference(x))


@pytest.mark.parametrize("size", (1, 160, 4099, _BLOCK + 17, 2 * _BLOCK + 5))
def test_sleef_expf_follows_the_reference_in_range(size: int) -> None:
    """Arrays with |d| <= 87 throughout take the unclamped path (blocks of a large array each decide)."""
    x = _samples(2 * size, size + 1)
    x = x[np.abs(x) <= 87][:size]
    _assert_same(sleef_expf(x), _reference(x))
    if size > _BLOCK:  # (one block clamped, the others not)
        x[_BLOCK + 3] = np.nan
        _assert_same(sleef_expf(x), _reference(x))


def test_sleef_expf_many_samples() -> None:
    x = _samples(50_000, 0)
    _assert_same(sleef_expf(x), _reference(x))
    _assert_same(sleef_expf(x[np.abs(x) <= 87]), _reference(x[np.abs(x) <= 87]))


def test_sleef_expf_layouts_and_shapes() -> None:
    """Strided and transposed inputs (small: computed in their own layout; large: copied flat), 0-d and empty."""
    x = _samples(40_000, 3)[:40_000].reshape(200, 200)
    for view in (x.T, x[::3, 1::2], x[:50, :60].T, x[:40].T):
        _assert_same(sleef_expf(view), _reference(view))
    assert sleef_expf(x.T[:7, :9]).shape == (7, 9)
    _assert_same(sleef_expf(np.array(_F32(1.5))), _reference(np.array([1.5], _F32)).reshape(()))
    _assert_same(sleef_expf(np.array(_F32(np.nan))), np.array(_F32(np.nan)))
    assert sleef_expf(np.zeros((0, 3), _F32)).shape == (0, 3)
    assert sleef_expf([1.0, 2.0]).dtype == _F32


def test_sleef_expf_raises_no_warning() -> None:
    x = _samples(1000, 5)
    with warnings.catch_warnings():  # (NumPy's default error handling: underflow is ignored, the rest warns)
        warnings.simplefilter("error")
        sleef_expf(x)
        sleef_expf(x[np.abs(x) <= 87])


def test_softmax_through_both_paths_matches_torch(one_thread) -> None:
    """torch's softmax kernel takes Sleef's expf on its vector lanes: rows in range, rows with -inf and huge
    logits (clamped), and a tensor past the block size."""
    torch = pytest.importorskip("torch")
    import tracegrad as tg
    from tracegrad.ops.aten_vec import aten_float_lanes

    lanes = {"AVX512": 16, "AVX2": 8}.get(torch.backends.cpu.get_cpu_capability(), 0)
    if lanes != aten_float_lanes() or not lanes:
        pytest.skip("tracegrad and torch pick different vector widths here")
    rng = np.random.default_rng(7)
    for shape in ((16, 10), (64, 1000)):
        x = (rng.standard_normal(shape) * 8).astype(_F32)
        x[1, :3] = -np.inf
        x[2, 4] = 1e30
        ours = tg.softmax(tg.from_numpy(x.copy()), 1).numpy()
        theirs = torch.softmax(torch.from_numpy(x.copy()), 1).numpy()
        assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))
