"""Statistics: quantile / nanquantile, mode, nanmedian, histogram, cov, corrcoef.

``quantile``, ``cov`` and ``corrcoef`` are composites in PyTorch (``Sorting.cpp``, ``Correlation.cpp``); they are
built here from the same dispatched ops in the same order, so that their autograd graphs show the same nodes
(``SortBackward0`` → ``GatherBackward0`` → ``LerpBackward1`` → ``SqueezeBackward4`` for ``quantile``).
``mode`` and ``nanmedian`` are primitives with their own nodes; ``histogram`` has no derivative.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import math
import operator

import numpy as np

from .._tensor import Tensor, _wrap
from .._warnings import warn_at_caller
from ..backend import dtypes as _dt
from ..backend.dtypes import cpp_type_name
from ..return_types import out_type, return_type
from . import aten_sum, stl_order
from ._util import unsupported, wrap_dim
from .aten_loops import thread_chunks
from .bfloat16_in_float import finfo
from .extra_math import fmt_double as _fmt
from .reductions_extra import (
    _along,
    _finish_along,
    _full_evenly_distribute,
    _kth_vjp,
    evenly_read_jvp,
    median_of_empty,
    select_along,
    sort_indices,
)
from .registry import defop
from .scalar_overloads import mul_scalar
from .variants import give_not_implemented_history, resized_out, warn_out_resized


def _type_name(np_dtype) -> str:
    from ..backend.dtypes import scalar_type_name

    return scalar_type_name(np_dtype)


# ---- quantile / nanquantile --------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input: Tensor, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool,
              out: Tensor | None = None) -> Tensor:
    """PyTorch's quantile_compute, op for op (the in-place steps included, so the nodes are the same)."""
    from .creation import full_like

    if not isinstance(q, Tensor):
        if not 0 <= float(q) <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {_fmt(q)}")
        q = _wrap(np.asarray(q, dtype=input._data.dtype))
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input._data.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q._data.dtype != input._data.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if out is not None and out._data.dtype != input._data.dtype:
        raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
    if not bool(np.all((q._data >= 0) & (q._data <= 1))):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    q = q.detach()

    nd = input.ndim
    if dim is None:
        out_shape = [1] * nd if keepdim else []
        sorted_ = input.flatten().sort()[0]
    else:
        d = wrap_dim(dim, nd)
        out_shape = list(input.shape)
        if nd:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
        sorted_ = input.sort()[0] if d == nd - 1 else input.unsqueeze(-1).transpose(d, -1).sort()[0]
    # The sorted values as [*output dims, n]: the quantiles are picked along the last dim.
    sorted_ = sorted_.view([*out_shape, sorted_.shape[-1]])

    last_index = sorted_.shape[-1] - 1
    with _no_grad():
        if ignore_nan:
            # ranks over the non-NaN values; an all-NaN slice gets rank 0, so its quantile is NaN
            ranks = q * (sorted_.isnan().logical_not_().sum(-1, True) - 1)
            ranks.masked_fill_(ranks < 0, 0)
        else:
            # a slice holding NaN gets the last rank, so its quantile is NaN
            from .shape_extra import broadcast_tensors

            scaled, has_nan = broadcast_tensors(q * last_index, sorted_.isnan().any(-1, True))
            ranks = scaled.masked_fill(has_nan, last_index)
        if interpolation == "lower":
            ranks.floor_()
        elif interpolation == "higher":
            ranks.ceil_()
        elif interpolation == "nearest":
            ranks.round_()
        ranks_below = ranks.long()
    values_below = sorted_.gather(-1, ranks_below)
    if interpolation in ("linear", "midpoint"):
        with _no_grad():
            weights = (full_like(ranks, 0.5) if interpolation == "midpoint"
                       else ranks - ranks_below)
            ranks_above = ranks.ceil_().long()
        values_above = sorted_.gather(-1, ranks_above)
        values_below.lerp_(values_above, weights)
    if q.ndim == 0:
        return values_below.squeeze_(-1)
    # the quantiles move to the front
    return values_below.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


def _no_grad():
    from ..autograd.grad_mode import no_grad

    return no_grad()


def _resized_for(out: Tensor, result: Tensor) -> None:
    """ATen's ``resize_output`` of ``out`` to ``result``'s shape: with the deprecation warning where ``out`` had
    elements, and beneath autograd (an ``out`` that requires grad is refused by the write that follows)."""
    if tuple(out.shape) != tuple(result.shape):
        warn_out_resized(out._data, tuple(result.shape))
        out._data = resized_out(out._data, result._data)


