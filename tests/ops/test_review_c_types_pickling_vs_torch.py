"""Review of set 20's C types (``torch._C.Generator``, ``torch.device``, ``torch.finfo``/``iinfo``,
``torch.layout``): pickle, copy and deepcopy of them and their checkpoints (``save``/``load``), compared with torch.

- a generator reduces as torch's does (its device, then seed, offset and state): ``copy.copy`` made a shallow copy
  sharing the original's stream (a draw from one advanced the other), protocols 0 and 1 refused it, and a
  generator in torch's checkpoints failed to load ("state is not a dictionary");
- ``tracegrad.save`` names a generator ``torch._C.Generator`` (torch loads it as its own) and a layout through
  ``torch.serialization._get_layout`` (a checkpoint holding ``torch.strided`` was refused by weights-only loads,
  torch's and tracegrad's);
- a device pickles at protocols 0 and 1 (its class has slots and no reduction);
- finfo and iinfo cannot be pickled or copied, as torch's C types cannot.
"""

from __future__ import annotations

import copy
import copyreg
import io
import pickle

import numpy as np
import pytest
from _lib import raised, tg, torch


def _draws_after_copy(lib, how: str) -> list:
    g = lib.Generator().manual_seed(5)
    lib.rand(2, generator=g)
    copied = {"copy": copy.copy, "deepcopy": copy.deepcopy,
              **{f"pickle{p}": lambda g, p=p: pickle.loads(pickle.dumps(g, protocol=p)) for p in range(6)}}[how](g)
    return [lib.rand(3, generator=g).tolist(), lib.rand(3, generator=copied).tolist(), copied.initial_seed(),
            type(copied) is lib.Generator, copied is g]


@pytest.mark.parametrize("how", ["copy", "deepcopy", *(f"pickle{p}" for p in range(6))])
def test_a_copied_generator_continues_its_stream_independently(how):
    assert _draws_after_copy(tg, how) == _draws_after_copy(torch, how)


@pytest.mark.parametrize("protocol", range(6))
@pytest.mark.parametrize("index", [None, 1])
def test_a_device_pickles_at_every_protocol(protocol, index):
    def again(lib):
        return repr(pickle.loads(pickle.dumps(lib.device("cpu", index), protocol=protocol)))

    assert again(tg) == again(torch)


@pytest.mark.parametrize("how", ["pickle0", "pickle1", "pickle2", "pickle5", "copy", "deepcopy"])
@pytest.mark.parametrize("info", ["finfo", "iinfo"])
def test_finfo_and_iinfo_cannot_be_pickled_nor_copied(how, info):
    def copied(lib):
        value = lib.finfo(lib.float32) if info == "finfo" else lib.iinfo(lib.int16)
        if how.startswith("pickle"):
            return pickle.dumps(value, protocol=int(how[-1]))
        return getattr(copy, how)(value)

    assert raised(tg, copied) == raised(torch, copied)
    assert raised(torch, copied) is not None


def _checkpoint(lib) -> io.BytesIO:
    buffer = io.BytesIO()
    lib.save({"layout": lib.strided, "generator": lib.Generator().manual_seed(7)}, buffer)
    buffer.seek(0)
    return buffer


def _loaded(lib, buffer: io.BytesIO) -> list:
    checkpoint = lib.load(buffer, weights_only=False)
    g = checkpoint["generator"]
    return [checkpoint["layout"] is lib.strided, type(g) is lib.Generator, g.initial_seed(),
            lib.rand(3, generator=g).tolist()]


@pytest.mark.parametrize("saver", ["tracegrad", "torch"])
@pytest.mark.parametrize("loader", ["tracegrad", "torch"])
def test_a_checkpoint_holding_a_layout_and_a_generator_loads_in_either_library(saver, loader):
    libs = {"tracegrad": tg, "torch": torch}
    assert _loaded(libs[loader], _checkpoint(libs[saver])) == _loaded(torch, _checkpoint(torch))


@pytest.mark.parametrize("loader", ["tracegrad", "torch"])
def test_a_layout_in_tracegrads_checkpoint_passes_weights_only_loads(loader):
    lib = {"tracegrad": tg, "torch": torch}[loader]
    buffer = io.BytesIO()
    tg.save({"layout": tg.strided}, buffer)
    buffer.seek(0)
    assert lib.load(buffer)["layout"] is lib.strided


def test_a_generator_in_a_checkpoint_is_refused_by_weights_only_loads_as_torchs():
    def load(lib):
        return lib.load(_checkpoint(lib))

    assert raised(tg, load) == raised(torch, load)
    assert "torch._C.Generator" in raised(torch, load)[1]


class _AsTracegradPickledGenerators(pickle.Pickler):
    """Pickles generators as tracegrad did before they reduced as torch's: the class, then its attributes."""

    def reducer_override(self, obj):
        if type(obj) is tg.Generator:
            return copyreg.__newobj__, (tg.Generator,), dict(vars(obj))
        return NotImplemented


