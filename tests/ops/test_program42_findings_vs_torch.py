"""Differences that the programs of ``tests/test_user_programs42_vs_torch.py`` (and the probes around them) ran
into, each reduced to the operation that caused it and compared with torch.

- ``F.affine_grid`` was an ulp off torch's grid: its base coordinates came from NumPy's linspace (torch counts the
  upper half down from 1) and its product with theta from a BLAS matmul (torch's bmm sums the three or four terms
  in order, unfused). At the identity (a spatial transformer's usual start) the grid then missed the pixel
  centres by an ulp, and grid_sample's gradient with respect to theta read other neighbours: entirely different
  gradients;
- ``F.adaptive_avg_pool2d(x, 1)`` (``3d``: ``(1, 1, 1)``) of a channels_last input gave contiguous strides and a
  MeanBackward1 node; torch restrides the mean in place (channels-last strides, AsStridedBackward1).
"""

from __future__ import annotations

import pytest
from _lib import assert_same_bits, np, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")


def _random_theta(lib, n: int, dims: int, dtype: str):
    data = np.random.default_rng(42 + dims).standard_normal((n, dims, dims + 1))
    return lib.tensor(data, dtype=getattr(lib, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [[1, 1, 4, 6], [2, 3, 5, 9], [1, 1, 16, 33], [2, 1, 3, 4, 7]])
def test_affine_grid_bits(size, align_corners, dtype):
    def grid(lib, theta):
        return lib.nn.functional.affine_grid(theta, size, align_corners=align_corners)

    dims = len(size) - 2
    identity = np.concatenate([np.eye(dims), np.zeros((dims, 1))], axis=1)[None].repeat(size[0], 0)
    for make in (lambda lib: lib.tensor(identity, dtype=getattr(lib, dtype)),
                 lambda lib: _random_theta(lib, size[0], dims, dtype)):
        assert_same_bits(grid(tg, make(tg)), grid(torch, make(torch)))


def _theta_gradient_at_identity(lib, padding_mode: str, align_corners: bool):
    """The gradient of an MSE between a warped image and a shifted target, at the identity theta."""
    F = lib.nn.functional
    img = lib.tensor(np.random.default_rng(420).random((1, 1, 6, 6)))
    theta = lib.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=lib.float64, requires_grad=True)
    grid = F.affine_grid(theta, [1, 1, 6, 6], align_corners=align_corners)
    warped = F.grid_sample(img, grid, padding_mode=padding_mode, align_corners=align_corners)
    F.mse_loss(warped, lib.roll(img, 1, -1)).backward()
    return theta.grad


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_theta_gradient_at_identity(padding_mode, align_corners):
    ours = _theta_gradient_at_identity(tg, padding_mode, align_corners)
    theirs = _theta_gradient_at_identity(torch, padding_mode, align_corners)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-15)


def _pooled_to_one(lib, shape: tuple, output_size, fmt: str):
    x = lib.arange(float(np.prod(shape))).reshape(shape).to(memory_format=getattr(lib, fmt)).requires_grad_()
    pool = lib.nn.functional.adaptive_avg_pool2d if len(shape) == 4 else lib.nn.functional.adaptive_avg_pool3d
    out = pool(x, output_size)
    (out * lib.arange(1.0, out.numel() + 1).view(out.shape)).sum().backward()
    return out, x.grad


@pytest.mark.parametrize("shape, output_size, fmt", [
    ((2, 3, 4, 4), 1, "channels_last"), ((2, 3, 4, 4), (1, 1), "channels_last"),
    ((2, 3, 4, 4), 1, "contiguous_format"), ((2, 3, 2, 4, 4), 1, "channels_last_3d"),
    ((2, 3, 2, 4, 4), (1, 1, 1), "channels_last_3d"), ((1, 3, 4, 4), 1, "channels_last"),
])
def test_adaptive_avg_pool_to_one_keeps_channels_last(shape, output_size, fmt):
    (out, grad), (out_t, grad_t) = _pooled_to_one(tg, shape, output_size, fmt), _pooled_to_one(torch, shape,
                                                                                               output_size, fmt)
    assert out.stride() == out_t.stride() and grad.stride() == grad_t.stride()
    assert out.grad_fn.name() == out_t.grad_fn.name()
    assert_same_bits(out, out_t)
    assert_same_bits(grad, grad_t)
