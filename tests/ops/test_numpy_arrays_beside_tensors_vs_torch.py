"""NumPy arrays beside tensors in Python's operators and NumPy's functions, each the same program on tracegrad and
torch with the same outcome (type, dtype, values, whether it requires grad or has a graph, or the error) and the
same categories of warnings.

torch's operators refuse an array (NotImplemented), so Python hands the operation to NumPy, which reads the
tensor through ``__array__`` (refused for a tensor that requires grad), computes in NumPy's types and wraps the
result back through ``Tensor.__array_wrap__``: ``t * np.ones(2)`` is a float64 tensor without a graph, and
``np.sin(t)`` a tensor (a bool result as uint8). tracegrad took the array as a tensor, recorded a graph and kept
float32, and ``np.sin(t)`` was an array. ``==`` compares an array elementwise, ``!=`` and ``<`` refuse it, and
``t *= array`` rebinds ``t`` to NumPy's result, as torch's. NumPy 2 warns (DeprecationWarning) about torch's
``__array__`` and ``__array_wrap__`` signatures; tracegrad's have the same, so the same warnings show.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch


def _described(result):
    if isinstance(result, (tg.Tensor, torch.Tensor)):
        return ("Tensor", str(result.dtype).replace("tracegrad", "torch"), result.tolist(), result.requires_grad,
                result.grad_fn is not None)
    return (type(result).__name__, str(getattr(result, "dtype", None)), np.asarray(result).tolist())


def _run(program, lib, describe) -> tuple:
    """``program(lib)``'s described result (or error) and the warnings it raised, all recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", describe(program(lib)))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            result = (type(exc).__name__, str(exc))
    return result, caught


def _outcome(program, lib):
    result, caught = _run(program, lib, _described)
    return result, sorted({w.category.__name__ for w in caught})


def _in_place(op: str):
    def program(L):
        t = L.ones(2)
        if op == "*=":
            t *= np.full(2, 3.0)
        elif op == "+=":
            t += np.full(2, 3.0)
        else:
            t /= np.full(2, 2.0)
        return t
    return program


