"""The clamp family keeps a zero's own sign where it meets a zero bound, bit for bit as torch: ``relu(-0.0)`` is
-0.0, ``clamp(0.0, max=-0.0)`` is 0.0, and a zero that is clamped takes the bound. NaN in the input or in a bound
gives NaN. Each case runs on short arrays (scalar tails) and long ones (vector bodies), contiguous and strided,
in float32, float64 and float16 (quiet NaNs only: torch's half kernels quiet a signalling NaN in their vector
body but not in their tail).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from _lib import assert_same_bits, run_both, tg, torch

from tracegrad.ops import clip_values as clip_module

VALUES = [-0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 6.0, 7.0, -7.0, math.inf, -math.inf, math.nan, -math.nan, 1e-40]
DTYPES = ["float32", "float64", "float16"]
LENGTHS = [1, 5, 14, 203]
LAYOUTS = {
    "contiguous": lambda t: t,
    "every other": lambda t: t[::2],
    "transposed": lambda t: t.reshape(-1, 2).t() if t.numel() % 2 == 0 else t.flip(0),
}

CASES = {
    "relu": lambda L, x: L.relu(x),
    "F.relu": lambda L, x: L.nn.functional.relu(x),
    "nn.ReLU": lambda L, x: L.nn.ReLU()(x),
    "relu_": lambda L, x: L.relu_(x.clone()),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "hardtanh zero bounds": lambda L, x: L.nn.functional.hardtanh(x, -0.0, 0.0),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "hardtanh_": lambda L, x: L.nn.functional.hardtanh_(x.clone(), 0.0, 6.0),
    "clamp min 0": lambda L, x: L.clamp(x, min=0.0),
    "clamp min -0": lambda L, x: L.clamp(x, min=-0.0),
    "clamp max 0": lambda L, x: L.clamp(x, max=0.0),
    "clamp max -0": lambda L, x: L.clamp(x, max=-0.0),
    "clamp -0 0": lambda L, x: L.clamp(x, -0.0, 0.0),
    "clamp 0 1": lambda L, x: L.clamp(x, 0.0, 1.0),
    "clamp inverted": lambda L, x: L.clamp(x, 1.0, -0.0),
    "clamp NaN min": lambda L, x: L.clamp(x, math.nan, 1.0),
    "clamp NaN max": lambda L, x: L.clamp(x, 0.0, math.nan),
    "clamp_": lambda L, x: x.clone().clamp_(min=0.0),
    "clip": lambda L, x: L.clip(x, -0.0, 1.0),
    "clamp_min": lambda L, x: L.clamp_min(x, 0.0),
    "clamp_max": lambda L, x: L.clamp_max(x, -0.0),
    "clamp_min_": lambda L, x: x.clone().clamp_min_(-0.0),
    "clamp zeros tensor": lambda L, x: L.clamp(x, min=L.zeros_like(x)),
    "clamp negative zeros tensor": lambda L, x: L.clamp(x, max=L.full_like(x, -0.0)),
    "clamp tensor bounds": lambda L, x: L.clamp(x, L.full_like(x, -0.0), L.ones_like(x)),
    "clamp broadcast bounds": lambda L, x: L.clamp(x.reshape(-1, 1), L.zeros(3, dtype=x.dtype)),
    "clamp inverted tensors": lambda L, x: L.clamp(x, L.ones_like(x), L.full_like(x, -0.0)),
    "clamp_min tensor": lambda L, x: L.clamp_min(x, L.zeros_like(x)),
    "clamp_max tensor": lambda L, x: L.clamp_max(x, L.full_like(x, -0.0)),
}


def _input(lib, dtype: str, length: int, layout: str):
    values = np.resize(np.array(VALUES, np.float64), 2 * length)[: 2 * length]  # (room for every other)
    x = lib.tensor(values.tolist(), dtype=getattr(lib, dtype))
    return LAYOUTS[layout](x[: 2 * length] if layout != "contiguous" else x[:length])


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(CASES))
def test_signed_zeros_and_nan_match_torch(case, dtype, length, layout):
    ours, theirs = run_both(lambda L: CASES[case](L, _input(L, dtype, length, layout)))
    assert_same_bits(ours, theirs)


def test_zero_dim_input_keeps_its_sign():
    ours, theirs = run_both(lambda L: [L.relu(L.tensor(-0.0)), L.clamp(L.tensor(-0.0), min=0.0),
                                       L.clamp(L.tensor(0.0), max=-0.0), L.clamp(L.tensor(0.0), 1.0, -0.0)])
    for a, b in zip(ours, theirs):
        assert_same_bits(a, b)


def test_integer_and_bool_inputs_clamp_as_torch():
    ours, theirs = run_both(lambda L: [L.relu(L.tensor([-3, 0, 5])), L.clamp(L.tensor([-3, 0, 5]), -1, 2),
                                       L.clamp(L.tensor([0, 200, 255], dtype=L.uint8), max=100),
                                       L.clamp_min(L.tensor([-3, 0, 5], dtype=L.int32), 1)])
    for a, b in zip(ours, theirs):
        assert_same_bits(a, b)


@pytest.mark.parametrize(("dtype", "bound"), [("uint8", 300), ("uint8", -1), ("uint8", 255), ("uint8", -129),
                                             ("int8", 300), ("int8", -129), ("int8", -1), ("int64", 2**40)])
@pytest.mark.parametrize("side", ["min", "max"])
def test_integer_bounds_convert_as_torch(dtype, bound, side):
    """An int bound converts to an integer tensor's dtype as Scalar::to does: wrapped where it fits the wider
    signed range, refused with torch's words where it overflows."""
    def outcome(L):
        x = L.tensor([1, 2, 200 if dtype == "uint8" else 100], dtype=getattr(L, dtype))
        try:
            return L.clamp(x, **{side: bound}).tolist()
        except RuntimeError as error:
            return str(error)

    assert outcome(tg) == outcome(torch)


