"""Tensor factories: ``tensor``, ``zeros``, ``arange``, ``rand``... and the random generator.

Factories make leaves; they only create arrays (layer 1 work) and never record autograd history.
"""

from __future__ import annotations

import builtins
import functools
import math
import os
import warnings
from typing import Any

import numpy as np

from . import _arg_checks as _args
from ._arg_parser import argument_error, refuse_as_torch, tp_name
from ._random_bounds import random_range
from ._runtime import fill_uninitialized
from ._state import STATE
from ._strides import (
    _is_contiguous,
    contiguous_as_torch,
    contiguous_strides,
    copy_preserving_layout,
    data_address,
    storage_root,
    with_strides,
    zero_strided_empty,
)
from ._tensor import Tensor, _wrap
from ._torch_rng import TorchCPUStream
from .backend import dtypes as _dt
from .backend.device import DEFAULT_DEVICE, as_device, refuse_unsupported
from .memory_format import contiguous_format, format_strides, like_strides, preserve_format
from .ops._util import parsed_numbers
from .ops.aten_vec import FP_SIGNALS, quietly
from .ops.barebones_unsigned import FACTORY_KERNELS
from .ops.bfloat16_bit_moves import c10_nans
from .ops.bfloat16_in_float import cast_nans
from .ops.scalar_fill import scalar_for
from .storage import mark_not_resizable

# ---- helpers ---------------------------------------------------------------------------------------------


def _size(size, fn: str = "empty", kwargs: dict | None = None) -> tuple[int, ...]:
    """A factory's ``*size`` (or its ``size=`` keyword, taken out of ``kwargs``) as a shape, refused with torch's
    parser and size messages (named after ``fn``)."""
    items = size[0] if len(size) == 1 and size[0].__class__ is tuple else size
    for n in items:  # (the common call: sizes that are ints, none negative)
        if n.__class__ is not int or n < 0:
            break
    else:
        if items:
            return tuple(items)
    if not size and kwargs is not None:
        if "size" in kwargs:
            value = kwargs.pop("size")
            if not isinstance(value, (tuple, list)):
                raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, not {tp_name(value)}")
            return _args.non_negative_shape(fn, _args.size_arg(fn, (value,), keyword=True))
        raise argument_error(fn, (), {}) or TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    return _args.non_negative_shape(fn, _args.size_arg(fn, size))


def _finish(array: np.ndarray, requires_grad: bool, device=None, pin_memory: bool = False,
            strides_given: bool = False) -> Tensor:
    """The factory's tensor over ``array``; ``strides_given``: the array already has the strides torch gives
    (an empty one's included), as empty_strided's and channels-last ones do."""
    if array.size == 0 and array.ndim > 1 and array.__class__ is np.ndarray and not strides_given:
        array = contiguous_as_torch(array)  # (NumPy's empty arrays have zero strides; PyTorch's are contiguous)
    if device is None:
        device = DEFAULT_DEVICE.for_factories
    if device is not None or pin_memory:
        array = placed(array, device, pin_memory)
    t = _wrap(array)
    return requiring_grad(t) if requires_grad else t


def requiring_grad(t: Tensor) -> Tensor:
    """A new tensor made to require grad by its factory, refused in the factories' words (which differ from
    ``requires_grad_``'s)."""
    if not _dt.is_differentiable_np(t._data.dtype):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return t.requires_grad_(True)


NO_PINNED_MEMORY = ("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is "
                    "available on this system.")


def placed(array: np.ndarray, device, pin_memory: bool):
    """``array`` where torch allocates a new tensor asked for on ``device``: a device without kernels here (an
    int is an accelerator's index) refused first, then pinned memory, which only an accelerator's allocator has."""
    if device is not None:
        check_device(device)  # (a cuda device is refused there: the CuPy back end serves no tensors yet)
    if pin_memory:
        raise RuntimeError(NO_PINNED_MEMORY)
    return array


def check_device(device) -> Any:
    """``device`` as a device a new tensor can be made on, refused as torch's CPU build refuses it."""
    target = as_device(device)
    refuse_unsupported(target, moving=False)
    if target.type == "cuda":
        from .backend import cupy_backend

        if not cupy_backend.available():  # (what torch's CPU build says, where a user meets it)
            raise AssertionError("Torch not compiled with CUDA enabled")
    return target


def placed_tensor(t: Tensor, device, pin_memory: bool) -> Tensor:
    """A new tensor with no history (a ``_like`` or ``new_*`` result), moved as ``placed`` places an array."""
    if device is None and not pin_memory:
        return t
    return _wrap(placed(t._data, device, pin_memory))


def _resolve_dtype(dtype, default=None, fn: str | None = None) -> np.dtype:
    """``dtype`` (None: ``default``, else the default float) as a NumPy dtype; ``fn`` names the public factory
    whose ``dtype=`` argument is checked as torch's parser does."""
    if fn is not None:
        _args.dtype_arg(fn, dtype)
    if dtype is None:
        return (default or _dt.DEFAULT.value).np
    return _dt.to_dtype(dtype).np


def _into_out(result: Tensor, out, keeps_shape: bool = False, warns_resizing: bool = False):
    """``result`` written into ``out`` as a factory's out= variant does: in place where the shapes agree (or,
    ``keeps_shape``, the element counts: the ranges fill ``out`` as it is), else ``out`` resized to the result
    (without a warning, but for ``arange``'s (``warns_resizing``) of an ``out`` that has elements)."""
    if out is None:
        return result
    out._before_write()
    if warns_resizing and out._data.size not in (0, result._data.size):
        _warn_range_resizes(out._data.shape, result._data.size)
    if keeps_shape and out._data.size == result._data.size:
        np.copyto(out._data, result._data.reshape(out._data.shape), casting="unsafe")
    elif out._data.shape == result._data.shape:
        np.copyto(out._data, result._data, casting="unsafe")
    else:
        from .ops.variants import resized_out

        out._data = resized_out(out._data, result._data)
        np.copyto(out._data, result._data, casting="unsafe")
    from .autograd.views import bump_after_write

    bump_after_write(out)
    return out


def _warn_range_resizes(shape: tuple, count: int) -> None:
    """ATen's arange warning for an ``out`` of another element count, at the caller's line."""
    from ._warnings import warn_at_caller

    warn_at_caller(f"The number of elements in the out tensor of shape [{', '.join(map(str, shape))}] is "
                   f"{math.prod(shape)} which does not match the computed number of elements {count}. Note that this "
                   f"may occur as a result of rounding error. The out tensor will be resized to a tensor of shape "
                   f"({count},).", UserWarning)


