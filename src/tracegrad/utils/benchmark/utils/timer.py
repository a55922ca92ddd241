"""``torch.utils.benchmark.Timer``: ``timeit.Timer`` made tensor aware (warm-up, a pinned intra-op thread count,
accelerator synchronisation) and returning ``Measurement`` objects with replicates."""

from __future__ import annotations

import enum
import textwrap
import timeit
from collections.abc import Callable
from typing import Any, NoReturn

import tracegrad

from . import common
from .valgrind_wrapper import timer_interface as valgrind_timer_interface

__all__ = ["Timer", "timer", "Language"]

_MAX_BLOCK_SIZE = 2147483647  # torch keeps the block size within a C int (its C++ timer's argument)


def timer() -> float:
    """``timeit.default_timer``, after waiting for the accelerator's queued work when there is one."""
    if tracegrad.accelerator.is_available():
        tracegrad.accelerator.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


_PYTHON_NAMES = (Language.PYTHON, "py", "python")
_CPP_NAMES = (Language.CPP, "cpp", "c++")


class CPPTimer:
    """Timer(language="cpp"): accepted with torch's argument checks, but tracegrad has no C++ front end to
    compile the statement against, so timing it raises."""

    def __init__(
        self, stmt: str, setup: str, global_setup: str, timer: Callable[[], float], globals: dict[str, Any]
    ) -> None:
        if timer is not timeit.default_timer and tracegrad.accelerator.is_available():
            raise NotImplementedError(
                "PyTorch was built with accelerators and an accelerator is present; however "
                "Timer does not yet support accelerator measurements. If your "
                "code is CPU only, pass `timer=timeit.default_timer` to the "
                "Timer's constructor to indicate this. (Note that this will "
                "produce incorrect results if an accelerator is in fact used, as "
                "Timer will not synchronize the accelerator.)"
            )
        if globals:
            raise ValueError("C++ timing does not support globals.")
        self._stmt = textwrap.dedent(stmt)
        self._setup = textwrap.dedent(setup)
        self._global_setup = textwrap.dedent(global_setup)

    def timeit(self, number: int) -> float:
        raise NotImplementedError(
            "tracegrad has no C++ API (libtorch) to compile this statement against: "
            "Timer(language='cpp') cannot be timed. Use a Python stmt."
        )


def _trim_snippet(code: str) -> str:
    """Dedented, without the leading newline of a triple-quoted block or trailing whitespace (nicer reprs)."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Measure the execution time of a tracegrad statement (PyTorch's ``torch.utils.benchmark.Timer``).

    ``stmt``/``setup``/``timer``/``globals`` are ``timeit.Timer``'s (``torch`` is put into the globals unless
    given); ``label``, ``sub_label``, ``description`` and ``env`` annotate the Measurement and drive ``Compare``;
    ``num_threads`` is the intra-op thread count (``set_num_threads``) while the statement runs."""

    _timer_cls: type = timeit.Timer

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict[str, Any] | None = None,  # noqa: A002 - torch's parameter name
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        # A copy, so that what exec adds (__builtins__) does not leak into the caller's dict.
        self._globals = dict(globals or {})
        timer_kwargs: dict[str, Any] = {}
        if language in _PYTHON_NAMES:
            self._globals.setdefault("torch", tracegrad)
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(
                    f"global_setup is C++ only, got `{global_setup}`. Most "
                    "likely this code can simply be moved to `setup`."
                )
        elif language in _CPP_NAMES:
            if self._timer_cls is not timeit.Timer:
                raise AssertionError("_timer_cls has already been swapped.")
            self._timer_cls = CPPTimer
            setup = "" if setup == "pass" else setup
            self._language = Language.CPP
            timer_kwargs["global_setup"] = global_setup
        else:
            raise ValueError(f"Invalid language `{language}`.")

        stmt, setup = _trim_snippet(stmt), _trim_snippet(setup)
        self._timer = self._timer_cls(
            stmt=stmt,
            setup=setup,
            timer=timer,
            globals=valgrind_timer_interface.CopyIfCallgrind.unwrap_all(self._globals),
            **timer_kwargs,
        )
        self._task_spec = common.TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _timeit(self, number: int) -> float:
        # Never report less than 1 ns: no real statement is faster, and it keeps ratios finite.
        return max(self._timer.timeit(number), 1e-9)

    def _measurement(self, number: int, times: list[float]) -> common.Measurement:
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """``timeit.Timer.timeit``: run ``stmt`` ``number`` times (after a warm-up of number // 100, at least 2)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return self._measurement(number, [self._timeit(number=number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], NoReturn] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _threaded_measurement_loop(
        self,
        number: int,
        stop_hook: Callable[[list[float]], bool],
        min_run_time: float,
        max_run_time: float | None = None,
        callback: Callable[[int, float], NoReturn] | None = None,
    ) -> list[float]:
        """Time blocks of ``number`` runs until ``min_run_time`` is spent and ``stop_hook`` agrees, or until
        ``max_run_time`` is exceeded."""
        total_time = 0.0
        can_stop = False
        times: list[float] = []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                time_spent = self._timeit(number)
                times.append(time_spent)
                total_time += time_spent
                if callback:
                    callback(number, time_spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """The smallest power of ten of runs whose block time dwarfs the timer's own overhead (<= 0.01%) and
        is at least min_run_time / 1000 (or already exceeds min_run_time). Doubles as the warm-up."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = tracegrad.tensor([self._timeit(0) for _ in range(5)]).median().item()
            number = 1
            while True:
                time_taken = self._timeit(number)
                if overhead / time_taken <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time or number * 10 > _MAX_BLOCK_SIZE:
                    break
                number *= 10
        return number

    def blocked_autorange(
        self, callback: Callable[[int, float], NoReturn] | None = None, min_run_time: float = 0.2
    ) -> common.Measurement:
        """Replicates of blocks of runs, for at least ``min_run_time`` seconds; the block size is chosen (see
        ``_estimate_block_size``) so that calling the timer costs under 0.01% of a block."""
        number = self._estimate_block_size(min_run_time)
        times = self._threaded_measurement_loop(
            number, lambda times: True, min_run_time=min_run_time, callback=callback
        )
        return self._measurement(number, times)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], NoReturn] | None = None,
    ) -> common.Measurement:
        """Like ``blocked_autorange``, but keeps measuring (past ``min_run_time``, up to ``max_run_time``) until
        there are more than 3 blocks and their IQR / median is below ``threshold``."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times: list[float]) -> bool:
            return len(times) > 3 and self._measurement(number, times).meets_confidence(threshold=threshold)

        times = self._threaded_measurement_loop(number, stop_hook, min_run_time, max_run_time, callback=callback)
        return self._measurement(number, times)

    def collect_callgrind(
        self,
        number: int = 100,
        *,
        repeats: int | None = None,
        collect_baseline: bool = True,
        retain_out_file: bool = False,
    ) -> Any:
        """Instruction counts under Callgrind: refused as torch refuses where it cannot run Valgrind, after
        torch's own checks (and a trial run of ``stmt``, so a broken statement fails here first)."""
        if not isinstance(self._task_spec.stmt, str):
            raise ValueError("`collect_callgrind` currently only supports string `stmt`")
        if repeats is not None and repeats < 1:
            raise ValueError("If specified, `repeats` must be >= 1")
        self._timeit(1)
        if self._language != Language.PYTHON and self._globals:
            raise AssertionError("_timer globals are only supported for Python timers")
        valgrind_timer_interface.refuse_callgrind()
