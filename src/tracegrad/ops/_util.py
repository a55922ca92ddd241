"""Small helpers shared by kernels: dimension wrapping, dtype categories, promotion of kernel operands."""

from __future__ import annotations

import builtins
import functools
import operator
from collections.abc import Callable

import numpy as np

from .._arg_parser import tp_name
from .._tensor import Tensor
from ..backend import dtypes as _dt
from . import aten_sum
from .bfloat16_in_float import as_seen, stands_for_bfloat16

_KIND_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative dim, with PyTorch's IndexError wording."""
    n = builtins.max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def number_arg(value):
    """The value of a float or Number parameter. torch's parser reads a 0-d tensor not requiring grad there as
    its number and refuses any other tensor, which NumPy would read element by element (the argument guard
    words the refusal)."""
    if isinstance(value, Tensor):
        if value.requires_grad or value.dim() != 0:
            raise TypeError("a number parameter given a tensor that is not a number")
        return value.item()
    return value


def float_arg(value):
    """The value of a ``float`` parameter as torch's parser reads it (a double): a 0-d tensor as
    ``item<double>()``, which refuses a complex value's imaginary part (``parsed_numbers`` reads NumPy numbers)."""
    value = number_arg(value)
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        return value.real
    return value


def wrap_dims(dims, ndim: int, one_by_one: bool = False) -> tuple[int, ...]:
    """Dims wrapped, a repeat refused. torch's reductions (``sum``, ``amax``, ...) wrap every dim before looking
    for a repeat; its bitset of dims (``flip``, ``var``, ``squeeze``, ...) wraps and marks them ``one_by_one``, so
    there a repeat is refused before a later dim's range."""
    if dims is None:
        return tuple(range(ndim))
    if dims.__class__ is int:
        return (wrap_dim(dims, ndim),)  # one dim cannot repeat
    if isinstance(dims, (int, np.integer)):  # (a NumPy integer is an int to torch's parser too)
        dims = (operator.index(dims),)
    elif not isinstance(dims, (list, tuple)):
        # (torch's parser reads only a list or tuple as dims, not a range, set or UserList; the guard words it)
        raise TypeError(f"dims must be a tuple or list of ints, not {type(dims).__name__}")
    dims = [d if d.__class__ is int else operator.index(d) for d in dims]
    if not one_by_one:  # (every dim's range before any repeat)
        dims = [wrap_dim(d, ndim) for d in dims]
    out: list[int] = []
    for d in dims:
        wrapped = wrap_dim(d, ndim) if one_by_one else d
        if wrapped in out:
            raise RuntimeError(f"dim {wrapped} appears multiple times in the list of dims")
        out.append(wrapped)
    return tuple(out)


def category(np_dtype) -> int:
    return _KIND_CATEGORY[np_dtype.kind]


def default_float() -> np.dtype:
    return _dt.DEFAULT.value.np


def to_floating(a):
    """Integer/bool arrays become the default float dtype (``torch.sin(int_tensor)`` is float32)."""
    if a.__class__ is np.ndarray:
        if a.dtype.kind in "biu":
            return a.astype(default_float())
        return a
    if isinstance(a, (bool, int)):
        return np.asarray(a, dtype=default_float())
    return np.asarray(a, dtype=default_float()) if not isinstance(a, np.ndarray) else a


def result_dtype(*operands) -> np.dtype:
    """PyTorch's result_type over arrays (0-d arrays are 0-dim tensors) and Python scalars."""
    dims: list[_dt.dtype] = []
    zeros: list[_dt.dtype] = []
    scalars: list[int] = []
    for x in operands:
        if x is None:
            continue
        if isinstance(x, np.ndarray):
            (dims if x.ndim else zeros).append(_dt.from_numpy_dtype(x.dtype))
        else:
            scalars.append(_dt.scalar_category(x))
    return _dt.result_type_of(dims, zeros, scalars).np


_NUMPY_NUMBERS = (np.number, np.bool_)
# (one isinstance test for both: a value of a class parsed_numbers does not know, a Parameter say, pays one)
_NUMPY_VALUES = (np.number, np.bool_, np.ndarray)


