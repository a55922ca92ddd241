"""The public functions and Tensor methods are named as torch's (``_public_names``).

Before, some 270 of them carried the name of what tracegrad built them from: ``torch.arccos.__name__`` was
``'acos'`` (the guarded operator's), ``torch.clip`` ``'clamp'``, ``torch.concat`` ``'_cat_alias'``, ``torch.celu``
``'<lambda>'``, ``torch.gru_cell`` ``'fn'``, ``torch.lu`` ``'dispatch'``, ``Tensor.view`` ``'_view_method'``,
``Tensor.float`` ``'cast'``, ``torch.linalg.inv``'s siblings ``'norm'`` where torch says ``'linalg_norm'``; most did
not pickle (``Can't pickle local object 'guard_errors.<locals>.guarded'``), nor did the operators (``torch.sin``);
and a duck type's refusal named the operator inside (``'torch.acos'`` for ``torch.arccos``, ``'torch.<lambda>'``).
"""

from __future__ import annotations

import pickle
import pydoc

import pytest
from _lib import raised, tg, torch

_NAMESPACES = {"torch": lambda lib: lib, "Tensor": lambda lib: lib.Tensor,
               "nn.functional": lambda lib: lib.nn.functional, "linalg": lambda lib: lib.linalg,
               "special": lambda lib: lib.special, "fft": lambda lib: lib.fft}

# public callables whose __name__ is still not torch's, with the reason (none left)
KNOWN: dict[tuple[str, str], str] = {}


def _public_callables(namespace: str) -> list[tuple[str, object, object]]:
    """``(name, torch's, tracegrad's)`` for each public non-class callable of ``namespace`` both libraries have."""
    theirs_ns, ours_ns = _NAMESPACES[namespace](torch), _NAMESPACES[namespace](tg)
    found = []
    for name in dir(theirs_ns):
        if name.startswith("_"):
            continue
        theirs, ours = getattr(theirs_ns, name, None), getattr(ours_ns, name, None)
        if ours is not None and callable(theirs) and not isinstance(theirs, type):
            found.append((name, theirs, ours))
    return found


@pytest.mark.parametrize("namespace", list(_NAMESPACES))
def test_every_public_callable_has_torchs_name(namespace):
    differ = {(namespace, name): (getattr(theirs, "__name__", None), getattr(ours, "__name__", None))
              for name, theirs, ours in _public_callables(namespace)
              if getattr(theirs, "__name__", None) != getattr(ours, "__name__", None)}
    assert {key: names for key, names in differ.items() if key not in KNOWN} == {}


@pytest.mark.parametrize("namespace", list(_NAMESPACES))
def test_no_two_public_names_share_an_object_torch_keeps_apart(namespace):
    """Aliases are distinct objects where torch's are (``torch.arccos is not torch.acos``)."""
    entries = _public_callables(namespace)
    shared = {(a, b) for i, (a, theirs_a, ours_a) in enumerate(entries) for b, theirs_b, ours_b in entries[i + 1:]
              if ours_a is ours_b and theirs_a is not theirs_b}
    assert shared == set()


@pytest.mark.parametrize("namespace", list(_NAMESPACES))
def test_public_callables_pickle_where_torchs_do(namespace):
    """As a reference to the function itself, which loads back as the same object."""
    def round_trip(f):
        try:
            return pickle.loads(pickle.dumps(f)) is f
        except Exception:  # noqa: BLE001 - whether it pickles is the outcome compared
            return False

    failing = [name for name, theirs, ours in _public_callables(namespace) if round_trip(theirs) and not round_trip(ours)]
    assert failing == []


def test_python_functions_keep_torchs_qualified_names():
    """Where torch's function is written in Python, its ``__qualname__``, which Python's own errors about its
    arguments print (``_threshold() missing...``, ``Tensor.split() missing...``), is torch's (tracegrad's
    ``torch.lu``/``torch.unique`` pick their function by a flag and pickle, where torch's are closures)."""
    differ = {(namespace, name): (ours.__qualname__, theirs.__qualname__)
              for namespace in _NAMESPACES for name, theirs, ours in _public_callables(namespace)
              if type(theirs).__name__ == "function" and ours.__qualname__ != theirs.__qualname__
              and theirs.__qualname__ != _PICKED_BY_A_FLAG}
    assert {key: names for key, names in differ.items() if key not in KNOWN_QUALNAMES} == {}


