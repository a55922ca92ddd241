"""Pointwise results whose operands are cast, and matrix products of mixed or empty operands, as torch gives them.

TensorIterator casts an operand of another dtype than the computation's with ``.to()``, which lays a non-dense
(sliced, permuted) operand out dense in its own order, not contiguous: the result keeps that operand's say in its
memory order. ``mul(ones(8, 4, dtype=uint8)[::4].t(), ones(1, 2))`` has strides (1, 4), as torch's, where it had
(2, 1). A comparison or logical op casts its operands to their common dtype (its result is bool).
"""

from __future__ import annotations

import random

import pytest
from _lib import tg, torch, value_or_error

DTYPES = ("bool", "uint8", "int32", "int64", "float16", "float32", "float64", "complex64")

BINARY = {
    "mul": lambda lib, a, b: lib.mul(a, b), "add": lambda lib, a, b: lib.add(a, b),
    "sub": lambda lib, a, b: lib.sub(a, b), "div": lambda lib, a, b: lib.div(a, b),
    "eq": lambda lib, a, b: lib.eq(a, b), "lt": lambda lib, a, b: lib.lt(a, b),
    "logical_and": lambda lib, a, b: lib.logical_and(a, b), "maximum": lambda lib, a, b: lib.maximum(a, b),
    "atan2": lambda lib, a, b: lib.atan2(a, b), "bitwise_and": lambda lib, a, b: lib.bitwise_and(a, b),
    "eq number": lambda lib, a, b: lib.eq(a, 2.5), "mul number": lambda lib, a, b: lib.mul(a, 1.5),
    "where": lambda lib, a, b: lib.where(a > 0, a, b), "addcmul": lambda lib, a, b: lib.addcmul(a, a, b),
    "addcdiv": lambda lib, a, b: lib.addcdiv(b, a.float(), b),
}


def _recipe(rng: random.Random, shape: list) -> tuple:
    """How to build an operand of ``shape``: its dims' order in memory, a step per dim, and which dims expand."""
    order = list(range(len(shape)))
    rng.shuffle(order)
    return order, [rng.choice((1, 1, 2)) for _ in shape], [rng.random() < 0.2 for _ in shape]


def _operand(lib, shape, dtype: str, recipe):
    """A tensor of ``shape`` (None: a 0-d one) built by ``recipe``: permuted, sliced with steps and expanded."""
    if shape is None:
        return lib.tensor(2, dtype=getattr(lib, dtype))
    order, steps, expanded = recipe
    base = [steps[i] * (1 if expanded[d] else shape[d]) for i, d in enumerate(order)]
    x = lib.ones(*base, dtype=getattr(lib, dtype))[tuple(slice(None, None, s) for s in steps)]
    return x.permute(*[order.index(d) for d in range(len(shape))]).expand(*shape)


def _cases(count: int, seed: int) -> list:
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        shape = [rng.choice((1, 2, 3, 4)) for _ in range(rng.randint(2, 4))]
        if rng.random() < 0.1:
            shape[rng.randrange(len(shape))] = 0
        shapes = [[1 if rng.random() < 0.25 else n for n in shape] for _ in range(2)]
        if rng.random() < 0.3:  # (broadcast from fewer dims)
            shapes[1] = shapes[1][rng.randrange(len(shape)):]
        if rng.random() < 0.1:
            shapes[rng.randrange(2)] = None
        rng.shuffle(shapes)
        dtypes = [rng.choice(DTYPES), rng.choice(DTYPES)]
        if dtypes[0] == dtypes[1] or shapes[0] is None:  # (a cast of a non-0-d operand is what is tested)
            continue
        recipes = [None if s is None else _recipe(rng, s) for s in shapes]
        cases.append((rng.choice(sorted(BINARY)), *zip(shapes, dtypes, recipes)))
    return cases


def _layout_or_error(lib, op: str, first, second) -> tuple:
    try:
        result = BINARY[op](lib, _operand(lib, *first), _operand(lib, *second))
    except Exception as exc:  # noqa: BLE001 - the error's type is the outcome compared
        return (type(exc).__name__,)
    return tuple(result.shape), result.stride(), str(result.dtype).split(".")[-1]


