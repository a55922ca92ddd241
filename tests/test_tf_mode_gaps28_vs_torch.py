"""What a recording ``TorchFunctionMode`` sees, as torch's: the ``types`` each handler gets (``self``'s class for
the C++ methods that take nothing else and for properties, a plain Tensor for torch's Python functions, none for
the parsed ones), the names of ``func`` (``TensorBase.add``, ``_VariableFunctionsClass.add`` of torch...), and
the calls of ``nn.utils.clip_grad_norm_``/``clip_grad_value_`` and of the ``nn.init`` functions."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch
from _tf_mode_lib import recorded


def _recorded(lib, program, *, names: bool = False) -> list:
    """Each call a mode sees while ``program(lib)()`` runs: torch's name for it and the names of the classes in
    ``types`` (with ``names``: ``func``'s ``__name__``, ``__qualname__`` and ``__module__`` too)."""
    def describe(lib, func, types, args, kwargs) -> tuple:
        entry = (lib.overrides.resolve_name(func), tuple(kind.__name__ for kind in types))
        if names:
            entry += (func.__name__, func.__qualname__, getattr(func, "__module__", None))
        return entry

    return recorded(lib, program, describe)


def _tensor_calls(lib):
    class Sub(lib.Tensor):
        pass

    x = lib.randn(2, 2, requires_grad=True)
    p = lib.nn.Parameter(lib.randn(2, 2))
    s = lib.randn(2, 2).as_subclass(Sub)

    def run():
        x.add(1), x * x, 1 + x, x.sin(), x.numel(), x.dim(), x.sum(), x[0], x.size(), len(x), -x, abs(x)
        x.dtype, x.grad, x.shape, x.T, x.is_cpu, x.device
        p.add(1), p.sin(), p.dtype, p * x, p.sum(), p.detach()
        s.add(1), s.sin(), s.dtype, x + s, s.numel()
        x.grad = None
        p.grad = None
    return run


def _operators(lib):
    x = lib.randn(2, 2)
    p = lib.nn.Parameter(lib.randn(2, 2))

    def run():
        x ** 2, 2 ** x, 1 - x, 1 - p, x // 2, 2 / x, 3 % x, x @ x, ~(x > 0), bool(x[0, 0]), float(x[0, 0])
        format(x[0, 0], ".2f")
    return run


def _python_functions(lib):
    x = lib.randn(2, 2)
    p = lib.nn.Parameter(lib.randn(2, 2))
    F = lib.nn.functional

    def run():
        F.relu(x), F.relu(p), F.mse_loss(x, p), F.mse_loss(p, p), F.linear(x, x), F.softmax(x, 0)
        lib.broadcast_tensors(x, p), lib.norm(x), lib.split(x, 1), lib.einsum("ij->", p)
        x.norm(), p.norm(), x.split(1), x.unflatten(0, (1, 2)), lib.sin(x), lib.add(x, p), lib.stack([x, p])
    return run


def _subclass_calls(lib):
    class Sub(lib.Tensor):
        pass

    x = lib.randn(2, 2)
    s = x.as_subclass(Sub)
    F = lib.nn.functional

    def run():
        F.relu(s), F.mse_loss(s, x), s.sin(), s.norm()
        with lib._C.DisableTorchFunctionSubclass():
            x.sin(), s.sin(), s.add(1), s.dtype, F.relu(s), F.relu(x), 1 - s, 1 - x, s.norm()
    return run


def _linear_forward(lib):
    model = lib.nn.Linear(3, 2)
    x = lib.randn(4, 3)
    return lambda: model(x).sum().backward()


TYPED_PROGRAMS = {"tensor_calls": _tensor_calls, "operators": _operators, "python_functions": _python_functions,
                  "subclass": _subclass_calls, "linear": _linear_forward}


@pytest.mark.parametrize("name", TYPED_PROGRAMS)
def test_handlers_get_torchs_types(name):
    program = TYPED_PROGRAMS[name]
    assert _recorded(tg, program) == _recorded(torch, program)


def _named_calls(lib):
    x = lib.randn(2, 2)
    F = lib.nn.functional

    def run():
        x.add(1), x * x, x.sin(), x[0], len(x), x ** 2, 2 / x, 1 - x, x.norm()
        lib.add(x, 1), lib.sin(x), lib.stack([x, x]), lib.norm(x), lib.linalg.vector_norm(x)
        F.relu(x), F.linear(x, x), F.gelu(x), F.conv1d(x[None], x[:, :, None])
    return run


def test_handlers_get_torchs_function_names():
    """``func.__name__``/``__qualname__``/``__module__`` as torch's C++ methods (``TensorBase.add``, no module), Python
    methods (``Tensor.__len__`` of torch._tensor), builtins (``_VariableFunctionsClass.add`` of torch,
    ``linalg_vector_norm`` of torch._C._linalg, ``linear`` of torch._C._nn) and Python functions."""
    assert _recorded(tg, _named_calls, names=True) == _recorded(torch, _named_calls, names=True)


def _clipped(which: str, **options):
    """A model's gradients clipped (two dtypes: two groups); the gradients after it, and its result, kept in
    ``run.values``."""
    def program(lib):
        rng = np.random.default_rng(0)
        lin = lib.nn.Linear(3, 2)
        extra = lib.nn.Parameter(lib.zeros(3, dtype=lib.float64))
        params = [*lin.parameters(), extra]
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype)
        clip = {"norm": lambda: lib.nn.utils.clip_grad_norm_(params, 0.5, **options),
                "value": lambda: lib.nn.utils.clip_grad_value_(params, 0.1, **options),
                "total": lambda: lib.nn.utils.get_total_norm([p.grad for p in params], **options),
                "with_norm": lambda: lib.nn.utils.clip_grads_with_norm_(params, 0.5, lib.tensor(3.0), **options),
                }[which]

        def run():
            result = clip()
            run.values = [p.grad.numpy().copy() for p in params] + ([] if result is None else [result.numpy()])
        return run
    return program


