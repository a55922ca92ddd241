import gc
import sys
import weakref

import numpy as np
import pytest
from programs import PROGRAMS, Cube, mlp_step

import tracegrad as torch
from tracegrad import viz


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_snapshot_kind_validates(name):
    roots = PROGRAMS[name]()
    for msg in (viz.graph_snapshot(roots), viz.saved_snapshot(roots), viz.memory_snapshot(roots)):
        viz.validate(msg)
    with viz.record_backward(cell_id="c1") as rec:
        roots[0].backward(retain_graph=True)
    assert len(rec.timelines) == 1
    viz.validate(rec.timelines[0])
    viz.validate({"protocol": "tracegrad", "version": 1, "type": "batch",
                  "messages": [viz.graph_snapshot(roots), rec.timelines[0]]})


def test_batch_validates_inner_messages():
    import jsonschema

    bad = viz.graph_snapshot(PROGRAMS["mlp"]())
    del bad["nodes"]
    with pytest.raises(jsonschema.ValidationError):
        viz.validate({"protocol": "tracegrad", "version": 1, "type": "batch", "messages": [bad]})


def test_load_schema_by_type_and_stem():
    assert viz.load_schema("hooks_fired") == viz.load_schema("hooks")
    assert viz.load_schema("graph")["title"] == "graph"


def test_graph_nodes_edges_and_leaves_match_the_engine():
    loss, model = mlp_step()
    msg = viz.graph_snapshot(loss, labels=dict(model.named_parameters()))
    by_id = {n["id"]: n for n in msg["nodes"]}
    root = by_id[msg["roots"][0]["node"]]
    assert root["name"] == "MeanBackward0" and root["id"] == viz.node_id(loss.grad_fn)
    assert root["op"] == "mean" and root["seq"] == loss.grad_fn._sequence_nr()
    # every engine edge is listed with its positions
    for n in msg["nodes"]:
        assert n["depth"] >= 0
    fn = loss.grad_fn
    edges = {(e["src"], e["input_nr"]): (e["dst"], e["output_nr"]) for e in msg["edges"]}
    for i, (child, nr) in enumerate(fn.next_functions):
        if child is not None:
            assert edges[(viz.node_id(fn), i)] == (viz.node_id(child), nr)
    leaves = {n["leaf"]["name"]: n for n in msg["nodes"] if n["kind"] == "accumulate"}
    assert set(leaves) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert leaves["0.weight"]["leaf"]["shape"] == [4, 3] and leaves["0.weight"]["leaf"]["grad"] is None
    assert leaves["0.weight"]["seq"] is None
    loss.backward()
    after = viz.graph_snapshot(loss, labels=dict(model.named_parameters()))
    leaf = next(n for n in after["nodes"] if n["leaf"] and n["leaf"]["name"] == "0.weight")
    assert leaf["leaf"]["grad"] == {"shape": [4, 3], "dtype": "float32"}
    assert after["memory"]["grad_bytes"] == sum(p.numel() * 4 for p in model.parameters())


def test_saved_tensors_names_roles_and_freeing():
    x = torch.randn(4, requires_grad=True)
    y = x.exp()  # saves its result
    z = (y * x).sum()  # saves self and other
    rows = viz.saved_snapshot(z)["rows"]
    got = {(r["node_name"], r["name"]): r for r in rows}
    assert got[("ExpBackward0", "result")]["role"] == "output"
    assert got[("MulBackward0", "self")]["role"] == "input"
    assert got[("MulBackward0", "other")]["shape"] == [4]
    assert all(r["state"] == "alive" and r["bytes"] == 16 for r in rows)
    # names follow torch's _saved_<name> attributes
    assert np.array_equal(z.grad_fn.next_functions[0][0]._saved_self.detach().numpy(), y.detach().numpy())
    z.backward()
    rows = viz.saved_snapshot(z)["rows"]
    assert all(r["state"] == "freed" for r in rows)
    assert viz.memory_snapshot(z)["alive_bytes"] == 0
    assert viz.memory_snapshot(z)["freed_count"] == 3
    assert {tuple(r["shape"]) for r in rows} == {(4,)}


