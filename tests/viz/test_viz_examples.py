"""The committed example messages (read by the extension's tests) validate and match what the code makes."""

import json

import pytest

from tracegrad import viz
from tracegrad.viz import examples

NAMES = ["graph", "hooks_fired", "saved_tensors", "memory", "batch"]


@pytest.fixture(scope="module")
def generated():
    return examples.build_examples()


@pytest.mark.parametrize("name", NAMES)
def test_committed_example_validates_and_is_current(name, generated):
    committed = json.loads((examples.EXAMPLES_DIR / f"{name}.json").read_text())
    viz.validate(committed)
    assert committed["type"] == name
    assert committed == json.loads(json.dumps(generated[name])), \
        "stale example: regenerate with `python -m tracegrad.viz.examples`"


def test_examples_cover_the_protocol(generated):
    graph = generated["graph"]
    assert any(n["saved"] for n in graph["nodes"]) and any(n["hooks"] for n in graph["nodes"])
    assert any(n["source"] for n in graph["nodes"]) and any(n["leaf"] for n in graph["nodes"])
    kinds = {e["kind"] for e in generated["hooks_fired"]["events"]}
    assert {"pre", "tensor", "retain_grad", "post_accumulate"} <= kinds
    hook_nodes = {e["node"] for e in generated["hooks_fired"]["events"]}
    assert hook_nodes <= {n["id"] for n in graph["nodes"]}  # same ids in both messages
