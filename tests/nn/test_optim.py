"""tracegrad.optim against torch.optim: update trajectories, state, state_dict round trips, schedulers."""

from __future__ import annotations

import copy
import math
import warnings

import pytest
from _lib import assert_close, np, tg, torch


def _weights(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in ((8, 5), (8,), (3, 8), (3,))]


def _model(lib, seed: int = 0):
    model = lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
    with lib.no_grad():
        for p, w in zip(model.parameters(), _weights(seed)):
            p.copy_(lib.tensor(w))
    return model


def _data(step: int):
    rng = np.random.default_rng(100 + step)
    return rng.standard_normal((16, 5)).astype(np.float32), rng.integers(0, 3, 16)


def _train(lib, opt_name: str, kwargs: dict, steps: int = 8, groups: bool = False, closure: bool = False):
    model = _model(lib)
    if groups:
        params = [{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.05}]
    else:
        params = model.parameters()
    opt = getattr(lib.optim, opt_name)(params, **kwargs)
    losses = []
    for step in range(steps):
        x, y = _data(step)

        def loss_fn(x=x, y=y):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            return loss

        if closure:
            losses.append(float(opt.step(loss_fn).detach()))
        else:
            losses.append(float(loss_fn().detach()))
            opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()], losses, opt


CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.3, "maximize": True}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "maximize": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.2, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.8, "centered": True, "weight_decay": 0.05}),
    ("RMSprop", {"lr": 0.01, "maximize": True, "eps": 1e-4}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1, "initial_accumulator_value": 0.2}),
]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_trajectory_matches_torch(name, kwargs):
    ours, our_losses, _ = _train(tg, name, kwargs)
    theirs, their_losses, _ = _train(torch, name, kwargs)
    assert_close(our_losses, their_losses, rtol=1e-5, atol=1e-6)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_param_groups_and_closure(name):
    kwargs = {"lr": 0.01, "momentum": 0.9} if name != "Adam" else {"lr": 0.01}
    ours, our_losses, _ = _train(tg, name, kwargs, groups=True, closure=True)
    theirs, their_losses, _ = _train(torch, name, kwargs, groups=True, closure=True)
    assert_close(our_losses, their_losses, rtol=1e-5, atol=1e-6)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("SGD", {"lr": 0.1, "momentum": 0.9}),
        ("Adam", {"lr": 0.01, "amsgrad": True}),
        ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}),
        ("Adagrad", {"lr": 0.1}),
    ],
)
def test_state_dict_matches_torch_and_resumes(name, kwargs):
    _, _, ours = _train(tg, name, kwargs, steps=3)
    _, _, theirs = _train(torch, name, kwargs, steps=3)
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert sd["state"].keys() == tsd["state"].keys()
    for k in sd["state"]:
        assert sd["state"][k].keys() == tsd["state"][k].keys()
        for key in sd["state"][k]:
            a, b = sd["state"][k][key], tsd["state"][k][key]
            assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
            assert_close(a, b, rtol=1e-5, atol=1e-5)  # float32 state of magnitude ~10

    # an optimizer rebuilt from the state dict continues exactly like an uninterrupted one
    model = _model(tg)
    with tg.no_grad():
        for p, q in zip(model.parameters(), ours.param_groups[0]["params"]):
            p.copy_(q)
    fresh = getattr(tg.optim, name)(model.parameters(), **kwargs)
    fresh.load_state_dict(copy.deepcopy(sd))
    for opt, params in ((fresh, list(model.parameters())), (ours, ours.param_groups[0]["params"])):
        x, y = _data(50)
        opt.zero_grad()
        net = tg.nn.Sequential(tg.nn.Linear(5, 8), tg.nn.Tanh(), tg.nn.Linear(8, 3))
        net[0].weight, net[0].bias, net[2].weight, net[2].bias = params
        tg.nn.functional.cross_entropy(net(tg.tensor(x)), tg.tensor(y)).backward()
        opt.step()
    for p, q in zip(model.parameters(), ours.param_groups[0]["params"]):
        assert_close(p, q, rtol=0, atol=0)


def test_load_state_dict_errors():
    a = tg.optim.SGD([tg.nn.Parameter(tg.ones(2))], lr=0.1)
    b = tg.optim.SGD([tg.nn.Parameter(tg.ones(2)), tg.nn.Parameter(tg.ones(2))], lr=0.1)
    with pytest.raises(
        ValueError,
        match="loaded state dict contains a parameter group that doesn't match the size of optimizer's group",
    ):
        a.load_state_dict(b.state_dict())
    b.add_param_group({"params": [tg.nn.Parameter(tg.ones(1))]})
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
        a.load_state_dict(b.state_dict())


def test_zero_grad_set_to_none_default():
    p = tg.nn.Parameter(tg.ones(3))
    opt = tg.optim.SGD([p], lr=0.1)
    p.grad = tg.ones(3)
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and float(p.grad.sum()) == 0
    opt.zero_grad()
    assert p.grad is None


def test_step_skips_params_without_grad_and_bumps_version():
    p, q = tg.nn.Parameter(tg.ones(2)), tg.nn.Parameter(tg.ones(2))
    opt = tg.optim.Adam([p, q], lr=0.1)
    p.grad = tg.ones(2)
    v = p._version
    opt.step()
    assert p._version > v and len(opt.state[q]) == 0
    assert_close(q, np.ones(2))