def as_parsed_number(value, as_double: bool = False):
    """A NumPy scalar as torch's argument parser reads it for a number: an integer as a Python int, float64 and
    complex128 as the Python float and complex they are, and any other (a bool, float32, half, complex64) as a
    double (complex64's real part, with NumPy's ComplexWarning, as torch's ``__float__`` call gives it). An
    integer beyond int64 (a uint64 from 2**63) is refused where an int is read (a Scalar or a tensor; a
    ``float`` parameter, ``as_double``, reads it as a double, and a complex128 too: its real part, warned of)."""
    if isinstance(value, np.integer):
        whole = int(value)
        if whole > _LARGEST_INT64 and not as_double:
            raise TypeError("an integer is required")
        return whole
    if isinstance(value, complex) and not as_double:
        return complex(value)
    if isinstance(value, np.complexfloating):  # (NumPy's own warning for its __float__, at the user's line)
        from .._warnings import warn_at_caller

        warn_at_caller("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning)
        return float(value.real)
    return float(value)


# torch's parser reads a Python int as an int64, or as a uint64 from 2**63: others do not fit its Scalar
SMALLEST_INT, BEYOND_LARGEST_INT = -(2**63), 2**64
_LARGEST_INT64 = 2**63 - 1


def int_overflow(value: int) -> OverflowError:
    """torch's parser's error for a Python int that fits neither int64 nor uint64 (CPython's words)."""
    return OverflowError("int too big to convert" if value > 0 else "can't convert negative int to unsigned")


_READ_AS_GIVEN = frozenset({Tensor, float, bool, complex, type(None)})


def parsed_numbers(args: tuple, positions: tuple, float_positions: tuple = ()) -> tuple:
    """``args`` with the NumPy scalars at ``positions`` (number or tensor parameters) read as torch reads them;
    ``args`` itself where there are none (the usual case, a class test or two per position). A Python int
    torch's parser cannot read as a Scalar is refused as it refuses it (a ``float`` parameter, at
    ``float_positions``, reads any int as a double), and so is a NumPy array, 0-d too (see ``array_refused``)."""
    for i in positions:
        value = args[i]
        cls = value.__class__
        if cls in _READ_AS_GIVEN:
            continue
        if cls is int:
            if not SMALLEST_INT <= value < BEYOND_LARGEST_INT and i not in float_positions:
                return _read_numbers(args, positions, float_positions)  # (which refuses it, or a later one)
        elif isinstance(value, _NUMPY_VALUES):
            return _read_numbers(args, positions, float_positions)
    return args


def _read_numbers(args: tuple, positions: tuple, float_positions: tuple) -> tuple:
    """parsed_numbers' conversions. torch's generated bindings unpack the arguments of the kernel's call as
    GCC evaluates a call's arguments, the last first: where several cannot be read, the last one's error is
    raised."""
    read = list(args)
    for i in reversed(positions):
        value = args[i]
        if value.__class__ is int:
            if not SMALLEST_INT <= value < BEYOND_LARGEST_INT and i not in float_positions:
                raise int_overflow(value)
        elif isinstance(value, np.ndarray):
            raise array_refused(value, f"argument at position {i + 1}")
        elif isinstance(value, _NUMPY_NUMBERS):
            read[i] = as_parsed_number(value, i in float_positions)
    return tuple(read)


def array_refused(value: np.ndarray, where: str) -> TypeError:
    """torch's parser takes no NumPy array, not even a 0-d one, where a Tensor or a number goes (only the tensor
    constructors read arrays, and indexing): ``torch.add(t, np.ones(2))`` is refused. The operator's caller
    (``OpDef.__call__``, a guard) replaces this with the parser's words, which name the operator and parameter."""
    return TypeError(f"{where} must be Tensor, not {tp_name(value)}")


def as_double(value):
    """A C++ ``double`` parameter's number as torch's parser reads it: any Python or NumPy int (2**70 too), bool
    or NumPy float as a Python float (CPython's OverflowError beyond the doubles); anything else as given. (Passed
    on to an operator's Scalar, a Python int would be read as an integer, and refused beyond uint64.)"""
    if value.__class__ is float:
        return value
    if isinstance(value, (int, np.integer, np.floating, np.bool_)):
        return float(value)
    return value


def unsupported(kernel_name: str, np_dtype) -> NotImplementedError:
    """PyTorch's error for a kernel that has no implementation for a dtype: ``np_dtype`` is a NumPy dtype (float32
    names BFloat16 in a kernel computing a bfloat16 result on float32 copies: the dtype its operands promote to)
    or an array (named by the dtype it stands for, bfloat16 for such a copy)."""
    if np_dtype.__class__ is not np.ndarray and not isinstance(np_dtype, _dt.dtype):
        np_dtype = as_seen(np_dtype)
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{_dt.scalar_type_name(np_dtype)}\'')


def refuse_half(kernel_name: str, a: np.ndarray) -> None:
    """Refuse a float16 (Half) array as PyTorch's CPU linear algebra kernels do, whose dispatch has no Half
    instantiation: ``"<kernel_name>" not implemented for 'Half'`` (one comparison for any other dtype)."""
    if a.dtype.char == "e":
        raise unsupported(kernel_name, a.dtype)
    # (bfloat16, or a float32 copy of a bfloat16 operand: no BFloat16 instantiation either)
    if a.dtype is _dt.bfloat16.np or stands_for_bfloat16(a.dtype):
        raise unsupported(kernel_name, _dt.bfloat16.np)


