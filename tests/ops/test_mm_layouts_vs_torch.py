"""mm's backward follows each matrix's layout in the forward, as PyTorch's ``mm_mat1_backward`` /
``mm_mat2_backward`` do: a column-major matrix (strides ``(1, rows)``) gets ``mat2.mm(grad.t()).t()`` /
``grad.t().mm(mat1).t()``, a column-major gradient recorded as TBackward0 over MmBackward0; any other layout the
general ``grad.mm(mat2.t())`` / ``mat1.t().mm(grad)``. The node records the layout when it is made (a matrix
whose gradient is computed need not be saved), on every path that makes it: ``mm``, ``a @ b``, the general
path, ``addmm`` and matmul's folds. Compared with torch: the gradient's graph (create_graph), values and
strides (tensor hooks and ``retain_grad`` on the non-leaf matrices, ``.grad`` of the leaves), and
``_saved_<m>_sym_strides``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import recorded_graph, tg, torch

# How an operand of (rows, cols) is made from a leaf: every one a non-leaf, so its gradient shows its strides.
LAYOUTS = ("row", "col", "leaf_t", "strided", "expanded")
# (n, k, m): size-1 dims make the layout test read strides numpy and torch agree on only by construction
SHAPES = [(3, 4, 5), (1, 4, 5), (3, 1, 5), (3, 4, 1), (1, 1, 1), (1, 4, 1)]


def _leaf(lib, shape, seed: int):
    values = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _operand(lib, rows: int, cols: int, layout: str, seed: int):
    """(leaf, operand): the operand a (rows, cols) matrix with the given layout, made from the leaf."""
    if layout == "row":
        leaf = _leaf(lib, (rows, cols), seed)
        return leaf, leaf * 1
    if layout == "col":
        leaf = _leaf(lib, (cols, rows), seed)
        return leaf, (leaf * 1).t()
    if layout == "leaf_t":  # a transposed leaf: column-major, its TBackward0 view the operand
        leaf = _leaf(lib, (cols, rows), seed)
        return leaf, leaf.t()
    if layout == "strided":
        leaf = _leaf(lib, (rows, 2 * cols), seed)
        return leaf, (leaf * 1)[:, ::2]
    leaf = _leaf(lib, (rows, 1), seed)  # expanded: a stride of 0
    return leaf, (leaf * 1).expand(rows, cols)


def _product(lib, how: str, a, b, c):
    if how == "mm":
        return lib.mm(a, b)
    if how == "matmul":  # ``a @ b``: the dunder fast path
        return a @ b
    if how == "general":  # anomaly mode turns the fast paths off: the OpDef path makes the node
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                return lib.mm(a, b)
    if how == "addmm":
        return lib.addmm(c, a, b)
    return lib.addmm(c, a, b, beta=0.5, alpha=2.0)  # addmm_scaled: the gradients times alpha


def _observed(lib, how: str, shape: tuple, la: str, lb: str, create_graph: bool) -> dict:
    n, k, m = shape
    leaf_a, a = _operand(lib, n, k, la, 1)
    leaf_b, b = _operand(lib, k, m, lb, 2)
    c = _leaf(lib, (n, m), 3)
    out = _product(lib, how, a, b, c)
    cotangent = lib.tensor(np.linspace(-1.0, 1.0, n * m).reshape(n, m), dtype=lib.float64,
                           requires_grad=create_graph)
    inputs = (a, b, c) if how.startswith("addmm") else (a, b)
    if create_graph:
        grads = lib.autograd.grad(out, inputs, cotangent, create_graph=True)
        return {"graph": recorded_graph(list(grads)), "strides": [g.stride() for g in grads],
                "values": [g.detach().numpy() for g in grads]}
    seen: list = []  # a tensor hook sees the gradient itself (retain_grad keeps a contiguous clone)
    for t in (a, b):
        t.register_hook(lambda g: seen.append(g.stride()))
        t.retain_grad()
    out.backward(cotangent)
    grads = [a.grad, b.grad, leaf_a.grad, leaf_b.grad]
    return {"strides": seen + [g.stride() for g in grads], "values": [g.numpy() for g in grads]}


def _assert_same(ours: dict, theirs: dict) -> None:
    assert ours.get("graph") == theirs.get("graph")
    assert ours["strides"] == theirs["strides"]
    for x, y in zip(ours["values"], theirs["values"]):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("create_graph", [False, True], ids=["backward", "create_graph"])
@pytest.mark.parametrize("how", ["mm", "matmul", "general", "addmm", "addmm_scaled"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gradients_follow_the_layouts(shape, how, create_graph):
    for la in LAYOUTS:
        for lb in LAYOUTS:
            ours = _observed(tg, how, shape, la, lb, create_graph)
            theirs = _observed(torch, how, shape, la, lb, create_graph)
            try:
                _assert_same(ours, theirs)
            except AssertionError as exc:
                raise AssertionError(f"mat1 {la}, mat2 {lb}: {exc}") from None


def _only_one_requires_grad(lib, how: str, la: str, lb: str, keep: int):
    """Only one matrix requires grad, so the other is saved and it is not: its layout is the node's record."""
    _, a = _operand(lib, 3, 4, la, 1)
    _, b = _operand(lib, 4, 5, lb, 2)
    if keep == 0:
        b = b.detach()
    else:
        a = a.detach()
    out = _product(lib, how, a, b, _leaf(lib, (3, 5), 3).detach())
    names = ("mat1", "mat2") if how.startswith("addmm") else ("self", "mat2")
    meta = {name: getattr(out.grad_fn, f"_saved_{name}_sym_strides") for name in names}
    cotangent = lib.ones(3, 5, dtype=lib.float64, requires_grad=True)
    grad = lib.autograd.grad(out, (a, b)[keep], cotangent, create_graph=True)[0]
    return meta, grad.stride(), recorded_graph([grad])


