"""What an optimizer step that fails leaves behind, against torch: the state made for parameters that had none when
the foreach grouping refuses a state of another dtype (torch's ``_init_group`` runs before the grouping), and the
versions of the state a single-tensor step wrote before it failed part-way (each in-place op advances its tensor's
version as it succeeds: ``step += 1`` always, ``square_avg.mul_`` before an ``addcmul_`` that fails, ...).

Values are compared bit for bit against a torch with a correctly rounded square root (see ``_lib``)."""

from __future__ import annotations

import pytest
from _lib import (
    assert_same_snapshots,
    correctly_rounded_torch_sqrt,
    failed_third_step,
    optimizer_parameters,
    optimizer_snapshot,
    raised,
    set_alternating_gradients,
    tg,
    torch,
)

_FOREACH = ["Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Rprop", "Adamax", "NAdam", "RAdam", "ASGD", "SGD"]
_OPTIONS = {"SGD": {"lr": 0.1, "momentum": 0.5}, "RMSprop": {"momentum": 0.5}}


@pytest.fixture(autouse=True)
def _rounded_sqrt(monkeypatch):
    correctly_rounded_torch_sqrt(monkeypatch)


def _complex64_state_for_complex128(lib, name: str):
    """A complex128 parameter whose state, loaded from a complex64 one's, stays complex64 (load_state_dict casts
    only floating parameters' state), and a float32 parameter that had no gradient when the state was saved: the
    foreach step refuses the mixed dtypes once ``_init_group`` has made the float32 parameter's state."""
    options = _OPTIONS.get(name, {})
    source = [lib.nn.Parameter(lib.ones(2, dtype=lib.complex64)), lib.nn.Parameter(lib.ones(3))]
    loader = getattr(lib.optim, name)(source, foreach=True, **options)
    source[0].grad = lib.full((2,), 0.5 + 0.1j, dtype=lib.complex64)
    loader.step()
    params = [lib.nn.Parameter(lib.ones(2, dtype=lib.complex128)), lib.nn.Parameter(lib.ones(3))]
    opt = getattr(lib.optim, name)(params, foreach=True, **options)
    opt.load_state_dict(loader.state_dict())
    set_alternating_gradients(lib, params, 1)
    return raised(lib, lambda _: opt.step()), optimizer_snapshot(opt, params)


@pytest.mark.parametrize("name", _FOREACH)
def test_mixed_state_dtypes_are_refused_after_the_groups_state_is_made(name):
    (error, ours), (torch_error, theirs) = (_complex64_state_for_complex128(lib, name) for lib in (tg, torch))
    assert error is not None and error == torch_error
    assert_same_snapshots(ours, theirs)


def _sgd_buffer_of_another_dtype(lib, momentum: float):
    """SGD's foreach step after loading a complex64 momentum buffer for a complex128 parameter: torch groups the
    buffers with the parameters only where the group has momentum (set to 0 after loading: no refusal)."""
    source = [lib.nn.Parameter(lib.ones(2, dtype=lib.complex64)), lib.nn.Parameter(lib.ones(3))]
    loader = lib.optim.SGD(source, lr=0.1, momentum=0.5, foreach=True)
    set_alternating_gradients(lib, source, 0)
    loader.step()
    params = [lib.nn.Parameter(lib.ones(2, dtype=lib.complex128)), lib.nn.Parameter(lib.ones(3))]
    opt = lib.optim.SGD(params, lr=0.1, momentum=0.5, foreach=True)
    opt.load_state_dict(loader.state_dict())
    opt.param_groups[0]["momentum"] = momentum
    set_alternating_gradients(lib, params, 1)
    return raised(lib, lambda _: opt.step()), optimizer_snapshot(opt, params)


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_sgd_groups_the_momentum_buffers_only_with_momentum(momentum):
    (error, ours), (torch_error, theirs) = (_sgd_buffer_of_another_dtype(lib, momentum) for lib in (tg, torch))
    assert error == torch_error
    assert_same_snapshots(ours, theirs)


_SINGLE_TENSOR = [
    ("Adam", {}),
    ("Adam", {"amsgrad": True, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"maximize": True}),
    ("RMSprop", {"centered": True, "momentum": 0.5}),
    ("RMSprop", {"weight_decay": 0.1}),
    ("Adagrad", {"lr_decay": 0.1}),
    ("Adagrad", {"weight_decay": 0.1}),
    ("Adadelta", {}),
    ("Adadelta", {"weight_decay": 0.1, "maximize": True}),
    ("Rprop", {}),
    ("Adamax", {}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {}),
    ("ASGD", {"weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.5}),
]

# The failing step's gradients (set through ``.grad.data``): the second parameter's not broadcastable, the first's
# broadcastable only to a larger shape, the complex one's, and the float64 one's broadcastable into its shape (the
# update goes on until an op that does not broadcast, such as Rprop's boolean mask)
_BAD_GRADIENTS = {"not-broadcastable": (1, (4,)), "larger": (0, (2, 3)), "complex": (2, (3,)), "smaller": (3, (1,))}
_PARAMS = [((3,), "float32"), ((2, 3), "float32"), ((2,), "complex64"), ((4,), "float64")]


def _single_tensor_failing_step(lib, name: str, options: dict, bad: str):
    params = optimizer_parameters(lib, _PARAMS)
    opt = getattr(lib.optim, name)(params, foreach=False, **options)
    return failed_third_step(lib, opt, params, *_BAD_GRADIENTS[bad])


@pytest.mark.parametrize("bad", list(_BAD_GRADIENTS))
@pytest.mark.parametrize(("name", "options"), _SINGLE_TENSOR,
                         ids=[f"{name}{options}" for name, options in _SINGLE_TENSOR])
def test_a_single_tensor_step_failing_part_way_leaves_torchs_versions(name, options, bad):
    (error, ours), (torch_error, theirs) = (_single_tensor_failing_step(lib, name, options, bad)
                                            for lib in (tg, torch))
    assert error == torch_error
    assert_same_snapshots(ours, theirs)
