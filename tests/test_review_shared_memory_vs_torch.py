"""Review of the shared-memory commits (26304bc, 0468945) against torch: backward after ``share_memory_()`` reads
the memory the tensors now use (saved outputs included), shared storages keep as few descriptors open as torch's,
and ``torch.multiprocessing``'s public names and ``start_processes``' refusal of a float ``nprocs``."""

from __future__ import annotations

import gc
import importlib
import os

import pytest
import torch
from _lib import raised

import tracegrad as tg

# graphs whose backward reads a saved output (exp, sigmoid, tanh, softmax, sqrt save their result; the in-place
# exp_ on a view saves the view's output), the saved input of a leaf, and a view's saved input
GRAPHS = {
    "exp": lambda x: x.exp(),
    "sigmoid": lambda x: x.sigmoid(),
    "tanh": lambda x: x.tanh(),
    "softmax": lambda x: x.softmax(1),
    "sqrt": lambda x: x.abs().sqrt(),
    "exp_ on a view": lambda x: (lambda y: (y[0].exp_(), y)[1])(x * 1),
    "mul": lambda x: x * x,
    "view": lambda x: x[:, 1:] * x[:, 1:],
}


@pytest.mark.parametrize("graph", GRAPHS)
def test_backward_after_share_memory_reads_the_shared_memory(graph):
    def program(lib) -> list:
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], requires_grad=True)
        out = GRAPHS[graph](x)
        for t in (x, out):
            t.share_memory_()
            t.data.mul_(2)  # (no version bump: backward sees the new values, as it did before sharing)
        out.backward(lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])[:, : out.shape[1]])
        return [x.grad.flatten().tolist(), x.is_shared(), out.is_shared()]

    ours, theirs = program(tg), program(torch)
    assert ours[1:] == theirs[1:]
    assert ours[0] == pytest.approx(theirs[0], rel=1e-6)


def _descriptors_per_storage(lib, strategy: str) -> int:
    """Descriptors open for 20 shared storages more."""
    mp = importlib.import_module(lib.__name__ + ".multiprocessing")
    mp.set_sharing_strategy(strategy)
    try:
        counts = []
        for n in (5, 25):
            alive = [lib.zeros(4).share_memory_() for _ in range(n)]
            counts.append(len(os.listdir("/proc/self/fd")))
            del alive
            gc.collect()
        return counts[1] - counts[0]
    finally:
        mp.set_sharing_strategy("file_descriptor")


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_shared_storages_keep_as_many_descriptors_open_as_torchs(strategy):
    # (one each under 'file_descriptor', the one sent; none under 'file_system', whose point is to spare them)
    assert _descriptors_per_storage(tg, strategy) == _descriptors_per_storage(torch, strategy)


def test_the_public_names_of_torch_multiprocessing():
    def public(lib) -> list:
        module = importlib.import_module(lib.__name__ + ".multiprocessing")
        return sorted(name for name in dir(module) if not name.startswith("_") and name not in ("sys", "torch"))

    assert sorted(set(public(tg)) - {"annotations"}) == public(torch)


def test_start_processes_refuses_an_nprocs_that_is_not_an_int_in_torchs_words():
    def program(lib):
        importlib.import_module(lib.__name__ + ".multiprocessing").start_processes(print, nprocs=1.5,
                                                                                  start_method="fork")

    assert raised(tg, program) == raised(torch, program)
