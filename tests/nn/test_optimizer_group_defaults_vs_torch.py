"""Optimizer groups loaded without newer options, and groups added later (compared with torch).

Each of torch's optimizers fills in the group options a loaded ``state_dict`` (or pickle) lacks, in its
``__setstate__``; tracegrad filled in a few, so Adagrad and RMSprop failed on a missing ``maximize`` with a
KeyError, and the others lost the key. Adagrad made its state at construction only, so a parameter of a group
added later failed its first step with KeyError: 'step'; torch makes that state at the first step, from the
constructor's ``initial_accumulator_value``.
"""

from __future__ import annotations

import pytest
from _lib import run_both

OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop")
KEYS = ("maximize", "foreach", "differentiable", "capturable", "fused", "nesterov", "amsgrad", "centered",
        "momentum", "decoupled_weight_decay")


def _load_without(lib, name: str, key: str):
    a = lib.nn.Parameter(lib.ones(2))
    make = getattr(lib.optim, name)
    opt = make([a], lr=0.1) if name == "SGD" else make([a])
    (a * 3).sum().backward()
    opt.step()
    saved = opt.state_dict()
    if key not in saved["param_groups"][0]:
        return "no such option"
    del saved["param_groups"][0][key]
    again = make([a], lr=0.1) if name == "SGD" else make([a])
    again.load_state_dict(saved)
    a.grad = lib.ones(2)
    again.step()
    group = again.param_groups[0]
    return a.tolist(), sorted(group), group[key]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_loaded_group_gets_torchs_defaults(name, key):
    def program(lib):  # (an option torch does not fill in fails there too: SGD's momentum)
        try:
            return _load_without(lib, name, key)
        except KeyError as exc:
            return "KeyError", str(exc)

    ours, theirs = run_both(program)
    assert ours == theirs


def _adagrad_group_added_later(lib):
    a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.full((2,), 2.0))
    opt = lib.optim.Adagrad([a], initial_accumulator_value=0.25)
    opt.add_param_group({"params": [b], "lr": 0.5, "initial_accumulator_value": 4.0})
    before = sorted(opt.state[b])
    for _ in range(2):
        opt.zero_grad()
        ((a * 3).sum() + (b * b).sum()).backward()
        opt.step()
    return before, a.tolist(), b.tolist(), opt.state[b]["sum"].tolist(), opt.state[b]["step"].item()


def test_adagrad_makes_a_later_groups_state_at_its_first_step():
    ours, theirs = run_both(_adagrad_group_added_later)
    assert ours == theirs


def test_adagrad_complex_accumulator_starts_at_complex_value():
    def program(lib):
        p = lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))
        return lib.optim.Adagrad([p], initial_accumulator_value=0.5).state[p]["sum"].tolist()

    ours, theirs = run_both(program)
    assert ours == theirs
