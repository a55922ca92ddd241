"""An optimizer step where a parameter's ``.grad`` has another shape than the parameter: the gradient's ``.data``
replaced, or the parameter resized through ``.data`` after backward. Assigning such a ``.grad`` is refused by both
libraries; the step then raises torch's RuntimeError ("The size of tensor a ...", "output with shape ...") from
the same op, not NumPy's ValueError. In the single-tensor update the parameters and state left behind match too
(earlier parameters updated, SGD's new momentum buffers not stored), and in the foreach updates, which run torch's
``_multi_tensor_*`` operations."""

from __future__ import annotations

import pytest
from _lib import assert_same_bits, raised, tg, torch

OPTIMIZERS = [
    ("SGD", {}), ("SGD", {"momentum": 0.9}), ("SGD", {"momentum": 0.9, "nesterov": True}),
    ("SGD", {"weight_decay": 0.1}), ("SGD", {"maximize": True}),
    ("Adam", {}), ("Adam", {"amsgrad": True}), ("Adam", {"weight_decay": 0.1}), ("AdamW", {}),
    ("RMSprop", {}), ("RMSprop", {"centered": True, "momentum": 0.5}), ("RMSprop", {"weight_decay": 0.1}),
    ("Adagrad", {}), ("Adagrad", {"weight_decay": 0.1}),
    ("Adadelta", {}), ("Adadelta", {"weight_decay": 0.1}), ("Adamax", {}), ("NAdam", {}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}), ("RAdam", {}), ("ASGD", {}),
    ("ASGD", {"weight_decay": 0.1}), ("Rprop", {}),
]

# (parameter shape, gradient shape): not broadcastable, broadcastable into the parameter, and broadcastable only
# to a larger shape
SHAPES = [((3,), (4,)), ((3,), (1,)), ((3,), ()), ((1,), (3,)), ((3,), (2, 3)), ((2, 3), (3,)), ((), (3,)),
          ((2, 3), (3, 2))]


def _grad_data_replaced(lib, name, options, foreach, param_shape, grad_shape):
    """Two parameters; the second's gradient gets another shape through ``.grad.data``."""
    first = lib.nn.Parameter(lib.ones(3) * 0.5)
    second = lib.nn.Parameter(lib.arange(1.0, 1.0 + lib.ones(param_shape).numel()).reshape(param_shape))
    opt = getattr(lib.optim, name)([first, second], lr=0.1, foreach=foreach, **options)
    first.grad = lib.ones(3)
    second.grad = lib.zeros(param_shape)
    second.grad.data = lib.arange(2.0, 2.0 + lib.ones(grad_shape).numel()).reshape(grad_shape)
    return opt, [first, second]


def _resized_after_a_step(lib, name, options, foreach, new_shape, new_grad):
    """A parameter resized through ``.data`` after one step (pruning code): its state keeps the old shape, and its
    gradient too unless a new backward makes one of the new shape."""
    p = lib.nn.Parameter(lib.ones(4))
    opt = getattr(lib.optim, name)([p], lr=0.1, foreach=foreach, **options)
    (p * lib.arange(4.0)).sum().backward()
    opt.step()
    p.data = lib.ones(new_shape)
    if new_grad:
        p.grad = None
        (p * 2).sum().backward()
    return opt, [p]


def _assert_step_matches_torch(name, setup, *args) -> None:
    """The step's error (or success) as torch's; the parameters, their versions and their state as torch leaves
    them."""
    opt, params = setup(tg, name, *args)
    t_opt, t_params = setup(torch, name, *args)
    assert raised(tg, lambda _: opt.step()) == raised(torch, lambda _: t_opt.step())
    exact = name not in _ULP_DRIFT
    for mine, theirs in zip(params, t_params):
        _assert_same_values(mine, theirs, exact)
        assert mine._version == theirs._version
        state, torch_state = opt.state[mine], t_opt.state[theirs]
        assert list(state) == list(torch_state)
        for key in state:
            _assert_same_values(state[key], torch_state[key], exact)


# RMSprop's update drifts from torch's by an ulp here and there (test_optimizer_bits_vs_torch allows it): its
# parameters and state are compared by shape only
_ULP_DRIFT = {"RMSprop"}


def _assert_same_values(ours, theirs, exact: bool) -> None:
    if exact:
        assert_same_bits(ours, theirs)
    else:
        assert tuple(ours.shape) == tuple(theirs.shape)


_FOREACH = pytest.mark.parametrize("foreach", [False, True], ids=["single", "foreach"])
_OPTIMIZERS = pytest.mark.parametrize("name,options", OPTIMIZERS, ids=[f"{n}{o or ''}" for n, o in OPTIMIZERS])


@_FOREACH
@pytest.mark.parametrize("param_shape,grad_shape", SHAPES, ids=[f"p{p}-g{g}" for p, g in SHAPES])
@_OPTIMIZERS
def test_step_with_grad_data_of_another_shape_matches_torch(name, options, param_shape, grad_shape, foreach):
    _assert_step_matches_torch(name, _grad_data_replaced, options, foreach, param_shape, grad_shape)


