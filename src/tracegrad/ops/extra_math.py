"""Assorted math: cartesian_prod, combinations, gcd/lcm, heaviside, ldexp, frexp, nextafter, polar, vander,
trapezoid / cumulative_trapezoid, gradient, renorm, unravel_index, index_reduce, put.

Where PyTorch's op is a composite (cartesian_prod, combinations, vander, trapezoid, gradient, unravel_index) it
is written here with the same dispatched ops in the same order, so the autograd graph shows the same nodes.
The others are primitives with PyTorch's node names and backward formulas.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence

import numpy as np

from .._arg_parser import tensors_as_one_argument
from .._tensor import Tensor, _wrap
from .._warnings import warn_once_at_caller
from ..autograd.forward_ad import not_implemented_jvp
from ..backend import dtypes as _dt
from ._jvp import set_self_tangent_rules
from ._util import binary_dtype, result_dtype, wrap_dim
from .bfloat16_in_float import computes_bfloat16, rounded_in_float, seen_dtype
from .pointwise import inplace_kernel
from .registry import defop, defop_without_derivative
from .scalar_overloads import div_scalar, mul_scalar
from .unary import unsupported


def _type_name(np_dtype) -> str:
    from ..backend.dtypes import scalar_type_name

    return scalar_type_name(np_dtype)


def fmt_double(value) -> str:
    """A double as C++'s ``operator<<`` prints it in PyTorch's messages (``2``, not ``2.0``)."""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def _shape_str(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


# ---- cartesian_prod / combinations -------------------------------------------------------------------------


def _meshgrid_ij(tensors) -> list:
    from .shape_extra import meshgrid

    return list(meshgrid(*tensors, indexing="ij"))


@tensors_as_one_argument("cartesian_prod")
def cartesian_prod(tensors: tuple) -> Tensor:
    """The cartesian product of 1-D tensors."""
    from .shape import stack

    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {_shape_str(t)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.flatten() for g in _meshgrid_ij(tensors)], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    from .. import _factories
    from .shape import stack

    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_shape_str(input)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _factories.empty(0, dtype=input.dtype)
    # PyTorch's _triu_mask: i < j < k ... (i <= j <= ... with replacement) over an r-dim index grid
    grid = np.indices((input.shape[0],) * r)
    mask = np.ones(grid.shape[1:], dtype=bool)
    for i in range(r - 1):
        mask &= (grid[i] <= grid[i + 1]) if with_replacement else (grid[i] < grid[i + 1])
    mask_t = _wrap(mask)
    return stack([g.masked_select(mask_t) for g in _meshgrid_ij([input] * r)], 1)


# ---- integer pointwise: gcd / lcm --------------------------------------------------------------------------


def _integer_binary(name: str, np_fn):
    def kernel(a, b):
        dt = binary_dtype(a, b)
        if dt.kind not in "iu":
            raise unsupported(f"{name}_cpu", dt)
        return np.asarray(np_fn(np.asarray(a).astype(dt, copy=False), np.asarray(b).astype(dt, copy=False)),
                          dtype=dt)

    return kernel


def _lcm(a, b):
    # PyTorch: g == 0 ? 0 : abs(a / g * b) (wrapping on overflow, as C++ integers do)
    g = np.gcd(a, b)
    with np.errstate(all="ignore"):
        return np.where(g == 0, 0, np.abs((a // np.where(g == 0, 1, g)) * b))


_gcd_kernel = _integer_binary("gcd", np.gcd)
_lcm_kernel = _integer_binary("lcm", _lcm)
gcd = defop_without_derivative("gcd(Tensor self, Tensor other) -> Tensor", _gcd_kernel)
gcd_ = defop_without_derivative("gcd_(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_kernel(_gcd_kernel))
lcm = defop_without_derivative("lcm(Tensor self, Tensor other) -> Tensor", _lcm_kernel)
lcm_ = defop_without_derivative("lcm_(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_kernel(_lcm_kernel))


# ---- heaviside / nextafter ---------------------------------------------------------------------------------


def _heaviside_kernel(a, values):
    if a.dtype.kind == "c" or values.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if a.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return np.asarray(np.where(a == 0, values, (a > 0).astype(a.dtype)), dtype=a.dtype)


heaviside = defop_without_derivative("heaviside(Tensor self, Tensor values) -> Tensor", _heaviside_kernel)
heaviside_ = defop_without_derivative("heaviside_(Tensor(a!) self, Tensor values) -> Tensor(a!)",
                                      inplace_kernel(_heaviside_kernel))


@computes_bfloat16  # (one bfloat16 ulp: NumPy's nextafter on ml_dtypes' bfloat16 steps it)
def _nextafter_kernel(a, other):
    dt = binary_dtype(a, other)
    if dt.kind != "f" and dt is not _dt.bfloat16.np:
        raise unsupported("nextafter_cpu", dt)
    return np.asarray(np.nextafter(a.astype(dt, copy=False), np.asarray(other).astype(dt, copy=False)), dtype=dt)


def _nextafter_vjp(ctx, g):
    # PyTorch: ``self: at::where(self != other, grad, 0)`` (a tie gives +0, where a product by the mask gives -0 for a
    # negative gradient), ``other: zeros_like(other)``
    from .binary import where
    from .creation import zeros_like
    from .pointwise import ne

    x, other = ctx.saved_tensors
    need = ctx.needs_input_grad
    return (where(ne(x, other), g, 0) if need[0] else None, zeros_like(g) if need[1] else None)


def _nextafter_jvp(args, outs, tangents):
    """PyTorch's formula, derived from its backward's: ``where(self != other, self_t, 0)``; other's tangent plays no
    part (only other's: no tangent)."""
    from .binary import where
    from .pointwise import ne

    self_t = tangents[0]
    return None if self_t is None else where(ne(args[0], args[1]), self_t, 0)


_nextafter_rules = dict(vjp=_nextafter_vjp, jvp=_nextafter_jvp, saves=("self", "other"))
nextafter = defop("nextafter(Tensor self, Tensor other) -> Tensor", _nextafter_kernel, **_nextafter_rules)
nextafter_ = defop("nextafter_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                   computes_bfloat16(inplace_kernel(_nextafter_kernel)), node_name="NextafterBackward0",
                   **_nextafter_rules)


# ---- ldexp / frexp -----------------------------------------------------------------------------------------


def _ldexp_kernel(a, other):
    # PyTorch: self * pow(2, other), so an integer `other` gives the default float dtype
    scale = np.power(2.0, other.astype(result_dtype(2.0, other)))
    dt = result_dtype(a, np.asarray(scale))
    with np.errstate(all="ignore"):
        return np.asarray(np.multiply(a, scale, dtype=dt))


def _ldexp_vjp(ctx, g):
    from .binary import pow
    from .pointwise import mul

    other, result = ctx.saved_tensors
    need = ctx.needs_input_grad
    # (an integer 2: for an integer `other` the power is an integer one, as PyTorch's formula computes it)
    grad_self = mul(g, pow(2, other)) if need[0] else None
    grad_other = mul(mul(g, result), float(np.log(2.0))) if need[1] else None
    return grad_self, grad_other


_ldexp_rules = dict(vjp=_ldexp_vjp, saves=("other", "result"), node_name="LdexpBackward0")
ldexp = defop("ldexp.Tensor(Tensor self, Tensor other) -> Tensor", _ldexp_kernel, **_ldexp_rules)
ldexp_ = defop("ldexp_(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_kernel(_ldexp_kernel), **_ldexp_rules)


def _frexp_kernel(a):
    if a.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(a)
    return np.asarray(mantissa, dtype=a.dtype), np.asarray(exponent, dtype=np.int32)


def _frexp_vjp(ctx, g, _g_exponent):
    from .pointwise import div
    from .unary import exp2

    (exponent,) = ctx.saved_tensors
    return div(g, exp2(exponent))


frexp = defop("frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)", _frexp_kernel, vjp=_frexp_vjp,
              saves=("result1",), node_name="FrexpBackward0")


# ---- polar -------------------------------------------------------------------------------------------------


def _polar_kernel(abs, angle):  # noqa: A002 (PyTorch's parameter name)
    if abs.dtype != angle.dtype:
        raise RuntimeError(f"Expected object of scalar type {_type_name(abs.dtype)} but got scalar type "
                           f"{_type_name(angle.dtype)} for second argument")
    if abs.dtype not in (np.float32, np.float64):
        if abs.dtype == np.float16:
            raise unsupported("polar_cpu", abs.dtype)
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_type_name(abs.dtype)} and {_type_name(angle.dtype)}")
    ctype = np.complex64 if abs.dtype == np.float32 else np.complex128
    out = np.empty(np.broadcast_shapes(abs.shape, angle.shape), dtype=ctype)
    out.real = abs * np.cos(angle)
    out.imag = abs * np.sin(angle)
    return out


def _polar_vjp(ctx, g):
    """PyTorch's polar_backward: abs gets real(conj(g) * sgn(result)), angle real(conj(g) * result * 1j)."""
    from .complex_ops import real
    from .pointwise import mul
    from .unary import conj, sgn

    (result,) = ctx.saved_tensors
    need = ctx.needs_input_grad
    g_conj = conj(g)
    grad_abs = real(mul(g_conj, sgn(result))) if need[0] else None
    grad_angle = real(mul(g_conj, mul(result, 1j))) if need[1] else None
    return grad_abs, grad_angle


polar = defop("polar(Tensor abs, Tensor angle) -> Tensor", _polar_kernel, vjp=_polar_vjp, saves=("result",))


# ---- vander ------------------------------------------------------------------------------------------------


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """PyTorch's composite: columns 1.. are cumprod of x, written in place into a ones matrix, then flipped."""
    from .. import _factories
    from ..backend.dtypes import from_numpy_dtype, promote_types, to_dtype

    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0]
    if N is not None:
        n = N
        if n < 0:
            raise RuntimeError("N must be non-negative.")
    # cumprod promotes integers to long, so the result does
    dtype = promote_types(from_numpy_dtype(x._data.dtype), to_dtype(np.int64))
    result = _factories.empty(x.shape[0], n, dtype=dtype)
    if n > 0:
        result.fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(result[:, 1:].cumprod(1))
    if not increasing:
        return result.flip([1])
    return result


