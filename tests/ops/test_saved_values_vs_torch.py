"""What a node keeps when only one of its inputs requires grad, for every differentiable operator of the database.

PyTorch saves a value only if a gradient that reads it can be asked for: ``torch.bmm(a, b)`` with only ``a``
requiring grad keeps ``mat2`` and not ``self``. The saved-tensor inspector shows these values and their memory,
so each ``_saved_<name>`` must be None exactly where torch's is.

Not compared: a ``<input>_sym_strides`` tracegrad cannot derive because the input is a non-leaf it did not save
(``linear``'s ``weight.t()`` when only the weight requires grad); tracegrad says so instead of answering.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch
from opinfo import op_db
from opinfo.core import Call, flatten_outputs, resolve

ENTRIES = [op for op in op_db if "float64" in op.dtypes and op.differentiable]


def _saved_nones(lib, op, sample, keep: int):
    """(node name, [(saved attribute, is None)]) of the first output's node when only the ``keep``-th
    differentiable input requires grad; None when there is no such input or no node."""
    call = Call(lib, op, sample, requires_grad=True)
    if keep >= len(call.diff):
        return None
    for k, i in enumerate(call.diff):
        if k != keep:
            call.tensors[i] = call.tensors[i].detach()
    nodes = [o.grad_fn for o in flatten_outputs(call.run(resolve(lib, op.name))) if o.grad_fn is not None]
    if not nodes:
        return None
    node = nodes[0]
    names = sorted(a for a in dir(type(node)) if a.startswith("_saved_"))
    return node.name(), [(a, _is_none(node, a)) for a in names]


def _is_none(node, attribute: str):
    try:
        return getattr(node, attribute) is None
    except RuntimeError as exc:
        if "tracegrad derives it from" not in str(exc):
            raise
        return "underivable"


@pytest.mark.parametrize("op", ENTRIES, ids=lambda op: op.id)
def test_saved_values_when_one_input_requires_grad(op):
    sample = next(iter(op.samples("float64")))
    for keep in range(4):
        ours, theirs = _saved_nones(tg, op, sample, keep), _saved_nones(torch, op, sample, keep)
        if ours is None or theirs is None:
            continue
        assert ours[0] == theirs[0]
        shared = {a for a, v in ours[1] if v != "underivable"} & dict(theirs[1]).keys()
        assert {a: v for a, v in ours[1] if a in shared} == {a: v for a, v in theirs[1] if a in shared}, keep


def _pack_events(lib, op, sample, keep: int):
    """Pack and unpack hook calls (shape, dtype) of a forward and a backward with only the ``keep``-th
    differentiable input requiring grad (all of them for -1); None when there is no such input."""
    events: list = []

    def pack(t):
        events.append(("pack", tuple(t.shape), str(t.dtype).rpartition(".")[2]))
        return t

    def unpack(t):
        events.append(("unpack", tuple(t.shape)))
        return t

    call = Call(lib, op, sample, requires_grad=True)
    if keep >= len(call.diff):
        return None
    for k, i in enumerate(call.diff):
        if keep >= 0 and k != keep:
            call.tensors[i] = call.tensors[i].detach()
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        outs = [o for o in flatten_outputs(call.run(resolve(lib, op.name))) if o.requires_grad]
    if outs:
        events.append("backward")
        lib.autograd.backward([o.real.sum() if o.is_complex() else o.sum() for o in outs])
    return events


@pytest.mark.parametrize("op", ENTRIES, ids=lambda op: op.id)
def test_pack_and_unpack_calls_when_some_inputs_require_grad(op):
    sample = next(iter(op.samples("float64")))
    for keep in range(-1, 4):
        assert _pack_events(tg, op, sample, keep) == _pack_events(torch, op, sample, keep), keep
