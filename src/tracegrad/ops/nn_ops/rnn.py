"""Recurrent layers as ATen composes them on the CPU (``aten/src/ATen/native/RNN.cpp``): the cells
(``rnn_tanh_cell``, ``rnn_relu_cell``, ``lstm_cell``, ``gru_cell``) and the full multi-layer, optionally
bidirectional networks (``rnn_tanh``, ``rnn_relu``, ``lstm``, ``gru``), on padded or packed input.

Everything is built from dispatched operators, in ATen's order, so the autograd graph has PyTorch's node
names (``AddmmBackward0``, ``UnbindBackward0``, ``UnsafeSplitBackward0``, ``StackBackward0``...), and double
backward, forward-mode AD and transforms come for free. The one operator of its own is ``unsafe_split``:
a split whose pieces are fresh tensors rather than views (ATen's cells split the gates with it and then
update the pieces in place; here the updates are out of place, which records the same nodes).

On the CPU, PyTorch runs a whole layer's input projection as one matrix product over all time steps
(``pre_compute_input``) and feeds the cell one row block of it per step; so does this module. A float32 LSTM
runs through oneDNN instead, one fused operator per layer and direction, as in PyTorch (``onednn_lstm.py``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence

import numpy as np

from ..._autocast_policies import with_autocast
from ..._factories import full
from ..._tensor import Tensor
from .._util import wrap_dim
from ..pointwise import add, mul, sigmoid, sub, tanh
from ..registry import defop
from ..shape import cat, stack
from ..views import narrow, transpose, transpose_, unbind
from .activation import relu
from .linear import linear as _linear
from .misc import dropout

# (ATen's cells call at::linear through the dispatcher: under CPU autocast their gates are computed in its dtype)
linear = with_autocast("linear", _linear)

__all__ = ["unsafe_split", "unsafe_chunk", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell",
           "rnn_tanh", "rnn_relu", "lstm", "gru"]

# ---- unsafe_split ------------------------------------------------------------------------------------------


def _unsafe_split_kernel(a, split_size, dim=0):
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if split_size <= 0 and n:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    starts = range(0, n, split_size) if n else [0]
    lead = (builtins.slice(None),) * d
    return tuple(a[lead + (builtins.slice(s, s + split_size),)].copy() for s in starts)


def _unsafe_split_vjp(ctx, *grads):
    (_, dim) = ctx.attrs
    return cat(list(grads), dim)


def _unsafe_split_jvp(args, outs, tangents):
    return unsafe_split(tangents[0], args[1], args[2])


unsafe_split = defop(
    "unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]",
    _unsafe_split_kernel,
    vjp=_unsafe_split_vjp,
    attrs=("split_size", "dim"),
    jvp=_unsafe_split_jvp,
)


def unsafe_chunk(t: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``chunk`` through ``unsafe_split`` (PyTorch's ``Tensor.unsafe_chunk``)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = t.shape[wrap_dim(dim, t.ndim)]
    return unsafe_split(t, builtins.max(-(-n // chunks), 1), dim)


# ---- cells -------------------------------------------------------------------------------------------------
# A layer's parameters: (w_ih, w_hh, b_ih, b_hh, w_hr), None where absent. ``pre`` means the input was
# already projected by w_ih/b_ih (the whole-sequence product of a full layer).

Params = tuple
Hidden = Tensor | tuple[Tensor, Tensor]


def _input_part(x: Tensor, p: Params, pre: bool) -> Tensor:
    return x if pre else linear(x, p[0], p[2])


def _simple_cell(activation: Callable[[Tensor], Tensor]) -> Callable:
    def cell(x: Tensor, h: Tensor, p: Params, pre: bool = False) -> Tensor:
        return activation(add(linear(h, p[1], p[3]), _input_part(x, p, pre)))

    return cell


_tanh_cell = _simple_cell(tanh)
_relu_cell = _simple_cell(relu)


def _lstm_cell(x: Tensor, hidden: tuple[Tensor, Tensor], p: Params, pre: bool = False) -> tuple[Tensor, Tensor]:
    hx, cx = hidden
    gates = unsafe_chunk(add(linear(hx, p[1], p[3]), _input_part(x, p, pre)), 4, 1)
    ingate = sigmoid(gates[0])
    forgetgate = sigmoid(gates[1])
    cellgate = tanh(gates[2])
    outgate = sigmoid(gates[3])
    cy = add(mul(forgetgate, cx), mul(ingate, cellgate))
    hy = mul(outgate, tanh(cy))
    # the projection is ATen's matmul(hy, w_hr.t()): an MmBackward0 node, as linear without a bias records
    return (hy if p[4] is None else linear(hy, p[4]), cy)


def _gru_cell(x: Tensor, h: Tensor, p: Params, pre: bool = False) -> Tensor:
    igates = unsafe_chunk(_input_part(x, p, pre), 3, 1)
    hgates = unsafe_chunk(linear(h, p[1], p[3]), 3, 1)
    reset_gate = sigmoid(add(hgates[0], igates[0]))
    input_gate = sigmoid(add(hgates[1], igates[1]))
    new_gate = tanh(add(igates[2], mul(hgates[2], reset_gate)))
    return add(mul(sub(h, new_gate), input_gate), new_gate)


def _check_cell_input(input: Tensor, input_size: int) -> None:
    if input.shape[1] != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {input_size}")


def _check_cell_hidden(input: Tensor, hx: Tensor, hidden_size: int, label: int) -> None:
    if input.shape[0] != hx.shape[0]:
        raise RuntimeError(
            f"Input batch size {input.shape[0]} doesn't match hidden{label} batch size {hx.shape[0]}"
        )
    if hx.shape[1] != hidden_size:
        raise RuntimeError(
            f"hidden{label} has inconsistent hidden_size: got {hx.shape[1]}, expected {hidden_size}"
        )


def _check_cell_weights(w_ih: Tensor, w_hh: Tensor, gates: int) -> None:
    """Each weight's first dim is ``gates`` times the hidden size (``w_hh``'s second dim)."""
    rows = gates * w_hh.shape[1]
    for name, weight in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if weight.shape[0] != rows:
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = {rows}, but got {weight.shape[0]}")


def _one_hidden_cell(cell: Callable, gates: int, weights_first: bool) -> Callable:
    """A cell of one hidden state, checking its arguments in torch's order: the weights first (the simple cells)
    or after the input and the hidden state (GRU's)."""
    def fn(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
           b_hh: Tensor | None = None) -> Tensor:
        if weights_first:
            _check_cell_weights(w_ih, w_hh, gates)
        _check_cell_input(input, w_ih.shape[1])
        _check_cell_hidden(input, hx, w_hh.shape[1], 0)
        if not weights_first:
            _check_cell_weights(w_ih, w_hh, gates)
        return cell(input, hx, (w_ih, w_hh, b_ih, b_hh, None))

    return fn


rnn_tanh_cell = _one_hidden_cell(_tanh_cell, 1, weights_first=True)
rnn_relu_cell = _one_hidden_cell(_relu_cell, 1, weights_first=True)
gru_cell = _one_hidden_cell(_gru_cell, 3, weights_first=False)


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    _check_cell_input(input, w_ih.shape[1])
    _check_cell_weights(w_ih, w_hh, 4)  # (torch's order for LSTM: the input, the weights, the hidden states)
    hidden_size = w_hh.shape[1]
    _check_cell_hidden(input, hx[0], hidden_size, 0)
    _check_cell_hidden(input, hx[1], hidden_size, 1)
    return _lstm_cell(input, (hx[0], hx[1]), (w_ih, w_hh, b_ih, b_hh, None))


# ---- layers ------------------------------------------------------------------------------------------------


def _output_of(hidden: Hidden) -> Tensor:
    return hidden[0] if isinstance(hidden, tuple) else hidden


def _run_steps(cell: Callable, steps: Sequence[Tensor], hidden: Hidden, p: Params) -> tuple[list[Tensor], Hidden]:
    outputs = []
    for step in steps:
        hidden = cell(step, hidden, p, True)
        outputs.append(_output_of(hidden))
    return outputs, hidden


def _projected_steps(x: Tensor, p: Params) -> list[Tensor]:
    if x.shape[0] == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    return list(unbind(linear(x, p[0], p[2]), 0))


def _full_layer(cell: Callable, x: Tensor, hidden: Hidden, p: Params) -> tuple[Tensor, Hidden]:
    outputs, hidden = _run_steps(cell, _projected_steps(x, p), hidden, p)
    return stack(outputs, 0), hidden


def _bidirectional_layer(cell: Callable, x: Tensor, hidden: tuple, p: tuple) -> tuple[Tensor, tuple]:
    fw_out, fw_hidden = _full_layer(cell, x, hidden[0], p[0])
    # the reverse direction projects the input again (after the forward pass, as ATen does)
    rev_outputs, rev_hidden = _run_steps(cell, _projected_steps(x, p[1])[::-1], hidden[1], p[1])
    rev_out = stack(rev_outputs[::-1], 0)
    return cat([fw_out, rev_out], fw_out.ndim - 1), (fw_hidden, rev_hidden)


def _packed_layer(cell: Callable, x: Tensor, batch_sizes: list[int], hidden: Hidden, p: Params,
                  reverse: bool) -> tuple[Tensor, Hidden]:
    """ATen's PackedLayer / ReversedPackedLayer: time step t holds the first ``batch_sizes[t]`` sequences.

    Forward, finished sequences leave the running hidden state as the batch shrinks (their final states are
    kept and put back in order at the end); in reverse, the state grows with new sequences from ``hx``."""
    flat = linear(x, p[0], p[2])
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)]).tolist()
    step_inputs = [narrow(flat, 0, offsets[t], batch_sizes[t]) for t in range(len(batch_sizes))]
    outputs: list[Tensor] = []
    if not reverse:
        finals: list[Hidden] = []
        last = batch_sizes[0]
        h = hidden
        for t, step in enumerate(step_inputs):
            bs = batch_sizes[t]
            if bs < last:
                finals.append(_narrow_hidden(h, bs, last - bs))
                h = _narrow_hidden(h, 0, bs)
            last = bs
            h = cell(step, h, p, True)
            outputs.append(_output_of(h))
        finals.append(h)
        finals.reverse()
        final = _cat_hidden(finals)
    else:
        n = len(batch_sizes)
        last = batch_sizes[-1]
        h = _narrow_hidden(hidden, 0, last)
        for t in range(n - 1, -1, -1):
            bs = batch_sizes[t]
            if bs > last:
                h = _cat_hidden([h, _narrow_hidden(hidden, last, bs - last)])
            last = bs
            h = cell(step_inputs[t], h, p, True)
            outputs.append(_output_of(h))
        outputs.reverse()
        final = h
    return cat(outputs, 0), final


