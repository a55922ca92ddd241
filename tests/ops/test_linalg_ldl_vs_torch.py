"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve against torch (LAPACK's ?sytrf/?hetrf and ?sytrs/?hetrs):
the compact LD and the pivots (1×1 and 2×2 blocks), info for singular blocks, solutions, layouts, batches,
the missing derivatives and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, tg, torch


def _symmetric(rng, n, kind, dtype):
    if dtype.startswith("complex"):
        a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    else:
        a = rng.standard_normal((n, n))
    if kind == "zero_diagonal":  # forces 2×2 pivots
        np.fill_diagonal(a, 0)
    elif kind == "sparse":
        a = a * (rng.random((n, n)) < 0.3)
    elif kind == "graded":  # large off-diagonal entries: interchanges at every step
        a = a * np.logspace(0, 3, n)[None, :]
    return a.astype(dtype)


def _sym(a, hermitian):
    lower = np.tril(a, -1)
    diag = np.diag(np.diag(a).real if hermitian else np.diag(a))
    return (lower + (lower.conj().T if hermitian else lower.T) + diag).astype(a.dtype)


CASES = [(n, kind) for n in (1, 2, 3, 4, 6, 9, 17, 40) for kind in ("random", "zero_diagonal", "sparse", "graded")]
CASES += [(80, "random"), (80, "zero_diagonal")]  # past LAPACK's block size


def _tolerance(dtype, scale):
    eps = np.finfo(np.dtype(dtype)).eps
    return {"rtol": 0, "atol": 2e3 * eps * scale}


@pytest.mark.parametrize("dtype,hermitian", [("float64", False), ("float32", False), ("complex128", False),
                                             ("complex128", True), ("complex64", True)])
@pytest.mark.parametrize("n,kind", CASES)
def test_factor_matches_lapack(n, kind, dtype, hermitian):
    rng = np.random.default_rng(n * 7 + len(kind))
    a = _sym(_symmetric(rng, n, kind, dtype), hermitian)
    ours = tg.linalg.ldl_factor_ex(tg.tensor(a), hermitian=hermitian)
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    assert ours.pivots.dtype is tg.int32 and ours.info.dtype is tg.int32
    assert ours.info.item() == theirs.info.item()
    scale = max(1.0, float(np.abs(theirs.LD.numpy()).max()))
    np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), **_tolerance(dtype, scale))
    assert ours.LD.stride() == theirs.LD.stride() and ours.LD.dtype.name == str(theirs.LD.dtype)[6:]
    if kind == "zero_diagonal" and n > 1:
        assert (theirs.pivots.numpy() < 0).any()  # the case exercises 2×2 blocks


@pytest.mark.parametrize("dtype,hermitian", [("float64", False), ("float32", False), ("complex128", False),
                                             ("complex128", True)])
@pytest.mark.parametrize("n,kind", [(1, "random"), (3, "zero_diagonal"), (6, "random"), (9, "zero_diagonal"),
                                    (17, "graded"), (40, "sparse")])
def test_solve(n, kind, dtype, hermitian):
    rng = np.random.default_rng(n)
    a = _sym(_symmetric(rng, n, kind, dtype), hermitian) + 3 * np.eye(n, dtype=dtype)
    b = rng.standard_normal((n, 3)).astype(dtype)

    def program(lib):
        LD, pivots = lib.linalg.ldl_factor(lib.tensor(a), hermitian=hermitian)
        return lib.linalg.ldl_solve(LD, pivots, lib.tensor(b), hermitian=hermitian)

    ours, theirs = program(tg), program(torch)
    scale = max(1.0, float(np.abs(theirs.numpy()).max()))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **_tolerance(dtype, 10 * scale))
    if n > 1:  # (a 1×n result: tracegrad's strides of size-1 dims differ, as for linalg.solve)
        assert ours.stride() == theirs.stride()
    residual = a @ ours.numpy() - b
    assert np.abs(residual).max() < 1e3 * np.finfo(np.dtype(dtype)).eps * scale * n


def test_batches_broadcasting_and_layouts():
    rng = np.random.default_rng(5)
    a = np.stack([_sym(_symmetric(rng, 4, k, "float64"), False) for k in ("random", "zero_diagonal")])
    b = rng.standard_normal((4, 2))  # (torch 2.13 crashes when B's batch must broadcast)

    def program(lib):
        LD, pivots, info = lib.linalg.ldl_factor_ex(lib.tensor(a))
        x = lib.linalg.ldl_solve(LD, pivots, lib.tensor(b))
        return LD, pivots, info, x

    ours, theirs = program(tg), program(torch)
    for mine, want in zip(ours, theirs):
        assert tuple(mine.shape) == tuple(want.shape) and mine.stride() == want.stride()
        np.testing.assert_allclose(mine.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_singular_blocks_and_nan():
    cases = [np.zeros((3, 3)), np.diag([1.0, 0.0, 0.0]), np.diag([np.nan, 1.0, 1.0]),
             np.stack([np.zeros((2, 2)), np.eye(2)]), np.zeros((2, 0, 0))]
    for a in cases:
        ours = tg.linalg.ldl_factor_ex(tg.tensor(a))
        theirs = torch.linalg.ldl_factor_ex(torch.tensor(a))
        for mine, want in zip(ours, theirs):
            np.testing.assert_array_equal(mine.numpy(), want.numpy())
        for program in (lambda lib, a=a: lib.linalg.ldl_factor(lib.tensor(a)),
                        lambda lib, a=a: lib.linalg.ldl_factor_ex(lib.tensor(a), check_errors=True)):
            assert raised(tg, program) == raised(torch, program)


def test_named_tuples_and_out():
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]])
    for lib in (tg, torch):
        result = lib.linalg.ldl_factor(lib.tensor(a))
        assert len(result) == 2 and result.pivots.tolist() == [-3, -3, 3] and result[0] is result.LD
        ex = lib.linalg.ldl_factor_ex(lib.tensor(a))
        assert len(ex) == 3 and ex.info.item() == 0 and type(ex).__name__ == "linalg_ldl_factor_ex"
    outs = []
    for lib in (tg, torch):
        LD, pivots = lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int32)
        returned = lib.linalg.ldl_factor(lib.tensor(a), out=(LD, pivots))
        x = lib.empty(0, dtype=lib.float64)
        lib.linalg.ldl_solve(LD, pivots, lib.ones(3, 1, dtype=lib.float64), out=x)
        outs.append((returned[0] is LD, LD.numpy().copy(), pivots.numpy().copy(), x.numpy().copy()))
    assert outs[0][0] == outs[1][0]
    for mine, want in zip(outs[0][1:], outs[1][1:]):
        np.testing.assert_allclose(mine, want, rtol=1e-12)


