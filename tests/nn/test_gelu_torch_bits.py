"""GELU (exact and tanh) and its gradient in float32 and float16, bit for bit as PyTorch's CPU build computes them:
oneDNN's kernel for the exact GELU of contiguous tensors, ATen's vectorised loop (Sleef) with scalar tails (glibc)
for the rest. Bitwise where tracegrad picked the same vector width as torch (torch.backends.cpu); within
rounding otherwise."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

from tracegrad.ops.aten_vec import aten_float_lanes

_LANES = {"AVX512": 16, "AVX2": 8, "DEFAULT": 0}
EXACT = _LANES.get(torch.backends.cpu.get_cpu_capability()) == aten_float_lanes()
pytestmark = pytest.mark.usefixtures("one_thread")
DTYPES = (np.float32, np.float16)
APPROXIMATIONS = ("none", "tanh")




def _unequal(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Where the raw bits differ (any NaN equals any NaN)."""
    ours, theirs = np.ascontiguousarray(ours), np.ascontiguousarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    unsigned = {2: np.uint16, 4: np.uint32}[ours.itemsize]
    return (ours.view(unsigned) != theirs.view(unsigned)) & ~(np.isnan(ours) & np.isnan(theirs))


def _assert_same(ours: np.ndarray, theirs: np.ndarray, x: np.ndarray, what: str) -> None:
    if EXACT:
        bad = _unequal(ours, theirs)
        assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} differ, x={x[bad][:5]} "
                               f"ours={ours[bad][:5]} torch={theirs[bad][:5]}")
    else:
        tolerance = 2e-3 if ours.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(ours, theirs, rtol=tolerance, atol=tolerance * 1e-2, equal_nan=True)


def _gelu_and_gradient(lib, x: np.ndarray, dy: np.ndarray, approximate: str, view=lambda t: t) -> tuple:
    t = lib.tensor(x, requires_grad=True)
    v = view(t)
    y = lib.nn.functional.gelu(v, approximate=approximate)
    (grad,) = lib.autograd.grad(y, v, lib.tensor(dy))
    return y.detach().numpy(), grad.numpy()


def _compare(x: np.ndarray, approximate: str, view=lambda t: t, seed: int = 0) -> None:
    viewed = view(torch.tensor(x)).numpy()
    dy = np.random.default_rng(seed).standard_normal(viewed.shape).astype(x.dtype)
    ours = _gelu_and_gradient(tg, x, dy, approximate, view)
    theirs = _gelu_and_gradient(torch, x, dy, approximate, view)
    _assert_same(ours[0], theirs[0], viewed, f"gelu {x.dtype} {approximate}")
    _assert_same(ours[1], theirs[1], viewed, f"gelu_backward {x.dtype} {approximate}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", APPROXIMATIONS)
@pytest.mark.parametrize("size", [1, 2, 7, 31, 32, 33, 63, 64, 65, 1000, 65539])
def test_random_inputs_every_tail_length(dtype, approximate, size):
    x = (np.random.default_rng(size).standard_normal(size) * 4).astype(dtype)
    _compare(x, approximate, seed=size)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", APPROXIMATIONS)
def test_linspace_over_minus_ten_to_ten(dtype, approximate):
    _compare(np.linspace(-10, 10, 200_003).astype(dtype), approximate)


def _special_values(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, float(info.max), -float(info.max),
              float(info.tiny), -float(info.tiny), float(info.smallest_subnormal), -float(info.smallest_subnormal),
              3 * float(info.smallest_subnormal), 1e-30, -1e-30, 1e-7, -1e-7, 1.0, -1.0, 5.54, -5.54, 5.6, -5.6,
              8.66, -8.66, 8.7, -8.7, 9.0, -9.0, 13.0, -13.0, 88.7, -88.7, 104.0, -104.0, 1e4, -1e4]
    return np.array(values * 3, dtype=dtype)  # (3 copies: the values fall on vector lanes and on the tail)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", APPROXIMATIONS)
def test_special_values(dtype, approximate):
    x = _special_values(dtype)
    _compare(x, approximate)
    for value in x[:40]:  # (one element: the scalar formula)
        _compare(np.array([value], dtype), approximate)


_VIEWS = {
    "transposed": lambda t: t.t(),
    "row_slice": lambda t: t[:, :45],
    "step": lambda t: t[:, ::2],
    "column": lambda t: t[:, 3],
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("approximate", APPROXIMATIONS)
@pytest.mark.parametrize("view", list(_VIEWS))
def test_non_contiguous_inputs(dtype, approximate, view):
    """ATen walks memory order: transposed input is vectorised whole, a row slice row by row, a strided one
    through the scalar loop only."""
    x = (np.random.default_rng(3).standard_normal((300, 70)) * 3).astype(dtype)
    _compare(x, approximate, _VIEWS[view])


@pytest.mark.parametrize("threads", [2, 3])
def test_thread_ranges_end_in_scalar_tails(threads):
    tg.set_num_threads(threads)
    torch.set_num_threads(threads)
    for size in (16_385, 65_539):
        x = (np.random.default_rng(size).standard_normal(size) * 3).astype(np.float32)
        _compare(x, "tanh")


def test_two_million_random_elements():
    x = (np.random.default_rng(7).standard_normal(2_000_000) * 3).astype(np.float32)
    for approximate in APPROXIMATIONS:
        _compare(x, approximate)