def _narrow_hidden(h: Hidden, start: int, length: int) -> Hidden:
    if isinstance(h, tuple):
        return tuple(narrow(t, 0, start, length) for t in h)
    return narrow(h, 0, start, length)


def _cat_hidden(hs: list[Hidden]) -> Hidden:
    if isinstance(hs[0], tuple):
        return tuple(cat([h[i] for h in hs], 0) for i in range(len(hs[0])))
    return cat(hs, 0)


def _gather_params(params: Sequence[Tensor], has_biases: bool, has_projections: bool = False) -> list[Params]:
    """Split the flat weight list into one (w_ih, w_hh, b_ih, b_hh, w_hr) tuple per layer and direction."""
    per = 2 + 2 * has_biases + has_projections
    if len(params) % per:
        raise RuntimeError("got an incorrect number of RNN parameters")
    out = []
    for i in range(0, len(params), per):
        group = list(params[i : i + per])
        w_ih, w_hh = group[:2]
        b_ih, b_hh = group[2:4] if has_biases else (None, None)
        w_hr = group[-1] if has_projections else None
        out.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return out


def _apply_layer_stack(
    cell: Callable,
    input: Tensor,
    hiddens: list[Hidden],
    params: list[Params],
    num_layers: int,
    dropout_p: float,
    train: bool,
    bidirectional: bool,
    batch_sizes: list[int] | None,
) -> tuple[Tensor, list[Hidden]]:
    directions = 2 if bidirectional else 1
    if len(hiddens) != num_layers * directions or len(params) != num_layers * directions:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    layer_input = input
    finals: list[Hidden] = []
    for layer in range(num_layers):
        h = hiddens[layer * directions : (layer + 1) * directions]
        p = params[layer * directions : (layer + 1) * directions]
        if batch_sizes is not None:
            out, fin = _packed_layer(cell, layer_input, batch_sizes, h[0], p[0], False)
            finals.append(fin)
            if bidirectional:
                rev_out, rev_fin = _packed_layer(cell, layer_input, batch_sizes, h[1], p[1], True)
                out = cat([out, rev_out], out.ndim - 1)
                finals.append(rev_fin)
        elif bidirectional:
            out, (fw, rev) = _bidirectional_layer(cell, layer_input, (h[0], h[1]), (p[0], p[1]))
            finals += [fw, rev]
        else:
            out, fin = _full_layer(cell, layer_input, h[0], p[0])
            finals.append(fin)
        layer_input = out
        if dropout_p != 0 and train and layer < num_layers - 1:
            layer_input = dropout(layer_input, dropout_p, True)
    return layer_input, finals


