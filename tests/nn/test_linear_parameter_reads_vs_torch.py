"""nn.Linear's forward reads the weight and bias ``self.weight`` and ``self.bias`` find, whatever holds them.

A plain Linear reads them from its parameter dict directly (a fast path past Module.__getattr__); every other case
(the parameters replaced, deleted, shadowed in the instance dict, parametrized, or a subclass defining them) must
read what torch's ``self.weight`` reads, with torch's values, gradients and errors.
"""

from __future__ import annotations

import pytest
from _lib import assert_close, np, raised, tg, torch

_W = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
_B = np.array([0.5, -0.25, 0.125], np.float32)
_X = np.linspace(-2, 3, 8, dtype=np.float32).reshape(2, 4)


def _linear(lib, bias: bool = True):
    lin = lib.nn.Linear(4, 3, bias=bias)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(_W))
        if bias:
            lin.bias.copy_(lib.tensor(_B))
    return lin


def _forward_backward(lib, lin):
    x = lib.tensor(_X, requires_grad=True)
    out = lin(x)
    out.pow(2).sum().backward()
    return out, x.grad


def _compare(program) -> None:
    """The results agree: the same tensors were read (the small products of BLAS may differ in a last bit)."""
    ours, theirs = program(tg), program(torch)
    for a, b in zip(ours, theirs, strict=True):
        if a is None or b is None:
            assert a is None and b is None
        else:
            assert_close(a, b)


def test_plain_linear_values_and_gradients():
    def program(lib):
        lin = _linear(lib)
        out, gx = _forward_backward(lib, lin)
        return out, gx, lin.weight.grad, lin.bias.grad

    _compare(program)


def test_without_bias_and_bias_set_to_none():
    def program(lib):
        lin = _linear(lib, bias=False)
        later = _linear(lib)
        later.bias = None  # (a parameter's name set to None: the dict holds None)
        return (*_forward_backward(lib, lin), lin.weight.grad, *_forward_backward(lib, later), later.weight.grad)

    _compare(program)


def test_weight_replaced_by_a_plain_tensor_attribute():
    # (the old weight_norm's way: the parameter deleted, a computed tensor set as a plain attribute)
    def program(lib):
        lin = _linear(lib)
        del lin.weight
        base = lib.tensor(_W, requires_grad=True)
        lin.weight = base * 2
        out, gx = _forward_backward(lib, lin)
        return out, gx, base.grad

    _compare(program)


def test_weight_shadowed_in_the_instance_dict():
    def program(lib):
        lin = _linear(lib)
        object.__setattr__(lin, "weight", lib.tensor(_W) * -1)  # (self.weight finds this first)
        object.__setattr__(lin, "bias", lib.tensor(_B) + 1)
        out, gx = _forward_backward(lib, lin)
        return out, gx, lin._parameters["weight"].grad

    _compare(program)


def test_parametrized_weight():
    def program(lib):
        class Doubled(lib.nn.Module):
            def forward(self, w):
                return w * 2

        lin = _linear(lib)
        lib.nn.utils.parametrize.register_parametrization(lin, "weight", Doubled())
        out, gx = _forward_backward(lib, lin)
        return out, gx, lin.parametrizations.weight.original.grad

    _compare(program)


def test_subclass_defining_its_weight():
    def program(lib):
        class Scaled(lib.nn.Linear):
            @property
            def weight(self):  # (until "raw" exists, Module.__getattr__ finds the registered weight)
                if "raw" not in self._parameters:
                    raise AttributeError("weight")
                return self._parameters["raw"] * 3

        lin = Scaled(4, 3)
        lin.register_parameter("raw", lib.nn.Parameter(lib.tensor(_W)))
        with lib.no_grad():
            lin.bias.copy_(lib.tensor(_B))
        out, gx = _forward_backward(lib, lin)
        return out, gx, lin.raw.grad

    _compare(program)


@pytest.mark.parametrize("name", ["weight", "bias"])
def test_deleted_parameter_error(name):
    def program(lib):
        lin = _linear(lib)
        delattr(lin, name)
        return lin(lib.tensor(_X))

    assert raised(tg, program) == raised(torch, program)
    assert raised(tg, program) is not None
