"""``copy.copy`` / ``copy.deepcopy`` / ``pickle`` / ``save`` / ``load`` fidelity, against torch: storage sharing
among copies of views, layouts, offsets, version counters, attributes set on tensors, what weights-only loading
refuses (NumPy objects), map_location forms, memory-mapped loading, file sizes, and files written by older
tracegrad."""

from __future__ import annotations

import collections
import copy
import io
import pickle
import warnings

import numpy as np
import pytest
import torch
from _lib import UnseekableStream, saved_and_loaded

import tracegrad as tg

LIBS = (tg, torch)


def _storage(t) -> int:
    return t.untyped_storage().data_ptr()


def _geometry(tensors: list) -> list:
    """Each tensor's strides, offset, storage size, values, version, and which of them share a storage."""
    first_of = {}
    return [(t.stride(), t.storage_offset(), t.untyped_storage().nbytes(), t.tolist(), t._version,
             first_of.setdefault(_storage(t), i)) for i, t in enumerate(tensors)]


# ---- copy.deepcopy ---------------------------------------------------------------------------------------------

def _views(lib) -> list:
    x = lib.arange(12.).reshape(3, 4)
    return [x, x[1:], x.t(), x[:, 1::2], x[2, 1:3], x.view(-1)[5:5]]


def test_deepcopy_of_views_keeps_one_storage_with_their_offsets_and_strides():
    """Each copy got a storage of its own, contiguous, at offset 0 (x[1:]'s offset 4 lost, x.t() re-laid out)."""
    ours, theirs = (_geometry(copy.deepcopy(_views(lib))) for lib in LIBS)
    assert ours == theirs


def test_deepcopy_of_one_view_copies_its_whole_storage():
    for lib in LIBS:
        view = lib.arange(12.).reshape(3, 4)[1:, 1::2]
        copied = copy.deepcopy(view)
        assert (copied.stride(), copied.storage_offset(), copied.untyped_storage().nbytes()) == ((4, 2), 5, 48)
        assert _storage(copied) != _storage(view) and copied._base is None


def test_deepcopy_of_a_module_keeps_a_buffer_and_its_view_together():
    for lib in LIBS:
        module = lib.nn.Linear(2, 2)
        module.register_buffer("table", lib.arange(4.))
        module.tail = module.table[1:]
        copied = copy.deepcopy(module)
        assert _storage(copied.tail) == _storage(copied.table) != _storage(module.table), lib.__name__
        assert copied.tail.storage_offset() == 1
        copied.table[1] = 100.0
        assert copied.tail[0].item() == 100.0 and module.tail[0].item() == 1.0


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last) * 2,
    lambda lib: lib.arange(6.).reshape(2, 3).t() * 1,
    lambda lib: lib.zeros(0, 3)[:, 1:],
    lambda lib: lib.nn.Parameter(lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)),
    lambda lib: lib.nn.Parameter(lib.arange(12.).reshape(3, 4).t()),
    lambda lib: lib.nn.Parameter(lib.arange(12.).reshape(3, 4)[:, ::2]),
], ids=["channels_last", "channels_last-result", "transposed-result", "empty-view", "parameter-channels_last",
        "parameter-transposed", "parameter-strided"])
def test_deepcopy_keeps_the_layout(make):
    """Copies came back C-ordered; a Parameter's clone now keeps a dense layout (preserve_format) as torch's."""
    ours, theirs = ((type(c).__name__, c.stride(), c.storage_offset(), c.tolist(), c._version)
                    for c in (copy.deepcopy(make(lib)) for lib in LIBS))
    assert ours == theirs


def _deepcopy_state(lib) -> tuple:
    leaf = lib.ones(2, requires_grad=True)
    leaf.grad = leaf.detach()[:]  # (a .grad sharing the tensor's storage: the copies share one too)
    leaf.note = ["a"]
    copied = copy.deepcopy(leaf)
    return (copied.requires_grad, copied.is_leaf, copied.grad.tolist(), _storage(copied.grad) == _storage(copied),
            copied.note, copied.note is leaf.note, copied._version)


def test_deepcopy_keeps_grad_and_copies_attributes_as_torch():
    """Attributes were shared, not deep-copied; the version was 0 (torch's copy is set_ onto a new storage)."""
    assert _deepcopy_state(tg) == _deepcopy_state(torch)


def test_deepcopy_of_a_non_leaf_is_refused_in_torch_words():
    messages = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as error:
            copy.deepcopy(lib.ones(2, requires_grad=True) * 2)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


