"""logit on bfloat16: ATen's kernel rounds 1 - x and x / (1 - x) to bfloat16 before the log (bits vs torch)."""

import numpy as np
import pytest
import torch

import tracegrad as tg

_VALUES = np.random.RandomState(0).rand(100).astype(np.float32).tolist() + [0.0, 1.0, -0.5, 1.5, float("nan")]


@pytest.mark.parametrize("eps", [None, 1e-3, 0.2, 0.6, -1.0, 1e-6])
def test_bfloat16_logit_bits(eps):
    ours = tg.logit(tg.tensor(_VALUES, dtype=tg.bfloat16), eps)
    theirs = torch.logit(torch.tensor(_VALUES, dtype=torch.bfloat16), eps)
    assert ours.float().numpy().tobytes() == theirs.float().numpy().tobytes()
