"""``torch.fft``: discrete Fourier transforms (PyTorch's SpectralOps.cpp).

As in PyTorch, every public transform is a composite over three ATen primitives with their own autograd nodes:
``_fft_c2c`` (FftC2CBackward0), ``_fft_r2c`` (FftR2CBackward0) and ``_fft_c2r`` (FftC2RBackward0), each of which
applies its normalization itself (``normalization``: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n the signal size).
Around them, the public functions promote the input (``ToCopyBackward0``), trim or zero-pad it to ``n``/``s``
(``SliceBackward0`` / ``ConstantPadNdBackward0``) and conjugate (``ConjBackward0``) exactly where PyTorch does,
so the recorded graphs are PyTorch's.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from .._strides import contiguous_strides, element_strides, empty_strided, with_strides
from .._tensor import Tensor
from ..backend.dtypes import is_floating_np, scalar_type_name
from ._util import default_float, wrap_dim
from .registry import defop

_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2  # PyTorch's fft_norm_mode
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}

Dims = int | Sequence[int] | None


# ---- result layouts (aten/src/ATen/native/mkl/SpectralOps.cpp) ------------------------------------------------
#
# PyTorch's CPU transforms (MKL) do not return contiguous results. ``_exec_fft`` permutes the input so that the
# dims not transformed (the batch) come first, in decreasing order of the input's strides, then the transformed
# dims in the order it is given them; it runs one batched plan into a contiguous buffer of that permuted shape
# (the batch collapsed into one dim) and views the buffer back in the input's dim order (``as_strided_``). So a
# result is dense, its dims laid out outermost to innermost in that order, e.g. ``fft(x, dim=0)`` of a
# contiguous (4, 3) ``x`` has strides (1, 4). Checked against torch in tests/ops/test_fft_layouts_vs_torch.py.


def _by_decreasing_stride(dims, strides) -> list[int]:
    """``std::sort`` by decreasing stride; on so few elements libstdc++ runs an insertion sort, which is stable."""
    return sorted(dims, key=lambda d: -strides[d])


def _batch_dims(ndim: int, transformed) -> list[int]:
    """The dims not in ``transformed``, in the order libstdc++'s ``std::partition`` (not stable: it swaps
    the first transformed dim with the last batch dim, and so on inwards) leaves them; dims of equal stride keep
    that order in the sort."""
    order = list(range(ndim))
    first, last = 0, ndim - 1
    while True:
        while first <= last and order[first] not in transformed:
            first += 1
        while first < last and order[last] in transformed:
            last -= 1
        if first >= last:
            return order[:first]
        order[first], order[last] = order[last], order[first]
        first, last = first + 1, last - 1


def _exec_fft_strides(in_strides, out_shape, dims) -> tuple:
    """The element strides of ``_exec_fft``'s result of ``out_shape``, transforming ``dims`` (in this order,
    innermost last) of an input with ``in_strides``."""
    strides = [0] * len(out_shape)
    step = 1
    for d in reversed(dims):  # (the contiguous buffer steps over an empty dim as if it had size 1)
        strides[d] = step
        step *= max(out_shape[d], 1)
    for d in reversed(_by_decreasing_stride(_batch_dims(len(out_shape), set(dims)), in_strides)):
        strides[d] = step  # (each batch dim steps over the whole signal and the batch dims inside it)
        step *= out_shape[d]
    return tuple(strides)


def _plan_dims(a: np.ndarray, dims, sort_last: bool = True) -> list[int]:
    """The order ``_exec_fft`` is given the transformed dims in: ``_fft_c2c`` sorts them by decreasing input
    stride (``_sort_dims``), ``_fft_r2c`` all but the last (the onesided one)."""
    dims = list(dims)
    if len(dims) < 2:
        return dims
    strides = element_strides(a)
    return (_by_decreasing_stride(dims, strides) if sort_last
            else _by_decreasing_stride(dims[:-1], strides) + dims[-1:])


def _over_last_dims(a: np.ndarray, dims, sort_last: bool = True) -> bool:
    """Whether ``a`` is C-ordered (no dim of size 1, whose stride could be anything) and ``dims`` are its last
    ones, so that ``_exec_fft`` gives a C-ordered result: the common case, tested before any stride arithmetic."""
    ndim = a.ndim
    return (a.flags.c_contiguous and 1 not in a.shape and sorted(dims) == list(range(ndim - len(dims), ndim))
            and (sort_last or dims[-1] == ndim - 1))


def _result_buffer(a: np.ndarray, shape: tuple, dtype, dims, sort_last: bool = True) -> np.ndarray:
    """An uninitialised array for the transform of ``a`` over ``dims``, a result of ``shape``, laid out as
    ``_exec_fft`` lays it out; NumPy's transforms write into it (``out=``), so no copy is made."""
    if 1 not in shape and _over_last_dims(a, dims, sort_last):
        return np.empty(shape, dtype)
    return empty_strided(shape, _exec_fft_strides(element_strides(a), shape, _plan_dims(a, dims, sort_last)),
                         dtype)


