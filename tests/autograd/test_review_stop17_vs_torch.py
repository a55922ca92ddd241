"""Findings of a review of this stop's changes, each compared with torch.

- ``Tensor.to`` binds its arguments to torch's three signatures (this stop). torch's parser reads a NumPy scalar
  as a number: a NumPy integer first is a device index (an accelerator, refused on this build), a NumPy float,
  bool or complex64 given for the tensor is a double (float64); NumPy's bools are no bools for ``non_blocking``
  or ``copy``. The binding refused NumPy floats and bools, accepted a NumPy bool as ``non_blocking``, and a NumPy
  integer device failed inside ``torch.device`` with an unrelated TypeError.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import np, raised, tg, torch

NUMPY_NUMBERS = [np.float16(1), np.float32(1.5), np.float64(2.5), np.complex64(1), np.complex128(1j),
                 np.bool_(True), np.bool_(False)]


@pytest.mark.parametrize("number", NUMPY_NUMBERS, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("form", ["alone", "non_blocking", "keywords"])
def test_to_reads_a_numpy_number_as_torchs_parser_does(number, form):
    def dtype_of(lib):
        x = lib.arange(3.0)
        if form == "alone":
            r = x.to(number)
        elif form == "non_blocking":
            r = x.to(number, True)
        else:
            r = x.to(tensor=number, copy=True)
        return str(r.dtype), r is x

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch warns that it drops a complex64's imaginary part)
        assert dtype_of(tg) == dtype_of(torch)


@pytest.mark.parametrize("integer", [np.int64(0), np.int32(0), np.uint8(1), np.int64(-1)],
                         ids=lambda v: f"{type(v).__name__}({v})")
@pytest.mark.parametrize("call", ["to", "to_keyword", "to_with_dtype", "device", "factory"])
def test_a_numpy_integer_is_a_device_index(integer, call):
    programs = {
        "to": lambda lib: lib.zeros(2).to(integer),
        "to_keyword": lambda lib: lib.zeros(2).to(device=integer),
        "to_with_dtype": lambda lib: lib.zeros(2).to(integer, lib.float64),
        "device": lambda lib: lib.device(integer),
        "factory": lambda lib: lib.zeros(2, device=integer),
    }
    theirs = raised(torch, programs[call])
    assert theirs is not None and theirs[0] == "RuntimeError"
    assert raised(tg, programs[call]) == theirs


def test_a_numpy_integer_with_a_bool_after_it_is_a_tensor():
    """``to(device, dtype, ...)`` takes no bool second, so ``to(Tensor, non_blocking)`` takes the call: int64."""
    for lib in (tg, torch):
        assert str(lib.zeros(2).to(np.int8(1), True).dtype) == "torch.int64"


@pytest.mark.parametrize("args", [("f64", "npbool"), (1.5, "npbool"), ("other", "npbool"), ("cpu", "f64", "npbool")])
def test_to_refuses_a_numpy_bool_for_its_bool_parameters(args):
    def program(lib):
        names = {"f64": lib.float64, "npbool": np.bool_(True), "other": lib.zeros(1), "cpu": "cpu"}
        return lib.zeros(2).to(*[names.get(a, a) if isinstance(a, str) else a for a in args])

    theirs = raised(torch, program)
    assert theirs is not None and theirs[0] == "TypeError" and "invalid combination of arguments" in theirs[1]
    assert raised(tg, program) == theirs


# ------------------------------------------------------------------------------ a root gradient into a leaf


def _leaf_root_after_new_data(lib, root_dtype: str) -> tuple:
    """A leaf whose ``.data`` took another dtype after a backward made its accumulator, then a root gradient into
    the leaf itself: PyTorch made the leaf a fresh accumulator, so the gradient is cast to the new dtype."""
    x = lib.arange(3.0, requires_grad=True)
    (x * 2).sum().backward()
    x.grad = None
    x.data = x.data.double()
    seen = []
    x.register_hook(lambda g: seen.append(str(g.dtype)))
    captured = lib.autograd.grad(x, x, lib.ones(3, dtype=getattr(lib, root_dtype)))
    x.backward(lib.ones(3, dtype=getattr(lib, root_dtype)))
    return str(captured[0].dtype), seen, str(x.grad.dtype), x.grad.tolist()


@pytest.mark.parametrize("root_dtype", ["float64", "float32", "float16"])
def test_a_leaf_root_gradient_takes_the_leafs_dtype_after_its_data_changed(root_dtype):
    assert _leaf_root_after_new_data(tg, root_dtype) == _leaf_root_after_new_data(torch, root_dtype)


@pytest.mark.parametrize("call", ["alone", "after_device", "keyword"])
def test_to_refuses_a_numpy_dtype_in_torchs_words(call):
    """A NumPy dtype compares equal to its Python type (``np.dtype('float64') == float``): torch's parser takes
    ``float`` as a dtype, not NumPy's dtypes."""
    def program(lib):
        x = lib.zeros(2)
        if call == "alone":
            return x.to(np.dtype("float64"))
        if call == "after_device":
            return x.to("cpu", np.dtype("float32"))
        return x.to(dtype=np.dtype("int64"))

    theirs = raised(torch, program)
    assert theirs is not None and "invalid combination of arguments" in theirs[1]
    assert raised(tg, program) == theirs
