"""``torch.utils.benchmark`` against torch's: Measurement statistics and reprs and Compare tables built from fixed
raw times (character for character), the number helpers, Timer's argument errors, the thread count it pins, its
Callgrind refusal, and live timings of a tracegrad op (compared with numbers masked)."""

from __future__ import annotations

import importlib
import pickle
import re

import pytest
from _lib import raised, tg, torch


def bench(lib):
    return importlib.import_module(f"{lib.__name__}.utils.benchmark")


def normalized(text: str) -> str:
    """tracegrad's module names as torch's, object addresses blanked."""
    return re.sub(r" at 0x[0-9a-fA-F]+", " at 0x?", text.replace("tracegrad", "torch"))


def numbers_masked(text: str) -> str:
    return re.sub(r"\d+(\.\d+)?", "N", normalized(text))


def outcome(program, lib):
    """``program(benchmark module)`` as a normalized string, or the error's type and message."""
    try:
        return normalized(str(program(bench(lib))))
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, normalized(str(exc))


def assert_same(program) -> None:
    assert outcome(program, tg) == outcome(program, torch)


# ---------------------------------------------------------------------------------------------- fixed measurements

RAW_TIMES = {
    "single": [3.3e-3],
    "three": [1.2e-5, 1.4e-5, 1.3e-5],
    "steady": [1.00e-4, 1.01e-4, 0.99e-4, 1.02e-4, 1.00e-4, 0.98e-4],
    "fluctuating": [1.23e-4, 1.5e-4, 1.1e-4, 1.3e-4, 2.9e-4],
    "noisy": [1e-6, 5e-6, 2e-6, 9e-6, 3e-6, 7e-6, 4e-6, 1.2e-5],
    "seconds": [2.5, 2.7, 2.6, 2.55],
    "nanoseconds": [3e-7, 3.1e-7, 2.9e-7, 3.05e-7],
    "empty": [],
}

TASKS = {
    "plain": dict(stmt="x + y", setup="pass"),
    "labelled": dict(stmt="x + y", setup="x = torch.ones(4)", label="add", sub_label="float", description="n=4"),
    "multiline": dict(stmt="for i in range(3):\n    x = x + 1", setup="x = 1\ny = 2", sub_label="s", num_threads=4),
    "multiline_no_sub": dict(stmt="a = 1\nb = 2", setup="pass", description="two\nlines"),
    "env": dict(stmt="f(x)", setup="", label="L", env="A", num_threads=2),
}


def measurement(b, raw: str, task: str = "labelled", number: int = 100):
    return b.Measurement(number, list(RAW_TIMES[raw]), b.TaskSpec(**TASKS[task]))


def statistics(m) -> tuple:
    return (m.times, m.median, m.mean, m.iqr, m.significant_figures, m.has_warnings, m.meets_confidence(),
            m.meets_confidence(0.5), m.title, m.env, m.as_row_name, m.number_per_run, m.raw_times, m.label,
            m.sub_label, m.description, m.num_threads, m.stmt, m.setup, m.metadata)


@pytest.mark.parametrize("raw", [r for r in RAW_TIMES if r != "empty"])
def test_measurement_statistics_and_repr(raw):
    assert_same(lambda b: statistics(measurement(b, raw)))
    assert_same(lambda b: repr(measurement(b, raw)))


@pytest.mark.parametrize("task", list(TASKS))
def test_measurement_repr_of_each_task_layout(task):
    for raw in ("single", "three", "fluctuating"):
        assert_same(lambda b, raw=raw: repr(measurement(b, raw, task, number=1000)))
    assert_same(lambda b: (b.TaskSpec(**TASKS[task]).title, b.TaskSpec(**TASKS[task]).summarize(),
                           b.TaskSpec(**TASKS[task]).setup_str()))


def test_empty_measurement_keeps_its_placeholders_and_repr_refuses():
    assert_same(lambda b: (measurement(b, "empty").median, measurement(b, "empty").mean, measurement(b, "empty").iqr))
    assert_same(lambda b: repr(measurement(b, "empty")))  # log10 of the -1.0 placeholder: int(nan)
    assert_same(lambda b: measurement(b, "empty").significant_figures)


def test_merge_pools_replicates_per_task_in_first_seen_order():
    def merged(b):
        parts = [measurement(b, "steady", "plain", 10), measurement(b, "three", "env", 7),
                 measurement(b, "noisy", "plain", 4)]
        return [(m.number_per_run, m.raw_times, m.metadata, m.title, repr(m)) for m in b.Measurement.merge(parts)]

    assert_same(merged)


def test_measurement_equality_pickle_and_unknown_attribute():
    assert_same(lambda b: measurement(b, "three") == measurement(b, "three"))
    assert_same(lambda b: measurement(b, "three") == measurement(b, "steady"))
    assert_same(lambda b: repr(pickle.loads(pickle.dumps(measurement(b, "fluctuating")))))
    assert_same(lambda b: measurement(b, "three").no_such_field)
    assert_same(lambda b: hash(b.TaskSpec("a", "b")) == hash(b.TaskSpec("a", "b")))


