"""Workload 9: one training step of a small convolutional network (LeNet's shape, on 28×28 images).

What a user of the tutorials runs: ``Conv2d`` → ``ReLU`` → ``MaxPool2d`` twice, then ``Linear``, with
``F.cross_entropy`` and ``optim.SGD``. Most of the time goes to the kernels (im2col and its adjoint, the matrix
products, pooling and its scatter), not to the engine, so this row watches the kernels that the MLP rows never
reach. There is no hand-written NumPy step to compare with: tracegrad is compared with torch (one thread).
Every library starts from the same weights, so the losses of the first steps must agree.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import Bench
from benchmarks.libs import Lib, sync_fn, tensor
from benchmarks.spec import Check, Context, Row, Workload
from benchmarks.workloads.training import sgd_step

LR = 0.01
CHECK_STEPS = 3
BATCH = 64
# (in channels, out channels, kernel) per convolution; each is followed by ReLU and a 2×2 max pool
CONVS = ((1, 8, 5), (8, 16, 5))
CLASSES = 10
FLAT = 16 * 4 * 4  # 28 → 24 → 12 → 8 → 4


def cnn_data() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Images, labels and the parameters (conv weights and biases, then the linear layer's), drawn like the
    layers' default init."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, CLASSES, BATCH).astype(np.int64)
    params = []
    for c_in, c_out, k in CONVS:
        bound = 1.0 / np.sqrt(c_in * k * k)
        params += [rng.uniform(-bound, bound, (c_out, c_in, k, k)), rng.uniform(-bound, bound, c_out)]
    bound = 1.0 / np.sqrt(FLAT)
    params += [rng.uniform(-bound, bound, (CLASSES, FLAT)), rng.uniform(-bound, bound, CLASSES)]
    return x, y, [p.astype(np.float32) for p in params]


def make_cnn_step(lib: ModuleType, device: str = "cpu") -> Callable[[], Any]:
    """A zero-argument training step for a torch-like library; it returns the loss tensor."""
    nn = lib.nn
    x_np, y_np, params = cnn_data()
    layers: list[Any] = []
    for c_in, c_out, k in CONVS:
        layers += [nn.Conv2d(c_in, c_out, k), nn.ReLU(), nn.MaxPool2d(2)]
    layers += [nn.Flatten(), nn.Linear(FLAT, CLASSES)]
    model = nn.Sequential(*layers)
    with lib.no_grad():
        for p, value in zip(model.parameters(), params):
            p.copy_(tensor(lib, value))
    return sgd_step(lib, model, x_np, y_np, LR, device)


def _losses(lib: Lib) -> Callable[[], np.ndarray]:
    def run() -> np.ndarray:
        step = make_cnn_step(lib.module, lib.device)
        return np.array([step().item() for _ in range(CHECK_STEPS)])

    return run


def _rows(ctx: Context) -> list[Row]:
    def factory(lib: Lib) -> Callable[[], Bench]:
        return lambda: Bench(stmt="step()", namespace={"step": make_cnn_step(lib.module, lib.device)},
                             sync=sync_fn(lib))

    return [Row("LeNet-shaped CNN", f"batch {BATCH}, 1×28×28", {lib.name: factory(lib) for lib in ctx.torchlike()})]


def _checks(ctx: Context) -> list[Check]:
    return [Check(f"losses of the first {CHECK_STEPS} steps", {lib.name: _losses(lib) for lib in ctx.torchlike()},
                  rtol=1e-4, atol=1e-6)]


CNN = Workload(
    key="cnn",
    title=f"9. CNN training step, batch {BATCH}",
    description="Conv2d(1, 8, 5), ReLU, MaxPool2d(2), Conv2d(8, 16, 5), ReLU, MaxPool2d(2), Flatten, "
                f"Linear({FLAT}, {CLASSES}); cross_entropy, backward, SGD(lr={LR}) step. No NumPy baseline.",
    per="step",
    rows=_rows,
    checks=_checks,
)
