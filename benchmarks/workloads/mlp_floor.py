"""How far below PyTorch's own arithmetic the MLP targets sit: ``python -m benchmarks.workloads.mlp_floor``.

Workloads 3 and 4 compare a training step with a hand-written NumPy step that fuses what an engine with
PyTorch's semantics may not: ReLU in place over the pre-activation, the mask multiplied into the gradient in
place, and each layer's update done while its weight gradient is still in cache. A faithful eager engine runs
PyTorch's step instead: a fresh tensor per ReLU, log_softmax then nll_loss, a ``where`` for the ReLU mask
(a multiply would turn an infinite gradient into NaN where the mask is 0), every gradient kept until the
whole backward has run, and the optimizer after it.

This script times that same arithmetic, in that order, written in plain NumPy with no engine at all, beside
the hand-written step, tracegrad and torch, interleaved in one process. Its ratio to the hand-written step is
a floor no engine that keeps PyTorch's semantics can go below, whatever its overhead.
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


def make_torch_order_numpy_step(cfg: MLPConfig) -> Callable[[], Any]:
    """PyTorch's eager training step, op for op, in NumPy: what nn.Linear, nn.ReLU, F.cross_entropy, the
    autograd engine and SGD compute (addmm, relu, log_softmax, nll_loss; their backward formulas; p -= lr g)."""
    x, y, params_np = mlp_data(cfg)
    params = [(w.copy(), b.copy()) for w, b in params_np]
    rows = np.arange(cfg.batch)
    n_layers = len(params)
    zero = np.float32(0)

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
                g = np.where(acts[i] > 0, np.matmul(g, w), zero)  # threshold_backward on the ReLU's output
        for (w, b), (gw, gb) in zip(params, reversed(grads)):  # the optimizer, after the whole backward
            w -= LR * gw
            b -= LR * gb
        return loss

    return step


def _steps(cfg: MLPConfig) -> dict[str, Callable[[], Any]]:
    from benchmarks.libs import load_libs

    steps = {"NumPy, hand-written": make_numpy_step(np, cfg),
             "NumPy, PyTorch's order": make_torch_order_numpy_step(cfg)}
    libs, notes = load_libs(["tracegrad", "torch"])
    for note in notes:
        print(note)
    for lib in libs:
        steps[lib.name] = make_torchlike_step(lib.module, cfg)
    return steps


def _losses_agree(cfg: MLPConfig) -> bool:
    """The first steps of the two NumPy steps give the same losses (the order probe computes the same step)."""
    hand, ordered = make_numpy_step(np, cfg), make_torch_order_numpy_step(cfg)
    return all(np.isclose(float(hand()), float(ordered()), rtol=1e-4) for _ in range(CHECK_STEPS))


def main() -> int:
    cfg_timing = TimingConfig(repeats=9, min_time=0.1, warmup_time=0.1)
    for cfg in (MEDIUM, TINY):
        if not _losses_agree(cfg):
            print(f"{cfg.name}: the two NumPy steps disagree; no figures")
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
