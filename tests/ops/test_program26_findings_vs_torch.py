"""Differences that the programs of ``tests/test_user_programs26_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``conv1d``/``conv2d``/``conv_transpose1d``/``torch.convolution`` (and ``nn.Conv1d(padding=(1, 1))``) given a
  stride, padding, dilation or output_padding of the wrong length computed with it or failed in NumPy's words;
  torch refuses "expected padding to be a single integer value or a list of 1 values to match the convolution
  dimensions, but got padding=[1, 1]" (and "dilation cannot broadcast to 1 dimensions" under ``padding='same'``);
- ``Tensor.unfold`` of a 0-d tensor took any size, and a negative size leaked NumPy's ValueError;
- ``logcumsumexp`` with an ``out=`` of another dtype cast into it (torch: "expected scalar_type Float but found
  Double");
- ``quantile``/``nanquantile`` with ``out=``: another dtype was cast into, a resize did not warn, an input that
  requires grad left ``out`` without torch's ``CopyBackwards``; ``histogram``'s outs were resized silently, hist
  before bin_edges, and of another dtype cast into;
- ``pack_padded_sequence`` read 2-D lengths as flat, and ``nn.LSTMCell`` took one tensor ``hx`` as its rows.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch
from _tutorial_lib import normalised


def _outcome(lib, program):
    """What ``program(lib)`` gives (its repr), or its error; and its warnings' texts."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            shown = normalised(repr(program(lib)))
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            shown = (type(e).__name__, normalised(str(e)))
    return shown, [normalised(str(w.message)).split(" (Triggered internally at")[0] for w in caught]


def _conv1d(t, **kw):
    return t.nn.functional.conv1d(t.ones(1, 1, 10), t.ones(2, 1, 3), **kw)


