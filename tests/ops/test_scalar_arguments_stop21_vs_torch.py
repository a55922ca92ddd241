"""Number arguments that a kernel converts to the tensors' type, each the same program on tracegrad and torch
with the same outcome: values, dtype and shape, or error type and message.

- ``beta``/``alpha`` of the matrix-product family (``addmm``, ``addmv``, ``addr``, ``baddbmm``, ``addbmm`` and
  their in-place forms) and ``index_add``'s ``alpha``: PyTorch's ``Scalar::to`` refuses what the type cannot
  hold (``1j`` or ``1e300`` for float, ``1e10`` for int32 or half) where tracegrad dropped the imaginary part,
  overflowed to inf or wrapped; ``2+0j`` is 2 for any type (tracegrad raised Python's TypeError for integers);
  ``addr``'s own checks of integer and bool scalars, after its vectors' and self's shapes; bool matrices
  refused by the kernels PyTorch does not dispatch over bool (``linear`` included); integer ``addbmm`` sums
  in its own type.
- ``lerp``'s number weight may be complex (2+0j is 2.0 for real tensors, 1j refused) or a NumPy number.
- ``uniform_``'s bounds: each within the dtype's range, and a width the dtype holds (tracegrad filled inf or
  NaN); wide double ranges give torch's draws (the fused multiply-add overflowed in its emulation).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _lib import tg, torch, value_or_error

_outcome = value_or_error


def _same(program) -> None:
    assert _outcome(program, tg) == _outcome(program, torch)


PRODUCTS = {
    "addmm": lambda L, dt, kw: L.addmm(L.zeros(2, 2, dtype=dt), L.ones(2, 2, dtype=dt), L.ones(2, 2, dtype=dt), **kw),
    "addmm_": lambda L, dt, kw: L.zeros(2, 2, dtype=dt).addmm_(L.ones(2, 2, dtype=dt), L.ones(2, 2, dtype=dt), **kw),
    "addmv": lambda L, dt, kw: L.addmv(L.zeros(2, dtype=dt), L.ones(2, 2, dtype=dt), L.ones(2, dtype=dt), **kw),
    "addr": lambda L, dt, kw: L.addr(L.zeros(2, 2, dtype=dt), L.ones(2, dtype=dt), L.ones(2, dtype=dt), **kw),
    "baddbmm": lambda L, dt, kw: L.baddbmm(L.zeros(1, 2, 2, dtype=dt), L.ones(1, 2, 2, dtype=dt),
                                           L.ones(1, 2, 2, dtype=dt), **kw),
    # (one batch: torch adds batches by successive addmm_ calls, in another order than one product's sum, which
    # can differ in the last bit where the sums are not exact)
    "addbmm": lambda L, dt, kw: L.addbmm(L.zeros(2, 2, dtype=dt), L.ones(1, 2, 2, dtype=dt),
                                         L.ones(1, 2, 2, dtype=dt), **kw),
    "index_add": lambda L, dt, kw: L.zeros(3, dtype=dt).index_add(0, L.tensor([0, 1]), L.ones(2, dtype=dt), **kw),
}
DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool", "complex64"]
NUMBERS = [1j, 2 + 0j, 0j, 1.5, 0.0, 1e10, 1e300, float("nan"), True, 2**40, -1, 3]


def _product_cases():
    for (name, program), dtype, number in itertools.product(PRODUCTS.items(), DTYPES, NUMBERS):
        for key in ("alpha",) if name == "index_add" else ("beta", "alpha"):
            yield pytest.param(program, dtype, key, number, id=f"{name}-{dtype}-{key}={number!r}")


@pytest.mark.parametrize(("program", "dtype", "key", "number"), list(_product_cases()))
def test_beta_and_alpha_as_torch_converts_them(program, dtype, key, number):
    _same(lambda L: program(L, getattr(L, dtype), {key: number}))
    # (an infinite alpha for complex matrices is left out: torch's complex product gives nan+nanj, NumPy's inf+nanj)


ORDERS = {
    "addr: vectors before scalars": lambda L: L.addr(L.zeros(2, 2, dtype=L.int64), L.ones(2, 2, dtype=L.int64),
                                                     L.ones(2, dtype=L.int64), beta=1.5),
    "addr: self's expand before scalars": lambda L: L.addr(L.zeros(3, 3), L.ones(2), L.ones(2), beta=True),
    "addr_: self's size before scalars": lambda L: L.zeros(3, 3, dtype=L.int64).addr_(
        L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64), beta=1.5),
    "addr: beta before alpha": lambda L: L.addr(L.zeros(2, 2, dtype=L.int64), L.ones(2, dtype=L.int64),
                                                L.ones(2, dtype=L.int64), beta=True, alpha=1.5),
    "addr: bool alpha, float beta, ints": lambda L: L.addr(L.zeros(2, 2, dtype=L.int64), L.ones(2, dtype=L.int64),
                                                           L.ones(2, dtype=L.int64), beta=1.5, alpha=True),
    "addmm bool: shapes first": lambda L: L.addmm(L.zeros(2, 2, dtype=L.bool), L.ones(2, 3, dtype=L.bool),
                                                  L.ones(2, 2, dtype=L.bool)),
    "addmm: shapes before alpha": lambda L: L.addmm(L.zeros(2, 2), L.ones(2, 3), L.ones(2, 2), alpha=1j),
    "linear of bool": lambda L: L.nn.functional.linear(L.ones(2, 2, dtype=L.bool), L.ones(2, 2, dtype=L.bool),
                                                       L.ones(2, dtype=L.bool)),
    "linear of bool, no bias": lambda L: L.nn.functional.linear(L.ones(2, 2, dtype=L.bool), L.ones(3, 2, dtype=L.bool)),
    "index_add_ of uint8, alpha -1": lambda L: L.zeros(3, dtype=L.uint8).index_add_(
        0, L.tensor([0, 1]), L.ones(2, dtype=L.uint8), alpha=-1),
    "addbmm of int32 wraps": lambda L: L.addbmm(L.zeros(1, 1, dtype=L.int32), L.full((2, 1, 1), 2**16, dtype=L.int32),
                                                L.full((2, 1, 1), 2**15, dtype=L.int32)),
}


@pytest.mark.parametrize("name", list(ORDERS))
def test_checks_in_torch_order(name):
    _same(ORDERS[name])


@pytest.mark.parametrize("weight", [2 + 0j, 1j, 0j, np.float32(0.25), np.float64(0.75), np.int64(1), True,
                                    np.bool_(True), 1e300], ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64"])
@pytest.mark.parametrize("inplace", [False, True])
def test_lerp_number_weights(weight, dtype, inplace):
    def program(L):
        start, end = L.zeros(3, dtype=getattr(L, dtype)), L.tensor([1.0, 2.0, 4.0]).to(getattr(L, dtype))
        return start.lerp_(end, weight) if inplace else start.lerp(end, weight)

    _same(program)


BOUNDS = [0.0, 1.0, -1.0, 2, 65504.0, 65520.0, 7e4, -7e4, 1.7e38, -1.7e38, 3e38, -3e38, 3.5e38, 1e308, -1e308,
          float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "complex128"])
def test_uniform_bounds_and_wide_ranges(dtype):
    def program(low, high):
        def run(L):
            L.manual_seed(0)
            return L.empty(5, dtype=getattr(L, dtype)).uniform_(low, high)
        return run

    differing = [(low, high) for low, high in itertools.product(BOUNDS, BOUNDS)
                 if _outcome(program(low, high), tg) != _outcome(program(low, high), torch)]
    assert differing == []
