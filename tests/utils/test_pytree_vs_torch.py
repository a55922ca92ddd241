"""``torch.utils._pytree`` against torch's: leaves, specs (repr, counts, equality, hash, JSON), round trips, the
key-path API, ``is_leaf``, multi-tree maps, registration of user types, the return-type structseqs, and the errors
for mismatched structures."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
import re
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest
from _lib import tg, torch

Point = namedtuple("Point", ["x", "y"])
Pair = namedtuple("Pair", ["first", "second"])


def pytree_of(lib):
    return lib.utils._pytree


def normalized(value) -> str:
    """A repr comparable across the libraries: tracegrad's name as torch's, addresses blanked."""
    return re.sub(r" at 0x[0-9a-fA-F]+", " at 0x?", repr(value).replace("tracegrad", "torch"))


def outcome(program, lib):
    """``program(lib, pytree)`` normalized, or the error's type and normalized message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return normalized(program(lib, pytree_of(lib)))
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, re.sub(r" at 0x[0-9a-fA-F]+", " at 0x?", str(exc).replace("tracegrad", "torch"))


def assert_same_outcome(program):
    assert outcome(program, tg) == outcome(program, torch)


# ---- trees built the same way in each library ---------------------------------------------------------------------

TREES = {
    "leaf": lambda lib: 5,
    "none": lambda lib: None,
    "tensor": lambda lib: lib.tensor([1.0, 2.0]),
    "nested": lambda lib: {"a": [1, (2, None)], "b": lib.tensor(3.0), "c": ({"d": "s"},)},
    "dict-order": lambda lib: {"b": 1, "a": 2, 0: 3},
    "empties": lambda lib: ([], (), {}, [[]], None),
    "ordereddict": lambda lib: OrderedDict([("z", 1), ("y", [2, 3])]),
    "defaultdict": lambda lib: defaultdict(list, {"k": [1], "j": 2}),
    "deque": lambda lib: deque([1, [2, 3]], maxlen=4),
    "namedtuple": lambda lib: Point(1, Pair([2], {"q": 3})),
    "max": lambda lib: lib.max(lib.tensor([[1.0, 5.0], [4.0, 2.0]]), 0),
    "sort-in-list": lambda lib: [lib.sort(lib.tensor([3.0, 1.0, 2.0])), 7],
    "aminmax-frexp": lambda lib: {"m": lib.aminmax(lib.tensor([3.0, 1.0])), "f": lib.frexp(lib.tensor([1.0, 6.0]))},
    "size": lambda lib: [lib.Size([2, 3]), (4,)],  # (a node since `import torch` imports torch.fx)
    "set-is-leaf": lambda lib: [{1, 2}, frozenset()],
}


OWN_TYPE_TREES = ("max", "sort-in-list", "aminmax-frexp", "size")  # (their node types are each library's own classes)


@pytest.mark.parametrize("name", TREES)
def test_flatten_and_spec(name):
    make = TREES[name]

    def flattened(lib, pytree):
        leaves, spec = pytree.tree_flatten(make(lib))
        same_spec = pytree.tree_structure(make(lib))
        hashed = hash(spec) if name not in OWN_TYPE_TREES else None  # (the same hash as torch's, types shared)
        return (leaves, spec, str(spec), spec.num_leaves, spec.num_nodes, spec.num_children, spec.is_leaf(),
                spec.context, spec.children(), spec.type, pytree.tree_leaves(make(lib)),
                list(pytree.tree_iter(make(lib))), same_spec == spec, hash(same_spec) == hash(spec),
                pytree.treespec_pprint(spec), hashed)

    assert_same_outcome(flattened)


@pytest.mark.parametrize("name", TREES)
def test_round_trip(name):
    make = TREES[name]

    def round_trip(lib, pytree):
        leaves, spec = pytree.tree_flatten(make(lib))
        rebuilt = pytree.tree_unflatten(leaves, spec)
        swapped = pytree.tree_unflatten(spec, leaves)  # (torch takes the two in either order)
        return (rebuilt, type(rebuilt).__name__, type(swapped).__name__, spec.unflatten(iter(leaves)),
                getattr(rebuilt, "maxlen", None))

    assert_same_outcome(round_trip)


