"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each works as a context manager and as a decorator; decorating a generator function applies the mode
around every resumption of the generator (and restores the caller's mode at each ``yield``), as PyTorch does.
"""

from __future__ import annotations

import functools
import inspect
import warnings

from .. import _torch_function as _tf
from .._state import STATE


def _set_grad_enabled(enabled: bool) -> None:
    """``torch._C._set_grad_enabled``: a bool only (its parser's check comes first), then an active
    ``TorchFunctionMode`` sees the call (torch's checks for one)."""
    if enabled.__class__ is not bool:
        from .._arg_parser import tp_name

        raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {tp_name(enabled)}")
    if _tf.is_torch_function_mode_enabled():
        return _tf.handle(_set_grad_enabled, [], (enabled,), {})
    _set_mode(enabled)
    return None


def _set_mode(enabled: bool) -> None:
    """Grad mode set: what records, or, inside inference mode (where nothing records), what is shown."""
    if STATE._inference:  # (the slot, not the property: every grad-mode switch reads it)
        STATE.inference_grad_mode = enabled
    else:
        STATE.grad_enabled = enabled


def _mode() -> bool:
    """The grad mode as ``is_grad_enabled`` shows it."""
    return STATE.inference_grad_mode if STATE._inference else STATE.grad_enabled


_set_grad_enabled.__module__ = "torch._C"  # (its name as torch's: handlers print it, resolve_name knows none)
_set_grad_enabled._torch_unlisted = True
_set_grad_enabled._torch_owner = "torch._C"  # (messages name it by its parser's signature: torch._C.set_grad_enabled)
_set_grad_enabled._torch_name = "set_grad_enabled"


def _switch_grad(mode: bool) -> None:
    """The grad modes' switch: through ``_set_grad_enabled`` while a mode may be watching, as torch's are."""
    if STATE.torch_function_mode:
        _set_grad_enabled(mode)
    else:
        _set_mode(mode)


class _DecoratorContextManager:
    """Base for context managers that can also decorate functions, generators and coroutines."""

    def clone(self):
        return self.__class__()

    def __call__(self, func):
        if inspect.isclass(func):
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should "
                          "only decorate functions or methods. To preserve the current behavior of class "
                          "decoration, you can directly decorate the `__init__` method and nothing else.",
                          FutureWarning, stacklevel=2)
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)

        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorate_context(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return decorate_context

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator_context(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator_context


class _NoParamDecorator(_DecoratorContextManager):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecorator):
    """Disable gradient recording inside the block."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _mode()
        _switch_grad(False)

    def __exit__(self, *exc) -> None:
        _switch_grad(self.prev)


class enable_grad(_NoParamDecorator):
    """Enable gradient recording inside the block (e.g. within ``no_grad``)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _mode()
        _switch_grad(True)

    def __exit__(self, *exc) -> None:
        _switch_grad(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode; takes effect immediately when called, and is restored when used as a context."""

    def __init__(self, mode: bool) -> None:
        self.prev = _mode()
        self.mode = mode
        if mode.__class__ is not bool:
            _set_grad_enabled(mode)  # (raises its parser's TypeError, as torch's call of it)
        _switch_grad(mode)

    def __call__(self, func):
        _switch_grad(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _switch_grad(self.mode)

    def __exit__(self, *exc) -> None:
        _switch_grad(self.prev)

    def clone(self):
        return self.__class__(self.mode)

    def __str__(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}(mode={self.mode})"  # torch.typename(self)

    __repr__ = __str__


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside are inference tensors."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self.prev = (True, False, False)

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __enter__(self) -> None:
        self.prev = (STATE.grad_enabled, STATE.inference, STATE.inference_grad_mode)
        STATE.grad_enabled = not self.mode
        STATE.inference = bool(self.mode)
        STATE.inference_grad_mode = False

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled, STATE.inference, STATE.inference_grad_mode = self.prev

    def clone(self):
        return self.__class__(self.mode)


class _unsafe_preserve_version_counter(_DecoratorContextManager):
    """Restore the version counters of ``tensors`` on exit, hiding in-place ops from autograd's checks."""

    def __init__(self, tensors) -> None:
        self.tensors = (tensors,) if not isinstance(tensors, (tuple, list)) else tuple(tensors)
        self.prev_versions = tuple(t._version for t in self.tensors)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        for t, v in zip(self.tensors, self.prev_versions):
            t._version_counter()[0] = v


def is_grad_enabled() -> bool:
    return _mode()


def is_inference_mode_enabled() -> bool:
    return STATE.inference


_MULTITHREADING = [True]


def is_multithreading_enabled() -> bool:
    return _MULTITHREADING[0]


class set_multithreading_enabled:  # (torch's home for it: its class prints as torch.autograd.grad_mode's)
    """tracegrad's engine always runs backward on the calling thread; the flag is kept because PyTorch's
    execution-order introspection requires it to be off."""

    def __init__(self, mode: bool) -> None:
        self.mode = mode
        self.prev = _MULTITHREADING[0]
        _MULTITHREADING[0] = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _MULTITHREADING[0] = self.prev

    def clone(self):
        return set_multithreading_enabled(self.mode)
