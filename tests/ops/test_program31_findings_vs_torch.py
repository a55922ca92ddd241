"""Differences that the programs of ``tests/test_user_programs31_vs_torch.py`` (NumPy code ported to torch) ran
into, each reduced to the call that caused it and compared with torch.

- NumPy's keyword spellings that torch's parser takes (``axis=`` for ``dim=``, ``keepdims=``, ``x``/``a``/``x1``
  for ``input``, ``x2`` for ``other``) were refused by functions tracegrad writes in Python (``diff``, ``sort`` and
  ``argsort`` with ``stable=``, ``trapezoid``, ``cumulative_trapezoid``, ``linalg.vector_norm``, ``linalg.norm``)
  and by operators bound by name (``aminmax``, ``linalg.cross``, the unary functions' ``x=``/``a=``): "got an
  unexpected keyword argument 'axis'"; a spelling given beside another for the same parameter is refused in
  torch's words (the first keyword that is not torch's own name);
- ``torch.asarray`` of a NumPy array cast to another dtype first and so skipped from_numpy's refusals (negative
  strides, a foreign byte order, strides of part of an element) that torch gives whatever the dtype; it aliased a
  0-d array (torch copies it, and then takes ``copy=True`` with a cast as an alias's refusal), took a NumPy bool
  with ``copy=False``, and worded an aliasing refusal "NumPy array with dtype 'float32'" for torch's "tensor with
  dtype 'Float'";
- ``from_numpy``/``tensor``/``as_tensor``/``asarray`` of a big-endian array said "can't convert np.ndarray of type
  numpy.float32" (a TypeError) where torch says the byte order differs (a ValueError), and took an array whose
  strides are not whole elements (torch refuses it).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch, value_or_error

_KEYWORD_SPELLINGS = {
    "diff_axis": lambda t, x: t.diff(x, axis=0),
    "diff_method_axis": lambda t, x: x.diff(axis=1),
    "sort_stable_axis": lambda t, x: t.sort(x, axis=1, stable=True).values,
    "argsort_stable_axis": lambda t, x: t.argsort(x, axis=0, stable=True),
    "trapezoid_axis": lambda t, x: t.trapezoid(x, axis=1),
    "trapz_axis": lambda t, x: t.trapz(x, axis=0),
    "cumulative_trapezoid_axis": lambda t, x: t.cumulative_trapezoid(x, axis=1),
    "vector_norm_axis_keepdims": lambda t, x: t.linalg.vector_norm(x, axis=1, keepdims=True),
    "linalg_norm_axis": lambda t, x: t.linalg.norm(x, axis=0),
    "aminmax_axis": lambda t, x: t.aminmax(x, axis=1).max,
    "linalg_cross_axis": lambda t, x: t.linalg.cross(x[:, :3], x[:, 1:], axis=1),
    "abs_x": lambda t, x: t.abs(x=x),
    "neg_a": lambda t, x: t.neg(a=x),
    "sqrt_x1": lambda t, x: t.sqrt(x1=x),
    "exp_two_spellings": lambda t, x: t.exp(x=x, a=x),
    "exp_positional_and_x": lambda t, x: t.exp(x, x=x),
    "exp_input_and_x": lambda t, x: t.exp(input=x, x=x),
    "exp_unknown_then_x": lambda t, x: t.exp(foo=1, x=x),
    "diff_axis_and_dim": lambda t, x: t.diff(x, axis=0, dim=0),
}


@pytest.mark.parametrize("case", sorted(_KEYWORD_SPELLINGS))
def test_numpy_keyword_spellings_are_taken_as_torch_takes_them(case):
    def program(lib):
        return _KEYWORD_SPELLINGS[case](lib, lib.arange(12.0).reshape(3, 4))

    assert value_or_error(program, tg) == value_or_error(program, torch)


def _arrays() -> dict:
    odd = np.ndarray((2,), dtype=np.int32, buffer=np.zeros(12, np.uint8), strides=(6,))
    return {"float32": np.arange(3, dtype=np.float32), "reversed": np.arange(3.0)[::-1], "big_endian":
            np.arange(3, dtype=">f4"), "odd_strides": odd, "0d": np.array(2.0), "scalar": np.float64(2.0),
            "bool_scalar": np.bool_(True), "strings_reversed": np.array(["a", "b"])[::-1]}


_OPTIONS = {"plain": {}, "copy": {"copy": True}, "alias": {"copy": False}, "to_f64": {"dtype": "float64"},
            "to_f32_copy": {"dtype": "float32", "copy": True}, "to_f32_alias": {"dtype": "float32", "copy": False}}


@pytest.mark.parametrize("options", sorted(_OPTIONS))
@pytest.mark.parametrize("array", sorted(_arrays()))
def test_asarray_of_numpy_reads_the_array_as_torch_does(array, options):
    def program(lib):
        kwargs = dict(_OPTIONS[options])
        if "dtype" in kwargs:
            kwargs["dtype"] = getattr(lib, kwargs["dtype"])
        return lib.asarray(_arrays()[array], **kwargs)

    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("array", ["big_endian", "odd_strides", "strings_reversed"])
@pytest.mark.parametrize("factory", ["from_numpy", "tensor", "as_tensor"])
def test_arrays_torch_cannot_take_over_are_refused_in_its_words(factory, array):
    def program(lib):
        return getattr(lib, factory)(_arrays()[array])

    assert value_or_error(program, tg) == value_or_error(program, torch)


def _shares_and_warns(lib, options: dict) -> tuple:
    """Whether asarray of a 0-d or a read-only array shares its memory, and the warnings given."""
    zero_d, read_only = np.array(2.0), np.arange(3.0)
    read_only.flags.writeable = False
    before = lib.is_warn_always_enabled()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.set_warn_always(True)
        try:
            of_zero_d = lib.asarray(zero_d)
            lib.asarray(read_only, **options)
        finally:
            lib.set_warn_always(before)
    zero_d[()] = 5.0
    return of_zero_d.item(), [str(w.message).split(" (Triggered")[0] for w in caught]


@pytest.mark.parametrize("options", [{}, {"copy": True}, {"dtype": "float32"}])
def test_asarray_copies_a_0d_array_and_warns_of_a_read_only_one_only_when_sharing(options):
    def run(lib):
        return _shares_and_warns(lib, {k: getattr(lib, v) if k == "dtype" else v for k, v in options.items()})

    assert run(tg) == run(torch)
