"""Workloads 1 and 5: the eager cost of one tiny op, and the same with the observer switched off.

On shape (16,) the kernel itself is ~0.5 µs of NumPy, so what is measured is the engine's own overhead:
wrapping, grad-mode checks, and (with requires_grad) recording one graph node.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import Bench
from benchmarks.libs import SUBJECT, Lib, sync_fn, tensor
from benchmarks.spec import Context, Row, Target, Workload
from benchmarks.workloads import observe

# op -> (statement for a torch-like lib, statement for the raw NumPy ufunc, input shape)
OPS: dict[str, tuple[str, str, tuple[int, ...]]] = {
    "mul": ("x * y", "np.multiply(x, y)", (16,)),
    "add": ("x + y", "np.add(x, y)", (16,)),
    "sin": ("lib.sin(x)", "np.sin(x)", (16,)),
    "matmul": ("x @ y", "np.matmul(x, y)", (16, 16)),
}

# grad: inputs require grad, so every op records a node.
# plain: inputs do not require grad (nothing to record).
# no_grad(): inputs require grad but the op runs inside ``lib.no_grad()``.
MODES = ("grad", "plain", "no_grad()")

# Targets from engine_anchors.md §5: G1 when recording, G1b without.
PEROP_TARGETS = {
    "grad": Target(SUBJECT, "torch", 1.0, "G1"),
    "plain": Target(SUBJECT, "torch", 1.0, "G1b"),
    "no_grad()": Target(SUBJECT, "torch", 1.0, "G1b"),
}


def _inputs(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32))


def perop_bench(lib: ModuleType, op: str, mode: str, device: str = "cpu",
                context: Callable[[], AbstractContextManager[Any]] | None = None) -> Bench:
    """One op on a torch-like library; ``context`` (an observer, say) wraps the timed loop."""
    stmt, _, shape = OPS[op]
    xa, ya = _inputs(shape)
    rg = mode != "plain"
    ns = {"lib": lib, "x": tensor(lib, xa, device, rg), "y": tensor(lib, ya, device, rg)}
    if mode == "no_grad()":
        if context is not None:
            raise ValueError("no_grad() mode takes no extra context")
        context = lib.no_grad
    return Bench(stmt=stmt, namespace=ns, context=context)


def perop_numpy(xp: ModuleType, op: str) -> Bench:
    _, stmt, shape = OPS[op]
    xa, ya = _inputs(shape)
    return Bench(stmt=stmt, namespace={"np": xp, "x": xp.asarray(xa), "y": xp.asarray(ya)})


def _bench_factory(lib: Lib, op: str, mode: str,
                   context: Callable[[], AbstractContextManager[Any]] | None = None) -> Callable[[], Bench]:
    def make() -> Bench:
        if not lib.torchlike:
            return perop_numpy(lib.module, op)
        bench = perop_bench(lib.module, op, mode, lib.device, context)
        bench.sync = sync_fn(lib)
        return bench

    return make


def _perop_rows(ctx: Context) -> list[Row]:
    rows = []
    for op in OPS:
        for mode in MODES:
            benches = {lib.name: _bench_factory(lib, op, mode) for lib in ctx.torchlike()}
            # The ufunc is the floor for every mode; timed on every line so each row's ratios are taken
            # from one interleaved measurement.
            np_lib = ctx.get("numpy")
            if np_lib is not None:
                benches["numpy"] = _bench_factory(np_lib, op, mode)
            rows.append(Row(op, mode, benches, PEROP_TARGETS[mode]))
    return rows


PEROP = Workload(
    key="perop",
    title="1. Per-op eager overhead, shape (16,) float32",
    description="mul, add, sin on (16,) and matmul on 16x16, one op per call: recording a node "
                "(inputs require grad), on plain tensors, and inside no_grad(). NumPy is the raw ufunc.",
    per="op",
    rows=_perop_rows,
)


# ---------------------------------------------------------------------------------------------------------
# Workload 5: observation overhead. Each mode maps a library to a context manager wrapped around the timed
# loop (None where that library has no observer, e.g. torch); the modes live in observe.py.

ObserverFactory = Callable[[ModuleType], Callable[[], AbstractContextManager[Any]] | None]

def _tracegrad_observer(mode: str) -> ObserverFactory:
    """The mode's context manager for tracegrad (see benchmarks/workloads/observe.py); None elsewhere."""
    return lambda lib: observe.CONTEXTS[mode] if getattr(lib, "__name__", "") == SUBJECT else None


OBSERVERS: dict[str, ObserverFactory] = {mode: _tracegrad_observer(mode) for mode in observe.CONTEXTS}

# The plain recording op of the same library, timed in the same row: the baseline of the no-listener targets.
PLAIN = f"{SUBJECT} plain"
OBSERVER_TARGETS: dict[str, Target] = {
    observe.OFF: Target(SUBJECT, PLAIN, 1.02, "issue 3 (no listener: <= 2 %)"),
    observe.AFTER_LISTENER: Target(SUBJECT, PLAIN, 1.02, "issue 3 (no listener: <= 2 %)"),
}


def _observer_rows(ctx: Context) -> list[Row]:
    rows = []
    for op in OPS:
        for obs_name, obs in OBSERVERS.items():
            benches: dict[str, Callable[[], Bench]] = {}
            for lib in ctx.torchlike():
                # Libraries without this observer are timed plain: the baseline is their ordinary op.
                context = obs(lib.module) if lib.name == SUBJECT else None
                benches[lib.name] = _bench_factory(lib, op, "grad", context)
                if lib.name == SUBJECT and obs_name in OBSERVER_TARGETS:
                    benches[PLAIN] = _bench_factory(lib, op, "grad")
            np_lib = ctx.get("numpy")
            if np_lib is not None:
                benches["numpy"] = _bench_factory(np_lib, op, "grad")
            rows.append(Row(op, f"observer {obs_name}", benches, OBSERVER_TARGETS.get(obs_name)))
    return rows


OBSERVER = Workload(
    key="observer",
    title="5. Per-op overhead of the observer (viz event bus)",
    description="Workload 1's recording ops (inputs require grad) with tracegrad's observer in each mode "
                "(off; off after a listener came and went; one counting subscriber; live mode's recorder and "
                "source tracking); torch and NumPy are timed plain, and the no-listener modes are compared "
                "with tracegrad's plain op timed in the same row.",
    per="op",
    rows=_observer_rows,
)
