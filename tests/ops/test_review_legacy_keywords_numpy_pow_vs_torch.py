"""Review of set 34's fixes (``t.numpy()``, the keyword order of the argument parser's refusals, ``pow(t, y, m)``):
differences found around them, each compared with torch.

- the legacy constructors (``torch.Tensor``, ``torch.FloatTensor``, ``Tensor.new``) took their overloads'
  arguments by position only: ``torch.Tensor(size=(2, 3))``, ``t.new(data=[1, 2])``, ``torch.Tensor(other=t)``,
  ``torch.Tensor(storage=s)`` were refused with the invalid-combination message (whose new notes then said the
  ``(Tensor other)`` overload had "invalid types" for a tensor); a storage given by position was "data must be a
  sequence"; a ``device`` of another type (a tuple, a float, a dtype) ended in ``re``'s "expected string or
  bytes-like object"; ``torch.Tensor(t, device=...)`` aliased ``t`` where torch refuses it; ``torch.Tensor`` (not
  the typed classes) refused a tensor of another dtype, which torch's base constructor aliases;
  ``torch.Tensor(torch.Size([]))`` crashed in ``empty()``;
- ``t.numpy()`` of a tensor of no elements was a view of its array; torch's is an array of NumPy's own with
  strides of 0 (the tensor's data pointer is null);
- ``t.__pow__(2, None)`` was ``t ** 2`` and ``t.__pow__(exponent=2)`` a TypeError; torch's ``__pow__`` is its
  ``pow`` method, any TypeError of which is NotImplemented.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch


def _outcome(f, lib):
    """What ``f(lib)`` gives (a tensor by its dtype, shape, values if initialised and grad_fn), or its error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (TypedStorage's deprecation)
            value = f(lib)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e).replace("tracegrad", "torch")
    if isinstance(value, (tg.Tensor, torch.Tensor)):
        grad_fn = value.grad_fn.name() if value.grad_fn is not None else None
        return "tensor", str(value.dtype).replace("tracegrad", "torch"), tuple(value.shape), grad_fn
    return repr(value).replace("tracegrad", "torch")


# ---- the legacy constructors' keywords and devices -------------------------------------------------------------

_LEGACY = {
    "size_keyword": lambda lib: lib.Tensor(size=(2, 3)),
    "size_keyword_list_and_device": lambda lib: lib.FloatTensor(size=[2], device="cpu"),
    "size_keyword_torch_size": lambda lib: lib.Tensor(size=lib.Size([2])),
    "size_keyword_empty_is_0d": lambda lib: lib.Tensor(size=()),
    "size_keyword_int_refused": lambda lib: lib.Tensor(size=3),
    "size_keyword_floats_refused": lambda lib: lib.Tensor(size=[1.5]),
    "size_keyword_with_position_refused": lambda lib: lib.Tensor(2, size=(3,)),
    "size_and_data_refused": lambda lib: lib.Tensor(size=(2,), data=[1.0]),
    "positional_torch_size_empty_is_0d": lambda lib: lib.Tensor(lib.Size([])),
    "new_positional_torch_size_empty": lambda lib: lib.ones(2).new(lib.Size([])),
    "data_keyword": lambda lib: lib.Tensor(data=[1, 2]),
    "data_keyword_tuple_is_data": lambda lib: lib.Tensor(data=(2, 3)),
    "data_keyword_with_device": lambda lib: lib.Tensor(data=[1.0], device="cpu"),
    "data_keyword_int_refused": lambda lib: lib.Tensor(data=3),
    "data_keyword_none_refused": lambda lib: lib.Tensor(data=None),
    "data_keyword_tensor_refused": lambda lib: lib.Tensor(data=lib.ones(2)),
    "new_data_keyword": lambda lib: lib.ones(2, dtype=lib.int64).new(data=[1, 2]),
    "other_keyword": lambda lib: lib.Tensor(other=lib.ones(2, requires_grad=True)),
    "other_keyword_list_refused": lambda lib: lib.Tensor(other=[1]),
    "other_keyword_with_device_refused": lambda lib: lib.Tensor(other=lib.ones(2), device="cpu"),
    "other_positional_with_device_refused": lambda lib: lib.Tensor(lib.ones(2), device="cpu"),
    "new_other_keyword": lambda lib: lib.ones(2).new(other=lib.ones(3)),
    "base_constructor_takes_any_dtype": lambda lib: lib.Tensor(lib.ones(2, dtype=lib.int64)),
    "base_constructor_takes_any_dtype_keyword": lambda lib: lib.Tensor(other=lib.ones(2, dtype=lib.int64)),
    "typed_constructor_refuses_other_dtype": lambda lib: lib.FloatTensor(other=lib.ones(2, dtype=lib.int64)),
    "new_refuses_other_dtype": lambda lib: lib.ones(2).new(lib.ones(2, dtype=lib.int64)),
    "storage_positional": lambda lib: lib.Tensor(lib.arange(3.0).untyped_storage()),
    "typed_storage_positional": lambda lib: lib.Tensor(lib.arange(3.0).storage()),
    "storage_keyword": lambda lib: lib.Tensor(storage=lib.arange(3.0).untyped_storage()),
    "device_tuple_refused": lambda lib: lib.LongTensor(device=(2,)),
    "device_float_refused": lambda lib: lib.Tensor(2, device=1.5),
    "device_dtype_refused": lambda lib: lib.Tensor(2, device=lib.float32),
    "device_bool_refused": lambda lib: lib.Tensor(2, device=True),
    "device_object": lambda lib: lib.Tensor(2, device=lib.device("cpu")),
    "device_meta_refused": lambda lib: lib.Tensor(2, device="meta"),
}


