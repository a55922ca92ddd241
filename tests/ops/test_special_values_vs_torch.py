"""Operators at the points where formulas break: 0 and -0, the kinks of activations (±3, 6, the shrink and
threshold edges), ties, tiny and huge numbers, ±inf and NaN, compared with torch.

The operator database keeps its samples away from these points (finite differences need smooth inputs), so
this file checks what a user sees there: forward values, first-order gradients, gradients under
``create_graph=True`` (PyTorch switches some formulas on grad mode) and forward-AD tangents, NaN positions
and signs of infinities included.

Known differences, left out on purpose: torch's vectorised float32 GELU gives NaN at +inf and its float32
logit gradient at -0.0 is +inf (both are artefacts of torch's SIMD kernels; float64 agrees); fmod/remainder
of float32 1e20 by 1e-30 (torch's quotient overflows to NaN); logaddexp2(x, x), off by an ulp in torch's SLEEF
log1p; the order of ties in ``sort(stable=False)`` (unspecified, torch's introsort), so sorts here are stable.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _lib import tg, torch

INF, NAN = math.inf, math.nan
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 6.0, -6.0, 1e-30, -1e-30, 1e20, -1e20, INF,
           -INF, NAN, 0.25, 20.0, -20.0, 100.0]
# The binary grid: every pair of these (a smaller set, 17 x 17).
PAIRS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 1e-30, 1e20, -1e20, INF, -INF, NAN, 0.25, -20.0]

_F = "nn.functional."
_UNARY_PATHS = ["neg", "abs", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "logit", "erf", "erfc", "erfinv", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "reciprocal", "square", "sinc", "lgamma", "digamma", "asinh", "acosh", "atanh", "deg2rad", "rad2deg", "nan_to_num", "positive", "fix"] + [_F + n for n in ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "softplus", "hardtanh", "hardswish", "hardsigmoid", "hardshrink", "softshrink", "tanhshrink", "logsigmoid", "softsign"]]


def _resolve(lib, path: str):
    obj = lib
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _path_call(path: str):
    return lambda lib, x: _resolve(lib, path)(x)


UNARY = {path: _path_call(path) for path in _UNARY_PATHS}
UNARY.update({
    "gelu": lambda L, x: L.nn.functional.gelu(x.double()).to(x.dtype),  # (float32 GELU at inf: see above)
    "gelu_tanh": lambda L, x: L.nn.functional.gelu(x, approximate="tanh"),
    "softplus_beta2_threshold1": lambda L, x: L.nn.functional.softplus(x, beta=2, threshold=1),
    "threshold": lambda L, x: L.nn.functional.threshold(x, 0.5, -3.0),
    "clamp_0_1": lambda L, x: L.clamp(x, 0, 1),
    "clamp_min0": lambda L, x: L.clamp(x, min=0),
    "clamp_max1": lambda L, x: L.clamp(x, max=1),
    "clamp_inverted": lambda L, x: L.clamp(x, 1, 0),
    "clamp_tensor_bounds": lambda L, x: L.clamp(x, L.zeros_like(x), L.ones_like(x)),
    "hardtanh_-1_2": lambda L, x: L.nn.functional.hardtanh(x, -1.0, 2.0),
    "leaky_relu_negative_slope": lambda L, x: L.nn.functional.leaky_relu(x, -0.5),
    "elu_alpha2": lambda L, x: L.nn.functional.elu(x, 2.0),
    "celu_alpha05": lambda L, x: L.nn.functional.celu(x, 0.5),
    "logit_eps": lambda L, x: L.logit(x, eps=0.1),
    "nan_to_num_values": lambda L, x: L.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0),
    "round_decimals": lambda L, x: L.round(x, decimals=1),
    "xlogy_self": lambda L, x: L.xlogy(x, x),
    "mul_self": lambda L, x: x * x,
    "div_self": lambda L, x: x / x,
    "log_softmax": lambda L, x: L.log_softmax(x, 0),
    "softmax": lambda L, x: L.softmax(x, 0),
    "logsumexp": lambda L, x: L.logsumexp(x, 0),
    "norm": lambda L, x: L.norm(x),
    "cumsum": lambda L, x: L.cumsum(x, 0),
    "cumprod": lambda L, x: L.cumprod(x, 0),
    "prod": lambda L, x: L.prod(x),
    "max": lambda L, x: L.max(x),
    "min": lambda L, x: L.min(x),
    "amax": lambda L, x: L.amax(x, 0),
    "sum": lambda L, x: L.sum(x),
    "mean": lambda L, x: L.mean(x),
    "var": lambda L, x: L.var(x),
    "std": lambda L, x: L.std(x),
    "nansum": lambda L, x: L.nansum(x),
    "nanmean": lambda L, x: L.nanmean(x),
    "sort_stable": lambda L, x: L.sort(x, stable=True)[0],
    "median": lambda L, x: L.median(x),
    "cummax": lambda L, x: L.cummax(x, 0)[0],
    "cummin": lambda L, x: L.cummin(x, 0)[0],
    "topk": lambda L, x: L.topk(x, 3)[0],
    "kthvalue": lambda L, x: L.kthvalue(x, 4)[0],
})
for _p in (0.0, 0.5, 1.0, 2.0, 3.0, -1.0, -0.5, -2.0, 1.5, INF, -INF):
    UNARY[f"pow_{_p}"] = (lambda p: lambda L, x: L.pow(x, p))(_p)
    UNARY[f"scalar_pow_{_p}"] = (lambda p: lambda L, x: L.pow(p, x))(_p)
    UNARY[f"vector_norm_{_p}"] = (lambda p: lambda L, x: L.linalg.vector_norm(x, p))(_p)

_F_LOSS = {"reduction": "none"}
BINARY = {
    "add_alpha": lambda L, a, b: L.add(a, b, alpha=2), "sub": lambda L, a, b: a - b, "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b, "div_floor": lambda L, a, b: L.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda L, a, b: L.div(a, b, rounding_mode="trunc"),
    "remainder": lambda L, a, b: L.remainder(a.double(), b.double()).to(a.dtype),
    "fmod": lambda L, a, b: L.fmod(a.double(), b.double()).to(a.dtype),
    "maximum": lambda L, a, b: L.maximum(a, b), "minimum": lambda L, a, b: L.minimum(a, b),
    "fmax": lambda L, a, b: L.fmax(a, b), "fmin": lambda L, a, b: L.fmin(a, b),
    "atan2": lambda L, a, b: L.atan2(a, b), "hypot": lambda L, a, b: L.hypot(a, b),
    "copysign": lambda L, a, b: L.copysign(a, b), "pow": lambda L, a, b: L.pow(a, b),
    "float_power": lambda L, a, b: L.float_power(a, b), "xlogy": lambda L, a, b: L.xlogy(a, b),
    "logaddexp": lambda L, a, b: L.logaddexp(a, b), "logaddexp2": lambda L, a, b: L.logaddexp2(a, b),
    "lerp_scalar": lambda L, a, b: L.lerp(a, b, 0.3), "lerp_tensor": lambda L, a, b: L.lerp(a, b, L.full_like(a, 0.7)),
    "clamp_min_tensor": lambda L, a, b: L.clamp(a, min=b), "clamp_max_tensor": lambda L, a, b: L.clamp(a, max=b),
    "clamp_both_tensors": lambda L, a, b: L.clamp(a, b, b + 1),
    "addcmul": lambda L, a, b: L.addcmul(a, a, b, value=0.5), "addcdiv": lambda L, a, b: L.addcdiv(a, a, b, value=0.5),
    "where": lambda L, a, b: L.where(a > b, a, b),
    "mse_loss": lambda L, a, b: L.nn.functional.mse_loss(a, b, **_F_LOSS),
    "l1_loss": lambda L, a, b: L.nn.functional.l1_loss(a, b, **_F_LOSS),
    "smooth_l1_loss": lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b, **_F_LOSS),
    "huber_loss": lambda L, a, b: L.nn.functional.huber_loss(a, b, **_F_LOSS),
    "bce_with_logits": lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(a, b, **_F_LOSS),
    "kl_div": lambda L, a, b: L.nn.functional.kl_div(a, b, **_F_LOSS),
    "kl_div_log_target": lambda L, a, b: L.nn.functional.kl_div(a, b, log_target=True, **_F_LOSS),
    "poisson_nll_loss": lambda L, a, b: L.nn.functional.poisson_nll_loss(a, b, **_F_LOSS),
    "poisson_nll_loss_no_log": lambda L, a, b: L.nn.functional.poisson_nll_loss(a, b, log_input=False, **_F_LOSS),
    "dist": lambda L, a, b: L.dist(a.reshape(17, 17), b.reshape(17, 17)),
}
MODES = ("backward", "create_graph", "forward_ad")
DTYPES = ("float64", "float32")


def _numpy(t) -> np.ndarray | None:
    if t is None:
        return None
    if getattr(t, "_is_zerotensor", lambda: False)():  # torch's efficient zeros (a derivative known to be 0)
        return np.zeros(tuple(t.shape))
    return t.detach().double().numpy()


def _seed_like(lib, t, seed: int):
    values = np.random.default_rng(seed).uniform(0.5, 1.5, tuple(t.shape))
    return lib.tensor(values, dtype=t.dtype)


def _outcome(lib, fn, inputs: list[np.ndarray], dtype: str, mode: str):
    """(forward value, derivatives) or ("error", type, first line); derivatives are per input for the
    reverse modes and per seeded input (each alone, then all together) for forward AD."""
    dt = getattr(lib, dtype)
    try:
        if mode == "forward_ad":
            fa = lib.autograd.forward_ad
            primals = [lib.tensor(v, dtype=dt) for v in inputs]
            tangents = [_seed_like(lib, p, 10 + i) for i, p in enumerate(primals)]
            choices = [[i == j for i in range(len(inputs))] for j in range(len(inputs))]
            if len(inputs) > 1:
                choices.append([True] * len(inputs))
            derivatives = []
            with fa.dual_level():
                for chosen in choices:
                    args = [fa.make_dual(p, t) if c else p for p, t, c in zip(primals, tangents, chosen)]
                    out = fa.unpack_dual(fn(lib, *args))
                    derivatives.append(_numpy(out.tangent))
            return _numpy(out.primal), derivatives
        leaves = [lib.tensor(v, dtype=dt, requires_grad=True) for v in inputs]
        out = fn(lib, *leaves)
        grads = lib.autograd.grad(out, leaves, _seed_like(lib, out, 0), allow_unused=True,
                                  create_graph=mode == "create_graph")
        return _numpy(out), [_numpy(g) for g in grads]
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return "error", type(exc).__name__, str(exc).split("\n")[0]


def _assert_same(ours, theirs, dtype: str, what: str, points: list) -> None:
    assert (ours is None) == (theirs is None), f"{what}: tracegrad {ours}, torch {theirs}"
    if ours is None:
        return
    assert ours.shape == theirs.shape, what
    # float32: a few ulps, amplified where a formula cancels (expm1's result + 1 near -6); below the smallest
    # normal number (exp(-100)) only the magnitude is compared
    rtol, atol = (1e-7, 1e-300) if dtype == "float64" else (1e-4, 1e-37)
    with np.errstate(invalid="ignore"):
        close = np.isclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)
    bad = np.flatnonzero(~close)
    where = [(points[i] if ours.ndim and len(points) == ours.size else i, ours.flat[i], theirs.flat[i])
             for i in bad[:6]]
    assert not bad.size, f"{what} differs at (input, tracegrad, torch): {where}"


def _compare(fn, inputs: list[np.ndarray], dtype: str, mode: str) -> None:
    ours, theirs = _outcome(tg, fn, inputs, dtype, mode), _outcome(torch, fn, inputs, dtype, mode)
    if isinstance(ours[0], str) or isinstance(theirs[0], str):
        assert ours == theirs
        return
    points = list(zip(*[v.tolist() for v in inputs])) if len(inputs) > 1 else inputs[0].tolist()
    _assert_same(ours[0], theirs[0], dtype, "value", points)
    assert len(ours[1]) == len(theirs[1])
    for k, (a, b) in enumerate(zip(ours[1], theirs[1])):
        _assert_same(a, b, dtype, f"{mode} derivative {k}", points)


# (op, dtype) -> points left out, see the module docstring
_LEFT_OUT = {("logit", "float32"): (-0.0,)}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_at_special_values_as_in_torch(name, dtype, mode):
    left_out = _LEFT_OUT.get((name, dtype), ())
    points = [v for v in SPECIAL if not any(v == w and math.copysign(1, v) == math.copysign(1, w) for w in left_out)]
    _compare(UNARY[name], [np.array(points)], dtype, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_on_a_grid_of_special_values_as_in_torch(name, dtype, mode):
    a, b = np.repeat(PAIRS, len(PAIRS)), np.tile(PAIRS, len(PAIRS))
    fn = BINARY[name]
    if name == "logaddexp2":  # x == y rounds differently (see the module docstring): compare the others
        keep = a != b
        a, b = a[keep], b[keep]
    _compare(fn, [a, b], dtype, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(12))
def test_products_with_zeros_as_in_torch(seed, mode):
    """prod and cumprod along a dim of tensors holding zeros (one, several), infinities and NaN: PyTorch's
    zero-aware formulas give exact zeros where a product over the other elements holds a zero, and switch to
    their differentiable O(n^2) formula under create_graph."""
    rng = np.random.default_rng(seed)
    x = rng.choice([0.0, 0.0, 1.5, -2.0, 0.5, 3.0, INF, NAN], size=(3, 5), p=[.2, .1, .2, .2, .1, .1, .05, .05])
    dim = int(rng.integers(0, 2))
    for fn in (lambda L, t: L.cumprod(t, dim), lambda L, t: L.prod(t, dim), lambda L, t: L.prod(t),
               lambda L, t: L.cumprod(t.flatten(), 0)):
        _compare(fn, [x], "float64", mode)


# Rows through functions that work along a dim: overflow-prone (1e30), all -inf, mixed infinities, NaN, ties.
ROWS = np.array([[1., 2., 3.], [-INF, -INF, -INF], [-INF, 0., 1.], [INF, 0., 1.], [NAN, 0., 1.], [0., 0., 0.],
                 [1e30, -1e30, 0.], [5., 5., 5.]])
_TARGETS = [0, 1, 2, 0, 1, 2, 0, 1]
# matmul leaves out the row [1e30, -1e30, 0]: its product with [5, 5, 5] is 0, or the rounding error of 5e30 where
# the BLAS kernel fuses the multiply-adds (OpenBLAS's Haswell kernels do, MKL on an AMD processor did not), so
# the machine's BLAS decides it, in NumPy as in torch
_NO_CANCELLING_ROW = [0, 1, 2, 3, 4, 5, 7]


def _fn(L):  # noqa: N802 - the library under test, like the L of the tables above
    return L.nn.functional


ROW_FUNCTIONS = {
    "softmax": lambda L, x: _fn(L).softmax(x, 1), "log_softmax": lambda L, x: _fn(L).log_softmax(x, 1),
    "softmin": lambda L, x: _fn(L).softmin(x, 1), "logsumexp": lambda L, x: L.logsumexp(x, 1),
    "layer_norm": lambda L, x: _fn(L).layer_norm(x, (3,)), "rms_norm": lambda L, x: _fn(L).rms_norm(x, (3,)),
    "group_norm": lambda L, x: _fn(L).group_norm(x.reshape(8, 3, 1), 1),
    "instance_norm": lambda L, x: _fn(L).instance_norm(x.reshape(8, 3, 1)),
    "normalize": lambda L, x: _fn(L).normalize(x, dim=1), "normalize_p1": lambda L, x: _fn(L).normalize(x, p=1, dim=1),
    "pairwise_distance": lambda L, x: _fn(L).pairwise_distance(x, x.flip(1)),
    "cross_entropy": lambda L, x: _fn(L).cross_entropy(x, L.tensor(_TARGETS), reduction="none"),
    "cross_entropy_smoothing": lambda L, x: _fn(L).cross_entropy(x, L.tensor(_TARGETS), reduction="none",
                                                                label_smoothing=0.1),
    "nll_loss": lambda L, x: _fn(L).nll_loss(x, L.tensor(_TARGETS), reduction="none"),
    "bce_of_sigmoid": lambda L, x: _fn(L).binary_cross_entropy(x.sigmoid(), L.ones_like(x) * 0.3, reduction="none"),
    "var": lambda L, x: x.var(1), "std": lambda L, x: x.std(1), "std_mean": lambda L, x: L.std_mean(x, 1)[0],
    "var_mean_mean": lambda L, x: L.var_mean(x, 1)[1],
    "norm": lambda L, x: x.norm(dim=1), "norm_inf": lambda L, x: L.linalg.vector_norm(x, INF, dim=1),
    "max": lambda L, x: x.max(1)[0], "amax": lambda L, x: x.amax(1), "mean": lambda L, x: x.mean(1),
    "argmax_gather": lambda L, x: x.gather(1, x.argmax(1, keepdim=True)), "prod": lambda L, x: x.prod(1),
    "cumsum": lambda L, x: x.cumsum(1), "cummax": lambda L, x: x.cummax(1)[0],
    "sort": lambda L, x: x.sort(dim=1, stable=True)[0], "topk": lambda L, x: x.topk(2, 1)[0],
    "median": lambda L, x: x.median(1)[0], "nanmean": lambda L, x: x.nanmean(1), "nansum": lambda L, x: x.nansum(1),
    "glu": lambda L, x: _fn(L).glu(L.cat([x, x], 1), 1),
    "linear": lambda L, x: _fn(L).linear(x, L.eye(3, dtype=x.dtype)), "matmul": lambda L, x: x[_NO_CANCELLING_ROW] @ x[_NO_CANCELLING_ROW].t(),
    "cdist": lambda L, x: L.cdist(x, x.flip(0)), "trace": lambda L, x: L.trace(x[:3]),
    "huber_loss": lambda L, x: _fn(L).huber_loss(x, x.flip(1), reduction="none"),
    "smooth_l1_loss": lambda L, x: _fn(L).smooth_l1_loss(x, x.flip(1), reduction="none", beta=0.5),
    "mse_loss": lambda L, x: _fn(L).mse_loss(x, x.flip(1)),
    "margin_ranking_loss": lambda L, x: _fn(L).margin_ranking_loss(x[:, 0], x[:, 1], L.ones(8, dtype=x.dtype),
                                                                 reduction="none"),
    "hinge_embedding_loss": lambda L, x: _fn(L).hinge_embedding_loss(x, L.ones_like(x), reduction="none"),
    "triplet_margin_loss": lambda L, x: _fn(L).triplet_margin_loss(x, x.flip(1), x.flip(0), reduction="none"),
    "gaussian_nll_loss": lambda L, x: _fn(L).gaussian_nll_loss(x, x.flip(1), x.abs() + 1, reduction="none"),
    "cosine_embedding_loss": lambda L, x: _fn(L).cosine_embedding_loss(x, x.flip(1), L.ones(8, dtype=x.dtype),
                                                                     reduction="none"),
    # batch statistics over the 8 rows; x.t() is strided, so torch takes its element-wise path: variance in
    # double, output ((x - mean) * invstd) * weight + bias unfolded (exactly 0 where x is its mean)
    "batch_norm": lambda L, x: _fn(L).batch_norm(x.t(), None, None, training=True),
    "logcumsumexp": lambda L, x: L.logcumsumexp(x, 1),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ROW_FUNCTIONS))
def test_functions_along_a_dim_at_special_values_as_in_torch(name, dtype, mode):
    _compare(ROW_FUNCTIONS[name], [ROWS], dtype, mode)


# torch's var_mean and std_mean run Welford's update (mean += (x - mean) / k): an infinity is the mean only when
# it is alone and last, any other infinity makes inf - inf (NaN); var and std take the plain two-pass mean.
WELFORD_ROWS = np.array([[INF, 0., 1.], [0., 1., INF], [0., INF, 1.], [-INF, 0., 1.], [0., 1., -INF], [INF, INF, 0.],
                         [INF, 0., -INF], [NAN, 0., INF], [1e308, 1e308, 1.]])  # (the last overflows a plain sum)
WELFORD = {
    "var_mean_rows": lambda L, x: L.stack(L.var_mean(x, 1)),
    "std_mean_rows_keepdim_c0": lambda L, x: L.stack(L.std_mean(x, 1, keepdim=True, correction=0)),
    "var_mean_columns": lambda L, x: L.stack(L.var_mean(x, 0, correction=2)),
    "var_mean_all": lambda L, x: L.stack(L.var_mean(x[:3])),
    "std_mean_mean_3d": lambda L, x: L.std_mean(x.reshape(3, 3, 3), (0, 2))[1],
    "var_mean_of_rows_backwards": lambda L, x: L.var_mean(x.flip(1), 1)[1],
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(WELFORD))
def test_var_mean_follows_welford_at_infinities_as_in_torch(name, dtype, mode):
    _compare(WELFORD[name], [WELFORD_ROWS], dtype, mode)


def test_float32_statistics_accumulate_wide_as_in_torch():
    """Float32 values at 1e4 with spread 1e-2: a float32 running sum loses the spread, torch's var, std and
    batch_norm statistics do not (they accumulate in double), and batch_norm's folded multiply-add rounds as
    torch's. (Torch's channels-last kernel, which (N, C) input takes, sums in float32: left out.)"""
    values = (1e4 + np.linspace(-1e-2, 1e-2, 64)).astype(np.float32)
    for fn in (lambda L, x: x.var(), lambda L, x: x.std(0), lambda L, x: L.var_mean(x)[0],
               lambda L, x: L.std_mean(x, 0)[0],
               lambda L, x: L.nn.functional.batch_norm(x.reshape(2, 2, 16), None, None, training=True),
               lambda L, x: L.nn.functional.batch_norm(x.reshape(2, 2, 16), L.ones(2, dtype=x.dtype) * 3,
                                                       L.ones(2, dtype=x.dtype) * 0.5, training=True)):
        for mode in MODES:
            _compare(fn, [values.astype(np.float64)], "float32", mode)


def test_binary_cross_entropy_refuses_nan_input_as_torch():
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
            lib.nn.functional.binary_cross_entropy(lib.tensor([0.5, NAN]), lib.tensor([0.0, 1.0]))
