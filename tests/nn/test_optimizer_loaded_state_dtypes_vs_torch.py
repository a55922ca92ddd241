"""Optimizer state of another dtype than its parameter's, after load_state_dict, as PyTorch meets it at the next step.
load_state_dict casts the state (``step`` aside) to the dtype of a floating parameter only: loaded for a complex
parameter, real state stays real and the update's ``view_as_real`` refuses it ("view_as_real is only supported for
complex tensors"; SGD's momentum buffer, which is not viewed so: "result type ComplexFloat can't be cast to the
desired output type Float"), and complex64 state stays complex64 for complex128 parameters, which the foreach
update's grouping refuses ("Tensors of the same index must be on the same device and the same dtype except `step`
tensors..."; float32 and float64 entries pass it whatever the parameter's dtype). Before, tracegrad ran the update
on mismatched shapes or dtypes (a shape error, NumPy's casting TypeError, lerp's dtype error, or an update)."""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch

OPTIMIZERS = {
    "SGD": {"lr": 0.1, "momentum": 0.9}, "Adam": {"lr": 0.1}, "AdamW amsgrad": {"lr": 0.1, "amsgrad": True},
    "RMSprop": {"lr": 0.1, "momentum": 0.5, "centered": True}, "Adagrad": {"lr": 0.1}, "Adadelta": {"lr": 0.1},
    "Adamax": {"lr": 0.1}, "NAdam": {"lr": 0.1}, "RAdam": {"lr": 0.1}, "ASGD": {"lr": 0.1}, "Rprop": {"lr": 0.1},
}

# (dtype of the parameters the state was saved from, dtype of the parameters it is loaded for)
LOADS = [("float32", "complex64"), ("float64", "complex64"), ("complex64", "complex128"), ("complex128", "complex64"),
         ("float32", "float64"), ("complex64", "float32")]


def _outcome(lib, name: str, saved: str, loaded: str, foreach: bool) -> tuple:
    """The step's error (or the parameter after it) and the state's dtypes and step counts afterwards."""
    cls = getattr(lib.optim, name.split()[0])
    options = {**OPTIMIZERS[name], "foreach": foreach}
    source = lib.full((3,), 0.5, dtype=getattr(lib, saved), requires_grad=True)
    first = cls([source], **options)
    source.grad = lib.ones_like(source)
    first.step()
    param = lib.full((3,), 0.25, dtype=getattr(lib, loaded), requires_grad=True)
    second = cls([param], **options)
    second.load_state_dict(first.state_dict())
    param.grad = lib.ones_like(param)
    try:
        second.step()
        result = repr(param.detach().tolist())
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        result = (type(exc).__name__, str(exc))
    state = {key: (str(value.dtype).replace("tracegrad", "torch"), value.tolist() if value.dim() == 0 else None)
             for key, value in second.state[param].items() if isinstance(value, lib.Tensor)}
    return result, state


@pytest.mark.parametrize("foreach", [False, True], ids=["single", "foreach"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_loaded_state_of_another_dtype_met_as_torch(name, foreach):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a complex parameter's state read into a real one warns, in both)
        mismatches = [f"{saved} -> {loaded}: tracegrad {ours}, torch {theirs}" for saved, loaded in LOADS
                      if (ours := _outcome(tg, name, saved, loaded, foreach))
                      != (theirs := _outcome(torch, name, saved, loaded, foreach))]
    assert not mismatches