# ---- copy.copy and pickle --------------------------------------------------------------------------------------

def _shallow_copies(lib) -> list:
    t = lib.ones(2)
    t.note = [1]
    param = lib.nn.Parameter(lib.ones(2))
    param.tag = "w"
    shallow = copy.copy(t)
    pickled = pickle.loads(pickle.dumps([t, param]))
    return [(shallow.note is t.note, _storage(shallow) == _storage(t), shallow._version),
            (pickled[0].note, pickled[0]._version, pickled[1].tag, type(pickled[1]).__name__)]


def test_copy_and_pickle_keep_attributes_set_on_tensors():
    """copy.copy raised AttributeError on the attribute; pickle dropped it."""
    assert _shallow_copies(tg) == _shallow_copies(torch)


def _unserialized_hook(grad):
    return grad


def test_pickling_a_tensor_with_a_hook_warns_as_torch():
    def warnings_of(lib):
        t = lib.ones(2, requires_grad=True)
        t.register_hook(_unserialized_hook)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pickle.dumps(t)
            saved_and_loaded(lib, t)
        return [str(w.message) for w in caught]

    assert warnings_of(tg) == warnings_of(torch) != []


# ---- save / load -----------------------------------------------------------------------------------------------

def test_loaded_views_keep_storage_offsets_and_sizes():
    for lib in LIBS:
        x = lib.arange(5.)
        loaded = saved_and_loaded(lib, [x[3:3], lib.zeros(2, 3)[:, 2:2], x[1:]])
        assert [(t.storage_offset(), t.stride(), t.untyped_storage().nbytes()) for t in loaded] == \
            [(3, (1,), 20), (2, (3, 1), 24), (1, (1,), 20)], lib.__name__


def _saved_state(lib) -> list:
    t = lib.ones(2)
    t.note = {"k": 1}
    param = lib.nn.Parameter(lib.ones(1))
    param.tag = "w"
    buffer = lib.nn.Buffer(lib.ones(1), persistent=False)
    loaded = [saved_and_loaded(lib, [t, param, buffer], weights_only=w) for w in (True, False)]
    return [(a.note, a._version, b.tag, b._version, type(b).__name__, c.persistent, c._is_buffer)
            for a, b, c in loaded]


def test_load_keeps_attributes_and_counts_a_version():
    """The attributes set on a tensor (a Buffer's marks too) were lost; the version was 0."""
    assert _saved_state(tg) == _saved_state(torch)


def test_saving_views_of_one_storage_as_two_dtypes_is_refused():
    for lib in LIBS:
        a = lib.arange(4.)
        with pytest.raises(RuntimeError, match="^Cannot save multiple tensors or storages that view the same data "
                                               "as different types$"):
            saved_and_loaded(lib, [a, a.view(lib.int32)])


def _weights_only_outcome(lib, obj, **kwargs) -> str:
    try:
        return repr(saved_and_loaded(lib, obj, **kwargs))
    except pickle.UnpicklingError as error:
        return str(error)


@pytest.mark.parametrize("obj", [np.arange(3.), np.zeros((2, 0), np.int32), np.float64(2.5), np.int64(3),
                                 np.bool_(True), np.dtype("float32"), {"w": np.ones(2)}],
                         ids=["array", "empty-array", "float64", "int64", "bool", "dtype", "in-a-dict"])
def test_numpy_objects_are_refused_by_weights_only_loads_as_torch(obj):
    """NumPy's arrays, scalars and dtypes loaded under weights_only=True; torch names the global they need."""
    assert _weights_only_outcome(tg, obj) == _weights_only_outcome(torch, obj)
    assert _weights_only_outcome(tg, obj, weights_only=False) == _weights_only_outcome(torch, obj,
                                                                                       weights_only=False)


def test_numpy_arrays_load_once_allowed():
    reconstruct = np.arange(3.).__reduce__()[0]
    with tg.serialization.safe_globals([reconstruct, np.ndarray, np.dtype, type(np.dtype(np.float64))]):
        assert saved_and_loaded(tg, np.arange(3.)).tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_files_hold_the_raw_bytes(protocol):
    """Protocol 2 wrote the bytes as latin-1 text: 1.5 times the data (torch's archive adds about 2 kB)."""
    data = tg.randn(100_000)
    buffer = io.BytesIO()
    tg.save({"w": data, "v": data[10:]}, buffer, pickle_protocol=protocol)
    assert data.numel() * 4 < len(buffer.getvalue()) < data.numel() * 4 + 4096
    buffer.seek(0)
    loaded = tg.load(buffer)
    assert tg.equal(loaded["w"], data) and _storage(loaded["v"]) == _storage(loaded["w"])


