"""Small leftovers against torch: the version of a gradient through reentrant checkpointing, tensors over read-only
NumPy arrays (the warning, then writes that land in the array), float overflow in ``alpha`` arithmetic without
NumPy's warnings, and what ``copy.copy`` / pickle / load give a Parameter's version and ``_backward_hooks``."""

from __future__ import annotations

import collections
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch
from _lib import assert_same_bits, saved_and_loaded, warning_texts

import tracegrad as tg

LIBS = (tg, torch)


# ---- checkpointing: the gradient's version --------------------------------------------------------------------


def _checkpointed_versions(lib, use_reentrant: bool) -> tuple:
    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 3)
    x = lib.randn(2, 3, requires_grad=True)
    out = lib.utils.checkpoint.checkpoint(lambda t: layer(t * 2).sin(), x, use_reentrant=use_reentrant)
    out.sum().backward()
    return x.grad._version, layer.weight.grad._version, layer.bias.grad._version


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_gradient_versions_as_torch(use_reentrant):
    # (torch adopts the gradient the reentrant backward hands out: version 0, not a copy's 1)
    assert _checkpointed_versions(tg, use_reentrant) == _checkpointed_versions(torch, use_reentrant)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential_gradient_versions_as_torch(use_reentrant):
    def versions(lib):
        lib.manual_seed(0)
        seq = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Tanh(), lib.nn.Linear(3, 3))
        x = lib.randn(2, 3, requires_grad=True)
        lib.utils.checkpoint.checkpoint_sequential(seq, 2, x, use_reentrant=use_reentrant).sum().backward()
        return [x.grad._version] + [p.grad._version for p in seq.parameters()]

    assert versions(tg) == versions(torch)


# ---- read-only NumPy arrays -----------------------------------------------------------------------------------


@pytest.fixture
def warn_always():
    # (torch's warning is once per process: warn-always shows it to every test, in both libraries)
    for lib in LIBS:
        lib.set_warn_always(True)
    yield
    for lib in LIBS:
        lib.set_warn_always(False)


def _read_only(values=(0.0, 1.0, 2.0, 3.0)) -> np.ndarray:
    array = np.array(values, dtype=np.float32)
    array.flags.writeable = False
    return array


def _converted(lib, convert) -> tuple:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = convert(lib)
    return t, [w.category for w in caught], warning_texts(caught)


@pytest.mark.parametrize("convert", [
    lambda lib, a: lib.from_numpy(a),
    lambda lib, a: lib.as_tensor(a),
    lambda lib, a: lib.as_tensor(a, dtype=lib.float64),  # (a copy, and still the warning)
    lambda lib, a: lib.asarray(a),
    lambda lib, a: lib.tensor(a),  # (a copy: no warning)
], ids=["from_numpy", "as_tensor", "as_tensor_cast", "asarray", "tensor"])
def test_read_only_array_warning_as_torch(convert, warn_always):
    ours = _converted(tg, lambda lib: convert(lib, _read_only()))
    theirs = _converted(torch, lambda lib: convert(lib, _read_only()))
    assert ours[1:] == theirs[1:]


@pytest.mark.parametrize("write", [
    lambda t: t.add_(1),
    lambda t: t[1:].mul_(3),
    lambda t: t.zero_(),
    lambda t: t.__setitem__(0, 5.0),
], ids=["add_", "view_mul_", "zero_", "setitem"])
@pytest.mark.parametrize("convert", ["from_numpy", "as_tensor"])
def test_writes_into_read_only_array_land_in_it_as_torch(convert, write, warn_always):
    results = []
    for lib in LIBS:
        array = _read_only()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = getattr(lib, convert)(array)
        write(t)
        results.append((array.copy(), t.numpy().copy(), t._version, array.flags.writeable))
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)


# (RMSprop is left out: its update differs from torch's by an ulp here over any parameter, read-only or not)
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_optimizer_steps_parameter_over_read_only_array_as_torch(name):
    results = []
    for lib in LIBS:
        array = _read_only()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            param = lib.nn.Parameter(lib.from_numpy(array))
        optimizer = getattr(lib.optim, name)([param], lr=0.1)
        param.grad = lib.tensor([1.0, -2.0, 0.5, 3.0])
        optimizer.step()
        results.append((array.copy(), param.detach().numpy().copy()))
    for ours, theirs in zip(*results):
        assert_same_bits(ours, theirs)


