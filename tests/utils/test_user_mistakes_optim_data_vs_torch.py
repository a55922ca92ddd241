"""Optimizer, scheduler and data-loading mistakes from notebooks: bad hyper-parameters, parameters that cannot be
optimized, schedulers stepped in the wrong order, loaders and datasets misused. Each program gives torch's
exception type and message (or torch's result) and torch's warnings."""

from __future__ import annotations

import pytest
from _lib import np
from _mistakes_lib import assert_as_torch


def _params(L):
    return [L.nn.Parameter(L.ones(2))]


def _optim(L, name, *args, **kwargs):
    return getattr(L.optim, name)(_params(L), *args, **kwargs)


def _generator_used_twice(L):
    params = L.nn.Linear(2, 2).parameters()
    L.optim.SGD(params, lr=0.1)
    L.optim.SGD(params, lr=0.1)


def _scheduler_before_step(L):
    opt = _optim(L, "SGD", lr=0.1)
    sched = L.optim.lr_scheduler.StepLR(opt, 1)
    sched.step()
    opt.step()
    return sched.get_last_lr()


def _scheduler_with_epoch(L):
    opt = _optim(L, "SGD", lr=0.1)
    sched = L.optim.lr_scheduler.StepLR(opt, 1)
    opt.step()
    sched.step(1)
    return sched.get_last_lr()


def _get_lr_called(L):
    opt = _optim(L, "SGD", lr=0.1)
    return L.optim.lr_scheduler.StepLR(opt, 1).get_lr()


def _plateau_without_metric(L):
    sched = L.optim.lr_scheduler.ReduceLROnPlateau(_optim(L, "SGD", lr=0.1))
    sched.step()


def _step_lbfgs_without_closure(L):
    _optim(L, "LBFGS").step()


def _load_optimizer_state(L, other):
    opt = _optim(L, "SGD", lr=0.1)
    opt.load_state_dict(other(L).state_dict())


def _two_groups(L):
    return L.optim.SGD([{"params": _params(L)}, {"params": _params(L)}], lr=0.1)


def _one_group_of_three(L):
    return L.optim.SGD([L.nn.Parameter(L.ones(2)) for _ in range(3)], lr=0.1)


def _add_param_group_again(L):
    params = _params(L)
    opt = L.optim.SGD(params, lr=0.1)
    opt.add_param_group({"params": params})


def _step_with_int_grad_param(L):
    p = L.ones(2, requires_grad=True)
    opt = L.optim.SGD([p], lr=0.1)
    opt.step()
    return p


def _step_after_double(L):
    model = L.nn.Linear(2, 1)
    opt = L.optim.Adam(model.parameters(), lr=0.1)
    model.double()
    model(L.ones(1, 2, dtype=L.float64)).sum().backward()
    opt.step()
    return str(model.weight.dtype)


