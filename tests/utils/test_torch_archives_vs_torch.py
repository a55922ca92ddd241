"""``tracegrad.load`` of files PyTorch wrote: its zip archive (``torch.save``'s default) and its legacy format
(``_use_new_zipfile_serialization=False``). Each file is written by the real torch and loaded by both libraries:
values bit for bit, dtypes, shapes, strides, offsets, storage sharing, classes, attributes, and what weights-only
loading refuses, in torch's words."""

from __future__ import annotations

import collections
import io
import pickle

import numpy as np
import pytest
import torch
from _lib import UnseekableStream

import tracegrad as tg

_FORMATS = {"zip": {}, "legacy": {"_use_new_zipfile_serialization": False}}


class _Thing:
    """A class of the program's own (weights-only loads refuse it unless allowed)."""

    def __init__(self, value=1) -> None:
        self.value = value

    def __eq__(self, other) -> bool:
        return type(other) is _Thing and other.value == self.value


def _torch_file(obj, form: str = "zip", **save_kwargs) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer, **_FORMATS[form], **save_kwargs)
    return buffer.getvalue()


def _loaded(lib, data: bytes, **load_kwargs):
    return lib.load(io.BytesIO(data), **load_kwargs)


def _describe(x, storages: dict):
    """What a loaded object is, comparable across libraries; ``storages`` numbers the storages met (sharing)."""
    if isinstance(x, (tg.Tensor, torch.Tensor)):
        storage = storages.setdefault(x.untyped_storage().data_ptr(), len(storages)) if x.numel() else None
        array = x.detach().resolve_conj().numpy() if isinstance(x, torch.Tensor) else x.detach().numpy()
        attributes = {k: v for k, v in vars(x).items() if not k.startswith("_")}
        return (type(x).__name__, str(x.dtype).split(".")[-1], tuple(x.shape), x.stride(), x.storage_offset(),
                x.requires_grad, x.is_leaf, storage, array.tobytes(), repr(attributes))
    if isinstance(x, (list, tuple, set)):
        return type(x).__name__, [_describe(v, storages) for v in x]
    if isinstance(x, dict):
        return type(x).__name__, {k: _describe(v, storages) for k, v in x.items()}, repr(vars(x)) \
            if hasattr(x, "__dict__") else None
    if isinstance(x, (tg.UntypedStorage, torch.UntypedStorage, tg.TypedStorage, torch.TypedStorage)):
        return type(x).__name__, x.tolist()
    return repr(x).replace("tracegrad", "torch")


def _same_load(obj, form: str = "zip", **load_kwargs) -> None:
    data = _torch_file(obj, form)
    ours, theirs = (_describe(_loaded(lib, data, **load_kwargs), {}) for lib in (tg, torch))
    assert ours == theirs


def _random_of(dtype: torch.dtype, shape=(3, 4)) -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    if dtype == torch.bool:
        return torch.rand(shape, generator=generator) > 0.5
    if dtype.is_floating_point or dtype.is_complex:
        values = torch.randn(shape, generator=generator, dtype=dtype)
        values.view(-1)[0] = float("nan")
        return values
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000), shape, generator=generator).to(dtype)


_DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool", "complex64",
           "complex128", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("form", list(_FORMATS))
@pytest.mark.parametrize("dtype", _DTYPES)
def test_every_dtype_bit_for_bit(dtype, form):
    """uint16/32/64 are saved as bytes (``UntypedStorage``) and rebuilt by ``_rebuild_tensor_v3`` with the dtype."""
    if form == "legacy" and dtype.startswith("uint") and dtype != "uint8":
        pytest.skip("torch cannot load the legacy files it writes of these (an UntypedStorage has no dtype)")
    x = _random_of(getattr(torch, dtype))
    _same_load({"x": x, "t": x.t(), "row": x[1], "tail": x.view(-1)[5:]}, form)


