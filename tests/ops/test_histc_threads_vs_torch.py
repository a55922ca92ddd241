"""histc on 1 to 4 threads, bit for bit with PyTorch's CPU kernel.

ATen's histogram kernel hands at::parallel_for the input's elements with a grain of 200: past 200 elements each
thread counts its range into a histogram of its own, in the input's dtype (a bfloat16 count stops growing at 256,
a half one at 2048), and sum_out adds the threads' histograms, rounding each sum once to the dtype. So the counts
of bfloat16 and half depend on the thread count; float and double ones do not (these guard that they stay so).
Every test sets both libraries' thread counts and gives them back (``on_threads``)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import bits_or_error, on_threads, tg, torch

pytestmark = pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")

DTYPES = ["bfloat16", "float16", "float32", "float64"]
THREADS = [1, 2, 3, 4]
# about the grain (one range or two), a thread count past the ranges there are (401 elements, 4 threads:
# 3 ranges), ranges whose sums differ when rounded once or per addition (600 with 3 bins, 859 with 2), and counts
# past half's 2048 in each thread
SIZES = (150, 200, 201, 399, 401, 600, 859, 1000, 5000, 20001)
BINS = (1, 2, 3, 7, 100)


def _normal(lib, n: int, dtype: str, shape: tuple | None = None):
    values = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    return lib.tensor(values.reshape(shape or (n,))).to(getattr(lib, dtype))


def _assert_same_on(threads: int, program) -> None:
    with on_threads(threads):
        assert bits_or_error(program, tg) == bits_or_error(program, torch)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("threads", THREADS)
def test_each_thread_counts_its_range(threads, dtype):
    for n in SIZES:
        for bins in BINS:
            _assert_same_on(threads, lambda L, n=n, bins=bins: L.histc(_normal(L, n, dtype), bins))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("threads", THREADS)
def test_elements_outside_a_given_range_still_share_the_threads_ranges(threads, dtype):
    """The ranges are of all elements; those outside [min, max] are skipped inside them."""
    for n in (401, 1000, 5000, 20001):
        for lo, hi in ((-0.5, 1.0), (0.0, 3.0), (-4.0, -1.0)):
            _assert_same_on(threads, lambda L, n=n, lo=lo, hi=hi: L.histc(_normal(L, n, dtype), 3, lo, hi))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("threads", [2, 3])
def test_out_and_method_forms(threads, dtype):
    def into_out(L, bins):  # (a wrong-sized out= is resized first)
        out = L.full((bins + 1,), 7.0, dtype=getattr(L, dtype))
        return L.histc(_normal(L, 5000, dtype), bins, out=out), out

    for bins in (2, 5):
        _assert_same_on(threads, lambda L, bins=bins: into_out(L, bins))
        _assert_same_on(threads, lambda L, bins=bins: _normal(L, 5000, dtype).histc(bins))


LAYOUTS = {
    "2-d": lambda t: t,
    "transposed": lambda t: t.t(),
    "every third column": lambda t: t[:, ::3],
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("threads", [2, 3, 4])
def test_many_dimensional_and_strided_inputs_count_in_their_logical_order(threads, dtype, layout):
    """ATen reshapes the input to one column (a copy in logical order where it is not contiguous)."""
    _assert_same_on(threads, lambda L: L.histc(LAYOUTS[layout](_normal(L, 6000, dtype, (60, 100))), 2))


def test_the_thread_counts_are_given_back():
    before = tg.get_num_threads(), torch.get_num_threads()
    _assert_same_on(3, lambda L: L.histc(_normal(L, 1000, "bfloat16"), 2))
    assert (tg.get_num_threads(), torch.get_num_threads()) == before


# torch.histogram runs the same kernel: each thread adds its range's weights into a histogram of its own, in the
# input's dtype, and sum_out adds the threads' histograms (float32 weights: the sums' rounding shows the split)
def _weighted_histogram(L, n: int, dtype: str, bins: int, **kwargs):
    rng = np.random.default_rng(n)
    x = L.tensor(rng.standard_normal(n).astype(np.float32)).to(getattr(L, dtype))
    w = L.tensor((rng.random(n) * 1.37).astype(np.float32)).to(getattr(L, dtype))
    return L.histogram(x, bins, weight=w, **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("threads", THREADS)
def test_histogram_weights_are_summed_per_thread(threads, dtype):
    for n in (150, 201, 401, 1000, 5001):
        for bins in (1, 3, 10):
            _assert_same_on(threads, lambda L, n=n, bins=bins: list(_weighted_histogram(L, n, dtype, bins)))
            _assert_same_on(threads, lambda L, n=n, bins=bins: _normal(L, n, dtype).histogram(bins).hist)
