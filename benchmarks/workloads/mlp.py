"""Workloads 3 and 4: one training step of a ReLU MLP with cross-entropy and plain SGD.

Libraries run what a user writes: ``nn.Sequential`` of ``nn.Linear``/``nn.ReLU``, ``F.cross_entropy``,
``optim.SGD(lr=0.01)``, ``zero_grad(); loss.backward(); step()``. The baseline is the same step written by
hand in NumPy, computing no gradient for the input batch. Every library starts from the same weights, so
the losses of the first steps must agree; that cross-check guards the NumPy baseline as much as the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import Bench
from benchmarks.libs import SUBJECT, Lib, sync_fn, tensor
from benchmarks.spec import Check, Context, Row, Target, Workload
from benchmarks.workloads.training import sgd_step

LR = 0.01
CHECK_STEPS = 3


@dataclass(frozen=True)
class MLPConfig:
    name: str
    sizes: tuple[int, ...]  # input, hidden..., classes
    batch: int
    target: float  # max ratio of tracegrad's step to the NumPy step


MEDIUM = MLPConfig("784-256-256-10", (784, 256, 256, 10), 128, 1.05)
TINY = MLPConfig("32-32-10", (32, 32, 10), 16, 1.6)


def mlp_data(cfg: MLPConfig) -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Batch, labels, and per-layer (weight (out, in), bias) drawn like nn.Linear's default init."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((cfg.batch, cfg.sizes[0])).astype(np.float32)
    y = rng.integers(0, cfg.sizes[-1], cfg.batch).astype(np.int64)
    params = []
    for fan_in, fan_out in zip(cfg.sizes[:-1], cfg.sizes[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        params.append((rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                       rng.uniform(-bound, bound, fan_out).astype(np.float32)))
    return x, y, params


def make_torchlike_step(lib: ModuleType, cfg: MLPConfig, device: str = "cpu") -> Callable[[], Any]:
    """A zero-argument training step for a torch-like library; it returns the loss tensor."""
    x_np, y_np, params = mlp_data(cfg)
    layers: list[Any] = []
    for i, (w, _) in enumerate(params):
        linear = lib.nn.Linear(w.shape[1], w.shape[0])
        layers.append(linear)
        if i < len(params) - 1:
            layers.append(lib.nn.ReLU())
    model = lib.nn.Sequential(*layers)
    with lib.no_grad():
        for linear, (w, b) in zip(layers[::2], params):
            linear.weight.copy_(tensor(lib, w))
            linear.bias.copy_(tensor(lib, b))
    return sgd_step(lib, model, x_np, y_np, LR, device)


def make_numpy_step(xp: ModuleType, cfg: MLPConfig) -> Callable[[], Any]:
    """Hand-written forward + backward + SGD update, as one would write it without an autograd engine."""
    x_np, y_np, params_np = mlp_data(cfg)
    x, y = xp.asarray(x_np), xp.asarray(y_np)
    params = [(xp.array(w), xp.array(b)) for w, b in params_np]
    rows = xp.arange(cfg.batch)
    n_layers = len(params)

    def step() -> Any:
        acts = [x]
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w.T
            h += b
            if i < n_layers - 1:
                xp.maximum(h, 0.0, out=h)
            acts.append(h)
        # Softmax cross-entropy, mean over the batch, with the usual max shift.
        m = h.max(axis=1, keepdims=True)
        ex = xp.exp(h - m)
        s = ex.sum(axis=1, keepdims=True)
        loss = (xp.log(s[:, 0]) + m[:, 0] - h[rows, y]).mean()
        g = ex / s
        g[rows, y] -= 1.0
        g /= cfg.batch
        for i in reversed(range(n_layers)):
            w, b = params[i]
            a = acts[i]
            dw = g.T @ a
            db = g.sum(axis=0)
            if i > 0:  # no gradient for the input batch
                g = g @ w
                g *= a > 0  # ReLU mask from the post-activation
            w -= LR * dw
            b -= LR * db
        return loss

    return step


def _bench_factory(lib: Lib, cfg: MLPConfig) -> Callable[[], Bench]:
    def make() -> Bench:
        if lib.torchlike:
            return Bench(stmt="step()", namespace={"step": make_torchlike_step(lib.module, cfg, lib.device)},
                         sync=sync_fn(lib))
        return Bench(stmt="step()", namespace={"step": make_numpy_step(lib.module, cfg)})

    return make


def _scalar(loss: Any) -> float:
    """The loss as a number: ``item()`` for a tensor (float() of one that requires grad warns in torch)."""
    return loss.item() if hasattr(loss, "item") else float(loss)


def _losses(lib: Lib, cfg: MLPConfig) -> Callable[[], np.ndarray]:
    def run() -> np.ndarray:
        step = make_torchlike_step(lib.module, cfg, lib.device) if lib.torchlike else \
            make_numpy_step(lib.module, cfg)
        return np.array([_scalar(step()) for _ in range(CHECK_STEPS)])

    return run


def _workload(key: str, number: int, cfg: MLPConfig) -> Workload:
    def rows(ctx: Context) -> list[Row]:
        return [Row(cfg.name, f"batch {cfg.batch}", {lib.name: _bench_factory(lib, cfg) for lib in ctx.libs},
                    Target(SUBJECT, "numpy", cfg.target, "issue (G3 stretch)"))]

    def checks(ctx: Context) -> list[Check]:
        return [Check(f"losses of the first {CHECK_STEPS} steps",
                      {lib.name: _losses(lib, cfg) for lib in ctx.libs}, rtol=1e-4, atol=1e-6)]

    return Workload(
        key=key,
        title=f"{number}. MLP training step {cfg.name}, batch {cfg.batch}",
        description=f"ReLU MLP {cfg.name}, batch {cfg.batch}, float32: zero_grad, forward, cross_entropy, "
                    f"backward, SGD(lr={LR}) step. NumPy: hand-written step without dX for the first layer.",
        per="step",
        rows=rows,
        checks=checks,
    )


MLP_MEDIUM = _workload("mlp_medium", 3, MEDIUM)
MLP_TINY = _workload("mlp_tiny", 4, TINY)
