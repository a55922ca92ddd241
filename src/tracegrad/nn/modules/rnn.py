"""Recurrent layers (RNN, LSTM, GRU) and their cells, with PyTorch's parameters, checks and messages.

The modules validate and reshape their arguments as ``torch.nn.modules.rnn`` does (unbatched input gains
and loses a batch dimension, a missing state is zeros, a :class:`PackedSequence` is unpacked and its
states permuted), and leave the computation to ``ops.nn_ops.rnn``, which composes it as ATen does on the
CPU so that the autograd graph has PyTorch's nodes.
"""

from __future__ import annotations

import math
import numbers
import warnings

import tracegrad as _tg

from ..._factories import empty, zeros
from ..._state import STATE
from ..._tensor import Tensor
from ...amp.autocast_state import is_any_autocast_enabled
from ...ops.nn_ops import rnn as _rnn
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_NETWORKS = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}  # torch.<name>
_REPR_DEFAULTS = (("proj_size", 0), ("num_layers", 1), ("bias", True), ("batch_first", False), ("dropout", 0),
                  ("bidirectional", False))


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


def _uniform_reset(module: Module, hidden_size: int) -> None:
    """PyTorch's reset: every parameter, in registration order, from U(-1/sqrt(hidden), 1/sqrt(hidden))."""
    stdv = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)


def _check_type(name: str, value, kind: type) -> None:
    if not isinstance(value, kind):
        raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")


class RNNBase(Module):
    """What RNN, LSTM and GRU share: parameters ``weight_ih_l{k}[_reverse]``... and the argument checks."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._check_arguments(dropout)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        # (a plain RNN's gate size is hidden_size itself, not 1 * hidden_size: a bool size reaches empty() as such)
        gate_size = hidden_size if _GATES[mode] == 1 else _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = {"weight_ih": (gate_size, layer_input_size), "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = [name + suffix for name in shapes]
                for name, shape in zip(names, shapes.values(), strict=True):
                    setattr(self, name, Parameter(empty(shape, dtype=dtype, device=device)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def _check_arguments(self, dropout) -> None:
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being "
                "zeroed"
            )
        if dropout > 0 and self.num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={self.num_layers}",
                stacklevel=4,
            )
        _check_type("bias", self.bias, bool)
        _check_type("batch_first", self.batch_first, bool)
        for name in ("input_size", "hidden_size"):
            _check_type(name, getattr(self, name), int)
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if self.num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if self.proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if self.proj_size >= self.hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

    @property
    def _flat_weights(self) -> list[Parameter | None]:
        # read on each use, so reassigned parameters (and functional_call's) are always the ones used
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op: PyTorch packs the weights into one buffer only for cuDNN."""

    def reset_parameters(self) -> None:
        _uniform_reset(self, self.hidden_size)

    # ---- checks ------------------------------------------------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        w_dtype = self._flat_weights[0].dtype
        # (under autocast the input's dtype may differ: mkldnn_rnn_layer casts it with the weights)
        if input.dtype != w_dtype and not is_any_autocast_enabled():
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w_dtype}). "
                f"Convert input: input.to({w_dtype}), or convert model: model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.size(-1)}"
            )

    def _mini_batch(self, input: Tensor, batch_sizes: Tensor | None) -> int:
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), self._mini_batch(input, batch_sizes), size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    # ---- forward -----------------------------------------------------------------------------------------

    def _zero_state(self, input: Tensor, batch: int, size: int) -> Tensor:
        layers = self.num_layers * (2 if self.bidirectional else 1)
        # (while the protocol is live, through ``torch.zeros`` as torch's modules call it: handlers see it)
        make = _tg.zeros if STATE.torch_function else zeros
        return make(layers, batch, size, dtype=input.dtype, device=input.device)

    def _run(self, fn, input: Tensor, hx, batch_sizes: Tensor | None):
        if STATE.torch_function:
            return self._run_as_torch_call(input, hx, batch_sizes)
        sizes = None if batch_sizes is None else [int(b) for b in batch_sizes.tolist()]
        return fn(input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout, self.training,
                  self.bidirectional, self.batch_first, batch_sizes=sizes)

    def _run_as_torch_call(self, input: Tensor, hx, batch_sizes: Tensor | None):
        """The layers as one call of ``torch.lstm``/``gru``/``rnn_tanh``/``rnn_relu`` (``_VF``'s) with torch's
        arguments: while the protocol is live, its handlers see that call, not its insides."""
        network = getattr(_tg, _NETWORKS[self.mode])
        run = (self._flat_weights, self.bias, self.num_layers, self.dropout, self.training, self.bidirectional)
        if batch_sizes is None:
            return network(input, hx, *run, self.batch_first)
        return network(input, batch_sizes, hx, *run)

    def _forward_one_hidden(self, input, hx: Tensor | None, fn, dim_message: str):
        """RNN's and GRU's forward: one state tensor ``hx`` of shape (layers * directions, batch, hidden)."""
        orig_input = input
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                hx = self._zero_state(input, int(batch_sizes[0]), self.hidden_size)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                raise ValueError(dim_message.format(input.dim()))
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
                if hx is not None:
                    if hx.dim() != 2:
                        raise RuntimeError(
                            f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor"
                        )
                    hx = hx.unsqueeze(1)
            elif hx is not None and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if hx is None:
                hx = self._zero_state(input, self._mini_batch(input, None), self.hidden_size)
        self.check_forward_args(input, hx, batch_sizes)
        output, hidden = self._run(fn, input, hx, batch_sizes)
        if isinstance(orig_input, PackedSequence):
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, hidden

    def extra_repr(self) -> str:
        # the arguments that differ from their defaults, in PyTorch's order
        s = f"{self.input_size}, {self.hidden_size}"
        for name, default in _REPR_DEFAULTS:
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s


