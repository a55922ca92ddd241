"""The bus is free when nobody listens: the flag stays off and no emission function is ever called."""

import sys

import pytest
from programs import PROGRAMS

import tracegrad
from tracegrad import viz
from tracegrad._state import STATE
from tracegrad.autograd import engine


def _emitting_modules():
    """Every loaded tracegrad module that binds one of the bus's emit functions at import."""
    for name, module in list(sys.modules.items()):
        if name.startswith("tracegrad.") and module is not None:
            for attr in ("_emit_event", "emit_op_call"):
                if hasattr(module, attr):
                    yield module, attr


def test_no_listener_means_no_emission(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("an event was emitted with nobody listening")

    monkeypatch.setattr(viz.events, "emit", fail)
    monkeypatch.setattr(tracegrad._events, "emit", fail)
    monkeypatch.setattr(engine, "_emit_hook", fail)
    for module, attr in list(_emitting_modules()):
        monkeypatch.setattr(module, attr, fail)
    assert not STATE.observed and not STATE.special
    for name in sorted(PROGRAMS):
        (root,) = PROGRAMS[name]()
        root.backward()
    model = tracegrad.nn.Linear(3, 2)
    model.register_forward_hook(lambda m, a, o: None)
    model.register_full_backward_hook(lambda m, gi, go: None)
    model(tracegrad.randn(4, 3, requires_grad=True)).sum().backward()
    assert not STATE.observed and not STATE.special


def test_subscribe_sets_and_unsubscribe_clears_the_flag():
    assert not STATE.observed
    unsubscribe = viz.events.subscribe(lambda kind, payload: None)
    assert STATE.observed and STATE.special
    unsubscribe()
    unsubscribe()  # idempotent
    assert not STATE.observed and not STATE.special


def test_every_event_kind_is_emitted():
    seen = set()

    def listener(kind, payload):
        assert kind in viz.events.EVENT_KINDS
        seen.add(kind)
        if kind == "hook":
            assert payload["kind"] in viz.events.HOOK_KINDS
            seen.add(("hook", payload["kind"]))

    unsubscribe = viz.events.subscribe(listener)
    try:
        for name in sorted(PROGRAMS):
            (root,) = PROGRAMS[name]()
            root.backward()
        m = tracegrad.nn.Linear(2, 2)
        m.register_forward_pre_hook(lambda mod, args: None)
        m.register_forward_hook(lambda mod, args, out: None)
        m.register_full_backward_pre_hook(lambda mod, go: None)
        m.register_full_backward_hook(lambda mod, gi, go: None)
        m(tracegrad.randn(1, 2, requires_grad=True)).sum().backward()
    finally:
        unsubscribe()
    assert set(viz.events.EVENT_KINDS) <= seen
    assert {("hook", k) for k in viz.events.HOOK_KINDS} <= seen


def test_op_event_names_the_new_node():
    nodes = []
    unsubscribe = viz.events.subscribe(
        lambda kind, p: nodes.extend(o.grad_fn for o in p["outputs"]) if kind == "op" else None)
    try:
        x = tracegrad.randn(2, requires_grad=True)
        y = x.exp()
    finally:
        unsubscribe()
    assert nodes == [y.grad_fn]


def test_emit_allows_a_kind_in_the_payload():
    got = []
    unsubscribe = viz.events.subscribe(lambda kind, p: got.append((kind, p)))
    try:
        viz.events.emit("hook", kind="pre", node=None)
    finally:
        unsubscribe()
    assert got == [("hook", {"kind": "pre", "node": None})]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_observing_does_not_change_results(name):
    tracegrad.manual_seed(1)
    (plain,) = PROGRAMS[name]()
    plain.backward()
    tracegrad.manual_seed(1)
    with viz.record_backward(), viz.track_sources():
        (observed,) = PROGRAMS[name]()
        observed.backward()
    assert float(plain) == float(observed)


def test_a_subscriber_for_some_kinds_sees_only_those():
    seen = []
    unsubscribe = viz.events.subscribe(lambda kind, payload: seen.append(kind), ("backward_started",))
    try:
        assert STATE.observed
        x = tracegrad.ones(2, requires_grad=True)
        (x * 2).sum().backward()
    finally:
        unsubscribe()
    assert seen == ["backward_started"]
    assert not STATE.observed and viz.events.subscribers() == ()


def test_unsubscribing_while_an_event_is_delivered_is_safe():
    calls = []

    def once(kind, payload):
        calls.append(kind)
        unsubscribe()

    unsubscribe = viz.events.subscribe(once)
    other = viz.events.subscribe(lambda kind, payload: calls.append("other"))
    try:
        viz.events.emit("hook", kind="pre", node=None)
        viz.events.emit("hook", kind="pre", node=None)
    finally:
        other()
    assert calls == ["hook", "other", "other"]
