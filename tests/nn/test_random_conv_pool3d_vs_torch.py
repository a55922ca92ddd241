"""Random 3-d (volumetric) convolutions, transposed convolutions, poolings and paddings, by tracegrad and by torch:
the same output shapes and values, input and weight gradients, recorded graph (node names), the node of the
gradient under create_graph, errors and warnings; then the 3-d modules' reprs and forwards.

Each case draws the op and its geometry at random: batch, channels, depth, height and width (1 to 4), kernel,
stride, padding, dilation, groups, output padding, ceil mode, count_include_pad, pad mode, batched or not. Many
draws are invalid, and then both must refuse them with the same error. (Max pooling keeps dilation 1, as in
test_random_conv_pool_vs_torch.py.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_logs_match, recorded_graph, tg, torch, warning_texts

N_CASES = 160
_OPS = ("conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
        "lp_pool3d", "pad")


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(seed + 10_000)
    op = str(rng.choice(_OPS))
    p = {"n": int(rng.integers(1, 3)), "c": int(rng.choice([1, 2])), "d": int(rng.integers(1, 5)),
         "h": int(rng.integers(1, 5)), "w": int(rng.integers(1, 5)), "oc": int(rng.choice([1, 2])),
         "k": int(rng.integers(1, 4)), "s": int(rng.integers(1, 3)), "pd": int(rng.integers(0, 3)),
         "dl": int(rng.integers(1, 3)), "g": int(rng.choice([1, 2])), "ceil": bool(rng.integers(2)),
         "cip": bool(rng.integers(2)), "opad": int(rng.integers(0, 2)),
         "mode": str(rng.choice(["reflect", "replicate", "circular", "constant"])),
         "batched": bool(rng.integers(4) > 0), "seed": int(rng.integers(1 << 30))}
    if op == "max_pool3d":
        p["dl"] = 1
    return op, p


def _tensor(lib, rng, shape):
    return lib.tensor(rng.standard_normal(shape).round(2).tolist(), dtype=lib.float64, requires_grad=True)


def _forward(lib, op: str, p: dict, x, rng) -> tuple:
    F = lib.nn.functional
    k3 = (p["k"], max(1, p["k"] - 1), p["k"])  # (a non-cubic kernel: the dims must not be mixed up)
    pool_pad = min(p["pd"], p["k"] // 2) if p["pd"] < 2 else p["pd"]
    if op == "conv3d":
        w = _tensor(lib, rng, (p["oc"], p["c"] // p["g"] if p["c"] % p["g"] == 0 else p["c"]) + k3)
        b = _tensor(lib, rng, (p["oc"],))
        padding = "same" if p["opad"] and p["s"] == 1 else p["pd"]
        return F.conv3d(x, w, b, stride=p["s"], padding=padding, dilation=p["dl"], groups=p["g"]), [w, b]
    if op == "conv_transpose3d":
        w = _tensor(lib, rng, (p["c"], p["oc"] // p["g"] if p["oc"] % p["g"] == 0 else p["oc"]) + k3)
        return F.conv_transpose3d(x, w, None, stride=p["s"], padding=p["pd"], output_padding=p["opad"],
                                  groups=p["g"], dilation=p["dl"]), [w]
    if op == "max_pool3d":
        return F.max_pool3d(x, k3, stride=p["s"] if p["cip"] else None, padding=pool_pad, ceil_mode=p["ceil"]), []
    if op == "avg_pool3d":
        return F.avg_pool3d(x, k3, stride=p["s"], padding=pool_pad, ceil_mode=p["ceil"], count_include_pad=p["cip"],
                            divisor_override=p["opad"] + 2 if p["g"] == 2 else None), []
    if op in ("adaptive_avg_pool3d", "adaptive_max_pool3d"):
        return getattr(F, op)(x, (p["k"], None if p["ceil"] else p["k"] + 1, p["s"])), []
    if op == "lp_pool3d":
        return F.lp_pool3d(x, 2.0 if p["cip"] else float("inf"), k3, stride=p["s"], ceil_mode=p["ceil"]), []
    return F.pad(x, (p["pd"], p["k"] - 1, p["s"] - 1, p["pd"], p["opad"], p["g"] - 1), mode=p["mode"]), []


def _run(lib, case: tuple) -> tuple:
    op, p = case
    rng = np.random.default_rng(p["seed"])
    shape = (p["n"], p["c"], p["d"], p["h"], p["w"])
    log: list = []
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        try:
            x = _tensor(lib, rng, shape if p["batched"] else shape[1:])
            y, params = _forward(lib, op, p, x, rng)
            log.append(("out", tuple(y.shape), np.asarray(y.detach().reshape(-1).tolist())))
            log.append(("graph", recorded_graph([y]), None))
            weights = lib.linspace(-1, 1, y.numel(), dtype=lib.float64).reshape(y.shape)
            grads = lib.autograd.grad((y * weights).sum(), [x, *params], create_graph=True)
            log.append(("grad node", grads[0].grad_fn.name() if grads[0].grad_fn is not None else None, None))
            log += [("grad", (), np.asarray(g.detach().reshape(-1).tolist())) for g in grads]
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            log.append(("error", type(exc).__name__, str(exc).split("\n")[0]))
    # (the padding='same' warning is once per process in both libraries, so whether it shows depends on which
    # tests ran before in this worker: left out of the comparison)
    return log, [text for text in warning_texts(caught) if not text.startswith("Using padding='same'")]


@pytest.mark.parametrize("seed", range(N_CASES))
def test_random_3d_conv_or_pool_as_in_torch(seed):
    case = _case(seed)
    (ours, our_warnings), (theirs, their_warnings) = _run(tg, case), _run(torch, case)
    assert our_warnings == their_warnings
    assert_logs_match(ours, theirs, rtol=1e-6, atol=1e-8)


def test_cases_cover_every_operation():
    cases = [_case(seed) for seed in range(N_CASES)]
    assert {op for op, _ in cases} == set(_OPS)


# ---- modules --------------------------------------------------------------------------------------------------


def _modules(lib) -> list:
    nn = lib.nn
    return [
        nn.MaxPool3d(2), nn.MaxPool3d((1, 2, 2), stride=(1, 1, 2), padding=(0, 1, 0), ceil_mode=True),
        nn.AvgPool3d(2), nn.AvgPool3d((2, 1, 2), stride=1, padding=1, ceil_mode=True, count_include_pad=False,
                                      divisor_override=3),
        nn.AdaptiveAvgPool3d(2), nn.AdaptiveAvgPool3d((2, None, 3)), nn.AdaptiveMaxPool3d((2, None, 3)),
        nn.LPPool3d(2, 2), nn.LPPool3d(1.5, (2, 1, 2), stride=1, ceil_mode=True),
        nn.Conv3d(2, 4, 3, padding=1, padding_mode="reflect"),
        nn.Conv3d(2, 4, (1, 2, 3), stride=(1, 2, 1), padding="valid", bias=False, groups=2, dilation=2),
        nn.Conv3d(2, 2, 2, padding="same", padding_mode="circular"), nn.Conv3d(2, 2, 3, padding=1, padding_mode="replicate"),
        nn.ConvTranspose3d(2, 4, 3), nn.ConvTranspose3d(2, 4, (2, 1, 2), stride=2, padding=1, output_padding=1, groups=2),
        nn.ReflectionPad3d(1), nn.ReplicationPad3d((1, 2, 0, 1, 1, 0)), nn.CircularPad3d(1), nn.ConstantPad3d(1, 2.5),
        nn.ZeroPad3d((1, 0, 0, 1, 2, 0)),
        nn.BatchNorm3d(2), nn.InstanceNorm3d(2), nn.InstanceNorm3d(2, affine=True, track_running_stats=True),
    ]


def _module_outputs(lib) -> list:
    results = []
    for module in _modules(lib):
        with lib.no_grad():
            for param in module.parameters():
                param.copy_(lib.linspace(-1, 1, param.numel(), dtype=param.dtype).reshape(param.shape))
        for shape in ((2, 2, 3, 4, 5), (2, 3, 4, 5)):  # batched and unbatched
            x = lib.linspace(-2, 2, int(np.prod(shape))).reshape(shape).sin()
            try:
                y = module(x)
                results.append((repr(module), tuple(y.shape), np.asarray(y.detach().reshape(-1).tolist())))
            except Exception as exc:  # noqa: BLE001 - the error itself is compared
                results.append((repr(module), type(exc).__name__, str(exc)))
    return results


def test_3d_modules_as_in_torch():
    ours, theirs = _module_outputs(tg), _module_outputs(torch)
    assert [entry[:2] for entry in ours] == [entry[:2] for entry in theirs]
    for a, b in zip(ours, theirs):
        if isinstance(a[2], str):
            assert a == b
        else:
            np.testing.assert_allclose(a[2], b[2], rtol=1e-5, atol=1e-6)


def test_3d_pooling_indices_and_argument_errors_as_in_torch():
    def outcome(lib):
        F = lib.nn.functional
        x = lib.arange(2 * 3 * 4 * 5, dtype=lib.float64).reshape(1, 2, 3, 4, 5).sin()
        log = [F.max_pool3d(x, 2, 1, return_indices=True)[1].tolist(),
               F.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True)[1].tolist(),
               [t.shape for t in F.max_pool3d_with_indices(x[0], (1, 2, 2))],
               [t.shape for t in F.adaptive_max_pool3d_with_indices(x, 1)]]
        for call in (lambda: F.max_pool3d(x, (2, 2)), lambda: F.max_pool3d(x, 2, (1, 1)),
                     lambda: F.max_pool3d(x, 2, 1, (1, 1)), lambda: F.max_pool3d(x, 2, 1, 0, (1, 1)),
                     lambda: F.avg_pool3d(x, (2, 2)), lambda: F.avg_pool3d(x, 2, (1, 1)),
                     lambda: F.avg_pool3d(x, 2, 1, (1, 1)), lambda: F.avg_pool3d(x, 2, divisor_override=0),
                     lambda: F.adaptive_avg_pool3d(x, (2, 2)), lambda: F.adaptive_max_pool3d(x, (2, 2)),
                     lambda: F.max_pool3d(x.new_zeros((1, 0, 2, 2, 2)), 1), lambda: F.max_pool3d(x, 3, 1, 0, 2),
                     lambda: F.max_pool3d(x, 3, 1, 2, 3), lambda: F.max_pool3d(x, 2, 1, -1),
                     lambda: F.max_pool3d(x > 0, 2), lambda: F.adaptive_max_pool3d(x.long(), 2),
                     lambda: F.adaptive_avg_pool3d(x.long(), 2), lambda: F.adaptive_avg_pool3d(x[:, :, :0], 2),
                     lambda: F.conv_transpose3d(x, x.new_ones(2, 1, 1, 1, 1), output_padding=1),
                     lambda: F.conv_transpose3d(x, x.new_ones(2, 1, 1, 1, 1), padding="same")):
            try:
                call()
                log.append(None)
            except Exception as exc:  # noqa: BLE001 - the error itself is compared
                log.append((type(exc).__name__, str(exc)))
        return log

    assert outcome(tg) == outcome(torch)
