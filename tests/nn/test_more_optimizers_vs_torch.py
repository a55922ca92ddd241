"""Adadelta, Adamax, ASGD, NAdam, RAdam, Rprop and LBFGS, driven by tracegrad and by torch side by side.

Random configurations (seeded) run a few steps of the same non-quadratic loss from the same float32 or float64
parameters; after every step the parameters must agree, and at the end the optimizer's state_dict (state keys,
values and dtypes, param_groups). Errors for bad hyper-parameters and unsupported options are compared too.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_close, raised, tg, to_numpy, torch, warning_texts

_ELEMENTWISE = ("Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "Rprop")
N_CASES = 120


def _options(rng: np.random.Generator, name: str) -> dict:
    lr = float(rng.choice([0.1, 0.01, 0.5]))
    decay = float(rng.choice([0, 0.05]))
    maximize = bool(rng.integers(2))
    betas = (float(rng.choice([0.9, 0.3])), float(rng.choice([0.999, 0.9])))
    if name == "Adadelta":
        return {"lr": lr * 10, "rho": float(rng.choice([0.9, 0.5])), "weight_decay": decay, "maximize": maximize}
    if name == "Adamax":
        return {"lr": lr, "betas": betas, "weight_decay": decay, "maximize": maximize}
    if name == "ASGD":
        return {"lr": lr, "lambd": float(rng.choice([1e-4, 0.1])), "alpha": float(rng.choice([0.75, 0.5])),
                "t0": float(rng.choice([1e6, 2.0])), "weight_decay": decay, "maximize": maximize}
    if name == "NAdam":
        return {"lr": lr, "betas": betas, "weight_decay": decay, "maximize": maximize,
                "momentum_decay": float(rng.choice([4e-3, 0.1])), "decoupled_weight_decay": bool(rng.integers(2))}
    if name == "RAdam":
        # beta2 = 0.5 makes rho_t exceed 5 from the first steps, so the rectified branch runs too
        return {"lr": lr, "betas": (betas[0], float(rng.choice([0.999, 0.5]))), "weight_decay": decay,
                "maximize": maximize, "decoupled_weight_decay": bool(rng.integers(2))}
    return {"lr": lr, "etas": (float(rng.choice([0.5, 0.3])), float(rng.choice([1.2, 2.0]))),
            "step_sizes": (float(rng.choice([1e-6, 0.05])), float(rng.choice([50, 0.3]))), "maximize": maximize}


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    name = _ELEMENTWISE[seed % len(_ELEMENTWISE)]
    shapes = [tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(0, 3)))) for _ in range(int(rng.integers(1, 3)))]
    return (name, _options(rng, name), shapes, str(rng.choice(["float32", "float64"])), int(rng.integers(1, 6)),
            bool(rng.integers(2)), int(rng.integers(1 << 30)))


def _params(lib, shapes, dtype: str, seed: int) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    params = [lib.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in shapes]
    targets = [lib.tensor(rng.standard_normal(s).astype(dtype)) for s in shapes]
    return params, targets


def _loss(params, targets):
    # not quadratic (the curvature changes between steps) and with bounded gradients (maximize stays finite)
    return sum(((p - t).tanh() ** 2 * (i + 1) + 0.1 * (p - t) ** 2).sum() for i, (p, t) in enumerate(zip(params, targets)))


def _state_view(state_dict: dict) -> dict:
    """A state_dict with every tensor as (dtype name, values), so dtypes are compared too."""

    def view(v):
        if hasattr(v, "detach"):
            return (str(v.dtype).replace("torch.", "").replace("tracegrad.", ""), to_numpy(v))
        if isinstance(v, dict):
            return {k: view(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(view(x) for x in v)
        return v

    return view(state_dict)


def _assert_views_match(ours, theirs, rtol: float, atol: float) -> None:
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            _assert_views_match(ours[k], theirs[k], rtol, atol)
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            _assert_views_match(a, b, rtol, atol)
    elif isinstance(theirs, np.ndarray):
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=rtol, abs=atol)
    else:
        assert ours == theirs


def _tolerance(dtype: str) -> dict:
    return {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}


def _run(lib, case: tuple) -> tuple:
    name, options, shapes, dtype, steps, set_to_none, seed = case
    params, targets = _params(lib, shapes, dtype, seed)
    optimizer = getattr(lib.optim, name)(params, **options)
    trajectory = []
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=set_to_none)
        _loss(params, targets).backward()
        optimizer.step()
        trajectory.append([to_numpy(p).copy() for p in params])
    return trajectory, _state_view(optimizer.state_dict())


@pytest.mark.parametrize("seed", range(N_CASES))
def test_random_elementwise_optimizer_as_in_torch(seed):
    case = _case(seed)
    (ours, our_state), (theirs, their_state) = _run(tg, case), _run(torch, case)
    tol = _tolerance(case[3])
    for our_params, their_params in zip(ours, theirs, strict=True):
        assert_close(our_params, their_params, **tol)
    _assert_views_match(our_state, their_state, **tol)


def test_state_dict_round_trip_continues_identically():
    def program(lib):
        params, targets = _params(lib, [(3, 2), (4,)], "float32", 7)
        out = []
        for name in _ELEMENTWISE:
            first = getattr(lib.optim, name)(params, lr=0.05)
            for _ in range(2):
                first.zero_grad()
                _loss(params, targets).backward()
                first.step()
            second = getattr(lib.optim, name)(params, lr=0.05)
            second.load_state_dict(first.state_dict())
            second.zero_grad()
            _loss(params, targets).backward()
            second.step()
            out.append([to_numpy(p).copy() for p in params])
        return out

    ours, theirs = program(tg), program(torch)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


_BAD_HPARAMS = [
    ("Adadelta", {"lr": -1.0}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"eps": -1e-3}),
    ("Adadelta", {"weight_decay": -0.1}),
    ("Adamax", {"lr": -0.1}), ("Adamax", {"eps": -1.0}), ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"betas": (0.9, -0.1)}), ("Adamax", {"weight_decay": -1}),
    ("ASGD", {"lr": -0.01}), ("ASGD", {"weight_decay": -0.5}),
    ("NAdam", {"lr": -2e-3}), ("NAdam", {"betas": (0.9, 1.0)}), ("NAdam", {"momentum_decay": -1.0}),
    ("NAdam", {"eps": -1e-8}), ("NAdam", {"weight_decay": -1e-2}),
    ("RAdam", {"lr": -1.0}), ("RAdam", {"betas": (-0.1, 0.9)}), ("RAdam", {"eps": -0.1}),
    ("RAdam", {"weight_decay": -3.0}),
    ("Rprop", {"lr": -1.0}), ("Rprop", {"etas": (1.5, 2.0)}), ("Rprop", {"etas": (0.5, 0.9)}),
    ("Rprop", {"etas": (0.0, 1.2)}),
    ("LBFGS", {"lr": -1.0}),
]


@pytest.mark.parametrize(("name", "options"), _BAD_HPARAMS)
def test_bad_hyperparameters_raise_as_in_torch(name, options):
    def program(lib):
        getattr(lib.optim, name)([lib.zeros(2, requires_grad=True)], **options)

    ours, theirs = raised(tg, program), raised(torch, program)
    assert theirs is not None and ours == theirs


@pytest.mark.parametrize("name", _ELEMENTWISE)
@pytest.mark.parametrize("option", ["capturable", "differentiable"])
def test_unsupported_options_fail_at_step_as_in_torch(name, option):
    def program(lib):
        p = lib.zeros(2, requires_grad=True)
        p.grad = lib.ones(2)
        getattr(lib.optim, name)([p], **{option: True}).step()

    ours, theirs = raised(tg, program), raised(torch, program)
    assert theirs is not None and ours == theirs


@pytest.mark.parametrize("name", _ELEMENTWISE)
def test_defaults_and_param_groups_as_in_torch(name):
    def program(lib):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
        optimizer = getattr(lib.optim, name)([{"params": [a]}, {"params": [b], "lr": 0.5}])
        return optimizer.defaults, optimizer.state_dict()["param_groups"]

    assert run_pair(program)


def run_pair(program) -> bool:
    ours, theirs = program(tg), program(torch)
    assert ours == theirs
    return True


def _lbfgs_run(lib, options: dict, dtype: str, steps: int, seed: int) -> tuple:
    params, targets = _params(lib, [(3, 2), (4,)], dtype, seed)
    optimizer = lib.optim.LBFGS(params, **options)
    evaluations = []

    def closure():
        optimizer.zero_grad()
        loss = _loss(params, targets)
        loss.backward()
        evaluations.append(float(loss.detach()))
        return loss

    trajectory, losses = [], []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(steps):
            losses.append(float(optimizer.step(closure).detach()))
            trajectory.append([to_numpy(p).copy() for p in params])
    state = optimizer.state_dict()
    return trajectory, losses, evaluations, _state_view(state), warning_texts(caught)


_LBFGS_CASES = [
    ({}, "float64"),
    ({"lr": 0.5, "max_iter": 4}, "float64"),
    ({"history_size": 2, "max_iter": 6}, "float64"),
    ({"line_search_fn": "strong_wolfe"}, "float64"),
    ({"line_search_fn": "strong_wolfe", "history_size": 3, "max_iter": 7, "max_eval": 9}, "float64"),
    ({"tolerance_grad": 1e-2, "tolerance_change": 1e-3}, "float64"),
    ({"max_iter": 5}, "float32"),
    ({"line_search_fn": "strong_wolfe", "max_iter": 5}, "float32"),
]


@pytest.mark.parametrize(("options", "dtype"), _LBFGS_CASES)
def test_lbfgs_as_in_torch(options, dtype):
    ours, theirs = _lbfgs_run(tg, options, dtype, 3, 11), _lbfgs_run(torch, options, dtype, 3, 11)
    # float32: curvature pairs are differences of nearby gradients, so last-bit differences in reductions
    # (dot products, sums) grow to ~1e-5 over a few iterations
    tol = {"rtol": 1e-3, "atol": 2e-4} if dtype == "float32" else {"rtol": 1e-8, "atol": 1e-10}
    for our_params, their_params in zip(ours[0], theirs[0], strict=True):
        assert_close(our_params, their_params, **tol)
    np.testing.assert_allclose(ours[1], theirs[1], **tol)
    assert len(ours[2]) == len(theirs[2])  # the same number of closure evaluations
    _assert_views_match(ours[3], theirs[3], **tol)
    assert ours[4] == theirs[4]


def test_lbfgs_stops_at_once_when_already_optimal():
    def program(lib):
        p = lib.zeros(3, requires_grad=True)
        optimizer = lib.optim.LBFGS([p])

        def closure():
            optimizer.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        optimizer.step(closure)
        return sorted(optimizer.state_dict()["state"][0].items())

    assert run_pair(program)


@pytest.mark.parametrize("case", ["groups", "line_search", "no_closure"])
def test_lbfgs_errors_as_in_torch(case):
    def program(lib):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        if case == "groups":
            lib.optim.LBFGS([{"params": [a]}, {"params": [b]}])
        optimizer = lib.optim.LBFGS([a], line_search_fn="backtracking" if case == "line_search" else None)

        def closure():
            optimizer.zero_grad()
            loss = (a * a).sum()
            loss.backward()
            return loss

        optimizer.step(closure) if case != "no_closure" else optimizer.step()

    ours, theirs = raised(tg, program), raised(torch, program)
    assert theirs is not None and ours == theirs
