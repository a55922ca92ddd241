"""Review of the twenty-first stop's NumPy-warnings and CopySlices work, against torch.

Hiding NumPy's floating-point warnings from tracegrad's own code must not hide a RuntimeWarning that is no
floating-point warning located there (the ambiguous ``kl_divergence`` warning, a user's hook warning with
``stacklevel=2``), and NumPy's ComplexWarning as tracegrad casts complex values to real is PyTorch's UserWarning
in the same words at the caller's line (hidden at HEAD)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tracegrad

LIBS = [torch, tracegrad]


def _record(fn, action="always"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter(action)
        fn()
    return caught


def _seen(caught, here=False):
    """(category, message without torch's "(Triggered internally ...)" suffix[, shown in this file])"""
    out = []
    for w in caught:
        if issubclass(w.category, DeprecationWarning):  # (torch.jit's, on first use)
            continue
        text = str(w.message).split(" (Triggered internally")[0]
        out.append((w.category.__name__, text) + ((w.filename == __file__,) if here else ()))
    return out


def _ambiguous_kl(L):
    D = L.distributions

    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    D.kl.register_kl(A, D.Normal)(lambda p, q: L.zeros(()))
    D.kl.register_kl(D.Normal, B)(lambda p, q: L.ones(()))
    D.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))


@pytest.mark.parametrize("action", ["always", "default"])
def test_ambiguous_kl_divergence_warning_is_shown(action):
    got = [_seen(_record(lambda L=L: _ambiguous_kl(L), action)) for L in LIBS]
    assert got[0] == [("RuntimeWarning", "Ambiguous kl_divergence(A, B). Please register_kl(A, B)")]
    assert got[1] == got[0]


@pytest.mark.parametrize("action", ["always", "default"])
@pytest.mark.parametrize("stacklevel", [2, 3])
def test_users_runtime_warning_located_in_the_library_is_shown(action, stacklevel):
    def program(L):
        x = L.ones(2, requires_grad=True)
        x.register_hook(lambda g: warnings.warn("mine", RuntimeWarning, stacklevel=stacklevel))
        (x * 2).sum().backward()

    got = [_seen(_record(lambda L=L: program(L), action)) for L in LIBS]
    assert got[0] == [("RuntimeWarning", "mine")]
    assert got[1] == got[0]


def test_own_floating_point_warnings_stay_hidden_and_users_show():
    def program(L):
        L.log(L.tensor([-1.0, 0.0]))
        x = L.tensor([0.0, 1.0], requires_grad=True)
        (x.log() * L.tensor([np.inf, 0.0])).sum().backward()
        np.log(np.array([-1.0]))

    got = [_seen(_record(lambda L=L: program(L)), here=True) for L in LIBS]
    assert got[0] == [("RuntimeWarning", "invalid value encountered in log", True)]
    assert got[1] == got[0]


COMPLEX_TO_REAL = {
    "copy_": lambda L, c: L.zeros(2).copy_(c),
    "setitem": lambda L, c: L.zeros(2).__setitem__(0, c[0]),
    "slice_copy_": lambda L, c: L.zeros(3)[1:].copy_(c),
    "float": lambda L, c: c.float(),
    "to_double": lambda L, c: c.to(L.float64),
    "int": lambda L, c: c.int(),
    "strided_float": lambda L, c: L.ones(4, dtype=L.complex64)[::2].float(),
    "backward": lambda L, c: c.detach().requires_grad_().float().sum().backward(),
}


@pytest.fixture
def warn_always():
    for L in LIBS:
        L.set_warn_always(True)
    yield
    for L in LIBS:
        L.set_warn_always(False)


@pytest.mark.parametrize("case", sorted(COMPLEX_TO_REAL))
def test_complex_to_real_cast_warns_torchs_user_warning(case, warn_always):
    def program(L):
        COMPLEX_TO_REAL[case](L, L.ones(2, dtype=L.complex64) * (1 + 2j))

    got = [_seen(_record(lambda L=L: program(L)), here=True) for L in LIBS]
    assert got[0] == [("UserWarning", "Casting complex values to real discards the imaginary part", True)]
    assert got[1] == got[0]


def test_complex_to_real_cast_warns_once_without_warn_always():
    from tracegrad import _warnings

    _warnings._SEEN.discard(_warnings._COMPLEX_TO_REAL)
    c = tracegrad.ones(2, dtype=tracegrad.complex64)
    caught = _record(lambda: (tracegrad.zeros(2).copy_(c), c.float(), c.float()))
    assert _seen(caught) == [("UserWarning", "Casting complex values to real discards the imaginary part")]


def test_users_own_complex_warning_is_numpys():
    caught = _record(lambda: (tracegrad.ones(2, dtype=tracegrad.complex64).float(),
                              np.array([1 + 1j]).astype(float)))
    assert any(w.category is np.exceptions.ComplexWarning and w.filename == __file__ for w in caught)


@pytest.mark.parametrize("state", ["raise", "warn", "ignore"])
def test_every_hook_of_a_node_runs_under_the_callers_numpy_state(state):
    """The hooks of one node run under the caller's NumPy error state set once for them all (it was set around
    each hook, ten times a plain hook call's cost); each still sees it, also after one that raised inside."""

    def numpy_in_hook(log, name):
        def hook(*args):
            try:
                np.log(np.array([-1.0]))
                log.append((name, "quiet"))
            except FloatingPointError:
                log.append((name, "raised"))

        return hook

    def program(L):
        log = []
        x = L.ones(2, requires_grad=True)
        for i in range(3):
            x.register_hook(numpy_in_hook(log, f"leaf{i}"))
        x.register_post_accumulate_grad_hook(numpy_in_hook(log, "post_acc"))
        y = x * 2
        y.retain_grad()
        for i in range(2):
            y.register_hook(numpy_in_hook(log, f"y{i}"))
        y.grad_fn.register_prehook(numpy_in_hook(log, "pre"))
        y.grad_fn.register_hook(numpy_in_hook(log, "post"))
        with np.errstate(all=state):
            y.sum().backward()
        return log, y.grad.tolist(), x.grad.tolist()

    got = [None, None]
    for i, L in enumerate(LIBS):
        caught = _record(lambda i=i, L=L: got.__setitem__(i, program(L)))
        got[i] = (got[i], _seen(caught, here=True))
    assert got[1] == got[0]
