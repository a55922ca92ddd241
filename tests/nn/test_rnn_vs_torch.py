"""nn.RNN / LSTM / GRU, their cells and nn.utils.rnn against torch, in float64: outputs, final states, gradients
of the input, the initial states and every parameter, the autograd graph (node names and edges), second
derivatives, forward AD, state_dict exchange, packed sequences, errors and warnings, repr and parameters.

The graph: torch on CPU composes RNN and GRU (and every cell) from ordinary operators (AddmmBackward0,
UnbindBackward0, UnsafeSplitBackward0, StackBackward0...), and so does tracegrad, in the same order; in float64 so
does LSTM. (A float32 LSTM runs through oneDNN's fused layer in both libraries: test_onednn_lstm_vs_torch.py.)

Dropout between layers draws from tracegrad's generator, not torch's: it is checked by its statistics and its
reproducibility, and against torch where it is deterministic (p = 1).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_close, raised, recorded_graph, tg, torch

N_CASES = 36
MODES = ("RNN", "GRU", "LSTM")


def _draw(seed: int) -> dict:
    """One random configuration of a full recurrent module and its call."""
    rng = np.random.default_rng(seed)
    mode = MODES[seed % 3]
    hidden = int(rng.integers(2, 5))
    kw = dict(input_size=int(rng.integers(1, 4)), hidden_size=hidden, num_layers=int(rng.integers(1, 3)),
              bias=bool(rng.random() < 0.8), batch_first=bool(rng.random() < 0.4),
              bidirectional=bool(rng.random() < 0.5))
    if mode == "RNN":
        kw["nonlinearity"] = str(rng.choice(["tanh", "relu"]))
    if mode == "LSTM" and rng.random() < 0.4:
        kw["proj_size"] = int(rng.integers(1, hidden))
    length, batch = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    unbatched = bool(rng.random() < 0.25)
    if unbatched:
        shape = (length, kw["input_size"])
    else:
        shape = (batch, length, kw["input_size"]) if kw["batch_first"] else (length, batch, kw["input_size"])
    return dict(mode=mode, kw=kw, x=rng.standard_normal(shape), with_hx=bool(rng.random() < 0.5),
                unbatched=unbatched, batch=1 if unbatched else batch, seed=seed)


def _state_shapes(case: dict) -> list[tuple]:
    kw = case["kw"]
    layers = kw["num_layers"] * (2 if kw["bidirectional"] else 1)
    lead = (layers,) if case["unbatched"] else (layers, case["batch"])
    h = kw.get("proj_size") or kw["hidden_size"]
    return [lead + (h,), lead + (kw["hidden_size"],)] if case["mode"] == "LSTM" else [lead + (h,)]


def _parameters(module, seed: int) -> dict:
    """Random values for every parameter of ``module`` (named as torch names them), as NumPy arrays."""
    rng = np.random.default_rng(seed + 1000)
    return {name: rng.uniform(-0.8, 0.8, tuple(p.shape)) for name, p in module.named_parameters()}


def _load(lib, module, values: dict):
    module.load_state_dict({k: lib.tensor(v) for k, v in values.items()})
    return module


def _flat(out) -> list:
    return [a for b in out for a in _flat(b)] if isinstance(out, tuple) else [out]


def _run_module(lib, case: dict):
    module = getattr(lib.nn, case["mode"])(**case["kw"]).double()
    _load(lib, module, _parameters(module, case["seed"]))
    x = lib.tensor(case["x"], requires_grad=True)
    leaves = [x]
    hx = None
    if case["with_hx"]:
        rng = np.random.default_rng(case["seed"] + 7)
        states = [lib.tensor(rng.standard_normal(s), requires_grad=True) for s in _state_shapes(case)]
        leaves += states
        hx = tuple(states) if case["mode"] == "LSTM" else states[0]
    outs = _flat(module(x, hx))
    params = [p for _, p in module.named_parameters()]
    weights = [lib.tensor(np.linspace(-1, 1, o.numel()).reshape(tuple(o.shape))) for o in outs]
    loss = sum((o * w).sum() for o, w in zip(outs, weights))
    grads = lib.autograd.grad(loss, leaves + params, allow_unused=True)
    return outs, grads, recorded_graph(outs), [n for n, _ in module.named_parameters()]


@pytest.mark.parametrize("seed", range(N_CASES))
def test_module_as_torch(seed):
    case = _draw(seed)
    ours, theirs = _run_module(tg, case), _run_module(torch, case)
    assert_close(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
    assert_close(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
    assert ours[2] == theirs[2]
    assert ours[3] == theirs[3]


CELLS = ("RNNCell", "GRUCell", "LSTMCell")


def _run_cell(lib, seed: int):
    rng = np.random.default_rng(seed)
    name = CELLS[seed % 3]
    hidden, size = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    kw = dict(input_size=size, hidden_size=hidden, bias=bool(rng.random() < 0.7))
    if name == "RNNCell":
        kw["nonlinearity"] = str(rng.choice(["tanh", "relu"]))
    cell = getattr(lib.nn, name)(**kw).double()
    _load(lib, cell, _parameters(cell, seed))
    lead = () if rng.random() < 0.3 else (int(rng.integers(1, 4)),)
    x = lib.tensor(rng.standard_normal(lead + (size,)), requires_grad=True)
    leaves = [x]
    hx = None
    if rng.random() < 0.6:
        states = [lib.tensor(rng.standard_normal(lead + (hidden,)), requires_grad=True)
                  for _ in range(2 if name == "LSTMCell" else 1)]
        leaves += states
        hx = tuple(states) if name == "LSTMCell" else states[0]
    outs = _flat(cell(x, hx))
    loss = sum((o * (i + 1.5)).sum() for i, o in enumerate(outs))
    grads = lib.autograd.grad(loss, leaves + list(cell.parameters()), create_graph=True)
    # second order: the gradient's own gradient with respect to every leaf (None, for a leaf it does not
    # reach, compared as zeros)
    inputs = leaves + list(cell.parameters())
    second = lib.autograd.grad(sum((g * g).sum() for g in grads), inputs, allow_unused=True)
    second = [lib.zeros_like(i) if s is None else s for s, i in zip(second, inputs)]
    return outs, grads, second, recorded_graph(outs)


@pytest.mark.parametrize("seed", range(12))
def test_cell_as_torch(seed):
    ours, theirs = _run_cell(tg, seed), _run_cell(torch, seed)
    assert_close(ours[:3], theirs[:3], rtol=1e-10, atol=1e-12)
    assert ours[3] == theirs[3]


@pytest.mark.parametrize("mode", MODES)
def test_double_backward_as_torch(mode):
    case = dict(mode=mode, kw=dict(input_size=2, hidden_size=3, num_layers=2, bidirectional=True, batch_first=True),
                x=np.random.default_rng(3).standard_normal((2, 3, 2)), seed=3)

    def run(lib):
        module = _load(lib, getattr(lib.nn, mode)(**case["kw"]).double(), _parameters(
            getattr(lib.nn, mode)(**case["kw"]), 3))
        x = lib.tensor(case["x"], requires_grad=True)
        out = _flat(module(x))
        (gx,) = lib.autograd.grad(sum((o * o).sum() for o in out), x, create_graph=True)
        return gx, lib.autograd.grad((gx * gx).sum(), [x, *module.parameters()])

    assert_close(run(tg), run(torch), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("mode", MODES + CELLS)
def test_forward_ad_as_torch(mode):
    rng = np.random.default_rng(11)
    shape = (3, 2, 2) if mode in MODES else (2, 2)
    x_val, tangent = rng.standard_normal(shape), rng.standard_normal(shape)

    def run(lib):
        kw = dict(input_size=2, hidden_size=3)
        if mode in MODES:
            kw.update(num_layers=2, bidirectional=mode != "RNN")
        module = getattr(lib.nn, mode)(**kw).double()
        _load(lib, module, _parameters(module, 5))
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            out = _flat(module(fa.make_dual(lib.tensor(x_val), lib.tensor(tangent))))
            return [fa.unpack_dual(o).tangent for o in out]

    assert_close(run(tg), run(torch), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_state_dict_from_torch_module(mode):
    kw = dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True)
    if mode == "LSTM":
        kw["proj_size"] = 2
    torch.manual_seed(0)
    theirs = getattr(torch.nn, mode)(**kw).double()
    ours = getattr(tg.nn, mode)(**kw).double()
    missing = ours.load_state_dict({k: tg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert not missing.missing_keys and not missing.unexpected_keys
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((4, 2, 3))
    assert_close(_flat(ours(tg.tensor(x))), _flat(theirs(torch.tensor(x))), rtol=1e-10, atol=1e-12)


# ---- dropout between layers --------------------------------------------------------------------------------


def test_dropout_between_layers_statistics():
    """Layer 1 passes its (dropped-out) input through unchanged: relu, identity input weights, no recurrence.
    So the output is layer 0's output, each element zeroed with probability p or scaled by 1/(1-p)."""
    p, hidden = 0.3, 6
    rnn = tg.nn.RNN(2, hidden, num_layers=2, nonlinearity="relu", bias=False, dropout=p).double()
    with tg.no_grad():
        rnn.weight_ih_l0.copy_(tg.tensor(np.abs(np.random.default_rng(0).standard_normal((hidden, 2)))))
        rnn.weight_hh_l0.zero_()
        rnn.weight_ih_l1.copy_(tg.eye(hidden, dtype=tg.float64))
        rnn.weight_hh_l1.zero_()
    x = tg.tensor(np.abs(np.random.default_rng(1).standard_normal((50, 40, 2))) + 0.1)
    expected = rnn.eval()(x)[0].detach().numpy()
    tg.manual_seed(123)
    out = rnn.train()(x)[0].detach().numpy()
    ratio = out / expected
    dropped = np.isclose(ratio, 0)
    assert np.allclose(ratio[~dropped], 1 / (1 - p))
    assert abs(dropped.mean() - p) < 0.02
    tg.manual_seed(123)
    assert np.array_equal(rnn(x)[0].detach().numpy(), out)  # the same seed draws the same masks
    assert not np.array_equal(rnn(x)[0].detach().numpy(), out)


