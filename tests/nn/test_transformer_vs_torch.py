"""nn.Transformer and its encoder/decoder stacks and layers against torch: random configurations give the same
outputs, gradients and autograd graphs; construction warnings, reprs, parameter names and errors as torch's; in
evaluation without autograd, a padded batch comes out as torch's nested-tensor shortcut leaves it (zeros at
padded positions before the final norm)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, recorded_graph, tg, torch

N_CASES = 40


def _draw(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    heads = int(rng.choice([1, 2]))
    return dict(
        seed=seed, kind=str(rng.choice(["encoder_layer", "decoder_layer", "encoder", "decoder", "transformer"])),
        d_model=heads * int(rng.integers(2, 4)), heads=heads, ff=int(rng.integers(3, 7)),
        activation=str(rng.choice(["relu", "gelu", "callable"])), batch_first=bool(rng.random() < 0.5),
        norm_first=bool(rng.random() < 0.4), bias=bool(rng.random() < 0.8), layers=int(rng.integers(1, 3)),
        src_len=int(rng.integers(2, 5)), tgt_len=int(rng.integers(2, 5)), batch=int(rng.integers(1, 3)),
        causal=str(rng.choice(["none", "mask", "mask_and_hint"])), padding=bool(rng.random() < 0.4))


def _activation(lib, name):
    return (lambda x: lib.tanh(x) * 2) if name == "callable" else name


def _build(lib, case: dict):
    d, h, ff = case["d_model"], case["heads"], case["ff"]
    common = dict(dim_feedforward=ff, dropout=0.0, activation=_activation(lib, case["activation"]),
                  batch_first=case["batch_first"], norm_first=case["norm_first"], bias=case["bias"],
                  dtype=lib.float64)
    nn = lib.nn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case["kind"] == "encoder_layer":
            m = nn.TransformerEncoderLayer(d, h, **common)
        elif case["kind"] == "decoder_layer":
            m = nn.TransformerDecoderLayer(d, h, **common)
        elif case["kind"] == "encoder":
            m = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, h, **common), case["layers"],
                                      nn.LayerNorm(d, dtype=lib.float64))
        elif case["kind"] == "decoder":
            m = nn.TransformerDecoder(nn.TransformerDecoderLayer(d, h, **common), case["layers"])
        else:
            m = nn.Transformer(d, h, case["layers"], case["layers"], **common)
    rng = np.random.default_rng(case["seed"])
    with lib.no_grad():
        for _, p in sorted(m.named_parameters()):
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)) * 0.4))
    return m


def _sequence(lib, rng, case, length):
    b, d = case["batch"], case["d_model"]
    shape = (b, length, d) if case["batch_first"] else (length, b, d)
    return lib.tensor(rng.standard_normal(shape), requires_grad=True)


def _run(lib, case: dict):
    m = _build(lib, case)
    rng = np.random.default_rng(case["seed"] + 1)
    src, tgt = _sequence(lib, rng, case, case["src_len"]), _sequence(lib, rng, case, case["tgt_len"])
    length = case["tgt_len"] if case["kind"] in ("decoder_layer", "decoder", "transformer") else case["src_len"]
    mask = (lib.nn.Transformer.generate_square_subsequent_mask(length, dtype=lib.float64)
            if case["causal"] != "none" else None)
    pad = None
    if case["padding"]:
        keep = np.arange(case["src_len"])[None, :] < rng.integers(1, case["src_len"] + 1, (case["batch"], 1))
        pad = lib.tensor(~keep)
    hint = True if case["causal"] == "mask_and_hint" else None
    kind = case["kind"]
    if kind == "encoder_layer":
        out = m(src, src_mask=mask, src_key_padding_mask=pad, is_causal=bool(hint))
        leaves = [src]
    elif kind == "encoder":
        out = m(src, mask=mask, src_key_padding_mask=pad, is_causal=hint)
        leaves = [src]
    elif kind == "decoder_layer":
        out = m(tgt, src, tgt_mask=mask, memory_key_padding_mask=pad, tgt_is_causal=bool(hint))
        leaves = [tgt, src]
    elif kind == "decoder":
        out = m(tgt, src, tgt_mask=mask, memory_key_padding_mask=pad, tgt_is_causal=hint)
        leaves = [tgt, src]
    else:
        out = m(src, tgt, tgt_mask=mask, src_key_padding_mask=pad, memory_key_padding_mask=pad, tgt_is_causal=hint)
        leaves = [src, tgt]
    params = [p for _, p in sorted(m.named_parameters())]
    seed = lib.tensor(np.random.default_rng(5).standard_normal(tuple(out.shape)))
    grads = lib.autograd.grad(out, leaves + params, seed, allow_unused=True)
    return out, grads, recorded_graph([out])


@pytest.mark.parametrize("seed", range(N_CASES))
def test_transformer_modules_as_torch(seed):
    case = _draw(seed)
    ours, theirs = _run(tg, case), _run(torch, case)
    tol = dict(rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours[0].detach().numpy(), theirs[0].detach().numpy(), **tol)
    for a, b in zip(ours[1], theirs[1], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("batch_first", [True, False])
def test_padded_batch_in_evaluation_as_torchs_nested_tensor_shortcut(batch_first):
    results = []
    for lib in (tg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = lib.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=batch_first)
            encoder = lib.nn.TransformerEncoder(layer, 2, lib.nn.LayerNorm(4))
        rng = np.random.default_rng(0)
        with lib.no_grad():
            for _, p in sorted(encoder.named_parameters()):
                p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.4))
        encoder.eval()
        x = rng.standard_normal((2, 5, 4)).astype(np.float32)
        pad = lib.tensor([[False] * 5, [False, False, True, True, True]])
        with lib.no_grad():
            src = lib.tensor(x if batch_first else x.transpose(1, 0, 2).copy())
            results.append(encoder(src, src_key_padding_mask=pad).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-5)


def _construction(lib, build):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = build(lib)
    return module, [str(w.message) for w in caught]


@pytest.mark.parametrize("build", [
    lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(4, 2, 8), 2),
    lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True), 2),
    lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(4, 1, 8, batch_first=True), 1),
    lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True, norm_first=True), 1),
    lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True, activation=L.tanh), 1),
    lambda L: L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(4, 2, 8), 2, L.nn.LayerNorm(4)),
    lambda L: L.nn.Transformer(4, 2, 1, 1, 8),
], ids=["seq_first", "batch_first", "odd_heads", "norm_first", "other_activation", "decoder", "transformer"])
def test_construction_warnings_repr_and_parameters_as_torch(build):
    (ours, our_warnings), (theirs, their_warnings) = _construction(tg, build), _construction(torch, build)
    assert our_warnings == their_warnings
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    layers = getattr(ours, "layers", None)
    if layers is not None and len(layers) > 1:  # deep copies, not shared modules
        assert layers[0].linear1.weight is not layers[1].linear1.weight


def test_square_subsequent_mask_as_torch():
    for size in (1, 4):
        ours = tg.nn.Transformer.generate_square_subsequent_mask(size)
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(size)
        assert ours.dtype == tg.float32
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("call", [
    lambda L: L.nn.TransformerEncoderLayer(4, 2, activation="tanh"),
    lambda L: L.nn.Transformer(4, 2, 1, 1, 8)(L.randn(3, 2, 4), L.randn(3, 1, 4)),
    lambda L: L.nn.Transformer(4, 2, 1, 1, 8)(L.randn(3, 2, 4), L.randn(3, 2, 5)),
    lambda L: L.nn.TransformerEncoderLayer(4, 3),
], ids=["activation_name", "batch_mismatch", "feature_mismatch", "heads_not_dividing"])
def test_errors_as_in_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = raised(tg, call), raised(torch, call)
    assert theirs is not None
    assert ours == theirs