def writes_out(factory=None, *, keeps_shape: bool = False, warns_resizing: bool = False):
    """A factory taking PyTorch's ``out=``: the result has ``out``'s dtype (a different ``dtype=`` is refused in
    torch's words) and is written into ``out``, which is returned. ``keeps_shape``: the ranges (arange,
    linspace, logspace) resize ``out`` only when its element count differs; ``warns_resizing``: and say so (arange)."""
    if factory is None:
        return functools.partial(writes_out, keeps_shape=keeps_shape, warns_resizing=warns_resizing)

    @functools.wraps(factory)
    def call(*args, out=None, **kwargs):
        if out is None:
            return factory(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{factory.__name__}(): argument 'out' must be Tensor, not {tp_name(out)}")
        dtype = kwargs.get("dtype")
        if dtype is not None and (asked := _dt.to_dtype(dtype)) != out.dtype:
            raise RuntimeError(f"dtype {_dt.scalar_type_name(asked)} does not match dtype of out "
                               f"parameter ({_dt.scalar_type_name(out.dtype)})")
        return _into_out(factory(*args, **{**kwargs, "dtype": out.dtype}), out, keeps_shape, warns_resizing)

    return call


def _to_nested_arrays(data, depth: int | None = None):
    """Tensors inside nested data as arrays; at ``depth`` 0 (a leaf of the nesting) a one-element tensor or
    array is its number, as torch reads it. Above the leaves, bytes (a sequence of ints to torch) and arrays of
    strings, bytes or objects become lists, walked as torch walks them."""
    if depth == 0 and isinstance(data, (Tensor, np.ndarray)):
        return (data._data if isinstance(data, Tensor) else data).reshape(())[()]
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)) or (depth and (isinstance(data, bytes) or _walked_array(data))):
        return [_to_nested_arrays(d, None if depth is None else depth - 1) for d in data]
    return data


def _walked_array(data) -> bool:
    return isinstance(data, np.ndarray) and data.dtype.kind in "OSU"


# ---- from data --------------------------------------------------------------------------------------------

def _plain_nested(data, dtype) -> tuple[np.ndarray, np.dtype] | None:
    """Lists of Python numbers, read by NumPy at once, with torch's dtype; None when the full reading is needed
    (other items, ragged lists, or a narrow integer dtype whose overflow must be refused)."""
    from . import _nested_data as nested

    array = nested.plain_array(data)
    if array is None:
        return None
    if dtype is None:
        return array, nested.dtype_of_plain(array).np
    np_dtype = _resolve_dtype(dtype)
    if array.dtype.kind == "c" and (np_dtype.kind in "fiu" or _dt.is_floating_np(np_dtype)):
        return None  # (a Python complex into a real dtype is refused, but an item before it may be refused first)
    if np_dtype.kind in "iu" and (np_dtype != np.int64 or array.dtype.kind == "f"):
        return None  # (floats into an integer dtype: each is checked for overflow)
    return array, np_dtype


def complex_into_real(np_dtype: np.dtype) -> TypeError:
    """torch.tensor's error for a complex number read into a real dtype (a bool takes it: nonzero is True)."""
    if np_dtype == np.uint64:  # (read by CPython's unsigned conversion, which takes ints only)
        return TypeError("an integer is required")
    if np_dtype.kind in "iu":
        return TypeError("'complex' object cannot be interpreted as an integer")
    return TypeError("must be real number, not complex")


def _read_nested(data, dtype) -> tuple[np.dtype, list[int], bool]:
    """Check nested Python data as torch.tensor reads it (sizes, then dtype, then items); return the NumPy
    dtype to copy it into, the sizes, and whether NumPy complex items are read into a real dtype (warned of
    already); see _nested_data."""
    from . import _nested_data as nested

    nested.refuse_text(data)
    sizes = nested.sizes_of(data)
    np_dtype = nested.infer_dtype(data).np if dtype is None else _resolve_dtype(dtype)
    return np_dtype, sizes, nested.check_items(data, sizes, np_dtype)


# The data factories take what Python would refuse in its own words (no data, a second positional argument, an
# unknown keyword), to refuse it in torch's parser's (``refuse_call``): ``NO_DATA`` marks data not given.
NO_DATA = object()


def refuse_call(name: str, data: Any, extra: tuple, options: dict) -> None:
    """torch's parser error for a factory call without data, or with more positional arguments or an unknown
    keyword (``options``: the keywords given). Its words for these do not depend on the positional values, so
    each is a plain object here (a NumPy array would mark the call as tracegrad's own, to which it says nothing)."""
    count = (data is not NO_DATA) + len(extra)
    error = argument_error(name, (_POSITIONAL,) * count, options)
    if error is not None:
        raise error


_POSITIONAL = object()


def data_off_fast_path(name: str, key: str, data: Any, extra: tuple, options: dict) -> Any:
    """The data of a factory call with no data, more positional arguments or unknown keywords, or torch's parser
    error for it. The data parameter is positional-only here, so that given by keyword it arrives in ``options``
    (as ``key``): given both ways, the call is torch's parser's to refuse (it counts the positional arguments
    first), not Python's."""
    if key in options and data is NO_DATA:
        data = options.pop(key)
    refuse_call(name, data, extra, options)
    return data


def tensor(data: Any = NO_DATA, /, *extra: Any, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False, **unknown: Any) -> Tensor:
    """Copy ``data`` (nested lists, scalars, NumPy arrays, tensors) into a new leaf tensor."""
    if data is NO_DATA or extra or unknown:
        data = data_off_fast_path("tensor", "data", data, extra, {
            "dtype": dtype, "device": device, "requires_grad": requires_grad, "pin_memory": pin_memory, **unknown})
    if isinstance(data, Tensor):
        warn_copy_construct("torch.tensor", 3)
    return checked_tensor(data, dtype, device, requires_grad, pin_memory)


def warn_copy_construct(call: str, stacklevel: int) -> None:
    """torch's advice, given each time a tensor is passed as the data to copy (``call``: how the user named it;
    ``stacklevel``: the user's frame, counted from here)."""
    warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                  f"sourceTensor.detach().clone().requires_grad_(True), rather than {call}(sourceTensor).",
                  UserWarning, stacklevel=stacklevel)


def checked_tensor(data: Any, dtype, device, requires_grad, pin_memory) -> Tensor:
    """torch.tensor (and Tensor.new_tensor) past the warning: its options checked, then the data copied."""
    # (the usual values cost a comparison each, not a call)
    if dtype is not None:
        _args.dtype_arg("tensor", dtype)
    if requires_grad.__class__ is not bool:
        _args.bool_arg("tensor", "requires_grad", requires_grad)
    if pin_memory.__class__ is not bool:
        _args.bool_arg("tensor", "pin_memory", pin_memory)
    if pin_memory:
        _refuse_pinning(data, device)
    try:
        return _tensor(data, dtype, device, requires_grad)
    except Exception:  # (a device torch's parser refuses, say, rather than tracegrad's reading of it)
        _refuse_factory_call("tensor", data, dtype=dtype, device=device, requires_grad=requires_grad)
        raise


