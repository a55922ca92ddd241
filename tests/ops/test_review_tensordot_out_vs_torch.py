"""Review of inner through tensordot: tensordot_out, where inner's out= ends, refuses an out= of another dtype."""

from __future__ import annotations

import pytest
import torch

import tracegrad as tg


@pytest.mark.parametrize("call", [
    lambda L, x, o: L.inner(x, x, out=o), lambda L, x, o: L.tensordot(x, x, 1, out=o),
    lambda L, x, o: L.inner(L.ones(2, 3, dtype=x.dtype), x, out=o),
    lambda L, x, o: L.tensordot(L.ones(2, 3, dtype=x.dtype), x, 1, out=o),
])
@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64"])
def test_tensordot_out_dtype_as_torch(call, out_dtype):
    def run(L):
        out = L.zeros(0, dtype=getattr(L, out_dtype))
        try:
            call(L, L.ones(3, dtype=L.float64), out)
        except RuntimeError as e:
            return str(e)
        return out.tolist(), str(out.dtype)

    assert run(tg) == run(torch)