# ---- trapezoid / cumulative_trapezoid ----------------------------------------------------------------------


def _zeros_except(y: Tensor, dim: int) -> Tensor:
    from .. import _factories

    sizes = list(y.shape)
    del sizes[dim]
    return _factories.zeros(sizes, dtype=y.dtype)


def _x_viewed(name: str, y: Tensor, x: Tensor, dim: int) -> Tensor:
    """``x`` shaped so that its differences broadcast against ``y``'s (NumPy's trapz)."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y.ndim
        sizes[dim] = x.shape[0]
        return x.view(sizes)
    if x.ndim < y.ndim:
        return x.view([1] * (y.ndim - x.ndim) + list(x.shape))
    return x


def _check_dx(name: str, dx) -> None:
    if isinstance(dx, (bool, complex)) or (isinstance(dx, Tensor) and dx.dtype.is_complex):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")


def _refuse_bool(name: str, y: Tensor, x: Tensor | None) -> None:
    """Each overload's bool check in its own words: the one with dx names y alone, the one with x both."""
    if x is None and y._data.dtype == np.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if x is not None and np.bool_ in (y._data.dtype, x._data.dtype):
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")


def _no_dimensions(dim: int) -> IndexError:
    return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments - got (Tensor, Tensor, dx=float)")
    if y.ndim == 0 and x is None:  # (torch asks y.size(dim), the dim as given)
        raise _no_dimensions(dim)
    d = wrap_dim(dim, y.ndim)
    if y.ndim == 0:  # (with x, torch wraps the dim first)
        raise _no_dimensions(d)
    if y.shape[d] == 0:  # no samples: zero, as NumPy
        return _zeros_except(y, d)
    _refuse_bool("trapezoid", y, x)
    if x is None:
        step = 1 if dx is None else dx
        _check_dx("trapezoid", step)
        # a constant spacing simplifies to dx * (sum(y) - (y_first + y_last) / 2)
        return mul_scalar(y.sum(d) - mul_scalar(y.select(d, 0) + y.select(d, -1), 0.5), float(step))
    xv = _x_viewed("trapezoid", y, x, d)
    spacing = _spacing(xv, d)
    return div_scalar((_sum_pairs(y, d) * spacing).sum(d), 2.0)


