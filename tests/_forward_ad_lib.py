"""Comparing forward-AD programs with torch: ``program(lib, dual)`` runs inside a dual level of each library and
the outcome (the tangent it returns, or its error and warnings) must be torch's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _lib import tg, torch
from _mistakes_lib import outcome, same
from _tutorial_lib import TORCH_INTERNAL_WARNINGS


def in_dual_level(program: Callable, primal_shift: float = 0.0, tangent_shift: float = 0.0) -> Callable:
    """``program(lib, dual)`` as a one-library program run inside a dual level, ``dual(*shape)`` making seeded
    float64 dual tensors (uniform in [0, 1) plus the shifts); its result is the tangent of what the program returns
    (or that itself where it is no tensor)."""

    def run(lib: Any) -> Any:
        fwAD = lib.autograd.forward_ad
        lib.manual_seed(22)

        def dual(*shape):
            primal = lib.rand(*shape, dtype=lib.float64) + primal_shift
            return fwAD.make_dual(primal, lib.rand(*shape, dtype=lib.float64) + tangent_shift)

        with fwAD.dual_level():
            result = program(lib, dual)
            if isinstance(result, lib.Tensor):
                return fwAD.unpack_dual(result).tangent
            return result

    return run


def assert_outcome_as_torch(run: Callable) -> None:
    """``run(lib)``'s outcome (value, or error and warnings) is torch's, torch's own internal warnings set aside."""
    ours, theirs = outcome(tg, run), outcome(torch, run)
    theirs = theirs[0], [w for w in theirs[1] if not w.startswith(TORCH_INTERNAL_WARNINGS)]
    assert same(ours, theirs), (ours, theirs)


def assert_dual_program_as_torch(program: Callable, primal_shift: float = 0.0, tangent_shift: float = 0.0) -> None:
    """The program's outcome in a dual level is torch's."""
    assert_outcome_as_torch(in_dual_level(program, primal_shift, tangent_shift))
