"""The torch namespaces model code from libraries calls in eager mode (torch.jit, torch.compiler, torch.func,
torch.distributed) against torch: the answers outside a script or compilation, decorated functions and modules
still running as written, and the errors with their messages. What needs TorchScript or a process group is
refused by tracegrad with NotImplementedError (checked apart, as torch does it)."""

from __future__ import annotations

import typing
import warnings

import numpy as np
import pytest
from _lib import raised, run_both, tg, torch

# ---- torch.jit -------------------------------------------------------------------------------------------------


def test_jit_queries_are_false_outside_a_script():
    assert run_both(lambda L: (L.jit.is_scripting(), L.jit.is_tracing())) == ((False, False), (False, False))


def test_jit_final_annotate_and_attribute_are_torchs():
    assert tg.jit.Final is torch.jit.Final is typing.Final
    box = {}
    assert tg.jit.annotate(dict[str, int], box) is box
    ours, theirs = run_both(lambda L: L.jit.Attribute(0.1, float))
    assert (ours, type(ours).__name__, ours._fields) == (theirs, type(theirs).__name__, theirs._fields)


def _marks(lib, decorate) -> tuple:
    """What a decorator gives back for a function and the mark it leaves (None when none)."""
    def fn(x):
        return x + 1

    decorated = decorate(lib, fn)
    return decorated is fn, decorated(1), getattr(fn, "_torchscript_modifier", None)


DECORATIONS = {
    "export": lambda L, fn: L.jit.export(fn),
    "unused": lambda L, fn: L.jit.unused(fn),
    "ignore": lambda L, fn: L.jit.ignore(fn),
    "ignore()": lambda L, fn: L.jit.ignore()(fn),
    "ignore(drop=False)": lambda L, fn: L.jit.ignore(drop=False)(fn),
    "ignore(True)": lambda L, fn: L.jit.ignore(True)(fn),
    "ignore(drop_on_export=True)": lambda L, fn: L.jit.ignore(drop_on_export=True)(fn),
    "_drop": lambda L, fn: L.jit._drop(fn),
    "_copy_to_script_wrapper": lambda L, fn: L._jit_internal._copy_to_script_wrapper(fn),
}


@pytest.mark.parametrize("name", DECORATIONS)
def test_jit_decorators_return_the_function_marked_as_torchs(name):
    with warnings.catch_warnings(record=True) as ours_caught:
        warnings.simplefilter("always")
        ours = _marks(tg, DECORATIONS[name])
    with warnings.catch_warnings(record=True) as theirs_caught:
        warnings.simplefilter("always")
        theirs = _marks(torch, DECORATIONS[name])
    assert ours == theirs
    assert ([(w.category, str(w.message)) for w in ours_caught]
            == [(w.category, str(w.message)) for w in theirs_caught])


def test_jit_ignore_refuses_what_is_neither_bool_nor_function():
    assert raised(tg, lambda L: L.jit.ignore("yes")) == raised(torch, lambda L: L.jit.ignore("yes"))


def test_jit_unused_property_marks_getter_and_setter():
    def marks(lib):
        class Box:
            @lib.jit.unused
            @property
            def size(self):
                return 3

            @size.setter
            def size(self, value):
                pass

        box = Box()
        box.size = 4
        return box.size, Box.__dict__["size"].fget._torchscript_modifier

    ours, theirs = run_both(marks)
    assert ours == theirs


def _model_with_jit_idioms(lib):
    """A module written as torchvision writes its models: overloads for TorchScript, an unused helper taken
    outside a script, ``is_scripting`` and ``annotate``."""
    class Block(lib.nn.Module):
        @lib.jit._overload_method  # noqa: F811
        def forward(self, x: list) -> object:
            pass

        @lib.jit._overload_method  # noqa: F811
        def forward(self, x: object) -> object:  # noqa: F811
            ...

        def forward(self, x):  # noqa: F811
            if isinstance(x, list):
                x = lib.cat(x, 1)
            return x * 2 if lib.jit.is_scripting() else self.slow_path(x)

        @lib.jit.unused
        def slow_path(self, x):
            scale = lib.jit.annotate(float, 3.0)
            return x * scale

    return Block()


