"""Differences that the programs of ``tests/test_user_programs3_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``scatter_reduce(..., reduce="max")`` (and ``"min"``, the names ``scatter``'s old ``reduce=`` and most users
  reach for) was refused; ATen reads them as ``"amax"``/``"amin"`` forward, and only its backward refuses them.
- ``cdist`` of a float64 and a float32 batch (k-means on double points with float centroids) promoted; torch's
  kernel reads both as x1's dtype and refuses ("expected scalar type Double but found Float"; through the matrix
  product route, mm's or bmm's words), and neither ``cdist`` nor ``pdist`` computes in half precision.
"""

from __future__ import annotations

import math

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


# ---- cdist / pdist dtypes ------------------------------------------------------------------------------------

_DTYPE_PAIRS = [("float64", "float32"), ("float32", "float64"), ("float16", "float32"), ("float32", "float16"),
                ("float16", "float16")]
_CDIST_SHAPES = {"small": ((5, 2), (3, 2)), "mm route": ((30, 2), (3, 2)), "batched": ((2, 30, 2), (2, 3, 2)),
                 "broadcast batch": ((2, 3, 2), (3, 2)), "no rows": ((0, 2), (3, 2)), "no columns": ((3, 0), (2, 0))}


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                                  "donot_use_mm_for_euclid_dist"])
@pytest.mark.parametrize("shapes", _CDIST_SHAPES)
@pytest.mark.parametrize("dtypes", _DTYPE_PAIRS, ids="-".join)
def test_cdist_reads_both_inputs_as_the_first_ones_dtype(dtypes, shapes, mode):
    def program(lib):
        s1, s2 = _CDIST_SHAPES[shapes]
        x1 = lib.arange(math.prod(s1), dtype=getattr(lib, dtypes[0])).reshape(s1)
        x2 = lib.ones(s2, dtype=getattr(lib, dtypes[1]))
        return lib.cdist(x1, x2, compute_mode=mode)

    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, math.inf])
@pytest.mark.parametrize("shape", [(3, 2), (1, 2), (3, 0)])
def test_pdist_has_no_half_kernel(shape, p):
    def program(lib):
        return lib.pdist(lib.ones(shape, dtype=lib.float16), p)

    assert value_or_error(program, tg) == value_or_error(program, torch)
