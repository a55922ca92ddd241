"""``torch.quasirandom.SobolEngine`` against torch's: the direction numbers of all 21201 dimensions, the points drawn
(bit for bit, unscrambled and scrambled from a seeded or the default generator), ``draw``'s dtypes and ``out=``,
``draw_base2``, ``fast_forward``, ``reset``, ``num_generated``, ``repr``, the ``_sobol_engine_*`` operators, and
torch's errors."""

from __future__ import annotations

from importlib import resources

import pytest
from _lib import assert_same_bits, tg, torch, value_or_error


def engines(dimension: int, scramble: bool = False, seed: int | None = None) -> tuple:
    return (tg.quasirandom.SobolEngine(dimension, scramble=scramble, seed=seed),
            torch.quasirandom.SobolEngine(dimension, scramble=scramble, seed=seed))


def assert_same_state(ours, theirs) -> None:
    assert ours.num_generated == theirs.num_generated
    for name in ("sobolstate", "shift", "quasi", "_first_point"):
        assert_same_bits(getattr(ours, name), getattr(theirs, name))


def same_dtype(lib, dtype):
    return None if dtype is None else getattr(lib, str(dtype).removeprefix("torch."))


def run_steps(ours, theirs, steps) -> None:
    """The same calls on both engines, comparing every result and the state after each."""
    for method, *args in steps:
        if method == "draw":
            n, dtype = args
            assert_same_bits(ours.draw(n, dtype=same_dtype(tg, dtype)), theirs.draw(n, dtype=dtype))
        elif method == "draw_base2":
            assert_same_bits(ours.draw_base2(*args), theirs.draw_base2(*args))
        else:
            assert getattr(ours, method)(*args) is ours and getattr(theirs, method)(*args) is theirs
        assert_same_state(ours, theirs)


STEPS = [("draw", 1, None), ("draw", 7, None), ("fast_forward", 5), ("draw", 20, torch.float64), ("reset",),
         ("draw_base2", 4), ("fast_forward", 1000), ("draw", 3, torch.float32), ("fast_forward", 0), ("draw", 0, None)]


@pytest.mark.parametrize("dimension", [1, 2, 3, 10, 40, 1000])
@pytest.mark.parametrize(("scramble", "seed"), [(False, None), (True, 0), (True, 12345), (False, 3)])
def test_draws_match_bit_for_bit(dimension, scramble, seed):
    ours, theirs = engines(dimension, scramble, seed)
    assert_same_state(ours, theirs)
    run_steps(ours, theirs, STEPS)


def test_all_21201_dimensions_have_torchs_direction_numbers():
    ours, theirs = engines(21201)
    assert_same_state(ours, theirs)
    run_steps(ours, theirs, [("draw", 5, None), ("fast_forward", 3), ("draw", 2, torch.float64)])


def test_scrambled_21201_dimensions():
    run_steps(*engines(21201, True, 7), [("draw", 3, None), ("fast_forward", 100), ("draw", 2, None)])


def test_fast_forward_equals_drawing_far_ahead():
    ours, theirs = engines(6, True, 1)
    run_steps(ours, theirs, [("fast_forward", 2**20 + 12345), ("draw", 40, None), ("fast_forward", 3),
                             ("draw", 1, torch.float64)])


def test_scramble_without_seed_draws_from_the_default_generator():
    tg.manual_seed(5)
    torch.manual_seed(5)
    ours, theirs = engines(4, scramble=True)
    assert_same_state(ours, theirs)
    assert_same_bits(ours.draw(3), theirs.draw(3))
    assert_same_bits(tg.rand(3), torch.rand(3))  # (as far on in the default generator's stream)


def test_first_point_keeps_the_default_dtype_of_construction():
    """The first point is divided at construction: made under float64, a later float32 draw rounds it from double;
    made under float32, a float64 draw widens the float32 value."""
    for lib in (tg, torch):
        lib.set_default_dtype(lib.float64)
    try:
        ours, theirs = engines(3, True, 2)
    finally:
        for lib in (tg, torch):
            lib.set_default_dtype(lib.float32)
    assert_same_bits(ours.draw(3), theirs.draw(3))
    ours, theirs = engines(3, True, 2)
    assert_same_bits(ours.draw(2, dtype=tg.float64), theirs.draw(2, dtype=torch.float64))


def test_default_dtype_decides_draws_dtype():
    ours, theirs = engines(2, True, 9)
    for lib in (tg, torch):
        lib.set_default_dtype(lib.float64)
    try:
        assert_same_bits(ours.draw(4), theirs.draw(4))
    finally:
        for lib in (tg, torch):
            lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("out_dtype", ["float64", "int64", "float32"])
