"""Everyday autograd, nn and optim calls, right and wrong: the same result, error and warnings as torch."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
from _lib import tg, torch, warning_texts


def _leaf(lib, n: int = 2):
    return lib.ones(n, requires_grad=True)


def backward_twice(lib):
    y = (_leaf(lib) * _leaf(lib)).sum()
    y.backward()
    y.backward()


def backward_twice_retained(lib):
    x = _leaf(lib)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return x.grad


def gradients_accumulate(lib):
    x = _leaf(lib)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return x.grad


def hook_returns_wrong_shape(lib):
    x = _leaf(lib)
    x.register_hook(lambda g: lib.ones(3))
    (x * 2).sum().backward()


def unused_input(lib):
    a, b = _leaf(lib), _leaf(lib)
    return lib.autograd.grad((a * 2).sum(), [a, b])


def in_place_on_a_no_grad_view(lib):
    base = _leaf(lib, 4).reshape(2, 2) * 1
    with lib.no_grad():
        view = base[0]
    view.mul_(2)


def zero_grad_sets_none(lib):
    model = lib.nn.Linear(2, 1)
    model(lib.ones(1, 2)).sum().backward()
    model.zero_grad()
    return model.weight.grad


def set_grad(value):
    def program(lib):
        x = _leaf(lib)
        x.grad = value(lib)
        return x.grad

    return program


def _retained_after_failed_backward(lib):
    """The roots are checked before the inputs are told to retain their gradient."""
    x = _leaf(lib)
    y = x * 2
    with contextlib.suppress(RuntimeError):
        (lib.ones(2) * 2).sum().backward(inputs=[y])
    return y.retains_grad


def reduction_overloads(lib):
    """``sum()`` is the full reduction (SumBackward0); ``sum(dim=None)`` given is the dim overload (SumBackward1)."""
    x = _leaf(lib, 4).reshape(2, 2)
    return [t.grad_fn.name() for t in (x.sum(), x.sum(dim=None), x.sum(None), lib.sum(x, dim=None), x.mean(),
                                        x.mean(dim=None), x.sum(None, True), x.sum(dim=()))]


def sequence_numbers_after_backward(lib):
    """One root: no root node is made, so no sequence number is used; several roots: one root node."""
    x = _leaf(lib)
    (x * 2).sum().backward()
    after_one = x * 3
    lib.autograd.backward([(x * 4).sum(), (x * 5).sum()])
    after_two = x * 6
    lib.autograd.grad((x * 7).sum(), x)
    after_grad = x * 8
    return [t.grad_fn._sequence_nr() - after_one.grad_fn._sequence_nr() for t in (after_two, after_grad)]


def _not_requiring_grad(lib):
    return lib.ones(2) * 2


def _type_info(info) -> tuple:
    return repr(info), tuple((k, getattr(info, k)) for k in ("bits", "eps", "max", "min", "tiny", "smallest_normal",
                                                             "resolution", "dtype") if hasattr(info, k))


def _std_mean_of_a_vector(lib):
    x = lib.tensor([1.0, 2.0, 4.0], requires_grad=True)
    std, mean = lib.std_mean(x)
    (std * 2 + mean).backward()
    return repr(std), repr(mean), x.grad


def _log_softmax_of_a_scalar(lib):
    x = lib.tensor(1.5, requires_grad=True)
    lib.log_softmax(x, -1).backward()
    return x.grad


PROGRAMS = {
    "std_mean of a vector (0-d results)": _std_mean_of_a_vector,
    "log_softmax of a 0-d tensor, backward": _log_softmax_of_a_scalar,
    "softmax of int64 over the last dim": lambda L: L.softmax(L.ones(2, 3, dtype=L.long), -1),
    "log_softmax of int64 over another dim": lambda L: L.log_softmax(L.ones(2, 3, dtype=L.long), 0),
    "mean of a 0-d tensor over dim 1": lambda L: L.tensor(2.0).mean(1),
    "amin of a 0-d tensor over dim 1": lambda L: L.tensor(2.0).amin(1),
    "any of a 0-d tensor over dim 1": lambda L: L.tensor(2.0).any(1),
    "prod of a 0-d tensor over dim 1": lambda L: L.tensor(2).prod(1),
    "topk of bool with a bad dim": lambda L: L.ones(1, 3, dtype=L.bool).topk(1, 3),
    "kthvalue of bool with a bad dim": lambda L: L.ones((), dtype=L.bool).kthvalue(1, 1),
    "cummax of a 0-d tensor over dim 1": lambda L: L.cummax(L.tensor(True), 1),
    "argmax of an empty tensor": lambda L: L.ones(0, 2).argmax(),
    "aminmax over an empty dim": lambda L: L.aminmax(L.ones(0, 2), dim=0),
    "logcumsumexp of int64 with a bad dim": lambda L: L.logcumsumexp(L.ones(2, 2, dtype=L.long), 3),
    "std_mean of int64": lambda L: L.std_mean(L.ones(3, dtype=L.long)),
    "var_mean of bool": lambda L: L.var_mean(L.ones(3, dtype=L.bool)),
    "finfo default": lambda L: _type_info(L.finfo()),
    "finfo float16": lambda L: _type_info(L.finfo(L.float16)),
    "finfo float64": lambda L: _type_info(L.finfo(L.float64)),
    "finfo complex64": lambda L: _type_info(L.finfo(L.complex64)),
    "iinfo int64": lambda L: _type_info(L.iinfo(L.int64)),
    "iinfo uint8": lambda L: _type_info(L.iinfo(L.uint8)),
    "finfo of an integer dtype": lambda L: L.finfo(L.int32),
    "iinfo of a float dtype": lambda L: L.iinfo(L.float32),
    "backward(inputs=) of a root without grad": lambda L: (L.ones(2) * 2).sum().backward(inputs=[_leaf(L)]),
    "backward(inputs=) of a tensor without grad": lambda L: (_leaf(L) * 2).sum().backward(inputs=[L.ones(2)]),
    "grad of a root without grad, for a tensor without grad": lambda L: L.autograd.grad(
        _not_requiring_grad(L).sum(), [L.ones(2)]),
    "backward(inputs=) leaves no retained grad on error": lambda L: _retained_after_failed_backward(L),
    "sum and mean overloads": reduction_overloads,
    "sum(keepdim=True) without dim": lambda L: _leaf(L).sum(keepdim=True),
    "sequence numbers after backward": sequence_numbers_after_backward,
    "backward twice": backward_twice,
    "backward twice, retained": backward_twice_retained,
    "gradients accumulate": gradients_accumulate,
    "hook returns a wrong shape": hook_returns_wrong_shape,
    "grad of a non-scalar": lambda L: L.autograd.grad(_leaf(L) * 2, _leaf(L)),
    "unused input": unused_input,
    "input without grad": lambda L: L.autograd.grad(_leaf(L).sum(), L.ones(2)),
    "backward without grad": lambda L: L.ones(2).sum().backward(),
    "requires_grad_(False) on a non-leaf": lambda L: (_leaf(L) * 2).requires_grad_(False),
    "requires_grad_ on int": lambda L: L.ones(2, dtype=L.long).requires_grad_(),
    "requires_grad=True on int": lambda L: L.ones(2, dtype=L.long, requires_grad=True),
    "requires_grad attribute on int": lambda L: setattr(L.ones(2, dtype=L.long), "requires_grad", True),
    ".grad of a non-leaf": lambda L: (_leaf(L) * 2).grad,
    "in place on a leaf": lambda L: _leaf(L).add_(1),
    "numpy() of a tensor that requires grad": lambda L: _leaf(L).numpy(),
    "item() of two elements": lambda L: L.ones(2).item(),
    "detach_ of a view": lambda L: ((_leaf(L) * 1)[0]).detach_(),
    "in place on an unbind output": lambda L: (_leaf(L, 4).reshape(2, 2) * 1).unbind(0)[0].mul_(2),
    "in place on a view made in no_grad": in_place_on_a_no_grad_view,
    "grad of another size": set_grad(lambda L: L.ones(3)),
    "grad of another dtype": set_grad(lambda L: L.ones(2, dtype=L.float64)),
    "grad of int dtype": set_grad(lambda L: L.ones(2, dtype=L.long)),
    "grad not a tensor": set_grad(lambda L: [1.0]),
    "retain_grad on a leaf": lambda L: (lambda x: (x.retain_grad(), x.retains_grad))(_leaf(L)),
    "tensor of tensors": lambda L: L.tensor([L.tensor(1.0), L.tensor(2.0)]),
    "tensor(tensor) warns": lambda L: L.tensor(L.ones(2)),
    "zero_grad": zero_grad_sets_none,
    "cross_entropy batch mismatch": lambda L: L.nn.functional.cross_entropy(L.ones(3, 4), L.tensor([0, 1])),
    "mse_loss broadcast warning": lambda L: L.nn.functional.mse_loss(L.ones(3, 1), L.ones(3)),
    "Linear input size": lambda L: L.nn.Linear(3, 2)(L.ones(4, 5)),
    "Conv2d channels": lambda L: L.nn.Conv2d(3, 2, 3)(L.ones(1, 4, 5, 5)),
    "optimizer without parameters": lambda L: L.optim.SGD([], lr=0.1),
    "state dict missing a key": lambda L: L.nn.Linear(2, 2).load_state_dict({"weight": L.ones(2, 2)}),
    "state dict wrong shape": lambda L: L.nn.Linear(2, 2).load_state_dict({"weight": L.ones(3, 2), "bias": L.ones(2)}),
    "module repr": lambda L: L.nn.Sequential(L.nn.Linear(2, 3), L.nn.ReLU(), L.nn.Dropout(0.5), L.nn.BatchNorm1d(3)),
    "parameter repr": lambda L: L.nn.Parameter(L.ones(2)),
    "SGD repr": lambda L: L.optim.SGD([_leaf(L)], lr=0.1),
    "Adam repr": lambda L: L.optim.Adam([_leaf(L)]),
}


def _outcome(program, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", repr(program(lib)))
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            result = (type(exc).__name__, str(exc))
    # (torch appends where in its C++ a warning was raised: not part of what the user is told)
    return result, warning_texts(caught)


@pytest.mark.parametrize("name", PROGRAMS)
def test_same_outcome_as_torch(name):
    assert _outcome(PROGRAMS[name], tg) == _outcome(PROGRAMS[name], torch)


def test_float_of_a_tensor_that_requires_grad_warns_once():
    """float() (not item() or int()) of a tensor that requires grad warns, once per process, as torch 2.13."""

    def messages(lib):
        always = lib.is_warn_always_enabled()
        lib.set_warn_always(True)  # (compare as if this were the process's first conversion)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                x = lib.ones((), requires_grad=True)
                float(x), float(x * 2), x.item(), int(x), float(lib.ones(()))
        finally:
            lib.set_warn_always(always)
        return warning_texts(caught)

    assert messages(tg) == messages(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_values_are_torchs_to_the_bit(dtype):
    rng = np.random.default_rng(0)
    cases = [(-1, 1, 10), (-3.7, 11.3, 101), (1e-3, 5, 1000), (5, -5, 11), (3, 3, 5), (0, 1, 2)] + [
        (float(rng.uniform(-10, 10)), float(rng.uniform(-10, 10)), int(rng.integers(2, 3000))) for _ in range(20)]
    for start, end, steps in cases:
        ours = tg.linspace(start, end, steps, dtype=getattr(tg, dtype)).numpy()
        theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
        np.testing.assert_array_equal(ours, theirs)


def test_floating_point_events_are_silent_as_in_torch():
    """1 / 0, log(0), sqrt(-1) give inf and NaN without a warning in torch; NumPy would warn from inside tracegrad.
    Checked in a fresh interpreter with the default warning filters (a test runner's own filters would show what a
    user does not see); the user's own NumPy calls still warn."""
    import subprocess
    import sys

    program = ("import {lib} as L\nx = L.tensor([1.0, 0.0, -1.0])\nx / 0; x.log(); L.sqrt(x); x.pow(-1); "
               "(x * 0).acos(); L.tensor([1e308], dtype=L.float64) * 10\n")
    for lib in ("tracegrad", "torch"):
        result = subprocess.run([sys.executable, "-c", program.format(lib=lib)], capture_output=True, text=True,
                                check=True)
        assert "Warning" not in result.stderr, (lib, result.stderr)
    own = subprocess.run([sys.executable, "-c", "import tracegrad, numpy\nnumpy.log(numpy.zeros(1))"],
                         capture_output=True, text=True, check=True)
    assert "RuntimeWarning: divide by zero" in own.stderr