def _no_projection(kwargs: dict) -> None:
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU), per layer."""

    def __init__(self, *args, **kwargs) -> None:
        _no_projection(kwargs)
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if self.nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(modes[self.nonlinearity], *args, **kwargs)

    def forward(self, input, hx: Tensor | None = None):
        fn = _rnn.rnn_tanh if self.mode == "RNN_TANH" else _rnn.rnn_relu
        return self._forward_one_hidden(input, hx, fn, "RNN: Expected input to be 2D or 3D, got {}D tensor instead")


class GRU(RNNBase):
    """Gated recurrent unit layers (reset, update and new gates, in PyTorch's order r, z, n)."""

    def __init__(self, *args, **kwargs) -> None:
        _no_projection(kwargs)
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx: Tensor | None = None):
        return self._forward_one_hidden(input, hx, _rnn.gru, "GRU: Expected input to be 2D or 3D, got {}D instead")


class LSTM(RNNBase):
    """Long short-term memory layers (gates i, f, g, o), with an optional projection of ``h`` (``proj_size``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        return (self.num_layers * (2 if self.bidirectional else 1), self._mini_batch(input, batch_sizes),
                self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: tuple[Tensor, Tensor],  # type: ignore[override]
                           batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: tuple[Tensor, Tensor],  # type: ignore[override]
                       permutation: Tensor | None) -> tuple[Tensor, Tensor]:
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def _zero_states(self, input: Tensor, batch: int) -> tuple[Tensor, Tensor]:
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return self._zero_state(input, batch, real_hidden_size), self._zero_state(input, batch, self.hidden_size)

    def forward(self, input, hx: tuple[Tensor, Tensor] | None = None):
        orig_input = input
        if isinstance(orig_input, PackedSequence):
            # (PyTorch checks no sizes on this path)
            input, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                hx = self._zero_states(input, int(batch_sizes[0]))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = None
            if input.dim() not in (2, 3):
                raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            max_batch_size = self._mini_batch(input, None)  # (read whether or not a state is given, as torch)
            if hx is None:
                hx = self._zero_states(input, max_batch_size)
            else:
                want = 3 if is_batched else 2
                if hx[0].dim() != want or hx[1].dim() != want:
                    kind = "batched 3-D" if is_batched else "unbatched 2-D"
                    raise RuntimeError(
                        f"For {kind} input, hx and cx should also be {want}-D but got "
                        f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                    )
                if not is_batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self.check_forward_args(input, hx, batch_sizes)
        output, h, c = self._run(_rnn.lstm, input, hx, batch_sizes)
        if isinstance(orig_input, PackedSequence):
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, self.permute_hidden((h, c), unsorted_indices)
        if not is_batched:
            return output.squeeze(batch_dim), (h.squeeze(1), c.squeeze(1))
        return output, (h, c)


# ---- cells -------------------------------------------------------------------------------------------------


class RNNCellBase(Module):
    """Parameters ``weight_ih`` (chunks * hidden, input), ``weight_hh`` (chunks * hidden, hidden) and biases."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        factory = {"dtype": dtype, "device": device}
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **factory))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **factory))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        _uniform_reset(self, self.hidden_size)

    def _batched(self, input: Tensor, states: tuple, state_name) -> tuple[bool, Tensor, tuple]:
        """PyTorch's cell preamble: 1-D or 2-D input and states; unbatched ones gain a batch dimension and a
        missing state is zeros. ``state_name(i)`` names state ``i`` in the error message."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for i, state in enumerate(states):
            if state is not None and state.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {state_name(i)} to be 1D or 2D, got {state.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if states[0] is None:
            zero = zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            return is_batched, input, (zero,) * len(states)
        return is_batched, input, tuple(s if is_batched else s.unsqueeze(0) for s in states)

    def _cell_call(self, fn, input: Tensor, hx) -> Tensor:
        return fn(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        is_batched, input, (hx,) = self._batched(input, (hx,), lambda i: "hidden")
        fns = {"tanh": _rnn.rnn_tanh_cell, "relu": _rnn.rnn_relu_cell}
        if self.nonlinearity not in fns:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = self._cell_call(fns[self.nonlinearity], input, hx)
        return ret if is_batched else ret.squeeze(0)


class GRUCell(RNNCellBase):
    """One step of a GRU."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        is_batched, input, (hx,) = self._batched(input, (hx,), lambda i: "hidden")
        ret = self._cell_call(_rnn.gru_cell, input, hx)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM: returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        states = (None, None) if hx is None else tuple(hx)
        is_batched, input, states = self._batched(input, states, lambda i: f"hx[{i}]")
        if isinstance(hx, Tensor):  # (torch's cell reads its rows as the two states; its parser then refuses it)
            raise TypeError("lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not Tensor")
        h, c = self._cell_call(_rnn.lstm_cell, input, states)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))
