"""``tracegrad.save`` writes PyTorch's zip archive: the real ``torch.load`` (weights-only or not) reads what tracegrad
saved, and ``tracegrad.load`` reads it back. Each object is built in both libraries and saved by each; every file
is loaded by torch and by tracegrad, and what loads is compared with what torch's own file gives: values bit for
bit, dtypes, shapes, strides, offsets, storage sharing, classes, ``requires_grad`` and attributes. (Before, tracegrad
wrote a format of its own, which ``torch.load`` refused.)"""

from __future__ import annotations

import collections
import io
import warnings
import zipfile

import numpy as np
import pytest
import torch

import tracegrad as tg

LIBS = (tg, torch)


def _describe(x, storages: dict):
    """What a loaded object is, comparable across libraries; ``storages`` numbers the storages met (sharing)."""
    if isinstance(x, (tg.Tensor, torch.Tensor)):
        storage = storages.setdefault(x.untyped_storage().data_ptr(), len(storages)) if x.numel() else None
        attributes = {k: repr(v) for k, v in vars(x).items() if not k.startswith("_")}
        return (type(x).__name__, str(x.dtype).split(".")[-1], tuple(x.shape), x.stride(), x.storage_offset(),
                x.requires_grad, x.is_leaf, storage, x.detach().numpy().tobytes(), attributes)
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [_describe(v, storages) for v in x]
    if isinstance(x, dict):
        return type(x).__name__, {k: _describe(v, storages) for k, v in x.items()}, \
            repr(getattr(x, "_metadata", None))
    return type(x).__name__, repr(x).replace("tracegrad", "torch")


def _saved(lib, obj, **save_kwargs) -> bytes:
    buffer = io.BytesIO()
    lib.save(obj, buffer, **save_kwargs)
    return buffer.getvalue()


def _loads(data: bytes) -> dict:
    """``data`` as each loader reads it: torch weights-only and not, tracegrad weights-only and not."""
    return {f"{lib.__name__} weights_only={weights_only}":
            _describe(lib.load(io.BytesIO(data), weights_only=weights_only), {})
            for lib in LIBS for weights_only in (True, False)}


def _assert_saved_as_torch_saves(make, **save_kwargs) -> None:
    """``make(lib)``'s object saved by tracegrad loads, in each loader, as torch's saved by torch."""
    ours, theirs = _loads(_saved(tg, make(tg), **save_kwargs)), _loads(_saved(torch, make(torch), **save_kwargs))
    assert ours == theirs


# ---- objects built the same way in both libraries ---------------------------------------------------------------

def _filled(lib, module):
    """``module`` with every parameter and floating buffer set to distinct values (no random numbers)."""
    with lib.no_grad():
        for i, tensor in enumerate([*module.parameters(), *module.buffers()]):
            if tensor.dtype.is_floating_point:
                tensor.copy_(lib.arange(tensor.numel(), dtype=tensor.dtype).reshape(tensor.shape) / 7 + i)
    return module


def _model(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(),
                          nn.Linear(3 * 4 * 4, 5))
    _filled(lib, model)
    model[1].num_batches_tracked.add_(3)  # (an int64 buffer)
    return model


def _optimizer_state(lib, optimizer: str):
    model = _filled(lib, lib.nn.Linear(3, 2))
    opt = {"sgd": lambda p: lib.optim.SGD(p, lr=0.1, momentum=0.9), "adam": lambda p: lib.optim.Adam(p, lr=0.01)}[
        optimizer](model.parameters())
    for i, p in enumerate(model.parameters()):
        p.grad = lib.arange(p.numel(), dtype=p.dtype).reshape(p.shape) - i
    opt.step()
    return opt.state_dict()