def _left(t: Tensor, d: int) -> Tensor:
    return t[(slice(None),) * d + (slice(0, -1),)]


def _right(t: Tensor, d: int) -> Tensor:
    return t[(slice(None),) * d + (slice(1, None),)]


def _spacing(x: Tensor, d: int) -> Tensor:
    """``x_right - x_left``, the left slice taken first as ATen takes it: the order of the slices' sequence numbers
    decides the order in which a gradient of x accumulates their gradients (the graph of a double backward)."""
    left = _left(x, d)
    return _right(x, d) - left


def _sum_pairs(y: Tensor, d: int) -> Tensor:
    return _left(y, d) + _right(y, d)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    # (trapz's dx is a float to torch's parser, a bool read as one: trapezoid's Scalar dx refuses bools)
    return trapezoid(y, x, dx=None if dx is None else float(dx), dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None, dim: int = -1) -> Tensor:
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments - got (Tensor, "
                        "Tensor, dx=float)")
    if x is None:  # (torch's order: y's dtype, dx, then y sliced along the dim as given)
        _refuse_bool("cumulative_trapezoid", y, None)
        step = 1 if dx is None else dx
        _check_dx("cumulative_trapezoid", step)
        if y.ndim == 0:
            raise _no_slice_of_0_dim()
        d = wrap_dim(dim, y.ndim)
        return mul_scalar(_sum_pairs(y, d), float(step) / 2.0).cumsum(d)
    d = wrap_dim(dim, y.ndim)  # (with x, torch wraps the dim first, then checks both dtypes)
    _refuse_bool("cumulative_trapezoid", y, x)
    if y.ndim == 0:  # (torch compares a 1-d x's length with y.size(dim), else slices y along dim)
        raise _no_dimensions(d) if x.ndim == 1 else _no_slice_of_0_dim()
    xv = _x_viewed("cumulative_trapezoid", y, x, d)
    spacing = _spacing(xv, d)
    return div_scalar((_sum_pairs(y, d) * spacing).cumsum(d), 2.0)


