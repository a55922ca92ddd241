"""``torch._C._will_engine_execute_node`` as torch answers it for the nodes of the backward's roots.
"""

from __future__ import annotations

import pytest
from _lib import torch

import tracegrad as tg


def _will_execute_root_node(lib, how: str) -> list:
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    z = y.sin()
    loss, loss2 = z.sum(), (z * 3).sum()
    nodes = (loss.grad_fn, loss2.grad_fn, z.grad_fn, y.grad_fn)
    seen: list = []
    x.register_hook(lambda g: seen.append([lib._C._will_engine_execute_node(fn) for fn in nodes]))
    if how == "one root":
        loss.backward()
    elif how == "two roots":
        lib.autograd.backward([loss, loss2])
    elif how == "one root, inputs":
        lib.autograd.backward([loss], inputs=[x, y])
    else:
        lib.autograd.backward([loss, loss2], inputs=[x])
    return seen


@pytest.mark.parametrize("how", ["one root", "two roots", "one root, inputs", "two roots, inputs"])
def test_will_engine_execute_node_of_the_root(how):
    """With one root edge, PyTorch's graph root is that edge's node itself, which is not in its nodes_in_graph:
    _will_engine_execute_node says False for it (before: True)."""
    assert _will_execute_root_node(tg, how) == _will_execute_root_node(torch, how)
