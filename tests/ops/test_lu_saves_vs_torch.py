"""det, slogdet and solve keep torch's LU factorisation: ``_saved_LU`` and ``_saved_pivots`` (int32, 1-based,
LAPACK getrf's choice of pivot) equal torch's, of A^T for a contiguous A in det/slogdet and of A otherwise,
and the gradients computed from them (first order, second order, forward AD) equal torch's, for random,
batched, non-contiguous and singular inputs in float32 and float64."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, to_numpy, torch

RNG = np.random.default_rng(7)

SINGULAR = {
    "rank_n-1": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.5, 2.0]]),
    "rank_1": np.outer([1.0, 2.0, 3.0], [0.5, -1.0, 2.0]),
    "2x2": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "zeros": np.zeros((3, 3)),
    "ties": np.array([[1.0, 1.0, 1.0], [-1.0, 1.0, 2.0], [1.0, -1.0, 3.0]]),
    "arange": np.arange(16.0).reshape(4, 4),
}


def _tensor(lib, a: np.ndarray, layout: str, requires_grad: bool = True):
    """``a`` as a tensor of the given layout: contiguous, transposed (a column-major copy) or strided."""
    if layout == "T":
        t = lib.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).mT
    elif layout == "strided":
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        wide[..., ::2] = a
        t = lib.tensor(wide)[..., ::2]
    else:
        t = lib.tensor(a)
    return t.requires_grad_(requires_grad)


def _saved(lib, fn: str, a: np.ndarray, layout: str):
    x = _tensor(lib, a, layout)
    if fn == "solve":
        out = lib.linalg.solve(x, lib.tensor(np.ones(a.shape[:-1] + (2,), dtype=a.dtype)))
    else:
        out = getattr(lib.linalg, fn)(x)
        out = out[1] if fn == "slogdet" else out
    node = out.grad_fn
    return node.name(), node._saved_LU, node._saved_pivots


def _check_saved(fn: str, a: np.ndarray, layout: str, rtol: float) -> None:
    (name, lu, piv), (tname, tlu, tpiv) = _saved(tg, fn, a, layout), _saved(torch, fn, a, layout)
    assert name == tname
    assert str(piv.dtype).split(".")[-1] == str(tpiv.dtype).split(".")[-1] == "int32"
    np.testing.assert_array_equal(to_numpy(piv), to_numpy(tpiv))
    assert tuple(lu.shape) == tuple(tlu.shape) and lu.stride() == tlu.stride()
    scale = max(1.0, float(np.abs(to_numpy(tlu)).max()))
    np.testing.assert_allclose(to_numpy(lu), to_numpy(tlu), rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contig", "T", "strided"])
@pytest.mark.parametrize("fn", ["det", "slogdet", "solve"])
def test_saved_lu_and_pivots_of_random_inputs(fn, layout, dtype):
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for shape in [(1, 1), (3, 3), (5, 5), (2, 3, 4, 4)]:
        _check_saved(fn, RNG.standard_normal(shape).astype(dtype), layout, rtol)


@pytest.mark.parametrize("layout", ["contig", "T"])
@pytest.mark.parametrize("name", SINGULAR)
def test_saved_lu_and_pivots_of_singular_inputs(name, layout):
    for fn in ("det", "slogdet"):
        _check_saved(fn, SINGULAR[name], layout, 1e-12)


def _grads(lib, fn: str, a: np.ndarray, layout: str, b: np.ndarray | None = None, left: bool = True):
    x = _tensor(lib, a, layout)
    inputs = [x]
    if fn == "solve":
        y = lib.tensor(b, requires_grad=True)
        inputs.append(y)
        out = lib.linalg.solve(x, y, left=left)
    elif fn == "slogdet":
        out = lib.linalg.slogdet(x)[1]
    else:
        out = lib.linalg.det(x)
    weight = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)).astype(a.dtype))
    first = lib.autograd.grad((out * weight).sum(), inputs)
    return [to_numpy(g) for g in first]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contig", "T", "strided"])
def test_first_order_gradients_from_the_saved_lu(layout, dtype):
    tol = dict(rtol=2e-4, atol=2e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    for shape in [(3, 3), (2, 4, 4)]:
        a = (RNG.standard_normal(shape) + 3 * np.eye(shape[-1])).astype(dtype)
        for fn in ("det", "slogdet"):
            for got, want in zip(_grads(tg, fn, a, layout), _grads(torch, fn, a, layout)):
                np.testing.assert_allclose(got, want, **tol)
        for left, bshape in [(True, shape[:-1] + (2,)), (True, shape[:-1]), (False, shape[:-2] + (2, shape[-1]))]:
            b = RNG.standard_normal(bshape).astype(dtype)
            for got, want in zip(_grads(tg, "solve", a, layout, b, left), _grads(torch, "solve", a, layout, b, left)):
                np.testing.assert_allclose(got, want, **tol)


@pytest.mark.parametrize("layout", ["contig", "T"])
@pytest.mark.parametrize("name", ["rank_n-1", "2x2", "ties", "arange"])
def test_det_gradient_of_singular_inputs(name, layout):
    """torch's LU solve gives the cofactor matrix wherever its factorisation leaves a rounding residue as the
    last pivot, and ours leaves the same residue. Where the det is exactly zero, torch's solve of ``A^H X = 0``
    gives 0 (not the cofactor matrix, the true gradient for rank n-1), and so does tracegrad."""
    a = SINGULAR[name]
    got, want = _grads(tg, "det", a, layout)[0], _grads(torch, "det", a, layout)[0]
    if float(tg.linalg.det(_tensor(tg, a, layout, requires_grad=False))) != 0:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    else:
        np.testing.assert_array_equal(got, want)
        assert not got.any()


def test_second_order_and_forward_ad_match_torch():
    a = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal((2, 3, 2))

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(b, requires_grad=True)
        total = lib.linalg.det(x).sum() + lib.linalg.slogdet(x.mT)[1].sum() + lib.linalg.solve(x, y).square().sum()
        (gx,) = lib.autograd.grad(total, x, create_graph=True)
        (ggx,) = lib.autograd.grad(gx.square().sum(), x)
        with lib.autograd.forward_ad.dual_level():
            fx = lib.autograd.forward_ad.make_dual(lib.tensor(a), lib.tensor(np.ones_like(a)))
            fy = lib.autograd.forward_ad.make_dual(lib.tensor(b), lib.tensor(np.full_like(b, 0.5)))
            outs = [lib.linalg.det(fx), lib.linalg.slogdet(fx)[1], lib.linalg.solve(fx, fy),
                    lib.linalg.solve(fx, fy.mT, left=False)]
            tangents = [to_numpy(lib.autograd.forward_ad.unpack_dual(o).tangent) for o in outs]
        return [to_numpy(gx), to_numpy(ggx)] + tangents

    for got, want in zip(run(tg), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


def test_singular_solve_error_and_out():
    a = np.stack([np.eye(2), SINGULAR["2x2"]])

    def error(lib):
        with pytest.raises(RuntimeError) as info:
            lib.linalg.solve(lib.tensor(a), lib.ones(2, 2, dtype=lib.float64))
        return str(info.value)

    assert error(tg) == error(torch) == ("torch.linalg.solve: (Batch element 1): The solver failed because the "
                                         "input matrix is singular.")

    def outs(lib):
        x = lib.tensor(a[:1] * 2)
        det, sign, logabs = (lib.empty(0, dtype=lib.float64) for _ in range(3))
        lib.linalg.det(x, out=det)
        r = lib.linalg.slogdet(x, out=(sign, logabs))
        with pytest.raises(RuntimeError) as info:
            lib.linalg.det(x.requires_grad_(), out=lib.empty(0, dtype=lib.float64))
        return [to_numpy(det), to_numpy(r.sign), to_numpy(r.logabsdet), str(info.value)]

    got, want = outs(tg), outs(torch)
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_allclose(g, w)
    assert got[3] == want[3]
