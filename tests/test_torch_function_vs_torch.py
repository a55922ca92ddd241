"""The ``__torch_function__`` protocol against torch: Tensor subclasses keep their class through operators, methods,
indexing and autograd; duck types and modes see the calls torch hands them (``func``, ``types``, ``args``), in
torch's order, and refusals read as torch's."""

from __future__ import annotations

import gc

import pytest
from _lib import raised, tg, to_numpy, torch


def _subclass(lib, name: str = "MyT", log: list | None = None) -> type:
    """A Tensor subclass; with ``log``, one whose handler notes each function's name and the types it got."""
    if log is None:
        return type(name, (lib.Tensor,), {})

    def handler(cls, func, types, args=(), kwargs=None):
        log.append((func.__name__, [kind.__name__ for kind in types]))
        return super(cls, cls).__torch_function__(func, types, args, kwargs or {})

    return type(name, (lib.Tensor,), {"__torch_function__": classmethod(handler)})


def _class_names(values) -> list:
    return [type(v).__name__ for v in values]


def _propagation(lib) -> list:
    MyT = _subclass(lib)
    y = lib.ones(3, requires_grad=True).as_subclass(MyT)
    x = lib.arange(6.0).reshape(2, 3).as_subclass(MyT)
    return _class_names([y * 2, 2 * y, y + y, -y, y ** 2, lib.sin(y), y.sin(), y[0], y[1:], y.sum(), x.t(), x @ x.t(),
                         lib.cat([y, y]), lib.add(lib.ones(3), y), y.unbind()[0], lib.max(x, 1).values, y > 0,
                         tg.nn.functional.relu(y) if lib is tg else torch.nn.functional.relu(y)])


def test_subclass_results_keep_the_subclass():
    assert _propagation(tg) == _propagation(torch)


def _autograd_through_subclass(lib) -> tuple:
    MyT = _subclass(lib)
    leaf = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = leaf.as_subclass(MyT)
    z = (y * y).sum()
    z.backward()
    return (type(z).__name__, type(z.grad_fn).__name__, type(leaf.grad).__name__, to_numpy(leaf.grad).tolist(),
            y.is_leaf, type(y.grad_fn).__name__)


def test_autograd_works_on_subclass_results():
    assert _autograd_through_subclass(tg) == _autograd_through_subclass(torch)


def _parameter_ops(lib) -> list:
    p = lib.nn.Parameter(lib.ones(2))
    return _class_names([p * 2, p.sum(), lib.sin(p), p[0]]) + [
        lib.nn.Parameter.__torch_function__ is lib._C._disabled_torch_function_impl]


def test_parameter_opts_out():
    assert _parameter_ops(tg) == _parameter_ops(torch)


def _make_subclass(lib) -> tuple:
    class Param(lib.Tensor):
        def __new__(cls, data, requires_grad=True):
            return lib.Tensor._make_subclass(cls, data, requires_grad)

    data = lib.ones(2)
    p = Param(data)
    data.add_(1)  # (shares storage and version counter)
    return type(p).__name__, p.requires_grad, p.is_leaf, to_numpy(p).tolist(), p._version, type(p + 1).__name__


def test_make_subclass():
    assert _make_subclass(tg) == _make_subclass(torch)


def _logged_calls(lib) -> list:
    log: list = []
    Log = _subclass(lib, "Log", log)
    x = lib.Tensor._make_subclass(Log, lib.arange(4.0).reshape(2, 2), True)
    out = (x * 2 + 1).sin().sum()
    out.backward()
    y = x.detach()
    y[0] = 5.0
    x.grad  # noqa: B018 - (a property read: ``Tensor.grad.__get__``)
    lib.add(x, x.new_ones(2, 2), alpha=2)
    return log


def test_logging_subclass_sees_torch_functions():
    assert _logged_calls(tg) == _logged_calls(torch)


