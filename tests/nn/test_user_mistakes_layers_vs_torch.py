"""nn mistakes from notebooks: layers called on the wrong shapes and dtypes, bad constructor arguments, containers
and module attributes misused, state dicts that do not fit. Each program gives torch's exception type and message
(or torch's result) and torch's warnings."""

from __future__ import annotations

import re

import pytest
from _mistakes_lib import assert_as_torch


def X(L, *shape, dtype=None):  # noqa: N802 - an input, as in the formulas
    n = 1
    for s in shape:
        n *= s
    return L.linspace(-2, 2, n, dtype=dtype).reshape(*shape)


def _no_init(L):
    """A module subclass whose __init__ forgets super().__init__()."""

    class Forgetful(L.nn.Module):
        def __init__(self):
            self.layer = L.nn.Linear(2, 2)

    return Forgetful()


def _no_init_parameter(L):
    class Forgetful(L.nn.Module):
        def __init__(self):
            self.w = L.nn.Parameter(L.ones(2))

    return Forgetful()


def _assign(target, name, value):
    setattr(target, name, value)
    return target


def _load(module, state, strict=True):
    return module.load_state_dict(state, strict=strict)


def _seq_state(L):
    return {"0.weight": L.ones(3, 2), "0.bias": L.ones(3), "1.weight": L.ones(1, 3), "1.bias": L.ones(1)}


def _seq(L):
    return L.nn.Sequential(L.nn.Linear(2, 3), L.nn.Linear(3, 1))


def _lstm(L, *args, **kwargs):
    L.manual_seed(0)
    return L.nn.LSTM(*args, **kwargs)


def _rnn(L, kind, *args, **kwargs):
    L.manual_seed(0)
    return getattr(L.nn, kind)(*args, **kwargs)


def _mha(L, embed=4, heads=2, **kwargs):
    L.manual_seed(0)
    return L.nn.MultiheadAttention(embed, heads, **kwargs)


def _set_sorted(program):
    """``program()``, its error message with the Python set it prints sorted: torch formats a set of names whose
    iteration order changes from one process to the next (string hashing), so only the names can be compared."""
    try:
        return program()
    except ValueError as exc:
        message = re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", str(exc))
        raise ValueError(message) from None


