"""The legacy hook-based ``nn.utils.weight_norm`` / ``spectral_norm`` (and their removal), batch-norm fusion,
``skip_init`` and the conv weight memory-format converters against torch: parameter and buffer names, state
dicts with their metadata, forward values, gradients, graph nodes, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_close, raised, recorded_graph, tg, torch


def _filled(lib, module, seed: int = 0):
    """``module`` with the same parameter and buffer values in both libraries."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for t in [*module.parameters(), *module.buffers()]:
            if t.dtype == lib.float32:
                values = rng.uniform(0.5, 1.5, tuple(t.shape))
                t.copy_(lib.tensor(values, dtype=lib.float32))
    return module


def _names(m) -> tuple:
    sd = m.state_dict()
    return ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()], list(sd),
            dict(sd._metadata), len(m._forward_pre_hooks))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_legacy_weight_norm(dim):
    def program(lib):
        m = _filled(lib, lib.nn.Linear(3, 4))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.utils.weight_norm(m, dim=dim)
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float32)
        out = m(x)
        (out**2).sum().backward()
        info = (_names(m), [(w.category.__name__, str(w.message)) for w in caught])
        graph = recorded_graph([out]) if dim is not None else None
        values = (out, m.weight_g, m.weight_v, m.weight_g.grad, m.weight_v.grad)
        again = raised(lib, lambda lib: lib.nn.utils.weight_norm(m, dim=dim))
        lib.nn.utils.remove_weight_norm(m)
        missing = raised(lib, lambda lib: lib.nn.utils.remove_weight_norm(m))
        return info, graph, values, again, (_names(m), type(m.weight).__name__), m.weight, missing

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ours, theirs = program(tg), program(torch)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    assert_close(ours[2], theirs[2], atol=1e-5)
    assert ours[3] == theirs[3] and ours[4] == theirs[4]
    assert_close(ours[5], theirs[5], atol=1e-6)
    assert ours[6][0] == theirs[6][0]
    assert ours[6][1].replace("tracegrad", "torch") == theirs[6][1]


def _copy_legacy_buffers(src, dst) -> None:
    with tg.no_grad():
        for name in ("weight_u", "weight_v"):
            getattr(dst, name).copy_(tg.tensor(getattr(src, name).detach().numpy()))


@pytest.mark.parametrize("kind", ["linear", "conv_transpose", "conv_iters"])
def test_legacy_spectral_norm(kind):
    def build(lib):
        if kind == "linear":
            m, kw = lib.nn.Linear(3, 4), {}
        elif kind == "conv_transpose":
            m, kw = lib.nn.ConvTranspose1d(2, 3, 2), {}
        else:
            m, kw = lib.nn.Conv2d(2, 3, 2), {"n_power_iterations": 3}
        return lib.nn.utils.spectral_norm(_filled(lib, m), **kw)

    ours, theirs = build(tg), build(torch)
    assert _names(ours) == _names(theirs)
    _copy_legacy_buffers(theirs, ours)
    shape = (2, 3) if kind == "linear" else ((1, 2, 4) if kind == "conv_transpose" else (1, 2, 3, 3))
    x = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
    for _ in range(2):
        out1, out2 = ours(tg.tensor(x, dtype=tg.float32)), theirs(torch.tensor(x, dtype=torch.float32))
        assert_close(out1, out2, atol=1e-5)
    assert recorded_graph([out1]) == recorded_graph([out2])
    out1.sum().backward()
    out2.sum().backward()
    assert_close(ours.weight_orig.grad, theirs.weight_orig.grad, atol=1e-4)
    assert_close(dict(ours.named_buffers()), dict(theirs.named_buffers()), atol=1e-5)
    ours.eval()
    theirs.eval()
    u = ours.weight_u.clone()
    assert_close(ours(tg.tensor(x, dtype=tg.float32)), theirs(torch.tensor(x, dtype=torch.float32)), atol=1e-5)
    assert_close(ours.weight_u, u)
    tg.nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert _names(ours) == _names(theirs)
    assert_close(ours.weight, theirs.weight, atol=1e-5)


def test_legacy_spectral_norm_state_dict_roundtrip_and_version0_upgrade():
    def program(lib):
        src = lib.nn.utils.spectral_norm(_filled(lib, lib.nn.Linear(3, 4)))
        with lib.no_grad():
            src.weight_u.copy_(lib.tensor([0.5, -0.5, 0.5, 0.5]))
            src.weight_v.copy_(lib.tensor([0.6, 0.0, 0.8]))
        src.eval()
        src(lib.ones(1, 3))
        sd = src.state_dict()
        dst = lib.nn.utils.spectral_norm(_filled(lib, lib.nn.Linear(3, 4), seed=3))
        result = dst.load_state_dict(sd)
        # a version-0 checkpoint: the computed weight instead of weight_v, no version metadata
        old = {k: v for k, v in sd.items() if k != "weight_v"}
        old["weight"] = src.weight.detach()
        upgraded = lib.nn.utils.spectral_norm(_filled(lib, lib.nn.Linear(3, 4), seed=4))
        upgraded.load_state_dict(old)
        return str(result), dst.weight_v, upgraded.weight_v, sd._metadata

    ours, theirs = program(tg), program(torch)
    assert ours[0] == theirs[0]
    assert_close(ours[1:3], theirs[1:3], atol=1e-4)
    assert dict(ours[3]) == dict(theirs[3])


