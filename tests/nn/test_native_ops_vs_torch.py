"""torch.native_layer_norm, native_group_norm, native_batch_norm and native_dropout: the raw operators behind
the nn functions, with all their outputs (statistics, masks), nodes, saved values and gradients as torch's."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, recorded_graph, tg, torch

X = np.random.default_rng(0).standard_normal((4, 3, 5))
W, B = np.random.default_rng(1).random(3) + 0.5, np.random.default_rng(2).standard_normal(3)
CALLS = {
    "layer_norm": lambda L, x: L.native_layer_norm(x, [5], L.tensor(W.repeat(5)[:5]), None, 1e-5),
    "group_norm": lambda L, x: L.native_group_norm(x, L.tensor(W), L.tensor(B), 4, 3, 5, 3, 1e-5),
    "batch_norm_train": lambda L, x: L.native_batch_norm(x, L.tensor(W), None, L.zeros(3, dtype=L.float64),
                                                         L.ones(3, dtype=L.float64), True, 0.1, 1e-5),
    "batch_norm_eval": lambda L, x: L.native_batch_norm(x, None, L.tensor(B), L.zeros(3, dtype=L.float64),
                                                        L.ones(3, dtype=L.float64) * 2, False, 0.1, 1e-3),
    "batch_norm_no_stats": lambda L, x: L.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5),
    "dropout_keep_all": lambda L, x: L.native_dropout(x, 0.0, True),
    "dropout_drop_all": lambda L, x: L.native_dropout(x, 1.0, True),
    "dropout_eval": lambda L, x: L.native_dropout(x, 0.5, False),
}


def _run(lib, name: str):
    x = lib.tensor(X, requires_grad=True)
    outs = CALLS[name](lib, x)
    first = outs[0]
    weights = lib.tensor(np.linspace(-1, 1, first.numel()).reshape(tuple(first.shape)))
    (grad,) = lib.autograd.grad(first, x, weights)
    saved = sorted(a for a in dir(first.grad_fn) if a.startswith("_saved_"))
    return ([o.detach().numpy().astype(np.float64) for o in outs], [str(o.dtype) for o in outs],
            [o.requires_grad for o in outs], recorded_graph([first]), saved, grad.numpy())


@pytest.mark.parametrize("name", sorted(CALLS))
def test_native_op_as_torch(name):
    ours, theirs = _run(tg, name), _run(torch, name)
    for a, b in zip(ours[0], theirs[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert ours[1:5] == theirs[1:5]
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-9, atol=1e-12)


def test_native_dropout_masks_and_scale():
    x = tg.ones(2000, requires_grad=True)
    out, mask = tg.native_dropout(x, 0.25, True)
    kept = mask.numpy()
    assert mask.dtype == tg.bool and 0.70 < kept.mean() < 0.80
    np.testing.assert_allclose(out.detach().numpy(), kept / 0.75)
    assert out.grad_fn._saved_p == 0.25 and bool((out.grad_fn._saved_result1 == mask).all())
    (grad,) = tg.autograd.grad(out.sum(), x)
    np.testing.assert_allclose(grad.numpy(), kept / 0.75)


def test_native_dropout_rejects_a_probability_outside_0_1_as_torch():
    call = lambda L: L.native_dropout(L.ones(3), 1.5, True)  # noqa: E731
    assert raised(tg, call) == raised(torch, call)
