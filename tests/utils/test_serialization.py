"""``save``/``load``: checkpoints round-trip; weights-only loading refuses other objects in torch's words."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
import torch

import tracegrad as tg


def _round_trip(obj, **load_kwargs):
    buffer = io.BytesIO()
    tg.save(obj, buffer)
    buffer.seek(0)
    return tg.load(buffer, **load_kwargs)


def test_tensors_and_parameters_round_trip():
    x = tg.randn(3, 2, dtype=tg.float64)
    p = tg.nn.Parameter(tg.randn(4))
    loaded = _round_trip({"x": x, "p": p, "ints": tg.arange(5), "list": [x, 1, 2.5, "s"], "none": None})
    np.testing.assert_array_equal(loaded["x"].numpy(), x.numpy())
    assert loaded["x"].dtype == tg.float64 and not loaded["x"].requires_grad and loaded["x"].is_leaf
    assert isinstance(loaded["p"], tg.nn.Parameter) and loaded["p"].requires_grad
    np.testing.assert_array_equal(loaded["p"].detach().numpy(), p.detach().numpy())
    assert loaded["ints"].dtype == tg.int64 and loaded["list"][1:] == [1, 2.5, "s"] and loaded["none"] is None


def test_model_and_optimizer_checkpoint(tmp_path):
    """The tutorial checkpoint: save both state dicts to a path, load them into fresh objects, same outputs."""
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2), tg.nn.BatchNorm1d(2))
    opt = tg.optim.Adam(model.parameters(), lr=0.01)
    x = tg.randn(5, 3)
    model(x).sum().backward()
    opt.step()
    path = tmp_path / "checkpoint.pt"
    tg.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}, path)

    fresh = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2), tg.nn.BatchNorm1d(2))
    fresh_opt = tg.optim.Adam(fresh.parameters(), lr=0.01)
    checkpoint = tg.load(str(path))
    fresh.load_state_dict(checkpoint["model"])
    fresh_opt.load_state_dict(checkpoint["optimizer"])
    model.eval()
    fresh.eval()
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())
    assert checkpoint["epoch"] == 3
    assert fresh_opt.state_dict()["state"].keys() == opt.state_dict()["state"].keys()


class Custom:
    pass


def test_weights_only_refuses_other_objects_as_torch_does():
    def message(lib):
        buffer = io.BytesIO()
        lib.save({"a": Custom()}, buffer)
        buffer.seek(0)
        with pytest.raises(pickle.UnpicklingError) as info:
            lib.load(buffer)
        return str(info.value)

    ours, theirs = message(tg), message(torch)
    sentence = "Unsupported global: GLOBAL test_serialization.Custom was not an allowed global by default."
    assert sentence in ours and sentence in theirs
    assert ours.split("WeightsUnpickler error: ")[1] == theirs.split("WeightsUnpickler error: ")[1]


def test_safe_globals_and_weights_only_false():
    buffer = io.BytesIO()
    tg.save([Custom()], buffer)
    for allow in (lambda: tg.serialization.safe_globals([Custom]), None):
        buffer.seek(0)
        if allow is None:
            assert isinstance(tg.load(buffer, weights_only=False)[0], Custom)
        else:
            with allow():
                assert isinstance(tg.load(buffer)[0], Custom)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError):  # the allowance ended with the block
        tg.load(buffer)


def test_map_location_cpu_and_unsupported_device():
    x = tg.ones(2)
    assert _round_trip(x, map_location="cpu").tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="deserialize object on a CUDA device"):  # (torch's words, no GPU)
        _round_trip(x, map_location="cuda")