def test_a_generator_pickled_before_it_reduced_as_torchs_still_loads():
    g = tg.Generator().manual_seed(9)
    stream = io.BytesIO()
    _AsTracegradPickledGenerators(stream, protocol=2).dump(g)
    data = stream.getvalue()
    data = data.replace(b"tracegrad._C\nGenerator", b"tracegrad._factories\nGenerator")  # (its module then)
    assert b"_factories" in data
    again = pickle.loads(data)
    assert type(again) is tg.Generator and again.initial_seed() == 9
    assert tg.equal(tg.rand(3, generator=again), tg.rand(3, generator=g))


# ---- comparisons and argument errors that name these types -------------------------------------------------------

_DEVICE_COMPARISONS = {
    "eq_str": lambda lib: lib.device("cpu") == "cpu",
    "str_eq": lambda lib: "cpu" == lib.device("cpu"),  # noqa: SIM300 - the string's == is the one tried first
    "ne_str": lambda lib: lib.device("cpu") != "cpu",
    "eq_index": lambda lib: lib.device("cpu") == lib.device("cpu", 0),
    "eq_same": lambda lib: lib.device("cpu", 1) == lib.device("cpu:1"),
    "in_strs": lambda lib: lib.device("cpu") in ("cpu", "cuda"),
    "lt": lambda lib: lib.device("cpu") < lib.device("cpu"),
    "ge": lambda lib: lib.device("cpu") >= lib.device("cuda"),
}


@pytest.mark.parametrize("case", _DEVICE_COMPARISONS, ids=str)
def test_a_device_compares_with_devices_only(case):
    def compared(lib):
        return _DEVICE_COMPARISONS[case](lib)

    outcome = {lib: raised(lib, compared) or compared(lib) for lib in (tg, torch)}
    assert outcome[tg] == outcome[torch]


@pytest.mark.parametrize("call", ["ones(2, layout={})", "zeros_like(lib.ones(2), layout={})", "rand(2, layout={})",
                                  "arange(3, layout={})", "ones(2).new_zeros(2, layout={})"])
@pytest.mark.parametrize("value", ["lib.float32", "lib.device('cpu')", "lib.channels_last"])
def test_a_layout_argument_of_another_torch_type_is_refused(call, value):
    def made(lib):
        return eval("lib." + call.format(value), {"lib": lib})  # noqa: S307 - the test's own snippets

    assert raised(tg, made) == raised(torch, made)
    assert raised(torch, made) is not None


def test_iinfo_of_bool_is_refused_in_torchs_words():
    assert raised(tg, lambda lib: lib.iinfo(lib.bool)) == raised(torch, lambda lib: lib.iinfo(lib.bool))


# (review: finfo and iinfo take their argument through torch's parser, which names what it refuses)
_INFO_ARGUMENTS = ["None", "'int8'", "1", "lib.device('cpu')", "lib.strided", "type=None", "lib.int8, lib.int8",
                   "dtype=lib.int8", "", "type=lib.int8", "lib.float32", "lib.int16", "lib.complex64"]


@pytest.mark.parametrize("arguments", _INFO_ARGUMENTS)
@pytest.mark.parametrize("info", ["finfo", "iinfo"])
def test_finfo_and_iinfo_parse_their_argument_as_torch(info, arguments):
    def made(lib):
        return repr(eval(f"lib.{info}({arguments})", {"lib": lib}))  # noqa: S307 - the test's own snippets

    assert (raised(tg, made) or made(tg)) == (raised(torch, made) or made(torch))


# (review: autocast's C functions name a device, a layout or a NumPy scalar they refuse by torch's type names)
_AUTOCAST_ARGUMENTS = {
    "is_enabled_device": lambda lib: lib.is_autocast_enabled(lib.device("cpu")),
    "is_enabled_keyword_device": lambda lib: lib.is_autocast_enabled(device_type=lib.device("cpu")),
    "is_enabled_two": lambda lib: lib.is_autocast_enabled(lib.device("cpu"), 1),
    "is_enabled_layout": lambda lib: lib.is_autocast_enabled(lib.strided),
    "is_enabled_numpy_scalar": lambda lib: lib.is_autocast_enabled(np.float64(1)),
    "set_enabled_device_flag": lambda lib: lib.set_autocast_enabled("cpu", lib.device("cpu")),
    "set_enabled_device_first": lambda lib: lib.set_autocast_enabled(lib.device("cpu"), True),
    "set_enabled_one_device": lambda lib: lib.set_autocast_enabled(lib.device("cpu")),
    "get_dtype_device": lambda lib: lib.get_autocast_dtype(lib.device("cpu")),
    "set_dtype_device": lambda lib: lib.set_autocast_dtype("cpu", lib.device("cpu")),
    "autocast_dtype_device": lambda lib: lib.autocast("cpu", dtype=lib.device("cpu")).__enter__(),
    "legacy_dtype_device": lambda lib: lib.set_autocast_cpu_dtype(lib.device("cpu")),
    "legacy_enabled_device": lambda lib: lib.set_autocast_cpu_enabled(lib.device("cpu")),
}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("case", _AUTOCAST_ARGUMENTS, ids=str)
def test_autocast_refusals_name_torch_types(case):
    assert raised(tg, _AUTOCAST_ARGUMENTS[case]) == raised(torch, _AUTOCAST_ARGUMENTS[case])
    assert raised(torch, _AUTOCAST_ARGUMENTS[case]) is not None
