"""Differences that the programs of ``tests/test_user_programs8_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- a ``TorchFunctionMode`` (or a Tensor subclass) saw the insides of the functional that a convolution, pooling,
  softmax or log-softmax module calls (``__index__``, ``__get__``, ``is_complex``, ``convolution``, ...) where
  torch's handlers see the one call of ``F.conv2d``/``F.max_pool2d``/``F.softmax``; ``Flatten`` showed ``view``
  for torch's ``flatten`` and BatchNorm hid its ``num_batches_tracked.add_(1)``;
- ``nn.Parameter`` of a Tensor subclass instance made a plain Parameter; torch keeps the subclass (its
  ``detach().requires_grad_()``), marks it ``_is_param`` so that ``isinstance(p, nn.Parameter)`` holds, and
  refuses a subclass whose ``detach()`` changes the class.
"""

from __future__ import annotations

import gc

import pytest
from _lib import raised, tg, torch

# ---- what a mode sees of a module's forward ------------------------------------------------------------------------

_MODULES = {
    "conv1d": (lambda nn: nn.Conv1d(2, 2, 3), (1, 2, 5)),
    "conv2d_reflect": (lambda nn: nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect"), (1, 2, 5, 5)),
    "conv3d": (lambda nn: nn.Conv3d(1, 1, 2), (1, 1, 3, 3, 3)),
    "conv_transpose2d": (lambda nn: nn.ConvTranspose2d(2, 2, 2), (1, 2, 3, 3)),
    "max_pool2d": (lambda nn: nn.MaxPool2d(2), (1, 1, 4, 4)),
    "avg_pool1d_3d": (lambda nn: nn.AvgPool2d(2), (1, 1, 4, 4)),
    "adaptive_avg_pool2d": (lambda nn: nn.AdaptiveAvgPool2d(1), (1, 1, 4, 4)),
    "adaptive_max_pool1d": (lambda nn: nn.AdaptiveMaxPool1d(2), (1, 2, 4)),
    "softmax": (lambda nn: nn.Softmax(1), (2, 3)),
    "log_softmax": (lambda nn: nn.LogSoftmax(1), (2, 3)),
    "flatten": (lambda nn: nn.Flatten(), (2, 3, 2)),
    "batch_norm_training": (lambda nn: nn.BatchNorm2d(2), (2, 2, 3, 3)),
    "gelu": (lambda nn: nn.GELU(), (2, 3)),
}


def _names_seen(lib, name: str) -> list:
    make, shape = _MODULES[name]

    class Names(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names: list = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    lib.manual_seed(0)
    module = make(lib.nn)
    x = lib.randn(*shape)
    with Names() as mode:
        module(x)
    return mode.names


@pytest.mark.parametrize("name", sorted(_MODULES))
def test_a_mode_sees_the_functional_a_module_calls(name):
    assert _names_seen(tg, name) == _names_seen(torch, name)


def _subclass_log_of_a_cnn(lib) -> list:
    seen: list = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.MaxPool2d(2), lib.nn.Flatten(), lib.nn.LogSoftmax(1))
    out = net(lib.randn(1, 1, 6, 6).as_subclass(Logged))
    return [*seen, type(out).__name__]


def test_a_subclass_sees_the_functionals_of_a_cnn():
    assert _subclass_log_of_a_cnn(tg) == _subclass_log_of_a_cnn(torch)


def test_modules_call_their_own_functional_again_once_the_protocol_is_off():
    _names_seen(tg, "conv1d")
    gc.collect()
    assert vars(tg.nn.Conv2d)["_fn"].__func__ is tg.nn.functional.conv2d
    assert vars(tg.nn.MaxPool2d)["_fn"].__func__ is tg.nn.functional.max_pool2d


# ---- nn.Parameter of a Tensor subclass -------------------------------------------------------------------------------


def _subclass_parameter(lib) -> list:
    calls: list = []

    class Tracked(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    data = lib.arange(3.0).as_subclass(Tracked)
    param = lib.nn.Parameter(data)
    seen = list(calls)
    module = lib.nn.Module()
    module.scale = param
    frozen = lib.nn.Parameter(data, requires_grad=False)
    return [type(param).__name__, isinstance(param, lib.nn.Parameter), isinstance(param, Tracked),
            param.requires_grad, param.is_leaf, seen, [name for name, _ in module.named_parameters()],
            type(module.scale).__name__, frozen.requires_grad, isinstance(data, lib.nn.Parameter),
            isinstance(lib.ones(1), lib.nn.Parameter), type(lib.nn.Parameter(lib.ones(1))).__name__]


def test_a_parameter_of_a_subclass_keeps_its_class():
    assert _subclass_parameter(tg) == _subclass_parameter(torch)


def _detach_changes_the_class(lib):
    class Odd(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            result = super().__torch_function__(func, types, args, kwargs or {})
            return result.as_subclass(lib.Tensor) if func is lib.Tensor.detach else result

    return lib.nn.Parameter(lib.ones(2).as_subclass(Odd))


def test_a_subclass_whose_detach_changes_the_class_is_refused():
    assert raised(tg, _detach_changes_the_class) == raised(torch, _detach_changes_the_class)
