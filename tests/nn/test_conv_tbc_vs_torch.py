"""torch.conv_tbc against torch: outputs, first and second derivatives, the forward node with its saved values
and the CopySlices graphs torch's composite backward builds under create_graph, for paddings that widen, keep,
narrow (negative) the output; errors in torch's words."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, recorded_graph, tg, torch

CASES = [((5, 2, 3), (3, 3, 4), 1), ((5, 2, 3), (3, 3, 4), 0), ((5, 2, 3), (3, 3, 4), 3), ((5, 2, 3), (3, 3, 4), -1),
         ((4, 1, 2), (1, 2, 2), 2), ((6, 3, 2), (5, 2, 3), 2)]


def _run(lib, case, seed):
    rng = np.random.default_rng(seed)
    xs, ws, pad = case
    x, w, b = (lib.tensor(rng.standard_normal(s), requires_grad=True) for s in (xs, ws, (ws[2],)))
    y = lib.conv_tbc(x, w, b, pad)
    cotangent = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), requires_grad=True)
    grads = lib.autograd.grad(y, [x, w, b], cotangent, create_graph=True)
    # (the bias gradient is a copy of sums of the cotangent: the bias itself is unused at second order)
    second = lib.autograd.grad(sum((t * t).sum() for t in grads), [x, w, b, cotangent], allow_unused=True)
    return ([y.detach().numpy()] + [t.detach().numpy() for t in (*grads, *second) if t is not None]
            + [[t is None for t in second]], recorded_graph([y]),
            [recorded_graph([t]) for t in grads], sorted(a for a in dir(y.grad_fn) if a.startswith("_saved_")))


@pytest.mark.parametrize("seed,case", list(enumerate(CASES)))
def test_conv_tbc_as_torch(seed, case):
    ours, theirs = _run(tg, case, seed), _run(torch, case, seed)
    assert ours[0][-1] == theirs[0][-1]  # which second derivatives are missing
    for a, b in zip(ours[0][:-1], theirs[0][:-1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert ours[1:] == theirs[1:]


def _forward_ad(lib):
    fwad = lib.autograd.forward_ad
    with fwad.dual_level():
        x = fwad.make_dual(lib.randn(5, 2, 3), lib.randn(5, 2, 3))
        lib.conv_tbc(x, lib.randn(3, 3, 4), lib.randn(4), 1)


@pytest.mark.parametrize("call", [
    lambda L: L.conv_tbc(L.randn(5, 2, 3), L.randn(3, 2, 4), L.randn(4), 0),
    lambda L: L.conv_tbc(L.randn(5, 2, 3), L.randn(3, 4), L.randn(4), 0),
    lambda L: L.conv_tbc(L.randn(5, 2, 3), L.randn(9, 3, 4), L.randn(4), 0),
    lambda L: L.conv_tbc(L.randn(5, 2, 3, dtype=L.float64), L.randn(3, 3, 4), L.randn(4), 0),
    lambda L: L.conv_tbc(L.randn(5, 2), L.randn(3, 3, 4), L.randn(4), 0),
    lambda L: L.conv_tbc(L.randn(5, 2, 3), L.randn(3, 3, 4), L.randn(5), 0),
    lambda L: L.conv_tbc(L.randn(5, 3, 2).transpose(1, 2), L.randn(3, 3, 4), L.randn(4), 0),
    lambda L: _forward_ad(L),
], ids=["channels", "weight_dims", "kernel_too_long", "dtypes", "input_dims", "bias_size", "transposed_input",
        "forward_ad"])
def test_errors_as_in_torch(call):
    ours, theirs = raised(tg, call), raised(torch, call)
    assert theirs is not None
    assert ours == theirs
