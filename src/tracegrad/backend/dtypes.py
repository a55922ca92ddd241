"""tracegrad dtypes and PyTorch's type-promotion rules.

A :class:`dtype` wraps a NumPy dtype. Promotion follows PyTorch, not NumPy: values are ranked by category
(bool < integer < floating < complex); a Python scalar or a zero-dimensional tensor only changes the result
when it belongs to a higher category than every dimensioned tensor (``int64_tensor * 2.5`` is float32, the
default dtype, where NumPy would give float64).
"""

from __future__ import annotations

import builtins

import numpy as np


class dtype:
    """A tensor element type, printed like PyTorch's (``torch.float32``)."""

    __module__ = "tracegrad"  # (torch's C type prints as <class 'torch.dtype'>)
    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_category")

    def __init__(self, name: str, np_dtype: np.dtype | None, category: int, itemsize: int = 0) -> None:
        self.name = name
        # (None until the dtype comes into use: bfloat16's NumPy dtype comes from ml_dtypes, imported then)
        self.np = None if np_dtype is None else np.dtype(np_dtype)
        self._category = category  # 0 bool, 1 integer, 2 floating, 3 complex
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.is_signed = category > 1 or (self.np is not None and self.np.kind == "i")
        self.itemsize = itemsize or self.np.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_lookup_by_name, (self.name,))

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        if self._category < 2:  # (c10's toComplexType knows no complex integers)
            raise RuntimeError(f"Unknown Complex ScalarType for {_SCALAR_NAMES[self]}")
        return {float32: complex64, float64: complex128, float16: complex64, bfloat16: complex64}.get(self, self)


bool_ = dtype("bool", np.bool_, 0)
uint8 = dtype("uint8", np.uint8, 1)
uint16 = dtype("uint16", np.uint16, 1)
uint32 = dtype("uint32", np.uint32, 1)
uint64 = dtype("uint64", np.uint64, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
float16 = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)
# Google's brain float: float32's exponent, 8 bits of significand. Its NumPy dtype is ml_dtypes' (of kind "V", not
# "f": ``is_floating_np`` tells); ml_dtypes is imported, and the operators learn to compute it in float
# (ops/bfloat16_in_float.py), the first time it is reached for (bfloat16_in_use).
bfloat16 = dtype("bfloat16", None, 2, itemsize=2)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128, uint16, uint32,
              uint64)
# PyTorch's "barebones" unsigned types: they exist (storage, copies, conversions, printing) but few kernels are
# dispatched over them, and they promote only with floating types (c10's promoteTypes).
BAREBONES_UNSIGNED = frozenset({uint16, uint32, uint64})
# (their NumPy type characters: ``array.dtype.char in BAREBONES_UNSIGNED_CHARS`` is the cheapest test of an array;
# NumPy spells uint64 "L" or "Q" by platform)
BAREBONES_UNSIGNED_CHARS = "HILQ"
# The barebones unsigned dtypes join these tables when they come into being (barebones_in_use): until then a lookup
# of one misses and goes through _barebones_by_np or _barebones_by_name, which bring them into use. Every way to a
# tensor of one passes there or through ``tracegrad.uint16``'s module __getattr__, which does the same.
_BY_NP = {d.np: d for d in ALL_DTYPES if d not in BAREBONES_UNSIGNED}
_BY_NAME = {d.name: d for d in ALL_DTYPES if d not in BAREBONES_UNSIGNED}
_BAREBONES_BY_NP = {d.np: d for d in BAREBONES_UNSIGNED}
_BAREBONES_BY_NAME = {d.name: d for d in BAREBONES_UNSIGNED}
_BY_NAME.update(half=float16, float=float32, double=float64, long=int64, int=int32, short=int16,
                cfloat=complex64, cdouble=complex128)


def cpu_accumulate_type(d: dtype) -> dtype:
    """c10's ``toAccumulateType(d, CPU)`` for a floating or complex ``d``: the wider type PyTorch's CPU kernels
    and formulas accumulate it in (float32 in float64, half types in float32, complex64 in complex128); any other
    type is returned as is (c10 accumulates integers in int64, which no caller needs)."""
    return {float16: float32, bfloat16: float32, float32: float64, complex64: complex128}.get(d, d)


