"""The quick paths of ``sleef_float``'s tanhf, expm1f, logf and log1pf against the step-by-step emulations in the
module (Sleef's double-float arithmetic with ``fma32``): the doubtful lanes' shorter emulation (``_tanhf_doubtful``,
``_expm1f_doubtful``), small arrays in one block and large ones in several, the range tests that pick the plain
paths, layouts, 0-d and empty inputs; and ELU against torch where Sleef's expm1f is torch's (vector lanes)."""

from __future__ import annotations

import numpy as np
import pytest

from tracegrad.ops.nn_ops import sleef_float as sf

_F32 = np.float32


def _assert_same(ours, wanted) -> None:
    ours, wanted = np.asarray(ours), np.asarray(wanted)
    assert ours.dtype == _F32 and ours.shape == wanted.shape
    nan = np.isnan(wanted)
    assert np.array_equal(np.isnan(ours), nan)
    bad = ours.view(np.uint32)[~nan] != wanted.view(np.uint32)[~nan]
    assert not bad.any(), f"{int(bad.sum())} of {bad.size} differ: {ours[~nan][bad][:3]} {wanted[~nan][bad][:3]}"


def _values(size: int, seed: int, scales=(1e-4, 0.01, 0.3, 1, 3, 10, 40)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(size) * rng.choice(scales, size)).astype(_F32)


_TANH_EDGES = np.array([0.0, -0.0, 1e-45, -1e-45, 2.0**-9, -(2.0**-9), 0.00195, 1, -1, 0.99999994, 8.664339,
                        -8.664339, 8.66434, 9, 9.0109, 20, -20, np.inf, -np.inf, np.nan], _F32)
_EXPM1_EDGES = np.array([0.0, -0.0, 1e-45, -1e-45, 2.0**-7, -(2.0**-7), 16, -16, 16.000002, -16.635532, -16.635534,
                         -17, -17.5, 88.72283, 88.722832, 88.8, 89, 89.5, 100, -100, 3e38, -3e38, np.inf, -np.inf,
                         np.nan], _F32)


def test_tanhf_doubtful_lanes_follow_the_emulation() -> None:
    x = np.concatenate([_values(20_000, 1), _TANH_EDGES, np.float32(2.0) ** -np.arange(9, 150, dtype=_F32)])
    x = x[np.abs(x) <= sf._SLEEF_TANH_ONE]
    _assert_same(sf._tanhf_doubtful(x), sf._sleef_tanhf_emulated(x))


@pytest.mark.parametrize("size", (1, 2, 7, 16, 160, 200, 4099, sf._TANH_BLOCK + 3))
def test_sleef_tanhf_follows_the_emulation(size: int) -> None:
    """One block (small arrays: the doubtful lanes are many among few) or several; edges first."""
    x = np.concatenate([_TANH_EDGES, _values(size, size)])[:size]
    _assert_same(sf.sleef_tanhf(x), sf._sleef_tanhf_emulated(x))


def test_expm1f_doubtful_lanes_follow_the_emulation() -> None:
    x = np.concatenate([_values(20_000, 2), _EXPM1_EDGES[~np.isnan(_EXPM1_EDGES)]])
    _assert_same(sf._expm1f_doubtful(x), sf._sleef_expm1f_emulated(x))


@pytest.mark.parametrize("size", (1, 2, 7, 16, 160, 200, 40_000))
def test_sleef_expm1f_follows_the_emulation(size: int) -> None:
    x = np.concatenate([_EXPM1_EDGES, _values(size, size + 50)])[:size]
    _assert_same(sf.sleef_expm1f(x), sf._sleef_expm1f_emulated(x))


