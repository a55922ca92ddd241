"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Ports the behaviour of seed 004 (PyTorch ``test_autograd.py``) area I: each mode works as a
context manager and as a decorator (with and without parentheses), decorating a class is
deprecated, and generator / coroutine bodies run under the decorated mode while the caller's
mode is restored at every ``yield``, ``send``, ``throw`` and ``close``.

Seed tests ported here: test_grad_mode_class_decoration, test_no_grad,
test_enable_grad_decorator_no_paren, test_set_grad_generator_functions,
test_set_grad_generator_functions_recursive, test_set_grad_coroutines,
test_set_grad_coroutines_benign_exceptions, test_set_grad_coroutines_critical_exceptions,
test_set_grad_coroutines_exit, test_no_grad_python_function, test_no_grad_input,
test_set_grad_enabled, test_set_grad_enabled_wraps, test_grad_mode_restored_reentrant
(inventory area N, kept here because it pins grad-mode restoration; it uses the public
``is_grad_enabled`` instead of ``torch._C``).

The seed holds no dedicated inference-mode class (it is truncated); the ``test_inference_mode_*``
tests below pin PyTorch's documented behaviour, checked against the oracle.

Skipped: none of area I is marked N.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import tg


def test_grad_mode_class_decoration():
    """Decorating a class warns (FutureWarning) and only wraps __init__; functions/methods do not warn."""
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):

        @tg.no_grad()
        class Foo:
            def __init__(self):
                self.init_mode = tg.is_grad_enabled()

            def foo(self):
                return tg.is_grad_enabled()

        foo = Foo()
    assert foo.init_mode is False
    # Methods of a decorated class are not wrapped.
    assert foo.foo() is True

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @tg.no_grad()
        def bar():
            return tg.is_grad_enabled()

        class Foo2:
            @tg.no_grad()
            def __init__(self):
                self.init_mode = tg.is_grad_enabled()

            @tg.no_grad()
            def foo(self):
                return tg.is_grad_enabled()

        assert bar() is False
        foo2 = Foo2()
        assert foo2.init_mode is False
        assert foo2.foo() is False
    assert len(caught) == 0


def test_no_grad():
    """no_grad as context manager, as no_grad()(f) and as no_grad(f): results have no history."""
    x = tg.ones(5, 5, requires_grad=True)
    y = tg.ones(5, 5) * 4
    with tg.no_grad():
        w = x + y

    def adder(a, b):
        return a + b

    for wrapped in (tg.no_grad()(adder), tg.no_grad(adder)):
        z = wrapped(x, y)
        for t in (w, z):
            assert t.requires_grad is False
            assert t.grad_fn is None
            with pytest.raises(RuntimeError):
                t.backward(tg.ones(5, 5))
        # Grad mode is restored after the decorated call returns.
        assert tg.is_grad_enabled() is True

    # Decorator nested inside the context manager keeps grad disabled.
    with tg.no_grad():
        assert tg.is_grad_enabled() is False
        w = tg.no_grad(adder)(x, y)
        assert tg.is_grad_enabled() is False
    assert tg.is_grad_enabled() is True


def test_enable_grad_decorator_no_paren():
    """@enable_grad without parentheses re-enables grad inside a no_grad block."""
    x = tg.ones(1, requires_grad=True)

    @tg.enable_grad
    def doubler(t):
        return t * 2

    with tg.no_grad():
        z = doubler(x)
        assert tg.is_grad_enabled() is False
    assert z.requires_grad is True


def test_no_grad_decorator_no_paren():
    """@no_grad without parentheses disables grad for the body only."""

    @tg.no_grad
    def body():
        return tg.is_grad_enabled()

    assert body() is False
    assert tg.is_grad_enabled() is True


