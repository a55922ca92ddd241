"""Two places where tracegrad must read its input as torch does: the dtype ``torch.tensor`` infers from nested
data holding NumPy scalars, arrays and tensors (torch folds the items' dtypes with promote_types), and the
checks ``multinomial`` makes of its weights (sampling with replacement of more than one sample runs its own)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, tg, torch

DATA = {
    "int16 scalar": lambda L: np.int16(3),
    "int16 scalars": lambda L: [np.int16(1), np.int16(2)],
    "int16 with a Python int": lambda L: [np.int16(1), 2],
    "float16 scalar": lambda L: np.float16(1.5),
    "float16 with a Python float": lambda L: [np.float16(1), 2.0],
    "float64 scalar": lambda L: np.float64(2),
    "float64 with a Python int": lambda L: [np.float64(1), 2],
    "float32 with a Python float": lambda L: [np.float32(1), 2.0],
    "Python int then float32": lambda L: [1, np.float32(2)],
    "uint8": lambda L: [np.uint8(3)],
    "int8 and uint8": lambda L: [np.int8(1), np.uint8(1)],
    "nested int8": lambda L: [[np.int8(1)], [np.int8(2)]],
    "int16 and float16": lambda L: [np.int16(1), np.float16(2)],
    "int64 and bool": lambda L: [np.int64(1), True],
    "complex64 with a Python float": lambda L: [np.complex64(1), 1.0],
    "float64 tensor with a Python float": lambda L: [L.tensor(1.0, dtype=L.float64), 2.0],
    "int16 tensor with a Python int": lambda L: [L.tensor(1, dtype=L.int16), 2],
    "int16 arrays and lists": lambda L: [np.array([1, 2], dtype=np.int16), [3, 4]],
    "float16 and float64 arrays": lambda L: [np.array([1.0, 2], dtype=np.float16), np.array([1.0, 2])],
    "empty": lambda L: [],
}


@pytest.mark.parametrize("name", list(DATA))
@pytest.mark.parametrize("factory", ["tensor", "as_tensor"])
def test_inferred_dtype_as_torch(name, factory):
    ours = getattr(tg, factory)(DATA[name](tg))
    theirs = getattr(torch, factory)(DATA[name](torch))
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("default", ["float64", "float32"])
def test_inference_follows_the_default_dtype(default):
    try:
        tg.set_default_dtype(getattr(tg, default))
        torch.set_default_dtype(getattr(torch, default))
        for data in ([np.float32(1), 2.0], 2.5, [1, 2.0], [np.float16(1), 2]):
            assert str(tg.tensor(data).dtype) == str(torch.tensor(data).dtype)
    finally:
        tg.set_default_dtype(tg.float32)
        torch.set_default_dtype(torch.float32)


WEIGHTS = [[1.0, -1.0], [float("inf"), 1.0], [float("nan"), 1.0], [0.0, 0.0], [[1.0, 1.0], [1.0, -1.0]],
           [[1.0, 1.0], [0.0, 0.0]], [[0.0, 0.0], [1.0, -1.0]], [[1.0, float("inf")], [-1.0, 1.0]], []]


@pytest.mark.parametrize("weights", WEIGHTS, ids=str)
@pytest.mark.parametrize(("samples", "replacement"), [(1, False), (1, True), (2, True), (2, False)])
def test_multinomial_refuses_bad_weights_as_torch(weights, samples, replacement):
    def program(lib):
        lib.multinomial(lib.tensor(weights), samples, replacement=replacement)

    ours = raised(tg, program)
    assert ours is not None
    assert ours == raised(torch, program)


def test_a_list_of_arrays_warns_once_as_torch():
    import warnings

    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.tensor([np.ones(2), np.zeros(2)])
            lib.tensor([np.ones(2), np.zeros(2)])
        return [str(w.message).split(" (Triggered internally")[0] for w in caught]

    ours, theirs = program(tg), program(torch)
    assert len(ours) <= 1 and ours == theirs[:len(ours)]
    assert set(ours) <= {"Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
                         "converting the list to a single numpy.ndarray with numpy.array() before converting to a "
                         "tensor."}