@pytest.mark.parametrize("form", list(_FORMATS))
@pytest.mark.parametrize("weights_only", [True, False])
def test_state_dict_with_tied_parameters_and_views(form, weights_only):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3))
    model[2].weight = torch.nn.Parameter(model[0].weight.t())  # (tied, transposed)
    base = torch.arange(24.0).reshape(2, 3, 4)
    _same_load({
        "model": model.state_dict(), "parameters": list(model.parameters()), "same": [base, base],
        "views": (base[1], base[:, 1:, ::2], base.permute(2, 0, 1), base.expand(2, 2, 3, 4)[1]),
        "channels_last": torch.arange(16.0).reshape(1, 4, 2, 2).contiguous(memory_format=torch.channels_last),
        "scalar": torch.tensor(2.5, requires_grad=True), "empty": (torch.zeros(0, 3), base[:, :0]),
    }, form, weights_only=weights_only)


@pytest.mark.parametrize("form", list(_FORMATS))
def test_parameters_attributes_and_containers(form):
    parameter = torch.nn.Parameter(torch.ones(2, 2))
    parameter.tag = "p"
    frozen = torch.nn.Parameter(torch.zeros(3), requires_grad=False)
    marked = torch.arange(3)
    marked.label = "marked"
    _same_load({
        "parameter": parameter, "frozen": frozen, "marked": marked, "grad": torch.ones(2, requires_grad=True),
        "nested": [(1, 2.5, "s", None, True), {"set": {1, 2}, "complex": 1 + 2j, "bytes": b"ab",
                                               "bytearray": bytearray(b"cd")}],
        "ordered": collections.OrderedDict(a=torch.ones(1), b=collections.Counter("aab")),
        "dtype": torch.float64, "device": torch.device("cpu"), "size": torch.Size([2, 3]),
    }, form)


def test_the_same_tensor_twice_loads_as_one_object():
    x = torch.ones(2)
    for lib in (tg, torch):
        loaded = _loaded(lib, _torch_file([x, x, torch.nn.Parameter(x)]))
        assert loaded[0] is loaded[1] and loaded[2] is not loaded[0]


def test_conjugate_views_show_torch_values():
    z = torch.tensor([1 + 2j, -3j], dtype=torch.complex64)
    data = _torch_file({"conj": z.conj(), "plain": z})
    ours, theirs = _loaded(tg, data), _loaded(torch, data)
    for key in ("conj", "plain"):
        assert ours[key].numpy().tobytes() == theirs[key].resolve_conj().numpy().tobytes()


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
@pytest.mark.parametrize("form", list(_FORMATS))
def test_storages_saved_alone(form):
    """torch loads every storage as a TypedStorage (of bytes where an UntypedStorage was saved)."""
    x = torch.arange(4.0)
    if form == "zip":  # (torch cannot load the legacy files it writes of an UntypedStorage)
        _same_load(x.untyped_storage(), form)
    _same_load([x.storage(), x], form)


@pytest.mark.parametrize("form", list(_FORMATS))
@pytest.mark.parametrize("make", [
    lambda: np.ones(2),
    lambda: _Thing(),
    lambda: torch.nn.Linear(2, 2),
    lambda: {"fn": print},
], ids=["numpy", "own class", "module", "builtin function"])
def test_weights_only_refuses_as_torch(make, form):
    data = _torch_file(make(), form)
    errors = []
    for lib in (tg, torch):
        with pytest.raises(pickle.UnpicklingError) as caught:
            _loaded(lib, data)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("form", list(_FORMATS))
def test_weights_only_allows_what_the_program_allows(form):
    data = _torch_file({"thing": _Thing(3), "x": torch.ones(2)}, form)
    with tg.serialization.safe_globals([_Thing]), torch.serialization.safe_globals([_Thing]):
        ours, theirs = _loaded(tg, data), _loaded(torch, data)
    assert ours["thing"] == theirs["thing"] == _Thing(3)
    assert ours["x"].tolist() == theirs["x"].tolist()