def _with_out(result: Tensor, out: Tensor | None) -> Tensor:
    if out is None:
        return result
    from .creation import copy_

    _resized_for(out, result)
    with _no_grad():
        copy_(out, result)
    return out


def _copied_into_out(result: Tensor, out: Tensor | None) -> Tensor:
    """torch's composite quantile_out: ``out`` resized (with the deprecation warning for one that had elements),
    then ``copy_`` under grad mode, so an input that requires grad gives ``out`` a CopyBackwards node."""
    if out is None:
        return result
    from .creation import copy_

    _resized_for(out, result)
    return copy_(out, result)


def quantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear",
             out: Tensor | None = None) -> Tensor:
    return _copied_into_out(_quantile(input, q, dim, keepdim, interpolation, False, out), out)


def nanquantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear",
                out: Tensor | None = None) -> Tensor:
    return _copied_into_out(_quantile(input, q, dim, keepdim, interpolation, True, out), out)


# ---- mode --------------------------------------------------------------------------------------------------


def _mode_kernel(a, dim=-1, keepdim=False):
    x, d = _along(a, dim)
    if x.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    if a.dtype.kind == "c" and a.ndim and a.size:  # (a 0-d or empty input never reaches PyTorch's typed kernel)
        raise unsupported("mode_cpu", a.dtype)
    moved = np.moveaxis(x, d, -1)
    n = moved.shape[-1]
    rows = moved.reshape(-1, n)
    vals = np.empty(rows.shape[0], dtype=a.dtype)
    idx = np.empty(rows.shape[0], dtype=np.int64)
    for r, order in enumerate(_mode_orders(rows)):
        s = rows[r, order]
        # PyTorch's CPU kernel walks the sorted (value, index) pairs and keeps the first longest run of equal
        # values (NaN != NaN: each NaN is a run of its own), reporting the index of the run's last pair
        ends = np.flatnonzero(np.append(s[1:] != s[:-1], True))
        longest = int(np.argmax(np.diff(ends, prepend=-1)))
        vals[r], idx[r] = s[ends[longest]], order[ends[longest]]
    shape = list(moved.shape[:-1])
    shape.insert(d, 1)
    return _finish_along((vals.reshape(shape), idx.reshape(shape)), a.ndim, d, keepdim)


def _mode_orders(rows: np.ndarray) -> np.ndarray:
    """The order ``std::sort`` with ``a < b`` puts each row's (value, index) pairs in, as mode's kernel does.

    Past 16 elements introsort leaves ties in an order of its own; NaN, which that comparator cannot order, goes
    through the step-by-step sort. Elsewhere the stable order is the same."""
    orders = sort_indices(rows, 1, False)
    in_order = np.take_along_axis(rows, orders, 1)
    nan_rows = np.isnan(rows).any(axis=1) if rows.dtype.kind == "f" else np.zeros(rows.shape[0], dtype=bool)
    tied = (in_order[:, 1:] == in_order[:, :-1]).any(axis=1) & ~nan_rows
    if rows.shape[1] > 16 and tied.any():
        orders[tied] = stl_order.introsort_order(stl_order.order_keys(rows[tied], False))
    for r in np.flatnonzero(nan_rows).tolist():
        with contextlib.suppress(IndexError):  # (where libstdc++ would read outside the row: the stable order)
            orders[r] = stl_order.introsort_literal(rows[r].tolist(), operator.lt)
    return orders


mode = defop("mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)", _mode_kernel,
             vjp=_kth_vjp, saves=("result1",), attrs=("dim", "keepdim"), meta=("self_sym_sizes",),
             complex_grad=False)  # (a complex result no kernel refused: autograd refuses it, as PyTorch's)


# ---- nanmedian ---------------------------------------------------------------------------------------------


def _nanmedian_index(x: np.ndarray, d: int) -> np.ndarray:
    """Index (keepdim) of the lower median of the non-NaN values along ``d`` (NaN sorts last)."""
    order = sort_indices(x, d, False)
    pos = np.zeros(tuple(1 if k == d else s for k, s in enumerate(x.shape)), dtype=np.int64)
    if x.dtype.kind in "fc":
        valid = np.sum(~np.isnan(x), axis=d, keepdims=True)
    else:
        valid = np.full(pos.shape, x.shape[d], dtype=np.int64)
    pos = np.maximum(valid - 1, 0) // 2
    index = np.take_along_axis(order, pos, d)
    all_nan = valid == 0
    if all_nan.any() and x.shape[d] > 1:
        index[all_nan] = _all_nan_nanmedian_index(x.shape[d])
    return index


