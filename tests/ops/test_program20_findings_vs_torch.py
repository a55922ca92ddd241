"""Differences that the programs of ``tests/test_user_programs20_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``torch.Generator`` was the class ``tracegrad._factories.Generator``: a notebook cell ending in
  ``torch.manual_seed(0)`` showed ``<torch._factories.Generator object at 0x...>`` where torch shows
  ``<torch._C.Generator object at 0x...>`` (and ``type(g)`` printed the same wrong path); torch's class lives in
  ``torch._C``, and a pickled generator names it there; ``type(x.shape)``, ``type(x.dtype)``, ``type(x.device)``,
  ``type(torch.finfo())``, ``type(torch.strided)`` and ``type(torch.channels_last)`` printed the module that holds
  tracegrad's class (``<class 'torch.size.Size'>``, ``<class 'torch.backend.dtypes.dtype'>``) where torch's C
  types print as ``<class 'torch.Size'>``, ``<class 'torch.dtype'>``...;
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


_C_TYPES_SHOWN = {
    "manual_seed": lambda lib: lib.manual_seed(0),
    "seeded": lambda lib: lib.Generator().manual_seed(3),
    "default": lambda lib: lib.default_generator,
    "type": lambda lib: type(lib.Generator()),
    "class": lambda lib: lib.Generator,
    "module": lambda lib: lib.Generator.__module__,
    "in_C": lambda lib: lib._C.Generator is lib.Generator,
    "size": lambda lib: type(lib.ones(2, 3).shape),
    "dtype": lambda lib: type(lib.ones(2).dtype),
    "device": lambda lib: type(lib.ones(2).device),
    "finfo": lambda lib: type(lib.finfo(lib.float32)),
    "iinfo": lambda lib: type(lib.iinfo(lib.int8)),
    "layout": lambda lib: type(lib.strided),
    "memory_format": lambda lib: type(lib.channels_last),
    "typename": lambda lib: lib.typename(lib.float64),
}


@pytest.mark.parametrize("case", _C_TYPES_SHOWN, ids=str)
def test_torch_c_types_show_under_torch_names(case):
    try:
        assert _shown(_C_TYPES_SHOWN[case](tg)) == _shown(_C_TYPES_SHOWN[case](torch))
    finally:
        torch.manual_seed(0)


_PICKLED = {
    "size": lambda lib: lib.Size([2, 3]),
    "device": lambda lib: lib.device("cpu"),
    "dtype": lambda lib: lib.float64,
    "strided": lambda lib: lib.strided,
    "channels_last": lambda lib: lib.channels_last,
    "preserve_format": lambda lib: lib.preserve_format,
}


@pytest.mark.parametrize("case", _PICKLED, ids=str)
def test_the_types_torch_names_at_its_top_level_pickle_and_load_back(case):
    value = _PICKLED[case](tg)
    again = pickle.loads(pickle.dumps(value))
    assert again == value and type(again) is type(value)


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
