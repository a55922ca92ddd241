"""A review of renorm (commit "renorm: gradient and half-precision forward bit for bit with torch"), compared
with torch: the layout of its result, its out= dtype check, and its forward-mode tangent of a half type.

- PyTorch's structured renorm allocates its result contiguous; tracegrad's kept a transposed input's layout.
- ``torch.renorm(..., out=)`` refuses an out of another dtype than self's (a structured kernel's check);
  tracegrad cast into it.
- renorm_jvp takes a half type's norm in float32 (CUDA's accumulate type, on every device), so the tangent of a
  float16 or bfloat16 renorm is float32; tracegrad's was cast back to the primal's dtype. renorm_ copies it into
  self's tangent, which keeps its half type.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, bits_or_error, tg, torch

_VALUES = np.random.default_rng(32).standard_normal((3, 4))


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["transposed", "every_other_column"])
def test_renorm_of_a_non_contiguous_input_is_contiguous(dtype, layout):
    def program(lib):
        x = lib.tensor(_VALUES).to(getattr(lib, dtype))
        x = x.t() if layout == "transposed" else x[:, ::2]
        return x.renorm(2, 0, 1.0)

    ours, theirs = program(tg), program(torch)
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() and theirs.is_contiguous()
    assert bits_or_error(program, tg) == bits_or_error(program, torch)


def test_renorm_in_place_keeps_self_s_layout():
    def program(lib):
        x = lib.tensor(_VALUES).t()
        x.renorm_(2, 0, 1.0)
        return x

    ours, theirs = program(tg), program(torch)
    assert ours.stride() == theirs.stride() == (1, 4)
    assert_same_bits(ours, theirs)


@pytest.mark.parametrize("self_dtype, out_dtype", [("float64", "float32"), ("float32", "float64"),
                                                   ("float32", "float16"), ("float64", "complex128")])
def test_renorm_out_of_another_dtype_is_refused(self_dtype, out_dtype):
    def program(lib):
        x = lib.tensor(_VALUES).to(getattr(lib, self_dtype))
        return lib.renorm(x, 2, 0, 1.0, out=lib.empty(3, 4, dtype=getattr(lib, out_dtype)))

    ours = bits_or_error(program, tg)
    assert ours == bits_or_error(program, torch)
    assert ours[0] == "RuntimeError"


def test_renorm_out_of_self_s_dtype_is_written():
    def program(lib):
        out = lib.empty(4, 3, dtype=lib.float64).t()
        result = lib.renorm(lib.tensor(_VALUES), 2, 0, 1.0, out=out)
        return result, out.stride()

    ours, theirs = program(tg), program(torch)
    assert ours[1] == theirs[1]
    assert_same_bits(ours[0], theirs[0])


def _renorm_tangent(lib, dtype: str, p, dim: int, maxnorm: float, in_place: bool = False):
    rng = np.random.default_rng(5)
    x = lib.tensor(rng.standard_normal((3, 4, 2))).to(getattr(lib, dtype))
    t = lib.tensor(rng.standard_normal((3, 4, 2))).to(x.dtype)
    with lib.autograd.forward_ad.dual_level():
        dual = lib.autograd.forward_ad.make_dual(x, t)
        if in_place:
            y = dual.clone()
            y.renorm_(p, dim, maxnorm)
        else:
            y = dual.renorm(p, dim, maxnorm)
        return lib.autograd.forward_ad.unpack_dual(y).tangent.clone()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("maxnorm", [0.3, 100.0])
def test_renorm_tangent_of_a_half_type_is_float32(dtype, maxnorm):
    """The tangent is float32 even where every slice passes through unscaled (the where promotes)."""
    ours, theirs = _renorm_tangent(tg, dtype, 2, 0, maxnorm), _renorm_tangent(torch, dtype, 2, 0, maxnorm)
    assert theirs.dtype == torch.float32
    assert_same_bits(ours, theirs)


@pytest.mark.parametrize("p, dim", [(1, 0), (3, -1), (0.5, 1), (float("inf"), 0)])
def test_renorm_tangent_of_float16_is_bit_for_bit(p, dim):
    assert_same_bits(_renorm_tangent(tg, "float16", p, dim, 0.3), _renorm_tangent(torch, "float16", p, dim, 0.3))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_renorm_in_place_tangent_keeps_the_half_type(dtype):
    ours = _renorm_tangent(tg, dtype, 2, 0, 0.3, in_place=True)
    theirs = _renorm_tangent(torch, dtype, 2, 0, 0.3, in_place=True)
    assert theirs.dtype == getattr(torch, dtype)
    assert_same_bits(ours.float(), theirs.float())