def test_checkpoints_following_one_another_in_a_stream_load_as_in_torch():
    """torch's reader finds an archive by the stream's last directory: the last checkpoint loads (after a seek to
    it), an earlier one is refused (tracegrad's own format read each in turn)."""
    outcomes = []
    for lib in LIBS:
        buffer = io.BytesIO()
        lib.save([lib.arange(3.), lib.zeros(0)], buffer)
        second_at = buffer.tell()
        lib.save({"a": lib.ones(2, dtype=lib.int16)}, buffer)
        buffer.seek(0)
        with pytest.raises(RuntimeError) as error:
            lib.load(buffer)
        buffer.seek(second_at)
        outcomes.append((str(error.value), str(lib.load(buffer)["a"].dtype).split(".")[-1]))
    assert outcomes[0] == outcomes[1]


def test_an_unseekable_stream_loads():
    """torch refuses an unseekable stream (io.UnsupportedOperation): tracegrad reads it into memory."""
    assert tg.load(UnseekableStream(_saved_bytes(tg, {"a": tg.arange(3.)})))["a"].tolist() == [0.0, 1.0, 2.0]


def test_memory_mapped_loads_copy_on_write(tmp_path):
    for lib in LIBS:
        path = tmp_path / f"{lib.__name__}.pt"
        x = lib.arange(6.)
        lib.save([x, x[2:]], path)
        whole, tail = lib.load(path, mmap=True)
        tail.add_(10)
        assert whole.tolist() == [0.0, 1.0, 12.0, 13.0, 14.0, 15.0], lib.__name__
        assert lib.load(path)[0].tolist() == x.tolist()


def _loaded_with(lib, map_location) -> str:
    try:
        loaded = saved_and_loaded(lib, {"a": lib.arange(3.)}, map_location=map_location)
        return f"{loaded['a'].device} {loaded['a'].tolist()}"
    except (RuntimeError, TypeError) as error:
        return f"{type(error).__name__}: {error}"


@pytest.mark.parametrize("map_location", [
    "cpu", "device-cpu", {"cpu": "cpu"}, {"cuda:0": "cpu"}, "callable", "callable-none", "cuda", "cuda:1",
    "device-cuda", {"cpu": "cuda"}, 3,
], ids=str)
def test_map_location_forms(map_location):
    """A dict mapping to a GPU was ignored; 'cuda' and a non-callable refused in other words and types."""
    if tg.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("the GPU forms load there")

    def form(lib):
        return {"device-cpu": lib.device("cpu"), "device-cuda": lib.device("cuda", 0),
                "callable": lambda storage, location: storage,
                "callable-none": lambda storage, location: None}.get(map_location, map_location) \
            if isinstance(map_location, str) else map_location

    assert _loaded_with(tg, form(tg)) == _loaded_with(torch, form(torch))


# A checkpoint written by tracegrad's single-pickle format (before the raw storages), protocol 2:
# {"x": arange(6.).reshape(2, 3), "v": x[:, 1:], "p": Parameter(ones(2)), "e": zeros(0)}.
def _old_file() -> bytes:
    return bytes.fromhex(_OLD_FILE_HEX)


_OLD_FILE_HEX = (
    "80027d7100285801000000787101637472616365677261642e5f74656e736f720a5f72656275696c640a7102637472616365677261"
    "642e5f74656e736f720a5f4172726179496e0a710328636e756d70792e5f636f72652e6d756c746961727261790a5f7265636f6e73"
    "74727563740a7104636e756d70790a6e6461727261790a71054b00857106635f636f646563730a656e636f64650a7107580100000062"
    "710858060000006c6174696e31710986710a52710b87710c52710d284b014b0685710e636e756d70790a64747970650a710f58020000"
    "00663471108988877111527112284b0358010000003c71134e4e4e4affffffff4affffffff4b0074711462896807581b000000000000"
    "000000c2803f00000040000040400000c280400000c2a04071156809867116527117747118624b004b024b038671194b0c4b0486711a"
    "681274711b52711c8986711d52711e580100000076711f6802680328680d4b044b024b028671204b0c4b048671216812747122527123"
    "898671245271255801000000707126637472616365677261642e6e6e2e706172616d657465720a5f72656275696c645f706172616d65"
    "7465720a7127680468054b00857128680b87712952712a284b014b0285712b6812896807580a0000000000c2803f0000c2803f712c68"
    "0986712d52712e74712f628886713052713158010000006571326802637472616365677261642e73657269616c697a6174696f6e0a5f"
    "656d7074790a71334b0085713468124b0085713587713652713789867138527139752e"
)


