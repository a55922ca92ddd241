"""The profiler's text table, laid out like PyTorch's (``prof.key_averages().table(...)``).

Columns: the name, self and total CPU time (absolute and as a share of the summed self times), the average per
call, the call count; then, where the events have them, memory (``profile_memory``), input shapes
(``record_shapes``), source locations (``with_stack``) and MFLOPs (``with_flops``).
"""

from __future__ import annotations

from .profiler_util import _format_memory, _format_time, _format_time_share

_SPACING = 2
_NUMBER_WIDTH = 12


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def build_table(events, *, sort_by: str | None, header: str | None, row_limit: int, max_src_column_width: int,
                max_name_column_width: int, max_shapes_column_width: int, with_flops: bool, profile_memory: bool,
                top_level_events_only: bool) -> str:
    if len(events) == 0:
        return ""
    rows = list(events)
    if sort_by is not None:
        rows.sort(key=lambda evt: getattr(evt, sort_by), reverse=True)
    if top_level_events_only:
        rows = [evt for evt in rows if evt.cpu_parent is None]
    if row_limit > 0:
        rows = rows[:row_limit]

    name_width = min(max(len(evt.key) for evt in events) + 4, max_name_column_width)
    has_shapes = any(evt.input_shapes for evt in events)
    shapes_width = min(max(len(str(evt.input_shapes)) for evt in events) + 4, max_shapes_column_width)
    has_stack = any(evt.stack for evt in events)
    src_width = min(max((len(evt.stack[0]) for evt in events if evt.stack), default=0) + 4,
                    max_src_column_width)
    has_flops = with_flops and any(evt.flops for evt in events)
    has_memory = profile_memory

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    widths = [name_width] + [_NUMBER_WIDTH] * 5
    if has_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        widths += [_NUMBER_WIDTH] * 2
    headers.append("# of Calls")
    widths.append(_NUMBER_WIDTH)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    if has_stack:
        headers.append("Source Location")
        widths.append(src_width)
    if has_flops:
        headers.append("Total MFLOPs")
        widths.append(_NUMBER_WIDTH)

    def line(cells: list[str]) -> str:
        return "".join(f"{cell:>{width}}" + " " * _SPACING for cell, width in zip(cells, widths))

    rule = "".join("-" * width + " " * _SPACING for width in widths)
    out = []
    if header is not None:
        out += ["=" * len(rule), header]
    out += [rule, line(headers), rule]

    # Shares are of the summed self times of every event, so the self column adds up to 100%.
    self_total = sum(evt.self_cpu_time_total for evt in events)
    for evt in rows:
        cells = [_clip(evt.key, name_width),
                 _format_time_share(evt.self_cpu_time_total, self_total), _format_time(evt.self_cpu_time_total),
                 _format_time_share(evt.cpu_time_total, self_total), _format_time(evt.cpu_time_total),
                 _format_time(evt.cpu_time)]
        if has_memory:
            cells += [_format_memory(evt.cpu_memory_usage), _format_memory(evt.self_cpu_memory_usage)]
        cells.append(str(evt.count))
        if has_shapes:
            cells.append(_clip(str(evt.input_shapes), shapes_width))
        if has_stack:
            cells.append(_clip(evt.stack[0], src_width) if evt.stack else "")
        if has_flops:
            cells.append(f"{evt.flops / 1e6:.3f}" if evt.flops else "--")
        out.append(line(cells))
        if has_stack and evt.stack:
            for frame in evt.stack[1:5]:  # a few outer frames under the innermost, as PyTorch prints them
                out.append(line([""] * (len(cells) - 1 - has_flops) + [_clip(frame, src_width)]
                                + ([""] if has_flops else [])))
    out.append(rule)
    out.append(f"Self CPU time total: {_format_time(self_total)}")
    return "\n".join(out) + "\n"
