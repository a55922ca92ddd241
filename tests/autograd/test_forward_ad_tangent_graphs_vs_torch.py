"""The graph a tangent records, for every operator of the OpInfo database, against torch's.

With forward-mode AD and an input that also requires grad, the tangent computed by an operator's forward formula has
a backward graph of its own (``unpack_dual(out).tangent.grad_fn``). For each float64 sample every differentiable input
is a leaf requiring grad made dual with a seeded tangent; each floating output's tangent graph (whether it requires
grad, every node's name, and its edges as (node, input_nr) pairs, walked breadth first through next_functions) must
be torch's. Operators whose graphs still differ are listed in ``KNOWN`` with the first difference seen, as strict
xfails: a fix makes them pass, and the entry must then go.

torch's forward formulas are C++, where a number is a Scalar: ``2 * result`` is ``mul.Scalar`` (MulBackward1),
``1 + x`` ``add.Scalar`` (AddBackward1). tracegrad's rules took numbers through the Tensor overloads (MulBackward0
with an edge to None) in sqrt, tan, asin, acos, atan, erf, erfc, exp2, expm1, log1p, log2, log10, sinc, silu,
logaddexp(2), pow, xlog1py, ndtr, std and cross-entropy's probabilities.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import graph_with_edges, tg, torch
from opinfo import op_db
from opinfo.core import Call, OpInfo, SampleInput, dtype_name, flatten_outputs, resolve, seeded_rng

# op id (or "op id/sample") -> why its tangent's graph still differs from torch's
KNOWN: dict[str, str] = {}


def _cases() -> list:
    cases = []
    for op in op_db:
        if not op.differentiable or "float64" not in op.dtypes:
            continue
        for sample in op.samples("float64"):
            if "grad" in sample.skips or "forward_ad" in sample.skips:
                continue
            reason = KNOWN.get(f"{op.id}/{sample.name}", KNOWN.get(op.id))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            cases.append(pytest.param(op, sample, id=f"{op.id}-{sample.name}", marks=marks))
    return cases


def _tangent_graphs(lib, op: OpInfo, sample: SampleInput) -> list:
    """For each floating output: None (no tangent) or (tangent.requires_grad, its graph)."""
    call = Call(lib, op, sample, requires_grad=True)
    fwad = lib.autograd.forward_ad
    rng = seeded_rng("tangent", f"{op.id}/{sample.name}")
    with fwad.dual_level(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        duals = {}
        for i in call.diff:  # (the leaf itself, requiring grad, is the dual's primal)
            leaf = call.tensors[i]
            values = rng.standard_normal(tuple(leaf.shape)).astype(dtype_name(leaf.dtype))
            duals[i] = fwad.make_dual(leaf, lib.tensor(values))
        out = call.run(resolve(lib, op.name), duals)
        if op.output_process is not None:
            out = op.output_process(lib, out)
        graphs = []
        for o in flatten_outputs(out):
            if o.is_floating_point():
                tangent = fwad.unpack_dual(o).tangent
                graphs.append(None if tangent is None else (tangent.requires_grad, graph_with_edges(tangent.grad_fn)))
        return graphs


@pytest.mark.parametrize("op,sample", _cases())
def test_tangent_graph_as_torch(op: OpInfo, sample: SampleInput):
    try:
        want = _tangent_graphs(torch, op, sample)
    except (NotImplementedError, RuntimeError) as exc:
        pytest.skip(f"torch computes no tangent here: {str(exc).splitlines()[0][:100]}")
    if not Call(torch, op, sample, requires_grad=True).diff:
        pytest.skip("no differentiable input")
    assert _tangent_graphs(tg, op, sample) == want


def test_known_differences_name_database_entries():
    """Every entry of KNOWN names an operator (or one of its samples) of the database."""
    names = {op.id for op in op_db} | {f"{op.id}/{s.name}" for op in op_db if "float64" in op.dtypes
                                       for s in op.samples("float64")}
    assert set(KNOWN) <= names, set(KNOWN) - names


@pytest.mark.parametrize("shape,bias", [((2, 3), True), ((2, 3), False), ((2, 2, 3), True), ((3,), True)])
def test_linear_output_graph_under_forward_ad_as_torch(shape, bias):
    """A dual level alone keeps linear's addmm/mm (tracegrad composed matmul + add: AddBackward0 for addmm's
    AddmmBackward0, and the tangent's formula was not addmm's)."""
    graphs = []
    for lib in (tg, torch):
        fw = lib.autograd.forward_ad
        x = lib.linspace(-1.0, 1.0, 6 * (len(shape) - 1) or 3).reshape(shape).requires_grad_()
        w = lib.linspace(0.5, 2.0, 12).reshape(4, 3).requires_grad_()
        b = lib.linspace(-2.0, 0.0, 4).requires_grad_() if bias else None
        with fw.dual_level():
            out = lib.nn.functional.linear(fw.make_dual(x, lib.ones(shape)), fw.make_dual(w, lib.ones(4, 3)), b)
            graphs.append((graph_with_edges(out.grad_fn), graph_with_edges(fw.unpack_dual(out).tangent.grad_fn)))
    assert graphs[0] == graphs[1]
