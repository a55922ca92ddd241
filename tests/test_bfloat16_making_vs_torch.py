"""bfloat16 tensors made from numbers or cast from float tensors get torch's NaN bits and range refusals.

Before, every NaN came out as ml_dtypes rounds it (keeping its sign: -nan was 0xffc0), and ``full``/``new_full``
of a value beyond bfloat16's range gave inf (``full_like`` of a float32 tensor named float in its refusal). Now a
number is converted as c10 converts a Scalar (any NaN: 0x7fc0; refused beyond the range but for a single element),
and a cast (``to``, ``bfloat16()``, ``type``, ``copy_``) gives each NaN the bits of ATen's copy loop: float32 in
vectors (0xffff) along a run contiguous in source and target, float64 in blocks of 16 with a scalar tail (0x7fc0),
float16 and strided or broadcast sources in scalar code.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests._lib import bits_or_error, tg, torch

NAN = float("nan")
_SIZES = (1, 8, 16, 17, 32, 33, 70)
_FLOAT_BITS = {  # NaNs of both signs and with payloads, and ordinary values, per source dtype
    "float32": ("int32", [0x7FC00000, -0x400000, 0x7F800001, 0x7FC12345, 0x3F800000, -0x3FC00000]),
    "float64": ("int64", [0x7FF8000000000000, -0x8000000000000, 0x7FF0000000000001, 0x7FF8123400000000,
                          0x3FF0000000000000, -1]),
    "float16": ("int16", [0x7E00, -0x200, 0x7C01, 0x7E12, 0x3C00, -0x4200]),
}


def _floats(lib, dtype: str, n: int):
    int_name, bits = _FLOAT_BITS[dtype]
    raw = lib.tensor([bits[i % len(bits)] for i in range(n)], dtype=getattr(lib, int_name))
    return raw.view(getattr(lib, dtype))


def _same(program) -> None:
    assert bits_or_error(program, tg) == bits_or_error(program, torch)


MADE = {
    "tensor_list": lambda lib: lib.tensor([NAN, -NAN, 1.5], dtype=lib.bfloat16),
    "tensor_0d": lambda lib: lib.tensor(-NAN, dtype=lib.bfloat16),
    "tensor_nested": lambda lib: lib.tensor([[NAN, 1e39], [-NAN, 2**40 + 1]], dtype=lib.bfloat16),
    "full": lambda lib: lib.full((40,), -NAN, dtype=lib.bfloat16),
    "full_one": lambda lib: lib.full((1,), -NAN, dtype=lib.bfloat16),
    "new_full": lambda lib: lib.zeros(2).new_full((3,), -NAN, dtype=lib.bfloat16),
    "new_full_of_bf16": lambda lib: lib.zeros(2, dtype=lib.bfloat16).new_full((3,), -NAN),
    "full_like_float32": lambda lib: lib.full_like(lib.zeros(3), -NAN, dtype=lib.bfloat16),
    "full_like_float32_one": lambda lib: lib.full_like(lib.zeros(1), -NAN, dtype=lib.bfloat16),
    "full_like_transposed": lambda lib: lib.full_like(lib.zeros(3, 2).t(), -NAN, dtype=lib.bfloat16),
    "full_like_bf16_value": lambda lib: lib.full_like(lib.zeros(3, dtype=lib.bfloat16),
                                                      lib.tensor(-NAN, dtype=lib.bfloat16)),
    "full_like_float_of_bf16_value": lambda lib: lib.full_like(lib.zeros(3), lib.tensor(-NAN, dtype=lib.bfloat16)),
    "scalar_tensor": lambda lib: lib.scalar_tensor(-NAN, dtype=lib.bfloat16),
    "scalar_tensor_big": lambda lib: lib.scalar_tensor(1e39, dtype=lib.bfloat16),
    "scalar_tensor_int": lambda lib: lib.scalar_tensor(2**40 + 1, dtype=lib.bfloat16),
}


@pytest.mark.parametrize("name", MADE)
def test_made_from_numbers(name):
    _same(MADE[name])


BEYOND = {
    "full": lambda lib, v: lib.full((2,), v, dtype=lib.bfloat16),
    "full_one": lambda lib, v: lib.full((1,), v, dtype=lib.bfloat16),
    "new_full": lambda lib, v: lib.zeros(2).new_full((2,), v, dtype=lib.bfloat16),
    "full_like": lambda lib, v: lib.full_like(lib.zeros(2), v, dtype=lib.bfloat16),
    "full_like_one": lambda lib, v: lib.full_like(lib.zeros(1), v, dtype=lib.bfloat16),
    "full_like_of_bf16": lambda lib, v: lib.full_like(lib.zeros(2, dtype=lib.bfloat16), v),
}


@pytest.mark.parametrize("value", [1e39, -3.3961e38, float("inf"), 2**40 + 1, 10.0**300])
@pytest.mark.parametrize("name", BEYOND)
def test_beyond_range(name, value):
    _same(lambda lib: BEYOND[name](lib, value))


def _set_items(lib):
    c = lib.zeros(3, dtype=lib.bfloat16)
    c[1] = -NAN
    c[2] = lib.tensor(-NAN)
    return c


def test_item_set_to_nan():
    _same(_set_items)


CASTS = {
    "to": lambda x, lib: x.to(lib.bfloat16),
    "bfloat16": lambda x, lib: x.bfloat16(),
    "type": lambda x, lib: x.type(lib.bfloat16),
}


@pytest.mark.parametrize("n", _SIZES)
@pytest.mark.parametrize("dtype", _FLOAT_BITS)
@pytest.mark.parametrize("cast", CASTS)
def test_cast_contiguous(cast, dtype, n):
    _same(lambda lib: CASTS[cast](_floats(lib, dtype, n), lib))


LAYOUTS = {
    "strided": lambda x: x[::2],
    "transposed": lambda x: x[:120].reshape(3, 40).t(),
    "rows_cut": lambda x: x[:120].reshape(3, 40)[:, :35],
    "expanded": lambda x: x[1:2].expand(40),
    "expanded_rows": lambda x: x[:40].reshape(1, 40).expand(3, 40),
    "expanded_columns": lambda x: x[:3].reshape(3, 1).expand(3, 40),
    "zero_dim": lambda x: x[1],
}


@pytest.mark.parametrize("dtype", _FLOAT_BITS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cast_of_layouts(layout, dtype):
    _same(lambda lib: LAYOUTS[layout](_floats(lib, dtype, 140)).to(lib.bfloat16))


def test_cast_across_threads():
    """Past ATen's grain size, each thread's range of a float64 cast leaves its own scalar tail."""
    def program(lib):
        threads = lib.get_num_threads()
        lib.set_num_threads(2)
        try:
            return _floats(lib, "float64", 70000).to(lib.bfloat16)
        finally:
            lib.set_num_threads(threads)

    _same(program)


COPIES = {
    "contiguous": lambda lib, n: lib.zeros(n, dtype=lib.bfloat16),
    "strided_target": lambda lib, n: lib.zeros(2 * n, dtype=lib.bfloat16)[::2],
}


@pytest.mark.parametrize("n", (1, 17, 33))
@pytest.mark.parametrize("dtype", _FLOAT_BITS)
@pytest.mark.parametrize("target", COPIES)
def test_copy_into_bfloat16(target, dtype, n):
    def program(lib):
        c = COPIES[target](lib, n)
        c.copy_(_floats(lib, dtype, n))
        return c

    _same(program)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_copy_of_a_broadcast_source(dtype):
    def program(lib):
        c = lib.zeros(3, 40, dtype=lib.bfloat16)
        c.copy_(_floats(lib, dtype, 40))
        c[1].copy_(_floats(lib, dtype, 2)[1])
        return c

    _same(program)


def test_copy_into_a_transposed_target():
    def program(lib):
        c = lib.zeros(3, 40, dtype=lib.bfloat16).t()
        c.copy_(_floats(lib, "float32", 120).reshape(40, 3))
        return c

    _same(program)


def test_other_dtypes_untouched():
    """float32 results of the same calls keep their NaNs' bits (no bfloat16 rule reaches them)."""
    def program(lib):
        x = _floats(lib, "float64", 20)
        return (x.to(lib.float32), lib.full((3,), -NAN), lib.tensor([NAN, -NAN]), lib.scalar_tensor(-NAN),
                lib.full_like(lib.zeros(2, dtype=lib.bfloat16), -NAN, dtype=lib.float32))

    _same(program)