def _no_slice_of_0_dim() -> IndexError:
    return IndexError("slice() cannot be applied to a 0-dim tensor.")


# ---- gradient ----------------------------------------------------------------------------------------------


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """NumPy's gradient as PyTorch computes it: second-order central differences inside, first or second
    order one-sided ones at the edges; ``spacing`` is a scalar, a list of scalars or a list of coordinate
    tensors (one per dim)."""
    from .shape import cat

    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if spacing is None:  # (an optional Scalar in torch's schema: None is the unit spacing)
        spacing = 1
    if isinstance(spacing, Tensor):
        spacing = [spacing]
    spacing_size = len(spacing) if isinstance(spacing, (list, tuple)) else None
    if input._data.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dims is None and spacing_size != input.ndim:
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {input.ndim}', since dim argument was not given, but got a list of "
                           f"length {spacing_size}")
    if spacing_size is not None and dims is not None and spacing_size != len(dims):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {spacing_size} "
                           f"and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.ndim)) if dims is None else [wrap_dim(d, input.ndim) for d in dims]
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    steps = list(spacing) if spacing_size is not None else [spacing] * len(dims)

    def sl(t: Tensor, d: int, start, end=None) -> Tensor:
        return t[(slice(None),) * d + (slice(start, end),)]

    result = []
    for d, step in zip(dims, steps):
        if isinstance(step, Tensor):
            result.append(cat(_coordinate_gradient(input, step, d, edge_order, sl), d))
            continue
        # (numbers stay Scalars, as in PyTorch's C++: MulBackward1 / DivBackward1 nodes)
        center = div_scalar(sl(input, d, 2) - sl(input, d, 0, -2), step)
        if edge_order == 1:
            prepend = div_scalar(sl(input, d, 1, 2) - sl(input, d, 0, 1), step)
            append = div_scalar(sl(input, d, -1) - sl(input, d, -2, -1), step)
        else:
            prepend = div_scalar(mul_scalar(sl(input, d, 0, 1), -1.5) + mul_scalar(sl(input, d, 1, 2), 2)
                                 - mul_scalar(sl(input, d, 2, 3), 0.5), step)
            append = div_scalar(mul_scalar(sl(input, d, -3, -2), 0.5) - mul_scalar(sl(input, d, -2, -1), 2)
                                + mul_scalar(sl(input, d, -1), 1.5), step)
        result.append(cat([prepend, div_scalar(center, 2), append], d))
    return tuple(result)


def _coordinate_gradient(input: Tensor, coords: Tensor, d: int, edge_order: int, sl) -> list:
    """Non-uniform spacing: PyTorch's three-point formulas weighted by the neighbouring coordinate gaps."""
    if coords.ndim != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {coords.ndim} dimensions!")
    shape = [1] * input.ndim
    shape[d] = -1
    ax_dx = coords.diff(1, 0)
    dx1 = ax_dx[0:-1]
    dx2 = ax_dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * sl(input, d, 0, -2) + b * sl(input, d, 1, -1) + c * sl(input, d, 2)
    if edge_order == 1:
        prepend = (sl(input, d, 1, 2) - sl(input, d, 0, 1)) / ax_dx[0]
        append = (sl(input, d, -1) - sl(input, d, -2, -1)) / ax_dx[-1]
    else:
        # (each ax_dx[i] is a fresh select, as in PyTorch's source, so the graph has the same nodes)
        h = ax_dx.select
        a = -(mul_scalar(h(0, 0), 2.0) + h(0, 1)) / (h(0, 0) * (h(0, 0) + h(0, 1)))
        b = (h(0, 0) + h(0, 1)) / (h(0, 0) * h(0, 1))
        c = (-h(0, 0)) / (h(0, 1) * (h(0, 0) + h(0, 1)))
        prepend = a * sl(input, d, 0, 1) + b * sl(input, d, 1, 2) + c * sl(input, d, 2, 3)
        a = h(0, -1) / (h(0, -2) * (h(0, -1) + h(0, -2)))
        b = -(h(0, -1) + h(0, -2)) / (h(0, -1) * h(0, -2))
        c = (mul_scalar(h(0, -1), 2) + h(0, -2)) / (h(0, -1) * (h(0, -1) + h(0, -2)))
        append = a * sl(input, d, -3, -2) + b * sl(input, d, -2, -1) + c * sl(input, d, -1)
    return [prepend, center, append]


