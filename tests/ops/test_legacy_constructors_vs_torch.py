"""PyTorch's legacy constructors: ``torch.Tensor(...)``, the typed classes (``FloatTensor`` ...), ``Tensor.new`` and
``set_default_tensor_type``, run by tracegrad and by torch: the same dtype, shape, values, autograd state and
errors. Tensors made from sizes alone are uninitialized in torch, so only their dtype and shape are compared."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, tg, torch, warning_texts


def _summary(result, initialized: bool):
    if isinstance(result, (tg.Tensor, torch.Tensor)):
        grad_fn = result.grad_fn.name() if result.grad_fn is not None else None
        values = result.tolist() if initialized else None
        return str(result.dtype), tuple(result.shape), values, result.requires_grad, grad_fn
    return repr(result).replace("tracegrad", "torch")


# (program, whether its result is initialized)
CASES = {
    "sizes": (lambda L: L.FloatTensor(2, 3), False),
    "one size": (lambda L: L.ByteTensor(3), False),
    "a Size": (lambda L: L.DoubleTensor(L.Size([2, 1])), False),
    "nothing": (lambda L: L.FloatTensor(), True),
    "a list": (lambda L: L.LongTensor([1, 2]), True),
    "nested lists": (lambda L: L.FloatTensor([[1, 2], [3, 4]]), True),
    "a tuple is data": (lambda L: L.IntTensor((2, 3)), True),
    "bools": (lambda L: L.BoolTensor([1, 0]), True),
    "half": (lambda L: L.HalfTensor([1.5]), True),
    "int8 and int16": (lambda L: (L.CharTensor([-1]).dtype, L.ShortTensor([2]).dtype), True),
    "a NumPy array": (lambda L: L.FloatTensor(np.arange(3.0)), True),
    "a tensor: an alias": (lambda L: L.FloatTensor(L.ones(2, requires_grad=True)), True),
    "Tensor(): default dtype": (lambda L: L.Tensor(), True),
    "Tensor(list)": (lambda L: L.Tensor([1, 2]), True),
    "Tensor(tensor)": (lambda L: L.Tensor(L.ones(2, requires_grad=True) * 2), True),
    "Tensor(sizes)": (lambda L: L.Tensor(2, 2), False),
    "new(sizes)": (lambda L: L.ones(2, dtype=L.float64).new(3), False),
    "new()": (lambda L: L.ones(2).new(), True),
    "new(data)": (lambda L: L.ones(2, requires_grad=True).new([1.0, 2]), True),
    "new(data) of an integer tensor": (lambda L: L.ones(2, dtype=L.int64).new([1.5, 2]), True),
    "device=cpu": (lambda L: L.Tensor([1, 2], device="cpu"), True),
    "isinstance float": (lambda L: isinstance(L.ones(2), L.FloatTensor), True),
    "isinstance other dtype": (lambda L: isinstance(L.ones(2), L.DoubleTensor), True),
    "isinstance long": (lambda L: isinstance(L.ones(2, dtype=L.int64), L.LongTensor), True),
    "isinstance Tensor": (lambda L: isinstance(L.FloatTensor(2), L.Tensor), True),
    "not a subclass": (lambda L: issubclass(L.FloatTensor, L.Tensor), True),
    "class attributes": (lambda L: (L.FloatTensor.dtype, L.FloatTensor.is_cuda, L.FloatTensor.is_sparse), True),
    "class repr": (lambda L: (repr(L.FloatTensor), L.FloatTensor.__name__, L.FloatTensor.__module__), True),
    "methods through the class": (lambda L: L.FloatTensor.add(L.ones(1), 1), True),
    "type(class)": (lambda L: L.ones(2).type(L.DoubleTensor), True),
    "type(string)": (lambda L: L.ones(2).type("torch.LongTensor"), True),
    "type() name": (lambda L: L.LongTensor([1]).type(), True),
    "new_zeros(sizes)": (lambda L: L.ones(2).new_zeros(2, 3), True),
    "new_zeros(a Size)": (lambda L: L.ones(2).new_zeros(L.Size([1, 2])), True),
    "new_ones(sizes)": (lambda L: L.ones(2, dtype=L.int64).new_ones(2, 1), True),
    "new_empty(sizes)": (lambda L: L.ones(2).new_empty(1, 2), False),
}

ERRORS = {
    "tensor of another dtype": lambda L: L.LongTensor(L.ones(2)),
    "new(tensor) of another dtype": lambda L: L.ones(2).new(L.ones(2, dtype=L.int64)),
    "a float": lambda L: L.FloatTensor(2.5),
    "a bool": lambda L: L.FloatTensor(True),
    "a NumPy scalar": lambda L: L.FloatTensor(np.float64(2)),
    "None": lambda L: L.FloatTensor(None),
    "a string": lambda L: L.FloatTensor("abc"),
    "a float size": lambda L: L.ones(2).new(2, 3.5),
    "negative size": lambda L: L.FloatTensor(-1),
    "cuda device": lambda L: L.FloatTensor(2, device="cuda"),
    "dtype keyword": lambda L: L.FloatTensor(3, dtype=L.float64),
    "requires_grad keyword": lambda L: L.FloatTensor([1, 2], requires_grad=True),
    "Tensor with dtype": lambda L: L.Tensor(2, dtype=L.float64),
    "unknown keyword, no arguments": lambda L: L.FloatTensor(foo=1),
    "unknown keyword after a tensor": lambda L: L.FloatTensor(L.ones(1), foo=1),
    "unknown keyword after two sizes": lambda L: L.LongTensor(2, 3, foo=1),
    "unknown keyword after three sizes": lambda L: L.FloatTensor(2, 3, 4, dtype=1),
    "unknown keyword with device": lambda L: L.FloatTensor(2, device="cpu", foo=2),
    "new with unknown keyword": lambda L: L.ones(2).new(2, foo=1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_legacy_constructor_as_torch(name):
    program, initialized = CASES[name]
    assert _summary(program(tg), initialized) == _summary(program(torch), initialized)


@pytest.mark.parametrize("name", list(ERRORS))
def test_legacy_constructor_errors_as_torch(name):
    ours = raised(tg, ERRORS[name])
    assert ours is not None
    assert ours == raised(torch, ERRORS[name])


def test_an_alias_shares_memory_and_version_with_its_source():
    source = tg.ones(3)
    alias = tg.FloatTensor(source)
    alias[0] = 5
    assert source[0].item() == 5 and source._version == alias._version == 1


@pytest.fixture()
def default_dtype_restored():
    yield
    tg.set_default_dtype(tg.float32)
    torch.set_default_dtype(torch.float32)


@pytest.mark.usefixtures("default_dtype_restored")
@pytest.mark.parametrize("arg", ["DoubleTensor", "torch.DoubleTensor", "HalfTensor", "LongTensor", "torch.LongTensor",
                                 "torch.cuda.FloatTensor", "torch.Foo", 3])
def test_set_default_tensor_type_as_torch(arg):
    def program(lib):
        value = getattr(lib, arg) if isinstance(arg, str) and not arg.startswith("torch.") else arg
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outcome = raised(lib, lambda lib: lib.set_default_tensor_type(value))
        return outcome, warning_texts(caught), str(lib.get_default_dtype()), str(lib.Tensor(1).dtype)

    assert program(tg) == program(torch)
