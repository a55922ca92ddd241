"""``save``/``load`` round trips of empty and unusual tensors, each library through its own files (tracegrad's
format is its own pickle, so files do not cross): what loads, with which dtype, shape, strides, offset, storage
sharing, ``requires_grad`` and class, and what weights-only loading refuses, as torch."""

from __future__ import annotations

import collections
import io
import pickle

import pytest
import torch
from _lib import saved_and_loaded

import tracegrad as tg


def _describe(x):
    if isinstance(x, (tg.Tensor, torch.Tensor)):
        return (type(x).__name__, tuple(x.shape), str(x.dtype), x.stride(), x.storage_offset(), x.requires_grad,
                x.is_leaf, x.grad is None, x.detach().tolist())
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [_describe(v) for v in x]
    if isinstance(x, dict):
        return type(x).__name__, {k: _describe(v) for k, v in x.items()}
    return repr(x)


def _same_round_trip(make, **load_kwargs):
    ours, theirs = (_describe(saved_and_loaded(lib, make(lib), **load_kwargs)) for lib in (tg, torch))
    assert ours == theirs


def _shares(a, b) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16", "complex64"])
def test_empty_tensors(shape, dtype, weights_only):
    """NumPy pickled an empty array's no bytes through ``builtins.bytes``: weights-only loads refused them."""
    _same_round_trip(lambda lib: lib.zeros(*shape, dtype=getattr(lib, dtype)), weights_only=weights_only)


@pytest.mark.parametrize("make", [
    lambda lib: lib.zeros(0, 3, requires_grad=True),
    lambda lib: lib.nn.Parameter(lib.zeros(0, 3)),
    lambda lib: {"e": [lib.zeros(0), (lib.ones(1), {"n": lib.zeros(2, 0, dtype=lib.int8)})]},
], ids=["requires_grad", "parameter", "nested"])
@pytest.mark.parametrize("weights_only", [True, False])
def test_empty_tensors_in_other_forms(make, weights_only):
    _same_round_trip(make, weights_only=weights_only)


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(3.5),
    lambda lib: lib.tensor(-3),
    lambda lib: lib.tensor(True),
    lambda lib: lib.tensor(2.5, requires_grad=True),
    lambda lib: lib.arange(6.).reshape(2, 3).t(),
    lambda lib: lib.arange(10.)[1::3],
    lambda lib: lib.arange(12.).reshape(3, 4)[1:, 2:],
    lambda lib: lib.arange(4.).flip(0),
    lambda lib: lib.arange(3.).expand(2, 3),
    lambda lib: lib.arange(24.).reshape(1, 2, 3, 4).contiguous(memory_format=lib.channels_last),
    lambda lib: lib.nn.Parameter(lib.ones(2)),
    lambda lib: lib.nn.Parameter(lib.ones(2), requires_grad=False),
    lambda lib: [lib.ones(3, dtype=getattr(lib, d)) for d in ("float16", "int8", "bool", "complex64", "uint8",
                                                              "int16", "float64", "complex128")],
    lambda lib: {"a": [lib.ones(1), (lib.tensor(1), {"b": lib.Size([2, 3])})], "c": (1, 2.0, "s", None, True),
                 "d": collections.OrderedDict(x=lib.float16), "dev": lib.device("cpu")},
], ids=["0d", "0d-int", "0d-bool", "0d-requires-grad", "transposed", "step", "narrow", "flip", "expand",
        "channels_last", "parameter", "parameter-no-grad", "dtypes", "nested"])
@pytest.mark.parametrize("weights_only", [True, False])
def test_unusual_tensors(make, weights_only):
    _same_round_trip(make, weights_only=weights_only)


@pytest.mark.parametrize("make", [
    lambda lib: lib.arange(24.).reshape(1, 2, 3, 4).contiguous(memory_format=lib.channels_last) * 2,
    lambda lib: lib.arange(6.).reshape(2, 3).t() * 1,
    lambda lib: lib.arange(24.).reshape(2, 3, 4).permute(2, 0, 1) + 0,
], ids=["channels_last-result", "transposed-result", "permuted-result"])
def test_strides_of_results_that_kept_a_permuted_layout(make):
    """An elementwise result over a channels-last or permuted input owns memory in that order: NumPy pickled
    it C-ordered, so it loaded contiguous."""
    _same_round_trip(make)


def _tail(whole):
    return whole.detach()[..., 1:]


@pytest.mark.parametrize("make", [
    lambda lib: (lambda w: (w, _tail(w)))(lib.arange(12.).reshape(3, 4)),
    lambda lib: (lambda w: (w, _tail(w)))(lib.arange(24.).reshape(1, 2, 3, 4).contiguous(
        memory_format=lib.channels_last) * 1),
    lambda lib: (lambda w: (w, _tail(w)))(lib.arange(6.).reshape(2, 3).t() * 1),
    lambda lib: (lambda w: (w, _tail(w)))(lib.nn.Parameter(lib.ones(2, 3, 4, 5).contiguous(
        memory_format=lib.channels_last) * 1)),
    lambda lib: (lambda w: (w, w.unfold(0, 2, 2)))(lib.arange(6.)),
    lambda lib: (lambda w: (w, w.unfold(0, 3, 1)))(lib.arange(6.)),
    lambda lib: (lambda w: (w, w.as_strided((2, 2), (1, 2), 1)))(lib.arange(6.)),
], ids=["contiguous", "channels_last-result", "transposed-result", "channels_last-parameter", "unfold",
        "unfold-overlapping", "as_strided"])