# ---- renorm ------------------------------------------------------------------------------------------------


def _renorm_factor(a: np.ndarray, p: float, axes: tuple, maxnorm) -> np.ndarray:
    """Each slice's scale, ``maxnorm / (norm + 1e-7)`` where its norm is over ``maxnorm`` (1 elsewhere), in
    ``a``'s real type. A half type's norm and scale are computed in float32 and the scale rounded (PyTorch's
    kernel takes the norm in CUDA's accumulate type and writes the scale into a tensor of the input's type)."""
    from .linalg import _vector_norm_kernel

    seen = seen_dtype(a)
    half = seen.itemsize == 2
    norm = _vector_norm_kernel(a, p, list(axes), True, dtype=_dt.float32 if a.dtype == np.float16 else None)
    real = np.dtype(a.dtype.char.lower()) if a.dtype.kind == "c" else a.dtype
    kind = np.dtype(np.float32) if half else real
    norm = norm.astype(kind, copy=False)
    mx = kind.type(maxnorm)
    with np.errstate(all="ignore"):
        factor = np.where(norm > mx, mx / (norm + kind.type(1e-7)), kind.type(1))
    if half and a.dtype == np.float32:
        return rounded_in_float(factor)  # (the kernel's operand is bfloat16's float32 copy)
    return factor.astype(real, copy=False)


def _renorm_kernel(a, p, dim, maxnorm):
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if not float(p) > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if not float(maxnorm) >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {fmt_double(maxnorm)}")
    if a.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {a.ndim} dimensions")
    d = wrap_dim(dim, a.ndim)
    if a.dtype.kind not in "fc":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(a.dtype)}")
    factor = _renorm_factor(a, float(p), tuple(k for k in range(a.ndim) if k != d), maxnorm)
    # (PyTorch's structured renorm allocates its result contiguous, whatever self's layout)
    return np.ascontiguousarray(a * factor, dtype=a.dtype)


def _renorm_vjp(ctx, g):
    """PyTorch's renorm_backward: where a slice was scaled, the scale's own gradient through the norm is
    subtracted."""
    from .creation import to_dtype
    from .linalg import linalg_vector_norm, norm_backward
    from .pointwise import gt, mul, sub, where
    from .reductions_extra import sum as sum_op
    from .scalar_overloads import add_scalar
    from .unary import conj, reciprocal

    (x,) = ctx.saved_tensors
    p, dim, maxnorm = ctx.attrs
    d = wrap_dim(dim, x.ndim)
    reduce_dims = [k for k in range(x.ndim) if k != d]
    # (PyTorch computes the norm, the sums and the scaled gradient in the CPU accumulate type, float32's in
    # float64, and rounds only the result to the gradient's type)
    acc = _dt.cpu_accumulate_type(x.dtype)
    norm = linalg_vector_norm(x, p, reduce_dims, True, dtype=acc)
    grad_output = mul(conj(x), g)
    if grad_output.is_complex():
        from .complex_ops import real

        grad_output = real(grad_output)
    grad_output = sum_op(grad_output, reduce_dims, True, dtype=norm.dtype)
    nb = norm_backward(grad_output, x, norm, float(p), reduce_dims, True)
    invnorm = reciprocal(add_scalar(norm, 1e-7))
    # (grouped as PyTorch's ``maxnorm * invnorm * (grad - invnorm * nb)``: distributing the factor rounds apart)
    scaled = mul(mul(invnorm, maxnorm), sub(g, mul(invnorm, nb)))
    return where(gt(norm, maxnorm), to_dtype(scaled, g.dtype), g)


