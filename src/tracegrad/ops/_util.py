"""Small helpers shared by kernels: dimension wrapping, dtype categories, promotion of kernel operands."""

from __future__ import annotations

import builtins

import numpy as np

from ..backend import dtypes as _dt

_KIND_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative dim, with PyTorch's IndexError wording."""
    n = builtins.max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def wrap_dims(dims, ndim: int) -> tuple[int, ...]:
    if dims is None:
        return tuple(range(ndim))
    if dims.__class__ is int:
        return (wrap_dim(dims, ndim),)  # one dim cannot repeat
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
    return out


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
        return x if x.dtype == dtype else x.astype(dtype)
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
    out = a.sum(axis=axes, keepdims=True) if axes else a
    if lead:
        out = out.reshape(out.shape[lead:])
    return np.array(out.reshape(shape), order="C")  # (ascontiguousarray would turn 0-d into 1-d)


def broadcast_mismatch(shapes: list[tuple]) -> RuntimeError | None:
    """PyTorch's error for shapes that do not broadcast ("The size of tensor a (3) must match ..."),
    or None when they do."""
    if len(shapes) < 2:
        return None
    a, b = shapes[0], shapes[1]
    ndim = builtins.max(len(a), len(b))
    for offset in range(1, ndim + 1):
        sa = a[-offset] if offset <= len(a) else 1
        sb = b[-offset] if offset <= len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            return RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                                f"non-singleton dimension {ndim - offset}")
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
