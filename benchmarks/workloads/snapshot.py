"""Workload 8: snapshotting a 5,000-node autograd graph (issue 3: under 200 ms).

The graph is 2,500 repetitions of ``h = (h * w[i % 10]).sin()`` on an (8,) tensor: 5,000 function nodes,
each with saved tensors, plus ten shared weight leaves, so every part of the snapshot (walk, saved-tensor
inspection, storage identity, memory totals, collapse into "× N" groups) does real work. The graph is built
once, outside the clock. Only tracegrad has snapshots; the target is absolute, so the baseline is a
"budget" bench that spins for exactly the 200 ms of CPU time allowed (the harness times CPU time by default,
which a sleep would not use); a ratio ≤ 1.0 means under budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType

from benchmarks.harness import Bench
from benchmarks.libs import SUBJECT
from benchmarks.spec import Context, Row, Target, Workload

N_REPEATS = 2500  # two nodes each
BUDGET_S = 0.2
BUDGET = "budget 200 ms"


def build_graph(lib: ModuleType):
    x = lib.randn(8, requires_grad=True)
    ws = [lib.randn(8, requires_grad=True) for _ in range(10)]
    h = x
    for i in range(N_REPEATS):
        h = (h * ws[i % 10]).sin()
    return h


SNAPSHOTS: dict[str, str] = {
    "graph_snapshot": "viz.graph_snapshot(h)",
    "graph_snapshot, no collapse": "viz.graph_snapshot(h, collapse=False)",
    "saved_snapshot": "viz.saved_snapshot(h)",
    "memory_snapshot": "viz.memory_snapshot(h)",
}


def _snapshot_bench(lib: ModuleType, stmt: str) -> Callable[[], Bench]:
    def make() -> Bench:
        from tracegrad import viz

        return Bench(stmt=stmt, namespace={"viz": viz, "h": build_graph(lib)})

    return make


def spend_cpu(seconds: float) -> None:
    """Busy-wait until this thread has used ``seconds`` of CPU time (so wall time is at least that)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def _budget() -> Bench:
    return Bench(stmt="spend_cpu(budget)", namespace={"spend_cpu": spend_cpu, "budget": BUDGET_S})


def _rows(ctx: Context) -> list[Row]:
    subject = ctx.get(SUBJECT)
    if subject is None:
        return []
    return [Row("5,000 nodes", name, {SUBJECT: _snapshot_bench(subject.module, stmt), BUDGET: _budget},
                Target(SUBJECT, BUDGET, 1.0, "issue 3 (< 200 ms)"))
            for name, stmt in SNAPSHOTS.items()]


SNAPSHOT = Workload(
    key="snapshot",
    title="8. Snapshot of a 5,000-node graph with saved tensors",
    description="graph_snapshot (with and without collapse), saved_snapshot and memory_snapshot of a chain of "
                "2,500 (mul, sin) pairs with saved tensors and shared weight leaves; the baseline spends "
                "the 200 ms budget of CPU time.",
    unit="ms",
    per="snapshot",
    max_repeats=5,
    rows=_rows,
)
