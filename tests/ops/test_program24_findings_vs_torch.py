"""Differences that the programs of ``tests/test_user_programs24_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- a Python int that an integer kernel converts to its dtype (``Scalar::to<scalar_t>()``, checked by c10) was
  wrapped silently or refused by NumPy: ``where(mask, int8_tensor, 300)`` gave 44, ``int8_tensor ** 300`` computed,
  ``F.threshold(uint8, 50, 256)`` and ``addcmul(..., value=300)`` raised NumPy's ``OverflowError: Python integer
  300 out of bounds for uint8``; torch refuses "value cannot be converted to type int8_t without overflow" and
  reads -1 as 255 for an unsigned type (threshold's -1 bound on uint8 is 255, where tracegrad compared with -1);
  threshold's replacement ``value`` in half was not checked either (70000 gave inf);
- ``torch.finfo``/``iinfo`` compared by identity (``finfo(torch.half) == finfo(torch.float16)`` was False), refused
  the Python types torch's parser reads as dtypes (``finfo(float)`` is float64's, ``iinfo(int)`` int64's), took
  ``finfo(None)`` as the default dtype, and worded a non-dtype argument as a non-floating dtype;
- ``torch.cpu.amp.autocast``/``GradScaler`` (and the cuda ones) printed as classes of ``torch.amp``'s modules
  (``<class 'torch.amp.autocast_mode.autocast'>``); torch's live in ``torch.cpu.amp.autocast_mode`` and friends.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch, value_or_error
from _tutorial_lib import normalised

MASK = [True, False]

INTEGER_SCALARS = {
    "where-int8-300": lambda t: t.where(t.tensor(MASK), t.tensor([1, 2], dtype=t.int8), 300),
    "where-300-int8": lambda t: t.where(t.tensor(MASK), 300, t.tensor([1, 2], dtype=t.int8)),
    "where-int8-minus-129": lambda t: t.where(t.tensor(MASK), t.tensor([1, 2], dtype=t.int8), -129),
    "where-uint8-256": lambda t: t.where(t.tensor(MASK), t.tensor([1, 2], dtype=t.uint8), 256),
    "where-uint8-minus-256": lambda t: t.where(t.tensor(MASK), t.tensor([1, 2], dtype=t.uint8), -256),
    "where-uint8-minus-255": lambda t: t.where(t.tensor(MASK), t.tensor([1, 2], dtype=t.uint8), -255),
    "where-int32-2**40": lambda t: t.where(t.tensor(MASK), t.tensor([1, 2], dtype=t.int32), 2**40),
    "where-int64-2**63": lambda t: t.where(t.tensor(MASK), t.tensor([1, 2]), 2**63),
    "where-0d-int8": lambda t: t.where(t.tensor(MASK), t.tensor(1, dtype=t.int8), 300),
    "where-method": lambda t: t.tensor([1, 2], dtype=t.int8).where(t.tensor(MASK), 300),
    "where-int8-tensor-300": lambda t: t.where(t.tensor(MASK), t.tensor([1, 2], dtype=t.int8), t.tensor(300)),
    "where-int8-float": lambda t: t.where(t.tensor(MASK), t.tensor([1, 2], dtype=t.int8), 300.0),
    "pow-int8-128": lambda t: t.tensor([1, 2], dtype=t.int8).pow(128),
    "pow-int8-127": lambda t: t.tensor([1, 2], dtype=t.int8).pow(127),
    "pow-int16-2**20": lambda t: t.tensor([1, 2], dtype=t.int16).pow(2**20),
    "pow_-int8-300": lambda t: t.tensor([1, 2], dtype=t.int8).pow_(300),
    "pow-operator": lambda t: t.tensor([1, 2], dtype=t.int8) ** 300,
    "pow-negative-first": lambda t: t.tensor([1, 2], dtype=t.uint8).pow(-300),
    "pow-tensor-exponent": lambda t: t.tensor([1, 2], dtype=t.int8).pow(t.tensor(300)),
    "threshold-bound-300": lambda t: t.nn.functional.threshold(t.tensor([1, 2], dtype=t.uint8), 300, 1),
    "threshold-bound-minus-1": lambda t: t.nn.functional.threshold(t.tensor([1, 2], dtype=t.uint8), -1, 1),
    "threshold-value-minus-1": lambda t: t.nn.functional.threshold(t.tensor([1, 2], dtype=t.uint8), 1, -1),
    "threshold-value-minus-129": lambda t: t.nn.functional.threshold(t.tensor([1, 2], dtype=t.int8), 1, -129),
    "threshold_-value-300": lambda t: t.nn.functional.threshold_(t.tensor([1, 2], dtype=t.int8), 1, 300),
    "threshold-half-value-int": lambda t: t.nn.functional.threshold(t.tensor([1, 2], dtype=t.half), 1, 70000),
    "threshold-half-value-float": lambda t: t.nn.functional.threshold(t.tensor([1, 2], dtype=t.half), 1, 7e4),
    "threshold-half-value-largest": lambda t: t.nn.functional.threshold(t.tensor([1, 2], dtype=t.half), 1, 65519.0),
    "threshold-int8-value-float": lambda t: t.nn.functional.threshold(t.tensor([1, 2], dtype=t.int8), 1, 1.5),
    "addcmul-value-minus-129": lambda t: t.tensor([1, 2], dtype=t.int8).addcmul(
        t.tensor([1, 2], dtype=t.int8), t.tensor([1, 2], dtype=t.int8), value=-129),
    "addcmul-uint8-value-minus-1": lambda t: t.tensor([1, 2], dtype=t.uint8).addcmul(
        t.tensor([1, 2], dtype=t.uint8), t.tensor([1, 2], dtype=t.uint8), value=-1),
    "addcmul-int32-value-2**40": lambda t: t.tensor([1, 2], dtype=t.int32).addcmul(
        t.tensor([1, 2], dtype=t.int32), t.tensor([1, 2], dtype=t.int32), value=2**40),
    "addcmul_-value-300": lambda t: t.tensor([1, 2], dtype=t.int8).addcmul_(
        t.tensor([1, 2], dtype=t.int8), t.tensor([1, 2], dtype=t.int8), value=300),
    "addcmul-promoted-to-int64": lambda t: t.tensor([1, 2], dtype=t.uint8).addcmul(
        t.tensor([1, 2]), t.tensor([1, 2], dtype=t.uint8), value=300),
}


@pytest.mark.parametrize("program", INTEGER_SCALARS.values(), ids=INTEGER_SCALARS.keys())
def test_integer_kernels_convert_numbers_as_c10_does(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)


def _shown(program, lib) -> str:
    """What ``program(lib)`` gives, printed (its repr, normalised), or its error."""
    try:
        return normalised(repr(program(lib)))
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return f"{type(exc).__name__}: {normalised(str(exc))}"


TYPE_INFO = {
    "finfo-equal-aliases": lambda t: t.finfo(t.half) == t.finfo(t.float16),
    "finfo-complex-is-real": lambda t: t.finfo(t.complex64) == t.finfo(t.float32),
    "finfo-not-equal": lambda t: t.finfo(t.bfloat16) != t.finfo(t.float16),
    "finfo-beside-iinfo": lambda t: t.finfo(t.float64) == t.iinfo(t.int64),
    "finfo-beside-number": lambda t: t.finfo(t.float64) == 3,
    "iinfo-equal": lambda t: t.iinfo(t.int8) == t.iinfo(t.int8),
    "iinfo-not-equal": lambda t: t.iinfo(t.int8) == t.iinfo(t.uint8),
    "finfo-float": lambda t: t.finfo(float),
    "finfo-complex": lambda t: t.finfo(complex),
    "finfo-int": lambda t: t.finfo(int),
    "finfo-bool": lambda t: t.finfo(bool),
    "iinfo-int": lambda t: t.iinfo(int),
    "iinfo-bool": lambda t: t.iinfo(bool),
    "iinfo-float": lambda t: t.iinfo(float),
    "finfo-str": lambda t: t.finfo("float32"),
    "iinfo-str": lambda t: t.iinfo("int32"),
    "finfo-none": lambda t: t.finfo(None),
    "iinfo-none": lambda t: t.iinfo(None),
    "finfo-list-type": lambda t: t.finfo(list),
    "finfo-number": lambda t: t.finfo(2.5),
    "finfo-default": lambda t: t.finfo(),
    "finfo-keyword": lambda t: t.finfo(type=t.float16),
}


@pytest.mark.parametrize("program", TYPE_INFO.values(), ids=TYPE_INFO.keys())
def test_type_info_arguments_and_equality(program):
    assert _shown(program, tg) == _shown(program, torch)


LEGACY_AMP = {
    "cpu-autocast": lambda t: t.cpu.amp.autocast,
    "cuda-autocast": lambda t: t.cuda.amp.autocast,
    "cpu-grad-scaler": lambda t: t.cpu.amp.GradScaler,
    "cuda-grad-scaler": lambda t: t.cuda.amp.GradScaler,
}


@pytest.mark.parametrize("program", LEGACY_AMP.values(), ids=LEGACY_AMP.keys())
def test_legacy_amp_classes_print_as_torch_s(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _shown(lambda t: (program(t), type(program(t)())), tg) == _shown(
            lambda t: (program(t), type(program(t)())), torch)
