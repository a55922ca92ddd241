"""Differences that the programs of ``tests/test_user_programs7_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``torch.special.zeta`` (and ``polygamma(n >= 2)``, which is n! zeta(n + 1, x)) summed the series its own way:
  within an ulp or two of torch, but NaN where torch's Cephes code stops early (``zeta(1e300, 1)`` is 1, as is
  ``zeta(inf, 1)``; ``zeta(inf, 0.5)`` is inf), and ``polygamma``'s n! was exact where torch's is
  exp(lgamma(n + 1)). Both now follow Cephes' steps with the C library's pow: bit for bit in float32, float64
  and (polygamma) half, which torch computes in float arithmetic;
- ``torch.special.zeta`` of half tensors computed a value; torch's CPU kernel has no Half version;
- a ``TransformerEncoder`` taking PyTorch's nested-tensor shortcut (evaluation without autograd, a padding mask)
  did not warn, once a process, that nested tensors are a prototype.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch

# ---- zeta and polygamma --------------------------------------------------------------------------------------


def _zeta_arguments(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    s = np.concatenate([rng.uniform(1, 30, 400), rng.integers(1, 12, 100), rng.uniform(-2, 1.5, 40),
                        [1e300, 400, 1e10, np.inf, np.inf, np.inf, np.inf, np.nan, 2.0]])
    q = np.concatenate([rng.uniform(-20, 50, 400), rng.uniform(-5, 5, 100), rng.uniform(0, 3, 40),
                        [1, 1, 2, 1, 0.5, 2, -2.5, 1, np.nan]])
    return s.astype(dtype), q.astype(dtype)


def _same_bits(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)  # (NaN where NaN)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zeta_bit_for_bit_with_cephes_early_exits(dtype):
    s, q = _zeta_arguments(dtype)
    ours = tg.special.zeta(tg.from_numpy(s), tg.from_numpy(q)).numpy()
    _same_bits(ours, torch.special.zeta(torch.from_numpy(s), torch.from_numpy(q)).numpy())


def test_zeta_of_huge_orders_is_its_first_term():
    for lib in (tg, torch):
        values = lib.special.zeta(lib.tensor([1e300, float("inf"), float("inf")], dtype=lib.float64),
                                  lib.tensor([1.0, 1.0, 0.5], dtype=lib.float64))
        assert values.tolist() == [1.0, 1.0, float("inf")]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_polygamma_bit_for_bit(n, dtype):
    rng = np.random.default_rng(n)
    x = np.concatenate([rng.uniform(-8, 40, 300), [0.0, -1.0, -2.5, 1e-3, np.inf, np.nan]]).astype(dtype)
    ours = tg.special.polygamma(n, tg.from_numpy(x)).numpy()
    _same_bits(ours, torch.special.polygamma(n, torch.from_numpy(x)).numpy())


def _zeta_outcome(lib, call):
    x = lib.tensor([0.5, 2.0, 7.0], dtype=lib.float16)
    try:
        return call(lib, x).tolist()
    except NotImplementedError as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("call", [lambda L, x: L.special.zeta(x, x), lambda L, x: L.special.zeta(2.0, x),
                                  lambda L, x: L.special.zeta(x, 2.0)], ids=["tensors", "number_s", "number_q"])
def test_zeta_refuses_half(call):
    assert _zeta_outcome(tg, call) == _zeta_outcome(torch, call) == (
        "NotImplementedError", "\"zeta_cpu\" not implemented for 'Half'")


# ---- the nested-tensor shortcut's warning --------------------------------------------------------------------


def _encoder_warnings(lib, *, grad: bool, padded: bool) -> set:
    """The distinct warnings of an encoder run (every time: torch's warns once a process, and under
    ``set_warn_always`` once for each nested tensor it builds)."""
    lib.manual_seed(0)
    encoder = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2)
    encoder.eval()
    x = lib.randn(2, 4, 8)
    mask = lib.tensor([[False, False, True, True], [False] * 4]) if padded else None
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught, lib.set_grad_enabled(grad):
            warnings.simplefilter("always")
            encoder(x, src_key_padding_mask=mask)
    finally:
        lib.set_warn_always(False)
    return {(w.category.__name__, str(w.message).split(" (Triggered internally at")[0]) for w in caught}


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("padded", [False, True], ids=["unpadded", "padded"])
def test_nested_tensor_shortcut_warns_that_nested_tensors_are_a_prototype(grad, padded):
    ours = _encoder_warnings(tg, grad=grad, padded=padded)
    assert ours == _encoder_warnings(torch, grad=grad, padded=padded)
    assert bool(ours) == (padded and not grad)