def _relaid(t: Tensor, strides: tuple) -> Tensor:
    """``t``, a fresh result made here where PyTorch makes its own differently laid out (a view, an in-place
    write or a buffer of its own), with its array laid out with these element strides: same values, same graph
    (nothing has saved ``t``)."""
    t._data = with_strides(t._data, strides)
    return t


# ---- kernels -------------------------------------------------------------------------------------------------


def _normalize(out: np.ndarray, signal_numel: int, normalization: int) -> np.ndarray:
    """Scale an unnormalized transform; the factor is computed in the output's precision, as pocketfft does."""
    if normalization == _NONE:
        return out
    real = out.real.dtype.type
    factor = real(1) / (np.sqrt(real(signal_numel)) if normalization == _BY_ROOT_N else real(signal_numel))
    out *= factor
    return out


def _c2c_kernel(a, dim, normalization, forward):
    if a.dtype.kind != "c":
        raise RuntimeError(f"Only supports complex dtypes, but found: {scalar_type_name(a.dtype)}")
    dim = tuple(d + a.ndim if d < 0 else d for d in dim)  # (as NumPy reads them)
    out = _result_buffer(a, a.shape, a.dtype, dim)
    if not dim:
        np.copyto(out, a)
        return out
    # NumPy's "forward" norm leaves its inverse transform unscaled: both directions start unnormalized
    if forward:
        np.fft.fftn(a, axes=dim, out=out)
    else:
        np.fft.ifftn(a, axes=dim, norm="forward", out=out)
    return _normalize(out, math.prod(a.shape[d] for d in dim), normalization)


def _r2c_kernel(a, dim, normalization, onesided):
    if a.dtype not in _COMPLEX_OF:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {scalar_type_name(a.dtype)}")
    dim = tuple(d + a.ndim if d < 0 else d for d in dim)  # (as NumPy reads them)
    shape = list(a.shape)
    if onesided:
        shape[dim[-1]] = shape[dim[-1]] // 2 + 1
    # (a two-sided result is laid out as the onesided plan's: PyTorch fills its other half in place)
    out = _result_buffer(a, tuple(shape), _COMPLEX_OF[a.dtype], dim, sort_last=False)
    if onesided:
        np.fft.rfftn(a, axes=dim, out=out)
    else:
        np.fft.fftn(a, axes=dim, out=out)
    return _normalize(out, math.prod(a.shape[d] for d in dim), normalization)


def _c2r_kernel(a, dim, normalization, last_dim_size):
    if a.dtype.kind != "c":
        raise RuntimeError(f"Only supports complex dtypes, but found: {scalar_type_name(a.dtype)}")
    dim = tuple(d + a.ndim if d < 0 else d for d in dim)  # (as NumPy reads them)
    sizes = [a.shape[d] for d in dim[:-1]] + [last_dim_size]
    shape = list(a.shape)
    shape[dim[-1]] = last_dim_size
    # A C2R over several dims is an inverse C2C over all but the last (a result of its own layout), then a
    # one-dimensional C2R of that over the last dim, whose layout follows the intermediate's strides.
    if 1 not in shape and _over_last_dims(a, dim, sort_last=False):
        out = np.empty(shape, _REAL_OF[a.dtype])
    else:
        strides = element_strides(a)
        if len(dim) > 1:
            strides = _exec_fft_strides(strides, a.shape, _plan_dims(a, dim[:-1]))
        out = empty_strided(tuple(shape), _exec_fft_strides(strides, shape, dim[-1:]), _REAL_OF[a.dtype])
    np.fft.irfftn(a, s=sizes, axes=dim, norm="forward", out=out)
    return _normalize(out, math.prod(sizes), normalization)


