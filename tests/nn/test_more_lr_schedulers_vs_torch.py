"""SequentialLR, ChainedScheduler, CyclicLR, CosineAnnealingWarmRestarts, OneCycleLR and PolynomialLR, driven by
tracegrad and by torch side by side: the learning rates (and cycled momentum / beta1) after every step,
get_last_lr, state_dict contents, warnings and error messages.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, tg, torch, warning_texts


def _optimizer(lib, kind: str = "SGD", groups: int = 1):
    params = [{"params": [lib.zeros(2, requires_grad=True)], "lr": 0.1 * (i + 1)} for i in range(groups)]
    if kind == "SGD":
        return lib.optim.SGD(params, lr=0.1, momentum=0.9)
    return getattr(lib.optim, kind)(params, lr=0.1)


def _scheduler(lib, optimizer, spec: str):
    sched = lib.optim.lr_scheduler
    if spec == "poly":
        return sched.PolynomialLR(optimizer, total_iters=6, power=2.0)
    if spec == "poly_default":
        return sched.PolynomialLR(optimizer)
    if spec == "sequential":
        first = sched.ConstantLR(optimizer, factor=0.25, total_iters=3)
        second = sched.ExponentialLR(optimizer, gamma=0.8)
        return sched.SequentialLR(optimizer, [first, second], milestones=[4])
    if spec == "sequential3":
        return sched.SequentialLR(
            optimizer,
            [sched.LinearLR(optimizer, start_factor=0.1, total_iters=3), sched.StepLR(optimizer, 2, 0.5),
             sched.CosineAnnealingLR(optimizer, T_max=4)],
            milestones=[3, 7],
        )
    if spec == "chained":
        return sched.ChainedScheduler(
            [sched.ConstantLR(optimizer, factor=0.5, total_iters=4), sched.ExponentialLR(optimizer, gamma=0.9)]
        )
    if spec == "chained_poly":
        return sched.ChainedScheduler(
            [sched.PolynomialLR(optimizer, total_iters=5), sched.MultiStepLR(optimizer, [2, 4])], optimizer=optimizer
        )
    if spec.startswith("cyclic_"):
        mode = spec.split("_", 1)[1]
        extra = {"scale_fn": (lambda x: 0.5 ** x), "scale_mode": "iterations"} if mode == "custom" else {"mode": mode}
        return sched.CyclicLR(optimizer, base_lr=0.01, max_lr=[0.1 * (i + 1) for i in range(len(
            optimizer.param_groups))], step_size_up=3, step_size_down=2, gamma=0.9, **extra)
    if spec == "warm":
        return sched.CosineAnnealingWarmRestarts(optimizer, T_0=3, eta_min=0.001)
    if spec == "warm_mult":
        return sched.CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=2)
    if spec == "onecycle_cos":
        return sched.OneCycleLR(optimizer, max_lr=1.0, total_steps=12)
    if spec == "onecycle_linear3":
        max_lr = [0.5, 1.0] if len(optimizer.param_groups) == 2 else 0.5
        return sched.OneCycleLR(optimizer, max_lr=max_lr, epochs=3, steps_per_epoch=4, anneal_strategy="linear",
                                three_phase=True, pct_start=0.25)
    if spec == "onecycle_nomomentum":
        return sched.OneCycleLR(optimizer, max_lr=0.3, total_steps=10, cycle_momentum=False, div_factor=10.0)
    raise AssertionError(spec)


def _hparams(optimizer) -> list:
    return [(g["lr"], g.get("momentum"), tuple(g["betas"]) if "betas" in g else None) for g in optimizer.param_groups]


def _state(scheduler) -> dict:
    state = scheduler.state_dict()

    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if not callable(x)}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    return clean(state)


def _run(lib, spec: str, kind: str, groups: int, steps: int, optimizer_first: bool) -> tuple:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optimizer = _optimizer(lib, kind, groups)
        scheduler = _scheduler(lib, optimizer, spec)
        log = [(_hparams(optimizer), list(scheduler.get_last_lr()))]
        for _ in range(steps):
            if optimizer_first:
                optimizer.step()
            scheduler.step()
            log.append((_hparams(optimizer), list(scheduler.get_last_lr())))
    return log, _state(scheduler), warning_texts(caught)


def _assert_same(ours, theirs) -> None:
    if isinstance(theirs, dict):
        assert sorted(ours) == sorted(theirs)
        for k in theirs:
            _assert_same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)
    else:
        assert ours == theirs


_SPECS = ["poly", "poly_default", "sequential", "sequential3", "chained", "chained_poly", "cyclic_triangular",
          "cyclic_triangular2", "cyclic_exp_range", "cyclic_custom", "warm", "warm_mult", "onecycle_cos",
          "onecycle_linear3", "onecycle_nomomentum"]


@pytest.mark.parametrize("spec", _SPECS)
@pytest.mark.parametrize(("kind", "groups", "optimizer_first"), [("SGD", 1, True), ("Adam", 2, True),
                                                                  ("SGD", 2, False)])
def test_schedule_as_in_torch(spec, kind, groups, optimizer_first):
    steps = {"onecycle_cos": 12, "onecycle_linear3": 12, "onecycle_nomomentum": 10}.get(spec, 14)
    ours, theirs = (_run(lib, spec, kind, groups, steps, optimizer_first) for lib in (tg, torch))
    _assert_same(ours, theirs)


def test_random_warm_restarts_with_fractional_epochs():
    rng = np.random.default_rng(3)
    epochs = [float(e) for e in np.round(np.sort(rng.uniform(0, 20, 25)), 3)] + [3, 0.5, 7]

    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            optimizer = _optimizer(lib, "SGD", 2)
            scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=3, T_mult=2, eta_min=0.01)
            lrs = []
            for epoch in epochs:
                optimizer.step()
                scheduler.step(epoch)
                lrs.append((scheduler.get_last_lr(), scheduler.T_cur, scheduler.T_i, scheduler.last_epoch))
        return lrs, warning_texts(caught)

    _assert_same(program(tg), program(torch))


def test_state_dict_round_trip_resumes_schedule():
    def program(lib):
        optimizer = _optimizer(lib, "SGD", 1)
        scheduler = _scheduler(lib, optimizer, "sequential")
        for _ in range(3):
            optimizer.step()
            scheduler.step()
        saved = scheduler.state_dict()
        other_opt = _optimizer(lib, "SGD", 1)
        other_opt.load_state_dict(optimizer.state_dict())
        other = _scheduler(lib, other_opt, "sequential")
        other.load_state_dict(saved)
        out = []
        for _ in range(4):
            other_opt.step()
            other.step()
            out.append(other.get_last_lr())
        return out

    _assert_same(program(tg), program(torch))


def test_get_lr_outside_step_warns():
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            optimizer = _optimizer(lib, "SGD", 1)
            scheduler = lib.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=4)
            values = scheduler.get_lr()
        return values, warning_texts(caught)

    _assert_same(program(tg), program(torch))


def test_onecycle_past_total_steps_raises():
    def program(lib):
        optimizer = _optimizer(lib, "SGD", 1)
        scheduler = lib.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=3)
        for _ in range(4):
            optimizer.step()
            scheduler.step()

    ours, theirs = raised(tg, program), raised(torch, program)
    assert theirs is not None and ours == theirs


_ERRORS = [
    lambda s, o, lib: s.OneCycleLR(o, max_lr=1.0),
    lambda s, o, lib: s.OneCycleLR(o, max_lr=1.0, total_steps=0),
    lambda s, o, lib: s.OneCycleLR(o, max_lr=1.0, epochs=0, steps_per_epoch=3),
    lambda s, o, lib: s.OneCycleLR(o, max_lr=1.0, epochs=2, steps_per_epoch=1.5),
    lambda s, o, lib: s.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1.5),
    lambda s, o, lib: s.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="exp"),
    lambda s, o, lib: s.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=5),
    lambda s, o, lib: s.OneCycleLR(lib.optim.Adagrad(o.param_groups[0]["params"]), max_lr=1.0, total_steps=5),
    lambda s, o, lib: s.OneCycleLR("not an optimizer", max_lr=1.0, total_steps=5),
    lambda s, o, lib: s.CyclicLR(o, base_lr=0.1, max_lr=1.0, mode="bogus"),
    lambda s, o, lib: s.CyclicLR(o, base_lr=[0.1, 0.2], max_lr=1.0),
    lambda s, o, lib: s.CyclicLR(lib.optim.Adagrad(o.param_groups[0]["params"]), base_lr=0.1, max_lr=1.0),
    lambda s, o, lib: s.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda s, o, lib: s.CosineAnnealingWarmRestarts(o, T_0=2.5),
    lambda s, o, lib: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda s, o, lib: s.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="x"),
    lambda s, o, lib: s.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    lambda s, o, lib: s.SequentialLR(o, [], milestones=[]),
    lambda s, o, lib: s.SequentialLR(o, [s.StepLR(o, 2), s.StepLR(o, 3)], milestones=[]),
    lambda s, o, lib: s.SequentialLR(o, [s.StepLR(o, 2), s.ReduceLROnPlateau(o)], milestones=[2]),
    lambda s, o, lib: s.SequentialLR(o, [s.StepLR(o, 2), object()], milestones=[2]),
    lambda s, o, lib: s.ChainedScheduler([]),
    lambda s, o, lib: s.ChainedScheduler([s.StepLR(o, 2), s.ReduceLROnPlateau(o)]),
    lambda s, o, lib: s.PolynomialLR(o, last_epoch=3),
]


@pytest.mark.parametrize("index", range(len(_ERRORS)))
def test_errors_as_in_torch(index):
    def program(lib):
        optimizer = _optimizer(lib, "SGD", 1)
        _ERRORS[index](lib.optim.lr_scheduler, optimizer, lib)

    ours, theirs = raised(tg, program), raised(torch, program)
    assert theirs is not None and ours == theirs
