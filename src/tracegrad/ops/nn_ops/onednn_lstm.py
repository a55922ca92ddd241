"""The LSTM PyTorch's CPU build runs for float32 input: oneDNN's ``mkldnn_rnn_layer``, one fused operator (and one
``MkldnnRnnLayerBackward0`` node) per layer and direction (``aten/src/ATen/native/mkldnn/RNN.cpp``).

float32 is the default dtype, so this is the LSTM graph most users see; float64, packed sequences, projections
(``proj_size``, with PyTorch's once-only warning) and empty input take the composed path of ``rnn.py``, as in
PyTorch. Around the fused operator the wrapper records what ATen's ``mkldnn_rnn`` records: a contiguous copy of a
batch-first input, ``hx[index]`` selects, a ``cat`` of both directions, dropout between layers, ``stack`` of the
final states, and the output's transpose back.

The operator's backward is PyTorch's: a plain backward runs one kernel (here NumPy's back-propagation through
time, reading the gates kept in the ``workspace`` output), while a backward that records a graph
(``create_graph=True``) recomputes the layer with differentiable operators in PyTorch's order
(``mkldnn_rnn_layer_differentiable_backward``), so the double-backward graph is PyTorch's too. Like PyTorch's,
the operator has no forward-mode formula.

The workspace is an opaque uint8 buffer in both libraries; its size is oneDNN's own in PyTorch, and here the
bytes of the per-step gates and cell states.
"""

from __future__ import annotations

import numpy as np

from ..._factories import full, zeros
from ..._state import STATE
from ..._tensor import Tensor
from ..._warnings import warn_once_at_caller
from ...autograd.forward_ad import not_implemented_jvp
from ..creation import zeros_like
from ..linalg_core import matmul
from ..pointwise import add, add_, mul, sigmoid_, sub, tanh, tanh_
from ..reductions import sum as sum_dims
from ..registry import defop
from ..shape import cat, stack
from ..views import select, transpose, unsqueeze
from .linear import linear
from .misc import dropout
from .rnn import unsafe_chunk

_LSTM_MODE = 2  # ideep::rnn_kind::LSTM, which PyTorch's node saves as ``mode``

def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-a))


def _step_order(seq: int, reverse: bool) -> range:
    return range(seq - 1, -1, -1) if reverse else range(seq)


def _layer_kernel(x, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse=False, batch_sizes=(), mode=_LSTM_MODE,
                  hidden_size=0, num_layers=1, has_biases=True, bidirectional=False, batch_first=False, train=True):
    """One LSTM layer over a (seq, batch, features) input: output, final h and c, and the workspace (the gates
    i, f, g, o and the cell state of every step, which the backward kernel reads)."""
    seq, hidden = x.shape[0], hx.shape[-1]
    projected = np.matmul(x, w_ih.T)
    if has_biases:
        projected += b_ih + b_hh
    kept = np.empty((seq, 5) + hx.shape, dtype=x.dtype)  # i, f, g, o, c per step
    out = np.empty((seq,) + hx.shape, dtype=x.dtype)
    h, c = hx, cx
    for t in _step_order(seq, reverse):
        gates = projected[t] + np.matmul(h, w_hh.T)
        i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden] for k in range(4))
        i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
        c = f * c + i * g
        h = o * np.tanh(c)
        kept[t] = (i, f, g, o, c)
        out[t] = h
    return out, h.astype(x.dtype, copy=False), c.astype(x.dtype, copy=False), kept.reshape(-1).view(np.uint8)


def _layer_backward_kernel(x, w_ih, w_hh, b_ih, b_hh, hx, cx, output, hy, cy, grad_output, grad_hy, grad_cy,
                           reverse, mode, hidden_size, num_layers, has_biases, train, bidirectional, batch_sizes,
                           batch_first, workspace):
    """Back-propagation through time over the kept gates: (dx, dW_ih, dW_hh, db_ih, db_hh, dhx, dcx)."""
    seq = x.shape[0]
    kept = workspace.view(x.dtype).reshape((seq, 5) + hx.shape)
    dh_next = np.zeros_like(hx) if grad_hy is None else grad_hy
    dc_next = np.zeros_like(cx) if grad_cy is None else grad_cy
    da = np.empty(x.shape[:2] + (4 * hx.shape[-1],), dtype=x.dtype)
    h_before = np.empty((seq,) + hx.shape, dtype=x.dtype)  # the hidden state each step started from
    order = list(_step_order(seq, reverse))
    for k, t in enumerate(order):
        h_before[t] = hx if k == 0 else output[order[k - 1]]
    for k in range(seq - 1, -1, -1):
        t = order[k]
        i, f, g, o, c = kept[t]
        c_before = cx if k == 0 else kept[order[k - 1], 4]
        dh = dh_next if grad_output is None else grad_output[t] + dh_next
        tanh_c = np.tanh(c)
        dc = dc_next + dh * o * (1 - tanh_c * tanh_c)
        da[t] = np.concatenate([dc * g * i * (1 - i), dc * c_before * f * (1 - f), dc * i * (1 - g * g),
                                dh * tanh_c * o * (1 - o)], axis=1)
        dh_next = np.matmul(da[t], w_hh)
        dc_next = dc * f
    flat = da.reshape(-1, da.shape[-1])
    dx = np.matmul(da, w_ih)
    dw_ih = np.matmul(flat.T, x.reshape(-1, x.shape[-1]))
    dw_hh = np.matmul(flat.T, h_before.reshape(-1, hx.shape[-1]))
    db = flat.sum(axis=0)
    return dx, dw_ih, dw_hh, db, db.copy(), dh_next, dc_next


