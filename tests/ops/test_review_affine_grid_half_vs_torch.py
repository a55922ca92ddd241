"""Review of set 42's affine_grid: theta of half precision (float16, bfloat16).

torch builds the base grid in theta's own dtype (``at::linspace`` and ``* (n-1) / n`` each rounded to it), multiplies
in float and rounds once; its backward builds the grid in the gradient's dtype. tracegrad built it in float (values
an ulp or more off), its float16 backward refused the float32 grid beside a half gradient, and a unit-size grid,
which torch's ``at::tensor(0, options)`` refuses for half precision, passed. float16 linspace is torch's to the
bit too now (its kernel rounds each operation to half, as bfloat16's).
"""

from __future__ import annotations

import pytest
from _lib import assert_same_bits, np, raised, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")


def _theta(lib, n: int, dims: int, dtype: str, identity: bool, requires_grad: bool = False):
    data = (np.concatenate([np.eye(dims), np.zeros((dims, 1))], axis=1)[None].repeat(n, 0) if identity
            else np.random.default_rng(dims).standard_normal((n, dims, dims + 1)))
    return lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=requires_grad)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [[2, 1, 7, 7], [1, 1, 16, 33], [2, 1, 3, 4, 7]])
@pytest.mark.parametrize("identity", [True, False])
def test_half_precision_grid_and_gradient_bits(size, align_corners, dtype, identity):
    def grid_and_grad(lib):
        theta = _theta(lib, size[0], len(size) - 2, dtype, identity, requires_grad=True)
        grid = lib.nn.functional.affine_grid(theta, size, align_corners=align_corners)
        weights = lib.tensor(np.random.default_rng(1).standard_normal(tuple(grid.shape)), dtype=grid.dtype)
        (grid * weights).sum().backward()
        return grid, theta.grad

    (grid, grad), (grid_t, grad_t) = grid_and_grad(tg), grid_and_grad(torch)
    assert_same_bits(grid.float(), grid_t.float())
    assert grid.grad_fn.name() == grid_t.grad_fn.name()
    if size == [2, 1, 7, 7]:  # (a larger grid's gradient is a BLAS product of another order: bmm's own business)
        assert_same_bits(grad.float(), grad_t.float())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("size", [[1, 1, 1, 5], [2, 1, 4, 1], [1, 1, 1, 1, 1]])
def test_half_precision_unit_size_grid_refused(size, dtype):
    def grid(lib):
        return lib.nn.functional.affine_grid(_theta(lib, size[0], len(size) - 2, dtype, True), size,
                                             align_corners=False)

    assert raised(tg, grid) == raised(torch, grid) is not None


@pytest.mark.parametrize("steps", [4, 7, 16, 33, 100, 257])
@pytest.mark.parametrize("bounds", [(-1, 1), (-3.7, 2.2), (0, 100)])
def test_float16_linspace_bits(bounds, steps):
    assert_same_bits(tg.linspace(*bounds, steps, dtype=tg.float16), torch.linspace(*bounds, steps,
                                                                                     dtype=torch.float16))
