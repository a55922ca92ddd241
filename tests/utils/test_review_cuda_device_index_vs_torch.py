"""The device argument of torch.cuda's per-device queries (get_device_name, get_device_capability), read as torch's
``torch.cuda._utils._get_device_index(device, optional=True)`` reads it: an int as it is, ``"cuda:1"`` or
``torch.device("cuda", 1)`` by its index, another device type refused. (Before, a device name such as ``"cuda:0"``
reached ``int()`` and a CPU device read as GPU 0; only a machine with a GPU gets that far, so the reading itself is
compared here, where the index is explicit and no GPU is asked for the current one.)"""

from __future__ import annotations

import pytest
from _lib import tg, torch
from torch.cuda._utils import _get_device_index


def _outcome(fn):
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 - the error is the result compared
        return type(error).__name__, str(error)


@pytest.mark.parametrize("make", [
    lambda lib: 0, lambda lib: 1, lambda lib: -1, lambda lib: True, lambda lib: "cuda:0", lambda lib: "cuda:3",
    lambda lib: lib.device("cuda", 2), lambda lib: "cpu", lambda lib: lib.device("cpu"), lambda lib: "meta",
    lambda lib: "x", lambda lib: "cuda:-1",
])
def test_device_index_of_a_cuda_query_argument(make):
    assert _outcome(lambda: tg.cuda._device_index(make(tg))) == \
        _outcome(lambda: _get_device_index(make(torch), optional=True))


@pytest.mark.parametrize("name", ["get_device_name", "get_device_capability"])
@pytest.mark.parametrize("device", [None, 0, "cuda:0", "cpu"])
def test_per_device_queries_without_a_gpu(name, device):
    if torch.cuda.is_available() or tg.cuda.is_available():
        pytest.skip("the oracle is PyTorch's CPU build on a machine without a GPU")
    assert _outcome(lambda: getattr(tg.cuda, name)(device)) == _outcome(lambda: getattr(torch.cuda, name)(device))
