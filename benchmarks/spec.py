"""The shapes a workload is declared in: rows to time, targets to judge, cross-checks to trust them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.harness import Bench
from benchmarks.libs import Lib


@dataclass(frozen=True)
class Target:
    """``subject`` must take at most ``max_ratio`` times the ``baseline``'s median."""

    subject: str
    baseline: str
    max_ratio: float
    source: str = ""  # where the number comes from (a goal id in engine_anchors.md §5, or the issue)

    def to_json(self) -> dict[str, Any]:
        return {"subject": self.subject, "baseline": self.baseline, "max_ratio": self.max_ratio,
                "source": self.source}


@dataclass
class Row:
    """One line of a workload's table: each library's bench is built lazily so a library that lacks an
    operator fails only its own cell."""

    case: str
    variant: str
    benches: dict[str, Callable[[], Bench]]
    target: Target | None = None


@dataclass
class Check:
    """The same computation in several libraries must agree before their timings are compared."""

    name: str
    values: dict[str, Callable[[], np.ndarray]]
    rtol: float = 1e-4
    atol: float = 1e-5


@dataclass(frozen=True)
class Context:
    libs: tuple[Lib, ...]
    quick: bool = False

    def torchlike(self) -> list[Lib]:
        return [lib for lib in self.libs if lib.torchlike]

    def get(self, name: str) -> Lib | None:
        return next((lib for lib in self.libs if lib.name == name), None)


@dataclass
class Workload:
    key: str
    title: str
    description: str
    unit: str = "µs"
    per: str = "op"  # what one measured unit is: "op", "step", "backward"
    # Caps the repeats for workloads whose single repeat is long (a fresh 100k-node graph each time).
    max_repeats: int | None = None
    rows: Callable[[Context], list[Row]] = field(default=lambda ctx: [])
    checks: Callable[[Context], list[Check]] = field(default=lambda ctx: [])
