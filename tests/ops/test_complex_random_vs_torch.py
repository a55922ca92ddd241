"""Random complex tensors as PyTorch draws them: ``normal_`` (``randn``, ``randn_like``, ``normal``) and ``uniform_``
(``rand``, ``rand_like``) fill the tensor viewed as real, real and imaginary parts in turn, each part of a normal
with std / sqrt(2). tracegrad drew real numbers only (imaginary parts zero) or refused the dtype. Each case must give
torch's bits, and the generator must be left where torch leaves it.
"""

from __future__ import annotations

import pytest
from _lib import assert_same_bits, tg, torch


def _c(lib):
    return lib.complex64


PROGRAMS = {
    "randn": lambda L: L.randn(2, dtype=_c(L)),
    "randn of 20 (the vectorized fill)": lambda L: L.randn(20, dtype=_c(L)),
    "randn 3 x 7": lambda L: L.randn(3, 7, dtype=_c(L)),
    "randn complex128": lambda L: L.randn(17, dtype=L.complex128),
    "randn with a generator": lambda L: L.randn(2, dtype=_c(L), generator=L.Generator().manual_seed(3)),
    "rand": lambda L: L.rand(2, dtype=_c(L)),
    "randn_like": lambda L: L.randn_like(L.zeros(2, dtype=L.complex128)),
    "rand_like": lambda L: L.rand_like(L.zeros(2, dtype=_c(L))),
    "normal_": lambda L: L.empty(2, dtype=_c(L)).normal_(),
    "normal_ with mean and std": lambda L: L.empty(2, dtype=_c(L)).normal_(1.0, 2.0),
    "normal_ of a transposed tensor": lambda L: L.empty(3, 4, dtype=_c(L)).t().normal_(),
    "uniform_": lambda L: L.empty(2, dtype=_c(L)).uniform_(),
    "uniform_ with bounds": lambda L: L.empty(2, dtype=_c(L)).uniform_(-2, 3),
    "uniform_ of 40": lambda L: L.empty(40, dtype=_c(L)).uniform_(-2, 3),
    "normal of a complex mean": lambda L: L.normal(L.zeros(2, dtype=_c(L)), 1.0),
    "normal of a complex mean and a real std": lambda L: L.normal(L.zeros(2, dtype=_c(L)), L.ones(2)),
    "normal of sizes": lambda L: L.normal(0.0, 1.0, (2,), dtype=_c(L)),
}
REFUSED = {
    "normal with a complex std": lambda L: L.normal(L.zeros(2), L.ones(2, dtype=_c(L))),
    "normal with a float mean and a complex std": lambda L: L.normal(0.0, L.ones(2, dtype=_c(L))),
    "normal with both complex": lambda L: L.normal(L.zeros(2, dtype=_c(L)), L.ones(2, dtype=_c(L))),
    "uniform_ with from > to": lambda L: L.empty(2, dtype=_c(L)).uniform_(1, 0),
    "exponential_": lambda L: L.empty(2, dtype=_c(L)).exponential_(),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_complex_draws_as_in_torch(name):
    results = []
    for lib in (torch, tg):
        lib.manual_seed(0)
        results.append((PROGRAMS[name](lib), lib.randn(3)))
    assert_same_bits(results[1][0], results[0][0])
    assert_same_bits(results[1][1], results[0][1])  # (the generator where torch leaves it)


@pytest.mark.parametrize("name", list(REFUSED))
def test_complex_refusals_as_in_torch(name):
    errors = []
    for lib in (torch, tg):
        with pytest.raises(Exception) as info:
            REFUSED[name](lib)
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[1] == errors[0]