@functools.cache
def _all_nan_nanmedian_index(n: int) -> int:
    """The index PyTorch's nanmedian gives for a slice of ``n`` NaNs: its comparator holds NaNs equal (they are
    ordered by index only among numbers), so ``std::nth_element(first, first, last)`` leaves whichever index its
    introselect happens to put first, not the first NaN."""
    return int(stl_order.introselect_order(np.zeros((1, n), dtype=np.int64), 0)[0, 0])


def _nanmedian_dim_kernel(a, dim, keepdim=False):
    return select_along(a, dim, keepdim, "median", _nanmedian_index)  # (PyTorch words its errors as median's)


def _nanmedian_full_kernel(a):
    empty = median_of_empty(a, "median_cpu")
    # the whole tensor as one slice
    return empty if empty is not None else _nanmedian_dim_kernel(a.reshape(-1), 0)[0]


def _nanmedian_full_vjp(ctx, g):
    return _full_evenly_distribute(g, *ctx.saved_tensors)


_nanmedian_full = defop("nanmedian(Tensor self) -> Tensor", _nanmedian_full_kernel, vjp=_nanmedian_full_vjp,
                        saves=("self", "result"), node_name="NanmedianBackward0", jvp=evenly_read_jvp)
_nanmedian_dim = defop("nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> "
                       "(Tensor values, Tensor indices)", _nanmedian_dim_kernel, vjp=_kth_vjp, saves=("result1",),
                       attrs=("dim", "keepdim"), node_name="NanmedianBackward1", meta=("self_sym_sizes",))


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False, *, out=None):
    extra = {} if out is None else {"out": out}
    if dim is None:
        return _nanmedian_full(input, **extra)
    return _nanmedian_dim(input, dim, keepdim, **extra)


# ---- histogram ---------------------------------------------------------------------------------------------


def histogram(input: Tensor, bins: int | Tensor = 100, *, range: tuple[float, float] | None = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False, out=None):
    """PyTorch's 1-D histogramdd: bin ``i`` holds ``edges[i] <= x < edges[i + 1]``, the last bin also its right
    edge; values outside the edges (and NaN) are left out. No derivative (the result never requires grad).

    As PyTorch, the histogramdd of the input as a column (numel, 1) and the weight flattened, with its checks in
    its order: bin edges given are checked before their count; a bin count before the range."""
    from .. import _factories
    from ..autograd.forward_ad import refuse_fallback_tangents
    from .variants import check_out_count

    if out is not None:
        check_out_count(2, out, "histogram")  # (the parser's check, before the autograd fallback's refusal)
    refuse_fallback_tangents("histogram", (input, bins, weight, *(out or ())))
    x = input._data
    column = x.reshape(-1, 1)
    w = None if weight is None else weight._data.reshape(-1)
    # (torch prepares out= after checking bin edges given, before checking a bin count)
    if isinstance(bins, Tensor):
        edges = bins._data
        check_histogramdd_inputs(column, (edges,), w)
        _check_count_and_out(input, edges.size - 1, out)
    else:
        _check_count_and_out(input, bins, out)
        (left, right), = histogramdd_outer_edges(column, range)
        edges = _factories.linspace(left, right, bins + 1, dtype=input.dtype)._data
        check_histogramdd_inputs(column, (edges,), w)
    refuse_unbinnable(x)
    nbins = edges.shape[0] - 1
    values = x.reshape(-1)
    keep, pos = bin_positions(values, edges)
    hist = thread_histograms(pos, keep, nbins, x.dtype, None if w is None else w[keep].astype(x.dtype))
    if density:
        hist = histogram_density(hist, (edges,))
    hist_t, edges_t = _wrap(np.asarray(hist, dtype=x.dtype)), _wrap(np.array(edges, copy=True))
    if out is not None:
        for dst, src in zip(out, (hist_t, edges_t)):
            _with_out(src, dst)  # (of the right shape by now)
        return out_type(_HISTOGRAM)(tuple(out))
    # (no formula: a histogram of weights that require grad is one to print, whose backward refuses)
    give_not_implemented_history("histogram", (hist_t, edges_t), (input, bins, weight))
    return _HISTOGRAM((hist_t, edges_t))


_HISTOGRAM = return_type("histogram", ("hist", "bin_edges"))
HISTOGRAM_GRAIN_SIZE = 200  # (ATen's HISTOGRAM_GRAIN_SIZE: the fewest elements at::parallel_for gives a thread)


