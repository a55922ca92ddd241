"""Differences that the programs of ``tests/test_user_programs36_vs_torch.py`` ran into, each reduced to the
optimizer or scheduler call that caused it and compared with torch.

- a scheduler over a 0-d tensor lr replaced the group's tensor by a new one each step, so the tensor the user
  (or the optimizer's caller) holds kept its first value; torch writes the new rate into it in place
  (``_update_param_group_val``), clones it for ``initial_lr``, ``base_lrs`` and ``get_last_lr()``;
- Adam/AdamW kept a 1-element tensor beta as given (``betas: (tensor([0.9000]), ...)``) and a list of betas as a
  list; torch makes a tuple of 0-d tensors (``_to_scalar``);
- a state_dict whose ``step`` counts are numbers (an older PyTorch's checkpoint) loaded as numbers and the next
  step failed (``'int' object has no attribute '_data'``); each torch optimizer's ``__setstate__`` makes them
  0-d tensors of the scalar dtype (ASGD's ``eta``/``mu`` and NAdam's ``mu_product`` as well);
- a step pre hook that returned arguments without the optimizer failed in Python's words ("SGD.step() missing 1
  required positional argument: 'self'"); torch's ``_use_grad_for_differentiable`` reads ``args[0]`` first
  (IndexError: tuple index out of range). LBFGS, SparseAdam and Adafactor, whose step is in ``torch.no_grad()``,
  keep Python's TypeError, as torch's do.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch
from _tutorial_lib import repr_or_error


def _assert_same(program) -> None:
    assert repr_or_error(program, tg) == repr_or_error(program, torch)


SCHEDULERS = {
    "StepLR": lambda L, o: L.optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.5),
    "ExponentialLR": lambda L, o: L.optim.lr_scheduler.ExponentialLR(o, 0.9),
    "CosineAnnealingLR": lambda L, o: L.optim.lr_scheduler.CosineAnnealingLR(o, 4),
    "ReduceLROnPlateau": lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau(o, patience=0),
    "SequentialLR": lambda L, o: L.optim.lr_scheduler.SequentialLR(
        o, [L.optim.lr_scheduler.ConstantLR(o, 0.5, total_iters=1), L.optim.lr_scheduler.ExponentialLR(o, 0.9)],
        milestones=[1]),
}


def _scheduled_tensor_lr(lib, make_scheduler):
    lr = lib.tensor(0.1)
    opt = lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=lr)
    sched = make_scheduler(lib, opt)
    seen = []
    for _ in range(3):
        opt.step()
        sched.step(1.0) if isinstance(sched, lib.optim.lr_scheduler.ReduceLROnPlateau) else sched.step()
        seen.append((lr.item(), opt.param_groups[0]["lr"] is lr, sched.get_last_lr()[0] is lr))
    initial = opt.param_groups[0].get("initial_lr")
    return seen, initial is lr, getattr(sched, "base_lrs", None)


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_writes_into_a_tensor_lr_as_torch(name):
    _assert_same(lambda L: _scheduled_tensor_lr(L, SCHEDULERS[name]))


def test_scheduler_state_dict_of_a_tensor_lr_as_torch():
    def program(L):
        lr = L.tensor(0.1)
        opt = L.optim.SGD([L.ones(2, requires_grad=True)], lr=lr)
        sched = L.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
        opt.step()
        sched.step()
        sd = sched.state_dict()
        return sd["base_lrs"], sd["_last_lr"], lr, opt.param_groups[0]["initial_lr"]

    _assert_same(program)


BETAS = {
    "1-element tensors": lambda L: (L.tensor([0.9]), L.tensor([[0.99]])),
    "0-d tensors": lambda L: (L.tensor(0.9), L.tensor(0.99)),
    "a list of floats": lambda L: [0.9, 0.99],
}


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize("betas", BETAS)
def test_adam_betas_as_torch_keeps_them(name, betas):
    def program(L):
        opt = getattr(L.optim, name)([L.ones(2, requires_grad=True)], lr=0.1, betas=BETAS[betas](L))
        return opt.defaults["betas"], opt.param_groups[0]["betas"], [b.shape for b in opt.defaults["betas"]
                                                                     if isinstance(b, L.Tensor)]

    _assert_same(program)


OLD_STATES = {
    "Adam": lambda L, z: {"step": 3, "exp_avg": z(), "exp_avg_sq": z()},
    "AdamW": lambda L, z: {"step": 3, "exp_avg": z(), "exp_avg_sq": z()},
    "Adagrad": lambda L, z: {"step": 3, "sum": z() + 0.5},
    "RMSprop": lambda L, z: {"step": 3, "square_avg": z()},
    "Adamax": lambda L, z: {"step": 3, "exp_avg": z(), "exp_inf": z()},
    "Adadelta": lambda L, z: {"step": 3, "square_avg": z(), "acc_delta": z()},
    "RAdam": lambda L, z: {"step": 3, "exp_avg": z(), "exp_avg_sq": z()},
    "NAdam": lambda L, z: {"step": 3, "mu_product": 0.5, "exp_avg": z(), "exp_avg_sq": z()},
    "ASGD": lambda L, z: {"step": 3, "eta": 0.1, "mu": 1, "ax": z()},
    "Rprop": lambda L, z: {"step": 3, "prev": z(), "step_size": z() + 0.1},
    "Adafactor": lambda L, z: {"step": 3, "row_var": L.zeros(2, 1), "col_var": L.zeros(1, 3)},
}


def _stepped_from_old_state(lib, name, options=None, default_dtype=None):
    before = lib.get_default_dtype()
    if default_dtype is not None:
        lib.set_default_dtype(getattr(lib, default_dtype))
    try:
        w = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=0.1, **(options or {}))
        sd = opt.state_dict()
        sd["state"] = {0: OLD_STATES[name](lib, lambda: lib.zeros(2, 3))}  # (each state its own tensor)
        opt.load_state_dict(sd)
        loaded = {k: (type(v).__name__, str(v.dtype) if isinstance(v, lib.Tensor) else v)
                  for k, v in opt.state[w].items()}
        (w * w).sum().backward()
        opt.step()
        return loaded, opt.state[w], w
    finally:
        lib.set_default_dtype(before)


@pytest.mark.parametrize("name", OLD_STATES)
def test_numbers_in_a_loaded_state_become_tensors_as_torch(name):
    _assert_same(lambda L: _stepped_from_old_state(L, name))


@pytest.mark.parametrize("options, default_dtype", [({"fused": True}, None), ({}, "float64"),
                                                    ({"fused": True}, "float64")])
def test_loaded_step_dtype_as_torch(options, default_dtype):
    _assert_same(lambda L: _stepped_from_old_state(L, "Adam", options, default_dtype))


def test_loaded_state_without_step_is_refused_as_torch():
    def program(L):
        w = L.ones(2, requires_grad=True)
        opt = L.optim.Adam([w])
        sd = opt.state_dict()
        sd["state"] = {0: {"exp_avg": L.zeros(2), "exp_avg_sq": L.zeros(2)}}
        return opt.load_state_dict(sd)

    _assert_same(program)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "NAdam", "Rprop", "ASGD",
                                  "Adamax", "RAdam", "Adadelta", "LBFGS", "SparseAdam", "Adafactor"])
def test_pre_hook_dropping_the_optimizer_as_torch(name):
    def program(L):
        opt = getattr(L.optim, name)([L.ones(2, requires_grad=True)], lr=0.1)
        opt.register_step_pre_hook(lambda o, args, kwargs: ((), {}))
        return opt.step()

    _assert_same(program)
