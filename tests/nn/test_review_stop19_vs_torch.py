"""Review of the optimizer version counters (4c306b8) and the faster anti-aliased interpolate (e240a8c), against
torch: LBFGS's curvature pairs and ``H_diag`` are torch's same tensors from step to step, so the versions they
carry (1 after a deep-copied state_dict is loaded, as torch's deepcopy ``set_``s the new storage) go on rather
than restarting at 0 when the step rewraps them; the anti-aliased backward's small float32 gradients keep the -0 an
underflowed negative product leaves (the steps over columns a step does not reach added +0, making it +0)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import tracegrad as tg


def _versions(lib, state: dict) -> dict:
    out = {}
    for key, value in state.items():
        if isinstance(value, lib.Tensor):
            out[key] = value._version
        elif isinstance(value, list):
            out[key] = [v._version if isinstance(v, lib.Tensor) else None for v in value]
    return out


def _lbfgs_run(lib, max_iter: int, history_size: int, line_search_fn, reload_at: int, steps: int):
    rng = np.random.default_rng(3)
    params = [lib.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 4), (5,))]
    targets = [lib.tensor(rng.standard_normal(s)) for s in ((3, 4), (5,))]

    def make():
        return lib.optim.LBFGS(params, lr=1, max_iter=max_iter, history_size=history_size,
                               line_search_fn=line_search_fn)

    opt = make()

    def closure():
        opt.zero_grad()
        loss = sum(((p - t) ** 2 * (1 + j)).sum() + (p ** 4).sum() * 0.1
                   for j, (p, t) in enumerate(zip(params, targets)))
        loss.backward()
        return loss

    record = []
    for k in range(steps):
        opt.step(closure)
        record.append((_versions(lib, opt.state[params[0]]), [p._version for p in params],
                       [p.detach().numpy().copy() for p in params]))
        if k == reload_at:
            saved = copy.deepcopy(opt.state_dict())
            opt = make()
            opt.load_state_dict(saved)
            record.append((_versions(lib, opt.state[params[0]]), [p._version for p in params], None))
    return record


@pytest.mark.parametrize("max_iter,history_size,line_search_fn", [(3, 2, None), (2, 5, None), (1, 10, None), (3, 2, "strong_wolfe"), (2, 10, "strong_wolfe")])
@pytest.mark.parametrize("reload_at", [0, 1])
def test_lbfgs_versions_after_deepcopied_state_dict(max_iter, history_size, line_search_fn, reload_at):
    ours = _lbfgs_run(tg, max_iter, history_size, line_search_fn, reload_at, steps=4)
    theirs = _lbfgs_run(torch, max_iter, history_size, line_search_fn, reload_at, steps=4)
    assert len(ours) == len(theirs)
    for k, ((ov, opv, ovals), (tv, tpv, tvals)) in enumerate(zip(ours, theirs)):
        if ovals is not None:
            for a, b in zip(ovals, tvals):
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
        assert opv == tpv, k
        assert ov == tv, k


def _aa_input_grad_bits(lib, x: np.ndarray, upstream: np.ndarray, size, mode: str) -> np.ndarray:
    xt = lib.tensor(x, requires_grad=True)
    y = lib.nn.functional.interpolate(xt, size=size, mode=mode, antialias=True, align_corners=False)
    (grad,) = lib.autograd.grad(y, xt, lib.tensor(upstream))
    return grad.numpy().view(np.uint32)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("in_size,out_size", [((4, 9), (8, 3)), ((3, 7), (9, 2)), ((31, 27), (62, 9))])
def test_antialias_backward_keeps_underflowed_negative_zero(mode, in_size, out_size):
    """A float32 input gradient whose tiny negative products underflow is -0 in torch (each FMA rounds the exact
    sum, negative, to -0); the small-gradient chains' steps over columns a step does not reach must leave it -0
    (they added +0, which made it +0)."""
    x = np.ones((1, 1) + in_size, np.float32)
    upstream = np.full((1, 1) + out_size, -1e-45, np.float32)  # (the smallest subnormal: every product underflows)
    ours = _aa_input_grad_bits(tg, x, upstream, out_size, mode)
    theirs = _aa_input_grad_bits(torch, x, upstream, out_size, mode)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialias_backward_signed_zeros_mixed(mode):
    """Tiny gradients of both signs and a few ordinary ones, up in one dim and down in the other: bits as torch."""
    rng = np.random.default_rng(5)
    x = np.ones((2, 3, 11, 17), np.float32)
    upstream = (rng.choice([-1, 1], (2, 3, 23, 5)) * rng.choice([1e-45, 3e-45, 1e-44, 0.5], (2, 3, 23, 5),
                                                               p=[0.4, 0.3, 0.2, 0.1])).astype(np.float32)
    ours = _aa_input_grad_bits(tg, x, upstream, (23, 5), mode)
    theirs = _aa_input_grad_bits(torch, x, upstream, (23, 5), mode)
    np.testing.assert_array_equal(ours, theirs)
