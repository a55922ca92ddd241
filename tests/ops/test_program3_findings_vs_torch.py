"""Differences that the programs of ``tests/test_user_programs3_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``scatter_reduce(..., reduce="max")`` (and ``"min"``, the names ``scatter``'s old ``reduce=`` and most users
  reach for) was refused; ATen reads them as ``"amax"``/``"amin"`` forward, and only its backward refuses them.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch, value_or_error

# ---- scatter_reduce's old reduction names --------------------------------------------------------------------


def _scatter(lib, reduce: str, include_self: bool = True, dtype=None, requires_grad: bool = False):
    dtype = dtype or lib.float32
    src = lib.tensor([1.0, 3.0, 2.0, -1.0], dtype=dtype, requires_grad=requires_grad)
    index = lib.tensor([0, 0, 2, 3])
    return lib.zeros(4, dtype=dtype).scatter_reduce(0, index, src, reduce, include_self=include_self), src


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["max", "min", "amax", "foo"])
def test_scatter_reduce_old_reduction_names(reduce, include_self):
    def program(lib):
        return _scatter(lib, reduce, include_self)[0]

    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_scatter_reduce_old_names_in_place_and_refused_dtypes(reduce):
    def in_place(lib):
        return lib.zeros(3).scatter_reduce_(0, lib.tensor([1, 1]), lib.tensor([-2.0, 5.0]), reduce)

    def uint16(lib):
        return _scatter(lib, reduce, dtype=lib.uint16)[0]

    for program in (in_place, uint16):
        assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_scatter_reduce_old_names_have_no_backward(reduce):
    def program(lib):
        out, src = _scatter(lib, reduce, requires_grad=True)
        name = (out.grad_fn.name(), out.grad_fn._saved_reduce)
        try:
            out.sum().backward()
        except RuntimeError as e:
            return name, str(e), src.grad
        return name, None, src.grad

    assert program(tg) == program(torch)


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_scatter_reduce_old_names_have_no_tangent(reduce):
    def program(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            src = fwAD.make_dual(lib.tensor([1.0, 3.0, 2.0]), lib.ones(3))
            out = lib.zeros(3).scatter_reduce(0, lib.tensor([0, 0, 2]), src, reduce)
            primal, tangent = fwAD.unpack_dual(out)
            return primal.tolist(), tangent

    assert program(tg) == program(torch)