CASES = {
    "conv1d-padding-pair": lambda t: _conv1d(t, padding=(1, 1)),
    "conv1d-stride-pair": lambda t: _conv1d(t, stride=(1, 1)),
    "conv1d-dilation-pair": lambda t: _conv1d(t, dilation=(1, 1)),
    "conv1d-stride-before-padding": lambda t: _conv1d(t, padding=(1, 1), stride=(1, 1)),
    "conv1d-same-dilation-pair": lambda t: _conv1d(t, padding="same", dilation=(1, 1)),
    "conv1d-complex-padding-pair": lambda t: t.nn.functional.conv1d(
        t.ones(1, 1, 10, dtype=t.complex64), t.ones(2, 1, 3, dtype=t.complex64), padding=(1, 1)),
    "conv2d-padding-triple": lambda t: t.nn.functional.conv2d(t.ones(1, 1, 6, 6), t.ones(2, 1, 3, 3),
                                                              padding=(1, 1, 1)),
    "conv2d-stride-empty": lambda t: t.nn.functional.conv2d(t.ones(1, 1, 6, 6), t.ones(2, 1, 3, 3), stride=()),
    "conv3d-dilation-pair": lambda t: t.nn.functional.conv3d(t.ones(1, 1, 4, 4, 4), t.ones(2, 1, 3, 3, 3),
                                                             dilation=(1, 1)),
    "conv-transpose1d-padding-pair": lambda t: t.nn.functional.conv_transpose1d(t.ones(1, 1, 10), t.ones(1, 2, 3),
                                                                                padding=(1, 1)),
    "conv-transpose1d-output-padding-pair": lambda t: t.nn.functional.conv_transpose1d(
        t.ones(1, 1, 10), t.ones(1, 2, 3), output_padding=(1, 1)),
    "convolution-stride-pair": lambda t: t.convolution(t.ones(1, 1, 10), t.ones(2, 1, 3), None, (1, 1), (0,), (1,),
                                                       False, (0,), 1),
    "Conv1d-module-padding-pair": lambda t: t.nn.Conv1d(1, 1, 3, padding=(1, 1))(t.ones(1, 1, 10)),
    "unfold-0d-size-2": lambda t: t.tensor(3.0).unfold(0, 2, 1),
    "unfold-0d-size-0": lambda t: t.tensor(3.0).unfold(0, 0, 1),
    "unfold-0d-negative-size": lambda t: t.tensor(3.0).unfold(0, -1, 1),
    "unfold-0d-dim-1": lambda t: t.tensor(3.0).unfold(1, 1, 1),
    "unfold-negative-size": lambda t: t.arange(4.0).unfold(0, -1, 0),
    "unfold-0d-size-0-backward": lambda t: _unfold_0d_grad(t),
    "logcumsumexp-out-double": lambda t: t.logcumsumexp(t.ones(3), 0, out=t.empty(3, dtype=t.float64)),
    "logcumsumexp-out-half": lambda t: t.logcumsumexp(t.ones(3), 0, out=t.empty(3, dtype=t.float16)),
    "logcumsumexp-out-complex": lambda t: t.logcumsumexp(t.ones(3), 0, out=t.empty(3, dtype=t.complex64)),
    "quantile-out-double": lambda t: t.quantile(t.tensor([1.0, 2.0]), 0.5, out=t.empty(1, dtype=t.float64)),
    "quantile-out-dtype-before-q-values": lambda t: t.quantile(t.tensor([1.0, 2.0]), t.tensor([1.5]),
                                                               out=t.empty(1, dtype=t.float64)),
    "quantile-out-dtype-before-dim": lambda t: t.quantile(t.tensor([1.0, 2.0]), 0.5, dim=3,
                                                          out=t.empty(1, dtype=t.float64)),
    "nanquantile-out-double": lambda t: t.nanquantile(t.tensor([1.0, 2.0]), 0.5, out=t.empty(1, dtype=t.float64)),
    "quantile-out-resized": lambda t: t.quantile(t.tensor([1.0, 2.0]), t.tensor([0.5, 0.2]), out=t.empty(2, 3)),
    "quantile-out-of-input-requiring-grad": lambda t: t.quantile(t.tensor([1.0, 2.0], requires_grad=True), 0.5,
                                                                 out=t.empty(0)),
    "quantile-out-requiring-grad": lambda t: t.quantile(t.tensor([1.0, 2.0], requires_grad=True), 0.5,
                                                        out=t.empty(0, requires_grad=True)),
    "histogram-outs-resized": lambda t: t.histogram(t.tensor([1.0, 2.0]), 2, out=(t.empty(3), t.empty(1))),
    "histogram-outs-resized-by-edges": lambda t: t.histogram(t.tensor([1.0, 2.0]), t.tensor([0.0, 1.0, 2.0]),
                                                             out=(t.empty(5), t.empty(1))),
    "histogram-hist-double": lambda t: t.histogram(t.tensor([1.0, 2.0]), 2,
                                                   out=(t.empty(2, dtype=t.float64), t.empty(3))),
    "histogram-edges-double": lambda t: t.histogram(t.tensor([1.0, 2.0]), 2,
                                                    out=(t.empty(2), t.empty(3, dtype=t.float64))),
    "histogram-hist-before-weight": lambda t: t.histogram(t.tensor([1.0, 2.0]), 2, weight=t.ones(3),
                                                          out=(t.empty(2, dtype=t.float64), t.empty(3))),
    "histogram-weight-before-hist-given-edges": lambda t: t.histogram(
        t.tensor([1.0, 2.0]), t.tensor([1.0, 2.0]), weight=t.ones(3), out=(t.empty(2, dtype=t.float64), t.empty(3))),
    "histogram-2d-edges-no-resize": lambda t: t.histogram(t.tensor([1.0, 2.0]), t.tensor([[1.0, 2.0]]),
                                                          out=(t.empty(2), t.empty(3))),
    "histogram-long-after-resize": lambda t: t.histogram(t.tensor([1, 2]), t.tensor([1, 2]),
                                                         out=(t.empty(2, dtype=t.long), t.empty(3, dtype=t.long))),
    "pack-2d-lengths": lambda t: t.nn.utils.rnn.pack_padded_sequence(t.ones(3, 2), t.tensor([[3, 2]]).t()),
    "pack-2d-list-lengths": lambda t: t.nn.utils.rnn.pack_padded_sequence(t.ones(3, 2), [[3, 2]]),
    "pack-0d-lengths": lambda t: t.nn.utils.rnn.pack_padded_sequence(t.ones(3, 2), t.tensor(3, dtype=t.int8)),
    "pack-empty-before-lengths": lambda t: t.nn.utils.rnn.pack_padded_sequence(t.ones(0, 2), t.tensor([[3, 2]])),
    "lstm-cell-tensor-hx": lambda t: _lstm_cell(t, t.zeros(4, 3)),
    "lstm-cell-3d-tensor-hx": lambda t: _lstm_cell(t, t.zeros(2, 4, 3)),
    "lstm-cell-list-hx": lambda t: [h.shape for h in _lstm_cell(t, [t.zeros(4, 3)] * 2)],
}


def _unfold_0d_grad(t):
    x = t.tensor(3.0, requires_grad=True)
    y = x.unfold(0, 0, 1)
    y.sum().backward()
    return y.grad_fn.name(), x.grad


def _lstm_cell(t, hx):
    t.manual_seed(0)
    return t.nn.LSTMCell(2, 3)(t.ones(4, 2), hx)


@pytest.mark.parametrize("name", CASES)
def test_finding(name):
    assert _outcome(tg, CASES[name]) == _outcome(torch, CASES[name])
