"""Review of the public names (``_public_names``): public functions, operators and Tensor methods pickle and copy as
torch's, held by a module, a container or a bound method, and (not yet) while the ``__torch_function__`` protocol
is live."""

from __future__ import annotations

import copy
import io
import pickle

import pytest
from _lib import tg, torch

# functions held by user objects: (label, the function of lib)
_HELD = {
    "torch.arccos": lambda lib: lib.arccos, "torch.sin": lambda lib: lib.sin, "torch.clip": lambda lib: lib.clip,
    "torch.concat": lambda lib: lib.concat, "torch.relu": lambda lib: lib.relu,
    "F.relu": lambda lib: lib.nn.functional.relu, "F.logsigmoid": lambda lib: lib.nn.functional.logsigmoid,
    "F.threshold": lambda lib: lib.nn.functional.threshold, "linalg.norm": lambda lib: lib.linalg.norm,
    "special.expit": lambda lib: lib.special.expit, "Tensor.view": lambda lib: lib.Tensor.view,
    "Tensor.float": lambda lib: lib.Tensor.float,
}


def _round_trips(lib, held: dict) -> dict:
    """Whether each function comes back as itself from pickle, deepcopy and torch.save (in a Module's attribute)."""
    found = {}
    for label, function_of in held.items():
        f = function_of(lib)
        module = lib.nn.Module()
        module.act = f
        buffer = io.BytesIO()
        lib.save({"module": module}, buffer)
        buffer.seek(0)
        saved = lib.load(buffer, weights_only=False)["module"].act
        found[label] = (pickle.loads(pickle.dumps(f)) is f, copy.deepcopy(f) is f, copy.copy(f) is f, saved is f)
    return found


def test_functions_held_by_modules_pickle_copy_and_save_as_themselves():
    assert _round_trips(tg, _HELD) == _round_trips(torch, _HELD)


def test_bound_methods_pickle_and_call():
    def program(lib):
        x = lib.arange(6.0, requires_grad=True)
        view, add = pickle.loads(pickle.dumps((x.view, x.add)))
        y = view(2, 3)
        return tuple(y.shape), type(y.grad_fn).__name__, add(1).tolist(), copy.deepcopy(x.float)().dtype is not None

    assert program(tg) == program(torch)


def _pickled_under_a_mode(lib) -> dict:
    class Passing(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    captured = {label: function_of(lib) for label, function_of in _HELD.items()}
    found = {}
    with Passing():
        for label, function_of in _HELD.items():
            for when, f in (("captured before", captured[label]), ("read inside", function_of(lib))):
                try:
                    found[label, when] = pickle.loads(pickle.dumps(f)) is f
                except Exception as exc:  # noqa: BLE001 - whether it pickles is the outcome compared
                    found[label, when] = type(exc).__name__
    return found


@pytest.mark.xfail(strict=True, reason=(
    "while the protocol is live (a TorchFunctionMode, or any user Tensor subclass with __torch_function__ "
    "defined and not yet collected) the namespaces hold routing wrappers named as torch's "
    "(torch/_VariableFunctionsClass.arccos), which pickle cannot find, and the functions captured before "
    "(tracegrad.arccos) are not the object their name finds then: 'PicklingError: ... not the same object'. "
    "Operators (torch.sin) pickle by __reduce_ex__ and are unaffected"))
def test_functions_pickle_while_a_mode_is_active():
    assert _pickled_under_a_mode(tg) == _pickled_under_a_mode(torch)