@pytest.mark.parametrize("name", TREES)
def test_key_paths(name):
    make = TREES[name]

    def key_paths(lib, pytree):
        tree = make(lib)
        with_path, spec = pytree.tree_flatten_with_path(tree)
        paths = [path for path, _ in with_path]
        return (paths, [pytree.keystr(p) for p in paths], [pytree.key_get(tree, p) for p in paths],
                spec, pytree.tree_leaves_with_path(tree) == with_path,
                pytree.tree_map_with_path(lambda path, leaf: pytree.keystr(path), tree))

    assert_same_outcome(key_paths)


@pytest.mark.parametrize("name", TREES)
def test_dumps_and_loads(name):
    make = TREES[name]

    def dumped(lib, pytree):
        text = pytree.treespec_dumps(pytree.tree_structure(make(lib)))
        loaded = pytree.treespec_loads(text)
        return text, loaded, loaded == pytree.tree_structure(make(lib))

    assert_same_outcome(dumped)


def test_return_types_are_structseqs():
    def kinds(lib, pytree):
        value = lib.max(lib.tensor([1.0, 3.0]), 0)
        spec = pytree.tree_structure(value)
        return (pytree.is_namedtuple(value), pytree.is_structseq(value), pytree.is_structseq_class(type(value)),
                pytree.is_namedtuple_class(Point), pytree.is_structseq(Point), spec.type.__name__, spec.context,
                type(spec.unflatten([1, 2])).__name__, pytree.tree_map(lambda t: t * 2, value))

    assert_same_outcome(kinds)


def test_module_attributes():
    assert sorted(tg.utils._pytree.__all__) == sorted(torch.utils._pytree.__all__)
    for name in ("SequenceKey", "MappingKey", "GetAttrKey", "register_dataclass", "register_constant",
                 "treespec_leaf", "treespec_tuple", "treespec_dict", "map_only", "arg_tree_leaves",
                 "_broadcast_to_and_flatten", "SUPPORTED_NODES", "_register_pytree_node", "LeafSpec"):
        assert hasattr(tg.utils._pytree, name), name
    assert importlib.import_module(f"{tg.__name__}.utils._pytree") is tg.utils._pytree


# ---- maps, predicates, is_leaf -------------------------------------------------------------------------------------