def test_no_derivatives():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])

    def factor(lib):
        A = lib.tensor(a, requires_grad=True)
        LD, pivots = lib.linalg.ldl_factor(A)
        node = LD.grad_fn.name()
        try:
            LD.sum().backward()
        except RuntimeError as exc:
            return node, str(exc)

    def solve(lib):
        LD, pivots = lib.linalg.ldl_factor(lib.tensor(a))
        B = lib.ones(2, 1, dtype=lib.float64, requires_grad=True)
        x = lib.linalg.ldl_solve(LD, pivots, B)
        node = x.grad_fn.name()
        try:
            x.sum().backward()
        except RuntimeError as exc:
            return node, str(exc)

    assert factor(tg) == factor(torch) == ("torch::autograd::NotImplemented",
                                           "derivative for aten::linalg_ldl_factor_ex is not implemented")
    assert solve(tg) == solve(torch) == ("torch::autograd::NotImplemented",
                                         "derivative for aten::linalg_ldl_solve is not implemented")


_LD = np.array([[2.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.25, 0.5, 3.0]])


@pytest.mark.parametrize("program", [
    lambda lib: lib.linalg.ldl_factor(lib.randn(3, 4)),
    lambda lib: lib.linalg.ldl_factor(lib.randn(3)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3, 3, dtype=lib.int64)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3, 3, dtype=lib.bool)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3, 3, dtype=lib.float16)),
    lambda lib: lib.linalg.ldl_factor_ex(lib.randn(2, 3)),
    lambda lib: lib.linalg.ldl_solve(lib.tensor(_LD), lib.tensor([1, 2, 3], dtype=lib.int32),
                                     lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.linalg.ldl_solve(lib.tensor(_LD).int(), lib.tensor([1, 2, 3], dtype=lib.int32),
                                     lib.ones(3, 1, dtype=lib.int32)),
    lambda lib: lib.linalg.ldl_solve(lib.tensor(_LD), lib.tensor([1.0, 2.0, 3.0]), lib.ones(3, 1, dtype=lib.float64)),
    lambda lib: lib.linalg.ldl_solve(lib.tensor(_LD), lib.tensor([1, 2, 3], dtype=lib.int32), lib.ones(3, 1)),
    lambda lib: lib.linalg.ldl_solve(lib.tensor(_LD), lib.tensor([1, 2], dtype=lib.int32),
                                     lib.ones(3, 1, dtype=lib.float64)),
    lambda lib: lib.linalg.ldl_solve(lib.tensor(_LD), lib.tensor([1, 2, 3], dtype=lib.int32),
                                     lib.ones(2, 1, dtype=lib.float64)),
    lambda lib: lib.linalg.ldl_solve(lib.tensor(_LD)[:, :2], lib.tensor([1, 2, 3], dtype=lib.int32),
                                     lib.ones(3, 1, dtype=lib.float64)),
    lambda lib: lib.linalg.ldl_solve(lib.ones(3, dtype=lib.float64), lib.tensor([1, 2, 3], dtype=lib.int32),
                                     lib.ones(3, 1, dtype=lib.float64)),
    lambda lib: lib.linalg.ldl_solve(lib.tensor(_LD), lib.tensor([4, 2, 3], dtype=lib.int32),
                                     lib.ones(3, 1, dtype=lib.float64)),
    lambda lib: lib.linalg.ldl_solve(lib.tensor(_LD).expand(2, 3, 3), lib.tensor([1, 2, 3], dtype=lib.int32).expand(2, 3),
                                     lib.ones(4, 3, 1, dtype=lib.float64)),
    lambda lib: lib.linalg.ldl_solve(lib.tensor(_LD), lib.tensor([1, 2, 3]), lib.ones(3, 1, dtype=lib.float64)),
])
def test_errors(program):
    theirs = raised(torch, program)
    assert raised(tg, program) == theirs


def test_namespace():
    assert {"ldl_factor", "ldl_factor_ex", "ldl_solve"} <= set(tg.linalg.__all__)


def test_solve_broadcasts_batches():
    # torch 2.13 crashes on these shapes, so the solution is checked against NumPy's
    rng = np.random.default_rng(11)
    a = np.stack([_sym(_symmetric(rng, 4, "zero_diagonal", "float64"), False) for _ in range(2)])
    b = rng.standard_normal((3, 1, 4, 2))
    LD, pivots = tg.linalg.ldl_factor(tg.tensor(a))
    x = tg.linalg.ldl_solve(LD, pivots, tg.tensor(b))
    assert tuple(x.shape) == (3, 2, 4, 2)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a[None], b), rtol=1e-9, atol=1e-10)
