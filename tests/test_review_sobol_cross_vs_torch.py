"""Review findings against torch 2.13: ``SobolEngine.fast_forward`` with a 0-d integer tensor count (and the
engine's ``num_generated`` that becomes a tensor), ``_sobol_engine_scramble_``'s refusals and narrow-dtype
arithmetic for an ``ltm`` other than int64, ``cross``/``linalg.cross`` of bool tensors refused, and
``torch.cross``'s default-dim deprecation warning shown once a process at the user's line."""

from __future__ import annotations

import warnings

import pytest

import tracegrad._warnings as tg_warnings
from tests._lib import assert_same_bits, tg, torch, value_or_error


def test_fast_forward_by_a_tensor_count():
    def program(lib):
        engine = lib.quasirandom.SobolEngine(3)
        first = engine.fast_forward(lib.tensor(2)).draw(2)
        second = engine.fast_forward(lib.tensor(3)).draw(lib.tensor(2))
        return lib.cat((first, second, engine.num_generated.reshape(1, 1).expand(1, 3).float()))

    assert_same_bits(program(tg), program(torch))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "bool", "float16", "bfloat16",
                                   "float32", "float64", "complex64"])
def test_scramble_with_an_ltm_of_each_dtype(dtype):
    def program(lib):
        state = lib.quasirandom.SobolEngine(3).sobolstate
        ltm = lib.randint(0, 300, (3, 30, 30), generator=lib.Generator().manual_seed(1)).to(getattr(lib, dtype))
        return lib._sobol_engine_scramble_(state, ltm, 3)

    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("op", ["linalg.cross", "cross"])
def test_cross_of_bool_refused(op):
    def program(lib):
        fn = lib.linalg.cross if op == "linalg.cross" else lib.cross
        return fn(lib.ones(2, 3, dtype=lib.bool), lib.ones(2, 3, dtype=lib.bool), dim=-1)

    assert value_or_error(program, tg) == value_or_error(program, torch)


def test_cross_default_dim_warns_once_at_the_callers_line():
    tg_warnings._SEEN.discard("cross without dim")  # (as in a fresh process)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            tg.cross(tg.ones(3), tg.ones(3))
    assert len(caught) == 1
    assert caught[0].filename == __file__ and "without specifying the dim" in str(caught[0].message)


@pytest.mark.parametrize("key, program", [
    ("triangular_solve", lambda: tg.triangular_solve(tg.ones(2, 1), tg.eye(2))),
    ("lu_solve", lambda: tg.lu_solve(tg.ones(2, 1), *tg.linalg.lu_factor(tg.eye(2)))),
    ("lu", lambda: tg.lu(tg.eye(2))),
])
def test_legacy_linalg_deprecations_warn_at_the_callers_line(key, program):
    tg_warnings._SEEN.discard(key)  # (as in a fresh process)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program()
        program()
    assert [w.filename for w in caught] == [__file__]


def test_inv_ex_out_info_of_another_dtype_refused():
    def program(lib):
        return lib.linalg.inv_ex(lib.eye(2), out=(lib.empty(0), lib.empty(0, dtype=lib.int64)))[1]

    assert value_or_error(program, tg) == value_or_error(program, torch)