def _refuse_pinning(data, device) -> None:
    """torch.tensor pins only what it reads itself: a tensor or NumPy array given is refused by its kind (once
    the device is found)."""
    if device is not None:
        check_device(device)
    if isinstance(data, (Tensor, np.ndarray)):
        source = "a variable" if isinstance(data, Tensor) else "numpy"
        raise RuntimeError(f"Can't pin tensor constructed from {source}")
    raise RuntimeError(NO_PINNED_MEMORY)


def _refuse_factory_call(name: str, data, **options) -> None:
    """Called while a factory's error is handled: torch's parser error for its arguments, where it refuses them.
    The options are keyword-only in torch: passed so, the parser names no position."""
    refuse_as_torch(name, (data,), options)


def _tensor(data, dtype, device, requires_grad: bool) -> Tensor:
    if isinstance(data, (np.ndarray, Tensor)):
        return _finish(_copied_as_torch(data, dtype), requires_grad, device, strides_given=True)
    complex_read_as_real = False
    if (plain := _plain_nested(data, dtype)) is not None:
        data, np_dtype = plain
    else:
        np_dtype, sizes, complex_read_as_real = _read_nested(data, dtype)
        if 0 in sizes:  # (nothing is read: torch does not look past the empty dim)
            return _finish(np.zeros(sizes, dtype=np_dtype), requires_grad, device)
        data = _to_nested_arrays(data, len(sizes))
    if complex_read_as_real:  # (NumPy's ComplexWarning was given per item, as torch's __float__ calls give it)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            array = _nested_array(data, np_dtype)
    else:
        array = _nested_array(data, np_dtype)
    return _finish(array, requires_grad, device)


def _nested_array(data, np_dtype: np.dtype) -> np.ndarray:
    """Checked nested data copied into a new array of ``np_dtype``."""
    try:
        return _array_of(_to_nested_arrays(data), np_dtype)
    except OverflowError:  # a Python int the dtype cannot hold
        return _wrapped_unsigned(data, np_dtype)
    except FP_SIGNALS:  # (a float beyond the dtype's range is inf, below it 0 or subnormal, silently as in torch)
        return quietly(_array_of, _to_nested_arrays(data), np_dtype)


def _array_of(nested, np_dtype: np.dtype) -> np.ndarray:
    """``np.array(nested, dtype=np_dtype)``; for float16, Python floats read as torch reads them (each a double
    made a c10::Half through float: ``_dt.through_float_for_half``)."""
    if np_dtype == np.float16:
        doubles = np.array(nested, dtype=np.float64)
        return _dt.through_float_for_half(doubles, np.dtype(np.float16)).astype(np.float16)
    if np_dtype is _dt.bfloat16.np:  # (ml_dtypes refuses a Python int beyond int64; torch reads it as a double)
        singles = np.array(nested, dtype=np.float64).astype(np.float32)
        return c10_nans(singles.astype(np_dtype), singles)  # (each item converted as a Scalar: NaN as 0x7fc0)
    return np.array(nested, dtype=np_dtype, copy=True)


def _copied_as_torch(data: np.ndarray | Tensor, dtype) -> np.ndarray:
    """torch.tensor's copy of an array or tensor: ``.to(dtype, copy=True)`` of the tensor over it, which keeps its
    strides where it is dense (an empty one always is) and else lays the copy out densely in their order. An array
    with negative strides is refused first, as from_numpy refuses it."""
    source = data._data if isinstance(data, Tensor) else data
    if source is data:
        refuse_as_from_numpy(data)
        source = _read_as_torch(data)
    np_dtype = source.dtype if dtype is None else _resolve_dtype(dtype)
    try:
        copy = copy_preserving_layout(source, np_dtype)
    except FP_SIGNALS:  # (a float beyond the dtype's range is inf, below it 0 or subnormal, silently as in torch)
        copy = quietly(copy_preserving_layout, source, np_dtype)
    return cast_nans(copy, source)  # (a cast into bfloat16: ATen's copy loop's NaN bits)


def _wrapped_unsigned(data, np_dtype: np.dtype) -> np.ndarray:
    """torch.tensor's reading of Python ints into an unsigned dtype: a negative one down to -max wraps around
    as two's complement (-1 is 255 in uint8, so that ``a - b`` may be read as ``a + 255 * b``); into int64, a float
    of 2**63 (which c10's overflow check, made in double, lets through) becomes int64's smallest, as x86 converts
    it; anything else out of range is refused. Only data of Python ints, bools and floats (and NumPy integers,
    checked before) is read so (NumPy would cast any other item silently)."""
    overflow = RuntimeError(f"value cannot be converted to type {np_dtype.name} without overflow")
    signed = np_dtype == np.int64
    if np_dtype.kind != "u" and not signed:
        raise overflow from None
    limit = np.iinfo(np_dtype).max

    def wrap(obj):
        if isinstance(obj, (list, tuple, range)):
            return [wrap(item) for item in obj]
        if isinstance(obj, float):  # (a float is read within range only, truncated)
            if signed or 0 <= obj <= limit:
                return int(obj) if obj != _TWO_TO_63 else -(2**63)
            raise overflow
        if not isinstance(obj, (int, np.integer)):
            raise overflow
        return int(obj) + limit + 1 if not signed and -limit <= obj < 0 else int(obj)

    try:
        return np.array(wrap(data), dtype=np_dtype, copy=True)
    except OverflowError:
        raise overflow from None


_TWO_TO_63 = 2.0**63


def as_tensor(data: Any = NO_DATA, /, *extra: Any, dtype=None, device=None, **unknown: Any) -> Tensor:
    """``data`` as a tensor, shared where it can be (a tensor or NumPy array of the dtype asked for)."""
    if data is NO_DATA or extra or unknown:
        data = data_off_fast_path("as_tensor", "data", data, extra, {"dtype": dtype, "device": device, **unknown})
    if dtype is not None:
        _args.dtype_arg("as_tensor", dtype)
    try:
        if isinstance(data, Tensor):
            if device is None:
                device = DEFAULT_DEVICE.for_factories
            if device is not None:  # (only checked: a tensor is already where tracegrad can put one)
                check_device(device)
            if dtype is None or data._data.dtype == _resolve_dtype(dtype):
                return data
            return data.to(dtype)
        if isinstance(data, np.ndarray):
            refuse_as_from_numpy(data)  # (before any cast: ``data[::-1]`` had a tensor with negative strides)
            data = _read_as_torch(_shareable(data))  # (PyTorch warns about a read-only array even when it casts)
            np_dtype = data.dtype if dtype is None else _resolve_dtype(dtype)
            arr = data if np_dtype == data.dtype else cast_nans(quietly(copy_preserving_layout, data, np_dtype), data)
            _dt.from_numpy_dtype(arr.dtype)
            return _finish(arr, False, device, strides_given=True)  # (the array's strides, shared or copied: as torch)
        return _tensor(data, dtype, device, False)
    except Exception:
        _refuse_factory_call("as_tensor", data, dtype=dtype, device=device)
        raise


