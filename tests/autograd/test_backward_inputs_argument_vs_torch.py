"""The ``inputs=`` argument of ``backward()`` and ``autograd.grad()`` read as torch reads it (compared with torch).

torch takes one Tensor or GradientEdge, a dict's values (a dict given to ``backward`` too, not only to
``grad``), or any other iterable through ``tuple()``; its engine then judges each entry in turn and names a
wrong one's type as CPython's ``tp_name`` does (``numpy.float64``, ``str``). tracegrad iterated a dict's keys,
read ``None`` as "empty", and raised its own TypeError.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from _lib import raised, run_both


def _setup(lib):
    x = lib.randn(2, requires_grad=True)
    return x, (x * 2).sum()


CALLS = {
    "backward, a dict": lambda lib, x, y: (y.backward(inputs={"a": x}), x.grad.tolist())[1],
    "backward, an OrderedDict": lambda lib, x, y: y.backward(inputs=OrderedDict(a=x)),
    "backward, a string in a list": lambda lib, x, y: y.backward(inputs=["a"]),
    "backward, an int": lambda lib, x, y: y.backward(inputs=3),
    "backward, an empty list": lambda lib, x, y: y.backward(inputs=[]),
    "autograd.backward, None in a list": lambda lib, x, y: lib.autograd.backward(y, inputs=[x, None]),
    "grad, None": lambda lib, x, y: lib.autograd.grad(y, None),
    "grad, a NumPy scalar": lambda lib, x, y: lib.autograd.grad(y, [x, np.float64(1)]),
    "grad, a NumPy array": lambda lib, x, y: lib.autograd.grad(y, [np.ones(2)]),
    "grad, an object": lambda lib, x, y: lib.autograd.grad(y, [object()]),
    "grad, a dtype": lambda lib, x, y: lib.autograd.grad(y, [lib.float32]),
    "grad, a tensor without grad, then a string": lambda lib, x, y: lib.autograd.grad(y, [lib.ones(2), "a"]),
    "grad, a string, then a tensor without grad": lambda lib, x, y: lib.autograd.grad(y, ["a", lib.ones(2)]),
    "grad, an OrderedDict": lambda lib, x, y: lib.autograd.grad(y, OrderedDict(a=x)),
    "grad, a generator": lambda lib, x, y: [g.tolist() for g in lib.autograd.grad(y, (t for t in [x]))],
    "grad, a non-tensor output": lambda lib, x, y: lib.autograd.grad([y, "a"], [x]),
}


@pytest.mark.parametrize("name", CALLS)
def test_inputs_argument_as_torch(name):
    def program(lib):
        x, y = _setup(lib)
        try:
            return ("returned", CALLS[name](lib, x, y))
        except Exception:  # noqa: BLE001 - compared below as (type, message)
            return ("raised", raised(lib, lambda lib: CALLS[name](lib, *_setup(lib))))

    ours, theirs = run_both(program)
    assert ours == theirs
