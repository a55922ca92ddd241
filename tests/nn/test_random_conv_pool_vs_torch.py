"""Random convolutions, transposed convolutions, poolings, fold/unfold, interpolation and padding, by tracegrad
and by torch: the same output shapes and values, input and weight gradients, errors and warnings.

Each case draws the op and its geometry at random: batch, channels, height and width (1 to 6), kernel, stride,
padding, dilation, groups, output padding, ceil mode, count_include_pad, modes, batched or not. Many draws are
invalid, and then both must refuse them with the same error. (Max pooling keeps dilation 1: torch 2.13's CPU
max_pool with dilation and padding on tiny inputs corrupts memory, which is no comparison.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_logs_match, tg, torch, warning_texts

N_CASES = 600
_OPS = ("conv1d", "conv2d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
        "adaptive_avg_pool2d", "adaptive_max_pool2d", "unfold", "fold", "interpolate", "pad")


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    op = str(rng.choice(_OPS))
    p = {"n": int(rng.integers(1, 3)), "c": int(rng.choice([1, 2, 4])), "h": int(rng.integers(1, 7)),
         "w": int(rng.integers(1, 7)), "oc": int(rng.choice([1, 2, 4])), "k": int(rng.integers(1, 4)),
         "s": int(rng.integers(1, 3)), "pd": int(rng.integers(0, 3)), "dl": int(rng.integers(1, 3)),
         "g": int(rng.choice([1, 2])), "ceil": bool(rng.integers(2)), "cip": bool(rng.integers(2)),
         "opad": int(rng.integers(0, 2)),
         "mode": str(rng.choice(["nearest", "bilinear", "reflect", "replicate", "circular", "constant"])),
         "batched": bool(rng.integers(4) > 0), "seed": int(rng.integers(1 << 30))}
    if op.startswith("max_pool"):
        p["dl"] = 1
    return op, p


def _tensor(lib, rng, shape):
    return lib.tensor(rng.standard_normal(shape).round(2).tolist(), dtype=lib.float64, requires_grad=True)


def _forward(lib, op: str, p: dict, x, rng) -> tuple:
    F = lib.nn.functional
    pool_pad = min(p["pd"], p["k"] // 2) if p["pd"] < 2 else p["pd"]
    if op in ("conv1d", "conv2d"):
        spatial = (p["k"],) if op == "conv1d" else (p["k"], p["k"])
        w = _tensor(lib, rng, (p["oc"], p["c"] // p["g"] if p["c"] % p["g"] == 0 else p["c"]) + spatial)
        b = _tensor(lib, rng, (p["oc"],))
        return getattr(F, op)(x, w, b, stride=p["s"], padding=p["pd"], dilation=p["dl"], groups=p["g"]), [w, b]
    if op == "conv_transpose2d":
        w = _tensor(lib, rng, (p["c"], p["oc"] // p["g"] if p["oc"] % p["g"] == 0 else p["oc"], p["k"], p["k"]))
        return F.conv_transpose2d(x, w, None, stride=p["s"], padding=p["pd"], output_padding=p["opad"],
                                  groups=p["g"], dilation=p["dl"]), [w]
    if op in ("max_pool1d", "max_pool2d"):
        return getattr(F, op)(x, p["k"], stride=p["s"], padding=pool_pad, ceil_mode=p["ceil"]), []
    if op in ("avg_pool1d", "avg_pool2d"):
        return getattr(F, op)(x, p["k"], stride=p["s"], padding=pool_pad, ceil_mode=p["ceil"],
                              count_include_pad=p["cip"]), []
    if op in ("adaptive_avg_pool2d", "adaptive_max_pool2d"):
        return getattr(F, op)(x, (p["k"], p["k"] + 1)), []
    if op == "unfold":
        return F.unfold(x, p["k"], dilation=p["dl"], padding=p["pd"], stride=p["s"]), []
    if op == "fold":
        columns = x.reshape(x.shape[0], -1, 1) if x.dim() == 4 else x
        return F.fold(columns, (p["h"] + 1, p["w"] + 1), p["k"]), []
    if op == "interpolate":
        mode = p["mode"] if p["mode"] in ("nearest", "bilinear") else "nearest"
        return F.interpolate(x, scale_factor=p["s"] + 0.5 if p["ceil"] else None,
                             size=None if p["ceil"] else (p["k"] + 1, p["k"] + 2), mode=mode,
                             align_corners=p["cip"] if mode == "bilinear" else None), []
    mode = p["mode"] if p["mode"] in ("reflect", "replicate", "circular", "constant") else "constant"
    return F.pad(x, (p["pd"], p["k"] - 1, p["s"] - 1, p["pd"]), mode=mode), []


def _run(lib, case: tuple) -> tuple:
    op, p = case
    rng = np.random.default_rng(p["seed"])
    one_d = op in ("conv1d", "max_pool1d", "avg_pool1d")
    shape = (p["n"], p["c"], p["w"]) if one_d else (p["n"], p["c"], p["h"], p["w"])
    log: list = []
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        try:
            x = _tensor(lib, rng, shape if p["batched"] else shape[1:])
            y, params = _forward(lib, op, p, x, rng)
            log.append(("out", tuple(y.shape), np.asarray(y.detach().reshape(-1).tolist())))
            (y * lib.linspace(-1, 1, y.numel(), dtype=lib.float64).reshape(y.shape)).sum().backward()
            log += [("grad", (), np.asarray(t.grad.reshape(-1).tolist())) for t in [x, *params]]
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            log.append(("error", type(exc).__name__, str(exc).split("\n")[0]))
    return log, warning_texts(caught)


@pytest.mark.parametrize("seed", range(N_CASES))
def test_random_conv_or_pool_as_in_torch(seed):
    case = _case(seed)
    (ours, our_warnings), (theirs, their_warnings) = _run(tg, case), _run(torch, case)
    assert our_warnings == their_warnings
    assert_logs_match(ours, theirs, rtol=1e-6, atol=1e-8)


def test_cases_cover_every_operation():
    assert {_case(seed)[0] for seed in range(N_CASES)} == set(_OPS)
