"""Differences that the programs of ``tests/test_user_programs23_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``torch._tensor_str.PRINT_OPTS`` printed as ``<torch._tensor_str.PrintOptions object at 0x...>`` and
  ``dataclasses.asdict`` refused it; torch's is the dataclass ``__PrinterOptions(precision=4, ...)``;
- ``torch.tensor([-1, 2**63])`` (ints, one beyond int64, beside others) gave a float tensor: NumPy reads such a list
  as floats; torch refuses it ("Overflow when unpacking long long");
- ``print(type(layer))`` named tracegrad's files where torch's differ (``torch.nn.modules.normalization.BatchNorm2d``
  for ``torch.nn.modules.batchnorm.BatchNorm2d``; padding and upsampling layers in ``pooling``, MultiheadAttention in
  ``attention``, the lazy layers in ``lazy``...), ``torch.nn.modules.batchnorm``/``instancenorm``/``padding``/
  ``upsampling`` did not exist, and ``Adafactor``/``Muon``/``set_multithreading_enabled`` named their files too.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle

import pytest
from _lib import tg, torch
from _tutorial_lib import repr_or_error


def _print_options_shown(lib) -> tuple:
    """PRINT_OPTS as a notebook shows it, before and after changing the options, and as ``asdict`` reads it."""
    options = lib._tensor_str.PRINT_OPTS
    shown = [repr(options)]
    lib.set_printoptions(precision=2, threshold=5, sci_mode=True)
    try:
        shown += [str(options), dataclasses.asdict(options), lib._tensor_str.get_printoptions()]
    finally:
        lib.set_printoptions(profile="default")
    return (*shown, type(options).__name__)


def test_print_opts_is_torchs_dataclass():
    assert _print_options_shown(tg) == _print_options_shown(torch)


@pytest.mark.parametrize("data", [
    [-1, 2**63], [1, 2**63], [[1], [2**63]], [[1, 2], [3, 2**63]], [2**63, -5, 7],
    [1.5, 2**63], [[0.5], [2**64]], [1, 2, 3], [[1, 2], [3, 4]], [1 + 1j, 2**63],
], ids=str)
def test_tensor_of_ints_beyond_int64(data):
    assert repr_or_error(lambda L: L.tensor(data), tg) == repr_or_error(lambda L: L.tensor(data), torch)


_NN_CLASSES = [
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm2d", "InstanceNorm1d",
    "InstanceNorm2d", "LazyInstanceNorm3d", "ZeroPad2d", "ConstantPad1d", "ReflectionPad2d", "ReplicationPad3d",
    "CircularPad2d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "MultiheadAttention", "MaxUnpool2d",
    "LazyLinear", "LazyConv2d", "LazyConvTranspose1d", "Container", "NLLLoss2d", "CrossMapLRN2d",
]


@pytest.mark.parametrize("name", _NN_CLASSES)
def test_layer_class_names_torchs_module(name):
    assert repr_or_error(lambda L: getattr(L.nn, name), tg) == repr_or_error(lambda L: getattr(L.nn, name), torch)


@pytest.mark.parametrize("path", ["optim.Adafactor", "optim.Muon", "autograd.set_multithreading_enabled"])
def test_other_classes_name_torchs_module(path):
    def read(lib):
        owner, name = path.split(".")
        return getattr(getattr(lib, owner), name)

    assert repr_or_error(read, tg) == repr_or_error(read, torch)


@pytest.mark.parametrize("module, name", [
    ("batchnorm", "_BatchNorm"), ("batchnorm", "_NormBase"), ("batchnorm", "SyncBatchNorm"),
    ("instancenorm", "_InstanceNorm"), ("padding", "_ReflectionPadNd"), ("padding", "ZeroPad1d"),
    ("upsampling", "Upsample"), ("activation", "MultiheadAttention"), ("pooling", "MaxUnpool1d"),
    ("linear", "LazyLinear"), ("conv", "LazyConv3d"),
])
def test_torchs_module_files_hold_the_classes(module, name):
    def imported(lib):
        return getattr(importlib.import_module(f"{lib.__name__}.nn.modules.{module}"), name)

    assert repr_or_error(imported, tg) == repr_or_error(imported, torch)
    assert imported(tg) is getattr(tg.nn, name, imported(tg))


def test_whole_model_pickles_through_the_new_homes():
    nn = tg.nn
    model = nn.Sequential(nn.BatchNorm2d(2), nn.ZeroPad2d(1), nn.Upsample(scale_factor=2), nn.InstanceNorm2d(2),
                          nn.MaxUnpool2d(2), nn.MultiheadAttention(4, 2))
    for copied in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        assert [type(m) for m in copied] == [type(m) for m in model]
