"""Forward-mode AD for every differentiable operator of the OpInfo database.

For each float64 (and complex128, where an entry lists it) sample, the differentiable inputs become dual tensors
with the same seeded random tangents (complex for complex inputs) in tracegrad and in torch; the output tangents
must agree. Where torch itself has no forward-mode formula, tracegrad must refuse in the same words (it derives the
JVP of an operator without an explicit ``jvp`` rule from its backward rule, which would compute where torch refuses:
igamma's and zeta's ``other``, ormqr, were found so).
"""

from __future__ import annotations

import pytest
from _lib import assert_close, tg, torch
from opinfo import op_db
from opinfo.core import GRAD_DTYPES, Call, OpInfo, SampleInput, dtype_name, flatten_outputs, resolve, seeded_rng

CASES = [pytest.param(op, s, id=f"{op.id}-{s.name}" + ("" if dtype == "float64" else f"-{dtype}"))
         for op in op_db if op.differentiable for dtype in GRAD_DTYPES if dtype in op.dtypes
         for s in op.samples(dtype)]


def _tangents_through(lib, op: OpInfo, sample: SampleInput, key: str):
    call = Call(lib, op, sample, requires_grad=True)
    if not call.diff:
        pytest.skip("no differentiable input")
    fwad = lib.autograd.forward_ad
    rng = seeded_rng("tangent", key)
    with fwad.dual_level():
        duals = {}
        for i in call.diff:
            t = call.tensors[i].detach()
            values = rng.standard_normal(tuple(t.shape))
            if t.is_complex():
                values = values + 1j * rng.standard_normal(tuple(t.shape))
            tangent = lib.tensor(values.astype(dtype_name(t.dtype)))
            duals[i] = fwad.make_dual(t, tangent)
        out = call.run(resolve(lib, op.name), duals)
        if op.output_process is not None:
            out = op.output_process(lib, out)
        results = []
        for o in flatten_outputs(out):
            if o.is_floating_point() or o.is_complex():
                primal, tangent = fwad.unpack_dual(o)
                results.append((primal.detach().clone(), None if tangent is None else tangent.clone()))
    return results


@pytest.mark.parametrize("op,sample", CASES)
def test_forward_ad_vs_torch(op: OpInfo, sample: SampleInput):
    for key in ("grad", "forward_ad"):  # (forward_ad: this test only, the reverse-mode ones still run)
        if key in sample.skips:
            pytest.skip(sample.skips[key])
    key = f"{op.id}/{sample.name}"
    try:
        want = _tangents_through(torch, op, sample, key)
    except (NotImplementedError, RuntimeError) as exc:
        # torch has no forward-mode formula here, or refuses this sample (e.g. a tangent whose shape is not its
        # broadcast output's): so must we, in its words
        with pytest.raises(type(exc)) as ours:
            _tangents_through(tg, op, sample, key)
        assert str(ours.value) == str(exc)
        return
    got = _tangents_through(tg, op, sample, key)
    assert len(got) == len(want)
    rtol, atol = op.grad_tol
    for (gp, gt), (wp, wt) in zip(got, want):
        assert_close(gp, wp, rtol=rtol, atol=atol)
        if wt is None:
            assert gt is None or float(gt.abs().max()) == 0.0
        else:
            assert gt is not None, "tracegrad lost the tangent"
            assert_close(gt, wt, rtol=max(rtol, 1e-6), atol=max(atol, 1e-8))
