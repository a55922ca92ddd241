"""Differences that the programs of ``tests/test_user_programs38_vs_torch.py`` ran into, each reduced to the call
that caused it and compared with torch (values, the generator's state afterwards, errors and warnings).

- ``bernoulli_(p)`` with a tensor ``p`` on a non-contiguous ``self`` (a transpose) paired the draws with the wrong
  probabilities (p's C order against self's memory order);
- a refused probability (``bernoulli``/``bernoulli_`` with p outside [0, 1]) or Poisson rate left the generator
  where it was; torch checks each element as its serial loop reaches it, so the elements before the bad one have
  drawn, and every number drawn afterwards differed;
- ``torch.normal(mean, std, size, out=)`` drew in the default dtype and cast into ``out`` (a float64 ``out`` got
  float32 numbers), ignored a ``dtype=`` that disagrees with ``out``, and filled an int64 ``out``;
- ``random_()`` of a bfloat16 tensor drew from [0, 2**24] (float's digits) where torch draws from [0, 2**8];
  ``random_(from, to)`` on floating dtypes neither moved its bounds to values the dtype holds (ATen's
  ``update_from``/``update_to``), nor refused bounds beyond the dtype, nor warned beyond its exact integers; and
  ``random_(int64 min, None)`` filled float16 and the narrow integer dtypes that torch's full-range kernel refuses;
  ``randint``/``randint_like`` into a floating dtype (torch's ``random_(low, high)``) had the same gaps;
- ``normal_`` and ``normal(float, float, size)`` drew NaN for a NaN std where torch refuses it; ``geometric_`` filled a
  bool tensor where torch's kernel refuses it; ``uniform_`` of bfloat16 checked its bounds against float's range
  and named ``Float`` in its message.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch


def _outcome_and_next_draw(program, lib) -> tuple:
    """``program(lib)`` from seed 0: its values (or error) and warnings, then the next ``rand`` draw (which shows
    how far the generator moved)."""
    lib.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = program(lib)
            values = result.float() if result.dtype == lib.bfloat16 else result  # (exact: bfloat16 is in float)
            outcome = (str(result.dtype).replace("tracegrad", "torch"), repr(values.tolist()))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            outcome = (type(exc).__name__, str(exc))
    messages = [str(w.message).split(" (Triggered internally at")[0] for w in caught]
    return outcome, messages, lib.rand(2).tolist()


def _assert_as_torch(program) -> None:
    assert _outcome_and_next_draw(program, tg) == _outcome_and_next_draw(program, torch)


BERNOULLI_VIEWS = {
    "transposed self, p by rows": lambda L: L.zeros(3, 4).t().bernoulli_(
        L.tensor([0.0, 1.0, 0.0, 1.0]).reshape(4, 1).expand(4, 3).contiguous()),
    "transposed self, random p": lambda L: L.zeros(3, 5).t().bernoulli_(L.linspace(0, 1, 15).reshape(5, 3)),
    "transposed self, broadcast p": lambda L: L.zeros(2, 6, dtype=L.float64).t().bernoulli_(
        L.tensor([0.0, 1.0], dtype=L.float64)),
}


@pytest.mark.parametrize("case", BERNOULLI_VIEWS)
def test_bernoulli_tensor_p_into_views_as_torch(case):
    _assert_as_torch(BERNOULLI_VIEWS[case])


REFUSALS_AFTER_DRAWS = {
    "bernoulli float p": lambda L: L.bernoulli(L.tensor([0.2, 0.3, -0.1, 0.5])),
    "bernoulli double p": lambda L: L.bernoulli(L.tensor([0.2, 0.3, 0.9, 1.5], dtype=L.float64)),
    "bernoulli NaN p": lambda L: L.bernoulli(L.tensor([0.2, float("nan")])),
    "bernoulli_ tensor p": lambda L: L.empty(4).bernoulli_(L.tensor([0.5, 0.1, 2.0, 0.1])),
    "bernoulli_ into a transpose": lambda L: L.empty(2, 3).t().bernoulli_(
        L.tensor([[0.5, 0.1], [0.3, 2.0], [0.1, 0.1]])),
    "poisson": lambda L: L.poisson(L.tensor([1.0, 2.0, -1.0, 3.0])),
    "poisson large rates first": lambda L: L.poisson(L.tensor([100.0, 20.0, -1.0, 3.0])),
    "poisson NaN of a transpose": lambda L: L.poisson(L.tensor([[1.0, 2.0], [float("nan"), 3.0]]).t()),
}


@pytest.mark.parametrize("case", REFUSALS_AFTER_DRAWS)
def test_refused_sample_leaves_the_generator_as_torch(case):
    _assert_as_torch(REFUSALS_AFTER_DRAWS[case])


NORMAL_OUT = {
    "float64 out": lambda L: L.normal(0.0, 1.0, size=(2, 2), out=L.empty(2, 2, dtype=L.float64)),
    "resized float64 out": lambda L: L.normal(0.0, 1.0, (2,), out=L.empty(3, dtype=L.float64)),
    "dtype= against out": lambda L: L.normal(0.0, 1.0, (2,), out=L.empty(2, dtype=L.float64), dtype=L.float32),
    "int64 out": lambda L: L.normal(0.0, 1.0, (2,), out=L.empty(2, dtype=L.int64)),
}


@pytest.mark.parametrize("case", NORMAL_OUT)
def test_normal_of_size_into_out_as_torch(case):
    _assert_as_torch(NORMAL_OUT[case])


def _random(dtype: str, *bounds):
    return lambda L: L.zeros(5, dtype=getattr(L, dtype)).random_(*bounds)


RANDOM_FLOATS = {
    "bfloat16 no bounds": _random("bfloat16"),
    "bfloat16 from only": _random("bfloat16", 5, None),
    "bfloat16 from beyond 2**8": _random("bfloat16", 300, None),
    "bfloat16 beyond its integers": _random("bfloat16", 1000, 3000),
    "bfloat16 to 2**62": _random("bfloat16", 0, 2 ** 62),
    "float16 to 65504": _random("float16", 0, 65504),
    "float16 to 65000": _random("float16", 65000),
    "float16 to 70000": _random("float16", 0, 70000),
    "float16 from -70000": _random("float16", -70000, 0),
    "float16 from rounding to inf": _random("float16", 65520, None),
    "float16 the last half": _random("float16", 65504, 65505),
    "float32 to 2**25": _random("float32", 2 ** 25),
    "float32 from -2**25": _random("float32", -(2 ** 25), 5),
    "float32 between odd integers": _random("float32", 2 ** 24 + 1, 2 ** 24 + 2),
    "float32 from 2**62": _random("float32", 2 ** 62, None),
    "float64 to 2**60": _random("float64", 2 ** 60),
    "float64 to int64 max": _random("float64", 2 ** 62, 2 ** 63 - 1),
    "float16 full range": _random("float16", -(2 ** 63), None),
    "int32 full range": _random("int32", -(2 ** 63), None),
    "bool full range": _random("bool", -(2 ** 63), None),
}


@pytest.mark.parametrize("case", RANDOM_FLOATS)
def test_random_bounds_of_floating_dtypes_as_torch(case):
    _assert_as_torch(RANDOM_FLOATS[case])


RANDINT_AND_CHECKS = {
    "randint into float32 beyond 2**24": lambda L: L.randint(0, 2 ** 40, (3,), dtype=L.float32),
    "randint into float16 beyond its range": lambda L: L.randint(0, 70000, (3,), dtype=L.float16),
    "randint_like of bfloat16 beyond 2**8": lambda L: L.randint_like(L.zeros(3, dtype=L.bfloat16), 300),
    "normal_ with NaN std": lambda L: L.empty(3).normal_(0.0, float("nan")),
    "normal of size with NaN std": lambda L: L.normal(0.0, float("nan"), (2,)),
    "geometric_ of bool": lambda L: L.empty(5, dtype=L.bool).geometric_(0.5),
    "uniform_ of bfloat16, too wide": lambda L: L.empty(3, dtype=L.bfloat16).uniform_(-3e38, 3e38),
    "uniform_ of bfloat16, beyond its largest": lambda L: L.empty(3, dtype=L.bfloat16).uniform_(-3.39e38, 0.0),
}


@pytest.mark.parametrize("case", RANDINT_AND_CHECKS)
def test_randint_bounds_and_sampler_checks_as_torch(case):
    _assert_as_torch(RANDINT_AND_CHECKS[case])


# Review of set 38: bfloat16's normal samplers. Its kernels run on float32 copies, so normal_ of 17 or more
# contiguous elements drew one uniform per element (float's normal_fill) where torch's normal_fill_lowp draws 16 per
# whole block (then the tail's 16); normal(mean, std) with a bfloat16 tensor rounded only at the end where torch
# rounds normal_, mul_ and add_ each; and normal(float, float, size, dtype=bfloat16) was refused.
BFLOAT16_NORMALS = {
    "normal_ of 17": lambda L: L.empty(17, dtype=L.bfloat16).normal_(2, 3),
    "normal_ of 40": lambda L: L.empty(40, dtype=L.bfloat16).normal_(2, 3),
    "normal(tensor, float) of 40": lambda L: L.normal(L.zeros(40, dtype=L.bfloat16), 2.0),
    "normal(float, tensor) of 5": lambda L: L.normal(1.0, L.ones(5, dtype=L.bfloat16)),
    "normal(float, tensor) of 40": lambda L: L.normal(1.0, L.ones(40, dtype=L.bfloat16)),
    "normal(tensor, tensor) of 17": lambda L: L.normal(L.zeros(17, dtype=L.bfloat16), L.ones(17, dtype=L.bfloat16)),
    "normal of size 5, dtype=": lambda L: L.normal(2.0, 3.0, (5,), dtype=L.bfloat16),
    "normal of size 40, out=": lambda L: L.normal(2.0, 3.0, (40,), out=L.empty(40, dtype=L.bfloat16)),
}


@pytest.mark.parametrize("case", BFLOAT16_NORMALS)
def test_bfloat16_normal_samplers_as_torch(case):
    _assert_as_torch(BFLOAT16_NORMALS[case])


P_SHAPES = {"p of more dims": ((3,), (2, 3)), "p of another size": ((3,), (4,)), "p transposed": ((2, 3), (3, 2)),
            "p broadcast": ((2, 3), (1, 3))}


@pytest.mark.parametrize("case", sorted(P_SHAPES))
def test_bernoulli_p_is_expanded_to_self_as_torch(case):
    """A tensor p is expanded to self's shape with expand's refusals (tracegrad broadcast it in NumPy's words)."""
    self_shape, p_shape = P_SHAPES[case]
    _assert_as_torch(lambda lib: lib.zeros(*self_shape).bernoulli_(lib.rand(*p_shape)))


NON_FINITE = {"mean inf": ("normal_", float("inf"), 1.0), "mean -inf": ("normal_", -float("inf"), 1.0),
              "mean nan": ("normal_", float("nan"), 1.0), "std inf": ("normal_", 0.0, float("inf")),
              "mean and std near the double's range": ("normal_", 1e308, 1e308),
              "uniform from -inf": ("uniform_", -float("inf"), 0.0), "uniform to inf": ("uniform_", 0.0, float("inf"))}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", sorted(NON_FINITE))
def test_non_finite_sampler_arguments_as_torch(case, dtype):
    """An infinite or NaN mean/std (or bound) fills or refuses as torch (normal_ of an infinite mean recursed
    without end in the fused multiply-add's rescaling)."""
    method, first, second = NON_FINITE[case]
    _assert_as_torch(lambda lib: getattr(lib.empty(5, dtype=getattr(lib, dtype)), method)(first, second))
