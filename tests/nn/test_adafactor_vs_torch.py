"""torch.optim.Adafactor against torch: parameter trajectories over several steps (matrices, batches of matrices,
vectors, scalars; weight decay, maximize, hyper-parameters, float64, a tensor lr), its state and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, tg, torch

SHAPES = [(3, 4), (5,), (2, 3, 4), (), (1, 6)]


def _run(lib, kwargs, dtype="float32", steps=6, shapes=SHAPES, dtypes=None):
    rng = np.random.default_rng(0)
    dtypes = dtypes or [dtype] * len(shapes)
    params = [lib.tensor(rng.standard_normal(s).astype(d), requires_grad=True) for s, d in zip(shapes, dtypes)]
    targets = [rng.standard_normal(s).astype(d) for s, d in zip(shapes, dtypes)]
    kwargs = dict(kwargs)
    if "lr" in kwargs and isinstance(kwargs["lr"], str):
        kwargs["lr"] = lib.tensor(float(kwargs["lr"]))
    optimizer = lib.optim.Adafactor(params, **kwargs)
    trajectory = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = sum(((p - lib.tensor(t)) ** 2 * (i + 1)).sum() for i, (p, t) in enumerate(zip(params, targets)))
        loss.backward()
        optimizer.step()
        trajectory.append([p.detach().numpy().copy() for p in params])
    return trajectory, optimizer


CONFIGS = [
    {},
    {"weight_decay": 0.1},
    {"maximize": True},
    {"weight_decay": 0.05, "maximize": True},
    {"lr": 0.3, "d": 1.5, "eps": (1e-4, 1e-2), "beta2_decay": -0.5},
    {"lr": 2.0, "eps": (1e-30, 0.0)},
    {"lr": "0.05"},  # a tensor lr
    {"foreach": False, "weight_decay": 0.3, "lr": 0.1},
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CONFIGS, ids=[str(c) for c in CONFIGS])
def test_trajectories_as_in_torch(config, dtype):
    (ours, our_opt), (theirs, their_opt) = _run(tg, config, dtype), _run(torch, config, dtype)
    tolerance = {"rtol": 2e-6, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-13}
    for our_step, their_step in zip(ours, theirs):
        for a, b in zip(our_step, their_step):
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, **tolerance)
    our_state, their_state = our_opt.state_dict(), their_opt.state_dict()
    for key in their_state["state"]:
        assert list(our_state["state"][key]) == list(their_state["state"][key])
        for name, value in their_state["state"][key].items():
            mine = our_state["state"][key][name]
            assert tuple(mine.shape) == tuple(value.shape) and repr(mine.dtype) == repr(value.dtype), name
            np.testing.assert_allclose(mine.numpy(), value.numpy(), rtol=1e-5, atol=1e-9)
    groups = our_state["param_groups"][0], their_state["param_groups"][0]
    assert sorted(groups[0]) == sorted(groups[1])


def test_mixed_dtypes_share_the_first_parameters_eps():
    # torch sets eps1 from the first parameter's dtype and keeps it for the rest of the group
    shapes, dtypes = [(3, 4), (2, 2)], ["float64", "float32"]
    ours, _ = _run(tg, {"lr": 1.0, "eps": (None, 0.0)}, shapes=shapes, dtypes=dtypes, steps=3)
    theirs, _ = _run(torch, {"lr": 1.0, "eps": (None, 0.0)}, shapes=shapes, dtypes=dtypes, steps=3)
    for our_step, their_step in zip(ours, theirs):
        for a, b in zip(our_step, their_step):
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)


def test_parameters_without_gradients_are_skipped_and_hooks_run():
    for lib in (tg, torch):
        a, b = lib.ones(2, 2, requires_grad=True), lib.ones(3, requires_grad=True)
        optimizer = lib.optim.Adafactor([a, b])
        calls = []
        optimizer.register_step_post_hook(lambda *args, calls=calls: calls.append("post"))
        (a * 2).sum().backward()
        optimizer.step()
        assert calls == ["post"] and b.detach().numpy().tolist() == [1.0, 1.0, 1.0]
        assert len(optimizer.state) == 1


def test_defaults_and_repr():
    ours = tg.optim.Adafactor([tg.zeros(2, requires_grad=True)])
    theirs = torch.optim.Adafactor([torch.zeros(2, requires_grad=True)])
    assert ours.defaults == theirs.defaults
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("program", [
    lambda lib: lib.optim.Adafactor([lib.zeros(2, requires_grad=True)], lr=-1.0),
    lambda lib: lib.optim.Adafactor([lib.zeros(2, requires_grad=True)], lr=lib.ones(2)),
    lambda lib: lib.optim.Adafactor([lib.zeros(2, requires_grad=True)], beta2_decay=0.1),
    lambda lib: lib.optim.Adafactor([lib.zeros(2, requires_grad=True)], eps=(-1.0, 1e-3)),
    lambda lib: lib.optim.Adafactor([lib.zeros(2, requires_grad=True)], eps=(None, -1e-3)),
    lambda lib: lib.optim.Adafactor([lib.zeros(2, requires_grad=True)], d=0.5),
    lambda lib: lib.optim.Adafactor([lib.zeros(2, requires_grad=True)], weight_decay=-0.5),
    lambda lib: lib.optim.Adafactor([]),
])
def test_errors(program):
    theirs = raised(torch, program)
    assert theirs is not None and raised(tg, program) == theirs


def test_complex_parameters_are_refused():
    def program(lib):
        p = lib.zeros(2, dtype=lib.complex64, requires_grad=True)
        optimizer = lib.optim.Adafactor([p])
        (p.abs() ** 2).sum().backward()
        optimizer.step()

    theirs = raised(torch, program)
    assert theirs is not None and raised(tg, program) == theirs


def test_state_dict_round_trip_continues_the_trajectory():
    results = []
    for lib in (tg, torch):
        _, optimizer = _run(lib, {"weight_decay": 0.1}, steps=3)
        params = optimizer.param_groups[0]["params"]
        clone = lib.optim.Adafactor(params, weight_decay=0.1)
        clone.load_state_dict(optimizer.state_dict())
        for p in params:
            p.grad = lib.ones_like(p)
        clone.step()
        results.append([p.detach().numpy().copy() for p in params])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)
