"""F.grid_sample and F.affine_grid against torch on random cases.

The OpInfo entries (tests/opinfo/db_nn.py) run gradcheck, gradgradcheck, graphs and saved values on a few small
samples; here every mode x padding_mode x align_corners, 4-D and 5-D, with grids reaching outside [-1, 1]:
values, input and grid gradients, second and third order gradients, node names, warnings and errors.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from _lib import tg, torch

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")
CASES = [(dims, mode, pad, align) for dims in (2, 3) for mode, pad, align in itertools.product(MODES, PADDINGS,
                                                                                                (False, True))
         if not (dims == 3 and mode == "bicubic")]


def _case_arrays(dims: int, seed: int, dtype=np.float64):
    rng = np.random.default_rng(seed)
    in_shape = (2, 3, 4, 5) if dims == 2 else (2, 2, 3, 4, 3)
    grid_shape = (2, 3, 2, 2) if dims == 2 else (2, 2, 3, 2, 3)
    # up to 1.6: outside the image, so that padding, clipping and reflection are exercised
    return rng.standard_normal(in_shape).astype(dtype), rng.uniform(-1.6, 1.6, grid_shape).astype(dtype)


def _run(lib, x, g, mode, pad, align, order: int):
    """Output, its node's name, then the gradients up to ``order`` (each w.r.t. grad_output, input, grid)."""
    xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
    y = lib.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=pad, align_corners=align)
    go = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)), requires_grad=True)
    out = [y.detach().numpy(), y.grad_fn.name()]
    gi, gg = lib.autograd.grad(y, (xt, gt), go, create_graph=order > 1)
    out += [gi.detach().numpy(), gg.detach().numpy()]
    if order > 1:
        out.append(gi.grad_fn.name())
        w = lib.tensor(np.sin(np.arange(gi.numel())).reshape(tuple(gi.shape)))
        second = lib.autograd.grad((gi * w).sum() + (gg * gg).sum(), (go, xt, gt), create_graph=True,
                                   allow_unused=True)
        out += [None if s is None else s.detach().numpy() for s in second]
        live = [s for s in second if s is not None and s.requires_grad]
        third = lib.autograd.grad(sum((s * s).sum() for s in live), (go, xt, gt), allow_unused=True)
        out += [None if s is None else s.numpy() for s in third]
    return out


def _compare(ours, theirs, rtol=1e-7, atol=1e-9):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, str):
            assert a == b
        elif a is None or b is None:  # an absent gradient is a zero one
            assert not np.any(a if a is not None else b)
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dims,mode,pad,align", CASES)
def test_values_and_gradients(dims, mode, pad, align):
    x, g = _case_arrays(dims, CASES.index((dims, mode, pad, align)))
    _compare(_run(tg, x, g, mode, pad, align, 1), _run(torch, x, g, mode, pad, align, 1))