# (these refuse as torch's parser does by themselves, on their failure path: a correct call, the usual one, pays
# nothing for it, where the generic guard of ``_arg_parser.guard_functions`` would cost it a third more)
tensor.argument_guard = "tensor"
as_tensor.argument_guard = "as_tensor"


def from_numpy(*args: Any, **kwargs: Any) -> Tensor:
    """Share memory with a NumPy array (no copy). torch's is a C function of exactly one argument, given by
    position, with CPython's words for any other call."""
    if kwargs:
        raise TypeError("torch._VariableFunctionsClass.from_numpy() takes no keyword arguments")
    if len(args) != 1:
        raise TypeError(f"torch._VariableFunctionsClass.from_numpy() takes exactly one argument ({len(args)} given)")
    return tensor_over_array(args[0])


def tensor_over_array(array: np.ndarray, warn_not_writable: bool = True) -> Tensor:
    """torch.from_numpy's tensor over ``array``; ``warn_not_writable=False`` leaves the warning about a read-only
    array to the caller (torch.asarray gives it only where it shares)."""
    if not isinstance(array, np.ndarray):
        from ._arg_parser import tp_name

        raise TypeError(f"expected np.ndarray (got {tp_name(array)})")
    refuse_as_from_numpy(array)
    return _wrap(_read_as_torch(_shareable(array, warn_not_writable)))


def refuse_as_from_numpy(array: np.ndarray) -> None:
    """torch's refusals of an array it would take over (from_numpy, and tensor/as_tensor/asarray before any cast),
    in its order: a dtype it has no match for (byte order aside), strides that are not whole elements, negative
    strides, then a byte order that is not the machine's."""
    _dt.from_numpy_dtype(array.dtype.newbyteorder("="))
    if any(stride % array.itemsize for stride in array.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. Copy the numpy array "
                         "to reallocate the memory.")
    _refuse_negative_strides(array)
    if not array.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                         "between byte orders is currently not supported.")


def _read_as_torch(array: np.ndarray) -> np.ndarray:
    """``array`` as torch reads a NumPy array: with its strides, which for an empty one NumPy makes zero, and which
    tracegrad would otherwise read as contiguous (its NumPy kernels' empty results are). Such an array has no
    memory to share, so an empty one of its own stands for it (not resizable, as the array's storage)."""
    if array.size or not array.ndim or any(array.strides):
        return array
    zero_strided = zero_strided_empty(array.shape, array.dtype)
    mark_not_resizable(storage_root(zero_strided))
    return zero_strided


def _refuse_negative_strides(array: np.ndarray) -> None:
    """torch.from_numpy's refusal, which as_tensor meets too (before any cast to another dtype)."""
    if array.strides and min(array.strides) < 0:
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative strides "
                         "are not currently supported. (You can probably work around this by making a copy of your "
                         "array  with array.copy().) ")


_NOT_WRITABLE = ("The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This "
                 "means writing to this tensor will result in undefined behavior. You may want to copy the array "
                 "to protect its data or make it writable before converting it to a tensor. This type of warning "
                 "will be suppressed for the rest of this program.")


def _shareable(array: np.ndarray, warn_not_writable: bool = True) -> np.ndarray:
    """``array`` for a tensor to share, as a storage of its own. PyTorch warns (once) about a read-only one and then
    writes into it anyway, so a tensor over it is a writeable alias of the same memory where NumPy owns that memory
    (memory of some other object, ``bytes`` or a read-only mapping, say, stays read-only: writing there is unsafe).
    And PyTorch's storage of an array begins at the array's first element and ends after its last: a view of
    another array (``a[1:]``) is a tensor at storage offset 0 over only the memory it spans."""
    writeable = array.flags.writeable
    if not writeable:
        if warn_not_writable:
            warn_numpy_not_writable()
        root = storage_root(array)
        writeable = root.base is None and root.flags.owndata and root.nbytes > 0
    if array.base is None and writeable == array.flags.writeable:
        mark_not_resizable(array)
        return array  # (an array that owns its memory is that storage already: the usual case)
    return _over_own_memory(array, writeable)


def warn_numpy_not_writable() -> None:
    """torch's warning (once per process) that a tensor shares a read-only NumPy array's memory."""
    from ._warnings import warn_once_at_caller

    warn_once_at_caller("numpy_not_writable", _NOT_WRITABLE)


