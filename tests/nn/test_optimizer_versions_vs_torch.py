"""Optimizer steps advance the version counters (``Tensor._version``) of parameters, gradients and state
tensors as torch's do.

torch bumps a tensor's version once per in-place op, and its single-tensor updates run several per step
(``exp_avg_sq.mul_(beta2).addcmul_(...)`` is two). The counts are observable: a graph that saved a parameter
before ``step()`` fails its backward naming them ("... is at version 2; expected version 0 instead")."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("AdamW", dict()),
    ("AdamW", dict(weight_decay=0.0, amsgrad=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(weight_decay=0.1, momentum=0.5, centered=True)),
    ("RMSprop", dict(momentum=0.5, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(weight_decay=0.1, lr_decay=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(weight_decay=0.1, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(weight_decay=0.1)),
    ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(weight_decay=0.1, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(weight_decay=0.1, t0=1, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(weight_decay=0.1, maximize=True)),
    ("Muon", dict(lr=0.02)),
    ("Muon", dict(lr=0.02, nesterov=False, weight_decay=0.1)),
]

# How the optimizer is driven: foreach (where the optimizer takes it), a tensor lr, two param groups, and
# zero_grad(set_to_none=False), whose grad.zero_() bumps the gradients' versions too.
VARIANTS = {
    "plain": dict(),
    "foreach": dict(foreach=True),
    "single_tensor": dict(foreach=False),
    "tensor_lr": dict(tensor_lr=True),
    "two_groups": dict(groups=2),
    "zero_grad_in_place": dict(set_to_none=False),
}

_MATRIX_ONLY = ("Adafactor", "Muon")  # (their 2-D paths; Adafactor gets a 1-D parameter too)


def _shapes(name: str) -> list[tuple[int, ...]]:
    if name == "Muon":
        return [(3, 4), (2, 3), (4, 2)]
    if name == "Adafactor":
        return [(3, 4), (3,), (4, 2)]
    return [(3,), (2, 3), (4,)]


def _run(lib, name: str, kwargs: dict, steps: int = 3, *, foreach=None, tensor_lr=False, groups=1,
         set_to_none=True) -> list[dict[str, int | None]]:
    """The versions of each parameter, its .grad and its state tensors after each of ``steps`` steps; the third
    parameter never gets a gradient."""
    kwargs = dict(kwargs)
    if foreach is not None:
        kwargs["foreach"] = foreach
    if tensor_lr:
        kwargs["lr"] = lib.tensor(kwargs.get("lr", 0.01))
    params = [lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, int(np.prod(s)), dtype=np.float32).reshape(s)))
              for s in _shapes(name)]
    if groups == 2:
        params_arg = [{"params": params[:1]}, {"params": params[1:], "lr": 0.005}]
    else:
        params_arg = params
    opt = getattr(lib.optim, name)(params_arg, **kwargs)
    snapshots = []
    for i in range(steps):
        opt.zero_grad(set_to_none=set_to_none)
        # a target that alternates sides, so Rprop's sign changes and ASGD's averaging both happen
        loss = sum(((p - 0.3 * (i + 1) * (-1) ** i) ** 2).sum() for p in params[:2])
        loss.backward()
        opt.step()
        snapshots.append(_versions(opt, params))
    return snapshots


def _versions(opt, params) -> dict[str, int | None]:
    versions: dict[str, int | None] = {}
    for j, p in enumerate(params):
        versions[f"p{j}"] = p._version
        versions[f"p{j}.grad"] = None if p.grad is None else p.grad._version
        for key, value in opt.state[p].items():
            if hasattr(value, "_version"):
                versions[f"p{j}.{key}"] = value._version
    return versions


def _cases():
    for name, kwargs in CONFIGS:
        for variant, options in VARIANTS.items():
            if name in _MATRIX_ONLY and "foreach" in options:
                continue
            case_id = f"{name}-{'-'.join(f'{k}={v}' for k, v in kwargs.items()) or 'defaults'}-{variant}"
            yield pytest.param(name, kwargs, options, id=case_id)


@pytest.mark.parametrize(("name", "kwargs", "options"), list(_cases()))
def test_versions_after_steps_match_torch(name, kwargs, options):
    assert _run(tg, name, kwargs, **options) == _run(torch, name, kwargs, **options)


def _lbfgs_versions(lib, steps: int, line_search_fn) -> dict:
    p = lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, 4, dtype=np.float32)))
    opt = lib.optim.LBFGS([p], lr=0.5, max_iter=4, history_size=2, line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        loss = ((p - 0.3) ** 4).sum()
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)

    def version(value):
        if isinstance(value, list):
            return [version(v) for v in value]
        return getattr(value, "_version", None)

    return {"p": p._version, "grad": p.grad._version, **{k: version(v) for k, v in opt.state[p].items()}}


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_versions_match_torch(line_search_fn):
    for steps in (1, 2, 3):
        assert _lbfgs_versions(tg, steps, line_search_fn) == _lbfgs_versions(torch, steps, line_search_fn)


def _scheduled_versions(lib) -> tuple[int, int]:
    """An lr scheduler's steps touch no tensor: only the optimizer's own writes count."""
    p = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    scheduler = lib.optim.lr_scheduler.StepLR(opt, step_size=1)
    for _ in range(3):
        opt.zero_grad()
        p.sum().backward()
        opt.step()
        scheduler.step()
    return p._version, opt.state[p]["momentum_buffer"]._version


def test_lr_scheduler_steps_leave_versions_as_torch():
    assert _scheduled_versions(tg) == _scheduled_versions(torch)


def _averaged_versions(lib, ema: bool) -> list[list[int]]:
    model = lib.nn.Linear(3, 2)
    multi_avg_fn = lib.optim.swa_utils.get_ema_multi_avg_fn(0.9) if ema else None
    averaged = lib.optim.swa_utils.AveragedModel(model, multi_avg_fn=multi_avg_fn)
    versions = []
    for _ in range(3):
        averaged.update_parameters(model)
        versions.append([t._version for t in (*averaged.parameters(), averaged.n_averaged, *model.parameters())])
    return versions


@pytest.mark.parametrize("ema", [False, True])
def test_averaged_model_update_versions_match_torch(ema):
    assert _averaged_versions(tg, ema) == _averaged_versions(torch, ema)


def _zero_grad_of_graph_grad(lib) -> tuple:
    """zero_grad(set_to_none=False) on a gradient that has a graph (create_graph=True): detach_, then zero_."""
    p = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([p], lr=0.1)
    (p * p).sum().backward(create_graph=True)
    grad = p.grad
    opt.zero_grad(set_to_none=False)
    return grad._version, grad.requires_grad, grad.grad_fn is None, grad.tolist()


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_zero_grad_in_place_of_graph_grad_matches_torch():
    assert _zero_grad_of_graph_grad(tg) == _zero_grad_of_graph_grad(torch)


def _backward_after_step_error(lib, make_optimizer) -> str:
    """A graph saved the parameter (mul saves both operands); the step then writes it in place."""
    p = lib.nn.Parameter(lib.tensor([1.0, 2.0, 3.0]))
    opt = make_optimizer(lib, p)
    for _ in range(2):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
    loss = (p * p).sum()
    opt.zero_grad()
    (p * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    opt.step()
    with pytest.raises(RuntimeError) as info:
        loss.backward()
    return str(info.value)


@pytest.mark.parametrize("make_optimizer", [
    lambda lib, p: lib.optim.AdamW([p], lr=0.1),
    lambda lib, p: lib.optim.NAdam([p], lr=0.1),
    lambda lib, p: lib.optim.ASGD([p], lr=0.1),
], ids=["AdamW", "NAdam", "ASGD"])
def test_backward_after_step_names_torch_versions(make_optimizer):
    message = _backward_after_step_error(tg, make_optimizer)
    assert message == _backward_after_step_error(torch, make_optimizer)
    assert "is at version 6; expected version 4 instead" in message
