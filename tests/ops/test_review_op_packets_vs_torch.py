"""Review of torch.ops packets trying each overload (thirtieth round, j), against torch: NumPy scalars taken for a
Tensor where the packet allows numbers as tensors, and ``self=`` given by keyword to packets and overloads."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _lib import bits_or_error

import tracegrad

NUMPY_SCALARS = {
    "int64 on a float tensor": ("add", lambda L: L.tensor([1.0, 2.0]), np.int64(2)),
    "float32 on an int tensor": ("add", lambda L: L.tensor([1, 2]), np.float32(2.5)),
    "float64 on a half tensor": ("mul", lambda L: L.tensor([1.0, 2.0], dtype=L.float16), np.float64(3)),
    "bool_": ("sub", lambda L: L.tensor([1.0, 2.0]), np.bool_(True)),
    "int8 on an int8 tensor": ("floor_divide", lambda L: L.tensor([7, 9], dtype=L.int8), np.int8(2)),
}


@pytest.mark.parametrize("case", list(NUMPY_SCALARS))
def test_packet_takes_numpy_scalars_as_tensors_as_torch(case):
    name, tensor, number = NUMPY_SCALARS[case]

    def program(L):
        return getattr(L.ops.aten, name)(tensor(L), number)

    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


SELF_BY_KEYWORD = {
    "add packet": lambda L, x: L.ops.aten.add(self=x, other=2, alpha=3),
    "mul packet": lambda L, x: L.ops.aten.mul(self=x, other=x),
    "mm packet": lambda L, x: L.ops.aten.mm(self=x[None], mat2=x[:, None]),
    "relu packet": lambda L, x: L.ops.aten.relu(self=x),
    "sum packet": lambda L, x: L.ops.aten.sum(self=x),
    "mul.Tensor": lambda L, x: L.ops.aten.mul.Tensor(self=x, other=x),
    "mm.default": lambda L, x: L.ops.aten.mm.default(self=x[None], mat2=x[:, None]),
}


@pytest.mark.parametrize("case", list(SELF_BY_KEYWORD))
def test_self_by_keyword_as_torch(case):
    def program(L):
        return SELF_BY_KEYWORD[case](L, L.tensor([1.0, 2.0, 3.0]))

    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


# The public functions' parser knows the tensor as ``input``: ``self=`` is refused there (a missing input first),
# while an operator overload takes it (the review's positional-only ``self`` had let ``torch.sin(self=x)`` compute)
PUBLIC_SELF = {
    "sin(self=x)": lambda L, x: L.sin(self=x),
    "sin(x, self=x)": lambda L, x: L.sin(x, self=x),
    "exp(self=x)": lambda L, x: L.exp(self=x),
    "neg(self=x)": lambda L, x: L.neg(self=x),
    "sum(self=x)": lambda L, x: L.sum(self=x),
    "add(self=x, other=x)": lambda L, x: L.add(self=x, other=x),
    "aten.neg(self=x)": lambda L, x: L.ops.aten.neg(self=x),
    "aten.neg.default(self=x)": lambda L, x: L.ops.aten.neg.default(self=x),
    "aten.abs.default(self=x)": lambda L, x: L.ops.aten.abs.default(self=x),
}


@pytest.mark.parametrize("case", list(PUBLIC_SELF))
def test_self_keyword_of_public_functions_as_torch(case):
    def program(L):
        return PUBLIC_SELF[case](L, L.tensor([1.0, 2.0, 3.0]))

    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)
