"""Review of the seventeenth stop's storage commit (9065033): an empty tensor's ``data_ptr()`` is 0 as torch's,
whether or not its storage holds bytes (an empty slice or narrow of a non-empty tensor)."""

import pytest
import torch

import tracegrad


def _cases(lib):
    x = lib.arange(12.0).view(3, 4)
    return {
        "rows past the end": x[3:],
        "no columns": x[:, :0],
        "middle empty": x[1:1],
        "narrow": x.narrow(1, 2, 0),
        "empty": lib.empty(2, 0),
        "expand of empty": lib.empty(0, 1).expand(0, 3),
    }


@pytest.mark.parametrize("name", list(_cases(torch)))
def test_empty_tensor_data_ptr_is_zero_as_torch(name):
    ours, theirs = _cases(tracegrad)[name], _cases(torch)[name]
    assert theirs.data_ptr() == 0
    assert ours.data_ptr() == theirs.data_ptr()
    # (the storage keeps its memory: its pointer is the base tensor's, as torch's)
    assert (ours.untyped_storage().nbytes() > 0) == (theirs.untyped_storage().nbytes() > 0)


def test_non_empty_views_keep_their_address():
    x = tracegrad.arange(12.0).view(3, 4)
    assert x[1].data_ptr() - x.data_ptr() == 16
    assert x[2:].data_ptr() - x.untyped_storage().data_ptr() == 32


def _set_by_name(lib, how):
    a = lib.arange(6.0)
    if how == "tensor":
        return lib.empty(0).set_(a, storage_offset=1, size=(2,), stride=(1,))
    if how == "storage":
        return lib.empty(0).set_(a.untyped_storage(), storage_offset=2, size=(2, 2), stride=(1, 2))
    if how == "offset positional":
        return lib.empty(0).set_(a, 1, size=(2, 2))
    return lib.empty(0).set_(source=a.untyped_storage(), storage_offset=0, size=(3,), stride=(2,))


@pytest.mark.parametrize("how", ["tensor", "storage", "offset positional", "all named"])
def test_set_takes_offset_size_stride_by_name_as_torch(how):
    ours, theirs = _set_by_name(tracegrad, how), _set_by_name(torch, how)
    assert ours.tolist() == theirs.tolist()
    assert ours.stride() == theirs.stride() and ours.storage_offset() == theirs.storage_offset()
