"""The graph of a gradient taken with ``create_graph=True`` is the graph torch's backward formulas record.

A sweep over the operator database: for every differentiable operator and each of its float64 samples, the
first gradient is taken with ``create_graph=True`` and the whole graph behind each input gradient is compared
with torch's (breadth first over ``next_functions``: names and edges, input numbers included, nothing ignored).
It runs twice: with a constant cotangent (the graph of the formula's dependence on the inputs) and with a
cotangent that requires grad (the linear part too: ``diagonal_backward``, ``slice_backward``, reshapes of the
gradient...). ``tests/ops/test_gradient_graphs.py`` compares the first sample's node names depth first.

Operators whose graph still differs are listed in ``KNOWN``, with the reason and which runs differ; the test
expects exactly those runs to differ, so a fix (or a regression) shows.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import double_backward, graph_with_edges, tg, torch
from opinfo import op_db
from opinfo.core import Call, flatten_outputs, resolve

CONSTANT, LIVE = "constant", "live"  # the cotangent: without or with requires_grad

_CONV = ("ATen's _convolution_double_backward records convolution calls on transposed operands; tracegrad's "
         "records its convolution primitives")
_INDEX_SELECT_EXPAND = ("torch's formula index_selects the gradient then expands it to source's shape "
                        "(ExpandBackward0); tracegrad's returns the selection as it is (or viewed)")
_FFT_REAL = ("torch's r2c/c2r backward formulas pad or mask the gradient through in-place copies into new "
             "tensors (CopySlices); tracegrad's use constant_pad_nd / a multiplication")
KNOWN: dict[str, tuple[str, tuple[str, ...]]] = {
    # op id: (why, which runs differ: a cotangent kind for every sample, or "kind:sample name")
    "nn.grad.conv2d_input": (_CONV, (CONSTANT, LIVE)),
    "nn.grad.conv2d_weight": (_CONV, (CONSTANT, LIVE)),
    "special.xlog1py": ("the Scalar-other formula is special_xlog1py(grad, other) (SpecialXlog1PyBackward2); "
                        "tracegrad's masks the gradient (MaskedFillBackward0)", ("live:scalar_other",)),
    "dot": ("torch multiplies the 0-d gradient as it is; tracegrad views it first (ViewBackward0)", (LIVE,)),
    "block_diag": ("torch's block_diag_backward squeezes/sums a scalar or vector block; tracegrad views it",
                   ("live:matrix_vector_scalar",)),
    "linalg.slogdet": ("torch transposes the solve's operand twice (mT of a conjugate transpose); tracegrad once",
                       (LIVE,)),
    "index_add": (_INDEX_SELECT_EXPAND, (LIVE,)),
    "index_copy": (_INDEX_SELECT_EXPAND, (LIVE,)),
    "index_fill": ("a 0-d Tensor value's gradient is grad.index_select(dim, index).sum() in torch; tracegrad "
                   "multiplies by a filled mask", ("live:noncontig_0d_tensor_value",)),
    "Tensor.masked_fill": ("a 0-d Tensor value's gradient is masked_select(grad, mask).sum() in torch; tracegrad "
                           "uses where", ("live:noncontig_0d_value",)),
    "masked_scatter": ("torch's source gradient is the masked_scatter_backward operator "
                       "(MaskedScatterBackwardBackward0); tracegrad composes masked_select, cat and view", (LIVE,)),
    "nn.functional.embedding": ("torch records embedding_dense_backward (EmbeddingDenseBackwardBackward0); "
                                "tracegrad records embedding_backward", (LIVE,)),
    **{f"fft.{name}": (_FFT_REAL, (LIVE,))
       for name in ("rfft", "irfft", "hfft", "ihfft", "rfftn", "irfftn", "hfftn", "ihfftn",
                    "rfft2", "irfft2", "hfft2", "ihfft2")},
}

OPS = [op for op in op_db if op.differentiable and op.supports_gradgrad]


def _gradient_graphs(lib, op, sample, kind: str):
    """The graph behind each input gradient (None where there is none), or the error's type and message."""
    call = Call(lib, op, sample, requires_grad=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (deprecations of the operators themselves)
            outs = [t for t in flatten_outputs(call.run(resolve(lib, op.name))) if t.requires_grad]
            cotangents = [lib.ones_like(o).requires_grad_(kind == LIVE) for o in outs]
            grads = lib.autograd.grad(outs, call.diff_inputs, cotangents, create_graph=True, allow_unused=True)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return tuple(None if g is None else graph_with_edges(g.grad_fn) for g in grads)


def _expected_differences(op, samples) -> set:
    spec = KNOWN.get(op.id, ("", ()))[1]
    return {(s.name, kind) for s in samples for kind in (CONSTANT, LIVE) if kind in spec or f"{kind}:{s.name}" in spec}


@pytest.mark.parametrize("op", [pytest.param(op, id=op.id) for op in OPS])
def test_double_backward_graph_matches_torch(op):
    samples = op.samples("float64")
    differing = {(s.name, kind) for s in samples for kind in (CONSTANT, LIVE)
                 if _gradient_graphs(tg, op, s, kind) != _gradient_graphs(torch, op, s, kind)}
    assert differing == _expected_differences(op, samples)


def test_known_entries_name_database_operators():
    ids = {op.id for op in OPS}
    assert set(KNOWN) <= ids


# Operators the database lacks whose formulas were rewritten to record torch's graph: the graph of the gradient
# (a cotangent that requires grad), the strides and dtypes of the gradient and of its gradients, and their values
# (bit for bit except erfinv's and corrcoef's, whose kernels are within an ulp of torch's, as before).
PROGRAMS = {
    "erfinv": lambda L, x: (x * 0.3).erfinv(),
    "asinh": lambda L, x: x.asinh(),
    "atanh": lambda L, x: (x * 0.5).atanh(),
    "trapezoid_x": lambda L, x: L.trapezoid(x.exp(), x * x, dim=1),
    "cumulative_trapezoid_x": lambda L, x: L.cumulative_trapezoid(x.exp(), x * x, dim=0),
    "corrcoef": lambda L, x: L.corrcoef(x),
    "nll_loss_3d": lambda L, x: L.nn.functional.nll_loss(x.reshape(1, 3, 4), L.tensor([[0, 2, 1, 1]]),
                                                         reduction="none"),
    "nll_loss_4d": lambda L, x: L.nn.functional.nll_loss(x.reshape(1, 3, 2, 2), L.tensor([[[0, 2], [1, 1]]])),
    "sub_alpha": lambda L, x: L.sub(x.sin(), x.cos(), alpha=-1.5),
}


def _program_outcome(lib, name: str):
    gradients = double_backward(lib, PROGRAMS[name])
    layouts = [(tuple(t.stride()), str(t.dtype).split(".")[-1]) for t in gradients]
    return graph_with_edges(gradients[0].grad_fn), layouts, [t.detach().numpy() for t in gradients]


WITHIN_AN_ULP = ("erfinv", "corrcoef")


@pytest.mark.parametrize("name", PROGRAMS)
def test_double_backward_graph_of_programs(name):
    (graph, layouts, values), (graph_th, layouts_th, values_th) = _program_outcome(tg, name), _program_outcome(torch,
                                                                                                             name)
    assert (graph, layouts) == (graph_th, layouts_th)
    for ours, theirs in zip(values, values_th, strict=True):
        if name in WITHIN_AN_ULP:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)
        else:
            assert ours.tobytes() == theirs.tobytes()


def test_sweep_sees_linear_formulas():
    """With a live cotangent, diagonal's gradient is diagonal_backward's node, not a constant: the sweep would
    miss it with constant cotangents alone."""
    (op,) = [op for op in OPS if op.id == "diagonal"]
    sample = op.samples("float64")[0]
    assert _gradient_graphs(torch, op, sample, CONSTANT) == (None,)
    assert _gradient_graphs(torch, op, sample, LIVE)[0][0][0] == "DiagonalBackwardBackward0"
