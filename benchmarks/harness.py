"""Timing harness: interleaved medians over repeats, plus host facts for the results file.

Every row of a workload times each library's variant round-robin (tracegrad, torch, numpy, torch, numpy,
tracegrad, ...) rather than one library after the other, so that drift in the load of a shared machine
hits all of them alike. Ratios are then taken per repeat, between batches that ran next to each other,
and the median of those is reported (see :func:`paired_ratio`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gc
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


def _no_sync() -> None:
    return None


@dataclass
class Bench:
    """One library's variant of one row: what to time, and how.

    Steady mode (the default): ``stmt`` is a single Python statement compiled into a tight loop with
    ``namespace`` as its globals, so the loop adds ~15 ns per call and no extra function call.
    One-shot mode (``fresh`` set): each repeat calls ``fresh()`` untimed to build a new state and times
    the one call it returns; used where the timed work consumes its state (backward frees the graph).
    """

    stmt: str = ""
    namespace: dict[str, Any] = field(default_factory=dict)
    # How many units (ops, steps) one execution of ``stmt`` performs; results are reported per unit.
    units: int = 1
    # Entered around each timed batch, outside the clock: ``lib.no_grad``, an observer, ...
    context: Callable[[], AbstractContextManager[Any]] | None = None
    fresh: Callable[[], Callable[[], object]] | None = None
    # Waits for queued device work before the clock stops; a no-op on CPU (kept for a future cuda device).
    sync: Callable[[], None] = _no_sync


@dataclass(frozen=True)
class TimingConfig:
    repeats: int = 7
    # Time (on `clock`) one timed batch should take; the inner loop count is calibrated to reach it.
    min_time: float = 0.04
    warmup_time: float = 0.05
    # Garbage collection stays on by default: an engine that leaves reference cycles behind should pay
    # for collecting them, as it would in a user's training loop.
    gc_enabled: bool = True
    # "cpu": this thread's CPU time, which does not advance while the scheduler runs someone else, so a
    # busy shared machine inflates it far less than wall time. Everything here runs on the calling thread
    # (BLAS and torch are pinned to one thread). "wall": perf_counter, which a GPU device will need.
    clock: str = "cpu"


@dataclass
class Measurement:
    median_us: float
    min_us: float
    max_us: float
    iqr_rel: float
    samples_us: list[float]
    inner_loops: int
    units: int
    clock: str
    # Median over repeats of CPU time / wall time: well under 1 means the machine was contended.
    cpu_share: float

    def to_json(self) -> dict[str, Any]:
        return {
            "median_us": self.median_us,
            "min_us": self.min_us,
            "max_us": self.max_us,
            "iqr_rel": self.iqr_rel,
            "samples_us": self.samples_us,
            "inner_loops": self.inner_loops,
            "units": self.units,
            "clock": self.clock,
            "cpu_share": self.cpu_share,
        }


_LOOP_TEMPLATE = """
def _bench_loop(_n, _wall, _cpu, _sync):
    _w0 = _wall()
    _c0 = _cpu()
    for _ in range(_n):
        {stmt}
    _sync()
    return _wall() - _w0, _cpu() - _c0