def test_views_share_one_storage_after_load(make):
    """Views of a result in channels-last or transposed order, and unfold's views (over as_strided's
    DummyArray), loaded as copies, not as views of one storage."""
    for lib in (tg, torch):
        whole, part = make(lib)
        a, b, a_again = saved_and_loaded(lib, [whole, part, whole])
        assert a is a_again and _shares(a, b), lib.__name__
        assert (b.stride(), b.storage_offset(), b.tolist()) == (part.stride(), part.storage_offset(), part.tolist())
        first = tuple(0 for _ in range(b.dim()))
        with lib.no_grad():
            b[first] = 100.0
        assert (a == 100.0).sum().item() == 1  # (the write through the loaded view shows in the loaded whole)


def test_empty_view_keeps_its_strides():
    """An empty view's strides (NumPy's own empty arrays have zero strides, read as contiguous ones)."""
    for lib in (tg, torch):
        assert saved_and_loaded(lib, lib.zeros(0, 3)[:, 1:]).stride() == (3, 1), lib.__name__


def test_grad_is_not_saved():
    """torch saves a tensor's data and requires_grad, not its .grad: tracegrad's pickle carried it along."""
    for lib in (tg, torch):
        x = lib.ones(2, requires_grad=True)
        x.sum().backward()
        loaded = saved_and_loaded(lib, x)
        assert loaded.grad is None and loaded.requires_grad and loaded.is_leaf, lib.__name__


# torch 2.13's Adam state_dict after two steps on Sequential(Linear(3, 4), BatchNorm1d(4)), written out here:
# building a torch Adam imports torch._dynamo (a second or more), which would double this file's time.
_TORCH_ADAM_GROUP = {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0, "amsgrad": False,
                     "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                     "fused": None, "decoupled_weight_decay": False, "params": [0, 1, 2, 3]}
_TORCH_ADAM_STATE = {i: {"step": ((), "torch.float32", False), "exp_avg": (shape, "torch.float32", False),
                         "exp_avg_sq": (shape, "torch.float32", False)}
                     for i, shape in enumerate([(4, 3), (4,), (4,), (4,)])}


@pytest.mark.parametrize("weights_only", [True, False])
def test_adam_checkpoint_with_step_tensors(weights_only):
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.BatchNorm1d(4))
    opt = tg.optim.Adam(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        model(tg.ones(5, 3)).sum().backward()
        opt.step()
    loaded = saved_and_loaded(tg, {"model": model.state_dict(), "optim": opt.state_dict()}, weights_only=weights_only)
    assert list(loaded["model"]) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
                                     "1.running_var", "1.num_batches_tracked"]
    assert loaded["model"]["1.num_batches_tracked"].dtype == tg.int64
    assert loaded["optim"]["param_groups"] == [_TORCH_ADAM_GROUP]
    assert {i: {k: (tuple(v.shape), str(v.dtype), v.requires_grad) for k, v in state.items()}
            for i, state in loaded["optim"]["state"].items()} == _TORCH_ADAM_STATE
    assert all(state["step"].item() == 2.0 for state in loaded["optim"]["state"].values())
    fresh_model = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.BatchNorm1d(4))
    fresh_model.load_state_dict(loaded["model"])
    fresh = tg.optim.Adam(fresh_model.parameters(), lr=0.1)
    fresh.load_state_dict(loaded["optim"])
    for a, b in zip(fresh.state_dict()["state"].values(), opt.state_dict()["state"].values()):
        assert all(a[k].tolist() == b[k].tolist() for k in b)


@pytest.mark.parametrize("obj", [{1, 2}, 1 + 2j, bytearray(b"ab"), b"ab", collections.Counter("aab"),
                                 frozenset([1]), slice(1, 2), range(3), b""],
                         ids=["set", "complex", "bytearray", "bytes", "counter", "frozenset", "slice", "range",
                              "empty-bytes"])
def test_weights_only_builtins_as_torch(obj):
    """Protocol 2 names builtins ``__builtin__.set``...: the allow-list (in Python 3's names) refused sets and
    complex numbers and named the global ``__builtin__.x`` where torch says ``x``."""
    def outcome(lib):
        try:
            return repr(saved_and_loaded(lib, obj))
        except pickle.UnpicklingError as error:
            return str(error).split("WeightsUnpickler error: ")[1]

    assert outcome(tg) == outcome(torch)


def test_safe_globals_allow_a_builtin_by_its_python3_name():
    buffer = io.BytesIO()
    tg.save(frozenset([1]), buffer)
    with tg.serialization.safe_globals([frozenset]):
        buffer.seek(0)
        assert tg.load(buffer) == frozenset([1])


def test_map_location_and_mmap(tmp_path):
    path = tmp_path / "x.pt"
    for lib in (tg, torch):
        lib.save({"a": lib.ones(2), "e": lib.zeros(0, 2)}, path)
        for kwargs in ({"map_location": "cpu"}, {"map_location": lambda storage, loc: storage},
                       {"map_location": {"cpu": "cpu"}}, {"mmap": True}, {"mmap": True, "weights_only": False}):
            loaded = lib.load(path, **kwargs)
            assert loaded["a"].tolist() == [1.0, 1.0] and tuple(loaded["e"].shape) == (0, 2)
        buffer = io.BytesIO()
        lib.save(lib.ones(1), buffer)
        buffer.seek(0)
        with pytest.raises(ValueError, match="^f must be a file path in order to use the mmap argument$"):
            lib.load(buffer, mmap=True)
