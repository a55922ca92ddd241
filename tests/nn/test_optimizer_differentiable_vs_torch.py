"""``differentiable=True``: torch runs the single-tensor update as tensor operations under autograd, so a loss
after k optimizer steps has gradients with respect to the initial parameters, a learning rate tensor and other
tensor hyper-parameters (meta-learning). tracegrad records the same graph (the updated parameter's nodes), the same
gradients and the same errors (an in-place write into a leaf, a saved tensor modified by the next step, a tensor
lr that requires grad as a fill value). Also SGD's foreach update, torch's ``_multi_tensor_sgd``.

torch's CPU square root is MKL's, not correctly rounded on every processor: value bits are compared where autograd
is off, with a correctly rounded square root patched into torch; with autograd on, values and gradients are
compared to a few ulps."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import correctly_rounded_torch_sqrt, raised, recorded_graph, tg, torch

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.2, "maximize": True}),
    ("AdamW", {"lr": 0.01, "amsgrad": True}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("Rprop", {"lr": 0.01}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("ASGD", {"lr": 0.01, "t0": 1}),
    ("ASGD", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
]
# (Adamax's and Rprop's updates save a state tensor that their next step modifies in place, as do the others'
# through a complex parameter's ``view_as_real``: torch's backward through two steps fails, so their gradients are
# checked after one; the errors are compared where torch's backward fails)
ONE_STEP = ("Adamax", "Rprop")


def _start(lib, complex_params: bool):
    data = np.array([[0.5, -1.0, 0.3], [2.0, 0.25, -0.7]])
    if complex_params:
        return lib.tensor((data + 1j * data[::-1]).astype(np.complex64), requires_grad=True)
    return lib.tensor(data.astype(np.float32), requires_grad=True)


def _loss(lib, w):
    scale = lib.tensor(np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3))
    return (w.abs() ** 2 * scale).sum() if w.is_complex() else (w * w * scale + w).sum()


def _meta_run(lib, name: str, options: dict, steps: int, complex_params: bool = False, tensor_options=()):
    """``steps`` differentiable steps from ``w = w0 * 1`` with gradients of a loss made with ``create_graph``; the
    graph of the result, its values, the state and the gradients of a final loss with respect to ``w0`` and the
    options named in ``tensor_options`` (tensors that require grad)."""
    w0 = _start(lib, complex_params)
    w = w0 * 1.0
    options = dict(options)
    for key in tensor_options:
        options[key] = lib.tensor(options[key], requires_grad=True)
    opt = getattr(lib.optim, name)([w], differentiable=True, **options)
    for _ in range(steps):
        w.grad, = lib.autograd.grad(_loss(lib, w), w, create_graph=True)
        opt.step()
    grads = lib.autograd.grad((w.abs() ** 2).sum(), [w0, *(options[k] for k in tensor_options)], allow_unused=True)
    state = {k: v.detach().numpy() for k, v in opt.state[w].items()}
    return recorded_graph([w]), w.detach().numpy(), state, [None if g is None else g.numpy() for g in grads]


def _assert_meta_runs_match(name: str, options: dict, steps: int, **kwargs) -> None:
    """The two libraries' ``_meta_run``: the same outcome, or the same error (torch's backward refuses many of these
    programs: a state tensor saved for the gradient and modified by the next step; a tensor lr passed where the
    update takes a number)."""
    ours, theirs = (_outcome(lib, name, options, steps, **kwargs) for lib in (tg, torch))
    if isinstance(theirs[0], str) or isinstance(ours[0], str):
        assert ours == theirs
        return
    assert ours[0] == theirs[0]  # (the graph: node names and their inputs)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, atol=1e-7)
    assert ours[2].keys() == theirs[2].keys()
    for key in ours[2]:
        assert ours[2][key].dtype == theirs[2][key].dtype, key
        np.testing.assert_allclose(ours[2][key], theirs[2][key], rtol=1e-5, atol=1e-7, err_msg=key)
    for a, b in zip(ours[3], theirs[3], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


def _outcome(lib, *args, **kwargs):
    try:
        return _meta_run(lib, *args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("complex_params", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize(("name", "options"), CASES)
def test_gradients_flow_through_the_steps(name, options, complex_params):
    steps = 1 if name in ONE_STEP or complex_params else 3
    _assert_meta_runs_match(name, options, steps, complex_params=complex_params)


@pytest.mark.parametrize(("name", "options"), CASES)
def test_gradient_with_respect_to_a_learning_rate_tensor(name, options):
    steps = 1 if name in ONE_STEP else 3
    _assert_meta_runs_match(name, options, steps, tensor_options=("lr",))


@pytest.mark.parametrize(("name", "options", "tensor_options"), [
    ("SGD", {"lr": 0.1, "momentum": 0.5, "weight_decay": 0.1}, ("weight_decay",)),
    ("SGD", {"lr": 0.1, "weight_decay": 0.1}, ("lr", "weight_decay")),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}, ("lr", "weight_decay")),
])
def test_gradient_with_respect_to_a_weight_decay_tensor(name, options, tensor_options):
    """A weight decay tensor that requires grad is multiplied into the gradient in place (``addcmul_``)."""
    _assert_meta_runs_match(name, options, 3, tensor_options=tensor_options)


def _errors_of_meta_run(lib, name: str, options: dict, steps: int, tensor_options=()):
    return raised(lib, lambda lib: _meta_run(lib, name, options, steps, tensor_options=tensor_options))


@pytest.mark.parametrize(("name", "steps", "tensor_options"), [
    ("Adamax", 2, ()),  # (exp_avg, saved by addcdiv_, modified by the next lerp_)
    ("Rprop", 2, ()),  # (step_size, saved by addcmul_, modified by the next mul_ and clamp_)
    ("Rprop", 1, ("lr",)),  # (its state's full_like takes no tensor that requires grad)
])
def test_errors_of_the_differentiable_updates(name, steps, tensor_options):
    options = {"lr": 0.01}
    ours = _errors_of_meta_run(tg, name, options, steps, tensor_options)
    assert ours is not None
    assert ours == _errors_of_meta_run(torch, name, options, steps, tensor_options)


@pytest.mark.parametrize("complex_params", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("name", sorted({name for name, _ in CASES} | {"Adam", "NAdam"}))
def test_a_leaf_is_refused_after_the_parameters_before_it(name, complex_params):
    """The update writes into each parameter in turn: the leaf that requires grad fails there (a view's words
    where the write goes through ``view_as_real``), the parameter before it already updated and its state made."""
    def run(lib):
        w0 = _start(lib, complex_params)
        params = [w0 * 1.0, _start(lib, complex_params)]
        opt = getattr(lib.optim, name)(params, lr=0.1, differentiable=True)
        for p in params:
            p.grad = lib.ones_like(p)
        error = raised(lib, lambda lib: opt.step())
        states = [{k: v.detach().numpy() for k, v in opt.state[p].items()} for p in params]
        return error, [p.detach().numpy() for p in params], states

    ours, theirs = run(tg), run(torch)
    assert ours[0] is not None and ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1][0], theirs[1][0], rtol=1e-6)
    np.testing.assert_array_equal(ours[1][1], theirs[1][1])
    assert [s.keys() for s in ours[2]] == [s.keys() for s in theirs[2]]


@pytest.fixture
def correct_torch_sqrt(monkeypatch):
    correctly_rounded_torch_sqrt(monkeypatch, foreach=False)


def _plain_run(lib, name: str, options: dict, dtype) -> list:
    """Parameters that do not require grad (so torch's update may write into the leaves) and gradients drawn at
    random: the parameters' and the state's values after 7 steps."""
    rng = np.random.default_rng(3)
    params = [lib.tensor(rng.standard_normal((5, 4)).astype(dtype)).t(), lib.tensor(rng.standard_normal(()))]
    opt = getattr(lib.optim, name)(params, differentiable=True, **options)
    for _ in range(7):
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(p.numpy().dtype))
        opt.step()
    return [p.numpy() for p in params] + [v.numpy() for p in params for v in opt.state[p].values()]


@pytest.mark.usefixtures("correct_torch_sqrt")
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize(("name", "options"), CASES)
def test_differentiable_update_values_are_torchs(name, options, dtype):
    ours, theirs = _plain_run(tg, name, options, dtype), _plain_run(torch, name, options, dtype)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("nesterov", [False, True])
def test_foreach_sgd_is_torchs_multi_tensor_update(nesterov, maximize):
    """``_multi_tensor_sgd``: per dtype, the momentum buffers made one by one at the first step; Nesterov's momentum
    added into the ``.grad`` tensors themselves where ``maximize`` made no copies (values and versions)."""
    def run(lib):
        rng = np.random.default_rng(0)
        params = [lib.tensor(rng.standard_normal(s).astype(dt), requires_grad=True)
                  for s, dt in (((3, 2), np.float32), ((4,), np.float64), ((), np.float32))]
        opt = lib.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=nesterov, maximize=maximize, foreach=True)
        seen = []
        for _ in range(3):
            for p in params:
                p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(p.detach().numpy().dtype))
            opt.step()
            seen += [(p.detach().numpy(), p.grad.numpy(), p._version, p.grad._version) for p in params]
            seen += [(s["momentum_buffer"].numpy(), s["momentum_buffer"]._version) for s in opt.state.values()]
        return seen

    for ours, theirs in zip(run(tg), run(torch), strict=True):
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a, b)


def test_foreach_differentiable_sgd_records_foreach_nodes():
    """torch's foreach SGD runs under autograd where ``differentiable``: each parameter's update is a foreach node
    (a leaf that requires grad refused by the foreach op)."""
    def run(lib):
        w0 = _start(lib, False)
        w = w0 * 1.0
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.5, differentiable=True, foreach=True)
        for _ in range(2):
            w.grad, = lib.autograd.grad(_loss(lib, w), w, create_graph=True)
            opt.step()
        (w * w).sum().backward()
        leaf = _start(lib, False)
        leaf.grad = lib.ones_like(leaf)
        refused = raised(lib, lambda lib: lib.optim.SGD([leaf], lr=0.1, differentiable=True, foreach=True).step())
        return recorded_graph([w]), w.detach().numpy(), w0.grad.numpy(), refused

    ours, theirs = run(tg), run(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5)
    assert ours[3] is not None and ours[3] == theirs[3]
