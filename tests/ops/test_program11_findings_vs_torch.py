"""Differences that the programs of ``tests/test_user_programs11_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- under ``use_deterministic_algorithms(True)`` torch fills the memory it would leave uninitialised (``empty``,
  ``empty_like``, ``new_empty``, ``empty_strided``, ``empty_permuted``, what ``resize_`` grows) with NaN, an integer
  type's largest value or True, unless ``torch.utils.deterministic.fill_uninitialized_memory`` is off; tracegrad
  gave zeros and had no ``torch.utils.deterministic``;
- the Tensor class printed as ``<class 'tracegrad._tensor.Tensor'>`` (torch: ``<class 'torch.Tensor'>``), in
  ``assert_close``'s refusal of a tensor and a list among others;
- ``torch._tensor_str.PRINT_OPTS`` (where code saves and restores print options) did not exist;
- ``set_default_dtype(float)`` (not a dtype) lacked torch's "invalid dtype object: " prefix;
- a node's ``register_hook``/``register_prehook``/``name`` given the wrong arguments failed in Python's words for a
  Python method; torch's are CPython's for a C method (``MulBackward0.register_hook() takes exactly one argument
  (2 given)``, a custom Function's named ``_FunctionBase``).
"""

from __future__ import annotations

import pytest
from _lib import tg, torch
from _tutorial_lib import repr_or_error


def _grown(lib, dtype, old: int, new: int):
    x = lib.arange(old).to(dtype)
    return x.resize_(new)


def _added_into_small_out(lib):
    out = lib.zeros(1)
    lib.add(lib.ones(3), 1, out=out)
    return out


UNINITIALIZED = {
    "empty float": lambda L: L.empty(3),
    "empty int64": lambda L: L.empty(2, dtype=L.int64),
    "empty uint8": lambda L: L.empty(2, dtype=L.uint8),
    "empty int8": lambda L: L.empty(2, dtype=L.int8),
    "empty bool": lambda L: L.empty(2, dtype=L.bool),
    "empty complex": lambda L: L.empty(2, dtype=L.complex64),
    "empty half": lambda L: L.empty(2, dtype=L.float16),
    "empty bfloat16": lambda L: L.empty(2, dtype=L.bfloat16).float(),
    "empty channels_last": lambda L: L.empty(1, 2, 1, 1, memory_format=L.channels_last),
    "empty_like": lambda L: L.empty_like(L.ones(2, 2, dtype=L.int32)),
    "new_empty": lambda L: L.ones(2, dtype=L.float64).new_empty(3),
    "empty_strided": lambda L: L.empty_strided((2, 2), (1, 2)),
    "new_empty_strided": lambda L: L.ones(1).new_empty_strided((2,), (2,)),
    "empty_permuted": lambda L: L.empty_permuted((2, 3), (1, 0)),
    "resize_ grown int32": lambda L: _grown(L, L.int32, 3, 5),
    "resize_ grown float": lambda L: _grown(L, L.float32, 2, 4),
    "resize_ shrunk then grown": lambda L: _grown(L, L.int64, 4, 2).resize_(3),
    "out= resized": _added_into_small_out,
    "flag": lambda L: L.utils.deterministic.fill_uninitialized_memory,
}


@pytest.mark.parametrize("case", UNINITIALIZED)
def test_deterministic_mode_fills_uninitialized_memory(case):
    f = UNINITIALIZED[case]
    results = []
    for lib in (tg, torch):
        lib.use_deterministic_algorithms(True)
        try:
            results.append(repr_or_error(f, lib))
        finally:
            lib.use_deterministic_algorithms(False)
    assert results[0] == results[1]


def _with_fill_off(lib):
    lib.use_deterministic_algorithms(True)
    lib.utils.deterministic.fill_uninitialized_memory = False
    try:
        return lib.utils.deterministic.fill_uninitialized_memory, lib.empty(0), lib.zeros(2).resize_(1)
    finally:
        lib.utils.deterministic.fill_uninitialized_memory = True
        lib.use_deterministic_algorithms(False)


def _set_flag(lib, value):
    try:
        lib.utils.deterministic.fill_uninitialized_memory = value
    finally:
        lib.utils.deterministic.fill_uninitialized_memory = True


SMALL = {
    "fill switched off": _with_fill_off,
    "fill flag given an int": lambda L: _set_flag(L, 1),
    "Tensor class": lambda L: str(L.Tensor),
    "type of a tensor": lambda L: str(type(L.ones(1))),
    "assert_close tensor and list": lambda L: L.testing.assert_close(L.ones(2), [1.0, 1.0]),
    "PRINT_OPTS": lambda L: vars(L._tensor_str.PRINT_OPTS) if L is torch else {
        k: getattr(L._tensor_str.PRINT_OPTS, k) for k in ("precision", "threshold", "edgeitems", "linewidth",
                                                           "sci_mode")},
    "set_default_dtype(float)": lambda L: L.set_default_dtype(float),
    "set_default_dtype(None)": lambda L: L.set_default_dtype(None),
    "set_default_dtype(int64)": lambda L: L.set_default_dtype(L.int64),
}


@pytest.mark.parametrize("case", SMALL)
def test_small_finding(case):
    f = SMALL[case]
    assert repr_or_error(f, tg) == repr_or_error(f, torch)


def test_print_opts_writes_reach_printing():
    shown = []
    for lib in (tg, torch):
        lib._tensor_str.PRINT_OPTS.precision = 2
        try:
            shown.append(str(lib.tensor([1.23456, 2.0])))
        finally:
            lib.set_printoptions(profile="default")
    assert shown[0] == shown[1] == "tensor([1.23, 2.00])"


class _Identity:
    """A custom Function's node (torch's C methods name it ``_FunctionBase``)."""

    @staticmethod
    def node(lib):
        class Same(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g

        return Same.apply(lib.ones(2, requires_grad=True)).grad_fn


def _mul_node(lib):
    return (lib.ones(2, requires_grad=True) * 2).grad_fn


def _leaf_node(lib):
    return (lib.ones(2, requires_grad=True) * 2).grad_fn.next_functions[0][0]


NODE_CALLS = {
    "register_hook()": lambda n: n.register_hook(),
    "register_hook(f, 3)": lambda n: n.register_hook(print, 3),
    "register_hook(fn=f)": lambda n: n.register_hook(fn=print),
    "register_prehook()": lambda n: n.register_prehook(),
    "register_prehook(f, f)": lambda n: n.register_prehook(print, print),
    "register_prehook(fn=f)": lambda n: n.register_prehook(fn=print),
    "name(1)": lambda n: n.name(1),
    "name(x=1)": lambda n: n.name(x=1),
    "register_hook(3)": lambda n: type(n.register_hook(3)).__name__,
}


@pytest.mark.parametrize("node", [_mul_node, _leaf_node, _Identity.node], ids=["MulBackward0", "AccumulateGrad",
                                                                               "custom"])
@pytest.mark.parametrize("call", NODE_CALLS)
def test_node_method_argument_errors(node, call):
    f = NODE_CALLS[call]
    assert repr_or_error(lambda L: f(node(L)), tg) == repr_or_error(lambda L: f(node(L)), torch)
