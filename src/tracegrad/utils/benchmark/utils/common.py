"""``torch.utils.benchmark.utils.common``: the task description, the measurement of one task and the number
formatting shared by ``Timer`` and ``Compare``.

The statistics go through tracegrad tensors exactly where torch's go through torch tensors (float32 for the
significant-figure estimate and ``trim_sigfig``, float64 quantiles for the median), so the numbers, and the tables
printed from them, come out as torch's do."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import textwrap
from collections.abc import Iterable, Iterator
from typing import Any

import tracegrad

__all__ = [
    "TaskSpec",
    "Measurement",
    "select_unit",
    "unit_to_english",
    "trim_sigfig",
    "ordered_unique",
    "set_torch_threads",
]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns: below this the timer itself is the noise

# An IQR above these fractions of the median makes a measurement carry a warning.
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25

_REPR_SKIP_LINE = "MEASUREMENT_REPR_SKIP_LINE"


def _indented(text: str) -> str:
    return textwrap.indent(text, "  ")


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer measures (everything but its globals); hashable, so replicates can be grouped by it."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (else the one-line stmt) with the sub_label; a multi-line stmt is shown indented."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub_label = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub_label}\n{_indented(self.stmt)}"

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{_indented(self.setup)}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The TaskSpec lines of a Measurement's repr; a multi-line section is followed by a blank line."""
        sections = (self.title, self.description or "", self.setup_str())
        return "\n".join(section + "\n" if "\n" in section else section for section in sections if section)


_TASKSPEC_FIELDS = tuple(field.name for field in dataclasses.fields(TaskSpec))


def _quantiles(sorted_times: tuple[float, ...]) -> tuple[float, float, float, float]:
    """(p25, median, p75, mean) of the times, computed in float64 as torch does."""
    times = tracegrad.tensor(sorted_times, dtype=tracegrad.float64)
    p25, median, p75 = (times.quantile(q).item() for q in (0.25, 0.5, 0.75))
    return p25, median, p75, times.mean().item()


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The result of a Timer measurement: ``raw_times`` of blocks of ``number_per_run`` runs each, with the
    statistics (per run) computed lazily from them. The TaskSpec's fields read through (``m.label``...)."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # reserved for user payloads

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median: float = -1.0
        self._mean: float = -1.0
        self._p25: float = -1.0
        self._p75: float = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    # The statistics are per run (raw time / number_per_run): an extrapolation that hides how overheads
    # amortise differently for other block sizes, which Timer's choice of block size makes negligible.
    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """A rough estimate (1 to 4) of the digits the median deserves, from the spread of the interquartile
        points (z = 1.645); ``Compare`` uses it to trim numbers."""
        self._lazy_init()
        count = len(self._sorted_times)
        upper = int(tracegrad.tensor(3 * count / 4).ceil())
        interquartile_points = self._sorted_times[count // 4 : upper]
        std = tracegrad.tensor(interquartile_points).std(unbiased=False).item()
        sqrt_n = tracegrad.tensor(len(interquartile_points)).sqrt().item()
        confidence_interval = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        relative_ci = tracegrad.tensor(self._median / confidence_interval).log10().item()
        figures = int(tracegrad.tensor(relative_ci).floor())
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        self._p25, self._median, self._p75, self._mean = _quantiles(self._sorted_times)
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, explanation: str) -> None:
        relative_iqr = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {relative_iqr:.1f}% of the median measurement.\n"
            f"           {explanation}",
        )

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        # torch's property reads a misspelt attribute, whose AttributeError falls back to the TaskSpec field:
        # so `env` is the raw field (None when unspecified), never its "Unspecified env" placeholder.
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        """The object's address, the task summary, median / IQR in the median's unit, the counts and warnings."""
        self._lazy_init()
        count = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        plural = count > 1
        median_label = "Median: " if plural else ""
        iqr_prefix = "" if count >= 4 else _REPR_SKIP_LINE
        runs = "per measurement," if plural else ","
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines = (
            super().__repr__(),
            self.task_spec.summarize(),
            f"  {median_label}{self._median / scale:.2f} {unit}",
            f"  {iqr_prefix}IQR:    {self.iqr / scale:.2f} {unit} "
            f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})",
            f"  {count} measurement{'s' if plural else ''}, {self.number_per_run} runs {runs} {threads}",
            "\n".join(self._warnings),
        )
        text = "\n".join(lines).strip()
        return "\n".join(line for line in text.splitlines() if _REPR_SKIP_LINE not in line)

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Pool the replicates of each TaskSpec into one Measurement of per-run times (number_per_run=1, no
        metadata, since replicates may disagree on it), in order of first appearance."""
        times_by_task: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for measurement in measurements:
            times_by_task[measurement.task_spec].extend(measurement.times)
        return [
            Measurement(number_per_run=1, raw_times=times, task_spec=task_spec, metadata=None)
            for task_spec, times in times_by_task.items()
        ]


_UNIT_BY_THOUSANDS = {-3: "ns", -2: "us", -1: "ms"}
_UNIT_SCALE = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}
_UNIT_ENGLISH = {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}


def select_unit(t: float) -> tuple[str, float]:
    """The unit (ns, us, ms or s) and its scale that make ``t`` seconds a number of order one."""
    thousands = int(tracegrad.tensor(t).log10().item() // 3)
    unit = _UNIT_BY_THOUSANDS.get(thousands, "s")
    return unit, _UNIT_SCALE[unit]


def unit_to_english(u: str) -> str:
    return _UNIT_ENGLISH[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1), in float32 arithmetic as torch's is."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(tracegrad.tensor(x).abs().log10().ceil().item())
    scale = 10 ** (magnitude - n)
    return float(tracegrad.tensor(x / scale).round() * scale)


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` intra-op threads, restoring the previous count afterwards."""
    prior = tracegrad.get_num_threads()
    try:
        tracegrad.set_num_threads(n)
        yield
    finally:
        tracegrad.set_num_threads(prior)