# torch's functions that pick one of two by a flag (``torch.lu``, ``F.max_pool2d``) are closures of this name, which
# do not pickle; tracegrad's are named as their public name, and pickle
_PICKED_BY_A_FLAG = "boolean_dispatch.<locals>.fn"
# Python functions of torch whose __qualname__ tracegrad's do not take, with the reason
KNOWN_QUALNAMES = {
    ("torch", "symeig"): "torch's is torch._linalg_utils._symeig; tracegrad has no _symeig to be found by",
}


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.functional.threshold(lib.ones(2)),
    lambda lib: lib.Tensor.split(lib.ones(2)),
], ids=["F.threshold", "Tensor.split"])
def test_argument_errors_name_the_function_as_torch(program):
    assert raised(tg, program) == raised(torch, program)


# aliases and built names a mode's handler sees: (call, the public function it is)
_MODE_CALLS = {
    "arccos": (lambda lib, x: lib.arccos(x), lambda lib: lib.arccos),
    "clip": (lambda lib, x: lib.clip(x, 0, 1), lambda lib: lib.clip),
    "concat": (lambda lib, x: lib.concat([x, x]), lambda lib: lib.concat),
    "celu": (lambda lib, x: lib.celu(x), lambda lib: lib.celu),
    "swapaxes": (lambda lib, x: lib.swapaxes(x, 0, 1), lambda lib: lib.swapaxes),
    "Tensor.view": (lambda lib, x: x.view(-1), lambda lib: lib.Tensor.view),
    "Tensor.arccos": (lambda lib, x: x.arccos(), lambda lib: lib.Tensor.arccos),
    "Tensor.swapdims": (lambda lib, x: x.swapdims(0, 1), lambda lib: lib.Tensor.swapdims),
    "Tensor.float": (lambda lib, x: x.float(), lambda lib: lib.Tensor.float),
    "special.expit": (lambda lib, x: lib.special.expit(x), lambda lib: lib.special.expit),
    "linalg.norm": (lambda lib, x: lib.linalg.norm(x), lambda lib: lib.linalg.norm),
    "fft.fft": (lambda lib, x: lib.fft.fft(x), lambda lib: lib.fft.fft),
    "F.logsigmoid": (lambda lib, x: lib.nn.functional.logsigmoid(x), lambda lib: lib.nn.functional.logsigmoid),
    "F.threshold": (lambda lib, x: lib.nn.functional.threshold(x, 0.5, 0.0),
                    lambda lib: lib.nn.functional.threshold),
}


def _seen_by_mode(lib, case: str) -> tuple:
    call, public = _MODE_CALLS[case]
    seen = []

    class Recorder(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    x = lib.ones(2, 3)
    with Recorder():
        call(lib, x)
        expected = public(lib)
    func = seen[0]
    return (func is expected, func.__name__, func.__qualname__, getattr(func, "__module__", None),
            lib.overrides.resolve_name(func))


@pytest.mark.parametrize("case", list(_MODE_CALLS))
def test_a_mode_sees_the_alias_called_by_torchs_names(case):
    assert _seen_by_mode(tg, case) == _seen_by_mode(torch, case)


class _Duck:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


@pytest.mark.parametrize("program", [
    lambda lib: lib.arccos(_Duck()), lambda lib: lib.clip(_Duck(), 0, 1), lambda lib: lib.concat([_Duck()]),
    lambda lib: lib.celu(_Duck()), lambda lib: lib.linalg.norm(_Duck()), lambda lib: lib.special.expit(_Duck()),
    lambda lib: lib.fft.fft(_Duck()), lambda lib: lib.nn.functional.logsigmoid(_Duck()),
    lambda lib: lib.nn.functional.gelu(_Duck()), lambda lib: lib.nn.functional.conv2d(_Duck(), lib.ones(1, 1, 1, 1)),
], ids=["arccos", "clip", "concat", "celu", "linalg.norm", "special.expit", "fft.fft", "F.logsigmoid", "F.gelu",
        "F.conv2d"])
def test_a_duck_types_refusal_names_the_function_called(program):
    assert raised(tg, program) == raised(torch, program)


def test_operators_pickle_and_copy_as_themselves():
    import copy

    for op in (tg.sin, tg.acos, tg.linalg.inv):
        assert pickle.loads(pickle.dumps(op)) is op
        assert copy.deepcopy(op) is op


def test_help_and_repr_show_the_public_name():
    assert repr(tg.Tensor.view).startswith("<function Tensor.view at ")
    assert repr(tg.arccos).startswith("<function arccos at ")
    for f in (tg.Tensor.view, tg.arccos, tg.linalg.norm, tg.clip):
        assert f.__name__ in pydoc.render_doc(f)