@_FOREACH
@pytest.mark.parametrize("new_shape,new_grad", [((3,), False), ((3,), True), ((2, 4), True), ((1,), False)],
                         ids=["smaller-old-grad", "smaller-new-grad", "larger-new-grad", "one-old-grad"])
@_OPTIMIZERS
def test_step_after_resizing_a_parameter_matches_torch(name, options, new_shape, new_grad, foreach):
    _assert_step_matches_torch(name, _resized_after_a_step, options, foreach, new_shape, new_grad)


def test_grad_of_another_shape_is_refused_on_assignment_as_torch():
    def assign(lib):
        lib.nn.Parameter(lib.ones(3)).grad = lib.ones(4)

    assert raised(tg, assign) == raised(torch, assign) is not None


# ---- complex parameters, gradients replaced after a step (review of 6552f8d) ----------------------------------


def _complex_grad_of_another_shape(lib, name, options, foreach, param_shape, grad_shape, dtype, steps, resize):
    """As ``_grad_data_replaced`` (``resize``: the parameter's ``.data`` replaced by one of ``grad_shape`` and a
    gradient of that shape set) after ``steps`` steps with gradients of the right shape (Rprop's and ASGD's state
    then has the parameter's shape, the new gradient not). A complex parameter is updated as its real view, so
    PyTorch's errors name the real views' shapes."""
    dtype = getattr(lib, dtype)
    first = lib.nn.Parameter(lib.ones(3) * 0.5)
    n = lib.ones(param_shape).numel()
    second = lib.nn.Parameter((lib.arange(1.0, 1.0 + n) * (1 + 0.5j)).to(dtype).reshape(param_shape))
    opt = getattr(lib.optim, name)([first, second], lr=0.1, foreach=foreach, **options)
    for _ in range(steps):
        first.grad, second.grad = lib.ones(3), (lib.ones(param_shape) * (0.3 - 0.2j)).to(dtype)
        opt.step()
    first.grad = lib.ones(3)
    n = lib.ones(grad_shape).numel()
    new = (lib.arange(2.0, 2.0 + n) * (1 - 1j)).to(dtype).reshape(grad_shape)
    if resize:
        second.data = new
        second.grad = new * 0.5
    else:
        second.grad = lib.zeros(param_shape, dtype=dtype)
        second.grad.data = new
    return opt


_AFTER_A_STEP = [("Rprop", {}), ("Rprop", {"maximize": True}), ("ASGD", {}), ("ASGD", {"t0": 0}),
                 ("ASGD", {"weight_decay": 0.1}), ("ASGD", {"weight_decay": 0.1, "maximize": True}),
                 ("Adam", {"amsgrad": True}), ("SGD", {"momentum": 0.9})]
_SETUPS = [(0, False), (1, False), (1, True)]


@_FOREACH
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("steps,resize", _SETUPS, ids=["grad", "step-grad", "step-resize"])
@pytest.mark.parametrize("param_shape,grad_shape", SHAPES + [((2,), (2, 2))], ids=str)
@pytest.mark.parametrize("name,options", _AFTER_A_STEP, ids=[f"{n}{o or ''}" for n, o in _AFTER_A_STEP])
def test_complex_or_stepped_grad_of_another_shape_matches_torch(name, options, param_shape, grad_shape, steps,
                                                                resize, dtype, foreach):
    def step(lib):
        _complex_grad_of_another_shape(lib, name, options, foreach, param_shape, grad_shape, dtype, steps,
                                       resize).step()

    assert raised(tg, step) == raised(torch, step)


@pytest.mark.parametrize("name, options", [("ASGD", {}), ("NAdam", {}), ("RAdam", {}), ("Adamax", {"lr": "tensor"}),
                                           ("SGD", {"momentum": 0.9})])
def test_foreach_groups_run_newest_dtype_first_as_torch(name, options):
    """A foreach step groups the parameters by dtype as torch._C's grouping orders them (the newest dtype first), so
    where a float32 parameter's gradient does not fit, a float64 parameter after it has already been updated."""

    def program(lib):
        kwargs = {k: lib.tensor(0.1) if k == "lr" else v for k, v in options.items()}
        a, b = lib.nn.Parameter(lib.ones(3)), lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        opt = getattr(lib.optim, name)([a, b], foreach=True, **{"lr": 0.1, **kwargs})
        a.grad, b.grad = lib.ones(3), lib.ones(2, dtype=lib.float64)
        a.grad.data = lib.ones(4)
        error = raised(lib, lambda _: opt.step())
        return error, a.detach().numpy().copy(), b.detach().numpy().copy()

    ours, theirs = program(tg), program(torch)
    assert ours[0] == theirs[0] and ours[0] is not None
    assert_same_bits(ours[1], theirs[1])
    assert_same_bits(ours[2], theirs[2])