class _ArrayMemory:
    """The bytes an array spans, offered to NumPy through the array interface (keeping the array alive): a
    storage of its own for the array rebuilt over it, which NumPy may write where ``writeable``."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, owner: np.ndarray, nbytes: int, writeable: bool) -> None:
        self.owner = owner
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "version": 3,
                                    "data": (data_address(owner), not writeable)}


def _over_own_memory(array: np.ndarray, writeable: bool) -> np.ndarray:
    spanned = sum((n - 1) * s for n, s in zip(array.shape, array.strides)) + array.itemsize if array.size else 0
    memory = np.asarray(_ArrayMemory(array, spanned, writeable))
    return np.ndarray(array.shape, array.dtype, memory, 0, array.strides)


# ---- filled -----------------------------------------------------------------------------------------------

_FIRST, _ALL3 = (0,), (0, 1, 2)  # (parsed_numbers' positions)


@writes_out
def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False,
         **kwargs) -> Tensor:
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {tp_name(size)}")
    size = _size((size,), "full")
    _args.dtype_arg("full", dtype)
    _args.bool_arg("full", "requires_grad", requires_grad)
    number = fill_value.item() if isinstance(fill_value, Tensor) else parsed_numbers((fill_value,), _FIRST)[0]
    if dtype is None:
        np_dtype = _dt.default_dtype_for_category(_dt.scalar_category(number)).np
    else:
        np_dtype = _resolve_dtype(dtype)
    value = scalar_for(number, np_dtype, math.prod(size))
    if STATE.profiler is None:
        return _finish(np.full(size, value, dtype=np_dtype), requires_grad, device, pin_memory)
    array = STATE.profiler.factory("aten::full", "aten::fill_", size, np_dtype,
                                   lambda: np.full(size, value, dtype=np_dtype))
    return _finish(array, requires_grad, device, pin_memory)


@writes_out
def zeros(*size, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False,
          **kwargs) -> Tensor:
    _args.bool_arg("zeros", "requires_grad", requires_grad)
    shape = _size(size, "zeros", kwargs)
    array = _filled("aten::zeros", "aten::zero_", np.zeros, shape, _resolve_dtype(dtype, fn="zeros"))
    return _finish(array, requires_grad, device, pin_memory)


@writes_out
def ones(*size, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False,
         **kwargs) -> Tensor:
    _args.bool_arg("ones", "requires_grad", requires_grad)
    array = _filled("aten::ones", "aten::fill_", np.ones, _size(size, "ones", kwargs), _resolve_dtype(dtype, fn="ones"))
    return _finish(array, requires_grad, device, pin_memory)


@writes_out
def empty(*size, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False, memory_format=None,
          **kwargs) -> Tensor:
    # (zero-filled, so that a program reading uninitialized memory still gives the same numbers every run; under
    # deterministic algorithms torch's own fill)
    _args.bool_arg("empty", "requires_grad", requires_grad)
    shape = _size(size, "empty", kwargs)
    array = fill_uninitialized(_filled("aten::empty", None, np.zeros, shape, _resolve_dtype(dtype, fn="empty")))
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    if memory_format is not None and memory_format is not contiguous_format:
        array = with_strides(array, format_strides(shape, memory_format))
        return _finish(array, requires_grad, device, pin_memory, strides_given=True)
    return _finish(array, requires_grad, device, pin_memory)


def _filled(name: str, fill_name: str | None, make, shape: tuple, np_dtype) -> np.ndarray:
    """``make(shape, dtype=np_dtype)``; under the profiler, timed as PyTorch's factory ``name`` (an allocation,
    then ``fill_name``)."""
    if STATE.profiler is None:
        return make(shape, dtype=np_dtype)
    if fill_name is None and name == "aten::empty":  # empty is the allocation itself: one range
        rec = STATE.profiler.open(name)
        array = make(shape, dtype=np_dtype)
        STATE.profiler.close(rec)
        return array
    return STATE.profiler.factory(name, fill_name, shape, np_dtype, lambda: make(shape, dtype=np_dtype))


def zeros_array_tensor(shape, np_dtype) -> Tensor:
    return _wrap(np.zeros(shape, dtype=np_dtype))


@writes_out
def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False,
        pin_memory: bool = False, **kw) -> Tensor:
    for name, value in (("n", n), ("m", m)):
        if value is not None and value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    np_dtype = _resolve_dtype(dtype, fn="eye")
    _refuse_dtype("eye", np_dtype, "")
    return _finish(np.eye(n, m if m is not None else n, dtype=np_dtype), requires_grad, device, pin_memory)


@writes_out(keeps_shape=True, warns_resizing=True)
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False, **kw) -> Tensor:
    if end is None:
        start, end = 0, start
    # (NumPy numbers as torch's parser reads its Scalars: np.float32(0.5) a float, np.True_ a double)
    vals = list(parsed_numbers(tuple(v.item() if isinstance(v, Tensor) else v for v in (start, end, step)), _ALL3))
    if dtype is None:
        is_float = builtins.any(isinstance(v, float) for v in vals)
        np_dtype = _dt.DEFAULT.value.np if is_float else np.dtype(np.int64)
    else:
        np_dtype = _resolve_dtype(dtype, fn="arange")
    _refuse_dtype("arange_cpu", np_dtype, "bc")  # (before the range's checks, as torch's dispatch)
    _check_range(vals, np_dtype)
    if np_dtype.kind in "fc" or np_dtype is _dt.bfloat16.np:
        count = builtins.max(0, math.ceil((vals[1] - vals[0]) / vals[2]))
        if np_dtype in (np.float32, np.float64) and count:
            array = _float_range(float(vals[0]), float(vals[2]), count, np_dtype)
        elif np_dtype is _dt.bfloat16.np:
            array = _bfloat16_range(float(vals[0]), float(vals[2]), count)
        else:
            array = (vals[0] + np.arange(count, dtype=np.float64) * vals[2]).astype(np_dtype)
    else:
        array = _integer_range(vals, np_dtype)
    return _finish(array, requires_grad, device, pin_memory)


_ARANGE_GRAIN = 32768  # (at::internal::GRAIN_SIZE)


def _float_range(start: float, step: float, count: int, np_dtype: np.dtype) -> np.ndarray:
    """PyTorch's CPU arange of float or double, to the bit. In double: its vectorized loop fills two vectors (8 floats
    or 4 doubles each, ATen's AVX2 build) at a time, each from a base ``start + step * k`` rounded to the dtype, lane
    i at ``base + i * step``; the elements past the last pair of vectors are ``start + step * i`` one at a time.
    Each ``a + b * c`` is one fused multiply-add (compiled with FMA)."""
    from .ops.aten_vec import fma

    # Multiples of 2**-10 that the dtype holds exactly, as every partial result: each way of adding gives the same.
    # And past ATen's grain (32,768 elements) torch's own threads split the fill where they please.
    exact = 2.0 ** ((24 if np_dtype == np.float32 else 53) - 10)
    dyadic = (start * 1024).is_integer() and (step * 1024).is_integer()
    if (dyadic and builtins.max(abs(start), abs(start + step * count)) < exact) or count > _ARANGE_GRAIN:
        return (start + np.arange(count, dtype=np.float64) * step).astype(np_dtype)
    lanes = 8 if np_dtype == np.float32 else 4
    vectorized = count // (2 * lanes) * 2 * lanes
    index = np.arange(count, dtype=np.float64)
    values = fma(index, np.float64(step), np.float64(start))
    if vectorized:
        lane = index[:vectorized] % lanes
        base = values[:vectorized] if np_dtype == np.float64 else values[:vectorized].astype(np_dtype)
        base = np.repeat(base[::lanes], lanes).astype(np.float64)  # (each vector's first element: its base)
        values[:vectorized] = fma(lane, np.float64(step), base)
    return values.astype(np_dtype)


def _bfloat16_range(start: float, step: float, count: int) -> np.ndarray:
    """PyTorch's CPU arange of bfloat16: start and step in float; its vectorized loop fills two vectors of 16 at a
    time, each from a base ``start + step * k`` rounded to bfloat16, lane i at ``base + i * step`` in float; the
    elements past the last pair of vectors are ``start + step * i`` in float; each rounded once to bfloat16."""
    first, stride = np.float32(start), np.float32(step)
    index = np.arange(count, dtype=np.float32)
    values = index * stride + first
    vectorized = count // 32 * 32
    if vectorized:
        lane = index[:vectorized] % 16
        base = values[:vectorized:16].astype(_dt.bfloat16.np).astype(np.float32)
        values[:vectorized] = lane * stride + np.repeat(base, 16)
    return values.astype(_dt.bfloat16.np)


def _integer_range(vals: list, np_dtype: np.dtype) -> np.ndarray:
    """PyTorch's arange into an integer dtype: start and step truncated to integers (0.5 is 0), the count from the
    truncated bounds for int64 and from the numbers as given for the narrower types."""
    if not all(math.isfinite(v) for v in vals):  # (torch converts each to int64_t first)
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    start, end, step = (int(v) for v in vals)
    if np_dtype == np.int64:  # (C's integer division, which truncates toward zero)
        span = end - start + step - (1 if step > 0 else -1)
        count = abs(span) // abs(step) * (1 if (span >= 0) == (step > 0) else -1)
    else:
        count = math.ceil((vals[1] - vals[0]) / vals[2])
    count = builtins.max(0, count)
    return (start + np.arange(count, dtype=np.int64) * step).astype(np_dtype)


def _check_range(vals: list, np_dtype: np.dtype) -> None:
    """torch's arange checks: int64 truncates the step first (0.25 becomes 0, refused), and the bounds must be
    finite and in the step's direction."""
    start, end, step = vals
    if step == 0 or step != step:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_number(start)} -> {_number(end)}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if np_dtype == np.int64 and math.isfinite(step) and int(step) == 0:  # (int64's own, after the others)
        raise ValueError("step must be nonzero")