def _tensors(lib):
    base = lib.arange(24.).reshape(2, 3, 4)
    channels_last = lib.arange(2 * 3 * 2 * 2.).reshape(2, 3, 2, 2).contiguous(memory_format=lib.channels_last)
    return {
        "zero_dim": lib.tensor(3.5), "empty": lib.zeros(0, 3), "empty_view": base[:, 1:1],
        "base": base, "transposed": base.transpose(0, 2), "sliced": base[:, 1:, ::2], "row": base[1, 2],
        "channels_last": channels_last, "complex": lib.tensor([1 + 2j, -3.5j], dtype=lib.complex128),
        "bool": lib.tensor([True, False, True]), "expanded": lib.tensor([1., 2.]).expand(3, 2),
    }


def _dtype_tensor(lib, name: str):
    values = np.array([0, 1, 5, 127], dtype=np.dtype("?" if name == "bool" else name))
    return lib.tensor(values) if name.startswith("uint") and name != "uint8" else lib.from_numpy(values)


def _parameters(lib):
    frozen = lib.nn.Parameter(lib.ones(2), requires_grad=False)
    trained = lib.nn.Parameter(lib.tensor([[1., -2.], [3., 4.]]))
    trained.label = "marked"
    tensor = lib.tensor([1., 2.], requires_grad=True)
    tensor.note = 7
    return {"frozen": frozen, "trained": trained, "tensor": tensor, "view_of_trained": trained.data[1]}


def _nested(lib):
    shared = lib.arange(5.)
    return collections.OrderedDict(
        epoch=3, loss=0.25, name="run", none=None, flags=[True, False], pair=(shared, shared[2:]),
        inner={"dtype": lib.float16, "device": lib.device("cpu"), "size": lib.Size([2, 3]), "n": lib.tensor(7)},
        values={1.5, 2}, text=b"bytes", number=1 + 2j)


# ---- tests ------------------------------------------------------------------------------------------------------

def test_a_model_state_dict_loads_in_torch_as_torch_saved_it():
    """Linear, Conv2d and BatchNorm2d (int64 num_batches_tracked), with the state dict's ``_metadata``."""
    _assert_saved_as_torch_saves(lambda lib: _model(lib).state_dict())


def test_a_model_state_dict_loads_into_a_torch_model():
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.BatchNorm2d(3), torch.nn.ReLU(),
                                torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 5))
    model.load_state_dict(torch.load(io.BytesIO(_saved(tg, _model(tg).state_dict()))))
    expected = _model(torch).state_dict()
    for name, value in model.state_dict().items():
        assert torch.equal(value, expected[name]), name


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_an_optimizer_state_dict_loads_in_torch_as_torch_saved_it(optimizer):
    _assert_saved_as_torch_saves(lambda lib: _optimizer_state(lib, optimizer))


@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                                  "float64", "complex64", "complex128", "uint16", "uint32", "uint64"])
def test_every_dtype_loads_in_torch_as_torch_saved_it(name):
    """torch's older dtypes name a typed storage class (torch.ShortStorage); uint16/32/64 an UntypedStorage."""
    _assert_saved_as_torch_saves(lambda lib: {"t": _dtype_tensor(lib, name), "dtype": getattr(lib, name)})


def test_layouts_views_and_shared_storages_load_in_torch_as_torch_saved_them():
    _assert_saved_as_torch_saves(_tensors)


def test_parameters_and_attributes_load_in_torch_as_torch_saved_them():
    _assert_saved_as_torch_saves(_parameters)


def test_nested_containers_load_in_torch_as_torch_saved_them():
    _assert_saved_as_torch_saves(_nested)


_MAKERS = {"model": lambda lib: _model(lib).state_dict(), "adam": lambda lib: _optimizer_state(lib, "adam"),
           "tensors": _tensors, "parameters": _parameters, "nested": _nested,
           "dtypes": lambda lib: [_dtype_tensor(lib, name) for name in (
               "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64",
               "complex128")]}