PROGRAMS = {
    "map": lambda lib, p: p.tree_map(lambda x: x + 1, {"x": 7, "y": (42, 64)}),
    "map-none": lambda lib, p: p.tree_map(lambda x: x is None, {"x": 7, "y": (42, 64), "z": None}),
    "map-prefix": lambda lib, p: p.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]),
    "map-dict-any-order": lambda lib, p: p.tree_map(lambda x, y: (x, y), {"a": 1, "b": 2}, {"b": 3, "a": 4}),
    "map-dict-kinds": lambda lib, p: p.tree_map(lambda x, y: x + y, OrderedDict(a=1, b=2),
                                                defaultdict(int, {"b": 3, "a": 4})),
    "map-deque-maxlen-ignored": lambda lib, p: p.tree_map(lambda x, y: x - y, deque([1, 2], maxlen=2),
                                                          deque([3, 4])),
    "map-is-leaf": lambda lib, p: p.tree_map(len, [(1, 2), [(3,)]], is_leaf=lambda x: isinstance(x, tuple)),
    "flatten-is-leaf": lambda lib, p: p.tree_flatten({"a": [1, 2], "b": (3,)}, is_leaf=lambda x: isinstance(x, list)),
    "is-leaf-root": lambda lib, p: p.tree_flatten([1, 2], is_leaf=lambda x: True),
    "tree-is-leaf": lambda lib, p: [p.tree_is_leaf(x) for x in (1, None, [1], {"a": None}, Point(1, 2), ())],
    "map-": lambda lib, p: (lambda seen: (p.tree_map_(seen.append, [1, (2, {"a": 3})]), seen))([]),
    "map-only": lambda lib, p: p.tree_map_only(int, lambda x: -x, [1, "a", 2.5, (3, None)]),
    "map-only-tuple": lambda lib, p: p.tree_map_only((int, str), lambda x: x * 2, [1, "a", 2.5]),
    "map-only-union": lambda lib, p: p.tree_map_only(int | float, lambda x: x * 2, [1, "a", 2.5]),
    "map-only-pred": lambda lib, p: p.tree_map_only(lambda x: x == 2, lambda x: "two", [1, 2, [2]]),
    "map-only-tensor": lambda lib, p: p.tree_map_only(lib.Tensor, lambda t: t.sum(), [lib.ones(2), 3]),
    "map-only-": lambda lib, p: (lambda seen: (p.tree_map_only_(str, seen.append, [1, "a", ("b",)]), seen))([]),
    "all-any": lambda lib, p: [f(pred, tree) for f in (p.tree_all, p.tree_any)
                               for pred in (lambda x: x > 0, lambda x: x > 2) for tree in ([1, (2, 3)], [], {})],
    "all-any-only": lambda lib, p: [f(int, lambda x: x > 1, [1, "a", 3]) for f in (p.tree_all_only,
                                                                                    p.tree_any_only)],
    "arg-tree-leaves": lambda lib, p: p.arg_tree_leaves(1, [2, 3], a=(4,), b={"c": 5}),
    "broadcast": lambda lib, p: p._broadcast_to_and_flatten([0, 1], p.tree_structure([[1, 2], (3,)])),
    "broadcast-fails": lambda lib, p: p._broadcast_to_and_flatten([0, 1, 2], p.tree_structure([[1, 2], (3,)])),
    "treespec-builders": lambda lib, p: (p.treespec_tuple([p.treespec_leaf(), p.treespec_leaf()]),
                                         p.treespec_dict({"a": p.treespec_leaf()}, b=p.treespec_leaf())),
    "flatten-up-to": lambda lib, p: p.tree_structure([1, {"a": 2}]).flatten_up_to([(1, 2), {"a": [3]}]),
    "pickle-and-copy": lambda lib, p: [(pickle.loads(pickle.dumps(s)) == s, copy.deepcopy(s) == s,
                                        type(copy.deepcopy(s)).__name__)
                                       for s in (p.tree_structure({"a": [1, (2,)], "b": Point(1, None)}),
                                                 p.tree_structure(1))],
    "key-entries": lambda lib, p: [(k, str(k), hash(k) == hash(type(k)(*dataclasses.astuple(k))))
                                   for k in (p.SequenceKey(1), p.MappingKey("a"), p.GetAttrKey("x"))],
    "keystr": lambda lib, p: p.keystr((p.SequenceKey(0), p.MappingKey("a"), p.GetAttrKey("x"), p.MappingKey(2))),
    "key-get": lambda lib, p: p.key_get({"a": [Point(1, 2)]}, (p.MappingKey("a"), p.SequenceKey(0),
                                                               p.GetAttrKey("y"))),
    "map-with-path-rests": lambda lib, p: p.tree_map_with_path(lambda k, x, y: (p.keystr(k), x + y),
                                                               {"a": 1, "b": [2]}, {"b": [20], "a": 10}),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_programs(name):
    program = PROGRAMS[name]
    assert_same_outcome(program)


# ---- TreeSpec as an object ----------------------------------------------------------------------------------------


def test_spec_equality_and_hash():
    def compare(lib, p):
        specs = [p.tree_structure(t) for t in ({"a": 1, "b": 2}, {"b": 2, "a": 1}, [1, 2], (1, 2), [1, 2],
                                               OrderedDict(a=1, b=2), Point(1, 2), Pair(1, 2), 3)]
        return ([[a == b for b in specs] for a in specs], len(set(specs)), specs[0] == "x", specs[-1] == None,  # noqa: E711
                p.tree_structure([1, 2]) is not p.tree_structure([1, 2]), [hash(s) for s in specs])

    assert_same_outcome(compare)