def reject_complex(kernel: Callable, kernel_name: str | None = None, *,
                   error: tuple[type[Exception], str] | None = None) -> Callable:
    """``kernel`` refusing complex array operands before computing anything, as PyTorch's CPU kernels with no
    complex instantiation do: by default with the dispatch error ``"<kernel_name>" not implemented for
    'ComplexDouble'`` (naming the promoted dtype), else with the op's own ``error`` (type, message)."""

    @functools.wraps(kernel)
    def checked(*args, **kwargs):
        operands = [a for a in args if a.__class__ is np.ndarray or isinstance(a, complex)]
        if any(isinstance(a, complex) or a.dtype.kind == "c" for a in operands):
            # (PyTorch's TensorIterator checks the shapes before it dispatches on the dtype)
            mismatch = broadcast_mismatch([a.shape for a in operands if a.__class__ is np.ndarray])
            if mismatch is not None:
                raise mismatch
            if error is not None:
                raise error[0](error[1])
            raise unsupported(kernel_name, result_dtype(*operands))
        return kernel(*args, **kwargs)

    return checked


def binary_dtype(a, b) -> np.dtype:
    """Fast path of :func:`result_dtype` for two operands."""
    if a.__class__ is np.ndarray:
        ad = a.dtype
        if b.__class__ is np.ndarray:
            bd = b.dtype
            if ad is bd or ad == bd:
                return ad
            if a.ndim and b.ndim:
                return _dt.promote_types(_dt.from_numpy_dtype(ad), _dt.from_numpy_dtype(bd)).np
        elif b.__class__ is float:
            if ad.kind in "fc":
                return ad
        elif b.__class__ is int and ad.kind in "iufc":
            return ad
    return result_dtype(a, b)


def as_array(x, dtype):
    """A kernel operand as an array of ``dtype`` (Python scalars included)."""
    if x.__class__ is np.ndarray:
        return x if x.dtype == dtype else _dt.through_float_for_half(x, np.dtype(dtype)).astype(dtype)
    if x is None:  # (NumPy reads None as NaN; the operator's argument guard words the refusal)
        raise TypeError("expected a number or a tensor, not NoneType")
    if x.__class__ is float and dtype == _HALF:
        x = np.float32(x)  # (c10::Half is made from a float: a double rounds to float first, as a cast)
    try:
        return np.asarray(x, dtype=dtype)
    except OverflowError:  # a Python int outside the dtype's range (-3 for uint8) wraps, as PyTorch's C++ cast
        return np.asarray(x).astype(dtype)


def sum_to_shape(a: np.ndarray, shape: tuple) -> np.ndarray:
    """Reduce a broadcast array back to ``shape`` (kernel of ``sum_to_size``)."""
    if a.shape == shape:
        return a
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and a.shape[i + lead] != 1)
    if not axes:
        out = a
    elif a.__class__ is np.ndarray and a.dtype.kind in "fc":  # (the sum operator's kernel: PyTorch's order)
        out = aten_sum.sum_as_aten(a, axes, True) if aten_sum.supports(a.dtype) else a.sum(axis=axes, keepdims=True)
    else:
        out = a.sum(axis=axes, keepdims=True)
    if lead:
        out = out.reshape(out.shape[lead:])
    return np.array(out.reshape(shape), order="C")  # (ascontiguousarray would turn 0-d into 1-d)