@pytest.mark.parametrize("make", _MAKERS.values(), ids=_MAKERS.keys())
def test_the_legacy_format_loads_in_torch_as_torch_saved_it(make):
    """``_use_new_zipfile_serialization=False``: torch's pickles and raw storages (tracegrad wrote a single pickle
    of its own, which torch refused). (torch cannot load uint16/32/64 in this format, from its own files too.)"""
    _assert_saved_as_torch_saves(make, _use_new_zipfile_serialization=False)


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_pickle_protocols_load_in_torch(protocol):
    """(torch's weights-only loads refuse protocol 4's frames, in its own files too.)"""
    def loaded(data: bytes) -> list:
        return [_describe(torch.load(io.BytesIO(data), weights_only=False), {}),
                _describe(tg.load(io.BytesIO(data), weights_only=False), {}),
                _describe(tg.load(io.BytesIO(data)), {}) if protocol == 2 else None]

    ours = loaded(_saved(tg, _tensors(tg), pickle_protocol=protocol))
    assert ours == loaded(_saved(torch, _tensors(torch), pickle_protocol=protocol))


@pytest.mark.parametrize("as_str", [True, False], ids=["str", "Path"])
def test_a_path_loads_in_torch_and_memory_mapped(tmp_path, as_str):
    path = tmp_path / "model.pt"
    tg.save(_tensors(tg), str(path) if as_str else path)
    theirs = _saved(torch, _tensors(torch))
    assert _describe(torch.load(path), {}) == _describe(torch.load(io.BytesIO(theirs)), {})
    assert _describe(torch.load(path, mmap=True), {}) == _describe(torch.load(io.BytesIO(theirs)), {})
    assert _describe(tg.load(path, mmap=True), {}) == _describe(tg.load(io.BytesIO(theirs)), {})


def test_the_archive_holds_torch_records_at_torch_offsets():
    """The same records, in the same order, at the same (64-byte aligned) offsets, and the same pickle."""
    def records(lib):
        archive = zipfile.ZipFile(io.BytesIO(_saved(lib, _model(lib).state_dict())))
        return [(info.filename, info.header_offset, info.file_size) for info in archive.infolist()], \
            {name: archive.read(name) for name in archive.namelist() if "serialization_id" not in name}

    assert records(tg) == records(torch)


def test_a_disabled_byteorder_record_comes_last_as_torch_writes_it():
    """torch's archive writer adds the record at the end where ``_save`` left it out."""
    names = [zipfile.ZipFile(io.BytesIO(_saved(lib, lib.ones(2), _disable_byteorder_record=True))).namelist()
             for lib in LIBS]
    assert names[0] == names[1]


def test_views_of_one_storage_as_different_dtypes_are_refused_as_torch_refuses_them():
    messages = []
    for lib in LIBS:
        x = lib.zeros(4)
        with pytest.raises(RuntimeError) as error:
            lib.save([x, x.view(lib.int32)], io.BytesIO())
        messages.append(str(error.value))
    assert messages[0] == messages[1]


# A file tracegrad wrote before it wrote torch's archive ({"w": arange(6.).reshape(2, 3), "col": its column 1,
# "p": Parameter([1.5, -2.0]), "n": tensor(7)}): it still loads.
_OLDER_FILE = bytes.fromhex(
    "007472616365677261642d73617665018901000000000000c00000000000000080027d710028580100000077710163747261636567726164"
    "2e73657269616c697a6174696f6e0a5f6c6f61645f74656e736f720a71022828580700000073746f7261676571034b004b004b1863747261"
    "6365677261642e6261636b656e642e6474797065730a5f6c6f6f6b75705f62795f6e616d650a71045807000000666c6f6174333271058571"
    "06527107580300000063707571087471095168074b004b024b0386710a4b0c4b0486710b897d710c74710d52710e5803000000636f6c710f"
    "6802282868034b004b004b18680768087471105168074b044b028571114b0c857112897d7113747114527115580100000070711663747261"
    "6365677261642e73657269616c697a6174696f6e0a5f6c6f61645f706172616d657465720a7117282868034b014b404b0868076808747118"
    "5168074b004b028571194b0485711a887d711b74711c52711d58010000006e711e6802282868034b024b804b0868045805000000696e7436"
    "34711f85712052712168087471225168214b002929897d7123747124527125752e0000000000000000000000000000000000000000000000"
    "000000000000803f0000004000004040000080400000a0400000000000000000000000000000000000000000000000000000000000000000"
    "00000000000000000000c03f000000c000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000007000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000")


