"""On a machine with CuPy and a GPU, tracegrad answers as PyTorch's CPU build until its CuPy back end serves
tensors (backend/cupy_backend.py says why), so programs that pick their device run on the CPU.

CI has no GPU, so these are skipped there; they run where the project's device tool lends a GPU machine.
Nothing here uses torch: torch on such a machine is a CUDA build, and its answers are not the CPU build's.
"""

from __future__ import annotations

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.backend import cupy_backend

pytestmark = pytest.mark.skipif(not cupy_backend.gpu_present(), reason="needs CuPy and a GPU")

NOT_COMPILED = "Torch not compiled with CUDA enabled"


def test_no_cuda_device_is_offered():
    assert tg.cuda.is_available() is False
    assert tg.cuda.device_count() == 0
    assert tg.accelerator.is_available() is False
    assert tg.accelerator.current_accelerator() is None


@pytest.mark.parametrize("make", [
    lambda: tg.ones(3, device="cuda"),
    lambda: tg.tensor([1.0, 2.0], device="cuda:0"),
    lambda: tg.zeros_like(tg.ones(2), device="cuda"),
    lambda: tg.ones(2).cuda(),
    lambda: tg.ones(2).to("cuda"),
    lambda: tg.nn.Linear(2, 2).to("cuda"),
    lambda: tg.cuda.current_device(),
], ids=["ones", "tensor", "zeros_like", "Tensor.cuda", "Tensor.to", "Module.to", "current_device"])
def test_cuda_tensors_are_refused_in_torchs_words(make):
    with pytest.raises(AssertionError, match=NOT_COMPILED):
        make()


def test_the_device_idiom_trains_on_the_cpu():
    """``device = "cuda" if is_available() else "cpu"``, then a few SGD steps: the loss falls, on the CPU."""
    device = "cuda" if tg.cuda.is_available() else "cpu"
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(4, 16), tg.nn.ReLU(), tg.nn.Linear(16, 3)).to(device)
    optimizer = tg.optim.SGD(model.parameters(), lr=0.5)
    x = tg.randn(64, 4, device=device)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = tg.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert all(p.device.type == "cpu" for p in model.parameters())
    assert isinstance(model[0].weight.grad.numpy(), np.ndarray)
    assert losses[-1] < 0.5 * losses[0]
