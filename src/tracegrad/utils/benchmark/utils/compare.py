"""``torch.utils.benchmark.Compare``: Measurements laid out as text tables, one per label, with a row per
(num_threads, env, sub_label or stmt) and a column per description."""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterable, Sequence

import tracegrad

from . import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"

_CELL_SEPARATOR = "  |  "
_WARNING_FOOTNOTE = "(! XX%) Measurement has high variance, where XX is the IQR / median * 100."

Cell = common.Measurement | None


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(measurement: Cell, time_scale: float) -> int | None:
    if not measurement:
        return None
    return int(tracegrad.tensor(measurement.median / time_scale).log10().ceil())


class _Column:
    """One description's cells, grouped by thread-count block; owns the number format of the column."""

    def __init__(
        self,
        grouped_results: list[tuple[Cell, ...]],
        time_scale: float,
        trim_significant_figures: bool,
        highlight_warnings: bool,
    ) -> None:
        self._grouped_results = grouped_results
        flat = list(itertools.chain.from_iterable(grouped_results))
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings and any(m.has_warnings for m in flat if m)
        digits = [_leading_digits(m, time_scale) for m in flat]
        unit_digits = max(d for d in digits if d is not None)
        decimals = 1
        if trim_significant_figures:
            decimals = min(
                max(m.significant_figures - d, 0) for d, m in zip(digits, flat) if m is not None and d is not None
            )
        width = unit_digits + decimals + (1 if decimals else 0)
        self._template = f"{{:>{width}.{decimals}f}}{{:>{7 if self._highlight_warnings else 0}}}"

    def get_results_for(self, group: int) -> tuple[Cell, ...]:
        return self._grouped_results[group]

    def num_to_str(self, value: float | None, estimated_sigfigs: int, spread: float | None) -> str:
        """The cell text: the value (trimmed to its significant figures if asked) and its spread warning;
        blanks of the same width for a missing value."""
        if value is None:
            return " " * len(self.num_to_str(1, estimated_sigfigs, None))
        if self._trim_significant_figures:
            value = common.trim_sigfig(value, estimated_sigfigs)
        warning = f" (! {spread * 100:.0f}%)" if self._highlight_warnings and spread is not None else ""
        return self._template.format(value, warning)


def optional_min(seq: Iterable[float]) -> float | None:
    values = list(seq)
    return min(values) if values else None


def _colored(segment: str, value: float, best_value: float) -> str:
    """Green when within 1% (or 100 ns) of the best, blue within 10%, dim red from 2x, red from 5x."""
    if value <= best_value * 1.01 or value <= best_value + 100e-9:
        return BEST + BOLD + segment + TERMINATE * 2
    if value <= best_value * 1.1:
        return GOOD + BOLD + segment + TERMINATE * 2
    if value >= best_value * 5:
        return VERY_BAD + BOLD + segment + TERMINATE * 2
    if value >= best_value * 2:
        return BAD + segment + TERMINATE * 2
    return segment


class _Row:
    """One row's cells (None where a column has no measurement for it)."""

    def __init__(
        self,
        results: list[Cell],
        row_group: int,
        render_env: bool,
        env_str_len: int,
        time_scale: float,
        colorize: Colorize,
        num_threads: int | None = None,
    ) -> None:
        self._results = results
        self._row_group = row_group
        self._render_env = render_env
        self._env_str_len = env_str_len
        self._time_scale = time_scale
        self._colorize = colorize
        self._columns: tuple[_Column, ...] = ()
        self._num_threads = num_threads  # set on the first row of a thread-count block: it gets a separator

    def register_columns(self, columns: tuple[_Column, ...]) -> None:
        self._columns = columns

    def as_column_strings(self) -> list[str]:
        first = next(m for m in self._results if m is not None)
        env = (f"({first.env})" if self._render_env else "").ljust(self._env_str_len + 4)
        cells = ["  " + env + first.as_row_name]
        for measurement, column in zip(self._results, self._columns):
            if measurement is None:
                cells.append(column.num_to_str(None, 1, None))
                continue
            spread = measurement.iqr / measurement.median if measurement.has_warnings else None
            cells.append(
                column.num_to_str(measurement.median / self._time_scale, measurement.significant_figures, spread)
            )
        return cells

    def row_separator(self, overall_width: int) -> list[str]:
        if self._num_threads is None:
            return []
        return [f"{self._num_threads} threads: ".ljust(overall_width, "-")]

    def _best_values(self, column_count: int) -> list[float | None]:
        if self._colorize == Colorize.ROWWISE:
            return [min(m.median for m in self._results if m is not None)] * column_count
        if self._colorize == Colorize.COLUMNWISE:
            return [
                optional_min(m.median for m in column.get_results_for(self._row_group) if m is not None)
                for column in self._columns
            ]
        return [-1] * column_count

    def finalize_column_strings(self, column_strings: list[str], col_widths: list[int]) -> list[str]:
        """The row's cells padded to the column widths (name left-aligned, numbers centred) and coloured."""
        best_values = self._best_values(len(column_strings))
        contents = [column_strings[0].ljust(col_widths[0])]
        for text, width, measurement, best in zip(column_strings[1:], col_widths[1:], self._results, best_values):
            text = text.center(width)
            if self._colorize != Colorize.NONE and measurement is not None and best is not None:
                text = _colored(text, measurement.median, best)
            contents.append(text)
        return contents