"""

# run(n) -> (wall seconds, thread CPU seconds) for n executions of a bench.
Runner = Callable[[int], tuple[float, float]]


def _compile_loop(bench: Bench) -> Runner:
    if bench.fresh is not None:
        fresh = bench.fresh

        def run_fresh(n: int) -> tuple[float, float]:
            wall = cpu = 0.0
            for _ in range(n):
                fn = fresh()
                w0, c0 = time.perf_counter(), time.thread_time()
                result = fn()
                bench.sync()
                wall += time.perf_counter() - w0
                cpu += time.thread_time() - c0
                # What the call built or kept (a 100k-node graph, say) is torn down here, outside the clock.
                del result, fn
            return wall, cpu

        return run_fresh
    namespace = dict(bench.namespace)
    exec(_LOOP_TEMPLATE.format(stmt=bench.stmt), namespace)  # noqa: S102 - our own statement strings
    loop = namespace["_bench_loop"]
    return lambda n: loop(n, time.perf_counter, time.thread_time, bench.sync)


@contextlib.contextmanager
def _timing_state(bench: Bench, cfg: TimingConfig) -> Iterator[None]:
    gc_was_enabled = gc.isenabled()
    if not cfg.gc_enabled:
        gc.disable()
    try:
        with bench.context() if bench.context is not None else contextlib.nullcontext():
            yield
    finally:
        if gc_was_enabled:
            gc.enable()


def _pick(cfg: TimingConfig, sample: tuple[float, float]) -> float:
    return sample[1] if cfg.clock == "cpu" else sample[0]


def _calibrate(run: Runner, bench: Bench, cfg: TimingConfig) -> int:
    if bench.fresh is not None:
        return 1  # one-shot work is big by construction; each repeat is a single fresh run
    n, elapsed = 1, _pick(cfg, run(1))
    while elapsed < cfg.min_time / 10 and n < 10**8:
        n *= 10
        elapsed = _pick(cfg, run(n))
    return max(1, math.ceil(n * cfg.min_time / max(elapsed, 1e-9)))


def _summarise(samples: list[tuple[float, float]], n: int, units: int, cfg: TimingConfig) -> Measurement:
    us = [_pick(cfg, s) / n / units * 1e6 for s in samples]
    q = statistics.quantiles(us, n=4, method="inclusive") if len(us) >= 2 else [us[0]] * 3
    med = statistics.median(us)
    return Measurement(median_us=med, min_us=min(us), max_us=max(us),
                       iqr_rel=(q[2] - q[0]) / med if med > 0 else 0.0,
                       samples_us=us, inner_loops=n, units=units, clock=cfg.clock,
                       cpu_share=statistics.median(c / w if w > 0 else 1.0 for w, c in samples))


def measure_interleaved(benches: dict[str, Bench], cfg: TimingConfig) -> dict[str, Measurement | str]:
    """Time every bench ``cfg.repeats`` times, round-robin; a failing bench becomes its error string."""
    runs: dict[str, Runner] = {}
    loops: dict[str, int] = {}
    out: dict[str, Measurement | str] = {}
    for name, bench in benches.items():
        try:
            run = _compile_loop(bench)
            with _timing_state(bench, cfg):
                n = _calibrate(run, bench, cfg)
                deadline = time.perf_counter() + cfg.warmup_time
                run(n)
                while time.perf_counter() < deadline and bench.fresh is None:
                    run(n)
            runs[name], loops[name] = run, n
        except Exception as exc:  # noqa: BLE001 - an unfinished engine must not stop the whole suite
            out[name] = describe_error(exc)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for r in range(cfg.repeats):
        # Rotate who goes first, so no library always runs right after another's garbage or cache misses.
        order = list(runs)
        order = order[r % len(order):] + order[:r % len(order)] if order else order
        for name in order:
            if name not in runs:
                continue
            run, bench = runs[name], benches[name]
            try:
                with _timing_state(bench, cfg):
                    samples[name].append(run(loops[name]))
            except Exception as exc:  # noqa: BLE001
                out[name] = describe_error(exc)
                del runs[name]
    for name in runs:
        out[name] = _summarise(samples[name], loops[name], benches[name].units, cfg)
    # Keep the caller's library order.
    return {name: out[name] for name in benches if name in out}


def paired_ratio(a: list[float], b: list[float]) -> float:
    """Median over repeats of a[r] / b[r]: batches timed back to back share the machine's load, so their
    ratio is steadier than the ratio of the two medians. Falls back to that when a run was cut short."""
    if len(a) == len(b) and a:
        return statistics.median(x / y for x, y in zip(a, b))
    return statistics.median(a) / statistics.median(b)


def describe_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 300 else text[:297] + "..."


# ---------------------------------------------------------------------------------------------------------
# Host facts


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> str | None:
    try:
        proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                              text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.strip() or None


def _numpy_blas(np: ModuleType) -> str | None:
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - older NumPy has no dict mode; the BLAS name is only informative
        return None


def host_info(modules: dict[str, ModuleType]) -> dict[str, Any]:
    """What a reader needs to judge the numbers: CPU, versions, threads, load, date."""
    info: dict[str, Any] = {
        "date_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "load_avg_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "python_impl": platform.python_implementation(),
        "thread_env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                      "MKL_NUM_THREADS")},
        "git_commit": _git_commit(),
        "versions": {},
    }
    for name, mod in modules.items():
        info["versions"][name] = getattr(mod, "__version__", None)
    if "numpy" in modules:
        info["numpy_blas"] = _numpy_blas(modules["numpy"])
    if "torch" in modules:
        info["torch_threads"] = modules["torch"].get_num_threads()
    return info
