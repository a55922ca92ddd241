"""``nn.Module.to_empty`` as torch's: each parameter and buffer (the submodules' with ``recurse``) replaced by an
``empty_like`` on the device, the Parameter objects kept, their grads replaced alike; a device tracegrad lacks
refused as its tensors refuse it."""

from __future__ import annotations

import pytest
from _lib import tg, torch


def _model(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
    model[0].weight.grad = lib.ones(2, 3)
    return model


def _layout(t) -> tuple:
    return (tuple(t.shape), str(t.dtype), t.stride(), t.requires_grad, type(t).__name__, str(t.device))


def _after(lib, **kwargs) -> list:
    model = _model(lib)
    ids = {name: id(p) for name, p in model.named_parameters()}
    buffers = dict(model.named_buffers())
    returned = model.to_empty(**kwargs)
    return [returned is model,
            [(name, _layout(p), id(p) == ids[name]) for name, p in model.named_parameters()],
            [(name, _layout(b), b is buffers[name]) for name, b in model.named_buffers()],
            _layout(model[0].weight.grad)]


@pytest.mark.parametrize("kwargs", [{"device": "cpu"}, {"device": None}, {"device": "cpu", "recurse": False},
                                    {"device": torch.device("cpu")}], ids=str)
def test_to_empty(kwargs):
    ours = {k: (tg.device(v.type) if isinstance(v, torch.device) else v) for k, v in kwargs.items()}
    assert _after(tg, **ours) == _after(torch, **kwargs)


def test_to_empty_needs_its_device_keyword():
    for lib in (tg, torch):
        with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'device'"):
            lib.nn.Linear(2, 2).to_empty()
        with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
            lib.nn.Linear(2, 2).to_empty("cpu")
