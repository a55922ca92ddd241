"""``foreach=True`` for Adam, AdamW, RMSprop, Adagrad, Adadelta and Rprop runs torch's ``_multi_tensor_*`` update op
by op through ``torch._foreach_*``: per dtype group (the newest dtype first), complex parameters through their
``view_as_real``, each in-place foreach op advancing its tensors' versions once. Observable beyond the values of a
successful step: the versions of parameters and state, what a step that fails part-way leaves behind (a gradient of
another shape, real state loaded for a complex parameter: the dtype groups before the failing one updated, the
failing group's steps counted), Adam's refusals of tensor options, and the graph recorded where the optimizer's
defaults say ``differentiable`` and the group does not (torch then runs the group's update under autograd: the
foreach one, or the single-tensor one outside its ``differentiable`` branches).

Values are compared bit for bit against a torch with a correctly rounded square root (``correctly_rounded_torch_sqrt``:
torch's MKL sqrt is an ulp off for some float32 inputs here); the graphs against torch as it is."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import (
    assert_same_snapshots,
    correctly_rounded_torch_sqrt,
    failed_third_step,
    optimizer_parameters,
    optimizer_snapshot,
    raised,
    recorded_graph,
    set_alternating_gradients,
    tg,
    torch,
)

CASES = [
    ("Adam", {}),
    ("Adam", {"amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"maximize": True, "weight_decay": 0.1}),
    ("Adam", {"amsgrad": True, "maximize": True, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"amsgrad": True, "maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("RMSprop", {"momentum": 0.5, "maximize": True}),
    ("RMSprop", {"centered": True, "maximize": True, "weight_decay": 0.1}),
    ("RMSprop", {"momentum": 0.5, "tensor_lr": True}),
    ("RMSprop", {"tensor_lr": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr_decay": 0.1, "weight_decay": 0.1}),
    ("Adagrad", {"maximize": True, "initial_accumulator_value": 0.1}),
    ("Adagrad", {"lr_decay": 0.1, "tensor_lr": True}),
    ("Adadelta", {}),
    ("Adadelta", {"weight_decay": 0.1, "maximize": True}),
    ("Adadelta", {"tensor_lr": True}),
    ("Rprop", {}),
    ("Rprop", {"maximize": True}),
    ("Rprop", {"etas": (0.3, 1.5), "step_sizes": (1e-3, 0.05)}),
]
_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items()) or 'defaults'}" for name, options in CASES]
_CASES = pytest.mark.parametrize(("name", "options"), CASES, ids=_IDS)

# (shape, dtype) of the parameters: two float32 ones, a float64 one after them (so its dtype group comes first), a
# complex one and a 0-d one
_PARAMS = [((3,), "float32"), ((2, 3), "float32"), ((4,), "float64"), ((2,), "complex64"), ((), "float32")]


@pytest.fixture(autouse=True)
def _rounded_sqrt(request, monkeypatch):
    if "graph" not in request.node.name:
        correctly_rounded_torch_sqrt(monkeypatch)


def _optimizer(lib, name: str, options: dict, params: list, **extra):
    options = {**options, **extra}
    if options.pop("tensor_lr", False):
        options["lr"] = lib.tensor(0.02)
    return getattr(lib.optim, name)(params, foreach=True, **options)


def _steps(lib, name: str, options: dict, steps: int = 3) -> list:
    params = optimizer_parameters(lib, _PARAMS)
    opt = _optimizer(lib, name, options, params)
    seen = []
    for step in range(steps):
        set_alternating_gradients(lib, params, step)
        opt.step()
        seen.append(optimizer_snapshot(opt, params))
    return seen


@_CASES
def test_foreach_steps_match_torch_values_and_versions(name, options):
    for ours, theirs in zip(_steps(tg, name, options), _steps(torch, name, options), strict=True):
        assert_same_snapshots(ours, theirs)


# The failing step's gradients: the second float32 parameter's not broadcastable, or broadcastable only to a larger
# shape; the float64 one's (its dtype group runs first); the complex one's (the last group)
_BAD_GRADIENTS = {
    "float32": (1, (4,)),
    "float32-broadcast-larger": (0, (2, 3)),
    "float64": (2, (3,)),
    "complex": (3, (3,)),
}


def _failing_step(lib, name: str, options: dict, bad: str):
    params = optimizer_parameters(lib, _PARAMS)
    return failed_third_step(lib, _optimizer(lib, name, options, params), params, *_BAD_GRADIENTS[bad])


@pytest.mark.parametrize("bad", list(_BAD_GRADIENTS))
@_CASES
def test_a_step_failing_part_way_leaves_torchs_state(name, options, bad):
    (error, ours), (torch_error, theirs) = _failing_step(tg, name, options, bad), _failing_step(torch, name, options,
                                                                                                 bad)
    assert error is not None and error == torch_error
    assert_same_snapshots(ours, theirs)


_ALL_FOREACH = ["Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Rprop", "SGD", "ASGD", "Adamax", "NAdam", "RAdam"]


def _with_real_state_loaded(lib, name: str):
    """A complex parameter whose state, loaded from a real one's, stays real (load_state_dict casts only floating
    parameters' state), before a float32 parameter in the group: the float32 group is updated, then the complex
    group's ``view_as_real`` of its state fails."""
    options = {"momentum": 0.5, "lr": 0.1} if name == "SGD" else {}
    source = [lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(3))]
    loader = getattr(lib.optim, name)(source, foreach=True, **options)
    set_alternating_gradients(lib, source, 0)
    loader.step()
    params = [lib.nn.Parameter(lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex64)), lib.nn.Parameter(lib.ones(3))]
    opt = getattr(lib.optim, name)(params, foreach=True, **options)
    opt.load_state_dict(loader.state_dict())
    set_alternating_gradients(lib, params, 1)
    return raised(lib, lambda _: opt.step()), optimizer_snapshot(opt, params)