# ---- overflow with alpha: inf without NumPy's warnings --------------------------------------------------------


_BIG = [3e38, -3e38, 1.0, 2.5]


@pytest.mark.parametrize("compute", [
    lambda lib, a, b: lib.add(a, b, alpha=2),
    lambda lib, a, b: lib.add(a, 3e38, alpha=2),
    lambda lib, a, b: lib.sub(a, b, alpha=-2),
    lambda lib, a, b: lib.rsub(a, b, alpha=-2),
    lambda lib, a, b: a.clone().add_(b, alpha=2),
    lambda lib, a, b: a.clone().sub_(b, alpha=-2),
    lambda lib, a, b: lib.add(a, b, alpha=2, out=lib.empty(4)),
    lambda lib, a, b: lib.add(lib.full((20,), 6e4, dtype=lib.half), lib.full((20,), 6e4, dtype=lib.half), alpha=2),
    lambda lib, a, b: lib.add(a.repeat(50000), b.repeat(50000), alpha=2),  # (the blocked kernel)
    lambda lib, a, b: lib.addcmul(a, b, b, value=2),
    lambda lib, a, b: lib.addcdiv(a, b, lib.full((4,), 1e-30), value=2),
    lambda lib, a, b: lib.lerp(a, -b, 2.0),
], ids=["add", "add_number", "sub", "rsub", "add_", "sub_", "add_out", "half", "blocked", "addcmul", "addcdiv", "lerp"])
def test_alpha_overflow_is_silent_inf_as_torch(compute):
    results = []
    for lib in LIBS:
        a, b = lib.tensor(_BIG), lib.tensor(_BIG)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (torch gives inf without a warning)
            results.append(compute(lib, a, b).numpy())
    assert_same_bits(*results)


@pytest.mark.parametrize("name, options", [("SGD", {"momentum": 0.9}), ("SGD", {"weight_decay": 2.0}),
                                           ("SGD", {})])
def test_optimizer_overflow_is_silent_as_torch(name, options):
    results = []
    for lib in LIBS:
        param = lib.nn.Parameter(lib.tensor(_BIG))
        optimizer = getattr(lib.optim, name)([param], lr=1.0, **options)
        param.grad = -lib.tensor(_BIG)  # (param - lr * grad overflows)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            optimizer.step()
        results.append(param.detach().numpy())
    assert_same_bits(*results)


# ---- copies and rebuilt tensors: versions and _backward_hooks -------------------------------------------------


_REBUILDS = {
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda t: pickle.loads(pickle.dumps(t)),
}


@pytest.mark.parametrize("how", sorted(_REBUILDS))
@pytest.mark.parametrize("kind", ["tensor", "parameter"])
def test_rebuilt_version_and_backward_hooks_as_torch(kind, how):
    def rebuilt(lib):
        t = lib.arange(3.0)
        source = lib.nn.Parameter(t) if kind == "parameter" else t
        result = _REBUILDS[how](source)
        return type(result).__name__, result._version, result._backward_hooks

    assert rebuilt(tg) == rebuilt(torch)


def test_loaded_backward_hooks_and_versions_as_torch():
    def loaded(lib):
        state = saved_and_loaded(lib, {"t": lib.arange(3.0), "p": lib.nn.Parameter(lib.ones(2))})
        return [(type(v).__name__, v._version, v._backward_hooks) for v in state.values()]

    ours, theirs = loaded(tg), loaded(torch)
    assert ours == theirs
    assert all(type(hooks) is collections.OrderedDict for _, _, hooks in ours)


def test_copied_parameter_shares_storage_with_its_own_version_as_torch():
    def copied(lib):
        param = lib.nn.Parameter(lib.arange(3.0))
        with lib.no_grad():
            param.add_(1)
        twin = copy.copy(param)
        with lib.no_grad():
            twin.mul_(2)
        return param.tolist(), param._version, twin._version, twin.requires_grad

    assert copied(tg) == copied(torch)