def _number(value) -> str:
    """A number as torch's C++ prints it (2.0 as 2, nan, inf)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _given(**kwargs) -> dict:
    """The keyword arguments a call passed (those not left at their defaults), for a parser message."""
    return {k: v for k, v in kwargs.items() if v is not None and v is not False}


def _steps_missing(fn: str, args: tuple, kwargs: dict) -> TypeError:
    """torch has no default number of steps: its parser lists the overloads."""
    return argument_error(fn, args, kwargs) or TypeError(f'{fn}() missing 1 required positional arguments: "steps"')


def _steps(steps) -> int:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps


@writes_out(keeps_shape=True)
def linspace(start, end, steps: int | None = None, *, dtype=None, device=None, requires_grad: bool = False,
             pin_memory: bool = False, **kw) -> Tensor:
    if steps is None:
        raise _steps_missing("linspace", (start, end), _given(dtype=dtype, device=device,
                                                              requires_grad=requires_grad, **kw))
    if isinstance(start, Tensor) or isinstance(end, Tensor):
        _check_bounds("linspace", start, end)
    steps = _steps(steps)
    np_dtype = _resolve_dtype(dtype, fn="linspace")
    if steps > 1:  # (one step is its start, written without the kernel)
        _refuse_dtype("linspace_cpu", np_dtype, "b")
    if _dt.is_floating_np(np_dtype) and steps > 1:
        values = float_linspace(start, end, steps, np_dtype)
    else:
        values = np.linspace(start, end, steps, dtype=np.float64).astype(np_dtype)
    return _finish(values, requires_grad, device, pin_memory)


def _check_bounds(fn: str, start, end) -> None:
    """linspace and logspace take a tensor bound only as a number: 0-d."""
    wrong = [f"{name} with {bound.ndim} dimension(s)" for name, bound in (("start", start), ("end", end))
             if isinstance(bound, Tensor) and bound.ndim != 0]
    if wrong:
        raise RuntimeError(f"{fn} only supports 0-dimensional start and end tensors, but got {' and '.join(wrong)}.")


def float_linspace(start, end, steps: int, dtype: np.dtype) -> np.ndarray:
    """PyTorch's CPU linspace of a floating ``dtype`` (``steps`` > 1), to the last bit."""
    if dtype.itemsize >= 4:
        return _linspace_like_torch(start, end, steps, dtype)
    return _reduced_float_linspace(start, end, steps, dtype)


