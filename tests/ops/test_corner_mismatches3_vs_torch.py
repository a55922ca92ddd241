"""More corners where tracegrad and torch parted: calls missing a required argument that tracegrad's ``*dims``
methods and Python defaults took (``x.flip()``, ``x.new_zeros()``, ``torch.histogramdd(x)``), which torch's
parser refuses with a TypeError."""

from __future__ import annotations

import pytest
from _lib import raised, tg, torch, value_or_error


def _matrix(lib):
    return lib.arange(6.0).reshape(2, 3)


MISSING_ARGUMENT = {
    "x.flip()": lambda lib: _matrix(lib).flip(),
    "x.tile()": lambda lib: _matrix(lib).tile(),
    "x.new_zeros()": lambda lib: _matrix(lib).new_zeros(),
    "x.new_zeros(dtype=)": lambda lib: _matrix(lib).new_zeros(dtype=lib.float64),
    "x.sum_to_size()": lambda lib: _matrix(lib).sum_to_size(),
    "x.resize_()": lambda lib: _matrix(lib).resize_(),
    "torch.flip(x)": lambda lib: lib.flip(_matrix(lib)),
    "torch.tile(x)": lambda lib: lib.tile(_matrix(lib)),
    "torch.histogramdd(x)": lambda lib: lib.histogramdd(_matrix(lib)),
    "torch.histogramdd(x, range=)": lambda lib: lib.histogramdd(_matrix(lib), range=[0.0, 1.0] * 3),
}


@pytest.mark.parametrize("program", MISSING_ARGUMENT.values(), ids=MISSING_ARGUMENT.keys())
def test_a_missing_required_argument_is_refused_as_torch_refuses_it(program):
    assert raised(tg, program) == raised(torch, program) is not None


GIVEN = {
    "x.flip(dims=)": lambda lib: _matrix(lib).flip(dims=(0,)),
    "x.flip(0, 1)": lambda lib: _matrix(lib).flip(0, 1),
    "x.tile(dims=)": lambda lib: _matrix(lib).tile(dims=(2,)),
    "x.new_zeros(size=)": lambda lib: _matrix(lib).new_zeros(size=(2,)),
    "x.new_zeros(2, dtype=)": lambda lib: _matrix(lib).new_zeros(2, dtype=lib.float64),
    "x.sum_to_size(size=)": lambda lib: _matrix(lib).sum_to_size(size=(1, 3)),
    "x.view(dtype=)": lambda lib: _matrix(lib).view(dtype=lib.int64),
    "torch.histogramdd(x, bins=)": lambda lib: lib.histogramdd(_matrix(lib), bins=2).hist,
}


@pytest.mark.parametrize("program", GIVEN.values(), ids=GIVEN.keys())
def test_the_argument_given_by_keyword_or_varargs_still_runs(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)