PROGRAMS = {
    "t * arr": lambda L: L.ones(2) * np.full(2, 3.0),
    "arr * t": lambda L: np.full(2, 3.0) * L.ones(2),
    "t + float32 arr": lambda L: L.ones(2) + np.ones(2, np.float32),
    "t + int arr": lambda L: L.ones(2) + np.ones(2, np.int64),
    "t - arr": lambda L: L.ones(2) - np.full(2, 0.5),
    "arr - t": lambda L: np.full(2, 0.5) - L.ones(2),
    "t / arr": lambda L: L.ones(2) / np.full(2, 2.0),
    "arr / t": lambda L: np.full(2, 2.0) / L.full((2,), 4.0),
    "t ** arr": lambda L: L.full((2,), 2.0) ** np.full(2, 3.0),
    "arr ** t": lambda L: np.full(2, 3.0) ** L.full((2,), 2.0),
    "t // arr": lambda L: L.full((2,), 7.0) // np.full(2, 2.0),
    "t % arr": lambda L: L.full((2,), 7.0) % np.full(2, 2.0),
    "t & arr": lambda L: L.ones(2, dtype=L.int64) & np.ones(2, dtype=np.int64),
    "t - bool arr": lambda L: L.ones(2) - np.array([True, False]),
    "t + 0-d arr": lambda L: L.ones(2) + np.array(2.0),
    "0-d arr + t": lambda L: np.array(2.0) + L.ones(2),
    "t * arr, t requires grad": lambda L: L.ones(2, requires_grad=True) * np.ones(2),
    "arr * t, t requires grad": lambda L: np.ones(2) * L.ones(2, requires_grad=True),
    "t @ arr": lambda L: L.ones(2, 2) @ np.ones(2),
    "arr @ t": lambda L: np.ones((2, 2)) @ L.ones(2),
    "t == arr": lambda L: L.ones(2) == np.array([1.0, 2.0]),
    "arr == t": lambda L: np.array([1.0, 2.0]) == L.ones(2),
    "t != arr": lambda L: L.ones(2) != np.array([1.0, 2.0]),
    "t < arr": lambda L: L.ones(2) < np.ones(2),
    "arr < t": lambda L: np.ones(2) < L.ones(2),
    "t *= arr": _in_place("*="),
    "t += arr": _in_place("+="),
    "t /= arr": _in_place("/="),
    "np.sin(t)": lambda L: np.sin(L.ones(2)),
    "np.sin(t), t requires grad": lambda L: np.sin(L.ones(2, requires_grad=True)),
    "np.exp of an int tensor": lambda L: np.exp(L.arange(3)),
    "np.greater(t, 0)": lambda L: np.greater(L.ones(2), 0),
    "np.isnan(t)": lambda L: np.isnan(L.ones(2)),
    "np.add(t, t)": lambda L: np.add(L.ones(2), L.ones(2)),
    "np.maximum(t, 0)": lambda L: np.maximum(L.ones(2), 0),
    "np.sum(t)": lambda L: np.sum(L.ones(2)),
    "np.mean(t)": lambda L: np.mean(L.ones(3)),
    "np.dot(t, t)": lambda L: np.dot(L.ones(2), L.ones(2)),
    "np.asarray(t)": lambda L: np.asarray(L.ones(2)),
    "np.array(t)": lambda L: np.array(L.ones(2)),
    "np.asarray(t, float64)": lambda L: np.asarray(L.ones(2), dtype=np.float64),
    "np.concatenate of tensors": lambda L: np.concatenate([L.ones(2), L.zeros(2)]),
    "np.where(t > 0, t, 0)": lambda L: np.where(L.ones(2) > 0, L.ones(2), 0),
    "np.float64 * t": lambda L: np.float64(2) * L.ones(2, requires_grad=True),
    # == takes an array it can read; one of objects or strings is NotImplemented, and Python answers False
    "t == object arr": lambda L: L.ones(2) == np.array([1, 2], dtype=object),
    "t == str arr": lambda L: L.ones(2) == np.array(["a", "b"]),
    "object arr == t": lambda L: np.array([1, 2], dtype=object) == L.ones(2),
    # array / t is reciprocal(t) * array, and a TypeError on the way NotImplemented (MaskedArray's reading of t)
    "masked / t": lambda L: np.ma.masked_array([1.0, 2.0], mask=[0, 1]) / L.ones(2),
    "masked * t": lambda L: np.ma.masked_array([1.0, 2.0], mask=[0, 1]) * L.ones(2),
    "matrix / t": lambda L: np.matrix([[1.0, 2.0]]) / L.full((1, 2), 4.0),
    "int / t": lambda L: 2 / L.full((2,), 4.0),
    "str / t": lambda L: "a" / L.ones(2),
    # in: a tensor or a number, not an array nor np.bool_ (no numbers.Number)
    "arr in t": lambda L: np.ones(1) in L.ones(2),
    "np.bool_ in t": lambda L: np.True_ in L.ones(2),
    "str in t": lambda L: "a" in L.ones(2),
    "list in t": lambda L: [1.0] in L.ones(2),
    "float in t": lambda L: 1.0 in L.ones(2),
    "np.float32 in t": lambda L: np.float32(3) in L.ones(2),
    "tensor in t": lambda L: L.zeros(()) in L.ones(2),
    "t_rg in t_rg": lambda L: L.ones((), requires_grad=True) in L.ones(2, requires_grad=True),
    # a complex tensor read as reals warns NumPy's ComplexWarning (not as bools, objects or complex)
    "np.asarray(complex t, float32)": lambda L: np.asarray(L.tensor([1 + 2j]), dtype=np.float32),
    "np.asarray(complex t, int8)": lambda L: np.asarray(L.tensor([1 + 2j]), dtype=np.int8),
    "np.asarray(complex t, bool)": lambda L: np.asarray(L.tensor([1 + 2j]), dtype=bool),
    "np.asarray(complex t, complex128)": lambda L: np.asarray(L.tensor([1 + 2j]), dtype=np.complex128),
    "np.array(complex t, int32)": lambda L: np.array(L.tensor([1 + 2j]), dtype=np.int32),
    "np.interp of a complex t": lambda L: np.interp(L.tensor([1 + 2j]), [0, 2], [0, 1]),
    # torch's Python 2 names of the division operators
    "t.__rdiv__(arr)": lambda L: L.full((2,), 4.0).__rdiv__(np.full(2, 2.0)),
    "t.__rdiv__(2)": lambda L: L.full((2,), 4.0).__rdiv__(2),
    "t.__div__(arr)": lambda L: L.full((2,), 4.0).__div__(np.full(2, 2.0)),
    "t.__div__(2)": lambda L: L.full((2,), 4.0, requires_grad=True).__div__(2),
    "t.__idiv__(2)": lambda L: L.full((2,), 4.0).__idiv__(2),
    # an array where a tensor must be is named by its C type, numpy.ndarray, as torch's parser names it
    "torch.matmul(t, arr)": lambda L: L.matmul(L.ones(2), np.ones(2)),
    "torch.maximum(t, np.float64)": lambda L: L.maximum(L.ones(2), np.float64(1)),
    "torch.where(c, t, arr, out=)": lambda L: L.where(L.ones(2) > 0, L.ones(2), np.ones(2), out=L.ones(2)),
    "torch.abs(arr)": lambda L: L.abs(np.ones(2)),
}


