"""Elementwise functions and reductions on every dtype (float16/32/64, int32/64, uint8, bool): torch's result
dtype, shape and values, or its error; float16 values computed as torch computes them (in float32); the
``torch.return_types`` named tuples printed as torch prints them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch

KINDS = ["f", "d", "h", "i", "i32", "u8", "b"]
FUNCTIONS = {
    **{name: [{}] for name in [
        "abs", "neg", "sign", "sgn", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
        "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "logit", "erf", "erfc",
        "floor", "ceil", "trunc", "frac", "reciprocal", "square", "prod", "amax", "amin", "argmax", "argmin",
        "norm", "msort", "nansum", "count_nonzero"]},
    "sum": [{}, {"dim": 1}], "mean": [{}, {"dim": 0}], "max": [{}, {"dim": 1}], "min": [{}, {"dim": 0}],
    "cumsum": [{"dim": 1}], "cumprod": [{"dim": 0}], "topk": [{"k": 2}], "sort": [{"dim": 1}],
    "logsumexp": [{"dim": 1}], "median": [{}, {"dim": 1}], "kthvalue": [{"k": 1}], "var": [{}, {"dim": 1}],
    "std": [{}], "all": [{}, {"dim": 1}], "any": [{"dim": 0}], "round": [{}, {"decimals": 1}],
}


def _tensor(lib, kind: str):
    data = {"f": [[1.5, -2.0, 0.0], [3.0, 0.5, -0.25]], "i": [[3, -2, 0], [7, 1, 4]],
            "b": [[True, False, True], [True, True, False]]}
    dtype = {"f": lib.float32, "d": lib.float64, "h": lib.float16, "i": lib.int64, "i32": lib.int32,
             "u8": lib.uint8, "b": lib.bool}[kind]
    source = data["f"] if kind in "fdh" else data["b"] if kind == "b" else [[abs(v) for v in r] for r in data["i"]] \
        if kind == "u8" else data["i"]
    return lib.tensor(source, dtype=dtype)


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn()
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc).__name__, str(exc)

    def plain(r):
        if isinstance(r, tuple):
            return [plain(v) for v in r]
        return str(r.dtype), tuple(r.shape), str(np.asarray(r.tolist(), dtype=complex).round(3).tolist())

    return plain(result)


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_function_on_dtype_matches_torch(name, kind):
    for kwargs in FUNCTIONS[name]:
        ours = _outcome(lambda: getattr(tg, name)(_tensor(tg, kind), **kwargs))  # noqa: B023 - called at once
        theirs = _outcome(lambda: getattr(torch, name)(_tensor(torch, kind), **kwargs))  # noqa: B023
        assert ours == theirs, kwargs


HALF_FUNCTIONS = ["exp", "log", "sqrt", "rsqrt", "sin", "tanh", "sigmoid", "reciprocal",
                  "nn.functional.gelu", "nn.functional.silu", "nn.functional.mish", "nn.functional.selu",
                  "nn.functional.elu", "nn.functional.hardswish", "nn.functional.hardsigmoid",
                  "nn.functional.leaky_relu", "nn.functional.softplus"]


def _resolve(lib, name: str):
    obj = lib
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", HALF_FUNCTIONS)
def test_float16_values_are_torchs(name):
    """At least 99% of 2,000 float16 results are bit-identical to torch's (its kernels compute in float32)."""
    rng = np.random.default_rng(0)
    positive = name in ("log", "sqrt", "rsqrt", "reciprocal")
    x = rng.uniform(0.01 if positive else -3, 3, 2000).astype(np.float16)
    ours = _resolve(tg, name)(tg.tensor(x)).numpy()
    theirs = _resolve(torch, name)(torch.tensor(x)).numpy()
    assert ours.dtype == np.float16
    assert np.mean((ours == theirs) | (np.isnan(ours) & np.isnan(theirs))) >= 0.99


def test_return_types_print_as_torchs():
    def text(lib):
        x = lib.tensor([[1.0, 5.0], [3.0, 2.0]])
        result = x.max(1)
        return repr(result), type(result).__name__, type(result).__module__, repr(lib.linalg.cholesky_ex(lib.eye(2)))

    assert text(tg) == text(torch)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma1", "polygamma2"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gamma_functions_on_the_whole_line(name, dtype):
    """Values near and below zero (reflection, poles), large and non-finite arguments, as torch's."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(0.01, 30, 200), rng.uniform(-20, 0, 200),
                        [0.0, -0.0, -1.0, -2.0, 1.0, 2.0, 10.0, 0.5, 1e-8, 1e3, np.inf, -np.inf, np.nan]])
    x = x.astype(dtype)

    def values(lib):
        t = lib.tensor(x)
        return (lib.polygamma(int(name[-1]), t) if name.startswith("polygamma") else getattr(lib, name)(t)).numpy()

    np.testing.assert_allclose(values(tg), values(torch), rtol=1e-10 if dtype == "float64" else 1e-5, atol=0)
    # (assert_allclose treats NaN as equal to NaN and infinities of one sign as equal)


def test_logcumsumexp_extremes():
    """Infinities and large magnitudes pass through the scan as in torch (no overflow)."""

    def values(lib):
        x = lib.tensor([[1.0, -float("inf"), 3.0], [float("inf"), 2.0, -1.0], [800.0, 801.0, -800.0]],
                       dtype=lib.float64)
        return lib.logcumsumexp(x, 1).numpy(), lib.logcumsumexp(x, 0).numpy()

    for ours, theirs in zip(values(tg), values(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
