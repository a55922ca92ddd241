"""Names added in ops/tensor_extras.py and ops/legacy_linalg.py, against torch: values, dtypes, graphs,
warnings and errors."""

from __future__ import annotations

import array
import warnings

import numpy as np
import pytest
from _lib import assert_close, raised, recorded_graph, tg, torch, warning_texts

RS = np.random.RandomState(0)
A = RS.randn(3, 3) + 3 * np.eye(3)
B = RS.randn(3, 2)
X6 = np.arange(6.0).reshape(2, 3)
TALL = RS.randn(4, 3)
POS = RS.rand(2, 3) + 0.5


def _both(program):
    return program(tg), program(torch)


def _same(program, **tol):
    ours, theirs = _both(program)
    assert_close(ours, theirs, check_dtype=True, **tol)


VALUES = {
    "apply_": lambda L: L.tensor(X6).apply_(lambda v: v * 2),
    "apply_int": lambda L: L.arange(3).apply_(lambda v: v * 2.7),
    "map_": lambda L: L.tensor(X6).map_(L.ones(3, dtype=L.float64), lambda a, b: a + b),
    "map2_": lambda L: L.tensor(X6).map2_(L.ones(3, dtype=L.float64), L.ones(2, 1, dtype=L.float64) * 2,
                                          lambda a, b, c: a + b * c),
    "fill_diagonal_": lambda L: L.zeros(3, 4).fill_diagonal_(5),
    "fill_diagonal_wrap": lambda L: L.zeros(7, 3).fill_diagonal_(5, wrap=True),
    "fill_diagonal_3d": lambda L: L.zeros(3, 3, 3).fill_diagonal_(2),
    "hardshrink": lambda L: L.tensor(X6 - 2.5).hardshrink(1.0),
    "prelu": lambda L: L.tensor(X6 - 2.5).prelu(L.tensor([0.25], dtype=L.float64)),
    "digamma_": lambda L: L.tensor(X6 + 1).digamma_(),
    "lgamma_": lambda L: L.tensor(X6 + 1).lgamma_(),
    "polygamma_": lambda L: L.tensor(X6 + 1).polygamma_(2),
    "mvlgamma_": lambda L: L.tensor(X6 + 2).mvlgamma_(2),
    "nonzero_static": lambda L: L.tensor([0, 1, 0, 2]).nonzero_static(size=4),
    "nonzero_static_fill": lambda L: L.nonzero_static(L.tensor([[0, 1], [3, 0]]), size=1, fill_value=-5),
    "nonzero_static_0d": lambda L: L.tensor(3).nonzero_static(size=2),
    "new_empty_strided": lambda L: L.zeros(3).new_empty_strided((2, 3), (1, 2), dtype=L.int64).stride(),
    "dim_order": lambda L: (L.zeros(2, 3, 4).permute(2, 0, 1).dim_order(), L.zeros(2, 3).dim_order()),
    "is_set_to": lambda L: (lambda a: (a.is_set_to(a), a.is_set_to(a.view(6)), a.is_set_to(L.zeros(2, 3))))(
        L.zeros(2, 3)),
    "pinned_shared": lambda L: (lambda a: (a.is_pinned(), a.is_shared(), a.share_memory_() is a, a.is_shared()))(
        L.zeros(2)),
    "resize_": lambda L: L.tensor(X6).resize_(1, 2),
    "resize_as_": lambda L: L.tensor(X6).resize_as_(L.zeros(3)),
    "empty_permuted": lambda L: L.empty_permuted((2, 3, 4), (2, 0, 1)).stride(),
    "frombuffer": lambda L: L.frombuffer(array.array("i", [1, 2, 3]), dtype=L.int32),
    "frombuffer_count": lambda L: L.frombuffer(bytearray(b"abcd"), dtype=L.uint8, count=2, offset=1),
    "histogramdd": lambda L: L.histogramdd(L.tensor([[0., 1.], [1., 0.], [2., 0.], [2., 2.]]), bins=[3, 3],
                                           weight=L.tensor([1., 2., 4., 8.])),
    "adjoint": lambda L: L.adjoint(L.tensor(A)),
    "cholesky_inverse": lambda L: L.cholesky_inverse(L.tensor(np.tril(A))),
    "triangular_solve": lambda L: L.triangular_solve(L.tensor(B), L.tensor(A), upper=False),
    "geqrf": lambda L: L.tensor(TALL).geqrf(),
    "ormqr": lambda L: L.ormqr(*L.geqrf(L.tensor(A)), L.tensor(B), transpose=True),
    "lu": lambda L: L.lu(L.tensor(A)),
    "lu_infos": lambda L: L.tensor(np.zeros((3, 3))).lu(get_infos=True),
    "lu_solve": lambda L: L.lu_solve(L.tensor(B), *L.lu(L.tensor(A))),
    "range": lambda L: (L.range(1, 4), L.range(0, 1, 0.25), L.range(1, 4, dtype=L.int64)),
    "frobenius_norm": lambda L: L.frobenius_norm(L.tensor(A), (0, 1)),
    "nuclear_norm": lambda L: (L.nuclear_norm(L.tensor(A)), L.nuclear_norm(L.tensor(A), keepdim=True)),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_and_dtypes(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(VALUES[name], rtol=1e-7, atol=1e-9)


def test_named_results():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lu_infos = lambda L: L.lu(L.tensor(np.zeros((3, 3))), get_infos=True)  # noqa: E731
        for program in (VALUES["geqrf"], VALUES["triangular_solve"], lu_infos, VALUES["histogramdd"]):
            ours, theirs = _both(program)
            assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs)
        for program in (VALUES["lu"], VALUES["lu_infos"]):
            ours, theirs = _both(program)
            assert type(ours) is type(theirs) is tuple


def _grad_program(name):
    def program(L):
        a = L.tensor(A, requires_grad=True)
        b = L.tensor(B, requires_grad=True)
        tau = L.tensor([1.2, 0.7, 1.5], dtype=L.float64, requires_grad=True)
        x = L.tensor(POS, requires_grad=True) * 1
        outs = {
            "cholesky_inverse": lambda: [L.cholesky_inverse(a.tril(), upper=False)],
            "triangular_solve": lambda: list(L.triangular_solve(b, a, transpose=True)),
            "ormqr": lambda: [L.ormqr(a, tau, b)],
            "lu": lambda: list(L.lu(a)),
            "lu_solve": lambda: [L.lu_solve(b, *L.lu(a))],
            "frobenius_norm": lambda: [L.frobenius_norm(a, (0, 1))],
            "nuclear_norm": lambda: [L.nuclear_norm(a)],
            "adjoint": lambda: [L.adjoint(a)],
            "fill_diagonal_": lambda: [x.fill_diagonal_(2.0)],
            "digamma_": lambda: [x.digamma_()],
            "polygamma_": lambda: [x.polygamma_(1)],
            "mvlgamma_": lambda: [(x + 2).mvlgamma_(2)],
            "lgamma_": lambda: [x.lgamma_()],
            "hardshrink": lambda: [x.hardshrink(0.9)],
            "prelu": lambda: [x.prelu(b.narrow(0, 0, 1).narrow(1, 0, 1).reshape(1))],
            "geqrf": lambda: list(L.geqrf(a)),
            "rnn_tanh_cell": lambda: [L.rnn_tanh_cell(x, x, a, a, tau, tau)],
            "rnn_relu_cell": lambda: [L.rnn_relu_cell(x, x, a, a)],
            "gru_cell": lambda: [L.gru_cell(x, x.narrow(1, 0, 1), L.cat([a.narrow(1, 0, 3)] * 1, 0).narrow(0, 0, 3),
                                            a.narrow(0, 0, 3).narrow(1, 0, 1))],
            "lstm_cell": lambda: list(L.lstm_cell(x, (x.narrow(1, 0, 1), x.narrow(1, 1, 1)),
                                                  L.cat([a, a.narrow(0, 0, 1)], 0), L.cat([a, a], 0).narrow(1, 0, 1)
                                                  .narrow(0, 0, 4), tau.narrow(0, 0, 1).repeat(4), None)),
        }[name]()
        graph = recorded_graph(outs)
        floats = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
        leaves = [t for t in (a, b, tau) if t.requires_grad]
        grads = None
        if name != "geqrf":
            total = sum((o * L.tensor(np.linspace(0.5, 1.5, o.numel()).reshape(tuple(o.shape)))).sum()
                        for o in floats)
            grads = L.autograd.grad(total, leaves, allow_unused=True)
        return graph, outs, grads

    return program


GRAPHS = ["cholesky_inverse", "triangular_solve", "ormqr", "lu", "lu_solve", "frobenius_norm", "nuclear_norm",
          "adjoint", "fill_diagonal_", "digamma_", "polygamma_", "mvlgamma_", "lgamma_", "hardshrink", "prelu", "geqrf",
          "rnn_tanh_cell", "rnn_relu_cell", "gru_cell", "lstm_cell"]


@pytest.mark.parametrize("name", GRAPHS)
def test_graphs_and_grads(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (g1, o1, d1), (g2, o2, d2) = _both(_grad_program(name))
    assert g1 == g2
    assert_close(o1, o2, rtol=1e-7, atol=1e-9)
    if d2 is not None:
        assert [d is None for d in d1] == [d is None for d in d2]
        assert_close([d for d in d1 if d is not None], [d for d in d2 if d is not None], rtol=1e-6, atol=1e-8)


def test_geqrf_backward_raises():
    def program(L):
        L.geqrf(L.tensor(A, requires_grad=True)).a.sum().backward()

    assert raised(tg, program) == raised(torch, program)


def test_saved_values():
    def program(L):
        a = L.tensor(A, requires_grad=True)
        x = L.triangular_solve(L.tensor(B, requires_grad=True), a, upper=False).solution.grad_fn
        o = L.ormqr(a, L.tensor([1.2, 0.7, 1.5], dtype=L.float64, requires_grad=True), L.tensor(B), left=True).grad_fn
        c = L.cholesky_inverse(a, upper=True).grad_fn
        return ((x._saved_upper, x._saved_transpose, x._saved_unitriangular, x._saved_solution, x._saved_A),
                (o._saved_left, o._saved_transpose, o._saved_input2, o._saved_result), (c._saved_upper, c._saved_result))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(program, rtol=1e-7, atol=1e-9)


def test_deprecation_warnings():
    def program(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.set_warn_always(True)
            try:
                L.range(1, 3)
                L.triangular_solve(L.tensor(B), L.tensor(A))
                lu = L.lu(L.tensor(A))
                L.lu_solve(L.tensor(B), *lu)
            finally:
                L.set_warn_always(False)
        return warning_texts(caught)

    assert program(tg) == program(torch)


ERRORS = {
    "solve": lambda L: L.solve(L.ones(2, 2), L.ones(2, 2)),
    "symeig": lambda L: L.symeig(L.ones(2, 2)),
    "eig": lambda L: L.eig(L.ones(2, 2)),
    "lstsq": lambda L: L.lstsq(L.ones(2, 2), L.ones(2, 2)),
    "matrix_rank": lambda L: L.matrix_rank(L.ones(2, 2)),
    "Tensor.solve": lambda L: L.ones(2, 2).solve(L.ones(2, 2)),
    "Tensor.symeig": lambda L: L.ones(2, 2).symeig(),
    "Tensor.eig": lambda L: L.ones(2, 2).eig(True),
    "Tensor.lstsq": lambda L: L.ones(2, 2).lstsq(L.ones(2, 2)),
    "apply_grad": lambda L: L.ones(2, requires_grad=True).apply_(lambda v: v),
    "map_grad": lambda L: L.ones(2, requires_grad=True).map_(L.ones(2), lambda a, b: a),
    "map_dtype": lambda L: L.ones(2).map_(L.ones(2, dtype=L.int64), lambda a, b: a),
    "map2_dtype": lambda L: L.ones(2).map2_(L.ones(2), L.ones(2, dtype=L.int64), lambda a, b, c: a),
    "fill_diagonal_1d": lambda L: L.zeros(3).fill_diagonal_(1),
    "fill_diagonal_unequal": lambda L: L.zeros(3, 3, 2).fill_diagonal_(1),
    "fill_diagonal_leaf": lambda L: L.zeros(3, 3, requires_grad=True).fill_diagonal_(1),
    "lgamma_int": lambda L: L.arange(3).lgamma_(),
    "pin_memory": lambda L: L.zeros(2).pin_memory(),
    "resize_grad": lambda L: L.zeros(2, requires_grad=True).resize_(3),
    "dim_order_ambiguous": lambda L: L.zeros(1, 3).dim_order(ambiguity_check=True),
    "dim_order_bad_arg": lambda L: L.zeros(1, 3).dim_order(ambiguity_check="x"),
    "empty_permuted": lambda L: L.empty_permuted((2, 3, 4), (2, 0)),
    "frombuffer_size": lambda L: L.frombuffer(bytearray(b"abc"), dtype=L.int32),
    "frombuffer_empty": lambda L: L.frombuffer(bytearray(b""), dtype=L.int32),
    "binomial_int": lambda L: L.binomial(L.tensor([10, 5]), L.tensor([0.5, 0.2])),
    "triangular_solve_1d": lambda L: L.triangular_solve(L.ones(3), L.ones(3, 3)),
    "triangular_solve_dtype": lambda L: L.triangular_solve(L.ones(3, 2), L.ones(3, 3, dtype=L.float64)),
    "triangular_solve_sizes": lambda L: L.triangular_solve(L.ones(2, 2), L.ones(3, 3)),
    "triangular_solve_int": lambda L: L.triangular_solve(L.ones(3, 2, dtype=L.int64), L.ones(3, 3, dtype=L.int64)),
    "cholesky_inverse_square": lambda L: L.cholesky_inverse(L.ones(3, 2)),
    "cholesky_inverse_1d": lambda L: L.cholesky_inverse(L.ones(3)),
    "cholesky_inverse_int": lambda L: L.cholesky_inverse(L.ones(3, 3, dtype=L.int64)),
    "geqrf_1d": lambda L: L.geqrf(L.ones(3)),
    "geqrf_int": lambda L: L.geqrf(L.ones(3, 3, dtype=L.int64)),
    "ormqr_dtype": lambda L: L.ormqr(L.ones(3, 3), L.ones(3), L.ones(3, 3, dtype=L.float64)),
    "ormqr_tau": lambda L: L.ormqr(L.ones(2, 3, 3), L.ones(2, 2), L.ones(2, 2, 3), left=False),
    "lu_no_pivot": lambda L: L.lu(L.ones(3, 3), pivot=False),
    "lu_solve_pivots": lambda L: L.lu_solve(L.ones(3, 2), L.ones(3, 3), L.ones(3, dtype=L.int64)),
    "frobenius_norm_3_dims": lambda L: L.frobenius_norm(L.ones(2, 3, 3), (1, 2, 0)),
    "range_no_end": lambda L: L.range(4),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = raised(tg, ERRORS[name]), raised(torch, ERRORS[name])
    assert theirs is not None and ours == theirs


def test_binomial_statistics():
    tg.manual_seed(0)
    count, prob = tg.full((20000,), 10.0, dtype=tg.float64), tg.full((20000,), 0.3, dtype=tg.float64)
    draws = tg.binomial(count, prob)
    assert draws.dtype == tg.float64 and abs(draws.mean().item() - 3.0) < 0.05
    assert tg.binomial(count.requires_grad_(), prob).grad_fn.name() == torch.binomial(
        torch.ones(1, requires_grad=True), torch.ones(1)).grad_fn.name()
