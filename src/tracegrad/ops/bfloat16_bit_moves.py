"""bfloat16 operators that only move data: run on int16 views, so that every bit pattern (NaN payloads and signs)
arrives as it was, as PyTorch's kernels copy the raw bits.

Every other bfloat16 kernel computes on float32 copies and rounds back (bfloat16_in_float.py), which turns each NaN
into ml_dtypes' quiet NaN. The operators in :data:`BIT_MOVES` copy, select, place or fill elements and never
compute with them, so where each tensor operand whose data they move is bfloat16 (no promotion to or from another
dtype, no accumulation or reduction asked for), their kernel runs on ``arr.view(np.int16)`` and its result is
viewed back as bfloat16. int16 rather than uint16: int16 is one of PyTorch's ordinary dtypes, so the kernels take it
as any other and the barebones unsigned dtypes' refusals (barebones_unsigned.py) are neither met nor brought into
use. A number such an operator writes (``masked_fill``'s value, ``where``'s other, a pad's value) is converted to
bfloat16 as c10 converts it (:class:`Fill`) and handed to the kernel as those bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..backend import dtypes as _dt

_ndarray = np.ndarray
_BITS = np.dtype(np.int16)
_F32_MAX = float(np.finfo(np.float32).max)
_BF16_MAX = 3.3895313892515355e38  # (bfloat16's largest finite value, 0x7f7f)
_INT64_RANGE = range(-2**63, 2**63)
C10_NAN = 0x7FC0  # (c10's conversion of any NaN from float)


@dataclass(frozen=True)
class Fill:
    """How a bit-moving operator takes a value it writes (a number, or a tensor given for one).

    ``checked``: a number beyond bfloat16's range is refused, as ``Scalar::to<BFloat16>()`` refuses it
    (``where`` converts unchecked); ``operand``: a tensor given is an operand, its bits moved if it is bfloat16 and
    cast otherwise (``where``, ``fill_``), rather than read as a number (``masked_fill``'s ``value.item()``, which
    turns a bfloat16 NaN into c10's: 0x7fc0, whatever the NaN); ``any_shape``: a one-element tensor of any shape is
    read as its number (``index_put_`` through a lone mask), where others must be 0-d."""

    checked: bool = True
    operand: bool = False
    any_shape: bool = False


_READ_AS_NUMBER = Fill()
# index_put_'s values where ATen writes them with ``masked_fill_(mask, value.item())`` (a lone mask index, one value):
# read as a number, of any dtype and shape
_THROUGH_MASKED_FILL = Fill(any_shape=True)
# the fills whose one-element target ATen fills by its unchecked scalar path (``fill_``'s ``scalar_fill``): a number
# beyond bfloat16's range is infinity there, and an integer reaches float through double
_ONE_ELEMENT_UNCHECKED = frozenset({"fill"})

# functional operator name -> {parameter: Fill} for the values it writes (the other Tensor parameters are data
# moved as they are, but for the indices and masks of _INDEX_PARAMETERS)
BIT_MOVES: dict[str, dict[str, Fill]] = {
    **dict.fromkeys((
        "clone", "copy", "_to_copy", "cat", "stack", "flip", "rot90", "roll", "repeat", "index", "index_select",
        "masked_select", "take", "narrow_copy", "masked_scatter", "index_put", "put", "index_copy", "tril", "triu",
        "diag", "diag_embed", "block_diag", "embedding", "pixel_shuffle", "pixel_unshuffle",
        "channel_shuffle", "select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter",
        "_reflection_pad1d", "_reflection_pad2d", "_reflection_pad3d",
        "_replication_pad1d", "_replication_pad2d", "_replication_pad3d",
        "_circular_pad1d", "_circular_pad2d", "_circular_pad3d", "_unsafe_view",
        # the copying forms of the views
        "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy",
        "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
        "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy"), {}),
    "masked_fill": {"value": _READ_AS_NUMBER},
    "index_fill": {"value": _READ_AS_NUMBER},
    "constant_pad_nd": {"value": _READ_AS_NUMBER},
    "fill": {"value": Fill(operand=True)},
    "where": {"self": Fill(checked=False, operand=True), "other": Fill(checked=False, operand=True)},
}
# parameters whose tensors are indices, masks or counts, not data: passed as they are
_INDEX_PARAMETERS = frozenset({"index", "indices", "mask", "condition", "repeats"})
# parameters that make a call compute (accumulate into, reduce) where given
_COMPUTING_PARAMETERS = frozenset({"accumulate", "reduce"})

_DATA, _PASSED, _DTYPE, _COMPUTING = "data", "passed", "dtype", "computing"


class _NotAMove(Exception):
    """A call of a bit-moving operator that converts, promotes or computes: it takes the float32 path."""


def _roles(op, unchecked: bool = False) -> dict:
    """What each parameter of ``op`` is to the int16 call, by position and by name; ``unchecked``: its fills
    convert unchecked (a one-element ``fill_``)."""
    fills = BIT_MOVES[_functional_name(op)]
    roles: dict = {}
    for i, param in enumerate(op.schema.params):
        if param.name in fills:
            role = fills[param.name]
            if unchecked:
                role = Fill(checked=False, operand=role.operand)
        elif param.name in _COMPUTING_PARAMETERS:
            role = _COMPUTING
        elif param.type.startswith("ScalarType"):
            role = _DTYPE
        elif param.type.startswith("Tensor") and param.name not in _INDEX_PARAMETERS:
            role = _DATA
        else:
            role = _PASSED
        roles[i] = roles[param.name] = (role, param.type.startswith("Tensor"))
    return roles


def _functional_name(op) -> str:
    name = op.name.split(".")[0]
    return name[:-1] if op.is_inplace else name


def moves_bits(op) -> bool:
    return _functional_name(op) in BIT_MOVES


def bit_moving(op, kernel: Callable, computed: Callable, holds_bf16: Callable,
               promotes_to_bf16: Callable) -> Callable:
    """``op``'s kernel for bfloat16: on int16 views of its bfloat16 arguments where the call only moves them,
    ``computed`` (the kernel on float32 copies) otherwise; ``kernel`` itself for a call without bfloat16."""
    name = _functional_name(op)
    roles = _roles(op)
    one_element_roles = _roles(op, unchecked=True) if name in _ONE_ELEMENT_UNCHECKED else None
    through_masked_fill = {**roles, 2: (_THROUGH_MASKED_FILL, True), "values": (_THROUGH_MASKED_FILL, True)} \
        if name == "index_put" else None
    written = tuple(i for i, p in enumerate(op.schema.params) if p.is_write)

    def run(*args, **kwargs):
        if not (any(holds_bf16(a) for a in args) or any(holds_bf16(v) for v in kwargs.values())):
            return kernel(*args, **kwargs)
        call_roles = roles
        if one_element_roles is not None and args and args[0].__class__ is _ndarray and args[0].size == 1:
            call_roles = one_element_roles
        elif through_masked_fill is not None and _fills_through_masked_fill(args, kwargs):
            call_roles = through_masked_fill
        call = _BitCall(call_roles)
        try:
            bit_args = tuple(call.as_bits(i, a) for i, a in enumerate(args))
            bit_kwargs = {k: call.as_bits(k, v) for k, v in kwargs.items()}
            if call.cast_operands and not promotes_to_bf16((*call.operands, *call.cast_operands)):
                raise _NotAMove
        except _NotAMove:
            return computed(*args, **kwargs)
        if call.beyond:
            _refuse_after_checks(kernel, bit_args, bit_kwargs, written)
        return call.as_bfloat16(kernel(*bit_args, **bit_kwargs))

    run.computes_bfloat16_in_float = True
    return run


def _fills_through_masked_fill(args: tuple, kwargs: dict) -> bool:
    """Whether an ``index_put`` call writes its values as ATen's does with a lone mask index and one value:
    ``masked_fill_(mask, value.item())``, the value read as a number (any dtype; any NaN becomes 0x7fc0)."""
    from .indexing import fills_through_mask

    accumulate = args[3] if len(args) > 3 else kwargs.get("accumulate", False)
    indices = args[1] if len(args) > 1 else kwargs.get("indices")
    values = args[2] if len(args) > 2 else kwargs.get("values")
    return (not accumulate and values.__class__ is _ndarray and indices.__class__ in (list, tuple)
            and fills_through_mask(indices, values.size))


def _refuse_after_checks(kernel: Callable, args: tuple, kwargs: dict, written: tuple[int, ...]) -> None:
    """A number beyond bfloat16's range: ATen converts it inside its kernel, after the argument checks, so the
    kernel runs first (on copies of what it writes) and its own refusal wins."""
    kernel(*(a.copy() if i in written else a for i, a in enumerate(args)), **kwargs)
    from .scalar_fill import overflow

    raise overflow(_dt.bfloat16.np)


class _BitCall:
    """One call's arguments as int16 bits, and the way back for its results."""

    def __init__(self, roles: dict) -> None:
        self.roles = roles
        self.originals: dict[int, np.ndarray] = {}  # id of an int16 view -> the bfloat16 array it views
        self.operands: list[np.ndarray] = []  # the bfloat16 operands that ``where`` promotes
        self.cast_operands: list[np.ndarray] = []  # operands of another dtype, cast to bfloat16
        self.beyond = False

    def as_bits(self, key, value):
        role, is_tensor = self.roles.get(key, (_PASSED, False))
        if role is _DATA:
            return self._data(value)
        if role is _PASSED:
            if value.__class__ is _ndarray and value.dtype is _dt.bfloat16.np or (
                    value.__class__ in (list, tuple) and any(self._is_bf16(v) for v in value)):
                raise _NotAMove  # (a bfloat16 index or mask: refused as the float32 path refuses it)
            return value
        if role is _DTYPE:
            return _bits_dtype(value)
        if role is _COMPUTING:
            if value is not None and value is not False:
                raise _NotAMove
            return value
        return self._fill(value, role, is_tensor)

    @staticmethod
    def _is_bf16(value) -> bool:
        return value.__class__ is _ndarray and value.dtype is _dt.bfloat16.np

    def _view(self, array: np.ndarray) -> np.ndarray:
        view = array.view(_BITS)
        self.originals[id(view)] = array
        return view

    def _data(self, value):
        if value is None:
            return None
        if value.__class__ is list or value.__class__ is tuple:
            return value.__class__(self._data(v) for v in value)
        if not self._is_bf16(value):
            raise _NotAMove
        self.operands.append(value)
        return self._view(value)

    def _fill(self, value, fill: Fill, is_tensor: bool):
        if value.__class__ is _ndarray:
            if fill.operand and self._is_bf16(value):
                self.operands.append(value)
                return self._view(value)
            if value.ndim and not fill.any_shape:
                raise _NotAMove  # (the kernel's own refusal, or a promotion)
            if fill.operand:  # (cast, unchecked, as a copy casts: an integer straight to float)
                self.cast_operands.append(value)
                bits = _cast_bits(value)
                return np.array(bits, dtype=_BITS) if is_tensor else bits
            number, checked = _number_of(value), fill.checked
        else:
            number, checked = value, fill.checked
        bits = _number_bits(number, checked)
        if bits is None:
            self.beyond = True
            bits = 0
        return np.array(bits, dtype=_BITS) if is_tensor else bits

    def as_bfloat16(self, result):
        """A kernel's int16 result as bfloat16: a view it was given as the bfloat16 array it views (an in-place
        kernel returns its target), a new array viewed as bfloat16."""
        if result.__class__ is _ndarray:
            original = self.originals.get(id(result))
            if original is not None:
                return original
            return result.view(_dt.bfloat16.np) if result.dtype == _BITS else result
        if result.__class__ is np.int16:
            return np.array(result).view(_dt.bfloat16.np)[()]
        if result.__class__ is tuple or result.__class__ is list:
            return result.__class__(self.as_bfloat16(r) for r in result)
        return result


def _bits_dtype(value):
    """A ``dtype=`` argument: bfloat16 asked for (or nothing) stays within the bits; another dtype converts."""
    if value is None:
        return None
    if value is _dt.bfloat16:
        return _dt.int16
    if value is _dt.bfloat16.np:
        return _BITS
    raise _NotAMove


def _number_of(array: np.ndarray):
    """A one-element array as the number ``value.item()`` gives."""
    if array.dtype is _dt.bfloat16.np:
        return array.astype(np.float32).item()
    return array.item()


def _cast_bits(array: np.ndarray) -> int:
    """The bits (as an int16) of a 0-d array of another dtype cast to bfloat16 as ATen's copy casts it: to float
    (an integer straight, rounded once), then rounded to nearest even, any NaN as 0x7fc0."""
    if array.dtype.kind == "c":
        raise _NotAMove  # (a complex operand promotes, or its imaginary part is dropped with a warning)
    with np.errstate(over="ignore"):  # (beyond float's range: infinity, as C's cast)
        single = array.astype(np.float32)
    return C10_NAN if math.isnan(single) else int(single.astype(_dt.bfloat16.np).view(_BITS))


def bfloat16_scalar(number, checked: bool) -> np.generic:
    """``number`` (a bool, int or float) as a bfloat16 scalar, converted as c10 converts a Scalar
    (:func:`_number_bits`); refused as ``Scalar::to<BFloat16>()`` refuses a value beyond its range where
    ``checked``."""
    bits = _number_bits(number, checked)
    if bits is None:
        from .scalar_fill import overflow

        raise overflow(_dt.bfloat16.np)
    return np.array(bits, dtype=_BITS).view(_dt.bfloat16.np)[()]


def c10_nans(rounded: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``rounded`` (``source`` rounded to bfloat16) with each NaN as c10's scalar conversion makes it: 0x7fc0."""
    nan = np.isnan(source)
    if nan.any():
        rounded.view(_BITS)[nan] = C10_NAN
    return rounded


def _number_bits(number, checked: bool) -> int | None:
    """The bits (as an int16) of ``number`` converted to bfloat16 as c10 converts a Scalar: through float, rounded
    to nearest even, any NaN as 0x7fc0. None: beyond bfloat16's range where ``checked``. ``Scalar::to``'s checked
    conversion takes an integer straight to float (rounded once); the unchecked paths (``where``'s number, a
    one-element fill) take it through double first, as a float."""
    if number.__class__ is bool or isinstance(number, np.bool_):
        number = float(number)
    elif isinstance(number, (int, np.integer)):
        if int(number) not in _INT64_RANGE:
            raise _NotAMove  # (the argument parser's refusal)
        if checked:
            return int(np.array(int(number), dtype=np.int64).astype(np.float32).astype(_dt.bfloat16.np).view(_BITS))
    elif not isinstance(number, (float, np.floating)):
        raise _NotAMove  # (complex numbers, and anything else: the float32 path's conversion and refusals)
    x = float(number)
    if math.isnan(x):
        return C10_NAN
    if checked and math.isfinite(x) and abs(x) > _BF16_MAX:
        return None
    if abs(x) <= _F32_MAX:
        single = np.array(x, dtype=np.float32)
    else:
        with np.errstate(over="ignore"):  # (beyond float's range: infinity, or float's largest, as C's cast)
            single = np.array(x, dtype=np.float32)
    return int(single.astype(_dt.bfloat16.np).view(_BITS))
