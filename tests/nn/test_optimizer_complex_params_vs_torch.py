"""Optimizers on complex parameters update them as PyTorch's do: as their ``view_as_real`` pairs of independent reals
(``exp_avg_sq`` holds each part's square, square roots, maxima and signs are taken part by part, Rprop's step sizes
start at ``complex(lr, lr)``), with the weight decay in complex arithmetic where PyTorch's single-tensor update
decays before viewing as real and in real pairs in its foreach update. Where PyTorch refuses complex parameters
(``fused``) or writes into one through a view (``differentiable``), the errors are its own.

Values are compared bit for bit where the real case matches bit for bit: everywhere for the updates without a
square root (SGD, Adamax, ASGD, Rprop); for the others, the state made from the gradients alone (``exp_avg``,
``exp_avg_sq``, ``square_avg``...), while the parameters are compared within a few dozen ulps: torch's CPU square
root is MKL's, an ulp off for some inputs (see ``test_optimizer_bits_vs_torch``)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, tg, torch

ALL = "all"
STEPS = 7  # (RAdam's rectified update starts at the sixth step)

CASES = [
    ("SGD", {"lr": 0.1}, ALL),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.1, "maximize": True}, ALL),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}, ALL),
    ("Adam", {"lr": 0.01}, ("exp_avg", "exp_avg_sq")),
    ("Adam", {"lr": 0.01, "amsgrad": True, "maximize": True}, ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}, ()),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}, ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")),
    ("RMSprop", {"lr": 0.01}, ("square_avg",)),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9}, ("square_avg", "grad_avg")),
    ("RMSprop", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}, ()),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}, ("sum",)),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "maximize": True}, ()),
    ("Adamax", {"lr": 0.01}, ALL),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}, ALL),
    ("NAdam", {"lr": 0.01}, ("exp_avg", "exp_avg_sq", "mu_product")),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}, ("exp_avg", "exp_avg_sq", "mu_product")),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1}, ("mu_product",)),
    ("RAdam", {"lr": 0.01}, ("exp_avg", "exp_avg_sq")),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}, ("exp_avg", "exp_avg_sq")),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}, ()),
    ("Adadelta", {}, ("square_avg",)),
    ("Adadelta", {"weight_decay": 0.1, "maximize": True}, ()),
    ("ASGD", {"lr": 0.01, "t0": 2}, ALL),
    ("ASGD", {"lr": 0.01, "weight_decay": 0.1, "t0": 2, "maximize": True}, ALL),
    ("Rprop", {"lr": 0.01}, ALL),
    ("Rprop", {"lr": 0.01, "maximize": True}, ALL),
]


def _complex(rng, shape, dtype) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _real_of(dtype) -> type:
    return np.float32 if dtype == np.complex64 else np.float64


def _params(lib, rng, dtype) -> list:
    """A transposed complex leaf (strided state), a real one in the same group, a 0-d complex one."""
    return [
        lib.tensor(_complex(rng, (5, 7), dtype)).t().detach().requires_grad_(),
        lib.tensor(rng.standard_normal(6).astype(_real_of(dtype)), requires_grad=True),
        lib.tensor(_complex(rng, (), dtype), requires_grad=True),
    ]


def _new_grads(lib, rng, params) -> None:
    for p in params:
        dtype = p.detach().numpy().dtype
        values = _complex(rng, p.shape, dtype) if dtype.kind == "c" else rng.standard_normal(p.shape).astype(dtype)
        p.grad = lib.tensor(values)


def _outcome(params, opt) -> list:
    """(name, value) for each parameter and each entry of the optimizer's state_dict, tensors as arrays."""
    entries = [(f"param {i}", p.detach().numpy().copy()) for i, p in enumerate(params)]
    for index, state in opt.state_dict()["state"].items():
        for key, value in state.items():
            entries.append((f"{index}.{key}", value.detach().numpy().copy() if hasattr(value, "detach") else value))
    return entries


