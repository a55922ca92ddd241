"""Workload 6: backward through a 100,000-node chain of adds on a (1,) tensor.

This is as much a robustness check as a timing: a recursive backward, a recursive graph teardown or a
per-node Python frame shows up here as a RecursionError or a crash long before it shows in a small graph.
Each repeat builds a fresh chain untimed, then times one backward. Building is timed on its own line.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import Bench
from benchmarks.libs import Lib, sync_fn, tensor, to_numpy
from benchmarks.spec import Check, Context, Row, Workload

DEPTH = 100_000


def build_chain(lib: ModuleType, device: str = "cpu", depth: int = DEPTH) -> tuple[Any, Any]:
    """(leaf, output) with output = leaf + 1 + 1 + ... (depth adds of a constant tensor)."""
    x = tensor(lib, np.ones(1, np.float32), device, requires_grad=True)
    one = tensor(lib, np.ones(1, np.float32), device)
    h = x
    for _ in range(depth):
        h = h + one
    return x, h


def deep_backward_bench(lib: ModuleType, device: str = "cpu", depth: int = DEPTH) -> Bench:
    def fresh() -> Callable[[], object]:
        _, out = build_chain(lib, device, depth)
        seed = lib.ones_like(out)
        return lambda: out.backward(seed)

    return Bench(fresh=fresh, units=1)


def deep_build_bench(lib: ModuleType, device: str = "cpu", depth: int = DEPTH) -> Bench:
    return Bench(fresh=lambda: lambda: build_chain(lib, device, depth), units=1)


def _factory(lib: Lib, backward: bool) -> Callable[[], Bench]:
    def make() -> Bench:
        bench = (deep_backward_bench if backward else deep_build_bench)(lib.module, lib.device)
        bench.sync = sync_fn(lib)
        return bench

    return make


def _rows(ctx: Context) -> list[Row]:
    libs = ctx.torchlike()
    return [
        Row(f"{DEPTH:,} adds", "build (forward)", {lib.name: _factory(lib, False) for lib in libs}),
        Row(f"{DEPTH:,} adds", "backward", {lib.name: _factory(lib, True) for lib in libs}),
    ]


def _grad_of(lib: Lib) -> Callable[[], np.ndarray]:
    def run() -> np.ndarray:
        x, out = build_chain(lib.module, lib.device)
        out.backward(lib.module.ones_like(out))
        return np.concatenate([to_numpy(x.grad, lib.device), to_numpy(out, lib.device)])

    return run


def _checks(ctx: Context) -> list[Check]:
    expected: dict[str, Callable[[], np.ndarray]] = {"exact": lambda: np.array([1.0, 1.0 + DEPTH])}
    return [Check("x.grad == 1 and output == 1 + depth",
                  {**expected, **{lib.name: _grad_of(lib) for lib in ctx.torchlike()}}, rtol=0.0, atol=0.0)]


DEEP = Workload(
    key="deep",
    title=f"6. Backward through a {DEPTH:,}-node chain of adds",
    description=f"h = x; h = h + one ({DEPTH:,} times) on a (1,) float32 tensor; one backward per fresh "
                "chain. Time only; torch is the only comparison.",
    unit="ms",
    per="backward",
    max_repeats=7,
    rows=_rows,
    checks=_checks,
)
