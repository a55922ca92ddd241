"""Review of the dropout/multinomial layouts and the inference-tensor write order, compared with torch.

- native_dropout with p=1 draws its ``bernoulli_(0)`` mask as torch does (the stream after it moves on), laid out
  like the input, as are its output and, for an empty input, both results (the mask of the input's dtype).
- Dropout's noise is scaled in its own dtype step by step (``noise.div_(1 - p)``, alpha dropout's
  ``noise.add(-1).mul_(alpha * a).add_(alpha * a * p)``), a half tensor's through float.
- multinomial's exponential draws fill ``empty_like(self)``: an expanded input's dense layout; no rows with
  replacement give an empty result.
- An inference tensor has no Autograd dispatch key: an in-place op with no normal tensor argument (a number at a
  ``Tensor`` parameter counts as one, Python wraps it) skips autograd's leaf and resize checks and writes, then the
  version bump refuses. An ``out=`` inference tensor is written, then refused.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import assert_same_bits, np, tg, torch

LAYOUTS = {
    "channels_last": lambda lib: lib.arange(120.).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
    "transposed": lambda lib: lib.ones(5, 7).t(),
    "expanded": lambda lib: lib.ones(3, 1, 4).expand(3, 5, 4),
    "unsqueezed transpose": lambda lib: lib.ones(4, 3).t().unsqueeze(1),
    "0-d": lambda lib: lib.tensor(2.0),
    "empty transposed": lambda lib: lib.ones(0, 3).t(),
    "half transposed": lambda lib: lib.ones(5, 3, dtype=lib.float16).t(),
}

DROPOUTS = {
    "native p=1": lambda lib, x: lib.native_dropout(x, 1.0, True),
    "native p=0.3": lambda lib, x: lib.native_dropout(x, 0.3, True),
    "dropout p=0.3": lambda lib, x: lib.nn.functional.dropout(x, 0.3),
    "alpha p=0.3": lambda lib, x: lib.nn.functional.alpha_dropout(x, 0.3, True),
    "feature alpha p=0.3": lambda lib, x: lib.nn.functional.feature_alpha_dropout(x, 0.3, True),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_values_layouts_and_stream(name, layout):
    def program(lib):
        lib.manual_seed(5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = DROPOUTS[name](lib, LAYOUTS[layout](lib))
            except RuntimeError as exc:
                return str(exc), lib.rand(3)
        outs = out if isinstance(out, tuple) else (out,)
        return [(o.detach(), o.stride()) for o in outs], lib.rand(3)

    (ours, our_next), (theirs, their_next) = program(tg), program(torch)
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        assert len(ours) == len(theirs)
        for (o, o_strides), (t, t_strides) in zip(ours, theirs):
            assert_same_bits(o, t)
            assert o_strides == t_strides
    assert_same_bits(our_next, their_next)


MULTINOMIALS = {
    "expanded, one": lambda lib: lib.multinomial(lib.tensor([0., 1, 0, 2, 0, 0, 0, 0]).expand(3, 8), 1),
    "expanded, three": lambda lib: lib.multinomial(lib.tensor([0., 1, 0, 2, 0, 0, 0, 0]).expand(3, 8), 3),
    "no rows, with replacement": lambda lib: lib.multinomial(lib.ones(0, 5), 3, True),
}


@pytest.mark.parametrize("case", MULTINOMIALS)
def test_multinomial_layouts(case):
    def program(lib):
        lib.manual_seed(1)
        out = MULTINOMIALS[case](lib)
        return out, out.stride(), lib.rand(2)

    (ours, our_strides, our_next), (theirs, their_strides, their_next) = program(tg), program(torch)
    assert_same_bits(ours, theirs)
    assert our_strides == their_strides
    assert_same_bits(our_next, their_next)


INFERENCE_WRITES = {
    "fill_": lambda lib, x: x.fill_(7),
    "zero_": lambda lib, x: x.zero_(),
    "clamp_": lambda lib, x: x.clamp_(1, 2),
    "sigmoid_": lambda lib, x: x.sigmoid_(),
    "pow_ (Scalar overload)": lambda lib, x: x.pow_(2),
    "add_ (a wrapped number: checked)": lambda lib, x: x.add_(1),
    "mul_ (a wrapped number: checked)": lambda lib, x: x.mul_(2),
    "add_ of a normal tensor (checked)": lambda lib, x: x.add_(lib.ones(3)),
    "add_ of an inference tensor": lambda lib, x: x.add_(x),
    "t_": lambda lib, x: x.t_(),
    "unsqueeze_": lambda lib, x: x.unsqueeze_(0),
    "resize_": lambda lib, x: x.resize_(3),
    "resize_as_ of a normal template (checked)": lambda lib, x: x.resize_as_(lib.ones(3)),
    "uniform_": lambda lib, x: x.uniform_(),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", INFERENCE_WRITES)
def test_inplace_on_inference_tensor(name, requires_grad):
    def program(lib):
        lib.manual_seed(0)
        with lib.inference_mode():
            x = lib.arange(6.).reshape(2, 3).requires_grad_(requires_grad)
        try:
            INFERENCE_WRITES[name](lib, x)
            error = None
        except RuntimeError as exc:
            error = str(exc)
        return error, tuple(x.shape), x.stride(), x.detach().numpy().copy()

    ours, theirs = program(tg), program(torch)
    assert ours[:3] == theirs[:3]
    assert np.array_equal(ours[3], theirs[3])


OUT_WRITES = {
    "add": lambda lib, o: lib.add(lib.ones(2, 3), 1, out=o),
    "sum": lambda lib, o: lib.sum(lib.ones(4, 2, 3), 0, out=o),
    "resized add": lambda lib, o: lib.add(lib.ones(3, 3), 1, out=o),
    "randn": lambda lib, o: lib.randn(2, 3, out=o),
    "arange": lambda lib, o: lib.arange(6., out=o),
    "zeros": lambda lib, o: lib.zeros(2, 3, out=o),
}


@pytest.mark.parametrize("name", OUT_WRITES)
def test_out_into_inference_tensor_writes_then_refuses(name):
    def program(lib):
        lib.manual_seed(0)
        with lib.inference_mode():
            out = lib.full((2, 3), 9.0)
        try:
            OUT_WRITES[name](lib, out)
            error = None
        except RuntimeError as exc:
            error = str(exc)
        return error, out

    (our_error, ours), (their_error, theirs) = program(tg), program(torch)
    assert our_error == their_error
    assert_same_bits(ours, theirs)
