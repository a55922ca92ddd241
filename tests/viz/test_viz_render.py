import shutil

import graphviz
import pytest
from programs import mlp_step

import tracegrad as torch
from tracegrad import viz
from tracegrad.viz import render


@pytest.fixture
def mlp_graph():
    loss, model = mlp_step()
    return viz.graph_snapshot(loss, labels=dict(model.named_parameters())), loss


def test_text_tree(mlp_graph):
    msg, _ = mlp_graph
    text = render.graph_text(msg)
    lines = text.splitlines()
    assert lines[0].startswith(f"graph {msg['graph_id']}: 11 nodes")
    assert lines[1] == "output ()"
    assert lines[2].startswith("MeanBackward0")
    assert any(line.startswith("├─ torch::autograd::AccumulateGrad") and "leaf 2.bias (2)" in line for line in lines)
    assert any("└─ TBackward0" in line for line in lines)
    assert "saved mat1(5, 4)" in text
    shallow = render.graph_text(msg, depth=1)
    assert "…" in shallow and "ReluBackward0" not in shallow


def test_text_tree_collapses_groups_and_marks_shared_nodes():
    x = torch.randn(2, requires_grad=True)
    h = x
    for _ in range(40):
        h = h.sin().cos()
    msg = viz.graph_snapshot(h + x)
    text = render.graph_text(msg)
    assert "[CosBackward0 → SinBackward0 × 40]" in text
    assert "(shown above)" in text  # x's AccumulateGrad is reached twice
    assert len(render.graph_text(msg, collapse=False).splitlines()) > 80


def test_dot_styles(mlp_graph):
    msg, _ = mlp_graph
    dot = render.graph_dot(msg, saved=True)
    assert "fillcolor=lightgrey" in dot and "fillcolor=lightblue" in dot
    assert "fillcolor=darkolivegreen1" in dot and "fillcolor=orange" in dot
    assert '"0.weight\n(4, 3)"' in dot
    assert "orange" not in render.graph_dot(msg)


def test_dot_draws_groups_as_folders():
    x = torch.randn(2, requires_grad=True)
    h = x
    for _ in range(30):
        h = h.exp().tanh()
    msg = viz.graph_snapshot(h)
    (group,) = msg["groups"]
    dot = render.graph_dot(msg)
    assert "shape=folder" in dot and f"× {group['repeats']}" in dot and group["repeats"] >= 29
    # groups hide their inner edges: one edge per node drawn outside the group, plus the root tensor's
    outside = len(msg["nodes"]) - len(group["members"])
    assert dot.count("->") == outside + 1


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed")
def test_svg_when_dot_exists(mlp_graph):
    msg, _ = mlp_graph
    svg = render.graph_svg(msg)
    assert svg is not None and "<svg" in svg and "MeanBackward0" in svg
    assert render.graph_html(msg).startswith('<div class="tracegrad-graph"><?xml') or "<svg" in render.graph_html(msg)


def test_html_fallback_without_dot(mlp_graph, monkeypatch):
    msg, _ = mlp_graph
    monkeypatch.setenv("PATH", "/nonexistent")
    assert render.graph_svg(msg) is None
    html = render.graph_html(msg)
    assert "dot program was not found" in html and "<table" in html and "MeanBackward0" in html


def test_html_fallback_on_executable_not_found(mlp_graph, monkeypatch):
    msg, _ = mlp_graph

    def missing(*args, **kwargs):
        raise graphviz.ExecutableNotFound(("dot",))

    monkeypatch.setattr(graphviz.Source, "pipe", missing)
    html = render.graph_html(msg)
    assert html.count("<p>") == 1 and "<table" in html


def test_graph_html_never_raises():
    assert "could not render" in render.graph_html({"broken": True})


def test_saved_timeline_and_memory_renderers(mlp_graph):
    msg, loss = mlp_graph
    saved = viz.saved_snapshot(loss)
    text = render.saved_text(saved)
    assert "_saved_mat1" in text and "alive" in text and "unique storage" in text
    assert render.saved_text(msg).splitlines()[0] == text.splitlines()[0]
    assert "<table" in render.saved_html(saved) and "_saved_result" in render.saved_html(saved)
    with viz.record_backward() as rec:
        loss.backward()
    tl = render.timeline_text(rec.timelines[0])
    assert tl.startswith("backward b") and "node_executed" in tl and "saved_freed" in tl
    assert "<table" in render.timeline_html(rec.timelines[0])
    mem = render.memory_text(viz.memory_snapshot(loss))
    n = len(saved["rows"])
    assert mem.startswith(f"saved: {n} tensors") and f"0 B alive, {n} freed" in mem


def test_version_error_is_rendered():
    a = torch.randn(3, requires_grad=True)
    b = a.exp()
    b.add_(1)
    msg = viz.saved_snapshot(b.grad_fn)
    assert "modified by an inplace operation" in render.saved_text(msg)
    assert "modified by an inplace operation" in render.saved_html(msg)


def test_freed_rows_keep_known_shapes_and_dash_unknown_ones():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    loss = torch.nn.functional.mse_loss(model(torch.randn(5, 3)), torch.randn(5, 1))
    before = {(r["node"], r["name"]): r["shape"] for r in viz.saved_snapshot(loss)["rows"]}
    loss.backward()
    after = viz.saved_snapshot(loss)
    rows = {(r["node"], r["name"]): r for r in after["rows"]}
    assert all(r["state"] == "freed" for r in rows.values())
    # mat2 of the fused linear is reported as weight.t() before and after it is freed
    assert [before[k] for k in before if k[1] == "mat2"] == [[4, 1]]
    assert [r["shape"] for k, r in rows.items() if k[1] == "mat2"] == [[4, 1]]
    text = render.saved_text(after)
    target_line = next(line for line in text.splitlines() if "_saved_target" in line)
    assert "—" in target_line and "unknown" not in text
    assert "saved: 6 tensors" in text and "in 0 storages" in text
    one = torch.ones(3, requires_grad=True)
    assert "saved: 1 tensor," in render.saved_text(viz.saved_snapshot((one * 2).sin()))
