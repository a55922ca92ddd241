"""Differences that the programs of ``tests/test_user_programs5_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``load_state_dict(sd, assign=True)`` records ``assign_to_params_buffers`` in the metadata of the state dict it
  is given (torch hands each module the caller's metadata dict, not a copy): the flag shows in ``sd._metadata``
  and a later plain ``load_state_dict(sd)`` of the same dict assigns too. tracegrad loaded from a copy.
- ``Module.to(torch.complex64)`` converted silently; torch warns that complex modules are a feature under
  development (on every such call, and not for real dtypes).
- ``torch.autocast("cpu", dtype=torch.float64)`` (or float32, int...) raised NotImplementedError; torch warns that
  CPU autocast only supports bfloat16/float16 and runs the region with autocast disabled.
- ``x[[idx0, idx1]]`` (a list read as a tuple of indices: one holding a list, tensor, slice, None or ``...``)
  indexed as torch does but silently; torch 2.13 warns that this reading is deprecated (reading and writing).
- ``PackedSequence`` had only ``to``/``double``/``float``: ``packed.cpu()`` (the usual step before decoding a
  batch), ``cuda()``, ``half``/``long``/``int``/``short``/``char``/``byte``, ``pin_memory`` and ``is_pinned``
  raised AttributeError.
- ``torch.cuda.empty_cache()``, ``memory_allocated()``/``memory_reserved()`` and their ``max_*``,
  ``memory_stats()``, ``get_device_name()``, ``get_device_capability()``, ``is_bf16_supported()`` and
  ``is_initialized()`` (the usual lines of a training script) raised AttributeError; without a GPU torch's CPU
  build answers None, 0, an empty dict, False, or raises "Torch not compiled with CUDA enabled".
- ``scatter(..., reduce="add")`` with a tensor source warned its deprecation on every call; torch warns once a
  process (TORCH_WARN_ONCE, shared by ``scatter`` and ``scatter_``), every time only under ``set_warn_always``.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch


def _metadata_and_identity_after_assign(lib):
    """The state dict's metadata after an ``assign=True`` load, and whether a later plain load assigned."""
    lib.manual_seed(0)
    source = lib.nn.Linear(2, 2)
    sd = source.state_dict()
    lib.nn.Linear(2, 2).load_state_dict(sd, assign=True)
    later = lib.nn.Linear(2, 2)
    later.load_state_dict(sd)
    return dict(sd._metadata[""]), later.weight is sd["weight"]


def test_assign_is_recorded_in_the_callers_metadata():
    assert _metadata_and_identity_after_assign(tg) == _metadata_and_identity_after_assign(torch)


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64"])
def test_module_to_complex_dtype_warns(dtype):
    def warned(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.Linear(1, 1).to(getattr(lib, dtype))
            lib.nn.Linear(1, 1).to(dtype=getattr(lib, dtype))
        return [(w.category, str(w.message)) for w in caught]

    assert warned(tg) == warned(torch)


@pytest.mark.parametrize("device_type", ["cpu", "mps"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_autocast_with_an_unsupported_dtype_warns_and_is_disabled(device_type, dtype):
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autocast(device_type, dtype=getattr(lib, dtype)):
                enabled = lib.is_autocast_enabled(device_type)
                product = (lib.ones(2, 2) @ lib.ones(2, 2)).dtype
        return enabled, str(product), [(w.category, str(w.message)) for w in caught]

    assert run(tg) == run(torch)


_SEQUENCE_KEYS = [
    [[0, 1], [1, 0]],
    [[0], [1]],
    [slice(None), 1],
    [None, 0],
    [Ellipsis, 0],
    [0, 1],  # (a plain index list: no warning)
    ([0, 1],),  # (a tuple: no warning)
]


@pytest.mark.parametrize("key", _SEQUENCE_KEYS, ids=str)
def test_a_list_read_as_a_tuple_of_indices_warns(key):
    def run(lib):
        x = lib.arange(24.0).view(2, 3, 4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            read = x[key].clone()
            x[key] = -1.0
        messages = [(w.category, str(w.message).split(" (Triggered internally at")[0]) for w in caught]
        return read.numpy().tolist(), x.numpy().tolist(), messages

    assert run(tg) == run(torch)


@pytest.mark.parametrize("method", ["cpu", "cuda", "pin_memory", "is_pinned", "double", "float", "half", "long", "int",
                                    "short", "char", "byte"])
def test_packed_sequence_conversions(method):
    def run(lib):
        packed = lib.nn.utils.rnn.pack_sequence([lib.ones(2, 1), lib.ones(1, 1)], enforce_sorted=False)
        try:
            out = getattr(packed, method)()
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return type(e).__name__, str(e).replace("tracegrad", "torch")
        if not isinstance(out, type(packed)):
            return out
        return (type(out).__name__, out is packed, str(out.data.dtype).replace("tracegrad", "torch"),
                out.data.numpy().tolist(), out.sorted_indices.tolist(), out.unsorted_indices.tolist())

    assert run(tg) == run(torch)


@pytest.mark.parametrize("name", ["is_initialized", "empty_cache", "memory_allocated", "memory_reserved",
                                  "max_memory_allocated", "max_memory_reserved", "memory_stats", "get_device_name",
                                  "get_device_capability", "is_bf16_supported"])
def test_cuda_memory_and_device_queries_without_a_gpu(name):
    if torch.cuda.is_available() or tg.cuda.is_available():
        pytest.skip("the oracle is PyTorch's CPU build on a machine without a GPU")

    def run(lib):
        try:
            return "ok", getattr(lib.cuda, name)()
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return type(e).__name__, str(e)

    assert run(tg) == run(torch)


def _scatter_reduce_warnings(lib, warn_always: bool) -> list:
    """How many deprecation warnings each of three legacy ``scatter(reduce=...)`` calls raises (after a first call,
    which may or may not warn depending on what this process ran before)."""
    def call(inplace: bool) -> int:
        target = lib.zeros(2, 4)
        args = (1, lib.tensor([[1, 1]]), lib.ones(1, 2))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (target.scatter_ if inplace else target.scatter)(*args, reduce="add")
        return len(caught)

    was = lib.is_warn_always_enabled()
    lib.set_warn_always(warn_always)
    try:
        call(False)
        return [call(False), call(True), call(False)]
    finally:
        lib.set_warn_always(was)


@pytest.mark.parametrize("warn_always", [False, True])
def test_legacy_scatter_reduce_warns_once_a_process(warn_always):
    assert _scatter_reduce_warnings(tg, warn_always) == _scatter_reduce_warnings(torch, warn_always)