def _trajectory(lib, name: str, options: dict, dtype, foreach, steps: int = STEPS) -> list:
    rng = np.random.default_rng(5)
    params = _params(lib, rng, dtype)
    opt = getattr(lib.optim, name)(params, foreach=foreach, **options)
    for _ in range(steps):
        _new_grads(lib, rng, params)
        opt.step()
    return _outcome(params, opt)


def _as_reals(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(a.real.dtype) if a.dtype.kind == "c" else a


def _assert_same(ours, theirs, exact, ulps: float = 64) -> None:
    assert [k for k, _ in ours] == [k for k, _ in theirs]
    for (key, a), (_, b) in zip(ours, theirs):
        if not isinstance(b, np.ndarray):
            assert a == b, key
            continue
        assert (a.dtype, a.shape) == (b.dtype, b.shape), key
        a, b = _as_reals(a), _as_reals(b)
        if key.endswith(".step") or exact == ALL or key.split(".")[-1] in exact:
            assert np.array_equal(a, b), f"{key}: {np.count_nonzero(a != b)} of {a.size} differ"
        else:  # (torch's square roots: a few ulps, carried on)
            np.testing.assert_allclose(a, b, rtol=0, atol=ulps * np.finfo(a.dtype).eps * np.abs(b).max(), err_msg=key)


@pytest.mark.parametrize("foreach", [None, False, True])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize(("name", "options", "exact"), CASES)
def test_complex_parameters_update_as_real_pairs(name, options, exact, dtype, foreach):
    theirs = _trajectory(torch, name, options, dtype, foreach)
    ours = _trajectory(tg, name, options, dtype, foreach)
    _assert_same(ours, theirs, exact)


def test_rprop_step_sizes_of_a_complex_parameter_start_at_lr_in_both_parts():
    def first_step_sizes(lib):
        p = lib.zeros(3, dtype=lib.complex64, requires_grad=True)
        opt = lib.optim.Rprop([p], lr=0.25)
        p.grad = lib.zeros(3, dtype=lib.complex64)
        opt.step()
        return opt.state[p]["step_size"].numpy()

    assert np.array_equal(first_step_sizes(tg), first_step_sizes(torch))


# ---- state_dict round trips and learning-rate schedules ----------------------------------------------------


def _resumed(lib, name: str, options: dict, scheduler=None) -> list:
    """Three steps, the state_dict loaded into a new optimizer (and scheduler), three more steps."""
    rng = np.random.default_rng(9)
    params = _params(lib, rng, np.complex64)
    opt = getattr(lib.optim, name)(params, **options)
    sched = scheduler(lib, opt) if scheduler else None
    for i in range(6):
        if i == 3:
            saved = opt.state_dict()
            opt = getattr(lib.optim, name)(params, **options)
            opt.load_state_dict(saved)
            if sched is not None:
                saved_sched = sched.state_dict()
                sched = scheduler(lib, opt)
                sched.load_state_dict(saved_sched)
        _new_grads(lib, rng, params)
        opt.step()
        if sched is not None:
            sched.step()
    return [*_outcome(params, opt), ("lr", opt.param_groups[0]["lr"])]


def _one_cycle(lib, opt):
    return lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=10)


def _step_lr(lib, opt):
    return lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


