"""Interpolating upsampling keeps one plan (taps and backward steps) per distinct call: repeated and interleaved
calls of several sizes, modes and dtypes give torch's values and gradients at every call, and the shared taps are
read-only, so no call can change what the next one reads."""

from __future__ import annotations

import pytest

from tests._lib import assert_same_bits, tg, torch

CALLS = [  # (input shape, interpolate's keywords)
    ((1, 2, 8, 8), {"scale_factor": 2, "mode": "bilinear"}),
    ((1, 2, 8, 8), {"size": (5, 11), "mode": "bilinear", "align_corners": True}),
    ((2, 1, 6, 7), {"scale_factor": 1.5, "mode": "bicubic"}),
    ((1, 3, 9), {"scale_factor": 0.5, "mode": "linear"}),
    ((1, 1, 3, 4, 5), {"size": (4, 6, 7), "mode": "trilinear"}),
]


def _forward_and_backward(L, shape: tuple, options: dict, dtype: str, seed: int):
    gen = L.Generator().manual_seed(seed)
    x = L.randn(*shape, generator=gen, dtype=getattr(L, dtype)).requires_grad_()
    y = L.nn.functional.interpolate(x, **options)
    y.backward(L.randn(*y.shape, generator=gen, dtype=y.dtype))
    return y.detach(), x.grad


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_repeated_and_interleaved_calls_match_torch_each_time(dtype):
    for rounds in range(3):
        for k, (shape, options) in enumerate(CALLS):
            ours = _forward_and_backward(tg, shape, options, dtype, 10 * rounds + k)
            theirs = _forward_and_backward(torch, shape, options, dtype, 10 * rounds + k)
            for a, b in zip(ours, theirs):
                assert_same_bits(a, b)


@pytest.mark.skipif(tg is torch, reason="tracegrad's own cache")
def test_one_plan_per_distinct_call_with_read_only_taps():
    from tracegrad.ops.nn_ops.interp_cpu import shared_plan

    shared_plan.cache_clear()
    for _ in range(3):
        _forward_and_backward(tg, *CALLS[0], "float32", 0)
    info = shared_plan.cache_info()
    assert (info.misses, info.hits) == (1, 2)
    plan = shared_plan("linear", (8, 8), (16, 16), False, (2.0, 2.0))
    for axis in plan.taps(next(iter(plan._taps))[0]):
        assert not axis.index.flags.writeable and not axis.weight.flags.writeable
