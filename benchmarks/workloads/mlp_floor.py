"""How far below PyTorch's own arithmetic the MLP targets sit: ``python -m benchmarks.workloads.mlp_floor``.

Workloads 3 and 4 compare a training step with a hand-written NumPy step that fuses what an engine with
PyTorch's semantics may not: ReLU in place over the pre-activation, the mask multiplied into the gradient in
place, and each layer's update done while its weight gradient is still in cache. A faithful eager engine runs
PyTorch's step instead: a fresh tensor per ReLU, log_softmax then nll_loss, a select for the ReLU mask (a
multiply would turn an infinite gradient into NaN, and a negative one into -0.0, where the mask is 0), every
gradient kept until the whole backward has run, and the optimizer after it, whose ``p.add_(g, alpha=-lr)`` is a
fused multiply-add: one rounding, where NumPy's ``p -= lr * g`` rounds twice.

This script times that arithmetic, in that order, written in plain NumPy with no engine at all, beside the
hand-written step, tracegrad and torch, interleaved in one process, in two forms:

- "PyTorch's order": the select branch-free (the gradient's bits and-ed with a mask, as tracegrad's
  ``threshold_backward`` does; ``np.where`` runs a branch per element, several times slower on a ReLU's random
  mask) and the update rounded twice, as NumPy rounds it. Its ratio is what the order of the arithmetic costs.
- "... bit for bit": the same with the update rounded once, as torch's, through tracegrad's float64 emulation of
  the fused multiply-add (NumPy has none). Its ratio is the floor for an engine on NumPy whose parameters must
  come out with torch's bits, whatever its overhead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Bench, TimingConfig, measure_interleaved
from benchmarks.workloads.mlp import (
    CHECK_STEPS,
    LR,
    MEDIUM,
    TINY,
    MLPConfig,
    make_numpy_step,
    make_torchlike_step,
    mlp_data,
)
from tracegrad.ops.aten_vec import BLOCK_ELEMENTS, fma32_blocked


def _kept_where_positive(activation: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """``where(activation > 0, grad, 0)`` without a branch per element: ``grad``'s bits and-ed with all ones where
    kept, so +0.0 where dropped and infinities or NaN kept."""
    mask = (activation > 0).view(np.uint8).astype(np.uint32)
    np.negative(mask, out=mask)  # (1 -> all ones)
    return np.bitwise_and(grad.view(np.uint32), mask, out=mask).view(np.float32)


def _update_rounded_twice(p: np.ndarray, g: np.ndarray) -> None:
    p -= LR * g


def _update_fused(p: np.ndarray, g: np.ndarray, scratch: np.ndarray) -> None:
    fma32_blocked(g, -LR, p, p, scratch)  # (torch's add_ with alpha: fma(g, -lr, p), one rounding)


def make_torch_order_numpy_step(cfg: MLPConfig, fused_update: bool = False) -> Callable[[], Any]:
    """PyTorch's eager training step, op for op, in NumPy: what nn.Linear, nn.ReLU, F.cross_entropy, the
    autograd engine and SGD compute (addmm, relu, log_softmax, nll_loss; their backward formulas; the update
    rounded once with ``fused_update``, else twice)."""
    x, y, params_np = mlp_data(cfg)
    params = [(w.copy(), b.copy()) for w, b in params_np]
    rows = np.arange(cfg.batch)
    n_layers = len(params)
    zero = np.float32(0)
    scratch = np.empty((2, BLOCK_ELEMENTS))

    def update(p: np.ndarray, g: np.ndarray) -> None:
        if fused_update and p.dtype == np.float32 and p.flags.c_contiguous and g.flags.c_contiguous:
            _update_fused(p, g, scratch)
        else:
            _update_rounded_twice(p, g)

    def step() -> Any:
        acts = [x]  # the inputs of each linear layer: the forward's saved tensors
        h = x
        for i, (w, b) in enumerate(params):
            h = np.matmul(h, w.T)
            h += b
            if i < n_layers - 1:
                h = np.maximum(h, zero)  # a new tensor: nn.ReLU() is out of place
                acts.append(h)
        shifted = h - h.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -log_probs[rows, y].mean()
        g_log_probs = np.zeros_like(log_probs)  # nll_loss_backward
        g_log_probs[rows, y] = -1.0 / cfg.batch
        g = g_log_probs - np.exp(log_probs) * g_log_probs.sum(axis=1, keepdims=True)  # log_softmax_backward
        grads: list[tuple[np.ndarray, np.ndarray]] = []
        for i in reversed(range(n_layers)):
            w, _ = params[i]
            grads.append((np.matmul(g.T, acts[i]), g.sum(axis=0)))
            if i > 0:  # (no gradient for the input batch)
                g = _kept_where_positive(acts[i], np.matmul(g, w))  # threshold_backward on the ReLU's output
        for (w, b), (gw, gb) in zip(params, reversed(grads)):  # the optimizer, after the whole backward
            update(w, gw)
            update(b, gb)
        return loss

    return step


def _steps(cfg: MLPConfig) -> dict[str, Callable[[], Any]]:
    from benchmarks.libs import load_libs

    steps = {"NumPy, hand-written": make_numpy_step(np, cfg),
             "NumPy, PyTorch's order": make_torch_order_numpy_step(cfg),
             "... bit for bit": make_torch_order_numpy_step(cfg, fused_update=True)}
    libs, notes = load_libs(["tracegrad", "torch"])
    for note in notes:
        print(note)
    for lib in libs:
        steps[lib.name] = make_torchlike_step(lib.module, cfg)
    return steps


def _losses_agree(cfg: MLPConfig) -> bool:
    """The first steps of the NumPy steps give the same losses (the order probes compute the same step)."""
    steps = [make_numpy_step(np, cfg), make_torch_order_numpy_step(cfg), make_torch_order_numpy_step(cfg, True)]
    for _ in range(CHECK_STEPS):
        hand, *ordered = (float(step()) for step in steps)
        if not all(np.isclose(hand, loss, rtol=1e-4) for loss in ordered):
            return False
    return True


def main() -> int:
    cfg_timing = TimingConfig(repeats=9, min_time=0.1, warmup_time=0.1)
    for cfg in (MEDIUM, TINY):
        if not _losses_agree(cfg):
            print(f"{cfg.name}: the NumPy steps disagree; no figures")
            return 1
        results = measure_interleaved({name: Bench(stmt="step()", namespace={"step": step})
                                       for name, step in _steps(cfg).items()}, cfg_timing)
        base = results["NumPy, hand-written"]
        print(f"{cfg.name}, batch {cfg.batch} (target <= {cfg.target}x the hand-written step):")
        for name, m in results.items():
            if isinstance(m, str):
                print(f"  {name:>24}: error: {m}")
                continue
            print(f"  {name:>24}: {m.median_us:8.1f} us/step  {m.median_us / base.median_us:5.2f}x")
    return 0


if __name__ == "__main__":  # (run as a module, the benchmarks package has pinned BLAS to one thread)
    sys.exit(main())