def bin_positions(values: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which ``values`` fall within the ``edges`` (NaN does not), and the bin of each of those: ``edges[i] <= v <
    edges[i + 1]``, the last bin also holding its right edge."""
    with np.errstate(invalid="ignore"):
        kept = (values >= edges[0]) & (values <= edges[-1])
    pos = np.searchsorted(edges, values[kept], side="right") - 1
    return kept, np.minimum(pos, edges.size - 2)


def histogram_density(hist: np.ndarray, edges) -> np.ndarray:
    """histogramdd's density, as ATen's CPU template does it: ``hist`` divided by its total (torch.sum's order,
    the scalar rounded back to the dtype), then by each bin's length along each dim in turn (``diff`` in the
    dtype, one division a dim)."""
    # (a bfloat16 sum adds in float, in float16's order)
    summed = hist if aten_sum.supports(hist.dtype) else hist.astype(np.float32)
    total = aten_sum.sum_as_aten(summed, None, False)
    with np.errstate(all="ignore"):
        hist = hist / total.astype(hist.dtype)
        for d, e in enumerate(edges):
            hist = hist / np.diff(e).reshape([-1 if k == d else 1 for k in builtins.range(hist.ndim)])
    return hist


def thread_histograms(pos: np.ndarray, kept: np.ndarray, nbins: int, dtype: np.dtype,
                      weights: np.ndarray | None = None, grain: int = HISTOGRAM_GRAIN_SIZE) -> np.ndarray:
    """ATen's histogram (histc's and histogram's) of the bin positions ``pos`` of the elements ``kept`` marks,
    with their ``weights`` (in ``dtype``) or counted. at::parallel_for gives each thread a range of all the
    elements, and each thread adds its own into a histogram of its own, one at a time in the input's dtype (so a
    bfloat16 count stops growing at 256, a half one at 2048); sum_out then adds the threads' histograms, in
    float for the half-precision dtypes (rounded once), else in the dtype, a thread's row after another's.
    (histogramdd's threads take ranges of points, ``grain`` of them at least: 200 // D.)"""
    starts = thread_chunks(kept.size, grain)
    thread = np.searchsorted(starts, np.flatnonzero(kept), side="right") - 1
    if weights is None:
        rows = np.bincount(thread * nbins + pos, minlength=len(starts) * nbins).reshape(len(starts), nbins)
        rows = np.minimum(rows, 2 ** (finfo(dtype).nmant + 1))
        # (sums of a few counts below 2 ** 24 are exact integers: in float or in float64, one rounding)
        return rows.sum(axis=0).astype(np.float64).astype(dtype)
    rows = np.zeros((len(starts), nbins), dtype)
    np.add.at(rows, (thread, pos), weights)  # (unbuffered: in the elements' order, each addition rounded)
    if dtype.itemsize == 2:  # (half and bfloat16 threads' rows are added in float)
        return functools.reduce(np.add, rows.astype(np.float32)).astype(dtype)
    return functools.reduce(np.add, rows)


def _check_count_and_out(input: Tensor, count: int, out) -> None:
    if out is None:
        check_bin_counts((count,))
    else:
        _prepare_histogram_out(input, count, *out)


def _prepare_histogram_out(input: Tensor, count: int, hist: Tensor, bin_edges: Tensor) -> None:
    """ATen's histogramdd_prepare_out, before any check of the bins or the weight: the outs' dtypes, the bin
    count, then ``bin_edges`` resized before ``hist`` (each with resize_output's warning)."""
    source = cpp_type_name(input._data.dtype)
    if hist._data.dtype != input._data.dtype:
        raise RuntimeError("torch.histogram: input tensor and hist tensor should have the same dtype, but got "
                           f"input {source} and hist {cpp_type_name(hist._data.dtype)}")
    if bin_edges._data.dtype != input._data.dtype:
        raise RuntimeError("torch.histogram: input tensor and bin_edges tensor should have the same dtype, but got "
                           f"input {source} and bin_edges {cpp_type_name(bin_edges._data.dtype)} for dimension 0")
    check_bin_counts((count,))
    _resized_for(bin_edges, _wrap(np.empty(count + 1, dtype=input._data.dtype)))
    _resized_for(hist, _wrap(np.empty(count, dtype=input._data.dtype)))


# PyTorch's checks of histogram and histogramdd (Histogram.cpp), shared by both; each form calls them in its order.


def histogramdd_outer_edges(points: np.ndarray, range) -> list[tuple[float, float]]:  # noqa: A002
    """The (leftmost, rightmost) edge per dim of ``points`` (M, N): from ``range``, else the extrema of the input
    (NaN propagating), else [0, 1]; a degenerate range widened by half a unit each side."""
    n = points.shape[1]
    if range is not None:
        if len(range) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should have {2 * n} "
                               f"elements, but got {len(range)}")
        pairs = [(float(range[2 * d]), float(range[2 * d + 1])) for d in builtins.range(n)]
    elif points.size:
        if points.dtype not in (np.float32, np.float64):  # (the extrema's dispatch has floats and doubles only)
            raise unsupported("histogramdd", points.dtype)
        pairs = list(zip(points.min(axis=0).tolist(), points.max(axis=0).tolist()))
    else:
        pairs = [(0.0, 1.0)] * n
    for d, (left, right) in enumerate(pairs):
        if not (math.isfinite(left) and math.isfinite(right)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_fmt(left)}, {_fmt(right)}] is not "
                               "finite")
        if left > right:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_fmt(left)} max "
                               f"{_fmt(right)} for dimension {d}")
    return [(left - 0.5, right + 0.5) if left == right else (left, right) for left, right in pairs]