@pytest.mark.parametrize("name", _ALL_FOREACH)
def test_real_state_of_a_complex_parameter_fails_after_the_other_dtype_groups(name):
    (error, ours), (torch_error, theirs) = _with_real_state_loaded(tg, name), _with_real_state_loaded(torch, name)
    assert error == torch_error
    assert_same_snapshots(ours, theirs)


_TENSOR_OPTIONS = {
    "lr": lambda lib, group: group.update(lr=lib.tensor(0.01)),
    "beta1": lambda lib, group: group.update(betas=(lib.tensor(0.9), lib.tensor(0.99))),
    "beta2": lambda lib, group: group.update(betas=(0.9, lib.tensor(0.99))),
    "lr-differentiable": lambda lib, group: group.update(lr=lib.tensor(0.01), differentiable=True),
    "beta1-differentiable": lambda lib, group: group.update(betas=(lib.tensor(0.9), 0.99), differentiable=True),
}


def _tensor_option_step(lib, name: str, option: str):
    """A tensor lr or beta put into a foreach group after construction: ``_init_group`` refuses a tensor lr after
    making the first parameter's state, ``_multi_tensor_adam`` tensor betas before its autograd check."""
    params = optimizer_parameters(lib, _PARAMS[:3])
    opt = _optimizer(lib, name, {}, params)
    _TENSOR_OPTIONS[option](lib, opt.param_groups[0])
    set_alternating_gradients(lib, params, 0)
    return raised(lib, lambda _: opt.step()), optimizer_snapshot(opt, params)


@pytest.mark.parametrize("option", list(_TENSOR_OPTIONS))
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_refuses_tensor_options_where_torch_does(name, option):
    (error, ours), (torch_error, theirs) = (_tensor_option_step(lib, name, option) for lib in (tg, torch))
    assert error is not None and error == torch_error
    assert_same_snapshots(ours, theirs)


_GRAPH_CASES = [
    ("Adam", {"amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"maximize": True}),
    ("RMSprop", {"centered": True, "momentum": 0.5}),
    ("RMSprop", {"weight_decay": 0.1}),
    ("Adagrad", {"lr_decay": 0.1, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True}),
    ("Rprop", {}),
    ("SGD", {"lr": 0.1, "momentum": 0.5}),
    ("ASGD", {"weight_decay": 0.1}),
    ("Adamax", {"weight_decay": 0.1}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {}),
]


def _graph_run(lib, name: str, options: dict, leaf: bool, foreach: bool):
    """Defaults ``differentiable=True`` (which lets non-leaf parameters in) and a group with ``differentiable``
    False: torch runs that group's update (foreach, or single-tensor outside its ``differentiable`` branches) under
    autograd, recording each in-place op on the parameters and their state, or refusing the in-place write into a
    leaf that requires grad once the state is updated."""
    w0 = lib.tensor(np.array([[0.5, -1.0, 0.3], [2.0, 0.25, -0.7]], dtype=np.float32), requires_grad=True)
    w = w0 if leaf else w0 * 1.0
    opt = getattr(lib.optim, name)([w], foreach=foreach, differentiable=True, **options)
    opt.param_groups[0]["differentiable"] = False
    errors = []
    for step in range(2):
        w.grad = lib.autograd.grad((w * w * (step + 1)).sum(), w, create_graph=not leaf)[0]
        errors.append(raised(lib, lambda _: opt.step()))
    state = [(key, value._version, value.grad_fn and value.grad_fn.name()) for key, value in opt.state[w].items()]
    return errors, recorded_graph([w]), w._version, state, [
        t.detach().numpy() for t in (w, *opt.state[w].values())]


@pytest.mark.parametrize("foreach", [True, False], ids=["foreach", "single"])
@pytest.mark.parametrize("leaf", [False, True], ids=["non-leaf", "leaf"])
@pytest.mark.parametrize(("name", "options"), _GRAPH_CASES, ids=[f"{name}{options}" for name, options in _GRAPH_CASES])
def test_graph_of_a_non_differentiable_group_under_differentiable_defaults(name, options, leaf, foreach):
    ours, theirs = (_graph_run(lib, name, options, leaf, foreach) for lib in (tg, torch))
    assert ours[:4] == theirs[:4]  # (errors, the parameter's graph, versions, the state's nodes)
    for mine, their in zip(ours[4], theirs[4], strict=True):
        np.testing.assert_allclose(mine, their, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["Adam", "RMSprop", "Adagrad", "Adadelta", "Rprop"])
def test_a_differentiable_foreach_group_is_refused_as_torch(name):
    """Defaults without ``differentiable``, a group with it and ``foreach``: torch's foreach update asserts."""
    def run(lib):
        params = optimizer_parameters(lib, _PARAMS[:2])
        opt = _optimizer(lib, name, {}, params)
        opt.param_groups[0]["differentiable"] = True
        set_alternating_gradients(lib, params, 0)
        return raised(lib, lambda _: opt.step()), [p._version for p in params]

    assert run(tg) == run(torch)