CASES = {
    # ---- Linear
    "Linear of a wrong-sized vector": lambda L: L.nn.Linear(3, 2)(X(L, 5)),
    "Linear of a 3-D input with wrong features": lambda L: L.nn.Linear(3, 2)(X(L, 2, 4, 5)),
    "Linear of a 0-d input": lambda L: L.nn.Linear(3, 2)(L.tensor(1.0)),
    "Linear of a double input": lambda L: L.nn.Linear(3, 2)(X(L, 4, 3, dtype=L.float64)),
    "Linear of an int input": lambda L: L.nn.Linear(3, 2)(L.ones(4, 3, dtype=L.long)),
    "Linear without bias of a double input": lambda L: L.nn.Linear(3, 2, bias=False)(X(L, 4, 3, dtype=L.float64)),
    "Linear without bias of an int input": lambda L: L.nn.Linear(3, 2, bias=False)(L.ones(4, 3, dtype=L.long)),
    "Linear of a double 3-D input": lambda L: L.nn.Linear(3, 2)(X(L, 2, 4, 3, dtype=L.float64)),
    "linear with a double bias": lambda L: L.nn.functional.linear(X(L, 4, 3), L.ones(2, 3), L.ones(2).double()),
    "linear with a 0-d weight": lambda L: L.nn.functional.linear(X(L, 3), L.tensor(1.0)),
    "Linear with two inputs": lambda L: L.nn.Linear(3, 2)(X(L, 4, 3), X(L, 4, 3)),
    "Linear with zero in-features warns": lambda L: L.nn.Linear(0, 3),
    "Bilinear with a wrong second input": lambda L: L.nn.Bilinear(2, 3, 4)(X(L, 5, 2), X(L, 5, 2)),
    # ---- convolutions
    "Conv1d with wrong channels": lambda L: L.nn.Conv1d(3, 2, 3)(X(L, 1, 4, 8)),
    "Conv1d of a 4-D input": lambda L: L.nn.Conv1d(3, 2, 3)(X(L, 1, 3, 8, 8)),
    "Conv1d of a double input": lambda L: L.nn.Conv1d(3, 2, 3)(X(L, 1, 3, 8, dtype=L.float64)),
    "Conv1d of an int input": lambda L: L.nn.Conv1d(3, 2, 3)(L.ones(1, 3, 8, dtype=L.long)),
    "Conv2d of an unbatched input with wrong channels": lambda L: L.nn.Conv2d(3, 2, 3)(X(L, 4, 5, 5)),
    "Conv2d of a 5-D input": lambda L: L.nn.Conv2d(3, 2, 3)(X(L, 1, 1, 3, 5, 5)),
    "Conv2d of a double input": lambda L: L.nn.Conv2d(1, 1, 3)(X(L, 1, 1, 5, 5, dtype=L.float64)),
    "Conv2d of an int input": lambda L: L.nn.Conv2d(1, 1, 3)(L.ones(1, 1, 5, 5, dtype=L.long)),
    "Conv2d kernel larger than input": lambda L: L.nn.Conv2d(1, 1, 5)(X(L, 1, 1, 3, 3)),
    "Conv2d with channels last": lambda L: L.nn.Conv2d(3, 2, 3)(X(L, 1, 5, 5, 3)),
    "Conv2d groups not dividing in_channels": lambda L: L.nn.Conv2d(3, 4, 3, groups=2),
    "Conv2d groups not dividing out_channels": lambda L: L.nn.Conv2d(4, 3, 3, groups=2),
    "Conv2d bogus padding string": lambda L: _set_sorted(lambda: L.nn.Conv2d(1, 1, 3, padding="full")),
    "Conv2d bogus padding_mode": lambda L: _set_sorted(lambda: L.nn.Conv2d(1, 1, 3, padding_mode="mirror")),
    "Conv2d zero groups": lambda L: L.nn.Conv2d(2, 2, 3, groups=0),
    "Conv2d negative padding": lambda L: L.nn.Conv2d(1, 1, 3, padding=-1)(X(L, 1, 1, 5, 5)),
    "Conv2d zero stride": lambda L: L.nn.Conv2d(1, 1, 3, stride=0)(X(L, 1, 1, 5, 5)),
    "conv2d weight of wrong ndim": lambda L: L.nn.functional.conv2d(X(L, 1, 1, 5, 5), L.ones(3, 3)),
    "conv1d weight of a vector": lambda L: L.nn.functional.conv1d(X(L, 1, 1, 5), L.ones(3)),
    "conv_transpose2d weight of wrong ndim": lambda L: L.nn.functional.conv_transpose2d(X(L, 1, 1, 5, 5),
                                                                                       L.ones(3, 3)),
    "conv2d bias of wrong size": lambda L: L.nn.functional.conv2d(X(L, 1, 1, 5, 5), L.ones(2, 1, 3, 3), L.ones(3)),
    "Conv3d with wrong channels": lambda L: L.nn.Conv3d(2, 2, 2)(X(L, 1, 3, 3, 3, 3)),
    "Conv3d of a 3-D input": lambda L: L.nn.Conv3d(2, 2, 2)(X(L, 2, 3, 3)),
    "ConvTranspose2d with wrong channels": lambda L: L.nn.ConvTranspose2d(3, 2, 3)(X(L, 1, 2, 4, 4)),
    "ConvTranspose1d of a 4-D input": lambda L: L.nn.ConvTranspose1d(2, 2, 3)(X(L, 1, 2, 4, 4)),
    "ConvTranspose2d unreachable output_size": lambda L: L.nn.ConvTranspose2d(1, 1, 3, stride=2)(
        X(L, 1, 1, 4, 4), output_size=[20, 20]),
    "ConvTranspose2d output_padding too large": lambda L: L.nn.ConvTranspose2d(1, 1, 3, stride=1, output_padding=1)(
        X(L, 1, 1, 4, 4)),
    "ConvTranspose2d padding same": lambda L: L.nn.ConvTranspose2d(1, 1, 3, padding="same")(X(L, 1, 1, 4, 4)),
    "conv_transpose2d padding same": lambda L: L.nn.functional.conv_transpose2d(X(L, 1, 1, 4, 4), L.ones(1, 1, 3, 3),
                                                                                padding="same"),
    # ---- normalization
    "BatchNorm2d batch of one 1x1 image": lambda L: L.nn.BatchNorm2d(3)(X(L, 1, 3, 1, 1)),
    "BatchNorm1d of a single 3-D sample of length 1": lambda L: L.nn.BatchNorm1d(3)(X(L, 1, 3, 1)),
    "BatchNorm2d wrong num_features": lambda L: L.nn.BatchNorm2d(3)(X(L, 2, 4, 2, 2)),
    "BatchNorm2d of a 2-D input": lambda L: L.nn.BatchNorm2d(3)(X(L, 2, 3)),
    "BatchNorm1d of a 4-D input": lambda L: L.nn.BatchNorm1d(3)(X(L, 2, 3, 2, 2)),
    "BatchNorm1d of an int input": lambda L: L.nn.BatchNorm1d(3)(L.ones(2, 3, dtype=L.long)),
    "BatchNorm1d eval with batch of one": lambda L: L.nn.BatchNorm1d(3).eval()(X(L, 1, 3)),
    "batch_norm without running stats in eval": lambda L: L.nn.functional.batch_norm(X(L, 2, 3), None, None),
    "LayerNorm shape mismatch": lambda L: L.nn.LayerNorm(4)(X(L, 2, 3)),
    "LayerNorm 2-D shape mismatch": lambda L: L.nn.LayerNorm([3, 2])(X(L, 4, 2, 3)),
    "LayerNorm of an int input": lambda L: L.nn.LayerNorm(3)(L.ones(2, 3, dtype=L.long)),
    "LayerNorm of a double input": lambda L: L.nn.LayerNorm(3)(X(L, 2, 3, dtype=L.float64)),
    "layer_norm of an int input without weight": lambda L: L.nn.functional.layer_norm(L.ones(2, 3, dtype=L.long),
                                                                                       (3,)),
    "layer_norm with a double weight": lambda L: L.nn.functional.layer_norm(X(L, 2, 3), (3,),
                                                                            L.ones(3, dtype=L.float64)),
    "LayerNorm of a half input": lambda L: L.nn.LayerNorm(3)(X(L, 2, 3).half()).dtype,
    "BatchNorm1d of a double input": lambda L: L.nn.BatchNorm1d(3)(X(L, 2, 3, dtype=L.float64)),
    "BatchNorm2d eval of a double input": lambda L: L.nn.BatchNorm2d(3).eval()(X(L, 1, 3, 2, 2, dtype=L.float64)),
    "GroupNorm of a double input": lambda L: L.nn.GroupNorm(1, 3)(X(L, 2, 3, dtype=L.float64)),
    "GroupNorm of an int input": lambda L: L.nn.GroupNorm(1, 3)(L.ones(2, 3, dtype=L.long)),
    "group_norm of an int input without weight": lambda L: L.nn.functional.group_norm(L.ones(2, 3, dtype=L.long),
                                                                                       1),
    "InstanceNorm1d affine of a double input": lambda L: L.nn.InstanceNorm1d(3, affine=True)(
        X(L, 2, 3, 4, dtype=L.float64)),
    "GroupNorm groups not dividing channels": lambda L: L.nn.GroupNorm(3, 4),
    "GroupNorm wrong channels": lambda L: L.nn.GroupNorm(2, 4)(X(L, 2, 6, 3)),
    "InstanceNorm1d wrong features warns": lambda L: L.nn.InstanceNorm1d(3)(X(L, 2, 4, 5)),
    "InstanceNorm2d of a 2-D input": lambda L: L.nn.InstanceNorm2d(3)(X(L, 2, 3)),
    "InstanceNorm1d affine with wrong features": lambda L: L.nn.InstanceNorm1d(3, affine=True)(X(L, 2, 4, 5)),
    "LocalResponseNorm of a 2-D input": lambda L: L.nn.LocalResponseNorm(2)(X(L, 2, 3)),
    # ---- embeddings
    "Embedding of float indices": lambda L: L.nn.Embedding(5, 2)(L.tensor([1.0])),
    "Embedding of a negative index": lambda L: L.nn.Embedding(5, 2)(L.tensor([-1])),
    "Embedding of an int32 index": lambda L: L.nn.Embedding(5, 2)(L.tensor([1], dtype=L.int32)).shape,
    "Embedding padding_idx out of range": lambda L: L.nn.Embedding(5, 2, padding_idx=5),
    "Embedding negative padding_idx out of range": lambda L: L.nn.Embedding(5, 2, padding_idx=-6),
    "Embedding.from_pretrained of a vector": lambda L: L.nn.Embedding.from_pretrained(L.ones(4)),
    "EmbeddingBag offsets of a 2-D input": lambda L: L.nn.EmbeddingBag(5, 2)(L.tensor([[1, 2]]), L.tensor([0])),
    "EmbeddingBag 1-D input without offsets": lambda L: L.nn.EmbeddingBag(5, 2)(L.tensor([1, 2])),
    # ---- recurrent layers
    "RNN with a wrong input size": lambda L: _rnn(L, "RNN", 3, 4)(X(L, 5, 2, 6)),
    "RNN of a 1-D input": lambda L: _rnn(L, "RNN", 3, 4)(X(L, 3)),
    "RNN with a wrong hidden shape": lambda L: _rnn(L, "RNN", 3, 4)(X(L, 5, 2, 3), L.zeros(1, 3, 4)),
    "RNN batch_first hidden batch mismatch": lambda L: _rnn(L, "RNN", 3, 4, batch_first=True)(
        X(L, 2, 5, 3), L.zeros(1, 5, 4)),
    "RNN of a double input": lambda L: _rnn(L, "RNN", 3, 4)(X(L, 5, 2, 3, dtype=L.float64)),
    "RNN bogus nonlinearity": lambda L: L.nn.RNN(3, 4, nonlinearity="sigmoid"),
    "RNN dropout with one layer warns": lambda L: _rnn(L, "RNN", 3, 4, dropout=0.5).dropout,
    "RNN dropout out of range": lambda L: L.nn.RNN(3, 4, dropout=1.5),
    "RNN zero hidden size": lambda L: L.nn.RNN(3, 0),
    "LSTM hidden given as one tensor": lambda L: _lstm(L, 3, 4)(X(L, 5, 2, 3), L.zeros(1, 2, 4)),
    "LSTM wrong cell shape": lambda L: _lstm(L, 3, 4)(X(L, 5, 2, 3), (L.zeros(1, 2, 4), L.zeros(1, 2, 5))),
    "LSTM wrong hidden shape": lambda L: _lstm(L, 3, 4)(X(L, 5, 2, 3), (L.zeros(2, 2, 4), L.zeros(1, 2, 4))),
    "LSTM unbatched input with batched hidden": lambda L: _lstm(L, 3, 4)(X(L, 5, 3), (L.zeros(1, 1, 4), L.zeros(1, 1, 4))),
    "LSTM batched input with unbatched hidden": lambda L: _lstm(L, 3, 4)(X(L, 5, 2, 3), (L.zeros(1, 4), L.zeros(1, 4))),
    "LSTM proj_size not smaller": lambda L: L.nn.LSTM(3, 4, proj_size=4),
    "LSTM negative proj_size": lambda L: L.nn.LSTM(3, 4, proj_size=-1),
    "GRU with a wrong input size": lambda L: _rnn(L, "GRU", 3, 4)(X(L, 5, 2, 2)),
    "GRU with a tuple hidden": lambda L: _rnn(L, "GRU", 3, 4)(X(L, 5, 2, 3), (L.zeros(1, 2, 4),)),
    "LSTMCell with a wrong input size": lambda L: _rnn(L, "LSTMCell", 3, 4)(X(L, 2, 5)),
    "GRUCell hidden batch mismatch": lambda L: _rnn(L, "GRUCell", 3, 4)(X(L, 2, 3), L.zeros(3, 4)),
    "RNNCell of a 3-D input": lambda L: _rnn(L, "RNNCell", 3, 4)(X(L, 1, 2, 3)),
    # ---- attention
    "MultiheadAttention heads not dividing": lambda L: L.nn.MultiheadAttention(5, 2),
    "MultiheadAttention wrong query embedding": lambda L: _mha(L)(X(L, 3, 2, 5), X(L, 3, 2, 5), X(L, 3, 2, 5)),
    "MultiheadAttention key and value lengths": lambda L: _mha(L)(X(L, 3, 2, 4), X(L, 3, 2, 4), X(L, 2, 2, 4)),
    "MultiheadAttention 2-D mask of a wrong shape": lambda L: _mha(L)(X(L, 3, 2, 4), X(L, 3, 2, 4), X(L, 3, 2, 4),
                                                                   attn_mask=L.zeros(2, 2)),
    "MultiheadAttention 3-D mask of a wrong shape": lambda L: _mha(L)(X(L, 3, 2, 4), X(L, 3, 2, 4), X(L, 3, 2, 4),
                                                                   attn_mask=L.zeros(2, 3, 3)),
    "MultiheadAttention 4-D mask": lambda L: _mha(L)(X(L, 3, 2, 4), X(L, 3, 2, 4), X(L, 3, 2, 4),
                                                  attn_mask=L.zeros(1, 1, 3, 3)),
    "MultiheadAttention int mask": lambda L: _mha(L)(X(L, 3, 2, 4), X(L, 3, 2, 4), X(L, 3, 2, 4),
                                                  attn_mask=L.zeros(3, 3, dtype=L.long)),
    "MultiheadAttention mismatched mask types warn": lambda L: _mha(L)(
        X(L, 3, 2, 4), X(L, 3, 2, 4), X(L, 3, 2, 4), attn_mask=L.zeros(3, 3, dtype=L.bool),
        key_padding_mask=L.zeros(2, 3))[0].shape,
    "MultiheadAttention batched query, unbatched key": lambda L: _mha(L)(X(L, 3, 2, 4), X(L, 3, 4), X(L, 3, 4)),
    "MultiheadAttention 4-D query": lambda L: _mha(L)(X(L, 1, 3, 2, 4), X(L, 1, 3, 2, 4), X(L, 1, 3, 2, 4)),
    "MultiheadAttention padding mask of a wrong shape": lambda L: _mha(L)(
        X(L, 3, 2, 4), X(L, 3, 2, 4), X(L, 3, 2, 4), key_padding_mask=L.zeros(3, 2, dtype=L.bool)),
    "scaled_dot_product_attention dims": lambda L: L.nn.functional.scaled_dot_product_attention(
        X(L, 2, 3, 4), X(L, 2, 3, 5), X(L, 2, 3, 5)),
    "TransformerEncoderLayer heads not dividing": lambda L: L.nn.TransformerEncoderLayer(6, 4),
    "TransformerEncoderLayer bogus activation": lambda L: L.nn.TransformerEncoderLayer(4, 2, activation="tanh"),
    # ---- pooling, padding, resizing
    "MaxPool2d kernel larger than input": lambda L: L.nn.MaxPool2d(5)(X(L, 1, 1, 3, 3)),
    "AvgPool2d kernel larger than input": lambda L: L.nn.AvgPool2d(5)(X(L, 1, 1, 3, 3)),
    "MaxPool1d kernel larger than input": lambda L: L.nn.MaxPool1d(4)(X(L, 1, 2, 3)),
    "MaxPool2d padding too large": lambda L: L.nn.MaxPool2d(2, padding=2)(X(L, 1, 1, 4, 4)),
    "AvgPool2d padding too large": lambda L: L.nn.AvgPool2d(2, padding=2)(X(L, 1, 1, 4, 4)),
    "MaxPool1d of a 4-D input": lambda L: L.nn.MaxPool1d(2)(X(L, 1, 1, 4, 4)),
    "MaxPool2d of a 2-D input": lambda L: L.nn.MaxPool2d(2)(X(L, 4, 4)),
    "MaxPool2d zero stride": lambda L: L.nn.MaxPool2d(2, stride=0)(X(L, 1, 1, 4, 4)),
    "AvgPool2d zero stride": lambda L: L.nn.AvgPool2d(2, stride=0)(X(L, 1, 1, 4, 4)),
    "MaxPool1d zero stride": lambda L: L.nn.MaxPool1d(2, stride=0)(X(L, 1, 1, 4)),
    "AvgPool1d zero stride": lambda L: L.nn.AvgPool1d(2, stride=0)(X(L, 1, 1, 4)),
    "MaxPool2d zero kernel": lambda L: L.nn.MaxPool2d(0)(X(L, 1, 1, 4, 4)),
    "AdaptiveAvgPool2d of a negative size": lambda L: L.nn.AdaptiveAvgPool2d(-1)(X(L, 1, 1, 4, 4)),
    "AdaptiveAvgPool1d of a negative size": lambda L: L.nn.AdaptiveAvgPool1d(-2)(X(L, 1, 1, 4)),
    "AdaptiveMaxPool1d of a negative size": lambda L: L.nn.AdaptiveMaxPool1d(-2)(X(L, 1, 1, 4)),
    "AdaptiveAvgPool2d of a 2-D input": lambda L: L.nn.AdaptiveAvgPool2d(2)(X(L, 4, 4)),
    "AdaptiveMaxPool2d of a negative size": lambda L: L.nn.AdaptiveMaxPool2d(-1)(X(L, 1, 1, 4, 4)),
    "MaxUnpool2d wrong indices": lambda L: L.nn.MaxUnpool2d(2)(X(L, 1, 1, 2, 2), L.zeros(1, 1, 2, 2)),
    "pad of an odd length": lambda L: L.nn.functional.pad(X(L, 1, 4), (1,)),
    "pad longer than the input dims": lambda L: L.nn.functional.pad(X(L, 4), (1, 1, 1, 1)),
    "pad bogus mode": lambda L: L.nn.functional.pad(X(L, 1, 1, 4), (1, 1), mode="mirror"),
    "pad replicate of a 1-D input": lambda L: L.nn.functional.pad(X(L, 4), (1, 1), mode="replicate"),
    "pad reflect of an odd length": lambda L: L.nn.functional.pad(X(L, 1, 4), (1,), mode="reflect"),
    "pad reflect with a value": lambda L: L.nn.functional.pad(X(L, 1, 4), (1, 1), mode="reflect", value=2.0),
    "pad reflect of 2 on a 4-D input": lambda L: L.nn.functional.pad(X(L, 1, 1, 4, 4), (1, 1), mode="reflect"),
    "pad bogus mode of an odd length": lambda L: L.nn.functional.pad(X(L, 1, 4), (1,), mode="mirror"),
    "pad circular too large": lambda L: L.nn.functional.pad(X(L, 1, 1, 3), (4, 4), mode="circular"),
    "ReflectionPad2d too large": lambda L: L.nn.ReflectionPad2d(3)(X(L, 1, 1, 3, 3)),
    "Upsample with size and scale_factor": lambda L: L.nn.Upsample(size=4, scale_factor=2)(X(L, 1, 1, 2, 2)),
    "Upsample without size or scale_factor": lambda L: L.nn.Upsample()(X(L, 1, 1, 2, 2)),
    "Upsample bilinear of a 3-D input": lambda L: L.nn.Upsample(scale_factor=2, mode="bilinear")(X(L, 1, 1, 4)),
    "Upsample bogus mode": lambda L: L.nn.Upsample(scale_factor=2, mode="cubic")(X(L, 1, 1, 2, 2)),
    "interpolate align_corners with nearest": lambda L: L.nn.functional.interpolate(
        X(L, 1, 1, 2, 2), scale_factor=2, align_corners=True),
    "interpolate size of a wrong length": lambda L: L.nn.functional.interpolate(X(L, 1, 1, 2, 2), size=[3]),
    "interpolate scale_factor of a wrong length": lambda L: L.nn.functional.interpolate(
        X(L, 1, 1, 2, 2), scale_factor=(2, 2, 2)),
    "interpolate of a 2-D input": lambda L: L.nn.functional.interpolate(X(L, 2, 2), scale_factor=2),
    "interpolate linear of a 4-D input": lambda L: L.nn.functional.interpolate(X(L, 1, 1, 2, 2), scale_factor=2,
                                                                            mode="linear"),
    "PixelShuffle channels not divisible": lambda L: L.nn.PixelShuffle(2)(X(L, 1, 3, 2, 2)),
    "PixelUnshuffle size not divisible": lambda L: L.nn.PixelUnshuffle(2)(X(L, 1, 1, 3, 3)),
    "Fold output too small": lambda L: L.nn.functional.fold(X(L, 1, 4, 5), (3, 3), 2),
    # ---- shape modules
    "Flatten start_dim out of range": lambda L: L.nn.Flatten(2)(X(L, 2, 3)),
    "Flatten start after end": lambda L: L.nn.Flatten(2, 1)(X(L, 2, 3, 4)),
    "Unflatten sizes not multiplying": lambda L: L.nn.Unflatten(1, (2, 3))(X(L, 2, 4)),
    "Unflatten of float sizes": lambda L: L.nn.Unflatten(1, [2.0, 2]),
    "Unflatten of an int size": lambda L: L.nn.Unflatten(1, 4),
    "Softmax over a dim out of range": lambda L: L.nn.Softmax(dim=2)(X(L, 2, 3)),
    "Dropout negative p": lambda L: L.nn.Dropout(-0.1),
    "functional dropout p above 1": lambda L: L.nn.functional.dropout(X(L, 3), 1.5),
    "Dropout2d of a 2-D input warns": lambda L: L.nn.Dropout2d(0.0)(X(L, 2, 3)).shape,
    "Dropout1d of a 4-D input": lambda L: L.nn.Dropout1d(0.5)(X(L, 1, 2, 3, 4)),
    "Dropout2d of a 3-D input warns": lambda L: L.nn.Dropout2d(0.0)(X(L, 2, 3, 4)).shape,
    "Dropout2d of a 1-D input": lambda L: L.nn.Dropout2d(0.0)(X(L, 3)),
    "Dropout3d of a 3-D input warns": lambda L: L.nn.Dropout3d(0.0)(X(L, 2, 3, 4)).shape,
    "softmax of a list": lambda L: L.nn.functional.softmax([1.0, 2.0], 0),
    "gelu of a list": lambda L: L.nn.functional.gelu([1.0]),
    "Threshold without value": lambda L: L.nn.Threshold(0.1),
    "ReLU of a list": lambda L: L.nn.ReLU()([1.0, -1.0]),
    "PReLU with wrong num_parameters": lambda L: L.nn.PReLU(3)(X(L, 2, 4)),
    "GLU of an odd dim": lambda L: L.nn.GLU()(X(L, 2, 3)),
    "CosineSimilarity shape mismatch": lambda L: L.nn.CosineSimilarity()(X(L, 2, 3), X(L, 2, 4)),
    # ---- containers
    "Sequential index out of range": lambda L: L.nn.Sequential(L.nn.ReLU())[1],
    "Sequential negative index out of range": lambda L: L.nn.Sequential(L.nn.ReLU())[-2],
    "Sequential string index": lambda L: L.nn.Sequential(L.nn.ReLU())["0"],
    "Sequential of a list": lambda L: L.nn.Sequential([L.nn.ReLU(), L.nn.Tanh()]),
    "Sequential of a non-module": lambda L: L.nn.Sequential(L.nn.ReLU(), 3),
    "Sequential of a function": lambda L: L.nn.Sequential(L.nn.ReLU(), L.relu),
    "Sequential with two inputs": lambda L: L.nn.Sequential(L.nn.ReLU())(X(L, 2), X(L, 2)),
    "Sequential delete out of range": lambda L: L.nn.Sequential(L.nn.ReLU()).__delitem__(3),
    "Sequential append of a non-module": lambda L: L.nn.Sequential().append(3),
    "ModuleList index out of range": lambda L: L.nn.ModuleList([L.nn.ReLU()])[3],
    "ModuleList append of a non-module": lambda L: L.nn.ModuleList().append(1),
    "ModuleList of a non-module": lambda L: L.nn.ModuleList([L.nn.ReLU(), "relu"]),
    "ModuleList called": lambda L: L.nn.ModuleList([L.nn.ReLU()])(X(L, 2)),
    "ModuleList extend with a module": lambda L: L.nn.ModuleList().extend(L.nn.ReLU()),
    "ModuleList insert of a non-module": lambda L: L.nn.ModuleList().insert(0, 1.0),
    "ModuleDict missing key": lambda L: L.nn.ModuleDict({"a": L.nn.ReLU()})["b"],
    "ModuleDict int key": lambda L: L.nn.ModuleDict({1: L.nn.ReLU()}),
    "ModuleDict dotted key": lambda L: L.nn.ModuleDict({"a.b": L.nn.ReLU()}),
    "ModuleDict empty key": lambda L: L.nn.ModuleDict({"": L.nn.ReLU()}),
    "ModuleDict of a list of modules": lambda L: L.nn.ModuleDict([L.nn.ReLU()]),
    "ModuleDict value not a module": lambda L: L.nn.ModuleDict({"a": 1}),
    "ModuleDict called": lambda L: L.nn.ModuleDict({"a": L.nn.ReLU()})(X(L, 2)),
    "ParameterList of an int": lambda L: L.nn.ParameterList([L.nn.Parameter(L.ones(2))])[3],
    "ParameterDict missing key": lambda L: L.nn.ParameterDict({"a": L.nn.Parameter(L.ones(2))})["b"],
    "Module without forward": lambda L: L.nn.Module()(X(L, 2)),
    # ---- attributes and registration
    "add_module of an int": lambda L: L.nn.Linear(2, 2).add_module("x", 3),
    "add_module of an empty name": lambda L: L.nn.Linear(2, 2).add_module("", L.nn.ReLU()),
    "add_module of a dotted name": lambda L: L.nn.Linear(2, 2).add_module("a.b", L.nn.ReLU()),
    "add_module over an attribute": lambda L: L.nn.Linear(2, 2).add_module("training", L.nn.ReLU()),
    "add_module of an int name": lambda L: L.nn.Linear(2, 2).add_module(1, L.nn.ReLU()),
    "register_buffer of an int": lambda L: L.nn.Linear(2, 2).register_buffer("b", 3),
    "register_buffer over a parameter": lambda L: L.nn.Linear(2, 2).register_buffer("weight", L.ones(2)),
    "register_buffer of a dotted name": lambda L: L.nn.Linear(2, 2).register_buffer("a.b", L.ones(2)),
    "register_parameter of a tensor": lambda L: L.nn.Linear(2, 2).register_parameter("p", L.ones(2)),
    "register_parameter over an attribute": lambda L: L.nn.Linear(2, 2).register_parameter("training",
                                                                                          L.nn.Parameter(L.ones(2))),
    "assign a plain tensor to a parameter name": lambda L: _assign(L.nn.Linear(2, 2), "weight", L.ones(2, 2)),
    "assign a double tensor to a parameter name": lambda L: _assign(L.nn.Linear(2, 2), "bias", L.ones(2).double()),
    "assign an int to a parameter name": lambda L: _assign(L.nn.Linear(2, 2), "weight", 3),
    "assign None to a parameter name": lambda L: _assign(L.nn.Linear(2, 2), "bias", None).bias,
    "assign a tensor to a submodule name": lambda L: _assign(L.nn.Sequential(L.nn.ReLU()), "0", L.ones(2)),
    "assign a module before __init__": _no_init,
    "assign a parameter before __init__": _no_init_parameter,
    "missing attribute": lambda L: L.nn.Linear(2, 2).weights,
    "Parameter of an int tensor": lambda L: L.nn.Parameter(L.ones(2, dtype=L.long)),
    "Parameter of a list": lambda L: L.nn.Parameter([1.0, 2.0]),
    "Parameter of an array": lambda L: L.nn.Parameter(__import__("numpy").ones(2)),
    "train of a string": lambda L: L.nn.Linear(2, 2).train("yes"),
    "module to cuda without a GPU": lambda L: L.nn.Linear(2, 2).to("cuda"),
    "module cuda() without a GPU": lambda L: L.nn.Linear(2, 2).cuda(),
    "module to a bogus dtype": lambda L: L.nn.Linear(2, 2).to(L.long),
    "get_submodule missing": lambda L: L.nn.Sequential(L.nn.ReLU()).get_submodule("1"),
    "get_parameter missing": lambda L: L.nn.Linear(2, 2).get_parameter("weights"),
    "requires_grad_ of an int module buffer": lambda L: L.nn.BatchNorm1d(2).num_batches_tracked.requires_grad_(),
    # ---- state dicts
    "load_state_dict with an unexpected key": lambda L: _load(L.nn.Linear(2, 2), {
        "weight": L.ones(2, 2), "bias": L.ones(2), "extra": L.ones(1)}),
    "load_state_dict missing and unexpected": lambda L: _load(_seq(L), {
        "0.weight": L.ones(3, 2), "0.bias": L.ones(3), "2.weight": L.ones(1, 3)}),
    "load_state_dict not strict": lambda L: repr(_load(_seq(L), {"0.weight": L.ones(3, 2), "x": L.ones(1)},
                                                   strict=False)),
    "load_state_dict size mismatch nested": lambda L: _load(_seq(L), {**_seq_state(L), "1.weight": L.ones(2, 3)}),
    "load_state_dict two size mismatches": lambda L: _load(_seq(L), {**_seq_state(L), "0.bias": L.ones(4),
                                                                     "1.weight": L.ones(1, 4)}),
    "load_state_dict size mismatch not strict": lambda L: _load(_seq(L), {**_seq_state(L), "1.bias": L.ones(2)},
                                                                strict=False),
    "load_state_dict of a list": lambda L: _load(L.nn.Linear(2, 2), [L.ones(2, 2), L.ones(2)]),
    "load_state_dict of a non-tensor value": lambda L: _load(L.nn.Linear(2, 2), {"weight": [[1.0, 1.0]],
                                                                                 "bias": L.ones(2)}),
    "load_state_dict of a module": lambda L: _load(L.nn.Linear(2, 2), L.nn.Linear(2, 2)),
    "load_state_dict of a double tensor": lambda L: _load(L.nn.Linear(1, 1), {"weight": L.ones(1, 1).double(),
                                                                              "bias": L.ones(1)}),
    "load_state_dict of a prefixed DataParallel state": lambda L: _load(L.nn.Linear(1, 1), {
        "module.weight": L.ones(1, 1), "module.bias": L.ones(1)}),
    "load_state_dict missing a BatchNorm buffer": lambda L: _load(L.nn.BatchNorm1d(2), {
        "weight": L.ones(2), "bias": L.ones(2), "running_mean": L.ones(2), "running_var": L.ones(2)}),
}

# Programs torch runs without error or warning (results compared).
SILENT = {"Embedding of an int32 index", "assign None to a parameter name", "BatchNorm1d eval with batch of one",
          "load_state_dict not strict", "load_state_dict of a double tensor", "ModuleList insert of a non-module",
          "load_state_dict missing a BatchNorm buffer", "LayerNorm of a half input"}

_CLASS_PATHS = ("the message names the class by its module path, which is tracegrad's own (torch.nn.modules... is "
                "tracegrad.nn.modules..., torch._VariableFunctionsClass.relu is tracegrad.relu)")
KNOWN = {
    "Sequential of a function": (_CLASS_PATHS, ("TypeError", "tracegrad.relu is not a Module subclass")),
    "load_state_dict of a module": (_CLASS_PATHS, ("TypeError", "Expected state_dict to be dict-like, got <class "
                                                                "'tracegrad.nn.modules.linear.Linear'>.")),
}


@pytest.mark.parametrize("name", CASES)
def test_same_outcome_as_torch(name):
    assert_as_torch(name, CASES[name], SILENT, KNOWN)
