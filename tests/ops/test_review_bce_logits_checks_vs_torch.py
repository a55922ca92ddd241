"""Review of aa35e57 (the aten ``torch.binary_cross_entropy_with_logits`` broadcasts): shapes that do not broadcast at
all in one of the kernel's in-place products (``log_sigmoid(input).mul_(log_weight)``, ``loss.mul_(weight)``) raise
torch's "The size of tensor a ..." at torch's dimension. Before, NumPy's ValueError from the in-place check was
translated from all operands' shapes and named another dimension (x (3,), pos_weight (2,), weight (3, 1): dimension
1 for torch's 0)."""

from __future__ import annotations

import pytest
import torch
from _lib import bits_or_error

import tracegrad

CASES = {  # input, target, weight, pos_weight shapes
    "pos_weight beside a 0-d target, weight": ((3,), (), (3, 1), (2,)),
    "input beside a larger log_weight": ((5, 2), (3, 2), (3, 1), (4, 1, 1)),
    "weight does not fit the loss": ((3, 2), (3, 2), (5, 1), None),
    "weight does not fit a bfloat16 target's loss": ((3, 2), (3, 2), (5, 3), None),
}


@pytest.mark.parametrize("reduction", [0, 1])
@pytest.mark.parametrize("case", list(CASES))
def test_unbroadcastable_in_place_products_as_torch(case, reduction):
    sx, st, sw, sp = CASES[case]

    def program(L):
        target = L.full(st, 0.25, dtype=L.bfloat16 if "bfloat16" in case else L.float32)
        weight = L.ones(sw) if sw else None
        pos_weight = L.full(sp, 1.5) if sp else None
        return L.binary_cross_entropy_with_logits(L.zeros(sx), target, weight, pos_weight, reduction)

    assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)
