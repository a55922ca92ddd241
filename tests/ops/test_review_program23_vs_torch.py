"""Review of set 23 (torch.tensor of ints beyond int64, classes in torch's module files, PRINT_OPTS as a dataclass),
each compared with torch.

- ``torch.tensor([2**63, 1j], dtype=torch.int64)`` named the complex (the fast path refused any Python complex into
  a real dtype before reading the items): torch reads the items in order and refuses ``2**63`` first (likewise a NaN
  or a negative int into uint64 before a complex);
- a lazy layer not yet initialized did not pickle (nor ``torch.save`` as a whole model): its load hook was a lambda
  and ``register_load_state_dict_pre_hook`` wrapped each hook in a closure; torch wraps them in ``_WrappedHook``,
  which pickles with its module;
- ``dataclasses.fields(PRINT_OPTS)`` gave each type as text (``'int'``), torch's as the class.
"""

from __future__ import annotations

import dataclasses
import io
import pickle

import pytest
from _lib import tg, torch
from _tutorial_lib import repr_or_error

_BEYOND = 2**63


@pytest.mark.parametrize("data, dtype", [
    ([_BEYOND, 1j], "int64"), ([_BEYOND, 1j, 1.5], "int8"), ([[_BEYOND], [1j]], "uint8"),
    ([float("nan"), 1j], "int32"), ([-1, 1j], "uint64"), ([2**64, 1j], "uint64"), ([1j, _BEYOND], "int64"),
    ([1, 1j], "int64"), ([1, 1j], "float32"), ([_BEYOND, 1j], "float32"), ([_BEYOND, 1j], "bool"),
], ids=str)
def test_first_refused_item_names_the_error(data, dtype):
    def made(lib):
        return lib.tensor(data, dtype=getattr(lib, dtype))

    assert repr_or_error(made, tg) == repr_or_error(made, torch)


_LAZY = [("LazyLinear", (3,)), ("LazyConv2d", (3, 2)), ("LazyConvTranspose1d", (3, 2)), ("LazyBatchNorm2d", ()),
         ("LazyInstanceNorm1d", ())]


def _round_trips(lib, name: str, args: tuple) -> list:
    """A lazy layer through pickle and save/load, then initialized by a state dict and by a forward."""
    layer = getattr(lib.nn, name)(*args)
    buffer = io.BytesIO()
    lib.save(lib.nn.Sequential(layer), buffer)
    buffer.seek(0)
    copies = [pickle.loads(pickle.dumps(layer)), lib.load(buffer, weights_only=False)[0]]
    shown = [repr(c) for c in copies] + [type(c).__name__ for c in copies]
    source = getattr(lib.nn, name.removeprefix("Lazy"))(3, *args) if args else None
    if source is not None:
        copies[0].load_state_dict(source.state_dict())
        shown.append((type(copies[0]).__name__, {k: tuple(v.shape) for k, v in copies[0].state_dict().items()}))
    width = {"1d": 3, "2d": 4}.get(name[-2:], 3)
    shape = (2, 3) if name == "LazyLinear" else (2, 3, width) if name.endswith("1d") else (2, 3, width, width)
    copies[1](lib.ones(shape))
    shown.append((type(copies[1]).__name__, {k: tuple(v.shape) for k, v in copies[1].state_dict().items()}))
    return shown


@pytest.mark.parametrize("name, args", _LAZY, ids=[n for n, _ in _LAZY])
def test_lazy_layer_pickles_before_initialization(name, args):
    assert _round_trips(tg, name, args) == _round_trips(torch, name, args)


def _count_keys(module, state_dict, prefix, *rest):
    module.seen = len(state_dict)


def test_state_dict_pre_hook_pickles_with_its_module():
    def run(lib):
        layer = lib.nn.Linear(2, 2)
        layer.register_load_state_dict_pre_hook(_count_keys)
        copied = pickle.loads(pickle.dumps(layer))
        copied.load_state_dict(layer.state_dict())
        return copied.seen, hasattr(layer, "seen")

    assert run(tg) == run(torch)


def test_print_opts_fields_name_their_types():
    def fields(lib):
        return [(f.name, f.type, f.default) for f in dataclasses.fields(lib._tensor_str.PRINT_OPTS)]

    assert fields(tg) == fields(torch)
