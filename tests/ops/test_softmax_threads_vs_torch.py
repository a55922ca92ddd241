"""softmax and log_softmax, forward and backward, on 1 to 4 threads, bit for bit with PyTorch's CPU kernels.

Of ATen's eight softmax kernels (SoftMaxKernel.cpp, LogSoftmaxKernelImpl.h) only softmax along a dim other than
the last (``_vec_softmax``) splits work where the split shows in the bits: at::parallel_for (grain 0) hands each
thread a range of the outer * inner columns, and a vector of columns (Sleef's exp) crosses neither the end of an
inner row nor that of a thread's range; the columns left over take the scalar loop (glibc's exp; in half and
bfloat16 each exponential is rounded to the tensor's type before it is divided). The others split whole rows or
whole blocks of columns, which every thread computes alike; these tests guard that they stay so. One more shows
at more than one thread whatever the split: float's softmax backward along the last dim, whose copy of the body
run by the thread pool rounds the leftover products of its sum, which the serial copy fuses into it. Every test
sets both libraries' thread counts and gives them back (``on_threads``)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import bits_or_error, on_threads, tg, torch

DTYPES = ["float32", "float64", "float16", "bfloat16"]
THREADS = [1, 2, 3, 4]
# inner sizes about the vector widths (8 and 16 floats, 4 and 8 doubles, 32 halves) and the threads' split
# points: a split inside an inner row (3 x 40 at dim 0: 40 columns, 2 threads at 20), rows shorter than a vector,
# several outer rows, fewer columns than threads, and a long row (1000 columns: 500, 334, 250 per thread)
SHAPES = [(3, 40), (5, 33), (2, 7, 19), (4, 3, 50), (3, 1000), (7, 16), (9, 8), (2, 5, 32), (3, 31), (6, 2, 17),
          (4, 2), (5, 1), (1, 31), (2, 3, 65)]


def _values(lib, shape: tuple, dtype: str, seed: int):
    values = np.random.default_rng(seed).standard_normal(shape) * 3
    as_float = values.astype(np.float64 if dtype == "float64" else np.float32)
    return lib.tensor(as_float).to(getattr(lib, dtype))


def _softmax(lib, shape: tuple, dim: int, dtype: str, log: bool):
    x = _values(lib, shape, dtype, seed=len(shape) + shape[-1])
    return (lib.log_softmax if log else lib.softmax)(x, dim)


def _gradient(lib, shape: tuple, dim: int, dtype: str, log: bool):
    """The backward kernel alone, on torch's forward output (read as double, which holds every dtype's values)."""
    y = _softmax(torch, shape, dim, dtype, log).double().numpy()
    output = lib.tensor(y).to(getattr(lib, dtype))
    aten = lib.ops.aten
    backward = aten._log_softmax_backward_data if log else aten._softmax_backward_data
    return backward(_values(lib, shape, dtype, seed=7), output, dim, getattr(lib, dtype))


def _assert_same_on(threads: int, program) -> None:
    with on_threads(threads):
        assert bits_or_error(program, tg) == bits_or_error(program, torch)


KINDS = {"softmax": False, "log_softmax": True}


def _every_dim(threads: int, program) -> None:
    for shape in SHAPES:
        for dim in range(len(shape)):
            _assert_same_on(threads, lambda L, s=shape, d=dim: program(L, s, d))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("threads", THREADS)
def test_forward_along_every_dim(threads, dtype, kind):
    _every_dim(threads, lambda L, s, d: _softmax(L, s, d, dtype, KINDS[kind]))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("threads", THREADS)
def test_backward_along_every_dim(threads, dtype, kind):
    _every_dim(threads, lambda L, s, d: _gradient(L, s, d, dtype, KINDS[kind]))


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_float_softmax_backward_along_the_last_dim_fuses_its_leftover_products_on_one_thread_only(threads):
    """One row is computed by the serial copy whatever the thread count (at::parallel_for keeps a single unit)."""
    for shape in ((3, 31), (8, 40), (1, 31), (1, 40), (200, 17)):
        _assert_same_on(threads, lambda L, s=shape: _gradient(L, s, 1, "float32", log=False))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("threads", [1, 3])
def test_autograd_runs_the_same_kernels(threads, dtype):
    def program(L):
        x = _values(L, (5, 33), dtype, seed=2).requires_grad_()
        y = L.softmax(x, 0)
        (y * _values(L, (5, 33), dtype, seed=4)).sum().backward()
        return y, x.grad

    _assert_same_on(threads, program)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("threads", [2, 3, 4])
def test_a_thread_range_ending_inside_a_row_leaves_its_last_columns_scalar(threads, dtype):
    """A range's end cuts a vector short even where the row goes on, and the next range starts its vectors where
    it begins, not at a multiple of the vector width."""
    for shape, dim in (((3, 40), 0), ((2, 3, 21), 0), ((5, 3, 36), 1), ((1, 100), 0)):
        _assert_same_on(threads, lambda L, s=shape, d=dim: L.softmax(_values(L, s, dtype, seed=3), d))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_non_contiguous_inputs_split_their_contiguous_copy(dtype):
    def program(L):
        x = _values(L, (40, 6), dtype, seed=5).t()  # (6, 40) seen through strides: ATen copies it first
        return L.softmax(x, 0), L.nn.functional.softmax(x[:, ::2], dim=0)

    for threads in (2, 3):
        _assert_same_on(threads, program)


def test_the_thread_counts_are_given_back():
    before = tg.get_num_threads(), torch.get_num_threads()
    _assert_same_on(3, lambda L: L.softmax(_values(L, (3, 40), "float32", seed=1), 0))
    assert (tg.get_num_threads(), torch.get_num_threads()) == before
