"""``torch.Generator(device=...)`` as torch's CPU build: a generator on the CPU only, other devices refused in
torch's words (the accelerator hooks' getNewGenerator, or 'not an accelerator'); before, any device was taken."""

from __future__ import annotations

import pytest
from _lib import raised, tg, torch

DEVICES = ["cpu", "cpu:0", None, "meta", "cuda", "cuda:0", "mps", "xpu", "xla", "hpu", "hip", "mtia", "privateuseone",
           "ipu", "lazy", "vulkan", "fpga", "maia", "bogus", 0]


def _outcome(lib, device, keyword: bool):
    if device not in (None, 0) and "cuda" in str(device) and lib is tg and tg.cuda.is_available():
        pytest.skip("tracegrad has CUDA here")
    made = []
    error = raised(lib, lambda lib: made.append(lib.Generator(device=device) if keyword else lib.Generator(device)))
    return error if error is not None else str(made[0].device)


@pytest.mark.parametrize("keyword", [True, False])
@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_generator_device(device, keyword):
    assert _outcome(tg, device, keyword) == _outcome(torch, device, keyword)


def test_generator_on_a_device_object():
    assert raised(tg, lambda lib: lib.Generator(lib.device("meta"))) == raised(
        torch, lambda lib: lib.Generator(lib.device("meta")))