def test_retain_graph_keeps_saved_alive():
    x = torch.randn(3, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    assert {r["state"] for r in viz.saved_snapshot(y)["rows"]} == {"alive"}


def test_version_mismatch_reports_the_error_backward_raises():
    a = torch.randn(3, requires_grad=True)
    b = a.sigmoid()  # saves its result
    c = a * 1
    d = (c * b).sum()
    b.mul_(2)
    rows = viz.saved_snapshot(d)["rows"]
    bad = [r for r in rows if r["error"]]
    assert {(r["node_name"], r["name"]) for r in bad} == {("SigmoidBackward0", "result"), ("MulBackward0", "other")}
    for r in bad:
        assert r["version_saved"] == 0 and r["version_now"] == 1
    with pytest.raises(RuntimeError) as info:
        d.backward()
    assert str(info.value) in {r["error"] for r in bad}
    assert all(r["error"] is None for r in rows if r not in bad)


def test_shared_storage_counted_once():
    x = torch.randn(100, requires_grad=True)
    v = x.view(10, 10)
    y = (x.sin().sum() + (v * v).sum() + x.cos().sum())
    mem = viz.memory_snapshot(y)
    rows = viz.saved_snapshot(y)["rows"]
    assert len({r["storage_id"] for r in rows}) == 1  # x and its view share one storage
    assert mem["unique_storages"] == 1
    assert mem["unique_bytes"] == 400
    assert mem["saved_bytes"] == mem["alive_bytes"] == 400 * len(rows)


def test_expanded_views_share_their_base_storage():
    """expand is NumPy's as_strided, which hides the base behind an interface holder: still one storage."""
    p = torch.randn(4, 6).softmax(-1).requires_grad_()
    v = torch.randn(4, 6, 3, requires_grad=True)
    out = p.unsqueeze(-1).expand(4, 6, 3).mul(v).sum()
    rows = viz.saved_snapshot(out)["rows"]
    saved_p = next(r for r in rows if r["shape"] == [4, 6, 3] and r["name"] == "self")
    assert saved_p["storage_id"] == viz.saved_snapshot(p.sin())["rows"][0]["storage_id"]


def test_storage_id_is_not_the_id_of_a_tensor_wrapper():
    x = torch.randn(5, requires_grad=True)
    y = (x * 2).sin()
    row = next(r for r in viz.saved_snapshot(y)["rows"] if r["name"] == "self")
    assert row["storage_id"] != f"s{id(x):x}"


def test_saved_tensors_hooks_are_never_run_by_a_snapshot():
    calls = []
    x = torch.randn(3, requires_grad=True)

    def pack(t):
        calls.append("pack")
        return t.clone()

    def unpack(t):
        calls.append("unpack")
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sum()
    n_packs = len(calls)
    rows = viz.saved_snapshot(y)["rows"]
    viz.graph_snapshot(y)
    assert len(calls) == n_packs and "unpack" not in calls
    assert all(r["packed_by_hook"] and r["shape"] == [3] and r["bytes"] == 12 for r in rows)
    assert x._version == 0


def test_custom_function_saved_and_kind():
    x = torch.randn(3, requires_grad=True)
    y = Cube.apply(x)
    msg = viz.graph_snapshot(y)
    node = next(n for n in msg["nodes"] if n["kind"] == "custom")
    assert node["op"] == "Cube"
    assert [s["name"] for s in node["saved"]] == ["saved_tensors[0]", "saved_tensors[1]"]
    assert [s["role"] for s in node["saved"]] == ["input", "output"]


def test_hooks_listed_per_node():
    (z,) = PROGRAMS["hooks"]()
    msg = viz.graph_snapshot(z)
    kinds = {(n["name"], h["kind"]) for n in msg["nodes"] for h in n["hooks"]}
    assert kinds == {("SumBackward0", "pre"), ("SumBackward0", "post"), ("SinBackward0", "tensor_pre"),
                     ("SinBackward0", "retain_grad"), ("torch::autograd::AccumulateGrad", "tensor_pre"),
                     ("torch::autograd::AccumulateGrad", "post_accumulate")}
    msg = viz.graph_snapshot(z, hooks=False, saved=False)
    assert all(n["hooks"] == [] and n["saved"] == [] for n in msg["nodes"])


def test_snapshot_keeps_no_reference_to_the_graph():
    x = torch.randn(3, requires_grad=True)
    y = (x * 2).sin().sum()
    ref = weakref.ref(y.grad_fn)
    msg = viz.graph_snapshot(y)
    viz.saved_snapshot(y)
    del y
    gc.collect()
    assert ref() is None
    assert msg["nodes"]


def test_node_ids_are_stable_and_unique():
    x = torch.randn(3, requires_grad=True)
    y = x.sin() * x.cos()
    first = viz.graph_snapshot(y)
    second = viz.graph_snapshot(y)
    assert [n["id"] for n in first["nodes"]] == [n["id"] for n in second["nodes"]]
    assert len({n["id"] for n in first["nodes"]}) == len(first["nodes"])


def test_depth_and_max_nodes_truncate():
    x = torch.randn(2, requires_grad=True)
    h = x
    for _ in range(50):
        h = h.sin()
    msg = viz.graph_snapshot(h, max_nodes=10, collapse=False)
    assert len(msg["nodes"]) == 10 and msg["truncated"] and msg["total_nodes"] == 51
    msg = viz.graph_snapshot(h, depth=3)
    assert len(msg["nodes"]) == 4 and msg["truncated"]
    viz.validate(msg)


def test_roots_of_every_form():
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    z = x.sin()
    for roots in (y, y.grad_fn, torch.autograd.graph.get_gradient_edge(y), [y, z], {"y": y, "z": z}):
        msg = viz.graph_snapshot(roots)
        viz.validate(msg)
    assert [r["label"] for r in viz.graph_snapshot({"y": y, "z": z})["roots"]] == ["y", "z"]
    leaf = viz.graph_snapshot(x)
    assert leaf["nodes"][0]["kind"] == "accumulate"
    plain = viz.graph_snapshot(torch.randn(2))
    assert plain["roots"][0]["node"] is None and plain["nodes"] == []
    with pytest.raises(TypeError):
        viz.graph_snapshot(3)


def test_100k_chain_does_not_recurse():
    x = torch.randn(1, requires_grad=True)
    h = x
    for _ in range(100_000):
        h = h * 1.0001
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        msg = viz.graph_snapshot(h, max_nodes=200_000)
        mem = viz.memory_snapshot(h)
    finally:
        sys.setrecursionlimit(limit)
    assert msg["total_nodes"] == 100_001 and not msg["truncated"]
    assert len(msg["groups"]) == 1 and msg["groups"][0]["repeats"] >= 99_990
    assert mem["saved_count"] == 0  # x * constant saves nothing for x's gradient


def test_source_tracking_records_user_line_and_cell():
    x = torch.randn(3, requires_grad=True)
    with viz.track_sources("cell-7", 4):
        y = x.sin()  # the line
    z = y.cos()
    msg = viz.graph_snapshot(z)
    src = {n["name"]: n["source"] for n in msg["nodes"]}
    assert src["CosBackward0"] is None
    assert src["SinBackward0"]["code"] == "y = x.sin()  # the line"
    assert src["SinBackward0"]["file"] == __file__
    assert (src["SinBackward0"]["cell_id"], src["SinBackward0"]["execution_count"]) == ("cell-7", 4)
    viz.set_cell_context("cell-8", 5)
    try:
        with viz.track_sources():
            w = z.exp()
    finally:
        viz.set_cell_context(None, None)
    node = viz.graph_snapshot(w)["nodes"][0]
    assert node["source"]["cell_id"] == "cell-8" and node["source"]["execution_count"] == 5


class _Scale(torch.nn.Module):
    """A user module between tracegrad's: its own lines are the sources of what it computes."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = x * 2.0  # scale line
        return self.inner(h)  # inner line


def test_source_lines_inside_nested_modules():
    """Nodes made inside tracegrad's modules point at the user's line that called the model (found once per
    model call); inside a user module, at that module's own lines, also for a tracegrad module it calls."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(), _Scale(), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    x = torch.randn(2, 4)
    for _ in range(2):  # a second call must not reuse the first one's lines
        with viz.track_sources():
            out = model(x).sum()  # the model line
        by_seq = sorted((n["seq"], n["name"], n["source"]["code"]) for n in viz.graph_snapshot(out)["nodes"]
                        if n["kind"] == "function")
        codes = [(name, code) for _, name, code in by_seq]
        model_line = "out = model(x).sum()  # the model line"
        assert codes == [("TBackward0", model_line), ("AddmmBackward0", model_line), ("TanhBackward0", model_line),
                         ("MulBackward0", "h = x * 2.0  # scale line"),
                         ("TBackward0", "return self.inner(h)  # inner line"),
                         ("AddmmBackward0", "return self.inner(h)  # inner line"),
                         ("ReluBackward0", model_line), ("TBackward0", model_line),
                         ("AddmmBackward0", model_line), ("SumBackward0", model_line)]


def test_source_lines_of_a_module_called_with_hooks_and_from_a_forward_assigned_on_the_instance():
    lin = torch.nn.Linear(3, 3)
    lin.register_forward_hook(lambda module, args, out: None)
    wrapped = torch.nn.Linear(3, 3)
    plain_forward = wrapped.forward
    wrapped.forward = lambda x: plain_forward(x.exp())  # the instance's forward is the user's
    with viz.track_sources():
        y = lin(torch.randn(2, 3))  # hooked call
        z = wrapped(y)  # wrapped call
    codes = {n["name"]: n["source"]["code"] for n in viz.graph_snapshot(z)["nodes"] if n["kind"] == "function"}
    assert codes["ExpBackward0"] == "wrapped.forward = lambda x: plain_forward(x.exp())  # the instance's forward is the user's"
    assert [n["source"]["code"] for n in viz.graph_snapshot(y)["nodes"] if n["kind"] == "function"] == \
        ["y = lin(torch.randn(2, 3))  # hooked call"] * 2


def test_saved_table_from_a_graph_equals_a_fresh_saved_snapshot():
    loss, model = mlp_step()
    graph = viz.graph_snapshot(loss)
    derived = viz.saved_from_graph(graph)
    viz.validate(derived)
    fresh = viz.saved_snapshot(loss, graph_id=graph["graph_id"])
    assert derived["rows"] == fresh["rows"] and derived["memory"] == fresh["memory"]
    assert derived["graph_id"] == graph["graph_id"] and len(derived["rows"]) > 0


def test_op_names_of_nn_internal_operators_read_as_what_they_compute():
    lin = torch.nn.Linear(3, 2)
    graph = viz.graph_snapshot(torch.nn.functional.relu(lin(torch.randn(4, 3))).sum())
    ops = {n["name"]: n["op"] for n in graph["nodes"] if n["kind"] == "function"}
    assert not any(op.startswith("_nn_") for op in ops.values())
    # the fused linear's nodes name the calls the user made (F.linear, and the t() of its weight)
    assert ops["AddmmBackward0"] == "linear" and ops["TBackward0"] == "t"
