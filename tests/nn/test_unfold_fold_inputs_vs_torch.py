"""``F.unfold``/``F.fold`` inputs as ATen's im2col/col2im take them: the floating, complex and bool dtypes
(other types refused in the kernels' dispatch words, after the shape checks), and the input dims read as
im2col_shape_check reads them (an IndexError for too few dims, an empty batch allowed)."""

from __future__ import annotations

import pytest
from _lib import raised, tg, torch

DTYPES = ["bool", "int64", "uint8", "int32", "float16", "float64", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_unfold_and_fold_dtypes(dtype):
    def unfold(lib):
        out = lib.nn.functional.unfold(lib.ones(1, 2, 4, 4, dtype=getattr(lib, dtype)), 2)
        return str(out.dtype).rpartition(".")[2], tuple(out.shape), int((out != 0).sum())

    def fold(lib):
        out = lib.nn.functional.fold(lib.ones(1, 4, 9, dtype=getattr(lib, dtype)), (4, 4), 2)
        return str(out.dtype).rpartition(".")[2], tuple(out.shape), int((out != 0).sum())

    for program in (unfold, fold):
        assert raised(tg, program) == raised(torch, program)
        if raised(torch, program) is None:
            assert program(tg) == program(torch)


@pytest.mark.parametrize("shape", [(1, 4), (4,), (1, 1, 1, 4, 4), (0, 4, 4), (1, 0, 4, 4), (0, 1, 4, 4), (1, 1, 4, 0),
                                   (2, 1, 4, 4)])
def test_unfold_input_dims(shape):
    def program(lib):
        return tuple(lib.nn.functional.unfold(lib.ones(*shape), 2).shape)

    assert raised(tg, program) == raised(torch, program)
    if raised(torch, program) is None:
        assert program(tg) == program(torch)