@pytest.mark.parametrize("case", sorted(_LEGACY))
def test_legacy_constructor_takes_its_overloads_arguments_by_name(case):
    assert _outcome(_LEGACY[case], tg) == _outcome(_LEGACY[case], torch)


def test_legacy_constructor_by_name_values_and_memory():
    for lib in (tg, torch):
        t = lib.arange(3.0)
        assert lib.Tensor(data=(2, 3)).tolist() == [2.0, 3.0]
        alias = lib.Tensor(other=t)
        over_storage = lib.Tensor(storage=t.untyped_storage())
        t[0] = 7.0
        assert alias.tolist() == over_storage.tolist() == [7.0, 1.0, 2.0]


# ---- numpy() of a tensor of no elements -------------------------------------------------------------------------

_EMPTY = {
    "empty_2d": lambda lib: lib.empty(0, 4),
    "slice_of_nothing": lambda lib: lib.arange(4.0)[:0],
    "empty_columns": lambda lib: lib.empty(3, 0),
    "transposed": lambda lib: lib.empty(0, 4).t(),
    "int64_3d": lambda lib: lib.zeros(2, 0, 3, dtype=lib.int64),
}


@pytest.mark.parametrize("case", sorted(_EMPTY))
def test_numpy_of_no_elements_is_numpys_own_array_with_zero_strides(case):
    def described(lib):
        n = _EMPTY[case](lib).numpy()
        return n.dtype, n.shape, n.strides, n.flags.owndata, n.flags.writeable, n.flags.c_contiguous

    assert described(tg) == described(torch)


def test_asarray_of_no_elements_as_numpy():
    assert np.asarray(tg.empty(0, 4)).strides == np.asarray(torch.empty(0, 4)).strides == (0, 0)


# ---- t.__pow__ with other arguments ------------------------------------------------------------------------------

_POW = {
    "explicit_none_modulo": lambda lib: lib.tensor([2, 3]).__pow__(2, None),
    "exponent_keyword": lambda lib: lib.tensor([2, 3]).__pow__(exponent=2),
    "exponent_keyword_tensor": lambda lib: lib.tensor([2.0, 3.0], requires_grad=True).__pow__(
        exponent=lib.tensor([2.0, 3.0])),
    "modulo_keyword": lambda lib: lib.tensor([2, 3]).__pow__(2, modulo=5),
    "no_exponent": lambda lib: lib.tensor([2, 3]).__pow__(),
    "three_arguments": lambda lib: pow(lib.tensor([2, 3]), 2, 5),
    "none_modulo_builtin": lambda lib: pow(lib.tensor([2.0, 3.0], requires_grad=True), 2, None),
}


@pytest.mark.parametrize("case", sorted(_POW))
def test_pow_dunder_is_pow_with_type_errors_not_implemented(case):
    assert _outcome(_POW[case], tg) == _outcome(_POW[case], torch)