def _renorm_jvp(args, outs, tangents):
    """PyTorch's renorm_jvp: where a slice was scaled, ``factor * (self_t - self_p * invnorm * norm_jvp(...))``;
    the norm's tangent is real, so a complex tangent of a real input keeps its imaginary part, only scaled."""
    from .linalg import linalg_vector_norm, norm_jvp
    from .pointwise import gt, mul, sub, where
    from .scalar_overloads import add_scalar
    from .unary import reciprocal

    x, p, dim, maxnorm = args[:4]
    (t,) = tangents
    if t is None:
        return None
    d = wrap_dim(dim, x.ndim)
    reduce_dims = [k for k in range(x.ndim) if k != d]
    # (PyTorch takes a half type's norm in float32, CUDA's accumulate type, on every device: the tangent, even
    # where it passes through unscaled, is then promoted to float32)
    half = x.dtype in (_dt.float16, _dt.bfloat16)
    norm = linalg_vector_norm(x, p, reduce_dims, True, dtype=_dt.float32 if half else None)
    invnorm = reciprocal(add_scalar(norm, 1e-7))
    factor = mul(invnorm, maxnorm)
    scaled = mul(factor, sub(t, mul(mul(x, invnorm), norm_jvp(x, t, float(p), norm, reduce_dims, True))))
    return where(gt(norm, maxnorm), scaled, t)


_renorm_rules = dict(vjp=_renorm_vjp, jvp=_renorm_jvp, saves=("self",), attrs=("p", "dim", "maxnorm"),
                     node_name="RenormBackward0")
renorm = defop("renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor", _renorm_kernel, **_renorm_rules)
renorm_ = defop("renorm_(Tensor(a!) self, Scalar p, int dim, Scalar maxnorm) -> Tensor(a!)",
                inplace_kernel(_renorm_kernel), **_renorm_rules)
# (renorm_jvp's own promotion gives a half type's tangent in float32; renorm_ copies it into self's tangent)
renorm.jvp_keeps_dtype = True


# ---- unravel_index -----------------------------------------------------------------------------------------


def unravel_index(indices: Tensor, shape) -> tuple:
    """torch.unravel_index (a Python composite in PyTorch): floor-divide by the row-major strides, then take
    the remainder by each size, so negative indices wrap."""
    from .. import _factories

    # (torch's checks, in its order: a method of the indices first, any sequence for the shape, a str too)
    if indices.is_complex() or indices.is_floating_point() or indices._data.dtype == np.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    elif not isinstance(shape, Sequence):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for s in shape:
        if not isinstance(s, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s)}")
    shape = tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    coefs = list(reversed(list(itertools.accumulate(reversed(shape[1:] + (1,)), func=operator.mul))))
    long = _factories.tensor(0).dtype
    res = indices.unsqueeze(-1).floor_divide(_factories.tensor(coefs, dtype=long)) % _factories.tensor(
        list(shape), dtype=long)
    return res.unbind(-1)


# ---- index_reduce ------------------------------------------------------------------------------------------

