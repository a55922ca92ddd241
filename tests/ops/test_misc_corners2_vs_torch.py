"""Corners where tracegrad and torch parted: ``F.linear`` with operands of several dtypes (torch adds the bias of a
non-contiguous or 1-D input after matmul, in place, which promotes; its fused ``addmm`` refuses in its own order)."""

from __future__ import annotations

import itertools

import pytest
from _lib import assert_same_bits, np, tg, torch, value_or_error

# ---- linear with operands of several dtypes ------------------------------------------------------------------

_DTYPES = ("float32", "float64", "float16", "int64")

# inputs whose product's bits do not depend on the BLAS (small integers), in the layouts that pick torch's routes
_INPUTS = {
    "1-d": lambda lib, a: a[0, 0],
    "2-d": lambda lib, a: a[0],
    "3-d": lambda lib, a: a,
    "3-d transposed": lambda lib, a: a.transpose(0, 1),
    "2-d transposed": lambda lib, a: a[0].t().contiguous().t(),
    "4-d transposed": lambda lib, a: a.reshape(2, 2, 3, 5).transpose(1, 2),
}


def _linear_program(layout: str, x_dtype: str, w_dtype: str, b_dtype: str | None, requires_grad: bool):
    """``F.linear`` of integer-valued operands of the given dtypes; with ``requires_grad``, its float operands'
    gradients are appended to the result's values."""
    rng = np.random.default_rng(0)
    base, weight, bias = rng.integers(-4, 5, (4, 3, 5)), rng.integers(-3, 4, (2, 5)), rng.standard_normal(2) * 100

    def program(lib):
        x = _INPUTS[layout](lib, lib.tensor(base).to(getattr(lib, x_dtype)))
        w = lib.tensor(weight).to(getattr(lib, w_dtype))
        b = None if b_dtype is None else lib.tensor(bias).to(getattr(lib, b_dtype))
        floats = [t for t in (x, w, b) if t is not None and t.is_floating_point()]
        if requires_grad:
            for t in floats:
                t.requires_grad_(True)
        y = lib.nn.functional.linear(x, w, b)
        if not y.requires_grad:
            return y
        y.backward(lib.full_like(y, 2))  # (exact gradients: their bits do not depend on the BLAS either)
        return [y.detach(), *(t.grad for t in floats)]

    return program


def _outcome(program, lib):
    """The result's and gradients' dtypes, shapes and values (as float64 arrays), or the error."""
    try:
        results = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    results = results if isinstance(results, list) else [results]
    return [(str(r.dtype).split(".")[-1], r.numpy().astype(np.float64)) for r in results]


@pytest.mark.parametrize("layout", _INPUTS)
@pytest.mark.parametrize("requires_grad", [False, True], ids=["plain", "requires_grad"])
def test_linear_of_operands_of_several_dtypes_promotes_or_refuses_as_torch_does(layout, requires_grad):
    mismatches = []
    for x_dtype, w_dtype, b_dtype in itertools.product(_DTYPES, _DTYPES, (*_DTYPES, None)):
        program = _linear_program(layout, x_dtype, w_dtype, b_dtype, requires_grad)
        ours, theirs = _outcome(program, tg), _outcome(program, torch)
        if isinstance(theirs, tuple) or isinstance(ours, tuple):
            same = ours == theirs
        else:
            same = len(ours) == len(theirs) and all(
                a[0] == b[0] and a[1].shape == b[1].shape and np.array_equal(a[1], b[1], equal_nan=True)
                for a, b in zip(ours, theirs))
        if not same:
            mismatches.append((x_dtype, w_dtype, b_dtype, ours if isinstance(ours, tuple) else "values",
                               theirs if isinstance(theirs, tuple) else "values"))
    assert not mismatches, mismatches[:5]


def test_the_bias_added_in_place_rounds_once_from_the_wider_sum():
    # float32 product + float64 bias: torch's in-place add sums in double and rounds once to float
    def program(lib):
        x = lib.arange(60.0).reshape(4, 3, 5).transpose(0, 1)  # not contiguous
        return lib.nn.functional.linear(x, lib.ones(2, 5), lib.tensor([1 / 3, 1e-9], dtype=lib.float64))

    ours, theirs = program(tg), program(torch)
    assert_same_bits(ours, theirs)


def test_nn_linear_takes_a_transposed_input_of_another_dtype_as_torch_does():
    def program(lib):
        lib.manual_seed(0)
        layer = lib.nn.Linear(5, 2).double()
        return layer(lib.ones(4, 3, 5).transpose(0, 1))

    assert value_or_error(program, tg) == value_or_error(program, torch)


LINEAR_REFUSALS = {
    # addmm checks dtypes before sizes, the bias's first; mm checks sizes first
    "addmm: sizes and bias dtype": lambda lib: lib.nn.functional.linear(
        lib.ones(3, 4), lib.ones(2, 5, dtype=lib.float64), lib.ones(2)),
    "mm: sizes and dtype": lambda lib: lib.nn.functional.linear(lib.ones(3, 4), lib.ones(2, 5, dtype=lib.float64)),
    "addmm: a 1-D weight": lambda lib: lib.nn.functional.linear(lib.ones(3, 5), lib.ones(5), lib.ones(3)),
    "addmm: a 1-D weight, a 0-d bias": lambda lib: lib.nn.functional.linear(lib.ones(3, 5), lib.ones(5),
                                                                             lib.ones(())),
    # a 2-D bias of a 3-D input, a 0-d bias of a 1-D one: added after matmul, in place
    "3-d input, 2-d float64 bias": lambda lib: lib.nn.functional.linear(
        lib.ones(3, 4, 5), lib.ones(2, 5), lib.ones(4, 2, dtype=lib.float64)),
    "3-d input, 2-d bias, float64 weight": lambda lib: lib.nn.functional.linear(
        lib.ones(3, 4, 5), lib.ones(2, 5, dtype=lib.float64), lib.ones(4, 2, dtype=lib.float64)),
    "1-d input, 0-d float64 bias": lambda lib: lib.nn.functional.linear(
        lib.ones(5), lib.ones(2, 5), lib.ones((), dtype=lib.float64)),
    "transposed input, complex bias": lambda lib: lib.nn.functional.linear(
        lib.ones(4, 3, 5).transpose(0, 1), lib.ones(2, 5), lib.tensor([1j, 2], dtype=lib.complex64)),
    "transposed input, bool bias": lambda lib: lib.nn.functional.linear(
        lib.ones(4, 3, 5).transpose(0, 1), lib.ones(2, 5), lib.tensor([True, False])),
    "transposed input, a bias broadcast beyond it": lambda lib: lib.nn.functional.linear(
        lib.ones(4, 3, 5).transpose(0, 1), lib.ones(2, 5), lib.ones(2, 3, 4, 2, dtype=lib.float64)),
}


@pytest.mark.parametrize("program", LINEAR_REFUSALS.values(), ids=LINEAR_REFUSALS.keys())
def test_linear_refuses_or_runs_in_the_order_torch_checks(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)