@pytest.mark.parametrize("weights_only", [True, False])
def test_files_written_by_older_tracegrad_still_load(weights_only):
    loaded = tg.load(io.BytesIO(_old_file()), weights_only=weights_only)
    assert loaded["x"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert loaded["v"].tolist() == [[1.0, 2.0], [4.0, 5.0]] and _storage(loaded["v"]) == _storage(loaded["x"])
    assert isinstance(loaded["p"], tg.nn.Parameter) and loaded["p"].requires_grad
    assert tuple(loaded["e"].shape) == (0,)


def test_the_legacy_format_is_written_on_request():
    """(tracegrad wrote its own single pickle there, which torch.load refused.)"""
    buffer = io.BytesIO()
    tg.save({"x": tg.arange(3.)}, buffer, _use_new_zipfile_serialization=False)
    for lib in (tg, torch):
        buffer.seek(0)
        assert lib.load(buffer)["x"].tolist() == [0.0, 1.0, 2.0]


# ---- modules and optimizers ------------------------------------------------------------------------------------

def _module_round_trip(lib) -> tuple:
    module = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
    module.register_forward_hook(_forward_hook)
    module.register_buffer("extra", lib.arange(3), persistent=False)
    loaded = saved_and_loaded(lib, module, weights_only=False)
    state = saved_and_loaded(lib, module.state_dict())
    return (type(loaded).__name__, len(loaded._forward_hooks), loaded.extra.tolist(),
            type(loaded[0].weight).__name__, list(state), type(state).__name__)


def _forward_hook(module, args, output):
    return None


def test_modules_with_buffers_and_hooks_round_trip_as_torch():
    assert _module_round_trip(tg) == _module_round_trip(torch)


@pytest.mark.parametrize("how", ["save", "deepcopy", "pickle"])
@pytest.mark.parametrize("name, options", [("Adam", {}), ("Adam", {"amsgrad": True}), ("SGD", {"momentum": 0.9})],
                         ids=["adam", "amsgrad", "sgd-momentum"])
def test_optimizer_state_round_trips_continue_bit_for_bit(name, options, how):
    """An optimizer reloaded from its state dict continues exactly as the one that kept running."""
    def setup():
        tg.manual_seed(0)
        model = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.BatchNorm1d(4))
        return model, getattr(tg.optim, name)(model.parameters(), lr=0.05, **options)

    x = tg.randn(5, 3)

    def step(model, optimizer):
        optimizer.zero_grad()
        (model(x) ** 2).sum().backward()
        optimizer.step()

    model, optimizer = setup()
    for _ in range(3):
        step(model, optimizer)
    checkpoint = {"model": model.state_dict(), "optim": optimizer.state_dict()}
    checkpoint = {"save": lambda c: saved_and_loaded(tg, c), "deepcopy": copy.deepcopy,
                  "pickle": lambda c: pickle.loads(pickle.dumps(c))}[how](checkpoint)
    fresh_model, fresh = setup()
    fresh_model.load_state_dict(checkpoint["model"])
    fresh.load_state_dict(checkpoint["optim"])
    for _ in range(3):
        step(model, optimizer)
        step(fresh_model, fresh)
    for ours, reference in zip(fresh_model.state_dict().values(), model.state_dict().values()):
        assert np.array_equal(ours.numpy(), reference.numpy())


@pytest.mark.parametrize("make", [
    lambda lib: [lib.ones(2, dtype=getattr(lib, d))[1:] for d in ("int64", "bool", "float16", "complex64", "int8")],
    lambda lib: {"z": lib.tensor(3.0, requires_grad=True), "e": lib.zeros(2, 0), "o": collections.OrderedDict(
        a=(lib.tensor(True), [lib.tensor(-1)]))},
], ids=["dtypes", "nested"])
@pytest.mark.parametrize("how", ["save", "deepcopy"])
def test_dtypes_and_nested_containers(make, how):
    def describe(x):
        if isinstance(x, (tg.Tensor, torch.Tensor)):
            return (str(x.dtype), x.stride(), x.storage_offset(), x.requires_grad, x._version, x.tolist())
        if isinstance(x, dict):
            return type(x).__name__, {k: describe(v) for k, v in x.items()}
        return type(x).__name__, [describe(v) for v in x]

    def copied(lib):
        obj = make(lib)
        return saved_and_loaded(lib, obj) if how == "save" else copy.deepcopy(obj)

    assert describe(copied(tg)) == describe(copied(torch))


