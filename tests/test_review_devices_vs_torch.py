"""Devices tracegrad has no tensors for, against torch's CPU build.

The meta device: torch makes tensors without data there; tracegrad cannot, and gave CPU tensors instead, silently
(``torch.empty(2, device="meta")``, ``with torch.device("meta"):``, ``.to("meta")``, a module built or moved
there). Every such use now raises a NotImplementedError naming the limitation. ``torch.device("meta")`` itself
is still an ordinary device object (foreach support checks and fork_rng take one).

Other devices: ``xpu``, ``mtia``, ``hpu`` and ``privateuseone`` are refused in torch's words (an AssertionError, or
torch's ModuleNotFoundError), for factories and moves alike; ``Module.to(d)`` refuses what ``Tensor.to(d)``
refuses (it moved nothing and kept CPU tensors, silently).
"""

from __future__ import annotations

import pytest
from _lib import raised, torch

import tracegrad as tg

META_USES = {
    "empty": lambda L: L.empty(2, device="meta"),
    "zeros of a device object": lambda L: L.zeros(2, device=L.device("meta")),
    "tensor": lambda L: L.tensor([1.0], device="meta"),
    "rand": lambda L: L.rand(2, device="meta"),
    "as_tensor of a tensor": lambda L: L.as_tensor(L.ones(1), device="meta"),
    "zeros_like": lambda L: L.zeros_like(L.ones(1), device="meta"),
    "new_empty": lambda L: L.ones(1).new_empty(2, device="meta"),
    "Tensor.to": lambda L: L.ones(1).to("meta"),
    "Tensor.to(device=)": lambda L: L.ones(1).to(device="meta:0"),
    "Module.to": lambda L: L.nn.Linear(1, 1).to("meta"),
    "a module built there": lambda L: L.nn.Linear(1, 1, device="meta"),
    "normal": lambda L: L.normal(0.0, 1.0, (2,), device="meta"),
}


def _in_meta_block(lib) -> None:
    with lib.device("meta"):
        lib.nn.Linear(1, 1)


def _meta_default(lib) -> None:
    lib.set_default_device("meta")
    try:
        lib.zeros(2)
    finally:
        lib.set_default_device(None)


@pytest.mark.parametrize("use", [*META_USES, "a with block", "set_default_device"])
def test_every_use_of_the_meta_device_is_refused_where_torch_makes_a_meta_tensor(use):
    program = {"a with block": _in_meta_block, "set_default_device": _meta_default}.get(use) or META_USES[use]
    assert raised(torch, program) is None
    kind, message = raised(tg, program)
    assert kind == "NotImplementedError" and message.startswith("tracegrad has no 'meta' device: ")
    assert tg.zeros(1).device == tg.device("cpu")  # (a refused block or default leaves the CPU the default)


def test_a_meta_device_object_is_still_a_device():
    def program(lib):
        d = lib.device("meta")
        return str(d), d.type, d.index, d == lib.device("meta")

    assert program(tg) == program(torch)


OTHER_DEVICES = ["xpu", "mtia", "hpu", "privateuseone", "mps", "cuda"]
USES = {
    "empty": lambda d: lambda L: L.empty(2, device=d),
    "zeros_like": lambda d: lambda L: L.zeros_like(L.ones(1), device=d),
    "Tensor.to": lambda d: lambda L: L.ones(1).to(d),
    "Module.to": lambda d: lambda L: L.nn.Linear(1, 1).to(d),
    "nn.Linear(device=)": lambda d: lambda L: L.nn.Linear(1, 1, device=d),
}


# torch's NotImplementedError names the ATen operator that found no kernel; tracegrad's names aten::empty always
PENDING = {("mps", "zeros_like"): "torch's *_like factories fail in 'aten::empty_strided'"}


def _readable(error: tuple | None) -> tuple | None:
    """The error without the list of C++ registrations torch's dispatcher appends."""
    return error and (error[0], error[1].split(" for possible resolutions.")[0])


@pytest.mark.parametrize("use", USES)
@pytest.mark.parametrize("device", OTHER_DEVICES)
def test_devices_without_a_backend_are_refused_as_torch_refuses_them(device, use):
    program = USES[use](device)
    ours, theirs = _readable(raised(tg, program)), _readable(raised(torch, program))
    if (device, use) in PENDING:
        assert ours != theirs
        pytest.xfail(PENDING[device, use])
    assert ours == theirs


def test_a_module_without_tensors_moves_anywhere_as_in_torch():
    assert raised(tg, lambda L: L.nn.ReLU().to("mps")) is raised(torch, lambda L: L.nn.ReLU().to("mps")) is None
