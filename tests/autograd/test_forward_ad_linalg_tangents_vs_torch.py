"""Forward-mode tangents of the LU family, SVD, lstsq and householder_product against torch's: values, and the
graph a tangent records when its inputs also require grad (each node's name and edges, output numbers included).

tracegrad derived these tangents from the backward rules (a double backward: TBackward0 and MmBackward0 where
torch's formulas transpose and solve), its lstsq residuals moved with X's own tangent (torch's formula drops that
term), the lstsq residuals of the default driver had no graph (torch's is a clone of the empty primal), a vector
right-hand side was squeezed with ``squeeze.dims`` (SqueezeBackward2) and linalg.lu's and lu_unpack's L and U were
outputs 1 and 2 of their nodes (torch numbers only the differentiable outputs: L is output 0, and a hook on the
node sees two gradients).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_close, graph_with_edges, tg, torch

_RNG = np.random.default_rng(20260)
_SQUARE = np.eye(3) * 3 + _RNG.standard_normal((3, 3))
_TALL = np.vstack([np.eye(3) * 2, np.zeros((2, 3))]) + 0.3 * _RNG.standard_normal((5, 3))
_WIDE = np.hstack([np.eye(3) * 2, np.zeros((3, 2))]) + 0.3 * _RNG.standard_normal((3, 5))
_RHS = _RNG.standard_normal((5, 2))


def _tangents(lib, fn, primals: list, with_tangent: list, requires_grad: list | None = None) -> list:
    """``fn`` on leaves made from ``primals`` (requiring grad where ``requires_grad`` says, all by default), those
    marked in ``with_tangent`` dual with fixed tangents; per floating output, None or (values, requires_grad,
    graph)."""
    fw = lib.autograd.forward_ad
    requires_grad = requires_grad or [True] * len(primals)
    with fw.dual_level(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = []
        for k, (p, dual, rg) in enumerate(zip(primals, with_tangent, requires_grad)):
            leaf = lib.tensor(p).requires_grad_(rg)
            tangent = np.cos(np.arange(p.size) + k).reshape(p.shape)
            args.append(fw.make_dual(leaf, lib.tensor(tangent)) if dual else leaf)
        outs = fn(lib, *args)
        result = []
        for o in (outs if isinstance(outs, (tuple, list)) else (outs,)):
            if not o.is_floating_point():
                continue
            t = fw.unpack_dual(o).tangent
            result.append(None if t is None else (t.detach().numpy().copy(), t.requires_grad,
                                                  graph_with_edges(t.grad_fn)))
        return result


def _assert_tangents_as_torch(fn, primals: list, with_tangent: list, requires_grad: list | None = None) -> None:
    ours = _tangents(tg, fn, primals, with_tangent, requires_grad)
    theirs = _tangents(torch, fn, primals, with_tangent, requires_grad)
    assert len(ours) == len(theirs)
    for mine, want in zip(ours, theirs):
        assert (mine is None) == (want is None)
        if want is not None:
            assert mine[1:] == want[1:]
            assert_close(mine[0], want[0], rtol=1e-9, atol=1e-10)


_SOME_TANGENTS = [(True, True), (True, False), (False, True)]


@pytest.mark.parametrize("driver", [None, "gelsd"])
@pytest.mark.parametrize("with_tangent", _SOME_TANGENTS)
def test_lstsq_tangents_as_torch(driver, with_tangent):
    """The residuals' tangent is 2 Re(r (dA X - dB)) (gelsd), or a clone of the empty residuals (gelsy)."""
    _assert_tangents_as_torch(lambda lib, A, B: lib.linalg.lstsq(A, B, driver=driver)[:2], [_TALL, _RHS],
                              list(with_tangent))


def test_solve_of_a_vector_squeezes_its_tangent_as_torch():
    _assert_tangents_as_torch(lambda lib, A, b: lib.linalg.solve(A, b), [_SQUARE, _RHS[:3, 0]], [True, True])


@pytest.mark.parametrize("A", [_SQUARE, _TALL, _WIDE], ids=["square", "tall", "wide"])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_tangents_as_torch(A, full_matrices):
    """linalg_svd_jvp's U, S and Vh tangents (full matrices: the extra columns' tangents are zeros). The singular
    vectors are compared with their first row's signs made positive (LAPACK and NumPy may pick other signs)."""

    def svd(lib, x):
        U, S, Vh = lib.linalg.svd(x, full_matrices=full_matrices)
        row_signs = lib.ones(Vh.shape[-2], 1, dtype=Vh.dtype)  # (the rows past k have zero tangents)
        row_signs[:S.shape[-1], 0] = U[0, :S.shape[-1]].sign().detach()
        return U * U[:1].sign().detach(), S, Vh * row_signs

    _assert_tangents_as_torch(svd, [A], [True])


