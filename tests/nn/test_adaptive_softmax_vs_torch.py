"""nn.AdaptiveLogSoftmaxWithLoss against torch: random head/cluster layouts give the same outputs, loss,
gradients of the input and every parameter, autograd graph, full log-probabilities and predictions; errors as
torch's."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, recorded_graph, tg, torch

N_CASES = 30


def _case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n_classes = int(rng.integers(4, 30))
    cutoffs = sorted(rng.choice(np.arange(1, n_classes), size=int(rng.integers(1, min(4, n_classes - 1) + 1)),
                                replace=False).tolist())
    batched = bool(rng.random() < 0.8)
    batch = int(rng.integers(1, 9))
    return dict(seed=seed, in_features=int(rng.integers(4, 17)), n_classes=n_classes, cutoffs=cutoffs,
                div_value=float(rng.choice([1.0, 2.0, 4.0])), head_bias=bool(rng.random() < 0.5), batched=batched,
                targets=rng.integers(0, n_classes, batch if batched else ()).tolist())


def _run(lib, case: dict):
    m = lib.nn.AdaptiveLogSoftmaxWithLoss(case["in_features"], case["n_classes"], case["cutoffs"],
                                          div_value=case["div_value"], head_bias=case["head_bias"],
                                          dtype=lib.float64)
    rng = np.random.default_rng(case["seed"])
    with lib.no_grad():
        for _, p in sorted(m.named_parameters()):
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    batch = len(case["targets"]) if case["batched"] else None
    shape = (batch, case["in_features"]) if case["batched"] else (case["in_features"],)
    x = lib.tensor(rng.standard_normal(shape), requires_grad=True)
    out = m(x, lib.tensor(case["targets"]))
    params = [p for _, p in sorted(m.named_parameters())]
    grads = lib.autograd.grad(out.loss, [x, *params], allow_unused=True)
    full = m.log_prob(x if case["batched"] else x.unsqueeze(0)).detach().numpy()
    predicted = m.predict(x if case["batched"] else x.unsqueeze(0)).tolist()
    return (out.output.detach().numpy(), out.loss.item(), grads, recorded_graph([out.loss]), full, predicted,
            repr(m), [(n, tuple(p.shape)) for n, p in m.named_parameters()])


@pytest.mark.parametrize("seed", range(N_CASES))
def test_adaptive_log_softmax_as_torch(seed):
    case = _case(seed)
    ours, theirs = _run(tg, case), _run(torch, case)
    tol = dict(rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ours[0], theirs[0], **tol)
    assert ours[1] == pytest.approx(theirs[1], rel=1e-12)
    for a, b in zip(ours[2], theirs[2], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)
    assert ours[3] == theirs[3]
    np.testing.assert_allclose(ours[4], theirs[4], **tol)
    assert ours[5:] == theirs[5:]


@pytest.mark.parametrize("call", [
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, []),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3]),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [0, 5]),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 10]),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])(L.randn(3, 4), L.tensor([1, 2])),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])(L.randn(3, 4, 1), L.tensor([1, 2, 3])),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])(L.randn(3, 4), L.tensor(1)),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])(L.randn(3, 4), L.tensor([[1, 2, 3]])),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5])(L.randn(3, 4), L.tensor([1, 12, 3])),
], ids=["no_cutoffs", "unsorted", "zero", "too_large", "batch", "input_rank", "scalar_target_rank", "2d_target",
        "target_range"])
def test_errors_as_in_torch(call):
    ours, theirs = raised(tg, call), raised(torch, call)
    assert theirs is not None
    assert ours == theirs