@pytest.mark.parametrize(
    ("name", "options", "scheduler", "exact"),
    [
        ("SGD", {"lr": 0.1, "momentum": 0.9}, _one_cycle, ALL),  # (the schedule cycles the momentum too)
        ("Rprop", {"lr": 0.01}, _step_lr, ALL),
        ("Adam", {"lr": 0.01, "amsgrad": True}, _step_lr, ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")),
        ("Adagrad", {"lr": 0.1}, None, ("sum",)),
        ("RMSprop", {"lr": 0.01, "centered": True}, _one_cycle, ("square_avg", "grad_avg")),
    ],
)
def test_complex_state_survives_state_dict_and_schedules(name, options, scheduler, exact):
    _assert_same(_resumed(tg, name, options, scheduler), _resumed(torch, name, options, scheduler), exact)


# ---- LBFGS ----------------------------------------------------------------------------------------------------


def _lbfgs(lib, dtypes) -> list:
    rng = np.random.default_rng(3)
    targets = [_complex(rng, 4, dt) if np.dtype(dt).kind == "c" else rng.standard_normal(4).astype(dt)
               for dt in dtypes]
    params = [lib.zeros(4, dtype=getattr(lib, np.dtype(dt).name), requires_grad=True) for dt in dtypes]
    opt = lib.optim.LBFGS(params, lr=0.5, max_iter=5, history_size=3)

    def closure():
        opt.zero_grad()
        loss = sum(((p - lib.tensor(t)).abs() ** 4).sum() for p, t in zip(params, targets))
        loss.backward()
        return loss

    for _ in range(2):
        opt.step(closure)
    return [p.detach().numpy() for p in params] + [opt.state_dict()["state"][0]["d"].numpy()]


@pytest.mark.parametrize("dtypes", [(np.complex64,), (np.float32, np.complex64), (np.complex128, np.float64)])
def test_lbfgs_flattens_complex_parameters_as_real_pairs(dtypes):
    for ours, theirs in zip(_lbfgs(tg, dtypes), _lbfgs(torch, dtypes), strict=True):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(_as_reals(ours), _as_reals(theirs), rtol=1e-5, atol=1e-6)


# ---- refusals -----------------------------------------------------------------------------------------------


def _fused_steps(lib, name: str, kinds: str) -> tuple:
    """``fused=True`` on parameters of the given kinds ("c": complex64, "r": float32): the error of two steps, the
    parameters after it and the state's keys per parameter."""
    dtypes = {"c": lib.complex64, "r": lib.float32}
    params = [lib.ones(3, dtype=dtypes[k], requires_grad=True) for k in kinds]
    options = {"momentum": 0.9} if name == "SGD" else {}
    opt = getattr(lib.optim, name)(params, lr=0.1, fused=True, **options)

    def two_steps(lib):
        for _ in range(2):
            for p in params:
                p.grad = lib.ones_like(p)
            opt.step()

    error = raised(lib, two_steps)
    state = {i: sorted(s) for i, s in opt.state_dict()["state"].items()}
    return error, [p.detach().numpy().tolist() for p in params], state


@pytest.mark.parametrize("kinds", ["c", "rc", "cr"])
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_refuses_complex_parameters_as_torch(name, kinds):
    ours, theirs = _fused_steps(tg, name, kinds), _fused_steps(torch, name, kinds)
    assert ours[0] is not None
    assert ours == theirs


_DIFFERENTIABLE_CASES = [
    ("SGD", {"lr": 0.1}),  # (complex arithmetic on the parameter itself)
    ("Adam", {}),
    ("Adam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),  # (the decay writes before the view)
    ("AdamW", {"weight_decay": 0.0}),
    ("RMSprop", {}),
    ("Adagrad", {}),
    ("Adamax", {}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),  # (NAdam views before decaying)
    ("RAdam", {}),
    ("Adadelta", {}),  # (adds its delta back as complex)
    ("ASGD", {}),
    ("Rprop", {}),
]


@pytest.mark.parametrize("real_first", [False, True])
@pytest.mark.parametrize(("name", "options"), _DIFFERENTIABLE_CASES)
def test_differentiable_update_of_a_complex_leaf_fails_as_torch(name, options, real_first):
    def step(lib):
        params = [lib.ones(3, dtype=lib.complex64, requires_grad=True)]
        if real_first:
            params.insert(0, lib.ones(3, requires_grad=True))
        opt = getattr(lib.optim, name)(params, differentiable=True, **options)
        for p in params:
            p.grad = lib.ones_like(p)
        opt.step()

    ours = raised(tg, step)
    assert ours is not None
    assert ours == raised(torch, step)
