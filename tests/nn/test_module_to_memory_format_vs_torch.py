"""``Module.to(memory_format=...)`` converts the 4-d and 5-d parameters and buffers, as torch's does (it was
ignored), alone or with a dtype."""

from __future__ import annotations

import pytest
import torch

import tracegrad as tg


def _layouts(lib, steps) -> list:
    model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Linear(4, 2))
    seen = []
    for kwargs in steps:
        kwargs = {k: getattr(lib, v) for k, v in kwargs.items()}
        dtype = kwargs.pop("dtype", None)
        assert (model.to(dtype, **kwargs) if dtype is not None else model.to(**kwargs)) is model
        seen.append([(name, t.stride(), str(t.dtype), type(t).__name__, t.requires_grad)
                     for name, t in [*model.named_parameters(), *model.named_buffers()]])
    return seen


@pytest.mark.parametrize("steps", [
    [{"memory_format": "channels_last"}],
    [{"memory_format": "channels_last"}, {"memory_format": "contiguous_format"}],
    [{"dtype": "float64", "memory_format": "channels_last"}],
    [{"memory_format": "preserve_format"}],
])
def test_module_to_memory_format_as_torch(steps):
    assert _layouts(tg, steps) == _layouts(torch, steps)


def test_module_to_channels_last_3d_and_refusal():
    for lib in (tg, torch):
        assert lib.nn.Conv3d(2, 3, 2).to(memory_format=lib.channels_last_3d).weight.stride() == (16, 1, 8, 4, 2)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        tg.nn.Conv3d(2, 3, 2).to(memory_format=tg.channels_last)