def test_gradients_at_zero_bounds_match_torch():
    def program(L):
        x = L.tensor([-0.0, 0.0, -1.0, 2.0, math.nan], requires_grad=True)
        y = L.relu(x) + L.clamp(x, -0.0, 1.0) + L.nn.functional.hardtanh(x, 0.0, 6.0)
        (g,) = L.autograd.grad(y.sum(), x)
        return [y, g]

    ours, theirs = run_both(program)
    for a, b in zip(ours, theirs):
        assert_same_bits(a, b)


def _clip_giving_the_bound(x, lo, hi):
    """A clip that breaks ties toward the bound (NaN from x or a bound)."""
    result = np.where((x > lo) | np.isnan(x), x, lo)
    return np.where((result < hi) | np.isnan(result), result, hi)


def _clip_keeping_x(x, lo, hi):
    """A clip that breaks ties toward x (NaN from x or a bound)."""
    result = np.where(x < lo, lo, x)
    result = np.where(result > hi, hi, result)
    result = np.where(np.isnan(lo), lo, result)
    return np.where(np.isnan(hi), hi, result)


@pytest.mark.parametrize("clip", [_clip_giving_the_bound, _clip_keeping_x])
def test_same_bits_whichever_way_numpy_breaks_ties(monkeypatch, clip):
    """The probe finds out how NumPy's clip breaks ties, and the zeros are put back where it gives the bound."""
    monkeypatch.setattr(clip_module, "_clip_ufunc", clip)
    probe = functools.cache(clip_module._clip_ties_as_scalar_kernel.__wrapped__)
    monkeypatch.setattr(clip_module, "_clip_ties_as_scalar_kernel", probe)
    for case in CASES:
        for dtype, length, layout in (("float32", 203, "contiguous"), ("float64", 14, "every other"),
                                      ("float32", 14, "transposed")):
            program = CASES[case]
            ours, theirs = run_both(lambda L, f=program, where=(dtype, length, layout): f(L, _input(L, *where)))
            assert_same_bits(ours, theirs)
    assert probe(np.dtype(np.float32)) is (clip is _clip_keeping_x)


GRADIENT_CASES = {
    "relu": lambda L, x: L.relu(x),
    "relu_ of a clone": lambda L, x: L.relu_(x.clone()),
    "threshold": lambda L, x: L.nn.functional.threshold(x, 0.5, -1.0),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "clamp": lambda L, x: L.clamp(x, -0.5, 0.5),
}


@pytest.mark.parametrize("seed_layout", ["dense", "dense with inf and NaN", "transposed", "expanded"])
@pytest.mark.parametrize("shape", [(3, 5), (96, 64)], ids=["small", "large"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(GRADIENT_CASES))
def test_dropped_gradients_are_positive_zeros_as_torch(case, dtype, shape, seed_layout):
    """Where the backward drops a negative gradient it writes +0.0 (a multiply by the mask would give -0.0);
    inf and NaN gradients pass where kept."""
    rng = np.random.default_rng(0)
    x_values = rng.standard_normal(shape)
    g_values = rng.standard_normal(shape)
    if seed_layout != "dense":
        g_values.flat[::7] = math.inf
        g_values.flat[3::11] = math.nan

    def program(L):
        x = L.tensor(x_values, dtype=getattr(L, dtype), requires_grad=True)
        g = L.tensor(g_values, dtype=getattr(L, dtype))
        if seed_layout == "transposed":
            g = g.t().contiguous().t()
        elif seed_layout == "expanded":
            g = L.tensor(-2.0, dtype=g.dtype).expand(shape)
        GRADIENT_CASES[case](L, x).backward(g)
        return x.grad

    ours, theirs = run_both(program)
    assert_same_bits(ours, theirs)


@pytest.mark.parametrize("shape", [(7,), (300,), (64, 33)], ids=str)
@pytest.mark.parametrize("case", ["clamp zeros tensor", "clamp_min tensor", "clamp tensor bounds",
                                  "clamp broadcast bounds", "clamp inverted tensors", "clamp_max tensor"])
def test_tensor_bounds_without_negative_zeros_as_torch(case, shape):
    """Without a -0.0 anywhere, every zero is +0.0 and the Tensor overloads need no tie-breaking: their fast path."""
    values = np.random.default_rng(0).standard_normal(shape).reshape(-1)
    values[::5] = 0.0
    ours, theirs = run_both(lambda L: CASES[case](L, L.tensor(values.tolist(), dtype=L.float32)))
    assert_same_bits(ours, theirs)