def _one_hidden_rnn(cell: Callable, transpose_output_in_place: bool = True) -> Callable:
    def fn(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool, num_layers: int,
           dropout: float, train: bool, bidirectional: bool, batch_first: bool = False,
           batch_sizes: list[int] | None = None) -> tuple[Tensor, Tensor]:
        x = transpose(input, 0, 1) if batch_first and batch_sizes is None else input
        out, finals = _apply_layer_stack(cell, x, list(unbind(hx, 0)), _gather_params(params, has_biases),
                                         num_layers, dropout, train, bidirectional, batch_sizes)
        if batch_first and batch_sizes is None:
            out = transpose_(out, 0, 1)  # in place, as ATen: TransposeBackward1
        return out, stack(finals, 0)

    return fn


rnn_tanh = _one_hidden_rnn(_tanh_cell)
rnn_relu = _one_hidden_rnn(_relu_cell)
gru = _one_hidden_rnn(_gru_cell)


def lstm(input: Tensor, hx: Sequence[Tensor], params: Sequence[Tensor], has_biases: bool, num_layers: int,
         dropout: float, train: bool, bidirectional: bool, batch_first: bool = False,
         batch_sizes: list[int] | None = None) -> tuple[Tensor, Tensor, Tensor]:
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    has_projections = hx[0].shape[-1] != hx[1].shape[-1]
    from . import onednn_lstm

    if onednn_lstm.takes_onednn_path(input, has_projections, batch_sizes):
        return onednn_lstm.lstm(input, hx, list(params), has_biases, num_layers, dropout, train, bidirectional,
                                batch_first)
    x = transpose(input, 0, 1) if batch_first and batch_sizes is None else input
    hiddens = list(zip(unbind(hx[0], 0), unbind(hx[1], 0), strict=True))
    out, finals = _apply_layer_stack(_lstm_cell, x, hiddens, _gather_params(params, has_biases, has_projections),
                                     num_layers, dropout, train, bidirectional, batch_sizes)
    if batch_first and batch_sizes is None:
        out = transpose(out, 0, 1)  # out of place in ATen's lstm: TransposeBackward0
    return out, stack([f[0] for f in finals], 0), stack([f[1] for f in finals], 0)


