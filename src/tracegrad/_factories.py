"""Tensor factories: ``tensor``, ``zeros``, ``arange``, ``rand``... and the random generator.

Factories make leaves; they only create arrays (layer 1 work) and never record autograd history.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ._state import STATE
from ._tensor import Tensor, _wrap
from ._warnings import warn_once
from .backend import dtypes as _dt
from .backend.device import as_device

# ---- helpers ---------------------------------------------------------------------------------------------


def _size(size) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s.item())
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"empty(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos {len(out)}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _finish(array: np.ndarray, requires_grad: bool, device=None) -> Tensor:
    if device is not None and as_device(device).type == "cuda":
        from .backend import cupy_backend

        if not cupy_backend.available():
            raise RuntimeError("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
                               "installed a driver")
        array = cupy_backend.xp.asarray(array)
    t = _wrap(array)
    if requires_grad:
        if array.dtype.kind not in "fc":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._rg = True
    return t


def _resolve_dtype(dtype, default=None) -> np.dtype:
    if dtype is None:
        return (default or _dt.DEFAULT.value).np
    return _dt.to_dtype(dtype).np


def _infer_dtype(data) -> np.dtype:
    """PyTorch's inference for nested data (``infer_scalar_type``): a Python bool, int, float or complex gives
    bool, int64, the default float or its complex; a NumPy scalar, array or tensor gives its own dtype; a
    sequence folds its items' dtypes with ``promote_types`` (so ``[np.int16(1), 2]`` is int64 and
    ``[np.float16(1), 2.0]`` float32), and an empty one gives the default float."""
    found = None

    def walk(x) -> None:
        nonlocal found
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
            return
        if isinstance(x, Tensor):
            d = _dt.from_numpy_dtype(x._data.dtype)
        elif isinstance(x, (np.ndarray, np.generic)):
            d = _dt.from_numpy_dtype(x.dtype)
        else:
            d = _dt.default_dtype_for_category(_dt.scalar_category(x))
        found = d if found is None else _dt.promote_types(found, d)

    walk(data)
    return (found or _dt.DEFAULT.value).np


def _to_nested_arrays(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_to_nested_arrays(d) for d in data]
    return data


# ---- from data --------------------------------------------------------------------------------------------

def tensor(data, *, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Copy ``data`` (nested lists, scalars, NumPy arrays, tensors) into a new leaf tensor."""
    if isinstance(data, Tensor):
        import warnings

        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], np.ndarray):
        warn_once("tensor_from_ndarray_list", "Creating a tensor from a list of numpy.ndarrays is extremely slow. "
                  "Please consider converting the list to a single numpy.ndarray with numpy.array() before "
                  "converting to a tensor.")
    if isinstance(data, np.ndarray) and dtype is None:
        _dt.from_numpy_dtype(data.dtype)
        np_dtype = data.dtype
    elif dtype is None:
        np_dtype = _infer_dtype(data)
    else:
        np_dtype = _resolve_dtype(dtype)
    try:
        array = np.array(_to_nested_arrays(data), dtype=np_dtype, copy=True)
    except ValueError as exc:
        raise ValueError(f"expected sequence of equal length lists: {exc}") from None
    except OverflowError:  # a Python int the dtype cannot hold
        raise RuntimeError(f"value cannot be converted to type {np_dtype.name} without overflow") from None
    if array.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    return _finish(array, requires_grad, device)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor):
        if dtype is None or data._data.dtype == _resolve_dtype(dtype):
            return data
        return data.to(dtype)
    if isinstance(data, np.ndarray):
        arr = data if dtype is None else data.astype(_resolve_dtype(dtype), copy=False)
        _dt.from_numpy_dtype(arr.dtype)
        return _finish(arr, False, device)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """Share memory with a NumPy array (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dt.from_numpy_dtype(array.dtype)
    return _wrap(array)


# ---- filled -----------------------------------------------------------------------------------------------

def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    size = _size((size,)) if not isinstance(size, int) else (size,)
    if dtype is None:
        cat = _dt.scalar_category(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
        np_dtype = _dt.default_dtype_for_category(cat).np
    else:
        np_dtype = _resolve_dtype(dtype)
    if STATE.profiler is None:
        return _finish(np.full(size, fill_value, dtype=np_dtype), requires_grad, device)
    array = STATE.profiler.factory("aten::full", "aten::fill_", size, np_dtype,
                                   lambda: np.full(size, fill_value, dtype=np_dtype))
    return _finish(array, requires_grad, device)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False, out=None, **kwargs) -> Tensor:
    array = _filled("aten::zeros", "aten::zero_", np.zeros, _size(size), _resolve_dtype(dtype))
    return _into_out(_finish(array, requires_grad, device), out)


def ones(*size, dtype=None, device=None, requires_grad: bool = False, out=None, **kwargs) -> Tensor:
    array = _filled("aten::ones", "aten::fill_", np.ones, _size(size), _resolve_dtype(dtype))
    return _into_out(_finish(array, requires_grad, device), out)


def empty(*size, dtype=None, device=None, requires_grad: bool = False, out=None, **kwargs) -> Tensor:
    # (zero-filled, so that a program reading uninitialized memory still gives the same numbers every run)
    array = _filled("aten::empty", None, np.zeros, _size(size), _resolve_dtype(dtype))
    return _into_out(_finish(array, requires_grad, device), out)


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


def _into_out(result: Tensor, out):
    if out is None:
        return result
    out._before_write()
    out._data = result._data
    out._bump_version()
    return out


def zeros_array_tensor(shape, np_dtype) -> Tensor:
    return _wrap(np.zeros(shape, dtype=np_dtype))


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False, **kw) -> Tensor:
    return _finish(np.eye(n, m if m is not None else n, dtype=_resolve_dtype(dtype)), requires_grad, device)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False, **kw) -> Tensor:
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_float = builtins.any(isinstance(v, float) for v in vals)
        np_dtype = _dt.DEFAULT.value.np if is_float else np.dtype(np.int64)
    else:
        np_dtype = _resolve_dtype(dtype)
    count = builtins.max(0, math.ceil((vals[1] - vals[0]) / vals[2]))
    array = (vals[0] + np.arange(count, dtype=np.float64) * vals[2]).astype(np_dtype) \
        if np_dtype.kind in "fc" else np.arange(vals[0], vals[1], vals[2]).astype(np_dtype)
    return _finish(array, requires_grad, device)


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False, **kw) -> Tensor:
    np_dtype = _resolve_dtype(dtype)
    if np_dtype.kind == "f" and np_dtype.itemsize >= 4 and steps > 1:  # (float16: torch's rounding is not this)
        values = _linspace_like_torch(start, end, steps, np_dtype)
    else:
        values = np.linspace(start, end, steps, dtype=np.float64).astype(np_dtype)
    return _finish(values, requires_grad, device)


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


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, requires_grad: bool = False, **kw) -> Tensor:
    return _finish(np.logspace(start, end, steps, base=base).astype(_resolve_dtype(dtype)), requires_grad)


# ---- random ------------------------------------------------------------------------------------------------

class Generator:
    """A random number generator (``torch.Generator``) backed by NumPy's PCG64."""

    def __init__(self, device="cpu") -> None:
        self.device = as_device(device)
        self._seed = 67280421310721
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy % (1 << 63))
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        state = self._rng.bit_generator.state
        encoded = np.frombuffer(repr(state).encode(), dtype=np.uint8).copy()
        return _wrap(encoded)

    def set_state(self, state: Tensor) -> Generator:
        import ast

        text = bytes(state._data.astype(np.uint8)).decode()
        self._rng.bit_generator.state = ast.literal_eval(text)
        return self


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(state: Tensor) -> None:
    default_generator.set_state(state)


