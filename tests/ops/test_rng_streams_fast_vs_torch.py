"""The vectorised samplers (float64 normals and the C library's functions over arrays, randperm without its swap
loop, Poisson in bulk for one rate) still draw torch's numbers bit for bit, and leave the generator where torch
leaves it: every case compares the values, the whole 5056-byte generator state, and the next draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import tracegrad as tg
from tracegrad import _torch_rng, _torch_rng_libm

SEEDS = [0, 3, 2**40 + 7]
SIZES = [0, 1, 15, 16, 17, 1000, 128 * 256 + 5]


def same(ours, theirs) -> None:
    """Equal dtype, shape and bits (a NaN matches a NaN)."""
    ours = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape)
    assert ours.tobytes() == theirs.tobytes()


def generators(seed: int, explicit: bool) -> tuple[dict, dict]:
    """(tracegrad's, torch's) keyword arguments: a fresh explicit Generator each, or the seeded default one."""
    if explicit:
        return {"generator": tg.Generator().manual_seed(seed)}, {"generator": torch.Generator().manual_seed(seed)}
    tg.manual_seed(seed)
    torch.manual_seed(seed)
    return {}, {}


def state(module, kwargs: dict):
    generator = kwargs.get("generator")
    return generator.get_state() if generator is not None else module.get_rng_state()


def same_draws(draw, seed: int = 0, explicit: bool = False) -> None:
    """``draw(module, kwargs)`` gives the same tensor in both, then the same generator state and next draws (a
    small double randn uses, and so checks, the cached second normal)."""
    ours, theirs = generators(seed, explicit)
    same(draw(tg, ours), draw(torch, theirs))
    same(state(tg, ours), state(torch, theirs))
    same(tg.randn(3, dtype=tg.float64, **ours), torch.randn(3, dtype=torch.float64, **theirs))
    same(tg.rand(2, **ours), torch.rand(2, **theirs))


# ---- the C library's functions over arrays ----------------------------------------------------------------------

@pytest.mark.parametrize("fn", [math.log, math.log1p, math.exp, math.sin, math.cos, math.tan])
def test_libm_over_arrays_is_the_c_library_element_by_element(fn):
    """200,000 inputs per function in the ranges the samplers use, plus the probe's own families."""
    rng = np.random.default_rng(11)
    u = rng.integers(0, 1 << 53, 100_000) * 2.0 ** -53
    inputs = {math.log: [1 - u, 1 + (u - 0.5) * 2.0 ** -4], math.log1p: [-u, (u - 0.5) * 2.0 ** -4],
              math.exp: [u * 1400 - 700, u - 0.5], math.sin: [2 * np.pi * u, (u - 0.5) * 2e4],
              math.cos: [2 * np.pi * u, (u - 0.5) * 2e4], math.tan: [np.pi * (u - 0.5), u * 10]}[fn]
    for values in inputs + [_torch_rng_libm._probe_inputs(fn)]:
        expected = np.array([fn(x) for x in values.tolist()])
        assert _torch_rng_libm.libm(fn, values).tobytes() == expected.tobytes()
        with np.errstate(all="ignore"):  # inputs where NumPy's own kernels differ, as short arrays (1 included)
            telling = np.flatnonzero(getattr(np, fn.__name__)(values) != expected)[:40]
        for count in range(1, len(telling) + 1):  # (the NumPy route itself: libm takes math below 32 elements)
            ours = _torch_rng_libm._route(fn)(values[telling[:count]])
            assert ours.tobytes() == expected[telling[:count]].tobytes()
    for shape in [(3, 4), (4, 16), (2, 3, 50)]:  # (the first below 32 elements, the others through NumPy)
        values = u[:int(np.prod(shape))].reshape(shape)
        assert _torch_rng_libm.libm(fn, values).tobytes() == np.array([fn(x) for x in values.ravel()]).tobytes()
        assert _torch_rng_libm.libm(fn, values).shape == shape
        assert _torch_rng_libm.libm(fn, values.T).tobytes() == np.array([fn(x) for x in values.T.ravel()]).tobytes()
    assert _torch_rng_libm.libm(fn, np.empty((0, 2))).shape == (0, 2)


def test_libm_falls_back_to_one_by_one_when_numpy_differs(monkeypatch):
    """A NumPy route that fails the probe is not taken: here every ufunc is made one ulp off."""
    def one_ulp_off(x, out=None):
        with np.errstate(divide="ignore"):
            return np.nextafter(np.log(x), 0)
    monkeypatch.setattr(_torch_rng_libm, "_UFUNCS", {math.log: one_ulp_off})
    _torch_rng_libm._route.cache_clear()
    try:
        route = _torch_rng_libm._route(math.log)
        assert route.func is _torch_rng_libm._one_by_one
        values = np.linspace(0.1, 3, 50)
        assert _torch_rng_libm.libm(math.log, values).tolist() == [math.log(x) for x in values.tolist()]
    finally:
        _torch_rng_libm._route.cache_clear()


