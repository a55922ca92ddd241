"""quantile, mode, nanmedian, histogram, cov, corrcoef, cartesian_prod, combinations, gcd/lcm, heaviside, ldexp,
frexp, nextafter, polar, vander, trapezoid, cumulative_trapezoid, gradient, renorm, unravel_index, index_reduce,
put and the window functions, by tracegrad and by torch on seeded inputs: the same values, dtypes and shapes,
the same autograd graph (node names, walked breadth-first), the same input gradients, and the same errors.

Known differences, left out here: the index nanmedian returns for an all-NaN slice (PyTorch's nth_element picks
an arbitrary one) and ties in mode/nanmedian indices beyond PyTorch's documented (value, last index) rule.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from _lib import tg, torch

_RNG = np.random.default_rng(1234)
X = _RNG.standard_normal((4, 5))
X32 = X.astype(np.float32)
XN = X.copy()
XN[1, 2] = np.nan
XN[3, :] = np.nan
XZ = X.copy()
XZ[0, 0] = XZ[2, 1] = 0.0
V = _RNG.standard_normal(3)
M = _RNG.integers(0, 3, (4, 6)).astype(np.float64)
IA = _RNG.integers(-20, 20, (3, 4))
IB = _RNG.integers(-20, 20, (4,))
COORDS = np.sort(_RNG.standard_normal(5))
IDX = np.array([0, 2, 0, 1])
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")
_REDUCES = ("prod", "mean", "amax", "amin")


def _graph(t) -> list[str]:
    names, seen, queue = [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        queue.extend(fn for fn, _ in node.next_functions)
    return names


# (id, fn(T, *tensors), input arrays, whether float inputs require grad)
CASES = [
    *[(f"quantile_{m}", lambda T, a, m=m: T.quantile(a, 0.3, interpolation=m), (X,), True) for m in _MODES],
    *[(f"quantile_qtensor_dim0_{m}", lambda T, a, m=m: T.quantile(
        a, T.tensor([0.1, 0.5, 0.9], dtype=T.float64), dim=0, keepdim=True, interpolation=m), (X,), True)
      for m in _MODES],
    *[(f"nanquantile_{m}", lambda T, a, m=m: T.nanquantile(
        a, T.tensor([0.25, 0.75], dtype=T.float64), dim=1, interpolation=m), (XN,), True) for m in _MODES],
    ("quantile_nan_lastdim", lambda T, a: T.quantile(a, 0.5, dim=-1), (XN,), True),
    ("quantile_f32_method", lambda T, a: a.quantile(0.7, dim=1), (X32,), True),
    ("quantile_0d", lambda T, a: T.quantile(a, 0.7), (np.array(2.0),), True),
    ("nanquantile_full_keepdim", lambda T, a: T.nanquantile(a, 0.4, keepdim=True), (XN,), True),
    ("quantile_err_q", lambda T, a: T.quantile(a, 1.5), (X,), True),
    ("nanquantile_err_qtensor", lambda T, a: T.nanquantile(a, T.tensor([1.5], dtype=T.float64)), (X,), True),
    ("quantile_err_mode", lambda T, a: T.quantile(a, 0.5, interpolation="x"), (X,), True),
    ("quantile_err_dtype", lambda T, a: T.quantile(a, 0.5), (IA,), True),
    ("quantile_err_qdtype", lambda T, a: T.quantile(a, T.tensor([0.5])), (X,), True),
    ("quantile_err_q2d", lambda T, a: T.quantile(a, T.rand(2, 2, dtype=T.float64)), (X,), True),
    ("mode_dim1", lambda T, a: T.mode(a, 1), (M,), True),
    ("mode_dim0_keepdim", lambda T, a: T.mode(a, 0, True), (M,), True),
    ("mode_method_default", lambda T, a: a.mode(), (M,), True),
    ("mode_int", lambda T, a: T.mode(a, 1), (M.astype(np.int64),), True),
    ("mode_err_empty", lambda T, a: T.mode(a[:, :0], 1), (M,), True),
    ("nanmedian_full", lambda T, a: T.nanmedian(a), (XN,), True),
    ("nanmedian_dim", lambda T, a: T.nanmedian(a[:3], 1), (XN,), True),
    ("nanmedian_method_dim0_keepdim", lambda T, a: a.nanmedian(0, True), (XN[:3],), True),
    ("nanmedian_err_bool", lambda T, a: T.nanmedian(a > 0), (X,), True),
    ("histogram_bins", lambda T, a: T.histogram(a, 5), (X,), False),
    ("histogram_range_weight_density", lambda T, a, w: T.histogram(a, 4, range=(-1.0, 1.0), weight=w,
                                                                   density=True), (X, np.abs(X)), False),
    ("histogram_tensor_bins", lambda T, a: T.histogram(a, T.tensor([-1.0, 0.0, 0.5, 2.0], dtype=T.float64)),
     (X,), False),
    ("histogram_f32_method", lambda T, a: a.histogram(7), (X32,), False),
    ("histogram_constant", lambda T, a: T.histogram(a[0] * 0 + 1, 2), (X,), False),
    ("histogram_err_range", lambda T, a: T.histogram(a, 4, range=(1.0, 0.0)), (X,), False),
    ("histogram_err_bins", lambda T, a: T.histogram(a, -1), (X,), False),
    ("histogram_err_dtype", lambda T, a: T.histogram(a, 3), (IA,), False),
    ("cov", lambda T, a: T.cov(a), (X,), True),
    ("cov_1d", lambda T, a: a[0].cov(), (X,), True),
    ("cov_weights", lambda T, a, aw: T.cov(a, correction=0, fweights=T.tensor([1, 2, 1, 3, 1]), aweights=aw),
     (X, np.abs(X[0])), True),
    ("cov_err_fweights", lambda T, a: T.cov(a, fweights=T.ones(5)), (X,), True),
    ("cov_err_aweights", lambda T, a: T.cov(a, aweights=-T.ones(5)), (X,), True),
    ("cov_err_3d", lambda T, a: T.cov(a.reshape(2, 2, 5)), (X,), True),
    ("corrcoef", lambda T, a: T.corrcoef(a), (X,), True),
    ("corrcoef_int", lambda T, a: a.corrcoef(), (IA,), True),
    ("cartesian_prod", lambda T, a, b: T.cartesian_prod(a, b), (V, V[:2]), True),
    ("cartesian_prod_one", lambda T, a: T.cartesian_prod(a), (V,), True),
    ("cartesian_prod_err", lambda T, a: T.cartesian_prod(a), (X,), True),
    ("combinations", lambda T, a: T.combinations(a), (V,), True),
    ("combinations_r3_replacement", lambda T, a: T.combinations(a, 3, True), (V,), True),
    ("combinations_r0", lambda T, a: T.combinations(a, 0), (V,), True),
    ("combinations_err", lambda T, a: T.combinations(a, -1), (V,), True),
    ("gcd", lambda T, a, b: T.gcd(a, b), (IA, IB), True),
    ("lcm", lambda T, a, b: T.lcm(a, b), (IA, IB), True),
    ("gcd_int32", lambda T, a, b: a.gcd(b), (IA.astype(np.int32), IB), True),
    ("gcd_inplace", lambda T, a, b: a.clone().gcd_(b), (IA, IB), True),
    ("lcm_inplace", lambda T, a, b: a.clone().lcm_(b), (IA, IB), True),
    ("gcd_err_float", lambda T, a: T.gcd(a, a), (X,), True),
    ("heaviside", lambda T, a, b: T.heaviside(a, b), (np.round(X), X[0]), True),
    ("heaviside_err_dtypes", lambda T, a, b: T.heaviside(a, b), (X32, X), True),
    ("ldexp", lambda T, a, b: T.ldexp(a, b), (X, X[0]), True),
    ("ldexp_int_exponent", lambda T, a, b: T.ldexp(a, b), (X32, IB[:1]), True),
    ("ldexp_ints", lambda T, a, b: T.ldexp(a, b), (IA, IB), True),
    ("ldexp_inplace", lambda T, a, b: (a * 1).ldexp_(b), (X, X[0]), True),
    ("frexp", lambda T, a: T.frexp(a * 100), (X,), True),
    ("frexp_err", lambda T, a: a.frexp(), (IA,), True),
    ("nextafter", lambda T, a, b: T.nextafter(a, b), (X, X[0]), True),
    ("nextafter_f32", lambda T, a, b: a.nextafter(b), (X32, X32[0]), True),
    ("nextafter_err", lambda T, a, b: T.nextafter(a, b), (IA, IB), True),
    ("nextafter_promotes", lambda T, a, b: T.nextafter(a, b), (X32, X[0]), True),
    ("polar", lambda T, a, b: T.polar(a, b), (np.abs(X), X), True),
    ("polar_f32", lambda T, a, b: T.polar(a, b), (np.abs(X32), X32), True),
    ("polar_err", lambda T, a, b: T.polar(a, b), (X32, X), True),
    ("vander", lambda T, a: T.vander(a), (V,), True),
    ("vander_N_increasing", lambda T, a: T.vander(a, 5, True), (V,), True),
    ("vander_int", lambda T, a: T.vander(a), (IB,), True),
    ("vander_err", lambda T, a: T.vander(a), (X,), True),
    ("trapezoid", lambda T, a: T.trapezoid(a), (X,), True),
    ("trapezoid_dx_dim0", lambda T, a: T.trapezoid(a, dx=0.5, dim=0), (X,), True),
    ("trapezoid_x", lambda T, a, b: T.trapezoid(a, b), (X, np.sort(X[0])), True),
    ("trapezoid_x2d", lambda T, a, b: T.trapezoid(a, b, dim=0), (X, X), True),
    ("trapezoid_int", lambda T, a: T.trapezoid(a), (IA,), True),
    ("trapezoid_empty", lambda T, a: T.trapezoid(a[:, :0]), (X,), True),
    ("trapezoid_err_x", lambda T, a: T.trapezoid(a, T.ones(3, dtype=T.float64)), (X,), True),
    ("trapz", lambda T, a: T.trapz(a), (X,), True),
    ("cumulative_trapezoid", lambda T, a: T.cumulative_trapezoid(a), (X,), True),
    ("cumulative_trapezoid_x", lambda T, a, b: T.cumulative_trapezoid(a, b, dim=0), (X, np.sort(X[:, 0])), True),
    ("gradient", lambda T, a: T.gradient(a), (X,), True),
    ("gradient_edge2_dim1", lambda T, a: T.gradient(a, spacing=2.0, dim=1, edge_order=2), (X,), True),
    ("gradient_coords", lambda T, a, c: T.gradient(a, spacing=(c,), dim=1), (X, COORDS), True),
    ("gradient_coords_edge2", lambda T, a, c: T.gradient(a, spacing=(c,), dim=1, edge_order=2), (X, COORDS), True),
    ("gradient_list", lambda T, a: T.gradient(a, spacing=[1.0, 2.0]), (X,), True),
    ("gradient_int", lambda T, a: T.gradient(a), (IA,), True),
    ("gradient_err_edge", lambda T, a: T.gradient(a, edge_order=3), (X,), True),
    ("gradient_err_spacing", lambda T, a: T.gradient(a, spacing=[1.0, 2.0, 3.0]), (X,), True),
    ("renorm", lambda T, a: T.renorm(a, 2, 0, 1.0), (X,), True),
    ("renorm_p1_method", lambda T, a: a.renorm(1, 1, 0.5), (X,), True),
    ("renorm_inf", lambda T, a: T.renorm(a, float("inf"), 0, 0.5), (X,), True),
    ("renorm_p3_f32", lambda T, a: T.renorm(a, 3, 1, 0.5), (X32,), True),
    ("renorm_inplace", lambda T, a: (a * 1).renorm_(2, 0, 1.0), (X,), True),
    ("renorm_err_p", lambda T, a: T.renorm(a, 0, 0, 1.0), (X,), True),
    ("renorm_err_1d", lambda T, a: T.renorm(a[0], 2, 0, 1.0), (X,), True),
    ("unravel_index", lambda T, a: T.unravel_index(a, (3, 4)), (IA,), True),
    ("unravel_index_err", lambda T, a: T.unravel_index(a, (3, 4)), (X,), True),
    *[(f"index_reduce_{r}_{inc}", lambda T, a, s, i, r=r, inc=inc: T.index_reduce(a, 0, i, s, r, include_self=inc),
       (X, X, IDX), True) for r in _REDUCES for inc in (True, False)],
    *[(f"index_reduce_dim1_{r}", lambda T, a, s, i, r=r: a.index_reduce(1, i, s, r), (X, X[:, :4], IDX), True)
      for r in _REDUCES],
    ("index_reduce_prod_zeros", lambda T, a, s, i: T.index_reduce(a, 0, i, s, "prod"), (XZ, XZ, IDX), True),
    ("index_reduce_int_mean", lambda T, a, s, i: T.index_reduce(a, 0, i, s, "mean"), (IA, IA[[0, 1, 2, 0]], IDX),
     True),
    ("index_reduce_inplace", lambda T, a, s, i: (a * 1).index_reduce_(0, i, s, "amax"), (X, X, IDX), True),
    ("index_reduce_err_reduce", lambda T, a, s, i: T.index_reduce(a, 0, i, s, "sum"), (X, X, IDX), True),
    ("index_reduce_err_dtype", lambda T, a, s, i: T.index_reduce(a, 0, i, s.float(), "prod"), (X, X, IDX), True),
    ("put", lambda T, a, s, i: T.put(a, i, s), (X, V[[0, 1, 2, 0]], np.array([0, 7, -1, 3])), True),
    ("put_accumulate", lambda T, a, s, i: a.put(i, s, accumulate=True), (X, V[[0, 1, 2, 0]], np.array([0, 7, 0, 7])),
     True),
    ("put_inplace", lambda T, a, s, i: (a * 1).put_(i, s), (X, V[[0, 1, 2, 0]], np.array([0, 7, -1, 3])), True),
    ("put_err_range", lambda T, a, s, i: T.put(a, i, s), (X, V[[0, 1, 2, 0]], np.array([0, 20, 1, 2])), True),
    ("put_err_numel", lambda T, a, s, i: T.put(a, i, s[:3]), (X, V[[0, 1, 2, 0]], np.array([0, 2, 1, 2])), True),
]


def _run(lib, fn, arrays, grad: bool):
    ts = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(lib, *ts), ts
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return e, ts


def _np(t) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(case):
    _name, fn, arrays, grad = case
    expected, t_in = _run(torch, fn, arrays, grad)
    got, g_in = _run(tg, fn, arrays, grad)
    if isinstance(expected, Exception):
        assert type(got) is type(expected) and str(got) == str(expected), (expected, got)
        return
    assert not isinstance(got, Exception), got
    exp = expected if isinstance(expected, tuple) else (expected,)
    out = got if isinstance(got, tuple) else (got,)
    assert type(out).__name__ == type(exp).__name__ and len(out) == len(exp)
    for e, o in zip(exp, out):
        assert str(o.dtype) == str(e.dtype) and tuple(o.shape) == tuple(e.shape)
        np.testing.assert_allclose(_np(o), _np(e), rtol=1e-5, atol=1e-6, equal_nan=True)
        assert _graph(o) == _graph(e)
    head, ghead = exp[0], out[0]
    needs = [t for t in t_in if t.requires_grad]
    if head.grad_fn is None or not needs:
        return
    rng = np.random.default_rng(0)
    go = rng.standard_normal(tuple(head.shape))
    if head.dtype.is_complex:
        go = go + 1j * rng.standard_normal(tuple(head.shape))
    try:
        expected_grads = torch.autograd.grad(head, needs, torch.tensor(go, dtype=head.dtype), allow_unused=True)
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match="^" + re.escape(str(e)) + "$"):
            tg.autograd.grad(ghead, [t for t in g_in if t.requires_grad], tg.tensor(go).to(ghead.dtype),
                             allow_unused=True)
        return
    grads = tg.autograd.grad(ghead, [t for t in g_in if t.requires_grad], tg.tensor(go).to(ghead.dtype),
                             allow_unused=True)
    for e, o in zip(expected_grads, grads):
        assert (e is None) == (o is None)
        if e is not None:
            np.testing.assert_allclose(_np(o), _np(e), rtol=1e-5, atol=1e-6, equal_nan=True)


_WINDOWS = ("hann", "hamming", "blackman", "bartlett", "kaiser")


@pytest.mark.parametrize("name", _WINDOWS)
def test_windows_match_torch(name):
    for n in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            for dt in ("float32", "float64"):
                e = getattr(torch, f"{name}_window")(n, periodic, dtype=getattr(torch, dt))
                o = getattr(tg, f"{name}_window")(n, periodic, dtype=getattr(tg, dt))
                assert str(o.dtype) == str(e.dtype) and tuple(o.shape) == tuple(e.shape)
                np.testing.assert_allclose(o.numpy(), e.numpy(), rtol=1e-6, atol=1e-6)
    assert str(getattr(tg, f"{name}_window")(4).dtype) == "torch.float32"
    assert getattr(tg, f"{name}_window")(4, requires_grad=True).requires_grad
    for bad in ((-1,), (3,)):
        kwargs = {"dtype": torch.long} if bad == (3,) else {}
        with pytest.raises(RuntimeError) as e:
            getattr(torch, f"{name}_window")(*bad, **kwargs)
        kwargs = {"dtype": tg.long} if bad == (3,) else {}
        with pytest.raises(RuntimeError, match="^" + re.escape(str(e.value)) + "$"):
            getattr(tg, f"{name}_window")(*bad, **kwargs)


def test_hamming_window_alpha_beta():
    e = torch.hamming_window(7, False, 0.6, 0.3, dtype=torch.float64)
    np.testing.assert_allclose(tg.hamming_window(7, False, 0.6, 0.3, dtype=tg.float64).numpy(), e.numpy())


def test_kaiser_window_beta():
    e = torch.kaiser_window(9, True, 5.0, dtype=torch.float64)
    np.testing.assert_allclose(tg.kaiser_window(9, True, 5.0, dtype=tg.float64).numpy(), e.numpy(), rtol=1e-12)