LEGACY_ERRORS = {
    "sn_twice": lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2))),
    "sn_iters": lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0),
    "sn_none": lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2, bias=False), "bias"),
    "sn_remove": lambda lib: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2)),
    "skip_init_type": lambda lib: lib.nn.utils.skip_init(int),
    "skip_init_device": lambda lib: lib.nn.utils.skip_init(lib.nn.ReLU),
}


@pytest.mark.parametrize("case", sorted(LEGACY_ERRORS))
def test_legacy_errors(case):
    ours, theirs = raised(tg, LEGACY_ERRORS[case]), raised(torch, LEGACY_ERRORS[case])
    assert theirs is not None and ours is not None
    assert ours[0] == theirs[0]
    assert ours[1].replace("tracegrad", "torch") == theirs[1]


def test_skip_init():
    for lib in (tg, torch):
        m = lib.nn.utils.skip_init(lib.nn.Linear, 3, 4, bias=False)
        assert type(m) is lib.nn.Linear and tuple(m.weight.shape) == (4, 3) and m.bias is None


# ---- fusion ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["conv2d", "conv1d_no_bias", "conv_transpose2d", "linear", "linear_bn1"])
def test_fuse_eval(kind):
    def program(lib):
        if kind == "conv2d":
            layer, bn, shape = lib.nn.Conv2d(2, 3, 2), lib.nn.BatchNorm2d(3), (2, 2, 4, 4)
        elif kind == "conv1d_no_bias":
            layer, bn, shape = lib.nn.Conv1d(2, 3, 2, bias=False), lib.nn.BatchNorm1d(3, affine=False), (2, 2, 5)
        elif kind == "conv_transpose2d":
            layer, bn, shape = lib.nn.ConvTranspose2d(2, 3, 2), lib.nn.BatchNorm2d(3), (1, 2, 3, 3)
        elif kind == "linear":
            layer, bn, shape = lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), (2, 3)
        else:
            layer, bn, shape = lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(1), (2, 1, 3)
        layer, bn = _filled(lib, layer).eval(), _filled(lib, bn, seed=1).eval()
        x = lib.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape), dtype=lib.float32)
        if kind.startswith("linear"):
            fused = lib.nn.utils.fuse_linear_bn_eval(layer, bn)
        else:
            fused = lib.nn.utils.fuse_conv_bn_eval(layer, bn, transpose=kind == "conv_transpose2d")
        names = ([n for n, _ in fused.named_parameters()], type(fused.weight).__name__, fused is layer)
        return fused(x), bn(layer(x)), fused.weight, fused.bias, names

    ours, theirs = program(tg), program(torch)
    assert_close(ours[:4], theirs[:4], atol=1e-5)
    assert_close(ours[0], ours[1], atol=1e-5)
    assert ours[4] == theirs[4]


def test_fuse_weights_functions_and_training_error():
    def program(lib):
        rng = np.random.default_rng(2)
        t = [lib.tensor(rng.uniform(0.5, 1.5, s), dtype=lib.float32) for s in [(3, 2, 2), (3,), (3,), (3,)]]
        conv = lib.nn.utils.fuse_conv_bn_weights(t[0], None, t[1], t[2], 1e-3, None, t[3])
        lin = lib.nn.utils.fuse_linear_bn_weights(t[0][:, :, 0], t[1], t[1], t[2], 1e-5, t[3], t[1])
        err = raised(lib, lambda lib: lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv1d(1, 1, 1), lib.nn.BatchNorm1d(1)))
        return conv, lin, [p.requires_grad for p in (*conv, *lin)], err

    ours, theirs = program(tg), program(torch)
    assert_close(ours[:2], theirs[:2])
    assert ours[2:] == theirs[2:]


@pytest.mark.parametrize("n", [2, 3])
def test_convert_conv_weight_memory_format(n):
    def program(lib):
        conv = lib.nn.Conv2d(2, 3, 2) if n == 2 else lib.nn.Conv3d(2, 3, 2)
        model = lib.nn.Sequential(conv, lib.nn.ReLU(), lib.nn.Sequential(lib.nn.Linear(2, 2)))
        fmt = lib.channels_last if n == 2 else lib.channels_last_3d
        param = conv.weight
        convert = getattr(lib.nn.utils, f"convert_conv{n}d_weight_memory_format")
        assert convert(model, fmt) is model
        return (conv.weight.is_contiguous(memory_format=fmt), conv.weight.is_contiguous(), conv.weight.stride(),
                conv.weight is param, model[2][0].weight.is_contiguous())

    assert program(tg) == program(torch)
