"""What a recording ``TorchFunctionMode`` sees, as torch's: recurrent layers as one ``torch.lstm``/``gru``/
``rnn_tanh``/``rnn_relu`` call (the zero states through ``torch.zeros``), the grad modes' ``torch._C.
_set_grad_enabled`` calls, ``nn.init``'s functions that hand themselves to the handlers, InstanceNorm's
``Tensor.dim`` reads, and the properties' names (``torch.Tensor.dtype.__get__``)."""

from __future__ import annotations

import pytest
from _lib import tg, torch
from _tf_mode_lib import recorded, recorded_run


def _recurrent(kind: str, batch_first: bool = False, **options):
    def program(lib):
        layer = getattr(lib.nn, kind)(3, 4, batch_first=batch_first, **options)
        x = lib.randn(2, 5, 3) if batch_first else lib.randn(5, 2, 3)
        return lambda: layer(x)[0].sum().backward()
    return program


def _unbatched_lstm(lib):
    layer = lib.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    x = lib.randn(5, 3)
    return lambda: layer(x, (lib.zeros(4, 4), lib.zeros(4, 4)))


def _instance_norm(dims: int):
    def program(lib):
        norm = getattr(lib.nn, f"InstanceNorm{dims}d")(3)
        x = lib.randn(2, 3, *([4] * dims))
        return lambda: norm(x)
    return program


def _init(name: str, *args, **kwargs):
    def program(lib):
        w = lib.empty(3, 4)
        return lambda: getattr(lib.nn.init, name)(w, *args, **kwargs)
    return program


def _grad_modes(lib):
    def run():
        with lib.no_grad(), lib.enable_grad():
            lib.ones(1).add(1)
        with lib.set_grad_enabled(False):
            pass
        lib.set_grad_enabled(True)
        lib.no_grad()(lambda: None)()
        lib._C._set_grad_enabled(True)
    return run


def _properties(lib):
    x = lib.ones(2, 2, requires_grad=True)

    def run():
        x.dtype, x.device, x.shape, x.grad, x.requires_grad, x.ndim, x.T, x.is_leaf
        x.grad = None
    return run


PROGRAMS = {
    "lstm": _recurrent("LSTM"),
    "lstm_batch_first": _recurrent("LSTM", batch_first=True),
    "lstm_projected": _recurrent("LSTM", proj_size=2, num_layers=2),
    "gru": _recurrent("GRU", bidirectional=True),
    "rnn_tanh": _recurrent("RNN"),
    "rnn_relu": _recurrent("RNN", batch_first=True, nonlinearity="relu"),
    "lstm_unbatched": _unbatched_lstm,
    "instance_norm1d": _instance_norm(1),
    "instance_norm2d": _instance_norm(2),
    "init_uniform_": _init("uniform_", -1.0, b=2.0),
    "init_normal_": _init("normal_", std=0.5),
    "init_constant_": _init("constant_", 0.25),
    "init_kaiming_uniform_": _init("kaiming_uniform_", mode="fan_out"),
    "init_ones_": _init("ones_"),
    "init_zeros_": _init("zeros_"),
    "grad_modes": _grad_modes,
    "properties": _properties,
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_mode_sees_torchs_calls(name):
    program = PROGRAMS[name]
    assert recorded(tg, program) == recorded(torch, program)


@pytest.mark.parametrize("name", ["init_uniform_", "init_kaiming_uniform_"])
def test_init_handler_gets_keyword_arguments(name):
    """torch's ``nn.init`` functions hand every argument by keyword, defaults filled in."""
    def calls(lib) -> list:
        w = lib.empty(3, 4)
        return recorded_run(lib, lambda: getattr(lib.nn.init, name[5:])(w),
                            lambda lib, func, types, args, kwargs: (func.__name__, args, sorted(kwargs)))

    assert calls(tg) == calls(torch)


def test_recurrent_layer_values_under_a_mode():
    """The layers run as one ``torch.lstm`` call give the values and gradients they give without a mode."""
    def run(lib, with_mode: bool):
        lib.manual_seed(0)
        layer = lib.nn.LSTM(3, 4)
        x = lib.randn(5, 2, 3, requires_grad=True)

        class Passing(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        if with_mode:
            with Passing():
                out, (h, c) = layer(x)
                out.sum().backward()
        else:
            out, (h, c) = layer(x)
            out.sum().backward()
        return [t.detach().numpy().tolist() for t in (out, h, c, x.grad, layer.weight_hh_l0.grad)]

    assert run(tg, True) == run(tg, False)


def _attention(need_weights: bool, batch_first: bool):
    def program(lib):
        attention = lib.nn.MultiheadAttention(4, 2, batch_first=batch_first)
        q = lib.randn(3, 2, 4)
        return lambda: attention(q, q, q, need_weights=need_weights)
    return program


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_is_one_functional_call(need_weights, batch_first):
    """``nn.MultiheadAttention`` as one ``F.multi_head_attention_forward`` call (its fast-path checks' property
    reads aside: those still differ)."""
    def calls(lib) -> list:
        return [name for name in recorded(lib, _attention(need_weights, batch_first)) if not name.endswith("__get__")]

    assert calls(tg) == calls(torch)
