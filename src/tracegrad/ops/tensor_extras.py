"""Tensor methods and top-level functions PyTorch has that tracegrad lacked: the Python-callable maps
(``apply_``, ``map_``, ``map2_``), ``fill_diagonal_``, the in-place gamma functions, memory queries of a CPU
build (``is_pinned``, ``share_memory_``, ``dim_order``...), ``resize_``, ``nonzero_static``, and the factories
``range`` (deprecated), ``empty_permuted``, ``frombuffer``, with ``binomial``, ``histogramdd`` and the functional
RNN cells.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence

import numpy as np

from .._tensor import Tensor
from .._warnings import warn_at_caller
from ..backend import dtypes as _dt
from ..backend.device import CPU, as_device
from ..memory_format import preserve_format
from ..return_types import return_type
from . import gamma, special_fns, views
from .namespace_extras import resize_as_, resized
from .nn_ops import activation
from .nn_ops import rnn as _rnn
from .pointwise import inplace_kernel
from .registry import defop, defop_without_derivative

_Histogramdd = return_type("histogramdd", ["hist", "bin_edges"])


# ---- maps with a Python callable -----------------------------------------------------------------------------


def _python_map(self: Tensor, name: str, fn: Callable, others: Sequence[tuple[str, Tensor]]) -> Tensor:
    """Call ``fn`` on the Python numbers of ``self`` and of the (broadcast) ``others``, element by element, and
    write the results back cast to ``self``'s dtype, as PyTorch's CPU-only TH-era maps do."""
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
                           "instead.")
    from ..autograd.saved import type_string

    for arg, other in others:
        if other._data.dtype != self._data.dtype:
            what = f"argument '{arg}'" if name == "map2_" else f"'{arg}'"
            raise TypeError(f"{name}: expected {type_string(self)} for {what} (got {type_string(other)})")
    arrays = [views.expand(o, tuple(self.shape))._data for _, o in others]
    data = self._data
    values = [fn(*(a[i].item() for a in (data, *arrays))) for i in np.ndindex(data.shape)]
    self._before_write()
    data[...] = np.array(values, dtype=object).reshape(data.shape).astype(data.dtype)
    self._bump_version()
    return self


def apply_(self: Tensor, *args, **kwargs) -> Tensor:
    """``self`` with ``callable`` applied to each element; one positional argument, a C method's in torch."""
    from .._arg_parser import one_argument_error

    error = one_argument_error("apply_", args, kwargs, type(self))
    if error is not None:
        raise error
    return _python_map(self, "apply_", args[0], ())


def map_(self: Tensor, tensor: Tensor, callable: Callable) -> Tensor:  # noqa: A002
    return _python_map(self, "map_", callable, (("other", tensor),))


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable) -> Tensor:  # noqa: A002
    return _python_map(self, "map2_", callable, (("x", x), ("y", y)))


# ---- fill_diagonal_ ------------------------------------------------------------------------------------------


def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """ATen's composite: ``fill_`` on the ``as_strided`` view of the main diagonal (and, with ``wrap``, of the
    diagonals below a tall matrix's first square), so the graph records CopySlices."""
    nd = self.ndim
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if nd > 2 and builtins.any(s != height for s in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    offset = self.storage_offset()
    stride = builtins.sum(self.stride())
    size = builtins.min(height, width)
    views.as_strided(self, (size,), (stride,), offset).fill_(fill_value)
    if wrap and nd == 2 and height > width + 1:
        step = width + 1
        wrap_size = (self.numel() + step - 1) // step - size
        views.as_strided(self, (wrap_size,), (stride,), offset + self.stride(0) * (width + 1)).fill_(fill_value)
    return self


# ---- in-place gamma functions --------------------------------------------------------------------------------


def _inplace_of(op, schema: str, node_name: str | None = None):
    return defop(schema, inplace_kernel(op.kernel), vjp=op.vjp, saves=op.saved_names, attrs=op.attr_names,
                 node_name=node_name or op.node_class._name)


digamma_ = _inplace_of(gamma.digamma, "digamma_(Tensor(a!) self) -> Tensor(a!)")
lgamma_ = _inplace_of(gamma.lgamma, "lgamma_(Tensor(a!) self) -> Tensor(a!)")
mvlgamma_ = _inplace_of(special_fns.mvlgamma, "mvlgamma_(Tensor(a!) self, int p) -> Tensor(a!)")


def _polygamma_inplace_kernel(a, n):
    return inplace_kernel(lambda x: gamma.polygamma.kernel(n, x))(a)


def _polygamma_inplace_vjp(ctx, g):
    from .pointwise import mul

    (x,) = ctx.saved_tensors
    (n,) = ctx.attrs
    return mul(g, gamma.polygamma(n + 1, x))


# PyTorch's polygamma_ has its own derivatives.yaml entry (self first): PolygammaBackward1
polygamma_ = defop("polygamma_(Tensor(a!) self, int n) -> Tensor(a!)", _polygamma_inplace_kernel,
                   vjp=_polygamma_inplace_vjp, saves=("self",), attrs=("n",), node_name="PolygammaBackward1")


# ---- memory and layout queries -------------------------------------------------------------------------------


def new_empty_strided(self: Tensor, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                      requires_grad: bool = False) -> Tensor:
    from .namespace_extras import empty_strided

    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype, device=device,
                         pin_memory=pin_memory, requires_grad=requires_grad)


