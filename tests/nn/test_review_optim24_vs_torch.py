"""What an optimizer step that fails leaves behind, against torch: the state made for parameters that had none when
the foreach grouping refuses a state of another dtype (torch's ``_init_group`` runs before the grouping), and the
versions of the state a single-tensor step wrote before it failed part-way (each in-place op advances its tensor's
version as it succeeds: ``step += 1`` always, ``square_avg.mul_`` before an ``addcmul_`` that fails, ...).

Values are compared bit for bit against a torch with a correctly rounded square root (see ``_lib``)."""

from __future__ import annotations

import pytest
from _lib import assert_same_bits, correctly_rounded_torch_sqrt, raised, tg, torch

_FOREACH = ["Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Rprop", "Adamax", "NAdam", "RAdam", "ASGD", "SGD"]
_OPTIONS = {"SGD": {"lr": 0.1, "momentum": 0.5}, "RMSprop": {"momentum": 0.5}}


@pytest.fixture(autouse=True)
def _rounded_sqrt(monkeypatch):
    correctly_rounded_torch_sqrt(monkeypatch)


def _snapshot(opt, params: list) -> list:
    """Each parameter's and state tensor's name, values and version, in order."""
    seen = []
    for p in params:
        seen.append(("param", p.detach().clone(), p._version))
        seen += [(key, value.detach().clone(), value._version) for key, value in opt.state[p].items()]
    return seen


def _assert_same_snapshots(ours: list, theirs: list) -> None:
    assert [(key, version) for key, _, version in ours] == [(key, version) for key, _, version in theirs]
    for (_, mine, _), (_, their, _) in zip(ours, theirs):
        assert_same_bits(mine, their)


def _set_gradients(lib, params: list, step: int) -> None:
    for k, p in enumerate(params):
        p.grad = (p.detach() * 0.7 - 0.1 * (k + 1) * (-1) ** step).clone()


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
    _set_gradients(lib, params, 1)
    return raised(lib, lambda _: opt.step()), _snapshot(opt, params)


@pytest.mark.parametrize("name", _FOREACH)
def test_mixed_state_dtypes_are_refused_after_the_groups_state_is_made(name):
    (error, ours), (torch_error, theirs) = (_complex64_state_for_complex128(lib, name) for lib in (tg, torch))
    assert error is not None and error == torch_error
    _assert_same_snapshots(ours, theirs)


def _sgd_buffer_of_another_dtype(lib, momentum: float):
    """SGD's foreach step after loading a complex64 momentum buffer for a complex128 parameter: torch groups the
    buffers with the parameters only where the group has momentum (set to 0 after loading: no refusal)."""
    source = [lib.nn.Parameter(lib.ones(2, dtype=lib.complex64)), lib.nn.Parameter(lib.ones(3))]
    loader = lib.optim.SGD(source, lr=0.1, momentum=0.5, foreach=True)
    _set_gradients(lib, source, 0)
    loader.step()
    params = [lib.nn.Parameter(lib.ones(2, dtype=lib.complex128)), lib.nn.Parameter(lib.ones(3))]
    opt = lib.optim.SGD(params, lr=0.1, momentum=0.5, foreach=True)
    opt.load_state_dict(loader.state_dict())
    opt.param_groups[0]["momentum"] = momentum
    _set_gradients(lib, params, 1)
    return raised(lib, lambda _: opt.step()), _snapshot(opt, params)


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_sgd_groups_the_momentum_buffers_only_with_momentum(momentum):
    (error, ours), (torch_error, theirs) = (_sgd_buffer_of_another_dtype(lib, momentum) for lib in (tg, torch))
    assert error == torch_error
    _assert_same_snapshots(ours, theirs)