def _mode_log(lib, functional) -> tuple:
    names: list = []

    class Mode(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    lib.manual_seed(0)
    lin = lib.nn.Linear(4, 3)
    x = lib.randn(5, 4)
    target = lib.tensor([0, 1, 2, 0, 1])
    logs = []
    with Mode():
        loss = functional.cross_entropy(functional.relu(lin(x)), target)
        logs.append(list(names))
        names.clear()
        loss.backward()
        logs.append(list(names))
        names.clear()
        a = lib.ones(2)
        (a * 3 + a).sum().item()
        logs.append(list(names))
    return logs, round(loss.item(), 5)


def test_mode_sees_a_training_step_forward_and_backward():
    # (the optimizer's step is left out: torch's mode sees its profiler ranges and grad-mode switches)
    assert _mode_log(tg, tg.nn.functional) == _mode_log(torch, torch.nn.functional)


def _mode_with_subclass(lib) -> list:
    seen: list = []
    Log = _subclass(lib, "Log", seen)

    class Mode(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(("mode", func.__name__, [kind.__name__ for kind in types]))
            return func(*args, **(kwargs or {}))

    x = lib.ones(2).as_subclass(Log)
    with Mode():
        r = lib.mul(lib.ones(2), x)
    seen.append(type(r).__name__)
    return seen


def test_mode_runs_before_subclass():
    assert _mode_with_subclass(tg) == _mode_with_subclass(torch)


class _Duck:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("handled", func.__name__, _class_names(args), sorted(kwargs or {}))


def _duck_calls(lib) -> list:
    x = lib.ones(2)
    return [lib.mean(_Duck()), lib.sin(_Duck()), lib.add(x, _Duck()), x.add(_Duck()), x + _Duck(), _Duck() * x,
            x @ _Duck(), lib.cat([x, _Duck()]), lib.nn.functional.linear(x, _Duck()), lib.sum(_Duck(), dim=0)]


def test_duck_types_are_handed_the_call():
    assert _duck_calls(tg) == _duck_calls(torch)


class _Refusing:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


@pytest.mark.parametrize("program", [
    lambda lib: lib.mean(_Refusing()),
    lambda lib: lib.ones(2).add(_Refusing()),
    lambda lib: lib.ones(2) + _Refusing(),
    lambda lib: lib.overrides.handle_torch_function(lib.nn.functional.relu, (_Refusing(),), _Refusing()),
])
def test_all_handlers_refusing_is_torchs_type_error(program):
    assert raised(tg, program) == raised(torch, program)


def _overrides_api(lib) -> list:
    MyT = _subclass(lib)
    s, t = lib.ones(1).as_subclass(MyT), lib.ones(1)
    o = lib.overrides
    with lib._C.DisableTorchFunctionSubclass():
        disabled = (o.has_torch_function((s,)), type(s + 1).__name__)
    return [o.has_torch_function((s,)), o.has_torch_function((t,)), o.has_torch_function_unary(_Duck()),
            o.has_torch_function_variadic(t, 1), o.is_tensor_like(t), o.is_tensor_like(_Duck()), o.is_tensor_like(1),
            disabled, o.is_tensor_method_or_property(lib.Tensor.add), o.is_tensor_method_or_property(lib.add),
            lib.Tensor.grad.__get__ in o.get_default_nowrap_functions(), o._get_current_function_mode()]


def test_overrides_functions():
    assert _overrides_api(tg) == _overrides_api(torch)


def _wrapped_function(lib) -> tuple:
    @lib.overrides.wrap_torch_function(lambda a, b: (a, b))
    def combine(a, b):
        return a + b

    MyT = _subclass(lib)
    return type(combine(lib.ones(1).as_subclass(MyT), lib.ones(1))).__name__, combine(1, 2)


def test_wrap_torch_function():
    assert _wrapped_function(tg) == _wrapped_function(torch)


def test_protocol_is_off_without_subclasses_and_modes():
    """The eager fast path is kept: the protocol goes live with a subclass (its routing wrappers in place, the
    fused fast paths still on for plain tensors) and off again once it is gone; a mode takes the general path."""
    gc.collect()
    assert not tg._STATE.torch_function
    Sub = type("Sub", (tg.Tensor,), {})
    assert tg._STATE.torch_function and tg._STATE.op_call_checks and not tg._STATE.special
    del Sub
    gc.collect()
    assert not tg._STATE.torch_function and not tg._STATE.special and not tg._STATE.op_call_checks
    with tg.overrides.BaseTorchFunctionMode():
        assert tg._STATE.torch_function and tg._STATE.special
    assert not tg._STATE.torch_function and not tg._STATE.special
