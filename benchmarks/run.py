"""Run the benchmark suite: ``python -m benchmarks.run [--libs tracegrad,torch,numpy] [--quick]``.

Prints one table per workload as it finishes and writes ``benchmarks/results/latest.json`` after each
workload, so a crash in a late workload still leaves the earlier numbers on disk. Running it as a module of
the ``benchmarks`` package means ``benchmarks/__init__`` (the thread pinning) runs before NumPy is imported.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import NUMPY_PRELOADED
from benchmarks.harness import (
    Bench,
    Measurement,
    TimingConfig,
    describe_error,
    host_info,
    measure_interleaved,
    paired_ratio,
)
from benchmarks.libs import DEFAULT_LIBS, SUBJECT, load_libs, sync_fn
from benchmarks.spec import Check, Context, Row, Workload
from benchmarks.tables import host_lines, render_text, targets_table, workload_table
from benchmarks.workloads import WORKLOADS

RESULTS_DIR = Path(__file__).resolve().parent / "results"
SCHEMA_VERSION = 1
NOISE_BAND = 1.05

# More, shorter batches pair up better than a few long ones on a machine whose load changes by the second.
FULL = TimingConfig(repeats=11, min_time=0.025, warmup_time=0.05)
QUICK = TimingConfig(repeats=7, min_time=0.005, warmup_time=0.01)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    p.add_argument("--libs", default=",".join(DEFAULT_LIBS),
                   help="comma-separated, in column order (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="short timed batches (~5 ms): a smoke run, noisier")
    p.add_argument("--only", default="", help="comma-separated workload keys: "
                   + ", ".join(w.key for w in WORKLOADS))
    p.add_argument("--repeats", type=int, default=None, help="timed repeats per row (default 11, quick 7)")
    p.add_argument("--no-gc", action="store_true", help="disable the garbage collector while timing")
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                   help="cpu: this thread's CPU time, robust to a busy machine (default); wall: perf_counter")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="cuda: torch-like libraries on the GPU, the hand-written baselines on CuPy, wall clock")
    p.add_argument("--output", type=Path, default=RESULTS_DIR / "latest.json", help="results JSON path")
    return p.parse_args(argv)


def _row_record(row: Row, results: dict[str, Measurement | str], errors: dict[str, str],
                lib_order: list[str], subject_loaded: bool) -> dict[str, Any]:
    cells: dict[str, Any] = {}
    medians: dict[str, float] = {}
    samples: dict[str, list[float]] = {}
    # Besides the libraries, a row may time extra benches (a library's own baseline variant, a fixed budget).
    lib_order = [*lib_order, *(n for n in row.benches if n not in lib_order)]
    for name in lib_order:
        if name in errors:
            cells[name] = {"error": errors[name]}
        elif name in results:
            res = results[name]
            if isinstance(res, str):
                cells[name] = {"error": res}
            else:
                cells[name] = res.to_json()
                medians[name] = res.median_us
                samples[name] = res.samples_us
    measured = [n for n in lib_order if n in medians]
    ratios = {f"{a}/{b}": paired_ratio(samples[a], samples[b])
              for i, a in enumerate(measured) for b in measured[i + 1:]}
    record: dict[str, Any] = {"case": row.case, "variant": row.variant, "results": cells, "ratios": ratios,
                              "target": row.target.to_json() if row.target else None,
                              "target_ratio": None, "status": None}
    if row.target is not None:
        t = row.target
        if t.subject in medians and t.baseline in medians:
            record["target_ratio"] = paired_ratio(samples[t.subject], samples[t.baseline])
            ratio = record["target_ratio"]
            # Identical code measured twice on a busy 2-core machine differs by up to ~5%; say so rather
            # than flip between met and missed from run to run.
            record["status"] = ("met" if ratio <= t.max_ratio else
                                "within 5%" if ratio <= t.max_ratio * NOISE_BAND else "missed")
        elif t.subject in cells:
            record["status"] = "error"
        elif subject_loaded and t.subject in row.benches:
            record["status"] = "not run"
    return record


def _run_check(check: Check) -> dict[str, Any]:
    values: dict[str, np.ndarray] = {}
    errors: dict[str, str] = {}
    for name, fn in check.values.items():
        try:
            values[name] = np.asarray(fn(), dtype=np.float64)
        except Exception as exc:  # noqa: BLE001 - an engine without the op fails its own check only
            errors[name] = describe_error(exc)
    names = list(values)
    ok, max_err = True, 0.0
    if names:
        ref = values[names[0]]
        for name in names[1:]:
            v = values[name]
            if v.shape != ref.shape:
                ok, max_err = False, float("inf")
                continue
            max_err = max(max_err, float(np.max(np.abs(v - ref))) if v.size else 0.0)
            ok = ok and bool(np.allclose(v, ref, rtol=check.rtol, atol=check.atol))
    return {"name": check.name, "compared": names, "ok": ok, "max_abs_err": max_err, "rtol": check.rtol,
            "atol": check.atol, "errors": errors, "values": {k: _recorded(v) for k, v in values.items()}}


_RECORDED_IN_FULL = 64  # (workload 10's check compares 280,000 numbers: 8 MB of JSON in full)


def _recorded(values: np.ndarray) -> Any:
    """A check's values as the results file keeps them: in full where few, else their count, first values and
    sum (enough to tell two runs apart; the comparison itself used them all)."""
    if values.size <= _RECORDED_IN_FULL:
        return values.tolist()
    flat = values.ravel()
    return {"size": int(flat.size), "first": flat[:8].tolist(), "sum": float(flat.sum())}


def run_workload(wl: Workload, ctx: Context, cfg: TimingConfig) -> dict[str, Any]:
    if wl.max_repeats is not None and cfg.repeats > wl.max_repeats:
        cfg = dataclasses.replace(cfg, repeats=wl.max_repeats)
    lib_order = [lib.name for lib in ctx.libs]
    subject_loaded = ctx.get(SUBJECT) is not None
    rows = []
    for row in wl.rows(ctx):
        benches: dict[str, Bench] = {}
        errors: dict[str, str] = {}
        for name, factory in row.benches.items():
            try:
                benches[name] = factory()
            except Exception as exc:  # noqa: BLE001
                errors[name] = describe_error(exc)
                continue
            lib = ctx.get(name)
            if lib is not None and lib.device != "cpu":  # (every bench waits for its GPU work, baselines too)
                benches[name].sync = sync_fn(lib)
        print(f"  {wl.key}: {row.case} / {row.variant}", file=sys.stderr, flush=True)
        measured = measure_interleaved(benches, cfg)
        # Drop the benches (and any graph or model they hold) before the next row is built.
        del benches
        rows.append(_row_record(row, measured, errors, lib_order, subject_loaded))
    extras = [n for r in rows for n in r["results"] if n not in lib_order]
    present = [n for n in [*lib_order, *dict.fromkeys(extras)] if any(n in r["results"] for r in rows)]
    return {"key": wl.key, "title": wl.title, "description": wl.description, "unit": wl.unit, "per": wl.per,
            "repeats": cfg.repeats, "libs": present, "rows": rows,
            "checks": [_run_check(c) for c in wl.checks(ctx)]}


def _cpu_share(results: dict[str, Any]) -> float | None:
    shares = [res["cpu_share"] for wl in results["workloads"] for row in wl["rows"]
              for res in row["results"].values() if "cpu_share" in res]
    return round(statistics.median(shares), 3) if shares else None


def _save(results: dict[str, Any], path: Path) -> None:
    results["cpu_share"] = _cpu_share(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    tmp.replace(path)


def _gpu_name() -> str:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception as exc:  # noqa: BLE001 - a name is only informative
        return f"unknown ({type(exc).__name__})"


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    names = [n.strip() for n in args.libs.split(",") if n.strip()]
    only = {k.strip() for k in args.only.split(",") if k.strip()}
    unknown = only - {w.key for w in WORKLOADS}
    if unknown:
        print(f"unknown workload(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    base = QUICK if args.quick else FULL
    device = args.device
    # (a thread's CPU time says nothing of the GPU's work it waits for)
    clock = "wall" if device == "cuda" else args.clock
    cfg = TimingConfig(repeats=args.repeats or base.repeats, min_time=base.min_time,
                       warmup_time=base.warmup_time, gc_enabled=not args.no_gc, clock=clock)

    libs, notes = load_libs(names, device)
    if NUMPY_PRELOADED:
        notes.append("numpy was imported before the benchmarks package; its thread pinning may not apply")
    if cfg.repeats < 7:
        notes.append(f"only {cfg.repeats} repeats per row (the suite's standard is 7)")
    if not libs:
        print("no library could be loaded: " + "; ".join(notes), file=sys.stderr)
        return 1
    # Everything imported so far (torch alone is ~10^5 objects) leaves the collector's view, so a
    # collection triggered while timing scans what the workload allocated, not the libraries.
    gc.collect()
    gc.freeze()

    ctx = Context(tuple(libs), quick=args.quick)
    results: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "complete": False,
        "host": host_info({lib.name: lib.module for lib in libs} | {"numpy": np}),
        "config": {"libs": [lib.name for lib in libs], "requested_libs": names, "device": device,
                   "quick": args.quick, "repeats": cfg.repeats, "min_time_s": cfg.min_time,
                   "warmup_time_s": cfg.warmup_time, "gc_enabled": cfg.gc_enabled, "clock": cfg.clock,
                   "dtype": "float32",
                   "threads": 1, "only": sorted(only)},
        "notes": notes,
        "workloads": [],
    }
    if device == "cuda":
        results["config"]["gpu"] = _gpu_name()
    print("\n".join(host_lines(results)) + "\n", flush=True)
    started = time.perf_counter()
    for wl in WORKLOADS:
        if only and wl.key not in only:
            continue
        wl_result = run_workload(wl, ctx, cfg)
        results["workloads"].append(wl_result)
        _save(results, args.output)
        print(render_text(workload_table(wl_result, cfg.repeats)) + "\n", flush=True)
    results["complete"] = True
    results["wall_time_s"] = round(time.perf_counter() - started, 1)
    _save(results, args.output)
    targets = targets_table(results)
    if SUBJECT in results["config"]["libs"]:
        print(render_text(targets) + "\n")
    elif targets.rows:
        print(f"targets not judged: {SUBJECT} was not measured\n")
    if results["cpu_share"] is not None:
        share = results["cpu_share"]
        busy = " (a busy machine: read the ratios)" if share < 0.9 else ""
        print(f"CPU share while timing: {share:.0%}{busy}")
    print(f"wrote {args.output} in {results['wall_time_s']} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
