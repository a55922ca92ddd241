"""nn.MultiheadAttention and F.multi_head_attention_forward against torch: random configurations (batch_first,
unbatched input, kdim/vdim, biases, bias_kv, zero attention, padding and attention masks of both kinds,
need_weights, per-head weights, causal hints, self / encoder-decoder / separate inputs) give the same outputs,
attention weights, gradients of inputs and parameters, and the same autograd graph; errors and warnings as torch's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, recorded_graph, tg, torch

N_CASES = 120


def _draw(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    heads = int(rng.choice([1, 2, 4]))
    embed = heads * int(rng.integers(1, 4))
    separate_dims = rng.random() < 0.25
    return dict(
        seed=seed, embed=embed, heads=heads, bias=bool(rng.random() < 0.8), add_bias_kv=bool(rng.random() < 0.25),
        add_zero_attn=bool(rng.random() < 0.2), kdim=embed + 1 if separate_dims else None,
        vdim=embed + 2 if separate_dims else None, batch_first=bool(rng.random() < 0.5),
        batched=bool(rng.random() < 0.8), tgt=int(rng.integers(1, 5)), src=int(rng.integers(1, 5)),
        batch=int(rng.integers(1, 4)),
        sharing=str(rng.choice(["self", "encoder_decoder", "separate"])) if not separate_dims else "separate",
        padding=str(rng.choice(["none", "none", "bool", "float"])), attn=str(rng.choice(["none", "bool2", "float2",
                                                                                          "bool3", "causal"])),
        need_weights=bool(rng.random() < 0.6), average=bool(rng.random() < 0.5), dropout=float(rng.choice([0, 0.3])),
    )


def _build(lib, case: dict):
    m = lib.nn.MultiheadAttention(case["embed"], case["heads"], dropout=case["dropout"], bias=case["bias"],
                                  add_bias_kv=case["add_bias_kv"], add_zero_attn=case["add_zero_attn"],
                                  kdim=case["kdim"], vdim=case["vdim"], batch_first=case["batch_first"],
                                  dtype=lib.float64)
    m.eval()  # dropout off (its stream is not torch's); the computation is the general path in both
    rng = np.random.default_rng(case["seed"])
    with lib.no_grad():
        for _, p in sorted(m.named_parameters()):
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
    return m


def _inputs(lib, case: dict):
    rng = np.random.default_rng(case["seed"] + 10_000)
    tgt, src, batch, embed = case["tgt"], case["src"], case["batch"], case["embed"]
    kdim, vdim = case["kdim"] or embed, case["vdim"] or embed

    def seq(length, width):
        if not case["batched"]:
            shape = (length, width)
        else:
            shape = (batch, length, width) if case["batch_first"] else (length, batch, width)
        return lib.tensor(rng.standard_normal(shape), requires_grad=True)

    if case["sharing"] == "self":
        q = k = v = seq(tgt, embed)
        leaves = [q]
    elif case["sharing"] == "encoder_decoder":
        q, k = seq(tgt, embed), seq(src, embed)
        v = k
        leaves = [q, k]
    else:
        q, k, v = seq(tgt, embed), seq(src, kdim), seq(src, vdim)
        leaves = [q, k, v]
    src_len = q.shape[-2 if case["batch_first"] or not case["batched"] else 0] if case["sharing"] == "self" else src
    if not case["batched"]:
        src_len = q.shape[0] if case["sharing"] == "self" else src
    tgt_len = tgt
    kwargs = {"need_weights": case["need_weights"], "average_attn_weights": case["average"]}
    pad_shape = (batch, src_len) if case["batched"] else (src_len,)
    keep = rng.random(pad_shape) < 0.8
    keep[..., 0] = True  # every query keeps one key: fully masked rows give NaN in torch's need_weights path
    if case["padding"] == "bool":
        kwargs["key_padding_mask"] = lib.tensor(~keep)
    elif case["padding"] == "float":
        kwargs["key_padding_mask"] = lib.tensor(np.where(keep, 0.0, -1e9))
    attn = case["attn"]
    allowed = np.tril(np.ones((tgt_len, src_len), dtype=bool)) | (np.arange(src_len) == 0)
    if attn in ("bool2", "causal"):
        kwargs["attn_mask"] = lib.tensor(~allowed)
        kwargs["is_causal"] = attn == "causal"
    elif attn == "float2":
        kwargs["attn_mask"] = lib.tensor(rng.standard_normal((tgt_len, src_len)))
    elif attn == "bool3":
        kwargs["attn_mask"] = lib.tensor(np.broadcast_to(~allowed, (batch * case["heads"], tgt_len, src_len)).copy())
    return q, k, v, leaves, kwargs


def _run(lib, case: dict):
    m = _build(lib, case)
    q, k, v, leaves, kwargs = _inputs(lib, case)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out, weights = m(q, k, v, **kwargs)
        except (RuntimeError, AssertionError) as exc:
            return "error", type(exc).__name__, str(exc)
    params = [p for _, p in sorted(m.named_parameters())]
    seed = lib.tensor(np.random.default_rng(7).standard_normal(tuple(out.shape)))
    grads = lib.autograd.grad(out, leaves + params, seed, allow_unused=True)
    return (out, weights, grads, recorded_graph([out]), sorted({str(w.message) for w in caught if
                                                      "mismatched" in str(w.message)}))


@pytest.mark.parametrize("seed", range(N_CASES))
def test_multihead_attention_as_torch(seed):
    case = _draw(seed)
    ours, theirs = _run(tg, case), _run(torch, case)
    if ours[0] == "error" or theirs[0] == "error":
        assert ours == theirs
        return
    tol = dict(rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ours[0].detach().numpy(), theirs[0].detach().numpy(), **tol)
    assert (ours[1] is None) == (theirs[1] is None)
    if ours[1] is not None:
        np.testing.assert_allclose(ours[1].detach().numpy(), theirs[1].detach().numpy(), **tol)
    for a, b in zip(ours[2], theirs[2], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)
    assert ours[3] == theirs[3]
    assert ours[4] == theirs[4]


def test_parameters_buffers_and_repr_as_torch():
    for kwargs in ({}, {"kdim": 3, "vdim": 5, "bias": False}, {"add_bias_kv": True, "batch_first": True}):
        ours, theirs = tg.nn.MultiheadAttention(8, 2, **kwargs), torch.nn.MultiheadAttention(8, 2, **kwargs)
        assert repr(ours) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
               [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for name in ("in_proj_weight", "q_proj_weight", "in_proj_bias", "bias_k"):
            assert (getattr(ours, name) is None) == (getattr(theirs, name) is None)
    m = tg.nn.MultiheadAttention(8, 2)
    bound = (6 / (8 + 24)) ** 0.5  # xavier_uniform_ of the packed (24, 8) weight
    assert float(m.in_proj_weight.abs().max()) <= bound
    assert not m.in_proj_bias.detach().numpy().any() and not m.out_proj.bias.detach().numpy().any()


def test_state_dict_round_trips_with_torch():
    theirs = torch.nn.MultiheadAttention(6, 3, add_bias_kv=True)
    ours = tg.nn.MultiheadAttention(6, 3, add_bias_kv=True)
    ours.load_state_dict({k: tg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 2, 6)).astype(np.float32)
    want = theirs(*(torch.tensor(x),) * 3)[0].detach().numpy()
    got = ours(*(tg.tensor(x),) * 3)[0].detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.MultiheadAttention(6, 4),
    lambda L: L.nn.MultiheadAttention(0, 2),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.randn(3, 4), L.randn(2, 3, 4), L.randn(2, 3, 4)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.randn(3, 1, 4), L.randn(3, 1, 4), L.randn(3, 1, 4), is_causal=True),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.randn(3, 1, 4), L.randn(2, 1, 4), L.randn(2, 1, 4),
                                            attn_mask=L.zeros(2, 3)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.randn(3, 1, 4), L.randn(2, 1, 4), L.randn(2, 1, 4),
                                            attn_mask=L.zeros(3, 3, 2)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.randn(3, 1, 4), L.randn(2, 1, 4), L.randn(2, 1, 4),
                                            key_padding_mask=L.zeros(1, 3, dtype=L.bool)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.randn(3, 1, 4), L.randn(2, 1, 4), L.randn(2, 1, 4),
                                            attn_mask=L.zeros(3, 2, dtype=L.int64)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.randn(3, 1, 5), L.randn(2, 1, 5), L.randn(2, 1, 5)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.randn(3, 1, 4), L.randn(2, 1, 4), L.randn(3, 1, 4)),
], ids=["heads_not_dividing", "zero_embed", "ranks", "causal_without_mask", "mask2d_shape", "mask3d_shape",
        "padding_shape", "integer_mask", "embed_mismatch", "key_value_shapes"])
def test_errors_as_in_torch(call):
    ours, theirs = raised(tg, call), raised(torch, call)
    assert theirs is not None
    assert ours == theirs