@pytest.mark.parametrize("op,first,second", _cases(300, 20260613))
def test_cast_operands_keep_their_layout_in_the_result(op, first, second):
    if "complex32" in str(_layout_or_error(torch, op, first, second)):
        pytest.skip("torch's ComplexHalf result (float16 with a complex 0-d tensor): tracegrad has no complex32")
    assert _layout_or_error(tg, op, first, second) == _layout_or_error(torch, op, first, second)


@pytest.mark.parametrize("op", ["mul", "add", "mul 0-d float", "eq", "where"])
def test_permuted_sliced_uint8_beside_float(op):
    def program(lib):
        a, b = lib.ones(8, 4, dtype=lib.uint8)[::4].t(), lib.arange(2.0).reshape(1, 2)
        result = {"mul": lambda: lib.mul(a, b), "add": lambda: lib.add(a, b), "eq": lambda: lib.eq(a, b),
                  "mul 0-d float": lambda: lib.mul(a, lib.tensor(2.0)), "where": lambda: lib.where(a > 0, a, b)}[op]()
        return result.stride(), result.is_contiguous(), value_or_error(lambda _: result, lib)

    assert program(tg) == program(torch)


# Matrix products of two dtypes, or of bool, whose operands or contraction are empty (torch returns an empty or zero
# result, bmm's in batch2's dtype, before its dtype checks), or whose bmm takes one of ATen's three paths: under
# 400 multiply-adds batch1's bool is refused first ('"bmm" not implemented for 'Bool''), then a batched gemm
# (float, double, complex batch2) or addmm_impl_cpu_ per matrix, each in its own words.
PRODUCTS = {
    "mm": lambda lib, n, k, p, a, b: lib.mm(lib.ones(n, k, dtype=a), lib.ones(k, p, dtype=b)),
    "bmm": lambda lib, n, k, p, a, b: lib.bmm(lib.ones(2, n, k, dtype=a), lib.ones(2, k, p, dtype=b)),
    "bmm transposed": lambda lib, n, k, p, a, b: lib.bmm(lib.ones(2, k, n, dtype=a).mT, lib.ones(2, k, p, dtype=b)),
    "bmm sliced": lambda lib, n, k, p, a, b: lib.bmm(lib.ones(2, n, 2 * k, dtype=a)[..., ::2],
                                                      lib.ones(2, k, p, dtype=b)),
    "matmul 3-d": lambda lib, n, k, p, a, b: lib.matmul(lib.ones(2, n, k, dtype=a), lib.ones(2, k, p, dtype=b)),
    "matmul 2-d by 3-d": lambda lib, n, k, p, a, b: lib.matmul(lib.ones(n, k, dtype=a), lib.ones(2, k, p, dtype=b)),
    "matmul 3-d by 2-d": lambda lib, n, k, p, a, b: lib.matmul(lib.ones(2, n, k, dtype=a), lib.ones(k, p, dtype=b)),
    "mv": lambda lib, n, k, p, a, b: lib.mv(lib.ones(n, k, dtype=a), lib.ones(k, dtype=b)),
    "matmul vector": lambda lib, n, k, p, a, b: lib.matmul(lib.ones(k, dtype=a), lib.ones(k, p, dtype=b)),
    "dot": lambda lib, n, k, p, a, b: lib.dot(lib.ones(k, dtype=a), lib.ones(k, dtype=b)),
}
PRODUCT_DTYPES = ("bool", "uint8", "int64", "float16", "float32", "float64", "complex64")


@pytest.mark.parametrize("size", [(2, 3, 2), (0, 3, 2), (2, 0, 2), (2, 3, 0), (0, 0, 0), (8, 8, 8)])
@pytest.mark.parametrize("op", sorted(PRODUCTS))
def test_products_of_mixed_or_empty_operands(op, size):
    def outcomes(lib):
        return [value_or_error(lambda lib, a=a, b=b: PRODUCTS[op](lib, *size, getattr(lib, a), getattr(lib, b)), lib)
                for a in PRODUCT_DTYPES for b in PRODUCT_DTYPES]

    assert outcomes(tg) == outcomes(torch)


def test_bmm_of_an_empty_float_and_a_double_is_double():
    def program(lib):
        result = lib.bmm(lib.ones(1, 0, 3), lib.ones(1, 3, 2, dtype=lib.float64))
        return str(result.dtype).split(".")[-1], tuple(result.shape), result.stride()

    assert program(tg) == program(torch) == ("float64", (1, 0, 2), (2, 2, 1))
