"""NumPy's floating-point warnings from tracegrad's own kernels stay out of sight under filters that show warnings
(compared with torch).

PyTorch computes ``log(0)``, ``inf * 0`` or ``x / 0`` silently. tracegrad's import-time filter ignores NumPy's
warnings about them in its own code, and operators catch those a later ``simplefilter("error")`` raises; but a
later filter that shows warnings (``simplefilter("always")``, ``"default"``, ``"module"``, ``"once"``, as pytest's
capture and ``pytest.warns`` install) comes first and showed them: "RuntimeWarning: divide by zero encountered in
log". Such warnings are now dropped where they would be shown, when raised in tracegrad's code or in NumPy's Python
code that tracegrad called (``np.var``'s sums); the user's own NumPy calls warn as before.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import run_both

INF, NAN = float("inf"), float("nan")
ROW = [INF, -INF, NAN, 0.0, -0.0, 1.0, -1.0, 1e38, -1e38, 88.0]
SHOWING = ("always", "default", "module", "once")

PROGRAMS = {
    "log": lambda lib, x: x.log(),
    "exp": lambda lib, x: x.exp(),
    "sqrt": lambda lib, x: x.sqrt(),
    "sin": lambda lib, x: x.sin(),
    "x * 0": lambda lib, x: x * 0,
    "x / 0": lambda lib, x: x / 0,
    "x / x": lambda lib, x: x / x,
    "sum": lambda lib, x: x.sum(),
    "mean": lambda lib, x: x.mean(),
    "std": lambda lib, x: x.std(),
    "var": lambda lib, x: x.var(),
    "cumsum": lambda lib, x: x.cumsum(0),
    "logsumexp": lambda lib, x: x.logsumexp(0),
    "x @ x": lambda lib, x: x @ x,
    "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x, (x.shape[0],)),
    "hardswish": lambda lib, x: lib.nn.functional.hardswish(x),
    "softsign": lambda lib, x: lib.nn.functional.softsign(x),
    "mse_loss": lambda lib, x: lib.nn.functional.mse_loss(x, x.flip(0)),
    "smooth_l1_loss": lambda lib, x: lib.nn.functional.smooth_l1_loss(x, x.flip(0)),
    "kl_div": lambda lib, x: lib.nn.functional.kl_div(x, x.flip(0), reduction="none"),
    "cdist": lambda lib, x: lib.cdist(x[:, None], x[:, None]),
}


def shown_and_values(lib, name: str, action: str, backward: bool):
    x = lib.tensor(ROW, requires_grad=True)
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter(action)
        out = PROGRAMS[name](lib, x)
        if backward:
            out = lib.autograd.grad(out.sum(), x)[0]
    return [(w.category.__name__, str(w.message)) for w in log], out.detach().numpy()


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("action", SHOWING)
@pytest.mark.parametrize("name", PROGRAMS)
def test_no_numpy_warning_shown_from_tracegrads_kernels(name, action, backward):
    (ours, our_values), (theirs, their_values) = run_both(shown_and_values, name, action, backward)
    assert ours == theirs == []
    np.testing.assert_allclose(our_values, their_values, rtol=1e-5, equal_nan=True)


@pytest.mark.parametrize("action", SHOWING)
def test_the_users_own_numpy_warning_is_still_shown_after_tracegrads(action):
    """tracegrad's dropped warning leaves no record behind: the user's identical one (``"once"`` keys on the text
    alone) is shown the first time, as with torch."""

    def program(lib):
        x = lib.tensor(ROW)
        with warnings.catch_warnings(record=True) as log:
            warnings.simplefilter(action)
            x.log(), x.std()
            np.log(np.array(0.0))
            np.std(np.array(ROW))  # (NumPy's own Python code, called by the user: tracegrad's std's sums too)
            x.log(), x.std()
        return [(w.category.__name__, str(w.message)) for w in log]

    ours, theirs = run_both(program)
    assert ours == theirs
    assert theirs[:2] == [
        ("RuntimeWarning", "divide by zero encountered in log"),
        ("RuntimeWarning", "invalid value encountered in reduce"),
    ]


def test_a_replaced_showwarning_still_sees_the_users_warnings():
    def program(lib):
        seen = []
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = lambda message, *rest: seen.append(str(message))
            lib.tensor([0.0]).log()
            np.log(np.array(0.0))
        return seen

    ours, theirs = run_both(program)
    assert ours == theirs == ["divide by zero encountered in log"]


def test_no_warning_from_numpys_code_under_the_default_filters():
    """``std``'s sums run in NumPy's Python code (``np.var``): tracegrad's import-time filter, which names
    tracegrad's modules, did not cover them even with no filter of the program's."""

    def program(lib):
        with warnings.catch_warnings(record=True) as log:  # (the filters as they are: no program's own)
            out = lib.tensor([INF, 1.0]).std()
        return [str(w.message) for w in log], out.item()

    (ours, our_value), (theirs, their_value) = run_both(program)
    assert ours == theirs == []
    assert np.isnan(our_value) and np.isnan(their_value)


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_no_floating_point_error_under_the_programs_errstate_raise(name, backward):
    """``np.errstate(invalid="raise")`` makes NumPy raise FloatingPointError where it would warn: the operators run
    their kernel again quietly, as for a strict filter's warning (torch computes silently). A user's callbacks run
    under the caller's error state, so tracegrad's operators inside them meet it too."""

    def program(lib):
        with np.errstate(divide="raise", invalid="raise", over="raise"):
            return shown_and_values(lib, name, "always", backward)

    (ours, our_values), (theirs, their_values) = run_both(program)
    assert ours == theirs == []
    np.testing.assert_allclose(our_values, their_values, rtol=1e-5, equal_nan=True)


CASTS = {
    "tensor of a list": lambda lib: lib.tensor([1e300, 1e-45, 1.0], dtype=lib.float32),
    "tensor of an array": lambda lib: lib.tensor(np.array([1e300, 1e-320]), dtype=lib.float32),
    "as_tensor of an array": lambda lib: lib.as_tensor(np.array([-1e300, 1e-320]), dtype=lib.float32),
    "as_tensor of a list": lambda lib: lib.as_tensor([1e300, 1.0], dtype=lib.float16),
}


@pytest.mark.parametrize("strict", ["simplefilter('error')", "np.errstate(all='raise')"])
@pytest.mark.parametrize("name", CASTS)
def test_creating_a_tensor_casts_beyond_its_dtypes_range_silently(name, strict):
    """A float beyond the dtype's range is read as inf, below it as 0 or a subnormal, silently as in torch; NumPy's
    cast warned ("overflow encountered in cast"), which a strict filter or error state made an exception."""

    def program(lib):
        with warnings.catch_warnings(), np.errstate(**({"all": "raise"} if "errstate" in strict else {})):
            warnings.simplefilter("error")
            return CASTS[name](lib).numpy()

    ours, theirs = run_both(program)
    np.testing.assert_array_equal(ours, theirs)
