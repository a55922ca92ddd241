"""Matrix products (the core set used by nn.Linear; the rest of linear algebra lives in linalg.py)."""

from __future__ import annotations

import numpy as np

from ._jvp import product_rule
from ._util import binary_dtype
from .registry import defop


def _matmul_kernel(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    dt = binary_dtype(a, b)
    if a.dtype != dt:
        a = a.astype(dt)
    if b.dtype != dt:
        b = b.astype(dt)
    try:
        return np.matmul(a, b)
    except ValueError:
        if a.ndim <= 2 and b.ndim <= 2:
            a2 = a.reshape(1, -1) if a.ndim == 1 else a
            b2 = b.reshape(-1, 1) if b.ndim == 1 else b
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a2.shape[0]}x{a2.shape[1]} and "
                               f"{b2.shape[0]}x{b2.shape[1]})") from None
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: {list(a.shape)} but got: "
                           f"{list(b.shape)}.") from None


def _matmul_vjp(ctx, g):
    from .views import squeeze, transpose, unsqueeze

    a, b = ctx.saved_tensors  # each is saved only if the other operand needs a gradient
    need = ctx.needs_input_grad
    a_nd, b_nd = len(ctx.input_shapes[0] or ()), len(ctx.input_shapes[1] or ())
    if a is not None:
        a_nd = a.ndim
    if b is not None:
        b_nd = b.ndim
    ga = gb = None
    g2 = g
    if a_nd == 1:
        g2 = unsqueeze(g2, -2)
    if b_nd == 1:
        g2 = unsqueeze(g2, -1)
    if need[0]:
        b2 = unsqueeze(b, -1) if b_nd == 1 else b
        ga = matmul(g2, transpose(b2, -1, -2))
        if a_nd == 1:
            ga = squeeze(ga, [-2]) if ga.ndim > 1 else ga
    if need[1]:
        a2 = unsqueeze(a, 0) if a_nd == 1 else a
        gb = matmul(transpose(a2, -1, -2), g2)
        if b_nd == 1:
            gb = squeeze(gb, [-1])
    return ga, gb


# Each operand is saved only when the other one needs a gradient; both take the binary fast path.
matmul = defop("matmul(Tensor self, Tensor other) -> Tensor", _matmul_kernel, vjp=_matmul_vjp,
               saves=("self", "other"), save_if={"self": "other", "other": "self"}, fast="binary", ufunc=np.matmul,
               jvp=lambda args, outs, ts: product_rule(args, ts, matmul))


def _mm_kernel(a, b):
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return _matmul_kernel(a, b)


def _mm_vjp(ctx, g):
    from .views import t

    a, b = ctx.saved_tensors
    need = ctx.needs_input_grad
    return (mm(g, t(b)) if need[0] else None, mm(t(a), g) if need[1] else None)


mm = defop("mm(Tensor self, Tensor mat2) -> Tensor", _mm_kernel, vjp=_mm_vjp, saves=("self", "mat2"),
           save_if={"self": "mat2", "mat2": "self"}, fast="binary",
           jvp=lambda args, outs, ts: product_rule(args, ts, mm))
