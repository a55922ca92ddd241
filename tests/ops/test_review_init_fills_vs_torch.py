"""Review of ``nn.init``'s refusals and memory-order draws (1d4f53d), compared with torch bit for bit.

- ``Tensor.uniform_``'s cheap path for "bounds that leave nothing to refuse" took float32's half range for a bfloat16
  tensor (held in a float32 array): ``uniform_(-1.7e38, 1.7e38)`` of bfloat16 filled it where torch refuses the width;
- ``normal_`` checked the dtype before the std and refused an empty integer tensor: torch checks the std first
  (``normal_impl_``) and an empty tensor runs no kernel;
- init of an expanded weight filled it where torch's ``tensor.uniform_``/``normal_`` (and ``orthogonal_``'s copy)
  refuse the overlap; ``orthogonal_`` of a channels_last weight filled it where torch's ``view_as`` refuses;
- ``trunc_normal_`` drew its redraws in the weight's memory order: torch draws them into ``empty_like`` buffers,
  dense, so a sliced weight's redraws come in index order; of an integer weight it filled where torch refuses.
"""

from __future__ import annotations

import pytest
from _lib import bits_or_error, tg, torch

PROGRAMS = {
    "bfloat16_uniform_too_wide": lambda lib: lib.empty(3, dtype=lib.bfloat16).uniform_(-1.7e38, 1.7e38),
    "bfloat16_init_uniform_too_wide": lambda lib: lib.nn.init.uniform_(lib.empty(3, dtype=lib.bfloat16), -1.7e38,
                                                                       1.7e38),
    "normal_long_negative_std": lambda lib: lib.empty(2, dtype=lib.int64).normal_(0.0, -1.0),
    "init_normal_long_negative_std": lambda lib: lib.nn.init.normal_(lib.empty(2, dtype=lib.int64), std=-1.0),
    "normal_empty_long": lambda lib: lib.empty(0, dtype=lib.int64).normal_(),
    "init_normal_empty_long": lambda lib: lib.nn.init.normal_(lib.empty(0, 3, dtype=lib.int64)),
    "trunc_normal_empty_long": lambda lib: lib.nn.init.trunc_normal_(lib.empty(0, dtype=lib.int64)),
    "trunc_normal_long": lambda lib: lib.nn.init.trunc_normal_(lib.empty(3, dtype=lib.int64)),
    "trunc_normal_uint8": lambda lib: lib.nn.init.trunc_normal_(lib.empty(3, dtype=lib.uint8)),
    "trunc_normal_long_narrow": lambda lib: lib.nn.init.trunc_normal_(lib.empty(3, dtype=lib.int64), a=-0.1, b=0.1),
    "orthogonal_channels_last": lambda lib: lib.nn.init.orthogonal_(
        lib.empty(2, 3, 4, 5).to(memory_format=lib.channels_last)),
}

EXPANDED_FILLS = {
    "uniform_": lambda lib, w: lib.nn.init.uniform_(w),
    "normal_": lambda lib, w: lib.nn.init.normal_(w),
    "xavier_uniform_": lambda lib, w: lib.nn.init.xavier_uniform_(w),
    "kaiming_normal_": lambda lib, w: lib.nn.init.kaiming_normal_(w),
    "trunc_normal_redrawn": lambda lib, w: lib.nn.init.trunc_normal_(w),
    "trunc_normal_rejection": lambda lib, w: lib.nn.init.trunc_normal_(w, a=-0.1, b=0.1),
    "orthogonal_": lambda lib, w: lib.nn.init.orthogonal_(w),
    "sparse_": lambda lib, w: lib.nn.init.sparse_(w, 0.5),
}

SLICES = {
    "columns": lambda lib: lib.zeros(6, 9)[:, ::2],
    "block": lambda lib: lib.zeros(6, 9)[1:4, 2:],
    "big_block": lambda lib: lib.zeros(8, 40)[:, 3:],
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_refusals_and_fills_as_torch(name):
    assert bits_or_error(PROGRAMS[name], tg) == bits_or_error(PROGRAMS[name], torch)


@pytest.mark.parametrize("fill", EXPANDED_FILLS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_init_of_an_expanded_weight_is_refused(fill, dtype, request):
    if (fill, dtype) == ("orthogonal_", "bfloat16"):  # (known, not yet fixed: torch's QR refuses bfloat16 first)
        request.applymarker(pytest.mark.xfail(strict=True, reason="orthogonal_ of bfloat16 is not refused"))
    def program(lib):
        weight = lib.zeros(1, 9, dtype=getattr(lib, dtype)).expand(6, 9)
        return EXPANDED_FILLS[fill](lib, weight)

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


@pytest.mark.parametrize("view", SLICES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("bounds", [(-2.0, 2.0), (-0.6, 0.6), (2.0, 3.0)], ids=["wide", "redrawn", "rejection"])
def test_trunc_normal_of_a_slice_redraws_in_index_order(view, dtype, bounds):
    def program(lib):
        weight = SLICES[view](lib).to(getattr(lib, dtype))
        lib.nn.init.trunc_normal_(weight, std=0.5 if bounds == (-0.6, 0.6) else 1.0, a=bounds[0], b=bounds[1])
        return weight, lib.rand(3)  # (and the generator's position afterwards)

    assert bits_or_error(program, tg) == bits_or_error(program, torch)