def test_draw_into_out(out_dtype):
    ours, theirs = engines(2, True, 4)
    outs = tg.empty(5, 7, dtype=getattr(tg, out_dtype)), torch.empty(5, 7, dtype=getattr(torch, out_dtype))
    assert ours.draw(3, out=outs[0]) is outs[0] and theirs.draw(3, out=outs[1]) is outs[1]
    assert_same_bits(*outs)


def test_repr_and_attributes():
    for args in ((3,), (3, True), (3, True, 5), (3, False, 5)):
        ours, theirs = tg.quasirandom.SobolEngine(*args), torch.quasirandom.SobolEngine(*args)
        assert repr(ours) == repr(theirs)
        assert (ours.dimension, ours.scramble, ours.seed) == (theirs.dimension, theirs.scramble, theirs.seed)
    assert (tg.quasirandom.SobolEngine.MAXBIT, tg.quasirandom.SobolEngine.MAXDIM) == (30, 21201)


REFUSALS = {
    "dimension 0": lambda lib: lib.quasirandom.SobolEngine(0),
    "dimension 21202": lambda lib: lib.quasirandom.SobolEngine(21202),
    "draw 0 first": lambda lib: lib.quasirandom.SobolEngine(3).draw(0),
    "draw -1": lambda lib: lib.quasirandom.SobolEngine(3).draw(-1),
    "draw half": lambda lib: lib.quasirandom.SobolEngine(3).draw(3, dtype=lib.half),
    "draw half one point": lambda lib: lib.quasirandom.SobolEngine(3).draw(1, dtype=lib.half),
    "draw bfloat16": lambda lib: lib.quasirandom.SobolEngine(3).draw(3, dtype=lib.bfloat16),
    "draw long": lambda lib: lib.quasirandom.SobolEngine(3).draw(3, dtype=lib.long),
    "draw complex": lambda lib: lib.quasirandom.SobolEngine(3).draw(3, dtype=lib.complex64),
    "draw float n": lambda lib: lib.quasirandom.SobolEngine(3).draw(2.0),
    "draw_base2 unbalanced": lambda lib: lib.quasirandom.SobolEngine(2).fast_forward(3).draw_base2(2),
    "draw_base2 negative": lambda lib: lib.quasirandom.SobolEngine(2).draw_base2(-1),
    "out requiring grad": lambda lib: lib.quasirandom.SobolEngine(2).draw(3, out=lib.empty(5, requires_grad=True)),
    "negative fast_forward then draw": lambda lib: lib.quasirandom.SobolEngine(4, True, 1).fast_forward(-3).draw(6),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_refusals_and_odd_calls(name):
    assert value_or_error(REFUSALS[name], tg) == value_or_error(REFUSALS[name], torch)


def state_ops(lib) -> tuple:
    state = lib.zeros(3, 30, dtype=lib.long)
    assert lib._sobol_engine_initialize_state_(state, 3) is state
    return state, lib.zeros(3, dtype=lib.long)


OPERATOR_CALLS = {
    "draw float quasi": lambda lib, s, q: lib._sobol_engine_draw(q.float(), 2, s, 3, 0, None)[0],
    "draw float state": lambda lib, s, q: lib._sobol_engine_draw(q.float(), 2, s.float(), 3, 0, None)[0],
    "draw float32 by default": lambda lib, s, q: lib._sobol_engine_draw(q, 3, s, 3, 0, None)[0],
    "draw fewer dimensions": lambda lib, s, q: lib._sobol_engine_draw(q, 3, s, 2, 0, lib.float64)[1],
    "draw from a negative index": lambda lib, s, q: lib._sobol_engine_draw(q, 5, s, 3, -3, None)[0],
    "ff from a negative index": lambda lib, s, q: lib._sobol_engine_ff_(q, 7, s, 3, -3),
    "ff far": lambda lib, s, q: lib._sobol_engine_ff_(q, 100000, s, 3, 12345),
    "initialize float": lambda lib, s, q: lib._sobol_engine_initialize_state_(s.float(), 3),
    "scramble float": lambda lib, s, q: lib._sobol_engine_scramble_(s.float(), lib.zeros(3, 30, 30).long(), 3),
    "scramble": lambda lib, s, q: lib._sobol_engine_scramble_(s, lib.ones(3, 30, 30).long().tril(), 3),
}


@pytest.mark.parametrize("name", OPERATOR_CALLS)
def test_state_operators(name):
    call = OPERATOR_CALLS[name]
    assert value_or_error(lambda lib: call(lib, *state_ops(lib)), tg) == \
        value_or_error(lambda lib: call(lib, *state_ops(lib)), torch)


def test_direction_numbers_ship_inside_the_package():
    """The table is package data next to the operators that read it (the wheel takes every file of the package)."""
    table = resources.files("tracegrad.ops") / "sobol_direction_numbers.npz"
    assert table.is_file() and len(table.read_bytes()) < 400_000
