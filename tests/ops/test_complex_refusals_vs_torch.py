"""Complex input where torch refuses it, against torch: the same exception type and message.

Three kinds of refusal: a CPU kernel with no complex instantiation (``"lt_cpu" not implemented for
'ComplexDouble'`` or the op's own words, as ``floor is not supported for complex inputs``), and a real-only
derivative that refuses to record a complex output requiring grad (``nan_to_num does not support automatic
differentiation for outputs with complex dtype.``; not without grad, not in place). And ``logaddexp`` and
``logcumsumexp``, which torch does support for complex: values, gradients and double gradients."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal((3, 4)) + 1j * _RNG.standard_normal((3, 4))
_B = _RNG.standard_normal((3, 4)) + 1j * _RNG.standard_normal((3, 4))
_INDEX = np.array([[0, 1, 2, 0], [1, 1, 0, 2]])


def _make(L, grad: bool = False):
    a = L.tensor(_A, requires_grad=grad)
    return a, L.tensor(_B)


# name -> call of the library (``L``), a complex tensor ``a`` and another ``b``
REFUSED = {
    "lt": lambda L, a, b: L.lt(a, b),
    "lt_scalar": lambda L, a, b: L.lt(a, 0.5),
    "lt_operator": lambda L, a, b: a < b,
    "lt_real_vs_complex_scalar": lambda L, a, b: L.lt(a.real, 1j),
    "le": lambda L, a, b: L.le(a, b),
    "gt": lambda L, a, b: L.gt(a, b),
    "ge_": lambda L, a, b: a.clone().ge_(b),
    "max": lambda L, a, b: L.max(a),
    "max_dim": lambda L, a, b: L.max(a, 1),
    "max_binary": lambda L, a, b: L.max(a, b),
    "min": lambda L, a, b: L.min(a),
    "min_dim": lambda L, a, b: L.min(a, 0, keepdim=True),
    "amax": lambda L, a, b: L.amax(a, 1),
    "amin": lambda L, a, b: L.amin(a),
    "aminmax": lambda L, a, b: L.aminmax(a),
    "argmax": lambda L, a, b: L.argmax(a),
    "argmin": lambda L, a, b: L.argmin(a, 1),
    "median": lambda L, a, b: L.median(a),
    "median_dim": lambda L, a, b: L.median(a, 1),
    "nanmedian": lambda L, a, b: L.nanmedian(a),
    "sort": lambda L, a, b: L.sort(a),
    "sort_stable": lambda L, a, b: L.sort(a, stable=True),
    "argsort": lambda L, a, b: L.argsort(a),
    "topk": lambda L, a, b: L.topk(a, 2),
    "kthvalue": lambda L, a, b: L.kthvalue(a, 2),
    "cummax": lambda L, a, b: L.cummax(a, 0),
    "cummin": lambda L, a, b: L.cummin(a, 1),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "minimum": lambda L, a, b: L.minimum(a, b),
    "maximum_mixed": lambda L, a, b: L.maximum(a.real, b),
    "fmax": lambda L, a, b: L.fmax(a, b),
    "clamp": lambda L, a, b: L.clamp(a, 0, 1),
    "erf": lambda L, a, b: L.erf(a),
    "erf_": lambda L, a, b: a.clone().erf_(),
    "erfc": lambda L, a, b: L.erfc(a),
    "erfinv": lambda L, a, b: L.erfinv(a),
    "lgamma": lambda L, a, b: L.lgamma(a),
    "digamma": lambda L, a, b: L.digamma(a),
    "polygamma0": lambda L, a, b: L.polygamma(0, a),
    "polygamma1": lambda L, a, b: L.polygamma(1, a),
    "polygamma3": lambda L, a, b: L.polygamma(3, a),
    "logit": lambda L, a, b: L.logit(a),
    "logit_eps": lambda L, a, b: L.logit(a, 0.1),
    "round": lambda L, a, b: L.round(a),
    "round_decimals": lambda L, a, b: L.round(a, decimals=2),
    "i0": lambda L, a, b: L.i0(a),
    "entr": lambda L, a, b: L.special.entr(a),
    "ndtr": lambda L, a, b: L.special.ndtr(a),
    "log_ndtr": lambda L, a, b: L.special.log_ndtr(a),
    "ndtri": lambda L, a, b: L.special.ndtri(a),
    "erfcx": lambda L, a, b: L.special.erfcx(a),
    "i0e": lambda L, a, b: L.special.i0e(a),
    "i1": lambda L, a, b: L.special.i1(a),
    "i1e": lambda L, a, b: L.special.i1e(a),
    "xlog1py": lambda L, a, b: L.special.xlog1py(a, b),
    "xlog1py_scalar": lambda L, a, b: L.special.xlog1py(a, 2.0),
    "xlogy": lambda L, a, b: L.xlogy(a, b),
    "multigammaln": lambda L, a, b: L.special.multigammaln(a, 2),
    "mvlgamma_bad_p": lambda L, a, b: L.mvlgamma(a, 0),
    "floor": lambda L, a, b: L.floor(a),
    "floor_": lambda L, a, b: a.clone().floor_(),
    "ceil": lambda L, a, b: L.ceil(a),
    "trunc": lambda L, a, b: L.trunc(a),
    "fix": lambda L, a, b: L.fix(a),
    "frac": lambda L, a, b: L.frac(a),
    "fmod": lambda L, a, b: L.fmod(a, b),
    "fmod_scalar": lambda L, a, b: L.fmod(a, 2.0),
    "remainder": lambda L, a, b: L.remainder(a, b),
    "remainder_operator": lambda L, a, b: a % b,
    "atan2": lambda L, a, b: L.atan2(a, b),
    "atan2_mixed": lambda L, a, b: L.atan2(a.real, b),
    "copysign": lambda L, a, b: L.copysign(a, b),
    "copysign_scalar": lambda L, a, b: L.copysign(a, 1.0),
    "logaddexp2": lambda L, a, b: L.logaddexp2(a, b),
    "div_floor": lambda L, a, b: L.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda L, a, b: L.div(a, b, rounding_mode="trunc"),
    "floor_divide_operator": lambda L, a, b: a // b,
    "scatter_reduce_amax": lambda L, a, b: a.scatter_reduce(0, L.tensor(_INDEX), b, "amax"),
    "scatter_reduce_amin": lambda L, a, b: a.scatter_reduce(0, L.tensor(_INDEX), b, "amin", include_self=False),
    "zeta": lambda L, a, b: L.special.zeta(a, b),
    "zeta_scalar": lambda L, a, b: L.special.zeta(a, 2.0),
    # the shape and argument checks come first, as in torch
    "lt_shape_mismatch": lambda L, a, b: L.lt(a, b[:, :3]),
    "max_bad_dim": lambda L, a, b: L.max(a, 5),
    "topk_k_out_of_range": lambda L, a, b: L.topk(a, 9),
    "kthvalue_k_out_of_range": lambda L, a, b: L.kthvalue(a, 9),
    "polygamma_negative_n": lambda L, a, b: L.polygamma(-1, a),
}

# torch refuses to record a complex output of these (a real-only derivative)
NO_COMPLEX_GRAD = {
    "nan_to_num": lambda L, a, b: L.nan_to_num(a),
    "scatter_reduce_sum": lambda L, a, b: b.scatter_reduce(0, L.tensor(_INDEX), a, "sum"),
    "scatter_reduce_prod": lambda L, a, b: a.scatter_reduce(0, L.tensor(_INDEX), b, "prod"),
    "scatter_reduce_mean": lambda L, a, b: a.scatter_reduce(0, L.tensor(_INDEX), b, "mean", include_self=False),
    "select_scatter": lambda L, a, b: L.select_scatter(a, b[0], 0, 1),
    "select_scatter_src_grad": lambda L, a, b: L.select_scatter(b, a[1], 0, 0),
    "slice_scatter": lambda L, a, b: L.slice_scatter(a, b[:2], 0, 0, 2),
}


def _error(L, fn, grad: bool = False):
    a, b = _make(L, grad)
    try:
        fn(L, a, b)
    except Exception as exc:  # noqa: BLE001 - the exception itself is compared
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_like_torch(name):
    expected = _error(torch, REFUSED[name])
    assert expected is not None, "torch computes it: not a refusal"
    assert _error(tg, REFUSED[name]) == expected


@pytest.mark.parametrize("name", sorted(NO_COMPLEX_GRAD))
def test_complex_output_not_recorded_like_torch(name):
    fn = NO_COMPLEX_GRAD[name]
    expected = _error(torch, fn, grad=True)
    assert expected is not None and "automatic differentiation" in expected[1]
    assert _error(tg, fn, grad=True) == expected
    # without grad (or under no_grad) both compute the same values
    values = [fn(L, *_make(L)).numpy() for L in (torch, tg)]
    np.testing.assert_allclose(values[1], values[0], rtol=1e-12, atol=1e-12)
    with tg.no_grad():
        assert not fn(tg, *_make(tg, grad=True)).requires_grad


def test_nan_to_num_inplace_records_like_torch():
    """torch checks only the functional form: the in-place one records its node."""
    results = []
    for L in (torch, tg):
        a = L.tensor(np.array([1 + 1j, complex(np.nan, 2.0)]), requires_grad=True)
        x = a.clone()
        x.nan_to_num_()
        results.append((type(x.grad_fn).__name__, x.detach().numpy()))
    assert results[1][0] == results[0][0]
    np.testing.assert_array_equal(results[1][1], results[0][1])


def _special_values(L):
    inf, nan = np.inf, np.nan
    x = np.array([complex(-inf, 1), complex(-inf, 0.5), complex(inf, 1), complex(inf, 2), complex(nan, 0),
                  complex(1, nan), complex(3, 1), complex(-inf, 2), complex(0, 0), complex(500, 3)])
    y = np.array([complex(-inf, 2), complex(1, 2), complex(inf, -1), complex(1, 1), complex(1, 1),
                  complex(2, 0), complex(nan, 1), complex(2, -3), complex(1e-20, 1e-20), complex(499, -1)])
    return L.logaddexp(L.tensor(x), L.tensor(y)).numpy()


def test_logaddexp_complex_special_values():
    np.testing.assert_allclose(_special_values(tg), _special_values(torch), rtol=1e-14, atol=0, equal_nan=True)


def _grads(L, fn, n_inputs: int):
    leaves = [L.tensor(v, requires_grad=True) for v in (_A, _B)[:n_inputs]]
    out = fn(L, *leaves)
    weights = L.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)) + 0.7j)
    loss = (out * weights).real.sum()
    grads = L.autograd.grad(loss, leaves, create_graph=True)
    second = sum((g * g.conj()).real.sum() + (g * (0.3 - 0.5j)).real.sum() for g in grads)
    double = L.autograd.grad(second, leaves)
    return [t.detach().resolve_conj().numpy() for t in (out, *grads, *double)]


SUPPORTED = {
    "logaddexp": (lambda L, x, y: L.logaddexp(x, y), 2),
    "logaddexp_wide": (lambda L, x, y: L.logaddexp(x * 40, y - 3), 2),
    "logcumsumexp_dim0": (lambda L, x: L.logcumsumexp(x, 0), 1),
    "logcumsumexp_dim1": (lambda L, x: L.logcumsumexp(x * 30, -1), 1),
}


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_supported_complex_values_and_grads(name):
    fn, n_inputs = SUPPORTED[name]
    for ours, theirs in zip(_grads(tg, fn, n_inputs), _grads(torch, fn, n_inputs), strict=True):
        # (entries far below the largest carry cancellation error relative to it, not to themselves)
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10 * np.abs(theirs).max())


def test_logcumsumexp_complex_leading_minus_inf():
    x = np.array([complex(-np.inf, 0), complex(-np.inf, 1), complex(0.5, 2), complex(np.nan, 0), complex(1, 1)])
    values = [L.logcumsumexp(L.tensor(x), 0).numpy() for L in (tg, torch)]
    np.testing.assert_allclose(values[0], values[1], rtol=1e-14, equal_nan=True)
