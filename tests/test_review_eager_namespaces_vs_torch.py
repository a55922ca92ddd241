"""Review of torch.jit / torch.compiler in eager mode against torch: an overload declared by a lambda, disabling a
bound method of a disabled method or a ``functools.wraps`` copy of one (torch unwraps only its own wrapper), the
marks ``disable`` leaves, and the jit names libraries check or filter by (``TracerWarning``, the scripted and
traced module classes, ``_unwrap_optional``)."""

from __future__ import annotations

import functools
import warnings

import pytest
from _lib import raised, run_both, tg, torch


def test_jit_overload_of_a_lambda_is_refused_as_in_torch():
    def declare(lib):
        lib.jit._overload(lambda x: x)

    assert raised(tg, declare) == raised(torch, declare)
    assert raised(tg, declare)[1].startswith("Expected a single top-level function: ")


def test_compiler_disable_of_a_bound_disabled_method_keeps_self():
    def run(lib):
        class Doubler(lib.nn.Module):
            @lib.compiler.disable
            def double(self, x):
                return (type(self).__name__, 2 * x)

        bound = Doubler().double
        return lib.compiler.disable(bound)(5), lib.compiler.disable(recursive=False)(bound)(6)

    ours, theirs = run_both(run)
    assert ours == theirs == (("Doubler", 10), ("Doubler", 12))


def test_compiler_disable_of_a_wraps_copy_keeps_the_outer_function():
    def run(lib):
        def logged(fn):
            @functools.wraps(fn)  # copies the disabled wrapper's marks onto ``inner``
            def inner(x):
                return "logged", fn(x)
            return inner

        outer = logged(lib.compiler.disable(lambda x: x + 1))
        return lib.compiler.disable(outer)(1), lib.compiler.disable(outer, recursive=False)(2)

    ours, theirs = run_both(run)
    assert ours == theirs == (("logged", 2), ("logged", 3))


@pytest.mark.parametrize("recursive", [True, False])
def test_compiler_disable_leaves_torchs_marks(recursive):
    def marks(lib):
        def fn(x):
            return x

        by_call = lib.compiler.disable(fn, recursive=recursive)
        by_decorator = lib.compiler.disable(recursive=recursive)(fn)
        return [(w._torchdynamo_disable, w._torchdynamo_disable_recursive, w._torchdynamo_wrapper_id == id(w),
                 w._torchdynamo_orig_callable is fn, w._torchdynamo_disable_msg) for w in (by_call, by_decorator)]

    ours, theirs = run_both(marks)
    assert ours == theirs


def test_jit_tracer_warning_is_a_warning_libraries_filter_and_issue():
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.warn("shape read as a constant", lib.jit.TracerWarning, stacklevel=1)
            warnings.filterwarnings("ignore", category=lib.jit.TracerWarning)
            warnings.warn("silenced", lib.jit.TracerWarning, stacklevel=1)
        return issubclass(lib.jit.TracerWarning, Warning), [str(w.message) for w in caught]

    assert run_both(run) == ((True, ["shape read as a constant"]),) * 2


@pytest.mark.parametrize("name, base", [("RecursiveScriptModule", "ScriptModule"), ("TracedModule", "ScriptModule"),
                                        ("TopLevelTracedModule", "TracedModule")])
def test_jit_scripted_and_traced_module_classes_for_isinstance_checks(name, base):
    def run(lib):
        cls = getattr(lib.jit, name)
        return (issubclass(cls, getattr(lib.jit, base)), issubclass(cls, lib.nn.Module),
                isinstance(lib.nn.Linear(2, 2), cls))

    assert run_both(run) == ((True, True, False),) * 2
    with pytest.raises(NotImplementedError, match="tracegrad has no TorchScript"):
        getattr(tg.jit, name)()


def test_jit_unwrap_optional_as_torch():
    assert run_both(lambda L: L.jit._unwrap_optional(3)) == (3, 3)
    assert raised(tg, lambda L: L.jit._unwrap_optional(None)) == raised(torch, lambda L: L.jit._unwrap_optional(None))
