"""``UnaryOpFuzzer``: one tensor ``x`` of 1 to 3 dimensions, sizes favouring powers of two, strided at times."""

from __future__ import annotations

import numpy as np

import tracegrad

from ..utils.fuzzer import FuzzedTensor, Fuzzer
from . import _shapes

_MIN_DIM_SIZE = 16
_MAX_DIM_SIZE = 16 * 1024 ** 2
_POW_TWO_SIZES = tuple(2 ** i for i in range(int(np.log2(_MIN_DIM_SIZE)), int(np.log2(_MAX_DIM_SIZE)) + 1))

# the limits of the tensors of the unary and binary op fuzzers
X_LIMITS = dict(probability_contiguous=0.75, min_elements=4 * 1024, max_elements=32 * 1024 ** 2,
                max_allocation_bytes=2 * 1024 ** 3, dim_parameter="dim")


def x_sizes_and_dim() -> list:
    """The parameters ``dim``, ``k_any_i``, ``k_pow2_i`` and ``k_i`` (80% any size, 20% a power of two)."""
    return [_shapes.dimension_count("dim"), _shapes.any_sizes(_MIN_DIM_SIZE, _MAX_DIM_SIZE),
            _shapes.favoured_sizes("pow2", _POW_TWO_SIZES), _shapes.chosen_sizes({"any": 0.8, "pow2": 0.2})]


class UnaryOpFuzzer(Fuzzer):
    def __init__(self, seed: int | None, dtype=tracegrad.float32, cuda: bool = False) -> None:
        super().__init__(
            parameters=[*x_sizes_and_dim(), _shapes.steps(["x_step"]), _shapes.random_value()],
            tensors=[FuzzedTensor(name="x", size=("k0", "k1", "k2"), steps=("x_step_0", "x_step_1", "x_step_2"),
                                  dtype=dtype, cuda=cuda, **X_LIMITS)],
            seed=seed,
        )