def _graph_described(result):
    return (*_described(result), type(result.grad_fn).__name__ if result.grad_fn is not None else None,
            result._is_view())


def _set(key, value, make=lambda L: L.arange(3.0)):
    def program(L):
        t = make(L)
        t[key()] = value(L)
        return t
    return program


INDEXING = {
    # an index array is read as torch reads it, through a tensor of its data: a 0-d one of numbers an integer (a
    # view, SelectBackward0; floats cut, complex numbers' real part with torch's warning), a 0-d one of bytes a 0-d
    # mask as bools are (no warning), one of bytes the deprecated mask (its warning at the user's line). (A 0-d
    # complex one's real part: torch warns its cast once a process, see test_0d_complex_array_index_as_torch)
    "t[0-d int array]": lambda L: L.arange(3.0)[np.array(1)],
    "t[0-d int32 array], a graph": lambda L: L.arange(6.0, requires_grad=True).reshape(2, 3)[np.array(1, np.int32)],
    "t[1, 0-d int8 array]": lambda L: L.arange(6.0).reshape(2, 3)[1, np.array(-1, np.int8)],
    "t[0-d array, 0-d array]": lambda L: L.arange(6.0).reshape(2, 3)[np.array(1), np.array(2)],
    "t[..., 0-d array]": lambda L: L.arange(6.0).reshape(2, 3)[..., np.array(2)],
    "t[0-d float array]": lambda L: L.arange(3.0)[np.array(1.7)],
    "t[0-d float16 array]": lambda L: L.arange(3.0)[np.array(2, np.float16)],
    "t[0-d array out of range]": lambda L: L.arange(6.0).reshape(2, 3)[1, np.array(5)],
    "t[0-d uint8 array]": lambda L: L.arange(3.0)[np.array(1, np.uint8)],
    "t[0-d bool array]": lambda L: L.arange(3.0)[np.array(False)],
    "t[uint8 array]": lambda L: L.arange(3.0)[np.array([1, 0, 1], np.uint8)],
    "t[(uint8 array,)]": lambda L: L.arange(3.0)[(np.array([1, 0, 1], np.uint8),)],
    "t[uint8 tensor]": lambda L: L.arange(3.0)[L.tensor([1, 0, 1], dtype=L.uint8)],
    "t[uint8 array], a graph": lambda L: L.arange(3.0, requires_grad=True)[np.array([1, 0, 1], np.uint8)],
    "t[bool array]": lambda L: L.arange(3.0)[np.array([True, False, True])],
    "t[int array]": lambda L: L.arange(3.0)[np.array([2, 0])],
    # np.bool_ is no Python bool to torch's indexing, and has no __index__
    "t[np.True_]": lambda L: L.arange(3.0)[np.True_],
    "t[np.False_, 0]": lambda L: L.arange(6.0).reshape(2, 3)[np.False_, 0],
    "t[np.int64]": lambda L: L.arange(3.0)[np.int64(2)],
    "t[0-d array] = 5": _set(lambda: np.array(1), lambda L: 5.0),
    "t[0-d float array] = tensor": _set(lambda: np.array(1.5), lambda L: L.tensor(7.0)),
    "t[0-d uint8 array] = 5": _set(lambda: np.array(1, np.uint8), lambda L: 5.0),
    "t[np.True_] = 5": _set(lambda: np.True_, lambda L: 5.0),
    "t[np.True_] = array": _set(lambda: np.True_, lambda L: np.ones(3)),
    "t[int array] = 5": _set(lambda: np.array([0, 2]), lambda L: 5.0),
    "t[:] = matrix": _set(lambda: slice(None), lambda L: np.matrix([1.0, 2.0, 3.0])),
    "t[:] = array": _set(lambda: slice(None), lambda L: np.ones(3)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_as_in_torch(name):
    assert _outcome(PROGRAMS[name], tg) == _outcome(PROGRAMS[name], torch)


def _indexing_outcome(program, lib):
    result, caught = _run(program, lib, _graph_described)
    return result, [(w.category.__name__, w.filename.rsplit("/", 1)[-1], str(w.message).split(" (Triggered")[0])
                    for w in caught]


@pytest.mark.parametrize("name", list(INDEXING))
def test_indexing_with_numpy_items_as_in_torch(name):
    assert _indexing_outcome(INDEXING[name], tg) == _indexing_outcome(INDEXING[name], torch)


def _warned_at(program, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(lib)
    return [(w.category.__name__, w.filename.rsplit("/", 1)[-1]) for w in caught]


WARNING_PLACES = {
    # NumPy warns at the line that computes: the user's for t * arr, torch's _tensor.py for arr / t (its __rdiv__
    # is Python there) and for a complex tensor's __array__ read as reals
    "t * arr": lambda L: L.ones(2) * np.full(2, 3.0),
    "arr / t": lambda L: np.full(2, 2.0) / L.full((2,), 4.0),
    "np.asarray(complex t, float32)": lambda L: np.asarray(L.tensor([1 + 2j]), dtype=np.float32),
    "np.interp of a complex t": lambda L: np.interp(L.tensor([1 + 2j]), [0, 2], [0, 1]),
}


@pytest.mark.parametrize("name", list(WARNING_PLACES))
def test_warnings_at_torchs_places(name):
    assert _warned_at(WARNING_PLACES[name], tg) == _warned_at(WARNING_PLACES[name], torch)


def test_complex_warning_as_error_and_once_per_place_as_torch():
    def run(lib, action):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter(action)
            try:
                for _ in range(2):
                    np.asarray(lib.tensor([1j]), dtype=np.float64)
            except Warning as exc:
                return type(exc).__name__, str(exc)
        return [w.category.__name__ for w in caught]

    for action in ("error", "default", "ignore"):
        assert run(tg, action) == run(torch, action)


def test_0d_complex_array_index_as_torch():
    # (compared without warnings: torch's copy warns its complex cast once a process, tracegrad's casts do not)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _graph_described(tg.arange(3.0)[np.array(1 + 2j)]) == _graph_described(torch.arange(3.0)[np.array(1 + 2j)])
