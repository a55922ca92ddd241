"""Differences that the programs of ``tests/test_user_programs20_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``torch.Generator`` was the class ``tracegrad._factories.Generator``: a notebook cell ending in
  ``torch.manual_seed(0)`` showed ``<torch._factories.Generator object at 0x...>`` where torch shows
  ``<torch._C.Generator object at 0x...>`` (and ``type(g)`` printed the same wrong path); torch's class lives in
  ``torch._C``, and a pickled generator names it there;
- ``torch.cholesky_solve`` of integer or bool tensors solved (in integer arithmetic) where torch's kernel, LAPACK's
  potrs only, refuses them: ``"cholesky_solve_cpu" not implemented for 'Long'``, even for empty matrices.
"""

from __future__ import annotations

import pickle
import re

import pytest
from _lib import raised, tg, torch


def _shown(value) -> str:
    """``repr`` as a notebook shows it, with the address blanked and the library's name spelt as torch's."""
    return re.sub(r"0x[0-9a-fA-F]+", "0x…", repr(value)).replace("tracegrad", "torch")


_GENERATOR_SHOWN = {
    "manual_seed": lambda lib: lib.manual_seed(0),
    "seeded": lambda lib: lib.Generator().manual_seed(3),
    "default": lambda lib: lib.default_generator,
    "type": lambda lib: type(lib.Generator()),
    "class": lambda lib: lib.Generator,
    "module": lambda lib: lib.Generator.__module__,
    "in_C": lambda lib: lib._C.Generator is lib.Generator,
}


@pytest.mark.parametrize("case", _GENERATOR_SHOWN, ids=str)
def test_a_generator_shows_as_torch_c_generator(case):
    try:
        assert _shown(_GENERATOR_SHOWN[case](tg)) == _shown(_GENERATOR_SHOWN[case](torch))
    finally:
        torch.manual_seed(0)


def test_a_pickled_generator_names_its_class_in_c_and_loads_back():
    g = tg.Generator().manual_seed(11)
    data = pickle.dumps(g)
    assert b"tracegrad._C" in data and b"_factories" not in data
    again = pickle.loads(data)
    assert type(again) is tg.Generator and again.initial_seed() == 11
    assert tg.equal(tg.rand(3, generator=again), tg.rand(3, generator=tg.Generator().manual_seed(11)))


_NOT_FLOATING = ["int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", _NOT_FLOATING)
@pytest.mark.parametrize("shape", [(2, 2), (0, 0), (3, 2, 2)], ids=["matrix", "empty", "batch"])
def test_cholesky_solve_refuses_integer_and_bool_tensors(dtype, shape):
    def solve(lib):
        dt = getattr(lib, dtype)
        factor = lib.eye(shape[-1], dtype=dt).expand(shape)
        return lib.cholesky_solve(lib.ones(shape[-1], 1, dtype=dt), factor)

    assert raised(tg, solve) == raised(torch, solve)
    assert raised(torch, solve) is not None


def test_cholesky_solve_checks_dtypes_agree_before_refusing_integers():
    def mixed(lib):
        return lib.cholesky_solve(lib.ones(2, 1, dtype=lib.int64), lib.eye(2))

    assert raised(tg, mixed) == raised(torch, mixed)
