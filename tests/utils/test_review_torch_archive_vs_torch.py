"""Review of ``tracegrad.load`` of PyTorch's files: conjugate/negative tensors in legacy files, whole modules whose
classes tracegrad keeps in other modules, and truncated or concatenated zip archives (torch's errors)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

import tracegrad as tg

_LEGACY = {"_use_new_zipfile_serialization": False}


def _saved(obj, **save_kwargs) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer, **save_kwargs)
    return buffer.getvalue()


def _error(lib, data: bytes) -> tuple[type, str]:
    with pytest.raises(Exception) as caught:
        lib.load(io.BytesIO(data))
    return caught.type, str(caught.value)


@pytest.mark.parametrize("save_kwargs", [{}, _LEGACY], ids=["zip", "legacy"])
def test_conjugate_and_negative_bits_load_torch_values(save_kwargs) -> None:
    # (a legacy file's storages follow its pickle: the bits were applied to them before they were read)
    generator = torch.Generator().manual_seed(0)
    base = torch.randn(2, 3, dtype=torch.complex64, generator=generator)
    saved = [base, base.conj(), base.conj().t(), torch._neg_view(base)]
    data = _saved(saved, **save_kwargs)
    theirs = [t.resolve_conj().resolve_neg().numpy() for t in torch.load(io.BytesIO(data))]
    ours = [t.numpy() for t in tg.load(io.BytesIO(data))]
    for mine, expected in zip(ours, theirs, strict=True):
        assert mine.shape == expected.shape
        assert mine.tobytes() == np.ascontiguousarray(expected).tobytes()


@pytest.mark.parametrize("save_kwargs", [{}, _LEGACY], ids=["zip", "legacy"])
def test_whole_module_with_classes_in_other_modules(save_kwargs) -> None:
    # (torch.nn.modules.batchnorm.BatchNorm2d: tracegrad's is in nn.modules.normalization)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Embedding(3, 2))
    model[1].num_batches_tracked += 2
    data = _saved(model, **save_kwargs)
    ours = tg.load(io.BytesIO(data), weights_only=False)
    theirs = torch.load(io.BytesIO(data), weights_only=False)
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in theirs]
    assert isinstance(ours[1], tg.nn.BatchNorm2d) and isinstance(ours[2], tg.nn.Embedding)
    for (name, mine), (other, expected) in zip(ours.state_dict().items(), theirs.state_dict().items(), strict=True):
        assert name == other and str(mine.dtype) == str(expected.dtype)
        assert mine.numpy().tobytes() == expected.numpy().tobytes()


def test_missing_class_still_named() -> None:
    from tracegrad import _torch_archive

    with pytest.raises(Exception, match="tracegrad has no torch.nn.modules.nothing.Nowhere"):
        _torch_archive._tracegrad_global("torch.nn.modules.nothing", "Nowhere")


@pytest.mark.parametrize("length", [4, 10, 100, -30, -1])
def test_truncated_zip_archive_errors_as_torch(length) -> None:
    data = _saved({"a": torch.arange(20.0)})[:length]
    assert _error(tg, data) == _error(torch, data)


def test_zip_archive_followed_by_a_larger_one_is_refused_as_torch() -> None:
    # (zipfile finds the last end record: the second archive's tensor was loaded in place of the first's)
    data = _saved(torch.arange(6.0)) + _saved(torch.arange(100.0))
    assert _error(tg, data) == _error(torch, data)


def test_zip_archive_followed_by_other_bytes_loads() -> None:
    data = _saved(torch.arange(6.0)) + b"junk" * 10
    ours, theirs = tg.load(io.BytesIO(data)), torch.load(io.BytesIO(data))
    assert ours.tolist() == theirs.tolist()
