"""The add + product family (addmm, addmv, baddbmm, addbmm) over dtype triples and empty products, as torch 2.13.

ATen returns an empty product's ``beta * self`` before its kernels dispatch, so bool passes there: it zeroes the
result for beta == 0, else copies self into it and multiplies in place (``mul_(beta)``, which refuses a beta whose
type promotes past the result's; addmv converts beta to the result's type instead, and multiplies self unexpanded).
baddbmm's result takes batch2's dtype, and only self's dtype is checked against batch1's, in C++ type names. inner
checks the last dims before the dtypes; clamp with two bool tensor bounds is refused as ``clamp_cpu``.
"""

from __future__ import annotations

import itertools
import warnings

import pytest
from _lib import tg, torch, value_or_error

DTYPES = ("bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64")
BETAS = ((1, 1), (0, 1), (2, 1), (0.5, 1), (1, 2), (True, True))  # (a complex beta: mul_ names ComplexFloat for half)

SHAPES = {
    "baddbmm": (((2, 3, 4), (2, 3, 0), (2, 0, 4)), ((4,), (2, 3, 0), (2, 0, 4)), ((2, 0, 4), (2, 0, 2), (2, 2, 4)),
                ((2, 3, 4), (2, 3, 2), (2, 2, 4)), ((2, 10, 10), (2, 10, 10), (2, 10, 10))),
    "addmm": (((3, 4), (3, 0), (0, 4)), ((), (3, 0), (0, 4)), ((0, 4), (0, 2), (2, 4)), ((3, 4), (3, 2), (2, 4))),
    "addbmm": (((3, 4), (2, 3, 0), (2, 0, 4)), ((3, 4), (1, 3, 0), (1, 0, 4)), ((3, 4), (0, 3, 2), (0, 2, 4)),
               ((3, 4), (2, 3, 2), (2, 2, 4))),
    "addmv": (((3,), (3, 0), (0,)), ((), (3, 0), (0,)), ((1,), (3, 0), (0,)), ((3,), (3, 2), (2,))),
}

# (self, batch1/mat1, batch2/mat2): every dtype alone, and each pair with one operand of another dtype
TRIPLES = sorted({(a, a, a) for a in DTYPES} | {t for a, b in itertools.permutations(DTYPES, 2)
                                                for t in ((a, a, b), (a, b, b), (b, a, a))})


def _outcome(lib, op: str, shapes: tuple, dtypes: tuple, beta, alpha):
    def program(lib):
        operands = [lib.full(shape, 3, dtype=getattr(lib, dt)) for shape, dt in zip(shapes, dtypes)]
        result = getattr(lib, op)(*operands, beta=beta, alpha=alpha)
        return result.to(lib.complex128)  # (bfloat16's values read the same in both)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = value_or_error(program, lib)
    if outcome[0] == "torch.complex128":  # (the result's own dtype, read before the cast above)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            operands = [lib.ones(shape, dtype=getattr(lib, dt)) for shape, dt in zip(shapes, dtypes)]
            dtype = getattr(lib, op)(*operands, beta=beta, alpha=alpha).dtype
        outcome = (str(dtype).replace("tracegrad", "torch"), *outcome[1:])
    return outcome


@pytest.mark.parametrize("op,shapes", [(op, shapes) for op, all_shapes in SHAPES.items() for shapes in all_shapes])
def test_dtype_grid_matches_torch(op, shapes):
    mismatches = []
    for dtypes in TRIPLES:
        for beta, alpha in BETAS:
            ours, theirs = _outcome(tg, op, shapes, dtypes, beta, alpha), _outcome(torch, op, shapes, dtypes,
                                                                                     beta, alpha)
            if ours != theirs:
                mismatches.append((dtypes, beta, alpha, ours, theirs))
    assert not mismatches, mismatches[:3]


@pytest.mark.parametrize("program", [
    lambda lib: lib.baddbmm(lib.ones(2, 3, 4, dtype=lib.bool), lib.ones(2, 3, 0, dtype=lib.bool),
                            lib.ones(2, 0, 4, dtype=lib.int32)),
    lambda lib: lib.baddbmm(lib.ones(2, 3, 4, dtype=lib.bool), lib.ones(2, 3, 0, dtype=lib.bool),
                            lib.ones(2, 0, 4, dtype=lib.bool)),
    lambda lib: lib.baddbmm(lib.ones(2, 3, 4, dtype=lib.int64), lib.ones(2, 3, 1, dtype=lib.uint8),
                            lib.ones(2, 1, 4, dtype=lib.uint8)),
    lambda lib: lib.addmv(lib.ones(2, dtype=lib.bool), lib.ones(2, 0, dtype=lib.bool), lib.ones(0, dtype=lib.bool)),
    lambda lib: lib.addmm(lib.ones(2, 2, dtype=lib.bool), lib.ones(2, 0, dtype=lib.bool),
                          lib.ones(0, 2, dtype=lib.bool), beta=True),
    lambda lib: lib.addbmm(lib.ones(3, dtype=lib.bool), lib.ones(2, 3, 0, dtype=lib.bool),
                           lib.ones(2, 0, 3, dtype=lib.bool), beta=True),
    lambda lib: lib.inner(lib.ones(2, 3), lib.ones(4, dtype=lib.float64)),
    lambda lib: lib.inner(lib.ones(0), lib.ones(1, dtype=lib.int64)),
    lambda lib: lib.clamp(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool)),
    lambda lib: lib.ones(3, dtype=lib.bool).clamp_(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool)),
    lambda lib: lib.clamp(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool)),
    lambda lib: lib.clamp(lib.ones(3, dtype=lib.bool), None, lib.zeros(3, dtype=lib.bool)),
], ids=["baddbmm_batch2_dtype", "baddbmm_bool_beta_mul", "baddbmm_cpp_names", "addmv_bool", "addmm_bool_true",
        "addbmm_bool_second_batch", "inner_sizes_first", "inner_empty_sizes", "clamp_bool_bounds",
        "clamp_inplace_bool_bounds", "clamp_min_bool", "clamp_max_bool"])
def test_named_cases_match_torch(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)


def test_addmv_zero_dim_self_with_empty_matrix_resizes_as_torch():
    def program(lib):
        x = lib.tensor(2.0, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = lib.addmv(x, lib.ones(3, 0), lib.ones(0), beta=3)
        y.sum().backward()
        return tuple(y.shape), y.tolist(), x.grad.tolist(), [str(w.message)[:60] for w in caught]

    assert program(tg) == program(torch)


def test_empty_baddbmm_gradients_match_torch():
    def program(lib):
        inp = lib.full((2, 3, 4), 2.0, requires_grad=True)
        b1, b2 = lib.ones(2, 3, 0, requires_grad=True), lib.ones(2, 0, 4, requires_grad=True)
        lib.baddbmm(inp, b1, b2, beta=0.5).sum().backward()
        return inp.grad.tolist(), tuple(b1.grad.shape), tuple(b2.grad.shape)

    assert program(tg) == program(torch)