@pytest.mark.parametrize("A", [_SQUARE, _TALL, _WIDE], ids=["square", "tall", "wide"])
def test_lu_factorisation_tangents_as_torch(A):
    _assert_tangents_as_torch(lambda lib, x: lib.linalg.lu(x)[1:], [A], [True])
    _assert_tangents_as_torch(lambda lib, x: lib.linalg.lu_factor_ex(x).LU, [A], [True])


@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False), (False, True)])
@pytest.mark.parametrize("with_tangent,requires_grad", [((True, True), (True, True)), ((True, False), (True, True)),
                                                        ((False, True), (True, True)), ((False, True), (False, True)),
                                                        ((True, False), (False, True))])
def test_lu_solve_tangents_as_torch(left, adjoint, with_tangent, requires_grad):
    """A missing tangent is torch's zero tensor: where a graph records, its terms keep their nodes."""
    LU, pivots = torch.linalg.lu_factor(torch.tensor(_SQUARE))
    B = _RHS[:3] if left else _RHS[:3].T.copy()

    def solve(lib, LU, B):
        return lib.linalg.lu_solve(LU, lib.tensor(pivots.numpy()), B, left=left, adjoint=adjoint)

    _assert_tangents_as_torch(solve, [LU.numpy(), B], list(with_tangent), list(requires_grad))


@pytest.mark.parametrize("with_tangent", _SOME_TANGENTS)
def test_householder_product_tangents_as_torch(with_tangent):
    reflectors, tau = torch.geqrf(torch.tensor(_TALL))
    _assert_tangents_as_torch(lambda lib, V, t: lib.linalg.householder_product(V, t), [reflectors.numpy(),
                                                                                     tau.numpy()[:2]],
                              list(with_tangent))


def _lu_output_numbers(lib) -> list:
    """L's and U's output_nr, the input_nr of edges to their node, and how many gradients a hook on it sees."""
    A = lib.tensor(_SQUARE).requires_grad_()
    facts = []
    for _, L, U in (lib.linalg.lu(A), lib.lu_unpack(*lib.linalg.lu_factor(A))):
        seen = []
        L.grad_fn.register_prehook(lambda grads, seen=seen: seen.append(len(grads)))
        (L * 2).sum().backward(retain_graph=True)
        facts.append((L.output_nr, U.output_nr, (U * 2).grad_fn.next_functions[0][1], seen))
    return facts


def test_lu_outputs_numbered_as_torch():
    """P, which has no gradient, takes no place among the node's outputs."""
    assert _lu_output_numbers(tg) == _lu_output_numbers(torch)


@pytest.mark.parametrize("A", [_SQUARE, _TALL, _WIDE], ids=["square", "tall", "wide"])
@pytest.mark.parametrize("unpack_pivots", [True, False])
def test_lu_unpack_tangents_as_torch(A, unpack_pivots):
    """derivatives.yaml's formulas: L's tangent dLU's strictly lower part, U's its upper part, each narrowed to the
    factor's shape (a tangent derived from the backward crashed: the VJP takes no gradient for P)."""
    LU, pivots = torch.linalg.lu_factor(torch.tensor(A))

    def unpack(lib, LU):
        return lib.lu_unpack(LU, lib.tensor(pivots.numpy()), unpack_pivots=unpack_pivots)[1:]

    _assert_tangents_as_torch(unpack, [LU.numpy()], [True])


def _lu_unpack_without_data_error(lib) -> str:
    fw = lib.autograd.forward_ad
    LU, pivots = lib.linalg.lu_factor(lib.tensor(_WIDE))
    with fw.dual_level(), pytest.raises(RuntimeError) as info:
        lib.lu_unpack(fw.make_dual(LU, lib.ones_like(LU)), pivots, unpack_data=False)
    return str(info.value)


def test_lu_unpack_without_data_refuses_the_tangent_as_torch():
    """unpack_data=False: L and U are empty, and torch refuses their tangents' sizes."""
    assert _lu_unpack_without_data_error(tg) == _lu_unpack_without_data_error(torch)


def _lu_unpack_saved(lib) -> list:
    LU, pivots = lib.linalg.lu_factor(lib.tensor(_WIDE).requires_grad_())
    node = lib.lu_unpack(LU, pivots)[1].grad_fn
    return [(name, getattr(node, name)) for name in dir(node) if name.startswith("_saved")]


def test_lu_unpack_node_saves_as_torch():
    """LuUnpackBackward0 keeps LU_data's last two sizes (derivatives.yaml's LU_data.sym_size(-2), sym_size(-1))."""
    assert _lu_unpack_saved(tg) == _lu_unpack_saved(torch)
