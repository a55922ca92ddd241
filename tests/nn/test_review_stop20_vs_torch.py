"""Behaviours reviewers of this stop's changes found (each the same program on tracegrad and torch).

- The overwritten part of ``copy_`` (and so of ``x[i] = v``) gets a zero gradient, not ``g * 0``: an inf or NaN
  incoming gradient gives 0 there, and under ``create_graph`` no node is recorded for it (PyTorch's CopyBackwards).
- ``LBFGS.step(None)`` fails as torch's does, calling the missing closure.
- ``div_(rounding_mode=None)`` of an integer or bool tensor names true division's float result in its cast error.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch


def _setitem_gradients(lib):
    a = lib.ones(3, requires_grad=True)
    b = a * 1
    t = lib.zeros(2, requires_grad=True)
    b[0:2] = t
    b.backward(lib.tensor([float("inf"), float("nan"), 1.0]))
    return repr(a.grad.tolist()), repr(t.grad.tolist())


def _copy_double_backward(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 1
    y.copy_(lib.ones(2))
    (r,) = lib.autograd.grad(y, x, lib.ones(2, requires_grad=True), create_graph=True)
    return r.tolist(), r.requires_grad, r.grad_fn is None


def _lbfgs_without_closure(lib):
    p = lib.nn.Parameter(lib.ones(2))
    with pytest.raises(TypeError) as info:
        lib.optim.LBFGS([p]).step(None)
    return str(info.value)


def _bool_true_division_in_place(lib):
    errors = []
    for divisor in (lib.tensor([2, 3]), 2, lib.tensor([2, 3], dtype=lib.uint8)):
        with pytest.raises(RuntimeError) as info:
            lib.tensor([True, False]).div_(divisor, rounding_mode=None)
        errors.append(str(info.value))
    return errors


@pytest.mark.parametrize("program", [_setitem_gradients, _copy_double_backward, _lbfgs_without_closure,
                                     _bool_true_division_in_place], ids=lambda p: p.__name__.lstrip("_"))
def test_as_in_torch(program):
    assert program(tg) == program(torch)


_TENSOR_OPTIONS = {
    "Adam eps": ("Adam", {"eps": 1e-5}), "AdamW weight_decay": ("AdamW", {"weight_decay": 0.1}),
    "Adadelta eps": ("Adadelta", {"eps": 1e-5}), "Adamax eps": ("Adamax", {"eps": 1e-5}),
    "Adamax betas": ("Adamax", {"betas": (0.8, 0.9)}), "NAdam betas": ("NAdam", {"betas": (0.8, 0.9)}),
    "NAdam momentum_decay": ("NAdam", {"momentum_decay": 0.005}),
    "NAdam decoupled weight_decay": ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    "RAdam betas": ("RAdam", {"betas": (0.8, 0.9)}),
    "RAdam decoupled weight_decay": ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    "RMSprop momentum": ("RMSprop", {"momentum": 0.5}), "RMSprop eps": ("RMSprop", {"eps": 1e-5}),
    "Adagrad eps": ("Adagrad", {"eps": 1e-5}), "Adagrad lr_decay": ("Adagrad", {"lr_decay": 0.1}),
    "ASGD lambd": ("ASGD", {"lambd": 1e-3}), "LBFGS lr": ("LBFGS", {"lr": 0.5}),
    "SGD momentum": ("SGD", {"lr": 0.1, "momentum": 0.9}), "Adafactor weight_decay": ("Adafactor", {"weight_decay": 0.1}),
}


@pytest.mark.parametrize("name", list(_TENSOR_OPTIONS))
def test_tensor_options_step_as_in_torch(name):
    """An optimizer option given as a tensor (eps, betas, weight_decay...) steps as torch's: the updates' NumPy
    arithmetic reads it as its array (with the tensor's __array_priority__, NumPy would hand it the operator)."""
    optimizer, options = _TENSOR_OPTIONS[name]
    results = []
    for lib in (torch, tg):
        def as_tensor(value, lib=lib):
            return tuple(lib.tensor(v) for v in value) if isinstance(value, tuple) else lib.tensor(value)

        p = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5]))
        opt = getattr(lib.optim, optimizer)([p], **{k: as_tensor(v) if not isinstance(v, bool) else v
                                                   for k, v in options.items()})

        def closure(opt=opt, p=p):
            opt.zero_grad()
            loss = (p * p * p).sum()
            loss.backward()
            return loss

        for _ in range(3):
            opt.step(closure)
        results.append(p.detach().tolist())
    assert results[1] == pytest.approx(results[0], rel=1e-6)


