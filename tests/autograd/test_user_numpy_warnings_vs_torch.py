"""A user's own NumPy code called back during backward warns as it does with torch (compared with torch).

PyTorch leaves NumPy's error state alone, so a custom ``Function.backward``, a hook or a checkpointed function
that does ``np.log(0)`` itself warns, or raises under ``simplefilter("error")``, as plain NumPy does. tracegrad
runs its backward pass with NumPy's floating-point warnings off (PyTorch computes ``inf * 0`` silently), and ran
the user's callbacks under that quiet state too: their warnings were swallowed. Callbacks now run under the error
state in force where ``backward()`` / ``autograd.grad()`` was called, while tracegrad's own arithmetic inside
them (``grad * x`` on an infinite ``x``) stays silent, as torch's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import run_both

INF = float("inf")
# Warnings filters, and "raise": ``np.errstate(divide="raise", invalid="raise", over="raise")`` around the program
ACTIONS = ("error", "always", "default", "raise")
RAISE = {"divide": "raise", "invalid": "raise", "over": "raise"}


def user_numpy() -> None:
    """The user's own NumPy arithmetic: warns "divide by zero encountered in log"."""
    np.log(np.array(0.0))


def quiet_math(lib, t):
    """The library's own arithmetic on inf and 0 (``inf * 0`` is NaN): silent in torch."""
    return t * lib.tensor([INF, 0.0]) * 0


def function_backward(lib, x):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * 2

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            user_numpy()
            return g * 2 + quiet_math(lib, t)

    return Twice.apply(x).sum()


def tensor_hook(lib, x):
    y = x * 2
    y.register_hook(lambda g: (user_numpy(), g + quiet_math(lib, g))[1])
    return y.sum()


def leaf_hook(lib, x):
    x.register_hook(lambda g: (user_numpy(), g + quiet_math(lib, g))[1])
    return (x * 2).sum()


def node_pre_hook(lib, x):
    y = x * 2
    y.grad_fn.register_prehook(lambda gs: (user_numpy(), (gs[0] + quiet_math(lib, gs[0]),))[1])
    return y.sum()


def node_post_hook(lib, x):
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (user_numpy(), (gi[0] + quiet_math(lib, gi[0]),))[1])
    return y.sum()


def post_accumulate_grad_hook(lib, x):
    x.register_post_accumulate_grad_hook(lambda p: (user_numpy(), quiet_math(lib, p.grad), None)[2])
    return (x * 2).sum()


def saved_tensors_hooks(lib, x):
    def unpack(t):
        user_numpy()
        return t + quiet_math(lib, t) * 0

    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        return (x * x).sum()


def module_full_backward_hook(lib, x):
    layer = lib.nn.Linear(2, 2)
    with lib.no_grad():
        layer.weight.copy_(lib.eye(2))
        layer.bias.zero_()
    layer.register_full_backward_hook(lambda m, gi, go: (user_numpy(), (gi[0] + quiet_math(lib, gi[0]),))[1])
    return layer(x[None]).sum()


def module_full_backward_pre_hook(lib, x):
    layer = lib.nn.Linear(2, 2)
    with lib.no_grad():
        layer.weight.copy_(lib.eye(2))
        layer.bias.zero_()
    layer.register_full_backward_pre_hook(lambda m, go: (user_numpy(), (go[0] + quiet_math(lib, go[0]),))[1])
    return layer(x[None]).sum()


def _checkpointed(lib, x, reentrant: bool):
    from importlib import import_module

    checkpoint = import_module(f"{lib.__name__}.utils.checkpoint").checkpoint

    def body(t):
        if lib.is_grad_enabled():  # (the re-forward during backward; the first forward runs under no_grad too)
            user_numpy()
        return (t * t + quiet_math(lib, t)).sum()

    return checkpoint(body, x, use_reentrant=reentrant)


def checkpoint_reentrant(lib, x):
    return _checkpointed(lib, x, True)


def checkpoint_non_reentrant(lib, x):
    return _checkpointed(lib, x, False)


CALLBACKS = {
    f.__name__: f
    for f in (
        function_backward,
        tensor_hook,
        leaf_hook,
        node_pre_hook,
        node_post_hook,
        post_accumulate_grad_hook,
        saved_tensors_hooks,
        module_full_backward_hook,
        module_full_backward_pre_hook,
        checkpoint_reentrant,
        checkpoint_non_reentrant,
    )
}


def outcome(lib, kind: str, action: str, how: str):
    """What the user sees: the warnings shown (category, text), the error raised, the gradient."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    return outcome_of(lib, action, lambda: CALLBACKS[kind](lib, x), x, how)


def outcome_of(lib, action: str, forward, x, how: str = "backward"):
    """The warnings shown (category, text), the error raised and ``x``'s gradient of ``forward()``'s result."""
    with warnings.catch_warnings(record=True) as log, np.errstate(**(RAISE if action == "raise" else {})):
        warnings.simplefilter("always" if action == "raise" else action)
        try:
            loss = forward()
            if how == "grad":
                grad = lib.autograd.grad(loss, x)[0]
            else:
                loss.backward()
                grad = x.grad
            error = None
        except Exception as exc:  # noqa: BLE001 - the error is part of what is compared
            grad, error = None, (type(exc).__name__, str(exc))
    shown = [(w.category.__name__, str(w.message)) for w in log]
    return shown, error, None if grad is None else grad.detach().numpy()


# (``autograd.grad`` accumulates into no leaf: no post-accumulate-grad hook runs)
CASES = [
    (kind, how)
    for kind in CALLBACKS
    for how in ("backward", "grad")
    if (kind, how) != ("post_accumulate_grad_hook", "grad")
]


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize(("kind", "how"), CASES)
def test_users_numpy_in_callbacks_warns_as_with_torch(kind, how, action):
    (ours, our_error, our_grad), (theirs, their_error, their_grad) = run_both(outcome, kind, action, how)
    assert our_error == their_error
    assert ours == theirs
    assert theirs or their_error, "the program's own NumPy warning is shown or raised in torch"
    if their_grad is not None:
        np.testing.assert_allclose(our_grad, their_grad, equal_nan=True)


@pytest.mark.parametrize("action", ACTIONS[:3])
def test_callbacks_keep_the_callers_own_error_state(action):
    """``np.errstate`` around ``backward()``: the user's callbacks see it, as with torch (here: nothing shown)."""

    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        loss = tensor_hook(lib, x)
        with warnings.catch_warnings(record=True) as log, np.errstate(divide="ignore"):
            warnings.simplefilter(action)
            loss.backward()
        return [str(w.message) for w in log], x.grad.numpy()

    (ours, our_grad), (theirs, their_grad) = run_both(program)
    assert ours == theirs == []
    np.testing.assert_allclose(our_grad, their_grad, equal_nan=True)


@pytest.mark.parametrize("action", ACTIONS)
def test_the_librarys_own_function_stays_silent_under_the_callers_state(action):
    """``CrossMapLRN2d`` (torch.nn._functions), a Function of the library's own arithmetic, computes inf and NaN
    silently in both passes, as torch's, though its backward runs as a callback under the caller's state."""

    def program(lib):
        from importlib import import_module

        lrn = import_module(f"{lib.__name__}.nn.modules._functions").CrossMapLRN2d
        x = lib.tensor([[[[INF]], [[1e30]], [[0.0]]]], requires_grad=True)
        return outcome_of(lib, action, lambda: lrn.apply(x, 3).sum(), x)

    ours, theirs = run_both(program)
    assert ours[:2] == theirs[:2] == ([], None)
    np.testing.assert_allclose(ours[2], theirs[2], equal_nan=True)