def test_spec_is_frozen_and_deprecations():
    def frozen(lib, p):
        spec = p.tree_structure([1, 2])
        spec.type = tuple
        return spec

    assert_same_outcome(frozen)
    for lib in (tg, torch):
        p = pytree_of(lib)
        spec = p.tree_structure([1, [2]])
        with pytest.warns(FutureWarning, match="children_specs` is deprecated"):
            children = spec.children_specs
        assert [repr(c) for c in children] == ["*", "TreeSpec(list, None, [*])"]
        with pytest.warns(FutureWarning, match="isinstance\\(treespec, LeafSpec\\)"):
            leaf = p.LeafSpec()
        assert repr(leaf) == "*" and leaf.is_leaf() and leaf == p.tree_structure(1)
        assert isinstance(p.tree_structure(1), p.LeafSpec) and isinstance(p.tree_structure(1), p.TreeSpec)
        manual = p.TreeSpec(list, None, [p.tree_structure(0), p.tree_structure(0)])
        assert manual == p.tree_structure([5, 6]) and manual.unflatten([1, 2]) == [1, 2]


# ---- mistakes -----------------------------------------------------------------------------------------------------

MISTAKES = {
    "list-for-tuple": lambda lib, p: p.tree_map(lambda x, y: x, [1, 2], (1, 2)),
    "arity": lambda lib, p: p.tree_map(lambda x, y: x, [1, 2], [1, 2, 3]),
    "dict-missing-key": lambda lib, p: p.tree_map(lambda x, y: x, {"a": 1, "b": 2}, {"a": 1, "c": 2}),
    "dict-longer": lambda lib, p: p.tree_map(lambda x, y: x, {"a": 1}, {"a": 1, "b": 2}),
    "dict-for-list": lambda lib, p: p.tree_map(lambda x, y: x, {"a": 1}, [1]),
    "namedtuple-class": lambda lib, p: p.tree_map(lambda x, y: x, Point(1, 2), Pair(1, 2)),
    "namedtuple-for-tuple": lambda lib, p: p.tree_map(lambda x, y: x, Point(1, 2), (1, 2)),
    "structseq-for-tuple": lambda lib, p: p.tree_map(lambda x, y: x, lib.max(lib.ones(2), 0), (1, 2)),
    "leaf-for-list": lambda lib, p: p.tree_map(lambda x, y: x, [1, [2]], [1, 2]),
    "unflatten-count": lambda lib, p: p.tree_unflatten([1, 2, 3], p.tree_structure({"a": [0, 0]})),
    "unflatten-no-spec": lambda lib, p: p.tree_unflatten([1], [1]),
    "with-path-mismatch": lambda lib, p: p.tree_map_with_path(lambda k, x, y: x, [1, 2], [1]),
    "map-only-bad": lambda lib, p: p.tree_map_only(3, lambda x: x, [1]),
    "register-twice": lambda lib, p: p.register_pytree_node(list, lambda x: (x, None), lambda v, c: v),
    "dumps-namedtuple": lambda lib, p: p.treespec_dumps(p.tree_structure(Point(1, 2))),
    "dumps-structseq": lambda lib, p: p.treespec_dumps(p.tree_structure(lib.max(lib.ones(2), 0))),
    "dumps-protocol": lambda lib, p: p.treespec_dumps(p.tree_structure([1]), protocol=7),
    "dumps-tuple-key": lambda lib, p: p.treespec_dumps(p.tree_structure({(1, 2): 3})),
    "dumps-unjsonable-key": lambda lib, p: p.treespec_dumps(p.tree_structure({1j: 3})),
    "dumps-not-spec": lambda lib, p: p.treespec_dumps([1]),
    "loads-protocol": lambda lib, p: p.treespec_loads('[3, {"type": null}]'),
    "loads-unknown-type": lambda lib, p: p.treespec_loads(
        '[1, {"type": "nowhere.Thing", "context": "null", "children_spec": []}]'),
    "leaf-spec-with-context": lambda lib, p: p.TreeSpec(None, 1, []),
    "treespec-tuple-bad": lambda lib, p: p.treespec_tuple([1]),
}


@pytest.mark.parametrize("name", MISTAKES)
def test_mistakes(name):
    program = MISTAKES[name]
    assert_same_outcome(program)