# ---- packing -----------------------------------------------------------------------------------------------


def _pack_padded_kernel(x, lengths, batch_first):
    if x.size == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if batch_first:  # (ATen's transpose(0, 1) comes before the lengths' check; like any dim wrap, 0-d reads as 1-d)
        if x.ndim < 2:
            wrap_dim(1, x.ndim)
        x = np.swapaxes(x, 0, 1)
    if np.ndim(lengths) != 1:  # (the Python side has made them int64 by now)
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {np.ndim(lengths)}D cpu "
                           "Long tensor")
    if x.ndim < 2:  # (ATen reads the batch size as size(1))
        raise IndexError("Dimension specified as 1 but tensor has no dimensions" if x.ndim == 0 else
                         "Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    batch_size = x.shape[1]
    if lengths.shape[0] != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.shape[0]} "
                           f"(batch_size={batch_size})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if np.any(lengths[1:] > lengths[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                           "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    if lengths[0] > x.shape[0]:
        # (PyTorch reads past the padded steps here and packs whatever it finds: refused instead)
        raise RuntimeError(f"pack_padded_sequence: a sequence length ({int(lengths[0])}) exceeds the padded "
                           f"sequence length ({x.shape[0]})")
    batch_sizes = (lengths[None, :] > np.arange(lengths[0])[:, None]).sum(axis=1).astype(np.int64)
    data = np.concatenate([x[t, :b] for t, b in enumerate(batch_sizes)], axis=0)
    return data, batch_sizes


