"""The ``__torch_function__`` protocol gives the same calls whether it is live (a Tensor subclass exists: routing
wrappers in place) or dead (none: a duck type is found where the parser refuses it), as torch does; and plain
tensors keep the fused fast paths while a subclass exists."""

from __future__ import annotations

import gc

import pytest
from _lib import raised, tg, torch


class _Duck:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return func, [type(a).__name__ for a in args], sorted(kwargs or {})


class _Refusing:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def _owner(lib, func) -> str:
    """Which public object ``func`` is: the Tensor method or the torch function of its name."""
    name = func.__name__
    return "Tensor" if getattr(lib.Tensor, name, None) is func else "torch" if getattr(lib, name, None) is func else "?"


@pytest.fixture(params=["dead", "live"])
def protocol(request):
    """The protocol dead (no subclass: the parser's refusal finds the duck) or live (a subclass exists)."""
    gc.collect()
    if tg._STATE.torch_function:
        pytest.skip("a Tensor subclass kept alive outside this test keeps the protocol live")
    keep = type("Live", (tg.Tensor,), {}) if request.param == "live" else None
    assert tg._STATE.torch_function == (keep is not None)
    yield
    del keep


def _duck_calls(lib) -> list:
    x = lib.ones(2)
    calls = [x.mul(_Duck()), x.atan2(_Duck()), x.sum(_Duck()), x.max(_Duck()), x.sub_(_Duck()), lib.sum(_Duck(), dim=0),
             lib.where(x > 0, _Duck(), x), lib.clamp(x, _Duck()), lib.mean(_Duck()), lib.stack([_Duck(), x])]
    return [(func.__name__, _owner(lib, func), args, kwargs) for func, args, kwargs in calls]


@pytest.mark.usefixtures("protocol")
def test_duck_types_get_the_users_call():
    assert _duck_calls(tg) == _duck_calls(torch)


@pytest.mark.usefixtures("protocol")
@pytest.mark.parametrize("program", [
    lambda lib: lib.ones(2).mul(_Refusing()),
    lambda lib: lib.sum(_Refusing(), dim=0),
    lambda lib: lib.overrides.handle_torch_function(lib.nn.functional.relu, (_Refusing(),), _Refusing()),
])
def test_refusals_name_the_users_call(program):
    assert raised(tg, program) == raised(torch, program)


def _through_fused_paths(lib) -> list:
    MyT = type("MyT", (lib.Tensor,), {})
    s = lib.ones(2, 2, requires_grad=True).as_subclass(MyT)
    x, w = lib.ones(2, 2), lib.ones(3, 2)
    F = lib.nn.functional
    return [type(v).__name__ for v in (x * s, s * x, x - s, 2 * s, lib.exp(s), lib.mul(x, s), F.linear(s, w), F.relu(s),
                                       s.relu(), s @ w.t(), x.add(s), lib.sin(s).sum())]


def test_subclass_operands_leave_the_fused_paths():
    """While the protocol is live the fused paths run for plain tensors, so a subclass operand must reach the
    handlers on every entry (operators, methods, functions that are operator objects, nn.functional)."""
    assert _through_fused_paths(tg) == _through_fused_paths(torch)
    MyT = type("MyT", (tg.Tensor,), {})  # noqa: F841 - (alive while the state is read)
    assert tg._STATE.torch_function and not tg._STATE.special


def _through_modules(lib) -> tuple:
    seen: list = []

    class Log(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2), lib.nn.Tanh(), lib.nn.LayerNorm(2))
    out = net(lib.randn(5, 4).as_subclass(Log))
    loss = lib.nn.CrossEntropyLoss()(out, lib.tensor([0, 1, 0, 1, 1]))
    return type(out).__name__, type(loss).__name__, seen


def test_modules_given_a_subclass_instance_route_their_internals():
    """A module's forward runs tracegrad's fused internals, past the routing wrappers: they see the subclass
    instance, as torch's calls of torch.nn.functional do."""
    assert _through_modules(tg) == _through_modules(torch)
