"""Live mode in process: a real IPython shell runs cells, a fake comm plays the JupyterLab sidebar."""

from __future__ import annotations

import pytest
from conftest import FakeComm
from nb_programs import HOOK_PROGRAM, timeline_firing_order, timeline_node_order, torch_firing_order

from tracegrad._state import STATE
from tracegrad.viz import validate

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def run(ip, code: str, cell_id: str | None = None):
    return ip.run_cell(code, store_history=True, cell_id=cell_id)


def of_type(comm: FakeComm, kind: str) -> list[dict]:
    return [m for m in comm.messages() if m["type"] == kind]


def test_hello_on_open_and_every_message_validates(ip, feed, comm):
    assert comm.sent[0]["type"] == "hello"
    assert comm.sent[0]["live"] is False
    feed.set_live(True)
    run(ip, "x = torch.ones(3, requires_grad=True)\ny = (x * 2).sum()\ny.backward()", cell_id="c1")
    for message in comm.sent:
        validate(message)


def test_live_off_sends_nothing_and_observes_nothing(ip, feed, comm):
    run(ip, "a = torch.ones(2, requires_grad=True) * 3", cell_id="c1")
    assert comm.types() == ["hello"]
    assert not STATE.observed


def test_cells_are_bracketed_with_their_ids_and_outcome(ip, feed, comm):
    feed.set_live(True)
    run(ip, "a = 1", cell_id="cell-a")
    run(ip, "raise ValueError('bad\\nsecond line')", cell_id="cell-b")
    cells = [m for m in comm.messages() if m["type"] in ("cell_started", "cell_finished")]
    assert [(m["type"], m["cell_id"]) for m in cells] == [
        ("cell_started", "cell-a"), ("cell_finished", "cell-a"), ("cell_started", "cell-b"), ("cell_finished", "cell-b")]
    assert cells[1]["ok"] is True and cells[1]["error"] is None and cells[1]["duration_ms"] >= 0
    assert cells[3]["ok"] is False and cells[3]["error"] == "ValueError: bad"
    assert cells[0]["execution_count"] == cells[1]["execution_count"] == cells[2]["execution_count"] - 1


def test_graph_of_tensors_the_cell_created_or_changed(ip, feed, comm):
    run(ip, "w = torch.ones(3, requires_grad=True)\nold = (w * 2).sum()")
    feed.set_live(True)  # what existed before live mode is not reported
    run(ip, "h = w.exp()\nloss = (h * h).sum()\n_private = w.sin()\nplain = torch.ones(2)", cell_id="c2")
    graphs = of_type(comm, "graph")
    assert len(graphs) == 1
    graph = graphs[0]
    assert {root["label"] for root in graph["roots"]} == {"h", "loss"}
    assert graph["cell_id"] == "c2"
    names = {node["name"] for node in graph["nodes"]}
    assert {"SumBackward0", "MulBackward0", "ExpBackward0", "torch::autograd::AccumulateGrad"} <= names
    assert "SinBackward0" not in names  # _private is skipped
    sources = [node["source"] for node in graph["nodes"] if node["name"] == "ExpBackward0"]
    assert sources[0]["cell_id"] == "c2" and sources[0]["line"] == 1
    saved = of_type(comm, "saved_tensors")
    assert saved[0]["graph_id"] == graph["graph_id"]
    assert {row["node_name"] for row in saved[0]["rows"]} >= {"MulBackward0", "ExpBackward0"}

    comm.sent.clear()
    run(ip, "unrelated = 5", cell_id="c3")  # nothing changed: no graph
    assert of_type(comm, "graph") == []
    run(ip, "h = h + 1", cell_id="c4")  # rebinding is a change
    assert [r["label"] for r in of_type(comm, "graph")[0]["roots"]] == ["h"]


def test_changed_tensors_are_capped_per_cell(ip, feed, comm):
    feed._watcher.max_roots = 2
    feed.set_live(True)
    run(ip, "x = torch.ones(2, requires_grad=True)\na = x * 1\nb = x * 2\nc = x * 3", cell_id="c1")
    assert [r["label"] for r in of_type(comm, "graph")[0]["roots"]] == ["b", "c"]
    assert "1 more changed tensors not sent" in of_type(comm, "error")[0]["message"]


def test_hook_timeline_matches_torch_firing_order(ip, feed, comm):
    feed.set_live(True)
    run(ip, HOOK_PROGRAM, cell_id="hooks")
    (timeline,) = of_type(comm, "hooks_fired")
    assert timeline["cell_id"] == "hooks"
    expected = torch_firing_order()
    assert timeline_firing_order(timeline) == expected == ip.user_ns["fired"]
    nodes = timeline_node_order(timeline)
    assert [name for name in nodes if not name.endswith("AccumulateGrad")] == ["SumBackward0", "MulBackward0", "SinBackward0",
                                                                     "MulBackward0"]


def test_recording_only_while_a_frontend_listens_and_live_is_on(ip, feed):
    feed.set_live(True)
    observed = []
    run(ip, "probe_state = 1")
    assert not STATE.observed  # live, but nobody listens: nothing subscribed
    fake = FakeComm()
    feed.open_comm(fake, {})
    ip.user_ns["observed"] = observed
    run(ip, "from tracegrad._state import STATE\nobserved.append(STATE.observed)", cell_id="c")
    assert observed == [True]
    assert not STATE.observed  # recording stops at the end of each cell
    fake.frontend_closes()
    run(ip, "observed.append(STATE.observed)")
    assert observed == [True, False]


