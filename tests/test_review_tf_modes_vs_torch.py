"""Review of the torch-function-mode commits (grad modes' ``torch._C._set_grad_enabled``, ``nn.init`` handed to
handlers): what a wrong call raises while the protocol is live, the names handlers' messages give, and
``_set_grad_enabled``'s bool check, each as torch's."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch


def _error(fn, *args) -> tuple[str, str]:
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.type.__name__, str(info.value)


def _subclass(lib) -> type:
    class Sub(lib.Tensor):
        pass
    return Sub


@pytest.mark.parametrize("call", [
    lambda lib, w: lib.nn.init.uniform_(w, foo=1),
    lambda lib, w: lib.nn.init.uniform_(w, 1, 2, None, 5),
    lambda lib, w: lib.nn.init.normal_(w, mean=0, sd=1),
    lambda lib, w: lib.nn.init.constant_(w),
    lambda lib, w: lib.nn.init.kaiming_uniform_(w, 0, "fan_in", "relu", None, 1),
])
def test_init_wrong_call_with_a_subclass_tensor_raises_pythons_message(call):
    """A subclass tensor (the protocol live) given a wrong call: Python's own TypeError naming the function (it
    was inspect.Signature.bind's "too many positional arguments")."""
    got = []
    for lib in (torch, tg):
        w = lib.zeros(3, 4).as_subclass(_subclass(lib))
        got.append(_error(call, lib, w))
    assert got[1] == got[0]


def test_init_wrong_call_under_a_mode_raises_pythons_message():
    got = []
    for lib in (torch, tg):
        class PassesOn(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        w = lib.zeros(2)
        with PassesOn():
            got.append(_error(lib.nn.init.constant_, w, 1.0, 2.0))
    assert got[1] == got[0]


@pytest.mark.parametrize("value", [None, 1, 0, "x", np.bool_(True), 1.0])
def test_set_grad_enabled_refuses_a_non_bool(value):
    for call in (lambda lib: lib._C._set_grad_enabled(value), lambda lib: lib.set_grad_enabled(value)):
        got = []
        for lib in (torch, tg):
            got.append(_error(call, lib))
            got.append(lib.is_grad_enabled())
        assert got[2:] == got[:2]


def test_set_grad_enabled_by_keyword():
    for lib in (torch, tg):
        lib._C._set_grad_enabled(enabled=False)
        assert not lib.is_grad_enabled()
        lib._C._set_grad_enabled(True)


def test_set_grad_enabled_refuses_a_non_bool_before_the_mode_sees_it():
    got = []
    for lib in (torch, tg):
        class Recorder(lib.overrides.TorchFunctionMode):
            seen: list = []

            def __torch_function__(self, func, types, args=(), kwargs=None):
                self.seen.append(func.__name__)
                return func(*args, **(kwargs or {}))

        with Recorder():
            got.append((_error(lib._C._set_grad_enabled, None), Recorder.seen))
        lib._C._set_grad_enabled(True)
    assert got[1] == got[0]


def test_grad_switch_every_handler_declines_names_torch_c_set_grad_enabled():
    got = []
    for lib in (torch, tg):
        class Declines(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented

        with Declines():
            kind, message = _error(lib.no_grad().__enter__)
        got.append((kind, message.split(";")[0]))
        lib._C._set_grad_enabled(True)
    assert got[1] == got[0]
    assert "'torch._C.set_grad_enabled'" in got[0][1]


@pytest.mark.parametrize("name", ["ones_", "zeros_", "eye_", "xavier_uniform_", "orthogonal_", "calculate_gain",
                                  "uniform_", "kaiming_uniform_", "uniform"])
def test_resolve_name_of_nn_init_functions(name):
    assert tg.overrides.resolve_name(getattr(tg.nn.init, name)) == torch.overrides.resolve_name(
        getattr(torch.nn.init, name))
