"""What a recording ``TorchFunctionMode`` sees of an optimizer's ``step`` and ``zero_grad`` and of
``Module.zero_grad``, as torch's: the profiler operators around them, the grad switches, each ``_init_group``'s
reads, the state's factories, then the update's Tensor and ``_foreach_*`` calls (SGD, Adam and AdamW, foreach off,
on and by default), with the same values after the steps; and the names handlers read off ``_foreach_*``."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch
from _tf_mode_lib import recorded_run


def _recorded(lib, program) -> tuple[list, list]:
    """The calls a mode sees while ``program(lib)()`` runs (torch's name, else module:qualname), and the program's
    model's parameters afterwards. (The kinds handed with them: tests/test_tf_mode_gaps28_vs_torch.py.)"""
    lib.manual_seed(0)
    run, model = program(lib)
    seen = recorded_run(lib, run)
    return seen, [p.detach().numpy().copy() for p in model.parameters()]


def _trained(optimizer: str, steps: int = 2, **options):
    def program(lib):
        model = lib.nn.Linear(3, 2)
        opt = getattr(lib.optim, optimizer)(model.parameters(), lr=0.1, **options)

        def run():
            for _ in range(steps):
                # (gradients without a matrix product, whose bits may differ: 2 * weight and ones)
                (model.weight.square().sum() + model.bias.sum()).backward()
                opt.step()
                opt.zero_grad()
        return run, model
    return program


def _zero_grad(of_optimizer: bool, set_to_none: bool, **options):
    def program(lib):
        model = lib.nn.Linear(2, 2)
        model(lib.ones(1, 2)).sum().backward()
        opt = lib.optim.SGD(model.parameters(), **options)
        target = opt if of_optimizer else model
        return (lambda: target.zero_grad(set_to_none)), model
    return program


PROGRAMS = {
    "sgd": _trained("SGD"),
    "sgd_momentum": _trained("SGD", momentum=0.9, nesterov=True, weight_decay=0.01),
    "sgd_loop": _trained("SGD", momentum=0.9, foreach=False),
    "sgd_foreach": _trained("SGD", momentum=0.9, foreach=True),
    "sgd_foreach_plain": _trained("SGD", foreach=True, maximize=True),
    "adam": _trained("Adam"),
    "adam_loop": _trained("Adam", foreach=False, weight_decay=0.1),
    "adam_foreach": _trained("Adam", foreach=True),
    "adam_foreach_amsgrad": _trained("Adam", foreach=True, amsgrad=True, maximize=True),
    "adamw": _trained("AdamW"),
    "adamw_foreach": _trained("AdamW", foreach=True),
    "optimizer_zero_grad_to_none": _zero_grad(True, True),
    "optimizer_zero_grad_foreach": _zero_grad(True, False, foreach=True),
    "optimizer_zero_grad_loop": _zero_grad(True, False),
    "module_zero_grad_to_none": _zero_grad(False, True),
    "module_zero_grad": _zero_grad(False, False),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_mode_sees_torchs_calls_and_values(name):
    calls, values = _recorded(tg, PROGRAMS[name])
    torch_calls, torch_values = _recorded(torch, PROGRAMS[name])
    assert calls == torch_calls
    for ours, theirs in zip(values, torch_values):
        assert ours.dtype == theirs.dtype
        if name.startswith("adam"):  # (torch's square roots are MKL's, within an ulp: ops/README.md)
            np.testing.assert_allclose(ours, theirs, rtol=1e-6)
        else:
            assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("name", ["sgd_momentum", "adam", "adam_foreach", "adamw"])
def test_steps_under_a_mode_give_the_values_without_one(name):
    """The watched path computes the NumPy update's bits."""
    tg.manual_seed(0)
    run, model = PROGRAMS[name](tg)
    run()
    _, watched = _recorded(tg, PROGRAMS[name])
    for plain, seen in zip([p.detach().numpy() for p in model.parameters()], watched):
        assert np.array_equal(plain, seen)


@pytest.mark.parametrize("name", ["_foreach_add_", "_foreach_mul", "_foreach_norm", "_foreach_zero_"])
def test_foreach_function_names(name):
    def names(lib) -> tuple:
        func = getattr(lib, name)
        return lib.overrides.resolve_name(func), func.__module__, func.__qualname__, func.__name__

    assert names(tg) == names(torch)


def test_record_function_operators_seen_by_a_mode():
    """``record_function``'s two profiler operators, by name (not the packet's ``__qualname__``: pybind11's, which
    names its build)."""
    def seen(lib) -> list:
        def run():
            with lib.autograd.profiler.record_function("label"):
                pass

        calls = recorded_run(lib, run, lambda lib, func, types, args, kwargs: (
            lib.overrides.resolve_name(func), func.__name__, func.__module__, args[0]))
        return [(name, short, module, first if isinstance(first, str) else None)
                for name, short, module, first in calls]

    assert seen(tg) == seen(torch)