def _rng(generator):
    return (generator or default_generator)._rng


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False, **kw) -> Tensor:
    np_dtype, shape, rng = _resolve_dtype(dtype), _size(size), _rng(generator)
    if STATE.profiler is None:
        return _finish(rng.random(shape, dtype=np.float64).astype(np_dtype), requires_grad, device)
    array = STATE.profiler.factory("aten::rand", "aten::uniform_", shape, np_dtype,
                                   lambda: rng.random(shape, dtype=np.float64))
    return _finish(array, requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False, **kw) -> Tensor:
    np_dtype, shape, rng = _resolve_dtype(dtype), _size(size), _rng(generator)
    if STATE.profiler is None:
        return _finish(rng.standard_normal(shape).astype(np_dtype), requires_grad, device)
    array = STATE.profiler.factory("aten::randn", "aten::normal_", shape, np_dtype, lambda: rng.standard_normal(shape))
    return _finish(array, requires_grad, device)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False, **kw):
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    np_dtype, rng = _resolve_dtype(dtype, _dt.int64), _rng(generator)
    shape = _size((size,)) if not isinstance(size, int) else (size,)
    if STATE.profiler is None:
        return _finish(rng.integers(low, high, size=shape).astype(np_dtype), requires_grad, device)
    array = STATE.profiler.factory("aten::randint", "aten::random_", shape, np_dtype,
                                   lambda: rng.integers(low, high, size=shape))
    return _finish(array, requires_grad, device)


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False, **kw) -> Tensor:
    np_dtype = _resolve_dtype(dtype, _dt.int64)
    return _finish(_rng(generator).permutation(n).astype(np_dtype), requires_grad, device)


def rand_like(t: Tensor, *, dtype=None, requires_grad: bool = False, **kw) -> Tensor:
    return rand(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def randn_like(t: Tensor, *, dtype=None, requires_grad: bool = False, **kw) -> Tensor:
    return randn(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def randint_like(t: Tensor, low, high=None, *, dtype=None, **kw) -> Tensor:
    if high is None:
        low, high = 0, low
    return randint(low, high, t.shape, dtype=dtype or t.dtype)


def bernoulli_array(p: np.ndarray, generator=None) -> np.ndarray:
    return (_rng(generator).random(p.shape) < p).astype(p.dtype)