@pytest.mark.parametrize("mode", MODES)
def test_dropout_one_as_torch(mode):
    """p = 1 drops everything between layers, deterministically: comparable with torch. In eval mode, and
    after the last layer, nothing is dropped."""
    def run(lib, training):
        module = getattr(lib.nn, mode)(2, 3, num_layers=3, dropout=1.0).double()
        _load(lib, module, _parameters(module, 2))
        module.train(training)
        x = lib.tensor(np.random.default_rng(4).standard_normal((3, 2, 2)), requires_grad=True)
        out = _flat(module(x))
        return out, lib.autograd.grad(sum(o.sum() for o in out), [x, *module.parameters()], allow_unused=True)

    for training in (True, False):
        assert_close(run(tg, training), run(torch, training), rtol=1e-10, atol=1e-12)


# ---- packed sequences --------------------------------------------------------------------------------------


def _run_packed(lib, seed: int):
    rng = np.random.default_rng(seed)
    mode = MODES[seed % 3]
    batch, length = 4, 5
    lengths = [int(v) for v in rng.integers(1, length + 1, batch)]
    lengths[int(rng.integers(batch))] = length
    batch_first = bool(rng.random() < 0.5)
    kw = dict(input_size=2, hidden_size=3, num_layers=2, bidirectional=bool(seed % 2), batch_first=batch_first)
    if mode == "LSTM" and seed % 4 == 2:
        kw["proj_size"] = 2
    module = getattr(lib.nn, mode)(**kw).double()
    _load(lib, module, _parameters(module, seed))
    shape = (batch, length, 2) if batch_first else (length, batch, 2)
    x = lib.tensor(rng.standard_normal(shape), requires_grad=True)
    utils = lib.nn.utils.rnn
    packed = utils.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=False)
    out, hidden = module(packed)
    padded, out_lengths = utils.pad_packed_sequence(out, batch_first=batch_first, padding_value=-1.0,
                                                    total_length=length + 1)
    outs = [padded, *_flat(hidden)]
    grads = lib.autograd.grad(sum((o * (i + 1)).sum() for i, o in enumerate(outs)), [x, *module.parameters()])
    return (packed.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices, out.data, outs,
            out_lengths, grads, recorded_graph([packed.data]), recorded_graph(outs[:1]))


