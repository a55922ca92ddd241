"""The example messages in ``viz/protocol/examples/``, regenerated from real snapshots of one small MLP step.

The frontend's tests parse these files; a Python test checks that they still validate and still equal what
this module produces, ids and timings aside. Regenerate with ``python -m tracegrad.viz.examples``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .protocol_meta import SCHEMA_DIR, envelope

EXAMPLES_DIR = SCHEMA_DIR / "examples"
CELL_ID = "example-cell"


# The user program, compiled under its own file name: source tracking attributes nodes to it (the examples
# module itself is inside tracegrad, whose frames source tracking skips).
PROGRAM_FILE = "mlp_step.py"
PROGRAM = """\
import tracegrad as torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
x = torch.randn(5, 3)
hidden = model[1](model[0](x))
hidden.register_hook(lambda grad: None)
hidden.retain_grad()
loss = model[2](hidden).pow(2).mean()
"""


def _mlp_step() -> dict[str, dict]:
    import linecache

    from . import graph_snapshot, memory_snapshot, record_backward, saved_snapshot, track_sources

    linecache.cache[PROGRAM_FILE] = (len(PROGRAM), None, PROGRAM.splitlines(True), PROGRAM_FILE)
    namespace: dict = {}
    with track_sources(CELL_ID, 1):
        exec(compile(PROGRAM, PROGRAM_FILE, "exec"), namespace)
    model, loss = namespace["model"], namespace["loss"]
    loss.grad_fn.register_prehook(lambda grads: None)
    model[0].weight.register_post_accumulate_grad_hook(lambda param: None)
    labels = {"loss": loss, **dict(model.named_parameters())}
    graph = graph_snapshot({"loss": loss}, cell_id=CELL_ID, labels=labels)
    saved = saved_snapshot(loss, cell_id=CELL_ID, graph_id=graph["graph_id"])
    memory = memory_snapshot(loss, cell_id=CELL_ID, graph_id=graph["graph_id"])
    with record_backward(cell_id=CELL_ID) as recorder:
        loss.backward()
    hooks = recorder.timelines[0]
    batch = {**envelope("batch"), "messages": [graph, hooks], "dropped": 0}
    return {"graph": graph, "hooks_fired": hooks, "saved_tensors": saved, "memory": memory, "batch": batch}


_NODE_ID = re.compile(r"^n\d+$")
_STORAGE_ID = re.compile(r"^s[0-9a-f]+$")


def normalized(messages: dict[str, dict]) -> dict[str, dict]:
    """The messages with ids renumbered in order of appearance, timings zeroed and source paths reduced to
    file names, so two runs (or two machines) produce equal examples."""
    renames: dict[str, str] = {}

    def rename(value: str, prefix: str) -> str:
        key = (prefix, value)
        if key not in renames:
            renames[key] = f"{prefix}{sum(1 for k in renames if k[0] == prefix) + 1}"
        return renames[key]

    def walk(obj, key=None):
        if isinstance(obj, dict):
            return {k: walk(v, k) for k, v in obj.items()}
        if isinstance(obj, list):
            return [walk(v, key) for v in obj]
        if key in ("t_us", "duration_us"):
            return 0
        if isinstance(obj, str):
            if key == "file":
                return os.path.basename(obj)
            if key in ("graph_id",):
                return rename(obj, "g")
            if key == "backward_id":
                return rename(obj, "b")
            if _NODE_ID.match(obj):
                return rename(obj, "n")
            if key == "storage_id" and _STORAGE_ID.match(obj):
                return rename(obj, "s")
        return obj

    out = {name: walk(msg) for name, msg in messages.items()}
    for msg in out.values():
        for graph in [msg] + msg.get("messages", []):
            _rebase_sequence_numbers(graph)
    return out


def _rebase_sequence_numbers(msg: dict) -> None:
    """Sequence numbers count every node made in the process; keep only their order."""
    seqs = sorted({n["seq"] for n in msg.get("nodes", ()) if n["seq"] is not None})
    rank = {s: k for k, s in enumerate(seqs)}
    for n in msg.get("nodes", ()):
        if n["seq"] is not None:
            n["seq"] = rank[n["seq"]]


def build_examples() -> dict[str, dict]:
    return normalized(_mlp_step())


def write_examples(directory: Path = EXAMPLES_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, msg in build_examples().items():
        path = directory / f"{name}.json"
        path.write_text(json.dumps(msg, indent=2, ensure_ascii=False) + "\n")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for p in write_examples():
        print(p)