@pytest.mark.parametrize("as_str", [True, False], ids=["str", "Path"])
def test_memory_mapping_a_file_in_the_legacy_format_is_refused(tmp_path, as_str):
    messages = []
    for lib in LIBS:
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save(lib.ones(2), path, _use_new_zipfile_serialization=False)
        with pytest.raises(RuntimeError) as error:
            lib.load(str(path) if as_str else path, mmap=True)
        messages.append(str(error.value).replace(str(path), "<path>"))
    assert messages[0] == messages[1]


# ---- review: corrupt files, short reads, descriptors of memory-mapped loads ---------------------------------------


def _saved_bytes(lib, obj) -> bytes:
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("fraction", [0.02, 0.1, 0.5, 0.9, 0.99])
def test_a_truncated_checkpoint_raises_runtime_error_as_torch(fraction):
    """torch: RuntimeError (its archive is cut); tracegrad had EOFError or UnpicklingError ('invalid load key')."""
    for lib in LIBS:
        data = _saved_bytes(lib, {"w": lib.arange(100.), "b": lib.ones(3)})
        with pytest.raises(RuntimeError):
            lib.load(io.BytesIO(data[:max(1, int(len(data) * fraction))]))


@pytest.mark.parametrize("field", ["pickle", "data"])
def test_a_header_claiming_more_than_the_file_holds_allocates_nothing(field):
    """A lying length was allocated before it was read (MemoryError for 1 TiB, or a huge empty buffer)."""
    from tracegrad import serialization

    storage = ("storage", 0, 0, 40, tg.float32, "cpu")
    data = _crafted(_Reduce(serialization._load_tensor, (storage, tg.float32, 0, (10,), (4,), False, {})),
                    np.arange(10, dtype=np.float32).tobytes() + bytes(24))
    assert tg.load(io.BytesIO(data)).tolist() == list(range(10))
    at = len(serialization._MAGIC) + (0 if field == "pickle" else 8)
    lying = data[:at] + (1 << 40).to_bytes(8, "little") + data[at + 8:]
    with pytest.raises(RuntimeError, match="might be corrupted"):
        tg.load(io.BytesIO(lying))


