"""torch.optim.swa_utils against torch: AveragedModel with each averaging rule (with and without buffers),
SWALR's schedule, update_bn's statistics, and their errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, tg, torch, warning_texts


def _model(lib, rng):
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return model


def _averaging(lib, mode):
    su = lib.optim.swa_utils
    return {"default": {}, "swa_multi": {"multi_avg_fn": su.get_swa_multi_avg_fn()},
            "ema_multi": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)},
            "ema": {"avg_fn": su.get_ema_avg_fn(0.8)}, "swa": {"avg_fn": su.get_swa_avg_fn()}}[mode]


def _averaged_run(lib, mode, use_buffers):
    rng = np.random.default_rng(0)
    model = _model(lib, rng)
    averaged = lib.optim.swa_utils.AveragedModel(model, use_buffers=use_buffers, **_averaging(lib, mode))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(4):
        x = lib.tensor(rng.standard_normal((5, 3)).astype(np.float32))
        optimizer.zero_grad()
        model(x).pow(2).sum().backward()
        optimizer.step()
        averaged.update_parameters(model)
    out = averaged(lib.tensor(rng.standard_normal((2, 3)).astype(np.float32)))
    return {k: v.detach().numpy().copy() for k, v in averaged.state_dict().items()}, out.detach().numpy()


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("mode", ["default", "swa_multi", "ema_multi", "ema", "swa"])
def test_averaged_model_as_in_torch(mode, use_buffers):
    program = lambda lib: _averaged_run(lib, mode, use_buffers)  # noqa: E731
    theirs = raised(torch, program)
    if theirs is not None:  # swa_multi over the integer num_batches_tracked: torch's addcdiv refuses
        assert raised(tg, program) == theirs
        return
    (ours, our_out), (their_state, their_out) = program(tg), program(torch)
    assert list(ours) == list(their_state)
    for key in ours:
        assert ours[key].dtype == their_state[key].dtype, key
        np.testing.assert_allclose(ours[key], their_state[key], rtol=2e-5, atol=1e-6, err_msg=key)
    np.testing.assert_allclose(our_out, their_out, rtol=2e-5, atol=1e-5)


def test_averaged_model_structure():
    for lib in (tg, torch):
        model = lib.nn.Linear(2, 2)
        averaged = lib.optim.swa_utils.AveragedModel(model)
        assert averaged.module is not model
        assert [n for n, _ in averaged.named_buffers()] == ["n_averaged"]
        assert averaged.n_averaged.dtype is lib.int64 and averaged.n_averaged.item() == 0
        assert [n for n, _ in averaged.named_parameters()] == ["module.weight", "module.bias"]
    assert repr(tg.optim.swa_utils.AveragedModel(tg.nn.Linear(2, 2))) == repr(
        torch.optim.swa_utils.AveragedModel(torch.nn.Linear(2, 2)))


@pytest.mark.parametrize("program", [
    lambda lib: lib.optim.swa_utils.AveragedModel(lib.nn.Linear(2, 2), avg_fn=lib.optim.swa_utils.get_swa_avg_fn(),
                                                  multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn()),
    lambda lib: lib.optim.swa_utils.get_ema_avg_fn(1.5),
    lambda lib: lib.optim.swa_utils.get_ema_multi_avg_fn(-0.1),
    lambda lib: lib.optim.swa_utils.SWALR(lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0), 0.1,
                                          anneal_strategy="exp"),
    lambda lib: lib.optim.swa_utils.SWALR(lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0), 0.1,
                                          anneal_epochs=-1),
    lambda lib: lib.optim.swa_utils.SWALR(lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0), [0.1, 0.2]),
])
def test_errors(program):
    theirs = raised(torch, program)
    assert theirs is not None and raised(tg, program) == theirs


def test_single_tensor_rules():
    for name, args in (("get_ema_avg_fn", (0.7,)), ("get_swa_avg_fn", ())):
        results = []
        for lib in (tg, torch):
            fn = getattr(lib.optim.swa_utils, name)(*args)
            a, b = lib.tensor([1.0, 2.0, 3.0]), lib.tensor([3.0, -1.0, 0.5])
            results.append(fn(a, b, lib.tensor(2)).numpy())
        np.testing.assert_allclose(*results, rtol=1e-7)


def _swalr_run(lib, strategy, anneal_epochs, two_groups):
    params = [lib.zeros(2, requires_grad=True), lib.zeros(1, requires_grad=True)]
    groups = [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.5}] if two_groups else [
        {"params": params}]
    optimizer = lib.optim.SGD(groups, lr=1.0)
    swa_lr = [0.05, 0.2] if two_groups else 0.05
    scheduler = lib.optim.swa_utils.SWALR(optimizer, swa_lr, anneal_epochs=anneal_epochs,
                                          anneal_strategy=strategy)
    lrs = [scheduler.get_last_lr()]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(anneal_epochs + 3):
            optimizer.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr())
        scheduler.get_lr()
    state = scheduler.state_dict()
    return lrs, warning_texts(caught), sorted(state), [g["swa_lr"] for g in optimizer.param_groups]


@pytest.mark.parametrize("two_groups", [False, True])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4])
@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swalr_schedule(strategy, anneal_epochs, two_groups):
    ours, theirs = (_swalr_run(lib, strategy, anneal_epochs, two_groups) for lib in (tg, torch))
    np.testing.assert_allclose(np.array(ours[0]), np.array(theirs[0]), rtol=1e-12)
    assert ours[1:] == theirs[1:]


def test_swalr_state_dict_round_trip():
    for lib in (tg, torch):
        optimizer = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        scheduler = lib.optim.swa_utils.SWALR(optimizer, 0.1, anneal_epochs=3, anneal_strategy="linear")
        optimizer.step()
        scheduler.step()
        other = lib.optim.swa_utils.SWALR(lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0), 0.5)
        other.load_state_dict(scheduler.state_dict())
        assert other.anneal_func(0.25) == 0.25 and other.anneal_epochs == 3


def _update_bn_run(lib, with_labels, training, momentum):
    rng = np.random.default_rng(1)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4, momentum=momentum), lib.nn.ReLU(),
                              lib.nn.Linear(4, 4), lib.nn.BatchNorm1d(4))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    model.train(training)
    data = [lib.tensor(rng.standard_normal((6, 3)).astype(np.float32)) for _ in range(3)]
    loader = [(x, lib.zeros(6)) for x in data] if with_labels else data
    lib.optim.swa_utils.update_bn(loader, model, device="cpu")
    stats = {k: v.numpy().copy() for k, v in model.state_dict().items() if "running" in k or "num_" in k}
    return stats, model.training, model[1].momentum


@pytest.mark.parametrize("with_labels,training,momentum", [(False, True, 0.1), (True, False, 0.3)])
def test_update_bn(with_labels, training, momentum):
    (ours, our_mode, our_momentum), (theirs, their_mode, their_momentum) = (
        _update_bn_run(lib, with_labels, training, momentum) for lib in (tg, torch))
    assert (our_mode, our_momentum) == (their_mode, their_momentum)
    assert list(ours) == list(theirs)
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_update_bn_without_batch_norm_is_a_no_op():
    for lib in (tg, torch):
        model = lib.nn.Linear(2, 2)
        assert lib.optim.swa_utils.update_bn([lib.ones(1, 2)], model) is None


def test_names():
    assert sorted(tg.optim.swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)
