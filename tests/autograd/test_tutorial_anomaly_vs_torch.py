"""PyTorch's "Autograd anomaly detection" docs, run under tracegrad and torch: the warning that shows the
forward trace of the node that failed, NaN checks, and the in-place error's hint.

The trace is compared frame by frame on the caller's side (file, line, function, source); below it, torch's
own operators are C++ and leave no Python frame, so tracegrad's operator machinery must not show either. A
custom Function ends the trace at its ``apply`` (one frame of the library, as in torch); ``nn`` modules keep
their Python frames in both (their number and lines are each library's own).

Differences these programs found, now fixed: the trace listed tracegrad's operator internals (registry, fast
path, kernels) under the caller's line; the in-place error raised under anomaly mode kept the hint "enable
anomaly detection ..." instead of torch's "the backtrace further above shows the operation ...".
"""

from __future__ import annotations

import os
import re
import warnings

import pytest
from _lib import tg, torch

_LIBRARY_DIRS = (os.path.dirname(tg.__file__), os.path.dirname(torch.__file__))


def _run(lib, program) -> tuple[str | None, list[str]]:
    """The error ``program`` ends with, and the anomaly warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            program(lib)
            error = None
        except RuntimeError as exc:
            error = str(exc)
    return error, [str(w.message) for w in caught
                   if "Traceback of forward call" in str(w.message) or "No forward pass information" in str(w.message)]


def _frames(report: str) -> tuple[str, list[tuple[str, str]], list[str]]:
    """(first line, caller frames as (location, source), the library frames' function names)."""
    head, _, body = report.lstrip("\n").partition("\n")
    frames = re.findall(r'  File "([^"]+)", line (\d+), in (\S+)\n(?:    (.*)\n)?', body)
    caller = [(f"{path}:{line}:{name}", source) for path, line, name, source in frames
              if not path.startswith(_LIBRARY_DIRS)]
    library = [name for path, _, name, _ in frames if path.startswith(_LIBRARY_DIRS)]
    return head, caller, library


def _compare(program):
    (err_ours, ours), (err_theirs, theirs) = _run(tg, program), _run(torch, program)
    assert err_ours == err_theirs
    assert len(ours) == len(theirs) >= 1
    pairs = [(_frames(a), _frames(b)) for a, b in zip(ours, theirs)]
    for (head_a, caller_a, _), (head_b, caller_b, _) in pairs:
        assert head_a == head_b
        assert caller_a == caller_b
    return err_theirs, pairs


def test_error_in_a_custom_backward_shows_the_apply_call():
    def program(lib):
        class MyFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.clone()

            @staticmethod
            def backward(ctx, gO):
                raise RuntimeError("Some error in backward")

        def run_fn(a):
            out = MyFunc.apply(a)
            return out.sum()

        inp = lib.ones(10, 10, requires_grad=True)
        with lib.autograd.detect_anomaly():
            out = run_fn(inp)
            out.backward()

    error, pairs = _compare(program)
    assert error == "Some error in backward"
    (_, _, library_ours), (_, _, library_theirs) = pairs[0]
    assert library_ours == library_theirs == ["apply"]


@pytest.mark.parametrize("case", ["nan_from_div", "nan_from_pow", "inplace_on_saved_output"])
def test_operators_leave_no_frame_of_the_library(case):
    def program(lib):
        a = lib.tensor([0.0, 1.0, 2.0], requires_grad=True)
        with lib.autograd.detect_anomaly():
            if case == "nan_from_div":
                c = (a * 0).div(a * 0)
                c.sum().backward()
            elif case == "nan_from_pow":
                b = (a - 1).pow(0.5)
                b.sum().backward()
            else:
                b = a.sigmoid()
                b.mul_(2)
                b.sum().backward()

    error, pairs = _compare(program)
    assert all(not library for (_, _, library), _ in pairs)
    if case == "inplace_on_saved_output":
        assert error.endswith("The variable in question was changed in there or anywhere later. Good luck!")


def test_module_forward_keeps_the_callers_frames():
    def program(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sigmoid())
        x = lib.ones(1, 2, requires_grad=True)
        with lib.autograd.detect_anomaly():
            y = model(x)
            y.mul_(2)
            y.sum().backward()

    _, pairs = _compare(program)
    (_, _, library_ours), _ = pairs[0]
    assert library_ours and library_ours[-1] in ("forward", "sigmoid")


def test_double_backward_names_the_node_that_induced_it():
    def program(lib):
        class Fail(lib.autograd.Function):
            @staticmethod
            def forward(ctx, g):
                return g.clone()

            @staticmethod
            def backward(ctx, gO):
                raise RuntimeError("Some error in double backward")

        class MyFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                ctx.save_for_backward(inp)
                return inp.clone()

            @staticmethod
            def backward(ctx, gO):
                inp, = ctx.saved_tensors
                return Fail.apply(gO * inp)

        a = lib.ones(3, requires_grad=True)
        with lib.autograd.detect_anomaly():
            b = MyFunc.apply(a * a)
            g, = lib.autograd.grad(b.sum(), a, create_graph=True)
            g.sum().backward()

    error, pairs = _compare(program)
    assert error == "Some error in double backward"
    assert len(pairs) == 2 and pairs[1][1][0].startswith("Previous calculation was induced by MyFuncBackward")


def test_without_anomaly_mode_the_hint_says_how_to_enable_it():
    def program(lib):
        a = lib.ones(3, requires_grad=True)
        b = a.sigmoid()
        b.mul_(2)
        b.sum().backward()

    (error_ours, _), (error_theirs, _) = _run(tg, program), _run(torch, program)
    assert error_ours == error_theirs
    assert "set_detect_anomaly(True, check_nan=False)" in error_ours
