"""``tracegrad.cuda`` answers like PyTorch's CPU build where the GPU back end (CuPy + a GPU) is missing."""

from __future__ import annotations

import pytest
import torch

import tracegrad as tg


def test_cuda_queries_without_a_gpu():
    if tg.cuda.is_available():
        pytest.skip("this machine has the GPU back end; these are the answers of a machine without it")
    assert tg.cuda.is_available() is torch.cuda.is_available() is False
    assert tg.cuda.device_count() == torch.cuda.device_count() == 0
    tg.cuda.manual_seed_all(0)  # ignored, as in torch
    torch.cuda.manual_seed_all(0)
    errors = []
    for lib in (tg, torch):
        with pytest.raises(AssertionError) as info:
            lib.cuda.current_device()
        errors.append(str(info.value))
    assert errors[0] == errors[1]
