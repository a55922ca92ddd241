"""``Tensor.copy_`` (and ``torch._foreach_copy_``) from a source that broadcasts with the destination only to a larger
shape: torch's RuntimeError "output with shape [...] doesn't match the broadcast shape [...]", not NumPy's
ValueError (foreach Rprop copies the gradients into its ``prev`` state so)."""

from __future__ import annotations

import pytest
from _lib import raised, tg, torch

PAIRS = [((1,), (3,)), ((2, 1), (3,)), ((2, 1), (2, 3)), ((1, 3), (2, 1)), ((1,), (2, 1)), ((), (2,)), ((3,), (4,)),
         ((2, 3), (3,)), ((2, 3), (1, 3))]


@pytest.mark.parametrize("foreach", [False, True], ids=["copy_", "_foreach_copy_"])
@pytest.mark.parametrize(("dst", "src"), PAIRS, ids=[f"{d}<-{s}" for d, s in PAIRS])
def test_copy_into_a_shape_the_source_does_not_broadcast_to(dst, src, foreach):
    def run(lib):
        target, source = lib.zeros(dst), lib.arange(1.0, 1.0 + lib.ones(src).numel()).reshape(src)
        if foreach:
            lib._foreach_copy_([target], [source])
        else:
            target.copy_(source)
        return target.tolist(), target._version

    def outcome(lib):
        return raised(lib, run) or run(lib)

    assert outcome(tg) == outcome(torch)