# ---- user types ---------------------------------------------------------------------------------------------------


def _fresh_box_class():
    """A new container class each call (each library registers its own)."""
    class Box:
        def __init__(self, items, label):
            self.items, self.label = items, label

        def __repr__(self):
            return f"Box({self.items!r}, {self.label!r})"

    return Box


def _registered_box(p, *, with_keys: bool, serialized: bool):
    box = _fresh_box_class()
    extra = {}
    if with_keys:
        extra["flatten_with_keys_fn"] = lambda b: ([(p.SequenceKey(i), v) for i, v in enumerate(b.items)], b.label)
    if serialized:
        extra.update(serialized_type_name="tests.Box", to_dumpable_context=lambda c: c.upper(),
                     from_dumpable_context=lambda c: c.lower())
    p.register_pytree_node(box, lambda b: (list(b.items), b.label), lambda v, c: box(list(v), c), **extra)
    return box


def test_registered_user_type():
    def use(lib, p):
        box = _registered_box(p, with_keys=True, serialized=True)
        tree = [box([1, (2, 3)], "lbl"), 4]
        leaves, spec = p.tree_flatten(tree)
        other = p.tree_structure([box([0, (0, 0)], "other"), 0])
        text = p.treespec_dumps(spec)
        return (leaves, str(spec).replace(box.__qualname__, "Box"), spec.unflatten([5, 6, 7, 8]),
                p.tree_map(lambda x: x * 10, tree), hash(spec) == hash(other), spec == other,
                text, p.treespec_loads(text) == spec, p.keystr(p.tree_flatten_with_path(tree)[0][1][0]),
                p.tree_map(lambda x, y: y, [box([1], "a")], [box([[9]], "a")]))

    assert_same_outcome(use)


USER_TYPE_MISTAKES = {
    "context-mismatch": lambda p, box: p.tree_map(lambda x, y: x, box([1], "a"), box([1], "b")),
    "arity-mismatch": lambda p, box: p.tree_map(lambda x, y: x, box([1], "a"), box([1, 2], "a")),
    "type-mismatch": lambda p, box: p.tree_map(lambda x, y: x, box([1], "a"), [1]),
    "no-flatten-with-keys": lambda p, box: p.tree_flatten_with_path([box([1], "a")]),
    "dumps-without-name": lambda p, box: p.treespec_dumps(p.tree_structure(box([1], "a"))),
    "register-again": lambda p, box: p.register_pytree_node(box, lambda b: ([], None), lambda v, c: None),
    "half-dumpable": lambda p, box: p.register_pytree_node(_fresh_box_class(), lambda b: ([], None),
                                                           lambda v, c: None, to_dumpable_context=str),
}


@pytest.mark.parametrize("name", USER_TYPE_MISTAKES)
def test_user_type_mistakes(name):
    def program(lib, p):
        box = _registered_box(p, with_keys=False, serialized=False)
        try:
            return USER_TYPE_MISTAKES[name](p, box)
        except Exception as exc:
            raise type(exc)(str(exc).replace(box.__qualname__, "Box")) from None

    assert_same_outcome(program)


def test_register_dataclass_and_constant():
    @dataclasses.dataclass
    class Config:
        weight: object
        bias: object = None

    def use(lib, p):
        kind = dataclasses.make_dataclass("Config", [("weight", object), ("bias", object, None)])
        p.register_dataclass(kind)
        mode = dataclasses.make_dataclass("Mode", [("name", str)], frozen=True)
        p.register_constant(mode)
        leaves, spec = p.tree_flatten([kind(1, None), kind([2], 3), mode("l2")])
        return (leaves, spec.num_leaves, spec.unflatten([7, 8, 9]), p.keystr(p.tree_leaves_with_path(kind(1, 2))[1][0]),
                spec.child(2).context, spec.child(0).context)

    assert_same_outcome(use)
    assert_same_outcome(lambda lib, p: p.register_dataclass(Config, field_names=["weight"]))
    assert_same_outcome(lambda lib, p: p.register_constant(type("Plain", (), {})))
