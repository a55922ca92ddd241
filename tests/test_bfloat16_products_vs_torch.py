"""Matrix products of a bfloat16 operand and another floating one, and nextafter on bfloat16, as torch 2.13 gives.

torch's CPU products do not promote: a bfloat16 operand beside a float32 (float16, float64) one is refused, in each
kernel's own words (mm's "expected m1 and m2...", bmm's "expected scalar type...", addmm's "self and mat2...",
addmv's, dot's, tensordot's, multi_dot's). tracegrad computes bfloat16 kernels on float32 copies, which must not
hide those refusals. nextafter steps one bfloat16 ulp, not a float32 one rounded back.
"""

from __future__ import annotations

import itertools

import pytest
import torch

import tracegrad as tg
from tests._lib import value_or_error


def _ones(lib, shape, dtype):
    return lib.ones(*shape, dtype=getattr(lib, dtype))


# each product: the shapes of its two operands, and the call (an addmm-like one gets a bfloat16 self)
PRODUCTS = {
    "mm": ((2, 3), (3, 2), lambda lib, a, b: lib.mm(a, b)),
    "matmul": ((2, 3), (3, 2), lambda lib, a, b: lib.matmul(a, b)),
    "@": ((2, 3), (3, 2), lambda lib, a, b: a @ b),
    "linear": ((2, 3), (3, 3), lambda lib, a, b: lib.nn.functional.linear(a, b)),
    "matmul 1-d x 2-d": ((3,), (3, 3), lambda lib, a, b: lib.matmul(a, b)),
    "matmul 2-d x 1-d": ((2, 3), (3,), lambda lib, a, b: lib.matmul(a, b)),
    "matmul 1-d x 1-d": ((3,), (3,), lambda lib, a, b: lib.matmul(a, b)),
    "bmm": ((1, 2, 3), (1, 3, 2), lambda lib, a, b: lib.bmm(a, b)),
    "baddbmm": ((1, 2, 3), (1, 3, 2), lambda lib, a, b: lib.baddbmm(_ones(lib, (1, 2, 2), "bfloat16"), a, b)),
    "einsum": ((2, 3), (3, 2), lambda lib, a, b: lib.einsum("ij,jk->ik", a, b)),
    "addmm": ((2, 3), (3, 2), lambda lib, a, b: lib.addmm(_ones(lib, (2, 2), "bfloat16"), a, b)),
    "addbmm": ((1, 2, 3), (1, 3, 2), lambda lib, a, b: lib.addbmm(_ones(lib, (2, 2), "bfloat16"), a, b)),
    "mv": ((2, 3), (3,), lambda lib, a, b: lib.mv(a, b)),
    "addmv": ((2, 3), (3,), lambda lib, a, b: lib.addmv(_ones(lib, (2,), "bfloat16"), a, b)),
    "dot": ((3,), (3,), lambda lib, a, b: lib.dot(a, b)),
    "vdot": ((3,), (3,), lambda lib, a, b: lib.vdot(a, b)),
    "inner": ((3,), (3,), lambda lib, a, b: lib.inner(a, b)),
    "inner 2-d": ((2, 3), (2, 3), lambda lib, a, b: lib.inner(a, b)),
    "tensordot": ((2, 3), (3, 2), lambda lib, a, b: lib.tensordot(a, b, dims=1)),
    "multi_dot": ((2, 3), (3, 2), lambda lib, a, b: lib.linalg.multi_dot([a, b])),
    "outer": ((3,), (3,), lambda lib, a, b: lib.outer(a, b)),
}


@pytest.mark.parametrize("bfloat16_first", [True, False], ids=["bf16 first", "bf16 second"])
@pytest.mark.parametrize("partner", ["float32", "float16", "float64"])
@pytest.mark.parametrize("product", PRODUCTS)
def test_product_of_bfloat16_and_another_dtype(product, partner, bfloat16_first):
    shape_a, shape_b, call = PRODUCTS[product]
    if not bfloat16_first:
        shape_a, shape_b = shape_b, shape_a

    def program(lib):
        dtypes = ("bfloat16", partner) if bfloat16_first else (partner, "bfloat16")
        return call(lib, _ones(lib, shape_a, dtypes[0]), _ones(lib, shape_b, dtypes[1]))

    assert value_or_error(program, tg) == value_or_error(program, torch)


# self, mat1 (batch1), mat2 (batch2): which check refuses first, and the dtypes it names
THREE = ("bfloat16", "float32", "float16")


@pytest.mark.parametrize("dtypes", [d for d in itertools.product(THREE, repeat=3) if len(set(d)) > 1],
                         ids="-".join)
@pytest.mark.parametrize("op", ["addmm", "addbmm", "baddbmm", "addmv"])
def test_three_operand_products_name_the_mismatch_as_torch(op, dtypes):
    shapes = {"addmm": ((2, 2), (2, 3), (3, 2)), "addbmm": ((2, 2), (1, 2, 3), (1, 3, 2)),
              "baddbmm": ((1, 2, 2), (1, 2, 3), (1, 3, 2)), "addmv": ((2,), (2, 3), (3,))}[op]

    def program(lib):
        return getattr(lib, op)(*(_ones(lib, s, d) for s, d in zip(shapes, dtypes)))

    assert value_or_error(program, tg) == value_or_error(program, torch)


def test_products_of_bfloat16_operands_still_compute():
    def program(lib):
        a = lib.linspace(-1.3, 2.1, 6).reshape(2, 3).to(lib.bfloat16)
        b = lib.linspace(0.7, -1.9, 6).reshape(3, 2).to(lib.bfloat16)
        v = lib.linspace(0.2, 1.1, 3).to(lib.bfloat16)
        return lib.cat([(a @ b).flatten(), lib.mv(a, v), lib.dot(v, v).reshape(1), lib.vdot(v, v).reshape(1),
                        lib.addmm(b.T @ a.T, a, b).flatten(), lib.bmm(a[None], b[None]).flatten()])

    assert value_or_error(program, tg) == value_or_error(program, torch)


_FROM = [1.0, 0.0, -1.0, -0.0, float("inf"), float("nan"), 3e38, 1e-40, 2.0]
_TOWARD = [2.0, 1.0, -2.0, -1.0, 0.0, 1.0, float("inf"), 0.0, 2.0]


@pytest.mark.parametrize("toward", ["bfloat16", "float32", "0-d float32"])
def test_nextafter_steps_one_bfloat16_ulp(toward):
    def program(lib):
        x = lib.tensor(_FROM, dtype=lib.bfloat16)
        other = lib.tensor(5.0) if toward == "0-d float32" else lib.tensor(_TOWARD, dtype=getattr(lib, toward))
        return lib.nextafter(x, other)

    assert value_or_error(program, tg) == value_or_error(program, torch)


def test_nextafter_in_place_and_gradient_on_bfloat16():
    def program(lib):
        x = lib.tensor(_FROM, dtype=lib.bfloat16)
        x.nextafter_(lib.tensor(_TOWARD, dtype=lib.bfloat16))
        a = lib.tensor([1.0, 2.0], dtype=lib.bfloat16, requires_grad=True)
        lib.nextafter(a, lib.tensor([1.0, 3.0], dtype=lib.bfloat16)).sum().backward()
        return lib.cat([x, a.grad])

    assert value_or_error(program, tg) == value_or_error(program, torch)
