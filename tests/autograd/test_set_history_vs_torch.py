"""``Tensor.set_`` under autograd, as torch's: a write autograd records as a ``torch::autograd::NotImplemented``
node (edges to self's history and a tensor source's, the fallback's sequence number) whose backward refuses, the
in-place checks of a leaf, a view of a leaf and a view made in no_grad mode, a view's base rebased with a
CopySlices, and version counters that stay the tensor's own (the source's storage is shared, not its counter).
Also ``index_reduce``'s beta warning."""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch


def _outcome(program):
    """What ``program()`` gives, or its error's type and message."""
    try:
        return program()
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)


def _graph(t) -> tuple | None:
    fn = t.grad_fn
    if fn is None:
        return None
    return (fn.name(), [(n.name() if n is not None else None, k) for n, k in fn.next_functions],
            fn._sequence_nr() >= 2**63, t.requires_grad, t.is_leaf, t._version)


def _non_leaf(lib, n: int = 3):
    return lib.ones(n, requires_grad=True).clone()


PROGRAMS = {
    "a non-leaf set to a tensor": lambda lib: _graph(_non_leaf(lib).set_(lib.zeros(2))),
    "a non-leaf set to nothing": lambda lib: _graph(_non_leaf(lib).set_()),
    "a non-leaf set to a storage": lambda lib: _graph(_non_leaf(lib).set_(lib.zeros(4).untyped_storage())),
    "a non-leaf set to part of a storage": lambda lib: _graph(
        _non_leaf(lib).set_(lib.zeros(4).untyped_storage(), 1, (2,), (1,))),
    "by keywords": lambda lib: _graph(_non_leaf(lib).set_(lib.zeros(4).untyped_storage(), storage_offset=1,
                                                           size=(2,), stride=(1,))),
    "a plain tensor set to a leaf requiring grad": lambda lib: _graph(
        lib.ones(3).set_(lib.zeros(3, requires_grad=True))),
    "a plain tensor set to a non-leaf": lambda lib: _graph(lib.ones(3).set_(_non_leaf(lib))),
    "a plain tensor set to a plain tensor": lambda lib: _graph(lib.ones(3).set_(lib.zeros(2))),
    "a leaf requiring grad": lambda lib: _graph(lib.ones(3, requires_grad=True).set_(lib.zeros(2))),
    "a view of a leaf requiring grad": lambda lib: _graph(lib.ones(3, requires_grad=True)[:2].set_(lib.zeros(2))),
    "backward through it": lambda lib: _non_leaf(lib).set_(lib.zeros(2)).sum().backward(),
    "backward into the source": lambda lib: lib.ones(2).set_(lib.zeros(2, requires_grad=True)).sum().backward(),
    "a dtype mismatch on a leaf requiring grad": lambda lib: _graph(lib.ones(3, requires_grad=True).set_(
        lib.zeros(2, dtype=lib.float64))),
    "a dtype mismatch on a non-leaf": lambda lib: _graph(_non_leaf(lib).set_(lib.zeros(2, dtype=lib.float64))),
}


def _view_of_non_leaf(lib) -> list:
    base = _non_leaf(lib, 4)
    view = base[:2]
    view.set_(lib.zeros(3))
    facts = [_graph(view), _graph(base), view._base is base, list(view.shape)]
    facts.append(_outcome(lambda: base.sum().backward()))
    return facts


def _under_no_grad(lib) -> list:
    leaf = lib.ones(3, requires_grad=True)
    with lib.no_grad():
        a = _non_leaf(lib).set_(lib.zeros(2))
        b = leaf.set_(lib.zeros(2))
        view = lib.ones(3, requires_grad=True)[:2]
    return [_graph(a), _graph(b), _outcome(lambda: _graph(view.set_(lib.zeros(2))))]


def _versions(lib) -> list:
    source, target = lib.zeros(3), lib.ones(3)
    seen = [(target._version, source._version)]
    target.set_(source)
    seen.append((target._version, source._version))
    source.add_(1)
    seen.append((target._version, source._version))
    target.add_(1)
    seen.append((target._version, source._version, source.tolist()))
    base = lib.ones(4)
    view = base[:2]
    view.set_(lib.zeros(3))
    seen.append((view._version, base._version))
    view.add_(1)
    seen.append((view._version, base._version, base.tolist(), view.tolist()))
    return seen


PROGRAMS.update({"a view of a non-leaf": _view_of_non_leaf, "under no_grad": _under_no_grad,
                 "version counters": _versions})


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_set_under_autograd_as_torch(name: str):
    program = PROGRAMS[name]
    assert _outcome(lambda: program(tg)) == _outcome(lambda: program(torch))


def _beta_warnings(lib) -> list:
    was = lib.is_warn_always_enabled()
    lib.set_warn_always(True)  # (TORCH_WARN_ONCE warns at every call then: no dependence on earlier tests)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.zeros(3).index_reduce_(0, lib.tensor([0, 1]), lib.ones(2), "prod")
            lib.zeros(3).index_reduce(0, lib.tensor([0, 1]), lib.ones(2), "amax")
            _outcome(lambda: lib.zeros(3).index_reduce(0, lib.tensor([0, 1]), lib.ones(2), "sum"))
    finally:
        lib.set_warn_always(was)
    return [(w.category.__name__, str(w.message).split(" (Triggered")[0], w.filename == __file__) for w in seen]


def test_index_reduce_warns_that_it_is_in_beta_as_torch():
    assert _beta_warnings(tg) == _beta_warnings(torch)