class Table:
    """The table of one label's measurements."""

    def __init__(
        self,
        results: list[common.Measurement],
        colorize: Colorize,
        trim_significant_figures: bool,
        highlight_warnings: bool,
    ) -> None:
        if len({m.label for m in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results = results
        self._colorize = colorize
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings
        self.label = results[0].label
        self.time_unit, self.time_scale = common.select_unit(min(m.median for m in results))
        self.row_keys = common.ordered_unique([self.row_fn(m) for m in results])
        # Stable sort on (num_threads, env) only: rows keep the order their stmts first appeared in.
        self.row_keys.sort(key=lambda key: key[:2])
        self.column_keys = common.ordered_unique([self.col_fn(m) for m in results])
        self.rows, self.columns = self.populate_rows_and_columns()

    @staticmethod
    def row_fn(m: common.Measurement) -> tuple[int, str | None, str]:
        return m.num_threads, m.env, m.as_row_name

    @staticmethod
    def col_fn(m: common.Measurement) -> str | None:
        return m.description

    def _grid(self) -> list[list[Cell]]:
        grid: list[list[Cell]] = [[None] * len(self.column_keys) for _ in self.row_keys]
        row_position = {key: i for i, key in enumerate(self.row_keys)}
        column_position = {key: j for j, key in enumerate(self.column_keys)}
        for m in self.results:
            grid[row_position[self.row_fn(m)]][column_position[self.col_fn(m)]] = m
        return grid

    def populate_rows_and_columns(self) -> tuple[tuple[_Row, ...], tuple[_Column, ...]]:
        grid = self._grid()
        envs = {m.env for m in self.results}
        render_env = len(envs) > 1
        env_str_len = max(len(env) for env in envs) if render_env else 0

        rows: list[_Row] = []
        groups: list[list[list[Cell]]] = []  # the grid's rows, by block of equal num_threads
        prior_num_threads, prior_env = -1, ""
        for (num_threads, env, _), cells in zip(self.row_keys, grid):
            starts_block = num_threads != prior_num_threads
            if starts_block:
                prior_num_threads, prior_env = num_threads, ""
                groups.append([])
            rows.append(
                _Row(
                    results=cells,
                    row_group=len(groups) - 1,
                    render_env=render_env and env != prior_env,
                    env_str_len=env_str_len,
                    time_scale=self.time_scale,
                    colorize=self._colorize,
                    num_threads=num_threads if starts_block else None,
                )
            )
            groups[-1].append(cells)
            prior_env = env

        columns = tuple(
            _Column(
                grouped_results=[tuple(cells[j] for cells in group) for group in groups],
                time_scale=self.time_scale,
                trim_significant_figures=self._trim_significant_figures,
                highlight_warnings=self._highlight_warnings,
            )
            for j in range(len(self.column_keys))
        )
        for row in rows:
            row.register_columns(columns)
        return tuple(rows), columns

    def render(self) -> str:
        string_rows: list[list[str]] = [["", *self.column_keys]]
        string_rows.extend(row.as_column_strings() for row in self.rows)
        column_count = max(len(cells) for cells in string_rows)
        for cells in string_rows:
            cells.extend([""] * (column_count - len(cells)))
        col_widths = [max(len(text) for text in column) for column in zip(*string_rows)]

        header = _CELL_SEPARATOR.join(text.center(width) for text, width in zip(string_rows[0], col_widths))
        overall_width = len(header)
        lines = [header]
        for cells, row in zip(string_rows[1:], self.rows):
            lines.extend(row.row_separator(overall_width))
            lines.append(_CELL_SEPARATOR.join(row.finalize_column_strings(cells, col_widths)))

        title = f"[{(' ' + (self.label or '') + ' ').center(overall_width - 2, '-')}]"
        has_warnings = self._highlight_warnings and any(m.has_warnings for m in self.results)
        footnote = _WARNING_FOOTNOTE + "\n" if has_warnings else ""
        units = f"Times are in {common.unit_to_english(self.time_unit)}s ({self.time_unit})."
        return f"{title}\n" + "\n".join(lines) + f"\n\n{units}\n{footnote}"


class Compare:
    """Measurements printed as tables (``print(compare)`` or ``compare.print()``): replicates are merged, one
    table per label, a row per sub_label (or stmt) and thread count, a column per description."""

    def __init__(self, results: list[common.Measurement]) -> None:
        self._results: list[common.Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results: Sequence[common.Measurement]) -> None:
        """Add more Measurements (every one checked first, so a bad one adds nothing)."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour each cell against the best of its column (default) or of its row."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> list[str]:
        by_label: dict[str | None, list[common.Measurement]] = {}
        for m in common.Measurement.merge(self._results):
            by_label.setdefault(m.label, []).append(m)
        return [self._layout(group) for group in by_label.values()]

    def _layout(self, results: list[common.Measurement]) -> str:
        return Table(results, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
