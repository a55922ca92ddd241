"""``SpectralOpFuzzer``: one tensor ``x`` of 1 to 3 dimensions whose sizes favour the regular numbers (factors 2,
3 and 5 only: the fast FFT lengths)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import tracegrad

from ..utils.fuzzer import FuzzedTensor, Fuzzer
from . import _shapes
from .unary import X_LIMITS

__all__ = ["SpectralOpFuzzer"]

MIN_DIM_SIZE = 16
MAX_DIM_SIZE = 16 * 1024


def power_range(upper_bound: int, base: int) -> Iterator[int]:
    return (base ** i for i in range(int(math.log(upper_bound, base)) + 1))


def _regular_sizes() -> list[int]:
    """The numbers 2^i 3^j 5^k above MIN_DIM_SIZE and at most MAX_DIM_SIZE, ascending."""
    sizes = [p2 * p3 * p5
             for p2 in power_range(MAX_DIM_SIZE, 2)
             for p3 in power_range(MAX_DIM_SIZE // p2, 3)
             for p5 in power_range(MAX_DIM_SIZE // (p2 * p3), 5)
             if p2 * p3 * p5 > MIN_DIM_SIZE]
    return sorted(sizes)


REGULAR_SIZES = _regular_sizes()


class SpectralOpFuzzer(Fuzzer):
    def __init__(self, *, seed: int, dtype=tracegrad.float64, cuda: bool = False,
                 probability_regular: float = 1.0) -> None:
        limits = {**X_LIMITS, "dim_parameter": "ndim"}
        super().__init__(
            parameters=[
                _shapes.dimension_count("ndim"),
                _shapes.any_sizes(MIN_DIM_SIZE, MAX_DIM_SIZE),
                _shapes.favoured_sizes("regular", REGULAR_SIZES),
                _shapes.chosen_sizes({"regular": probability_regular, "any": 1 - probability_regular}),
                _shapes.steps(["step"]),
            ],
            tensors=[FuzzedTensor(name="x", size=("k0", "k1", "k2"), steps=("step_0", "step_1", "step_2"),
                                  dtype=dtype, cuda=cuda, **limits)],
            seed=seed,
        )
