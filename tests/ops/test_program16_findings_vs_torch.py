"""Differences that the programs of ``tests/test_user_programs16_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``einsum`` of two operands whose output puts the right operand's dims before the left one's (``"ij,jk->ki"``)
  gave a transposed view where torch 2.13's ``sumproduct_pair`` multiplies the right operand first and gives a
  contiguous result (other strides, another graph); its parser refused a stray or second ``.`` as an invalid
  subscript (torch: "found '.' for operand 0 that is not part of any ellipsis" / "for which an ellipsis was
  already found"), named the wrong index for a bad character after a second ``->``, and worded ellipsis dims that
  do not broadcast as an ordinary subscript's;
- ``index_put_``, ``masked_fill_`` and ``index_fill_`` into an expanded tensor (``x[idx] = v`` on an
  ``expand``) were refused as an internal overlap; torch writes, with a deprecation warning per call (a mask
  assignment warns for index_put_ and then masked_fill_), and ``masked_fill_``/``index_fill_`` then wrote back
  the positions they left alone (every shared element must end up filled);
- ``torch.result_type`` of two numbers (``result_type(2, 3.0)``, or ``scalar1=``/``scalar2=``) was refused;
- ``torch.unique`` counted every NaN as one value (NumPy's ``equal_nan``); torch keeps each NaN apart;
- ``as_strided`` with sizes and strides of different lengths, a negative storage offset or a negative size leaked
  NumPy's ValueErrors; ``tril_indices``/``triu_indices`` of a negative size too (torch: "row must be
  non-negative, got-1"); ``meshgrid`` checked a 2-d tensor before the dtypes (torch: dtypes first);
- ``histc`` of data holding a NaN (no range given) printed its range as ``[nan, nan]``; torch's aminmax makes the
  NaN with its sign bit set ("[-nan, -nan]") unless there is a single element.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch
from _tutorial_lib import normalised

NAN = float("nan")


def _outcome(program, lib) -> tuple:
    """What ``program(lib)`` gives (tensors by dtype, shape, strides and values; anything else by its text) or
    its error, with the warnings raised on the way."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = program(lib)
            results = result if isinstance(result, tuple) else (result,)
            seen = tuple((str(r.dtype), tuple(r.shape), r.stride(), repr(r.tolist())) if isinstance(r, lib.Tensor)
                         else str(r) for r in results)
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            seen = (type(exc).__name__, str(exc))
    said = [str(w.message).split(" (Triggered internally at")[0] for w in caught]
    return normalised(str(seen)), said


def _same(program) -> None:
    assert _outcome(program, tg) == _outcome(program, torch)


def _graph(fn) -> list:
    """A node's name and the names below it, depth first."""
    return [] if fn is None else [fn.name(), *(n for f, _ in fn.next_functions for n in _graph(f))]


EINSUM_LAYOUTS = [
    ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("bij,bjk->bki", [(5, 2, 3), (5, 3, 4)]),
    ("bij,bjk->kbi", [(5, 2, 3), (5, 3, 4)]),
    ("ijl,jk->kil", [(2, 3, 5), (3, 4)]),
    ("ijl,jk->lki", [(2, 3, 5), (3, 4)]),
    ("ij,jkl->kil", [(2, 3), (3, 4, 5)]),
    ("j,ij->i", [(3,), (2, 3)]),
]


@pytest.mark.parametrize(("equation", "shapes"), EINSUM_LAYOUTS, ids=[e for e, _ in EINSUM_LAYOUTS])
def test_einsum_result_layout_and_graph_as_torch(equation, shapes):
    def run(lib):
        operands = [lib.arange(float(lib.Size(s).numel())).reshape(s).requires_grad_() for s in shapes]
        result = lib.einsum(equation, *operands)
        return result.stride(), result.is_contiguous(), _graph(result.grad_fn), result.tolist()

    assert run(tg) == run(torch)


EINSUM_REFUSALS = {
    "stray dot": lambda t: t.einsum("i.j", t.ones(2, 3)),
    "second ellipsis": lambda t: t.einsum("i...j...", t.ones(2, 3)),
    "second ellipsis, sublists": lambda t: t.einsum(t.ones(2, 2), [Ellipsis, Ellipsis]),
    "stray dot in the output": lambda t: t.einsum("ij->i.", t.ones(2, 3)),
    "two output ellipses": lambda t: t.einsum("...ij->......", t.ones(2, 3)),
    "second arrow": lambda t: t.einsum("ij->j->i", t.ones(2, 3)),
    "digit after spaces": lambda t: t.einsum(" i j -> j 1", t.ones(2, 3)),
    "ellipses not broadcasting": lambda t: t.einsum("i...j,jk->ik", t.ones(2, 3), t.ones(3, 2)),
    "batch ellipses not broadcasting": lambda t: t.einsum("...ij,...jk", t.ones(2, 2, 3), t.ones(3, 3, 4)),
    "implicit output, mixed case": lambda t: t.einsum("Ba,ab", t.ones(2, 3), t.ones(3, 2)).shape,
}