def test_set_grad_generator_functions():
    """A decorated generator runs under its mode; the caller sees its own mode between items."""

    @tg.no_grad()
    def gen_no_grad():
        for i in range(3):
            assert tg.is_grad_enabled() is False
            yield i

    with tg.enable_grad():
        seen = []
        for i in gen_no_grad():
            assert tg.is_grad_enabled() is True
            seen.append(i)
        assert seen == [0, 1, 2]

    @tg.enable_grad()
    def gen_enable_grad():
        for i in range(3):
            assert tg.is_grad_enabled() is True
            yield i

    with tg.no_grad():
        seen = []
        for i in gen_enable_grad():
            assert tg.is_grad_enabled() is False
            seen.append(i)
        assert seen == [0, 1, 2]


def test_set_grad_generator_functions_recursive():
    """Mutually recursive decorated functions / context managers restore the caller's mode."""

    @tg.enable_grad()
    def enable_rec(depth):
        assert tg.is_grad_enabled()
        if depth > 0:
            disable_rec(depth - 1)
            assert tg.is_grad_enabled()

    @tg.no_grad()
    def disable_rec(depth):
        assert not tg.is_grad_enabled()
        if depth > 0:
            enable_rec(depth - 1)
            assert not tg.is_grad_enabled()

    def enable_cm_rec(depth):
        with tg.enable_grad():
            assert tg.is_grad_enabled()
            if depth > 0:
                disable_cm_rec(depth - 1)
                assert tg.is_grad_enabled()

    def disable_cm_rec(depth):
        with tg.no_grad():
            assert not tg.is_grad_enabled()
            if depth > 0:
                enable_cm_rec(depth - 1)
                assert not tg.is_grad_enabled()

    for outer, expected in ((tg.enable_grad, True), (tg.no_grad, False)):
        with outer():
            assert tg.is_grad_enabled() is expected
            enable_rec(6)
            assert tg.is_grad_enabled() is expected
            enable_cm_rec(6)
            assert tg.is_grad_enabled() is expected


def _drive_coroutine(coro, caller_mode):
    """Send values back into a generator-based coroutine, checking the caller's mode each step."""
    r = None
    received = []
    try:
        while True:
            assert tg.is_grad_enabled() is caller_mode
            r = coro.send(r)
            received.append(r)
            assert tg.is_grad_enabled() is caller_mode
    except StopIteration:
        pass
    return received


def test_set_grad_coroutines():
    """send() into a decorated coroutine: body sees the decorated mode, caller keeps its own."""

    def make(mode_cls, mode):
        @mode_cls()
        def coro(n=4):
            assert tg.is_grad_enabled() is mode
            for i in range(n):
                assert tg.is_grad_enabled() is mode
                r = yield i
                assert tg.is_grad_enabled() is mode
                assert r == i
            assert tg.is_grad_enabled() is mode

        return coro

    with tg.enable_grad():
        assert _drive_coroutine(make(tg.no_grad, False)(), True) == [0, 1, 2, 3]
    with tg.no_grad():
        assert _drive_coroutine(make(tg.enable_grad, True)(), False) == [0, 1, 2, 3]


def test_set_grad_coroutines_benign_exceptions():
    """An exception thrown into a decorated coroutine is handled under the decorated mode."""

    class RecoverableException(Exception):
        pass

    def make(mode_cls, mode):
        @mode_cls()
        def coro(n=4):
            has_raised = False
            for i in range(n):
                try:
                    assert tg.is_grad_enabled() is mode
                    yield (-i if has_raised else i)
                except RecoverableException:
                    assert tg.is_grad_enabled() is mode
                    has_raised = True

        return coro

    for mode_cls, mode, caller in ((tg.no_grad, False, tg.enable_grad), (tg.enable_grad, True, tg.no_grad)):
        with caller():
            caller_mode = tg.is_grad_enabled()
            coro = make(mode_cls, mode)()
            assert next(coro) == 0
            answers = []
            try:
                while True:
                    answers.append(coro.throw(RecoverableException))
                    assert tg.is_grad_enabled() is caller_mode
            except StopIteration:
                pass
            assert answers == [-1, -2, -3]
            assert tg.is_grad_enabled() is caller_mode