@pytest.mark.parametrize("form", list(_FORMATS))
def test_whole_module_loads_without_weights_only(form):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    ours = _loaded(tg, _torch_file(model, form), weights_only=False)
    assert isinstance(ours, tg.nn.Sequential) and isinstance(ours[0], tg.nn.Linear)
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(ours(tg.tensor(x)).detach().numpy(), model(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)


def test_state_dict_loads_into_a_tracegrad_model():
    torch.manual_seed(0)
    theirs = torch.nn.Linear(3, 2)
    ours = tg.nn.Linear(3, 2)
    ours.load_state_dict(_loaded(tg, _torch_file(theirs.state_dict())))
    assert ours.weight.detach().numpy().tobytes() == theirs.weight.detach().numpy().tobytes()
    assert ours.bias.requires_grad and isinstance(ours.bias, tg.nn.Parameter)


@pytest.mark.parametrize("map_location", [
    "cpu", lambda lib: lib.device("cpu"), lambda lib: {"cpu": "cpu"}, lambda lib: (lambda storage, loc: storage),
    lambda lib: (lambda storage, loc: None),
], ids=["str", "device", "dict", "function", "function returning None"])
@pytest.mark.parametrize("form", list(_FORMATS))
def test_map_location(map_location, form):
    x = torch.arange(6.0).reshape(2, 3)
    data = _torch_file({"x": x, "t": x.t()}, form)
    ours, theirs = ({k: _describe(v, {}) for k, v in _loaded(lib, data, map_location=map_location if isinstance(
        map_location, str) else map_location(lib)).items()} for lib in (tg, torch))
    assert ours == theirs


def test_map_location_function_sees_torch_locations():
    seen = {lib: [] for lib in (tg, torch)}
    data = _torch_file([torch.ones(2), torch.zeros(3, dtype=torch.int64)])
    for lib in (tg, torch):
        _loaded(lib, data, map_location=lambda storage, location, lib=lib: seen[lib].append(
            (location, storage.nbytes())))
    assert seen[tg] == seen[torch]


def test_mmap(tmp_path):
    path = tmp_path / "w.pt"
    x = _random_of(torch.float64, (5, 7))
    torch.save({"x": x, "t": x.t(), "i": torch.arange(3, dtype=torch.int16)}, path)
    ours, theirs = tg.load(path, mmap=True), torch.load(path, mmap=True)
    assert _describe(ours, {}) == _describe(theirs, {})
    ours["x"][0, 0] = 5.0  # (copy-on-write: the file keeps its bytes)
    assert ours["t"][0, 0].item() == 5.0
    assert torch.load(path)["x"][0, 0].isnan()


def test_mmap_refuses_legacy_files_as_torch(tmp_path):
    path = tmp_path / "w.pt"
    torch.save(torch.ones(2), path, _use_new_zipfile_serialization=False)
    errors = []
    for lib in (tg, torch):
        with pytest.raises(RuntimeError) as caught:
            lib.load(str(path), mmap=True)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("form", list(_FORMATS))
@pytest.mark.parametrize("dtype", ["float8_e4m3fn"])
def test_dtypes_tracegrad_lacks_are_refused_clearly(dtype, form):
    if form == "legacy":
        pytest.skip("torch cannot save float8 in its legacy format")
    data = _torch_file({"x": torch.zeros(2, dtype=getattr(torch, dtype))}, form)
    with pytest.raises(RuntimeError, match=f"holds torch.{dtype}, a dtype tracegrad does not have"):
        _loaded(tg, data)


def test_a_file_path_and_a_stream_that_cannot_seek(tmp_path):
    path = tmp_path / "w.pt"
    torch.save({"x": torch.arange(3)}, path)

    for form in _FORMATS:
        data = _torch_file({"x": torch.arange(3)}, form)
        assert tg.load(UnseekableStream(data, chunk=5))["x"].tolist() == [0, 1, 2]
    assert tg.load(str(path))["x"].tolist() == tg.load(path)["x"].tolist() == [0, 1, 2]


def test_loaded_tensors_are_ordinary_leaves():
    data = _torch_file({"w": torch.nn.Parameter(torch.ones(2, 2)), "x": torch.arange(4.0)})
    loaded = _loaded(tg, data)
    loss = (loaded["w"] * 3).sum()
    loss.backward()
    assert loaded["w"].grad.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    loaded["x"].add_(1)  # (a storage read from a record is writable)
    assert loaded["x"].tolist() == [1.0, 2.0, 3.0, 4.0]