_LAYER_ARGS = ("bool reverse, int[] batch_sizes, int mode, int hidden_size, int num_layers, bool has_biases, "
               "bool bidirectional, bool batch_first, bool train")

layer_backward = defop(
    "mkldnn_rnn_layer_backward(Tensor input, Tensor weight1, Tensor weight2, Tensor weight3, Tensor weight4, "
    "Tensor hx_, Tensor cx_tmp, Tensor output, Tensor hy_, Tensor cy_, Tensor? grad_output, Tensor? grad_hy, "
    "Tensor? grad_cy, bool reverse, int mode, int hidden_size, int num_layers, bool has_biases, bool train, "
    "bool bidirectional, int[] batch_sizes, bool batch_first, Tensor workspace) "
    "-> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
    _layer_backward_kernel,
    differentiable=(),
)


def _one_minus(t: Tensor) -> Tensor:
    """C++'s ``1 - t``: ``sub`` with the number as a wrapped 0-d tensor first (SubBackward0, no edge for it)."""
    return sub(full((), 1, dtype=t.dtype), t)


def _differentiable_backward(ctx, g_out: Tensor | None, g_hy: Tensor | None, g_cy: Tensor | None) -> tuple:
    """PyTorch's mkldnn_rnn_layer_differentiable_backward: the layer recomputed and differentiated with
    operators, in its order, so that a graph of the gradients can be recorded."""
    x, w_ih, w_hh, w2, w3, hx, cx, output, _hy, _cy, _ws = ctx.saved_tensors
    reverse, _mode, hidden_size, _layers, has_biases = ctx.attrs[:5]
    grad_output = g_out.contiguous() if g_out is not None else zeros_like(output)
    grad_hy = g_hy.contiguous() if g_hy is not None else zeros_like(hx)
    grad_cy = g_cy.contiguous() if g_cy is not None else zeros_like(cx)
    if has_biases:
        b_ih, b_hh = w2, w3
    else:
        b_ih = zeros(4 * hidden_size, dtype=w_ih.dtype)
        b_hh = zeros(4 * hidden_size, dtype=w_ih.dtype)
    seq = x.shape[0]
    gates: list = [None] * seq
    states: list = [(hx, cx)]
    h, c = hx, cx
    for step in range(1, seq + 1):
        t = seq - step if reverse else step - 1
        gate = add_(linear(select(x, 0, t), w_ih, b_ih), linear(h, w_hh, b_hh))
        i, f, g, o = unsafe_chunk(gate, 4, 1)
        i, f, g, o = sigmoid_(i), sigmoid_(f), tanh_(g), sigmoid_(o)
        gates[t] = (i, f, g, o)
        c = add(mul(f, c), mul(i, g))
        h = mul(o, tanh(c))
        states.append((h, c))
    dx_steps: list = [None] * seq
    dw_ih = dw_hh = db = None
    for step in range(seq - 1, -1, -1):
        t = seq - step - 1 if reverse else step
        i, f, g, o = gates[t]
        cy = states[step + 1][1]
        h_prev, c_prev = states[step]
        new_grad_hy = add(select(grad_output, 0, t), grad_hy)
        d1 = add(grad_cy, new_grad_hy * o * _one_minus(tanh(cy) * tanh(cy)))
        dgp, dip, dprev_c, dfp = d1 * i, d1 * g, d1 * f, d1 * c_prev
        dop = new_grad_hy * tanh(cy)
        do_ = dop * o * _one_minus(o)
        dg = dgp * _one_minus(g * g)
        df = dfp * f * _one_minus(f)
        di = dip * i * _one_minus(i)
        da = cat([di, df, dg, do_], 1)
        db_step = sum_dims(da, [0])
        dx_steps[t] = unsqueeze(matmul(da, w_ih), 0)
        grad_hy = matmul(da, w_hh)
        dw_ih_step = matmul(transpose(da, 0, 1), select(x, 0, t))
        dw_hh_step = matmul(transpose(da, 0, 1), h_prev)
        if step == seq - 1:
            db, dw_ih, dw_hh = db_step, dw_ih_step, dw_hh_step
        else:
            db, dw_ih, dw_hh = add_(db, db_step), add_(dw_ih, dw_ih_step), add_(dw_hh, dw_hh_step)
        grad_cy = dprev_c
    return cat(dx_steps, 0), dw_ih, dw_hh, db, db, grad_hy, grad_cy


