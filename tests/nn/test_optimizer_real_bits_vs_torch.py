"""Optimizers on real parameters give torch's bits where torch's arithmetic is not its plain single-tensor update's:
the foreach updates (ASGD, Adamax, NAdam, RAdam fold and order their operations otherwise), a tensor learning rate,
``differentiable=True`` (Adam and NAdam compute their step sizes as tensors), and ``float64`` as the default dtype
(the step counts, ASGD's eta and mu and NAdam's mu product are then float64 tensors).

torch's CPU square root is MKL's, which is not correctly rounded on every processor (on AMD's, about one float32
in six is an ulp off; tracegrad's is correctly rounded). So that the rest of the arithmetic can be compared bit for
bit, torch's optimizers get a correctly rounded square root here (``correct_torch_sqrt``)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import correctly_rounded_torch_sqrt, tg, torch

STEPS = 7  # (RAdam's rectified update starts at the sixth step)


@pytest.fixture
def correct_torch_sqrt(monkeypatch):
    correctly_rounded_torch_sqrt(monkeypatch)


def _params(lib, rng, dtype, requires_grad: bool = True) -> list:
    """A transposed leaf (strided state), a contiguous one, a 0-d one."""
    params = [lib.tensor(rng.standard_normal((5, 7)).astype(dtype)).t().detach(),
              lib.tensor(rng.standard_normal((4, 6)).astype(dtype)),
              lib.tensor(rng.standard_normal(()).astype(dtype))]
    return [p.requires_grad_(requires_grad) for p in params]


def _trajectory(lib, name: str, options: dict, dtype, requires_grad: bool = True) -> list:
    """(name, value) for each parameter and each state_dict entry after ``STEPS`` steps; a ``tensor_lr`` option is
    the learning rate as a 0-d tensor of the default dtype."""
    rng = np.random.default_rng(5)
    params = _params(lib, rng, dtype, requires_grad)
    options = dict(options)
    if "tensor_lr" in options:
        options["lr"] = lib.tensor(options.pop("tensor_lr"))
    opt = getattr(lib.optim, name)(params, **options)
    for _ in range(STEPS):
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(dtype))
        opt.step()
    entries = [(f"param {i}", p.detach().numpy().copy()) for i, p in enumerate(params)]
    for index, state in opt.state_dict()["state"].items():
        entries += [(f"{index}.{key}", value.detach().numpy().copy()) for key, value in state.items()]
    return entries


def _assert_same_bits(ours: list, theirs: list) -> None:
    assert [key for key, _ in ours] == [key for key, _ in theirs]
    for (key, a), (_, b) in zip(ours, theirs):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), key
        assert np.array_equal(a, b), f"{key}: {np.count_nonzero(a != b)} of {a.size} differ"


def _compare(name: str, options: dict, dtype, requires_grad: bool = True) -> None:
    _assert_same_bits(_trajectory(tg, name, options, dtype, requires_grad),
                      _trajectory(torch, name, options, dtype, requires_grad))


FOREACH_CASES = [
    ("ASGD", {"lr": 0.01, "t0": 2}),
    ("ASGD", {"lr": 0.01, "weight_decay": 0.1, "t0": 2, "maximize": True}),
    ("ASGD", {"tensor_lr": 0.01, "t0": 2}),
    ("Adamax", {"tensor_lr": 0.01}),
    ("Adamax", {"tensor_lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"tensor_lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {"lr": 0.01}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("RAdam", {"tensor_lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
]


@pytest.mark.usefixtures("correct_torch_sqrt")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "options"), FOREACH_CASES)
def test_foreach_updates_are_torchs(name, options, dtype):
    _compare(name, {**options, "foreach": True}, dtype)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_asgd_with_a_tensor_lr_leaves_the_lr_alone(dtype, foreach):
    """ASGD's eta starts as a copy of the learning rate: updating it must not change a tensor lr."""
    _compare("ASGD", {"tensor_lr": 0.01, "t0": 2, "foreach": foreach}, dtype)
    lr = tg.tensor(0.01)
    p = tg.ones(3, requires_grad=True)
    opt = tg.optim.ASGD([p], lr=lr)
    p.grad = tg.ones(3)
    opt.step()
    assert lr.item() == torch.tensor(0.01).item()


