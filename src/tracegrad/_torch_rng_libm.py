"""The C library's float64 log, sin, cos... over whole arrays, bit for bit as ATen's CPU kernels call them one
element at a time (``std::log`` and friends: glibc's functions on Linux).

NumPy's own float64 loops may use SIMD kernels (SVML for log, log1p, exp, tan on AVX-512 machines, or NumPy's
AVX512F log and exp) that differ from the C library in the last bit. SVML's loops skip input and output whose
memory ranges overlap, the AVX512F ones a strided output; both then fall back to a plain loop over the C
library's function. So the ufunc is called with its output interleaved with its input (one buffer, stride 16
for both), which takes that loop at C speed. Whether it really does (this NumPy, this CPU) is checked once per
function, against Python's ``math`` (which calls the same C library) on inputs where the SIMD kernels differ,
whole and as arrays of one to three elements; a function that fails the check keeps the exact
element-by-element route through ``math``. (Measured on an AVX-512 machine with NumPy 2.4: 220 million inputs
in long arrays and 7 million in arrays of 1 to 39 elements, no difference.)
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

Route = Callable[[np.ndarray], np.ndarray]

_UFUNCS: dict[Callable[[float], float], np.ufunc] = {
    math.log: np.log, math.log1p: np.log1p, math.exp: np.exp,
    math.sin: np.sin, math.cos: np.cos, math.tan: np.tan,
}
_ONE_BY_ONE_BELOW = 32  # below this many elements ``math`` one by one is faster than a NumPy call's fixed cost
_PROBE_SIZE = 1 << 14  # per input family: SVML's log differs from glibc's on about 2% of inputs near 1


def libm(fn: Callable[[float], float], values: np.ndarray) -> np.ndarray:
    """``fn`` (a ``math`` function) of each element, as the C library computes it; same shape, float64."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < _ONE_BY_ONE_BELOW:
        return _one_by_one(fn, values)
    return _route(fn)(values)


def _one_by_one(fn: Callable[[float], float], values: np.ndarray) -> np.ndarray:
    """The exact fallback: ``math`` calls the C library on each element."""
    flat = values.ravel().tolist()
    try:
        return np.fromiter(map(fn, flat), dtype=np.float64, count=len(flat)).reshape(values.shape)
    except (ValueError, OverflowError):  # where C returns inf, -inf or NaN, math raises
        return np.array([_c_result(fn, x) for x in flat], dtype=np.float64).reshape(values.shape)


def _c_result(fn: Callable[[float], float], x: float) -> float:
    """``fn(x)`` as C returns it: where ``math`` raises (exp overflowing, log of 0...), the result is exactly an
    infinity or a NaN, which NumPy's ufunc gives too."""
    try:
        return fn(x)
    except (ValueError, OverflowError):
        with np.errstate(all="ignore"):
            return float(_UFUNCS[fn](x))


def _plain(ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return ufunc(values)


def _interleaved(ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
    """``ufunc`` writing between its inputs: overlapping, strided memory makes NumPy skip its SIMD kernels. At
    least two elements: NumPy gives a one-element array no stride, and then no overlap either."""
    count = values.size
    pairs = np.ones((max(count, 2), 2))  # (1.0 pads: in every function's domain)
    pairs[:count, 0] = values.ravel()
    with np.errstate(all="ignore"):
        ufunc(pairs[:, 0], out=pairs[:, 1])
    return pairs[:count, 1].copy().reshape(values.shape)


@functools.cache
def _route(fn: Callable[[float], float]) -> Route:
    """The fastest route that gives ``math``'s results on the probe inputs (plain NumPy first: its float64 sin
    and cos call the C library already), else element by element."""
    exact = functools.partial(_one_by_one, fn)
    ufunc = _UFUNCS.get(fn)
    if ufunc is None:
        return exact
    probe = _probe_inputs(fn)
    expected = exact(probe)
    plain = functools.partial(_plain, ufunc)
    telling = plain(probe).view(np.uint64) != expected.view(np.uint64)  # where NumPy's SIMD kernels differ
    short = [(probe[telling][:k], expected[telling][:k]) for k in (1, 2, 3)]  # (NumPy strides these its own way)
    for route in (plain, functools.partial(_interleaved, ufunc)):
        if all(_agrees(route, values, want) for values, want in [(probe, expected), *short]):
            return route
    return exact


def _agrees(route: Route, values: np.ndarray, expected: np.ndarray) -> bool:
    return route(values).tobytes() == expected.tobytes()


def _probe_inputs(fn: Callable[[float], float]) -> np.ndarray:
    """Inputs in ``fn``'s domain: the ones the samplers pass (k / 2**53 uniforms and their transforms), values
    just around 1 (where SVML's log and glibc's disagree most), and a wide spread of magnitudes."""
    rng = np.random.default_rng(20240613)
    u = rng.integers(0, 1 << 53, _PROBE_SIZE) * 2.0 ** -53
    wide = np.exp2(rng.uniform(-60, 60, _PROBE_SIZE)) * rng.uniform(1, 2, _PROBE_SIZE)
    near_zero = (u - 0.5) * 2.0 ** -3
    if fn is math.log:
        return np.concatenate([1 - u, 1 + near_zero, wide, u + 2.0 ** -60])
    if fn is math.log1p:
        return np.concatenate([-u, near_zero, near_zero * 2.0 ** -20, wide])
    if fn is math.exp:
        return np.concatenate([u * 1400 - 700, u - 0.5, np.log(wide)])
    return np.concatenate([2 * np.pi * u, np.pi * (u - 0.5), (u - 0.5) * 2e4, np.log(wide)])  # sin, cos, tan