@pytest.mark.parametrize("call", [
    lambda b: b.select_unit(3e-5), lambda b: b.select_unit(2.0), lambda b: b.select_unit(4e-10),
    lambda b: b.select_unit(1e-3), lambda b: b.select_unit(0.0), lambda b: b.select_unit(-1.0),
    lambda b: b.trim_sigfig(3.14159, 2), lambda b: b.trim_sigfig(123456.0, 3), lambda b: b.trim_sigfig(-0.0123, 1),
    lambda b: b.trim_sigfig(3.14159, 2.5), lambda b: b.unit_to_english("us"), lambda b: b.unit_to_english("min"),
    lambda b: b.ordered_unique([3, 1, 3, 2, 1]), lambda b: b.Language.CPP, lambda b: list(b.Colorize),
])
def test_helpers(call):
    assert_same(call)


# ---------------------------------------------------------------------------------------------------- Compare tables

def grid(b):
    """Two labels; rows by sub_label and thread count, columns by description; one hole; replicates to merge."""
    cases = []
    for threads in (1, 4):
        for sub_label, base in (("float", 1.0e-5), ("double", 2.3e-5), ("int", 5.7e-5)):
            for description, factor in (("n=1", 1.0), ("n=64", 8.4), ("n=4096", 510.0)):
                if (sub_label, description, threads) == ("int", "n=64", 4):
                    continue
                scale = base * factor / threads
                spread = [1.0, 1.02, 0.97, 1.4 if sub_label == "double" else 1.01, 0.99]
                task = b.TaskSpec("x + y", "pass", label="add", sub_label=sub_label, description=description,
                                  num_threads=threads)
                cases.append(b.Measurement(10, [scale * s * 10 for s in spread], task))
    cases.append(b.Measurement(1, [7e-4, 7.1e-4], b.TaskSpec("x * y", "pass", label="mul", description="n=1")))
    cases.append(b.Measurement(1, [7.2e-4], b.TaskSpec("x * y", "pass", label="mul", description="n=1")))
    cases.append(b.Measurement(1, [3e-3, 3.1e-3], b.TaskSpec("x @ y", "pass", label="mul", description="n=2")))
    return cases


def envs(b):
    return [b.Measurement(1, [t, t * 1.05, t * 0.97, t * 1.01], b.TaskSpec("f(x)", "pass", label="L", env=env,
                                                                           sub_label=sub, description=d))
            for env, sub, d, t in (("before", "a", "x", 1e-3), ("before", "b", "x", 2e-3),
                                   ("after", "a", "x", 9e-4), ("after", "b", "y", 4e-3))]


def table(cases, *, trim=False, colorize=None, warnings=False):
    def build(b):
        compare = b.Compare(cases(b))
        if trim:
            compare.trim_significant_figures()
        if colorize is not None:
            compare.colorize(rowwise=colorize)
        if warnings:
            compare.highlight_warnings()
        return str(compare)
    return build


@pytest.mark.parametrize("options", [
    {}, {"trim": True}, {"colorize": False}, {"colorize": True}, {"warnings": True},
    {"trim": True, "colorize": False, "warnings": True},
])
def test_compare_tables_match_character_for_character(options):
    assert_same(table(grid, **options))
    assert_same(table(envs, **options))


def test_compare_print_and_extend(capsys):
    printed = []
    for lib in (tg, torch):
        b = bench(lib)
        compare = b.Compare(grid(b)[:3])
        compare.extend_results(grid(b)[3:6])
        compare.print()
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1]
    assert printed[0] == str(bench(torch).Compare(grid(bench(torch))[:6])) + "\n"


def test_compare_errors():
    assert_same(lambda b: b.Compare([measurement(b, "three"), "not a measurement"]))
    assert_same(lambda b: b.Compare([measurement(b, "three")]).extend_results([1]))
    assert_same(lambda b: str(b.Compare([measurement(b, "three", "plain")])))  # no description: no column key
    assert_same(lambda b: str(b.Compare([])))
    assert_same(lambda b: str(b.Compare([measurement(b, "empty", "labelled")])))


# ------------------------------------------------------------------------------------------------------------ Timer

@pytest.mark.parametrize("call", [
    lambda b: b.Timer(stmt=lambda: None),
    lambda b: b.Timer("x", global_setup="#include <x>"),
    lambda b: b.Timer("x", language="fortran"),
    lambda b: b.Timer("x", language="cpp", globals={"x": 1}),
    lambda b: b.Timer("x").repeat(),
    lambda b: b.Timer("x").autorange(),
    lambda b: b.Timer("x", setup="y = ").timeit(1),
    lambda b: b.Timer("undefined_name").timeit(1),
    lambda b: b.Timer("x").collect_callgrind(repeats=0),
    lambda b: b.Timer("undefined_name").collect_callgrind(),
    lambda b: b.CopyIfCallgrind(3, setup="pass").value,
])
def test_timer_argument_errors(call):
    assert_same(call)