@pytest.mark.parametrize("program", EINSUM_REFUSALS.values(), ids=EINSUM_REFUSALS.keys())
def test_einsum_parses_and_refuses_as_torch(program):
    _same(program)


def _expanded(lib, *shape):
    return lib.zeros(shape[-1]).expand(*shape)


def _assigned(x, key, value):
    x[key] = value
    return x


EXPANDED_WRITES = {
    "index_put_": lambda t: _expanded(t, 2, 2).index_put_((t.tensor([0]),), t.ones(2)),
    "index_put_ accumulate": lambda t: _expanded(t, 2, 2).index_put_((t.tensor([0, 1]),), t.ones(2),
                                                                      accumulate=True),
    "setitem by index": lambda t: _assigned(_expanded(t, 3, 2), t.tensor([1]), 5.0),
    "setitem by two indices": lambda t: _assigned(_expanded(t, 3, 2), (t.tensor([1]), t.tensor([0])), 5.0),
    "setitem by mask": lambda t: _assigned(_expanded(t, 3, 2), t.ones(3, 2) > 0, 5.0),
    "masked_fill_": lambda t: t.zeros(2, 1).expand(2, 2).masked_fill_(t.tensor([True, False]), 2.0),
    "masked_fill_ tensor value": lambda t: t.zeros(2, 1).expand(2, 2).masked_fill_(t.tensor([True, False]),
                                                                                   t.tensor(2.0)),
    "index_fill_": lambda t: _expanded(t, 2, 2).index_fill_(0, t.tensor([0]), 2.0),
    "index_fill_ along the shared dim": lambda t: t.zeros(2, 1).expand(2, 2).index_fill_(1, t.tensor([0]), 2.0),
    "index_copy_ still refused": lambda t: _expanded(t, 2, 2).index_copy_(0, t.tensor([0]), t.ones(1, 2)),
}


@pytest.mark.parametrize("program", EXPANDED_WRITES.values(), ids=EXPANDED_WRITES.keys())
def test_writes_into_expanded_tensors_warn_as_torch(program):
    _same(program)


OTHER_FINDINGS = {
    "result_type of two numbers": lambda t: (t.result_type(2, 3.0), t.result_type(True, 2), t.result_type(1j, 2)),
    "result_type by scalar keywords": lambda t: t.result_type(scalar1=1, scalar2=2.0),
    "unique with NaNs": lambda t: t.unique(t.tensor([2.0, NAN, 1.0, NAN]), return_inverse=True,
                                           return_counts=True),
    "unique of NaNs alone": lambda t: t.unique(t.tensor([NAN, NAN], dtype=t.float64), return_counts=True),
    "unique with NaNs, unsorted": lambda t: t.tensor([NAN, 1.0, NAN], dtype=t.half).unique(sorted=False),
    "as_strided, lengths differ": lambda t: t.as_strided(t.arange(5.0), (2, 2), (1,)),
    "as_strided, negative offset": lambda t: t.as_strided(t.arange(5.0), (2,), (1,), -1),
    "as_strided, negative size": lambda t: t.arange(5.0).as_strided((-1,), (1,)),
    "tril_indices, negative row": lambda t: t.tril_indices(-1, 3),
    "triu_indices, negative col": lambda t: t.triu_indices(3, -3),
    "meshgrid checks dtypes first": lambda t: t.meshgrid(t.ones(2, 2), t.arange(2), indexing="ij"),
    "histc of data with a NaN": lambda t: t.histc(t.tensor([1.0, NAN]), bins=3),
    "histc of a negated NaN": lambda t: t.histc(-t.tensor([1.0, 2.0, NAN], dtype=t.float64), bins=3),
    "histc of one NaN": lambda t: t.histc(t.tensor([NAN]), bins=3),
}


@pytest.mark.parametrize("program", OTHER_FINDINGS.values(), ids=OTHER_FINDINGS.keys())
def test_other_findings_as_torch(program):
    _same(program)