def test_files_in_tracegrads_older_format_still_load():
    loaded = tg.load(io.BytesIO(_OLDER_FILE))
    assert loaded["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert loaded["col"].tolist() == [1.0, 4.0] and loaded["col"].untyped_storage().data_ptr() == \
        loaded["w"].untyped_storage().data_ptr()
    assert isinstance(loaded["p"], tg.nn.Parameter) and loaded["p"].tolist() == [1.5, -2.0]
    assert loaded["n"].dtype == tg.int64 and loaded["n"].item() == 7


def test_a_cut_archive_raises_torchs_error():
    messages = []
    for lib in LIBS:
        data = _saved(lib, {"w": lib.arange(100.)})
        with pytest.raises(RuntimeError) as error:
            lib.load(io.BytesIO(data[:len(data) // 2]))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


# ---- review: what the first version of the writer got wrong ---------------------------------------------------

def test_empty_tensors_load_in_torch_with_their_strides():
    """NumPy gives an empty 1-d array a stride of 0, which ``Tensor.stride()`` reads as 1 (torch's): the file
    must say 1 too (it said 0, and torch loaded ``zeros(0)`` with stride (0,))."""
    _assert_saved_as_torch_saves(lambda lib: [lib.zeros(0), lib.tensor([]), lib.zeros(0, dtype=lib.int64),
                                              lib.arange(0.), lib.empty(0, 2)])
    _assert_saved_as_torch_saves(lambda lib: [lib.zeros(0), lib.tensor([])], _use_new_zipfile_serialization=False)


def test_an_archive_of_many_records_is_about_the_size_of_torchs():
    """The padding aligning a record is in its local header only, as torch's: repeated in the central directory
    it made a state dict of 4000 small tensors 260 kB (19%) larger than torch's."""
    sizes = [len(_saved(lib, {f"w{i}": lib.arange(16.) + i for i in range(500)})) for lib in LIBS]
    assert abs(sizes[0] - sizes[1]) < 256


def _storages(lib):
    x = lib.arange(3.)
    return [x, x.storage(), lib.arange(4, dtype=lib.uint8).untyped_storage()]


def _describe_storage(s) -> tuple:
    return type(s).__name__, str(getattr(s, "dtype", None)).split(".")[-1], s.tolist()


@pytest.mark.parametrize("new_format", [True, False], ids=["zip", "legacy"])
def test_storages_saved_themselves_load_as_torch_saved_them(new_format):
    """A storage is a persistent id, as in torch's files (tracegrad pickled its own storage classes, which weights-only
    loads refused); an untyped storage loads as torch loads it: a TypedStorage of uint8 from an archive, an
    UntypedStorage from a legacy file."""
    def load(lib, data: bytes, weights_only: bool) -> list:
        try:
            return [_describe(x, {}) if i == 0 else _describe_storage(x)
                    for i, x in enumerate(lib.load(io.BytesIO(data), weights_only=weights_only))]
        except AttributeError as error:  # (torch's legacy loader fails on an UntypedStorage, its own files' too)
            return [lib.__name__, str(error)]

    def loaded(data: bytes) -> list:
        return [load(lib, data, weights_only) for lib in LIBS for weights_only in (True, False)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (TypedStorage is deprecated, in both)
        ours, theirs = (loaded(_saved(lib, _storages(lib), _use_new_zipfile_serialization=new_format))
                        for lib in LIBS)
        assert ours == theirs
