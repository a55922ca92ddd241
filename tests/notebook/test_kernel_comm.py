"""The tracegrad.inspector comm against a real ipykernel: what the JupyterLab sidebar receives."""

from __future__ import annotations

import pytest
from conftest import flatten
from nb_kernel import Kernel
from nb_programs import HOOK_PROGRAM, timeline_firing_order, torch_firing_order

from tracegrad.viz import validate

PRELUDE = "import tracegrad as torch"
SET_LIVE = {"protocol": "tracegrad", "version": 1, "type": "set_live", "live": True}


@pytest.fixture(scope="module")
def kernel():
    k = Kernel()
    yield k
    k.shutdown()


def types(messages: list[dict]) -> list[str]:
    return [m["type"] for m in flatten(messages)]


def test_comm_flow_cells_graphs_and_hook_order(kernel):
    reply, _ = kernel.execute(PRELUDE)
    assert reply["status"] == "ok"
    comm_id, opened = kernel.open_comm()
    assert types(opened) == ["hello"] and opened[0]["live"] is False
    answer = kernel.send_comm(comm_id, SET_LIVE)
    assert answer[0]["type"] == "hello" and answer[0]["live"] is True

    reply, sent = kernel.execute("x = torch.ones(3, requires_grad=True)\nloss = (x.exp() * x).sum()",
                                 cell_id="cell-1")
    assert reply["status"] == "ok"
    for message in sent:
        validate(message)
    messages = flatten(sent)
    assert types(sent)[0] == "cell_started" and types(sent)[-1] == "cell_finished"
    assert {m["cell_id"] for m in messages if m["type"].startswith("cell_")} == {"cell-1"}
    (graph,) = [m for m in messages if m["type"] == "graph"]
    assert [r["label"] for r in graph["roots"]] == ["loss"]
    assert {n["name"] for n in graph["nodes"]} == {"SumBackward0", "MulBackward0", "ExpBackward0",
                                                   "torch::autograd::AccumulateGrad"}
    assert all(n["source"]["cell_id"] == "cell-1" for n in graph["nodes"] if n["name"] != "torch::autograd::AccumulateGrad")

    reply, sent = kernel.execute(HOOK_PROGRAM, cell_id="cell-2")
    assert reply["status"] == "ok", sent
    (timeline,) = [m for m in flatten(sent) if m["type"] == "hooks_fired"]
    assert timeline["cell_id"] == "cell-2"
    assert timeline_firing_order(timeline) == torch_firing_order()

    reply, sent = kernel.execute("1 / 0", cell_id="cell-3")
    assert reply["status"] == "error"
    (finished,) = [m for m in flatten(sent) if m["type"] == "cell_finished"]
    assert finished["ok"] is False and finished["error"] == "ZeroDivisionError: division by zero"

    kernel.close_comm(comm_id)
    reply, sent = kernel.execute("z = torch.ones(2, requires_grad=True) * 2", cell_id="cell-4")
    assert reply["status"] == "ok" and sent == []  # nobody listens: nothing sent


def test_live_off_and_no_comm(kernel):
    reply, sent = kernel.execute(PRELUDE + "\nr = torch.ones(2, requires_grad=True) * 3\nr.sum().backward()")
    assert reply["status"] == "ok" and sent == []  # no comm open: cells run as usual
    comm_id, _ = kernel.open_comm()
    kernel.send_comm(comm_id, SET_LIVE)
    reply, sent = kernel.execute("%tracegrad live off", cell_id="off")
    # the frontend hears that live is off, and the cell that turned it off is still closed
    assert types(sent) == ["cell_started", "hello", "cell_finished"]
    reply, sent = kernel.execute("s = torch.ones(2, requires_grad=True) * 3\ns.sum().backward()", cell_id="c")
    assert reply["status"] == "ok" and sent == []
    kernel.close_comm(comm_id)


def test_restart_then_reconnect(kernel):
    kernel.restart()
    comm_id, opened = kernel.open_comm()
    assert types(opened) == ["hello"] and opened[0]["live"] is False  # a fresh kernel starts with live off
    kernel.send_comm(comm_id, SET_LIVE)
    reply, sent = kernel.execute(PRELUDE + "\nq = torch.ones(2, requires_grad=True).sin()", cell_id="after-restart")
    assert reply["status"] == "ok"
    assert "graph" in types(sent)
    assert {m["cell_id"] for m in flatten(sent) if m["type"] == "cell_started"} == {"after-restart"}
