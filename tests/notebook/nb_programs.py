"""Programs the notebook tests run both in tracegrad (in a shell or a kernel) and in PyTorch (the oracle).

HOOK_PROGRAM registers every kind of hook plus a ``probe`` pre-hook on every node, each appending its name
to ``fired``; so PyTorch's ``fired`` list is the true firing order, node by node and hook by hook.
"""

from __future__ import annotations

import textwrap
from typing import Any

HOOK_PROGRAM = textwrap.dedent("""
    import functools
    fired = []
    def probe(name, grad_outputs): fired.append(name)
    def tensor_hook_h(grad): fired.append("tensor_hook_h")
    def tensor_hook_w(grad): fired.append("tensor_hook_w")
    def pre_hook_y(grad_outputs): fired.append("pre_hook_y")
    def post_hook_y(grad_inputs, grad_outputs): fired.append("post_hook_y")
    def post_acc_x(param): fired.append("post_acc_x")
    def probe_graph(root):
        seen, stack = set(), [root]
        while stack:
            node = stack.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            node.register_prehook(functools.partial(probe, node.name()))
            stack.extend(fn for fn, _ in node.next_functions)
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = x * w
    h.register_hook(tensor_hook_h)
    h.retain_grad()
    y = h.sin()
    y.grad_fn.register_prehook(pre_hook_y)
    y.grad_fn.register_hook(post_hook_y)
    x.register_post_accumulate_grad_hook(post_acc_x)
    w.register_hook(tensor_hook_w)
    loss = (y * y).sum()
    probe_graph(loss.grad_fn)
    loss.backward()
""")

HOOK_NAMES = {"probe", "tensor_hook_h", "tensor_hook_w", "pre_hook_y", "post_hook_y", "post_acc_x"}


def torch_firing_order() -> list[str]:
    """``fired`` after running HOOK_PROGRAM in PyTorch."""
    import torch

    namespace: dict[str, Any] = {"torch": torch}
    exec(HOOK_PROGRAM, namespace)
    return namespace["fired"]


def timeline_firing_order(timeline: dict) -> list[str]:
    """The same list read from a ``hooks_fired`` message: each program hook by name, a probe by its node."""
    return [event["node_name"] if event["hook"] == "probe" else event["hook"]
            for event in timeline["events"] if event["event"] == "hook" and event["hook"] in HOOK_NAMES]


def timeline_node_order(timeline: dict) -> list[str]:
    return [event["node_name"] for event in timeline["events"] if event["event"] == "node_executed"]