_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce_kernel(a, dim, index, source, reduce, include_self=True, *, _name="index_reduce_"):
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
                           f"{reduce}.")
    d = wrap_dim(dim, max(a.ndim, 1))
    if index.ndim > 1:
        raise IndexError(f"{_name}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_type_name(index.dtype)} and size: [{', '.join(map(str, index.shape))}]")
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{_name}(): Expected dtype int32/int64 for index but got: {_type_name(index)}")
    self_dtype, source_dtype = seen_dtype(a), seen_dtype(source)
    if self_dtype != source_dtype:
        raise RuntimeError(f"{_name}(): self ({_type_name(self_dtype)}) and source ({_type_name(source_dtype)}) must "
                           "have the same scalar type")
    a1 = a.reshape(1) if a.ndim == 0 else a
    s1 = source.reshape(1) if source.ndim == 0 else source
    idx = index.reshape(-1).astype(np.int64)
    if idx.shape[0] != s1.shape[d]:
        raise RuntimeError(f"{_name}(): Number of indices ({idx.shape[0]}) should be equal to source.size(dim): "
                           f"({s1.shape[d]}), for dim: {dim}")
    warn_once_at_caller("index_reduce beta", "index_reduce() is in beta and the API may change at any time.")
    if a.dtype.kind == "b":
        _refuse_bool_index_reduce(a1.ndim, include_self)
    n = a1.shape[d]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError("index out of range in self")
    if a.dtype.kind == "b" and reduce == "mean" and idx.size:
        raise unsupported("div_floor_cpu", a.dtype)  # (slice by slice, a bool mean fails at its division)
    idx = np.where(idx < 0, idx + n, idx)
    out = np.moveaxis(a1.copy(), d, 0)
    src = np.moveaxis(s1, d, 0)
    touched = np.zeros(n, dtype=bool)
    touched[idx] = True
    if not include_self:
        # indexed slices start from the reduction's identity
        init = {"prod": 1, "mean": 0}.get(reduce)
        if init is None:
            info = np.finfo(a.dtype) if a.dtype.kind == "f" else np.iinfo(a.dtype)
            init = -np.inf if reduce == "amax" and a.dtype.kind == "f" else (
                np.inf if a.dtype.kind == "f" else (info.min if reduce == "amax" else info.max))
        out[touched] = init
    with np.errstate(all="ignore"):
        if reduce == "prod":
            np.multiply.at(out, idx, src)
        elif reduce == "mean":
            np.add.at(out, idx, src)
            counts = np.full(n, 1 if include_self else 0, dtype=np.int64)
            np.add.at(counts, idx, 1)
            counts = np.maximum(counts, 1).reshape((n,) + (1,) * (out.ndim - 1))
            if out.dtype.kind in "fc":
                out = out / counts.astype(out.dtype)
            else:
                out = np.floor_divide(out, counts.astype(out.dtype))
        else:
            # (np.maximum/minimum propagate NaN, as PyTorch's amax/amin do)
            (np.maximum if reduce == "amax" else np.minimum).at(out, idx, src)
    out = np.moveaxis(out, 0, d).astype(a.dtype, copy=False)
    return out.reshape(a.shape)


def _refuse_bool_index_reduce(ndim: int, include_self: bool) -> None:
    """ATen's index_reduce has no bool kernel: it refuses at once without include_self, and with it where the
    tensor has one dim (more dims go slice by slice through other operators, which take bool but for mean's
    division)."""
    if not include_self:
        raise unsupported("index_reduce_func_exclude_input_init", np.dtype(np.bool_))
    if ndim <= 1:
        raise unsupported("index_func_", np.dtype(np.bool_))


def _index_reduce_inplace_kernel(a, dim, index, source, reduce, include_self=True):
    a[...] = _index_reduce_kernel(a, dim, index, source, reduce, include_self)
    return a


def _index_reduce_vjp(ctx, g):
    """PyTorch's index_reduce_backward (prod: zeros handled by recomputing with them masked to one; amax/amin:
    the gradient split evenly among the elements equal to the result)."""
    from .creation import ones_like, zeros_like
    from .pointwise import eq, logical_and, where
    from .shape_extra import index_add, index_fill, index_select, masked_fill

    x, index, source, result = ctx.saved_tensors
    dim, reduce, include_self = ctx.attrs
    need = ctx.needs_input_grad
    grad_self = grad_src = None
    if reduce == "prod":
        masked_self = masked_fill(x, eq(x, 0), 1)
        masked_self_result = index_reduce(masked_self, dim, index, source, reduce, include_self=include_self)
        grad_self = g * masked_self_result / masked_self
        src_zero = eq(source, 0)
        src_num_zeros = index_select(index_add(zeros_like(x), dim, index, src_zero.to(x.dtype)), dim, index)
        src_single_zero = logical_and(src_zero, eq(src_num_zeros, 1))
        masked_src = masked_fill(source, src_single_zero, 1)
        masked_src_result = index_reduce(x, dim, index, masked_src, reduce, include_self=include_self)
        grad_src1 = where(src_single_zero, index_select(g * masked_src_result, dim, index),
                          index_select(g * result, dim, index) / masked_fill(source, src_zero, 1))
        grad_src = grad_src1
    elif reduce == "mean":
        counts = ones_like(x) if include_self else zeros_like(x)
        counts = index_add(counts, dim, index, ones_like(source))
        counts = masked_fill(counts, eq(counts, 0), 1)
        grad_self = g / counts
        grad_src = index_select(grad_self, dim, index)
    else:
        value = result
        self_is_result = eq(x, value).to(x.dtype)
        source_is_result = eq(source, index_select(value, dim, index)).to(x.dtype)
        n_to_distribute = index_add(self_is_result, dim, index, source_is_result)
        grad_distributed = g / n_to_distribute
        grad_self = self_is_result * grad_distributed
        grad_src = source_is_result * index_select(grad_distributed, dim, index)
    if not include_self:
        grad_self = index_fill(grad_self, dim, index, 0)
    return (grad_self if need[0] else None, grad_src if need[1] else None)


