"""Random optimizer runs, by tracegrad and by torch: the same parameters after every step, the same learning
rates from the schedulers, the same state keys, errors and warnings.

Each case draws an optimizer (SGD, Adam, AdamW, RMSprop, Adagrad) with its options (momentum, dampening, Nesterov,
weight decay, maximize, AMSGrad, centered, lr_decay, initial accumulator), one or two parameters of random shapes
(0-d included), one to four steps of a weighted quadratic loss, gradients zeroed to None or to zeros, and a
StepLR or CosineAnnealingLR schedule or none.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch

N_CASES = 300
_OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad")


def _options(rng, name: str) -> dict:
    lr = float(rng.choice([0.1, 0.01]))
    decay = float(rng.choice([0, 0.01]))
    maximize = bool(rng.integers(2))
    if name == "SGD":
        momentum, dampening = float(rng.choice([0, 0.9])), float(rng.choice([0, 0.1]))
        nesterov = bool(rng.integers(2)) and momentum > 0 and dampening == 0
        return {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": decay, "nesterov": nesterov,
                "maximize": maximize}
    if name in ("Adam", "AdamW"):
        return {"lr": lr, "betas": (float(rng.choice([0.9, 0.5])), float(rng.choice([0.999, 0.9]))),
                "weight_decay": decay, "amsgrad": bool(rng.integers(2)), "maximize": maximize}
    if name == "RMSprop":
        return {"lr": lr, "alpha": float(rng.choice([0.99, 0.9])), "weight_decay": decay,
                "momentum": float(rng.choice([0, 0.9])), "centered": bool(rng.integers(2)), "maximize": maximize}
    return {"lr": lr, "lr_decay": float(rng.choice([0, 0.01])), "weight_decay": decay,
            "initial_accumulator_value": float(rng.choice([0, 0.1])), "maximize": maximize}


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    name = str(rng.choice(_OPTIMIZERS))
    shapes = [tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(0, 3)))) for _ in range(int(rng.integers(1, 3)))]
    return (name, _options(rng, name), shapes, int(rng.integers(1, 5)),
            str(rng.choice(["none", "StepLR", "CosineAnnealingLR"])), bool(rng.integers(2)), int(rng.integers(1 << 30)))


def _run(lib, case: tuple) -> tuple:
    name, options, shapes, steps, schedule, set_to_none, seed = case
    rng = np.random.default_rng(seed)
    params = [lib.tensor(rng.standard_normal(s).round(3).tolist(), dtype=lib.float64, requires_grad=True)
              for s in shapes]
    targets = [lib.tensor(rng.standard_normal(s).round(3).tolist(), dtype=lib.float64) for s in shapes]
    log: list = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optimizer = getattr(lib.optim, name)(params, **options)
        scheduler = {"none": lambda: None,
                     "StepLR": lambda: lib.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5),
                     "CosineAnnealingLR": lambda: lib.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=3)}[
            schedule]()
        for _ in range(steps):
            optimizer.zero_grad(set_to_none=set_to_none)
            sum(((p - t) ** 2 * (i + 1)).sum() for i, (p, t) in enumerate(zip(params, targets))).backward()
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            log.append(([np.asarray(p.detach().reshape(-1).tolist()) for p in params],
                        optimizer.param_groups[0]["lr"]))
        state = optimizer.state_dict()["state"]
    return log, sorted(state[0]) if state else [], [str(w.message) for w in caught]


@pytest.mark.parametrize("seed", range(N_CASES))
def test_random_optimizer_run_as_in_torch(seed):
    case = _case(seed)
    (ours, our_keys, our_warnings), (theirs, their_keys, their_warnings) = _run(tg, case), _run(torch, case)
    assert our_keys == their_keys and our_warnings == their_warnings and len(ours) == len(theirs)
    for (our_params, our_lr), (their_params, their_lr) in zip(ours, theirs):
        assert our_lr == pytest.approx(their_lr, rel=1e-12)
        for a, b in zip(our_params, their_params):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_cases_cover_every_optimizer():
    assert {_case(seed)[0] for seed in range(N_CASES)} == set(_OPTIMIZERS)
