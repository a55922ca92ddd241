"""Review of einsum's right-operand-first product, the writes into expanded tensors and the other findings of
``tests/ops/test_program16_findings_vs_torch.py``, compared with torch:

- einsum checked every operand's dtype against the first one up front; torch has no check of its own: its bmm
  refuses mixed dtypes in the order ``sumproduct_pair`` hands it the operands (``"ij,jk->ki"``: the right one
  first, so the dtypes are named the other way round), and a product without contracted dims is a ``mul``, which
  promotes (``einsum("i,j->ij", float, double)`` is a double);
- the deprecation warning of a write into an expanded tensor was shown at a line inside tracegrad; torch's
  TORCH_WARN shows it at the user's line;
- histc of bfloat16 data holding a NaN printed its range as ``[-nan, -nan]``: bfloat16's extrema come back
  rounded from float, with the canonical NaN, sign bit clear;
- meshgrid checked the indexing before the dtypes, and the dims before swapping the first two tensors for 'xy';
- as_strided_scatter leaked NumPy's ValueError for sizes and strides of different lengths, and wrote past the
  end of its copy (heap corruption) for a geometry beyond the storage.
"""

from __future__ import annotations

import inspect
import warnings

import pytest
from _lib import tg, torch

NAN = float("nan")


def _outcome(program, lib):
    try:
        result = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    results = result if isinstance(result, tuple) else (result,)
    return tuple((str(r.dtype), tuple(r.shape), r.tolist()) if isinstance(r, lib.Tensor) else str(r) for r in results)


def _same(program) -> None:
    assert _outcome(program, tg) == _outcome(program, torch)


EINSUM_DTYPES = {
    "right operand first, refused": lambda t: t.einsum("ij,jk->ki", t.ones(2, 3), t.ones(3, 4, dtype=t.float64)),
    "left operand first, refused": lambda t: t.einsum("ij,jk->ik", t.ones(2, 3), t.ones(3, 4, dtype=t.float64)),
    "batched, right first": lambda t: t.einsum("bij,bjk->bki", t.ones(2, 2, 3, dtype=t.bfloat16), t.ones(2, 3, 4)),
    "outer product promotes": lambda t: t.einsum("i,j->ji", t.ones(2), t.ones(3, dtype=t.float64)),
    "elementwise promotes": lambda t: t.einsum("i,i->i", t.ones(2, dtype=t.int64), t.ones(2)),
    "three operands, mul then bmm": lambda t: t.einsum("i,i,i->", t.ones(2), t.ones(2, dtype=t.int64), t.ones(2)),
    "parse error before dtypes": lambda t: t.einsum("ij,jk->kq", t.ones(2, 3), t.ones(3, 4, dtype=t.float64)),
}


@pytest.mark.parametrize("program", EINSUM_DTYPES.values(), ids=EINSUM_DTYPES.keys())
def test_einsum_mixed_dtypes_as_torch(program):
    _same(program)


def test_einsum_mixed_dtypes_gradients_as_torch():
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, -1.0, 0.5], dtype=lib.float64, requires_grad=True)
        y = lib.einsum("i,j->ji", a, b)
        y.backward(lib.ones_like(y))
        return str(y.dtype), y.tolist(), str(a.grad.dtype), a.grad.tolist(), b.grad.tolist()

    assert run(tg) == run(torch)


def _write_index(x, lib):
    x[lib.tensor([0, 2])] = 5.0


def _write_mask(x, lib):
    x[x > 1] = 7.0


def _masked_fill(x, lib):
    x.masked_fill_(lib.tensor([True, False, True]), -1.0)


def _index_fill(x, lib):
    x.index_fill_(1, lib.tensor([1]), 9.0)


def _index_put(x, lib):
    x.index_put_((lib.tensor([0, 1]), lib.tensor([2, 0])), lib.tensor([5.0, 6.0]), accumulate=True)


@pytest.mark.parametrize("write", [_write_index, _write_mask, _masked_fill, _index_fill, _index_put])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_expanded_write_warns_at_the_users_line(write, requires_grad):
    """Every warning's text, category and place (this file, the writing line), and the values written."""
    line = inspect.getsourcelines(write)[1] + 1

    def run(lib):
        base = lib.arange(3.0, requires_grad=requires_grad)
        x = (base * 1).unsqueeze(0).expand(4, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            write(x, lib)
        said = [(w.category, str(w.message).split(" (Triggered")[0], w.filename, w.lineno) for w in caught]
        return said, x.tolist()

    said, values = run(tg)
    assert (said, values) == run(torch)
    assert said and all(filename == __file__ and lineno == line for _, _, filename, lineno in said)


def test_expanded_write_warns_at_the_users_line_in_inference_mode():
    def run(lib):
        with lib.inference_mode(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x = lib.zeros(1, 3).expand(2, 3)
            x.masked_fill_(lib.tensor([True, False, True]), 2.0)
        return [(w.filename, w.lineno) for w in caught], x.tolist()

    assert run(tg) == run(torch)


OTHER = {
    "histc of bfloat16 with a NaN": lambda t: t.histc(t.tensor([1.0, NAN, 2.0], dtype=t.bfloat16)),
    "histc of one negated bfloat16 NaN": lambda t: t.histc(-t.tensor([NAN], dtype=t.bfloat16)),
    "histc of half with a NaN": lambda t: t.histc(t.tensor([1.0, NAN], dtype=t.half)),
    "meshgrid: dtypes before the indexing": lambda t: t.meshgrid(t.ones(2), t.ones(2, dtype=t.int64), indexing="zz"),
    "as_strided_scatter, lengths differ": lambda t: t.as_strided_scatter(t.arange(6.0), t.ones(2, 3), (2, 3), (3,)),
    "as_strided_scatter, negative offset": lambda t: t.as_strided_scatter(t.arange(6.0), t.ones(2), (2,), (1,), -1),
    "as_strided_scatter past the storage": lambda t: t.as_strided_scatter(t.arange(6.0), t.ones(2, 4), (2, 4),
                                                                          (3, 1)),
    "as_strided_scatter, offset past the storage": lambda t: t.as_strided_scatter(t.arange(6.0), t.ones(2), (2,),
                                                                                  (1,), 5),
    "as_strided_scatter within": lambda t: t.as_strided_scatter(t.arange(6.0), t.ones(2), (2,), (2,), 1),
}


@pytest.mark.parametrize("program", OTHER.values(), ids=OTHER.keys())
def test_other_review_findings_as_torch(program):
    _same(program)


def test_meshgrid_xy_names_the_tensor_it_checks_first_as_torch():
    """'xy' swaps the first two tensors before checking their dims: the second one is the one named."""
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor") as caught:
            lib.meshgrid(lib.full((2, 2), 7.0), lib.full((3, 3), 2.0), indexing="xy")
        assert "2" in str(caught.value) and "7" not in str(caught.value)
