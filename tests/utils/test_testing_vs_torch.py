"""``tracegrad.testing`` against ``torch.testing``: assert_close's messages character for character, its
tolerances and options, assert_allclose's warning, and make_tensor's ranges and properties."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import tracegrad as tg


def _outcome(lib, make_args, **kwargs):
    actual, expected = make_args(lib)
    try:
        lib.testing.assert_close(actual, expected, **kwargs)
    except Exception as error:  # noqa: BLE001 - the exception type and message are what is compared
        # the one unavoidable difference: the tensor class's own name in TypeError messages
        return type(error).__name__, str(error).replace("tracegrad._tensor.Tensor", "torch.Tensor").replace("tracegrad.", "torch.")
    return None


CASES = {
    "one_of_three": (lambda L: (L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 4.0, 3.0])), {}),
    "two_dims": (lambda L: (L.tensor([[1.0, 2.0], [3.0, 4.5]]), L.tensor([[1.0, 2.0], [3.0, 4.0]])), {}),
    "float64": (lambda L: (L.tensor([1.0, 2.0], dtype=L.float64), L.tensor([1.0, 2.001], dtype=L.float64)), {}),
    "ints_equal": (lambda L: (L.tensor([1, 2, 3]), L.tensor([1, 5, 3])), {}),
    "scalar_tensor": (lambda L: (L.tensor(1.5), L.tensor(2.0)), {}),
    "nan": (lambda L: (L.tensor(float("nan")), L.tensor(float("nan"))), {}),
    "nan_equal": (lambda L: (L.tensor([float("nan"), 1.0]), L.tensor([float("nan"), 1.0])), {"equal_nan": True}),
    "dtype": (lambda L: (L.tensor([1.0]), L.tensor([1.0], dtype=L.float64)), {}),
    "dtype_unchecked": (lambda L: (L.tensor([1.0]), L.tensor([1.5], dtype=L.float64)), {"check_dtype": False}),
    "shape": (lambda L: (L.zeros(2, 3), L.zeros(3, 2)), {}),
    "stride": (lambda L: (L.zeros(2, 3), L.zeros(3, 2).t()), {"check_stride": True}),
    "only_rtol": (lambda L: (L.zeros(2), L.zeros(2)), {"rtol": 0.1}),
    "tolerances": (lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.05, 2.0])), {"rtol": 0.0, "atol": 0.1}),
    "zero_tol": (lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.05, 2.0])), {"rtol": 0, "atol": 0}),
    "msg_str": (lambda L: (L.tensor([1.0]), L.tensor([2.0])), {"msg": "Argh"}),
    "msg_callable": (lambda L: (L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 4.0, 5.0])),
                     {"msg": lambda m: f"Header\n\n{m}\n\nFooter"}),
    "numbers": (lambda L: (1e-9, 1e-10), {"rtol": 0, "atol": 0}),
    "number_types": (lambda L: (1.0, 1), {}),
    "number_types_ok": (lambda L: (1.0, 1), {"check_dtype": False}),
    "bools": (lambda L: (True, False), {}),
    "none": (lambda L: (None, 1), {}),
    "numpy": (lambda L: (np.array([1.0, 2.0]), np.array([1.0, 2.5])), {}),
    "numpy_vs_tensor": (lambda L: (np.array([1.0]), L.tensor([1.0], dtype=L.float64)), {}),
    "sequence_len": (lambda L: ([L.tensor(1.0), 2.0], [L.tensor(1.0)]), {}),
    "sequence_item": (lambda L: ([L.tensor([1.0]), (2.0, L.tensor([3.0]))], (L.tensor([1.0]), [2.0, L.tensor([4.0])])),
                      {}),
    "mapping_keys": (lambda L: ({"a": 1.0, "b": 2.0}, {"a": 1.0, "c": 2.0}), {}),
    "mapping_item": (lambda L: ({"a": L.tensor([1.0]), "b": 2.0}, {"b": 2.0, "a": L.tensor([1.5])}), {}),
    "close": (lambda L: ([L.tensor([1.0, 2.0]), {"x": 3.0}], [L.tensor([1.0, 2.0 + 1e-7]), {"x": 3.0}]), {}),
    "complex": (lambda L: (L.tensor([1 + 1j, 2 + 0j]), L.tensor([1 + 1j, 2 + 1j])), {}),
    "parameter_vs_tensor": (lambda L: (L.nn.Parameter(L.tensor([1.0])), L.tensor([1.0])),
                            {"allow_subclasses": False}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_assert_close_outcome_matches_torch(name):
    make_args, kwargs = CASES[name]
    assert _outcome(tg, make_args, **kwargs) == _outcome(torch, make_args, **kwargs)


def test_default_message_format():
    with pytest.raises(AssertionError) as info:
        tg.testing.assert_close(tg.tensor([1.0, 2.0, 3.0]), tg.tensor([1.0, 4.0, 3.0]))
    assert str(info.value).startswith("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
                                      "Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)\n")


def test_assert_allclose_warns_and_compares_like_torch():
    outcomes = []
    for lib in (tg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.testing.assert_allclose(lib.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-5])
            with pytest.raises(AssertionError) as info:
                lib.testing.assert_allclose(lib.tensor([1.0, 2.0]), [1.0, 2.1])
        outcomes.append(([(w.category, str(w.message)) for w in caught], str(info.value)))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                                   "float64", "complex64", "complex128"])
def test_make_tensor_default_ranges(dtype):
    tg_dtype = getattr(tg, dtype)
    t = tg.testing.make_tensor(200, dtype=tg_dtype, device="cpu")
    reference = torch.testing.make_tensor(200, dtype=getattr(torch, dtype), device="cpu")
    assert t.dtype == tg_dtype and tuple(t.shape) == tuple(reference.shape) == (200,)
    values = t.numpy()
    if dtype == "bool":
        return
    parts = [values.real, values.imag] if values.dtype.kind == "c" else [values]
    low, high = (0, 10) if dtype == "uint8" else (-9, 10) if values.dtype.kind in "iu" else (-9, 9)
    for part in parts:
        assert part.min() >= low and part.max() < high


def test_make_tensor_options():
    make = tg.testing.make_tensor
    t = make((3, 4), dtype=tg.float32, device="cpu", low=0.5, high=1.0, requires_grad=True)
    assert t.requires_grad and t.is_leaf and float(t.detach().min()) >= 0.5 and float(t.detach().max()) < 1.0
    nc = make(3, 4, dtype=tg.float64, device="cpu", noncontiguous=True)
    assert not nc.is_contiguous() and tuple(nc.shape) == (3, 4)
    nz = make(1000, dtype=tg.int8, device="cpu", low=-1, high=2, exclude_zero=True)
    assert not bool((nz == 0).any())
    tiny = make(1000, dtype=tg.float32, device="cpu", low=0, high=1e-30, exclude_zero=True)
    assert not bool((tiny == 0).any())
    cl = make(2, 3, 4, 5, dtype=tg.float32, device="cpu", memory_format=tg.channels_last)
    assert cl.stride() == torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last).stride()


@pytest.mark.parametrize("kwargs", [
    {"low": 2, "high": 1}, {"low": math.nan}, {"requires_grad": True, "dtype": "int64"},
    {"noncontiguous": True, "memory_format": "channels_last"}, {"low": 300, "dtype": "uint8"},
])
def test_make_tensor_errors_match_torch(kwargs):
    messages = []
    for lib in (tg, torch):
        options = {"dtype": lib.float32, **kwargs}
        if isinstance(options["dtype"], str):
            options["dtype"] = getattr(lib, options["dtype"])
        if "memory_format" in options:
            options["memory_format"] = lib.channels_last
        with pytest.raises(ValueError) as info:
            lib.testing.make_tensor((2, 2), device="cpu", **options)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_make_tensor_low_equals_high_warns():
    with pytest.warns(FutureWarning, match="Passing `low==high`"):
        t = tg.testing.make_tensor(3, dtype=tg.float32, device="cpu", low=1.0, high=1.0)
    assert tuple(t.shape) == (3,)