# PyTorch's scalar type names, as its error messages and legacy type strings spell them.
_SCALAR_NAMES = {bool_: "Bool", uint8: "Byte", int8: "Char", int16: "Short", int32: "Int", int64: "Long",
                 float16: "Half", bfloat16: "BFloat16", float32: "Float", float64: "Double", complex64: "ComplexFloat",
                 complex128: "ComplexDouble", uint16: "UInt16", uint32: "UInt32", uint64: "UInt64"}


# caffe2's TypeMeta names (C++ type names), which some PyTorch messages print ("query.dtype: float")
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>", "uint16": "short unsigned int", "uint32": "unsigned int",
              "uint64": "long unsigned int"}


def cpp_type_name(d) -> str:
    """The C++ name PyTorch prints for a dtype in some messages ('float', 'long int'); ``d`` is a tracegrad or
    NumPy dtype, or a kernel's array (named as :func:`scalar_type_name` names one)."""
    if d.__class__ is np.ndarray:
        d = _dtype_standing_for(d)
    name = (d.np if isinstance(d, dtype) else np.dtype(d)).name
    return _CPP_NAMES.get(name, name)


def scalar_type_name(d) -> str:
    """PyTorch's name of a dtype in error messages ('Float', 'Long'); ``d`` is a tracegrad or NumPy dtype, or a
    kernel's array: named by the dtype it stands for (BFloat16 for a kernel's float32 copy of a bfloat16 operand,
    which its own dtype would name Float)."""
    if d.__class__ is np.ndarray:
        d = _dtype_standing_for(d)
    if not isinstance(d, dtype):
        try:
            d = from_numpy_dtype(d)
        except TypeError:
            return np.dtype(d).name
    return _SCALAR_NAMES[d]


def _dtype_standing_for(array: np.ndarray) -> np.dtype:
    """The dtype a kernel's array stands for (ops/bfloat16_in_float.py's seen_dtype): its own without bfloat16."""
    if bfloat16.np is None:
        return array.dtype
    from ..ops.bfloat16_in_float import seen_dtype  # (ops import this module)

    return seen_dtype(array)


_C10_NAMES = {"Float": "float", "Double": "double", "Long": "int64_t", "Int": "int", "Short": "int16_t",
              "Char": "int8_t", "Byte": "uint8_t", "UInt16": "uint16_t", "UInt32": "uint32_t", "UInt64": "uint64_t",
              "Bool": "bool", "ComplexFloat": "c10::complex<float>", "ComplexDouble": "c10::complex<double>"}


def c10_type_name(d) -> str:
    """A dtype as c10 prints its C++ type in messages ('float', 'int64_t', 'c10::BFloat16')."""
    name = scalar_type_name(d)
    return _C10_NAMES.get(name, f"c10::{name}")


# The scalar types ATen's ``Tensor::toString()`` still prints as a legacy tensor class (``torch.FloatTensor``)
_LEGACY_TENSOR_TYPES = frozenset({"Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double"})


def tensor_type_string(d) -> str:
    """``Tensor::toString()`` of a CPU tensor of dtype ``d``, as ATen's argument checks print it:
    ``torch.DoubleTensor``, or ``CPUComplexDoubleType`` (``CPUBoolType``) for the types without a legacy class."""
    name = scalar_type_name(d)
    return f"torch.{name}Tensor" if name in _LEGACY_TENSOR_TYPES else f"CPU{name}Type"


def _lookup_by_name(name: str) -> dtype:
    try:
        return _BY_NAME[name]
    except KeyError:
        if name == "bfloat16":
            return bfloat16_in_use()
        return _barebones_by_name(name)


def bfloat16_in_use() -> dtype:
    """``bfloat16``, with its NumPy dtype (ml_dtypes') and the operators' float computing of it installed
    (ops/bfloat16_in_float.py): ml_dtypes costs a tenth of a second to import, and a program that never makes a
    bfloat16 tensor runs the kernels as they are."""
    if bfloat16.np is None:
        import ml_dtypes

        from ..ops import bfloat16_in_float  # (ops import this module)

        bfloat16.np = np.dtype(ml_dtypes.bfloat16)
        _BY_NP[bfloat16.np] = bfloat16
        _BY_NAME["bfloat16"] = bfloat16
        bfloat16_in_float.activate()
    return bfloat16


