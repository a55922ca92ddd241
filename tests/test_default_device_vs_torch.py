"""The default device of factory calls against torch: ``with torch.device(d):`` (torch 2.x's context manager) and
``set_default_device(d)``. For "cpu" every factory makes CPU tensors; for "cuda" on a machine without CUDA the
factories torch routes through the default device (zeros, tensor, rand, arange, nn.Linear's parameters, ...)
raise torch's "Torch not compiled with CUDA enabled", while the others (normal, range, from_numpy, *_like, new_*,
operators) still make CPU tensors. Leaving the block restores the outer default, also on an exception."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import run_both

import tracegrad as tg

FACTORY_CALLS = {
    "zeros": lambda L, x: L.zeros(2),
    "ones": lambda L, x: L.ones(2),
    "empty": lambda L, x: L.empty(2),
    "full": lambda L, x: L.full((1,), 2.0),
    "tensor": lambda L, x: L.tensor([1.0]),
    "as_tensor of a list": lambda L, x: L.as_tensor([1.0]),
    "as_tensor of a tensor": lambda L, x: L.as_tensor(x),
    "asarray": lambda L, x: L.asarray([1.0]),
    "scalar_tensor": lambda L, x: L.scalar_tensor(1),
    "arange": lambda L, x: L.arange(3),
    "linspace": lambda L, x: L.linspace(0, 1, 3),
    "logspace": lambda L, x: L.logspace(0, 1, 2),
    "eye": lambda L, x: L.eye(2),
    "empty_strided": lambda L, x: L.empty_strided((2,), (1,)),
    "rand": lambda L, x: L.rand(2),
    "randn": lambda L, x: L.randn(2),
    "randint": lambda L, x: L.randint(0, 3, (2,)),
    "randperm": lambda L, x: L.randperm(3),
    "hann_window": lambda L, x: L.hann_window(3),
    "fft.fftfreq": lambda L, x: L.fft.fftfreq(3),
    "tril_indices": lambda L, x: L.tril_indices(2, 2),
    "nn.Linear": lambda L, x: L.nn.Linear(2, 2).weight,
    "an explicit cpu device": lambda L, x: L.zeros(2, device="cpu"),
    "normal": lambda L, x: L.normal(0.0, 1.0, (2,)),
    "range": lambda L, x: L.range(0, 2),
    "from_numpy": lambda L, x: L.from_numpy(np.ones(2)),
    "zeros_like": lambda L, x: L.zeros_like(x),
    "new_zeros": lambda L, x: x.new_zeros(2),
    "an operator": lambda L, x: x + 1,
    "bernoulli": lambda L, x: L.bernoulli(x * 0.5),
}

DEFAULTS = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    tg.cuda.is_available(), reason="with CUDA, tracegrad refuses a cuda default device"))]


def _where(lib, call: str, x) -> str:
    """The device of what the call makes (``x``: a CPU tensor made outside the block), or the error it raises."""
    try:
        return str(FACTORY_CALLS[call](lib, x).device)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return f"{type(e).__name__}: {e}"


@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
@pytest.mark.parametrize("default", DEFAULTS)
@pytest.mark.parametrize("call", FACTORY_CALLS)
def test_factories_inside_a_device_block_match_torch(call, default):
    def program(lib):
        x = lib.ones(2)
        with lib.device(default) as entered:
            inside = _where(lib, call, x)
        return str(entered), inside, _where(lib, call, x)

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
@pytest.mark.parametrize("default", DEFAULTS)
@pytest.mark.parametrize("call", ["zeros", "tensor", "nn.Linear", "normal"])
def test_factories_after_set_default_device_match_torch(call, default):
    def program(lib):
        x = lib.ones(2)
        lib.set_default_device(default)
        try:
            return _where(lib, call, x)
        finally:
            lib.set_default_device(None)

    ours, theirs = run_both(program)
    assert ours == theirs


def _default(lib) -> str:
    try:
        return repr(lib.get_default_device())
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return f"{type(e).__name__}: {e}"


@pytest.mark.skipif(tg.cuda.is_available(), reason="with CUDA, tracegrad refuses a cuda default device")
def test_device_blocks_nest_and_restore_the_outer_default_even_on_an_exception():
    def program(lib):
        x = lib.ones(2)
        seen = [_default(lib)]
        with lib.device("cuda"):
            seen.append(_default(lib))
            with lib.device("cpu"):
                seen += [_default(lib), _where(lib, "zeros", x)]
            seen.append(_where(lib, "zeros", x))
        try:
            with lib.device("cuda"):
                raise KeyError("inside")
        except KeyError:
            seen += [_default(lib), _where(lib, "zeros", x)]
        lib.set_default_device("cpu")
        seen.append(_default(lib))
        lib.set_default_device(None)
        return seen

    ours, theirs = run_both(program)
    assert ours == theirs
