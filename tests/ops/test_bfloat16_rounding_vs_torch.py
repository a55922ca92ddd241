"""Values torch rounds to bfloat16 before computing: a real input of sum, nansum, prod, cumsum and cumprod asked
for a bfloat16 result (``dtype=`` or a bfloat16 ``out=``) is converted first (mean reads it unrounded); a 0-d
integer tensor given first beside a bfloat16 tensor (``tensor(257) * bf16`` multiplies by 256); an integer self
compared in place with bfloat16 (``int_t.eq_(bf16)``). (prod is converted too, but its bfloat16 kernel itself is a
known gap: not tested here.) vector_norm refuses ``dtype=torch.bfloat16`` of a wider
input. tracegrad computed each of these in float32 from the unrounded values."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch, value_or_error

SHAPES_AND_DIMS = [((7, 33), 1), ((7, 33), 0), ((40,), 0), ((3, 5, 70), 2), ((3, 5, 70), 1), ((), 0)]
REDUCTIONS = {
    "sum": lambda lib, x, d, out: lib.sum(x, d, dtype=None if out is not None else lib.bfloat16, **out or {}),
    "sum_all": lambda lib, x, d, out: x.sum(dtype=lib.bfloat16),
    "nansum": lambda lib, x, d, out: lib.nansum(x, d, dtype=None if out is not None else lib.bfloat16, **out or {}),
    "mean": lambda lib, x, d, out: lib.mean(x, d, dtype=None if out is not None else lib.bfloat16, **out or {}),
    "cumsum": lambda lib, x, d, out: lib.cumsum(x, d, dtype=None if out is not None else lib.bfloat16, **out or {}),
    "cumprod": lambda lib, x, d, out: lib.cumprod(x, d, dtype=None if out is not None else lib.bfloat16,
                                                  **out or {}),
}


def _input(shape, dtype: str, scale: float, seed: int) -> np.ndarray:
    values = np.random.default_rng(seed).standard_normal(shape) * scale
    if dtype == "int64":
        return (values * 1000).astype(dtype)
    if values.size > 2:
        values.flat[1] = np.nan if seed % 2 else 60000.0
    return values.astype(dtype)


@pytest.mark.parametrize("with_out", [False, True])
@pytest.mark.parametrize("source", ["float16", "float32", "float64", "int64"])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_floating_input_is_rounded_before_a_bfloat16_reduction(name, source, with_out):
    scale = 1.0 if "prod" in name else 3.0

    def program(lib):
        results = []
        for seed, (shape, dim) in enumerate(SHAPES_AND_DIMS):
            x = lib.tensor(_input(shape, source, scale, seed))
            out = None
            if with_out:
                like = REDUCTIONS[name](lib, x.to(lib.bfloat16), dim, None)
                out = {"out": lib.empty(like.shape, dtype=lib.bfloat16)}
            results.append(value_or_error(lambda lib, x=x, d=dim, o=out: REDUCTIONS[name](lib, x, d, o).float(), lib))
        return str(results)

    assert program(tg) == program(torch)


@pytest.mark.parametrize("source", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("asked", ["float16", "bfloat16", "float32", "float64"])
def test_vector_norm_refuses_a_narrowing_dtype_in_torch_words(source, asked):
    def program(lib):
        x = lib.tensor(_input((4, 9), "float32", 3.0, 0)).to(getattr(lib, source))
        return str(value_or_error(lambda lib: lib.linalg.vector_norm(x, dim=1, dtype=getattr(lib, asked)).float(),
                                  lib))

    assert program(tg) == program(torch)


def test_zero_dim_integer_given_first_is_rounded_to_bfloat16():
    def program(lib):
        b = lib.tensor([258.0, 2.0, 256.0], dtype=lib.bfloat16)
        firsts = (lib.tensor(257), lib.tensor(2049, dtype=lib.int32), lib.tensor(True))
        return [(f * b).float().tolist() + (f < b).tolist() + (f / b).float().tolist() + (b * f).float().tolist()
                for f in firsts]

    assert program(tg) == program(torch)


@pytest.mark.parametrize("op", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "logical_and_"])
def test_integer_self_compared_in_place_with_bfloat16_is_rounded(op):
    def program(lib):
        results = []
        for other in (lib.tensor([256.0, 2048.0, 258.0], dtype=lib.bfloat16), lib.tensor(256.0, dtype=lib.bfloat16)):
            ints = lib.tensor([257, 2049, 257])
            results.append((getattr(ints, op)(other).tolist(), str(ints.dtype)))
        bits = lib.tensor([True, False, True])
        results.append(getattr(bits, op)(lib.tensor([1.0, 0.0, 0.5], dtype=lib.bfloat16)).tolist())
        return results

    assert program(tg) == program(torch)
