"""Small pointwise/reduction operators the nn family composes with (abs, sign, clamp_min, xlogy, norms).

They are private to the nn family (names start with ``_nn_``) so they never clash with the general operator
modules; their nodes carry PyTorch's names (``AbsBackward0``...) because that is what users see.
"""

from __future__ import annotations

import math

import numpy as np

from .._util import as_array, binary_dtype, default_float
from ..pointwise import div, eq, ge, le, logical_and, mul, where
from ..reductions import _dims_arg
from ..registry import defop


def _abs_vjp(ctx, g):
    from ..unary import sgn

    (x,) = ctx.saved_tensors
    return mul(g, sgn(x))  # PyTorch: grad * self.sgn() (SgnBackward0 under create_graph)


abs = defop("_nn_abs(Tensor self) -> Tensor", np.abs, vjp=_abs_vjp, saves=("self",), node_name="AbsBackward0")
sign = defop(
    "_nn_sign(Tensor self) -> Tensor", np.sign, vjp=lambda ctx, g: mul(g, 0.0), node_name="SignBackward0"
)


def _clamp_min_kernel(a, min):
    return np.maximum(a, np.asarray(min, dtype=a.dtype))


def _clamp_min_vjp(ctx, g):
    (x,) = ctx.saved_tensors
    (lo,) = ctx.attrs
    return where(ge(x, lo), g, 0.0)


clamp_min = defop(
    "_nn_clamp_min(Tensor self, Scalar min) -> Tensor",
    _clamp_min_kernel,
    vjp=_clamp_min_vjp,
    saves=("self",),
    attrs=("min",),
    node_name="ClampMinBackward0",
)


def _xlogy_kernel(x, y):
    dt = binary_dtype(x, y)
    if dt.kind in "biu":
        dt = default_float()
    x, y = as_array(x, dt), as_array(y, dt)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log(y)
    # 0 * log(0) is 0, but a NaN y stays NaN (PyTorch's xlogy)
    return np.where((x == 0) & ~np.isnan(y), np.zeros((), dt), out)


def _xlogy_vjp(ctx, g):
    x, y = ctx.saved_tensors
    need = ctx.needs_input_grad
    gx = gy = None
    if need[0]:
        from ..reductions_extra import zero_fill

        # PyTorch: at::xlogy(grad, other).masked_fill((self == 0.) & (other <= 0.), 0.)
        gx = zero_fill(logical_and(eq(x, 0.0), le(y, 0.0)), xlogy(g, y))
    if need[1]:
        gy = div(mul(g, x), y)
    return gx, gy


xlogy = defop(
    "_nn_xlogy(Tensor self, Tensor other) -> Tensor",
    _xlogy_kernel,
    vjp=_xlogy_vjp,
    saves=("self", "other"),
    node_name="XlogyBackward0",
)


# ---- vector norm -------------------------------------------------------------------------------------------


def _norm_kernel(a, ord=2.0, dim=None, keepdim=False):
    axes = _dims_arg(dim, a.ndim)
    absx = np.abs(a)
    if ord == math.inf:
        return np.amax(absx, axis=axes, keepdims=keepdim)
    if ord == 2:
        return np.sqrt(np.sum(absx * absx, axis=axes, keepdims=keepdim))
    if ord == 1:
        return np.sum(absx, axis=axes, keepdims=keepdim)
    if ord == 0:
        return np.sum(absx != 0, axis=axes, keepdims=keepdim).astype(a.dtype)
    return np.power(np.sum(np.power(absx, ord), axis=axes, keepdims=keepdim), 1.0 / ord)


def _norm_vjp(ctx, g):
    from ..linalg import norm_backward

    x, norm = ctx.saved_tensors
    ord, dim, keepdim = ctx.attrs
    return norm_backward(g, x, norm, ord, dim, keepdim)


vector_norm = defop(
    "_nn_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False) -> Tensor",
    _norm_kernel,
    vjp=_norm_vjp,
    saves=("self", "result"),
    attrs=("ord", "dim", "keepdim"),
    node_name="LinalgVectorNormBackward0",
)
norm = defop(
    "_nn_norm(Tensor self, Scalar p=2, int[1]? dim=None, bool keepdim=False) -> Tensor",  # norm.ScalarOpt_dim
    _norm_kernel,
    vjp=_norm_vjp,
    saves=("self", "result"),
    attrs=("p", "dim", "keepdim"),
    node_name="NormBackward1",
)


# ---- erf (NumPy has none) ----------------------------------------------------------------------------------

_erf_ufunc = np.frompyfunc(math.erf, 1, 1)


def erf_array(a: np.ndarray) -> np.ndarray:
    """math.erf elementwise (exact to double precision), in ``a``'s dtype."""
    return (
        _erf_ufunc(a.astype(np.float64)).astype(a.dtype)
        if a.ndim
        else np.asarray(math.erf(float(a)), dtype=a.dtype)
    )
