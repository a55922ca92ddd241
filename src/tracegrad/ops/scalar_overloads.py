"""The ``.Scalar`` overloads of the arithmetic operators, for compositions written the way PyTorch's C++ is.

PyTorch's composite operators (cross-entropy with label smoothing, pairwise distance, ...) multiply, add and
divide by C++ numbers, which selects the ``mul.Scalar``/``add.Scalar``/``div.Scalar`` overloads: their nodes
are ``MulBackward1``, ``AddBackward1`` and ``DivBackward1``, and MulBackward1/DivBackward1 keep the number as
``_saved_other``. tracegrad's versions of those composites call the operators here, so the graph a user sees is
PyTorch's. The backward formulas are C++ too: while one records under create_graph, ``mul``/``add``/``sub``/``div``
with a number operand route here (``fastpath.SCALAR_OVERLOADS``). User code never reaches them in either library:
``t * 0.5`` wraps the number and calls ``mul.Tensor`` (``MulBackward0``).
"""

from __future__ import annotations

import numpy as np

from ._util import as_array
from .complex_ops import real_for_real_input
from .fastpath import SCALAR_OVERLOADS
from .pointwise import add, div, inplace_kernel, mul, sub, write_into, writes_last
from .registry import defop


def _conj(number):
    return number.conjugate() if number.__class__ is complex else number


# (a real self of a complex number's product takes the real part of its gradient: handle_r_to_c, as the Tensor
# overloads)
def _mul_scalar_vjp(ctx, g):
    return real_for_real_input(ctx, 0, mul(g, _conj(ctx.attrs[0])))


def _div_scalar_vjp(ctx, g):
    return real_for_real_input(ctx, 0, div(g, _conj(ctx.attrs[0])))


def _add_scalar_vjp(ctx, g):
    return real_for_real_input(ctx, 0, g)


# Forward-mode rules (autograd/forward_ad.py): linear in ``self``, so the tangent goes through the same operator.
def _mul_scalar_jvp(args, outs, tangents):
    return None if tangents[0] is None else mul(tangents[0], args[1])


def _div_scalar_jvp(args, outs, tangents):
    return None if tangents[0] is None else div(tangents[0], args[1])


mul_scalar = defop("mul.Scalar(Tensor self, Scalar other) -> Tensor", mul.kernel, vjp=_mul_scalar_vjp,
                   jvp=_mul_scalar_jvp, attrs=("other",), node_name="MulBackward1")
add_scalar = defop("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", add.kernel,
                   vjp=_add_scalar_vjp, jvp=lambda args, outs, tangents: tangents[0], node_name="AddBackward1")
div_scalar = defop("div.Scalar(Tensor self, Scalar other) -> Tensor", div.kernel, vjp=_div_scalar_vjp,
                   jvp=_div_scalar_jvp, attrs=("other",), node_name="DivBackward1")
sub_scalar = defop("sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", sub.kernel,
                   vjp=_add_scalar_vjp, jvp=lambda args, outs, tangents: tangents[0], node_name="SubBackward1")
# (sub.Scalar's formula, auto_element_wise of ``grad``, is ``self_t`` itself: the output shares the tangent;
# add.Scalar's is ``self_t.clone()``)
sub_scalar.jvp_shares_tangent = True

SCALAR_OVERLOADS.update({mul: mul_scalar, add: add_scalar, sub: sub_scalar, div: div_scalar})


@writes_last
def _mul_scalar_inplace(a, other):
    write_into(a, mul.kernel(a, _half_first_operand(a, other)))
    return a


def _half_first_operand(a, other):
    """ATen's ``mul_(self, Scalar)`` is ``mul_out(self, wrapped_number, self)``: the number is the kernel's first
    operand, which its half kernel does not read in float (only a second operand is, ``number_read_in_float``), so
    TensorIterator rounds it to half like any operand (``_foreach_mul_``'s bits: ``t * 0.9`` reads 0.9 in float)."""
    if a.dtype == np.float16 and other.__class__ in (int, float, bool):
        return as_array(other, a.dtype)
    return other


# C++'s ``t.mul_(0.5)`` in a formula (PyTorch's syminvadj halves a diagonal this way): on a view, a CopySlices
# node around MulBackward1, whose only edge is its base's.
mul_scalar_ = defop("mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", _mul_scalar_inplace,
                    vjp=_mul_scalar_vjp, jvp=_mul_scalar_jvp, attrs=("other",), node_name="MulBackward1")


# C++'s ``t.div_(count)`` (the losses' target gradients average this way): DivBackward1.
div_scalar_ = defop("div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", inplace_kernel(div.kernel),
                    vjp=_div_scalar_vjp, jvp=_div_scalar_jvp, attrs=("other",), node_name="DivBackward1")


@writes_last
def _add_scalar_inplace(a, other, alpha=1):
    write_into(a, add.kernel(a, other, alpha))
    return a


# C++'s ``t.add_(eps)`` (rms_norm adds its epsilon this way): AddBackward1.
add_scalar_ = defop("add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)", _add_scalar_inplace,
                    vjp=_add_scalar_vjp, jvp=lambda args, outs, tangents: tangents[0], node_name="AddBackward1")


# C++'s ``t.sub_(number)`` (the per-tensor step of ``_foreach_sub_``): SubBackward1.
sub_scalar_ = defop("sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
                    inplace_kernel(sub.kernel), vjp=lambda ctx, g: g, jvp=lambda args, outs, tangents: tangents[0],
                    node_name="SubBackward1")


def scalar_minus(number, t):
    """C++'s ``number - t`` in PyTorch's formulas: a tensor filled with the number, minus ``t`` in place
    (SubBackward0, without an edge for the filled tensor; not rsub)."""
    from .creation import full_like

    return sub(full_like(t, number), t)