def _layer_vjp(ctx, g_out=None, g_hy=None, g_cy=None, _g_workspace=None):
    if g_out is None and g_hy is None and g_cy is None:
        return (None,) * 7
    if STATE.grad_enabled:  # a graph of the gradients is being recorded (create_graph)
        return _differentiable_backward(ctx, g_out, g_hy, g_cy)
    x, w_ih, w_hh, w2, w3, hx, cx, output, hy, cy, workspace = ctx.saved_tensors
    # (the node's attributes are in the backward operator's order: reverse ... batch_first)
    return layer_backward(x, w_ih, w_hh, w2, w3, hx, cx, output, hy, cy, g_out, g_hy, g_cy, *ctx.attrs, workspace)


rnn_layer = defop(
    "mkldnn_rnn_layer(Tensor input, Tensor weight0, Tensor weight1, Tensor weight2, Tensor weight3, Tensor hx_, "
    f"Tensor cx_, {_LAYER_ARGS}) -> (Tensor, Tensor, Tensor, Tensor)",
    _layer_kernel,
    vjp=_layer_vjp,
    jvp=not_implemented_jvp("mkldnn_rnn_layer"),
    saves=("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_", "result0", "result1", "result2",
           "result3"),
    attrs=("reverse", "mode", "hidden_size", "num_layers", "has_biases", "train", "bidirectional", "batch_sizes",
           "batch_first"),
    differentiable=("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_"),
    nondiff_outputs=(3,),
    node_name="MkldnnRnnLayerBackward0",
)
rnn_layer.materialize_grads = False  # (the backward tells undefined gradients from zeros, as PyTorch's)


def takes_onednn_path(input: Tensor, has_projections: bool, batch_sizes) -> bool:
    """PyTorch's ``use_mkldnn`` for an LSTM on this CPU build: float32, not packed, not empty, oneDNN enabled;
    projections fall back to the composed path with PyTorch's warning."""
    from ... import backends

    if (not backends.mkldnn.enabled or input._data.dtype != np.float32 or input._data.size == 0
            or batch_sizes is not None):
        return False
    if has_projections:
        warn_once_at_caller("lstm_projections_onednn",
                            "LSTM with projections is not supported with oneDNN. Using default implementation.")
        return False
    return True


def lstm(input: Tensor, hx: tuple, params: list, has_biases: bool, num_layers: int, dropout_p: float, train: bool,
         bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    """ATen's ``mkldnn_rnn`` for LSTM: the layers and directions, each one fused ``mkldnn_rnn_layer``."""
    x = (transpose(input, 0, 1) if batch_first else input).contiguous()
    h0, c0 = hx[0].contiguous(), hx[1].contiguous()
    hidden_size = h0.shape[2]
    directions = 2 if bidirectional else 1
    per_layer = 4 if has_biases else 2
    layer_input = x
    final_h: list = []
    final_c: list = []
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            w = params[index * per_layer:(index + 1) * per_layer]
            b_ih = w[2] if has_biases else zeros(w[0].shape, dtype=w[0].dtype)
            b_hh = w[3] if has_biases else zeros(w[1].shape, dtype=w[1].dtype)
            out, hy, cy, _ = rnn_layer(layer_input, w[0], w[1], b_ih, b_hh, select(h0, 0, index),
                                       select(c0, 0, index), direction > 0, [], _LSTM_MODE, hidden_size,
                                       num_layers, has_biases, bidirectional, batch_first, train)
            outputs.append(out)
            final_h.append(hy)
            final_c.append(cy)
        layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
        if dropout_p != 0 and train and layer < num_layers - 1:
            layer_input = dropout(layer_input, dropout_p, True)
    output = transpose(layer_input, 0, 1) if batch_first else layer_input
    return output, stack(final_h, 0), stack(final_c, 0)