def test_set_grad_coroutines_critical_exceptions():
    """A secondary exception raised inside a decorated coroutine propagates; caller's mode survives."""

    class UnrecoverableException(Exception):
        pass

    class SecondaryException(Exception):
        pass

    def make(mode_cls, mode):
        @mode_cls()
        def coro(n=4):
            for i in range(n):
                try:
                    assert tg.is_grad_enabled() is mode
                    yield i
                except UnrecoverableException:
                    assert tg.is_grad_enabled() is mode
                    raise SecondaryException from None

        return coro

    for mode_cls, mode, caller in ((tg.no_grad, False, tg.enable_grad), (tg.enable_grad, True, tg.no_grad)):
        with caller():
            caller_mode = tg.is_grad_enabled()
            coro = make(mode_cls, mode)()
            assert next(coro) == 0
            with pytest.raises(SecondaryException):
                coro.throw(UnrecoverableException)
            assert tg.is_grad_enabled() is caller_mode


def test_set_grad_coroutines_exit():
    """close() delivers GeneratorExit under the decorated mode."""

    def make(mode_cls, mode, state):
        @mode_cls()
        def coro():
            for i in range(10):
                try:
                    assert tg.is_grad_enabled() is mode
                    yield i
                except GeneratorExit:
                    state.append(("GeneratorExit", tg.is_grad_enabled()))
                    raise

        return coro

    for mode_cls, mode, caller in ((tg.no_grad, False, tg.enable_grad), (tg.enable_grad, True, tg.no_grad)):
        state = []
        with caller():
            caller_mode = tg.is_grad_enabled()
            coro = make(mode_cls, mode, state)()
            for _ in range(3):
                next(coro)
            coro.close()
            assert tg.is_grad_enabled() is caller_mode
        assert state == [("GeneratorExit", mode)]


