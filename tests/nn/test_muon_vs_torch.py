"""torch.optim.Muon against torch: the bfloat16 Newton–Schulz orthogonalisation (emulated), parameter
trajectories with and without Nesterov momentum, weight decay and each learning-rate adjustment, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, tg, torch
from torch.optim._muon import _zeropower_via_newtonschulz as torch_newton_schulz

from tracegrad.optim.muon import _bf16, _zeropower_via_newtonschulz

COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def test_bfloat16_rounding():
    values = np.array([1.0, 1.00390625, 1.005859375, -3.14159, 1e-8, 65504.0, np.inf, -np.inf, 3.0e38],
                      dtype=np.float32)
    expected = torch.tensor(values).bfloat16().float().numpy()
    np.testing.assert_array_equal(_bf16(values), expected)
    assert np.isnan(_bf16(np.float32(np.nan)))


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (5, 5), (16, 32), (33, 17), (1, 8)])
@pytest.mark.parametrize("steps", [1, 5])
def test_newton_schulz_as_in_torch(shape, steps):
    grad = np.random.default_rng(shape[0] * 100 + shape[1]).standard_normal(shape).astype(np.float32)
    ours = _zeropower_via_newtonschulz(grad, COEFFICIENTS, steps, 1e-7)
    theirs = torch_newton_schulz(torch.tensor(grad), COEFFICIENTS, steps, 1e-7).float().numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-2)
    assert (ours != theirs).mean() < 0.01  # bfloat16 values: almost all bit-identical


def _run(lib, kwargs, steps=5):
    rng = np.random.default_rng(1)
    shapes = [(4, 6), (7, 3), (5, 5)]
    params = [lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True) for s in shapes]
    targets = [lib.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    optimizer = lib.optim.Muon(params, **kwargs)
    trajectory = []
    for _ in range(steps):
        optimizer.zero_grad()
        sum(((p - t) ** 2 * (i + 1)).sum() for i, (p, t) in enumerate(zip(params, targets))).backward()
        optimizer.step()
        trajectory.append([p.detach().numpy().copy() for p in params])
    return trajectory, optimizer


CONFIGS = [{}, {"lr": 0.02, "nesterov": False, "weight_decay": 0.0},
           {"lr": 0.05, "adjust_lr_fn": "match_rms_adamw", "momentum": 0.3},
           {"lr": 0.01, "adjust_lr_fn": "original", "weight_decay": 0.5, "ns_steps": 3},
           {"lr": 0.03, "ns_coefficients": (2.0, -1.5, 0.5), "eps": 1e-3}]


@pytest.mark.parametrize("config", CONFIGS, ids=[str(c) for c in CONFIGS])
def test_trajectories_as_in_torch(config):
    (ours, our_opt), (theirs, their_opt) = _run(tg, config), _run(torch, config)
    for our_step, their_step in zip(ours, theirs):
        for a, b in zip(our_step, their_step):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert sorted(our_opt.defaults) == sorted(their_opt.defaults)
    for key, value in their_opt.state_dict()["state"].items():
        np.testing.assert_allclose(our_opt.state_dict()["state"][key]["momentum_buffer"].numpy(),
                                   value["momentum_buffer"].numpy(), rtol=1e-5, atol=1e-6)


def test_repr():
    assert repr(tg.optim.Muon([tg.zeros(2, 2, requires_grad=True)])) == repr(
        torch.optim.Muon([torch.zeros(2, 2, requires_grad=True)]))


@pytest.mark.parametrize("program", [
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], lr=-1.0),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], lr=lib.ones(2)),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], momentum=-0.1),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], weight_decay=-0.1),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], adjust_lr_fn="other"),
    lambda lib: lib.optim.Muon([lib.zeros(3, requires_grad=True)]),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, 2, requires_grad=True)]),
])
def test_errors(program):
    theirs = raised(torch, program)
    assert theirs is not None and raised(tg, program) == theirs


@pytest.mark.parametrize("kwargs", [{"ns_steps": 100}, {"ns_coefficients": (1.0, 2.0)}])
def test_step_errors(kwargs):
    def program(lib):
        p = lib.ones(2, 2, requires_grad=True)
        optimizer = lib.optim.Muon([p], **kwargs)
        p.sum().backward()
        optimizer.step()

    theirs = raised(torch, program)
    assert theirs is not None and raised(tg, program) == theirs