def test_model_with_jit_idioms_runs_as_in_torch():
    data = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    ours, theirs = run_both(lambda L: _model_with_jit_idioms(L)([L.from_numpy(data), L.from_numpy(data)]))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_jit_overload_with_a_body_is_refused_as_in_torch():
    def declare(lib):
        @lib.jit._overload
        def area(x: int) -> int:
            return x

    assert raised(tg, declare) == raised(torch, declare)
    assert raised(tg, declare)[1].startswith("Only `pass` statement or `...` can be the body")


def test_jit_script_if_tracing_runs_the_function():
    def run(lib):
        def double(x):
            """Twice x."""
            return 2 * x

        wrapped = lib.jit.script_if_tracing(double)
        return wrapped(21), wrapped.__name__, wrapped.__doc__, wrapped.__wrapped__ is double

    assert run_both(run) == ((42, "double", "Twice x.", True),) * 2


def test_jit_isinstance_checks_of_libraries_are_false():
    module = tg.nn.Linear(2, 2)
    assert not isinstance(module, tg.jit.ScriptModule) and not isinstance(module.forward, tg.jit.ScriptFunction)
    assert issubclass(tg.jit.ScriptModule, tg.nn.Module) and issubclass(torch.jit.ScriptModule, torch.nn.Module)


@pytest.mark.parametrize("call", ["script", "trace", "trace_module", "interface", "load", "save", "freeze"])
def test_jit_refuses_what_needs_torchscript(call):
    with pytest.raises(NotImplementedError, match=f"torch.jit.{call}: tracegrad has no TorchScript"):
        getattr(tg.jit, call)(tg.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match="tracegrad has no TorchScript"):
        tg.jit.ScriptModule()


# ---- torch.compiler --------------------------------------------------------------------------------------------


def test_compiler_queries_are_false_outside_compilation():
    def queries(lib):
        return lib.compiler.is_compiling(), lib.compiler.is_dynamo_compiling(), lib.compiler.is_exporting()

    assert run_both(queries) == ((False,) * 3,) * 2


def _disabled_function(lib, disable) -> tuple:
    def add_one(x):
        """x + 1"""
        return x + 1

    wrapped = disable(lib, add_one)
    rewrapped = lib.compiler.disable(wrapped)
    return (wrapped is add_one, wrapped(1), wrapped.__name__, wrapped.__doc__, wrapped.__wrapped__ is add_one,
            rewrapped.__wrapped__ is add_one, rewrapped(2))


DISABLINGS = {
    "disable(fn)": lambda L, fn: L.compiler.disable(fn),
    "disable()": lambda L, fn: L.compiler.disable()(fn),
    "disable(recursive=False)": lambda L, fn: L.compiler.disable(recursive=False)(fn),
    "disable(fn, reason=...)": lambda L, fn: L.compiler.disable(fn, reason="host code"),
}


@pytest.mark.parametrize("name", DISABLINGS)
def test_compiler_disable_wraps_the_function_as_torch(name):
    ours, theirs = run_both(_disabled_function, DISABLINGS[name])
    assert ours == theirs


def test_compiler_disable_keeps_a_class_and_methods_run():
    def run(lib):
        class Scaled(lib.nn.Module):
            @lib.compiler.disable
            def forward(self, x):
                return x * 3

        return lib.compiler.disable(Scaled) is Scaled, Scaled()(lib.ones(2)).tolist()

    assert run_both(run) == ((True, [3.0, 3.0]),) * 2


MARKERS = {
    "allow_in_graph": lambda L, fn: L.compiler.allow_in_graph(fn),
    "allow_in_graph of a list": lambda L, fn: L.compiler.allow_in_graph([fn])[0],
    "assume_constant_result": lambda L, fn: L.compiler.assume_constant_result(fn),
}


@pytest.mark.parametrize("name", MARKERS)
def test_compiler_markers_return_the_function(name):
    def run(lib):
        def fn(x):
            return x - 1

        marked = MARKERS[name](lib, fn)
        return marked is fn, marked(3)

    assert run_both(run) == ((True, 2),) * 2


COMPILER_MISTAKES = {
    "disable(1)": lambda L: L.compiler.disable(1),
    "disable()('x')": lambda L: L.compiler.disable()("x"),
    "allow_in_graph('x')": lambda L: L.compiler.allow_in_graph("x"),
    "assume_constant_result(1)": lambda L: L.compiler.assume_constant_result(1),
}


@pytest.mark.parametrize("name", COMPILER_MISTAKES)
def test_compiler_mistakes_raise_torchs_errors(name):
    assert raised(tg, COMPILER_MISTAKES[name]) == raised(torch, COMPILER_MISTAKES[name])


