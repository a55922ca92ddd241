"""The magics through a real IPython shell: MIME bundles, schema-valid payloads, text that names the nodes,
and one-line errors for bad arguments and bad expressions."""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from nb_programs import HOOK_PROGRAM, timeline_firing_order, torch_firing_order

from tracegrad.notebook.magics import split_options
from tracegrad.notebook.protocol import MIME_GRAPH, MIME_HOOKS, MIME_SAVED
from tracegrad.viz import validate

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NETWORK = """
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
lin = torch.nn.Linear(2, 3)
h = torch.relu(lin(x))
loss = (h * h).sum()
"""


@pytest.fixture
def net(ip):
    assert ip.run_cell(NETWORK).success
    return ip


def bundle(ip, obj) -> dict:
    data, _ = ip.display_formatter.format(obj)
    return data


def assert_one_line_usage_error(ip, line: str, *fragments: str) -> str:
    magic, _, rest = line.partition(" ")
    with pytest.raises(UsageError) as info:
        ip.run_line_magic(magic, rest)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    for fragment in fragments:
        assert fragment in message
    return message


def test_autograd_graph_bundle(net):
    data = bundle(net, net.run_line_magic("autograd_graph", "loss"))
    assert MIME_GRAPH in data and "text/plain" in data
    assert ("image/svg+xml" in data) or ("text/html" in data)
    message = data[MIME_GRAPH]
    validate(message)
    json.dumps(message)  # it travels in the .ipynb as JSON
    assert [r["label"] for r in message["roots"]] == ["loss"]
    names = {node["name"] for node in message["nodes"]}
    assert {"SumBackward0", "MulBackward0", "ReluBackward0", "AddmmBackward0"} <= names
    for name in ("SumBackward0", "MulBackward0", "ReluBackward0", "AddmmBackward0"):
        assert name in data["text/plain"]
    if "image/svg+xml" in data:
        assert data["image/svg+xml"].lstrip().startswith(("<svg", "<?xml")) and "ReluBackward0" in data["image/svg+xml"]


def test_autograd_graph_options(net):
    plain = net.run_line_magic("autograd_graph", "loss").message
    assert all(not node.get("saved") for node in plain["nodes"])
    with_saved = net.run_line_magic("autograd_graph", "--saved loss").message
    assert any(node.get("saved") for node in with_saved["nodes"])
    shallow = net.run_line_magic("autograd_graph", "loss --depth 1 --no-collapse").message
    validate(shallow)
    assert len(shallow["nodes"]) < len(plain["nodes"])
    assert {node["name"] for node in shallow["nodes"]} <= {"SumBackward0", "MulBackward0"}
    net.run_cell("h.register_hook(lambda g: g)")
    hooked = net.run_line_magic("autograd_graph", "loss --hooks").message
    assert any(node.get("hooks") for node in hooked["nodes"])


def test_autograd_graph_accepts_nodes_lists_and_dicts(net):
    for expr, labels in (("loss.grad_fn", ["SumBackward0"]), ("[loss, h]", None), ("{'L': loss, 'H': h}", ["L", "H"])):
        message = net.run_line_magic("autograd_graph", expr).message
        validate(message)
        if labels:
            assert [r["label"] for r in message["roots"]] == labels


def test_expression_keeps_its_spelling():
    assert split_options('--saved d["loss"] - y --depth 2') == ("--saved --depth 2", 'd["loss"] - y')
    assert split_options("x * -1") == ("", "x * -1")
    assert split_options("--no-collapse") == ("--no-collapse", "")


def test_saved_tensors_table(net):
    data = bundle(net, net.run_line_magic("saved_tensors", "loss"))
    assert set(data) == {MIME_SAVED, "text/html", "text/plain"}
    message = data[MIME_SAVED]
    validate(message)
    by_node = {row["node_name"] for row in message["rows"]}
    assert {"MulBackward0", "ReluBackward0", "AddmmBackward0"} <= by_node
    assert message["memory"]["saved_bytes"] == sum(row["bytes"] for row in message["rows"]) > 0
    assert "MulBackward0" in data["text/plain"] and "<table" in data["text/html"]


def test_backward_trace_shows_timeline_in_torch_order(ip):
    with capture_output() as captured:
        ip.run_cell_magic("backward_trace", "", HOOK_PROGRAM)
    (output,) = captured.outputs
    data = output.data
    assert set(data) == {MIME_HOOKS, "text/html", "text/plain"}
    validate(data[MIME_HOOKS])
    assert timeline_firing_order(data[MIME_HOOKS]) == torch_firing_order() == ip.user_ns["fired"]
    assert "node execution order: SumBackward0 -> MulBackward0 -> SinBackward0 -> MulBackward0" in data["text/plain"]


