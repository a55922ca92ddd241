"""Differences that ordinary training programs (``tests/test_user_programs_vs_torch.py``) ran into, each reduced
to the operation that caused it and compared with torch.

- Dropout on a non-contiguous input (the output of a ``batch_first`` LSTM is a transposed view) drew its mask in
  the input's logical order; torch fills ``empty_like(input)``, so in memory order: another mask, and every later
  draw of the program different.
- ``multinomial`` without replacement chose among equal keys (zero probabilities) in index order; torch takes
  ``topk`` of ``p / Exp(1)``, with its own order among ties (a nucleus-sampling loop asking for more samples than
  there are tokens left).
- An in-place op on an inference tensor outside inference mode was refused before it wrote; torch's kernel
  writes first and the version bump refuses afterwards, so a program that catches the error sees the new values.
"""

from __future__ import annotations

import contextlib

import pytest
from _lib import assert_same_bits, np, tg, torch

# ---- dropout on strided inputs -------------------------------------------------------------------------------

STRIDED_INPUTS = {
    "transposed": lambda lib: lib.ones(5, 7).t(),
    "permuted": lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1),
    "batch-first rnn output": lambda lib: lib.ones(6, 3, 4).transpose(0, 1),
    "sliced": lambda lib: lib.ones(4, 9)[:, ::2],
    "transposed slice": lambda lib: lib.ones(6, 8).t()[::2],
    "expanded": lambda lib: lib.ones(3, 1).expand(3, 5),
}

DROPOUTS = {
    "F.dropout": lambda lib, x: lib.nn.functional.dropout(x, 0.4),
    "nn.Dropout": lambda lib, x: lib.nn.Dropout(0.3)(x),
    "torch.dropout": lambda lib, x: lib.dropout(x, 0.5, True),
    "alpha_dropout": lambda lib, x: lib.nn.functional.alpha_dropout(x, 0.5, True),
    "feature_alpha_dropout": lambda lib, x: lib.feature_alpha_dropout(x, 0.5, True),
    "native_dropout": lambda lib, x: lib.native_dropout(x, 0.5, True)[0],
    "native_dropout mask": lambda lib, x: lib.native_dropout(x, 0.5, True)[1],
    "in place": lambda lib, x: lib.nn.functional.dropout(x.clone(), 0.5, inplace=True),
}


@pytest.mark.parametrize("layout", STRIDED_INPUTS)
@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_mask_follows_the_input_layout(name, layout):
    def program(lib):
        lib.manual_seed(3)
        x = STRIDED_INPUTS[layout](lib)
        out = DROPOUTS[name](lib, x)
        return out, out.stride(), lib.rand(3)  # (the stream afterwards: one draw per element, in either order)

    (ours, our_strides, our_next), (theirs, their_strides, their_next) = program(tg), program(torch)
    assert_same_bits(ours, theirs)
    assert our_strides == their_strides
    assert_same_bits(our_next, their_next)


def test_dropout_after_a_batch_first_lstm():
    def program(lib):
        lib.manual_seed(0)
        lstm = lib.nn.LSTM(4, 4, batch_first=True)
        out, _ = lstm(lib.randn(2, 5, 4))
        return lib.nn.functional.dropout(out, 0.5) != 0

    assert_same_bits(program(tg), program(torch))


# ---- multinomial among zero probabilities ---------------------------------------------------------------------


def _one_hot_rows(lib, n: int):
    p = lib.zeros(3, n)
    p[0, 0] = 1
    p[1, [2, n - 1]] = 0.5
    p[2, 1:] = 1
    return p


MULTINOMIAL_CASES = {
    "two of one hot, 11": lambda lib: lib.multinomial(_one_hot_rows(lib, 11)[0], 2),
    "three of rows, 11": lambda lib: lib.multinomial(_one_hot_rows(lib, 11), 3),
    "five of rows, 20": lambda lib: lib.multinomial(_one_hot_rows(lib, 20), 5),
    "all of rows, 6": lambda lib: lib.multinomial(_one_hot_rows(lib, 6), 6),
    "two of 200 (partial sort)": lambda lib: lib.multinomial(_one_hot_rows(lib, 200), 2),
    "one": lambda lib: lib.multinomial(_one_hot_rows(lib, 11), 1),
    "one, with replacement": lambda lib: lib.multinomial(_one_hot_rows(lib, 11), 1, replacement=True),
    "transposed probabilities": lambda lib: lib.multinomial(lib.rand(7, 3).t(), 4),
    "float64": lambda lib: lib.multinomial(_one_hot_rows(lib, 11).double(), 4),
    "generator": lambda lib: lib.multinomial(_one_hot_rows(lib, 11), 4, generator=lib.Generator().manual_seed(5)),
}


@pytest.mark.parametrize("case", MULTINOMIAL_CASES)
def test_multinomial_without_replacement_breaks_ties_as_topk(case):
    def program(lib):
        lib.manual_seed(1)
        return MULTINOMIAL_CASES[case](lib), lib.rand(2)

    for ours, theirs in zip(program(tg), program(torch)):
        assert_same_bits(ours, theirs)


# ---- in-place writes into inference tensors -----------------------------------------------------------------

INPLACE_WRITES = {
    "add_": lambda lib, x, w: x.add_(1),
    "add_ of a tensor requiring grad": lambda lib, x, w: x.add_(w),
    "copy_": lambda lib, x, w: x.copy_(w),
    "fill_ of a slice": lambda lib, x, w: x[1:].fill_(5),
    "clamp_": lambda lib, x, w: x.clamp_(min=2),
    "setitem": lambda lib, x, w: x.__setitem__(0, 4.0),
    "+=": lambda lib, x, w: x.__iadd__(2),
    "uniform_": lambda lib, x, w: x.uniform_(),
    "complex add_ (the kernel's error first)": lambda lib, x, w: x.add_(1.5j),
    "t_": lambda lib, x, w: x.t_(),
    "unsqueeze_": lambda lib, x, w: x.unsqueeze_(0),
    "as_strided_": lambda lib, x, w: x.as_strided_((2,), (1,)),
}


@pytest.mark.parametrize("name", INPLACE_WRITES)
def test_inplace_on_inference_tensor_writes_then_refuses(name):
    def program(lib):
        lib.manual_seed(2)
        with lib.inference_mode():
            x = lib.zeros(2, 3)
        w = lib.ones(2, 3, requires_grad=True)
        try:
            INPLACE_WRITES[name](lib, x, w)
            error = None
        except RuntimeError as exc:
            error = str(exc)
        return error, x.shape, x.detach().numpy().copy(), x._version if not x.is_inference() else None

    ours, theirs = program(tg), program(torch)
    assert ours[0] == theirs[0] and ours[1] == theirs[1] and ours[3] == theirs[3]
    assert np.array_equal(ours[2], theirs[2])


def test_inplace_on_inference_tensor_under_no_grad():
    def program(lib):
        with lib.inference_mode():
            x = lib.ones(3)
        with lib.no_grad(), contextlib.suppress(RuntimeError):
            x.mul_(2).add_(1)
        return x

    assert_same_bits(program(tg), program(torch))
