"""Review of the 64-bit seeds (default generator seeded from the OS, seed() drawing 64 bits): manual_seed takes
what torch's takes, as torch reads it (uint64, else int64), and refuses the rest in its words."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tracegrad as tg

SEEDS = [2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 2**70, -1, 1.5, True, "3", None,
         np.int64(3), np.uint64(2**64 - 1), np.float64(2.0)]


def _outcome(fn):
    try:
        generator = fn()
    except Exception as e:  # noqa: BLE001 - the error is the answer compared
        return type(e).__name__, str(e)
    return generator.initial_seed(), generator.get_state().tolist()[:16]


@pytest.mark.parametrize("seed", SEEDS, ids=repr)
def test_generator_manual_seed_as_torch(seed):
    assert _outcome(lambda: tg.Generator().manual_seed(seed)) == _outcome(lambda: torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("seed", SEEDS, ids=repr)
def test_module_manual_seed_as_torch(seed):
    assert _outcome(lambda: tg.manual_seed(seed)) == _outcome(lambda: torch.manual_seed(seed))


def test_generator_manual_seed_of_a_tensor_refused_as_torch():
    assert _outcome(lambda: tg.Generator().manual_seed(tg.tensor(5))) == \
        _outcome(lambda: torch.Generator().manual_seed(torch.tensor(5)))
    assert _outcome(lambda: tg.manual_seed(tg.tensor(5))) == _outcome(lambda: torch.manual_seed(torch.tensor(5)))