def test_constructor_errors_and_defaults():
    p = [tg.nn.Parameter(tg.ones(1))]
    with pytest.raises(
        TypeError,
        match="params argument given to the optimizer should be an iterable of Tensors or "
        "dicts, but got torch.FloatTensor",
    ):
        tg.optim.SGD(p[0], lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        tg.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        tg.optim.SGD(p, lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        tg.optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0: 1.0"):
        tg.optim.Adam(p, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        tg.optim.SGD([tg.ones(1, requires_grad=True) * 2], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt = tg.optim.SGD(p, lr=0.1)
        opt.add_param_group({"params": p})
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
        ours = getattr(tg.optim, name)([tg.nn.Parameter(tg.ones(1))]).defaults
        theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))]).defaults
        assert ours == theirs


def test_optimizer_repr_matches_torch():
    ours = repr(tg.optim.SGD([tg.nn.Parameter(tg.ones(1))], lr=0.1, momentum=0.9))
    theirs = repr(torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1, momentum=0.9))
    assert ours == theirs


def test_step_hooks():
    p = tg.nn.Parameter(tg.ones(1))
    p.grad = tg.ones(1)
    opt = tg.optim.SGD([p], lr=0.1)
    log = []
    h = opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: log.append("post"))
    opt.step()
    h.remove()
    opt.step()
    assert log == ["pre", "post", "post"]


# ---- schedulers -------------------------------------------------------------------------------------------------

SCHEDULERS = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [2, 5, 5], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 4, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": lambda e: 1.0 / (e + 1)}),
    ("MultiplicativeLR", {"lr_lambda": lambda e: 0.95}),
    ("ConstantLR", {"factor": 0.5, "total_iters": 3}),
    ("LinearLR", {"start_factor": 0.25, "total_iters": 4}),
]


def _schedule(lib, name, kwargs, steps=12):
    p = lib.nn.Parameter(lib.ones(1))
    opt = lib.optim.SGD([{"params": [p]}, {"params": [lib.nn.Parameter(lib.ones(1))], "lr": 0.5}], lr=0.1)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    lrs = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, sched


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_sequences_match_torch(name, kwargs):
    ours, sched = _schedule(tg, name, kwargs)
    theirs, tsched = _schedule(torch, name, kwargs)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-12)
    ours_sd = {k: v for k, v in sched.state_dict().items() if k != "lr_lambdas"}
    theirs_sd = {k: v for k, v in tsched.state_dict().items() if k != "lr_lambdas"}
    assert set(ours_sd) <= set(theirs_sd) | {"_is_initial"}
    for k in ("last_epoch", "base_lrs", "_step_count", "_last_lr"):
        assert ours_sd[k] == pytest.approx(theirs_sd[k])


def test_scheduler_state_dict_roundtrip():
    _, sched = _schedule(tg, "StepLR", {"step_size": 2})
    state = sched.state_dict()
    assert "optimizer" not in state
    p = tg.nn.Parameter(tg.ones(1))
    opt = tg.optim.SGD([p, tg.nn.Parameter(tg.ones(1))], lr=0.1)
    fresh = tg.optim.lr_scheduler.StepLR(opt, step_size=5)
    fresh.load_state_dict(state)
    assert fresh.step_size == 2 and fresh.last_epoch == sched.last_epoch


def test_scheduler_step_before_optimizer_warns():
    p = tg.nn.Parameter(tg.ones(1))
    opt = tg.optim.SGD([p], lr=0.1)
    sched = tg.optim.lr_scheduler.StepLR(opt, 1)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        sched.step()
    opt2 = tg.optim.SGD([p], lr=0.1)
    sched2 = tg.optim.lr_scheduler.ExponentialLR(opt2, 0.5)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()
    assert sched2.get_last_lr() == [0.05]


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.96, 0.97, 0.8, 0.81, 0.82, 0.83, 0.84]

    def run(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=1.0)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5, cooldown=1, min_lr=0.1)
        out = []
        for m in metrics:
            sched.step(m)
            out.append(opt.param_groups[0]["lr"])
        return out

    assert run(tg) == run(torch)


def test_cosine_closed_form_with_epoch_warns():
    p = tg.nn.Parameter(tg.ones(1))
    opt = tg.optim.SGD([p], lr=1.0)
    sched = tg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        sched.step(5)
    assert sched.get_last_lr()[0] == pytest.approx(0.5 * (1 + math.cos(math.pi * 5 / 10)))


def test_sgd_large_parameters_update_exactly():
    """Plain SGD on parameters large enough for its scratch buffer: bit-identical to torch's
    ``p.add_(grad, alpha=-lr)`` (one fused multiply-add), for several parameters of one shape, and nothing extra
    in ``state_dict``."""
    rng = np.random.default_rng(7)
    ws = [rng.standard_normal((300, 300)).astype(np.float32) for _ in range(2)]
    gs = [rng.standard_normal((300, 300)).astype(np.float32) for _ in range(2)]
    params = [tg.nn.Parameter(tg.tensor(w.copy())) for w in ws]
    opt = tg.optim.SGD(params, lr=0.01)
    for _ in range(2):
        for p, g in zip(params, gs):
            p.grad = tg.tensor(g)
        opt.step()
    for p, w, g in zip(params, ws, gs):
        expected = torch.tensor(w.copy())
        for _ in range(2):
            expected.add_(torch.tensor(g), alpha=-0.01)
        np.testing.assert_array_equal(p.detach().numpy(), expected.numpy())
        np.testing.assert_array_equal(p.grad.numpy(), g)  # the gradient itself is untouched
    assert opt.state_dict()["state"] == {}