def test_copy_if_callgrind_lists_the_allowed_types():
    def message(lib):
        # The scripted types live in differently named modules; their class names and the layout must agree.
        return re.sub(r"<class '[\w.]*?(\w+)'>", r"<class '\1'>", str(raised(lib, lambda l: bench(l).CopyIfCallgrind([1]))))

    assert message(tg) == message(torch)


def test_timer_task_spec_and_globals():
    def spec(b):
        user_globals = {"x": 1}
        timer = b.Timer("\n    x + 1\n    ", setup="\n  y = 2\n", globals=user_globals, label="L", sub_label="s",
                        description="d", env="e", num_threads=3)
        t = timer._task_spec
        return (t.stmt, t.setup, t.global_setup, t.label, t.sub_label, t.description, t.env, t.num_threads,
                sorted(user_globals), timer._globals["torch"].__name__, timer._language)
    assert_same(spec)
    assert_same(lambda b: b.Timer("x", language="c++", setup="pass")._task_spec.setup)


def test_timer_pins_the_thread_count_while_timing():
    seen = []
    before = tg.get_num_threads()
    timer = bench(tg).Timer("seen.append(torch.get_num_threads())", globals={"seen": seen}, num_threads=3)
    timer.timeit(5)
    timer.blocked_autorange(min_run_time=0.001)
    assert set(seen) == {3}
    assert tg.get_num_threads() == before


def test_collect_callgrind_refused_as_torch_does_without_valgrind(monkeypatch):
    interface = importlib.import_module("tracegrad.utils.benchmark.utils.valgrind_wrapper.timer_interface")
    timer = bench(tg).Timer("x + 1", globals={"x": tg.ones(2)})
    monkeypatch.setattr(interface.shutil, "which", lambda command: None)
    with pytest.raises(OSError, match="^Missing: valgrind, callgrind_control, callgrind_annotate$"):
        timer.collect_callgrind()
    monkeypatch.setattr(interface.shutil, "which", lambda command: f"/usr/bin/{command}")
    assert raised(tg, lambda lib: timer.collect_callgrind(number=1)) == (
        "OSError", "Valgrind is not supported on this platform.")


_UNITS = r"\b(ns|us|ms|s|nanoseconds|microseconds|milliseconds|seconds)\b"


def live_results(lib) -> list[str]:
    """Masked reprs of a tracegrad (or torch) matmul timed three ways, and of their Compare table: the numbers,
    units and replicate counts depend on the machine, the layout does not."""
    b = bench(lib)
    calls = []
    timer = b.Timer("torch.mm(x, x).sum()", globals={"x": lib.ones(8, 8)}, label="mm", sub_label="8x8",
                    description="cpu")
    once = timer.timeit(20)
    blocked = timer.blocked_autorange(callback=lambda number, spent: calls.append((number, spent)),
                                      min_run_time=0.02)
    adaptive = timer.adaptive_autorange(threshold=1e9, min_run_time=0.01, max_run_time=0.05)
    assert calls and all(number == blocked.number_per_run for number, _ in calls)
    assert len(calls) == len(blocked.raw_times) and adaptive.raw_times
    shapes = [(type(m).__name__, m.task_spec == once.task_spec, m.median > 0, str(m.number_per_run).strip("0"))
              for m in (once, blocked, adaptive)]
    compare = b.Compare([once, blocked, adaptive])
    compare.trim_significant_figures()
    # Column widths and centring follow the numbers' widths: runs of padding are folded.
    table = "\n".join(re.sub(r"[ -]+", " ", line).strip() for line in numbers_masked(str(compare)).splitlines())
    return [re.sub(_UNITS, "U", numbers_masked(repr(once))), re.sub(_UNITS, "U", table), shapes]


def test_timing_a_tracegrad_op_gives_torch_shaped_results():
    assert live_results(tg) == live_results(torch)


def test_reachable_as_torch_utils_benchmark():
    assert tg.utils.benchmark.Timer is bench(tg).Timer
    names = {"Timer", "Measurement", "Compare", "TaskSpec", "Language", "Colorize", "CopyIfCallgrind", "timer",
             "select_unit", "trim_sigfig", "ordered_unique", "unit_to_english", "set_torch_threads"}
    assert names <= set(dir(bench(tg))) and names <= set(dir(bench(torch)))


def test_benchmark_is_imported_on_first_use():
    """``import tracegrad`` leaves ``utils.benchmark`` unimported (some 7 ms); the first ``torch.utils.benchmark``
    read imports it, as a user of ``import tracegrad as torch`` expects it to be there."""
    import subprocess
    import sys

    code = ("import sys, tracegrad as torch; print('tracegrad.utils.benchmark' in sys.modules); "
            "print(torch.utils.benchmark.Timer.__name__, 'tracegrad.utils.benchmark' in sys.modules)")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert lines[:2] == ["False", "Timer True"]
