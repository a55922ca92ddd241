"""Operators whose kernels are not pure under a strict warnings filter (compared with torch).

A filter installed after the import (``simplefilter("error")``) turns NumPy's floating-point warnings into
exceptions; the general dispatch ran the kernel again with them off. A kernel that draws random numbers
(multinomial, normal) drew again, and batch norm's training kernel updated the running statistics twice. Such
kernels now run with NumPy's warnings off from the start. Linear in half precision rounded its float result to
half with NumPy's overflow warning outside the quiet retry.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import run_both

INF = float("inf")


def _strict(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


RANDOM = {
    "multinomial": lambda lib: lib.multinomial(lib.tensor([[1.0, 1.0, 0.0, 1e38, 1e38]] * 4), 2),
    "normal(tensor, tensor)": lambda lib: lib.normal(lib.full((8,), INF), lib.full((8,), INF)),
    "normal(float, tensor)": lambda lib: lib.normal(1e38, lib.full((8,), 3e38)),
}


@pytest.mark.parametrize("name", RANDOM)
def test_random_kernels_draw_once_under_simplefilter_error(name):
    def program(lib):
        lib.manual_seed(0)
        out = _strict(lambda: RANDOM[name](lib))
        return np.asarray(out.tolist(), dtype=np.float64), lib.rand(4).tolist()

    (ours, our_next), (theirs, their_next) = run_both(program)
    np.testing.assert_array_equal(ours, theirs)
    assert our_next == their_next


@pytest.mark.parametrize("shape", [(2, 4), (2, 4, 3), (2, 4, 3, 3)])
def test_batch_norm_running_stats_updated_once_under_simplefilter_error(shape):
    def program(lib):
        x = (lib.arange(int(np.prod(shape)), dtype=lib.float32) % 3).reshape(shape)
        rm, rv = lib.zeros(4), lib.ones(4)
        weight = lib.tensor([INF, 1.0, 1.0, 1.0])
        _strict(lambda: lib.nn.functional.batch_norm(x, rm, rv, weight=weight, training=True))
        return rm.tolist(), rv.tolist()

    ours, theirs = run_both(program)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("shape", [(3, 2), (2,), (2, 3, 2)])
@pytest.mark.parametrize("bias", [False, True])
def test_half_linear_overflow_under_simplefilter_error(shape, bias):
    def program(lib):
        x = lib.full(shape, 300.0, dtype=lib.float16)
        w = lib.full((4, 2), 300.0, dtype=lib.float16)
        b = lib.ones(4, dtype=lib.float16) if bias else None
        return _strict(lambda: lib.nn.functional.linear(x, w, b)).tolist()

    ours, theirs = run_both(program)
    assert ours == theirs
