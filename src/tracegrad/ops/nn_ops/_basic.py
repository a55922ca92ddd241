"""Small pointwise/reduction operators the nn family composes with (abs, sign, clamp_min, norms).

They are private to the nn family (names start with ``_nn_``) so they never clash with the general operator
modules; their nodes carry PyTorch's names (``AbsBackward0``...) because that is what users see.
"""

from __future__ import annotations

import math

import numpy as np

from .. import aten_norm
from ..clip_values import clip_values
from ..pointwise import ge, mul, where
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
    return clip_values(a, np.asarray(min, dtype=a.dtype), None)


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


# ---- vector norm -------------------------------------------------------------------------------------------


def _norm_kernel(a, ord=2.0, dim=None, keepdim=False):
    axes = _dims_arg(dim, a.ndim)
    if aten_norm.supports(a.dtype) and (a.size or ord >= 0 and ord != math.inf):
        # (ATen's norm kernel, the order of its additions included; the norms without an identity refuse an
        # empty input in the NumPy branch's words: linalg.vector_norm_numpy)
        out = aten_norm.vector_norm_as_aten(a, float(ord), axes)
        shape = tuple(1 if axes is None or d in axes else s for d, s in enumerate(a.shape))
        return np.asarray(out).reshape(shape) if keepdim else np.asarray(out)
    from ..linalg import _check_norm_identity, vector_norm_numpy

    _check_norm_identity(a, ord, dim, axes)  # (an empty dim for a norm without identity: PyTorch's RuntimeError)
    return vector_norm_numpy(a, ord, axes, keepdim)


def _norm_vjp(ctx, g):
    from ..linalg import norm_backward

    x, norm = ctx.saved_tensors
    ord, dim, keepdim = ctx.attrs
    return norm_backward(g, x, norm, ord, dim, keepdim)


def _norm_jvp(args, outs, tangents):
    from ..linalg import norm_jvp

    return norm_jvp(args[0], tangents[0], args[1], outs[0], args[2], args[3])


vector_norm = defop(
    "_nn_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False) -> Tensor",
    _norm_kernel,
    vjp=_norm_vjp,
    jvp=_norm_jvp,
    saves=("self", "result"),
    attrs=("ord", "dim", "keepdim"),
    node_name="LinalgVectorNormBackward0",
)
norm = defop(
    "_nn_norm(Tensor self, Scalar p=2, int[1]? dim=None, bool keepdim=False) -> Tensor",  # norm.ScalarOpt_dim
    _norm_kernel,
    vjp=_norm_vjp,
    jvp=_norm_jvp,
    saves=("self", "result"),
    attrs=("p", "dim", "keepdim"),
    node_name="NormBackward1",
)


# ---- log_sigmoid -------------------------------------------------------------------------------------------


def log_sigmoid_parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's CPU log_sigmoid kernel: (min(x, 0) - log1p(z), z) with z = exp(-|x|), the buffer its backward
    reads: float32 and half with Sleef's exp and log1p as PyTorch's, bit for bit (``log1p_cpu``); double in NumPy.
    No logaddexp (ten times slower) and no branch per element."""
    if x.dtype == np.float32 or x.dtype == np.float16:
        from .log1p_cpu import log_sigmoid_float  # (here, not above: log1p_cpu's glibc functions import this module)

        return log_sigmoid_float(x)
    buffer = np.abs(x, out=np.empty(x.shape, x.dtype))  # (fresh arrays, 0-d too, each step in place)
    np.negative(buffer, out=buffer)
    np.exp(buffer, out=buffer)
    out = np.minimum(x, np.zeros((), x.dtype), out=np.empty(x.shape, x.dtype))
    out -= np.log1p(buffer)
    return out, buffer


# ---- erf (NumPy has none) ----------------------------------------------------------------------------------

_erf_ufunc = np.frompyfunc(math.erf, 1, 1)


def erf_array(a: np.ndarray) -> np.ndarray:
    """math.erf elementwise (exact to double precision), in ``a``'s dtype."""
    return (
        _erf_ufunc(a.astype(np.float64)).astype(a.dtype)
        if a.ndim
        else np.asarray(math.erf(float(a)), dtype=a.dtype)
    )
