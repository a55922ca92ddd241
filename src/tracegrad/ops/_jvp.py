"""Small helpers for forward-mode rules (``jvp=`` of :func:`~tracegrad.ops.registry.defop`).

A rule is ``jvp(args, outs, tangents)``: ``tangents`` has one entry per differentiable input, None where
that input has no tangent, so sums of terms must skip the missing ones. Everything here is written in
dispatched operators (see ``autograd/forward_ad.py`` for the contract).
"""

from __future__ import annotations


def plus(a, b):
    """``a + b`` where either may be None (a missing tangent term); None when both are."""
    if a is None:
        return b
    if b is None:
        return a
    from .pointwise import add

    return add(a, b)


def scaled(t, c):
    """``t * c`` for a Python number ``c``, skipping the product when ``c == 1`` (and None when ``t`` is)."""
    if t is None:
        return None
    if c.__class__ is not bool and c == 1:
        return t
    from .pointwise import mul

    return mul(t, c)



def product_rule(args, tangents, product):
    """``product(ta, b) + product(a, tb)`` for an operator bilinear in its first two arguments."""
    ta, tb = tangents[0], tangents[1]
    return plus(None if ta is None else product(ta, args[1]), None if tb is None else product(args[0], tb))


def dense_product_rule(args, tangents, product):
    """``product(ta, b) + product(a, tb)`` for a matrix product, both terms always formed: PyTorch's zero
    tangent (ZeroTensor) has no matrix-product kernel, so a missing tangent takes part as real zeros and an
    infinite or NaN operand makes its row NaN, where ``product_rule`` would leave the term out."""
    ta, tb = tangents[0], tangents[1]
    if ta is None and tb is None:
        return None
    from .creation import zeros_like
    from .pointwise import add

    a, b = args[0], args[1]
    return add(product(zeros_like(a) if ta is None else ta, b), product(a, zeros_like(b) if tb is None else tb))