@pytest.mark.parametrize("dims,mode,pad,align", [c for c in CASES if c[3]] + [(2, "bicubic", "reflection", False)])
def test_higher_order_gradients(dims, mode, pad, align):
    """torch differentiates grid_sampler_*d_backward (GridSampler2DBackwardBackward0), to any order."""
    x, g = _case_arrays(dims, 7)
    _compare(_run(tg, x, g, mode, pad, align, 3), _run(torch, x, g, mode, pad, align, 3), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", MODES)
def test_float32_and_large_grids(mode):
    x, g = _case_arrays(2, 3, np.float32)
    g = g * 3  # far outside: every padding mode's far branches
    for pad in PADDINGS:
        _compare(_run(tg, x, g, mode, pad, False, 1), _run(torch, x, g, mode, pad, False, 1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("size,align", [((2, 3, 4, 5), False), ((2, 1, 3, 2), True), ((1, 2, 2, 3, 4), False),
                                        ((1, 1, 1, 3, 2), True)])
def test_affine_grid(size, align):
    theta = np.random.default_rng(len(size)).standard_normal((size[0], len(size) - 2, len(size) - 1))
    results = []
    for lib in (tg, torch):
        t = lib.tensor(theta, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grid = lib.nn.functional.affine_grid(t, size, align_corners=align)
        grid.backward(lib.tensor(np.cos(np.arange(grid.numel())).reshape(tuple(grid.shape))))
        node = grid.grad_fn
        results.append([grid.detach().numpy(), t.grad.numpy(), node.name(), tuple(node._saved_size),
                        node._saved_align_corners, [str(w.message) for w in caught]])
    ours, theirs = results
    for a, b in zip(ours, theirs):
        if isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        else:
            assert a == b


def test_affine_grid_then_grid_sample_forward_ad():
    """torch has a forward-mode formula for affine_grid_generator, none for grid_sampler_2d."""
    theta = np.array([[[0.9, 0.2, 0.1], [-0.3, 1.1, 0.05]]])
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
    tangents, errors = [], []
    for lib in (tg, torch):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            dual = fwad.make_dual(lib.tensor(theta), lib.ones_like(lib.tensor(theta)))
            grid = lib.nn.functional.affine_grid(dual, (1, 2, 3, 3), align_corners=False)
            tangents.append(fwad.unpack_dual(grid).tangent.numpy())
            with pytest.raises(NotImplementedError) as exc:
                lib.nn.functional.grid_sample(lib.tensor(x), grid, align_corners=False)
            errors.append(str(exc.value).splitlines()[0])
    np.testing.assert_allclose(tangents[0], tangents[1])
    assert errors[0] == errors[1]


def test_saved_values_and_align_corners_warning():
    x, g = _case_arrays(2, 0)
    results = []
    for lib in (tg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = lib.nn.functional.grid_sample(lib.tensor(x, requires_grad=True), lib.tensor(g), mode="bicubic",
                                              padding_mode="border")
            lib.nn.functional.affine_grid(lib.zeros(1, 2, 3), (1, 1, 2, 2))
        node = y.grad_fn
        results.append([str(w.message) for w in caught] + [node._saved_interpolation_mode, node._saved_padding_mode,
                                                           node._saved_align_corners])
    assert results[0] == results[1]
    assert len(results[0]) == 5


def test_empty_batch_channels_and_output():
    for shapes in [((0, 2, 3, 4), (0, 2, 2, 2)), ((1, 0, 3, 4), (1, 2, 2, 2)), ((1, 2, 3, 4), (1, 0, 2, 2))]:
        outs = [lib.nn.functional.grid_sample(lib.zeros(*shapes[0]), lib.zeros(*shapes[1]), align_corners=True)
                for lib in (tg, torch)]
        assert tuple(outs[0].shape) == tuple(outs[1].shape)


def _input(lib, *shape, dtype="float32"):
    return lib.zeros(*shape, dtype=getattr(lib, dtype))


ERRORS = {
    "mode": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 3, 4), _input(L, 1, 2, 2, 2), mode="linear"),
    "padding": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 3, 4), _input(L, 1, 2, 2, 2),
                                                     padding_mode="reflect"),
    "batch": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 3, 4), _input(L, 2, 2, 2, 2)),
    "last_dim": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 3, 4), _input(L, 1, 2, 2, 3)),
    "3d_input": lambda L: L.nn.functional.grid_sample(_input(L, 2, 3, 4), _input(L, 2, 3, 2)),
    "ndim": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 3, 4), _input(L, 1, 2, 2)),
    "6d": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 3, 4, 5, 6), _input(L, 1, 2, 2, 2, 2, 4)),
    "empty_spatial": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 0, 4), _input(L, 1, 2, 2, 2)),
    "bicubic_5d": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 3, 4, 5), _input(L, 1, 2, 2, 2, 3),
                                                        mode="bicubic"),
    "dtype": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 3, 4), _input(L, 1, 2, 2, 2, dtype="float64")),
    "int": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 3, 4, dtype="int64"),
                                                 _input(L, 1, 2, 2, 2, dtype="int64")),
    "int_3d": lambda L: L.nn.functional.grid_sample(_input(L, 1, 2, 3, 4, 5, dtype="int64"),
                                                    _input(L, 1, 2, 2, 2, 3, dtype="int64")),
    "sampler_2d_5d": lambda L: L.grid_sampler_2d(_input(L, 1, 2, 3, 4, 5), _input(L, 1, 2, 2, 2, 3), 0, 0, False),
    "sampler_3d_4d": lambda L: L.grid_sampler_3d(_input(L, 1, 2, 3, 4), _input(L, 1, 2, 2, 2), 0, 0, False),
    "theta_int": lambda L: L.nn.functional.affine_grid(_input(L, 1, 2, 3, dtype="int64"), (1, 1, 2, 2)),
    "theta_shape": lambda L: L.nn.functional.affine_grid(_input(L, 1, 3, 3), (1, 1, 2, 2)),
    "theta_shape_3d": lambda L: L.nn.functional.affine_grid(_input(L, 1, 2, 3), (1, 1, 2, 2, 2)),
    "size_len": lambda L: L.nn.functional.affine_grid(_input(L, 1, 2, 3), (1, 1, 2)),
    "size_zero": lambda L: L.nn.functional.affine_grid(_input(L, 1, 2, 3), (1, 1, 0, 2), align_corners=False),
    "theta_batch": lambda L: L.nn.functional.affine_grid(_input(L, 1, 2, 3), [2, 1, 3, 2], align_corners=False),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_in_torch_words(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            ERRORS[name](torch)
        with pytest.raises(theirs.type) as ours:
            ERRORS[name](tg)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]