@pytest.mark.parametrize("size", (1, 7, 160, 4099, 3 * 32768 + 5))
def test_sleef_logf_follows_the_exact_steps(size: int) -> None:
    """Positive normal arrays take the plain path (blocks for large ones); one special value the masked one."""
    rng = np.random.default_rng(size)
    x = (10.0 ** rng.uniform(-37, 38, size)).astype(_F32)
    _assert_same(sf.sleef_logf(x), sf.sleef_logf_exact(x))
    x[size // 2] = rng.choice(np.array([0.0, -1.0, np.inf, np.nan, 1e-40, 2.0**127], _F32))
    _assert_same(sf.sleef_logf(x), sf.sleef_logf_exact(x))


@pytest.mark.parametrize("size", (1, 7, 160, 4099, 2 * 32768 + 5))
def test_sleef_log1pf_follows_the_emulation(size: int) -> None:
    """Arrays within [2**-100, 1e38] (log1p of an exponential) take the plain path; others the masked one."""
    rng = np.random.default_rng(size + 3)
    x = np.exp(rng.uniform(-60, 60, size)).astype(_F32)
    _assert_same(sf.sleef_log1pf(x), sf._sleef_log1pf_emulated(x))
    x[size // 2] = rng.choice(np.array([0.0, -0.0, -0.5, -1.0, -2.0, 1e-38, 2e38, np.inf, np.nan], _F32))
    _assert_same(sf.sleef_log1pf(x), sf._sleef_log1pf_emulated(x))


def test_layouts_zero_d_and_empty() -> None:
    x = _values(40 * 24, 9).reshape(40, 24)
    pairs = ((sf.sleef_tanhf, sf._sleef_tanhf_emulated), (sf.sleef_expm1f, sf._sleef_expm1f_emulated),
             (sf.sleef_log1pf, sf._sleef_log1pf_emulated), (sf.sleef_logf, sf.sleef_logf_exact))
    for ours, reference in pairs:
        for view in (x.T, x[:, ::3], x[::-1], x[:7, :5].T):
            v = np.abs(view) if ours is sf.sleef_logf else view
            _assert_same(ours(v), reference(v))
        assert ours(np.zeros((0, 3), _F32)).shape == (0, 3)
    assert sf.sleef_expm1f(x.T).strides == x.T.astype(_F32, order="K").strides  # (a's layout, as before)
    for value in (0.5, -0.0, 2.0):
        _assert_same(sf.sleef_expm1f(np.array(_F32(value))), sf._sleef_expm1f_emulated(np.array([value], _F32))[0])
        _assert_same(sf.sleef_tanhf(np.array(_F32(value))), sf._sleef_tanhf_emulated(np.array([value], _F32))[0])
    for value in (0.5, 0.0, -1.0, np.inf, np.nan, 1e-40):  # (0-d: a float32 scalar, specials too)
        assert isinstance(sf.sleef_logf(np.array(_F32(value))), np.float32)
        _assert_same(sf.sleef_logf(np.array(_F32(value))), sf.sleef_logf_exact(np.array([value], _F32))[0])


def test_elu_family_matches_torch(one_thread) -> None:
    """ELU, SELU and CELU forward and backward, with positive lanes past 16 and tiny ones (which once took the
    doubtful path); torch's vector lanes take Sleef's expm1f."""
    torch = pytest.importorskip("torch")
    import tracegrad as tg
    from tracegrad.ops.aten_vec import aten_float_lanes

    lanes = {"AVX512": 16, "AVX2": 8}.get(torch.backends.cpu.get_cpu_capability(), 0)
    if lanes != aten_float_lanes() or not lanes:
        pytest.skip("tracegrad and torch pick different vector widths here")
    x = np.concatenate([_EXPM1_EDGES, _values(1000, 4)])[:1000].reshape(40, 25)
    for name, kwargs in (("elu", {}), ("elu", {"alpha": 0.4}), ("selu", {}), ("celu", {"alpha": 1.3})):
        ours_x, theirs_x = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ours = getattr(tg.nn.functional, name)(ours_x, **kwargs)
        theirs = getattr(torch.nn.functional, name)(theirs_x, **kwargs)
        _assert_same(ours.detach().numpy(), theirs.detach().numpy())
        ours.sum().backward()
        theirs.sum().backward()
        _assert_same(ours_x.grad.numpy(), theirs_x.grad.numpy())
