"""Small helpers for forward-mode rules (``jvp=`` of :func:`~tracegrad.ops.registry.defop`).

A rule is ``jvp(args, outs, tangents)``: ``tangents`` has one entry per differentiable input, None where
that input has no tangent, so sums of terms must skip the missing ones. Everything here is written in
dispatched operators (see ``autograd/forward_ad.py`` for the contract).
"""

from __future__ import annotations

import numpy as np

from .._state import STATE
from .._strides import like_self
from .._tensor import Tensor, _wrap
from ..backend.dtypes import kind_of


def recording(args, tangents) -> bool:
    """Whether a rule's terms record a graph (grad mode on, a primal or a tangent requiring grad). PyTorch's rules
    then show their terms of a missing tangent, its zero tensor (ZeroTensor), in the graph: ``d * 2``'s tangent is
    ``zeros * d + t * 2`` (AddBackward0), which requires grad when ``d`` does."""
    if not STATE.grad_enabled:
        return False
    return any(t is not None and t._rg for t in tangents) or any(isinstance(a, Tensor) and a._rg for a in args)


def check_tangent_size(out: Tensor, tangent: Tensor) -> None:
    """PyTorch's refusal in ``_set_fw_grad`` of a formula's tangent whose size is not its result's (tracegrad's
    forward AD would otherwise expand or reshape it)."""
    if tuple(tangent.shape) != tuple(out.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(out.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")


def zero(like, dtype, negative: bool) -> Tensor:
    """PyTorch's zero tangent of the input ``like`` (a tensor or a number), as signed zeros of ``dtype``: adding
    ``-0.`` or subtracting ``+0.`` leaves every value as it is (``-0.`` and NaN included), as the zero tensor's
    kernels do."""
    shape = like._data.shape if isinstance(like, Tensor) else ()
    value = -0.0 if negative else 0.0
    return _wrap(np.full(shape, complex(value, value) if np.dtype(dtype).kind == "c" else value, dtype))


def or_zero(t: Tensor | None, like, tangents, negative: bool = True) -> Tensor:
    """``t``, or where it is missing PyTorch's zero tangent of the input ``like`` (see :func:`zero`)."""
    return zero(like, tangent_dtype(tangents, like), negative) if t is None else t


def zero_times(z: Tensor, primal, zero_first: bool = True) -> Tensor:
    """``z * primal`` (``primal * z`` unless ``zero_first``: the order of the product node's edges) for a zero
    tangent ``z``: zeros (of ``z``'s sign, whatever ``primal`` holds, inf included), with the product's node where
    ``primal`` requires grad."""
    if not (isinstance(primal, Tensor) and primal._rg and STATE.grad_enabled):
        return z
    from .pointwise import mul

    return zero_product(z, mul(z, primal) if zero_first else mul(primal, z))


def zero_over(z: Tensor, primal) -> Tensor:
    """``z / primal`` for a zero term ``z``: zeros of ``z``'s sign (PyTorch's zero tensor divided stays zero, by 0
    too), with the quotient's node where ``z`` or ``primal`` requires grad."""
    if not ((z._rg or isinstance(primal, Tensor) and primal._rg) and STATE.grad_enabled):
        return z
    from .pointwise import div

    return zero_product(z, div(z, primal))


def zero_product(z: Tensor, product: Tensor) -> Tensor:
    """``product``, computed from the zero tangent ``z`` and primals, as PyTorch's zero tensor kernels give it: zeros
    of ``z``'s sign whatever the primals hold (inf included), its node (if any) passing ``-0.`` gradients."""
    out = _zero_like_in(product, z)
    if out._gfn is not None:
        out._gfn.__class__ = _zero_product_class(out._gfn.__class__)
    return out


def scaled_zero(z: Tensor, c) -> Tensor:
    """``maybe_multiply(z, c)`` for a zero term ``z``: the product (MulBackward1) only where ``z`` has a graph."""
    if not z._rg:
        return z
    from .scalar_overloads import mul_scalar

    return _zero_like_in(mul_scalar(z, c), z) if c.__class__ is bool or c != 1 else z


def _zero_like_in(out: Tensor, z: Tensor) -> Tensor:
    """``out`` holding ``z``'s signed zero everywhere: a zero tensor's product is zero, whatever the factor."""
    out._data = np.full(out._data.shape, z._data.flat[0] if z._data.size else 0.0, out._data.dtype)
    return out


_ZERO_PRODUCT: dict[type, type] = {}


def _zero_product_class(node_class: type) -> type:
    """``node_class`` (MulBackward0) whose gradients are ``-0.``: the zero tensor's contribution to a gradient, which
    PyTorch's sums skip (``-0.`` leaves every sum as it is)."""
    cls = _ZERO_PRODUCT.get(node_class)
    if cls is None:

        def apply(self, grads):
            return [None if meta is None else _wrap(np.full(meta[0], -0.0, meta[1])) for meta in self._in_meta]

        cls = type(node_class.__name__, (node_class,), {"__slots__": (), "apply": apply, "_array_rule": None})
        cls.__module__ = node_class.__module__
        _ZERO_PRODUCT[node_class] = cls
    return cls


def add_zero_term(first: Tensor, second: Tensor, zero_first: bool) -> Tensor:
    """``first + second`` where one term (the first if ``zero_first``) stands for PyTorch's zero tensor: ATen's
    ``add_zerotensor`` returns a copy of the other term, laid out as that term (not as TensorIterator would lay out
    the pair), so a tangent keeps the layout a formula gives it."""
    from .pointwise import add

    out = add(first, second)
    kept = (second if zero_first else first)._data
    if out._data.shape == kept.shape and out._data.strides != kept.strides:
        out._data = like_self(out._data, kept)
    return out


def tangent_dtype(tangents, other) -> np.dtype:
    """The dtype of a zero tangent of ``other`` in a rule: ``other``'s where it is a floating tensor (it takes part
    in type promotion), else the present tangent's (a number or an integer tensor promotes to it)."""
    if isinstance(other, Tensor) and kind_of(other._data.dtype) in "fc":
        return other._data.dtype
    return next(t for t in tangents if t is not None)._data.dtype


def plus(a, b):
    """``a + b`` where either may be None (a missing tangent term); None when both are."""
    if a is None:
        return b
    if b is None:
        return a
    from .pointwise import add

    return add(a, b)


def minus(a, b):
    """``a - b`` where either may be None (a missing tangent term): PyTorch's formulas subtract (SubBackward0), and
    negate only a lone second term; None when both are missing."""
    if b is None:
        return a
    from .pointwise import neg, sub

    return neg(b) if a is None else sub(a, b)


def zero_tensor_sum(terms, likes, args, tangents):
    """``terms[0] + terms[1]``, a missing (None) term being PyTorch's zero tensor of the input in ``likes``: left out,
    or, where a graph records, added as zeros (the sum's AddBackward0 with no edge for it). None when both are."""
    first, second = terms
    if first is None and second is None:
        return None
    if (first is None or second is None) and recording(args, tangents):
        zero_first = first is None
        first, second = (or_zero(t, like, tangents) for t, like in zip(terms, likes))
        return add_zero_term(first, second, zero_first)
    return plus(first, second)


def scaled(t, c):
    """``t * c`` for a Python number ``c``, skipping the product when ``c == 1`` (and None when ``t`` is)."""
    if t is None:
        return None
    if c.__class__ is not bool and c == 1:
        return t
    from .scalar_overloads import mul_scalar

    return mul_scalar(t, c)  # (PyTorch's maybe_multiply: a product with a Scalar, MulBackward1)



def self_term(tangents, args, beta=1):
    """``maybe_multiply(self_t, beta)`` of an ``add*`` product family's formula (addmm's): where ``self`` has no
    tangent and a graph records, PyTorch's zero tensor takes its place, so the sum shows its AddBackward0."""
    t = tangents[0]
    if t is not None:
        return scaled(t, beta)
    return scaled_zero(zero(args[0], tangent_dtype(tangents, args[0]), True), beta) if recording(args, tangents) \
        else None


def product_rule(args, tangents, product):
    """``product(ta, b) + product(a, tb)`` for an operator bilinear in its first two arguments, its second term
    formed first as GCC evaluates the operands of the formula's ``+`` (of two refusals, the second's is raised)."""
    ta, tb = tangents[0], tangents[1]
    second = None if tb is None else product(args[0], tb)
    return plus(None if ta is None else product(ta, args[1]), second)


def zero_aware_product_rule(args, tangents, product):
    """``product(ta, b) + product(a, tb)`` for a product with a zero tensor kernel (``dot``): a missing tangent's
    term is left out, or, where a graph records, kept as PyTorch's zero term (zeros, the product's node where the
    other primal requires grad). The second term is formed first, as :func:`product_rule`'s."""
    if not recording(args, tangents):
        return product_rule(args, tangents, product)
    a, b = args[0], args[1]
    ta, tb = tangents[0], tangents[1]
    second = product(a, tb) if tb is not None else _zero_term(product, or_zero(None, b, tangents), a, False)
    first = product(ta, b) if ta is not None else _zero_term(product, or_zero(None, a, tangents), b, True)
    if ta is not None and tb is not None:
        from .pointwise import add

        return add(first, second)
    return add_zero_term(first, second, ta is None)


def _zero_term(product, z: Tensor, primal, zero_first: bool) -> Tensor:
    return zero_product(z, product(z, primal) if zero_first else product(primal, z))


def dense_product_rule(args, tangents, product):
    """``product(ta, b) + product(a, tb)`` for a matrix product, both terms always formed: PyTorch's zero
    tangent (ZeroTensor) has no matrix-product kernel, so a missing tangent takes part as real zeros and an
    infinite or NaN operand makes its row NaN, where ``product_rule`` would leave the term out."""
    first, second = dense_product_terms(args, tangents, product)
    return plus(first, second)


def dense_product_terms(args, tangents, product) -> tuple:
    """The two terms of :func:`dense_product_rule`, ``product(ta, b)`` and ``product(a, tb)``, for formulas that add
    them to something else one at a time (addmm's): formed with zeros even where neither tangent is there (the
    other term's tangent alone), as PyTorch's products of zero tensors are. The second term is formed first, as
    GCC evaluates the operands of the formula's ``+`` (of a product refusing operands of two dtypes, the second's
    refusal is the one raised)."""
    ta, tb = tangents[0], tangents[1]
    from .creation import zeros_like

    a, b = args[0], args[1]
    second = product(a, zeros_like(b) if tb is None else tb)
    return product(zeros_like(a) if ta is None else ta, b), second


def set_self_tangent_rules(functional, in_place, zeroed: tuple = ()) -> None:
    """Give ``functional`` and its in-place form ``in_place`` PyTorch's ``self_t.op(...)`` formula (index_copy,
    masked_fill, scatter...): the operator itself applied to ``self``'s tangent, each other differentiable argument
    replaced by its tangent (its zero tensor where missing) and each Scalar at a position of ``zeroed`` by 0. The
    in-place form writes into ``self``'s tangent where it has one, as PyTorch's codegen turns such a formula into
    ``self_t_raw.defined() ? self_t_raw.op_(...) : self_t.op(...)`` (no clone of the tangent, no copy into it)."""

    def substituted(op, args, tangents) -> list:
        new = list(args)
        for pos, t in zip(op.diff_idx, tangents):
            primal = args[pos]
            new[pos] = t if t is not None else zero(primal, primal._data.dtype, False)
        for pos in zeroed:
            new[pos] = 0
        return new

    def functional_jvp(args, outs, tangents):
        return functional(*substituted(functional, args, tangents))

    def in_place_jvp(args, outs, tangents):
        if tangents[0] is None:
            return functional_jvp(args, outs, tangents)
        return in_place(*substituted(in_place, args, tangents))

    functional.jvp = functional_jvp
    in_place.jvp = in_place_jvp
    in_place.jvp_writes_self_tangent = True
