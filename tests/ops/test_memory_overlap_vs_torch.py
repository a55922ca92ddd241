"""Writes into a tensor that shares memory with an input: refused, or allowed, as PyTorch decides.

Pointwise (TensorIterator) operators refuse partial overlap and allow the full one; indexing and joining
operators refuse any overlap; linear algebra, reductions and ``masked_scatter_`` do not check. Where PyTorch
allows an overlap whose result depends on its loop order, only the fact that both libraries run is compared.
"""

from __future__ import annotations

import pytest

from tests._lib import raised, tg, torch


def _cases(lib):
    def a():
        return lib.arange(6.)

    i2 = lib.tensor([0, 1])
    mask = lib.tensor([True, False, True, False, True, False])
    return {
        # pointwise, in place and out=
        "mul_ partial": lambda: (lambda x: x[:4].mul_(x[2:]))(a()),
        "add_ partial": lambda: (lambda x: x[:4].add_(x[2:]))(a()),
        "lerp_ partial": lambda: (lambda x: x[:4].lerp_(x[2:], 0.5))(a()),
        "addcmul_ partial": lambda: (lambda x: x[:4].addcmul_(x[2:], x[1:5]))(a()),
        "pow_ partial": lambda: (lambda x: x[:4].pow_(x[2:]))(a()),
        "clamp_ partial": lambda: (lambda x: x[:4].clamp_(x[2:]))(a()),
        "div_ transposed": lambda: (lambda x: x.div_(x.t()))(lib.ones(3, 3) + 1),
        "add_ transposed 2x2": lambda: (lambda x: x.add_(x.t()))(lib.arange(4.).view(2, 2)),
        "add out partial": lambda: (lambda x: lib.add(x[2:], 1, out=x[:4]))(a()),
        "exp out partial": lambda: (lambda x: lib.exp(x[1:], out=x[:5]))(a()),
        "neg out transposed": lambda: (lambda x: lib.neg(x, out=x.t()))(lib.ones(3, 3)),
        "cumsum out partial": lambda: (lambda x: lib.cumsum(x[1:], 0, out=x[:5]))(a()),
        "copy_ partial": lambda: (lambda x: x[:4].copy_(x[2:]))(a()),
        "copy_ transposed": lambda: (lambda x: x.copy_(x.t()))(lib.arange(4.).view(2, 2)),
        "setitem slice": lambda: (lambda x: x.__setitem__(slice(0, 4), x[2:]))(a()),
        # indexing and joining: any overlap
        "index_add_ full": lambda: (lambda x: x.index_add_(0, lib.arange(6), x))(a()),
        "index_add_ partial": lambda: (lambda x: x[:4].index_add_(0, i2, x[2:4]))(a()),
        "index_copy_ full": lambda: (lambda x: x.index_copy_(0, lib.arange(6), x))(a()),
        "scatter_ full": lambda: (lambda x: x.scatter_(0, lib.arange(6), x))(a()),
        "scatter_add_ full": lambda: (lambda x: x.scatter_add_(0, lib.arange(6), x))(a()),
        "put_ partial": lambda: (lambda x: x[:4].put_(i2, x[3:5]))(a()),
        "index_put_ full": lambda: (lambda x: x.index_put_((lib.arange(6),), x))(a()),
        "setitem advanced": lambda: (lambda x: x.__setitem__(i2, x[1:3]))(a()),
        "cat out": lambda: (lambda x: lib.cat([x[:3], x[3:]], out=x))(a()),
        "cat out same": lambda: (lambda x: lib.cat([x], out=x))(a()),
        "stack out": lambda: (lambda x: lib.stack([x[:3], x[3:]], out=x.view(2, 3)))(a()),
        "gather out": lambda: (lambda x: lib.gather(x, 0, lib.tensor([1, 0]), out=x[:2]))(a()),
        "index_select out": lambda: (lambda x: lib.index_select(x, 0, i2, out=x[1:3]))(a()),
        # allowed
        "mul_ itself": lambda: (lambda x: x.mul_(x))(a()),
        "add_ two transposed views": lambda: (lambda x: x.t().add_(x.t()))(lib.arange(6.).view(2, 3)),
        "exp out itself": lambda: (lambda x: lib.exp(x, out=x))(a()),
        "cumsum out itself": lambda: (lambda x: lib.cumsum(x, 0, out=x))(a()),
        "copy_ itself": lambda: (lambda x: x.copy_(x))(a()),
        "copy_ disjoint": lambda: (lambda x: x[:3].copy_(x[3:]))(a()),
        "strided (not dense)": lambda: (lambda x: x[::2].add_(x[1::2]))(a()),
        "masked_fill_ tensor value": lambda: (lambda x: x[:4].masked_fill_(mask[:4], x[2]))(a()),
        "fill_ tensor value": lambda: (lambda x: x[:4].fill_(x[4]))(a()),
        "addmm_ itself": lambda: (lambda x: x.addmm_(x, x))(lib.eye(2) + 1),
        "mm out itself": lambda: (lambda x: lib.mm(x, x, out=x))(lib.eye(2) + 1),
        "masked_scatter_ itself": lambda: (lambda x: x.masked_scatter_(mask, x))(a()),
        "sum out partial": lambda: (lambda x: lib.sum(x.view(2, 3), 0, out=x[1:4]))(a()),
    }


@pytest.mark.parametrize("name", list(_cases(torch)))
def test_overlapping_writes_as_in_torch(name):
    ours, theirs = raised(tg, lambda lib: _cases(lib)[name]()), raised(torch, lambda lib: _cases(lib)[name]())
    assert ours == theirs


def test_broadcast_errors_fold_the_operands_in_order_as_in_torch():
    def calls(lib):
        return [lambda: lib.where(lib.ones(3) > 0, lib.ones(3), lib.zeros(2, 2)),
                lambda: lib.where(lib.ones(2, 1) > 0, lib.ones(3), lib.ones(4, 1)),
                lambda: lib.addcmul(lib.ones(3), lib.ones(2, 1), lib.ones(4)),
                lambda: lib.lerp(lib.ones(3), lib.ones(2, 3), lib.ones(4, 1)),
                lambda: lib.clamp(lib.ones(3), lib.ones(2, 1), lib.ones(5))]

    for ours, theirs in zip(calls(tg), calls(torch), strict=True):
        assert raised(tg, lambda _, call=ours: call()) == raised(torch, lambda _, call=theirs: call())


def test_where_with_out_takes_tensors_only():
    """Only ``where.self_out`` takes ``out=``: a number for ``input`` or ``other`` is refused by torch's parser."""
    def calls(lib):
        a = lib.arange(6.)
        return [lambda: lib.where(a > 2, a, 0., out=lib.empty(6)), lambda: lib.where(a > 2, 1, a, out=lib.empty(6)),
                lambda: lib.where(a > 2, 1., 0., out=lib.empty(6))]

    for ours, theirs in zip(calls(tg), calls(torch), strict=True):
        assert raised(tg, lambda _, call=ours: call()) == raised(torch, lambda _, call=theirs: call()) is not None
