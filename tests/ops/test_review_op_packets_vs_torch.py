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
