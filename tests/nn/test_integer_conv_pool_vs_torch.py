"""Convolutions and average pooling of integer tensors, as torch's CPU kernels run them: every integer dtype
convolves exactly (wrapping on overflow like C), average pooling takes int64 and divides with C's truncation
towards zero; the other dtypes are refused with the kernel torch names."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, tg, torch

N_CASES = 40
_INTS = ["int64", "int32", "int16", "int8", "uint8"]


def _case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    nd = int(rng.choice([1, 2, 3]))
    kind = str(rng.choice(["conv", "conv_transpose", "avg_pool"]))
    dtype = "int64" if kind == "avg_pool" and rng.random() < 0.8 else str(rng.choice(_INTS))
    sizes = [int(v) for v in rng.integers(3, 6, nd)]
    groups = int(rng.choice([1, 2]))
    return dict(nd=nd, kind=kind, dtype=dtype, x=rng.integers(-60, 60, [2, 2 * groups, *sizes]),
                w=rng.integers(-3, 4, [2 * groups, 2, *([2] * nd)]), bias=rng.integers(-5, 5, 2 * groups),
                stride=int(rng.integers(1, 3)), padding=int(rng.integers(0, 2)), groups=groups,
                dilation=int(rng.choice([1, 1, 2])), ceil=bool(rng.random() < 0.5),
                include_pad=bool(rng.random() < 0.5))


def _run(lib, case: dict):
    dt = getattr(lib, case["dtype"])
    nd, F = case["nd"], lib.nn.functional
    x = lib.tensor(case["x"] % 256 if case["dtype"] == "uint8" else case["x"], dtype=dt)
    if case["kind"] == "avg_pool":
        pool = getattr(F, f"avg_pool{nd}d")
        return pool(x, 2, case["stride"], min(case["padding"], 1), case["ceil"], case["include_pad"])
    w = lib.tensor(case["w"] % 256 if case["dtype"] == "uint8" else case["w"], dtype=dt)
    bias = lib.tensor(case["bias"] % 256 if case["dtype"] == "uint8" else case["bias"], dtype=dt)
    if case["kind"] == "conv":
        conv = getattr(F, f"conv{nd}d")
        return conv(x, w, bias, case["stride"], case["padding"], case["dilation"], case["groups"])
    conv = getattr(F, f"conv_transpose{nd}d")
    return conv(x, w.transpose(0, 1).contiguous().reshape(w.shape[1] * case["groups"], -1, *w.shape[2:]), None,
                case["stride"], case["padding"], 0, case["groups"], case["dilation"])


def _outcome(lib, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = _run(lib, case)
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            return type(exc).__name__, str(exc)
    return out.tolist(), str(out.dtype)


@pytest.mark.parametrize("seed", range(N_CASES))
def test_integer_convolution_and_average_pooling_as_torch(seed):
    case = _case(seed)
    assert _outcome(tg, case) == _outcome(torch, case)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.conv2d(L.ones(1, 1, 3, 3, dtype=L.bool), L.ones(1, 1, 2, 2, dtype=L.bool)),
    lambda L: L.nn.functional.conv2d(L.ones(1, 1, 3, 3, dtype=L.bool), L.ones(1, 1, 2, 2, dtype=L.bool), dilation=2),
    lambda L: L.nn.functional.conv3d(L.ones(1, 1, 3, 3, 3, dtype=L.bool), L.ones(1, 1, 2, 2, 2, dtype=L.bool)),
    lambda L: L.nn.functional.conv_transpose1d(L.ones(1, 1, 3, dtype=L.bool), L.ones(1, 1, 2, dtype=L.bool)),
    lambda L: L.nn.functional.conv_transpose3d(L.ones(1, 1, 3, 3, 3, dtype=L.bool),
                                               L.ones(1, 1, 2, 2, 2, dtype=L.bool)),
    lambda L: L.nn.functional.avg_pool2d(L.ones(1, 1, 3, 3, dtype=L.uint8), 2),
    lambda L: L.nn.functional.avg_pool3d(L.ones(1, 1, 3, 3, 3, dtype=L.int32), 2),
], ids=["bool_conv2d", "bool_dilated", "bool_conv3d", "bool_transpose1d", "bool_transpose3d", "byte_avg_pool",
        "int_avg_pool3d"])
def test_refused_dtypes_as_torch(call):
    ours, theirs = raised(tg, call), raised(torch, call)
    assert theirs is not None
    assert ours == theirs
