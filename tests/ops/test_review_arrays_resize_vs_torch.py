"""Review of the NumPy-array refusals and of resize_ over the same storage (against torch):

- an ``out=`` tensor that must change shape is resized as torch's ``resize_output`` does, over its own storage from
  its offset (a larger buffer under it, or a view of it, sees the result), and a NumPy array's memory or a loaded
  tensor's cannot grow ('Trying to resize storage that is not resizable');
- ``resize_``/``resize_as_`` to another size and ``set_`` of an inference tensor outside inference mode are refused,
  at the version bump (after the write, as torch's);
- ``torch.load``'s tensors (zip records) are not resizable; the legacy constructor (``torch.Tensor(array)``) shares an
  array of its dtype, as ``as_tensor``;
- NumPy ints and arrays where torch's Python reads them: ``nn.LayerNorm(np.int64(3))`` (numbers.Integral),
  ``Tensor.split``/``Tensor.unflatten`` with an array (torch's parser refuses it, the truth of an array first), the
  distributions' parameters (torch takes Python's numbers only: np.float32 and NumPy ints are refused).
(Where torch's storage grows under a view too, NumPy cannot follow: those programs are not compared.)"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
from _lib import tg, torch


def _outcome(program, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = program(lib)
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            result = (type(exc).__name__, str(exc))
    return result, [str(w.message)[:80] for w in caught]


def _out_in_larger_buffer(start: int):
    def program(lib):
        buffer = lib.zeros(10)
        out = buffer[start:start + 2]
        lib.add(lib.ones(4), 1, out=out)
        return [buffer.tolist(), tuple(out.shape), out.stride(), out.storage_offset(), out._version]
    return program


def _out_from_numpy(size: int):
    def program(lib):
        array = np.zeros(size, np.float32)
        out = lib.from_numpy(array)
        lib.add(lib.ones(4), 1, out=out)
        return [out.tolist(), array.tolist()]
    return program


def _sum_out_shrinks_in_place(lib):
    out = lib.zeros(4)
    storage = out.untyped_storage()
    lib.sum(lib.ones(2, 2), 0, out=out)
    return [out.tolist(), out.untyped_storage().nbytes(), out.untyped_storage().data_ptr() == storage.data_ptr()]


def _mm_out_empty_view(lib):
    buffer = lib.zeros(6)
    lib.mm(lib.ones(2, 2), lib.ones(2, 3), out=buffer[:0])
    return buffer.tolist()


def _transposed_result_into_out(lib):
    buffer = lib.zeros(8)
    out = buffer[:2]
    lib.add(lib.ones(2, 3).t(), 1, out=out)
    return [tuple(out.shape), out.stride(), buffer.tolist()]


def _arange_out_in_buffer(lib):
    buffer = lib.zeros(8)
    out = buffer[:0]
    lib.arange(5.0, out=out)
    return buffer.tolist()


def _randn_out_from_numpy(lib):
    out = lib.from_numpy(np.zeros(2, np.float32))
    lib.randn(3, out=out)
    return tuple(out.shape)


def _nanmean_out_in_buffer(lib):
    buffer = lib.zeros(6)
    lib.nanmean(lib.ones(2, 3), 0, out=buffer[:1])
    return buffer.tolist()


def _loaded(resize_to: int, legacy: bool = False):
    def program(lib):
        stream = io.BytesIO()
        lib.save({"a": lib.arange(4.0)}, stream, _use_new_zipfile_serialization=not legacy)
        stream.seek(0)
        loaded = lib.load(stream)["a"]
        loaded.resize_(resize_to)
        return tuple(loaded.shape)
    return program


def _loaded_as_out(lib):
    stream = io.BytesIO()
    lib.save(lib.arange(2.0), stream)
    stream.seek(0)
    out = lib.load(stream)
    lib.add(lib.ones(4), 1, out=out)
    return out.tolist()


def _legacy_constructor(ctor: str, dtype):
    def program(lib):
        array = np.ones(2, dtype)
        t = getattr(lib, ctor)(array)
        array[0] = 5
        return [t.tolist(), str(t.dtype)]
    return program


def _layer_norm_numpy_int(lib):
    module = lib.nn.LayerNorm(np.int64(3))
    return [module(lib.ones(2, 3)).tolist(), tuple(module.weight.shape), repr(module)]


def _rms_norm_numpy_int(lib):
    return tuple(lib.nn.RMSNorm(np.int32(3)).weight.shape)


def _split(sizes, method: bool):
    def program(lib):
        t = lib.arange(6.0).reshape(2, 3)
        pieces = t.split(sizes(lib), 1) if method else lib.split(t, sizes(lib), 1)
        return [tuple(p.shape) for p in pieces]
    return program


def _unflatten(sizes):
    def program(lib):
        return tuple(lib.arange(6.0).reshape(2, 3).unflatten(1, sizes(lib)).shape)
    return program


def _distribution(name: str, value):
    def program(lib):
        dist = getattr(lib.distributions, name)(value, 1.0) if name in ("Normal", "Gamma") else \
            getattr(lib.distributions, name)(value)
        return [tuple(dist.batch_shape), str(dist.mean.dtype)]
    return program


def _inference_tensor_written(write):
    def program(lib):
        with lib.inference_mode():
            t = lib.ones(3)
        try:
            write(lib, t)
        except RuntimeError as exc:  # (torch refuses at the version bump, after the write)
            return tuple(t.shape), str(exc)
        return tuple(t.shape)
    return program


PROGRAMS = {
    "inference tensor resize_ outside the mode": _inference_tensor_written(lambda lib, t: t.resize_(2)),
    "inference tensor resize_ same size": _inference_tensor_written(lambda lib, t: t.resize_(3)),
    "inference tensor resize_as_": _inference_tensor_written(lambda lib, t: t.resize_as_(lib.ones(2))),
    "inference tensor set_": _inference_tensor_written(lambda lib, t: t.set_(lib.zeros(2))),
    "inference tensor set_ another dtype": _inference_tensor_written(lambda lib, t: t.set_(lib.zeros(2).long())),
    "inference tensor set_ itself": _inference_tensor_written(lambda lib, t: t.set_(t)),
    "inference tensor resize_ channels_last": _inference_tensor_written(
        lambda lib, t: t.resize_(1, 3, 1, 1).resize_(1, 3, 1, 1, memory_format=lib.channels_last)),
    "add out= in a larger buffer": _out_in_larger_buffer(0),
    "add out= at an offset in a larger buffer": _out_in_larger_buffer(2),
    "add out= from_numpy empty": _out_from_numpy(0),
    "add out= from_numpy smaller": _out_from_numpy(2),
    "add out= from_numpy larger": _out_from_numpy(6),
    "sum out= shrinks in place": _sum_out_shrinks_in_place,
    "mm out= an empty view of a buffer": _mm_out_empty_view,
    "add out= transposed result": _transposed_result_into_out,
    "arange out= an empty view of a buffer": _arange_out_in_buffer,
    "randn out= from_numpy": _randn_out_from_numpy,
    "nanmean out= a view of a buffer": _nanmean_out_in_buffer,
    "load then grow": _loaded(8),
    "load then shrink": _loaded(2),
    "legacy load then grow": _loaded(8, legacy=True),
    "load as out=": _loaded_as_out,
    "Tensor(float32 array)": _legacy_constructor("Tensor", np.float32),
    "Tensor(float64 array)": _legacy_constructor("Tensor", np.float64),
    "DoubleTensor(float64 array)": _legacy_constructor("DoubleTensor", np.float64),
    "LongTensor(int64 array)": _legacy_constructor("LongTensor", np.int64),
    "LayerNorm(np.int64)": _layer_norm_numpy_int,
    "RMSNorm(np.int32)": _rms_norm_numpy_int,
    "t.split(array)": _split(lambda lib: np.array([1, 2]), True),
    "torch.split(t, array)": _split(lambda lib: np.array([1, 2]), False),
    "t.split(tensor of sizes)": _split(lambda lib: lib.tensor([1, 2]), True),
    "t.split(range)": _split(lambda lib: range(1, 3), True),
    "t.split(np.int64)": _split(lambda lib: np.int64(1), True),
    "t.split(list of np.int64)": _split(lambda lib: [np.int64(1), np.int64(2)], True),
    "t.unflatten(array of two)": _unflatten(lambda lib: np.array([3, 1])),
    "t.unflatten(array of one)": _unflatten(lambda lib: np.array([3])),
    "t.unflatten(empty array)": _unflatten(lambda lib: np.array([], np.int64)),
    "t.unflatten(tensor)": _unflatten(lambda lib: lib.tensor([3, 1])),
    "t.unflatten(range)": _unflatten(lambda lib: range(3, 4)),
    "t.unflatten(tuple of np.int64)": _unflatten(lambda lib: (np.int64(3), np.int64(1))),
    **{f"{name}({type(value).__name__})": _distribution(name, value)
       for name in ("Normal", "Gamma", "Bernoulli", "Poisson", "Exponential")
       for value in (np.float32(0.5), np.int64(1), np.float64(0.5), np.bool_(True), 0.5, 1)},
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_as_in_torch(name: str) -> None:
    assert _outcome(PROGRAMS[name], tg) == _outcome(PROGRAMS[name], torch)