def test_libm_one_by_one_gives_c_results_where_math_raises():
    exact = _torch_rng_libm._one_by_one
    assert exact(math.exp, np.array([800.0, 0.0, -800.0])).tolist() == [math.inf, 1.0, 0.0]
    assert exact(math.log, np.array([[0.0, 1.0]])).tolist() == [[-math.inf, 0.0]]
    assert exact(math.log1p, np.array([-1.0])).tolist() == [-math.inf]


# ---- float64 normals ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("explicit", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_double_normals_every_size(seed, explicit):
    for n in SIZES:
        same_draws(lambda m, kw, n=n: m.randn(n, dtype=m.float64, **kw), seed, explicit)
        same_draws(lambda m, kw, n=n: m.empty(n, dtype=m.float64).normal_(-1.25, 0.3, **kw), seed, explicit)
        same_draws(lambda m, kw, n=n: m.normal(2.0, 3.5, (n,), dtype=m.float64, **kw), seed, explicit)


def test_double_normals_scalar_path_and_its_cache():
    """Below 16 elements, or into a non-contiguous tensor, each pair of uniforms gives two normals and the second
    is cached for the next call: odd sizes in a row use it, and so does a float32 fill (which does not)."""
    def draw(m, kw):
        out = [m.randn(n, dtype=m.float64, **kw) for n in (1, 3, 5, 2, 15, 7)]
        out.append(m.empty(40, 6, dtype=m.float64).t().normal_(0.5, 2.0, **kw))  # non-contiguous, 240
        out.append(m.randn(5, 3, dtype=m.float64, **kw).t())
        out.append(m.empty(9).log_normal_(0.3, 0.8, **kw))
        out.append(m.randn(33, **kw))
        return m.cat([o.reshape(-1).double() for o in out])
    for seed in SEEDS:
        for explicit in (False, True):
            same_draws(draw, seed, explicit)


def test_double_normals_big_and_in_shapes():
    same_draws(lambda m, kw: m.randn(128, 256, dtype=m.float64, **kw), 5)
    same_draws(lambda m, kw: m.randn(3, 100_003, dtype=m.float64, **kw), 6)
    same_draws(lambda m, kw: m.nn.init.normal_(m.empty(300, 7, dtype=m.float64), 0.1, 2.0, **kw), 7)


# ---- the other samplers through the C library ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exponential_cauchy_geometric_log_normal(dtype):
    def draw(m, kw):
        d = getattr(m, dtype)
        return m.cat([m.empty(5000, dtype=d).exponential_(1.7, **kw), m.empty(7, dtype=d).exponential_(**kw),
                      m.empty(5000, dtype=d).cauchy_(0.5, 2.0, **kw), m.empty(3000, dtype=d).geometric_(0.3, **kw),
                      m.empty(3001, dtype=d).log_normal_(0.2, 0.5, **kw)])
    for seed in SEEDS:
        same_draws(draw, seed, explicit=seed == 3)


def test_log_normal_that_overflows_is_infinite_like_torch():
    """exp of a huge normal: torch writes inf (the scalar route through ``math.exp`` would raise instead)."""
    same_draws(lambda m, kw: m.empty(40, dtype=m.float64).log_normal_(700.0, 30.0, **kw), 1)


# ---- randperm ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("explicit", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_randperm_every_size(seed, explicit):
    for n in [0, 1, 2, 3, 15, 16, 17, 127, 128, 129, 1000, 4099, 100_003]:
        same_draws(lambda m, kw, n=n: m.randperm(n, **kw), seed, explicit)
    for dtype in ["int32", "float32", "int16"]:
        same_draws(lambda m, kw, d=dtype: m.randperm(3000, dtype=getattr(m, d), **kw), seed, explicit)