_index_reduce_rules = dict(vjp=_index_reduce_vjp, jvp=not_implemented_jvp("index_reduce"),
                           saves=("self", "index", "source", "result"),
                           attrs=("dim", "reduce", "include_self"), differentiable=("self", "source"),
                           node_name="IndexReduceBackward0")
_index_reduce = defop("index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, "
                      "bool include_self=True) -> Tensor", _index_reduce_kernel, **_index_reduce_rules)
index_reduce_ = defop("index_reduce_(Tensor(a!) self, int dim, Tensor index, Tensor source, str reduce, *, "
                      "bool include_self=True) -> Tensor(a!)", _index_reduce_inplace_kernel, **_index_reduce_rules)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True, out: Tensor | None = None) -> Tensor:
    extra = {} if out is None else {"out": out}
    return _index_reduce(input, dim, index, source, reduce, include_self=include_self, **extra)


# ---- put ---------------------------------------------------------------------------------------------------


def _put_checks(a, index, source) -> None:
    if index.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_type_name(index)}")
    if seen_dtype(a) != seen_dtype(source):
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_type_name(seen_dtype(a))} and source.dtype = {_type_name(seen_dtype(source))}")
    if index.size != source.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.size}, index.numel() = {index.size}")
    if a.size == 0 and index.size:
        raise IndexError("put_(): Tried to put elements into an empty tensor")


def _put_values(a, index, source, accumulate):
    n = a.size
    idx = index.reshape(-1)
    for i in idx:
        if i < -n or i >= n:
            raise IndexError(f"out of range: tried to access index {int(i)} on a tensor of {n} elements.")
    flat = a.copy().reshape(-1)
    idx = np.where(idx < 0, idx + n, idx)
    if accumulate:
        np.add.at(flat, idx, source.reshape(-1))
    else:
        flat[idx] = source.reshape(-1)
    return flat.reshape(a.shape)


def _put_kernel(a, index, source, accumulate=False):
    _put_checks(a, index, source)
    return _put_values(a, index, source, accumulate)


def _put_inplace_kernel(a, index, source, accumulate=False):
    from .mem_overlap import Check, check_overlap

    _put_checks(a, index, source)
    # ATen's put_ refuses any overlap of self with index or source only after the checks above, so the
    # dispatcher leaves it to this kernel (mem_overlap.NOT_CHECKED)
    check_overlap(Check.ANY, a, (index, source))
    a[...] = _put_values(a, index, source, accumulate)
    return a


def _put_vjp(ctx, g):
    """PyTorch: self gets grad.put(index, zeros_like(source), accumulate), source grad.take(index)."""
    from .creation import zeros_like
    from .indexing import take

    index, source = ctx.saved_tensors
    (accumulate,) = ctx.attrs
    need = ctx.needs_input_grad
    grad_self = put(g, index, zeros_like(source), accumulate) if need[0] else None
    grad_src = take(g, index).reshape(source.shape) if need[1] else None
    return grad_self, grad_src


_put_rules = dict(vjp=_put_vjp, saves=("index", "source"), attrs=("accumulate",), differentiable=("self", "source"),
                  node_name="PutBackward0")
put = defop("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor", _put_kernel,
            **_put_rules)
put_ = defop("put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)",
             _put_inplace_kernel, **_put_rules)
set_self_tangent_rules(put, put_)


# ---- exports -----------------------------------------------------------------------------------------------

PUBLIC = {
    "cartesian_prod": cartesian_prod, "combinations": combinations, "gcd": gcd, "gcd_": gcd_, "lcm": lcm,
    "lcm_": lcm_, "heaviside": heaviside, "ldexp": ldexp, "ldexp_": ldexp_, "frexp": frexp, "nextafter": nextafter,
    "polar": polar, "vander": vander, "trapezoid": trapezoid, "trapz": trapz,
    "cumulative_trapezoid": cumulative_trapezoid, "gradient": gradient, "renorm": renorm,
    "unravel_index": unravel_index, "index_reduce": index_reduce, "put": put,
}

METHODS = {
    "gcd": gcd, "gcd_": gcd_, "lcm": lcm, "lcm_": lcm_, "heaviside": heaviside, "heaviside_": heaviside_,
    "ldexp": ldexp, "ldexp_": ldexp_, "frexp": frexp, "nextafter": nextafter, "nextafter_": nextafter_,
    "renorm": renorm, "renorm_": renorm_, "index_reduce": index_reduce, "index_reduce_": index_reduce_,
    "put": put, "put_": put_,
}
