"""Differences that the programs of ``tests/test_user_programs10_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``torch.histogram`` of a tensor that requires grad (a layer's weights) gave results without history; torch's
  autograd fallback gives both a shared ``NotImplemented`` node whose backward refuses (``histogramdd``: one for
  the counts, another for edges made from bin counts);
- ``F.ctc_loss`` computed in half and bfloat16 where torch's CPU kernel refuses them;
- ``linalg.cholesky_ex`` of a matrix that is not positive-definite returned zeros without history (torch: what
  LAPACK left, with its node), named itself ``linalg.cholesky`` under ``check_errors``, and missed a NaN pivot;
  ``cholesky(upper=True)`` read the lower triangle (torch: the upper one), gave -0 imaginary parts, and the
  legacy ``torch.cholesky`` recorded ``linalg.cholesky``'s node and errors instead of its own.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch
from _tutorial_lib import normalised, repr_or_error


def _history(result) -> list:
    """Each output's requires_grad, node name and output number, and what backward through the counts says."""
    edges = result.bin_edges if isinstance(result.bin_edges, (tuple, list)) else [result.bin_edges]
    seen = [(t.requires_grad, t.grad_fn and t.grad_fn.name(), t.output_nr, len(t.grad_fn.next_functions)
             if t.grad_fn else 0) for t in [result.hist, *edges]]
    shared = [t.grad_fn is result.hist.grad_fn for t in edges]
    try:
        result.hist.sum().backward()
    except RuntimeError as e:
        return seen + shared + [str(e)]
    return seen + shared


_HISTOGRAMS = {
    "histogram_counts": lambda t: t.histogram(t.tensor([1.0, 2.0, 3.0], requires_grad=True), bins=3),
    "histogram_edges_given": lambda t: t.histogram(t.tensor([1.0, 2.0]), bins=t.tensor([0.0, 2.0, 5.0],
                                                                                        requires_grad=True)),
    "histogram_weighted": lambda t: t.histogram(t.tensor([1.0, 2.0, 3.0], requires_grad=True), bins=2,
                                                weight=t.ones(3, requires_grad=True), density=True),
    "histogramdd_counts": lambda t: t.histogramdd(t.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True), bins=2),
    "histogramdd_edges_given": lambda t: t.histogramdd(t.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True),
                                                       bins=[t.tensor([0.0, 2.0, 5.0]), t.tensor([0.0, 5.0])]),
}


@pytest.mark.parametrize("name", sorted(_HISTOGRAMS))
def test_a_histogram_of_tensors_requiring_grad_has_a_not_implemented_node(name):
    make = _HISTOGRAMS[name]
    assert _history(make(tg)) == _history(make(torch))


def test_a_histogram_without_grad_mode_has_no_history():
    def run(t):
        with t.no_grad():
            return t.histogram(t.tensor([1.0, 2.0], requires_grad=True), bins=2).hist.requires_grad

    assert run(tg) is run(torch) is False


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_ctc_loss_refuses_half_precision_as_torch(dtype):
    def run(t):
        lp = t.tensor([[[-1.0, -2.0, -0.5]], [[-0.7, -1.5, -1.0]], [[-1.2, -0.3, -2.0]]]).to(getattr(t, dtype))
        return t.nn.functional.ctc_loss(lp, t.tensor([[1, 2]]), (3,), (2,))

    assert repr_or_error(run, tg) == repr_or_error(run, torch)


_FAILING = {
    "indefinite": [[1.0, 2.0], [2.0, 1.0]],
    "later_pivot": [[4.0, 2.0, 1.0], [2.0, -2.0, 2.0], [1.0, 2.0, 3.0]],
    "first_pivot": [[-1.0, 0.0], [-0.0, -1.0]],
    "nan_pivot": [[4.0, 2.0], [2.0, float("nan")]],
    "semidefinite": [[4.0, 2.0, 3.0, 4.0, 5.0], [2.0, 1.0, 2.0, 3.0, 4.0], [3.0, 2.0, 9.0, 1.0, 1.0],
                     [4.0, 3.0, 1.0, 9.0, 1.0], [5.0, 4.0, 1.0, 1.0, 9.0]],
    "non_symmetric": [[4.0, 2.0, 1.0], [100.0, 1.0, 3.0], [100.0, 100.0, 5.0]],
    "batch": [[[4.0, 2.0], [2.0, 2.0]], [[-4.0, 2.0], [2.0, 2.0]]],
}


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("name", sorted(_FAILING))
def test_cholesky_ex_returns_what_lapack_leaves(name, upper):
    def run(t):
        A = t.tensor(_FAILING[name], dtype=t.float64, requires_grad=True)
        L, info = t.linalg.cholesky_ex(A, upper=upper)
        return L.detach().tolist(), info.tolist(), L.grad_fn.name()

    assert repr_or_error(run, tg) == repr_or_error(run, torch)


@pytest.mark.parametrize("call", ["cholesky_ex_checked", "cholesky_nan", "cholesky_upper_reads_upper",
                                  "legacy_cholesky", "legacy_cholesky_upper"])
def test_cholesky_errors_and_triangles(call):
    calls = {
        "cholesky_ex_checked": lambda t: t.linalg.cholesky_ex(t.stack([t.eye(2), -t.eye(2)]), check_errors=True),
        "cholesky_nan": lambda t: t.linalg.cholesky(t.tensor([[4.0, 2.0], [2.0, float("nan")]])),
        "cholesky_upper_reads_upper": lambda t: (
            t.linalg.cholesky(t.tensor([[4.0, 2.0], [9.0, 5.0]]), upper=True),
            t.linalg.cholesky(t.tensor([[4.0, 9.0], [2.0, 5.0]]), upper=True)),
        "legacy_cholesky": lambda t: t.cholesky(-t.eye(2)),
        "legacy_cholesky_upper": lambda t: t.cholesky(t.tensor([[4.0, 100.0], [2.0, 5.0]]), upper=True),
    }
    assert repr_or_error(calls[call], tg) == repr_or_error(calls[call], torch)


def test_legacy_cholesky_records_its_own_node():
    def run(t):
        A = t.tensor([[4.0, 2.0], [2.0, 3.0]], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            L = t.cholesky(A)
        L.sum().backward()
        return L.grad_fn.name(), [v for row in A.grad.tolist() for v in row]

    (name_ours, grad_ours), (name_theirs, grad_theirs) = run(tg), run(torch)
    assert name_ours == name_theirs
    assert grad_ours == pytest.approx(grad_theirs, rel=1e-6)


def test_complex_upper_cholesky_has_positive_zero_imaginary_parts():
    def run(t):
        U = t.linalg.cholesky(t.tensor([[4.0, 1 + 1j], [1 - 1j, 3.0]], dtype=t.complex128), upper=True)
        return repr(t.view_as_real(U))

    assert normalised(run(tg)) == run(torch)