# ---- backward rules (FunctionsManual.cpp: fft_r2c_backward, fft_c2r_backward) --------------------------------


def _c2c_vjp(ctx, g):
    dim, normalization, forward = ctx.attrs
    return _fft_c2c(g, dim, normalization, not forward)


def _r2c_vjp(ctx, g):
    """A onesided R2C is a C2C of the real signal with half of its result dropped: zero-fill the dropped half,
    transform back, keep the real part."""
    from .complex_ops import real
    from .nn_ops.misc import constant_pad_nd

    dim, normalization, onesided = ctx.attrs
    (x,) = ctx.saved_tensors  # (only its size is read, as in PyTorch)
    if onesided:
        last = dim[-1]
        zero_length = x.shape[last] - g.shape[last]
        if zero_length > 0:
            pad = [0] * (2 * g.ndim)
            pad[2 * (g.ndim - 1 - last) + 1] = zero_length
            # (PyTorch: ``new_zeros`` with ``grad`` copied into its first half: contiguous, even where a 4-d
            # ``grad`` would make constant_pad_nd's result channels-last)
            g = constant_pad_nd(g, tuple(pad), 0)
            g = _relaid(g, contiguous_strides(tuple(g.shape)))
    return real(_fft_c2c(g, dim, normalization, False))


def _c2r_vjp(ctx, g):
    """A C2R fills the missing half of the spectrum by conjugate symmetry, so the bins mirrored into that half
    (indices 1 .. n - onesided_length) get their gradient twice."""
    from .._factories import from_numpy
    from .pointwise import mul

    dim, normalization, _ = ctx.attrs
    gi = _fft_r2c(g, dim, normalization, True)
    last = dim[-1]
    double_length = g.shape[last] - gi.shape[last]
    if double_length > 0:
        # a constant weight rather than PyTorch's in-place narrow().mul_(2): the rule stays differentiable
        weight = np.ones(gi.shape[last], dtype=g._data.dtype)
        weight[1:1 + double_length] = 2
        # (laid out as gi, which PyTorch multiplies in place)
        gi = _relaid(mul(gi, from_numpy(weight.reshape((-1,) + (1,) * (gi.ndim - 1 - last)))),
                     element_strides(gi._data))
    return gi


def _linear_jvp(op):
    """Every primitive is linear in its input (PyTorch's ``result: auto_linear``); ``op()`` returns the operator
    (declared below this rule)."""
    def jvp(args, outs, tangents):
        return None if tangents[0] is None else op()(tangents[0], *args[1:])
    return jvp


_fft_c2c = defop("_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor", _c2c_kernel,
                 vjp=_c2c_vjp, jvp=_linear_jvp(lambda: _fft_c2c), attrs=("dim", "normalization", "forward"),
                 node_name="FftC2CBackward0")
_fft_r2c = defop("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor", _r2c_kernel,
                 vjp=_r2c_vjp, jvp=_linear_jvp(lambda: _fft_r2c), saves=("self",),
                 attrs=("dim", "normalization", "onesided"), node_name="FftR2CBackward0")
_fft_c2r = defop("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor", _c2r_kernel,
                 vjp=_c2r_vjp, jvp=_linear_jvp(lambda: _fft_c2r), attrs=("dim", "normalization", "last_dim_size"),
                 hidden=("last_dim_size",), node_name="FftC2RBackward0")


# ---- argument handling shared by the public functions ---------------------------------------------------------