def _pack_padded_vjp(ctx, g, _):  # the batch sizes come from the saved second output
    (batch_sizes,) = ctx.saved_tensors
    (batch_first,) = ctx.attrs
    (shape,) = ctx.input_shapes
    total = shape[1] if batch_first else shape[0]
    return pad_packed(g, [int(b) for b in batch_sizes.tolist()], batch_first, 0.0, total)[0]


def _pack_padded_jvp(args, outs, tangents):
    return _pack_padded_sequence(tangents[0], args[1], args[2])[0], None


_pack_padded_sequence = defop(
    "_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first) -> (Tensor, Tensor)",
    _pack_padded_kernel,
    vjp=_pack_padded_vjp,
    saves=("result1",),
    attrs=("batch_first",),
    differentiable=("input",),
    jvp=_pack_padded_jvp,
)


def pack_padded(input: Tensor, lengths: Tensor, batch_first: bool) -> tuple[Tensor, Tensor]:
    """ATen's ``_pack_padded_sequence``: the valid time steps of every sequence, step by step, and the
    batch size of each step (one ``PackPaddedSequenceBackward0`` node)."""
    return _pack_padded_sequence(input, lengths, batch_first)


def pad_packed(data: Tensor, batch_sizes: Sequence[int], batch_first: bool, padding_value: float,
               total_length: int) -> tuple[Tensor, list[int]]:
    """ATen's ``_pad_packed_sequence``, composed as ATen composes it: a padded tensor full of
    ``padding_value`` whose blocks of equal batch size are copied in place from ``data`` (CopySlices nodes),
    and the length of each sequence."""
    max_batch = batch_sizes[0]
    steps = len(batch_sizes)
    max_len = steps
    if total_length > 0:
        if total_length < steps:
            raise RuntimeError(f"Expected total_length to be at least the length of the longest sequence in input, "
                               f"but got total_length={total_length} and max sequence length being {steps}")
        max_len = total_length
    trailing = tuple(data.shape[1:])
    output = full((max_len, max_batch) + trailing, padding_value, dtype=data.dtype, device=data.device)
    lengths = [0] * max_batch
    offset = prev_i = 0
    prev_bs = max_batch
    for i in range(steps + 1):
        bs = batch_sizes[i] if i != steps else 0
        if bs != prev_bs:
            n = prev_bs * (i - prev_i)
            block = narrow(data, 0, offset, n).view((i - prev_i, prev_bs) + trailing)
            narrow(narrow(output, 0, prev_i, i - prev_i), 1, 0, prev_bs).copy_(block)
            offset += n
            prev_i = i
        for j in range(bs, prev_bs):  # sequences that ended before step i
            lengths[j] = i
        prev_bs = bs
    if batch_first:
        output = transpose(output, 0, 1)
    return output, lengths


# ---- torch.lstm / gru / rnn_tanh / rnn_relu --------------------------------------------------------------------


def _public_network(name: str, fn: Callable) -> Callable:
    """``torch.<name>`` with ATen's two overloads: ``(input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)`` and, for packed data, ``(data, batch_sizes, hx, params, has_biases, num_layers,
    dropout, train, bidirectional)``; the second argument (an int64 tensor of batch sizes) tells them apart."""
    def network(*args):
        if len(args) != 9:
            raise TypeError(f"{name}() received an invalid combination of arguments - got {len(args)} arguments, "
                            "but expected 9")
        second = args[1]
        if isinstance(second, Tensor) and second.dtype.is_floating_point is False and second.ndim == 1:
            data, batch_sizes, hx, params, *rest = args
            return fn(data, hx, params, *rest, False, [int(b) for b in batch_sizes.tolist()])
        return fn(*args)

    network.__name__ = network.__qualname__ = name
    return network


NETWORKS = {name: _public_network(name, fn) for name, fn in
            (("lstm", lstm), ("gru", gru), ("rnn_tanh", rnn_tanh), ("rnn_relu", rnn_relu))}