def _linspace_like_torch(start, end, steps: int, dtype: np.dtype) -> np.ndarray:
    """PyTorch's CPU linspace, to the last bit: the step in the result's dtype, the first half counted up from
    ``start`` and the second half down from ``end``, each as one fused multiply-add (rounded once). The fused
    step is computed in a wider type: float64 for float32, extended precision for float64."""
    first, last = dtype.type(start), dtype.type(end)
    step = (last - first) / dtype.type(steps - 1)
    wide = np.float64 if dtype.itemsize == 4 else np.longdouble
    index = np.arange(steps)
    from_start = wide(first) + wide(step) * index.astype(wide)
    from_end = wide(last) - wide(step) * (steps - 1 - index).astype(wide)
    return np.where(index < steps // 2, from_start, from_end).astype(dtype)


def _reduced_float_linspace(start, end, steps: int, dtype: np.dtype) -> np.ndarray:
    """PyTorch's CPU linspace of bfloat16 or float16: its kernel computes in that type itself (each operation in
    float, rounded to the type): the step, then ``start + step * i`` for the first half and
    ``end - step * (steps - 1 - i)`` for the second."""

    def rounded(x) -> np.ndarray:
        return np.asarray(x, dtype=np.float32).astype(dtype).astype(np.float32)

    first, last = rounded(start), rounded(end)
    step = rounded((last - first) / rounded(steps - 1))
    index = np.arange(steps)
    from_start = rounded(first + rounded(step * rounded(index)))
    from_end = rounded(last - rounded(step * rounded(steps - 1 - index)))
    return np.where(index < steps // 2, from_start, from_end).astype(dtype)


@writes_out(keeps_shape=True)
def logspace(start, end, steps: int | None = None, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False, pin_memory: bool = False, **kw) -> Tensor:
    if steps is None:
        raise _steps_missing("logspace", (start, end), _given(dtype=dtype, device=device,
                                                              requires_grad=requires_grad, **kw))
    if isinstance(start, Tensor) or isinstance(end, Tensor):
        _check_bounds("logspace", start, end)
    np_dtype = _resolve_dtype(dtype, fn="logspace")
    steps = _steps(steps)
    if steps > 1:  # (one step is its start, written without the kernel)
        _refuse_dtype("logspace_cpu", np_dtype, "b")
    return _finish(np.logspace(start, end, steps, base=base).astype(np_dtype), requires_grad, device, pin_memory)


# ---- random ------------------------------------------------------------------------------------------------

# torch's CPU build's refusals of a generator on another device: getNewGenerator's of the device's accelerator hooks
# (the stub hooks of a backend it lacks), or "not an accelerator" for a device type that has none
_GENERATOR_REFUSALS = {
    "cuda": "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two shared "
            "libraries: a CPU library and a CUDA library; this error has occurred because you are trying to use some "
            "CUDA functionality, but the CUDA library has not been loaded by the dynamic linker for some reason.  The "
            "CUDA library MUST be loaded, EVEN IF you don't directly use any symbols from the CUDA library! One "
            "common culprit is a lack of -Wl,--no-as-needed in your link arguments; many dynamic linkers will delete "
            "dynamic library dependencies if you don't depend on any of their symbols.  You can check if this has "
            "occurred by using ldd on your binary to see if there is a dependency on *_cuda.so library.",
    "xpu": "Cannot get XPU generator without ATen_xpu library.",
    "xla": "Cannot get XLA generator without torch_xla library. This error has occurred because you are trying to "
           "use some XLA functionality, but the XLA library has not been loaded by the dynamic linker. You must load "
           "xla libraries by `import torch_xla`",
    "mps": "Cannot execute getNewGenerator() without MPS backend.",
    "mtia": "Cannot execute getNewGenerator() without MTIA backend.",
    "hpu": "Backend doesn`t support getNewGenerator()",
    "hip": "Backend doesn`t support getNewGenerator()",
    "privateuseone": "Please register PrivateUse1HooksInterface by `RegisterPrivateUse1HooksInterface` first.",
}


def _refuse_generator_device(d) -> None:
    """A generator on a device other than the CPU (or CUDA, where tracegrad has it), refused as torch's CPU build."""
    if d.type == "cpu" or d.type == "cuda" and _cuda_available():
        return
    raise RuntimeError(_GENERATOR_REFUSALS.get(d.type, f"{d.type.upper()} device type not an accelerator."))


def _cuda_available() -> bool:
    from .backend import cupy_backend

    return cupy_backend.available()


def _unpack_offset(offset) -> int:
    """``set_offset``'s argument read as torch's binding reads it: a Python int (not a bool) in the range of an
    int64 or a uint64; NumPy's integers pass the type check and then fail the unpacking."""
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, (int, np.integer)):
        raise RuntimeError(f"manual_offset expected a long, but got {tp_name(offset)}")
    if not isinstance(offset, int):
        raise TypeError("an integer is required")
    if not -(1 << 63) <= offset < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return offset


class Generator:
    """A random number generator (``torch.Generator``): torch's CPU mt19937 stream, so seeds give torch's numbers."""

    # (torch's class lives in torch._C: a notebook showing ``torch.manual_seed(0)`` prints <torch._C.Generator ...>)
    __module__ = "tracegrad._C"

    def __init__(self, device="cpu") -> None:
        self._device = as_device(device)
        _refuse_generator_device(self._device)
        if self._device.type == "cpu":
            self._device = as_device("cpu")  # (torch's CPU generator has no index: 'cpu:0' gives 'cpu')
        self._rng = TorchCPUStream(67280421310721)  # torch's default seed

    @property
    def device(self):
        """The generator's device (read-only, as torch's)."""
        return self._device

    def clone_state(self) -> Generator:
        """A new generator on the same device whose stream continues from this one's state, independently."""
        clone = Generator(self._device)
        clone.set_state(self.get_state())
        return clone

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset) -> Generator:
        _unpack_offset(offset)
        raise RuntimeError("CPU Generator does not use offset")

    # (torch's C methods: one positional argument (METH_O) or none (METH_NOARGS), refused in CPython's words)
    def manual_seed(self, *args, **kwargs) -> Generator:
        [seed] = _c_method_arguments("manual_seed", args, kwargs, 1)
        self._rng.reseed(_unpack_seed(seed))
        return self

    def seed(self, *args, **kwargs) -> int:
        _c_method_arguments("seed", args, kwargs, 0)
        s = _nondeterministic_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self, *args, **kwargs) -> int:
        _c_method_arguments("initial_seed", args, kwargs, 0)
        return self._rng.seed

    def get_state(self, *args, **kwargs) -> Tensor:
        """torch's layout: a uint8 tensor of the 5056-byte ``CPUGeneratorImplState``."""
        _c_method_arguments("get_state", args, kwargs, 0)
        return _wrap(self._rng.get_state())

    def set_state(self, *args, **kwargs) -> Generator:
        """Restore a state from ``get_state`` (one ByteTensor)."""
        [state] = _c_method_arguments("set_state", args, kwargs, 1)
        self._rng.set_state(_checked_rng_state(state))
        return self

    def __reduce__(self) -> tuple:
        # torch's pickled form (copy.copy, deepcopy and pickle make an independent generator in the same state):
        # the class, its device, then (seed, offset: None on the CPU, state), which checkpoints of torch hold too
        return Generator, (self._device,), (self.initial_seed(), None, self.get_state())

    def __setstate__(self, state: tuple | dict) -> None:
        if isinstance(state, dict):  # (pickled by tracegrad before it pickled as torch: its attributes)
            self.__dict__.update(state)
            return
        seed, _, rng_state = state
        self.manual_seed(seed)
        self.set_state(rng_state)


def _c_method_arguments(name: str, args: tuple, kwargs: dict, count: int) -> tuple:
    """``args`` checked as CPython checks a C method's: no keywords, and ``count`` (0 or 1) positional ones."""
    if kwargs:
        raise TypeError(f"Generator.{name}() takes no keyword arguments")
    if len(args) != count:
        expected = "no arguments" if count == 0 else "exactly one argument"
        raise TypeError(f"Generator.{name}() takes {expected} ({len(args)} given)")
    return args


def _checked_rng_state(state) -> np.ndarray:
    """A generator state's bytes, checked in torch's order: a Tensor, then a contiguous CPU uint8 one (its size is
    the generator's check)."""
    if not isinstance(state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {tp_name(state)}")
    if state.dtype is not _dt.uint8 or state.device.type != "cpu":
        raise TypeError("RNG state must be a torch.ByteTensor")
    if not state.is_contiguous():
        raise RuntimeError("RNG state must be contiguous")
    return state._data


def _unpack_seed(seed) -> int:
    """torch's Generator.manual_seed argument: a Python int read as a uint64, or failing that as an int64 (a
    negative seed is its two's complement); a NumPy integer passes the type check but not the unpacking."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        kind = type(seed)
        name = kind.__name__ if kind.__module__ == "builtins" or isinstance(seed, Tensor) else \
            f"{kind.__module__}.{kind.__qualname__}"
        raise RuntimeError(f"manual_seed expected a long, but got {name}")
    if not isinstance(seed, int):
        raise TypeError("an integer is required")
    if not -(1 << 63) <= seed < 1 << 64:
        raise ValueError("Overflow when unpacking long long")
    return seed


def _nondeterministic_seed() -> int:
    """64 bits from the operating system, as torch's ``getNonDeterministicRandom`` reads ``/dev/urandom`` for a
    CPU generator."""
    return int.from_bytes(os.urandom(8), "little")


# torch seeds its default generator from the OS at start-up (a program that never calls manual_seed draws other
# numbers on each run); only a new Generator() starts from the fixed default seed
default_generator = Generator().manual_seed(_nondeterministic_seed())


def manual_seed(seed: int) -> Generator:
    return default_generator.manual_seed(int(seed))  # (torch.manual_seed takes any int(seed): 1.5, "3", a tensor)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


def _rng(generator) -> TorchCPUStream:
    return (generator or default_generator)._rng


def _random_factory(name: str, fill_name: str, shape: tuple, np_dtype: np.dtype, values, requires_grad: bool,
                    device, pin_memory: bool) -> Tensor:
    """A random factory's tensor, its draws seen by the profiler as ``fill_name`` inside ``name``."""
    if STATE.profiler is None:
        return _finish(values(), requires_grad, device, pin_memory)
    return _finish(STATE.profiler.factory(name, fill_name, shape, np_dtype, values), requires_grad, device,
                   pin_memory)


@writes_out
def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False,
         **kw) -> Tensor:
    np_dtype, shape, rng = _resolve_dtype(dtype, fn="rand"), _size(size, "rand", kw), _rng(generator)
    _refuse_dtype("check_uniform_bounds", np_dtype, "iub")
    return _random_factory("aten::rand", "aten::uniform_", shape, np_dtype, lambda: rng.uniform(shape, np_dtype),
                           requires_grad, device, pin_memory)


