"""Review of the reductions and scans that compute in ``out=``'s dtype (sum, prod, nansum, mean, cumsum, cumprod),
compared with torch: out's dtype refused by the out= kernel only after torch's meta function resized out (with
its deprecation warning), mean's integral out holding the sum its in-place division then refuses (the quotient's
dtype the default one), nansum's barebones unsigned and complex outs refused as torch refuses them.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch
from _tutorial_lib import normalised


def _outcome(program, lib) -> tuple:
    """What ``program(lib)`` gives, or its error, with its warnings and what ``out`` holds afterwards (its values
    where it did not grow: a grown out's new elements are uninitialised memory)."""
    out = program.out(lib)
    before = out.numel()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = program(lib, out)
            seen = (str(r.dtype), tuple(r.shape), repr(r.tolist()))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            seen = (type(exc).__name__, str(exc))
    said = [str(w.message).split(" (Triggered internally at")[0] for w in caught]
    return normalised(str(seen)), said, tuple(out.shape), repr(out.tolist()) if out.numel() <= before else None


class _Case:
    def __init__(self, call, out_dtype: str, out_shape: tuple, fill=7):
        self.call, self.out_dtype, self.out_shape, self.fill = call, out_dtype, out_shape, fill

    def out(self, t):
        return t.full(self.out_shape, self.fill, dtype=getattr(t, self.out_dtype))

    def __call__(self, t, out):
        return self.call(t, out)


X = lambda t: t.tensor([[1.5, 2.7, 3.0], [0.2, 0.3, 0.1]])  # noqa: E731
CASES = {
    # out resized (with its warning) before the kernel's dispatch refuses out's dtype
    "cumsum-bool-out-resized": _Case(lambda t, o: t.cumsum(X(t), 1, out=o), "bool", (7,), True),
    "cumprod-bool-out-resized": _Case(lambda t, o: t.cumprod(X(t), 0, out=o), "bool", (2,), True),
    "cumsum-dtype-bool-out-resized": _Case(lambda t, o: t.cumsum(X(t), 1, dtype=t.bool, out=o), "bool", (1,), True),
    "nansum-long-out-resized": _Case(lambda t, o: t.nansum(X(t), 1, out=o), "long", (7,)),
    "nansum-bool-out-resized": _Case(lambda t, o: t.nansum(X(t), 1, out=o), "bool", (7,), True),
    "sum-uint16-out-resized": _Case(lambda t, o: t.sum(t.full((5,), 200), 0, out=o), "uint16", (3,)),
    "cumsum-uint64-out-resized": _Case(lambda t, o: t.cumsum(t.full((5,), 200), 0, out=o), "uint64", (3,)),
    "prod-uint32-out-resized": _Case(lambda t, o: t.prod(X(t), 1, out=o), "uint32", (3,)),
    # nansum: a complex out of floats is refused by its kernel; a barebones unsigned one as sum's of integers
    "nansum-complex-out": _Case(lambda t, o: t.nansum(X(t), 1, out=o), "complex64", (2,)),
    "nansum-complex-out-resized": _Case(lambda t, o: t.nansum(X(t), 1, out=o), "complex128", (5,)),
    "nansum-floats-uint32-out": _Case(lambda t, o: t.nansum(X(t), 1, out=o), "uint32", (7,)),
    "nansum-longs-uint32-out": _Case(lambda t, o: t.nansum(t.ones(3, dtype=t.long), 0, out=o), "uint32", ()),
    "nansum-bools-uint16-out": _Case(lambda t, o: t.nansum(t.ones(3, dtype=t.bool), 0, out=o), "uint16", ()),
    "nansum-longs-complex-out": _Case(lambda t, o: t.nansum(t.ones(3, dtype=t.long), 0, out=o), "complex64", ()),
    "nansum-empty-complex-out": _Case(lambda t, o: t.nansum(t.ones(0), 0, out=o), "complex64", (2,)),
    # mean sums into an integral out, then its in-place division (a Float quotient) is refused
    "mean-double-long-out": _Case(lambda t, o: t.mean(X(t).double(), 1, out=o), "long", (2,)),
    "mean-long-out-resized": _Case(lambda t, o: t.mean(X(t), 1, out=o), "long", (5,)),
    "mean-bool-out": _Case(lambda t, o: t.mean(X(t).half(), 1, out=o), "bool", (2,), False),
    "mean-int8-out-keepdim": _Case(lambda t, o: t.mean(X(t), 1, True, out=o), "int8", (2, 1)),
    # without a dim (mean.dtype_out) out must hold the input's dtype, checked before anything is resized
    "mean-full-long-out": _Case(lambda t, o: t.mean(X(t), out=o), "long", ()),
    "mean-full-bool-out-of-longs": _Case(lambda t, o: t.mean(t.ones(3, dtype=t.long), out=o), "bool", (4,), False),
    "mean-full-uint32-out-of-longs": _Case(lambda t, o: t.mean(t.ones(3, dtype=t.long), out=o), "uint32", (4,)),
    "mean-full-float-out-of-complex": _Case(lambda t, o: t.mean(X(t).to(t.complex64), out=o), "float32", (4,)),
    "mean-full-empty-uint32-out": _Case(lambda t, o: t.mean(t.ones(0), out=o), "uint32", (4,)),
    "mean-full-double-out": _Case(lambda t, o: t.mean(X(t), out=o), "float64", (4,)),
    "mean-full-dtype-differs": _Case(lambda t, o: t.mean(X(t), dtype=t.float64, out=o), "float32", ()),
    "mean-dims-long-out": _Case(lambda t, o: t.mean(X(t), (0, 1), out=o), "long", ()),
    "mean-complex-long-out": _Case(lambda t, o: t.mean(X(t).to(t.complex64), 0, out=o), "long", (3,)),
    "mean-empty-long-out": _Case(lambda t, o: t.mean(t.ones(0, 3), 0, out=o), "long", (3,)),
    "mean-0d-long-out": _Case(lambda t, o: t.mean(t.tensor(2.5), 0, out=o), "long", ()),
    "mean-uint32-out": _Case(lambda t, o: t.mean(X(t), 1, out=o), "uint32", (2,)),
    "mean-uint32-out-resized": _Case(lambda t, o: t.mean(X(t), 1, out=o), "uint32", (7,)),
    "mean-empty-uint32-out": _Case(lambda t, o: t.mean(t.ones(0, 3), 0, out=o), "uint32", (3,)),
    "mean-integers-long-out": _Case(lambda t, o: t.mean(t.ones(2, 3, dtype=t.long), 0, out=o), "long", (3,)),
    "mean-dtype-long-long-out": _Case(lambda t, o: t.mean(X(t), 0, dtype=t.long, out=o), "long", (3,)),
    # what still computes
    "cumsum-0d-bool-out": _Case(lambda t, o: t.cumsum(t.tensor(2.5), 0, out=o), "bool", (4,), False),
    "cumsum-empty-bool-out": _Case(lambda t, o: t.cumsum(t.ones(0, 3), 0, out=o), "bool", (7,), False),
    "nansum-empty-long-out-resized": _Case(lambda t, o: t.nansum(t.ones(0, 3), 0, out=o), "long", (7,)),
    "sum-long-out-resized": _Case(lambda t, o: t.sum(X(t), 1, out=o), "long", (7,)),
}


@pytest.mark.parametrize("program", CASES.values(), ids=CASES.keys())
def test_out_dtype_refusals_and_resizes(program):
    assert _outcome(program, tg) == _outcome(program, torch)


def test_mean_integral_out_names_the_default_dtype():
    """The refused quotient of mean's in-place division has the default dtype, whatever the input's."""
    def program(lib):
        previous = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            return _outcome(CASES["mean-long-out-resized"], lib)
        finally:
            lib.set_default_dtype(previous)

    assert program(tg) == program(torch)


DISTANCES_OF_NAN_P = {
    "cdist": lambda t: t.cdist(t.ones(3, 4), t.zeros(2, 4), float("nan")),
    "pdist": lambda t: t.pdist(t.ones(3, 4), float("nan")),
    "cdist-empty": lambda t: t.cdist(t.ones(0, 4), t.zeros(2, 4), float("nan")),
}


@pytest.mark.parametrize("program", DISTANCES_OF_NAN_P.values(), ids=DISTANCES_OF_NAN_P.keys())
def test_distances_refuse_a_nan_p(program):
    """ATen checks ``p >= 0``, which a NaN p fails (tracegrad checked ``p < 0`` and gave NaN distances)."""
    def outcome(lib):
        try:
            return repr(program(lib).tolist())
        except RuntimeError as exc:
            return str(exc)

    assert outcome(tg) == outcome(torch)
