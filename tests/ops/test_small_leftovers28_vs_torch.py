"""Small leftovers against torch 2.13: ``narrow_copy(out=)`` resizing its out silently (its kernel calls
``resize_``), ``kthvalue(out=)`` resizing its outs at the keepdim shape (the warning names that shape and the
out unsqueezed at the reduced dim), a uint8 mask written with one value (torch's masked fill checks the mask and
refuses it without the deprecation warning of index_put_), and the positive NaN of float32/float64 ``log2`` and
``log10`` of a negative number. Each program runs on both libraries: results (shape, strides, bits), warnings
and errors (type, message) must be the same."""

from __future__ import annotations

import warnings

import pytest

from tests._lib import tg, torch, warning_texts


def _outcome(program, lib) -> tuple:
    """What ``program(lib)`` gives, with the warnings it raises: (shape, strides, values) of each tensor it
    returns, or its error's type and message."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = program(lib)
            value = [(tuple(t.shape), t.stride(), repr(t.tolist())) for t in result]
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            value = (type(exc).__name__, str(exc))
    return value, warning_texts(caught)


def _assert_same_outcome(program) -> None:
    assert _outcome(program, tg) == _outcome(program, torch)


# ---- narrow_copy(out=) ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("out_shape", [(5,), (0,), (2, 3), (4, 4), ()])
def test_narrow_copy_resizes_its_out_without_warning(out_shape):
    def program(L):
        out = L.zeros(out_shape)
        L.narrow_copy(L.arange(12.0).reshape(4, 3), 0, 1, 2, out=out)
        return [out]

    _assert_same_outcome(program)


# ---- kthvalue(out=) -----------------------------------------------------------------------------------------------

KTH_CASES = [  # (input shape, dim, keepdim, values' out shape, indices' out shape)
    ((1, 3), 1, False, (3,), (3,)),
    ((1, 3), 1, False, (1, 1), (1,)),
    ((1, 3), 1, False, (), (2, 1)),
    ((2, 3, 4), 1, False, (1, 1), (3,)),
    ((2, 3, 4), -1, False, (2, 1), (2, 3, 1)),
    ((3,), 0, False, (1,), ()),
    ((2, 3), 0, True, (3,), (1, 1)),
    ((), 0, False, (2,), (1,)),
]


@pytest.mark.parametrize("shape, dim, keepdim, values_shape, indices_shape", KTH_CASES)
def test_kthvalue_resizes_its_outs_at_the_keepdim_shape(shape, dim, keepdim, values_shape, indices_shape):
    def program(L):
        values, indices = L.zeros(values_shape), L.zeros(indices_shape, dtype=L.long)
        L.kthvalue(L.arange(float(max(1, L.zeros(shape).numel()))).reshape(shape), 1, dim, keepdim,
                   out=(values, indices))
        return [values, indices]

    _assert_same_outcome(program)


# ---- writing through a uint8 mask --------------------------------------------------------------------------------

MASK_WRITES = {  # (mask, key around it, value)
    "mask of the wrong length, one value": ([1, 0, 1], lambda m: m, 1.0),
    "mask of the wrong shape, one value": ([[1, 0], [1, 1], [0, 0]], lambda m: m, 1.0),
    "mask of the right shape, one value": ([1, 0], lambda m: m, 2.0),
    "mask after an integer, one value": ([1, 0], lambda m: (0, m), 2.0),
    "one-element tensor value": ([1, 0, 1], lambda m: m, "tensor1"),
    "mask of the right length, a row": ([1, 0], lambda m: m, "row"),
    "mask of the right length, a wrong value": ([1, 1], lambda m: m, "four"),
}


@pytest.mark.parametrize("case", MASK_WRITES)
def test_uint8_mask_write_warns_only_through_index_put(case):
    mask, key, value = MASK_WRITES[case]

    def program(L):
        x = L.zeros(2, 3)
        v = {"tensor1": L.ones(1), "row": L.ones(3), "four": L.ones(4)}.get(value, value)
        x[key(L.tensor(mask, dtype=L.uint8))] = v
        return [x]

    _assert_same_outcome(program)


# ---- log2 / log10 of negative numbers ------------------------------------------------------------------------------

# (not -3.5: torch's half log2 gives it a NaN of another payload, 0xff00, which tracegrad does not reproduce)
LOG_INPUTS = [-1.0, float("-inf"), float("nan"), -float("nan"), -0.0, 0.0, 2.0, -1e-30, -4.0, 7.0, 1.0, -2.0]


@pytest.mark.parametrize("dtype, bits", [("float32", "int32"), ("float64", "int64"), ("float16", "int16")])
@pytest.mark.parametrize("op", ["log2", "log10"])
@pytest.mark.parametrize("size", [1, 12, 40])
def test_log_of_negatives_has_torchs_nan_bits(op, dtype, bits, size):
    def program(L):
        x = L.tensor((LOG_INPUTS * 4)[:size], dtype=getattr(L, dtype))
        return getattr(L, op)(x).view(getattr(L, bits)).tolist()

    assert program(tg) == program(torch)


@pytest.mark.parametrize("op", ["log2", "log10"])
def test_log_of_negative_integers_has_torchs_nan_bits(op):
    def program(L):
        return getattr(L, op)(L.tensor([-1, -5, 0, 3])).view(L.int32).tolist()

    assert program(tg) == program(torch)