def expands_to(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` expands to ``target``: no more dims, each (from the right) 1 or the same."""
    return len(shape) <= len(target) and all(n == 1 or n == m for n, m in zip(reversed(shape), reversed(target)))


def broadcast_mismatch(shapes: list[tuple]) -> RuntimeError | None:
    """PyTorch's error for shapes that do not broadcast ("The size of tensor a (3) must match ..."),
    or None when they do. Like TensorIterator, the shapes are folded in order: "tensor a" is the broadcast of
    the shapes before the one that does not fit."""
    if len(shapes) < 2:
        return None
    a = tuple(shapes[0])
    for b in shapes[1:]:
        ndim = builtins.max(len(a), len(b))
        merged = []
        for offset in range(1, ndim + 1):  # (from the last dim, as PyTorch's infer_size)
            sa = a[-offset] if offset <= len(a) else 1
            sb = b[-offset] if offset <= len(b) else 1
            if sa != sb and sa != 1 and sb != 1:
                return RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                                    f"non-singleton dimension {ndim - offset}")
            merged.append(sa if sb == 1 else sb)
        a = tuple(reversed(merged))
    return None


def translate_value_error(exc: ValueError, operands) -> Exception:
    """NumPy's broadcasting ValueError in PyTorch's words; other errors unchanged."""
    if "broadcast" in str(exc):
        shapes = [np.shape(x) for x in operands if isinstance(x, np.ndarray)]
        error = broadcast_mismatch(shapes)
        if error is not None:
            return error
    return exc


_HALF = np.dtype(np.float16)
_SINGLE = np.dtype(np.float32)


def opmath_dtype(dt) -> np.dtype:
    """The dtype PyTorch's CPU kernels compute in (``at::opmath_type``): float for half precision."""
    dt = np.dtype(dt)
    return _SINGLE if dt == _HALF else dt


def number_read_in_float(b, dt: np.dtype) -> bool:
    """Whether PyTorch's half-precision ``mul`` and ``div`` kernels (all rounding modes) read ``b`` in float:
    the result is half and ``b`` is one number for the whole tensor (a Python number, or a tensor of one
    element: ``TensorIterator::is_scalar``), whose original value they take in float rather than rounded to
    half. (``add``, ``sub``, ``pow``, ``remainder`` and ``fmod`` round it to half like any operand.)"""
    return dt == _HALF and (b.__class__ is not np.ndarray or b.size == 1)


def in_float_to_half(fn, a, b) -> np.ndarray:
    """``fn(a, b)`` computed in float and rounded once to half, ``b`` read in float (see number_read_in_float)."""
    return np.asarray(fn(as_array(a, _SINGLE), as_array(b, _SINGLE))).astype(_HALF)


def half_in_float(kernel):
    """``kernel`` computing float16 input in float32 and rounding the result back, as PyTorch's CPU kernels
    compute half precision (its "opmath" type): computed in float16 itself, sigmoid, GELU and the like are an
    ulp off for a third of the inputs."""

    def run(a, *rest, **kwargs):
        if a.__class__ is np.ndarray and a.dtype is _HALF:
            out = kernel(a.astype(_SINGLE), *rest, **kwargs)
            return out.astype(_HALF) if out.__class__ is np.ndarray and out.dtype is _SINGLE else out
        return kernel(a, *rest, **kwargs)

    run.__name__ = getattr(kernel, "__name__", "kernel")
    return run


def _log1p_complex(z: np.ndarray) -> np.ndarray:
    """c10's complex log1p: log|1 + z| through real log1p near 0 (no cancellation), angle by atan2."""
    x, y = z.real, z.imag
    theta = np.arctan2(y, x + 1)
    r = x * (x + 2) + y * y
    small = np.abs(z) < 0.5
    magnitude = np.where(small, np.where(r == 0, x, 0.5 * np.log1p(np.where(small, r, 0))),
                         np.log(np.hypot(x + 1, y)))
    return magnitude + 1j * theta


def log_add_exp_complex(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """ATen's complex ``_log_add_exp_helper`` (logaddexp, logcumsumexp): max + log1p(exp(min - max)), min and
    max ordered by real part; a NaN anywhere gives NaN, equal infinite real parts are special-cased."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    x_nan = np.isnan(x.real) | np.isnan(x.imag)
    y_nan = np.isnan(y.real) | np.isnan(y.imag)
    x_low = x.real < y.real
    # _logcumsumexp_minmax: a NaN operand is both min and max (y's first)
    lo = np.where(y_nan, y, np.where(x_nan, x, np.where(x_low, x, y)))
    hi = np.where(y_nan, y, np.where(x_nan, x, np.where(x_low, y, x)))
    with np.errstate(all="ignore"):
        general = _log1p_complex(np.exp(lo - hi)) + hi
        # both real parts -inf: exp is 0 and its angle meaningless; both +inf: plain log(exp + exp)
        infinite = np.where(lo.real < 0, lo, np.log(np.exp(lo) + np.exp(hi)))
    out = np.where(~np.isfinite(lo.real) & (lo.real == hi.real), infinite, general)
    return np.where(x_nan | y_nan, complex(np.nan, np.nan), out).astype(np.result_type(x, y), copy=False)


_NOT_DIFFERENTIABLE = ('isDifferentiableType(grad.scalar_type()) INTERNAL ASSERT FAILED at '
                       '"/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp":998, please report a bug to PyTorch. ')


def autograd_dtype_refused(np_dtype) -> RuntimeError:
    """PyTorch's set_history refusing a result of an integer or bool dtype: an operator with a derivative, called
    on an input that requires grad (an integer tensor that does: ``long_t.fill_(v)`` for a ``v`` that does), would
    give it a gradient edge."""
    return RuntimeError(f"Autograd not support dtype: {_dt.scalar_type_name(np_dtype)}")


def check_differentiable_grad(dtype: np.dtype) -> None:
    """PyTorch's validate_outputs asserts, last, that a gradient (cast to its input's dtype) is of a floating or
    complex dtype: an integer tensor that requires grad (``long_t[mask] = v`` for a ``v`` that does) fails it as
    soon as a gradient reaches it, through a cast back to its dtype (``.float()``'s backward), or as the root."""
    if not _dt.is_differentiable_np(dtype):
        raise RuntimeError(_NOT_DIFFERENTIABLE)
