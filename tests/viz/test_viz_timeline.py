"""Timelines against PyTorch: the same program runs in torch with hooks that log their own calls, and in
tracegrad under record_backward; the hook events must come in torch's order."""

import pytest
import torch as real_torch

import tracegrad
from tracegrad import viz


def _program(lib, log):
    def hook(label, ret=None):
        def fn(*args):
            log.append(label)
            return ret
        fn.__qualname__ = label
        return fn

    lib.manual_seed(0)
    x = lib.randn(3, requires_grad=True)
    w = lib.randn(3, requires_grad=True)
    a = x * w
    b = a.sin()
    c = a.cos()
    a.register_hook(hook("a.tensor"))
    a.retain_grad()
    b.register_hook(hook("b.tensor1"))
    b.register_hook(hook("b.tensor2"))
    b.grad_fn.register_prehook(hook("b.pre"))
    b.grad_fn.register_hook(hook("b.post"))
    c.grad_fn.register_hook(hook("c.post"))
    x.register_hook(hook("x.tensor"))
    x.register_post_accumulate_grad_hook(hook("x.post_acc"))
    w.register_post_accumulate_grad_hook(hook("w.post_acc"))
    out = (b * c).sum()
    out.grad_fn.register_prehook(hook("out.pre"))
    return out, x, w


def _module_program(lib, log):
    def hook(label):
        def fn(*args):
            log.append(label)
        fn.__qualname__ = label
        return fn

    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Tanh(), lib.nn.Linear(3, 1))
    for k, m in enumerate(model):
        m.register_full_backward_pre_hook(hook(f"m{k}.pre"))
        m.register_full_backward_hook(hook(f"m{k}.post"))
    return model(lib.randn(2, 3, requires_grad=True)).sum()


def _hook_labels(timeline):
    return [e["hook"] for e in timeline["events"] if e["event"] == "hook" and e["kind"] != "retain_grad"]


@pytest.mark.parametrize("call", ["backward", "grad"])
def test_hook_order_matches_torch(call):
    torch_log, tg_log = [], []
    out, x, w = _program(real_torch, torch_log)
    if call == "backward":
        out.backward()
    else:
        real_torch.autograd.grad(out, [x, w])
    out, x, w = _program(tracegrad, tg_log)
    with viz.record_backward() as rec:
        if call == "backward":
            out.backward()
        else:
            tracegrad.autograd.grad(out, [x, w])
    assert tg_log == torch_log
    (timeline,) = rec.timelines
    assert timeline["call"] == call
    assert _hook_labels(timeline) == torch_log
    kinds = {e["hook"]: e["kind"] for e in timeline["events"] if e["event"] == "hook"}
    assert kinds["b.pre"] == "pre" and kinds["b.post"] == "post" and kinds["a.tensor"] == "tensor"
    if call == "backward":
        assert kinds["x.post_acc"] == "post_accumulate"
    retain = [e for e in timeline["events"] if e["kind"] == "retain_grad"]
    assert len(retain) == 1 and retain[0]["tensor"] == {"shape": [3], "dtype": "float32"}


def test_module_hook_order_matches_torch():
    torch_log, tg_log = [], []
    _module_program(real_torch, torch_log).backward()
    out = _module_program(tracegrad, tg_log)
    with viz.record_backward() as rec:
        out.backward()
    assert tg_log == torch_log
    events = [e for e in rec.timelines[0]["events"] if e["event"] == "hook"]
    assert [e["hook"] for e in events] == torch_log
    assert {e["kind"] for e in events} == {"module_pre", "module_post"}
    assert {e["module"] for e in events} == {"Linear", "Tanh"}


def test_node_order_and_ids_match_the_graph():
    x = tracegrad.randn(3, requires_grad=True)
    y = (x.exp() * x.sin()).sum()
    graph = viz.graph_snapshot(y)
    order = []
    y.grad_fn.register_prehook(lambda g: order.append("root"))
    with viz.record_backward() as rec:
        y.backward()
    executed = [e for e in rec.timelines[0]["events"] if e["event"] == "node_executed"]
    ids = {n["id"]: n["name"] for n in graph["nodes"]}
    assert [e["node"] for e in executed if e["node"] in ids] == [e["node"] for e in executed]
    assert [e["node_name"] for e in executed] == [ids[e["node"]] for e in executed]
    assert executed[0]["node"] == graph["roots"][0]["node"]
    assert rec.timelines[0]["roots"] == [graph["roots"][0]["node"]]
    assert [e["seq"] for e in rec.timelines[0]["events"]] == list(range(len(rec.timelines[0]["events"])))