def _nonzero_static_kernel(a, size, fill_value=-1):
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got size: {size}")
    found = np.argwhere(a) if a.ndim else np.zeros((int(bool(a)), 0), dtype=np.int64)
    out = np.full((size, a.ndim), fill_value, dtype=np.int64)
    keep = builtins.min(size, found.shape[0])
    out[:keep] = found[:keep]
    return out


nonzero_static_op = defop_without_derivative("nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> "
                                             "Tensor", _nonzero_static_kernel)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1, out=None) -> Tensor:  # noqa: A002
    """The indices of the first ``size`` nonzero elements, padded with ``fill_value`` rows."""
    extra = {} if out is None else {"out": out}
    return nonzero_static_op(input, size=size, fill_value=fill_value, **extra)


def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """``resize_(*sizes)``: the leading elements kept, new ones zero (PyTorch leaves them uninitialised)."""
    shape = views.normalize_shape(sizes)
    if builtins.any(s < 0 for s in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    if memory_format is preserve_format:  # (no template to preserve a format from)
        raise RuntimeError("Unsupported memory formatPreserve")
    return resized(self, tuple(shape), memory_format)


def dim_order(self: Tensor, *, ambiguity_check=False) -> tuple[int, ...]:
    """The dims from outermost to innermost in memory (largest stride first; ties keep the logical order)."""
    from ..memory_format import memory_format as _memory_format

    message = "The ambiguity_check argument must be a bool or a list of memory formats."
    valid_list = isinstance(ambiguity_check, list) and builtins.all(
        isinstance(f, _memory_format) for f in ambiguity_check)
    if not (isinstance(ambiguity_check, bool) or valid_list):
        raise TypeError(message)
    sizes, strides = tuple(self.shape), self.stride()
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    ambiguous = builtins.any(a == b for a, b in zip(strides, strides[1:])) or 1 in sizes
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    if check and ambiguous and builtins.sum(self.is_contiguous(memory_format=f) for f in formats) != 1:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    return tuple(sorted(builtins.range(self.ndim), key=lambda d: -strides[d]))


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors view the same memory with the same offset, sizes and strides."""
    a, b = self._data, tensor._data
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
            and a.strides == b.strides and a.dtype == b.dtype)


def is_pinned(self: Tensor, device=None) -> bool:
    """False: a CPU build has no pinned memory. ``device`` is deprecated, but still read (an int is an
    accelerator's index, refused where there is none)."""
    if device is not None:
        as_device(device)
        warn_at_caller("The argument 'device' of Tensor.is_pinned() is deprecated. Please do not pass this argument.",
                       DeprecationWarning)  # (TORCH_WARN_DEPRECATION, at the caller's line)
    return False


def pin_memory(self: Tensor, device=None) -> Tensor:
    raise RuntimeError("Cannot access accelerator device when none is available.")


def is_shared(self: Tensor) -> bool:
    """Whether the tensor's storage lies in shared memory (``share_memory_``, or received from another process)."""
    from .._shared_memory import is_shared_array

    return is_shared_array(self._data)


def share_memory_(self: Tensor) -> Tensor:
    """Moves the tensor's storage into shared memory, in place: this tensor and every other one over the storage
    (views included) now use it, with their values, strides, versions and autograd state (see _shared_memory.py).
    Forked children then see and write the same memory; ``torch.multiprocessing`` sends it to other processes."""
    from .._shared_memory import share_memory_of

    share_memory_of((self,))
    return self


# ---- factories -----------------------------------------------------------------------------------------------


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,  # noqa: A001
          pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """``torch.range``: ``start`` to ``end`` inclusive, in the default float dtype unless ``dtype``."""
    from .._factories import _finish, _into_out
    from .._warnings import warn_at_caller

    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warn_at_caller("torch.range is deprecated and will be removed in a future release because its behavior is "
                   "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                   "[start, end).", UserWarning)  # (at the user's line, past the argument parser's frame)
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    target = _dt.to_dtype(dtype) if dtype is not None else (out.dtype if out is not None else _dt.DEFAULT.value)
    if target.np.kind in "bc":  # (before the range's checks, as torch's dispatch)
        raise NotImplementedError(f"\"range_cpu\" not implemented for '{_dt.scalar_type_name(target.np)}'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    values = (start + step * np.arange(n, dtype=np.float64)).astype(target.np)
    # (torch's range is no factory of the default device: without a device it makes a CPU tensor)
    result = _finish(values, requires_grad, CPU if device is None else device)
    return _into_out(result, out) if out is not None else result


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """A tensor whose dims lie in memory in ``physical_layout`` order (outermost first)."""
    from .._factories import empty

    size, perm = tuple(size), tuple(physical_layout)
    if len(size) != len(perm):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(perm)}")
    physical = empty(*[size[p] for p in perm], dtype=dtype, device=device, pin_memory=pin_memory)
    inverse = [perm.index(d) for d in builtins.range(len(perm))]
    return views.permute(physical, inverse).detach().requires_grad_(requires_grad)


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-d tensor sharing the memory of a Python buffer-protocol object."""
    from .._factories import from_numpy, requiring_grad

    np_dtype = _dt.to_dtype(dtype).np
    length = memoryview(buffer).nbytes
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    item = np_dtype.itemsize
    if count < 0:
        if (length - offset) % item:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({item})")
        count = (length - offset) // item
    elif offset + count * item > length:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({length} bytes)")
    out = from_numpy(np.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset))
    return requiring_grad(out) if requires_grad else out


# ---- binomial / histogramdd ----------------------------------------------------------------------------------


def _binomial_kernel(count, prob, generator=None):
    from .._factories import _rng

    for name, a in (("count", count), ("prob", prob)):
        if a.dtype.kind != "f":
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_dt.scalar_type_name(a.dtype)}")
    np.broadcast_shapes(count.shape, prob.shape)  # (TensorIterator: the sizes are checked before the dtypes)
    if prob.dtype != count.dtype:  # (TensorIterator's same-dtype check, against the result's dtype: count's)
        raise RuntimeError(f"Found dtype {_dt.scalar_type_name(prob.dtype)} but expected "
                           f"{_dt.scalar_type_name(count.dtype)}")
    draws = _rng(generator).binomial(count, prob, single=count.dtype == np.float32)
    return draws.astype(count.dtype)


binomial = defop_without_derivative("binomial(Tensor count, Tensor prob, Generator? generator=None) -> Tensor",
                                    _binomial_kernel)


def histogramdd(input: Tensor, bins=10, range: Sequence[float] | None = None,  # noqa: A002
                weight: Tensor | None = None, density: bool = False, *, out=None):
    """The D-dimensional histogram of the rows of ``input`` (last dim D): PyTorch's bins, each the half-open
    ``[edge_i, edge_{i+1})``, the last one closed. No derivative. PyTorch's checks in its order: with bin counts
    the edges are made first (range, counts, then the inputs' checks); edges given are checked at once."""
    from .._factories import from_numpy, linspace
    from ..autograd.forward_ad import refuse_fallback_tangents
    from .statistics import check_bin_counts, check_histogramdd_inputs, histogramdd_outer_edges, refuse_unbinnable
    from .variants import give_not_implemented_history

    counted = isinstance(bins, int) or not all(isinstance(b, Tensor) for b in bins)
    # (the first operator PyTorch's composite calls refuses a tangent before any check of its kernel)
    if counted:
        refuse_fallback_tangents("_histogramdd_bin_edges", (input, weight))
    else:
        refuse_fallback_tangents("_histogramdd_from_bin_tensors", (input, *bins, weight))
    x = input._data
    if x.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    points = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
    w = None if weight is None else weight._data
    if counted:
        counts = [bins] * x.shape[-1] if isinstance(bins, int) else list(bins)
        outer = histogramdd_outer_edges(points, range)
        if len(counts) != len(outer):
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
        if any(count < -1 for count in counts):
            raise RuntimeError("number of steps must be non-negative")  # (linspace's, for count + 1 edges)
        edges = [linspace(left, right, count + 1, dtype=input.dtype)._data
                 for (left, right), count in zip(outer, counts)]
    else:
        edges = [b._data for b in bins]
    check_histogramdd_inputs(x, edges, w)
    check_bin_counts([e.size - 1 for e in edges])
    refuse_unbinnable(x)
    hist = from_numpy(_histogram_of_points(points, edges, w, density).astype(x.dtype))
    edge_tensors = tuple(from_numpy(e.copy()) for e in edges)
    # (no formula: PyTorch's hist comes from one operator, edges it made from bin counts from another)
    if counted:
        give_not_implemented_history("_histogramdd_bin_edges", edge_tensors, (input, weight))
    give_not_implemented_history("_histogramdd_from_bin_cts" if counted else "_histogramdd_from_bin_tensors",
                                 (hist,), (input, weight) + (() if counted else tuple(bins)))
    return _Histogramdd((hist, edge_tensors))


def _histogram_of_points(points: np.ndarray, edges: list, w: np.ndarray | None, density: bool) -> np.ndarray:
    """ATen's CPU histogramdd of the (M, D) ``points``: each point's bin found dim by dim (one out of range or NaN
    in any dim leaves the point out), its weight added in the dtype by the thread whose range holds it."""
    from .statistics import HISTOGRAM_GRAIN_SIZE, bin_positions, histogram_density, thread_histograms

    if not edges:  # (points of no coordinates: PyTorch's 0-d histogram counts nothing)
        return np.asarray(np.nan if density else 0.0)
    shape = tuple(e.size - 1 for e in edges)
    kept = np.ones(points.shape[0], bool)
    per_dim = []
    for d, e in enumerate(edges):
        inside, pos = bin_positions(points[:, d], e)
        column = np.zeros(points.shape[0], np.int64)
        column[inside] = pos
        kept &= inside
        per_dim.append(column)
    flat = np.ravel_multi_index([column[kept] for column in per_dim], shape)
    weights = None if w is None else w.reshape(-1)[kept]
    grain = max(1, HISTOGRAM_GRAIN_SIZE // len(edges))
    hist = thread_histograms(flat, kept, math.prod(shape), points.dtype, weights, grain).reshape(shape)
    return histogram_density(hist, edges) if density else hist


# ---- methods of existing functions ---------------------------------------------------------------------------


def _prelu_method(self: Tensor, weight: Tensor) -> Tensor:
    return activation.prelu(self, weight)


PUBLIC = {
    "range": range, "empty_permuted": empty_permuted, "frombuffer": frombuffer, "binomial": binomial,
    "histogramdd": histogramdd, "nonzero_static": nonzero_static,
    "rnn_tanh_cell": _rnn.rnn_tanh_cell, "rnn_relu_cell": _rnn.rnn_relu_cell, "lstm_cell": _rnn.lstm_cell,
    "gru_cell": _rnn.gru_cell,
}
METHODS = {
    "apply_": apply_, "map_": map_, "map2_": map2_, "fill_diagonal_": fill_diagonal_,
    "hardshrink": activation.hardshrink, "prelu": _prelu_method,
    "digamma_": digamma_, "lgamma_": lgamma_, "polygamma_": polygamma_, "mvlgamma_": mvlgamma_,
    "new_empty_strided": new_empty_strided, "nonzero_static": nonzero_static, "resize_": resize_,
    "resize_as_": resize_as_, "dim_order": dim_order, "is_set_to": is_set_to, "is_pinned": is_pinned,
    "pin_memory": pin_memory, "is_shared": is_shared, "share_memory_": share_memory_,
}
