"""Review of the return types' rework (661f35a) and the Tensor[] refusals (de66989), compared with torch.

torch's ``torch.return_types.*`` are CPython structseqs, not named tuples: built from one sequence (any iterable,
``torch.return_types.max((v, i))``; two arguments are refused), their fields read-only ("readonly attribute"),
the type immutable and not subclassable, with ``n_fields`` and no ``_fields``/``_make``/``_asdict``/``_replace``
(so ``default_collate`` takes them for plain sequences). ``torch.meshgrid()`` with no tensors warns about the
indexing before refusing the empty list (the indexing overload refuses it).
"""

from __future__ import annotations

import io

import pytest
from _lib import tg, torch
from _mistakes_lib import outcome, same


def _max(L):
    return L.max(L.arange(6.0).view(2, 3), 1)


def _fails(f):
    def program(L):
        try:
            f(L)
        except (TypeError, AttributeError, ValueError) as error:
            return type(error).__name__, str(error)
        return "ok"
    return program


_STRUCTSEQ = {
    "from_tuple": lambda L: L.return_types.max((L.ones(1), L.zeros(1))),
    "from_list": lambda L: L.return_types.max([1, 2]).indices,
    "from_generator": lambda L: L.return_types.max(x for x in [1, 2]),
    "from_dict_keys": lambda L: L.return_types.max({1: 2, 3: 4}),
    "with_dict": lambda L: L.return_types.max((1, 2), {}),
    "keywords": lambda L: L.return_types.max(sequence=(1, 2), dict={}),
    "two_values": _fails(lambda L: L.return_types.max(L.ones(1), L.zeros(1))),
    "dict_none": _fails(lambda L: L.return_types.max((1, 2), None)),
    "too_short": _fails(lambda L: L.return_types.max((1,))),
    "too_long": _fails(lambda L: L.return_types.max((1, 2, 3))),
    "not_iterable": _fails(lambda L: L.return_types.max(5)),
    "field_keywords": _fails(lambda L: L.return_types.max(values=1, indices=2)),
    "no_arguments": _fails(lambda L: L.return_types.max()),
    "three_arguments": _fails(lambda L: L.return_types.max(1, 2, 3)),
    "three_keywords": _fails(lambda L: L.return_types.max(sequence=1, dict={}, x=1)),
    "unknown_keyword": _fails(lambda L: L.return_types.max((1, 2), foo=1)),
    "name_and_position": _fails(lambda L: L.return_types.max((1, 2), sequence=(1, 2))),
    "set_field": _fails(lambda L: setattr(_max(L), "values", None)),
    "delete_field": _fails(lambda L: delattr(_max(L), "indices")),
    "set_new_attribute": _fails(lambda L: setattr(_max(L), "foo", None)),
    "set_type_attribute": _fails(lambda L: setattr(L.return_types.max, "foo", 1)),
    "delete_type_attribute": _fails(lambda L: delattr(L.return_types.max, "n_fields")),
    "subclass": _fails(lambda L: type("X", (L.return_types.max,), {})),
    "counts": lambda L: (L.return_types.max.n_fields, L.return_types.max.n_sequence_fields,
                         L.return_types.max.n_unnamed_fields),
    "named_tuple_helpers": lambda L: [hasattr(_max(L), name) for name in
                                      ("_fields", "_make", "_asdict", "_replace", "__dict__", "__slots__")],
    "doc": lambda L: L.return_types.max.__doc__,
    "match_args": lambda L: L.return_types.linalg_lstsq.__match_args__,
    "collate": lambda L: L.utils.data.default_collate([_max(L), _max(L)]),
    "meshgrid_empty": lambda L: L.meshgrid(),
    "meshgrid_empty_list": lambda L: L.meshgrid([]),
}


@pytest.mark.parametrize("case", _STRUCTSEQ, ids=str)
def test_return_types_are_structseqs_as_torch(case):
    program = _STRUCTSEQ[case]
    ours, theirs = outcome(tg, program), outcome(torch, program)
    assert same(ours, theirs), (ours, theirs)


# ---- torch.save of a structseq: torch writes the class by its name, torch.return_types.<name>, over (values, {}) --


def _saved(L, obj) -> bytes:
    buffer = io.BytesIO()
    L.save(obj, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("op", ["max", "sort", "slogdet", "max_out"])
def test_saved_structseq_loads_in_torch_as_torchs(op):
    """tg.save wrote tracegrad.return_types._unpickled, a global torch cannot load (without tracegrad installed),
    and torch.load gave tracegrad's class, not torch.return_types.<name>."""
    def program(L):
        x = L.tensor([[3.0, 1.0], [2.0, 5.0]])
        if op == "max_out":
            return L.max(x, 1, out=(L.empty(0), L.empty(0, dtype=L.long)))
        return getattr(L, op)(x) if op == "slogdet" else getattr(x, op)(1)
    loaded = torch.load(io.BytesIO(_saved(tg, program(tg))), weights_only=False)
    expected = program(torch)
    assert type(loaded) is type(expected)
    assert all(torch.equal(a, b) for a, b in zip(loaded, expected, strict=True))
    back = tg.load(io.BytesIO(_saved(torch, expected)), weights_only=False)
    ours = tg.load(io.BytesIO(_saved(tg, program(tg))), weights_only=False)
    assert type(ours) is type(back) is type(program(tg))


def test_saved_structseq_refused_by_weights_only_load_as_torchs():
    def refusal(loader, saver):
        data = _saved(saver, saver.max(saver.ones(2, 2), 1))
        try:
            loader.load(io.BytesIO(data))
        except Exception as error:  # noqa: BLE001 (the refusal's type and words are what is compared)
            return type(error).__name__, str(error)
        return "loaded"
    expected = refusal(torch, torch)
    assert refusal(torch, tg) == expected
    assert refusal(tg, tg) == expected