def test_compiler_disable_is_no_context_manager():
    def enter(lib):
        with lib.compiler.disable():
            pass

    assert raised(tg, enter) == raised(torch, enter)


def test_compiler_disable_refuses_a_module_instance_and_compile_is_absent():
    with pytest.raises(NotImplementedError, match="tracegrad has no torch.compile"):
        tg.compiler.disable(tg.nn.Linear(2, 2))
    assert not hasattr(tg, "compile") and not hasattr(tg.compiler, "compile")


# ---- torch.func.functional_call ----------------------------------------------------------------------------------


def _linear_call(lib, make_dicts, **options):
    """A Linear(3, 2) called with stand-in weight and bias: the output, and the gradient reaching the stand-ins."""
    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 2)
    weight = lib.ones(2, 3, requires_grad=True)
    bias = lib.full((2,), 0.5, requires_grad=True)
    out = lib.func.functional_call(layer, make_dicts(weight, bias), (lib.arange(3.0),), **options)
    out.sum().backward()
    return out.tolist(), weight.grad.tolist(), bias.grad, layer.weight.grad


DICT_FORMS = {
    "one dict": lambda w, b: {"weight": w, "bias": b},
    "a tuple of dicts": lambda w, b: ({"weight": w}, {"bias": b}),
    "a list of dicts": lambda w, b: [{"weight": w}, {"bias": b}],
    "some of them": lambda w, b: {"weight": w},
}


@pytest.mark.parametrize("form", DICT_FORMS)
def test_func_functional_call_matches_torch(form):
    ours, theirs = run_both(_linear_call, DICT_FORMS[form])
    assert ours[:2] == theirs[:2]
    if form == "some of them":  # (the module's own bias is used, and gets the gradient)
        assert ours[2] is theirs[2] is None
    else:
        np.testing.assert_array_equal(ours[2].numpy(), theirs[2].numpy())
    assert ours[3] is theirs[3] is None


FUNCTIONAL_CALL_MISTAKES = {
    "a key in two dicts": lambda w, b: ({"weight": w}, {"weight": w}),
    "a number for the dicts": lambda w, b: 3,
    "a list with a non-dict": lambda w, b: [{"weight": w}, b],
    "a string": lambda w, b: "weight",
}


@pytest.mark.parametrize("mistake", FUNCTIONAL_CALL_MISTAKES)
def test_func_functional_call_mistakes_raise_torchs_errors(mistake):
    def call(lib):
        return _linear_call(lib, FUNCTIONAL_CALL_MISTAKES[mistake])

    assert raised(tg, call) == raised(torch, call)


def test_func_functional_call_strict_names_missing_keys():
    def call(lib):
        return _linear_call(lib, DICT_FORMS["some of them"], strict=True)

    assert raised(tg, call) == raised(torch, call)


def test_func_has_no_transforms_yet():
    assert not any(hasattr(tg.func, name) for name in ("vmap", "grad", "jacrev", "jacfwd", "vjp"))


# ---- torch.distributed -----------------------------------------------------------------------------------------


def test_distributed_guarded_code_takes_the_single_process_branch():
    def rank_and_size(lib):
        dist = lib.distributed
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
        return 0, 1

    assert run_both(rank_and_size) == ((0, 1), (0, 1))
    assert tg.distributed.is_available() is False  # (no backend: see tracegrad/distributed/__init__.py)


@pytest.mark.parametrize("call", ["get_rank", "get_world_size", "get_backend", "barrier"])
def test_distributed_calls_without_process_group_raise_torchs_error(call):
    def run(lib):
        return getattr(lib.distributed, call)()

    assert raised(tg, run) == raised(torch, run) == ("ValueError", tg.distributed.NO_PROCESS_GROUP)
    assert run_both(lambda L: L.distributed.is_initialized()) == (False, False)


def test_distributed_errors_have_torchs_hierarchy():
    def hierarchy(lib):
        dist = lib.distributed
        names = ("DistError", "DistBackendError", "DistNetworkError", "DistStoreError", "QueueEmptyError")
        return [[base.__name__ for base in getattr(dist, name).__mro__] for name in names]

    ours, theirs = run_both(hierarchy)
    assert ours == theirs


def test_distributed_init_process_group_refuses():
    with pytest.raises(NotImplementedError, match="tracegrad has no distributed backend"):
        tg.distributed.init_process_group("gloo")
