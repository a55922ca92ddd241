"""tracegrad's CPU generator reproduces torch's streams: same seed, same numbers, bit for bit.

Float32 normals (16 or more, contiguous) come from torch's AVX2 kernel (avx_mathfun's log and sincos, with the
fma contractions GCC makes); these tests run against the installed torch, so they also check that this machine's
torch takes that kernel. ``nn.init.orthogonal_`` goes through a QR factorisation and is compared to a few ulps.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg

SEEDS = [0, 1, 42, 2**40 + 3]
SIZES = [1, 7, 15, 16, 17, 33, 1000]
FLOATS = ["float32", "float64", "float16"]


def same(ours, theirs) -> None:
    """Equal bits and dtype (a NaN matches a NaN)."""
    ours = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    assert ours.dtype == theirs.dtype
    assert ours.shape == theirs.shape
    assert ours.tobytes() == theirs.tobytes(), np.abs(ours.astype(np.float64) - theirs.astype(np.float64)).max()


def both(seed: int, generator: bool):
    """Seeded (default or fresh) generators for torch and tracegrad, as keyword arguments."""
    if generator:
        return {"generator": torch.Generator().manual_seed(seed)}, {"generator": tg.Generator().manual_seed(seed)}
    torch.manual_seed(seed)
    tg.manual_seed(seed)
    return {}, {}


@pytest.mark.parametrize("generator", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_rand_randn_and_in_place_fills(seed, dtype, generator):
    theirs, ours = both(seed, generator)
    for n in SIZES:
        same(tg.rand(n, dtype=getattr(tg, dtype), **ours), torch.rand(n, dtype=getattr(torch, dtype), **theirs))
        same(tg.randn(n, dtype=getattr(tg, dtype), **ours), torch.randn(n, dtype=getattr(torch, dtype), **theirs))
        same(tg.empty(n, dtype=getattr(tg, dtype)).uniform_(-3.7, 5.1, **ours),
             torch.empty(n, dtype=getattr(torch, dtype)).uniform_(-3.7, 5.1, **theirs))
        same(tg.empty(n, dtype=getattr(tg, dtype)).normal_(1.5, 0.3, **ours),
             torch.empty(n, dtype=getattr(torch, dtype)).normal_(1.5, 0.3, **theirs))


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_fill_and_uniform_sizes_and_parameters(dtype):
    """Sizes around the 16-wide blocks (the tail's redraw), larger ones, and mean/std/bounds that take the fma
    paths (std 1 and mean 0 too: -0.0 + 0.0 is +0.0)."""
    torch.manual_seed(12)
    tg.manual_seed(12)
    ours, theirs = getattr(tg, dtype), getattr(torch, dtype)
    for n in [0, 15, 16, 17, 31, 32, 255, 256, 257, 4099]:
        for mean, std in [(0.0, 1.0), (0.0, 0.37), (-2.5, 3.0)]:
            same(tg.empty(n, dtype=ours).normal_(mean, std), torch.empty(n, dtype=theirs).normal_(mean, std))
        same(tg.randn(n, dtype=ours), torch.randn(n, dtype=theirs))
        for low, high in [(0.0, 5.0), (-1.3, 2.9), (-1e-3, 1e-3)]:
            same(tg.empty(n, dtype=ours).uniform_(low, high), torch.empty(n, dtype=theirs).uniform_(low, high))
    same(tg.nn.init.kaiming_uniform_(tg.empty(256, 784, dtype=ours)),
         torch.nn.init.kaiming_uniform_(torch.empty(256, 784, dtype=theirs)))


def test_a_zero_uniform_gives_positive_zero_normals():
    """Seed 1918's word 50706 has 24 low zero bits: u1 = 1, log(u1) = 0 and radius = sqrt(-0.0) = -0.0, so the
    block's two normals are -0.0 * cos and -0.0 * sin; torch's fma adds the mean, 0.0, which makes them +0.0."""
    n, at = 50720, 50706
    for draw in [lambda m: m.randn(n), lambda m: m.empty(n).normal_(0.0, 2.0)]:
        torch.manual_seed(1918)
        tg.manual_seed(1918)
        ours, theirs = draw(tg), draw(torch)
        same(ours, theirs)
        assert ours[at].item() == 0 and not np.signbit(ours.numpy()[[at, at + 8]]).any()


def test_float_fma_rounds_once_like_the_c_library():
    """The float fma behind uniform_(a, b) and normal_(mean, std) (and the kernel's own): the float64 sum of an exact
    product and the addend can round onto a float midpoint, which would then round the wrong way."""
    import ctypes

    from tracegrad._torch_rng import _fma32

    libm = ctypes.CDLL("libm.so.6")
    libm.fmaf.restype, libm.fmaf.argtypes = ctypes.c_float, [ctypes.c_float] * 3
    rng = np.random.default_rng(3)
    k = rng.integers(1, 2**10, 3000)
    a = ((1 + k * 2.0**-23) * rng.choice([-1, 1], k.size)).astype(np.float32)  # a * b = +-(1 - k**2 2**-46)
    b = (1 - k * 2.0**-23).astype(np.float32)
    c = (2.0**24 + 2 * rng.integers(0, 2**20, k.size)).astype(np.float32)  # sums near the midpoints c +- 1
    a, b, c = (np.concatenate([v, rng.standard_normal(3000).astype(np.float32)]) for v in (a, b, c))
    expected = np.array([libm.fmaf(*map(float, abc)) for abc in zip(a, b, c)], dtype=np.float32)
    assert _fma32(a, b, c).tobytes() == expected.tobytes()


def test_half_draws_from_double_samplers_round_through_float():
    """exponential_, cauchy_, log_normal_ and the scalar (here: non-contiguous) normal_ draw doubles; C++'s
    static_cast<Half>(double) rounds to float first, which differs from one rounding about once in 20000."""
    for draw in [lambda m: m.empty(200_000, dtype=m.float16).exponential_(1.5),
                 lambda m: m.empty(200_000, dtype=m.float16).cauchy_(0.0, 1.0),
                 lambda m: m.empty(200_000, dtype=m.float16).log_normal_(0.0, 0.5),
                 lambda m: m.empty(400, 500, dtype=m.float16).t().normal_(0.0, 0.37)]:
        torch.manual_seed(2)
        tg.manual_seed(2)
        same(draw(tg), draw(torch))


def test_like_factories_and_shapes():
    torch.manual_seed(7)
    tg.manual_seed(7)
    same(tg.rand_like(tg.zeros(3, 5)), torch.rand_like(torch.zeros(3, 5)))
    same(tg.randn_like(tg.zeros(4, 9, dtype=tg.float64)), torch.randn_like(torch.zeros(4, 9, dtype=torch.float64)))
    same(tg.randint_like(tg.zeros(2, 3), 10), torch.randint_like(torch.zeros(2, 3), 10))
    same(tg.randn(2, 3, 4), torch.randn(2, 3, 4))


def test_draws_split_like_torch():
    """rand(5) then rand(5) is rand(10), and a mix of ops leaves both streams at the same place."""
    torch.manual_seed(3)
    whole = torch.rand(10)
    tg.manual_seed(3)
    same(tg.cat([tg.rand(5), tg.rand(5)]), whole)
    torch.manual_seed(11)
    tg.manual_seed(11)
    for op in [lambda m: m.randn(3), lambda m: m.rand(17, dtype=m.float64), lambda m: m.randint(0, 9, (5,)),
               lambda m: m.randn(20), lambda m: m.randn(1), lambda m: m.randperm(12), lambda m: m.randn(5)]:
        same(op(tg), op(torch))


def test_non_contiguous_normal_fills_in_memory_order():
    torch.manual_seed(5)
    tg.manual_seed(5)
    same(tg.empty(6, 8).t().normal_(), torch.empty(6, 8).t().normal_())
    same(tg.empty(6, 8).t().uniform_(), torch.empty(6, 8).t().uniform_())


@pytest.mark.parametrize("seed", SEEDS)
def test_state_bytes_seeds_and_round_trips(seed):
    torch.manual_seed(seed)
    tg.manual_seed(seed)
    assert tg.initial_seed() == torch.initial_seed()
    same(tg.get_rng_state(), torch.get_rng_state())
    tg.randn(3)
    torch.randn(3)  # leaves a cached normal in the state
    same(tg.get_rng_state(), torch.get_rng_state())
    state = torch.get_rng_state()
    tg.set_rng_state(tg.tensor(state.numpy()))  # torch's own state loads into tracegrad
    same(tg.randn(5), torch.randn(5))
    saved = tg.get_rng_state()
    first = tg.rand(4)
    tg.set_rng_state(saved)
    same(tg.rand(4), first)
    generator = tg.Generator().manual_seed(seed)
    assert generator.initial_seed() == torch.Generator().manual_seed(seed).initial_seed()
    same(generator.get_state(), torch.Generator().manual_seed(seed).get_state())


def test_fresh_generator_and_fork_rng():
    same(tg.Generator().get_state(), torch.Generator().get_state())
    tg.manual_seed(9)
    with tg.random.fork_rng():
        tg.rand(3)
    torch.manual_seed(9)
    same(tg.rand(2), torch.rand(2))


@pytest.mark.parametrize("generator", [False, True])
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_integers(seed, generator):
    theirs, ours = both(seed, generator)
    for low, high in [(0, 10), (-5, 3), (0, 2**28), (0, 2**40), (-2**62, 2**62)]:
        same(tg.randint(low, high, (33,), **ours), torch.randint(low, high, (33,), **theirs))
    for dtype in ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64", "float16"]:
        same(tg.empty(17, dtype=getattr(tg, dtype)).random_(**ours),
             torch.empty(17, dtype=getattr(torch, dtype)).random_(**theirs))
    for dtype in ["int64", "int32", "uint8", "float32"]:
        same(tg.empty(9, dtype=getattr(tg, dtype)).random_(100, **ours),
             torch.empty(9, dtype=getattr(torch, dtype)).random_(100, **theirs))
        same(tg.empty(9, dtype=getattr(tg, dtype)).random_(3, 50, **ours),
             torch.empty(9, dtype=getattr(torch, dtype)).random_(3, 50, **theirs))
        same(tg.empty(9, dtype=getattr(tg, dtype)).random_(3, None, **ours),
             torch.empty(9, dtype=getattr(torch, dtype)).random_(3, None, **theirs))
    same(tg.empty(9, dtype=tg.int64).random_(-2**63, None, **ours),
         torch.empty(9, dtype=torch.int64).random_(-2**63, None, **theirs))


@pytest.mark.parametrize("n", [0, 1, 2, 7, 16, 100, 100_000])
def test_randperm(n):
    torch.manual_seed(n)
    tg.manual_seed(n)
    same(tg.randperm(n), torch.randperm(n))
    same(tg.randperm(n, generator=tg.Generator().manual_seed(1)),
         torch.randperm(n, generator=torch.Generator().manual_seed(1)))


def test_normal_overloads():
    torch.manual_seed(2)
    tg.manual_seed(2)
    mean, std = np.linspace(-1, 1, 20, dtype=np.float32), np.linspace(0.1, 2, 20, dtype=np.float32)
    same(tg.normal(tg.tensor(mean), 0.5), torch.normal(torch.tensor(mean), 0.5))
    same(tg.normal(0.5, tg.tensor(std)), torch.normal(0.5, torch.tensor(std)))
    same(tg.normal(tg.tensor(mean), tg.tensor(std)), torch.normal(torch.tensor(mean), torch.tensor(std)))
    same(tg.normal(2.0, 3.0, (5, 7)), torch.normal(2.0, 3.0, (5, 7)))
    same(tg.normal(tg.tensor(mean[:5]), 0.5), torch.normal(torch.tensor(mean[:5]), 0.5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_other_distributions(dtype):
    torch.manual_seed(4)
    tg.manual_seed(4)
    for n in [7, 40]:
        for method, args in [("exponential_", (2.5,)), ("geometric_", (0.3,)), ("cauchy_", (1.0, 2.0)),
                             ("log_normal_", (1.0, 0.5)), ("bernoulli_", (0.3,))]:
            same(getattr(tg.empty(n, dtype=getattr(tg, dtype)), method)(*args),
                 getattr(torch.empty(n, dtype=getattr(torch, dtype)), method)(*args))
    p = np.linspace(0, 1, 30)
    same(tg.bernoulli(tg.tensor(p, dtype=getattr(tg, dtype))), torch.bernoulli(torch.tensor(p, dtype=getattr(torch, dtype))))
    weights = np.random.default_rng(0).random((3, 8))
    for samples, replacement in [(1, False), (4, False), (1, True), (6, True)]:
        same(tg.multinomial(tg.tensor(weights, dtype=getattr(tg, dtype)), samples, replacement),
             torch.multinomial(torch.tensor(weights, dtype=getattr(torch, dtype)), samples, replacement))


def test_dropout_and_rrelu():
    torch.manual_seed(6)
    tg.manual_seed(6)
    same(tg.nn.functional.dropout(tg.ones(50), 0.3), torch.nn.functional.dropout(torch.ones(50), 0.3))
    x = np.random.default_rng(1).standard_normal(60).astype(np.float32)
    same(tg.nn.functional.rrelu(tg.tensor(x), training=True), torch.nn.functional.rrelu(torch.tensor(x), training=True))


@pytest.mark.parametrize("name", ["uniform_", "normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
                                  "kaiming_normal_", "trunc_normal_"])
def test_nn_init(name):
    torch.manual_seed(1)
    tg.manual_seed(1)
    same(getattr(tg.nn.init, name)(tg.empty(20, 30)), getattr(torch.nn.init, name)(torch.empty(20, 30)))
    same(tg.nn.init.trunc_normal_(tg.empty(40), a=0.5, b=0.7), torch.nn.init.trunc_normal_(torch.empty(40), a=0.5, b=0.7))
    same(tg.nn.init.sparse_(tg.empty(10, 6), 0.3), torch.nn.init.sparse_(torch.empty(10, 6), 0.3))
    ours, theirs = tg.nn.init.orthogonal_(tg.empty(6, 9)), torch.nn.init.orthogonal_(torch.empty(6, 9))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-6)  # (QR: LAPACKs differ in the last bits)


def test_linear_weights_and_a_training_run():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 8), lib.nn.ReLU(), lib.nn.Dropout(0.2), lib.nn.Linear(8, 1))
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
        x, y = lib.randn(32, 3), lib.rand(32, 1)
        losses = []
        for _ in range(5):
            optimizer.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return model[0].weight.detach().numpy(), losses

    torch.manual_seed(0)
    tg.manual_seed(0)
    same(tg.nn.Linear(3, 2).weight, torch.nn.Linear(3, 2).weight)
    (w_ours, ours), (w_theirs, theirs) = run(tg), run(torch)
    np.testing.assert_allclose(w_ours, w_theirs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_data_loader_shuffles_like_torch():
    data = list(range(10))
    torch.manual_seed(0)
    tg.manual_seed(0)
    ours = [b.tolist() for b in tg.utils.data.DataLoader(data, batch_size=4, shuffle=True)]
    assert ours == [b.tolist() for b in torch.utils.data.DataLoader(data, batch_size=4, shuffle=True)]
    same(tg.rand(2), torch.rand(2))
    assert list(tg.utils.data.RandomSampler(data, num_samples=25)) == list(torch.utils.data.RandomSampler(data, num_samples=25))


def test_samplers_and_random_split_like_torch():
    weights = [0.1, 0.5, 2.0, 1.0, 0.3]
    for replacement in [True, False]:
        torch.manual_seed(0)
        tg.manual_seed(0)
        assert (list(tg.utils.data.WeightedRandomSampler(weights, 3, replacement=replacement))
                == list(torch.utils.data.WeightedRandomSampler(weights, 3, replacement=replacement)))
    assert (list(tg.utils.data.DistributedSampler(list(range(10)), num_replicas=2, rank=1))
            == list(torch.utils.data.DistributedSampler(list(range(10)), num_replicas=2, rank=1)))
    torch.manual_seed(0)
    tg.manual_seed(0)
    ours = [s.indices for s in tg.utils.data.random_split(range(10), [0.3, 0.7])]
    assert ours == [s.indices for s in torch.utils.data.random_split(range(10), [0.3, 0.7])]


# ---- rejection samplers: _standard_gamma, poisson, binomial, _sample_dirichlet and the distributions on them ---

_PARAMS = np.random.default_rng(0)
ALPHAS = np.concatenate([[0.0, 1e-30, 1e-3, 0.1, 0.5, 0.999, 1.0, 1.5, 2.0, 3.3, 10.0, 1e4, 1e9, -0.5, -0.7, np.nan,
                          np.inf], _PARAMS.exponential(2.0, 300), _PARAMS.uniform(0.0, 1.0, 100)])
RATES = np.concatenate([[0.0, 1e-300, 1e-3, 0.5, 1.0, 9.999, 10.0, 10.5, 50.0, 1e4, 1e7, 1e30, np.inf],
                        _PARAMS.exponential(10.0, 300), _PARAMS.uniform(0.0, 20.0, 100)])
COUNTS = np.concatenate([[0, 1, 5, 10, 20, 100, 1e3, 1e6, 7, 3, -3, 5.5, np.inf, np.inf, 5, 1e30],
                         _PARAMS.integers(0, 200, 400)])
PROBS = np.concatenate([[0.5, 0.3, 0, 1, 0.5, 0.1, 0.9, 0.3, 0.01, 0.99, 0.3, 0.3, 0.3, 1e-3, np.nan, 0.7],
                        _PARAMS.uniform(0.0, 1.0, 400)])
DIRICHLET = _PARAMS.exponential(1.0, (20, 37))  # rows of 37: torch's vectorised sum order matters


def _then_rand(module, value):
    """A sample, then three double uniforms: equal only if both streams stopped at the same draw."""
    return module.cat([value.double().flatten(), module.rand(3, dtype=module.float64)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", SEEDS)
def test_gamma_poisson_binomial_bit_for_bit(seed, dtype):
    """Every branch: the alpha < 1 boost, PTRS (rate >= 10), BTRS (mean >= 10) and inversion, p > 0.5, edge values."""
    cases = [lambda m, d: m._standard_gamma(m.tensor(ALPHAS, dtype=d)),
             lambda m, d: m.poisson(m.tensor(RATES, dtype=d)),
             lambda m, d: m.binomial(m.tensor(COUNTS, dtype=d), m.tensor(PROBS, dtype=d)),
             lambda m, d: m.binomial(m.full((2, 300), 10.0, dtype=d), m.tensor(0.3, dtype=d).expand(2, 300)),
             lambda m, d: m._standard_gamma(m.full((3000,), 1.0, dtype=d)),  # one alpha: in bulk; y <= 0 at times
             lambda m, d: m._standard_gamma(m.full((40, 25), 7.5, dtype=d)),
             lambda m, d: m.binomial(m.full((500,), 27.0, dtype=d), m.full((500,), 0.8, dtype=d)),
             lambda m, d: m.binomial(m.full((500,), 400.0, dtype=d), m.full((500,), 0.2, dtype=d)),
             lambda m, d: m._sample_dirichlet(m.tensor(DIRICHLET, dtype=d)),
             lambda m, d: m._sample_dirichlet(m.tensor([0.5, 2.0, 3.0, 0.1, 7.0], dtype=d)),
             lambda m, d: m._sample_dirichlet(m.tensor(2.0, dtype=d))]
    for case in cases:
        torch.manual_seed(seed)
        tg.manual_seed(seed)
        same(_then_rand(tg, case(tg, getattr(tg, dtype))), _then_rand(torch, case(torch, getattr(torch, dtype))))


def test_rejection_samplers_keep_the_normal_cache_and_memory_order():
    """Gamma's normals share the generator's cached double normal with randn(double); inputs go in C order."""
    ops = [lambda m: m.randn(3, dtype=m.float64), lambda m: m._standard_gamma(m.full((9,), 2.0)),
           lambda m: m.randn(3, dtype=m.float64), lambda m: m._standard_gamma(m.tensor([2.0, 0.3, 5.0])),
           lambda m: m.randn(1, dtype=m.float64), lambda m: m._standard_gamma(m.tensor([[0.5, 2.0], [3.0, 4.0]]).t()),
           lambda m: m.poisson(m.tensor([[5.0, 20.0], [30.0, 1.0]]).t()),
           lambda m: m.binomial(m.tensor([[10.0, 20.0], [30.0, 40.0]]).t(), m.tensor([[0.5, 0.6], [0.7, 0.8]])),
           lambda m: m.poisson(m.tensor([5.0, 20.0, 0.5], dtype=m.float16)), lambda m: m.randn(2, dtype=m.float64)]
    both(9, generator=False)
    for op in ops:
        same(op(tg), op(torch))
    gen_t, gen_g = torch.Generator().manual_seed(5), tg.Generator().manual_seed(5)
    same(tg._standard_gamma(tg.tensor(ALPHAS[:50]), generator=gen_g),
         torch._standard_gamma(torch.tensor(ALPHAS[:50]), generator=gen_t))
    same(tg.poisson(tg.tensor(RATES[:50]), generator=gen_g), torch.poisson(torch.tensor(RATES[:50]), generator=gen_t))
    same(tg.binomial(tg.tensor(COUNTS[:50]), tg.tensor(PROBS[:50]), generator=gen_g),
         torch.binomial(torch.tensor(COUNTS[:50]), torch.tensor(PROBS[:50]), generator=gen_t))


@pytest.mark.parametrize("raw_state", [True, False])
def test_rejection_samplers_past_a_short_read_ahead(monkeypatch, raw_state):
    """Two uniforms read ahead at a time: elements run out mid-way and start over on a longer tape, and the
    generator still ends where torch's does (with the raw state snapshot, and with NumPy's state dictionary)."""
    from tracegrad import _torch_rng

    monkeypatch.setattr(_torch_rng._UniformTape, "_read", lambda tape: tape.stream.unit(2, np.float64))
    monkeypatch.setattr(_torch_rng, "_RAW_STATE", raw_state and _torch_rng._RAW_STATE)
    for dtype in ["float32", "float64"]:
        cases = [lambda m, d: m._standard_gamma(m.tensor(ALPHAS[:120], dtype=d)),
                 lambda m, d: m.poisson(m.tensor(RATES[:120], dtype=d)),
                 lambda m, d: m.binomial(m.tensor(COUNTS[:120], dtype=d), m.tensor(PROBS[:120], dtype=d)),
                 lambda m, d: m.binomial(m.full((150,), 10.0, dtype=d), m.full((150,), 0.3, dtype=d)),
                 lambda m, d: m._standard_gamma(m.full((150,), 1.0, dtype=d))]
        for case in cases:
            torch.manual_seed(8)
            tg.manual_seed(8)
            same(_then_rand(tg, case(tg, getattr(tg, dtype))), _then_rand(torch, case(torch, getattr(torch, dtype))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_distributions_on_rejection_samplers(dtype):
    def draws(m):
        d = getattr(m, dtype)
        concentration, rate = m.tensor([0.3, 1.0, 2.5, 12.0], dtype=d), m.tensor([1.0, 2.0, 0.5, 3.0], dtype=d)
        D = m.distributions
        return [D.Gamma(concentration, rate).sample((5,)), D.Beta(concentration, rate).sample((3,)),
                D.Dirichlet(m.stack([concentration, rate])).sample((4,)), D.Poisson(rate * 7).sample((6,)),
                D.Binomial(m.tensor([5.0, 50.0, 200.0, 3.0], dtype=d), rate / 4).sample((5,)),
                D.Chi2(concentration).sample((2,)), D.StudentT(concentration).sample((2,)),
                D.NegativeBinomial(m.tensor(20.0, dtype=d), m.tensor(0.3, dtype=d)).sample((4,))]

    for seed in SEEDS[:3]:
        torch.manual_seed(seed)
        tg.manual_seed(seed)
        for ours, theirs in zip(draws(tg), draws(torch)):
            same(ours, theirs)


@pytest.mark.parametrize("name", ["Gamma", "Beta", "Dirichlet"])
def test_rsample_values_and_gradients(name):
    """Same draws, and the pathwise gradients of a loss on them (ATen's formulas, double: to a few ulps)."""
    def run(m):
        a = m.tensor([0.4, 1.0, 3.0, 9.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([2.0, 0.7, 1.5, 4.0], dtype=m.float64, requires_grad=True)
        dist = {"Gamma": lambda: m.distributions.Gamma(a, b), "Beta": lambda: m.distributions.Beta(a, b),
                "Dirichlet": lambda: m.distributions.Dirichlet(m.stack([a, b], -1))}[name]()
        value = dist.rsample((3,))
        (value * m.arange(value.numel(), dtype=m.float64).reshape(value.shape)).sum().backward()
        return value, a.grad, b.grad

    torch.manual_seed(1)
    tg.manual_seed(1)
    ours, theirs = run(tg), run(torch)
    same(ours[0], theirs[0])
    for g_ours, g_theirs in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(g_ours.numpy(), g_theirs.numpy(), rtol=1e-12, atol=0)