def _norm_mode(norm: str | None, forward: bool) -> int:
    """NumPy's direction-dependent names: "forward" scales the forward transform by 1/n, "backward" the inverse."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _wrap(dim: int, ndim: int) -> int:
    if ndim == 0:  # (PyTorch wraps FFT dims with wrap_scalar=false)
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def _promote(t: Tensor, require_complex: bool) -> Tensor:
    """Integers become the default float dtype; only float32/float64 (and their complex types) are supported."""
    from .creation import _to_copy

    dt = t._data.dtype
    if dt.kind == "c":
        return t
    target = dt if is_floating_np(dt) else default_float()
    if target not in _COMPLEX_OF:
        raise RuntimeError(f"Unsupported dtype {scalar_type_name(target)}")
    if require_complex:
        target = _COMPLEX_OF[target]
    return t if target == dt else _to_copy(t, dtype=target)


def _check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """Trim (a slice view) or zero-pad (one constant_pad_nd) each dim in ``dims`` to its size."""
    from .nn_ops.misc import constant_pad_nd
    from .views import slice as slice_view

    pad = [0] * (2 * x.ndim)
    for d, size in zip(dims, sizes):
        have = x.shape[d]
        if have < size:
            pad[2 * (x.ndim - 1 - d) + 1] = size - have
        elif have > size:
            x = slice_view(x, d, 0, size)
    return constant_pad_nd(x, tuple(pad), 0) if any(pad) else x


def _check_out(name: str, out: Tensor | None, complex_out: bool) -> None:
    if out is None:
        return
    if complex_out and not out.is_complex():
        raise RuntimeError(f"{name} expects a complex output tensor, but got {scalar_type_name(out._data.dtype)}")
    if not complex_out and not out.is_floating_point():
        raise RuntimeError(f"{name} expects a floating point output tensor, but got "
                           f"{scalar_type_name(out._data.dtype)}")


def _conj_maybe_out(t: Tensor, out: Tensor | None) -> Tensor:
    """PyTorch's lazy ``conj()``, or ``conj_physical_out`` into ``out`` (whose autograd fallback gives ``out`` a
    NotImplemented node)."""
    from .._state import STATE
    from ..autograd import no_grad
    from .unary import conj, conj_physical
    from .variants import give_not_implemented_history, out_with_grad_error

    if out is None:  # (a view there, with ``t``'s strides; a copy here, laid out so: result_layouts.py)
        return conj(t)
    if STATE.grad_enabled and out.requires_grad:
        raise out_with_grad_error("aten::conj_physical")
    with no_grad():
        conj_physical(t, out=out)
    give_not_implemented_history("conj_physical", (out,), (t,))
    return out


def _prim(op, out: Tensor | None, *args) -> Tensor:
    if out is None:
        return op(*args)
    shape = out.shape
    result = op(*args, out=out)
    if out.shape != shape:  # (PyTorch's _fft_*_out resize ``out`` to the result's shape: contiguous)
        _relaid(out, contiguous_strides(tuple(out.shape)))
    return result


# ---- one-dimensional transforms -------------------------------------------------------------------------------


def _c2c(name: str, input: Tensor, n: int | None, dim: int, norm: str | None, forward: bool,
         out: Tensor | None) -> Tensor:
    _check_out(name, out, True)
    d = _wrap(dim, input.ndim)
    size = input.shape[d] if n is None else n
    _check_points(size)
    x = input if n is None else _resize(input, (d,), (n,))
    return _prim(_fft_c2c, out, x, (d,), _norm_mode(norm, forward), forward)


def _r2c(name: str, input: Tensor, n: int | None, dim: int, norm: str | None, forward: bool, onesided: bool,
         out: Tensor | None) -> Tensor:
    if input.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got {scalar_type_name(input._data.dtype)}")
    _check_out(name, out, True)
    x = _promote(input, False)
    d = _wrap(dim, x.ndim)
    size = x.shape[d] if n is None else n
    _check_points(size)
    if n is not None:
        x = _resize(x, (d,), (n,))
    mode = _norm_mode(norm, forward)
    if forward:
        return _prim(_fft_r2c, out, x, (d,), mode, onesided)
    # (there is no native inverse R2C: the forward one, conjugated)
    return _conj_maybe_out(_fft_r2c(x, (d,), mode, onesided), out)


def _c2r(name: str, input: Tensor, n: int | None, dim: int, norm: str | None, forward: bool,
         out: Tensor | None) -> Tensor:
    _check_out(name, out, False)
    x = _promote(input, True)
    d = _wrap(dim, x.ndim)
    last = 2 * (x.shape[d] - 1) if n is None else n
    _check_points(last)
    if n is not None:
        x = _resize(x, (d,), (last // 2 + 1,))
    mode = _norm_mode(norm, forward)
    if forward:  # (there is no native forward C2R: the inverse one of the conjugate; torch's lazy conj is
        from .unary import conj  # resolved into empty_like(x), as conj's copy is laid out here)

        x = conj(x)
    return _prim(_fft_c2r, out, x, (d,), mode, last)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
        out: Tensor | None = None) -> Tensor:
    if input.is_complex():
        return _c2c("fft", input, n, dim, norm, True, out)
    return _r2c("fft", input, n, dim, norm, True, False, out)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    if input.is_complex():
        return _c2c("ifft", input, n, dim, norm, False, out)
    return _r2c("ifft", input, n, dim, norm, False, False, out)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    return _r2c("rfft", input, n, dim, norm, True, True, out)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    return _c2r("irfft", input, n, dim, norm, False, out)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    return _c2r("hfft", input, n, dim, norm, True, out)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    return _r2c("ihfft", input, n, dim, norm, False, True, out)


# ---- n-dimensional transforms ---------------------------------------------------------------------------------


def _as_list(v: Dims) -> list[int] | None:
    if v is None:
        return None
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    if not isinstance(v, (list, tuple)):
        # (torch's parser reads only a list or tuple as an int list, not a range, set or UserList; the guard words it)
        raise TypeError(f"dims must be a tuple or list of ints, not {type(v).__name__}")
    return [operator.index(i) for i in v]


def _shape_and_dims(input: Tensor, s: Dims, dim: Dims) -> tuple[list[int], list[int]]:
    """PyTorch's canonicalize_fft_shape_and_dim_args: ``dim`` defaults to the last len(s) dims (all dims
    without ``s``), an ``s`` entry of -1 means the input's size."""
    ndim, sizes = input.ndim, input.shape
    s, dim = _as_list(s), _as_list(dim)
    dims: list[int] = []
    if dim is not None:
        dims = [wrap_dim(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dim is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [sizes[d] if n == -1 else n for n, d in zip(s, dims)]
    elif dim is None:
        dims, shape = list(range(ndim)), list(sizes)
    else:
        shape = [sizes[d] for d in dims]
    for n in shape:
        _check_points(n)
    return shape, dims


def _c2r_shape_and_dims(name: str, input: Tensor, s: Dims, dim: Dims) -> tuple[list[int], list[int], int]:
    """As ``_shape_and_dims``, plus the real output size of the last dim, whose input is the onesided half."""
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    s = _as_list(s)
    last = 2 * (input.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    _check_points(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _real_only(name: str, input: Tensor) -> None:
    if input.is_complex():
        raise RuntimeError(f"{name} expects a real-valued input tensor, but got "
                           f"{scalar_type_name(input._data.dtype)}")


def _fftn_c2c(name: str, input: Tensor, s: Dims, dim: Dims, norm: str | None, forward: bool,
              out: Tensor | None) -> Tensor:
    shape, dims = _shape_and_dims(input, s, dim)
    _check_out(name, out, True)
    # (real input too: PyTorch has no n-dimensional R2C with the full spectrum)
    x = _resize(_promote(input, True), dims, shape)
    return _prim(_fft_c2c, out, x, tuple(dims), _norm_mode(norm, forward), forward)


def fftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    return _fftn_c2c("fftn", input, s, dim, norm, True, out)


def ifftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    return _fftn_c2c("ifftn", input, s, dim, norm, False, out)


def rfftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    _real_only("rfftn", input)
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    _check_out("rfftn", out, True)
    x = _resize(_promote(input, False), dims, shape)
    return _prim(_fft_r2c, out, x, tuple(dims), _norm_mode(norm, True), True)


def irfftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    _check_out("irfftn", out, False)
    x = _resize(_promote(input, True), dims, shape)
    return _prim(_fft_c2r, out, x, tuple(dims), _norm_mode(norm, False), last)


def hfftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """A C2C forward transform over all dims but the last, then a (conjugated) C2R over the last."""
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    _check_out("hfftn", out, False)
    x = _resize(_promote(input, True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _fft_c2c(x, tuple(dims[:-1]), mode, True)
    from .unary import conj

    return _prim(_fft_c2r, out, conj(x), (dims[-1],), mode, last)


def ihfftn(input: Tensor, s: Dims = None, dim: Dims = None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """An R2C over the last dim, conjugated, then an inverse C2C over the other dims."""
    from .unary import conj_physical

    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    _check_out("ihfftn", out, True)
    x = _resize(_promote(input, False), dims, shape)
    mode = _norm_mode(norm, False)
    tmp = _fft_r2c(x, (dims[-1],), mode, True)
    if len(dims) == 1:
        return _conj_maybe_out(tmp, out)
    # (PyTorch's conj_physical of a complex tensor writes into ``empty_like(tmp)``: tmp's strides, tmp being dense)
    conjugated = _relaid(conj_physical(tmp), element_strides(tmp._data))
    return _prim(_fft_c2c, out, conjugated, tuple(dims[:-1]), mode, False)


_DIMS_2D = (-2, -1)


def fft2(input: Tensor, s: Dims = None, dim: Dims = _DIMS_2D, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    return _fftn_c2c("fft2", input, s, dim, norm, True, out)


def ifft2(input: Tensor, s: Dims = None, dim: Dims = _DIMS_2D, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    return _fftn_c2c("ifft2", input, s, dim, norm, False, out)


def rfft2(input: Tensor, s: Dims = None, dim: Dims = _DIMS_2D, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input: Tensor, s: Dims = None, dim: Dims = _DIMS_2D, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    return irfftn(input, s, dim, norm, out=out)


def hfft2(input: Tensor, s: Dims = None, dim: Dims = _DIMS_2D, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input: Tensor, s: Dims = None, dim: Dims = _DIMS_2D, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    return ihfftn(input, s, dim, norm, out=out)


# ---- helpers ----------------------------------------------------------------------------------------------------


def _freq_dtype(out: Tensor | None, dtype) -> np.dtype:
    from ..backend.dtypes import get_default_dtype, to_dtype

    if out is not None:
        np_dtype = out._data.dtype
    else:
        np_dtype = (get_default_dtype() if dtype is None else to_dtype(dtype)).np
    if np_dtype.kind not in "fc":
        raise RuntimeError("fftfreq requires a floating point or complex dtype")
    if np_dtype.kind == "c":  # (PyTorch allows complex here, then its arange rejects it)
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{scalar_type_name(np_dtype)}\'')
    return np_dtype


def _freq(k: np.ndarray, n: int, d: float, out: Tensor | None, dtype, device, requires_grad: bool) -> Tensor:
    """``k * (1 / (n * d))`` in the result's dtype (PyTorch: arange, then mul_ by a double scalar)."""
    from .._factories import _finish
    from .variants import _store

    np_dtype = _freq_dtype(out, dtype)
    step = np.dtype(np_dtype).type(1.0 / (n * d)) if n * d != 0 else np.dtype(np_dtype).type(np.inf)
    values = (k.astype(np_dtype) * step).astype(np_dtype)
    result = _finish(np.ascontiguousarray(values), requires_grad, device)
    if out is None:
        return result
    _store(out, result)
    return out


def _check_length(n: int) -> None:
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")


def fftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    _check_length(n)
    k = np.arange(n, dtype=np.int64)
    k[(n + 1) // 2:] -= n  # the negative frequencies
    return _freq(k, n, d, out, dtype, device, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    _check_length(n)
    return _freq(np.arange(n // 2 + 1, dtype=np.int64), n, d, out, dtype, device, requires_grad)


def _shift(input: Tensor, dim: Dims, inverse: bool) -> Tensor:
    from .shape_extra import roll

    dims = list(range(input.ndim)) if dim is None else [wrap_dim(d, input.ndim) for d in _as_list(dim)]
    shifts = [(input.shape[d] + inverse) // 2 for d in dims]
    return roll(input, tuple(shifts), tuple(dims))


def fftshift(input: Tensor, dim: Dims = None) -> Tensor:
    return _shift(input, dim, False)


def ifftshift(input: Tensor, dim: Dims = None) -> Tensor:
    return _shift(input, dim, True)


FFT = {
    "fft": fft, "ifft": ifft, "fft2": fft2, "ifft2": ifft2, "fftn": fftn, "ifftn": ifftn, "rfft": rfft,
    "irfft": irfft, "rfft2": rfft2, "irfft2": irfft2, "rfftn": rfftn, "irfftn": irfftn, "hfft": hfft,
    "ihfft": ihfft, "hfft2": hfft2, "ihfft2": ihfft2, "hfftn": hfftn, "ihfftn": ihfftn, "fftfreq": fftfreq,
    "rfftfreq": rfftfreq, "fftshift": fftshift, "ifftshift": ifftshift,
}

# The primitives are ATen ops of the main namespace (``torch._fft_c2c``...), not of ``torch.fft``.
PUBLIC = {"_fft_c2c": _fft_c2c, "_fft_r2c": _fft_r2c, "_fft_c2r": _fft_c2r}
METHODS: dict = {}