def test_live_off_in_a_cell_closes_that_cell_then_goes_quiet(ip, feed, comm):
    run(ip, "%tracegrad live on", cell_id="on")
    run(ip, "t = torch.ones(2, requires_grad=True) * 2", cell_id="work")
    run(ip, "%tracegrad live off", cell_id="off")
    assert not STATE.observed
    count = len(comm.messages())
    run(ip, "u = torch.ones(2, requires_grad=True) * 2\nu.sum().backward()", cell_id="quiet")
    assert len(comm.messages()) == count
    ids = [(m["type"], m["cell_id"]) for m in comm.messages() if m["type"].startswith("cell_")]
    assert ids == [("cell_started", "work"), ("cell_finished", "work"), ("cell_started", "off"),
                   ("cell_finished", "off")]


def test_frontend_messages(ip, feed, comm):
    comm.receive({"protocol": "tracegrad", "version": 1, "type": "set_live", "live": True})
    assert feed.live and comm.sent[-1] == {**comm.sent[0], "live": True}
    run(ip, "x = torch.ones(2, requires_grad=True)\nz = (x * x).sum()\nz.backward()", cell_id="c1")
    comm.sent.clear()
    comm.receive({"protocol": "tracegrad", "version": 1, "type": "request_state"})
    assert sorted(comm.types()) == ["graph", "hello", "hooks_fired", "saved_tensors"]
    comm.sent.clear()
    comm.receive({"type": "nonsense"})
    assert comm.types() == ["error"]
    validate(comm.sent[0])
    comm.receive({"protocol": "tracegrad", "version": 1, "type": "set_live", "live": False})
    assert not feed.live


def test_several_frontends_and_a_broken_one(ip, feed, comm):
    class Broken(FakeComm):
        def send(self, data=None, metadata=None, buffers=None):
            raise RuntimeError("socket closed")

    feed.open_comm(Broken(), {})  # its hello fails: it is dropped, the others carry on
    second = FakeComm()
    feed.open_comm(second, {})
    feed.set_live(True)
    run(ip, "q = torch.ones(2, requires_grad=True) * 5", cell_id="c")
    assert of_type(comm, "graph") and of_type(second, "graph")
    assert feed.status() == "tracegrad live mode is on (2 frontends connected)"


def test_backward_timelines_in_a_loop_are_throttled(ip, feed, comm):
    feed._outbox.interval_s = 60.0  # no time-based flush during the cell: everything comes at its end
    feed._outbox.max_cost = 200
    feed.set_live(True)
    run(ip, "p = torch.ones(4, requires_grad=True)\nfor _ in range(30):\n    (p * p).sin().sum().backward()",
        cell_id="loop")
    batches = [m for m in comm.sent if m["type"] == "batch"]
    # hello on open, hello when live turned on, cell_started, then one batch at the end of the cell
    assert [m["type"] for m in comm.sent] == ["hello", "hello", "cell_started", "batch"]
    (batch,) = batches
    kept = [m for m in batch["messages"] if m["type"] == "hooks_fired"]
    assert batch["dropped"] == 30 - len(kept) > 0
    assert batch["messages"][-1]["type"] == "cell_finished"
    validate(batch)


def test_snapshot_failure_becomes_an_error_message(ip, feed, comm, monkeypatch):
    import tracegrad.viz as viz

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(viz, "graph_snapshot", broken)
    feed.set_live(True)
    result = run(ip, "k = torch.ones(2, requires_grad=True) * 2", cell_id="c")
    assert result.success
    (err,) = of_type(comm, "error")
    assert err["message"] == "could not snapshot k: RuntimeError: boom" and err["cell_id"] == "c"
    assert of_type(comm, "cell_finished")[0]["ok"] is True


def test_unload_closes_comms_and_stops(ip, feed, comm):
    import tracegrad

    feed.set_live(True)
    tracegrad.unload_ipython_extension(ip)
    assert comm.closed and not feed.live
    run(ip, "v = torch.ones(2, requires_grad=True) * 2")
    # hello on open, hello(live) on, hello(not live) as unloading turns it off; then nothing
    assert [(m["type"], m["live"]) for m in comm.sent] == [("hello", False), ("hello", True), ("hello", False)]
    tracegrad.load_ipython_extension(ip)  # the fixture unloads again


def test_turning_live_on_or_off_from_the_magic_tells_the_frontend(ip, feed, comm):
    ip.run_line_magic("tracegrad", "live on")
    ip.run_line_magic("tracegrad", "live on")  # no change: no message
    ip.run_line_magic("tracegrad", "live off")
    hellos = [m["live"] for m in comm.sent if m["type"] == "hello"]
    assert hellos == [False, True, False]


def test_a_backward_cell_resends_the_last_graph_with_its_saved_tensors_freed(ip, feed, comm):
    feed.set_live(True)
    run(ip, "w = torch.ones(3, requires_grad=True)\nout = (w * w).sin().sum()", cell_id="forward")
    (before,) = of_type(comm, "saved_tensors")
    assert {row["state"] for row in before["rows"]} == {"alive"}
    run(ip, "out.backward()", cell_id="backward")
    after = of_type(comm, "saved_tensors")[-1]
    graph = of_type(comm, "graph")[-1]
    assert len(of_type(comm, "saved_tensors")) == 2 and after["cell_id"] == "backward"
    assert {row["state"] for row in after["rows"]} == {"freed"}
    (leaf,) = [n for n in graph["nodes"] if n["kind"] == "accumulate"]
    assert leaf["leaf"]["name"] == "w" and leaf["leaf"]["grad"]["shape"] == [3]
    run(ip, "1 + 1", cell_id="nothing")  # no backward, nothing changed: nothing resent
    assert len(of_type(comm, "saved_tensors")) == 2