def test_saved_events_and_pack_unpack_hooks():
    x = tracegrad.randn(3, requires_grad=True)

    def pack(t):
        return t.clone()

    def unpack(t):
        return t

    with viz.record_backward() as rec, tracegrad.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sum()
        tracegrad.autograd.grad(y, x, create_graph=False)  # packs happened outside this backward
    events = rec.timelines[0]["events"]
    assert [e["kind"] for e in events if e["event"] == "hook"] == ["unpack", "unpack"]
    assert [e["event"] for e in events if e["event"].startswith("saved")] == ["saved_unpacked"] * 2 + ["saved_freed"] * 2
    freed = [e for e in events if e["event"] == "saved_freed"]
    assert {e["node_name"] for e in freed} == {"MulBackward0"}


def test_pack_events_reach_subscribers():
    seen = []
    unsubscribe = viz.events.subscribe(lambda kind, p: seen.append((kind, p.get("kind"))))
    try:
        x = tracegrad.randn(3, requires_grad=True)
        with tracegrad.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            (x * x).sum()
    finally:
        unsubscribe()
    assert seen.count(("hook", "pack")) == 2 and seen.count(("saved_packed", None)) == 2


def test_nested_backward_gets_its_own_timeline_and_on_finish():
    finished = []
    x = tracegrad.randn(3, requires_grad=True)
    y = x.sin()

    def reentrant(grad):
        with tracegrad.enable_grad():
            z = (x * 2).sum()
            tracegrad.autograd.grad(z, x)
        return grad

    y.register_hook(reentrant)
    with viz.record_backward(cell_id="c9", on_finish=finished.append) as rec:
        y.sum().backward()
    assert [t["call"] for t in rec.timelines] == ["grad", "backward"]
    assert finished == rec.timelines and all(t["cell_id"] == "c9" for t in finished)
    assert not tracegrad._state.STATE.observed


def test_recorder_start_stop_and_module_forward_hooks():
    seen = []
    rec = viz.TimelineRecorder().start()
    unsubscribe = viz.events.subscribe(lambda kind, p: seen.append(p.get("kind")) if kind == "hook" else None)
    try:
        m = tracegrad.nn.Linear(2, 2)
        m.register_forward_pre_hook(lambda mod, args: None)
        m.register_forward_hook(lambda mod, args, out: None)
        m(tracegrad.randn(1, 2)).sum().backward()
    finally:
        unsubscribe()
        rec.stop()
    assert seen[:2] == ["module_forward_pre", "module_forward"]
    assert len(rec.timelines) == 1 and not rec.active


def test_without_saved_events_the_timeline_keeps_nodes_and_hooks():
    x = tracegrad.randn(3, requires_grad=True)
    with tracegrad.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = (x * x).sum()
    y.grad_fn.register_prehook(lambda grads: None)
    recorder = viz.TimelineRecorder(saved_events=False).start()
    try:
        y.backward()
    finally:
        recorder.stop()
    events = recorder.timelines[0]["events"]
    assert not [e for e in events if e["event"].startswith("saved")]
    assert [(e["event"], e["kind"], e["node_name"]) for e in events] == [
        ("hook", "pre", "SumBackward0"), ("node_executed", None, "SumBackward0"),
        ("node_executed", None, "MulBackward0"), ("hook", "unpack", "MulBackward0"),
        ("hook", "unpack", "MulBackward0"), ("node_executed", None, "torch::autograd::AccumulateGrad")]
    assert [e["seq"] for e in events] == list(range(len(events)))


def test_fast_path_timeline_reports_the_same_nodes_as_the_general_path():
    """A node/hook-only recorder keeps the fast paths (raw rules, the array chain loop); a recorder of saved
    events forces the general path. Both see the same nodes run, in the same order."""
    def program():
        x = tracegrad.ones(16, requires_grad=True)
        h = x
        for _ in range(5):
            h = (h.sin() * 0.9 + 0.1).tanh().exp()
        return h.sum()

    orders = []
    for saved_events in (False, True):
        y = program()
        recorder = viz.TimelineRecorder(saved_events=saved_events).start()
        try:
            y.backward()
        finally:
            recorder.stop()
        orders.append([e["node_name"] for e in recorder.timelines[0]["events"] if e["event"] == "node_executed"])
    assert orders[0] == orders[1] and len(orders[0]) == 1 + 5 * 5 + 1