def kind_of(np_dtype: np.dtype) -> str:
    """A NumPy dtype's kind as its values compute: "f" for bfloat16 (ml_dtypes' dtype is of kind "V"), NumPy's own
    otherwise. For the tests of a tensor's kind outside the kernels (which see bfloat16 as float32 copies)."""
    return "f" if np_dtype is bfloat16.np else np_dtype.kind


def is_floating_np(np_dtype: np.dtype) -> bool:
    """Whether a NumPy dtype is a floating one, bfloat16 (whose kind is "V") included."""
    return np_dtype.kind == "f" or np_dtype is bfloat16.np


def is_differentiable_np(np_dtype: np.dtype) -> bool:
    """Whether a NumPy dtype can carry a gradient (floating or complex, bfloat16 included)."""
    return np_dtype.kind in "fc" or np_dtype is bfloat16.np


def barebones_in_use() -> None:
    """A barebones unsigned dtype is being reached for: the kernels that refuse them in PyTorch get wrapped
    (ops/barebones_unsigned.py), and they join the lookup tables. Until then no kernel pays for the test (a
    program that never makes such a tensor runs the eager fast paths as lean as before these dtypes existed)."""
    from ..ops import barebones_unsigned  # (ops import this module)

    barebones_unsigned.activate()
    _BY_NP.update(_BAREBONES_BY_NP)
    _BY_NAME.update(_BAREBONES_BY_NAME)


def _barebones_by_name(name: str) -> dtype:
    """A barebones unsigned dtype by name (bringing them into use), or KeyError."""
    found = _BAREBONES_BY_NAME[name]
    barebones_in_use()
    return found


def _barebones_by_np(np_dtype: np.dtype) -> dtype:
    """A barebones unsigned dtype by NumPy dtype (bringing them into use), or KeyError."""
    found = _BAREBONES_BY_NP[np_dtype]
    barebones_in_use()
    return found


def barebones_by_name(name: str) -> dtype:
    """``tracegrad.uint32`` (the package's module __getattr__), in use from now on."""
    return _barebones_by_name(name)


def by_scalar_type_name(name: str) -> dtype | None:
    """The dtype PyTorch names ``name`` ('Float', 'UInt32': ``Tensor.type('torch.UInt32Tensor')``), in use from now on
    if it is a barebones unsigned one; None for a name it does not know."""
    found = next((d for d, known in _SCALAR_NAMES.items() if known == name), None)
    if found in BAREBONES_UNSIGNED:
        barebones_in_use()
    return found


class _DefaultDtype:
    """Holds the default floating dtype (``torch.get_default_dtype``)."""

    value: dtype = float32


DEFAULT = _DefaultDtype()


def get_default_dtype() -> dtype:
    return DEFAULT.value


def set_default_dtype(d: dtype) -> None:
    if not isinstance(d, dtype):  # (torch's check of the object, before the one of its kind)
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    DEFAULT.value = d


def from_numpy_dtype(np_dtype) -> dtype:
    """The tracegrad dtype of a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        try:
            return _barebones_by_np(np.dtype(np_dtype))
        except KeyError:
            if np.dtype(np_dtype).name == "bfloat16" and type(np_dtype).__module__ != "numpy":
                return bfloat16_in_use()
    except TypeError:
        pass
    raise TypeError(
        f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The only supported "
        "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, "
        "uint16, uint8, and bool.")


def to_dtype(d) -> dtype:
    """Accept a tracegrad dtype, a NumPy dtype, or a Python type: as in torch, ``float`` is float64 and
    ``complex`` complex128 whatever the default dtype (Python's own float is a double)."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return float64
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool_
    if d is builtins.complex:
        return complex128
    if isinstance(d, str):
        return _lookup_by_name(d)
    return from_numpy_dtype(d)


# ---- promotion ---------------------------------------------------------------------------------------

# PyTorch's promote_types. Within a category it agrees with NumPy (int8 with uint8 is int16, float16 with
# float32 is float32). Across categories PyTorch keeps the higher category's type where NumPy widens:
# int64 with float32 is float32 (NumPy: float64); float64 with complex64 is complex128 (the wider precision).
_PROMOTE_CACHE: dict[tuple[dtype, dtype], dtype] = {}


def _promote_uncached(a: dtype, b: dtype) -> dtype:
    if a in BAREBONES_UNSIGNED or b in BAREBONES_UNSIGNED:
        return _promote_barebones_unsigned(a, b)
    if a is bfloat16 or b is bfloat16:
        return _promote_bfloat16(a, b)
    if a._category == b._category:
        return _BY_NP[np.promote_types(a.np, b.np)]
    low, high = (a, b) if a._category < b._category else (b, a)
    if high.is_complex and low is float64:
        return complex128
    return high


def _promote_bfloat16(a: dtype, b: dtype) -> dtype:
    # c10's table: with half it is float (neither holds the other), with a wider float or a complex that one
    # (complex64, whose parts are floats), with bool or an integer bfloat16 itself
    other = b if a is bfloat16 else a
    if other is float16:
        return float32
    return other if other._category >= 2 else bfloat16


def _promote_barebones_unsigned(a: dtype, b: dtype) -> dtype:
    # PyTorch promotes them with a floating type only (to it): with int64 a uint64 would overflow, and uint8's
    # rule (with int8 it is int16, NumPy's would be wider) was never extended to them
    if a.is_floating_point:
        return a
    if b.is_floating_point:
        return b
    raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                       f"{_SCALAR_NAMES[a]} and {_SCALAR_NAMES[b]}")