def check_histogramdd_inputs(x: np.ndarray, edges, w: np.ndarray | None) -> None:
    """histogramdd_check_inputs: one 1-D, non-empty sequence of edges of the input's dtype per dim, then the
    weight's dtype and shape (the input's without its last dim)."""
    n = x.shape[-1]
    if len(edges) != n:
        raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a {n}-dimensional "
                           f"histogram but got {len(edges)}")
    for d, e in enumerate(edges):
        if e.dtype != x.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                               f"got input with dtype {cpp_type_name(x.dtype)} and bins for dimension {d} with "
                               f"dtype {cpp_type_name(e.dtype)}")
        if e.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {e.ndim} "
                               f"dimensions in the bins tensor for dimension {d}")
        if e.size == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements "
                               f"in the bins tensor for dimension {d}")
    if w is None:
        return
    if w.dtype != x.dtype:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({cpp_type_name(x.dtype)}), and "
                           f"weight({cpp_type_name(w.dtype)})")
    if (w.shape or (1,)) != x.shape[:-1]:  # (a 0-d weight counts as one element)
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           "input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(x.shape)} and weight with shape {list(w.shape)}")


def check_bin_counts(counts) -> None:
    for d, count in enumerate(counts):
        if count <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension {d}")


def refuse_unbinnable(x: np.ndarray) -> None:
    """The binning kernel's dispatch: floating types only (half included, unlike the extrema's)."""
    if not _dt.is_floating_np(x.dtype):  # (bfloat16 included)
        raise unsupported("histogram_cpu", x.dtype)


# ---- cov / corrcoef ----------------------------------------------------------------------------------------


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """PyTorch's composite cov (Correlation.cpp): rows are variables, columns observations."""
    from .. import _factories

    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    num_observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, "iu", "integral", num_observations)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, "f", "floating point", num_observations)
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else _factories.tensor(num_observations, dtype=_long())
    if w is not None and not bool(w_sum._data != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if correction == 0:
        norm_factor = w_sum  # (PyTorch records no subtraction then)
    elif w is not None and aweights is not None:
        norm_factor = w_sum - mul_scalar((w * aweights).sum(), correction) / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor._data <= 0):
        warn_at_caller("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                       "observations.", UserWarning)
        norm_factor = norm_factor * 0  # (PyTorch zeroes it in place: the result is inf / nan)
    x = x - avg.unsqueeze(1)
    c = x.mm((x * w if w is not None else x).t().conj())
    return c.true_divide(norm_factor).squeeze()


def _check_weights(name: str, w: Tensor, kinds: str, kind_words: str, num_observations: int) -> None:
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.ndim} dimensions")
    if _dt.kind_of(w._data.dtype) not in kinds:
        raise RuntimeError(f"cov(): expected {name} to have {kind_words} dtype but got {name} with "
                           f"{_type_name(w._data.dtype)} dtype")
    if w.numel() != num_observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                           f"input but got {w.numel()} != {num_observations}")
    if num_observations and w._data.min() < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _long():
    from ..backend.dtypes import to_dtype

    return to_dtype(np.int64)


def corrcoef(input: Tensor) -> Tensor:
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c  # a single variable: nan for a zero, inf or nan variance, 1 otherwise
    d = c.diagonal()
    stddev = (d.real if d.is_complex() else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clamp(-1, 1)


# ---- exports -----------------------------------------------------------------------------------------------

PUBLIC = {
    "quantile": quantile, "nanquantile": nanquantile, "mode": mode, "nanmedian": nanmedian,
    "histogram": histogram, "cov": cov, "corrcoef": corrcoef,
}

METHODS = dict(PUBLIC)
