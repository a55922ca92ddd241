"""Factories with ``out=``: the result is written into ``out`` (which is returned), takes ``out``'s dtype, and
resizes it where the shapes differ; a ``dtype=`` other than ``out``'s is refused in torch's words. Random
factories draw the same numbers into ``out`` as into a fresh tensor."""

from __future__ import annotations

import pytest

from tests._lib import tg, torch

CALLS = {
    "zeros": lambda lib, o: lib.zeros(2, 3, out=o),
    "ones": lambda lib, o: lib.ones(2, 3, out=o),
    "empty": lambda lib, o: lib.empty(2, 3, out=o),
    "full": lambda lib, o: lib.full((2, 3), 7.5, out=o),
    "eye": lambda lib, o: lib.eye(2, 3, out=o),
    "arange": lambda lib, o: lib.arange(6.0, out=o),
    "linspace": lambda lib, o: lib.linspace(0, 5, 6, out=o),
    "logspace": lambda lib, o: lib.logspace(0, 1, 6, out=o),
    "rand": lambda lib, o: lib.rand(2, 3, out=o),
    "randn": lambda lib, o: lib.randn(2, 3, out=o),
    "randint": lambda lib, o: lib.randint(0, 10, (2, 3), out=o),
    "randperm": lambda lib, o: lib.randperm(6, out=o),
    "zeros with another dtype": lambda lib, o: lib.zeros(2, 3, dtype=lib.float64, out=o),
    "arange with another dtype": lambda lib, o: lib.arange(6, dtype=lib.int32, out=o),
}


def _outcome(lib, call, out_dtype: str, out_shape: tuple):
    lib.manual_seed(0)
    out = lib.zeros(out_shape, dtype=getattr(lib, out_dtype))
    try:
        result = CALLS[call](lib, out)
    except (RuntimeError, NotImplementedError) as exc:
        return type(exc).__name__, str(exc)
    return result is out, tuple(out.shape), str(out.dtype), out.reshape(-1).tolist()


@pytest.mark.parametrize("out_shape", [(6,), (2, 3)])
@pytest.mark.parametrize("out_dtype", ["float32", "int64"])
@pytest.mark.parametrize("call", list(CALLS))
def test_factory_writes_into_out_as_torch(call, out_dtype, out_shape):
    assert _outcome(tg, call, out_dtype, out_shape) == _outcome(torch, call, out_dtype, out_shape)


def test_out_of_the_right_shape_is_written_in_place():
    """A view of ``out`` sees what the factory wrote."""
    for lib in (tg, torch):
        out = lib.zeros(2, 3)
        row = out[1]
        lib.full((2, 3), 4.0, out=out)
        assert row.tolist() == [4.0, 4.0, 4.0]


def _range_into(lib, factory: str, out_shape: tuple) -> tuple:
    """The out tensor's shape, strides and values after a range is written into it, and the warnings shown with
    their location (torch's arange warns at the caller's line where it resizes an out that has elements)."""
    import warnings

    out = lib.empty(*out_shape)
    call = {"arange": lambda: lib.arange(5, out=out), "float arange": lambda: lib.arange(0, 1, 0.25, out=out),
            "linspace": lambda: lib.linspace(0, 1, 5, out=out), "logspace": lambda: lib.logspace(0, 1, 5, out=out)}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call[factory]()
    shown = [(w.category.__name__, str(w.message).split(" (Triggered")[0], w.filename == __file__) for w in seen]
    return tuple(out.shape), out.stride(), [round(v, 6) for v in out.reshape(-1).tolist()], shown


@pytest.mark.parametrize("out_shape", [(3,), (5,), (0,), (2, 2), (5, 1), (1, 5)])
@pytest.mark.parametrize("factory", ["arange", "float arange", "linspace", "logspace"])
def test_ranges_resize_out_and_warn_as_torch(factory, out_shape):
    assert _range_into(tg, factory, out_shape) == _range_into(torch, factory, out_shape)
