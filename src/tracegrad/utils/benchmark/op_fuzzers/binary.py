"""``BinaryOpFuzzer``: tensors ``x`` and ``y`` of 1 to 3 dimensions, ``y`` at times of size one along a dimension
(to broadcast), both strided at times (by ``x``'s steps, as in PyTorch)."""

from __future__ import annotations

import tracegrad

from ..utils.fuzzer import FuzzedParameter, FuzzedTensor, Fuzzer, ParameterAlias
from . import _shapes
from .unary import X_LIMITS, x_sizes_and_dim


def _y_sizes() -> list[FuzzedParameter]:
    """``y_k_i``: ``x``'s size (80%) or one (20%)."""
    return [FuzzedParameter(name=f"y_k{i}", distribution={ParameterAlias(f"k{i}"): 0.8, 1: 0.2}, strict=True)
            for i in range(_shapes.MAX_DIMS)]


class BinaryOpFuzzer(Fuzzer):
    def __init__(self, seed: int | None, dtype=tracegrad.float32, cuda: bool = False) -> None:
        x_steps = ("x_step_0", "x_step_1", "x_step_2")
        y_limits = {k: v for k, v in X_LIMITS.items() if k not in ("min_elements", "max_elements")}
        super().__init__(
            parameters=[*x_sizes_and_dim(), _y_sizes(), _shapes.steps(["x_step", "y_step"]),
                        _shapes.random_value()],
            tensors=[
                FuzzedTensor(name="x", size=("k0", "k1", "k2"), steps=x_steps, dtype=dtype, cuda=cuda, **X_LIMITS),
                FuzzedTensor(name="y", size=("y_k0", "y_k1", "y_k2"), steps=x_steps, dtype=dtype, cuda=cuda,
                             **y_limits),
            ],
            seed=seed,
        )
