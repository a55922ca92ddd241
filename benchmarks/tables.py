"""Results JSON -> tables, rendered as plain text (stdout) or GitHub markdown (README).

Both renderers read only the JSON, so a results file from another machine renders the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmarks.libs import SUBJECT


@dataclass
class Table:
    title: str
    description: str
    headers: list[str]
    rows: list[list[str]]
    right_aligned: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def fmt_time(us: float, unit: str) -> str:
    value = us / 1000.0 if unit == "ms" else us
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def fmt_ratio(r: float | None) -> str:
    return "—" if r is None else f"{r:.2f}×"


def target_text(target: dict[str, Any] | None) -> str:
    if not target:
        return ""
    return f"≤ {target['max_ratio']:.2f}× {target['baseline']}"


def workload_table(wl: dict[str, Any], results_repeats: int | None = None) -> Table:
    libs: list[str] = wl["libs"]
    pairs: list[str] = []
    for row in wl["rows"]:
        for pair in row["ratios"]:
            if pair not in pairs:
                pairs.append(pair)
    has_target = any(row.get("target") for row in wl["rows"])
    headers = ["case", "variant", *libs, *pairs] + (["target", "status"] if has_target else [])
    notes: list[str] = []
    body: list[list[str]] = []
    for row in wl["rows"]:
        cells = [row["case"], row["variant"]]
        for lib in libs:
            res = row["results"].get(lib)
            if res is None:
                cells.append("—")
            elif "error" in res:
                cells.append("error")
                notes.append(f"{lib} on {row['case']} / {row['variant']}: {res['error']}")
            else:
                noisy = res["iqr_rel"] > 0.10
                cells.append(fmt_time(res["median_us"], wl["unit"]) + ("†" if noisy else ""))
        cells += [fmt_ratio(row["ratios"].get(pair)) for pair in pairs]
        if has_target:
            cells += [target_text(row.get("target")), row.get("status") or ""]
        body.append(cells)
    if any(c.endswith("†") for r in body for c in r):
        notes.append("† marks a median whose interquartile range over the repeats exceeds 10%.")
    for check in wl.get("checks", []):
        notes.append(check_text(check))
    unit = f"{wl['unit']} per {wl['per']}"
    if wl.get("repeats") and wl["repeats"] != results_repeats:
        unit += f", median of {wl['repeats']}"
    n_fixed = 2
    right = set(range(n_fixed, n_fixed + len(libs) + len(pairs)))
    return Table(f"{wl['title']} [{unit}]", wl.get("description", ""), headers, body, right, notes)


def check_text(check: dict[str, Any]) -> str:
    if check.get("errors"):
        failed = ", ".join(f"{lib} ({err})" for lib, err in check["errors"].items())
        prefix = f"check '{check['name']}': could not run for {failed}"
        if len(check.get("compared", [])) < 2:
            return prefix
        prefix += "; others "
    else:
        prefix = f"check '{check['name']}': "
    if len(check.get("compared", [])) < 2:
        return prefix + "nothing to compare"
    verdict = "agree" if check["ok"] else "DISAGREE"
    return (f"{prefix}{', '.join(check['compared'])} {verdict} (max abs err {check['max_abs_err']:.1e}, "
            f"rtol {check['rtol']:g}, atol {check['atol']:g})")


def targets_table(results: dict[str, Any]) -> Table:
    body = []
    for wl in results["workloads"]:
        for row in wl["rows"]:
            if row.get("target"):
                number = wl["title"].split(".", 1)[0]
                body.append([number, row["case"], row["variant"], target_text(row["target"]),
                             fmt_ratio(row.get("target_ratio")), row.get("status") or "not measured"])
    return Table("Targets", "", ["#", "case", "variant", "target", "measured", "status"], body, {4})


def host_lines(results: dict[str, Any]) -> list[str]:
    host = results["host"]
    cfg = results["config"]
    versions = ", ".join(f"{k} {v}" for k, v in host["versions"].items())
    device = cfg["device"] + (f" ({cfg['gpu']})" if cfg.get("gpu") else "")
    lines = [
        f"date (UTC): {host['date_utc']}   commit: {host.get('git_commit') or 'none'}",
        f"cpu: {host['cpu_model']} ({host.get('cpus_usable')} usable of {host.get('cpu_count')}), "
        f"load avg 1m at start: {host.get('load_avg_1m')}",
        f"python {host['python']}; {versions}; numpy BLAS: {host.get('numpy_blas')}",
        f"single thread; float32; device {device}; median of {cfg['repeats']} interleaved repeats "
        f"of >= {cfg['min_time_s'] * 1000:.0f} ms after warm-up; {cfg.get('clock', 'wall')} clock; "
        f"gc {'on' if cfg['gc_enabled'] else 'off'}" + ("; QUICK run" if cfg["quick"] else ""),
    ]
    if results.get("cpu_share") is not None:
        lines.append(f"CPU share while timing (CPU time / wall time, median): {results['cpu_share']:.0%}"
                     + (" (contended machine: compare ratios, not microseconds)"
                        if results["cpu_share"] < 0.9 else ""))
    lines += [f"note: {n}" for n in results.get("notes", [])]
    return lines


# ---------------------------------------------------------------------------------------------------------
# Renderers


def render_text(table: Table) -> str:
    widths = [len(h) for h in table.headers]
    for row in table.rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]

    def line(cells: list[str]) -> str:
        out = [c.rjust(w) if i in table.right_aligned else c.ljust(w)
               for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(out).rstrip()

    parts = [table.title, line(table.headers), line(["-" * w for w in widths])]
    parts += [line(r) for r in table.rows]
    parts += [f"  {n}" for n in table.notes]
    return "\n".join(parts)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(table: Table, level: int = 3) -> str:
    parts = [f"{'#' * level} {table.title}", ""]
    if table.description:
        parts += [table.description, ""]
    parts.append("| " + " | ".join(_md_escape(h) for h in table.headers) + " |")
    parts.append("|" + "|".join("---:" if i in table.right_aligned else "---"
                                for i in range(len(table.headers))) + "|")
    parts += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in table.rows]
    if table.notes:
        parts.append("")
        parts += [f"- {_md_escape(n)}" for n in table.notes]
    return "\n".join(parts)


def _subject_measured(results: dict[str, Any]) -> bool:
    return SUBJECT in results["config"]["libs"]


def render_results_text(results: dict[str, Any]) -> str:
    blocks = ["\n".join(host_lines(results))]
    blocks += [render_text(workload_table(wl, results["config"]["repeats"])) for wl in results["workloads"]]
    targets = targets_table(results)
    if _subject_measured(results):
        blocks.append(render_text(targets))
    return "\n\n".join(blocks)


def render_results_markdown(results: dict[str, Any]) -> str:
    blocks = ["\n".join(f"- {line}" for line in host_lines(results))]
    targets = targets_table(results)
    if _subject_measured(results):
        blocks.append(render_markdown(targets))
    elif targets.rows:
        blocks.append("Targets not judged: tracegrad was not measured in this run.")
    repeats = results["config"]["repeats"]
    blocks += [render_markdown(workload_table(wl, repeats)) for wl in results["workloads"]]
    return "\n\n".join(blocks)
