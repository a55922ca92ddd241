"""Differences that the programs of ``tests/test_user_programs21_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``cumsum``/``cumprod`` (and ``cumsum_``/``cumprod_``) computing in bool (``dtype=torch.bool``, or in place on a
  bool tensor) returned a running "or"/"and" where torch's scan kernels, which dispatch over every type but Bool,
  refuse ("cumsum_out_cpu" not implemented for 'Bool');
- ``sum``/``prod``/``cumsum``/``cumprod``/``nansum``/``mean`` with an ``out=`` of another dtype computed in their
  own result dtype and cast into out (or refused the cast: "result type Float can't be cast to the desired output
  type Long"); torch computes in out's dtype: ``sum(float32, 0, out=<float64>)`` adds in double, ``sum(x, 0,
  out=<long>)`` truncates each value first, a bool scan's out is refused by its kernel, and nansum's out= kernel
  refuses an integral out of floating values;
- ``randperm(n, dtype=)`` of a dtype that cannot hold ``n - 1`` (``randperm(300, dtype=torch.int8)``, a train/test
  split's indices) wrapped around silently; torch refuses ("value cannot be converted to type int8_t without
  overflow"), and refuses a floating dtype that cannot hold every index exactly ("n cannot be greater than 2049
  for Half type.");
- ``cdist``/``pdist`` with a p other than 0, 1, 2 and inf (Minkowski distances for k-NN) were a few ulp off for
  most distances (NumPy's power and pairwise sums); cdist's scalar loop takes the C library's ``std::pow`` of each
  difference in turn and ``std::pow(sum, 1.0 / p)`` in double, pdist's vector loop Sleef's pow, both with p in
  the input's dtype (float32's p = 2.0000001 is 2: the Euclidean kernel);
- ``torch.Generator`` printed as ``<torch._factories.Generator object at ...>`` (tracegrad's module) where torch's
  is ``<torch._C.Generator object at ...>``.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, every_warning, tg, torch
from _tutorial_lib import normalised


def _outcome(program, lib) -> tuple:
    """What ``program(lib)`` gives (its dtype, shape and values, exactly) or its error, with its warnings."""
    with every_warning(lib) as caught:
        try:
            r = program(lib)
            seen = (str(r.dtype), tuple(r.shape), repr(r.tolist()))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            seen = (type(exc).__name__, str(exc))
    said = [str(w.message).split(" (Triggered internally at")[0] for w in caught]
    return normalised(str(seen)), said


def _same(program) -> None:
    assert _outcome(program, tg) == _outcome(program, torch)


BOOL_SCANS = {
    "cumsum-dtype": lambda t: t.tensor([1, 0, 1]).cumsum(0, dtype=t.bool),
    "cumsum-of-bool-into-bool": lambda t: t.tensor([[True, False]]).cumsum(1, dtype=t.bool),
    "cumsum-size-one-dim": lambda t: t.tensor([[True, False]]).cumsum(0, dtype=t.bool),
    "cumprod-dtype": lambda t: t.tensor([1.0, 2.0]).cumprod(0, dtype=t.bool),
    "cumsum_": lambda t: t.tensor([True, False]).cumsum_(0),
    "cumprod_": lambda t: t.tensor([True, True]).cumprod_(0),
    "bad-dim-first": lambda t: t.tensor([True]).cumsum(3, dtype=t.bool),
    "0-d-is-copied": lambda t: t.tensor(True).cumsum(0, dtype=t.bool),
    "0-d-in-place": lambda t: t.tensor(True).cumprod_(0),
    "empty": lambda t: t.tensor([]).cumsum(0, dtype=t.bool),
    "bool-input-default": lambda t: t.tensor([True, True]).cumsum(0),
}


@pytest.mark.parametrize("program", BOOL_SCANS.values(), ids=BOOL_SCANS.keys())
def test_scans_refuse_bool(program):
    _same(program)


def _into(dtype_name: str, shape=()):
    return lambda t: t.empty(shape, dtype=getattr(t, dtype_name))


FLOATS = lambda t: t.arange(1000) / 7  # noqa: E731 - float32 values whose sum rounds differently in double
OUT_DTYPES = {
    "sum-float64": lambda t: t.sum(FLOATS(t), 0, out=_into("float64")(t)),
    "mean-float64": lambda t: t.mean(FLOATS(t), 0, out=_into("float64")(t)),
    "nansum-float64": lambda t: t.nansum(FLOATS(t), 0, out=_into("float64")(t)),
    "cumsum-float64": lambda t: t.cumsum(FLOATS(t), 0, out=_into("float64", (1000,))(t))[-3:],
    "prod-float64": lambda t: t.prod(t.arange(1, 30) / 7, 0, out=_into("float64")(t)),
    "cumprod-float64": lambda t: t.cumprod(t.arange(1, 30) / 7, 0, out=_into("float64", (29,))(t))[-3:],
    "sum-long-truncates": lambda t: t.sum(t.tensor([1.5, 2.7]), 0, out=_into("long")(t)),
    "sum-dims-long": lambda t: t.sum(t.tensor([[1.5, 2.7]]), (0, 1), out=_into("long")(t)),
    "prod-long": lambda t: t.prod(t.tensor([1.5, 2.5]), 0, out=_into("long")(t)),
    "cumsum-long": lambda t: t.cumsum(t.tensor([1.5, 2.7]), 0, out=_into("long", (2,))(t)),
    "cumprod-long": lambda t: t.cumprod(t.tensor([1.5, 2.5]), 0, out=_into("long", (2,))(t)),
    "sum-bool": lambda t: t.sum(t.tensor([2, 3]), 0, out=_into("bool")(t)),
    "prod-bool": lambda t: t.prod(t.tensor([2, 0]), 0, out=_into("bool")(t)),
    "cumsum-bool": lambda t: t.cumsum(t.tensor([1, 2]), 0, out=_into("bool", (2,))(t)),
    "cumprod-bool": lambda t: t.cumprod(t.tensor([True, False]), 0, out=_into("bool", (2,))(t)),
    "sum-complex-into-real": lambda t: t.sum(t.tensor([1 + 2j, 2]), 0, out=_into("float32")(t)),
    "cumsum-complex-into-real": lambda t: t.cumsum(t.tensor([1 + 2j, 2]), 0, out=_into("float32", (2,))(t)),
    "nansum-long-refused": lambda t: t.nansum(t.tensor([1.5, 2.5]), 0, out=_into("long")(t)),
    "nansum-bool-refused": lambda t: t.nansum(t.tensor([2.0, 3.0]), 0, out=_into("bool")(t)),
    "nansum-empty-long": lambda t: t.nansum(t.tensor([]), 0, out=_into("long")(t)),
    "nansum-integers-bool": lambda t: t.nansum(t.tensor([1, 2]), 0, out=_into("bool")(t)),
    "nansum-complex-refused": lambda t: t.nansum(t.tensor([1.0, 2.0]), 0, out=_into("complex64")(t)),
    "mean-long-cast-refused": lambda t: t.mean(t.tensor([1.0, 2.6]), 0, out=_into("long")(t)),
    "mean-integers-refused": lambda t: t.mean(t.tensor([1, 2]), 0, out=_into("float32")(t)),
    "mean-half": lambda t: t.mean(FLOATS(t), 0, out=_into("float16")(t)),
    "sum-empty-uint32": lambda t: t.sum(t.tensor([]), 0, out=_into("uint32")(t)),
    "sum-uint32-refused": lambda t: t.sum(t.tensor([1.0]), 0, out=_into("uint32")(t)),
    "dtype-and-out-differ": lambda t: t.sum(t.tensor([1.5]), 0, dtype=t.float64, out=_into("long")(t)),
}


@pytest.mark.parametrize("program", OUT_DTYPES.values(), ids=OUT_DTYPES.keys())
def test_reductions_compute_in_outs_dtype(program):
    _same(program)


RANDPERM_RANGES = {
    "int8-fits": lambda t: t.randperm(128, dtype=t.int8).sort().values[-3:],
    "int8-overflows": lambda t: t.randperm(300, dtype=t.int8),
    "uint8-overflows": lambda t: t.randperm(257, dtype=t.uint8),
    "int16-overflows": lambda t: t.randperm(40000, dtype=t.int16),
    "int32-overflows": lambda t: t.randperm(2 ** 31 + 1, dtype=t.int32),
    "out-int8-overflows": lambda t: t.randperm(129, out=t.empty(3, dtype=t.int8)),
    "half-exact": lambda t: t.randperm(2049, dtype=t.float16).sort().values[-2:],
    "half-too-long": lambda t: t.randperm(2050, dtype=t.float16),
    "half-beyond-its-range": lambda t: t.randperm(70000, dtype=t.float16),
    "float-too-long": lambda t: t.randperm(2 ** 24 + 2, dtype=t.float32),
    "negative-first": lambda t: t.randperm(-1, dtype=t.int8),
    "bool-dispatch-last": lambda t: t.randperm(300, dtype=t.bool),
    "empty": lambda t: t.randperm(0, dtype=t.uint8),
}


@pytest.mark.parametrize("program", RANDPERM_RANGES.values(), ids=RANDPERM_RANGES.keys())
def test_randperm_checks_its_dtype_holds_n(program):
    _same(program)


def test_generator_is_torch_c_generator():
    for lib in (tg, torch):
        lib.manual_seed(0)
    assert normalised(repr(tg.Generator())) == normalised(repr(torch.Generator()))
    assert normalised(repr(tg.default_generator)) == normalised(repr(torch.default_generator))
    assert normalised(repr(tg.Generator)) == repr(torch.Generator)
    assert tg._C.Generator is tg.Generator


def _rows(rows: int, columns: int, dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, columns)) * 10.0 ** rng.uniform(-2, 2, (rows, columns))).astype(dtype)


GENERAL_ORDS = [0.5, 1.5, 3, 2.0000001]


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", GENERAL_ORDS)
def test_cdist_of_any_p(dtype, p):
    for m in (1, 3, 5, 17):
        a, b = _rows(9, m, dtype, seed=m), _rows(6, m, dtype, seed=50 + m)
        a[2, 0] = b[1, 0]  # (a zero difference)
        assert_same_bits(tg.cdist(tg.from_numpy(a), tg.from_numpy(b), p),
                         torch.cdist(torch.from_numpy(a), torch.from_numpy(b), p))


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("p", GENERAL_ORDS)
def test_float_pdist_of_any_p(p):
    for m in (1, 3, 8, 9, 17):
        x = _rows(12, m, np.float32, seed=m)
        x[4] = x[7]  # (a zero distance)
        assert_same_bits(tg.nn.functional.pdist(tg.from_numpy(x), p), torch.nn.functional.pdist(torch.from_numpy(x), p))