@writes_out
def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False,
          **kw) -> Tensor:
    return _randn(size, kw, generator, dtype, device, requires_grad, pin_memory)


def _randn(size: tuple, kw: dict, generator, dtype, device, requires_grad: bool, pin_memory: bool,
           contiguous: bool = True) -> Tensor:
    """randn's draws: PyTorch's normal_ on a fresh tensor, whose 16-at-a-time fill needs a contiguous one (a
    ``*_like`` result laid out otherwise draws one normal at a time, in memory order)."""
    np_dtype, shape, rng = _resolve_dtype(dtype, fn="randn"), _size(size, "randn", kw), _rng(generator)
    _refuse_dtype("normal_kernel_cpu", np_dtype, "iub")
    return _random_factory("aten::randn", "aten::normal_", shape, np_dtype,
                           lambda: rng.normal(shape, np_dtype, contiguous=contiguous), requires_grad, device,
                           pin_memory)


@writes_out
def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False,
            pin_memory: bool = False, **kw):
    _args.int64_args(low, high)
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    np_dtype, rng = _resolve_dtype(dtype, _dt.int64, fn="randint"), _rng(generator)
    shape = _size((size,), "randint") if not isinstance(size, int) else (size,)
    low, high = random_range(np_dtype, int(low), int(high))  # (torch's randint is random_(low, high))
    count = int(np.prod(shape, dtype=np.int64))
    return _random_factory("aten::randint", "aten::random_", shape, np_dtype,
                           lambda: rng.random_from_to(count, low, high + 1).astype(np_dtype).reshape(shape),
                           requires_grad, device, pin_memory)


@writes_out
def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False,
             pin_memory: bool = False, **kw) -> Tensor:
    np_dtype = _resolve_dtype(dtype, _dt.int64, fn="randperm")
    _args.non_negative_shape("randperm", (n,))
    _check_randperm_range(int(n), np_dtype)
    _refuse_dtype("randperm", np_dtype, "bc")
    return _finish(_rng(generator).randperm(int(n)).astype(np_dtype), requires_grad, device, pin_memory)


# the floating dtypes' largest n whose permutation they hold exactly, as torch's refusal spells it
_RANDPERM_PRECISION = {np.dtype(np.float16): (2 ** 11 + 1, "2049", "Half"),
                       np.dtype(np.float32): (2 ** 24 + 1, "2^24+1", "Float"),
                       np.dtype(np.float64): (2 ** 53 + 1, "2^53+1", "Double")}


def _check_randperm_range(n: int, np_dtype: np.dtype) -> None:
    """ATen's ``check_supported_max_int_with_precision``: the largest value, n - 1, must convert to the dtype
    (c10's checked conversion of a one-element fill: "value cannot be converted to type int8_t without overflow"),
    and a floating dtype must hold every integer below n exactly."""
    scalar_for(n - 1 if n > 0 else n, np_dtype, elements=1)
    largest, spelt, name = _RANDPERM_PRECISION.get(np_dtype, (n, "", ""))
    if n > largest:
        raise RuntimeError(f"n cannot be greater than {spelt} for {name} type.")


def _refuse_dtype(kernel: str, np_dtype: np.dtype, kinds: str) -> None:
    """A random kernel that has no version for this dtype (integers for rand and randn), in torch's words; the
    barebones unsigned dtypes where the kernel is one that refuses them (ops/barebones_unsigned.py)."""
    if np_dtype.kind in kinds or (np_dtype.char in _dt.BAREBONES_UNSIGNED_CHARS and kernel in FACTORY_KERNELS):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dt.scalar_type_name(np_dtype)}'")


def _laid_out_like(t: Tensor, drawn: Tensor, memory_format) -> Tensor:
    """A random ``*_like`` result: ``empty_like(t, memory_format)``, filled by a kernel that walks memory in order,
    so the values ``drawn`` (in C order) go into memory in the order they were drawn."""
    data = drawn._data
    strides = like_strides(t._data, memory_format)
    if data.__class__ is np.ndarray and strides != contiguous_strides(data.shape):
        drawn._data = np.ndarray(data.shape, data.dtype, buffer=data, strides=[s * data.itemsize for s in strides])
    return drawn


def rand_like(t: Tensor, *, dtype=None, requires_grad: bool = False, device=None, pin_memory: bool = False,
              memory_format=None, generator=None, **kw) -> Tensor:
    return _laid_out_like(t, rand(t.shape, generator=generator, dtype=dtype or t.dtype, requires_grad=requires_grad,
                                  device=device, pin_memory=pin_memory), memory_format)


def randn_like(t: Tensor, *, dtype=None, requires_grad: bool = False, device=None, pin_memory: bool = False,
               memory_format=None, generator=None, **kw) -> Tensor:
    contiguous = _is_contiguous(tuple(t.shape), like_strides(t._data, memory_format))
    return _laid_out_like(t, _randn((t.shape,), {}, generator, dtype or t.dtype, device, requires_grad, pin_memory,
                                    contiguous), memory_format)


def randint_like(t: Tensor, low, high=None, *, dtype=None, device=None, pin_memory: bool = False,
                 requires_grad: bool = False, memory_format=None, generator=None, **kw) -> Tensor:
    if high is None:
        low, high = 0, low
        if isinstance(high, Tensor) and high.ndim:
            _refuse_tensor_high(device)
    return _laid_out_like(t, randint(low, high, t.shape, generator=generator, dtype=dtype or t.dtype, device=device,
                                     pin_memory=pin_memory, requires_grad=requires_grad), memory_format)


def _refuse_tensor_high(device) -> None:
    """randint_like(t, high) takes a 0-d tensor ``high`` only; torch's parser reads the device before."""
    if device is not None:
        check_device(device)
    raise RuntimeError("high must be a scalar tensor and on CPU")


def bernoulli_array(p: np.ndarray, generator=None) -> np.ndarray:
    """``torch.bernoulli(p)``: one uniform per element, a double one when p is double (bernoulli_tensor_cpu)."""
    return _rng(generator).bernoulli(p, double=p.dtype == np.float64).astype(p.dtype)