DIFFERENTIABLE_CASES = [
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "maximize": True, "weight_decay": 0.1}),
    ("Adam", {"tensor_lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.01, "amsgrad": True}),
    ("NAdam", {"lr": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
]


@pytest.mark.usefixtures("correct_torch_sqrt")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "options"), DIFFERENTIABLE_CASES)
def test_differentiable_updates_are_torchs(name, options, dtype):
    # (parameters that do not require grad: torch refuses the in-place update of a leaf that does)
    _compare(name, {**options, "differentiable": True}, dtype, requires_grad=False)


@pytest.mark.parametrize("name", ["Adam", "NAdam"])
def test_differentiable_update_is_recorded_by_autograd(name):
    def run(lib):
        w = lib.tensor([1.0, 2.0, -0.5], requires_grad=True)
        p = w * 2.0
        opt = getattr(lib.optim, name)([p], lr=0.1, differentiable=True)
        for _ in range(2):
            p.grad = lib.tensor([0.5, -0.25, 1.5])
            opt.step()
        (p * p).sum().backward()
        return type(p.grad_fn).__name__, p.detach().numpy(), w.grad.numpy()

    ours, theirs = run(tg), run(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5)


DEFAULT_FLOAT64_CASES = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "foreach": True}),
    ("Adamax", {"lr": 0.01}),
    ("Adadelta", {"weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9}),
    ("Rprop", {"lr": 0.01}),
    ("NAdam", {"lr": 0.01}),
    ("NAdam", {"lr": 0.01, "foreach": True}),
    ("RAdam", {"lr": 0.01, "foreach": True}),
    ("ASGD", {"lr": 0.01, "t0": 2}),
    ("ASGD", {"lr": 0.01, "t0": 2, "foreach": True}),
]


@pytest.fixture
def default_float64():
    for lib in (tg, torch):
        lib.set_default_dtype(lib.float64)
    yield
    for lib in (tg, torch):
        lib.set_default_dtype(lib.float32)


@pytest.mark.usefixtures("correct_torch_sqrt", "default_float64")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "options"), DEFAULT_FLOAT64_CASES)
def test_scalar_state_follows_a_float64_default_dtype(name, options, dtype):
    _compare(name, options, dtype)


@pytest.mark.usefixtures("default_float64")
@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adagrad"])
def test_a_fused_update_keeps_float32_steps(name):
    def step_dtype(lib):
        p = lib.ones(3, requires_grad=True)
        opt = getattr(lib.optim, name)([p], lr=0.1, fused=True)
        p.grad = lib.ones(3)
        opt.step()
        return str(opt.state[p]["step"].dtype), p.detach().numpy()

    ours, theirs = step_dtype(tg), step_dtype(torch)
    assert ours[0] == theirs[0] == "torch.float32"
    np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.usefixtures("correct_torch_sqrt")
@pytest.mark.parametrize("name", ["ASGD", "Adamax", "NAdam", "RAdam"])
def test_foreach_update_of_a_group_of_two_dtypes_is_torchs(name):
    def run(lib):
        rng = np.random.default_rng(1)
        params = [lib.tensor(rng.standard_normal(4).astype(dt), requires_grad=True)
                  for dt in (np.float32, np.float64, np.float32)]
        opt = getattr(lib.optim, name)(params, lr=0.01, foreach=True)
        for _ in range(STEPS):
            for p in params:
                p.grad = lib.tensor(rng.standard_normal(4).astype(p.detach().numpy().dtype))
            opt.step()
        return [(str(i), p.detach().numpy()) for i, p in enumerate(params)] + [
            (f"{i}.{k}", v.numpy()) for i, s in opt.state_dict()["state"].items() for k, v in s.items()]

    _assert_same_bits(run(tg), run(torch))
