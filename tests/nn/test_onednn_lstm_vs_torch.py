"""A float32 nn.LSTM as torch's CPU build runs it: oneDNN's fused ``mkldnn_rnn_layer``, one
``MkldnnRnnLayerBackward0`` node per layer and direction. Random configurations (layers, directions, bias, batch
first, unbatched input, initial states) run on tracegrad and torch and must give the same graph (node names and
edges), outputs and gradients to float32 precision, the same double-backward graph and second derivatives, the
same saved attributes, and torch's refusal of forward AD. Projections, packed input and disabled oneDNN take the
composed path with torch's warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_close, raised, recorded_graph, tg, torch

TOL = dict(rtol=2e-4, atol=2e-5)


def _config(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return dict(layers=int(rng.integers(1, 3)), bidirectional=bool(rng.integers(2)), bias=bool(rng.random() < 0.8),
                batch_first=bool(rng.integers(2)), unbatched=bool(rng.random() < 0.2),
                with_states=bool(rng.integers(2)), length=int(rng.integers(1, 4)), batch=int(rng.integers(1, 3)),
                input_size=int(rng.integers(1, 4)), hidden=int(rng.integers(2, 5)), seed=seed)


def _build(lib, cfg: dict):
    rng = np.random.default_rng(cfg["seed"] + 100)
    module = lib.nn.LSTM(cfg["input_size"], cfg["hidden"], num_layers=cfg["layers"], bias=cfg["bias"],
                         batch_first=cfg["batch_first"], bidirectional=cfg["bidirectional"])
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.uniform(-0.6, 0.6, tuple(p.shape)).astype(np.float32)))
    seq_batch = (cfg["length"],) if cfg["unbatched"] else (
        (cfg["batch"], cfg["length"]) if cfg["batch_first"] else (cfg["length"], cfg["batch"]))
    x = lib.tensor(rng.standard_normal(seq_batch + (cfg["input_size"],)).astype(np.float32), requires_grad=True)
    leaves = [x, *module.parameters()]
    args: tuple = (x,)
    if cfg["with_states"]:
        n = cfg["layers"] * (2 if cfg["bidirectional"] else 1)
        shape = (n, cfg["hidden"]) if cfg["unbatched"] else (n, cfg["batch"], cfg["hidden"])
        states = tuple(lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
                       for _ in range(2))
        leaves += list(states)
        args = (x, states)
    return module, args, leaves


def _first_and_second_order(lib, cfg: dict) -> tuple:
    module, args, leaves = _build(lib, cfg)
    out, (h, c) = module(*args)
    graph = recorded_graph([out, h, c])
    loss = (out * out).sum() + (h * 2).sum() + c.sum()
    grads = lib.autograd.grad(loss, leaves, create_graph=True)
    second_graph = recorded_graph([grads[0]])
    second = lib.autograd.grad(sum(g.sum() for g in grads[:2]), leaves, allow_unused=True)
    return graph, [out, h, c], list(grads), second_graph, list(second)


@pytest.mark.parametrize("seed", range(16))
def test_float32_lstm_as_torch(seed):
    cfg = _config(seed)
    ours, theirs = _first_and_second_order(tg, cfg), _first_and_second_order(torch, cfg)
    assert ours[0] == theirs[0]
    assert "MkldnnRnnLayerBackward0" in {name for name, _ in ours[0]}
    assert_close(ours[1], theirs[1], **TOL)
    assert_close(ours[2], theirs[2], **TOL)
    assert ours[3] == theirs[3]
    assert_close(ours[4], theirs[4], rtol=1e-3, atol=1e-4)


def _saved(lib):
    module, args, _ = _build(lib, dict(_config(3), layers=1, bidirectional=False, unbatched=False, bias=False))
    node = module(*args)[0].grad_fn
    names = sorted(n for n in dir(node) if n.startswith("_saved"))
    values = {n: getattr(node, n) for n in names if n != "_saved_result3"}
    return names, values, node._saved_result3.dtype


def test_saved_values_as_torch():
    """Everything the node saves, but the size of oneDNN's opaque workspace (uint8 in both)."""
    (names, ours, ws), (their_names, theirs, their_ws) = _saved(tg), _saved(torch)
    assert names == their_names and str(ws) == str(their_ws)
    for name in names:
        if name == "_saved_result3":
            continue
        a, b = ours[name], theirs[name]
        if isinstance(b, torch.Tensor):
            assert tuple(a.shape) == tuple(b.shape)
            assert_close(a, b, **TOL)
        else:
            assert a == b, name


def test_forward_ad_is_refused_as_torch():
    def program(lib):
        module, args, _ = _build(lib, _config(1))
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(args[0].detach(), lib.ones_like(args[0]))
            module(dual)

    assert raised(tg, program) == raised(torch, program) is not None


def _graph_names(lib, **kwargs) -> tuple:
    lib.manual_seed(0)
    module = lib.nn.LSTM(3, 4, **kwargs)
    x = lib.ones(5, 2, 3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = module(x)[0]
    return {name for name, _ in recorded_graph([out])}, [str(w.message).split(" (Triggered")[0] for w in caught]


def test_projections_take_the_composed_path_with_torchs_warning():
    (ours, our_warnings), (theirs, their_warnings) = _graph_names(tg, proj_size=2), _graph_names(torch, proj_size=2)
    assert "MkldnnRnnLayerBackward0" not in ours and "MkldnnRnnLayerBackward0" not in theirs
    assert set(our_warnings) <= {"LSTM with projections is not supported with oneDNN. Using default implementation."}
    assert set(our_warnings) == set(their_warnings) or not our_warnings  # (once per process in both)


def test_float64_and_packed_input_take_the_composed_path():
    for lib in (tg, torch):
        module = lib.nn.LSTM(3, 4)
        x = lib.ones(5, 2, 3, requires_grad=True)
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, [5, 3])
        assert module(packed)[0].data.grad_fn.name() != "MkldnnRnnLayerBackward0"
        assert module.double()(x.double())[0].grad_fn.name() != "MkldnnRnnLayerBackward0"


def test_disabled_onednn_takes_the_composed_path_as_torch():
    def program(lib):
        module = lib.nn.LSTM(2, 3)
        x = lib.ones(4, 1, 2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch warns that oneDNN TF32 needs an Intel GPU)
            with lib.backends.mkldnn.flags(enabled=False):
                inside = (module(x)[0].grad_fn.name(), lib.backends.mkldnn.enabled)
        return inside, module(x)[0].grad_fn.name(), lib.backends.mkldnn.enabled

    assert program(tg) == program(torch) == (("StackBackward0", False), "MkldnnRnnLayerBackward0", True)
