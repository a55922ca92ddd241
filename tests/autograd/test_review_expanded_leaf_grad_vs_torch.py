"""A leaf that is itself expanded (strides 0, made by ``expand(...).detach().requires_grad_()``) receiving a gradient
handed on unchanged from ``sum()``'s backward (``add``'s rule passes it through): the gradient's zero strides equal the
leaf's, but PyTorch's layout contract asks a contiguous ``.grad`` of a leaf that is not dense, so AccumulateGrad clones
it rather than adopting the expanded gradient (which would then refuse an in-place ``add_``)."""

from __future__ import annotations

import pytest
from _lib import assert_same_bits, tg, torch

_PROGRAMS = {
    "(x + 1).sum()": lambda lib, x: (x + 1).sum(),
    "(x + ones).sum()": lambda lib, x: (x + lib.ones(x.shape)).sum(),
    "(x - 2).sum()": lambda lib, x: (x - 2).sum(),
    "x.sum()": lambda lib, x: x.sum(),
}


def _run(lib, program: str, shape: tuple):
    x = lib.tensor([1.5]).reshape((1,) * len(shape)).expand(shape).detach().requires_grad_()
    _PROGRAMS[program](lib, x).backward()
    first = (tuple(x.grad.stride()), x.grad.is_contiguous())
    x.grad.add_(1)  # (an overlapping .grad would refuse this)
    _PROGRAMS[program](lib, x).backward()
    return x.grad, first, tuple(x.grad.stride())


@pytest.mark.parametrize("program", list(_PROGRAMS))
@pytest.mark.parametrize("shape", [(3,), (3, 4), (2, 1, 3)])
def test_an_expanded_leafs_grad_is_contiguous_as_torchs(program, shape):
    (ours, ours_first, ours_strides), (theirs, theirs_first, theirs_strides) = (
        _run(lib, program, shape) for lib in (tg, torch))
    assert ours_first == theirs_first
    assert ours_strides == theirs_strides
    assert_same_bits(ours, theirs)
