"""torch.linalg's LU family, lstsq, matrix_exp, householder_product and composites (tensorinv, tensorsolve,
vander, cond) against torch: values, gradients, recorded graphs and error messages."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _lib import assert_close, raised, recorded_graph, tg, torch

RNG = np.random.default_rng(0)
A3 = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
B32 = RNG.standard_normal((3, 2))
A_BATCH = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])
TALL = RNG.standard_normal((4, 3))
WIDE = RNG.standard_normal((2, 4))
T4 = (RNG.standard_normal((4, 4)) + 3 * np.eye(4)).reshape(2, 2, 2, 2)


def _leaf(lib, x):
    return lib.tensor(x, dtype=lib.float64, requires_grad=True)


def _first_outputs(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [o for o in outs if o.requires_grad]


PROGRAMS = {
    "lu_factor": (lambda L, a: L.linalg.lu_factor(a[0]), [A3]),
    "lu_factor_ex_batch": (lambda L, a: L.linalg.lu_factor_ex(a[0]), [A_BATCH]),
    "lu_factor_tall": (lambda L, a: L.linalg.lu_factor(a[0]), [TALL]),
    "lu_factor_wide": (lambda L, a: L.linalg.lu_factor(a[0]), [WIDE]),
    "lu": (lambda L, a: L.linalg.lu(a[0]), [A3]),
    "lu_tall": (lambda L, a: L.linalg.lu(a[0]), [TALL]),
    "lu_wide": (lambda L, a: L.linalg.lu(a[0]), [WIDE]),
    "lu_solve": (lambda L, a: L.linalg.lu_solve(*L.linalg.lu_factor(a[0]), a[1]), [A3, B32]),
    "lu_solve_adjoint": (lambda L, a: L.linalg.lu_solve(*L.linalg.lu_factor(a[0]), a[1], adjoint=True), [A3, B32]),
    "lu_solve_right": (lambda L, a: L.linalg.lu_solve(*L.linalg.lu_factor(a[0]), a[1].mT, left=False),
                       [A3, B32]),
    "lu_solve_right_adjoint": (lambda L, a: L.linalg.lu_solve(*L.linalg.lu_factor(a[0]), a[1].mT, left=False,
                                                              adjoint=True), [A3, B32]),
    "solve_ex": (lambda L, a: L.linalg.solve_ex(a[0], a[1]), [A3, B32]),
    "lstsq": (lambda L, a: L.linalg.lstsq(a[0], a[1]), [A3, B32]),
    "lstsq_tall": (lambda L, a: L.linalg.lstsq(a[0], a[1]), [TALL, RNG.standard_normal((4, 2))]),
    "lstsq_gelsd": (lambda L, a: L.linalg.lstsq(a[0], a[1], driver="gelsd"), [TALL, RNG.standard_normal((4, 2))]),
    "lstsq_vector": (lambda L, a: L.linalg.lstsq(a[0], a[1]), [TALL, RNG.standard_normal(4)]),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a[0]), [A3]),
    "matrix_exp_big": (lambda L, a: L.matrix_exp(a[0] * 3), [A_BATCH]),
    "tensorinv": (lambda L, a: L.linalg.tensorinv(a[0], ind=2), [T4]),
    "tensorsolve": (lambda L, a: L.linalg.tensorsolve(a[0], a[1]), [T4, RNG.standard_normal((2, 2))]),
    "vander": (lambda L, a: L.linalg.vander(a[0]), [RNG.standard_normal(4)]),
    "vander_N": (lambda L, a: L.linalg.vander(a[0], N=3), [RNG.standard_normal((2, 4))]),
    "householder_product": (lambda L, a: L.linalg.householder_product(a[0], a[1]),
                            [RNG.standard_normal((4, 3)), RNG.standard_normal(2)]),
    "orgqr": (lambda L, a: L.orgqr(a[0], a[1]), [RNG.standard_normal((4, 3)), RNG.standard_normal(3)]),
    **{f"cond_{p}": (lambda L, a, p=p: L.linalg.cond(a[0], p), [A3]) for p in (None, 2, -2, "nuc")},
}

# torch's cond for these orders fills the inverse that linalg_inv_ex saved in place, so its backward raises
INPLACE_COND = (1, -1, math.inf, -math.inf, "fro")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_grads_graphs(name):
    program, arrays = PROGRAMS[name]
    results = {}
    for lib in (tg, torch):
        args = [_leaf(lib, x) for x in arrays]
        out = program(lib, args)
        outs = _first_outputs(out)
        cot = [lib.tensor(np.random.default_rng(1).standard_normal(tuple(o.shape))) for o in outs]
        grads = lib.autograd.grad(outs, args, cot, allow_unused=True)
        results[lib] = (out, grads, recorded_graph(outs))
    (ours, our_grads, our_graph), (theirs, their_grads, their_graph) = results[tg], results[torch]
    assert_close(tuple(ours) if isinstance(ours, tuple) else ours,
                 tuple(theirs) if isinstance(theirs, tuple) else theirs, rtol=1e-7, atol=1e-9, check_dtype=True)
    assert_close(our_grads, their_grads, rtol=1e-6, atol=1e-8)
    assert our_graph == their_graph


@pytest.mark.parametrize("p", INPLACE_COND, ids=str)
def test_cond_graph_and_failing_backward(p):
    def program(lib):
        A = _leaf(lib, A3)
        out = lib.linalg.cond(A, p)
        graph = recorded_graph([out])
        err = raised(lib, lambda _: out.backward())
        return out, graph, err[1].split(" Hint:")[0].replace("torch.", "") if err else None

    (ours, our_graph, our_err), (theirs, their_graph, their_err) = program(tg), program(torch)
    assert_close(ours, theirs, rtol=1e-7, atol=1e-9)
    assert our_graph == their_graph
    assert our_err == their_err and our_err is not None


def test_return_type_fields():
    for lib_a, lib_b in ((tg, torch),):
        for fn, args in (("lu_factor", (A3,)), ("lu_factor_ex", (A3,)), ("lu", (A3,)), ("solve_ex", (A3, B32)),
                         ("lstsq", (A3, B32))):
            ours = getattr(lib_a.linalg, fn)(*[lib_a.tensor(x) for x in args])
            theirs = getattr(lib_b.linalg, fn)(*[lib_b.tensor(x) for x in args])
            assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs)


def test_singular_infos():
    for lib in (tg, torch):
        out = lib.linalg.lu_factor_ex(lib.tensor(SINGULAR))
        assert int(out.info) == 3
    ours = tg.linalg.solve_ex(tg.tensor(SINGULAR), tg.tensor(B32))
    theirs = torch.linalg.solve_ex(torch.tensor(SINGULAR), torch.tensor(B32))
    assert int(ours.info) == int(theirs.info)


ERRORS = {
    "lu_factor_singular": lambda L: L.linalg.lu_factor(L.tensor(SINGULAR)),
    "lu_factor_singular_batch": lambda L: L.linalg.lu_factor(L.tensor(np.stack([A3, SINGULAR]))),
    "lu_factor_ex_check": lambda L: L.linalg.lu_factor_ex(L.tensor(SINGULAR), check_errors=True),
    "lu_factor_1d": lambda L: L.linalg.lu_factor(L.ones(3)),
    "lu_factor_int": lambda L: L.linalg.lu_factor(L.ones(3, 3, dtype=L.int64)),
    "lu_factor_nopivot": lambda L: L.linalg.lu_factor(L.tensor(A3), pivot=False),
    "lu_1d": lambda L: L.linalg.lu(L.ones(3)),
    "lu_solve_shape": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(A3)), L.ones(2, 2, dtype=L.float64)),
    "lu_solve_dtype": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(A3)), L.ones(3, 2)),
    "lu_solve_pivots": lambda L: L.linalg.lu_solve(L.linalg.lu_factor(L.tensor(A3))[0],
                                                   L.linalg.lu_factor(L.tensor(A3))[1].long(),
                                                   L.ones(3, 2, dtype=L.float64)),
    "lu_solve_vector": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(A3)), L.ones(3, dtype=L.float64)),
    "lstsq_rows": lambda L: L.linalg.lstsq(L.tensor(A3), L.ones(4, 2, dtype=L.float64)),
    "lstsq_dtype": lambda L: L.linalg.lstsq(L.tensor(A3), L.ones(3, 2)),
    "lstsq_1d": lambda L: L.linalg.lstsq(L.ones(3), L.ones(3)),
    "lstsq_driver": lambda L: L.linalg.lstsq(L.tensor(A3), L.tensor(B32), driver="foo"),
    "lstsq_int": lambda L: L.linalg.lstsq(L.ones(3, 3, dtype=L.int64), L.ones(3, 2, dtype=L.int64)),
    "matrix_exp_nonsquare": lambda L: L.linalg.matrix_exp(L.ones(3, 4)),
    "matrix_exp_int": lambda L: L.linalg.matrix_exp(L.ones(3, 3, dtype=L.int64)),
    "tensorinv_ind": lambda L: L.linalg.tensorinv(L.ones(2, 2, 2, 2), ind=0),
    "tensorinv_shape": lambda L: L.linalg.tensorinv(L.ones(2, 3, 2, 2), ind=2),
    "tensorsolve_shape": lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6), L.ones(2, 2)),
    "vander_N": lambda L: L.linalg.vander(L.ones(3), N=1),
    "vander_bool": lambda L: L.linalg.vander(L.ones(3, dtype=L.bool)),
    "cond_nonsquare_1": lambda L: L.linalg.cond(L.ones(3, 4), 1),
    "cond_nonsquare_fro": lambda L: L.linalg.cond(L.ones(3, 4), "fro"),
    "cond_bad_ord": lambda L: L.linalg.cond(L.ones(3, 4), 3),
    "cond_bad_str": lambda L: L.linalg.cond(L.ones(3, 3), "foo"),
    "cond_1d": lambda L: L.linalg.cond(L.ones(3), 2),
    "householder_1d": lambda L: L.linalg.householder_product(L.ones(3), L.ones(2)),
    "householder_wide": lambda L: L.linalg.householder_product(L.ones(3, 4), L.ones(2)),
    "householder_tau": lambda L: L.linalg.householder_product(L.ones(4, 3), L.ones(4)),
    "householder_ndim": lambda L: L.linalg.householder_product(L.ones(4, 3), L.ones(2, 2)),
    "householder_dtype": lambda L: L.linalg.householder_product(L.ones(4, 3), L.ones(2, dtype=L.float64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match(name):
    ours, theirs = raised(tg, ERRORS[name]), raised(torch, ERRORS[name])
    assert ours is not None and theirs is not None
    assert ours[1] == theirs[1]
    assert ours[0] == theirs[0] or {ours[0], theirs[0]} == {"LinAlgError", "_LinAlgError"}


def test_singular_errors():
    for prog in (lambda L: L.linalg.solve_ex(L.tensor(SINGULAR), L.tensor(B32), check_errors=True),
                 lambda L: L.linalg.tensorinv(L.zeros(2, 2, 2, 2), ind=2)):
        ours, theirs = raised(tg, prog), raised(torch, prog)
        assert ours[1] == theirs[1]


def test_cond_special_values():
    for p in (None, 1, math.inf, "fro", "nuc", -2):
        for x in (SINGULAR, np.zeros((2, 2)), np.zeros((0, 0)), RNG.standard_normal((3, 4))):
            if (isinstance(p, str) or p in (1, math.inf)) and x.shape[0] != x.shape[1]:
                continue
            ours = tg.linalg.cond(tg.tensor(x), p)
            theirs = torch.linalg.cond(torch.tensor(x), p)
            finite = np.isfinite(theirs.numpy())
            if finite.all() and abs(float(theirs.sum())) > 1e12:  # numerically singular: only the magnitude
                continue
            assert_close(ours, theirs, rtol=1e-6, atol=1e-9)


def test_saved_lu_solve_attributes():
    for lib in (tg, torch):
        LU, piv = lib.linalg.lu_factor(lib.tensor(A3))
        LU.requires_grad_()
        fn = lib.linalg.lu_solve(LU, piv, lib.tensor(B32), adjoint=True).grad_fn
        assert fn._saved_adjoint is True and fn._saved_left is True
        assert tuple(fn._saved_result.shape) == (3, 2)