def promote_types(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    key = (a, b)
    hit = _PROMOTE_CACHE.get(key)
    if hit is None:
        hit = _promote_uncached(a, b)
        _PROMOTE_CACHE[key] = _PROMOTE_CACHE[(b, a)] = hit
    return hit


def scalar_category(value) -> int:
    """Category of a Python scalar: 0 bool, 1 int, 2 float, 3 complex."""
    t = type(value)
    if t is builtins.bool or t is np.bool_:
        return 0
    if t is builtins.int or isinstance(value, np.integer):
        return 1
    if t is builtins.float or isinstance(value, np.floating):
        return 2
    if t is builtins.complex or isinstance(value, np.complexfloating):
        return 3
    raise TypeError(f"unsupported scalar type {t.__name__}")


def default_dtype_for_category(category: int) -> dtype:
    if category == 0:
        return bool_
    if category == 1:
        return int64
    if category == 2:
        return DEFAULT.value
    return complex128 if DEFAULT.value is float64 else complex64


def result_type_of(dims_dtypes: list[dtype], zero_dim_dtypes: list[dtype], scalar_categories: list[int]) -> dtype:
    """PyTorch's three-tier result type: dimensioned tensors, then 0-dim tensors, then Python scalars."""
    result: dtype | None = None
    for d in dims_dtypes:
        result = d if result is None else promote_types(result, d)
    zero: dtype | None = None
    for d in zero_dim_dtypes:
        zero = d if zero is None else promote_types(zero, d)
    if zero is not None:
        if result is None:
            result = zero
        elif zero._category > result._category:
            result = _lift_category(result, zero)
    if scalar_categories:
        cat = max(scalar_categories)
        if result is None:
            result = default_dtype_for_category(cat)
        elif cat > result._category:
            result = _lift_category(result, default_dtype_for_category(cat))
    return result if result is not None else DEFAULT.value


def _lift_category(current: dtype, higher: dtype) -> dtype:
    # A complex 0-dim tensor or number lifts a floating result to the complex type of the result's own precision
    # (torch's toComplexType: float32 tensor + complex128 0-dim tensor → complex64). float16's would be complex32,
    # which tracegrad lacks: complex64 instead.
    if higher.is_complex and current.is_floating_point:
        return complex128 if current is float64 else complex64
    return higher


_NP_FLOAT16 = np.dtype(np.float16)
_NP_FLOAT64 = np.dtype(np.float64)


def through_float_for_half(src, target: np.dtype):
    """``src`` ready for a cast to ``target``: float64 values bound for float16 rounded to float32 first, as torch's
    casts round them (c10::Half is made from a float, so a double just beyond a midpoint between two halves, by
    less than half a float's ulp, lands on the midpoint and then ties to even; NumPy's cast rounds once). Anything
    else as it is: callers on hot paths test ``target is`` float16 first."""
    if target is not _NP_FLOAT16 or getattr(src, "dtype", None) is not _NP_FLOAT64:
        return src
    with np.errstate(over="ignore"):  # (beyond float's range: inf, silently, as torch's cast)
        return src.astype(np.float32)
