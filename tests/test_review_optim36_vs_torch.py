"""Review of set 36 (tensor lr written in place by the schedulers, Adam's betas, numbers in a loaded optimizer
state, step pre hooks), each difference found reduced to a program compared with torch."""

from __future__ import annotations

import pytest
from _lib import tg, torch
from _tutorial_lib import repr_or_error


def _assert_same(program) -> None:
    assert repr_or_error(program, tg) == repr_or_error(program, torch)


def _numbers(lib, value):
    """``value`` with each tensor as (its values, dtype): comparable between the two libraries, bit for bit."""
    if isinstance(value, lib.Tensor):
        return value.tolist(), str(value.dtype).rpartition(".")[2]
    if isinstance(value, (list, tuple)):
        return type(value)(_numbers(lib, v) for v in value)
    return value


def test_cyclic_lr_clones_a_tensor_base_lr_as_torch():
    # torch's _format_param clones: the group's rate is then written in place, never the caller's tensor
    def program(L):
        base = L.tensor(0.01)
        momentum = L.tensor(0.8)
        opt = L.optim.SGD([L.ones(2, requires_grad=True)], lr=0.1, momentum=0.9)
        sched = L.optim.lr_scheduler.CyclicLR(opt, base, 0.1, step_size_up=2, base_momentum=momentum)
        group = opt.param_groups[0]
        seen = [(group["lr"] is base, group["base_momentum"] is momentum)]
        for _ in range(3):
            opt.step()
            sched.step()
            seen.append(_numbers(L, (base, group["lr"], sched.base_lrs, momentum, group["momentum"])))
        return seen

    _assert_same(program)


def test_one_cycle_lr_clones_a_tensor_max_lr_as_torch():
    def program(L):
        max_lr = L.tensor(0.5)
        opt = L.optim.SGD([L.ones(2, requires_grad=True)], lr=0.1, momentum=0.9)
        L.optim.lr_scheduler.OneCycleLR(opt, [max_lr], total_steps=6)
        return opt.param_groups[0]["max_lr"] is max_lr

    _assert_same(program)


def _loaded_state(L, name: str, key: str, value, group_update: dict | None = None) -> list:
    """``name``'s state after one step, saved with ``key`` set to ``value`` (and the group updated), loaded back
    under float64 as the default dtype."""
    before = L.get_default_dtype()
    L.set_default_dtype(L.float64)
    try:
        p = L.tensor([1.0, -2.0], requires_grad=True)
        opt = getattr(L.optim, name)([p], lr=0.01)
        p.grad = L.tensor([0.5, -0.25])
        opt.step()
        saved = opt.state_dict()
        saved["state"][0][key] = value
        saved["param_groups"][0].update(group_update or {})
        opt.load_state_dict(saved)
        return [(k, _numbers(L, v)) for k, v in opt.state[p].items()]
    finally:
        L.set_default_dtype(before)


@pytest.mark.parametrize("name", ["RAdam", "NAdam", "ASGD", "Adamax", "Adadelta", "RMSprop", "Rprop", "Adafactor",
                                  "Adam", "Adagrad"])
def test_a_fused_key_makes_a_loaded_step_float32_only_where_torch_has_fused(name):
    # torch's Adam/AdamW/Adagrad make a number step float32 in a fused group; the others ignore the key
    _assert_same(lambda L: _loaded_state(L, name, "step", 1, {"fused": True}))


@pytest.mark.parametrize(("name", "key"), [("ASGD", "eta"), ("ASGD", "mu"), ("NAdam", "mu_product")])
@pytest.mark.parametrize("value", [None, "0.5", 1, True])
def test_loaded_scalar_states_other_than_step_go_to_tensor_as_torch(name, key, value):
    # torch.tensor(value, dtype=...) without float() first: its own errors for None and a string
    _assert_same(lambda L: _loaded_state(L, name, key, value))


_OPTIONS = [{}, {"capturable": True}, {"foreach": True}, {"differentiable": True}]
# (SparseAdam has none of these options)
_BETAS_CASES = [(name, options) for name in ("Adam", "AdamW", "Adamax", "NAdam", "RAdam") for options in _OPTIONS]
_BETAS_CASES.append(("SparseAdam", {}))


@pytest.mark.parametrize(("name", "options"), _BETAS_CASES)
@pytest.mark.parametrize("with_grad", [False, True])
def test_three_betas_fail_at_their_unpacking_first_as_torch(name, options, with_grad):
    # torch's step unpacks ``beta1, beta2 = group["betas"]`` before its checks, with or without gradients

    def program(L):
        p = L.tensor([1.0, -2.0], requires_grad=True)
        opt = getattr(L.optim, name)([p], lr=0.01, betas=(0.9, 0.99, 0.1), **options)
        if with_grad:
            p.grad = L.tensor([0.5, -0.25])
        opt.step()
        return p.tolist()

    _assert_same(program)


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "Rprop"])
def test_an_element_wise_optimizer_step_is_named_for_its_class_as_torch(name):
    # each torch optimizer defines its own step: Python's error for a wrong argument, and a hook's, name it
    def program(L):
        p = L.ones(2, requires_grad=True)
        opt = getattr(L.optim, name)([p])
        errors = []
        try:
            opt.step(foo=1)
        except TypeError as e:
            errors.append(str(e))
        opt.register_step_pre_hook(lambda o, args, kwargs: ((o,), None))
        try:
            opt.step()
        except TypeError as e:
            errors.append(str(e).replace("tracegrad", "torch"))
        step = type(opt).step
        return errors, step.__qualname__, step.__module__.replace("tracegrad", "torch")

    _assert_same(program)


@pytest.mark.parametrize("name", ["SGD", "Adam", "Rprop", "Adagrad"])
@pytest.mark.parametrize("first", [None, "text"])
def test_a_pre_hook_putting_no_optimizer_first_fails_on_its_defaults_as_torch(name, first):
    # torch's _use_grad_for_differentiable reads args[0].defaults["differentiable"] before the step runs
    def program(L):
        p = L.ones(2, requires_grad=True)
        p.grad = L.ones(2)
        opt = getattr(L.optim, name)([p], lr=0.1)
        opt.register_step_pre_hook(lambda o, args, kwargs: ((first,), {}))
        opt.step()
        return p.tolist()

    _assert_same(program)


def test_setstate_gives_defaults_a_differentiable_key_as_torch():
    def program(L):
        p = L.ones(2, requires_grad=True)
        p.grad = L.ones(2)
        opt = L.optim.Adam([p], lr=0.1)
        del opt.defaults["differentiable"]
        restored = L.optim.Adam.__new__(L.optim.Adam)
        restored.__setstate__(opt.__getstate__())
        restored.step()
        return sorted(restored.defaults), p.tolist()

    _assert_same(program)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "Adagrad", "RMSprop", "Adamax", "NAdam", "RAdam",
                                  "Adadelta"])
@pytest.mark.parametrize(("lr_shape", "param_shape"), [((1,), ()), ((1, 1), ()), ((1, 1), (2,))])
def test_a_one_element_lr_of_any_shape_steps_as_torch(name, lr_shape, param_shape):
    # torch takes a one-element lr as a scalar: it neither widens the update nor fails on a 0-d parameter
    def program(L):
        p = L.ones(param_shape, requires_grad=True)
        opt = getattr(L.optim, name)([p], lr=L.full(lr_shape, 0.01))
        for _ in range(2):
            p.grad = L.full(param_shape, 0.5)
            opt.step()
        return p.tolist()

    _assert_same(program)
