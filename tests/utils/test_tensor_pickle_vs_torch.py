"""``pickle`` of a tensor keeps its values and requires_grad, not its ``.grad``, as torch's; ``copy.deepcopy``
keeps the ``.grad``."""

from __future__ import annotations

import copy
import pickle

import torch

import tracegrad as tg


def _round_trips(lib) -> list:
    leaf = lib.ones(2, requires_grad=True)
    (leaf * 3).sum().backward()
    param = lib.nn.Parameter(lib.ones(3))
    param.sum().backward()
    out = []
    for t in (leaf, param, leaf * 2, lib.arange(4.0)):
        back = pickle.loads(pickle.dumps(t))
        out.append((type(back).__name__, back.tolist(), back.requires_grad, back.is_leaf, back.grad is None))
    copied = copy.deepcopy(leaf)
    out.append(("deepcopy", copied.grad.tolist(), copied.requires_grad))
    return out


def test_pickle_drops_grad_and_deepcopy_keeps_it_as_torch():
    assert _round_trips(tg) == _round_trips(torch)


def test_pickles_with_a_grad_from_before_still_load():
    """Pickles made before .grad was left out carry it as a third argument of ``_rebuild``."""
    from tracegrad._tensor import _rebuild, pickled_array

    t = _rebuild(pickled_array(tg.ones(2)._data), True, tg.full((2,), 3.0))
    assert t.requires_grad and t.grad.tolist() == [3.0, 3.0]