@pytest.mark.parametrize("seed", range(6))
def test_packed_sequence_as_torch(seed):
    ours, theirs = _run_packed(tg, seed), _run_packed(torch, seed)
    assert_close(ours[:8], theirs[:8], rtol=1e-10, atol=1e-12)
    assert ours[8] == theirs[8]
    assert ours[9] == theirs[9]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_and_pack_sequence_as_torch(batch_first, side):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal((n, 2)) for n in (3, 1, 4)]

    def run(lib):
        seqs = [lib.tensor(v, requires_grad=True) for v in values]
        padded = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=2.0, padding_side=side)
        packed = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
        unpacked = lib.nn.utils.rnn.unpack_sequence(packed)
        loss = (padded * padded).sum() + sum((u * (i + 1)).sum() for i, u in enumerate(unpacked))
        return padded, packed.data, unpacked, lib.autograd.grad(loss, seqs), recorded_graph([padded])

    ours, theirs = run(tg), run(torch)
    assert_close(ours[:4], theirs[:4])
    assert ours[4] == theirs[4]


# ---- errors and warnings -----------------------------------------------------------------------------------


def _t(lib, *shape):
    return lib.zeros(*shape)


ERRORS = {
    "cell input size": lambda lib: lib.nn.RNNCell(3, 4)(_t(lib, 2, 5)),
    "cell batch": lambda lib: lib.nn.RNNCell(3, 4)(_t(lib, 2, 3), _t(lib, 3, 4)),
    "cell hidden": lambda lib: lib.nn.GRUCell(3, 4)(_t(lib, 2, 3), _t(lib, 2, 5)),
    "lstm cell c": lambda lib: lib.nn.LSTMCell(3, 4)(_t(lib, 2, 3), (_t(lib, 2, 4), _t(lib, 2, 5))),
    "lstm cell c batch": lambda lib: lib.nn.LSTMCell(3, 4)(_t(lib, 2, 3), (_t(lib, 2, 4), _t(lib, 3, 4))),
    "lstm cell hx dim": lambda lib: lib.nn.LSTMCell(3, 4)(_t(lib, 3), (_t(lib, 4), _t(lib, 1, 1, 4))),
    "cell nonlinearity": lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="foo")(_t(lib, 2, 3)),
    "cell input dim": lambda lib: lib.nn.GRUCell(3, 4)(_t(lib, 2, 3, 3)),
    "cell hidden dim": lambda lib: lib.nn.RNNCell(3, 4)(_t(lib, 3), _t(lib, 2, 2, 4)),
    "input size": lambda lib: lib.nn.RNN(3, 4)(_t(lib, 2, 2, 5)),
    "hx size": lambda lib: lib.nn.GRU(3, 4)(_t(lib, 2, 2, 3), _t(lib, 2, 2, 4)),
    "hx 3-D for 2-D": lambda lib: lib.nn.RNN(3, 4)(_t(lib, 2, 3), _t(lib, 2, 2, 4)),
    "hx 2-D for 3-D": lambda lib: lib.nn.GRU(3, 4)(_t(lib, 2, 2, 3), _t(lib, 2, 4)),
    "input 4-D": lambda lib: lib.nn.RNN(3, 4)(_t(lib, 2, 2, 2, 3)),
    "input 1-D": lambda lib: lib.nn.LSTM(3, 4)(_t(lib, 3)),
    "gru input 1-D": lambda lib: lib.nn.GRU(3, 4)(_t(lib, 3)),
    "empty sequence": lambda lib: lib.nn.RNN(3, 4)(_t(lib, 0, 2, 3)),
    "dtype": lambda lib: lib.nn.RNN(3, 4)(_t(lib, 2, 2, 3).double()),
    "lstm cx size": lambda lib: lib.nn.LSTM(3, 4)(_t(lib, 2, 2, 3), (_t(lib, 1, 2, 4), _t(lib, 1, 2, 5))),
    "lstm proj hx size": lambda lib: lib.nn.LSTM(3, 4, proj_size=2)(_t(lib, 2, 2, 3), (_t(lib, 1, 2, 4),
                                                                                       _t(lib, 1, 2, 4))),
    "lstm hx dims": lambda lib: lib.nn.LSTM(3, 4)(_t(lib, 2, 2, 3), (_t(lib, 1, 2, 4), _t(lib, 2, 4))),
    "lstm unbatched hx dims": lambda lib: lib.nn.LSTM(3, 4)(_t(lib, 2, 3), (_t(lib, 1, 2, 4), _t(lib, 2, 4))),
    "nonlinearity": lambda lib: lib.nn.RNN(3, 4, nonlinearity="foo"),
    "proj for gru": lambda lib: lib.nn.GRU(3, 4, proj_size=2),
    "proj for rnn": lambda lib: lib.nn.RNN(3, 4, proj_size=2),
    "proj too large": lambda lib: lib.nn.LSTM(3, 4, proj_size=4),
    "proj negative": lambda lib: lib.nn.LSTM(3, 4, proj_size=-1),
    "dropout range": lambda lib: lib.nn.LSTM(3, 4, dropout=1.5),
    "dropout bool": lambda lib: lib.nn.GRU(3, 4, dropout=True),
    "bias type": lambda lib: lib.nn.LSTM(3, 4, bias=1),
    "batch_first type": lambda lib: lib.nn.LSTM(3, 4, batch_first=None),
    "input_size type": lambda lib: lib.nn.LSTM(3.0, 4),
    "input_size zero": lambda lib: lib.nn.RNN(0, 4),
    "hidden_size zero": lambda lib: lib.nn.GRU(3, 0),
    "num_layers zero": lambda lib: lib.nn.LSTM(3, 4, 0),
    "positional nonlinearity": lambda lib: lib.nn.RNN(3, 4, 2, "relu")(_t(lib, 2, 1, 3)),
    "pack unsorted": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(_t(lib, 3, 2, 1), [1, 3]),
    "pack zero length": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(_t(lib, 3, 2, 1), [3, 0]),
    "pack lengths count": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(_t(lib, 3, 2, 1), [3, 2, 1]),
    "pad total length": lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_padded_sequence(_t(lib, 3, 2, 1), [3, 2]), total_length=2),
    "pad_sequence empty": lambda lib: lib.nn.utils.rnn.pad_sequence([]),
    "pad_sequence side": lambda lib: lib.nn.utils.rnn.pad_sequence([_t(lib, 2)], padding_side="up"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    assert raised(tg, ERRORS[name]) == raised(torch, ERRORS[name])


@pytest.mark.parametrize("mode", MODES)
def test_dropout_warning_as_torch(mode):
    def warned(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(lib.nn, mode)(3, 4, dropout=0.5)
            getattr(lib.nn, mode)(3, 4, num_layers=2, dropout=0.5)
        return [(w.category.__name__, str(w.message)) for w in caught]

    ours = warned(tg)
    assert ours == warned(torch)
    assert len(ours) == 1 and ours[0][1].startswith("dropout option adds dropout after all but last recurrent layer")


# ---- parameters, repr ----------------------------------------------------------------------------------------

CONFIGS = [
    ("RNN", (3, 4), {}),
    ("RNN", (3, 4, 2), dict(nonlinearity="relu", bias=False, batch_first=True, dropout=0.25, bidirectional=True)),
    ("GRU", (3, 4), dict(num_layers=3, bidirectional=True)),
    ("LSTM", (3, 4), dict(num_layers=2, proj_size=2, bidirectional=True)),
    ("LSTM", (3, 4), dict(proj_size=1, bias=False)),
    ("RNNCell", (3, 4), dict(bias=False, nonlinearity="relu")),
    ("LSTMCell", (3, 4), {}),
    ("GRUCell", (2, 5), dict(bias=False)),
]


@pytest.mark.parametrize("config", range(len(CONFIGS)))
def test_parameters_and_repr_as_torch(config):
    name, args, kw = CONFIGS[config]

    def describe(lib):
        module = getattr(lib.nn, name)(*args, **kw)
        module.flatten_parameters() if hasattr(module, "flatten_parameters") else None
        shapes = [(n, tuple(p.shape)) for n, p in module.named_parameters()]
        info = [repr(module), shapes, list(module.state_dict())]
        if not name.endswith("Cell"):
            info += [module._flat_weights_names, module._all_weights,
                     [[tuple(w.shape) for w in ws] for ws in module.all_weights],
                     [tuple(w.shape) for w in module._flat_weights]]
        return info

    assert describe(tg) == describe(torch)


@pytest.mark.parametrize("config", range(len(CONFIGS)))
def test_initialisation_uniform(config):
    """Every parameter from U(-1/sqrt(hidden), 1/sqrt(hidden)), drawn from tracegrad's generator."""
    name, args, kw = CONFIGS[config]
    tg.manual_seed(0)
    module = getattr(tg.nn, name)(*args, **kw)
    values = np.concatenate([p.detach().numpy().ravel() for p in module.parameters()])
    bound = 1 / np.sqrt(args[1])
    assert np.all(np.abs(values) <= bound) and values.std() > bound / 4
    tg.manual_seed(0)
    again = getattr(tg.nn, name)(*args, **kw)
    assert all(np.array_equal(a.detach().numpy(), b.detach().numpy()) for a, b in zip(module.parameters(), again.parameters()))


def test_reassigned_parameter_is_used():
    """``_flat_weights`` follows the module's attributes (torch refreshes it in ``__setattr__``)."""
    rnn = tg.nn.RNN(2, 3).double()
    rnn.weight_hh_l0 = tg.nn.Parameter(tg.zeros(3, 3, dtype=tg.float64))
    assert rnn._flat_weights[1] is rnn.weight_hh_l0
    x = tg.randn(4, 1, 2, dtype=tg.float64)
    out, _ = rnn(x)
    expected = tg.tanh(x @ rnn.weight_ih_l0.T + rnn.bias_ih_l0 + rnn.bias_hh_l0)
    assert np.allclose(out.detach().numpy(), expected.detach().numpy())


def test_functional_networks_as_torch():
    """torch.lstm / gru / rnn_tanh / rnn_relu, padded and packed overloads: values, gradients and graphs."""
    def program(lib):
        rng = np.random.default_rng(0)
        x = lib.tensor(rng.standard_normal((3, 2, 4)), requires_grad=True)
        h = lib.tensor(rng.standard_normal((1, 2, 5)), requires_grad=True)
        c = lib.zeros(1, 2, 5, dtype=lib.float64)
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, [3, 2])

        def weights(gates: int) -> list:
            return [lib.tensor(rng.standard_normal(s), requires_grad=True)
                    for s in [(gates * 5, 4), (gates * 5, 5), (gates * 5,), (gates * 5,)]]

        w4, w3, w1 = weights(4), weights(3), weights(1)
        outs = [*lib.lstm(x, (h, c), w4, True, 1, 0.0, False, False, False),
                *lib.lstm(packed.data, packed.batch_sizes, (h, c), w4, True, 1, 0.0, False, False),
                *lib.gru(x, h, w3, True, 1, 0.0, False, False, False),
                *lib.rnn_tanh(x, h, w1, True, 1, 0.0, False, False, False),
                *lib.rnn_relu(packed.data, packed.batch_sizes, h, w1[:2], False, 1, 0.0, False, False)]
        grads = lib.autograd.grad(sum(o.sum() for o in outs), [x, h, *w4, *w3, *w1], allow_unused=True)
        return outs, grads, recorded_graph(outs)

    ours, theirs = program(tg), program(torch)
    assert_close(ours[:2], theirs[:2])
    assert ours[2] == theirs[2]


def test_set_anomaly_enabled_as_torch():
    for lib in (tg, torch):
        try:
            lib.set_anomaly_enabled(True, False)
            assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (True, False)
        finally:
            lib.set_anomaly_enabled(False)
        assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (False, True)