def test_randperm_swaps_at_once_are_the_swap_loop():
    """The vectorised swaps against the sequential loop on many random pick sequences, sizes 2 to 2000, and on
    the extreme ones (no swap at all, every swap with the last slot)."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(2, 2000))
        picks = rng.integers(0, 2**32, n - 1) % np.arange(n, 1, -1) + np.arange(n - 1)
        looped = list(range(n))
        for i, z in enumerate(picks.tolist()):
            looped[i], looped[z] = looped[z], looped[i]
        assert _torch_rng._swaps_at_once(n, picks).tolist() == looped
    n = 1000
    assert _torch_rng._swaps_at_once(n, np.arange(n - 1)).tolist() == list(range(n))
    to_last = _torch_rng._swaps_at_once(n, np.full(n - 1, n - 1))
    assert to_last.tolist() == [n - 1] + list(range(n - 2)) + [n - 2]


# ---- Poisson -----------------------------------------------------------------------------------------------------

RATES = [1e-20, 1e-3, 0.3, 1.0, 4.5, 9.99, 10.0, 12.5, 100.0, 1e4, 1e12, 1e20]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", SEEDS)
def test_poisson_one_rate_in_bulk(seed, dtype):
    for rate in RATES:
        for n in [1, 2, 15, 16, 17, 1000]:
            same_draws(lambda m, kw, n=n, r=rate: m.poisson(m.full((n,), r, dtype=getattr(m, dtype)), **kw), seed,
                       explicit=n == 17)
    same_draws(lambda m, kw: m.poisson(m.full((300, 250), 7.0, dtype=getattr(m, dtype)), **kw), seed)
    same_draws(lambda m, kw: m.poisson(m.full((70_000,), 9.5, dtype=getattr(m, dtype)), **kw), seed)  # 2 pieces


def test_poisson_bulk_and_elementwise_mixed_with_the_normal_cache():
    def draw(m, kw):
        out = [m.randn(3, dtype=m.float64, **kw), m.poisson(m.full((500,), 3.0), **kw),
               m.poisson(m.full((501,), 30.0, dtype=m.float64), **kw), m.poisson(m.full((9,), 0.0), **kw),
               m.poisson(m.linspace(0.5, 20, 100), **kw), m.poisson(m.full((40, 3), 2.0).t(), **kw),
               m.distributions.Poisson(m.tensor(6.0)).sample((800,))]
        return m.cat([o.reshape(-1).double() for o in out])
    for seed in SEEDS:
        same_draws(draw, seed)


def test_poisson_bulk_past_a_short_read_ahead(monkeypatch):
    """Two uniforms read ahead at a time: the bulk samplers still take what they need and end where torch does."""
    monkeypatch.setattr(_torch_rng._UniformTape, "_read", lambda tape: tape.stream.unit(2, np.float64))
    for rate in [0.7, 6.0, 15.0]:
        same_draws(lambda m, kw, r=rate: m.poisson(m.full((150,), r), **kw), 4)


def test_poisson_elements_longer_than_the_bulk_looks(monkeypatch):
    """A tiny longest length: most elements go the scalar way from the bulk loop, and the draws do not change."""
    shorter = _torch_rng._product_lengths
    monkeypatch.setattr(_torch_rng, "_product_lengths", lambda uniforms, threshold, longest: shorter(uniforms, threshold, 3))
    same_draws(lambda m, kw: m.poisson(m.full((400,), 8.0, dtype=m.float64), **kw), 2)


# ---- integers and multinomial --------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_integers_by_remainder(seed):
    """random() or random64() modulo the span, by a libdivide division: spans around 2**28 (the switch to 64-bit
    words), 2**32, 2**63 and the full int64 range, and the dtypes' default ranges."""
    spans = [(0, 10), (-7, 3), (0, 2**28 - 1), (0, 2**28), (5, 2**32 + 5), (0, 2**63 - 1), (-2**63, 2**63 - 1)]
    for low, high in spans:
        same_draws(lambda m, kw, lo=low, hi=high: m.randint(lo, hi, (4099,), **kw), seed, explicit=low == 5)
    for dtype in ["int64", "int32", "int16", "uint8", "bool", "float32", "float64", "float16"]:
        same_draws(lambda m, kw, d=dtype: m.empty(3000, dtype=getattr(m, d)).random_(**kw), seed)
    same_draws(lambda m, kw: m.empty(3000, dtype=m.int64).random_(-2**63, None, **kw), seed)


def test_multinomial_with_replacement_values_and_errors():
    same_draws(lambda m, kw: m.multinomial(m.arange(1.0, 101.0), 1000, replacement=True, **kw), 2)
    same_draws(lambda m, kw: m.multinomial(m.rand(4, 30, generator=kw.get("generator")), 77, replacement=True, **kw),
               3, explicit=True)
    for row in [[0.1, -1.0, math.inf], [0.1, math.inf, -1.0], [math.nan, 1.0], [2.0, 0.0, math.nan], [0.0, 0.0]]:
        messages = []
        for m in (tg, torch):
            with pytest.raises(RuntimeError) as caught:
                m.multinomial(m.tensor([[1.0, 1.0, 1.0][:len(row)], row]), 5, replacement=True)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]


# ---- long runs: many pieces of the tape, and the occasional element the scalar way ------------------------------

def test_poisson_one_rate_over_many_pieces():
    """200,000 elements at rate 9 read about 30 pieces of the tape, with a few dozen elements longer than the
    bulk looks (they go the long way) and pieces ending mid-element."""
    same_draws(lambda m, kw: m.poisson(m.full((200_000,), 9.0, dtype=m.float64), **kw), 12)


def test_gamma_one_alpha_with_many_irregular_tries():
    """alpha = 1: about one try in 150 has y <= 0 and goes the scalar way (each used to list the whole tape)."""
    same_draws(lambda m, kw: m._standard_gamma(m.full((30_000,), 1.0, dtype=m.float64), **kw), 13)
    same_draws(lambda m, kw: m._standard_gamma(m.full((5_000,), 1.0), **kw), 14, explicit=True)