def _reviewed_outcomes(lib):
    import numpy as np

    programs = [lambda: lib.linspace(0, 10, 1, dtype=lib.bool), lambda: lib.logspace(0, 2, 1, dtype=lib.bool),
                lambda: lib.tensor(np.complex128(1 + 2j), dtype=lib.float32),
                lambda: lib.tensor([1, np.complex128(2j)], dtype=lib.float64),
                lambda: lib.zeros(2, dtype=lib.complex64).normal_(1 + 1j, 1),
                lambda: lib.normal(lib.zeros(2, dtype=lib.complex64, requires_grad=True), 1.0),
                lambda: lib.arange(-10, 1, float("inf"), dtype=lib.int64)]
    outcomes = []
    for program in programs:
        try:
            with _no_warning_check():
                value = program()
            outcomes.append((str(value.dtype).replace("tracegrad", "torch"), repr(value.tolist())))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            outcomes.append((type(exc).__name__, str(exc)))
    return outcomes


def _no_warning_check():
    import contextlib
    import warnings

    @contextlib.contextmanager
    def quiet():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (NumPy's ComplexWarning where a complex is read for its real part)
            yield

    return quiet()


def test_factories_and_samplers_as_in_torch():
    assert _reviewed_outcomes(tg) == _reviewed_outcomes(torch)


def _rprop_with_nan_gradients(lib):
    results = []
    for foreach in (False, True):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        opt = lib.optim.Rprop([p], foreach=foreach)
        for grad in ([float("nan"), 1.0], [1.0, 1.0], [float("nan"), -1.0]):
            p.grad = lib.tensor(grad)
            opt.step()
            results.append(repr(p.tolist()))
    return results


def _outcomes(lib, programs):
    outcomes = []
    for program in programs:
        try:
            value = program()
            outcomes.append(("ok", str(value.dtype).replace("tracegrad", "torch"), tuple(value.shape)))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            outcomes.append((type(exc).__name__, str(exc)))
    return outcomes


def _complex_inits_and_dual_refusals(lib):
    fw = lib.autograd.forward_ad

    def make_dual_of(view: bool):
        with fw.dual_level():
            dual = fw.make_dual(lib.ones(3), lib.ones(3))
            return fw.make_dual(dual[:2] if view else dual, lib.ones(2 if view else 3))

    return _outcomes(lib, [lambda: lib.nn.init.trunc_normal_(lib.empty(3, dtype=lib.complex64)),
                           lambda: lib.nn.init.trunc_normal_(lib.empty(3, dtype=lib.complex64), a=-0.1, b=0.1),
                           lambda: lib.nn.init.orthogonal_(lib.empty(3, 3, dtype=lib.complex64)),
                           lambda: make_dual_of(view=False), lambda: make_dual_of(view=True)])


@pytest.mark.parametrize("program", [_rprop_with_nan_gradients, _complex_inits_and_dual_refusals],
                         ids=lambda p: p.__name__.lstrip("_"))
def test_more_as_in_torch(program):
    """Rprop keeps an element whose gradient is NaN (torch's sign of NaN is 0); complex tensors refused by
    trunc_normal_ and orthogonal_ in torch's words; make_dual of a tensor that already has a tangent refused."""
    assert program(tg) == program(torch)