def test_backward_trace_several_calls_and_last_value(ip):
    cell = ("a = torch.ones(2, requires_grad=True)\n(a * 2).sum().backward()\n"
            "torch.autograd.grad((a * a).sum(), a)\n'done'")
    with capture_output() as captured:
        ip.run_cell_magic("backward_trace", "", cell)
    trace = captured.outputs[-1].data
    message = trace[MIME_HOOKS]
    validate(message)
    assert message["type"] == "batch" and [m["call"] for m in message["messages"]] == ["backward", "grad"]
    assert "#1 backward()" in trace["text/plain"] and "#2 autograd.grad()" in trace["text/plain"]
    assert "'done'" in captured.stdout or any("'done'" in o.data.get("text/plain", "") for o in captured.outputs)


def test_backward_trace_without_backward_and_with_an_error(ip):
    with capture_output() as captured:
        ip.run_cell_magic("backward_trace", "", "b = 1")
    assert "no backward() or autograd.grad() call ran" in captured.stdout
    result = ip.run_cell("%%backward_trace\nc = torch.ones(2, requires_grad=True)\n(c * c).sum().backward()\n1 / 0")
    assert isinstance(result.error_in_exec, ZeroDivisionError)  # the user's error still fails the cell


@pytest.mark.parametrize(("line", "fragments"), [
    ("autograd_graph", ["missing EXPR"]),
    ("autograd_graph nope", ["NameError", "'nope' is not defined"]),
    ("autograd_graph 1 +", ["invalid syntax"]),
    ("autograd_graph 3", ["of type int, not a tensor"]),
    ("autograd_graph torch.ones(2)", ["no grad_fn", "does not require grad"]),
    ("autograd_graph [loss, 'a']", ["holds an item that is of type str"]),
    ("autograd_graph {}", ["is empty"]),
    ("autograd_graph loss.nonexistent", ["AttributeError"]),
    ("autograd_graph loss --depth -1", ["%autograd_graph", "--depth", "0 or more"]),
    ("autograd_graph loss --depth x", ["whole number"]),
    ("autograd_graph loss --bogus", ["unrecognized arguments: --bogus"]),
    ("saved_tensors", ["%saved_tensors", "missing EXPR"]),
    ("saved_tensors torch.zeros(1).detach()", ["no grad_fn"]),
    ("tracegrad", ["usage: %tracegrad live on|off|status"]),
    ("tracegrad live maybe", ["invalid choice: 'maybe'"]),
])
def test_bad_arguments_are_one_line_errors(net, line, fragments):
    assert_one_line_usage_error(net, line, *fragments)


def test_bad_cell_magic_argument(ip):
    with pytest.raises(UsageError, match="takes no arguments"):
        ip.run_cell_magic("backward_trace", "--x", "pass")


def test_tracegrad_live_switch(ip, feed):
    with capture_output() as captured:
        ip.run_line_magic("tracegrad", "live on")
        ip.run_line_magic("tracegrad", "live status")
        ip.run_line_magic("tracegrad", "live off")
    assert feed.live is False
    assert captured.stdout.splitlines() == ["tracegrad live mode is on (0 frontends connected)"] * 2 + [
        "tracegrad live mode is off (0 frontends connected)"]


def test_help_text(ip):
    for name in ("autograd_graph", "saved_tensors", "tracegrad"):
        doc = ip.find_line_magic(name).__doc__
        assert doc.lstrip(": \n").startswith(f"%{name} ")  # magic_arguments' usage line
        assert "positional arguments:" in doc
    assert "--no-collapse" in ip.find_line_magic("autograd_graph").__doc__
    assert "hook timeline" in ip.find_cell_magic("backward_trace").__doc__


def test_graph_leaves_are_named_after_the_user_namespace(ip):
    ip.run_cell("import tracegrad as torch\n"
                "net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))\n"
                "inp = torch.randn(2, 3, requires_grad=True)\n"
                "out = net(inp).sum()\n", store_history=False)
    view = ip.run_line_magic("autograd_graph", "out")
    leaves = {n["leaf"]["name"] for n in view.message["nodes"] if n["kind"] == "accumulate"}
    assert leaves == {"inp", "net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias"}
