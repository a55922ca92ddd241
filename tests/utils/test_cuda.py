"""``tracegrad.cuda`` answers like PyTorch's CPU build where the GPU back end (CuPy + a GPU) is missing."""

from __future__ import annotations

import pytest
import torch

import tracegrad as tg


def test_cuda_queries_without_a_gpu():
    if torch.cuda.is_available():  # (tracegrad's own answers there: tests/utils/test_gpu_machine.py)
        pytest.skip("torch here is a CUDA build with a GPU; the oracle is PyTorch's CPU build")
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