def test_no_grad_python_function():
    """A custom Function applied under no_grad returns an output that does not require grad."""

    class MyOp(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x + 1

        @staticmethod
        def backward(ctx, dy):
            return dy

    x = tg.ones(5, 5, requires_grad=True)
    with tg.no_grad():
        y = MyOp.apply(x)
    assert y.requires_grad is False


def test_no_grad_input():
    """A custom Function returning its input under no_grad: the output has no grad_fn."""

    class MyFunction(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    x = tg.randn(5, requires_grad=True)
    with tg.no_grad():
        y = MyFunction.apply(x)
    assert x.requires_grad is True
    assert y.grad_fn is None


def test_set_grad_enabled():
    """set_grad_enabled(bool) as a context manager, and a bare call inside one takes effect."""
    x = tg.tensor([1.0], requires_grad=True)
    with tg.set_grad_enabled(False):
        y = x * 2
    assert y.requires_grad is False
    with tg.set_grad_enabled(True):
        y = x * 2
    assert y.requires_grad is True
    with tg.set_grad_enabled(False):
        tg.set_grad_enabled(True)
        y = x * 2
    assert y.requires_grad is True
    # Leaving the block restores the mode that was active on entry.
    assert tg.is_grad_enabled() is True


def test_set_grad_enabled_call_flips_global_state():
    """A bare set_grad_enabled(False) call changes the global mode immediately."""
    assert tg.is_grad_enabled() is True
    try:
        tg.set_grad_enabled(False)
        assert tg.is_grad_enabled() is False
        x = tg.ones(1, requires_grad=True)
        assert (x * 2).requires_grad is False
    finally:
        tg.set_grad_enabled(True)
    assert tg.is_grad_enabled() is True


def test_set_grad_enabled_wraps():
    """Decorating with set_grad_enabled(False) leaves global mode untouched; wrapping restores it."""
    with tg.enable_grad():

        @tg.set_grad_enabled(False)
        def inner(x):
            return x.sin()

        # The decorator line itself must not leave grad disabled.
        assert tg.is_grad_enabled() is True
        x = tg.zeros(1, requires_grad=True)
        assert inner(x).requires_grad is False
        assert tg.is_grad_enabled() is True

    with tg.enable_grad():

        def inner2(x):
            return x.sin()

        obj = tg.set_grad_enabled(False)
        # Calling set_grad_enabled flips the mode at once ...
        assert tg.is_grad_enabled() is False
        # ... and using the object as a decorator restores the previous mode.
        inner2 = obj(inner2)
        assert tg.is_grad_enabled() is True
        x = tg.zeros(1, requires_grad=True)
        assert inner2(x).requires_grad is False
        assert tg.is_grad_enabled() is True


def test_grad_mode_restored_reentrant():
    """A backward that enters enable_grad and calls autograd.grad restores the engine's grad mode."""
    observed = []

    class MyFunction(tg.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, go):
            original = tg.is_grad_enabled()
            with tg.enable_grad():
                foo = tg.rand(go.size(), requires_grad=True)
                (grad,) = tg.autograd.grad(foo**3, foo, grad_outputs=go)
                observed.append(tg.is_grad_enabled())
            observed.append(tg.is_grad_enabled() == original)
            observed.append(original)
            return grad

    inp = tg.rand(3, requires_grad=True)
    MyFunction.apply(inp).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        MyFunction.apply(inp).sum().backward(create_graph=True)
    # Backward runs under no_grad unless create_graph=True.
    assert observed == [True, True, False, True, True, True]


def test_grad_mode_namespace_aliases():
    """The grad-mode classes are reachable under torch.autograd and torch.autograd.grad_mode."""
    assert tg.autograd.grad_mode.no_grad is tg.no_grad
    assert tg.autograd.no_grad is tg.no_grad
    assert tg.autograd.enable_grad is tg.enable_grad
    assert tg.autograd.set_grad_enabled is tg.set_grad_enabled
    assert tg.autograd.inference_mode is tg.inference_mode
    with tg.autograd.grad_mode.no_grad():
        assert tg.is_grad_enabled() is False
    assert tg.is_grad_enabled() is True


def test_inference_mode_context_and_decorator():
    """inference_mode disables grad and marks new tensors as inference; inference_mode(False) undoes it."""
    x = tg.ones(2, requires_grad=True)
    assert tg.is_inference_mode_enabled() is False
    with tg.inference_mode():
        assert tg.is_inference_mode_enabled() is True
        assert tg.is_grad_enabled() is False
        y = x * 2
        assert y.requires_grad is False
        assert y.is_inference() is True
        assert x.is_inference() is False
        with tg.inference_mode(False):
            assert tg.is_inference_mode_enabled() is False
            assert tg.is_grad_enabled() is True
            z = x * 2
            assert z.requires_grad is True
            assert z.is_inference() is False
    assert tg.is_inference_mode_enabled() is False
    assert tg.is_grad_enabled() is True

    @tg.inference_mode()
    def with_paren():
        return tg.is_inference_mode_enabled()

    @tg.inference_mode
    def without_paren():
        return tg.is_inference_mode_enabled()

    @tg.inference_mode(mode=False)
    def disabled():
        return tg.is_inference_mode_enabled()

    assert with_paren() is True
    assert without_paren() is True
    with tg.inference_mode():
        assert disabled() is False
    assert tg.is_inference_mode_enabled() is False


def test_inference_mode_generator():
    """A generator decorated with inference_mode runs under it; the caller's mode is restored."""

    @tg.inference_mode()
    def gen():
        for i in range(2):
            assert tg.is_inference_mode_enabled() is True
            yield i

    for _ in gen():
        assert tg.is_inference_mode_enabled() is False
        assert tg.is_grad_enabled() is True


def test_inference_mode_tensor_errors():
    """Inference tensors cannot be saved for backward nor updated in place outside inference mode."""
    x = tg.ones(2, requires_grad=True)
    with tg.inference_mode():
        y = tg.ones(2)
    # A clone is a normal tensor and can take part in autograd.
    c = y.clone()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * y
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        y.add_(1)
    assert c.is_inference() is False
    (x * c).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_no_grad_is_not_inference_mode():
    """no_grad disables grad without enabling inference mode; its outputs are normal tensors."""
    with tg.no_grad():
        assert tg.is_inference_mode_enabled() is False
        t = tg.ones(2) * 2
    assert t.is_inference() is False
