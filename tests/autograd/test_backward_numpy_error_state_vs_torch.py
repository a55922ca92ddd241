"""NumPy's error state around a backward call and a built-in optimizer's step, as with PyTorch (which leaves NumPy
alone): the user's callbacks (tensor hooks, a custom Function's backward, an optimizer's closure) run under the
caller's ``np.errstate``; the state is the caller's again afterwards, also when a callback raises; tracegrad's own
arithmetic stays silent inside (``aten_vec.quietly_for_caller``, one frame since the speed work on backward's
fixed cost)."""

from __future__ import annotations

import pytest
from _lib import np, tg, torch


def _states_seen_in_hooks(lib, **errstate) -> list:
    x = lib.tensor([1.0, 0.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(np.geterr()["divide"]))
    with np.errstate(**errstate):
        (x * 2).sum().backward()
        seen.append(np.geterr()["divide"])
    seen.append(np.geterr()["divide"])
    return seen


@pytest.mark.parametrize("divide", ["raise", "warn", "ignore"])
def test_hooks_see_the_callers_error_state(divide):
    assert _states_seen_in_hooks(tg, divide=divide) == _states_seen_in_hooks(torch, divide=divide)


def _state_after_a_raising_hook(lib) -> tuple:
    x = lib.tensor([1.0, 2.0], requires_grad=True)

    def hook(g):
        raise ValueError("from the hook")

    x.register_hook(hook)
    with np.errstate(over="raise"):
        with pytest.raises(ValueError, match="from the hook"):
            (x * 2).sum().backward()
        inside = np.geterr()["over"]
    return inside, np.geterr()["over"]


def test_error_state_restored_after_a_raising_hook():
    assert _state_after_a_raising_hook(tg) == _state_after_a_raising_hook(torch)


def _inf_times_zero_backward(lib) -> list:
    """``inf * 0`` inside the built-in backward formulas is NaN without a word, even under ``np.errstate(all=raise)``."""
    x = lib.tensor([float("inf"), 1.0], requires_grad=True)
    with np.errstate(all="raise"):
        (x * 0.0).sum().backward()
        (x * x).sum().backward()
    return [str(v) for v in x.grad.tolist()]


def test_formulas_stay_quiet_under_a_strict_caller():
    assert _inf_times_zero_backward(tg) == _inf_times_zero_backward(torch)


def _closure_states(lib) -> list:
    w = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
    opt = lib.optim.SGD([w], lr=0.1)
    seen = []

    def closure():
        seen.append(np.geterr()["invalid"])
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with np.errstate(invalid="raise"):
        opt.step(closure)
        seen.append(np.geterr()["invalid"])
    seen.append(np.geterr()["invalid"])
    return seen + [w.detach().tolist()]


def test_optimizer_closure_sees_the_callers_error_state():
    assert _closure_states(tg) == _closure_states(torch)
