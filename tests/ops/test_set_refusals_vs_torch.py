"""``Tensor.set_`` refuses what torch's refuses: a source tensor of another dtype (a storage, or an offset, size and
stride, are read in the tensor's own dtype), and a leaf that requires grad while grad mode is on."""

from __future__ import annotations

import pytest
import torch

import tracegrad as tg


def _outcome(lib, case: str):
    source = lib.ones(3, dtype=lib.float64)
    calls = {
        "tensor of another dtype": lambda: lib.zeros(2).set_(source),
        "float into long": lambda: lib.zeros(2, dtype=lib.int64).set_(lib.ones(2)),
        "storage of another dtype": lambda: lib.zeros(2).set_(source.untyped_storage()),
        "offset, size and stride": lambda: lib.zeros(2).set_(source, 0, (3,), (1,)),
        "leaf that requires grad": lambda: lib.zeros(2, requires_grad=True).set_(lib.ones(2)),
    }
    try:
        result = calls[case]()
    except RuntimeError as exc:
        return "RuntimeError", str(exc)
    return str(result.dtype), result.tolist()


@pytest.mark.parametrize("case", ["tensor of another dtype", "float into long", "storage of another dtype",
                                  "offset, size and stride", "leaf that requires grad"])
def test_set_refuses_as_torch(case):
    assert _outcome(tg, case) == _outcome(torch, case)


def test_set_on_a_leaf_under_no_grad():
    for lib in (tg, torch):
        x = lib.zeros(2, requires_grad=True)
        with lib.no_grad():
            x.set_(lib.ones(3))
        assert x.tolist() == [1.0, 1.0, 1.0] and x.requires_grad