def test_sanity_of_the_oracle():
    assert np.uint16(torch.tensor(-NAN, dtype=torch.bfloat16).view(torch.int16).item()) == 0x7FC0


def _copied_by_factory(lib, factory: str, source):
    """torch.tensor / torch.as_tensor of ``source`` (a NumPy array or a tensor) into bfloat16: a cast by ATen's copy."""
    make = lib.tensor if factory == "tensor" else lib.as_tensor
    with warnings.catch_warnings():  # (torch.tensor of a tensor warns to use clone)
        warnings.simplefilter("ignore", UserWarning)
        return make(source, dtype=lib.bfloat16)


FACTORY_SOURCES = {
    "array": lambda lib, x: x.numpy(),
    "tensor": lambda lib, x: x,
}


@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed", "expanded", "zero_dim"])
@pytest.mark.parametrize("dtype", [*_FLOAT_BITS, "complex64"])
@pytest.mark.parametrize("source", FACTORY_SOURCES)
@pytest.mark.parametrize("factory", ["tensor", "as_tensor"])
def test_factories_cast_arrays_and_tensors(factory, source, dtype, layout):
    """torch.tensor(x, dtype=torch.bfloat16) of a float array or tensor casts it: its NaNs get the copy loop's bits
    (they kept their sign, as ml_dtypes rounds them)."""
    def program(lib):
        x = _floats(lib, "float32", 280).view(lib.complex64) if dtype == "complex64" else _floats(lib, dtype, 140)
        x = x if layout == "contiguous" else LAYOUTS[layout](x)
        return _copied_by_factory(lib, factory, FACTORY_SOURCES[source](lib, x))

    _same(program)


TENSOR_OR_NUMPY_VALUES = {
    "full_like_of_float32_value": lambda lib: lib.full_like(lib.zeros(3), lib.tensor(-NAN), dtype=lib.bfloat16),
    "full_like_of_float64_value_beyond": lambda lib: lib.full_like(lib.zeros(3), lib.tensor(1e39, dtype=lib.float64),
                                                                   dtype=lib.bfloat16),
    "full_like_of_int_value": lambda lib: lib.full_like(lib.zeros(3, dtype=lib.bfloat16), lib.tensor(2**40 + 1)),
    "scalar_tensor_of_numpy_half": lambda lib: lib.scalar_tensor(np.float16(-NAN), dtype=lib.bfloat16),
    "scalar_tensor_of_numpy_single": lambda lib: lib.scalar_tensor(np.float32(3.4e38), dtype=lib.bfloat16),
}


@pytest.mark.parametrize("name", TENSOR_OR_NUMPY_VALUES)
def test_values_given_as_tensors_or_numpy_scalars(name):
    """full_like's 0-d tensor value into bfloat16 is read as its number (it raised tracegrad's internal _NotAMove);
    scalar_tensor's NumPy float converts as a Python float does (a NumPy half NaN kept its sign)."""
    _same(TENSOR_OR_NUMPY_VALUES[name])
