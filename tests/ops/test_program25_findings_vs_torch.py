"""Differences that the programs of ``tests/test_user_programs25_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``index_add_`` with an index out of range, on a tensor of two or more dims, always said "RuntimeError: index 7 is
  out of bounds for dimension 0 with size 4" (scatter_add_'s words); torch says so only where its CPU kernel hands
  the work to scatter_add_ (the first or last dim, alpha 1, an int64 index) and raises "IndexError: index out of
  range in self" from its own loop otherwise (an alpha, an int32 index, a middle dim); on a tensor with no elements
  torch returns before it reads the index, where tracegrad raised NumPy's "out of bounds for axis 0";
- the rows ``index_add_`` adds before it meets the bad index stay added in torch (a notebook's next cell shows
  them); tracegrad left the tensor as it was. scatter_add_'s loop along the last dim writes only the first line, and
  it writes nothing in half or bfloat16 (added through a float buffer).
"""

from __future__ import annotations

import pytest
from _lib import tg, torch

BAD = [1, 2, 7, 0]  # the third index is out of range for a dim of 4


def _target_and_outcome(lib, target, call):
    """``call(target)``'s error (type and message) or None, and the target's values afterwards."""
    try:
        call(target)
        error = None
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        error = (type(e).__name__, str(e))
    return error, target.to(lib.float64).tolist()


CASES = {
    "1d": ((4,), "float32", lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4))),
    "1d-alpha": ((4,), "int64", lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, dtype=t.int64), alpha=3)),
    "1d-negative": ((4,), "float32", lambda t, x: x.index_add_(0, t.tensor([0, -1]), t.ones(2))),
    "0d": ((), "float32", lambda t, x: x.index_add_(0, t.tensor([1]), t.ones(()))),
    "2d-dim0": ((4, 2), "float32", lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2))),
    "2d-dim0-double": ((4, 2), "float64", lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2).double())),
    "2d-dim0-int32-values": ((4, 2), "int32",
                             lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2, dtype=t.int32))),
    "2d-dim0-bool": ((4, 2), "bool", lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2, dtype=t.bool))),
    "2d-dim1": ((2, 4), "float32", lambda t, x: x.index_add_(1, t.tensor(BAD), t.ones(2, 4))),
    "2d-dim-1": ((2, 4), "float32", lambda t, x: x.index_add_(-1, t.tensor(BAD), t.ones(2, 4))),
    "2d-alpha": ((4, 2), "float32", lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2), alpha=2)),
    "2d-alpha-1.0": ((4, 2), "float32", lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2), alpha=1.0)),
    "2d-int32-index": ((4, 2), "float32",
                       lambda t, x: x.index_add_(0, t.tensor(BAD, dtype=t.int32), t.ones(4, 2))),
    "2d-half": ((4, 2), "float16", lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2, dtype=t.half))),
    "2d-half-dim1": ((2, 4), "float16", lambda t, x: x.index_add_(1, t.tensor(BAD), t.ones(2, 4, dtype=t.half))),
    "2d-half-alpha": ((4, 2), "float16",
                      lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2, dtype=t.half), alpha=2)),
    "2d-bfloat16": ((4, 2), "bfloat16",
                    lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2, dtype=t.bfloat16))),
    "2d-bfloat16-alpha": ((4, 2), "bfloat16",
                          lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2, dtype=t.bfloat16), alpha=2)),
    "3d-middle": ((2, 4, 2), "float32", lambda t, x: x.index_add_(1, t.tensor(BAD), t.ones(2, 4, 2))),
    "3d-last": ((2, 2, 4), "float32", lambda t, x: x.index_add_(2, t.tensor(BAD), t.ones(2, 2, 4))),
    "3d-first": ((4, 2, 2), "float32", lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 2, 2))),
    "2d-empty-rows": ((4, 0), "float32", lambda t, x: x.index_add_(0, t.tensor(BAD), t.ones(4, 0))),
    "2d-negative": ((4, 2), "float32", lambda t, x: x.index_add_(0, t.tensor([0, -1]), t.ones(2, 2))),
    "2d-transposed-self": ((4, 2), "float32", lambda t, x: x.t().index_add_(1, t.tensor(BAD), t.ones(2, 4))),
}


@pytest.mark.parametrize("name", CASES)
def test_index_add_out_of_range_error_and_rows_written(name):
    shape, dtype, call = CASES[name]
    ours, theirs = (_target_and_outcome(lib, lib.zeros(shape, dtype=getattr(lib, dtype)),
                                        lambda x, lib=lib: call(lib, x)) for lib in (tg, torch))
    assert ours == theirs


def test_out_of_place_index_add_raises_as_the_in_place_one():
    outcomes = []
    for lib in (tg, torch):
        try:
            lib.zeros(4, 2).index_add(0, lib.tensor(BAD), lib.ones(4, 2), alpha=2)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]


def test_a_failed_index_add_leaves_no_graph_behind():
    results = []
    for lib in (tg, torch):
        base = lib.zeros(4, 2, requires_grad=True).clone()
        try:
            base.index_add_(0, lib.tensor(BAD), lib.ones(4, 2, requires_grad=True))
        except IndexError:
            pass
        except RuntimeError:
            pass
        results.append((base.grad_fn.name(), base.detach().tolist()))
    assert results[0] == results[1]
