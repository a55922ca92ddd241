"""Lazy modules against torch: reprs and state dicts before the first input, the shapes inferred from it, the
class each becomes, materializing through load_state_dict, an optimizer built before initialisation, and the
errors for using an uninitialized parameter."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from _lib import raised, tg, torch

# (class, constructor arguments, input shape)
CASES = {
    "LazyLinear": ((3,), (2, 5)),
    "LazyLinear_no_bias_3d": ((4, False), (2, 3, 6)),
    "LazyConv1d": ((4, 3), (2, 6, 9)),
    "LazyConv2d_groups": ((4, 3), (2, 6, 5, 5)),
    "LazyConv2d_unbatched": ((2, 2), (3, 5, 5)),
    "LazyConv3d": ((2, 2), (1, 3, 4, 4, 4)),
    "LazyConvTranspose1d": ((4, 3), (2, 6, 5)),
    "LazyConvTranspose2d": ((2, 3), (1, 4, 3, 3)),
    "LazyConvTranspose3d": ((2, 2), (1, 3, 2, 2, 2)),
    "LazyBatchNorm1d": ((), (4, 7)),
    "LazyBatchNorm2d_no_affine": ((1e-5, 0.1, False), (2, 3, 4, 4)),
    "LazyBatchNorm3d": ((), (2, 3, 2, 2, 2)),
    "LazyInstanceNorm1d": ((), (2, 3, 5)),
    "LazyInstanceNorm2d_no_stats": ((1e-5, 0.1, True, False), (2, 3, 4, 4)),
    "LazyInstanceNorm3d": ((), (2, 3, 2, 2, 2)),
}
_KWARGS = {"LazyConv2d_groups": {"groups": 2}}


def _build(lib, name: str):
    args, _ = CASES[name]
    return getattr(lib.nn, name.split("_")[0])(*args, **_KWARGS.get(name, {}))


def _shapes(module) -> list:
    return [(n, tuple(t.shape)) for n, t in [*module.named_parameters(), *module.named_buffers()]]


@pytest.mark.parametrize("name", sorted(CASES))
def test_lazy_module_as_torch(name):
    x = np.random.default_rng(0).standard_normal(CASES[name][1]).astype(np.float32)
    ours, theirs = _build(tg, name), _build(torch, name)
    assert repr(ours) == repr(theirs)
    assert [(k, repr(v)) for k, v in ours.state_dict().items()] == \
           [(k, repr(v)) for k, v in theirs.state_dict().items()]
    assert ours.has_uninitialized_params() and theirs.has_uninitialized_params()
    out_ours, out_theirs = ours(tg.tensor(x)), theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ == name.split("_")[0][4:]
    assert repr(ours) == repr(theirs)
    assert _shapes(ours) == _shapes(theirs)
    assert tuple(out_ours.shape) == tuple(out_theirs.shape)
    # the same weights give the same output
    ours.load_state_dict({k: tg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(ours(tg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_initialisation_follows_the_eager_layer():
    lazy = tg.nn.LazyLinear(50)
    lazy(tg.randn(2, 40))
    bound = 1 / np.sqrt(40)  # Linear's kaiming_uniform(a=sqrt(5)) bound, for in_features inferred as 40
    weight = lazy.weight.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.8 * bound
    norm = tg.nn.LazyBatchNorm1d()
    norm(tg.randn(4, 3))
    assert norm.weight.tolist() == [1.0] * 3 and norm.running_var.shape == (3,)


def _loaded_then_run(lib):
    lazy = lib.nn.LazyLinear(3)
    lazy.load_state_dict(lib.nn.Linear(4, 3).state_dict())
    before = (type(lazy).__name__, lazy.in_features, lazy.has_uninitialized_params(), tuple(lazy.weight.shape))
    lazy(lib.randn(2, 4))
    mismatch = lib.nn.LazyLinear(3)
    mismatch.load_state_dict(lib.nn.Linear(4, 3).state_dict())
    error = raised(lib, lambda L: mismatch(L.randn(2, 5)))
    return before, (type(lazy).__name__, lazy.in_features), error


def test_load_state_dict_materializes_as_torch():
    assert _loaded_then_run(tg) == _loaded_then_run(torch)


def _optimizer_before_initialisation(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.LazyLinear(4), lib.nn.ReLU(), lib.nn.LazyLinear(1))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    x = lib.ones(8, 3)
    loss = model(x).pow(2).mean()
    before = [p.detach().clone() for p in model.parameters()]
    loss.backward()
    optimizer.step()
    return [not np.allclose(b.numpy(), p.detach().numpy()) for b, p in zip(before, model.parameters())], repr(model)


def test_optimizer_built_before_the_first_input_updates_the_materialized_parameters():
    ours, theirs = _optimizer_before_initialisation(tg), _optimizer_before_initialisation(torch)
    assert ours == theirs
    assert all(ours[0])


def _uninitialized_errors(lib):
    weight = lib.nn.LazyLinear(3).weight
    return [
        raised(lib, lambda L: weight.shape),
        raised(lib, lambda L: lib.nn.LazyConv2d(4, 3)(L.randn(5))),
        raised(lib, lambda L: lib.nn.LazyConv2d(4, 3, groups=2)(L.randn(1, 3, 5, 5))),
        raised(lib, lambda L: lib.nn.modules.lazy.LazyModuleMixin.initialize_parameters(lib.nn.LazyLinear(2))),
        (repr(weight), tuple(weight.size()), weight.requires_grad, repr(copy.deepcopy(weight))),
        repr(lib.nn.parameter.UninitializedBuffer()),
    ]


def test_uninitialized_parameters_refuse_use_as_torch():
    assert _uninitialized_errors(tg) == _uninitialized_errors(torch)
    weight = tg.nn.LazyLinear(3).weight
    for use in (lambda: weight.numel(), lambda: weight.sum(), lambda: weight * 2, lambda: weight.detach()):
        with pytest.raises((ValueError, TypeError)):
            use()
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in .*`LazyModule`"):
        weight.numel()


def test_a_copied_lazy_module_stays_lazy_and_independent():
    for lib in (tg, torch):
        lazy = lib.nn.LazyLinear(2)
        clone = copy.deepcopy(lazy)
        clone(lib.randn(1, 3))
        assert type(lazy).__name__ == "LazyLinear" and type(clone).__name__ == "Linear"
        assert lazy.has_uninitialized_params()