def test_a_raw_stream_returning_short_reads_loads():
    """The format test read the first bytes with one ``read``: a raw stream may return fewer."""
    stream = UnseekableStream(_saved_bytes(tg, {"a": tg.arange(4.)}), chunk=5)
    assert tg.load(stream)["a"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_memory_mapped_loads_hold_no_file_descriptor(tmp_path):
    """Python's mmap kept a duplicate descriptor per loaded file: a thousand live loads reached the usual limit."""
    import gc
    import os

    def descriptors() -> int:
        return len(os.listdir("/proc/self/fd"))

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd")
    for lib in LIBS:
        paths = [tmp_path / f"{lib.__name__}{i}.pt" for i in range(20)]
        for i, path in enumerate(paths):
            lib.save({"t": lib.full((5,), float(i))}, path)
        before = descriptors()
        loaded = [lib.load(path, mmap=True)["t"] for path in paths]
        assert descriptors() == before, lib.__name__
        os.remove(paths[3])
        loaded[3].add_(1)  # (a private map: still readable and writable with its file gone)
        assert [t[0].item() for t in loaded[2:5]] == [2.0, 4.0, 4.0]
        del loaded
        gc.collect()


def _stack_global(module: str, name: str) -> bytes:
    def text(s: str) -> bytes:
        return b"X" + len(s.encode()).to_bytes(4, "little") + s.encode()

    return text(module) + text(name) + b"\x93"  # (STACK_GLOBAL: protocol 4 resolves a dotted name)


def test_weights_only_refuses_attributes_reached_through_an_allowed_module():
    """Files in the older format allowed any name under ``numpy.dtypes`` (NumPy 2's dtype classes); a protocol-4
    dotted name went through that module's globals to ``eval``: weights_only=True ran the file's code."""
    payload = (b"\x80\x04" + _stack_global("numpy.dtypes", "_add_dtype_helper.__globals__.__class__.get")
               + b"(" + _stack_global("numpy.dtypes", "_add_dtype_helper.__globals__.get")
               + b"(X\x0c\x00\x00\x00__builtins__tR" + b"X\x04\x00\x00\x00evaltR" + b"(X\x03\x00\x00\x006*7tR.")
    assert tg.load(io.BytesIO(payload), weights_only=False) == 42  # (the payload is what it claims)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        tg.load(io.BytesIO(payload))
    for name in ("Float32DType.__init__", "__builtins__", "_add_dtype_helper"):
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
            tg.load(io.BytesIO(b"\x80\x04" + _stack_global("numpy.dtypes", name) + b"."))
    # (NumPy 2's dtype classes themselves still load, as older files pickled them)
    dtype_class = type(np.dtype(np.float32))
    assert tg.load(io.BytesIO(b"\x80\x04" + _stack_global("numpy.dtypes", dtype_class.__name__) + b".")) is dtype_class


@pytest.mark.parametrize("how", ["save", "pickle", "copy", "save-module"])
def test_a_parameter_with_a_backward_hook_is_saved_without_a_warning_as_torch(how):
    """torch warns for a Tensor's backward hooks only (Parameter.__reduce_ex__ reduces its ``.data``): saving a
    model whose weight has a gradient hook warned in tracegrad."""
    counts = []
    for lib in LIBS:
        model = lib.nn.Linear(2, 2)
        model.weight.register_hook(lambda grad: grad)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if how == "save":
                lib.save(model.weight, io.BytesIO())
            elif how == "pickle":
                pickle.dumps(model.weight)
            elif how == "copy":
                copy.copy(model.weight)
            else:
                lib.save(model, io.BytesIO())
        counts.append(sum("backward hook" in str(w.message) for w in caught))
    assert counts == [0, 0]


class _Reduce:
    def __init__(self, function, args) -> None:
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args


def _crafted(obj, data: bytes) -> bytes:
    """A file in the raw-storage format holding ``obj``'s pickle (storages named by their persistent ids)."""
    from tracegrad import serialization

    class Pickler(pickle.Pickler):
        def persistent_id(self, o):
            return o if isinstance(o, tuple) and o[:1] == ("storage",) else None

    buffer = io.BytesIO()
    Pickler(buffer, protocol=2).dump(obj)
    pickled = buffer.getvalue()
    head = serialization._MAGIC + len(pickled).to_bytes(8, "little") + len(data).to_bytes(8, "little") + pickled
    return head + bytes(serialization._aligned(len(head)) - len(head)) + data


@pytest.mark.parametrize("nbytes, shape, strides", [(0, (100_000,), (4,)), (0, (5,), (0,)), (40, (11,), (4,)),
                                                     (40, (2,), (-4,))], ids=str)
def test_a_view_outside_its_storage_is_refused_in_torch_words(nbytes, shape, strides):
    """NumPy's bounds test passes any view over a buffer of no bytes: a crafted file read 400 kB of the process's
    memory into a tensor (others gave NumPy's ValueError; torch's set_ gives RuntimeError)."""
    from tracegrad import serialization

    storage = ("storage", 0, 0, nbytes, tg.float32, "cpu")
    file = _crafted(_Reduce(serialization._load_tensor, (storage, tg.float32, 0, shape, strides, False, {})),
                    bytes(64 if nbytes else 0))
    with pytest.raises(RuntimeError, match="out of bounds for storage of size"):
        tg.load(io.BytesIO(file))


@pytest.mark.parametrize("case", ["empty-owner", "object-dtype", "empty-nonempty", "empty-object"])
def test_files_in_the_older_format_cannot_make_arrays_outside_memory(case):
    """The older format's globals (allowed for weights-only loads of its files) made arrays over any buffer: an
    object dtype read pointers from the file's bytes, a buffer of no bytes let NumPy read past it (a crash)."""
    from tracegrad import serialization
    from tracegrad._tensor import _ArrayIn, _rebuild

    array = {
        "empty-owner": _Reduce(_ArrayIn, (bytearray(), 0, (100_000,), (8,), np.dtype("f8"))),
        "object-dtype": _Reduce(_ArrayIn, (bytearray(b"A" * 8), 0, (1,), (8,), np.dtype("O"))),
        "empty-nonempty": _Reduce(serialization._empty, ((100_000,), np.dtype("f8"), (8,))),
        "empty-object": _Reduce(serialization._empty, ((3,), np.dtype("O"), (0,))),
    }[case]
    with pytest.raises(RuntimeError):
        tg.load(io.BytesIO(pickle.dumps(_Reduce(_rebuild, (array, False)), protocol=2)))