def _zero_grad_then_step(L):
    p = L.nn.Parameter(L.ones(2))
    opt = L.optim.Adam([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad()
    opt.step()
    return p


def _load(L, data, **kwargs):
    from importlib import import_module

    data_module = import_module(f"{L.__name__}.utils.data")
    return data_module, list(data_module.DataLoader(data(L, data_module), **kwargs))


def _loader(L, data, **kwargs):
    from importlib import import_module

    data_module = import_module(f"{L.__name__}.utils.data")
    return data_module.DataLoader(data(L, data_module), **kwargs)


def _dataset(L):
    from importlib import import_module

    return import_module(f"{L.__name__}.utils.data")


class _Stream:
    """An iterable-style dataset defined in the user's own file (both libraries' base classes)."""

    @staticmethod
    def make(L, data_module):
        class Stream(data_module.IterableDataset):
            def __iter__(self):
                return iter(range(4))

        return Stream()


def _no_getitem(L, data_module):
    class Empty(data_module.Dataset):
        pass

    return Empty()


CASES = {
    # ---- optimizers
    "optimizer of a non-leaf": lambda L: L.optim.SGD([L.ones(2, requires_grad=True) * 2], lr=0.1),
    "optimizer of a generator used twice": _generator_used_twice,
    "optimizer of a tensor": lambda L: L.optim.SGD(L.nn.Parameter(L.ones(2)), lr=0.1),
    "optimizer of a module": lambda L: L.optim.SGD(L.nn.Linear(2, 2), lr=0.1),
    "optimizer of a set": lambda L: L.optim.SGD({L.nn.Parameter(L.ones(2))}, lr=0.1),
    "optimizer of an int": lambda L: L.optim.SGD([1], lr=0.1),
    "optimizer of duplicate parameters": lambda L: (lambda p: L.optim.SGD([p, p], lr=0.1))(L.nn.Parameter(L.ones(2))),
    "optimizer with a parameter in two groups": lambda L: (lambda p: L.optim.SGD(
        [{"params": [p]}, {"params": [p]}], lr=0.1))(L.nn.Parameter(L.ones(2))),
    "optimizer group without params": lambda L: L.optim.SGD([{"lr": 0.1}], lr=0.1),
    "add_param_group of a parameter already there": _add_param_group_again,
    "SGD negative lr": lambda L: _optim(L, "SGD", lr=-0.1),
    "SGD negative momentum": lambda L: _optim(L, "SGD", lr=0.1, momentum=-0.5),
    "SGD negative weight_decay": lambda L: _optim(L, "SGD", lr=0.1, weight_decay=-1),
    "SGD nesterov without momentum": lambda L: _optim(L, "SGD", lr=0.1, nesterov=True),
    "SGD lr of a string": lambda L: _optim(L, "SGD", lr="0.1"),
    "Adam lr of a string": lambda L: _optim(L, "Adam", lr="0.1"),
    "SGD without lr": lambda L: _optim(L, "SGD").defaults["lr"],
    "step of an optimizer after a parameter changed dtype": _step_after_double,
    "Adam first beta above 1": lambda L: _optim(L, "Adam", betas=(1.5, 0.999)),
    "Adam second beta negative": lambda L: _optim(L, "Adam", betas=(0.9, -0.1)),
    "Adam negative eps": lambda L: _optim(L, "Adam", eps=-1e-8),
    "Adam negative lr": lambda L: _optim(L, "Adam", lr=-1e-3),
    "Adam negative weight_decay": lambda L: _optim(L, "Adam", weight_decay=-0.1),
    "AdamW negative weight_decay": lambda L: _optim(L, "AdamW", weight_decay=-0.1),
    "AdamW betas of one number": lambda L: _optim(L, "AdamW", betas=0.9),
    "RMSprop negative alpha": lambda L: _optim(L, "RMSprop", alpha=-0.5),
    "RMSprop negative momentum": lambda L: _optim(L, "RMSprop", momentum=-0.5),
    "Adagrad negative lr_decay": lambda L: _optim(L, "Adagrad", lr_decay=-1),
    "Adagrad negative initial accumulator": lambda L: _optim(L, "Adagrad", initial_accumulator_value=-1),
    "Adadelta rho above 1": lambda L: _optim(L, "Adadelta", rho=1.5),
    "Rprop etas in the wrong order": lambda L: _optim(L, "Rprop", etas=(1.2, 0.5)),
    "LBFGS step without closure": _step_lbfgs_without_closure,
    "LBFGS of two groups": lambda L: L.optim.LBFGS([{"params": _params(L)}, {"params": _params(L)}]),
    "load_state_dict of fewer groups": lambda L: _load_optimizer_state(L, _two_groups),
    "load_state_dict of a bigger group": lambda L: _load_optimizer_state(L, _one_group_of_three),
    "step without gradients": _step_with_int_grad_param,
    "Adam step after zero_grad": _zero_grad_then_step,
    # ---- schedulers
    "scheduler stepped before the optimizer": _scheduler_before_step,
    "scheduler step with an epoch": _scheduler_with_epoch,
    "scheduler get_lr called": _get_lr_called,
    "scheduler of a non-optimizer": lambda L: L.optim.lr_scheduler.StepLR(object(), 1),
    "scheduler of a model": lambda L: L.optim.lr_scheduler.StepLR(L.nn.Linear(2, 2), 1),
    "ReduceLROnPlateau bogus mode": lambda L: L.optim.lr_scheduler.ReduceLROnPlateau(_optim(L, "SGD", lr=0.1),
                                                                                    mode="maximum"),
    "ReduceLROnPlateau factor of 1": lambda L: L.optim.lr_scheduler.ReduceLROnPlateau(_optim(L, "SGD", lr=0.1),
                                                                                     factor=1.0),
    "ReduceLROnPlateau step without a metric": _plateau_without_metric,
    "ReduceLROnPlateau bogus threshold_mode": lambda L: L.optim.lr_scheduler.ReduceLROnPlateau(
        _optim(L, "SGD", lr=0.1), threshold_mode="relative"),
    "OneCycleLR without total_steps": lambda L: L.optim.lr_scheduler.OneCycleLR(_optim(L, "SGD", lr=0.1), 1.0),
    "OneCycleLR bogus anneal_strategy": lambda L: L.optim.lr_scheduler.OneCycleLR(
        _optim(L, "SGD", lr=0.1), 1.0, total_steps=10, anneal_strategy="exp"),
    "CosineAnnealingWarmRestarts T_0 zero": lambda L: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        _optim(L, "SGD", lr=0.1), 0),
    "LambdaLR lambdas of a wrong count": lambda L: L.optim.lr_scheduler.LambdaLR(
        _optim(L, "SGD", lr=0.1), [lambda e: 1.0, lambda e: 0.5]),
    "LinearLR start_factor above 1": lambda L: L.optim.lr_scheduler.LinearLR(_optim(L, "SGD", lr=0.1),
                                                                            start_factor=2.0),
    "MultiStepLR unsorted milestones": lambda L: L.optim.lr_scheduler.MultiStepLR(_optim(L, "SGD", lr=0.1),
                                                                                 [3, 1]).get_last_lr(),
    "SequentialLR milestones of a wrong count": lambda L: (lambda o: L.optim.lr_scheduler.SequentialLR(
        o, [L.optim.lr_scheduler.StepLR(o, 1), L.optim.lr_scheduler.StepLR(o, 1)], milestones=[1, 2]))(
        _optim(L, "SGD", lr=0.1)),
    # ---- data
    "DataLoader batch_size 0": lambda L: _loader(L, lambda L, D: L.ones(4), batch_size=0),
    "DataLoader negative batch_size": lambda L: _loader(L, lambda L, D: L.ones(4), batch_size=-1),
    "DataLoader float batch_size": lambda L: _loader(L, lambda L, D: L.ones(4), batch_size=2.0),
    "DataLoader shuffle and sampler": lambda L: _loader(L, lambda L, D: L.ones(4), shuffle=True,
                                                        sampler=[0, 1, 2, 3]),
    "DataLoader batch_sampler and batch_size": lambda L: _loader(L, lambda L, D: L.ones(4), batch_size=2,
                                                                 batch_sampler=[[0, 1], [2, 3]]),
    "DataLoader batch_sampler and drop_last": lambda L: _loader(L, lambda L, D: L.ones(4), drop_last=True,
                                                                batch_sampler=[[0, 1], [2, 3]]),
    "DataLoader negative num_workers": lambda L: _loader(L, lambda L, D: L.ones(4), num_workers=-1),
    "DataLoader timeout negative": lambda L: _loader(L, lambda L, D: L.ones(4), timeout=-1),
    "DataLoader prefetch_factor without workers": lambda L: _loader(L, lambda L, D: L.ones(4), prefetch_factor=2),
    "DataLoader persistent_workers without workers": lambda L: _loader(L, lambda L, D: L.ones(4),
                                                                       persistent_workers=True),
    "DataLoader of an iterable dataset with shuffle": lambda L: _loader(L, _Stream.make, shuffle=True),
    "DataLoader of an iterable dataset with a sampler": lambda L: _loader(L, _Stream.make, sampler=[0, 1]),
    "len of a DataLoader of an iterable dataset": lambda L: len(_loader(L, _Stream.make)),
    "collate of mismatched shapes": lambda L: _load(L, lambda L, D: [L.ones(2), L.ones(3)], batch_size=2)[1],
    "collate of mismatched dims": lambda L: _load(L, lambda L, D: [L.ones(2), L.ones(1, 2)], batch_size=2)[1],
    "collate of mismatched dict keys": lambda L: _load(L, lambda L, D: [{"a": L.ones(1)}, {"b": L.ones(1)}],
                                                       batch_size=2)[1],
    "collate of tuples of different lengths": lambda L: _load(L, lambda L, D: [(1, 2), (3,)], batch_size=2)[1],
    "collate of an object": lambda L: _load(L, lambda L, D: [object(), object()], batch_size=2)[1],
    "collate of object arrays": lambda L: _load(L, lambda L, D: [np.array([None]), np.array([None])],
                                                batch_size=2)[1],
    "collate of numbers and tensors": lambda L: _load(L, lambda L, D: [1, L.ones(1)], batch_size=2)[1],
    "collate of strings": lambda L: _load(L, lambda L, D: ["a", "b"], batch_size=2)[1],
    "collate of ragged numpy arrays": lambda L: _load(L, lambda L, D: [np.ones(2), np.ones(3)], batch_size=2)[1],
    "TensorDataset index out of range": lambda L: _dataset(L).TensorDataset(L.ones(3))[5],
    "TensorDataset of mismatched sizes": lambda L: _dataset(L).TensorDataset(L.ones(3), L.ones(4)),
    "TensorDataset of a list": lambda L: _dataset(L).TensorDataset([1, 2, 3]),
    "Dataset without __getitem__": lambda L: _no_getitem(L, _dataset(L))[0],
    "len of a Dataset without __len__": lambda L: len(_no_getitem(L, _dataset(L))),
    "Subset index out of range": lambda L: _dataset(L).Subset(L.ones(3), [0, 1])[2],
    "Subset of indices out of range": lambda L: _dataset(L).Subset(L.ones(3), [0, 5])[1],
    "random_split lengths not summing": lambda L: _dataset(L).random_split(range(10), [3, 3]),
    "random_split fractions not summing": lambda L: _dataset(L).random_split(range(10), [0.5, 0.2]),
    "random_split negative length": lambda L: _dataset(L).random_split(range(10), [11, -1]),
    "ConcatDataset of nothing": lambda L: _dataset(L).ConcatDataset([]),
    "ConcatDataset index out of range": lambda L: _dataset(L).ConcatDataset([L.ones(2), L.ones(3)])[5],
    "ConcatDataset of an iterable dataset": lambda L: _dataset(L).ConcatDataset([_Stream.make(L, _dataset(L))]),
    "BatchSampler batch_size 0": lambda L: _dataset(L).BatchSampler(range(4), 0, False),
    "BatchSampler drop_last not a bool": lambda L: _dataset(L).BatchSampler(range(4), 2, 1),
    "RandomSampler num_samples 0": lambda L: _dataset(L).RandomSampler(range(4), num_samples=0),
    "RandomSampler replacement not a bool": lambda L: _dataset(L).RandomSampler(range(4), replacement=1),
    "WeightedRandomSampler of 2-D weights": lambda L: _dataset(L).WeightedRandomSampler([[1.0, 1.0]], 2),
    "WeightedRandomSampler num_samples 0": lambda L: _dataset(L).WeightedRandomSampler([1.0, 1.0], 0),
    "SubsetRandomSampler of a number": lambda L: list(_dataset(L).SubsetRandomSampler(3)),
}

# Programs torch runs without error or warning (results compared).
SILENT = {"step without gradients", "collate of strings", "MultiStepLR unsorted milestones",
          "Adam step after zero_grad", "optimizer of a set", "collate of numbers and tensors",
          "random_split negative length", "SGD without lr", "step of an optimizer after a parameter changed dtype"}


@pytest.mark.parametrize("name", CASES)
def test_same_outcome_as_torch(name):
    assert_as_torch(name, CASES[name], SILENT)