CLIPS = {
    "norm": _clipped("norm"), "norm_foreach": _clipped("norm", foreach=True),
    "norm_loop": _clipped("norm", foreach=False), "norm_inf": _clipped("norm", norm_type=float("inf")),
    "value": _clipped("value"), "value_loop": _clipped("value", foreach=False),
    "total": _clipped("total", norm_type=1.0), "with_norm_loop": _clipped("with_norm", foreach=False),
}


@pytest.mark.parametrize("name", CLIPS)
def test_clipping_shows_torchs_calls(name):
    """clip_grad_norm_ (29 calls in torch, tracegrad showed 9), clip_grad_value_ (10 against 4), get_total_norm
    and clip_grads_with_norm_: the no_grad switches, ``.grad`` reads, grouping's no_grad, foreach or per-tensor
    norms and updates; the gradients and norm as torch's."""
    values = {}

    def keeping(lib):
        run = CLIPS[name](lib)
        values[lib] = run
        return run
    assert _recorded(tg, keeping) == _recorded(torch, keeping)
    for ours, theirs in zip(values[tg].values, values[torch].values, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_nonfinite_norm_refused_as_torch():
    def program(lib):
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.tensor([1.0, float("inf")])

        def run():
            try:
                lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
            except RuntimeError as error:
                run.values = [str(error)]
        return run
    values = {}

    def keeping(lib):
        values[lib] = program(lib)
        return values[lib]
    assert _recorded(tg, keeping) == _recorded(torch, keeping)
    assert values[tg].values == values[torch].values


def _initialised(name: str, shape: tuple = (3, 4, 2), **options):
    """``nn.init.<name>`` of a fresh tensor; its values after it kept in ``run.values``."""
    def program(lib):
        w = lib.empty(*shape)

        def run():
            getattr(lib.nn.init, name)(w, **options)
            run.values = [w.numpy().copy()]
        return run
    return program


INITS = {
    "eye_": _initialised("eye_", (3, 4)), "xavier_uniform_": _initialised("xavier_uniform_"),
    "xavier_normal_": _initialised("xavier_normal_", gain=0.5), "kaiming_normal_": _initialised("kaiming_normal_"),
    "kaiming_normal_fan_out": _initialised("kaiming_normal_", (3, 4), mode="fan_out", nonlinearity="relu"),
}


@pytest.mark.parametrize("name", INITS)
def test_init_bodies_show_torchs_calls(name):
    """eye_ (torch: 6 calls, tracegrad showed 1), xavier_uniform_/xavier_normal_ (7), kaiming_normal_ (8): the fan
    reads (dim, size, size, dim), the no_grad switches and the one Tensor method or torch.eye; the same values."""
    values = {}

    def keeping(lib):
        values[lib] = INITS[name](lib)
        return values[lib]
    assert _recorded(tg, keeping) == _recorded(torch, keeping)
    np.testing.assert_array_equal(values[tg].values[0], values[torch].values[0])