@pytest.mark.parametrize("how", ["mm", "matmul", "general", "addmm", "addmm_scaled"])
@pytest.mark.parametrize("keep", [0, 1])
def test_layout_of_a_matrix_that_is_not_saved(how, keep):
    for la in ("row", "col"):
        for lb in ("row", "col"):
            ours = _only_one_requires_grad(tg, how, la, lb, keep)
            theirs = _only_one_requires_grad(torch, how, la, lb, keep)
            assert ours == theirs, (la, lb)


# matmul folds a batched operand into one mm; the other one enters transposed or column-major
MATMUL_CASES = [((2, 3, 4), (4, 5), False), ((2, 3, 4), (4, 5), True), ((3, 4), (2, 4, 5), False),
                ((3, 4), (2, 4, 5), True), ((2, 3, 4), (1, 4, 5), False), ((4, 3), (2, 4, 5), False)]


def _matmul_observed(lib, sa, sb, transposed: bool, create_graph: bool) -> dict:
    """``x @ y`` with the last operand made column-major (a transposed leaf) when ``transposed``; ``(4, 3)`` for
    the first one means its transpose."""
    x = _leaf(lib, sa, 1)
    xs = x.t() if sa == (4, 3) else x
    y = _leaf(lib, sb[:-2] + sb[:-3:-1], 2) if transposed else _leaf(lib, sb, 2)
    ys = y.transpose(-1, -2) if transposed else y
    out = lib.matmul(xs, ys)
    cotangent = lib.tensor(np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape)), dtype=lib.float64,
                           requires_grad=create_graph)
    if create_graph:
        grads = lib.autograd.grad(out, (x, y), cotangent, create_graph=True)
        return {"graph": recorded_graph(list(grads)), "strides": [g.stride() for g in grads],
                "values": [g.detach().numpy() for g in grads]}
    seen: list = []  # the gradients as the formulas made them (``.grad`` of a leaf: see the test below)
    for t in (x, y):
        t.register_hook(lambda g: seen.append(g.stride()))
    out.backward(cotangent)
    return {"strides": seen, "values": [x.grad.numpy(), y.grad.numpy()]}


@pytest.mark.parametrize("create_graph", [False, True], ids=["backward", "create_graph"])
@pytest.mark.parametrize("sa,sb,transposed", MATMUL_CASES)
def test_matmul_folds_follow_the_layouts(sa, sb, transposed, create_graph):
    _assert_same(_matmul_observed(tg, sa, sb, transposed, create_graph),
                 _matmul_observed(torch, sa, sb, transposed, create_graph))


def _leaf_grad_strides(lib) -> tuple:
    y = _leaf(lib, (2, 4, 5), 2)
    lib.matmul(_leaf(lib, (3, 4), 1), y).sum().backward()
    return y.grad.stride()


def test_leaf_grad_takes_the_leafs_strides():
    assert _leaf_grad_strides(tg) == _leaf_grad_strides(torch)
